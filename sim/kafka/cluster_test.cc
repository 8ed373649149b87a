// Tests of the cluster model through the network, as a client sees it.
#include "sim/kafka/cluster.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/kafka/raw_client.h"

namespace kafka {
namespace {

using sim::Duration;
using sim::Task;
using sim::Time;

const TopicPartition kT0{"t", PartitionId(0)};

using Sites = std::vector<std::string>;

// A scheduler, network, 3-broker cluster and one client node. With
// `buggify` set, those sites are on, in the network and the cluster.
struct World {
  explicit World(ClusterConfig config = DefaultConfig(), bool record = false,
                 std::optional<Sites> buggify = std::nullopt)
      : sched(Options(record)),
        network(sched, sched.prng().Fork("net")),
        client_node(network.AddNode("client")),
        cluster(sched, network, std::move(config), &history),
        client(sched, network, client_node) {
    if (buggify) {
      bug = sim::Buggify(sched.prng().Fork("buggify"), *buggify);
      network.SetBuggify(&bug);
      cluster.SetBuggify(&bug);
    }
  }

  static sim::SchedulerOptions Options(bool record) {
    sim::SchedulerOptions o;
    o.record_trace = record;
    o.time_limit = Time() + Duration::Seconds(600);
    return o;
  }
  // The controller notices a crash at once here: these tests are about
  // what follows the election. CrashDetectedWhenTheSessionExpires tests the
  // delay itself.
  static ClusterConfig DefaultConfig() {
    ClusterConfig c;
    c.brokers = 3;
    c.topics = {TopicConfig{"t", 3, 3}};
    c.min_insync_replicas = 2;
    c.zookeeper_session_timeout = Duration();
    return c;
  }
  net::NodeId Node(BrokerId b) { return cluster.broker(b).node(); }
  // Runs `body` as the one non-daemon task, to completion.
  sim::RunResult Run(Task<void> body) {
    sched.Go("test", std::move(body));
    return sched.Run();
  }

  sim::Scheduler sched;
  sim::Buggify bug;
  net::Network network;
  net::NodeId client_node;
  History history;
  Cluster cluster;
  RawClient client;
};

std::shared_ptr<ProduceRequest> Produce(World* w, const TopicPartition& tp, int64_t pid,
                                        int16_t epoch, int32_t seq, int n, int16_t acks = -1,
                                        uint64_t first_id = 1) {
  auto req = NewRequest<ProduceRequest>(w->client.NextCorrelationId());
  req->acks = acks;
  req->timeout = Duration::Seconds(1);
  RecordBatch& b = req->batches[tp];
  b.producer_id = ProducerId(pid);
  b.producer_epoch = Epoch(epoch);
  b.base_sequence = Sequence(seq);
  for (int i = 0; i < n; ++i) {
    b.records.push_back(Record{"k", 10, w->sched.now(), first_id + static_cast<uint64_t>(i)});
  }
  return req;
}

// The outcome of one produce call: the partition response, or a status.
struct Outcome {
  absl::Status status;
  ProducePartitionResponse part;
};

Task<Outcome> CallProduce(World* w, BrokerId to, std::shared_ptr<ProduceRequest> req,
                          Duration timeout = Duration::Seconds(5)) {
  const TopicPartition tp = req->batches.begin()->first;
  absl::StatusOr<net::PayloadPtr> r = co_await w->client.Call(w->Node(to), req, timeout);
  if (!r.ok()) co_return Outcome{r.status(), {}};
  const auto* resp = dynamic_cast<const ProduceResponse*>(r->get());
  co_return Outcome{absl::OkStatus(), resp->partitions.at(tp)};
}

std::vector<uint64_t> LogIds(const Broker& b, const TopicPartition& tp) {
  std::vector<uint64_t> ids;
  for (const StoredBatch& sb : b.replica(tp)->log) {
    for (const Record& r : sb.batch.records) ids.push_back(r.record_id);
  }
  return ids;
}

Task<void> RoundTrip(World* w, std::string* report) {
  auto md = NewRequest<MetadataRequest>(w->client.NextCorrelationId());
  md->api = ApiKey::kMetadata;
  absl::StatusOr<net::PayloadPtr> r =
      co_await w->client.Call(w->Node(BrokerId(1)), md, Duration::Seconds(1));
  EXPECT_TRUE(r.ok());
  const auto* meta = dynamic_cast<const MetadataResponse*>(r->get());
  EXPECT_EQ(meta->brokers.size(), 3u);
  const BrokerId leader = meta->topics.at(0).partitions.at(0).leader;
  auto init = NewRequest<InitProducerIdRequest>(w->client.NextCorrelationId());
  init->api = ApiKey::kInitProducerId;
  r = co_await w->client.Call(w->Node(BrokerId(1)), init, Duration::Seconds(1));
  const auto* pid = dynamic_cast<const InitProducerIdResponse*>(r->get());
  EXPECT_EQ(pid->error, ErrorCode::NONE);
  Outcome o = co_await CallProduce(w, leader, Produce(w, kT0, pid->producer_id.value, 0, 0, 3));
  EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  *report = absl::StrCat("leader ", leader.value, " acked at ", w->sched.now().ToString());
}

// One produce round trip, acks=all, through the network to a 3-broker
// cluster and back: metadata, a producer id, an append replicated to both
// followers before the acknowledgement. Prints the trace (the demo).
TEST(ClusterTest, ProduceRoundTripThroughTheNetwork) {
  World w(World::DefaultConfig(), /*record=*/true);
  std::string report;
  const sim::RunResult r = w.Run(RoundTrip(&w, &report));
  ASSERT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  int leader_appends = 0, follower_appends = 0;
  for (const AppendEvent& e : w.history.appends) (e.leader ? leader_appends : follower_appends)++;
  EXPECT_EQ(leader_appends, 1);
  EXPECT_EQ(follower_appends, 2);
  std::printf("%s\n--- trace ---\n%s", report.c_str(), w.sched.RenderTrace().c_str());
}

Task<void> ProduceToFollower(World* w) {
  Outcome o = co_await CallProduce(w, BrokerId(1), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  EXPECT_EQ(o.part.base_offset, Offset::kNone);
}

// A produce to a follower is refused with NOT_LEADER_OR_FOLLOWER.
TEST(ClusterTest, FollowerRefusesProduce) {
  World w;
  EXPECT_EQ(w.Run(ProduceToFollower(&w)).outcome, sim::Outcome::kAllDone);
  EXPECT_TRUE(w.history.appends.empty());
}

Task<void> CrashBeforeReplication(World* w) {
  // Followers stall, so the batch cannot be committed; the leader crashes.
  w->cluster.PauseFetching(BrokerId(1), Time() + Duration::Seconds(1));
  w->cluster.PauseFetching(BrokerId(2), Time() + Duration::Seconds(1));
  w->sched.After(Duration::Millis(50), [w] { w->cluster.CrashBroker(BrokerId(0)); });
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2, -1, 1));
  EXPECT_FALSE(o.status.ok());  // connection reset: never acknowledged
  co_await w->sched.Sleep(Duration::Seconds(2));
  const BrokerId leader = w->cluster.partition(kT0)->leader;
  EXPECT_NE(leader, BrokerId(0));
  EXPECT_TRUE(LogIds(w->cluster.broker(leader), kT0).empty());
  // The producer retries the same batch on the new leader: accepted (the
  // new leader has no state for this producer, and 2.6 accepts any seq).
  o = co_await CallProduce(w, leader, Produce(w, kT0, 1000, 0, 0, 2, -1, 1));
  EXPECT_TRUE(o.status.ok());
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  // The old leader comes back and truncates its uncommitted copy, then
  // replicates the new leader's batch.
  w->cluster.RestartBroker(BrokerId(0));
  co_await w->sched.Sleep(Duration::Seconds(1));
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1, 2}));
}

// An acks=all batch on a leader that crashes before replication is never
// acknowledged and is gone from the new leader's log; the retried batch is
// accepted by the new leader; the old leader truncates on its return.
TEST(ClusterTest, AcksAllBatchLostWithCrashedLeaderThenRetried) {
  World w;
  const sim::RunResult r = w.Run(CrashBeforeReplication(&w));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  ASSERT_FALSE(w.history.truncations.empty());
  EXPECT_EQ(w.history.truncations.front().broker, BrokerId(0));
  EXPECT_EQ(w.history.truncations.front().new_end, Offset(0));
}

Task<void> DuplicateAfterFailover(World* w) {
  // Batch seq 0-2 is committed on all replicas, but its response is lost.
  w->cluster.MockDropResponses(BrokerId(0), 1);
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 3, -1, 1),
                                   Duration::Millis(500));
  EXPECT_FALSE(o.status.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status)) << o.status;
  EXPECT_TRUE(w->cluster.MoveLeader(kT0, BrokerId(1)).ok());
  co_await w->sched.Sleep(Duration::Millis(100));
  // The retry on the new leader is recognised from the replicated producer
  // state: NONE with the original offset, and nothing written twice.
  o = co_await CallProduce(w, BrokerId(1), Produce(w, kT0, 1000, 0, 0, 3, -1, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(1)), kT0), (std::vector<uint64_t>{1, 2, 3}));
  // The next batch continues the sequence.
  o = co_await CallProduce(w, BrokerId(1), Produce(w, kT0, 1000, 0, 3, 1, -1, 4));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(3));
}

// A duplicate retried after a failover is still recognised by the new
// leader, which built the producer state by replication.
TEST(ClusterTest, DuplicateRecognisedAfterFailover) {
  World w;
  EXPECT_EQ(w.Run(DuplicateAfterFailover(&w)).outcome, sim::Outcome::kAllDone);
  ASSERT_FALSE(w.history.responses.empty());
  EXPECT_EQ(w.history.responses.front().fate, kafka::ResponseFate::kMockDropped);
}

Task<void> TimeoutThenCommitted(World* w) {
  w->cluster.PauseFetching(BrokerId(1), Time() + Duration::Seconds(3));
  w->cluster.PauseFetching(BrokerId(2), Time() + Duration::Seconds(3));
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::REQUEST_TIMED_OUT);
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1}));
  co_await w->sched.Sleep(Duration::Seconds(3));
  // Written although the client was told it failed.
  EXPECT_EQ(w->cluster.broker(BrokerId(0)).replica(kT0)->high_watermark, Offset(1));
}

// acks=all not satisfied within the request timeout answers
// REQUEST_TIMED_OUT, and the batch stays in the log and is committed later.
TEST(ClusterTest, RequestTimedOutButWritten) {
  World w;
  EXPECT_EQ(w.Run(TimeoutThenCommitted(&w)).outcome, sim::Outcome::kAllDone);
  w.cluster.SnapshotLogs();
  ASSERT_EQ(w.history.final_logs.at(kT0).size(), 1u);
}

Task<void> DuplicateWaitsForCommit(World* w) {
  // The batch is appended but cannot commit: both followers are paused.
  w->cluster.PauseFetching(BrokerId(1), Time() + Duration::Seconds(3));
  w->cluster.PauseFetching(BrokerId(2), Time() + Duration::Seconds(3));
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::REQUEST_TIMED_OUT);
  // Its resend is a duplicate; acks=all must still wait for the original
  // to commit (Kafka requires HW > lastOffset for a duplicate too), so it
  // times out as well instead of acknowledging an uncommitted batch.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::REQUEST_TIMED_OUT);
  co_await w->sched.Sleep(Duration::Seconds(3));
  // Once the followers fetch, the same resend is acknowledged at once with
  // the original offset, and nothing is written twice.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1}));
}

// An acks=all duplicate of a batch that is not yet committed is not
// acknowledged before the batch commits (it used to be answered at once,
// so a failover could lose an acknowledged record).
TEST(ClusterTest, AcksAllDuplicateWaitsForCommit) {
  World w;
  EXPECT_EQ(w.Run(DuplicateWaitsForCommit(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> NotEnoughReplicas(World* w) {
  const Time until = Time() + Duration::Seconds(10);
  EXPECT_TRUE(w->cluster.ShrinkIsr(kT0, BrokerId(1), until).ok());
  EXPECT_TRUE(w->cluster.ShrinkIsr(kT0, BrokerId(2), until).ok());
  EXPECT_FALSE(w->cluster.ShrinkIsr(kT0, BrokerId(0), until).ok());  // the leader
  co_await w->sched.Sleep(Duration::Millis(100));
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_ENOUGH_REPLICAS);
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1, /*acks=*/1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
}

// With the ISR below min.insync.replicas, acks=all is refused before any
// write (NOT_ENOUGH_REPLICAS), while acks=1 still succeeds.
TEST(ClusterTest, NotEnoughReplicasBeforeAppend) {
  World w;
  EXPECT_EQ(w.Run(NotEnoughReplicas(&w)).outcome, sim::Outcome::kAllDone);
  int leader_appends = 0;
  for (const AppendEvent& e : w.history.appends) leader_appends += e.leader ? 1 : 0;
  EXPECT_EQ(leader_appends, 1);
}

Task<void> StaleLeader(World* w) {
  EXPECT_TRUE(w->cluster.MoveLeader(kT0, BrokerId(2)).ok());
  // Before broker 2 learns that it leads, it refuses; afterwards it accepts.
  Outcome o = co_await CallProduce(w, BrokerId(2), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  co_await w->sched.Sleep(Duration::Seconds(2));
  o = co_await CallProduce(w, BrokerId(2), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
}

// Metadata reaches brokers after a delay, so a client sent to the new
// leader too early gets NOT_LEADER_OR_FOLLOWER.
TEST(ClusterTest, StaleMetadataAnswersNotLeader) {
  ClusterConfig c = World::DefaultConfig();
  c.metadata_delay_max = Duration::Seconds(1);
  World w(c);
  // Pick a seed whose draw for broker 2 is later than one round trip.
  EXPECT_EQ(w.Run(StaleLeader(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> Injected(World* w) {
  w->cluster.MockError(BrokerId(0), ApiKey::kProduce, kT0, ErrorCode::NOT_LEADER_OR_FOLLOWER, 2);
  for (int i = 0; i < 2; ++i) {
    Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
    EXPECT_EQ(o.part.error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  }
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
}

// A mock error answers the next N requests unprocessed, then stops.
TEST(ClusterTest, InjectedErrorForNextRequests) {
  World w;
  EXPECT_EQ(w.Run(Injected(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> Sequences(World* w) {
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 5, 1));
  EXPECT_EQ(o.part.error, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 1, 3, 1));
  EXPECT_EQ(o.part.error, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);  // new epoch needs seq 0
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 1, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 2, 1));
  EXPECT_EQ(o.part.error, ErrorCode::INVALID_PRODUCER_EPOCH);
}

// The leader applies the producer-state rules: a gap, a higher epoch not at
// sequence 0, and a fenced (lower) epoch are refused.
TEST(ClusterTest, LeaderEnforcesSequenceAndEpochRules) {
  World w;
  EXPECT_EQ(w.Run(Sequences(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> RestartRebuilds(World* w) {
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2, -1, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 2, 2, -1, 3));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  w->cluster.CrashBroker(BrokerId(1));
  w->cluster.CrashBroker(BrokerId(2));
  w->cluster.CrashBroker(BrokerId(0));
  co_await w->sched.Sleep(Duration::Millis(100));
  w->cluster.RestartBroker(BrokerId(0));
  w->cluster.RestartBroker(BrokerId(1));
  w->cluster.RestartBroker(BrokerId(2));
  co_await w->sched.Sleep(Duration::Seconds(1));
  const BrokerId leader = w->cluster.partition(kT0)->leader;
  EXPECT_EQ(leader, BrokerId(0));
  // Producer state was rebuilt from the log: the last batch is a duplicate.
  o = co_await CallProduce(w, leader, Produce(w, kT0, 1000, 0, 2, 2, -1, 3));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(2));
  // But only the last one: the state was loaded from the snapshot the
  // recovery took, which keeps one batch per producer, so a resend of the
  // first batch is out of order (it was a duplicate before the crash).
  o = co_await CallProduce(w, leader, Produce(w, kT0, 1000, 0, 0, 2, -1, 1));
  EXPECT_EQ(o.part.error, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
  EXPECT_EQ(LogIds(w->cluster.broker(leader), kT0).size(), 4u);
}

// After a crash and restart, a broker rebuilds producer state from its log
// and a snapshot (ProducerStateManager::Recover, as Kafka's Log recovery
// does: sim/kafka/reference's differential test found the snapshot's one
// batch), so a resend of the last batch is still recognised as a duplicate,
// and one of an older batch is not.
TEST(ClusterTest, RestartRebuildsProducerStateFromLog) {
  World w;
  const sim::RunResult r = w.Run(RestartRebuilds(&w));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
}

Task<void> IsrShrinkAndExpand(World* w) {
  ClusterConfig c = w->cluster.config();
  w->cluster.PauseFetching(BrokerId(2), Time() + Duration::Seconds(5));
  co_await w->sched.Sleep(Duration::Seconds(3));
  EXPECT_EQ(w->cluster.partition(kT0)->isr.size(), 2u);  // broker 2 fell out
  co_await w->sched.Sleep(Duration::Seconds(3));
  EXPECT_EQ(w->cluster.partition(kT0)->isr.size(), 3u);  // and came back
}

// A follower that stops fetching for longer than replica.lag.time.max leaves
// the ISR, and rejoins once it has caught up.
TEST(ClusterTest, IsrShrinksOnLagAndExpandsOnCatchUp) {
  ClusterConfig c = World::DefaultConfig();
  c.replica_lag_time_max = Duration::Seconds(2);
  World w(c);
  EXPECT_EQ(w.Run(IsrShrinkAndExpand(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> AcksZero(World* w) {
  absl::Status st =
      co_await w->client.Send(w->Node(BrokerId(0)), Produce(w, kT0, -1, -1, -1, 2, /*acks=*/0));
  EXPECT_TRUE(st.ok());
  // No response ever comes: a call with acks=0 times out.
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, -1, -1, -1, 1, 0),
                                   Duration::Millis(200));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status)) << o.status;
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0).size(), 3u);
}

// acks=0: the broker appends (a non-idempotent batch) and sends nothing.
TEST(ClusterTest, AcksZeroAppendsWithoutResponse) {
  World w;
  EXPECT_EQ(w.Run(AcksZero(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> IsrShrinksWhileWaiting(World* w) {
  // Followers stall; while the acks=all request waits, the ISR shrinks to
  // the leader alone, so the high watermark passes the batch with too few
  // replicas: written, but NOT_ENOUGH_REPLICAS_AFTER_APPEND.
  const Time until = Time() + Duration::Seconds(5);
  w->cluster.PauseFetching(BrokerId(1), until);
  w->cluster.PauseFetching(BrokerId(2), until);
  w->sched.After(Duration::Millis(100), [w, until] {
    EXPECT_TRUE(w->cluster.ShrinkIsr(kT0, BrokerId(1), until).ok());
    EXPECT_TRUE(w->cluster.ShrinkIsr(kT0, BrokerId(2), until).ok());
  });
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND);
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0).size(), 1u);
}

// An ISR that shrinks below min.insync.replicas while acks=all waits gives
// NOT_ENOUGH_REPLICAS_AFTER_APPEND, with the batch left in the log.
TEST(ClusterTest, NotEnoughReplicasAfterAppend) {
  World w;
  EXPECT_EQ(w.Run(IsrShrinksWhileWaiting(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> OldVersionDuplicates(World* w) {
  for (int32_t seq = 0; seq < 4; seq += 2) {
    Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, seq, 2));
    EXPECT_EQ(o.part.error, ErrorCode::NONE);
  }
  // Kafka 0.11 keeps one batch: a resend of the last is a duplicate, a
  // resend of the one before is out of order.
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 2, 2));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(2));
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2));
  EXPECT_EQ(o.part.error, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
}

// The cluster's kafka version selects the producer-state rules (0.11 here).
TEST(ClusterTest, KafkaVersionSelectsRules) {
  ClusterConfig c = World::DefaultConfig();
  c.version = KafkaVersion::k0_11;
  World w(c);
  EXPECT_EQ(w.Run(OldVersionDuplicates(&w)).outcome, sim::Outcome::kAllDone);
}

// One ApiVersions exchange: the error and the ranges the broker sent.
struct ApiVersionsOutcome {
  ErrorCode error = ErrorCode::NONE;
  std::vector<ApiVersionRange> api_keys;
};

Task<void> AskApiVersions(World* w, int16_t version, ApiVersionsOutcome* out) {
  auto req = NewRequest<ApiVersionsRequest>(w->client.NextCorrelationId());
  req->version = version;
  absl::StatusOr<net::PayloadPtr> r =
      co_await w->client.Call(w->Node(BrokerId(0)), req, Duration::Seconds(1));
  if (!r.ok()) {
    ADD_FAILURE() << r.status();
    co_return;
  }
  const auto* res = dynamic_cast<const ApiVersionsResponse*>(r->get());
  if (res == nullptr) {
    ADD_FAILURE() << "not an ApiVersionsResponse";
    co_return;
  }
  out->error = res->error;
  out->api_keys = res->api_keys;
}

int16_t MaxVersionOf(const std::vector<ApiVersionRange>& keys, ApiKey api) {
  for (const ApiVersionRange& r : keys) {
    if (r.api == api) return r.max_version;
  }
  return -1;
}

// A broker answers an ApiVersions request it knows with its API ranges, and
// a newer one with UNSUPPORTED_VERSION: a 2.6 broker names its own
// ApiVersions range (KIP-511), an older one names nothing.
TEST(ClusterTest, ApiVersionsAnswersByVersion) {
  struct Case {
    KafkaVersion kafka;
    int16_t asked;
    ErrorCode error;
    int16_t api_versions_max;  // -1: not listed
    size_t listed;
  };
  const Case cases[] = {
      {KafkaVersion::k2_6, 3, ErrorCode::NONE, 3, 4},
      {KafkaVersion::k2_6, 4, ErrorCode::UNSUPPORTED_VERSION, 3, 1},
      {KafkaVersion::k2_0, 2, ErrorCode::NONE, 2, 4},
      {KafkaVersion::k2_0, 3, ErrorCode::UNSUPPORTED_VERSION, -1, 0},
      {KafkaVersion::k0_11, 0, ErrorCode::NONE, 1, 4},
      {KafkaVersion::k0_11, 3, ErrorCode::UNSUPPORTED_VERSION, -1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(std::string(KafkaVersionName(c.kafka)), " asked v", c.asked));
    ClusterConfig config = World::DefaultConfig();
    config.version = c.kafka;
    World w(config);
    ApiVersionsOutcome out;
    EXPECT_EQ(w.Run(AskApiVersions(&w, c.asked, &out)).outcome, sim::Outcome::kAllDone);
    EXPECT_EQ(out.error, c.error);
    EXPECT_EQ(out.api_keys.size(), c.listed);
    EXPECT_EQ(MaxVersionOf(out.api_keys, ApiKey::kApiVersions), c.api_versions_max);
  }
}

// The same run twice gives the same trace digest.
// --- Realistic faults on responses, and errors brought about by their causes.

// The History's fate of the first response to correlation id `corr`.
std::optional<ResponseFate> FateOf(const World& w, int32_t corr) {
  for (const ResponseEvent& r : w.history.responses) {
    if (r.correlation_id == corr) return r.fate;
  }
  return std::nullopt;
}

Task<void> LostResponse(World* w) {
  w->cluster.LoseResponses(BrokerId(0), ApiKey::kProduce, 1);
  auto req = Produce(w, kT0, 1000, 0, 0, 2);
  const int32_t corr = req->correlation_id;
  Outcome o = co_await CallProduce(w, BrokerId(0), req);
  // The connection broke: the client sees a reset, not a response.
  EXPECT_TRUE(absl::IsUnavailable(o.status)) << o.status;
  EXPECT_EQ(FateOf(*w, corr), ResponseFate::kLost);
  // The broker had processed it: the batch is in the log.
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1, 2}));
  // The resend, on a new connection, is the duplicate of what was written.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2));
  EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1, 2}));
}

// lose_response: the request is processed, then the connection breaks
// before its response arrives; both sides see the reset.
TEST(ClusterTest, LostResponseRequestWasProcessed) {
  World w;
  EXPECT_EQ(w.Run(LostResponse(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> StalledResponse(World* w) {
  w->cluster.StallResponses(BrokerId(0), ApiKey::kProduce, 1, Duration::Seconds(3));
  auto req = Produce(w, kT0, 1000, 0, 0, 1);
  const int32_t corr = req->correlation_id;
  // The client gives up after 1 s and closes, as Sarama's read timeout does.
  Outcome o = co_await CallProduce(w, BrokerId(0), req, Duration::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(o.status)) << o.status;
  w->client.Disconnect(w->Node(BrokerId(0)));
  co_await w->sched.Sleep(Duration::Seconds(3));
  // The late response died with the connection; the batch was written.
  EXPECT_EQ(FateOf(*w, corr), ResponseFate::kLate);
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1}));
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
}

// stall_response: a response held past the client's patience arrives after
// the client closed the connection, and is dropped.
TEST(ClusterTest, StalledResponseDiesWithTheClosedConnection) {
  World w;
  EXPECT_EQ(w.Run(StalledResponse(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> ProduceAndForget(World* w, std::shared_ptr<ProduceRequest> req) {
  co_await CallProduce(w, BrokerId(0), std::move(req), Duration::Seconds(3));
}

Task<void> RequestQueuedBehindAClosedConnection(World* w) {
  // acks=all with both followers stalled: the first request waits in the
  // leader's purgatory; the second is queued behind it on the connection.
  // One connection, dialled first, so that both requests go on it.
  auto md = NewRequest<MetadataRequest>(w->client.NextCorrelationId());
  md->api = ApiKey::kMetadata;
  EXPECT_TRUE((co_await w->client.Call(w->Node(BrokerId(0)), md, Duration::Seconds(1))).ok());
  w->cluster.PauseFetching(BrokerId(1), w->sched.now() + Duration::Seconds(2));
  w->cluster.PauseFetching(BrokerId(2), w->sched.now() + Duration::Seconds(2));
  w->sched.Go("first", ProduceAndForget(w, Produce(w, kT0, 1000, 0, 0, 1, -1, 1)));
  co_await w->sched.Sleep(Duration::Millis(1));
  w->sched.Go("second", ProduceAndForget(w, Produce(w, kT0, 1000, 0, 1, 1, -1, 2)));
  co_await w->sched.Sleep(Duration::Millis(100));
  w->client.Disconnect(w->Node(BrokerId(0)));  // the client gives up on both
  co_await w->sched.Sleep(Duration::Seconds(3));
  // The first was appended before the close; its answer could not be sent,
  // and the second, read but not yet handled, was never handled.
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1}));
}

// Kafka 2.6 (Selector.close, CloseMode.GRACEFUL) handles the requests it
// had read from a connection its peer closed only until its first response
// send fails; the requests behind it are dropped. Canary: the model used to
// go on and append the second one too.
TEST(ClusterTest, RequestsBehindAFailedSendToAClosedConnectionAreDropped) {
  World w;
  EXPECT_EQ(w.Run(RequestQueuedBehindAClosedConnection(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> CausedNotLeader(World* w) {
  w->cluster.CauseError(BrokerId(0), kT0, ErrorCode::NOT_LEADER_OR_FOLLOWER, 1, Duration());
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  // A real leadership change: the controller moved it, nothing was written.
  const BrokerId leader = w->cluster.partition(kT0)->leader;
  EXPECT_NE(leader, BrokerId(0));
  EXPECT_TRUE(LogIds(w->cluster.broker(BrokerId(0)), kT0).empty());
  // The old leader stays a follower: the next request is refused too.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  co_await w->sched.Sleep(Duration::Millis(100));  // the new leader learns it
  o = co_await CallProduce(w, leader, Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
}

// inject_error NOT_LEADER_OR_FOLLOWER moves the leadership away; the broker
// does not stay leader.
TEST(ClusterTest, InjectedNotLeaderIsALeadershipMove) {
  World w;
  EXPECT_EQ(w.Run(CausedNotLeader(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> CausedTimeout(World* w) {
  w->cluster.CauseError(BrokerId(0), kT0, ErrorCode::REQUEST_TIMED_OUT, 1, Duration());
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2));
  EXPECT_EQ(o.part.error, ErrorCode::REQUEST_TIMED_OUT);
  // Appended before the wait, and kept: the followers catch up later.
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1, 2}));
  co_await w->sched.Sleep(Duration::Millis(100));
  EXPECT_EQ(w->cluster.broker(BrokerId(0)).replica(kT0)->high_watermark, Offset(2));
  // The resend is answered as the duplicate, with the original offset.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 2));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0), (std::vector<uint64_t>{1, 2}));
}

// inject_error REQUEST_TIMED_OUT: the batch is in the log (post-append),
// and its resend is a duplicate.
TEST(ClusterTest, InjectedTimeoutLeavesTheBatchInTheLog) {
  World w;
  EXPECT_EQ(w.Run(CausedTimeout(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> CausedNotEnoughReplicas(World* w, ErrorCode error) {
  w->cluster.CauseError(BrokerId(0), kT0, error, 1, Duration::Millis(300));
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, error);
  const bool after = error == ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND;
  EXPECT_EQ(LogIds(w->cluster.broker(BrokerId(0)), kT0).size(), after ? 1u : 0u);
  EXPECT_LT(w->cluster.partition(kT0)->isr.size(), 2u);
  // While the ISR is short, even the resend of a written batch is refused
  // before the duplicate check (Partition.appendRecordsToLeader).
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NOT_ENOUGH_REPLICAS);
  // The followers catch up and rejoin; then it goes through (a duplicate
  // of the first if that was written).
  co_await w->sched.Sleep(Duration::Millis(500));
  EXPECT_EQ(w->cluster.partition(kT0)->isr.size(), 3u);
  co_await w->sched.Sleep(Duration::Millis(100));
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(o.part.base_offset, Offset(0));
}

// inject_error NOT_ENOUGH_REPLICAS: the ISR shrinks below min.insync before
// the append; nothing is written.
TEST(ClusterTest, InjectedNotEnoughReplicasIsAnIsrShrink) {
  World w;
  EXPECT_EQ(w.Run(CausedNotEnoughReplicas(&w, ErrorCode::NOT_ENOUGH_REPLICAS)).outcome,
            sim::Outcome::kAllDone);
}

// ... and _AFTER_APPEND right after it: the batch is written and committed.
TEST(ClusterTest, InjectedNotEnoughReplicasAfterAppendIsWritten) {
  World w;
  EXPECT_EQ(w.Run(CausedNotEnoughReplicas(&w, ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND)).outcome,
            sim::Outcome::kAllDone);
}

Task<void> CauseCannotAct(World* w) {
  const TopicPartition solo{"solo", PartitionId(0)};
  const BrokerId leader = w->cluster.partition(solo)->leader;
  w->cluster.CauseError(leader, solo, ErrorCode::NOT_LEADER_OR_FOLLOWER, 1, Duration());
  // One replica: no other broker to move the leadership to. Served as usual.
  Outcome o = co_await CallProduce(w, leader, Produce(w, solo, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  EXPECT_EQ(w->cluster.partition(solo)->leader, leader);
}

// An error whose cause cannot act on a request is not given.
TEST(ClusterTest, InjectedErrorWaitsForARequestItsCauseCanActOn) {
  ClusterConfig c = World::DefaultConfig();
  c.topics.push_back(TopicConfig{"solo", 1, 1});
  c.min_insync_replicas = 1;
  World w(c);
  EXPECT_EQ(w.Run(CauseCannotAct(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> CrashDetection(World* w) {
  EXPECT_EQ(w->cluster.partition(kT0)->leader, BrokerId(0));
  w->cluster.CrashBroker(BrokerId(0));
  co_await w->sched.Sleep(Duration::Seconds(17));
  // Not noticed yet: still the leader, still in the ISR; refused dials.
  EXPECT_EQ(w->cluster.partition(kT0)->leader, BrokerId(0));
  EXPECT_EQ(w->cluster.partition(kT0)->isr.size(), 3u);
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_TRUE(absl::IsUnavailable(o.status)) << o.status;
  // A restart before the session expired cannot register until it does.
  w->cluster.RestartBroker(BrokerId(0));
  EXPECT_FALSE(w->cluster.broker(BrokerId(0)).up());
  co_await w->sched.Sleep(Duration::Seconds(2));
  // The session expired at 18 s: a new leader, and the broker rejoined.
  EXPECT_NE(w->cluster.partition(kT0)->leader, BrokerId(0));
  EXPECT_TRUE(w->cluster.broker(BrokerId(0)).up());
}

Task<void> FailedLogDir(World* w) {
  EXPECT_EQ(w->cluster.partition(kT0)->leader, BrokerId(0));
  // An acks=all request waits on stalled followers when the directory
  // fails under it: answered KAFKA_STORAGE_ERROR (DelayedProduce).
  w->cluster.PauseFetching(BrokerId(1), w->sched.now() + Duration::Millis(200));
  w->cluster.PauseFetching(BrokerId(2), w->sched.now() + Duration::Millis(200));
  sim::Scheduler* sched = &w->sched;
  Cluster* cluster = &w->cluster;
  sched->After(Duration::Millis(50), [cluster] { cluster->FailLogDir(BrokerId(0), kT0); });
  Outcome o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 0, 1));
  EXPECT_EQ(o.part.error, ErrorCode::KAFKA_STORAGE_ERROR);
  // Later requests too, before the leader check: the replica is offline.
  o = co_await CallProduce(w, BrokerId(0), Produce(w, kT0, 1000, 0, 1, 1));
  EXPECT_EQ(o.part.error, ErrorCode::KAFKA_STORAGE_ERROR);
  // The controller dropped broker 0 from the ISR and elected another
  // leader, which takes the partition's writes once its followers fetch.
  const PartitionState* p = w->cluster.partition(kT0);
  EXPECT_NE(p->leader, BrokerId(0));
  EXPECT_NE(p->leader, BrokerId::kNone);
  EXPECT_EQ(p->isr.size(), 2u);
  co_await w->sched.Sleep(Duration::Millis(300));
  o = co_await CallProduce(w, p->leader, Produce(w, kT0, 1001, 0, 0, 1, -1, 10));
  EXPECT_EQ(o.part.error, ErrorCode::NONE);
  // Broker 0's other partitions are on other directories: still served.
  EXPECT_FALSE(
      w->cluster.broker(BrokerId(0)).replica(TopicPartition{"t", PartitionId(1)})->offline);
}

// log_dir_failure: KAFKA_STORAGE_ERROR from the failed replica (waiting
// requests included), and the controller moves the leadership away
// (ReplicaManager.handleLogDirFailure, KafkaController.onBrokerLogDirFailure).
TEST(ClusterTest, FailedLogDirAnswersStorageErrorAndMovesTheLeader) {
  World w;
  EXPECT_EQ(w.Run(FailedLogDir(&w)).outcome, sim::Outcome::kAllDone);
}

// The controller learns of a crash when the broker's ZooKeeper session
// expires (18 s by default), not at once.
TEST(ClusterTest, CrashDetectedWhenTheSessionExpires) {
  ClusterConfig c = World::DefaultConfig();
  c.zookeeper_session_timeout = Duration::Seconds(18);
  World w(c);
  EXPECT_EQ(w.Run(CrashDetection(&w)).outcome, sim::Outcome::kAllDone);
}

Task<void> LeaderlessMetadata(World* w, int16_t version, ErrorCode want) {
  const TopicPartition solo{"solo", PartitionId(0)};
  w->cluster.CrashBroker(w->cluster.partition(solo)->leader);
  co_await w->sched.Sleep(Duration::Millis(100));
  auto md = NewRequest<MetadataRequest>(w->client.NextCorrelationId());
  md->version = version;
  md->topics = {"solo"};
  const BrokerId other =
      w->cluster.partition(solo)->replicas[0] == BrokerId(0) ? BrokerId(1) : BrokerId(0);
  absl::StatusOr<net::PayloadPtr> r =
      co_await w->client.Call(w->Node(other), md, Duration::Seconds(1));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) co_return;
  const auto* meta = dynamic_cast<const MetadataResponse*>(r->get());
  EXPECT_EQ(meta->topics.at(0).partitions.at(0).error, want);
}

// KAFKA-10312 (2.0 to 2.6): a partition without a live leader is
// LISTENER_NOT_FOUND to a Metadata v6+ request, LEADER_NOT_AVAILABLE below.
TEST(ClusterTest, LeaderlessPartitionMetadataErrorDependsOnVersion) {
  for (const auto& [version, want] :
       {std::pair<int16_t, ErrorCode>{9, ErrorCode::LISTENER_NOT_FOUND},
        std::pair<int16_t, ErrorCode>{5, ErrorCode::LEADER_NOT_AVAILABLE}}) {
    SCOPED_TRACE(version);
    ClusterConfig c = World::DefaultConfig();
    c.topics.push_back(TopicConfig{"solo", 1, 1});
    c.min_insync_replicas = 1;
    World w(c);
    EXPECT_EQ(w.Run(LeaderlessMetadata(&w, version, want)).outcome, sim::Outcome::kAllDone);
  }
}

TEST(ClusterTest, Deterministic) {
  uint64_t digests[2];
  for (uint64_t& d : digests) {
    World w;
    d = w.Run(CrashBeforeReplication(&w)).digest;
  }
  EXPECT_EQ(digests[0], digests[1]);
}

// ---------------------------------------------------------------------------
// Buggify.

const Sites kAllSites = {"net.delay", "net.slow_connect", "broker.slow_request",
                         "broker.slow_metadata", "broker.slow_fetch"};

// `count` produce calls in a row to broker 0 (kT0's leader), each one's
// round trip in `took` (the first, which dials, left out).
Task<void> ProduceInARow(World* w, int count, int16_t acks, std::vector<Duration>* took) {
  for (int i = 0; i < count; ++i) {
    const Time start = w->sched.now();
    Outcome o = co_await CallProduce(
        w, BrokerId(0), Produce(w, kT0, 1000, 0, i, 1, acks, static_cast<uint64_t>(i) + 1));
    EXPECT_TRUE(o.status.ok()) << o.status;
    EXPECT_EQ(o.part.error, ErrorCode::NONE);
    if (i > 0) took->push_back(w->sched.now() - start);
  }
}

struct RoundTrips {
  std::vector<Duration> took;
  uint64_t fired = 0;
  std::string trace;
};

RoundTrips RunProduceInARow(std::optional<Sites> sites, int16_t acks, std::string_view site) {
  World w(World::DefaultConfig(), /*record=*/true, std::move(sites));
  RoundTrips out;
  const sim::RunResult r = w.Run(ProduceInARow(&w, 80, acks, &out.took));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  out.fired = w.bug.fired(site);
  out.trace = w.sched.RenderTrace();
  return out;
}

// broker.slow_request makes some requests slower (a round trip is constant
// without it, with acks=1), by at most its maximum.
TEST(ClusterBuggifyTest, SlowRequestSlowsSomeResponses) {
  const RoundTrips off = RunProduceInARow(std::nullopt, 1, "broker.slow_request");
  const RoundTrips on = RunProduceInARow(Sites{"broker.slow_request"}, 1, "broker.slow_request");
  ASSERT_EQ(off.took.size(), on.took.size());
  const Duration usual = off.took.front();
  int slow = 0;
  for (size_t i = 0; i < off.took.size(); ++i) {
    EXPECT_EQ(off.took[i], usual);
    EXPECT_GE(on.took[i], usual);
    EXPECT_LE(on.took[i], usual + kBuggifySlowRequestMax);
    if (on.took[i] > usual) ++slow;
  }
  EXPECT_GT(slow, 0);
  EXPECT_GT(on.fired, 0u);
  EXPECT_THAT(on.trace, ::testing::HasSubstr("buggify broker.slow_request broker-0: +"));
  EXPECT_THAT(off.trace, ::testing::Not(::testing::HasSubstr("buggify")));
}

// broker.slow_fetch makes followers fetch later now and then, so the high
// watermark lags and some acks=all requests wait longer than any without it.
TEST(ClusterBuggifyTest, SlowFetchDelaysAcksAll) {
  const RoundTrips off = RunProduceInARow(std::nullopt, -1, "broker.slow_fetch");
  const RoundTrips on = RunProduceInARow(Sites{"broker.slow_fetch"}, -1, "broker.slow_fetch");
  ASSERT_EQ(off.took.size(), on.took.size());
  const Duration off_max = *std::max_element(off.took.begin(), off.took.end());
  const Duration on_max = *std::max_element(on.took.begin(), on.took.end());
  EXPECT_GT(on_max, off_max);
  EXPECT_GT(on.fired, 0u);
  EXPECT_THAT(on.trace, ::testing::HasSubstr("buggify broker.slow_fetch broker-"));
}

bool AllBrokersKnowEpoch(World* w, int32_t epoch) {
  for (int32_t b = 0; b < w->cluster.broker_count(); ++b) {
    if (w->cluster.broker(BrokerId(b)).view().partitions.at(kT0).leader_epoch < epoch) {
      return false;
    }
  }
  return true;
}

// Moves kT0's leader around `moves` times; for each move, how long until
// every broker knew of it (polled every 100us).
Task<void> MoveAndWatch(World* w, int moves, std::vector<Duration>* learned) {
  for (int i = 0; i < moves; ++i) {
    co_await w->sched.Sleep(Duration::Millis(200));
    EXPECT_TRUE(w->cluster.MoveLeader(kT0, BrokerId((i + 1) % 3)).ok());
    const int32_t epoch = w->cluster.partition(kT0)->leader_epoch;
    const Time start = w->sched.now();
    while (!AllBrokersKnowEpoch(w, epoch)) {
      co_await w->sched.Sleep(Duration::Micros(100));
    }
    learned->push_back(w->sched.now() - start);
  }
}

// broker.slow_metadata makes some broker learn of a change later than
// cluster.metadata_delay_max allows otherwise: a wider stale window.
TEST(ClusterBuggifyTest, SlowMetadataWidensTheStaleWindow) {
  const Duration delay_max = World::DefaultConfig().metadata_delay_max;
  for (const bool buggify : {false, true}) {
    SCOPED_TRACE(buggify ? "buggify" : "plain");
    World w(World::DefaultConfig(), /*record=*/true,
            buggify ? std::optional<Sites>(Sites{"broker.slow_metadata"}) : std::nullopt);
    std::vector<Duration> learned;
    EXPECT_EQ(w.Run(MoveAndWatch(&w, 20, &learned)).outcome, sim::Outcome::kAllDone);
    ASSERT_EQ(learned.size(), 20u);
    const Duration slowest = *std::max_element(learned.begin(), learned.end());
    EXPECT_LE(slowest, delay_max + kBuggifySlowMetadataMax + Duration::Micros(100));
    if (buggify) {
      EXPECT_GT(slowest, delay_max + Duration::Micros(100));
      EXPECT_THAT(w.sched.RenderTrace(), ::testing::HasSubstr("buggify broker.slow_metadata"));
    } else {
      EXPECT_LE(slowest, delay_max + Duration::Micros(100));
    }
  }
}

// A Buggify with nothing on, or only sites no run here reaches, changes
// nothing; with every site on, a run differs but stays a function of its
// seed.
TEST(ClusterBuggifyTest, OffChangesNothingOnIsDeterministic) {
  auto digest = [](std::optional<Sites> sites) {
    World w(World::DefaultConfig(), /*record=*/false, std::move(sites));
    const sim::RunResult r = w.Run(CrashBeforeReplication(&w));
    EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
    return r.digest;
  };
  const uint64_t without = digest(std::nullopt);
  EXPECT_EQ(digest(Sites{}), without);
  EXPECT_EQ(digest(Sites{"no.such_site"}), without);
  const uint64_t all = digest(kAllSites);
  EXPECT_NE(all, without);
  EXPECT_EQ(digest(kAllSites), all);
}

}  // namespace
}  // namespace kafka

namespace kafka {
namespace {

// TopicPartition's order is std::string's (the cluster's maps iterate in
// it, so it decides digests): the inline comparison must agree with
// std::string::compare on every pair, bytes above 0x7f and prefixes too.
TEST(TopicPartitionOrderTest, AgreesWithStringCompare) {
  const std::vector<std::string> topics = {"",
                                           "t",
                                           "t0",
                                           "t1",
                                           "u",
                                           "T",
                                           "topic",
                                           "topic-a",
                                           "topic-b",
                                           std::string("\x80", 1),
                                           std::string("\xff"
                                                       "a",
                                                       2),
                                           std::string("a\0b", 3),
                                           "a"};
  for (const std::string& a : topics) {
    for (const std::string& b : topics) {
      const int want = a.compare(b);
      const int got = TopicPartition::CompareTopics(a, b);
      EXPECT_EQ(want < 0, got < 0) << "'" << a << "' vs '" << b << "'";
      EXPECT_EQ(want == 0, got == 0) << "'" << a << "' vs '" << b << "'";
      for (int32_t pa : {0, 1}) {
        for (int32_t pb : {0, 1}) {
          const TopicPartition x{a, PartitionId{pa}}, y{b, PartitionId{pb}};
          const bool less = want < 0 || (want == 0 && pa < pb);
          EXPECT_EQ(x < y, less);
          // The maps' compare-to order (ByPartition) is the same order.
          const absl::weak_ordering order = TopicPartitionOrder{}(x, y);
          EXPECT_EQ(order < 0, less) << x.ToString() << " vs " << y.ToString();
          EXPECT_EQ(order == 0, x == y) << x.ToString() << " vs " << y.ToString();
        }
      }
    }
  }
}

}  // namespace
}  // namespace kafka
