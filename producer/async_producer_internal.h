// The internals of the AsyncProducer model (sarama async_producer.go,
// v1.42.1, and main's partition muting): the state shared by its
// goroutines, and the per-topic, per-partition and per-broker producers.
// Only async_producer.cc, async_producer_main.cc and their tests include
// this. What sarama-main does differently is listed at the top of
// async_producer_main.cc.
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
//                          (sarama-main: also for connection errors, and
//                          for non-idempotent retries: PR #3693)
//   shutdown               asyncProducer.shutdown
//   broker#<id>.responseReceiver, .open (producer/broker.cc)
//   client.safeAsyncClose#<id>, client.backgroundMetadataUpdater,
//   metadataRefresh#<n>    (producer/client.cc; the last is sarama main's
//                          single-flight refresh, metadata_refresh.cc)
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

// sarama main (282cd488) async_producer.go: partitionMuter. A partition is
// muted while a batch of it is on its way to a broker or being retried; a
// brokerProducer flushes only partitions it can mute, so at most one batch
// per partition is in flight (Kafka's RecordAccumulator does the same).
//
// Invariants: counts_ holds only positive counts; after Close, Unmute does
// nothing and the unmute signal stays closed. Go's sync.Mutex and sync.Cond
// are sim::Mutex and sim::Cond, so every call is a synchronization point as
// in Go (282cd488 fixed a race between a mute attempt and an unmute).
class PartitionMuter {
 public:
  explicit PartitionMuter(sim::Scheduler& s);

  // sarama: partitionMuter.tryMute: mutes every partition of `set` unless
  // one is muted already. False for a null or empty set.
  sim::Task<bool> TryMute(std::shared_ptr<ProduceSet> set);
  // sarama: partitionMuter.tryMutePartition.
  sim::Task<bool> TryMutePartition(std::string topic, int32_t partition);
  // sarama: partitionMuter.waitUntilMuted: waits until no partition of
  // `set` is muted, then mutes them all. False if the muter was closed, or
  // for a null or empty set.
  sim::Task<bool> WaitUntilMuted(std::shared_ptr<ProduceSet> set);
  // sarama: partitionMuter.nextUnmuteSignal: the channel the next Unmute
  // (or Close) closes.
  sim::Task<sim::ChanPtr<bool>> NextUnmuteSignal();
  // sarama: partitionMuter.unmute: one count off each partition of `set`,
  // then wakes every waiter, even when `set` has no partition.
  sim::Task<void> Unmute(std::shared_ptr<ProduceSet> set);
  // sarama: partitionMuter.close.
  sim::Task<void> Close();

  // For tests and trace notes; not a synchronization point.
  bool IsMuted(const std::string& topic, int32_t partition) const;

 private:
  bool IsAnyMuted(const ProduceSet& set) const;  // REQUIRES: mu_ held
  void MuteSet(const ProduceSet& set);           // REQUIRES: mu_ held
  sim::ChanPtr<bool> NewSignal();

  sim::Scheduler* sched_;
  sim::Mutex mu_;
  sim::Cond cond_;
  bool closed_ = false;
  absl::btree_map<std::pair<std::string, int32_t>, int> counts_;  // Go: inFlightCounts
  uint64_t signals_made_ = 0;  // (before unmute_signal_: NewSignal counts)
  sim::ChanPtr<bool> unmute_signal_;
};

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

  // Drops the references that make cycles once no goroutine runs
  // (Scheduler::AtTeardown): the brokerProducers, which point back here.
  void ReleaseAtTeardown();

  // Records a step of the request path (producer/history.h) if a history
  // is kept; `at` is now.
  void Step(ProducerStep step) const {
    if (env.history == nullptr) return;
    step.at = env.sched->now();
    env.history->steps.push_back(std::move(step));
  }
  // A step about one message, or about a partition's batch: its partition,
  // epoch, first sequence and ids.
  static ProducerStep MessageStep(StepKind kind, const ProducerMessage& msg);
  static ProducerStep BatchStep(StepKind kind, const std::string& topic, int32_t partition,
                                const PartitionSet& set);

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

  // sarama-main only (null with sarama-1.42.1, which has neither, so that
  // its runs register no extra trace objects):
  std::unique_ptr<PartitionMuter> muter;  // asyncProducer.muter (0fe9629f)
  sim::ChanPtr<bool> done;                // asyncProducer.done (6aaff07e)
  bool closed = false;                    // asyncProducer.closed
  // Whether sarama-main includes PR #3693's handleSuccess change (always,
  // but for tests that show what main at 282cd488 alone does).
  bool pr3693 = true;
  bool IsMain() const { return profile == Profile::kSaramaMain; }
};
using StatePtr = std::shared_ptr<AsyncProducer::State>;

// Shared by both profiles' code (async_producer.cc defines them).
// The errors handleSuccess retries (v1.42.1's list; main adds
// KafkaStorageError, 3aea989f).
bool RetriableInHandleSuccess(kafka::ErrorCode e, Profile profile);
// A syn/fin/shutdown control message.
MessagePtr ControlMessage(const std::string& topic, int32_t partition, int8_t flags, int retries);
// sarama: Producer.Retry.BackoffFunc(retries, max), or Retry.Backoff; zero
// with the test-only defect no_retry_backoff.
sim::Duration RetryBackoff(const Config& conf, int retries);
// Producer.Retry.Backoff itself, where Sarama reads it without BackoffFunc
// (partitionProducer.dispatch after an abandoned broker); zero with the
// same defect.
sim::Duration PlainRetryBackoff(const Config& conf);

// sarama main (282cd488) async_producer.go: asyncProducer.retryBatch, with
// the mute of the batch's partition held (already_muted) or taken here.
sim::Task<void> RetryBatchMain(StatePtr p, std::string topic, int32_t partition,
                               PartitionSetPtr pset, Error retry_err, bool already_muted);
// sarama main async_producer.go: asyncProducer.shutdown.
sim::Task<void> ShutdownMain(StatePtr p);

// sarama: brokerProducer.
class BrokerProducer {
 public:
  BrokerProducer(StatePtr parent, BrokerPtr broker, std::shared_ptr<ProduceSet> buffer);

  static sim::Task<void> Run(BrokerProducerPtr bp);
  static sim::Task<void> RunMain(BrokerProducerPtr bp);  // sarama main's run
  static sim::Task<void> Bridge(BrokerProducerPtr bp);
  static sim::Task<void> Forwarder(BrokerProducerPtr bp);

  sim::ChanPtr<MessagePtr> input;
  sim::ChanPtr<std::shared_ptr<ProduceSet>> output;  // the bridge
  sim::ChanPtr<BrokerProducerResponse> pending;
  sim::ChanPtr<BrokerProducerResponse> responses;
  sim::ChanPtr<bool> abandoned;  // null unless Retry.Max <= 0
  BrokerPtr broker;

  // sarama main: brokerProducer.tryBuildFlushingBatch (public for tests).
  sim::Task<sim::ChanPtr<bool>> TryBuildFlushingBatch();
  // sarama main: brokerProducer.waitForSpace (public for tests).
  sim::Task<Error> WaitForSpaceMain(MessagePtr msg, bool force_rollover);
  // For tests.
  const std::shared_ptr<ProduceSet>& accumulating_batch() const { return buffer_; }
  const std::shared_ptr<ProduceSet>& flushing_batch() const { return flushing_batch_; }

 private:
  friend class BrokerProducerTestPeer;  // async_producer_main_test.cc

  // --- sarama main's versions (async_producer_main.cc).
  sim::Task<void> ShutdownMain();
  sim::Task<void> HandleSuccessMain(std::shared_ptr<ProduceSet> sent,
                                    std::shared_ptr<const kafka::ProduceResponse> response);
  sim::Task<void> HandleErrorMain(std::shared_ptr<ProduceSet> sent, Error err);
  sim::Task<std::shared_ptr<ProduceSet>> TakeUnmutedPartitions();
  // The select shutdown and waitForSpace share in sarama main: send the
  // flushing batch, or handle a response first. True if the batch went.
  sim::Task<bool> SendFlushingOrHandleResponse();

  sim::Task<void> Shutdown();
  Error NeedsRetry(const ProducerMessage& msg) const;
  sim::Task<Error> WaitForSpace(MessagePtr msg, bool force_rollover);
  sim::Task<void> RollOver();
  sim::Task<void> HandleResponse(BrokerProducerResponse response);
  sim::Task<void> HandleSuccess(std::shared_ptr<ProduceSet> sent,
                                std::shared_ptr<const kafka::ProduceResponse> response);
  // The first pass of handleSuccess, the same in both profiles: returns
  // successes and final errors, and gives the topics of the partitions to
  // retry (one entry per partition, as Sarama's retryTopics).
  sim::Task<std::vector<std::string>> ReturnResolved(
      std::shared_ptr<ProduceSet> sent, std::shared_ptr<const kafka::ProduceResponse> response);
  sim::Task<void> HandleError(std::shared_ptr<ProduceSet> sent, Error err);
  sim::Task<void> HandleMessage(MessagePtr msg, sim::ChanPtr<sim::Time>* timer_chan);

  StatePtr parent_;
  // Go v1.42.1: buffer; main: accumulatingBatch.
  std::shared_ptr<ProduceSet> buffer_;
  // sarama main: flushingBatch, the muted batch ready to send (always null
  // with sarama-1.42.1).
  std::shared_ptr<ProduceSet> flushing_batch_;
  std::unique_ptr<sim::Timer> timer_;
  bool timer_fired_ = false;
  Error closing_;
  absl::btree_map<std::pair<std::string, int32_t>, Error> current_retries_;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ASYNC_PRODUCER_INTERNAL_H_
