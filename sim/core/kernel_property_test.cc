// Properties of the kernel as a whole: determinism of random programs, and
// that the exploring policies find a race that FIFO cannot.
#include <cstdint>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "sim/core/kernel_programs_testing.h"

namespace sim::testing {
namespace {

SchedulerOptions Options(uint64_t seed, Policy policy) {
  SchedulerOptions o;
  o.seed = seed;
  o.policy = policy;
  o.pct_steps = 40;
  o.step_limit = 100000;
  o.time_limit = Time() + Duration::Seconds(60);
  return o;
}

// (a) A random program run twice with one seed gives the same digest and the
// same verdict, under every policy.
RC_GTEST_PROP(KernelProperty, SameSeedSameDigest, (uint64_t program_seed, uint64_t seed)) {
  Prng prng(program_seed);
  const Program p = RandomProgram(prng);
  const auto policy = *rc::gen::element(Policy::kFifo, Policy::kRandom, Policy::kPct, Policy::kGo);
  const RunResult first = RunProgram(p, Options(seed, policy));
  const RunResult second = RunProgram(p, Options(seed, policy));
  RC_ASSERT(first.digest == second.digest);
  RC_ASSERT(first.outcome == second.outcome);
  RC_ASSERT(first.steps == second.steps);
  RC_ASSERT(first.end_time == second.end_time);
}

// The digest is sensitive: under the random policy, seeds explore different
// interleavings of one program, so they do not all share one digest.
TEST(KernelProperty, DifferentSeedsGiveDifferentInterleavings) {
  Prng prng(3);
  Program p;
  do {
    p = RandomProgram(prng);
  } while (p.tasks.size() < 3);
  int distinct = 0;
  uint64_t previous = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const uint64_t d = RunProgram(p, Options(seed, Policy::kRandom)).digest;
    distinct += d != previous ? 1 : 0;
    previous = d;
  }
  EXPECT_GT(distinct, 5);
}

// How many seeds each policy needs, at most, to find the lost update.
constexpr uint64_t kRaceSeeds = 64;

int CountRaceHits(Policy policy) {
  int hits = 0;
  for (uint64_t seed = 1; seed <= kRaceSeeds; ++seed) {
    hits += CheckThenActLosesUpdate(Options(seed, policy)) ? 1 : 0;
  }
  return hits;
}

// (b) The check-then-act race is never seen under FIFO: a task runs until it
// blocks, and a send into a buffered channel with room never blocks.
TEST(KernelProperty, FifoNeverFindsTheRace) { EXPECT_EQ(CountRaceHits(Policy::kFifo), 0); }

// (b) The random policy switches at synchronization points and finds it
// within kRaceSeeds seeds (in practice in about half of them).
TEST(KernelProperty, RandomFindsTheRace) {
  const int hits = CountRaceHits(Policy::kRandom);
  EXPECT_GT(hits, 0);
  RecordProperty("random_hits_of_64", hits);
  std::printf("random policy: lost update in %d of %llu seeds\n", hits,
              static_cast<unsigned long long>(kRaceSeeds));
}

// (b) PCT with depth 2 finds it within kRaceSeeds seeds too: the race needs
// one priority change point, placed at the first task's handoff.
TEST(KernelProperty, PctFindsTheRace) {
  const int hits = CountRaceHits(Policy::kPct);
  EXPECT_GT(hits, 0);
  std::printf("pct policy: lost update in %d of %llu seeds\n", hits,
              static_cast<unsigned long long>(kRaceSeeds));
}

}  // namespace
}  // namespace sim::testing
