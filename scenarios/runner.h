// The world builder and the runner: a Scenario in, a verdict out.
//
// RunScenario builds the world a scenario describes (scheduler, network,
// cluster, the producer model with its config, the workload, the fault
// schedule), runs it to the end, records what happened (checks/RunRecord),
// evaluates every property check, and maps the result to a verdict. It is a
// pure function of the Scenario: the same scenario gives the same digest.
#ifndef PRODSIM_SCENARIOS_RUNNER_H_
#define PRODSIM_SCENARIOS_RUNNER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "checks/check.h"
#include "checks/check_registry.h"
#include "checks/run_record.h"
#include "checks/signature.h"
#include "checks/verdict.h"
#include "fault_models/faults.h"
#include "producer/config.h"
#include "scenarios/scenario.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/cluster.h"
#include "sim/net/network.h"

namespace scenarios {

// The verdicts, their names and exit codes: checks/verdict.h.
using checks::ExitCode;
using checks::ParseVerdict;
using checks::Verdict;
using checks::VerdictName;

struct RunOptions {
  bool record_trace = false;
  bool timeline = false;  // implies record_trace
};

struct RunOutput {
  Verdict verdict = Verdict::kPass;
  // The check that decides the verdict (empty for pass), and all violations.
  std::string failing_check;
  std::vector<checks::Violation> violations;
  checks::RunRecord record;
  std::string trace;     // the rendered trace, if recorded
  std::string timeline;  // Perfetto trace-event JSON, if asked for
  std::string harness_error;
  // The scenario has mock faults (what no real cluster does): the verdict
  // is about a MockBroker-style world, and says so.
  bool mock_faults = false;
  // A failing run's signature (checks/signature.h): the mechanism, found
  // from the deciding violation (or, if no rule explains it, the first
  // other violation one does). Unclassified for pass and harness errors.
  checks::Signature signature;
};

// The profile's NewConfig with the scenario's settings on top, checked by
// sarama::Config::Validate (an error is its message).
absl::StatusOr<sarama::Config> ProducerConfigOf(const ProducerSpec& p);

// The world a scenario describes apart from its producer, checked and
// ready to build: what the simulated run (RunScenario) and the real-time
// world (wire/) share.
struct WorldPlan {
  kafka::ClusterConfig cluster;
  net::LatencyModel latency;
  fault_models::FaultSchedule faults;
  // Seed, policy, step limit; the time limit: limits.time, or the planned
  // heal plus the liveness grace if sooner.
  sim::SchedulerOptions scheduler;
  sim::Time healed;  // FaultSchedule::healed_at; Time::Max() if never
  bool mock_faults = false;
};
// An error is the scenario's (a harness error for a run).
absl::StatusOr<WorldPlan> PlanWorld(const Scenario& s);
// Sets the record's heal time and grace, and has the cluster's count-based
// faults (each takes effect when a request comes) push both the heal time
// and the scheduler's time limit later. `sched`, `cluster` and `record`
// must outlive the run.
void FollowCountFaults(const Scenario& s, const WorldPlan& plan, sim::Scheduler& sched,
                       kafka::Cluster& cluster, checks::RunRecord& record);
// The scenario's pieces as the world's types (PlanWorld uses them).
absl::StatusOr<kafka::ClusterConfig> ClusterConfigOf(const ClusterSpec& s);
absl::Status CheckBuggifySites(const BuggifySpec& b);
fault_models::FaultParams FaultParamsOf(const FaultSpec& f);

// The verdict of the violations (the check that decides it in `failing`):
// a client failure first, then an assertion (Sarama's, or a client's fatal
// error), then safety, then liveness or deadlock.
Verdict Decide(const RunOutput& out, std::string* failing);
// The verdict with the check that decided it and the failure's signature,
// as every command prints it: "safety [per-partition-order]
// retry-overtaken@asyncProducer.retryMessages", or "pass".
std::string VerdictText(const RunOutput& out);
// The name a failure is counted under in summaries: the check that decided
// it, or the verdict where no check did (a deadlock, a harness error).
std::string FailureName(const RunOutput& out);
// The signature a failure is grouped under ("unclassified" if no rule
// applies); for a run without a violation (a harness error), its verdict.
std::string SignatureName(const RunOutput& out);
// The [expect] a run's output meets: its verdict, check and signature.
ExpectSpec ExpectOf(const RunOutput& out);
// Sets out->signature from out->violations (RunScenario does; wire mode's
// runs call it after their checks).
void ClassifyFailure(RunOutput* out);

// Builds and runs. A Scenario that parsed is runnable; an error here is a
// harness error (returned in the output, not as a status).
RunOutput RunScenario(const Scenario& s, const RunOptions& options = {});

// Does the output match the scenario's expect block? (True if none.) The
// expectation is the one for s.producer.profile: [expect] itself for the
// file's own profile, else the matching [expect.profiles."NAME"] entry
// (after --profile replaced the profile; none is a mismatch).
bool MatchesExpect(const Scenario& s, const RunOutput& out, std::string* why);

// The scenario with another producer profile; everything else, and
// [expect], kept. MatchesExpect on the result checks the entry for
// `profile`. REQUIRES: `profile` a name sarama::ParseProfile knows (the
// command line checks it).
Scenario WithProfile(const Scenario& s, std::string_view profile);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_RUNNER_H_
