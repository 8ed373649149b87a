// Tests of Buggify: sites that are off draw nothing, each enabled site has
// its own stream, and an enabled site fires at its rate with a bounded extra.
#include "sim/core/buggify.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sim {
namespace {

constexpr BuggifySite kA{"a.site", 1, 4};
constexpr BuggifySite kB{"b.site", 1, 10};
constexpr BuggifySite kC{"c.site", 1, 2};

// What site b does over `n` opportunities: whether it fired, and its extra.
struct Draw {
  bool fired;
  Duration extra;
  bool operator==(const Draw&) const = default;
};

// Runs `n` opportunities of b; before each, `others` get an opportunity too.
std::vector<Draw> DrawsOfB(Buggify& bug, const std::vector<BuggifySite>& others, int n) {
  std::vector<Draw> out;
  for (int i = 0; i < n; ++i) {
    for (const BuggifySite& o : others) {
      if (bug.Fires(o)) bug.Extra(o, Duration::Millis(1));
    }
    const bool fired = bug.Fires(kB);
    out.push_back(Draw{fired, fired ? bug.Extra(kB, Duration::Millis(5)) : Duration()});
  }
  return out;
}

// A default Buggify, or a site left off, never fires and counts nothing.
TEST(BuggifyTest, SitesThatAreOffNeverFire) {
  Buggify none;
  Buggify only_a(Prng(1), {"a.site"});
  EXPECT_FALSE(none.any_enabled());
  EXPECT_TRUE(only_a.Enabled("a.site"));
  EXPECT_FALSE(only_a.Enabled("b.site"));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(none.Fires(kA));
    EXPECT_FALSE(only_a.Fires(kB));
  }
  EXPECT_EQ(none.opportunities("a.site"), 0u);
  EXPECT_EQ(only_a.opportunities("b.site"), 0u);
  EXPECT_EQ(only_a.fired("b.site"), 0u);
}

// Enabling another site, or asking a site that is off, does not shift the
// draws of an enabled site: each has its own stream.
TEST(BuggifyTest, EachSiteHasItsOwnStream) {
  const Prng root(7);
  Buggify only_b(root, {"b.site"});
  Buggify a_and_b(root, {"a.site", "b.site"});
  Buggify b_asked_c(root, {"b.site"});
  const std::vector<Draw> alone = DrawsOfB(only_b, {}, 500);
  EXPECT_EQ(DrawsOfB(a_and_b, {kA}, 500), alone);
  EXPECT_EQ(DrawsOfB(b_asked_c, {kC}, 500), alone);
  EXPECT_GT(a_and_b.fired("a.site"), 0u);  // canary: a really drew
  EXPECT_EQ(b_asked_c.opportunities("c.site"), 0u);
}

// The same root gives the same draws; another root gives others.
TEST(BuggifyTest, DrawsAreFixedByTheRoot) {
  Buggify first(Prng(3), {"b.site"});
  Buggify again(Prng(3), {"b.site"});
  Buggify other(Prng(4), {"b.site"});
  const std::vector<Draw> d = DrawsOfB(first, {}, 300);
  EXPECT_EQ(DrawsOfB(again, {}, 300), d);
  EXPECT_NE(DrawsOfB(other, {}, 300), d);
}

// An enabled site fires at its rate, and its extra lies in [1ns, max].
TEST(BuggifyTest, FiresAtItsRateWithABoundedExtra) {
  Buggify bug(Prng(11), {"a.site", "b.site"});
  constexpr int kN = 40000;
  Duration lo = Duration::Max(), hi;
  for (int i = 0; i < kN; ++i) {
    bug.Fires(kA);
    if (!bug.Fires(kB)) continue;
    const Duration e = bug.Extra(kB, Duration::Micros(100));
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  EXPECT_EQ(bug.opportunities("a.site"), uint64_t{kN});
  EXPECT_EQ(bug.opportunities("b.site"), uint64_t{kN});
  // 1/4 and 1/10 of 40000, within a few standard deviations.
  EXPECT_NEAR(static_cast<double>(bug.fired("a.site")), kN / 4.0, 500);
  EXPECT_NEAR(static_cast<double>(bug.fired("b.site")), kN / 10.0, 350);
  EXPECT_GE(lo, Duration::Nanos(1));
  EXPECT_LT(lo, Duration::Micros(1));
  EXPECT_LE(hi, Duration::Micros(100));
  EXPECT_GT(hi, Duration::Micros(99));
}

}  // namespace
}  // namespace sim
