// The "sarama-main" profile: Sarama's AsyncProducer as on IBM/sarama main
// at 282cd488 (#3692), plus the change of the open PR #3693 (head
// e8e49c89), where it differs from v1.42.1 (async_producer.cc).
//
// How the profiles share code. Everything that main has unchanged stays in
// async_producer.cc and runs for both. Each function whose main version
// differs as a whole begins, in async_producer.cc, with a one-line dispatch
// to its main version here:
//   brokerProducer.run            Run          -> RunMain
//   brokerProducer.waitForSpace   WaitForSpace -> WaitForSpaceMain
//   brokerProducer.handleSuccess  HandleSuccess-> HandleSuccessMain
//   brokerProducer.handleError    HandleError  -> HandleErrorMain
//   asyncProducer.shutdown        Shutdown     -> ShutdownMain
// and main's new pieces live here only: partitionMuter, tryBuildFlushingBatch,
// takePartitions, brokerProducer.shutdown, retryBatch. Two small
// differences are inline in async_producer.cc, marked "sarama-main only":
// the State makes the muter and the done channel, and flushRetryBuffers
// assigns missing sequence numbers. Main's broker.go and client.go changes
// (9-14 below) live in broker.cc, client.cc and metadata_refresh.cc, in the
// same way.
//
// What main changed since v1.42.1, and where it is modelled:
//  1. 0fe9629f (#3422, "partition muting"; ae36df46 tidied it): a shared
//     partitionMuter counts the batches in flight per partition. The
//     brokerProducer's buffer becomes accumulatingBatch; run() promotes it
//     to flushingBatch only once it can mute every partition of it
//     (tryMute), else it takes the partitions it can mute (takePartitions
//     with tryMutePartition: a partial batch) and leaves the muted ones
//     accumulating. The bridge hands the sent set back with the response;
//     handleSuccess and handleError unmute it, except the partitions they
//     retry with retryBatch, which keep the mute until the retried batch's
//     own response. retryBatch takes an alreadyMuted flag (waitUntilMuted
//     otherwise) and releases the mute on each way it gives up.
//     handleError (connection errors) now retries an idempotent batch with
//     retryBatch, after a metadata refresh, instead of retryMessages.
//     waitForSpace and brokerProducer.shutdown flush through the same
//     muting; asyncProducer.shutdown closes the muter.
//  2. 4009ac0b (#3557): retryBatch sleeps Retry.Backoff (or BackoffFunc)
//     before looking the leader up (RetryBatchMain).
//  3. 6aaff07e (#3645): asyncProducer.shutdown first closes a done
//     channel; retryBatch's handoff to the bridge selects on it, and on
//     shutdown fails the batch with ErrShuttingDown and unmutes it.
//  4. 8f58ebdc (#3644): handleError retries every batch, idempotent or
//     not, with retryBatch (mute held), and always refreshes metadata.
//  5. 282cd488 (#3692, fixes #3689): tryBuildFlushingBatch takes the
//     muter's unmute signal before its mute attempts and returns it when
//     nothing could be taken; run(), waitForSpace and shutdown select on
//     it, so a brokerProducer stranded behind a mute held elsewhere wakes.
//  6. PR #3693 (open): handleSuccess keeps every retried partition muted
//     and retries it with retryBatch, idempotent or not, and always
//     refreshes metadata first (main at 282cd488 did both only when
//     Idempotent, and sent non-idempotent retries to retryMessages with
//     the mute released).
// Changes before the muting, also in main and modelled:
//  7. 35ecd488 (#3362): flushRetryBuffers assigns a sequence number to a
//     buffered new message that has none (inline in async_producer.cc).
//  8. 3aea989f (#2939, v1.43.3): handleSuccess retries KafkaStorageError
//     (a log directory failed; the controller moves the leadership), where
//     v1.42.1 fails the messages and, never refreshing metadata for it,
//     keeps sending the partition's next ones to the same broker
//     (RetriableInHandleSuccess takes the profile).
// PR #3693 can be left out for a test (State::pr3693 = false), to show what
// main at 282cd488 alone does; sarama-main always includes it.
// Main's broker.go and client.go, modelled in producer/broker.cc and
// producer/client.cc (the Broker and the Client learn the profile from
// Env::profile, which AsyncProducer::New sets; the same dispatch lines and
// "sarama-main only" branches as here):
//  9. 0dd02e17 (#3209), 58355b5a (#3234), 26dc2e7c (#3328): Broker.Open's
//     dialling task sends ApiVersions (v3; v4 from Version 3.9) whenever
//     ApiVersionsRequest is set, whatever the Version, under the broker's
//     lock and before the responseReceiver starts, reading the answer
//     itself without a correlation id check
//     (sendAndReceiveApiVersions); after an error it asks again at the
//     version the answer names, v0 when none (Broker::DialAndServeMain,
//     OpenApiVersions, SendAndReceiveApiVersions). So ApiVersions is the
//     first request on every connection, and a Produce waiting for the
//     lock waits for its round trip (and for both reads' timeouts when the
//     answer is lost). v1.42.1 sends it from Version 2.4 only, after
//     unlocking, so a waiting Produce or Metadata goes first.
// 10. a10b087c: a transport error (not a timeout) closes the connection:
//     in Open's ApiVersions exchange (Connected and later calls then
//     return it) and in sendAndReceive (Metadata, InitProducerId)
//     (Broker::MaybeCloseLocked, CloseLocked, SendAndReceive).
// 11. ea568bd5: closeLocked closes the socket before it waits for the
//     responseReceiver, so a read in progress fails at once ("use of closed
//     network connection") instead of at its response or Net.ReadTimeout
//     (Broker::CloseLocked, CloseMain).
// 12. 8eafc465, ea568bd5, e025a734: updateMetadata first runs
//     checkBrokersHealth: a registered broker whose socket holds an
//     unreported error (SO_ERROR; here a reset nothing has read or written
//     since, Broker::GetSockError, skipped while the broker's lock is held)
//     is closed and forgotten, so the same response registers a new Broker
//     for its id and the producer gets a new brokerProducer for it; seed
//     brokers are closed and kept (Client::CheckBrokersHealth,
//     CheckSeedBrokersHealth).
// 13. e566ac67 (#3225, Metadata.SingleFlight, on by default), fa624c04
//     (#3532): RefreshMetadata goes through a single-flight refresher: one
//     refresh at a time; a caller whose topics the running one covers
//     shares its result, others are queued into the next one; each gets
//     only its own topics' errors (SingleFlightRefresher, metadata_refresh.cc).
// 14. 1fe27c9d (#3525), fa624c04: updateMetadata returns its errors per
//     topic, leaderless partitions included (Error::JoinTopicErrors), so a
//     refresh whose retries end with a leaderless partition fails with
//     LEADER_NOT_AVAILABLE (a partitionProducer's updateLeader then fails
//     even for a partition that has a leader); and only a refresh that got
//     every leader stamps updateMetadataMs, so a concurrent refresh no
//     longer ends another's retries early (Client::UpdateMetadataMain,
//     TryRefreshMetadata).
// Not modelled (the model has no such feature, or no scenario reaches it):
// Retry.MaxBufferLength/MaxBufferBytes in retryHandler (7c75cc4c,
// 26d7c7b5; both default to unlimited, which is v1.42.1's behaviour),
// transactions, interceptors, record headers. Of main's broker.go and
// client.go: the clamping of request versions to the broker's ranges
// (restrictApiVersion, 0dd02e17; 38ed2567): the model's requests carry no
// version, the clamp changes only their encoding, so the ranges are kept
// (Broker::api_versions) and used for nothing else; ApiVersions v4's
// feature list (ff2eaba6); SASL, TLS and their ordering after ApiVersions
// (6cfb7251, 25368c40, d23b63f8); metrics and throttling locks (ff06f3a2,
// a8b3b3d5); admin and consumer APIs (DescribeCluster, ElectLeaders,
// PartitionNotReadable, 60592f6a); the nil guards of updateBroker
// (da8cb804) and the logging of ErrNoTopicsToUpdateMetadata (6a36481a),
// which change no outcome; NewClient's tolerance of TOPIC_ and
// CLUSTER_AUTHORIZATION_FAILED, codes the cluster model never returns.
// Client.Close's wait for the background updater (in both versions) is not
// modelled for either profile. The simulated network has no FIN, so a
// crashed broker's idle connection holds a pending reset here as after an
// RST (a real kernel's FIN leaves SO_ERROR clear until a write fails).
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "producer/async_producer_internal.h"

namespace sarama {

using kafka::ErrorCode;

namespace {

using PartitionKey = std::pair<std::string, int32_t>;

std::string KeyText(const std::string& topic, int32_t partition) {
  return absl::StrCat(topic, "/", partition);
}

// The partitions of a set, as "t/0 t/1", for trace notes.
std::string PartitionsText(const ProduceSet& set) {
  std::string out;
  for (const ProduceSet::Entry& e : set.SortedPartitions()) {
    absl::StrAppend(&out, out.empty() ? "" : " ", KeyText(e.topic, e.partition));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// partitionMuter (0fe9629f, 282cd488).

PartitionMuter::PartitionMuter(sim::Scheduler& s)
    : sched_(&s), mu_(s, "muter.mu"), cond_(mu_, "muter.cond"), unmute_signal_(NewSignal()) {}

sim::ChanPtr<bool> PartitionMuter::NewSignal() {
  return sim::MakeChan<bool>(*sched_, absl::StrCat("muter.unmuteSignal#", ++signals_made_));
}

bool PartitionMuter::IsMuted(const std::string& topic, int32_t partition) const {
  return counts_.contains(PartitionKey(topic, partition));
}

// sarama main async_producer.go: partitionMuter.isAnyMuted
bool PartitionMuter::IsAnyMuted(const ProduceSet& set) const {
  for (const ProduceSet::Entry& e : set.SortedPartitions()) {
    if (IsMuted(e.topic, e.partition)) return true;
  }
  return false;
}

// sarama main async_producer.go: partitionMuter.muteSet
void PartitionMuter::MuteSet(const ProduceSet& set) {
  for (const ProduceSet::Entry& e : set.SortedPartitions()) ++counts_[{e.topic, e.partition}];
}

// sarama main async_producer.go: partitionMuter.tryMute
sim::Task<bool> PartitionMuter::TryMute(std::shared_ptr<ProduceSet> set) {
  if (set == nullptr || set->Empty()) co_return false;
  co_await mu_.Lock();
  const bool free = !IsAnyMuted(*set);
  if (free) MuteSet(*set);
  mu_.Unlock();
  co_return free;
}

// sarama main async_producer.go: partitionMuter.tryMutePartition
sim::Task<bool> PartitionMuter::TryMutePartition(std::string topic, int32_t partition) {
  co_await mu_.Lock();
  const bool free = !IsMuted(topic, partition);
  if (free) ++counts_[{std::move(topic), partition}];
  mu_.Unlock();
  co_return free;
}

// sarama main async_producer.go: partitionMuter.waitUntilMuted
sim::Task<bool> PartitionMuter::WaitUntilMuted(std::shared_ptr<ProduceSet> set) {
  if (set == nullptr || set->Empty()) co_return false;
  co_await mu_.Lock();
  for (;;) {
    if (closed_) {
      mu_.Unlock();
      co_return false;
    }
    if (!IsAnyMuted(*set)) break;
    co_await cond_.Wait();
  }
  MuteSet(*set);
  mu_.Unlock();
  co_return true;
}

// sarama main (282cd488) async_producer.go: partitionMuter.nextUnmuteSignal
sim::Task<sim::ChanPtr<bool>> PartitionMuter::NextUnmuteSignal() {
  co_await mu_.Lock();
  sim::ChanPtr<bool> signal = unmute_signal_;
  mu_.Unlock();
  co_return signal;
}

// sarama main async_producer.go: partitionMuter.unmute
sim::Task<void> PartitionMuter::Unmute(std::shared_ptr<ProduceSet> set) {
  if (set == nullptr) co_return;
  co_await mu_.Lock();
  if (closed_) {
    mu_.Unlock();
    co_return;
  }
  for (const ProduceSet::Entry& e : set->SortedPartitions()) {
    auto it = counts_.find({e.topic, e.partition});
    if (it == counts_.end()) continue;
    PRODSIM_ASSERT(it->second > 0);
    if (--it->second == 0) counts_.erase(it);
  }
  unmute_signal_->Close();
  unmute_signal_ = NewSignal();
  cond_.Broadcast();
  mu_.Unlock();
}

// sarama main async_producer.go: partitionMuter.close
sim::Task<void> PartitionMuter::Close() {
  co_await mu_.Lock();
  if (!closed_) {
    closed_ = true;
    unmute_signal_->Close();
    cond_.Broadcast();
  }
  mu_.Unlock();
}

// ---------------------------------------------------------------------------
// brokerProducer.

// sarama main (282cd488) async_producer.go: brokerProducer.run
sim::Task<void> BrokerProducer::RunMain(BrokerProducerPtr bp) {
  StatePtr p = bp->parent_;
  PRODSIM_ASSERT(p->muter != nullptr);
  sim::ChanPtr<sim::Time> unused_timer_chan;  // main derives it from timer_
  for (;;) {
    sim::ChanPtr<bool> unmute_signal;
    if (bp->flushing_batch_ == nullptr && (bp->timer_fired_ || bp->buffer_->ReadyToFlush())) {
      unmute_signal = co_await bp->TryBuildFlushingBatch();
    }
    sim::Chan<sim::Time>* timer_chan = bp->timer_ != nullptr ? bp->timer_->C() : nullptr;
    sim::Chan<std::shared_ptr<ProduceSet>>* output =
        bp->flushing_batch_ != nullptr ? bp->output.get() : nullptr;
    std::optional<MessagePtr> msg;
    std::optional<sim::Time> tick;
    std::shared_ptr<ProduceSet> flushing = bp->flushing_batch_;
    std::optional<bool> unmuted;
    std::optional<BrokerProducerResponse> response;
    // The cases in Go's order: input, timer, output, unmuteSignal, responses.
    const int which = co_await sim::Select(
        p->sched(), sim::RecvCase(bp->input, &msg), sim::RecvCase(timer_chan, &tick),
        sim::SendCase(output, &flushing), sim::RecvCase(unmute_signal.get(), &unmuted),
        sim::RecvCase(bp->responses, &response));
    switch (which) {
      case 0:
        if (!msg.has_value()) {
          co_await bp->ShutdownMain();
          co_return;
        }
        if (*msg != nullptr) co_await bp->HandleMessage(std::move(*msg), &unused_timer_chan);
        break;
      case 1: bp->timer_fired_ = true; break;
      case 2: bp->flushing_batch_ = nullptr; break;
      case 3: break;  // something was unmuted: try to build the batch again
      case 4:
        if (response.has_value()) co_await bp->HandleResponse(std::move(*response));
        break;
    }
  }
}

// sarama main async_producer.go: produceSet.takePartitions, with
// partitionMuter.tryMutePartition as the predicate, as
// tryBuildFlushingBatch calls it. Go visits the partitions in map order,
// and each mute attempt is a synchronization point, so the order is drawn.
sim::Task<std::shared_ptr<ProduceSet>> BrokerProducer::TakeUnmutedPartitions() {
  StatePtr p = parent_;
  if (buffer_->Empty()) co_return nullptr;
  auto out = std::make_shared<ProduceSet>(buffer_->config(), buffer_->producer_id(),
                                          buffer_->producer_epoch());
  for (const ProduceSet::Entry& e : buffer_->Partitions(p->sched().program_prng())) {
    const bool muted = co_await p->muter->TryMutePartition(e.topic, e.partition);
    if (!muted) continue;
    PartitionSetPtr set = buffer_->TakePartition(e.topic, e.partition);
    PRODSIM_ASSERT(set != nullptr);
    out->PutPartition(e.topic, e.partition, std::move(set));
  }
  if (out->Empty()) co_return nullptr;
  co_return out;
}

// sarama main (282cd488) async_producer.go: brokerProducer.tryBuildFlushingBatch
sim::Task<sim::ChanPtr<bool>> BrokerProducer::TryBuildFlushingBatch() {
  StatePtr p = parent_;
  if (flushing_batch_ != nullptr || buffer_->Empty()) co_return nullptr;
  // Taken before the mute attempts, so that an unmute racing with them
  // still wakes us.
  sim::ChanPtr<bool> unmute_signal = co_await p->muter->NextUnmuteSignal();
  const bool all = co_await p->muter->TryMute(buffer_);
  if (all) {
    p->Note(0x6d757465 /*mute*/, static_cast<uint64_t>(broker->ID()), [&] {
      return absl::StrCat("bp#", broker->ID(), " muted ", PartitionsText(*buffer_),
                          ": flushing batch built");
    });
    flushing_batch_ = buffer_;
    co_await RollOver();
    co_return nullptr;
  }
  std::shared_ptr<ProduceSet> partial = co_await TakeUnmutedPartitions();
  if (partial == nullptr) {
    // The mute may be held by another brokerProducer: only the shared
    // unmute signal is sure to wake this one (#3689).
    p->Note(0x6d757465 /*mute*/, static_cast<uint64_t>(broker->ID()), [&] {
      return absl::StrCat("bp#", broker->ID(), " every partition muted (", PartitionsText(*buffer_),
                          "): waiting for an unmute");
    });
    co_return unmute_signal;
  }
  p->Note(0x6d757465 /*mute*/, static_cast<uint64_t>(broker->ID()), [&] {
    return absl::StrCat("bp#", broker->ID(), " muted ", PartitionsText(*partial),
                        ": partial batch; still muted: ", PartitionsText(*buffer_));
  });
  flushing_batch_ = std::move(partial);
  if (buffer_->Empty()) co_await RollOver();
  co_return nullptr;
}

// sarama main (282cd488) async_producer.go: the select of
// brokerProducer.shutdown and brokerProducer.waitForSpace over
// `bp.output <- bp.flushingBatch` and `<-bp.responses`.
sim::Task<bool> BrokerProducer::SendFlushingOrHandleResponse() {
  PRODSIM_ASSERT(flushing_batch_ != nullptr);
  std::optional<BrokerProducerResponse> response;
  std::shared_ptr<ProduceSet> flushing = flushing_batch_;
  const int which = co_await sim::Select(parent_->sched(), sim::RecvCase(responses, &response),
                                         sim::SendCase(output, &flushing));
  if (which == 1) {
    flushing_batch_ = nullptr;
    co_return true;
  }
  PRODSIM_ASSERT_MSG(response.has_value(), "responses closed while the run loop is alive");
  co_await HandleResponse(std::move(*response));
  co_return false;
}

// sarama main (282cd488) async_producer.go: brokerProducer.shutdown
sim::Task<void> BrokerProducer::ShutdownMain() {
  // The batch that is ready goes first.
  while (flushing_batch_ != nullptr) co_await SendFlushingOrHandleResponse();
  // Then what is still accumulating, as its partitions can be muted.
  while (!buffer_->Empty() || flushing_batch_ != nullptr) {
    sim::ChanPtr<bool> unmute_signal;
    if (flushing_batch_ == nullptr) unmute_signal = co_await TryBuildFlushingBatch();
    sim::Chan<std::shared_ptr<ProduceSet>>* out =
        flushing_batch_ != nullptr ? output.get() : nullptr;
    std::optional<BrokerProducerResponse> response;
    std::shared_ptr<ProduceSet> flushing = flushing_batch_;
    std::optional<bool> unmuted;
    const int which = co_await sim::Select(parent_->sched(), sim::RecvCase(responses, &response),
                                           sim::SendCase(out, &flushing),
                                           sim::RecvCase(unmute_signal.get(), &unmuted));
    if (which == 0 && response.has_value()) co_await HandleResponse(std::move(*response));
    if (which == 1) flushing_batch_ = nullptr;
  }
  output->Close();
  for (;;) {
    std::optional<BrokerProducerResponse> response = co_await responses->Recv();
    if (!response.has_value()) break;
    co_await HandleResponse(std::move(*response));
  }
}

// sarama main (282cd488) async_producer.go: brokerProducer.waitForSpace
sim::Task<Error> BrokerProducer::WaitForSpaceMain(MessagePtr msg, bool force_rollover) {
  if (buffer_->Empty() && !force_rollover) co_return kNoError;
  for (;;) {
    if (!buffer_->WouldOverflow(*msg) && !force_rollover) co_return kNoError;
    if (flushing_batch_ != nullptr) {
      const bool sent = co_await SendFlushingOrHandleResponse();
      if (sent) continue;
      if (Error reason = NeedsRetry(*msg)) co_return reason;
      continue;
    }
    if (buffer_->Empty()) {
      if (force_rollover) co_await RollOver();
      co_return kNoError;
    }
    sim::ChanPtr<bool> unmute_signal = co_await TryBuildFlushingBatch();
    if (unmute_signal == nullptr) continue;
    std::optional<BrokerProducerResponse> response;
    std::optional<bool> unmuted;
    const int which = co_await sim::Select(parent_->sched(), sim::RecvCase(responses, &response),
                                           sim::RecvCase(unmute_signal, &unmuted));
    if (which == 1) continue;
    PRODSIM_ASSERT_MSG(response.has_value(), "responses closed while the run loop is alive");
    co_await HandleResponse(std::move(*response));
    if (Error reason = NeedsRetry(*msg)) co_return reason;
  }
}

// sarama main (282cd488) + PR #3693 async_producer.go: brokerProducer.handleSuccess
sim::Task<void> BrokerProducer::HandleSuccessMain(
    std::shared_ptr<ProduceSet> sent, std::shared_ptr<const kafka::ProduceResponse> response) {
  StatePtr p = parent_;
  // PR #3693 treats a non-idempotent retry as main treats an idempotent one.
  const bool as_idempotent = p->conf.producer.idempotent || p->pr3693;
  const std::vector<std::string> retry_topics = co_await ReturnResolved(sent, response);
  // The partitions retried with the mute held (main: only when Idempotent).
  std::set<PartitionKey> keep_muted;
  if (!retry_topics.empty()) {
    // PR #3693: always (main: only when Idempotent). A failure is only logged.
    if (as_idempotent) co_await p->client->RefreshMetadata(retry_topics);
    for (const ProduceSet::Entry& e : sent->Partitions(p->sched().program_prng())) {
      auto block = response->partitions.find(
          kafka::TopicPartition{e.topic, kafka::PartitionId(e.partition)});
      if (block == response->partitions.end()) continue;  // handled above
      const ErrorCode code = block->second.error;
      if (!RetriableInHandleSuccess(code, p->profile)) continue;
      current_retries_[{e.topic, e.partition}] = Error::Kafka(code);  // [retrying]
      // PR #3693: retryBatch with the mute held, whether or not Idempotent
      // (main: retryMessages, through the partitionProducer, when not).
      if (as_idempotent) {
        keep_muted.insert({e.topic, e.partition});
        p->sched().Go(absl::StrCat("retryBatch/", e.topic, "/", e.partition),
                      RetryBatchMain(p, e.topic, e.partition, e.set, Error::Kafka(code), true));
      } else {
        co_await p->RetryMessages(e.set->msgs, Error::Kafka(code));
      }
      // Dropping the following messages increments their retry count.
      co_await p->RetryMessages(buffer_->DropPartition(e.topic, e.partition), Error::Kafka(code));
    }
  }
  std::shared_ptr<ProduceSet> unmute =
      sent->CopyFunc([&keep_muted](const std::string& t, int32_t part) {
        return !keep_muted.contains({t, part});
      });
  p->Note(0x756e6d74 /*unmt*/, static_cast<uint64_t>(broker->ID()), [&] {
    return absl::StrCat("bp#", broker->ID(), " handleSuccess unmutes [", PartitionsText(*unmute),
                        "]", keep_muted.empty() ? "" : ", keeps the retried ones muted");
  });
  co_await p->muter->Unmute(std::move(unmute));
}

// sarama main (8f58ebdc) async_producer.go: brokerProducer.handleError
sim::Task<void> BrokerProducer::HandleErrorMain(std::shared_ptr<ProduceSet> sent, Error err) {
  StatePtr p = parent_;
  // (PacketEncodingError, the other branch, cannot happen: nothing is encoded.)
  p->Note(0x636c6f73 /*clos*/, static_cast<uint64_t>(broker->ID()), [&] {
    return absl::StrCat("bp#", broker->ID(), " state change to [closing] because ", err.ToString());
  });
  co_await p->AbandonBrokerConnection(broker);
  co_await broker->Close();
  closing_ = err;
  std::vector<ProduceSet::Entry> entries = sent->Partitions(p->sched().program_prng());
  std::vector<std::string> retry_topics;  // each topic once, in Go's map order
  for (const ProduceSet::Entry& e : entries) {
    if (std::find(retry_topics.begin(), retry_topics.end(), e.topic) == retry_topics.end()) {
      retry_topics.push_back(e.topic);
    }
  }
  // 8f58ebdc: always (0fe9629f: only when Idempotent). A failure is only logged.
  if (!retry_topics.empty()) co_await p->client->RefreshMetadata(retry_topics);
  std::set<PartitionKey> keep_muted;
  for (const ProduceSet::Entry& e : sent->Partitions(p->sched().program_prng())) {
    // The partition stays [retrying] and muted while its batch is retried.
    current_retries_[{e.topic, e.partition}] = err;
    keep_muted.insert({e.topic, e.partition});
    p->sched().Go(absl::StrCat("retryBatch/", e.topic, "/", e.partition),
                  RetryBatchMain(p, e.topic, e.partition, e.set, err, true));
  }
  for (const ProduceSet::Entry& e : buffer_->Partitions(p->sched().program_prng())) {
    co_await p->RetryMessages(e.set->msgs, err);
  }
  co_await RollOver();
  // Every partition of `sent` is kept, so this unmutes nothing, but it
  // still signals, as Go's does.
  std::shared_ptr<ProduceSet> unmute =
      sent->CopyFunc([&keep_muted](const std::string& t, int32_t part) {
        return !keep_muted.contains({t, part});
      });
  co_await p->muter->Unmute(std::move(unmute));
}

// ---------------------------------------------------------------------------
// asyncProducer.

namespace {

// The retryBatch step recorded at `index` when the batch was offered. No
// step is ever erased (a request the bridge could not write has its steps
// withdrawn in place), so it is there; it is checked all the same, from
// there back.
ProducerStep& OfferedStep(std::vector<ProducerStep>& steps, size_t index, sim::Time at,
                          const std::string& topic, int32_t partition, uint64_t first_id) {
  for (size_t i = std::min(index + 1, steps.size()); i-- > 0;) {
    ProducerStep& s = steps[i];
    if (s.kind == StepKind::kRetryBatch && s.at == at && s.error.empty() && s.topic == topic &&
        s.partition == partition && (s.ids.empty() || s.ids.front() == first_id)) {
      return s;
    }
  }
  PRODSIM_ASSERT_MSG(false, "retryBatch's step is gone from the history");
  return steps.front();
}

}  // namespace

// sarama main (282cd488) async_producer.go: asyncProducer.retryBatch
sim::Task<void> RetryBatchMain(StatePtr p, std::string topic, int32_t partition,
                               PartitionSetPtr pset, Error retry_err, bool already_muted) {
  std::shared_ptr<ProduceSet> set = co_await p->NewProduceSet();
  set->PutPartition(topic, partition, pset);
  for (MessagePtr& msg : pset->msgs) {
    if (msg->retries >= p->conf.producer.retry.max) {
      co_await p->ReturnErrors(pset->msgs, retry_err);
      if (already_muted) co_await p->muter->Unmute(set);
      co_return;
    }
    ++msg->retries;
  }
  // 4009ac0b: Retry.Backoff between attempts, as the partitionProducer
  // gives the other retry path.
  if (!pset->msgs.empty()) {
    const sim::Duration backoff = RetryBackoff(p->conf, pset->msgs[0]->retries);
    if (backoff.nanos() > 0) co_await p->sched().Sleep(backoff);
  }
  // A metadata refresh was requested before this was started.
  auto [leader, leader_err] = co_await p->client->Leader(topic, partition);
  if (leader_err) {
    for (MessagePtr& msg : pset->msgs) co_await p->ReturnError(msg, retry_err);
    if (already_muted) co_await p->muter->Unmute(set);
    co_return;
  }
  if (!already_muted) {
    const bool muted = co_await p->muter->WaitUntilMuted(set);
    if (!muted) {
      for (MessagePtr& msg : pset->msgs) co_await p->ReturnError(msg, retry_err);
      co_return;
    }
  }
  BrokerProducerPtr bp = co_await p->GetBrokerProducer(leader);
  p->Note(0x72657472 /*retr*/, static_cast<uint64_t>(pset->records_to_send.base_sequence.value),
          [&, l = leader] {
            return absl::StrCat("retryBatch ", topic, "/", partition,
                                " seq=", pset->records_to_send.base_sequence.value,
                                " n=", pset->msgs.size(), " (muted) to bridge of broker#", l->ID());
          });
  ProducerStep step =
      AsyncProducer::State::BatchStep(StepKind::kRetryBatch, topic, partition, *pset);
  step.broker = leader->ID();
  // The step goes in when retryBatch offers the batch, before the select:
  // the bridge that takes it may write its request before this goroutine
  // runs again, and the rules read a retryBatch step before the send it
  // leads to. A shutdown that wins the select turns it into the failure,
  // at the time it happened.
  const size_t step_index = p->env.history != nullptr ? p->env.history->steps.size() : 0;
  const sim::Time offered_at = p->sched().now();
  p->Step(std::move(step));
  // Straight to the broker producer's bridge, past its run loop, unless
  // the producer shuts down first (6aaff07e).
  std::shared_ptr<ProduceSet> handoff = set;
  std::optional<bool> done;
  const int which = co_await sim::Select(p->sched(), sim::SendCase(bp->output, &handoff),
                                         sim::RecvCase(p->done, &done));
  if (which == 1 && p->env.history != nullptr) {
    ProducerStep& failed = OfferedStep(p->env.history->steps, step_index, offered_at, topic,
                                       partition, pset->msgs.empty() ? 0 : pset->msgs.front()->id);
    failed.error = Error::Of(ErrorKind::kShuttingDown).ToString();
    failed.at = p->sched().now();
  }
  if (which == 1) {
    p->Note(0x72657472 /*retr*/, 0, [&] {
      return absl::StrCat("retryBatch ", topic, "/", partition,
                          ": shutting down, batch failed and unmuted");
    });
    for (MessagePtr& msg : pset->msgs) {
      co_await p->ReturnError(msg, Error::Of(ErrorKind::kShuttingDown));
    }
    co_await p->muter->Unmute(set);
  }
  co_await p->UnrefBrokerProducer(leader, bp);  // Go: deferred
}

// sarama main (6aaff07e) async_producer.go: asyncProducer.shutdown
sim::Task<void> ShutdownMain(StatePtr p) {
  PRODSIM_ASSERT(p->done != nullptr);
  if (!p->closed) {
    p->closed = true;
    p->done->Close();
  }
  p->in_flight.Add(1);
  co_await p->input->Send(ControlMessage("", 0, kShutdown, 0));
  co_await p->in_flight.Wait();
  if (p->owns_client) co_await p->client->Close();
  co_await p->muter->Close();
  p->input->Close();
  p->retries->Close();
  p->errors->Close();
  p->successes->Close();
}

}  // namespace sarama
