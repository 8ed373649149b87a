// prodsim explore, in either world: scenarios generated from a base
// (scenarios/explore.h Generate), each run once in a World (the model, or a
// real client over the wire: one trial), findings printed and written as
// they come, grouped by signature at the end, and the smallest file of each
// new signature shrunk (over the wire: kept while it fails in r of K
// trials).
//
// What a person sees does not depend on --jobs in the model (runs are
// consumed in index order, scenarios/parallel.h); over the wire each trial
// is a sample, so two explorations of the same seeds differ, and every
// line says which client and version ran it, and under what load.
#ifndef PRODSIM_SEARCH_EXPLORE_H_
#define PRODSIM_SEARCH_EXPLORE_H_

#include <cstdint>
#include <set>
#include <string>

#include "scenarios/explore.h"
#include "scenarios/scenario.h"
#include "search/world.h"
#include "sim/core/time.h"

namespace search {

struct ExploreOptions {
  std::string out;  // "": write nothing
  int64_t runs = -1;  // or, with time > 0, until then
  sim::Duration time;
  uint64_t seed = 1, shard = 0, shards = 1;
  bool keep_going = false;
  bool shrink = true;
  scenarios::GenerateOptions generate;
  std::set<std::string> known;  // signatures counted as known
  unsigned jobs = 1;
  // Over the wire: how a new signature's smallest file is shrunk (K trials
  // per candidate, kept when `shrink_needed` fail; at most shrink_time).
  int shrink_trials = 5;
  int shrink_needed = 2;
  sim::Duration shrink_time = sim::Duration::Seconds(600);
};

// Prints as it goes (stdout: findings and the summary; stderr: progress).
// Returns the exit code: 0 nothing (new) found, 1 found, 73 a file could
// not be written.
int Explore(const scenarios::Scenario& base, const World& world, const ExploreOptions& o);

// The signatures of the scenario files under `dir` (recursively): each
// file's [expect] signature and its [expect.profiles] entries'; a file
// that names none is run in the model, and its run's signature counts.
// False, with *code set (66, 65) and a line on stderr, if the directory or
// a file cannot be read.
bool LoadKnownSignatures(const std::string& dir, std::set<std::string>* known, int* code);

}  // namespace search

#endif  // PRODSIM_SEARCH_EXPLORE_H_
