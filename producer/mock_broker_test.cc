// Tests of MockBroker through the network, as a client sees it (with
// kafka::RawClient), and of the response builders.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "producer/mock_broker_testing.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/raw_client.h"

namespace sarama::testing {
namespace {

using kafka::ApiKey;
using kafka::BrokerId;
using kafka::ErrorCode;
using kafka::PartitionId;
using sim::Duration;
using sim::Task;
using sim::Time;

const kafka::TopicPartition kT0{"my_topic", PartitionId(0)};

// A scheduler, a network and one client node; brokers are made by the tests.
struct World {
  World()
      : sched(Options()),
        network(sched, sched.prng().Fork("net")),
        client_node(network.AddNode("client")),
        client(sched, network, client_node) {}
  // Task frames (a test body that did not finish, daemons) point into the
  // network and the producer: destroy them first.
  ~World() { sched.DestroyTasks(); }

  static sim::SchedulerOptions Options() {
    sim::SchedulerOptions o;
    o.time_limit = Time() + Duration::Seconds(600);
    return o;
  }
  // Runs `body` as the one non-daemon task, to completion.
  sim::RunResult Run(Task<void> body) {
    sched.Go("test", std::move(body));
    return sched.Run();
  }

  std::shared_ptr<kafka::MetadataRequest> Metadata() {
    auto r = kafka::NewRequest<kafka::MetadataRequest>(client.NextCorrelationId());
    r->api = ApiKey::kMetadata;
    return r;
  }
  std::shared_ptr<kafka::InitProducerIdRequest> InitProducerId() {
    auto r = kafka::NewRequest<kafka::InitProducerIdRequest>(client.NextCorrelationId());
    r->api = ApiKey::kInitProducerId;
    return r;
  }
  std::shared_ptr<kafka::ProduceRequest> Produce() {
    auto r = kafka::NewRequest<kafka::ProduceRequest>(client.NextCorrelationId());
    r->api = ApiKey::kProduce;
    r->batches[kT0].records.push_back(kafka::Record{"", 10, sched.now(), 1});
    return r;
  }

  sim::Scheduler sched;
  net::Network network;
  net::NodeId client_node;
  kafka::RawClient client;
};

// The message, as T, or null (a failed call or another type).
template <typename T>
const T* As(const absl::StatusOr<net::PayloadPtr>& r) {
  if (!r.ok()) return nullptr;
  return dynamic_cast<const T*>(r->get());
}

Task<void> CannedInOrder(World* w, MockBroker* b) {
  // Queued: metadata, producer id, produce. Asked: produce, metadata,
  // producer id. The queue is FIFO whatever the request, as Sarama's is.
  auto produce = w->Produce();
  absl::StatusOr<net::PayloadPtr> r1 =
      co_await w->client.Call(b->node(), produce, Duration::Seconds(1));
  const auto* m1 = As<kafka::MetadataResponse>(r1);
  EXPECT_NE(m1, nullptr) << r1.status();
  if (m1 != nullptr) {
    EXPECT_EQ(m1->correlation_id, produce->correlation_id);
    EXPECT_TRUE(m1->is_response);
    EXPECT_EQ(m1->api, ApiKey::kMetadata);
  }
  auto md = w->Metadata();
  absl::StatusOr<net::PayloadPtr> r2 = co_await w->client.Call(b->node(), md, Duration::Seconds(1));
  const auto* m2 = As<kafka::InitProducerIdResponse>(r2);
  EXPECT_NE(m2, nullptr) << r2.status();
  if (m2 != nullptr) {
    EXPECT_EQ(m2->correlation_id, md->correlation_id);
    EXPECT_EQ(m2->producer_id, kafka::ProducerId(1000));
    EXPECT_EQ(m2->producer_epoch, kafka::Epoch(1));
  }
  auto init = w->InitProducerId();
  absl::StatusOr<net::PayloadPtr> r3 =
      co_await w->client.Call(b->node(), init, Duration::Seconds(1));
  const auto* m3 = As<kafka::ProduceResponse>(r3);
  EXPECT_NE(m3, nullptr) << r3.status();
  if (m3 != nullptr) {
    EXPECT_EQ(m3->correlation_id, init->correlation_id);
    EXPECT_EQ(m3->partitions.at(kT0).error, ErrorCode::NOT_LEADER_OR_FOLLOWER);
  }
}

// Canned responses are consumed in the order queued whatever the request's
// type, each sent with the correlation id of the request it answers; the
// history records each request with what was sent.
TEST(MockBrokerTest, CannedResponsesComeBackInOrderWithCorrelationIds) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  auto metadata = MetadataResponseBuilder()
                      .AddBroker(b.id(), b.node())
                      .AddTopicPartition("my_topic", PartitionId(0), b.id())
                      .Build();
  b.Returns(metadata);
  b.Returns(NewInitProducerIdResponse(kafka::ProducerId(1000), kafka::Epoch(1)));
  b.Returns(ProduceResponseBuilder()
                .AddTopicPartition("my_topic", PartitionId(0), ErrorCode::NOT_LEADER_OR_FOLLOWER)
                .Build());
  const sim::RunResult r = w.Run(CannedInOrder(&w, &b));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_EQ(b.pending_expectations(), 0u);
  const std::vector<RequestResponse> h = b.History();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].request->api, ApiKey::kProduce);
  EXPECT_EQ(h[1].request->api, ApiKey::kMetadata);
  EXPECT_EQ(h[2].request->api, ApiKey::kInitProducerId);
  for (const RequestResponse& rr : h) {
    ASSERT_NE(rr.response, nullptr);
    EXPECT_EQ(rr.response->correlation_id, rr.request->correlation_id);
  }
  // The scripted object itself is untouched: it can be queued again.
  EXPECT_EQ(metadata->correlation_id, 0);
  EXPECT_TRUE(b.Close().ok());
}

Task<void> LateAndEarly(World* w, MockBroker* b) {
  // Queued 400ms after the request: within the 500ms wait, so it answers.
  w->sched.After(Duration::Millis(400), [b] {
    b->Returns(ProduceResponseBuilder()
                   .AddTopicPartition("my_topic", PartitionId(0), ErrorCode::NONE)
                   .Build());
  });
  const Time start = w->sched.now();
  absl::StatusOr<net::PayloadPtr> r1 =
      co_await w->client.Call(b->node(), w->Produce(), Duration::Seconds(2));
  EXPECT_NE(As<kafka::ProduceResponse>(r1), nullptr) << r1.status();
  EXPECT_GE(w->sched.now() - start, Duration::Millis(400));
  EXPECT_LT(w->sched.now() - start, Duration::Millis(500));
  // Queued 600ms after: the request has been given up on by then.
  w->sched.After(Duration::Millis(600), [b] {
    b->Returns(ProduceResponseBuilder()
                   .AddTopicPartition("my_topic", PartitionId(0), ErrorCode::NONE)
                   .Build());
  });
  absl::StatusOr<net::PayloadPtr> r2 =
      co_await w->client.Call(b->node(), w->Produce(), Duration::Seconds(2));
  EXPECT_TRUE(absl::IsDeadlineExceeded(r2.status())) << r2.status();
}

// A request waits up to 500ms of virtual time for a canned response and is
// otherwise never answered; a response nobody consumed makes Close fail.
TEST(MockBrokerTest, RequestWaitsForACannedResponseUpToTheExpectationTimeout) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  const sim::RunResult r = w.Run(LateAndEarly(&w, &b));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  const std::vector<RequestResponse> h = b.History();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_NE(h[0].response, nullptr);
  EXPECT_EQ(h[1].response, nullptr);
  EXPECT_EQ(b.pending_expectations(), 1u);
  const absl::Status closed = b.Close();
  EXPECT_TRUE(absl::IsFailedPrecondition(closed)) << closed;
  EXPECT_NE(std::string(closed.message()).find("not all expectations were satisfied"),
            std::string::npos)
      << closed;
}

Task<void> ByApi(World* w, MockBroker* b) {
  absl::StatusOr<net::PayloadPtr> r1 =
      co_await w->client.Call(b->node(), w->Metadata(), Duration::Seconds(1));
  const auto* md = As<kafka::MetadataResponse>(r1);
  EXPECT_NE(md, nullptr) << r1.status();
  if (md != nullptr) {
    EXPECT_EQ(md->controller, BrokerId(7));
  }
  // Produce: the handler returns nothing (acks=0).
  absl::StatusOr<net::PayloadPtr> r2 =
      co_await w->client.Call(b->node(), w->Produce(), Duration::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(r2.status())) << r2.status();
  // InitProducerId: no handler at all; the canned response is not used.
  absl::StatusOr<net::PayloadPtr> r3 =
      co_await w->client.Call(b->node(), w->InitProducerId(), Duration::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(r3.status())) << r3.status();
}

// Handlers answer by API; an API without one, or a handler returning
// nullptr, gets no answer; once handlers are set the queue is not read.
TEST(MockBrokerTest, HandlersAnswerByApi) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  b.Returns(NewInitProducerIdResponse(kafka::ProducerId(1), kafka::Epoch(0)));
  int produce_calls = 0;
  b.SetHandler(ApiKey::kMetadata, [&b](const kafka::Message& req) -> ResponsePtr {
    EXPECT_EQ(req.api, ApiKey::kMetadata);
    return MetadataResponseBuilder().AddBroker(b.id(), b.node()).SetController(BrokerId(7)).Build();
  });
  b.SetHandler(ApiKey::kProduce, [&produce_calls](const kafka::Message&) -> ResponsePtr {
    ++produce_calls;
    return nullptr;
  });
  const sim::RunResult r = w.Run(ByApi(&w, &b));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_EQ(produce_calls, 1);
  const std::vector<RequestResponse> h = b.History();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_NE(h[0].response, nullptr);
  EXPECT_EQ(h[1].response, nullptr);
  EXPECT_EQ(h[2].response, nullptr);
  EXPECT_EQ(b.pending_expectations(), 1u);
  EXPECT_FALSE(b.Close().ok());
}

Task<void> ThreeCalls(World* w, MockBroker* b, std::vector<int16_t>* epochs) {
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<net::PayloadPtr> r =
        co_await w->client.Call(b->node(), w->InitProducerId(), Duration::Seconds(1));
    const auto* pid = As<kafka::InitProducerIdResponse>(r);
    EXPECT_NE(pid, nullptr) << r.status();
    if (pid != nullptr) epochs->push_back(pid->producer_epoch.value);
  }
}

// A catch-all handler (Sarama's setHandler) built from MockSequence answers
// with each response in turn, then repeats the last one.
TEST(MockBrokerTest, CatchAllHandlerWithMockSequence) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  std::vector<ResponsePtr> seq;
  seq.push_back(NewInitProducerIdResponse(kafka::ProducerId(1), kafka::Epoch(0)));
  seq.push_back(NewInitProducerIdResponse(kafka::ProducerId(1), kafka::Epoch(1)));
  b.SetHandler(MockSequence(seq));
  std::vector<int16_t> epochs;
  const sim::RunResult r = w.Run(ThreeCalls(&w, &b, &epochs));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_EQ(epochs, (std::vector<int16_t>{0, 1, 1}));
  EXPECT_TRUE(b.Close().ok());
}

Task<void> CloseWhileWaiting(World* w, MockBroker* b) {
  // The request waits for a canned response; the broker closes meanwhile.
  w->sched.After(Duration::Millis(100), [b] { EXPECT_TRUE(b->Close().ok()); });
  const Time start = w->sched.now();
  absl::StatusOr<net::PayloadPtr> r1 =
      co_await w->client.Call(b->node(), w->Metadata(), Duration::Seconds(5));
  EXPECT_TRUE(absl::IsUnavailable(r1.status())) << r1.status();
  EXPECT_LT(w->sched.now() - start, Duration::Millis(200));
  EXPECT_FALSE(w->network.NodeUp(b->node()));
  // A new dial is refused.
  absl::StatusOr<net::PayloadPtr> r2 =
      co_await w->client.Call(b->node(), w->Metadata(), Duration::Seconds(5));
  EXPECT_TRUE(absl::IsUnavailable(r2.status())) << r2.status();
  EXPECT_NE(std::string(r2.status().message()).find("refused"), std::string::npos) << r2.status();
}

// Close resets the open connections (an in-flight call fails at once) and
// refuses new dials.
TEST(MockBrokerTest, CloseResetsConnectionsAndRefusesDials) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  const sim::RunResult r = w.Run(CloseWhileWaiting(&w, &b));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_TRUE(b.closed());
  EXPECT_EQ(w.network.open_connections(), 0u);
}

Task<void> Restart(World* w, std::unique_ptr<MockBroker>* b) {
  const net::NodeId node = (*b)->node();
  (*b)->Returns(MetadataResponseBuilder().SetController(BrokerId(1)).Build());
  absl::StatusOr<net::PayloadPtr> r1 =
      co_await w->client.Call(node, w->Metadata(), Duration::Seconds(1));
  const auto* m1 = As<kafka::MetadataResponse>(r1);
  EXPECT_NE(m1, nullptr) << r1.status();
  if (m1 != nullptr) {
    EXPECT_EQ(m1->controller, BrokerId(1));
  }
  EXPECT_TRUE((*b)->Close().ok());
  // sarama: NewMockBrokerAddr(t, 2, leaderAddr).
  *b = std::make_unique<MockBroker>(w->sched, w->network, 2, node);
  EXPECT_EQ((*b)->node(), node);
  EXPECT_TRUE(w->network.NodeUp(node));
  (*b)->Returns(MetadataResponseBuilder().SetController(BrokerId(2)).Build());
  // The client's old connection was reset; it dials again and reaches the
  // new broker.
  absl::StatusOr<net::PayloadPtr> r2 =
      co_await w->client.Call(node, w->Metadata(), Duration::Seconds(1));
  const auto* m2 = As<kafka::MetadataResponse>(r2);
  EXPECT_NE(m2, nullptr) << r2.status();
  if (m2 != nullptr) {
    EXPECT_EQ(m2->controller, BrokerId(2));
  }
}

// A broker closed and created again on the same node serves new
// connections with its own script and history.
TEST(MockBrokerTest, RestartOnTheSameNode) {
  World w;
  auto b = std::make_unique<MockBroker>(w.sched, w.network, 1);
  const sim::RunResult r = w.Run(Restart(&w, &b));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_EQ(b->id(), BrokerId(2));
  EXPECT_EQ(b->History().size(), 1u);
  EXPECT_TRUE(b->Close().ok());
}

Task<void> Delayed(World* w, MockBroker* b, Duration* took) {
  const Time start = w->sched.now();
  absl::StatusOr<net::PayloadPtr> r =
      co_await w->client.Call(b->node(), w->Metadata(), Duration::Seconds(1));
  EXPECT_TRUE(r.ok()) << r.status();
  *took = w->sched.now() - start;
}

// SetLatency delays every answer by the latency (plus the network's).
TEST(MockBrokerTest, LatencyDelaysEachAnswer) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  b.SetLatency(Duration::Millis(100));
  b.Returns(MetadataResponseBuilder().Build());
  Duration took;
  const sim::RunResult r = w.Run(Delayed(&w, &b, &took));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_GE(took, Duration::Millis(100));
  EXPECT_LT(took, Duration::Millis(110));
  EXPECT_TRUE(b.Close().ok());
}

Task<void> CallInto(World* w, kafka::RawClient* client, net::NodeId to, Duration delay,
                    std::optional<int16_t>* epoch) {
  co_await w->sched.Sleep(delay);
  auto req = kafka::NewRequest<kafka::InitProducerIdRequest>(client->NextCorrelationId());
  req->api = ApiKey::kInitProducerId;
  absl::StatusOr<net::PayloadPtr> r = co_await client->Call(to, req, Duration::Seconds(2));
  const auto* pid = As<kafka::InitProducerIdResponse>(r);
  if (pid != nullptr) *epoch = pid->producer_epoch.value;
}

Task<void> TwoConnections(World* w, MockBroker* b, std::optional<int16_t>* first,
                          std::optional<int16_t>* second) {
  kafka::RawClient other(w->sched, w->network, w->network.AddNode("client-2"));
  // The second connection's request arrives while the first holds the
  // broker's lock waiting for a canned response.
  w->sched.Go("first", CallInto(w, &w->client, b->node(), Duration(), first));
  w->sched.Go("second", CallInto(w, &other, b->node(), Duration::Millis(1), second));
  w->sched.After(Duration::Millis(200), [b] {
    b->Returns(NewInitProducerIdResponse(kafka::ProducerId(1), kafka::Epoch(1)));
  });
  // 600ms: past the second request's own 500ms wait had it started on
  // arrival, but within it as it starts when the first one is answered.
  w->sched.After(Duration::Millis(600), [b] {
    b->Returns(NewInitProducerIdResponse(kafka::ProducerId(1), kafka::Epoch(2)));
  });
  // Outlive both calls (each gives up after 2s at the latest): `other`
  // lives in this frame.
  co_await w->sched.Sleep(Duration::Seconds(3));
}

// Requests on different connections share one queue and take turns under
// the broker's lock, as in Sarama: the first in gets the first response, and
// the second's 500ms wait starts only when it gets the lock.
TEST(MockBrokerTest, ConnectionsShareTheQueueAndTakeTurns) {
  World w;
  MockBroker b(w.sched, w.network, 1);
  std::optional<int16_t> first, second;
  const sim::RunResult r = w.Run(TwoConnections(&w, &b, &first, &second));
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_EQ(first, std::optional<int16_t>(1));
  EXPECT_EQ(second, std::optional<int16_t>(2));
  EXPECT_TRUE(b.Close().ok());
}

// The metadata builder finds or adds topics and partitions as Sarama's
// MetadataResponse.AddTopicPartition does.
TEST(MockBrokerTest, MetadataBuilderUpdatesInPlace) {
  auto md =
      MetadataResponseBuilder()
          .AddBroker(BrokerId(2), 5)
          .AddBroker(BrokerId(3), 6)
          .SetController(BrokerId(2))
          .AddTopic("my_topic", ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
          .AddTopicPartition("my_topic", PartitionId(0), BrokerId(2))
          .AddTopicPartition("my_topic", PartitionId(1), BrokerId(3))
          .AddTopicPartition("my_topic", PartitionId(0), BrokerId(3),
                             std::vector<BrokerId>{BrokerId(3), BrokerId(2)},
                             std::vector<BrokerId>{BrokerId(3)}, ErrorCode::LEADER_NOT_AVAILABLE)
          .Build();
  EXPECT_EQ(md->api, ApiKey::kMetadata);
  EXPECT_TRUE(md->is_response);
  ASSERT_EQ(md->brokers.size(), 2u);
  EXPECT_EQ(md->brokers[1].id, BrokerId(3));
  EXPECT_EQ(md->brokers[1].node, 6u);
  EXPECT_EQ(md->controller, BrokerId(2));
  ASSERT_EQ(md->topics.size(), 1u);
  EXPECT_EQ(md->topics[0].error, ErrorCode::NONE);  // reset by AddTopicPartition
  ASSERT_EQ(md->topics[0].partitions.size(), 2u);
  const kafka::PartitionMetadata& p0 = md->topics[0].partitions[0];
  EXPECT_EQ(p0.partition, PartitionId(0));
  EXPECT_EQ(p0.leader, BrokerId(3));
  EXPECT_EQ(p0.replicas.size(), 2u);
  EXPECT_EQ(p0.isr.size(), 1u);
  EXPECT_EQ(p0.error, ErrorCode::LEADER_NOT_AVAILABLE);
  EXPECT_EQ(md->topics[0].partitions[1].leader, BrokerId(3));
}

// The produce builder keys outcomes by partition; the offset defaults to 0.
TEST(MockBrokerTest, ProduceBuilderSetsPartitionOutcomes) {
  auto pr = ProduceResponseBuilder()
                .AddTopicPartition("my_topic", PartitionId(0), ErrorCode::NONE)
                .AddTopicPartition("my_topic", PartitionId(1), ErrorCode::NOT_LEADER_OR_FOLLOWER,
                                   kafka::Offset(-1))
                .Build();
  EXPECT_EQ(pr->api, ApiKey::kProduce);
  ASSERT_EQ(pr->partitions.size(), 2u);
  EXPECT_EQ(pr->partitions.at(kT0).base_offset, kafka::Offset(0));
  EXPECT_EQ(pr->partitions.at(kafka::TopicPartition{"my_topic", PartitionId(1)}).error,
            ErrorCode::NOT_LEADER_OR_FOLLOWER);
  auto pid = NewInitProducerIdResponse(kafka::ProducerId(1001), kafka::Epoch(0));
  EXPECT_EQ(pid->api, ApiKey::kInitProducerId);
  EXPECT_EQ(pid->producer_id, kafka::ProducerId(1001));
}

}  // namespace
}  // namespace sarama::testing
