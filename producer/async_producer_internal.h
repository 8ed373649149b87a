// The internals of the AsyncProducer model (sarama async_producer.go,
// v1.42.1): the state shared by its goroutines, and the per-topic,
// per-partition and per-broker producers. Only async_producer.cc and its
// tests include this.
//
// Goroutine map (each a named task):
//   dispatcher             asyncProducer.dispatcher
//   retryHandler           asyncProducer.retryHandler
//   topic/<t>              topicProducer.dispatch
//   partition/<t>/<p>      partitionProducer.dispatch
//   bp#<id>.run            brokerProducer.run
//   bp#<id>.bridge         the bridge goroutine of newBrokerProducer
//   bp#<id>.forwarder      the response forwarder of newBrokerProducer
//   retryBatch/<t>/<p>     go asyncProducer.retryBatch(...)
//   shutdown               asyncProducer.shutdown
//   broker#<id>.responseReceiver, .open (producer/broker.cc)
#ifndef PRODSIM_PRODUCER_ASYNC_PRODUCER_INTERNAL_H_
#define PRODSIM_PRODUCER_ASYNC_PRODUCER_INTERNAL_H_

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "producer/async_producer.h"
#include "producer/breaker.h"
#include "producer/broker.h"
#include "producer/client.h"
#include "producer/partitioner.h"
#include "producer/produce_set.h"
#include "producer/transaction_manager.h"
#include "sim/core/sync.h"

namespace sarama {

class BrokerProducer;
using BrokerProducerPtr = std::shared_ptr<BrokerProducer>;

// sarama: brokerProducerResponse.
struct BrokerProducerResponse {
  std::shared_ptr<ProduceSet> set;
  Error err;
  std::shared_ptr<const kafka::ProduceResponse> res;
};

struct AsyncProducer::State : std::enable_shared_from_this<AsyncProducer::State> {
  State(std::shared_ptr<Client> c, bool owns, Profile p);

  // sarama: asyncProducer.returnError / returnErrors / returnSuccesses /
  // retryMessage / retryMessages.
  sim::Task<void> ReturnError(MessagePtr msg, Error err);
  sim::Task<void> ReturnErrors(std::vector<MessagePtr> batch, Error err);
  sim::Task<void> ReturnSuccesses(std::vector<MessagePtr> batch);
  sim::Task<void> RetryMessage(MessagePtr msg, Error err);
  sim::Task<void> RetryMessages(std::vector<MessagePtr> batch, Error err);
  // sarama: asyncProducer.bumpIdempotentProducerEpoch.
  sim::Task<void> BumpIdempotentProducerEpoch();
  // sarama: getBrokerProducer / unrefBrokerProducer / abandonBrokerConnection.
  sim::Task<BrokerProducerPtr> GetBrokerProducer(BrokerPtr broker);
  sim::Task<void> UnrefBrokerProducer(BrokerPtr broker, BrokerProducerPtr bp);
  sim::Task<void> AbandonBrokerConnection(BrokerPtr broker);
  // sarama: newProduceSet (reads the producer id under the txnmgr lock).
  sim::Task<std::shared_ptr<ProduceSet>> NewProduceSet();
  bool IsTransactional() const { return false; }
  // A trace note; `describe` builds its text only when the trace is
  // recorded, so the hot path pays for the two words alone.
  template <typename Describe>
  void Note(uint64_t a, uint64_t b, Describe&& describe) const {
    env.sched->trace().Note(env.sched->now(), env.sched->current_id(), a, b,
                            std::forward<Describe>(describe));
  }

  sim::Scheduler& sched() const { return *env.sched; }

  Env env;
  std::shared_ptr<Client> client;
  const Config& conf;
  bool owns_client;
  Profile profile;
  sim::ChanPtr<ProducerError> errors;
  sim::ChanPtr<MessagePtr> input, successes, retries;
  sim::WaitGroup in_flight;
  absl::btree_map<uint64_t, BrokerProducerPtr> brokers;  // by Broker serial
  absl::btree_map<BrokerProducer*, int> broker_refs;     // iterated never
  sim::Mutex broker_lock;
  std::shared_ptr<TransactionManager> txnmgr;
};
using StatePtr = std::shared_ptr<AsyncProducer::State>;

// sarama: brokerProducer.
class BrokerProducer {
 public:
  BrokerProducer(StatePtr parent, BrokerPtr broker, std::shared_ptr<ProduceSet> buffer);

  static sim::Task<void> Run(BrokerProducerPtr bp);
  static sim::Task<void> Bridge(BrokerProducerPtr bp);
  static sim::Task<void> Forwarder(BrokerProducerPtr bp);

  sim::ChanPtr<MessagePtr> input;
  sim::ChanPtr<std::shared_ptr<ProduceSet>> output;  // the bridge
  sim::ChanPtr<BrokerProducerResponse> pending;
  sim::ChanPtr<BrokerProducerResponse> responses;
  sim::ChanPtr<bool> abandoned;  // null unless Retry.Max <= 0
  BrokerPtr broker;

 private:
  sim::Task<void> Shutdown();
  Error NeedsRetry(const ProducerMessage& msg) const;
  sim::Task<Error> WaitForSpace(MessagePtr msg, bool force_rollover);
  sim::Task<void> RollOver();
  sim::Task<void> HandleResponse(BrokerProducerResponse response);
  sim::Task<void> HandleSuccess(std::shared_ptr<ProduceSet> sent,
                                std::shared_ptr<const kafka::ProduceResponse> response);
  sim::Task<void> HandleError(std::shared_ptr<ProduceSet> sent, Error err);
  sim::Task<void> HandleMessage(MessagePtr msg, sim::Chan<sim::Time>** timer_chan);

  StatePtr parent_;
  std::shared_ptr<ProduceSet> buffer_;
  std::unique_ptr<sim::Timer> timer_;
  bool timer_fired_ = false;
  Error closing_;
  absl::btree_map<std::pair<std::string, int32_t>, Error> current_retries_;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ASYNC_PRODUCER_INTERNAL_H_
