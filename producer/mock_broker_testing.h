// MockBroker: a scripted Kafka broker for producer tests, the counterpart of
// Sarama's MockBroker (sarama v1.42.1 mockbroker.go) and of the response
// builders its tests use (mockresponses.go, and the AddBroker /
// AddTopicPartition helpers of MetadataResponse and ProduceResponse).
//
// A MockBroker is a network node that accepts connections and serves each in
// its own daemon task, one request at a time, in order. It does not model
// Kafka: each request is answered by whatever the test scripted, either
// - from the queue of canned responses (Returns), consumed strictly in FIFO
//   order whatever the request's type, shared by all connections; a request
//   waits up to kExpectationTimeout (500ms of virtual time) for one to be
//   queued, and is otherwise left unanswered (the client times out), or
// - once a handler is set (SetHandler, SetHandlerByMap), by the handler, and
//   the queue is no longer read. A handler that returns nullptr, or a request
//   whose API has no handler, gets no answer (how acks=0 is served).
// As in Sarama, requests are handled under one broker-wide lock, so
// connections take turns even while one waits for a canned response. The
// response sent is a copy of the scripted one with the request's
// correlation id, so one response object may be returned many times. Every
// request is recorded with what was sent back (History).
//
// Close() takes the node down: every connection is reset and dials are
// refused. A later MockBroker created on the same node (the second
// constructor) is Sarama's NewMockBrokerAddr(t, id, addr): a broker restarted
// at the same address, with an empty queue and no handlers.
//
// Invariants: the queue holds at most kExpectationsMax responses; a closed
// broker accepts no connection, queues nothing and answers nothing more.
#ifndef PRODSIM_PRODUCER_MOCK_BROKER_TESTING_H_
#define PRODSIM_PRODUCER_MOCK_BROKER_TESTING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "sim/core/scheduler.h"
#include "sim/core/time.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"
#include "sim/net/network.h"

namespace sarama::testing {

// A scripted response (any kafka::Message type the producer expects).
using ResponsePtr = std::shared_ptr<const kafka::Message>;

// sarama: requestHandlerFunc, MockResponse.For. Returns the response to send,
// or nullptr to send nothing. Runs inside the broker's serving task, under
// the broker's lock; it must not block.
using Handler = std::function<ResponsePtr(const kafka::Message& request)>;

// sarama: RequestResponse. `response` is what was sent (with the request's
// correlation id), or null when nothing was.
struct RequestResponse {
  std::shared_ptr<const kafka::Message> request;
  ResponsePtr response;
};

// sarama: expectationTimeout.
inline constexpr sim::Duration kExpectationTimeout = sim::Duration::Millis(500);
// sarama: the capacity of MockBroker.expectations.
inline constexpr size_t kExpectationsMax = 512;

namespace internal {
struct MockBrokerState;
}  // namespace internal

class MockBroker {
 public:
  // sarama: NewMockBroker(t, brokerID). Adds a node for the broker and starts
  // serving it.
  MockBroker(sim::Scheduler& sched, net::Network& network, int32_t broker_id);
  // sarama: NewMockBrokerAddr(t, brokerID, addr): serves an existing node,
  // bringing it up if it is down (a broker restarted at the same address).
  // REQUIRES: no other MockBroker serving `node` is still open.
  MockBroker(sim::Scheduler& sched, net::Network& network, int32_t broker_id, net::NodeId node);
  // Does not Close (nor does Go): an open broker keeps serving until the run
  // ends. Its daemon tasks keep what they need alive.
  ~MockBroker();
  MockBroker(const MockBroker&) = delete;
  MockBroker& operator=(const MockBroker&) = delete;

  kafka::BrokerId id() const;  // sarama: BrokerID
  net::NodeId node() const;    // sarama: Addr
  bool closed() const;

  // sarama: Returns. Queues `response` as the answer to a coming request.
  // REQUIRES: not closed; fewer than kExpectationsMax responses queued.
  void Returns(ResponsePtr response);
  // Canned responses queued and not yet consumed.
  size_t pending_expectations() const;

  // sarama: SetHandlerByMap / SetHandlerFuncByMap. From now on each request
  // is answered by the handler of its API; an API without one gets nothing.
  void SetHandlerByMap(absl::btree_map<kafka::ApiKey, Handler> handlers);
  // Sets (or replaces) the handler of one API, keeping the others; like
  // SetHandlerByMap, it ends answering from the queue.
  void SetHandler(kafka::ApiKey api, Handler handler);
  // sarama: setHandler. One handler for every request.
  void SetHandler(Handler handler);

  // sarama: SetLatency. Every request waits `latency` before it is handled.
  void SetLatency(sim::Duration latency);

  // sarama: History. Every request handled so far, in the order handled.
  std::vector<RequestResponse> History() const;

  // sarama: Close. Resets every connection and refuses new ones from now on.
  // Canned responses left unconsumed make it fail (Sarama reports "not all
  // expectations were satisfied" to the test): FAILED_PRECONDITION listing
  // them. REQUIRES: not closed already (Go panics on a second Close).
  absl::Status Close();

 private:
  std::shared_ptr<internal::MockBrokerState> state_;
};

// sarama: MockWrapper. A handler that always returns `response`.
Handler MockWrapper(ResponsePtr response);
// sarama: MockSequence. A handler that returns the responses in turn, then
// the last one forever. REQUIRES: !responses.empty().
Handler MockSequence(std::vector<ResponsePtr> responses);

// Builds a MetadataResponse the way Sarama's tests do with
// `new(MetadataResponse)` and its AddBroker / AddTopicPartition methods.
class MetadataResponseBuilder {
 public:
  MetadataResponseBuilder();
  // sarama: MetadataResponse.AddBroker.
  MetadataResponseBuilder& AddBroker(kafka::BrokerId id, net::NodeId node);
  // sarama: MetadataResponse.ControllerID.
  MetadataResponseBuilder& SetController(kafka::BrokerId id);
  // sarama: MetadataResponse.AddTopic: adds the topic if new, sets its error.
  MetadataResponseBuilder& AddTopic(const std::string& topic, kafka::ErrorCode error);
  // sarama: MetadataResponse.AddTopicPartition: adds the topic (resetting its
  // error to NONE, as Sarama does) and the partition if new, and sets the
  // partition's leader, replicas, ISR and error.
  MetadataResponseBuilder& AddTopicPartition(const std::string& topic, kafka::PartitionId partition,
                                             kafka::BrokerId leader,
                                             std::vector<kafka::BrokerId> replicas = {},
                                             std::vector<kafka::BrokerId> isr = {},
                                             kafka::ErrorCode error = kafka::ErrorCode::NONE);
  std::shared_ptr<kafka::MetadataResponse> Build() const;

 private:
  kafka::MetadataResponse response_;
};

// Builds a ProduceResponse (sarama: `new(ProduceResponse)` and
// ProduceResponse.AddTopicPartition).
class ProduceResponseBuilder {
 public:
  ProduceResponseBuilder();
  // Sets the outcome of one partition. The base offset defaults to 0, the
  // value Sarama's test responses carry.
  ProduceResponseBuilder& AddTopicPartition(const std::string& topic, kafka::PartitionId partition,
                                            kafka::ErrorCode error,
                                            kafka::Offset base_offset = kafka::Offset(0));
  std::shared_ptr<kafka::ProduceResponse> Build() const;

 private:
  kafka::ProduceResponse response_;
};

// sarama: InitProducerIDResponse{ProducerID, ProducerEpoch, Err}.
std::shared_ptr<kafka::InitProducerIdResponse> NewInitProducerIdResponse(
    kafka::ProducerId producer_id, kafka::Epoch epoch,
    kafka::ErrorCode error = kafka::ErrorCode::NONE);

}  // namespace sarama::testing

#endif  // PRODSIM_PRODUCER_MOCK_BROKER_TESTING_H_
