#include "sim/core/prng.h"

#include <array>
#include <cmath>

#include "gtest/gtest.h"

namespace sim {
namespace {

// The generator's output is pinned: a change here changes every digest.
TEST(PrngTest, OutputIsPinnedForSeedOne) {
  Prng p(1);
  const uint64_t first = p.Next();
  Prng q(1);
  EXPECT_EQ(first, q.Next());
  EXPECT_NE(Prng(2).Next(), first);
}

// Forked streams depend only on the parent's seed and the name.
TEST(PrngTest, ForkIsIndependentOfParentDraws) {
  Prng a(42);
  Prng fork_before = a.Fork("net");
  for (int i = 0; i < 10; ++i) a.Next();
  Prng fork_after = a.Fork("net");
  EXPECT_EQ(fork_before.Next(), fork_after.Next());
  EXPECT_NE(a.Fork("net").Next(), a.Fork("kafka").Next());
}

// UniformInt covers its whole inclusive range and nothing outside it.
TEST(PrngTest, UniformIntStaysInRangeAndCoversIt) {
  Prng p(7);
  std::array<int, 6> seen{};
  for (int i = 0; i < 6000; ++i) {
    const int64_t v = p.UniformInt(3, 8);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 8);
    ++seen[static_cast<size_t>(v - 3)];
  }
  for (int count : seen) EXPECT_GT(count, 800);
}

// Bernoulli and Chance hit their probabilities within a loose tolerance.
TEST(PrngTest, BernoulliAndChanceHaveTheirRates) {
  Prng p(9);
  int hits = 0, chances = 0;
  for (int i = 0; i < 100000; ++i) {
    hits += p.Bernoulli(0.25) ? 1 : 0;
    chances += p.Chance(1, 10) ? 1 : 0;
  }
  EXPECT_NEAR(hits, 25000, 1000);
  EXPECT_NEAR(chances, 10000, 700);
  EXPECT_FALSE(p.Bernoulli(0.0));
  EXPECT_TRUE(p.Bernoulli(1.0));
}

// The in-house log agrees with libm to near machine precision.
TEST(PrngTest, DeterministicLogMatchesLibm) {
  for (double x : {1e-12, 0.001, 0.3, 0.5, 1.0, 1.5, 2.0, 10.0, 12345.678}) {
    EXPECT_NEAR(DeterministicLog(x), std::log(x), 1e-12 * std::fabs(std::log(x)) + 1e-15) << x;
  }
}

// Exponential draws have the requested mean and respect the cap.
TEST(PrngTest, ExponentialHasMeanAndCap) {
  Prng p(11);
  int64_t sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    Duration d = p.Exponential(Duration::Millis(10), Duration::Millis(200));
    ASSERT_LE(d, Duration::Millis(200));
    ASSERT_GE(d.nanos(), 0);
    sum += d.nanos();
  }
  EXPECT_NEAR(static_cast<double>(sum) / n, 10e6, 0.5e6);
}

}  // namespace
}  // namespace sim
