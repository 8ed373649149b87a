// The scenario generator of prodsim explore.
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/explore.h"
#include "scenarios/realism.h"
#include "scenarios/runner.h"
#include "sim/kafka/cluster.h"
#include "sim/net/network.h"

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

// Swarm: over many seeds every realistic fault kind is drawn, and not
// always all.
TEST(ExploreTest, SwarmCoversEveryKind) {
  std::set<fault_models::FaultKind> kinds;
  int without_crash = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    bool crash = false;
    for (const FaultSpec& f : Generate(Base(), seed).faults) {
      kinds.insert(f.kind);
      crash = crash || f.kind == fault_models::FaultKind::kCrash;
    }
    without_crash += crash ? 0 : 1;
  }
  // The 11 of the swarm, the 2 wedge kinds and the late log_dir_failure.
  EXPECT_EQ(kinds.size(), 14u);
  EXPECT_GT(without_crash, 100);
}

// The wedge kinds are drawn after everything else: without them a seed
// gives what it gave before they existed, which is what it gives with them
// but for the wedge faults; with them, some seeds have none.
TEST(ExploreTest, WedgeKindsDrawnLastShiftNoOtherDraw) {
  int with_wedges = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(seed);
    Scenario s = Generate(Base(), seed, {.late_draws = false});
    const Scenario without = Generate(Base(), seed, {.wedge_faults = false, .late_draws = false});
    const size_t before = s.faults.size();
    std::erase_if(s.faults, [](const FaultSpec& f) {
      return f.kind == fault_models::FaultKind::kBlackhole ||
             f.kind == fault_models::FaultKind::kConnectHang;
    });
    with_wedges += s.faults.size() < before ? 1 : 0;
    EXPECT_EQ(s, without);
  }
  EXPECT_GT(with_wedges, 300);  // 3 in 4
  EXPECT_LT(with_wedges, 450);
}

// The late step (a log directory failure, the application's drain) comes
// from a stream of its own: without it a seed gives what it gave before it
// existed, which is what it gives with it but for that failure and the
// drain; with it, a quarter of the seeds have a failure and half a drain
// other than prompt.
TEST(ExploreTest, LateDrawsShiftNoOtherDraw) {
  int failures = 0, drained = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(seed);
    Scenario s = Generate(Base(), seed);
    const Scenario without = Generate(Base(), seed, {.late_draws = false});
    const size_t before = s.faults.size();
    std::erase_if(s.faults, [](const FaultSpec& f) {
      return f.kind == fault_models::FaultKind::kLogDirFailure;
    });
    failures += s.faults.size() < before ? 1 : 0;
    drained += s.workload.drain != Drain::kPrompt ? 1 : 0;
    s.workload.drain = without.workload.drain;
    s.workload.drain_delay = without.workload.drain_delay;
    EXPECT_EQ(s, without);
  }
  EXPECT_GT(failures, 75);
  EXPECT_LT(failures, 175);
  EXPECT_GT(drained, 200);
  EXPECT_LT(drained, 300);
  // Over the wire the drain stays prompt: the driver reads its outcomes.
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    EXPECT_EQ(Generate(Base(), seed, {.client = "librdkafka"}).workload.drain, Drain::kPrompt);
  }
}

// No generated scenario holds a mock fault unless asked for, over 3000
// seeds; asked for, the mocks are drawn. Every generated inject_error is
// one Kafka can give in its scenario.
TEST(ExploreTest, MockFaultsOnlyWhenAsked) {
  Scenario base = Base();
  base.producer.idempotent = true;
  base.producer.required_acks = -1;
  int mocks = 0, injected = 0;
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    const Scenario s = Generate(base, seed);
    for (const FaultSpec& f : s.faults) {
      ASSERT_FALSE(fault_models::IsMockKind(f.kind))
          << "seed " << seed << ": " << fault_models::FaultKindName(f.kind);
      injected += f.kind == fault_models::FaultKind::kInjectError ? 1 : 0;
    }
    EXPECT_EQ(FirstUnrealisticFault(s), std::nullopt) << "seed " << seed;
    for (const FaultSpec& f : Generate(base, seed, {.mock_faults = true}).faults) {
      mocks += fault_models::IsMockKind(f.kind) ? 1 : 0;
    }
  }
  EXPECT_GT(injected, 100);
  EXPECT_GT(mocks, 300);
}

// explore draws the producer's settings: the base's about half the time,
// else each of the settings people use, every draw one that Sarama's
// Config.Validate accepts. Printed: the spread over 3000 seeds.
TEST(ExploreTest, ProducerSettingsAreDrawnAndValid) {
  Scenario base = Base();
  base.producer.idempotent = true;
  base.producer.required_acks = -1;
  base.producer.net_max_open_requests = 1;
  std::map<std::string, int> spread;
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    const ProducerSpec p = Generate(base, seed).producer;
    const absl::StatusOr<sarama::Config> c = ProducerConfigOf(p);
    ASSERT_TRUE(c.ok()) << "seed " << seed << ": " << c.status();
    if (p == base.producer) {
      ++spread["base"];
      continue;
    }
    ++spread[absl::StrCat("idempotent=", c->producer.idempotent)];
    ++spread[absl::StrCat("acks=", c->producer.required_acks)];
    ++spread[absl::StrCat("max_open_requests=", c->net.max_open_requests)];
    ++spread[absl::StrCat("retry_max=", c->producer.retry.max)];
    ++spread[absl::StrCat("retry_backoff=", c->producer.retry.backoff.ToString())];
    ++spread[absl::StrCat("flush_frequency=", c->producer.flush.frequency.ToString())];
    ++spread[absl::StrCat("flush_messages=", c->producer.flush.messages)];
    ++spread[absl::StrCat("channel_buffer_size=", c->channel_buffer_size)];
  }
  std::string line;
  for (const auto& [k, n] : spread) absl::StrAppend(&line, " ", k, ":", n);
  std::printf("producer settings over 3000 seeds:%s\n", line.c_str());
  EXPECT_GT(spread["base"], 1200);
  EXPECT_LT(spread["base"], 1800);
  for (const char* k :
       {"idempotent=1", "idempotent=0", "acks=-1", "acks=1", "max_open_requests=1",
        "max_open_requests=5", "retry_max=0", "retry_max=1", "retry_max=3", "retry_max=100000",
        "flush_frequency=0s", "flush_frequency=10ms", "flush_messages=0", "flush_messages=1",
        "flush_messages=100", "channel_buffer_size=1", "channel_buffer_size=256"}) {
    EXPECT_GT(spread[k], 50) << k;
  }
}

// Swarm for buggify: each site is on in some generated scenarios and off in
// others, and the chosen sites are in canonical order (so they print and
// parse back, as GeneratedScenariosRoundTrip checks).
TEST(ExploreTest, SwarmSwitchesEachBuggifySiteOnAndOff) {
  const std::span<const std::string_view> names = BuggifySiteNames();
  std::vector<int> on(names.size());
  constexpr int kSeeds = 400;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const Scenario s = Generate(Base(), seed);
    size_t next = 0;  // sites appear in the order of the list
    for (const std::string& site : s.buggify.sites) {
      while (next < names.size() && names[next] != site) ++next;
      ASSERT_LT(next, names.size()) << site;
      ++on[next++];
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(std::string(names[i]));
    EXPECT_GT(on[i], kSeeds / 4);
    EXPECT_LT(on[i], kSeeds * 3 / 4);
  }
}

// The names the scenario format accepts are exactly the sites sim/net and
// sim/kafka define, in that order.
TEST(BuggifySitesTest, FormatListsTheSitesOfTheLayers) {
  std::vector<std::string> layers;
  for (const sim::BuggifySite& site : net::kBuggifySites) layers.emplace_back(site.name);
  for (const sim::BuggifySite& site : kafka::kBuggifySites) layers.emplace_back(site.name);
  std::vector<std::string> format;
  for (const std::string_view name : BuggifySiteNames()) format.emplace_back(name);
  EXPECT_EQ(format, layers);
}

Scenario WithAllSites(uint64_t seed) {
  Scenario s = Base();
  s.seed = seed;
  s.workload.messages = 200;
  FaultSpec move;  // a metadata update, for broker.slow_metadata
  move.kind = fault_models::FaultKind::kMoveLeader;
  move.at = Duration::Millis(50);
  move.broker = 1;
  s.faults = {move};
  for (const std::string_view site : BuggifySiteNames()) s.buggify.sites.emplace_back(site);
  return s;
}

// A whole run with every site on: each site fires for some seed (the trace
// says so), the run stays a pure function of its scenario, and it differs
// from the same scenario without buggify.
TEST(BuggifyRunTest, EverySiteFiresAndRunsStayDeterministic) {
  std::set<std::string> fired;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    const Scenario s = WithAllSites(seed);
    const RunOutput traced = RunScenario(s, {.record_trace = true});
    ASSERT_NE(traced.verdict, Verdict::kHarnessError) << traced.harness_error;
    EXPECT_EQ(RunScenario(s).record.run.digest, traced.record.run.digest);
    Scenario off = s;
    off.buggify.sites.clear();
    EXPECT_NE(RunScenario(off).record.run.digest, traced.record.run.digest);
    for (const std::string_view site : BuggifySiteNames()) {
      if (traced.trace.find(absl::StrCat("buggify ", std::string(site), " ")) !=
          std::string::npos) {
        fired.insert(std::string(site));
      }
    }
  }
  EXPECT_EQ(fired.size(), BuggifySiteNames().size());
}

// A Scenario built in code with a site no layer knows is a harness error,
// not a silently quiet site.
TEST(BuggifyRunTest, UnknownSiteIsAHarnessError) {
  Scenario s = Base();
  s.buggify.sites = {"net.teleport"};
  const RunOutput out = RunScenario(s);
  EXPECT_EQ(out.verdict, Verdict::kHarnessError);
  EXPECT_THAT(out.harness_error, ::testing::HasSubstr("unknown buggify site net.teleport"));
}

}  // namespace
}  // namespace scenarios
