// What a real client's trial is, whichever cluster it runs against (the
// simulated one of real_world.h, or real brokers behind the fault proxy of
// real_cluster.h): the scenario bounded and refused where a real client
// cannot run it, the driver's configuration and the settings the checks
// read, the client's process and job line, its end (killed at the bound,
// reaped, its output read), and the judgement of what it reported and the
// brokers recorded. Each piece is written once here and called by both
// RunReal and RunRealCluster, so that the two print the same trial lines
// and verdicts for the same client behaviour.
#ifndef PRODSIM_WIRE_REAL_TRIAL_H_
#define PRODSIM_WIRE_REAL_TRIAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checks/run_record.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "sim/core/time.h"
#include "wire/child.h"
#include "wire/drivers.h"
#include "wire/event_loop.h"
#include "wire/real_world.h"

namespace wire {

// After a kill, how long prodsim waits to reap the client and read the
// rest of its output.
inline constexpr sim::Duration kReapWait = sim::Duration::Seconds(2);

// The scenario with its time bounded by `bound` (a real trial costs real
// time), so that the plan's limit and the count-fault hook's cap agree.
scenarios::Scenario Bounded(const scenarios::Scenario& s, sim::Duration bound);

// PlanWorld's plan, refused if it has mock faults (they answer what no real
// broker does) or a drain other than prompt (a driver reads its outcomes
// promptly).
absl::StatusOr<scenarios::WorldPlan> PlanRealWorld(const scenarios::Scenario& s);

// OK if the client is told to close (workload.close_at) before the trial's
// bound; a trial bounded no later would kill a client only waiting as told.
absl::Status ClosesBeforeBound(const scenarios::Scenario& s);

// The job's topics: the workload's, else every cluster topic.
std::vector<std::string> TopicsOf(const scenarios::Scenario& s);

// The driver's configuration for the scenario ([producer] mapped, then
// [clients."family"]); sets result's client name and ignored settings.
ConfigList ClientConfigFor(const Driver& driver, const scenarios::Scenario& s, RealOutput& result);

// What the checks read of the client's settings and the client's record
// (its name; the job's messages when it must offer every one).
void SetClientRecord(const Driver& driver, const scenarios::Scenario& s, checks::RunRecord& record);

// The client's process: the driver's program and environment, its job line
// against `bootstrap`, with the flush at close bounded so that it ends
// before the trial's `time_limit`.
Child::Spec ClientSpec(const Driver& driver, const scenarios::Scenario& s,
                       const std::string& bootstrap, sim::Duration time_limit,
                       const ConfigList& config);

// Ends the client at the trial's end: one still running is killed (hung,
// its bound `now`), then reaped, and what it wrote meanwhile is read (up to
// kReapWait); its exit, signal, CPU time and stderr's last lines are
// recorded. `exiting`: the driver said it exits, so it gets the reaping
// wait to do so before it is killed.
void EndClient(EventLoop& loop, Child& child, bool exiting, sim::Time now,
               checks::ClientRecord& client, RealOutput& result);

// The verdict of a finished trial: the acks' sequences from the broker
// history, the checks over `record` (moved into `out`), then `harness` (a
// harness error if not empty) or the deciding check and the signature.
void Judge(const scenarios::Scenario& s, std::string harness, checks::RunRecord record,
           scenarios::RunOutput& out);

void HarnessError(scenarios::RunOutput& out, std::string why);

}  // namespace wire

#endif  // PRODSIM_WIRE_REAL_TRIAL_H_
