// The scenario generator of prodsim explore.
#include "scenarios/explore.h"

#include <set>

#include "gtest/gtest.h"

namespace scenarios {
namespace {

Scenario Base() {
  Scenario s;
  s.cluster.brokers = 3;
  s.cluster.min_insync_replicas = 2;
  s.cluster.topics = {TopicSpec{"t", 3, 3}};
  return s;
}

// Generation is a pure function of (base, seed), and seeds differ.
TEST(ExploreTest, GenerateIsDeterministic) {
  EXPECT_EQ(Generate(Base(), 42), Generate(Base(), 42));
  EXPECT_FALSE(Generate(Base(), 42) == Generate(Base(), 43));
}

// Every generated scenario prints to a file that parses back to it, so a
// finding can always be written and replayed.
TEST(ExploreTest, GeneratedScenariosRoundTrip) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    const Scenario s = Generate(Base(), seed);
    absl::StatusOr<Scenario> back = ParseScenario(PrintScenario(s), "generated");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, s);
    for (const FaultSpec& f : s.faults) {
      EXPECT_LT(f.at, kExploreHealBy);
      EXPECT_LE(f.at + f.duration.value_or(Duration()), kExploreHealBy);
    }
  }
}

// Shards split one seed space: no seed is drawn by two shards.
TEST(ExploreTest, ShardsAreDisjoint) {
  std::set<uint64_t> seen;
  for (uint64_t shard = 0; shard < 4; ++shard) {
    for (uint64_t i = 0; i < 1000; ++i) {
      EXPECT_TRUE(seen.insert(ExploreSeed(7, shard, 4, i)).second);
    }
  }
}

// Swarm: over many seeds every fault kind is drawn, and not always all.
TEST(ExploreTest, SwarmCoversEveryKind) {
  std::set<std::string> kinds;
  int without_crash = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    bool crash = false;
    for (const FaultSpec& f : Generate(Base(), seed).faults) {
      kinds.insert(f.kind);
      crash = crash || f.kind == "crash";
    }
    without_crash += crash ? 0 : 1;
  }
  EXPECT_EQ(kinds.size(), 10u);
  EXPECT_GT(without_crash, 100);
}

}  // namespace
}  // namespace scenarios
