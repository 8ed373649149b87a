// Small programs of tasks and channels, used to test the kernel itself:
// random programs for determinism (same seed, same digest; gcc == clang),
// and a classic check-then-act race that a scheduler policy must find.
#ifndef PRODSIM_SIM_CORE_KERNEL_PROGRAMS_TESTING_H_
#define PRODSIM_SIM_CORE_KERNEL_PROGRAMS_TESTING_H_

#include <string>
#include <vector>

#include "sim/core/prng.h"
#include "sim/core/scheduler.h"

namespace sim::testing {

struct ProgOp {
  enum Kind : int { kSend, kRecv, kSelect, kSelectDefault, kSleep, kYield, kClose };
  int kind = kSend;
  int chan = 0;   // the channel (index into Program::capacities)
  int chan2 = 0;  // select's second channel
  int arg = 0;    // value sent, or sleep in ms
};

struct Program {
  std::vector<int> capacities;             // one per channel
  std::vector<std::vector<ProgOp>> tasks;  // one op list per task
};

// A random program: 2-5 tasks, 1-4 channels, 1-12 ops each.
Program RandomProgram(Prng& prng);
std::string DescribeProgram(const Program& p);

// Runs a program; the result carries the trace digest.
RunResult RunProgram(const Program& p, const SchedulerOptions& options);

// Two tasks each read a shared counter, hand a token over a buffered channel
// (a synchronization point that never blocks), then write counter + 1.
// Returns true if an update was lost (the counter ends at 1, not 2). With
// `trace` non-null, records the trace and renders it there.
bool CheckThenActLosesUpdate(const SchedulerOptions& options, std::string* trace = nullptr,
                             uint64_t* digest = nullptr);

}  // namespace sim::testing

#endif  // PRODSIM_SIM_CORE_KERNEL_PROGRAMS_TESTING_H_
