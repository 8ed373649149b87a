#include "producer/async_producer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "producer/async_producer_internal.h"

namespace sarama {

using kafka::ErrorCode;
using sim::Duration;

std::string_view ProfileName(Profile p) {
  switch (p) {
    case Profile::kSarama_1_42_1: return "sarama-1.42.1";
    case Profile::kSaramaMain: return "sarama-main";
  }
  return "?";
}

absl::StatusOr<Profile> ParseProfile(std::string_view name) {
  if (name == "sarama-1.42.1") return Profile::kSarama_1_42_1;
  if (name == "sarama-main") return Profile::kSaramaMain;
  return absl::InvalidArgumentError(absl::StrCat("unknown producer profile '", std::string(name),
                                                 "' (expected sarama-1.42.1 or sarama-main)"));
}

// The errors handleSuccess retries (sarama v1.42.1 async_producer.go;
// main adds KafkaStorageError, 3aea989f).
bool RetriableInHandleSuccess(ErrorCode e, Profile profile) {
  switch (e) {
    case ErrorCode::KAFKA_STORAGE_ERROR: return profile == Profile::kSaramaMain;
    case ErrorCode::CORRUPT_MESSAGE:  // ErrInvalidMessage
    case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode::LEADER_NOT_AVAILABLE:
    case ErrorCode::NOT_LEADER_OR_FOLLOWER:
    case ErrorCode::REQUEST_TIMED_OUT:
    case ErrorCode::NOT_ENOUGH_REPLICAS:
    case ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND: return true;
    default: return false;
  }
}

MessagePtr ControlMessage(const std::string& topic, int32_t partition, int8_t flags, int retries) {
  auto m = std::make_shared<ProducerMessage>();
  m->topic = topic;
  m->partition = partition;
  m->flags = flags;
  m->retries = retries;
  return m;
}

Duration PlainRetryBackoff(const Config& conf) {
  if (conf.test_defects.no_retry_backoff) return Duration();  // the test-only defect, not Sarama
  return conf.producer.retry.backoff;
}

Duration RetryBackoff(const Config& conf, int retries) {
  if (conf.producer.retry.backoff_func && !conf.test_defects.no_retry_backoff) {
    return conf.producer.retry.backoff_func(retries, conf.producer.retry.max);
  }
  return PlainRetryBackoff(conf);
}

namespace {
using PartitionEntry = ProduceSet::Entry;
}  // namespace

AsyncProducer::State::State(std::shared_ptr<Client> c, bool owns, Profile p)
    : env(c->env()),
      client(std::move(c)),
      conf(client->config()),
      owns_client(owns),
      profile(p),
      errors(sim::MakeChan<ProducerError>(*env.sched, "errors")),
      input(sim::MakeChan<MessagePtr>(*env.sched, "input")),
      successes(sim::MakeChan<MessagePtr>(*env.sched, "successes")),
      retries(sim::MakeChan<MessagePtr>(*env.sched, "retries")),
      in_flight(*env.sched, "inFlight"),
      broker_lock(*env.sched, "brokerLock") {
  if (IsMain()) {
    muter = std::make_unique<PartitionMuter>(*env.sched);
    done = sim::MakeChan<bool>(*env.sched, "done");
  }
}

void AsyncProducer::State::ReleaseAtTeardown() {
  brokers.clear();
  broker_refs.clear();
}

// ---------------------------------------------------------------------------
// Outcomes.

ProducerStep AsyncProducer::State::MessageStep(StepKind kind, const ProducerMessage& msg) {
  ProducerStep step;
  step.kind = kind;
  step.topic = msg.topic;
  step.partition = msg.partition;
  step.epoch = msg.has_sequence ? msg.producer_epoch : int16_t{-1};
  step.first_seq = msg.has_sequence ? msg.sequence_number : -1;
  step.ids.push_back(msg.id);
  step.retries = msg.retries;
  return step;
}

ProducerStep AsyncProducer::State::BatchStep(StepKind kind, const std::string& topic,
                                             int32_t partition, const PartitionSet& set) {
  ProducerStep step;
  step.kind = kind;
  step.topic = topic;
  step.partition = partition;
  const kafka::RecordBatch& b = set.records_to_send;
  step.epoch = b.producer_id.IsNone() ? int16_t{-1} : b.producer_epoch.value;
  step.first_seq = b.producer_id.IsNone() ? -1 : b.base_sequence.value;
  bool older = false;
  for (const MessagePtr& m : set.msgs) {
    step.ids.push_back(m->id);
    older = older || (m->has_sequence && step.epoch >= 0 && m->producer_epoch < step.epoch);
  }
  if (older) {
    for (const MessagePtr& m : set.msgs) step.numbered_under.push_back(m->producer_epoch);
  }
  if (!set.msgs.empty()) step.retries = set.msgs.front()->retries;
  return step;
}

// sarama v1.42.1 async_producer.go: asyncProducer.returnError
sim::Task<void> AsyncProducer::State::ReturnError(MessagePtr msg, Error err) {
  PRODSIM_ASSERT(msg != nullptr);
  PRODSIM_ASSERT_MSG(err, "a message returned as an error needs one");
  // A message that had a sequence number will never be seen by the broker
  // with it, so the sequence can never continue: bump the epoch.
  if (!IsTransactional() && msg->has_sequence) {
    co_await BumpIdempotentProducerEpoch();
    ProducerStep step = MessageStep(StepKind::kEpochBump, *msg);
    step.epoch = txnmgr->producer_epoch();
    step.error = err.ToString();
    Step(std::move(step));
  }
  if (env.history != nullptr) {
    env.history->errors.push_back(
        ErrorEvent{env.sched->now(), msg->id, msg->topic, msg->partition, err, msg->retries});
  }
  Note(0x65727220 /*err */, msg->id, [&] {
    return absl::StrCat("producer error id=", msg->id, " ", msg->topic, "/", msg->partition, ": ",
                        err.ToString());
  });
  msg->Clear();
  if (conf.producer.return_.errors) {
    ProducerError perr{msg, err};
    co_await errors->Send(std::move(perr));
  }
  in_flight.Done();
}

// sarama v1.42.1 async_producer.go: asyncProducer.returnErrors
sim::Task<void> AsyncProducer::State::ReturnErrors(std::vector<MessagePtr> batch, Error err) {
  for (MessagePtr& m : batch) co_await ReturnError(std::move(m), err);
}

// sarama v1.42.1 async_producer.go: asyncProducer.returnSuccesses
sim::Task<void> AsyncProducer::State::ReturnSuccesses(std::vector<MessagePtr> batch) {
  for (MessagePtr& msg : batch) {
    if (env.history != nullptr) {
      env.history->acks.push_back(AckEvent{env.sched->now(), msg->id, msg->topic, msg->partition,
                                           msg->offset, msg->producer_epoch, msg->sequence_number,
                                           msg->has_sequence, msg->retries});
    }
    if (conf.producer.return_.successes) {
      msg->Clear();
      co_await successes->Send(msg);
    }
    in_flight.Done();
  }
}

// sarama v1.42.1 async_producer.go: asyncProducer.retryMessage
sim::Task<void> AsyncProducer::State::RetryMessage(MessagePtr msg, Error err) {
  PRODSIM_ASSERT(msg != nullptr);
  PRODSIM_ASSERT(msg->retries >= 0);
  if (msg->retries >= conf.producer.retry.max) {
    co_await ReturnError(std::move(msg), err);
    co_return;
  }
  ++msg->retries;
  PRODSIM_ASSERT_MSG(msg->retries <= conf.producer.retry.max, "a retry beyond Retry.Max");
  if (msg->flags == 0) {
    ProducerStep step = MessageStep(StepKind::kRetryMessage, *msg);
    step.error = err.ToString();
    Step(std::move(step));
  }
  co_await retries->Send(std::move(msg));
}

// sarama v1.42.1 async_producer.go: asyncProducer.retryMessages
sim::Task<void> AsyncProducer::State::RetryMessages(std::vector<MessagePtr> batch, Error err) {
  for (MessagePtr& m : batch) co_await RetryMessage(std::move(m), err);
}

// sarama v1.42.1 async_producer.go: asyncProducer.bumpIdempotentProducerEpoch
sim::Task<void> AsyncProducer::State::BumpIdempotentProducerEpoch() {
  auto [pid, epoch] = co_await txnmgr->GetProducerID();
  if (epoch == INT16_MAX) {
    auto [fresh, err] = co_await TransactionManager::New(client);
    if (!err) txnmgr = std::move(fresh);
    // (Init-captures: clang 14 cannot capture a structured binding.)
    Note(0x65706f63 /*epoc*/, 1, [e = err] {
      return absl::StrCat("txnmgr: epoch exhausted, new producer id: ", e ? e.ToString() : "ok");
    });
    co_return;
  }
  co_await txnmgr->BumpEpoch();
  Note(0x65706f63 /*epoc*/, static_cast<uint64_t>(epoch + 1),
       [e = epoch] { return absl::StrCat("txnmgr: epoch bumped to ", e + 1); });
}

sim::Task<std::shared_ptr<ProduceSet>> AsyncProducer::State::NewProduceSet() {
  auto [pid, epoch] = co_await txnmgr->GetProducerID();
  co_return std::make_shared<ProduceSet>(&conf, pid, epoch);
}

// ---------------------------------------------------------------------------
// Broker producers: lookup and reference counting.

// sarama v1.42.1 async_producer.go: asyncProducer.getBrokerProducer
sim::Task<BrokerProducerPtr> AsyncProducer::State::GetBrokerProducer(BrokerPtr broker) {
  co_await broker_lock.Lock();
  BrokerProducerPtr bp = brokers[broker->serial()];
  if (bp == nullptr) {
    // sarama: newBrokerProducer. (newProduceSet reads the producer id under
    // the txnmgr lock, while brokerLock is held, as in Go.)
    std::shared_ptr<ProduceSet> buffer = co_await NewProduceSet();
    bp = std::make_shared<BrokerProducer>(shared_from_this(), broker, std::move(buffer));
    const std::string name = absl::StrCat("bp#", broker->ID());
    sched().Go(name + ".run", BrokerProducer::Run(bp));
    sched().Go(name + ".bridge", BrokerProducer::Bridge(bp));
    sched().Go(name + ".forwarder", BrokerProducer::Forwarder(bp));
    brokers[broker->serial()] = bp;
    broker_refs[bp.get()] = 0;
  }
  broker_refs[bp.get()]++;
  // The brokerProducer found under a broker's serial is that broker's.
  PRODSIM_ASSERT(bp->broker->serial() == broker->serial());
  PRODSIM_ASSERT(broker_refs[bp.get()] >= 1);
  broker_lock.Unlock();
  co_return bp;
}

// sarama v1.42.1 async_producer.go: asyncProducer.unrefBrokerProducer
sim::Task<void> AsyncProducer::State::UnrefBrokerProducer(BrokerPtr broker, BrokerProducerPtr bp) {
  co_await broker_lock.Lock();
  auto it = broker_refs.find(bp.get());
  PRODSIM_ASSERT(it != broker_refs.end());
  PRODSIM_ASSERT_MSG(it->second > 0, "a brokerProducer unreferenced more often than referenced");
  if (--it->second == 0) {
    bp->input->Close();
    broker_refs.erase(it);
    auto b = brokers.find(broker->serial());
    if (b != brokers.end() && b->second == bp) brokers.erase(b);
  }
  broker_lock.Unlock();
}

// sarama v1.42.1 async_producer.go: asyncProducer.abandonBrokerConnection
sim::Task<void> AsyncProducer::State::AbandonBrokerConnection(BrokerPtr broker) {
  co_await broker_lock.Lock();
  auto b = brokers.find(broker->serial());
  if (b != brokers.end()) {
    PRODSIM_ASSERT(b->second != nullptr);
    PRODSIM_ASSERT(b->second->broker->serial() == broker->serial());
    if (b->second->abandoned != nullptr) b->second->abandoned->Close();
    brokers.erase(b);
  }
  broker_lock.Unlock();
}

// ---------------------------------------------------------------------------
// The singleton goroutines.

namespace {

// sarama v1.42.1 async_producer.go: topicProducer
struct TopicProducer {
  StatePtr parent;
  std::string topic;
  sim::ChanPtr<MessagePtr> input;
  std::unique_ptr<Breaker> breaker;
  absl::btree_map<int32_t, sim::ChanPtr<MessagePtr>> handlers;
  std::unique_ptr<Partitioner> partitioner;
};

// sarama v1.42.1 async_producer.go: partitionRetryState
struct PartitionRetryState {
  std::vector<MessagePtr> buf;
  bool expect_chaser = false;
};

// sarama v1.42.1 async_producer.go: partitionProducer
struct PartitionProducer {
  StatePtr parent;
  std::string topic;
  int32_t partition;
  sim::ChanPtr<MessagePtr> input;
  BrokerPtr leader;
  std::unique_ptr<Breaker> breaker;
  BrokerProducerPtr broker_producer;
  int high_watermark = 0;
  // Go allocates Retry.Max+1 levels up front; they are made as needed here
  // (Retry.Max is 100000 in the report's configuration).
  std::vector<PartitionRetryState> retry_state;

  PartitionRetryState& Level(int level) {
    PRODSIM_ASSERT(level >= 0);
    PRODSIM_ASSERT(level <= parent->conf.producer.retry.max);
    if (static_cast<size_t>(level) >= retry_state.size()) {
      retry_state.resize(static_cast<size_t>(level) + 1);
    }
    return retry_state[static_cast<size_t>(level)];
  }
};
using PartitionProducerPtr = std::shared_ptr<PartitionProducer>;

sim::Task<void> CloseInRandomOrder(sim::Scheduler& s, std::vector<sim::ChanPtr<MessagePtr>> chans) {
  // Go closes handlers while ranging over a map: a random order.
  for (size_t i = chans.size(); i > 1; --i) {
    std::swap(chans[i - 1], chans[s.program_prng().Below(i)]);
  }
  for (auto& c : chans) c->Close();
  co_return;
}

// sarama v1.42.1 async_producer.go: partitionProducer.backoff
sim::Task<void> Backoff(PartitionProducerPtr pp, int retries) {
  const Duration backoff = RetryBackoff(pp->parent->conf, retries);
  if (backoff.nanos() > 0) co_await pp->parent->sched().Sleep(backoff);
}

// The work partitionProducer.updateLeader runs under its breaker.
sim::Task<Error> UpdateLeaderWork(PartitionProducerPtr p) {
  if (Error err =
          co_await p->parent->client->RefreshMetadata(std::vector<std::string>(1, p->topic))) {
    co_return err;
  }
  auto [leader, err] = co_await p->parent->client->Leader(p->topic, p->partition);
  if (err) co_return err;
  p->leader = leader;
  p->broker_producer = co_await p->parent->GetBrokerProducer(leader);
  p->parent->in_flight.Add(1);  // a syn message: track it so we don't shut down
  co_await p->broker_producer->input->Send(ControlMessage(p->topic, p->partition, kSyn, 0));
  co_return kNoError;
}

// sarama v1.42.1 async_producer.go: partitionProducer.updateLeader
sim::Task<Error> UpdateLeader(PartitionProducerPtr pp) {
  // A named function, not a capturing lambda inside co_await (g++ 12
  // destroys such captures twice; see sim/core/task.h).
  co_return co_await pp->breaker->Run(&UpdateLeaderWork, pp);
}

// sarama v1.42.1 async_producer.go: partitionProducer.updateLeaderIfBrokerProducerIsNil
sim::Task<Error> UpdateLeaderIfBrokerProducerIsNil(PartitionProducerPtr pp, MessagePtr msg) {
  if (pp->broker_producer != nullptr) co_return kNoError;
  Error err = co_await UpdateLeader(pp);
  if (err) {
    co_await pp->parent->ReturnError(msg, err);
    co_await Backoff(pp, msg->retries);
  }
  co_return err;
}

// sarama v1.42.1 async_producer.go: partitionProducer.newHighWatermark
sim::Task<void> NewHighWatermark(PartitionProducerPtr pp, int hwm) {
  PRODSIM_ASSERT_MSG(hwm > pp->high_watermark, "the high watermark only rises here");
  PRODSIM_ASSERT(pp->broker_producer != nullptr);
  pp->high_watermark = hwm;
  // A fin tells us when everything in between has come back, so that the
  // backlog can be flushed without reordering.
  pp->Level(hwm).expect_chaser = true;
  pp->parent->in_flight.Add(1);
  co_await pp->broker_producer->input->Send(
      ControlMessage(pp->topic, pp->partition, kFin, hwm - 1));
  // A new high watermark means the broker selection is out of date.
  co_await pp->parent->UnrefBrokerProducer(pp->leader, pp->broker_producer);
  pp->broker_producer = nullptr;
}

// sarama main (35ecd488) async_producer.go: the sequence assignment that
// partitionProducer.flushRetryBuffers gained (#3362).
sim::Task<void> AssignSequenceIfMissing(StatePtr p, MessagePtr msg) {
  if (!p->conf.producer.idempotent || msg->retries != 0 || msg->flags != 0 || msg->has_sequence) {
    co_return;
  }
  PRODSIM_ASSERT(p->IsMain());
  auto [seq, epoch] = co_await p->txnmgr->GetAndIncrementSequenceNumber(msg->topic, msg->partition);
  msg->sequence_number = seq;
  msg->producer_epoch = epoch;
  msg->has_sequence = true;
  p->Note(0x73657120 /*seq */, msg->id, [&msg, s = seq, e = epoch] {
    return absl::StrCat("seq id=", msg->id, " ", msg->topic, "/", msg->partition, " seq=", s,
                        " epoch=", e, " (flushRetryBuffers)");
  });
}

// sarama v1.42.1 async_producer.go: partitionProducer.flushRetryBuffers
sim::Task<void> FlushRetryBuffers(PartitionProducerPtr pp) {
  PRODSIM_ASSERT_MSG(pp->high_watermark > 0, "no retry level to go down from");
  for (;;) {
    --pp->high_watermark;
    bool send = true;
    if (pp->broker_producer == nullptr) {
      if (Error err = co_await UpdateLeader(pp)) {
        co_await pp->parent->ReturnErrors(pp->Level(pp->high_watermark).buf, err);
        send = false;
      }
    }
    if (send) {
      PRODSIM_ASSERT(pp->broker_producer != nullptr);
      std::vector<MessagePtr> buf = pp->Level(pp->high_watermark).buf;
      for (MessagePtr& m : buf) {
        // sarama-main only (35ecd488, #3362): a message parked here before
        // it had a sequence gets one now; v1.42.1 sends it without one.
        if (pp->parent->IsMain()) co_await AssignSequenceIfMissing(pp->parent, m);
        pp->parent->Step(AsyncProducer::State::MessageStep(StepKind::kFlushRetryBuffer, *m));
        co_await pp->broker_producer->input->Send(m);
      }
    }
    PartitionRetryState& after = pp->Level(pp->high_watermark);
    after.buf.clear();
    if (after.expect_chaser) break;
    if (pp->high_watermark == 0) break;
  }
}

// sarama v1.42.1 async_producer.go: partitionProducer.dispatch
sim::Task<void> PartitionDispatch(PartitionProducerPtr pp) {
  StatePtr p = pp->parent;
  // Prefetch the leader; on failure, updateLeader runs on the first message.
  auto [leader, lerr] = co_await p->client->Leader(pp->topic, pp->partition);
  if (leader != nullptr) {
    pp->leader = leader;
    pp->broker_producer = co_await p->GetBrokerProducer(leader);
    p->in_flight.Add(1);
    co_await pp->broker_producer->input->Send(ControlMessage(pp->topic, pp->partition, kSyn, 0));
  }
  for (;;) {
    std::optional<MessagePtr> next = co_await pp->input->Recv();
    if (!next.has_value()) break;
    MessagePtr msg = std::move(*next);
    if (pp->broker_producer != nullptr && pp->broker_producer->abandoned != nullptr) {
      std::optional<bool> gone;
      const int which = co_await sim::SelectOrDefault(
          p->sched(), sim::RecvCase(pp->broker_producer->abandoned, &gone));
      if (which == 0) {
        co_await p->UnrefBrokerProducer(pp->leader, pp->broker_producer);
        pp->broker_producer = nullptr;
        co_await p->sched().Sleep(PlainRetryBackoff(p->conf));
      }
    }
    if (msg->retries > pp->high_watermark) {
      Error err = co_await UpdateLeaderIfBrokerProducerIsNil(pp, msg);
      if (err) continue;
      co_await NewHighWatermark(pp, msg->retries);
      co_await Backoff(pp, msg->retries);
    } else if (pp->high_watermark > 0) {
      if (msg->retries < pp->high_watermark) {
        // Not the current retry level: buffer it (unless it is just a fin).
        if (msg->flags & kFin) {
          pp->Level(msg->retries).expect_chaser = false;
          p->in_flight.Done();
        } else {
          pp->Level(msg->retries).buf.push_back(msg);
        }
        continue;
      }
      if (msg->flags & kFin) {
        // This retry level is done: go down a level and flush it.
        pp->Level(pp->high_watermark).expect_chaser = false;
        co_await FlushRetryBuffers(pp);
        p->in_flight.Done();
        continue;
      }
    }
    Error err = co_await UpdateLeaderIfBrokerProducerIsNil(pp, msg);
    if (err) continue;
    // The sequence number is given here, once a broker is known, and only to
    // new messages: retried ones keep theirs.
    PRODSIM_ASSERT(pp->broker_producer != nullptr);
    if (p->conf.producer.idempotent && msg->retries == 0 && msg->flags == 0) {
      // A new message: no sequence yet (a sequence is given once).
      PRODSIM_ASSERT(!msg->has_sequence);
      auto [seq, epoch] =
          co_await p->txnmgr->GetAndIncrementSequenceNumber(msg->topic, msg->partition);
      msg->sequence_number = seq;
      msg->producer_epoch = epoch;
      msg->has_sequence = true;
      p->Note(0x73657120 /*seq */, msg->id, [&msg, s = seq, e = epoch] {
        return absl::StrCat("seq id=", msg->id, " ", msg->topic, "/", msg->partition, " seq=", s,
                            " epoch=", e);
      });
    }
    co_await pp->broker_producer->input->Send(msg);
  }
  if (pp->broker_producer != nullptr) {
    co_await p->UnrefBrokerProducer(pp->leader, pp->broker_producer);
  }
}

// sarama v1.42.1 async_producer.go: asyncProducer.newPartitionProducer
sim::ChanPtr<MessagePtr> NewPartitionProducer(StatePtr p, const std::string& topic,
                                              int32_t partition) {
  auto pp = std::make_shared<PartitionProducer>();
  pp->parent = p;
  pp->topic = topic;
  pp->partition = partition;
  const std::string name = absl::StrCat("partition/", topic, "/", partition);
  pp->input =
      sim::MakeChan<MessagePtr>(p->sched(), name, static_cast<size_t>(p->conf.channel_buffer_size));
  pp->breaker = std::make_unique<Breaker>(NewSaramaBreaker(&p->sched(), name + ".breaker"));
  p->sched().Go(name, PartitionDispatch(pp));
  return pp->input;
}

// The work topicProducer.partitionMessage runs under its breaker.
sim::Task<Error> FetchPartitions(TopicProducer* t, bool consistent, std::vector<int32_t>* out) {
  // (Not a ?: between two co_awaits: g++ 12 miscompiles that.)
  std::pair<std::vector<int32_t>, Error> r;
  if (consistent) {
    r = co_await t->parent->client->Partitions(t->topic);
  } else {
    r = co_await t->parent->client->WritablePartitions(t->topic);
  }
  *out = std::move(r.first);
  co_return r.second;
}

// sarama v1.42.1 async_producer.go: topicProducer.partitionMessage
sim::Task<Error> PartitionMessage(TopicProducer* tp, MessagePtr msg) {
  std::vector<int32_t> partitions;
  const bool consistent = tp->partitioner->MessageRequiresConsistency(*msg);
  Error err = co_await tp->breaker->Run(&FetchPartitions, tp, consistent, &partitions);
  if (err) co_return err;
  const auto n = static_cast<int32_t>(partitions.size());
  if (n == 0) co_return Error::Kafka(ErrorCode::LEADER_NOT_AVAILABLE);
  auto [choice, perr] = tp->partitioner->Partition(*msg, n);
  if (perr) co_return perr;
  if (choice < 0 || choice >= n) co_return Error::Of(ErrorKind::kInvalidPartition);
  msg->partition = partitions[static_cast<size_t>(choice)];
  co_return kNoError;
}

// sarama v1.42.1 async_producer.go: topicProducer.dispatch
sim::Task<void> TopicDispatch(std::shared_ptr<TopicProducer> tp) {
  for (;;) {
    std::optional<MessagePtr> next = co_await tp->input->Recv();
    if (!next.has_value()) break;
    MessagePtr msg = std::move(*next);
    if (msg->retries == 0) {
      if (Error err = co_await PartitionMessage(tp.get(), msg)) {
        co_await tp->parent->ReturnError(msg, err);
        continue;
      }
    }
    PRODSIM_ASSERT(msg->topic == tp->topic);
    PRODSIM_ASSERT(msg->partition >= 0);
    sim::ChanPtr<MessagePtr>& handler = tp->handlers[msg->partition];
    if (handler == nullptr) handler = NewPartitionProducer(tp->parent, msg->topic, msg->partition);
    co_await handler->Send(msg);
  }
  std::vector<sim::ChanPtr<MessagePtr>> all;
  for (auto& [p, h] : tp->handlers) all.push_back(h);
  co_await CloseInRandomOrder(tp->parent->sched(), std::move(all));
}

// sarama v1.42.1 async_producer.go: asyncProducer.newTopicProducer
sim::ChanPtr<MessagePtr> NewTopicProducer(StatePtr p, const std::string& topic) {
  auto tp = std::make_shared<TopicProducer>();
  tp->parent = p;
  tp->topic = topic;
  const std::string name = absl::StrCat("topic/", topic);
  tp->input =
      sim::MakeChan<MessagePtr>(p->sched(), name, static_cast<size_t>(p->conf.channel_buffer_size));
  tp->breaker = std::make_unique<Breaker>(NewSaramaBreaker(&p->sched(), name + ".breaker"));
  tp->partitioner = NewPartitioner(p->conf, topic, p->sched().program_prng().Fork(name));
  p->sched().Go(name, TopicDispatch(tp));
  return tp->input;
}

// sarama v1.42.1 async_producer.go: asyncProducer.dispatcher
sim::Task<void> Dispatcher(StatePtr p) {
  absl::btree_map<std::string, sim::ChanPtr<MessagePtr>> handlers;
  bool shutting_down = false;
  for (;;) {
    std::optional<MessagePtr> next = co_await p->input->Recv();
    if (!next.has_value()) break;
    MessagePtr msg = std::move(*next);
    if (msg == nullptr) continue;  // "Something tried to send a nil message"
    if (msg->flags & kShutdown) {
      shutting_down = true;
      p->in_flight.Done();
      continue;
    }
    if (msg->retries == 0) {
      if (shutting_down) {
        // Not counted in inFlight yet, so not through returnError.
        ProducerError perr{msg, Error::Of(ErrorKind::kShuttingDown)};
        if (p->env.history != nullptr) {
          p->env.history->errors.push_back(ErrorEvent{p->sched().now(), msg->id, msg->topic,
                                                      msg->partition, perr.err, msg->retries});
        }
        if (p->conf.producer.return_.errors) co_await p->errors->Send(std::move(perr));
        continue;
      }
      p->in_flight.Add(1);
    }
    const int version = p->conf.version.IsAtLeast(V0_11_0_0) ? 2 : 1;
    const int size = msg->ByteSize(version);
    if (size > p->conf.producer.max_message_bytes) {
      co_await p->ReturnError(
          msg, Error::Of(ErrorKind::kConfiguration,
                         absl::StrCat("kafka: invalid configuration (Attempt to produce message "
                                      "larger than configured Producer.MaxMessageBytes: ",
                                      size, " > ", p->conf.producer.max_message_bytes, ")")));
      continue;
    }
    sim::ChanPtr<MessagePtr>& handler = handlers[msg->topic];
    if (handler == nullptr) handler = NewTopicProducer(p, msg->topic);
    co_await handler->Send(msg);
  }
  std::vector<sim::ChanPtr<MessagePtr>> all;
  for (auto& [t, h] : handlers) all.push_back(h);
  co_await CloseInRandomOrder(p->sched(), std::move(all));
}

// sarama v1.42.1 async_producer.go: asyncProducer.retryHandler (an
// unbounded queue from retries back into input).
sim::Task<void> RetryHandler(StatePtr p) {
  std::deque<MessagePtr> buf;
  for (;;) {
    MessagePtr msg;
    if (buf.empty()) {
      std::optional<MessagePtr> next = co_await p->retries->Recv();
      if (next.has_value()) msg = std::move(*next);
    } else {
      std::optional<MessagePtr> next;
      MessagePtr head = buf.front();
      const int which = co_await sim::Select(p->sched(), sim::RecvCase(p->retries, &next),
                                             sim::SendCase(p->input, &head));
      if (which == 1) {
        buf.pop_front();
        continue;
      }
      if (next.has_value()) msg = std::move(*next);
    }
    if (msg == nullptr) co_return;  // retries closed
    buf.push_back(std::move(msg));
  }
}

// sarama v1.42.1 async_producer.go: asyncProducer.shutdown
sim::Task<void> Shutdown(StatePtr p) {
  if (p->IsMain()) {
    co_await ShutdownMain(p);
    co_return;
  }
  p->in_flight.Add(1);
  co_await p->input->Send(ControlMessage("", 0, kShutdown, 0));
  co_await p->in_flight.Wait();
  if (p->owns_client) co_await p->client->Close();
  p->input->Close();
  p->retries->Close();
  p->errors->Close();
  p->successes->Close();
}

// sarama v1.42.1 async_producer.go: asyncProducer.retryBatch
sim::Task<void> RetryBatch(StatePtr p, std::string topic, int32_t partition, PartitionSetPtr pset,
                           Error kerr) {
  std::shared_ptr<ProduceSet> set = co_await p->NewProduceSet();
  set->PutPartition(topic, partition, pset);
  for (MessagePtr& msg : pset->msgs) {
    if (msg->retries >= p->conf.producer.retry.max) {
      co_await p->ReturnErrors(pset->msgs, kerr);
      co_return;
    }
    ++msg->retries;
    PRODSIM_ASSERT_MSG(msg->retries <= p->conf.producer.retry.max, "a retry beyond Retry.Max");
  }
  // A metadata refresh was requested before this was started.
  auto [leader, err] = co_await p->client->Leader(topic, partition);
  if (err) {
    for (MessagePtr& msg : pset->msgs) co_await p->ReturnError(msg, kerr);
    co_return;
  }
  BrokerProducerPtr bp = co_await p->GetBrokerProducer(leader);
  p->Note(0x72657472 /*retr*/, static_cast<uint64_t>(pset->records_to_send.base_sequence.value),
          [&, l = leader] {
            return absl::StrCat("retryBatch ", topic, "/", partition,
                                " seq=", pset->records_to_send.base_sequence.value,
                                " n=", pset->msgs.size(), " straight to bridge of broker#",
                                l->ID());
          });
  ProducerStep step =
      AsyncProducer::State::BatchStep(StepKind::kRetryBatch, topic, partition, *pset);
  step.broker = leader->ID();
  p->Step(std::move(step));
  // Straight to the broker producer's bridge, past its run loop.
  co_await bp->output->Send(set);
  co_await p->UnrefBrokerProducer(leader, bp);
}

}  // namespace

// ---------------------------------------------------------------------------
// brokerProducer.

BrokerProducer::BrokerProducer(StatePtr parent, BrokerPtr b, std::shared_ptr<ProduceSet> buffer)
    : broker(std::move(b)), parent_(std::move(parent)), buffer_(std::move(buffer)) {
  sim::Scheduler& s = parent_->sched();
  const std::string name = absl::StrCat("bp#", broker->ID());
  input = sim::MakeChan<MessagePtr>(s, name + ".input");
  output = sim::MakeChan<std::shared_ptr<ProduceSet>>(s, name + ".bridge");
  pending = sim::MakeChan<BrokerProducerResponse>(s, name + ".pending");
  responses = sim::MakeChan<BrokerProducerResponse>(s, name + ".responses");
  if (parent_->conf.producer.retry.max <= 0)
    abandoned = sim::MakeChan<bool>(s, name + ".abandoned");
}

namespace {

// The steps of an answer (producer/history.h): one per partition of the
// sent set, with its code, or the transport error.
void RecordAnswers(const AsyncProducer::State& p, int32_t broker, const ProduceSet& set,
                   const kafka::ProduceResponse* res, const Error& err) {
  if (p.env.history == nullptr) return;
  for (const ProduceSet::Entry& e : set.SortedPartitions()) {
    ProducerStep step =
        AsyncProducer::State::BatchStep(StepKind::kAnswer, e.topic, e.partition, *e.set);
    step.broker = broker;
    if (err) {
      step.error = err.ToString();
    } else if (res != nullptr) {
      step.correlation_id = res->correlation_id;
      auto block =
          res->partitions.find(kafka::TopicPartition{e.topic, kafka::PartitionId(e.partition)});
      if (block == res->partitions.end()) {
        step.error = "no block for the partition";
      } else {
        step.code = block->second.error;
      }
    }
    p.Step(std::move(step));
  }
}

// The callback the bridge gives AsyncProduce: forward the response without
// blocking the broker's responseReceiver for long.
sim::Task<void> ForwardResponse(const AsyncProducer::State* p, int32_t broker,
                                sim::ChanPtr<BrokerProducerResponse> pending,
                                std::shared_ptr<ProduceSet> set, std::shared_ptr<sim::WaitGroup> wg,
                                std::shared_ptr<const kafka::ProduceResponse> res, Error err) {
  RecordAnswers(*p, broker, *set, res.get(), err);
  BrokerProducerResponse response{std::move(set), err, std::move(res)};
  co_await pending->Send(std::move(response));
  wg->Done();
}

}  // namespace

// sarama v1.42.1 async_producer.go: the bridge goroutine of newBrokerProducer
sim::Task<void> BrokerProducer::Bridge(BrokerProducerPtr bp) {
  StatePtr p = bp->parent_;
  auto wg = std::make_shared<sim::WaitGroup>(p->sched(), "bridge.wg");
  for (;;) {
    std::optional<std::shared_ptr<ProduceSet>> next = co_await bp->output->Recv();
    if (!next.has_value()) break;
    std::shared_ptr<ProduceSet> set = std::move(*next);
    PRODSIM_ASSERT(set != nullptr);
    PRODSIM_ASSERT(set->buffer_bytes() >= 0);
    std::shared_ptr<kafka::ProduceRequest> request = set->BuildRequest();
    // CPU (go policy): buildRequest, the encoding and the write, by bytes.
    p->sched().Spend(p->sched().cpu().request +
                     p->sched().cpu().request_byte * set->buffer_bytes());
    wg->Add(1);
    const int32_t broker_id = bp->broker->ID();
    ProduceCallback cb = [p = p.get(), broker_id, pending = bp->pending, set, wg](
                             std::shared_ptr<const kafka::ProduceResponse> res, Error err) {
      return ForwardResponse(p, broker_id, pending, set, wg, std::move(res), err);
    };
    p->Note(0x73656e64 /*send*/, static_cast<uint64_t>(bp->broker->ID()), [&] {
      return absl::StrCat("bridge -> broker#", bp->broker->ID(), ": ", request->Describe());
    });
    // The send steps go in before the call, in the bridge's order; the call
    // fills in the correlation id and when the request was written (it can
    // return later: with MaxOpenRequests=1 it waits for the receiver).
    std::vector<ProducerStep>* steps = p->env.history != nullptr ? &p->env.history->steps : nullptr;
    const size_t first_step = steps != nullptr ? steps->size() : 0;
    if (steps != nullptr) {
      for (const ProduceSet::Entry& e : set->SortedPartitions()) {
        ProducerStep step =
            AsyncProducer::State::BatchStep(StepKind::kSend, e.topic, e.partition, *e.set);
        step.broker = broker_id;
        p->Step(std::move(step));
      }
    }
    const size_t last_step = steps != nullptr ? steps->size() : 0;
    Error err = co_await bp->broker->AsyncProduce(request, cb);
    // Other tasks record steps while AsyncProduce waits; none erases one,
    // so this request's steps are still at first_step..last_step.
    if (steps != nullptr && err) {
      for (size_t i = first_step; i < last_step; ++i) (*steps)[i].withdrawn = true;
    } else if (steps != nullptr) {
      for (size_t i = first_step; i < last_step; ++i) {
        (*steps)[i].correlation_id = request->correlation_id;
        (*steps)[i].at = request->written_at;
      }
    }
    if (err) {
      co_await cb(nullptr, err);  // the request failed to be sent
      continue;
    }
    if (p->conf.producer.required_acks == kNoResponse) co_await cb(nullptr, kNoError);
  }
  co_await wg->Wait();
  bp->pending->Close();
}

// sarama v1.42.1 async_producer.go: the response forwarder of
// newBrokerProducer (an unbounded queue from pending to responses).
//
// Once pending is closed with responses still queued, Go's select finds
// `<-pending` ready on every turn and `continue`s: the goroutine spins,
// burning CPU, until the run loop takes the head response, while time goes
// on for everyone else. In the model a runnable task stops virtual time, so
// a spin would stop the world (and the step limit would report a false
// liveness failure); the closed pending is left out of the select
// instead, which changes nothing else: the spinning case only continued.
sim::Task<void> BrokerProducer::Forwarder(BrokerProducerPtr bp) {
  std::deque<BrokerProducerResponse> buf;
  bool pending_closed = false;
  for (;;) {
    if (buf.empty()) {
      std::optional<BrokerProducerResponse> r;
      if (!pending_closed) r = co_await bp->pending->Recv();
      if (!r.has_value()) {
        bp->responses->Close();
        co_return;
      }
      buf.push_back(std::move(*r));
    }
    std::optional<BrokerProducerResponse> r;
    BrokerProducerResponse head = buf.front();
    sim::Chan<BrokerProducerResponse>* pending = pending_closed ? nullptr : bp->pending.get();
    const int which = co_await sim::Select(bp->parent_->sched(), sim::RecvCase(pending, &r),
                                           sim::SendCase(bp->responses, &head));
    if (which == 0) {
      if (r.has_value()) {
        buf.push_back(std::move(*r));
      } else {
        pending_closed = true;
      }
      continue;
    }
    buf.pop_front();
  }
}

// sarama v1.42.1 async_producer.go: brokerProducer.run
sim::Task<void> BrokerProducer::Run(BrokerProducerPtr bp) {
  if (bp->parent_->IsMain()) {
    co_await RunMain(bp);
    co_return;
  }
  StatePtr p = bp->parent_;
  sim::Chan<std::shared_ptr<ProduceSet>>* output = nullptr;
  // Go's timerChan: it keeps naming the flush timer's channel after
  // rollOver stopped the timer (until output fires or a new timer is made),
  // so the run loop holds the channel itself.
  sim::ChanPtr<sim::Time> timer_chan;
  for (;;) {
    std::optional<MessagePtr> msg;
    std::optional<sim::Time> tick;
    std::shared_ptr<ProduceSet> flushing = bp->buffer_;
    std::optional<BrokerProducerResponse> response;
    const int which = co_await sim::Select(
        p->sched(), sim::RecvCase(bp->input, &msg), sim::RecvCase(timer_chan.get(), &tick),
        sim::SendCase(output, &flushing), sim::RecvCase(bp->responses, &response));
    switch (which) {
      case 0:
        if (!msg.has_value()) {
          co_await bp->Shutdown();
          co_return;
        }
        if (*msg != nullptr) co_await bp->HandleMessage(std::move(*msg), &timer_chan);
        break;
      case 1: bp->timer_fired_ = true; break;
      case 2:
        co_await bp->RollOver();
        timer_chan.reset();
        break;
      case 3:
        if (response.has_value()) co_await bp->HandleResponse(std::move(*response));
        break;
    }
    output = bp->timer_fired_ || bp->buffer_->ReadyToFlush() ? bp->output.get() : nullptr;
  }
}

// The input case of brokerProducer.run.
sim::Task<void> BrokerProducer::HandleMessage(MessagePtr msg, sim::ChanPtr<sim::Time>* timer_chan) {
  PRODSIM_ASSERT(msg != nullptr);
  PRODSIM_ASSERT_MSG((msg->flags & kShutdown) == 0, "shutdown is the dispatcher's message");
  StatePtr p = parent_;
  const std::pair<std::string, int32_t> key{msg->topic, msg->partition};
  if (msg->flags & kSyn) {
    current_retries_[key] = kNoError;  // state change to [open]
    p->in_flight.Done();
    co_return;
  }
  if (Error reason = NeedsRetry(*msg)) {
    const bool fin = (msg->flags & kFin) != 0;
    co_await p->RetryMessage(msg, reason);
    // We were retrying this partition, but can start processing again.
    if (!closing_ && fin) current_retries_.erase(key);
    co_return;
  }
  if (msg->flags & kFin) {
    // A new broker producer that was caught up by the retry loop.
    co_await p->RetryMessage(msg, Error::Of(ErrorKind::kShuttingDown));
    co_return;
  }
  if (buffer_->WouldOverflow(*msg)) {
    if (Error err = co_await WaitForSpace(msg, false)) {
      co_await p->RetryMessage(msg, err);
      co_return;
    }
  }
  if (p->txnmgr->producer_id() != kNoProducerId &&
      buffer_->producer_epoch() != msg->producer_epoch) {
    // The epoch was reset: roll the buffer over.
    if (Error err = co_await WaitForSpace(msg, true)) {
      co_await p->RetryMessage(msg, err);
      co_return;
    }
  }
  // Only data messages reach the buffer: syn and fin were handled above.
  PRODSIM_ASSERT(msg->flags == 0);
  // CPU (go policy): produceSet.add and the message's share of the request.
  p->sched().Spend(p->sched().cpu().message);
  if (Error err = buffer_->Add(msg, p->sched().now())) {
    ProducerStep step = AsyncProducer::State::MessageStep(StepKind::kAssertion, *msg);
    step.broker = broker->ID();
    step.error = err.ToString();
    p->Step(std::move(step));
    p->Note(0x61737274 /*asrt*/, msg->id, [&] {
      return absl::StrCat("produceSet.add failed for id=", msg->id, " seq=", msg->sequence_number,
                          ": ", err.ToString());
    });
    co_await p->ReturnError(msg, err);
    co_return;
  }
  PRODSIM_ASSERT(!buffer_->Empty());
  if (p->conf.producer.flush.frequency.nanos() > 0 && timer_ == nullptr) {
    timer_ = std::make_unique<sim::Timer>(p->sched(), "bp.flush-timer",
                                          p->conf.producer.flush.frequency);
    *timer_chan = timer_->SharedC();
  }
}

// sarama v1.42.1 async_producer.go: brokerProducer.shutdown
sim::Task<void> BrokerProducer::Shutdown() {
  while (!buffer_->Empty()) {
    std::optional<BrokerProducerResponse> response;
    std::shared_ptr<ProduceSet> flushing = buffer_;
    const int which = co_await sim::Select(parent_->sched(), sim::RecvCase(responses, &response),
                                           sim::SendCase(output, &flushing));
    if (which == 0) {
      if (response.has_value()) co_await HandleResponse(std::move(*response));
    } else {
      co_await RollOver();
    }
  }
  PRODSIM_ASSERT(buffer_->Empty());
  output->Close();
  for (;;) {
    std::optional<BrokerProducerResponse> response = co_await responses->Recv();
    if (!response.has_value()) break;
    co_await HandleResponse(std::move(*response));
  }
}

// sarama v1.42.1 async_producer.go: brokerProducer.needsRetry
Error BrokerProducer::NeedsRetry(const ProducerMessage& msg) const {
  if (closing_) return closing_;
  auto it = current_retries_.find({msg.topic, msg.partition});
  return it == current_retries_.end() ? kNoError : it->second;
}

// sarama v1.42.1 async_producer.go: brokerProducer.waitForSpace
sim::Task<Error> BrokerProducer::WaitForSpace(MessagePtr msg, bool force_rollover) {
  if (parent_->IsMain()) co_return co_await WaitForSpaceMain(std::move(msg), force_rollover);
  for (;;) {
    std::optional<BrokerProducerResponse> response;
    std::shared_ptr<ProduceSet> flushing = buffer_;
    const int which = co_await sim::Select(parent_->sched(), sim::RecvCase(responses, &response),
                                           sim::SendCase(output, &flushing));
    if (which == 1) {
      co_await RollOver();
      co_return kNoError;
    }
    PRODSIM_ASSERT_MSG(response.has_value(), "responses closed while the run loop is alive");
    co_await HandleResponse(std::move(*response));
    // Handling a response can change our state: check again.
    if (Error reason = NeedsRetry(*msg)) co_return reason;
    if (!buffer_->WouldOverflow(*msg) && !force_rollover) co_return kNoError;
  }
}

// sarama v1.42.1 async_producer.go: brokerProducer.rollOver
sim::Task<void> BrokerProducer::RollOver() {
  if (timer_ != nullptr) timer_->Stop();
  timer_.reset();
  timer_fired_ = false;
  buffer_ = co_await parent_->NewProduceSet();
  PRODSIM_ASSERT(buffer_ != nullptr);
  PRODSIM_ASSERT(buffer_->Empty());
}

// sarama v1.42.1 async_producer.go: brokerProducer.handleResponse
sim::Task<void> BrokerProducer::HandleResponse(BrokerProducerResponse response) {
  PRODSIM_ASSERT(response.set != nullptr);
  if (response.err) {
    co_await HandleError(response.set, response.err);
  } else {
    co_await HandleSuccess(response.set, response.res);
  }
  // This can happen if the response invalidated our buffer.
  if (buffer_->Empty()) co_await RollOver();
}

// sarama async_producer.go: brokerProducer.handleSuccess, its first
// sent.eachPartition pass (unchanged on main)
sim::Task<std::vector<std::string>> BrokerProducer::ReturnResolved(
    std::shared_ptr<ProduceSet> sent, std::shared_ptr<const kafka::ProduceResponse> response) {
  StatePtr p = parent_;
  std::vector<std::string> retry_topics;
  for (const PartitionEntry& e : sent->Partitions(p->sched().program_prng())) {
    if (response == nullptr) {
      // Only with RequiredAcks == NoResponse: assume success.
      co_await p->ReturnSuccesses(e.set->msgs);
      continue;
    }
    auto block =
        response->partitions.find(kafka::TopicPartition{e.topic, kafka::PartitionId(e.partition)});
    if (block == response->partitions.end()) {
      co_await p->ReturnErrors(e.set->msgs, Error::Of(ErrorKind::kIncompleteResponse));
      continue;
    }
    const ErrorCode code = block->second.error;
    if (code == ErrorCode::NONE) {
      for (size_t i = 0; i < e.set->msgs.size(); ++i) {
        e.set->msgs[i]->offset = block->second.base_offset.value + static_cast<int64_t>(i);
      }
      co_await p->ReturnSuccesses(e.set->msgs);
    } else if (code == ErrorCode::DUPLICATE_SEQUENCE_NUMBER) {
      co_await p->ReturnSuccesses(e.set->msgs);
    } else if (RetriableInHandleSuccess(code, p->profile)) {
      if (p->conf.producer.retry.max <= 0) {
        co_await p->AbandonBrokerConnection(broker);
        co_await p->ReturnErrors(e.set->msgs, Error::Kafka(code));
      } else {
        retry_topics.push_back(e.topic);
      }
    } else {
      if (p->conf.producer.retry.max <= 0) co_await p->AbandonBrokerConnection(broker);
      co_await p->ReturnErrors(e.set->msgs, Error::Kafka(code));
    }
  }
  co_return retry_topics;
}

// sarama v1.42.1 async_producer.go: brokerProducer.handleSuccess
sim::Task<void> BrokerProducer::HandleSuccess(
    std::shared_ptr<ProduceSet> sent, std::shared_ptr<const kafka::ProduceResponse> response) {
  if (parent_->IsMain()) {
    co_await HandleSuccessMain(std::move(sent), std::move(response));
    co_return;
  }
  StatePtr p = parent_;
  const std::vector<std::string> retry_topics = co_await ReturnResolved(sent, response);
  if (retry_topics.empty()) co_return;
  // A retriable code came in a response block: there is a response.
  PRODSIM_ASSERT(response != nullptr);
  if (p->conf.producer.idempotent) {
    co_await p->client->RefreshMetadata(retry_topics);  // a failure is only logged
  }
  for (const PartitionEntry& e : sent->Partitions(p->sched().program_prng())) {
    auto block =
        response->partitions.find(kafka::TopicPartition{e.topic, kafka::PartitionId(e.partition)});
    if (block == response->partitions.end()) continue;  // handled above
    const ErrorCode code = block->second.error;
    if (!RetriableInHandleSuccess(code, p->profile)) continue;
    current_retries_[{e.topic, e.partition}] = Error::Kafka(code);  // [retrying]
    if (p->conf.producer.idempotent) {
      p->sched().Go(absl::StrCat("retryBatch/", e.topic, "/", e.partition),
                    RetryBatch(p, e.topic, e.partition, e.set, Error::Kafka(code)));
    } else {
      co_await p->RetryMessages(e.set->msgs, Error::Kafka(code));
    }
    // Dropping the following messages increments their retry count.
    co_await p->RetryMessages(buffer_->DropPartition(e.topic, e.partition), Error::Kafka(code));
  }
}

// sarama v1.42.1 async_producer.go: brokerProducer.handleError
sim::Task<void> BrokerProducer::HandleError(std::shared_ptr<ProduceSet> sent, Error err) {
  if (parent_->IsMain()) {
    co_await HandleErrorMain(std::move(sent), std::move(err));
    co_return;
  }
  PRODSIM_ASSERT(sent != nullptr);
  PRODSIM_ASSERT(err);
  StatePtr p = parent_;
  // (PacketEncodingError, the other branch, cannot happen: nothing is encoded.)
  p->Note(0x636c6f73 /*clos*/, static_cast<uint64_t>(broker->ID()), [&] {
    return absl::StrCat("bp#", broker->ID(), " state change to [closing] because ", err.ToString());
  });
  co_await p->AbandonBrokerConnection(broker);
  co_await broker->Close();
  closing_ = err;
  for (const PartitionEntry& e : sent->Partitions(p->sched().program_prng())) {
    co_await p->RetryMessages(e.set->msgs, err);
  }
  for (const PartitionEntry& e : buffer_->Partitions(p->sched().program_prng())) {
    co_await p->RetryMessages(e.set->msgs, err);
  }
  co_await RollOver();
}

// ---------------------------------------------------------------------------
// The public face.

AsyncProducer::AsyncProducer(std::shared_ptr<State> state) : state_(std::move(state)) {}
AsyncProducer::~AsyncProducer() = default;

sim::Chan<MessagePtr>* AsyncProducer::Input() { return state_->input.get(); }
sim::Chan<MessagePtr>* AsyncProducer::Successes() { return state_->successes.get(); }
sim::Chan<ProducerError>* AsyncProducer::Errors() { return state_->errors.get(); }

// sarama v1.42.1 async_producer.go: asyncProducer.AsyncClose
void AsyncProducer::AsyncClose() { state_->sched().Go("shutdown", Shutdown(state_)); }

namespace {
sim::Task<void> DrainSuccesses(sim::ChanPtr<MessagePtr> successes) {
  for (;;) {
    std::optional<MessagePtr> m = co_await successes->Recv();
    if (!m.has_value()) break;
  }
}
}  // namespace

// sarama v1.42.1 async_producer.go: asyncProducer.Close
sim::Task<std::vector<ProducerError>> AsyncProducer::Close() {
  AsyncClose();
  if (state_->conf.producer.return_.successes) {
    state_->sched().Go("close.drain-successes", DrainSuccesses(state_->successes));
  }
  std::vector<ProducerError> errs;
  if (state_->conf.producer.return_.errors) {
    while (std::optional<ProducerError> e = co_await state_->errors->Recv()) errs.push_back(*e);
  } else {
    co_await state_->errors->Recv();
  }
  co_return errs;
}

// sarama v1.42.1 async_producer.go: newAsyncProducer
sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> AsyncProducer::Start(
    std::shared_ptr<Client> client, bool owns, Profile profile) {
  PRODSIM_ASSERT(client != nullptr);
  PRODSIM_ASSERT_MSG(client->env().profile == profile,
                     "the client follows another Sarama than the producer (Env::profile)");
  if (client->Closed())
    co_return absl::FailedPreconditionError(Error::Of(ErrorKind::kClosedClient).ToString());
  auto [txnmgr, err] = co_await TransactionManager::New(client);
  if (err) co_return absl::UnavailableError(err.ToString());
  auto state = std::make_shared<AsyncProducer::State>(client, owns, profile);
  state->txnmgr = std::move(txnmgr);
  // The state and its brokerProducers point at each other (Go's garbage
  // collector takes both once nothing else does); a run that ends with the
  // producer hung breaks the cycle at teardown.
  state->sched().AtTeardown([weak = std::weak_ptr<AsyncProducer::State>(state)] {
    if (StatePtr s = weak.lock()) s->ReleaseAtTeardown();
  });
  state->sched().Go("dispatcher", Dispatcher(state));
  state->sched().Go("retryHandler", RetryHandler(state));
  co_return std::unique_ptr<AsyncProducer>(new AsyncProducer(std::move(state)));
}

// sarama v1.42.1 async_producer.go: NewAsyncProducer
sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> AsyncProducer::New(
    Env env, std::vector<net::NodeId> addrs, Config conf, Profile profile) {
  env.profile = profile;  // the client and its brokers follow the same Sarama
  absl::StatusOr<std::shared_ptr<Client>> client =
      co_await Client::New(env, std::move(addrs), std::move(conf));
  if (!client.ok()) co_return client.status();
  co_return co_await Start(std::move(*client), /*owns_client=*/true, profile);
}

// sarama v1.42.1 async_producer.go: NewAsyncProducerFromClient
sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> AsyncProducer::FromClient(
    std::shared_ptr<Client> client, Profile profile) {
  co_return co_await Start(std::move(client), /*owns_client=*/false, profile);
}

}  // namespace sarama
