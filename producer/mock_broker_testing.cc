#include "producer/mock_broker_testing.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "sim/core/chan.h"
#include "sim/core/sync.h"
#include "sim/core/task.h"

namespace sarama::testing {
namespace internal {

// Everything the broker's tasks use. The MockBroker and each of its tasks
// hold it by shared_ptr, so a task that outlives its MockBroker (a daemon
// still parked when the test body returns) never touches freed memory.
struct MockBrokerState {
  MockBrokerState(sim::Scheduler& s, net::Network& n, kafka::BrokerId broker_id,
                  net::NodeId node_id)
      : sched(&s),
        network(&n),
        id(broker_id),
        node(node_id),
        name(absl::StrCat("mockbroker/", broker_id.value)),
        expectations(s, absl::StrCat(name, ".expectations"), kExpectationsMax),
        closing(s, absl::StrCat(name, ".closing"), 0),
        lock(s, absl::StrCat(name, ".lock")) {}

  sim::Scheduler* sched;
  net::Network* network;
  kafka::BrokerId id;
  net::NodeId node;
  std::string name;
  sim::Chan<ResponsePtr> expectations;                  // sarama: MockBroker.expectations
  sim::Chan<bool> closing;                              // closed by Close (sarama: closing)
  sim::Mutex lock;                                      // sarama: MockBroker.lock
  Handler handler;                                      // empty: answer from `expectations`
  absl::btree_map<kafka::ApiKey, Handler> handler_map;  // SetHandler(api, ...)
  sim::Duration latency;
  std::vector<RequestResponse> history;
  bool closed = false;
};

}  // namespace internal

namespace {

using State = internal::MockBrokerState;

template <typename T>
std::shared_ptr<kafka::Message> CopyAs(const kafka::Message& m, kafka::ApiKey api) {
  auto out = std::make_shared<T>(static_cast<const T&>(m));
  out->api = api;
  return out;
}

// A copy of `m` with its api key set from its type. The types are those of
// sim/kafka/protocol.h; a response of any other type is a harness bug.
std::shared_ptr<kafka::Message> CloneMessage(const kafka::Message& m) {
  if (dynamic_cast<const kafka::MetadataResponse*>(&m) != nullptr) {
    return CopyAs<kafka::MetadataResponse>(m, kafka::ApiKey::kMetadata);
  }
  if (dynamic_cast<const kafka::ProduceResponse*>(&m) != nullptr) {
    return CopyAs<kafka::ProduceResponse>(m, kafka::ApiKey::kProduce);
  }
  if (dynamic_cast<const kafka::InitProducerIdResponse*>(&m) != nullptr) {
    return CopyAs<kafka::InitProducerIdResponse>(m, kafka::ApiKey::kInitProducerId);
  }
  if (dynamic_cast<const kafka::ApiVersionsResponse*>(&m) != nullptr) {
    return CopyAs<kafka::ApiVersionsResponse>(m, kafka::ApiKey::kApiVersions);
  }
  PRODSIM_ASSERT_MSG(false, "MockBroker: a scripted response of an unknown message type");
  return nullptr;
}

// What goes on the wire for `request` (sarama: handleRequests writes the
// response with a header carrying the request's correlation id).
ResponsePtr Answer(const kafka::Message& scripted, const kafka::Message& request) {
  std::shared_ptr<kafka::Message> out = CloneMessage(scripted);
  out->correlation_id = request.correlation_id;
  out->is_response = true;
  return out;
}

// sarama: MockBroker.defaultRequestHandler. The next canned response, or
// nothing if none comes within kExpectationTimeout or the broker closes.
sim::Task<ResponsePtr> DefaultRequestHandler(std::shared_ptr<State> st) {
  sim::Timer timeout(*st->sched, absl::StrCat(st->name, ".expectation-timeout"),
                     kExpectationTimeout);
  std::optional<ResponsePtr> res;
  std::optional<sim::Time> fired;
  const int which = co_await sim::Select(*st->sched, sim::RecvCase(&st->expectations, &res),
                                         sim::RecvCase(timeout.C(), &fired));
  if (which != 0 || !res.has_value()) co_return nullptr;
  co_return *res;
}

// sarama: MockBroker.handleRequests. Serves one connection until it is
// reset or a write fails.
sim::Task<void> HandleRequests(std::shared_ptr<State> st, net::Endpoint ep) {
  for (;;) {
    std::optional<net::PayloadPtr> in = co_await ep.Recv();
    if (!in.has_value()) co_return;  // reset: the client or Close
    auto req = std::dynamic_pointer_cast<const kafka::Message>(*in);
    PRODSIM_ASSERT_MSG(req != nullptr, "a non-Kafka payload reached a MockBroker");
    if (st->latency > sim::Duration()) co_await st->sched->Sleep(st->latency);
    co_await st->lock.Lock();
    ResponsePtr scripted;
    if (st->handler) {
      scripted = st->handler(*req);
    } else {
      scripted = co_await DefaultRequestHandler(st);
    }
    ResponsePtr sent = scripted != nullptr ? Answer(*scripted, *req) : nullptr;
    st->history.push_back(RequestResponse{req, sent});
    st->lock.Unlock();
    if (sent == nullptr) continue;  // sarama: "ignored"
    if (!ep.Send(std::move(sent))) co_return;
  }
}

// sarama: MockBroker.serverLoop. Accepts connections until Close.
sim::Task<void> ServerLoop(std::shared_ptr<State> st, sim::Chan<net::Endpoint>* accept) {
  for (;;) {
    if (st->closed) co_return;
    std::optional<net::Endpoint> ep;
    std::optional<bool> stop;
    const int which = co_await sim::Select(*st->sched, sim::RecvCase(accept, &ep),
                                           sim::RecvCase(&st->closing, &stop));
    if (which == 1 || !ep.has_value()) co_return;
    if (st->closed) {
      // Accepted before Close under a preempting policy: Close already
      // reset it; never hand it to a broker that is gone.
      if (!ep->closed()) ep->Close();
      co_return;
    }
    st->sched->Go(absl::StrCat(st->name, ".conn-", ep->id()), HandleRequests(st, *ep),
                  {.daemon = true});
  }
}

std::shared_ptr<State> Start(sim::Scheduler& sched, net::Network& network, int32_t broker_id,
                             net::NodeId node) {
  PRODSIM_ASSERT(broker_id >= 0);
  auto st = std::make_shared<State>(sched, network, kafka::BrokerId(broker_id), node);
  network.SetNodeUp(node, true);
  sim::Chan<net::Endpoint>* accept = network.Listen(node);
  sched.Go(absl::StrCat(st->name, ".accept"), ServerLoop(st, accept), {.daemon = true});
  return st;
}

}  // namespace

MockBroker::MockBroker(sim::Scheduler& sched, net::Network& network, int32_t broker_id)
    : state_(Start(sched, network, broker_id,
                   network.AddNode(absl::StrCat("mockbroker-", broker_id)))) {}

MockBroker::MockBroker(sim::Scheduler& sched, net::Network& network, int32_t broker_id,
                       net::NodeId node)
    : state_(Start(sched, network, broker_id, node)) {}

MockBroker::~MockBroker() = default;

kafka::BrokerId MockBroker::id() const { return state_->id; }
net::NodeId MockBroker::node() const { return state_->node; }
bool MockBroker::closed() const { return state_->closed; }

void MockBroker::Returns(ResponsePtr response) {
  PRODSIM_ASSERT_MSG(!state_->closed, "MockBroker::Returns after Close");
  PRODSIM_ASSERT(response != nullptr);
  const bool queued = state_->expectations.TrySend(std::move(response));
  PRODSIM_ASSERT_MSG(queued, "MockBroker: more than kExpectationsMax canned responses queued");
}

size_t MockBroker::pending_expectations() const { return state_->expectations.size(); }

void MockBroker::SetHandlerByMap(absl::btree_map<kafka::ApiKey, Handler> handlers) {
  state_->handler_map = std::move(handlers);
  internal::MockBrokerState* st = state_.get();
  // The handler lives in the state it points into, so `st` outlives it.
  state_->handler = [st](const kafka::Message& req) -> ResponsePtr {
    auto it = st->handler_map.find(req.api);
    if (it == st->handler_map.end() || !it->second) return nullptr;
    return it->second(req);
  };
}

void MockBroker::SetHandler(kafka::ApiKey api, Handler handler) {
  absl::btree_map<kafka::ApiKey, Handler> handlers = state_->handler_map;
  handlers[api] = std::move(handler);
  SetHandlerByMap(std::move(handlers));
}

void MockBroker::SetHandler(Handler handler) {
  PRODSIM_ASSERT(handler != nullptr);
  state_->handler_map.clear();
  state_->handler = std::move(handler);
}

void MockBroker::SetLatency(sim::Duration latency) {
  PRODSIM_ASSERT(latency >= sim::Duration());
  state_->latency = latency;
}

std::vector<RequestResponse> MockBroker::History() const { return state_->history; }

absl::Status MockBroker::Close() {
  PRODSIM_ASSERT_MSG(!state_->closed, "MockBroker closed twice");
  state_->closed = true;
  std::vector<ResponsePtr> unsatisfied;
  std::optional<ResponsePtr> left;
  while (state_->expectations.TryRecv(&left) && left.has_value()) {
    unsatisfied.push_back(std::move(*left));
  }
  // A handler waiting for a canned response gets none; the accept loop
  // stops; every connection is reset and dials are refused.
  state_->expectations.Close();
  state_->closing.Close();
  state_->network->SetNodeUp(state_->node, false);
  if (unsatisfied.empty()) return absl::OkStatus();
  std::string text =
      absl::StrCat(state_->name, ": not all expectations were satisfied! Still waiting on:");
  for (const ResponsePtr& r : unsatisfied) absl::StrAppend(&text, "\n  ", r->Describe());
  return absl::FailedPreconditionError(text);
}

Handler MockWrapper(ResponsePtr response) {
  PRODSIM_ASSERT(response != nullptr);
  return [response](const kafka::Message&) { return response; };
}

Handler MockSequence(std::vector<ResponsePtr> responses) {
  PRODSIM_ASSERT(!responses.empty());
  auto remaining = std::make_shared<std::vector<ResponsePtr>>(std::move(responses));
  auto next = std::make_shared<size_t>(0);
  return [remaining, next](const kafka::Message&) {
    const ResponsePtr r = (*remaining)[*next];
    if (*next + 1 < remaining->size()) ++*next;
    return r;
  };
}

MetadataResponseBuilder::MetadataResponseBuilder() {
  response_.api = kafka::ApiKey::kMetadata;
  response_.is_response = true;
}

MetadataResponseBuilder& MetadataResponseBuilder::AddBroker(kafka::BrokerId id, net::NodeId node) {
  response_.brokers.push_back(kafka::BrokerMetadata{id, node});
  return *this;
}

MetadataResponseBuilder& MetadataResponseBuilder::SetController(kafka::BrokerId id) {
  response_.controller = id;
  return *this;
}

MetadataResponseBuilder& MetadataResponseBuilder::AddTopic(const std::string& topic,
                                                           kafka::ErrorCode error) {
  for (kafka::TopicMetadata& t : response_.topics) {
    if (t.name == topic) {
      t.error = error;
      return *this;
    }
  }
  kafka::TopicMetadata t;
  t.name = topic;
  t.error = error;
  response_.topics.push_back(std::move(t));
  return *this;
}

MetadataResponseBuilder& MetadataResponseBuilder::AddTopicPartition(
    const std::string& topic, kafka::PartitionId partition, kafka::BrokerId leader,
    std::vector<kafka::BrokerId> replicas, std::vector<kafka::BrokerId> isr,
    kafka::ErrorCode error) {
  PRODSIM_ASSERT(partition.value >= 0);
  AddTopic(topic, kafka::ErrorCode::NONE);
  kafka::TopicMetadata* t = nullptr;
  for (kafka::TopicMetadata& candidate : response_.topics) {
    if (candidate.name == topic) t = &candidate;
  }
  PRODSIM_ASSERT(t != nullptr);
  kafka::PartitionMetadata* p = nullptr;
  for (kafka::PartitionMetadata& candidate : t->partitions) {
    if (candidate.partition == partition) p = &candidate;
  }
  if (p == nullptr) {
    t->partitions.emplace_back();
    p = &t->partitions.back();
    p->partition = partition;
  }
  p->leader = leader;
  p->replicas = std::move(replicas);
  p->isr = std::move(isr);
  p->error = error;
  return *this;
}

std::shared_ptr<kafka::MetadataResponse> MetadataResponseBuilder::Build() const {
  return std::make_shared<kafka::MetadataResponse>(response_);
}

ProduceResponseBuilder::ProduceResponseBuilder() {
  response_.api = kafka::ApiKey::kProduce;
  response_.is_response = true;
}

ProduceResponseBuilder& ProduceResponseBuilder::AddTopicPartition(const std::string& topic,
                                                                  kafka::PartitionId partition,
                                                                  kafka::ErrorCode error,
                                                                  kafka::Offset base_offset) {
  PRODSIM_ASSERT(partition.value >= 0);
  kafka::ProducePartitionResponse& p =
      response_.partitions[kafka::TopicPartition{topic, partition}];
  p.error = error;
  p.base_offset = base_offset;
  return *this;
}

std::shared_ptr<kafka::ProduceResponse> ProduceResponseBuilder::Build() const {
  return std::make_shared<kafka::ProduceResponse>(response_);
}

std::shared_ptr<kafka::InitProducerIdResponse> NewInitProducerIdResponse(
    kafka::ProducerId producer_id, kafka::Epoch epoch, kafka::ErrorCode error) {
  auto r = std::make_shared<kafka::InitProducerIdResponse>();
  r->api = kafka::ApiKey::kInitProducerId;
  r->is_response = true;
  r->producer_id = producer_id;
  r->producer_epoch = epoch;
  r->error = error;
  return r;
}

}  // namespace sarama::testing
