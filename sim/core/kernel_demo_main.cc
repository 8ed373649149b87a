// kernel_demo: what the deterministic kernel does, in one screen.
// 1. A check-then-act race: FIFO never shows it; the random policy finds it
//    within a few seeds; the failing seed replays to the same digest.
// 2. A deadlock: the report names every blocked task and what it waits on.
#include <cstdio>
#include <string>

#include "sim/core/chan.h"
#include "sim/core/kernel_programs_testing.h"

namespace {

sim::Task<void> WaitFor(sim::Chan<int>* in, sim::Chan<int>* out) {
  std::optional<int> v = co_await in->Recv();
  co_await out->Send(v.value_or(0));
}

int Demo() {
  sim::SchedulerOptions o;
  o.policy = sim::Policy::kFifo;
  int fifo_hits = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    o.seed = seed;
    fifo_hits += sim::testing::CheckThenActLosesUpdate(o) ? 1 : 0;
  }
  std::printf("race, fifo policy:   lost update in %d of 100 seeds\n", fifo_hits);

  o.policy = sim::Policy::kRandom;
  uint64_t found = 0;
  for (uint64_t seed = 1; seed <= 100 && found == 0; ++seed) {
    o.seed = seed;
    if (sim::testing::CheckThenActLosesUpdate(o)) found = seed;
  }
  if (found == 0) {
    std::printf("race, random policy: not found in 100 seeds\n");
    return 1;
  }
  o.seed = found;
  std::string trace;
  uint64_t d1 = 0, d2 = 0;
  sim::testing::CheckThenActLosesUpdate(o, &trace, &d1);
  sim::testing::CheckThenActLosesUpdate(o, nullptr, &d2);
  std::printf("race, random policy: lost update first at seed %llu\n",
              static_cast<unsigned long long>(found));
  std::printf("replay of seed %llu: digest=%016llx, again without trace: "
              "digest=%016llx (%s)\n", static_cast<unsigned long long>(found),
              static_cast<unsigned long long>(d1), static_cast<unsigned long long>(d2),
              d1 == d2 ? "same" : "DIFFERENT");
  std::printf("trace of the failing run:\n%s\n", trace.c_str());

  sim::Scheduler s({});
  sim::Chan<int> a(s, "a"), b(s, "b");
  s.Go("left", WaitFor(&a, &b));
  s.Go("right", WaitFor(&b, &a));
  const sim::RunResult r = s.Run();
  std::printf("verdict: %s\n%s\n", std::string(sim::OutcomeName(r.outcome)).c_str(),
              r.detail.c_str());
  return d1 == d2 ? 0 : 1;
}

}  // namespace

int main() { return Demo(); }
