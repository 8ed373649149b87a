// Shrinking: the smallest scenario that still fails the same way.
//
// Shrink takes a failing scenario and tries simplifications one at a time,
// keeping each one after which a run still ends with the same verdict and
// the same failing check (the finding kind): it removes faults (delta
// debugging over the fault list), shortens and weakens the faults that stay,
// cuts the workload (messages, keys, bursts, topics), the cluster
// (partitions, brokers, replication) and the perturbation sites, and moves
// config values and the schedule toward their defaults. It repeats its
// passes until a whole pass changes nothing or the run budget is spent.
//
// Any change of the scenario changes the interleaving (the scheduler draws
// from the same seed in a different world), so a change is kept if the
// smaller scenario fails with its seed or with one of a few seeds derived
// from it: the finding is the failure kind, not one interleaving. Shrinking
// is a search, not a proof that each remaining part is needed: the result
// fails, and none of its parts could be removed alone within the budget.
#ifndef PRODSIM_SCENARIOS_SHRINK_H_
#define PRODSIM_SCENARIOS_SHRINK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace scenarios {

struct ShrinkOptions {
  int64_t max_runs = 3000;
  // A change is kept if the scenario still fails with its seed or with one
  // of this many - 1 others derived from it.
  int seeds_per_step = 8;
  // Keep workload.close_at: when the finding is about a run that closes late
  // (closing early can fail the same check for another reason).
  bool keep_close_at = false;
  // Keep this check among the run's violations, whatever verdict the run
  // reaches (a symptom that another check's violation hides: a produceSet
  // assertion decides the verdict before log-sequences-contiguous does).
  // Empty: keep the verdict and the deciding check. The result's [expect]
  // is what its own run reaches.
  std::string check;
  // Called with one line per accepted simplification ("removed fault 3 ...").
  std::function<void(const std::string&)> log;
  // Another world than the model (prodsim shrink --client: a real client
  // over the wire, where a run is a sample): `trials` runs a candidate K
  // times (on as many threads as it likes) and the change is kept when at
  // least `needed` of the K runs fail the way the search keeps. Set, it
  // replaces the model's seeds (seeds_per_step is not used: real timing,
  // not the seed, decides a trial's interleaving).
  std::function<std::vector<RunOutput>(const Scenario&)> trials;
  int needed = 1;
  // Polled before each candidate: true ends the search with what it has
  // (a wall-clock bound, which scenarios/ does not read itself).
  std::function<bool()> stop;
};

struct ShrinkResult {
  bool reproduced = false;  // the original failed; false: nothing to shrink
  Verdict verdict = Verdict::kPass;
  std::string failing_check;
  std::string signature;  // SignatureName of the shrunk scenario's run
  Scenario scenario;      // the smallest failing scenario found, with [expect]
  int64_t runs = 0;
  std::vector<std::string> steps;  // the accepted simplifications, in order
  // With ShrinkOptions::trials: of the K trials of the result, how many
  // failed the way the search kept (the original's is first_kept).
  int last_kept = 0;
  int first_kept = 0;
};

ShrinkResult Shrink(const Scenario& original, const ShrinkOptions& options = {});

// A one-line size summary: "2 faults, 40 messages, 1 topic x 3 partitions,
// 3 brokers, 4 producer settings, 0 perturbation sites".
std::string DescribeSize(const Scenario& s);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_SHRINK_H_
