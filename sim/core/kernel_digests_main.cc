// Prints the trace digest of many random kernel programs under every policy,
// one line each. The cross-compiler test compares this output between the
// gcc build and the clang build: they must be identical.
#include <cstdio>
#include <cstdlib>

#include "sim/core/kernel_programs_testing.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 300;
  if (n <= 0) {
    std::fprintf(stderr, "usage: kernel_digests [COUNT>0]\n");
    return 64;
  }
  for (int i = 1; i <= n; ++i) {
    sim::Prng prng(static_cast<uint64_t>(i));
    const sim::testing::Program p = sim::testing::RandomProgram(prng);
    // go three ways: one P, two Ps, two Ps with CPU cost and perturbation.
    for (int variant = 0; variant < 6; ++variant) {
      const sim::Policy policy = variant < 3 ? static_cast<sim::Policy>(variant) : sim::Policy::kGo;
      sim::SchedulerOptions o;
      o.seed = static_cast<uint64_t>(i) * 7919;
      o.policy = policy;
      o.gomaxprocs = variant == 3 ? 1 : 2;
      if (variant == 5) {
        o.cpu.sync_op = sim::Duration::Nanos(150);
        o.perturb_per_mille = 100;
      }
      o.pct_steps = 40;
      o.step_limit = 100000;
      o.time_limit = sim::Time() + sim::Duration::Seconds(60);
      const sim::RunResult r = sim::testing::RunProgram(p, o);
      std::printf("%d %s/%d %s steps=%llu t=%s digest=%016llx\n", i,
                  std::string(sim::PolicyName(policy)).c_str(), variant,
                  std::string(sim::OutcomeName(r.outcome)).c_str(),
                  static_cast<unsigned long long>(r.steps), r.end_time.ToString().c_str(),
                  static_cast<unsigned long long>(r.digest));
    }
  }
  return 0;
}
