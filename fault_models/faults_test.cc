// Each fault kind applies to the world and heals as its duration says.
#include "fault_models/faults.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fault_models {
namespace {

using kafka::BrokerId;

struct World0 {
  World0()
      : sched(Options()),
        network(sched, sched.prng().Fork("net")),
        client(network.AddNode("client")),
        cluster(sched, network, Config(), &history) {}
  static sim::SchedulerOptions Options() {
    sim::SchedulerOptions o;
    o.time_limit = Time() + Duration::Seconds(30);
    return o;
  }
  static kafka::ClusterConfig Config() {
    kafka::ClusterConfig c;
    c.brokers = 3;
    c.topics = {kafka::TopicConfig{"t", 2, 3}};
    c.min_insync_replicas = 2;
    return c;
  }
  World w() { return World{&sched, &network, &cluster, client}; }
  sim::Scheduler sched;
  net::Network network;
  net::NodeId client;
  kafka::History history;
  kafka::Cluster cluster;
};

FaultParams Params(FaultKind kind, Duration at, std::optional<Duration> duration) {
  FaultParams p;
  p.kind = kind;
  p.at = Time() + at;
  p.duration = duration;
  p.broker = BrokerId(1);
  return p;
}

// Runs the world until `until`, calling `probe` at `probe_at`.
template <typename Probe>
void RunWith(World0& w, FaultSchedule& s, Duration probe_at, Probe probe) {
  s.Start(w.w());
  w.sched.After(probe_at, probe);
  w.sched.After(Duration::Seconds(20), [&] { w.sched.Stop("done"); });
  EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kStopped);
}

// Every kind builds with the fields it needs, and not without one.
TEST(FaultsTest, EveryKindBuilds) {
  for (const FaultKindInfo& k : kFaultKindInfo) {
    FaultParams p = Params(k.kind, Duration(), Duration::Seconds(1));
    p.extra = Duration::Millis(5);                             // stall_response needs one
    p.tp = kafka::TopicPartition{"t", kafka::PartitionId(0)};  // log_dir_failure needs one
    EXPECT_TRUE(MakeFault(p).ok()) << k.name;
    FaultParams bare = Params(k.kind, Duration(), std::nullopt);
    const bool needs_unset_field = (k.needs & (kFieldDuration | kFieldExtra | kFieldTopic)) != 0;
    EXPECT_EQ(MakeFault(bare).ok(), !needs_unset_field) << k.name;
  }
}

// The registry's names are unique, parse back, and list the kinds in
// their canonical order; each generator step lists its kinds once.
TEST(FaultsTest, RegistryNamesRoundTrip) {
  for (const FaultKindInfo& k : kFaultKindInfo) {
    EXPECT_EQ(FaultKindFromName(k.name), k.kind) << k.name;
    EXPECT_EQ(&Info(k.kind), &k) << k.name;
    EXPECT_FALSE(k.doc.empty()) << k.name;
  }
  EXPECT_FALSE(FaultKindFromName("meteor").has_value());
  EXPECT_EQ(KindsDrawnIn<DrawStep::kSwarm>().size() + KindsDrawnIn<DrawStep::kWedge>().size() +
                KindsDrawnIn<DrawStep::kLate>().size() + KindsDrawnIn<DrawStep::kByHand>().size(),
            kFaultKindCount);
}

// A crash takes the broker down for its duration, then restarts it; both
// are recorded in the history, and healed_at is the end of the duration.
TEST(FaultsTest, CrashHealsAtTheEndOfItsDuration) {
  World0 w;
  FaultSchedule s;
  FaultParams p = Params(FaultKind::kCrash, Duration::Seconds(1), Duration::Seconds(2));
  s.Add(p, *MakeFault(p));
  EXPECT_EQ(s.healed_at(Duration()), Time() + Duration::Seconds(3));
  // A crashed broker rejoins no sooner than the controller notices it.
  EXPECT_EQ(s.healed_at(Duration::Seconds(18)), Time() + Duration::Seconds(19));
  bool down_during = false;
  RunWith(w, s, Duration::Seconds(2), [&] { down_during = !w.cluster.broker(BrokerId(1)).up(); });
  EXPECT_TRUE(down_during);
  EXPECT_TRUE(w.cluster.broker(BrokerId(1)).up());
  ASSERT_EQ(w.history.faults.size(), 2u);
  EXPECT_FALSE(w.history.faults[0].healed);
  EXPECT_TRUE(w.history.faults[1].healed);
  EXPECT_EQ(w.history.faults[1].at, Time() + Duration::Seconds(3));
}

// A crash with heal = false never heals: healed_at is never.
TEST(FaultsTest, UnhealedLastingFaultNeverHeals) {
  World0 w;
  FaultSchedule s;
  FaultParams p = Params(FaultKind::kCrash, Duration::Seconds(1), Duration::Seconds(2));
  p.heal = false;
  s.Add(p, *MakeFault(p));
  EXPECT_EQ(s.healed_at(Duration()), Time::Max());
  RunWith(w, s, Duration::Seconds(2), [] {});
  EXPECT_FALSE(w.cluster.broker(BrokerId(1)).up());
}

// A two-way partition holds traffic both ways for its duration.
TEST(FaultsTest, PartitionBothWaysThenHeals) {
  World0 w;
  FaultSchedule s;
  FaultParams p = Params(FaultKind::kPartition, Duration::Seconds(1), Duration::Seconds(1));
  s.Add(p, *MakeFault(p));
  const net::NodeId b = w.cluster.broker(BrokerId(1)).node();
  bool both = false;
  RunWith(w, s, Duration::Millis(1500),
          [&] { both = w.network.Partitioned(w.client, b) && w.network.Partitioned(b, w.client); });
  EXPECT_TRUE(both);
  EXPECT_FALSE(w.network.Partitioned(w.client, b));
  EXPECT_FALSE(w.network.Partitioned(b, w.client));
}

// isolate cuts the client from every broker, both ways, for its duration,
// and leaves the brokers' links to each other alone.
TEST(FaultsTest, IsolateCutsEveryBrokerThenHeals) {
  World0 w;
  FaultSchedule s;
  FaultParams p = Params(FaultKind::kIsolate, Duration::Seconds(1), Duration::Seconds(1));
  s.Add(p, *MakeFault(p));
  const int32_t n = w.cluster.broker_count();
  ASSERT_GE(n, 2);
  int32_t cut = 0;
  bool between_brokers = true;
  RunWith(w, s, Duration::Millis(1500), [&] {
    for (int32_t i = 0; i < n; ++i) {
      const net::NodeId b = w.cluster.broker(BrokerId(i)).node();
      cut += w.network.Partitioned(w.client, b) && w.network.Partitioned(b, w.client) ? 1 : 0;
    }
    between_brokers = w.network.Partitioned(w.cluster.broker(BrokerId(0)).node(),
                                            w.cluster.broker(BrokerId(1)).node());
  });
  EXPECT_EQ(cut, n);
  EXPECT_FALSE(between_brokers);
  for (int32_t i = 0; i < n; ++i) {
    const net::NodeId b = w.cluster.broker(BrokerId(i)).node();
    EXPECT_FALSE(w.network.Partitioned(w.client, b)) << i;
    EXPECT_FALSE(w.network.Partitioned(b, w.client)) << i;
  }
}

// A one-way partition holds only its direction.
TEST(FaultsTest, PartitionOneWay) {
  World0 w;
  FaultSchedule s;
  FaultParams p = Params(FaultKind::kPartition, Duration::Seconds(1), Duration::Seconds(1));
  p.direction = Direction::kToBroker;
  s.Add(p, *MakeFault(p));
  const net::NodeId b = w.cluster.broker(BrokerId(1)).node();
  bool to = false, from = true;
  RunWith(w, s, Duration::Millis(1500), [&] {
    to = w.network.Partitioned(w.client, b);
    from = w.network.Partitioned(b, w.client);
  });
  EXPECT_TRUE(to);
  EXPECT_FALSE(from);
}

// move_leader moves every partition the broker can lead; shrink_isr drops
// it from the ISR until the end of the duration, then it rejoins.
TEST(FaultsTest, MoveLeaderAndShrinkIsr) {
  World0 w;
  FaultSchedule s;
  FaultParams move = Params(FaultKind::kMoveLeader, Duration::Seconds(1), std::nullopt);
  s.Add(move, *MakeFault(move));
  FaultParams shrink = Params(FaultKind::kShrinkIsr, Duration::Seconds(2), Duration::Seconds(2));
  shrink.broker = BrokerId(2);
  s.Add(shrink, *MakeFault(shrink));
  size_t isr_during = 0;
  const kafka::TopicPartition tp{"t", kafka::PartitionId(0)};
  RunWith(w, s, Duration::Millis(3000), [&] { isr_during = w.cluster.partition(tp)->isr.size(); });
  EXPECT_EQ(w.cluster.partition(tp)->leader, BrokerId(1));
  EXPECT_EQ(isr_during, 2u);
  EXPECT_EQ(w.cluster.partition(tp)->isr.size(), 3u);
}

// The instant, count-based and self-healing kinds apply and are recorded
// (their effects on requests are covered by the cluster's tests). A
// count-based kind is healed at its last use, which the cluster reports:
// the schedule records no heal for it.
TEST(FaultsTest, OtherKindsApplyAndRecord) {
  World0 w;
  FaultSchedule s;
  for (const FaultKind kind :
       {FaultKind::kReset, FaultKind::kInjectError, FaultKind::kLoseResponse,
        FaultKind::kStallResponse, FaultKind::kMockError, FaultKind::kMockDropResponse,
        FaultKind::kDelayProcessing, FaultKind::kLatencySpike, FaultKind::kPauseFetching}) {
    FaultParams p = Params(kind, Duration::Seconds(1), Duration::Seconds(1));
    p.extra = Duration::Millis(5);
    if (kind == FaultKind::kInjectError) p.duration.reset();
    s.Add(p, *MakeFault(p));
  }
  EXPECT_EQ(s.healed_at(Duration()), Time() + Duration::Seconds(2));
  RunWith(w, s, Duration::Seconds(1), [] {});
  EXPECT_EQ(w.history.faults.size(), 13u);  // nine applied, four healed
}

// A blackhole is instant (healed at `at`, for the liveness check) and
// acts on the connections open then; a connect hang holds new dials to the
// broker for its duration, heals by itself, and needs a duration.
TEST(FaultsTest, BlackholeIsInstantAndConnectHangLastsItsDuration) {
  World0 w;
  FaultSchedule s;
  FaultParams hole = Params(FaultKind::kBlackhole, Duration::Seconds(1), std::nullopt);
  s.Add(hole, *MakeFault(hole));
  FaultParams hang = Params(FaultKind::kConnectHang, Duration::Seconds(2), Duration::Seconds(3));
  s.Add(hang, *MakeFault(hang));
  EXPECT_EQ(s.healed_at(Duration()), Time() + Duration::Seconds(5));
  const net::NodeId b = w.cluster.broker(BrokerId(1)).node();
  bool hanging = false;
  RunWith(w, s, Duration::Seconds(4), [&] { hanging = w.network.ConnectsHang(w.client, b); });
  EXPECT_TRUE(hanging);
  EXPECT_FALSE(w.network.ConnectsHang(w.client, b));
  ASSERT_EQ(w.history.faults.size(), 3u);  // the blackhole; the hang applied and healed
  EXPECT_FALSE(w.history.faults[0].healed);
  EXPECT_TRUE(w.history.faults[2].healed);
  EXPECT_EQ(w.history.faults[2].at, Time() + Duration::Seconds(5));
  EXPECT_FALSE(MakeFault(Params(FaultKind::kConnectHang, Duration(), std::nullopt)).ok());
}

// Only the mock kinds are mocks; an inject_error without a modelled cause
// does not build.
TEST(FaultsTest, MockKindsAreNamedAndInjectErrorNeedsACause) {
  for (const FaultKindInfo& k : kFaultKindInfo) {
    EXPECT_EQ(IsMockKind(k.kind), k.name == "mock.error" || k.name == "mock.drop_response")
        << k.name;
    EXPECT_EQ(IsMockKind(k.kind), k.name.starts_with("mock.")) << k.name;
  }
  FaultParams p = Params(FaultKind::kInjectError, Duration(), std::nullopt);
  p.error = kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER;
  EXPECT_FALSE(MakeFault(p).ok());
  p.kind = FaultKind::kMockError;
  EXPECT_TRUE(MakeFault(p).ok());
}

// The kinds of the README table under heading `heading`: the first column
// of each row, without its backticks, in the table's order.
std::vector<std::string> ReadmeKinds(std::string_view heading) {
  std::ifstream in(std::filesystem::path(PRODSIM_SOURCE_DIR) / "fault_models/README.md");
  EXPECT_TRUE(in.good()) << "cannot read fault_models/README.md";
  std::vector<std::string> kinds;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) in_section = std::string_view(line).substr(3) == heading;
    if (!in_section || !line.starts_with("| `")) continue;
    kinds.push_back(line.substr(3, line.find('`', 3) - 3));
  }
  return kinds;
}

// fault_models/README.md's realism tables list exactly the registry's kinds,
// each in the table its Realism names, in canonical order.
TEST(FaultsTest, ReadmeTablesListTheRegistry) {
  std::vector<std::string> realistic, mocks;
  for (const FaultKindInfo& k : kFaultKindInfo) {
    (k.realism == Realism::kMock ? mocks : realistic).emplace_back(k.name);
  }
  EXPECT_EQ(ReadmeKinds("The realistic kinds"), realistic);
  EXPECT_EQ(ReadmeKinds("The mock kinds"), mocks);
}

}  // namespace
}  // namespace fault_models
