// kafka::Cluster, serving requests: each broker's accept loop and connections,
// response faults, and the ApiVersions, Metadata and Produce handlers.
// (cluster.h describes the model.)

#include <algorithm>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "sim/core/chan.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/cluster_internal.h"

namespace kafka {

using cluster_internal::Contains;
using cluster_internal::Erase;

namespace {

// What a broker of `version` lists in its ApiVersionsResponse, for the four
// APIs the model knows: Kafka 0.11.0, 2.0 (k2_0 stands for 2.0 to 2.4; this
// is 2.0's list, so 2.4's ApiVersions v3 and KIP-511 are left to k2_6) and
// 2.6.
std::vector<ApiVersionRange> SupportedApiVersions(KafkaVersion version) {
  switch (version) {
    case KafkaVersion::k0_11:
      return {{ApiKey::kProduce, 0, 3},
              {ApiKey::kMetadata, 0, 4},
              {ApiKey::kApiVersions, 0, 1},
              {ApiKey::kInitProducerId, 0, 0}};
    case KafkaVersion::k2_0:
      return {{ApiKey::kProduce, 0, 6},
              {ApiKey::kMetadata, 0, 6},
              {ApiKey::kApiVersions, 0, 2},
              {ApiKey::kInitProducerId, 0, 1}};
    case KafkaVersion::k2_6:
      return {{ApiKey::kProduce, 0, 8},
              {ApiKey::kMetadata, 0, 9},
              {ApiKey::kApiVersions, 0, 3},
              {ApiKey::kInitProducerId, 0, 3}};
  }
  PRODSIM_ASSERT_MSG(false, "KafkaVersion value outside the enum");
  return {};
}

}  // namespace

sim::Task<void> Cluster::AcceptLoop(Broker* b) {
  sim::Chan<net::Endpoint>* accept = network_.Listen(b->node_);
  for (;;) {
    std::optional<net::Endpoint> ep = co_await accept->Recv();
    if (!ep) co_return;
    sched_.Go(absl::StrCat("broker-", b->id_.value, ".conn-", ep->id()),
              Serve(b, *ep, b->incarnation_), {.daemon = true, .world = true});
  }
}

sim::Task<void> Cluster::Serve(Broker* b, net::Endpoint ep, uint64_t incarnation) {
  for (;;) {
    std::optional<net::PayloadPtr> in = co_await ep.Recv();
    if (!in || b->incarnation_ != incarnation) co_return;
    const auto* m = dynamic_cast<const Message*>(in->get());
    PRODSIM_ASSERT_MSG(m != nullptr, "a non-Kafka payload reached a broker");
    Duration cost = config_.request_processing;
    if (sched_.now() < b->extra_processing_until_) cost += b->extra_processing_;
    cost += Perturb(kBuggifySlowRequest, kBuggifySlowRequestMax, *b);
    co_await sched_.Sleep(cost);
    if (b->incarnation_ != incarnation) co_return;  // crashed meanwhile
    net::PayloadPtr out = co_await Handle(b, *m, incarnation);
    if (b->incarnation_ != incarnation) co_return;
    if (out == nullptr) continue;  // acks=0
    const Time processed = sched_.now();
    const std::optional<ResponseFault> fault = TakeResponseFault(b, m->api);
    if (!fault) {
      // The client closed the connection while this request was being
      // handled: Kafka 2.6 goes on with the requests it had already read
      // from a connection its peer closed, one by one, only until it tries
      // to send a response (Selector.close with CloseMode.GRACEFUL keeps
      // the channel "until a send fails or all outstanding receives are
      // processed"); the send fails, the channel closes, and the requests
      // behind it are never handled.
      if (!ep.Send(std::move(out))) {
        MarkResponses(b, m->correlation_id, processed, ResponseFate::kLate);
        co_return;
      }
      continue;
    }
    switch (fault->kind) {
      case ResponseFault::Kind::kMockDrop:
        MarkResponses(b, m->correlation_id, processed, ResponseFate::kMockDropped);
        continue;
      case ResponseFault::Kind::kLose:
        // Written, then the connection breaks before the bytes arrive.
        MarkResponses(b, m->correlation_id, processed, ResponseFate::kLost);
        ep.Close();
        co_return;
      case ResponseFault::Kind::kStall:
        co_await sched_.Sleep(fault->hold);
        if (b->incarnation_ != incarnation) co_return;
        if (!ep.Send(std::move(out))) {
          MarkResponses(b, m->correlation_id, processed, ResponseFate::kLate);
          co_return;
        }
        continue;
    }
  }
}

std::optional<ResponseFault> Cluster::TakeResponseFault(Broker* b, ApiKey api) {
  for (auto it = b->response_faults_.begin(); it != b->response_faults_.end(); ++it) {
    if (it->api.has_value() && *it->api != api) continue;
    ResponseFault f = *it;
    if (--it->remaining == 0) b->response_faults_.erase(it);
    UsedCountFault(sched_.now() + f.hold);
    return f;
  }
  return std::nullopt;
}

// The History's records of the response to `correlation_id`, made at
// `processed` (correlation ids repeat across connections, times do not
// within one broker's connection).
void Cluster::MarkResponses(const Broker* b, int32_t correlation_id, Time processed,
                            ResponseFate fate) {
  for (ResponseEvent& r : history_->responses) {
    if (r.broker == b->id_ && r.correlation_id == correlation_id && r.at == processed) {
      r.fate = fate;
    }
  }
}

sim::Task<net::PayloadPtr> Cluster::Handle(Broker* b, const Message& m, uint64_t incarnation) {
  switch (m.api) {
    case ApiKey::kMetadata: co_return HandleMetadata(b, static_cast<const MetadataRequest&>(m));
    case ApiKey::kInitProducerId: {
      auto r = std::make_shared<InitProducerIdResponse>();
      r->api = m.api;
      r->is_response = true;
      r->correlation_id = m.correlation_id;
      if (auto injected = TakeMockError(b, m.api, nullptr)) {
        r->error = *injected;
      } else {
        r->producer_id = ProducerId(next_producer_id_++);
        r->producer_epoch = Epoch(0);
      }
      ResponseEvent e;
      e.at = sched_.now();
      e.broker = b->id_;
      e.api = m.api;
      e.correlation_id = m.correlation_id;
      e.error = r->error;
      e.base_offset = Offset::kNone;
      history_->responses.push_back(std::move(e));
      co_return r;
    }
    case ApiKey::kApiVersions:
      co_return HandleApiVersions(static_cast<const ApiVersionsRequest&>(m));
    case ApiKey::kProduce: {
      auto r = co_await HandleProduce(b, static_cast<const ProduceRequest&>(m), incarnation);
      co_return r;
    }
  }
  co_return nullptr;
}

// Kafka's KafkaApis.handleApiVersionsRequest: a request newer than the
// broker knows is answered in the v0 format with UNSUPPORTED_VERSION and,
// from 2.4 on (KIP-511), ApiVersions' own range so that the client can ask
// again at a version both know.
std::shared_ptr<ApiVersionsResponse> Cluster::HandleApiVersions(const ApiVersionsRequest& m) {
  auto r = NewResponse<ApiVersionsResponse>(m);
  std::vector<ApiVersionRange> supported = SupportedApiVersions(config_.version);
  auto own = std::find_if(supported.begin(), supported.end(),
                          [](const ApiVersionRange& v) { return v.api == ApiKey::kApiVersions; });
  PRODSIM_ASSERT(own != supported.end());
  if (m.version <= own->max_version) {
    r->api_keys = std::move(supported);
    return r;
  }
  r->error = ErrorCode::UNSUPPORTED_VERSION;
  if (config_.version == KafkaVersion::k2_6) r->api_keys.push_back(*own);
  return r;
}

std::optional<ErrorCode> Cluster::TakeMockError(Broker* b, ApiKey api, const TopicPartition* tp) {
  for (auto it = b->injected_.begin(); it != b->injected_.end(); ++it) {
    if (!it->mock || it->api != api) continue;
    if (it->tp.has_value() && (tp == nullptr || *it->tp != *tp)) continue;
    const ErrorCode e = it->error;
    if (--it->remaining == 0) b->injected_.erase(it);
    UsedCountFault(sched_.now());
    return e;
  }
  return std::nullopt;
}

// The causes of CauseError that act at this point of a produce request.
void Cluster::BringAbout(Broker* b, const TopicPartition& tp, int16_t acks, Time deadline,
                         bool after_append) {
  for (auto it = b->injected_.begin(); it != b->injected_.end(); ++it) {
    if (it->mock || it->api != ApiKey::kProduce) continue;
    if (it->tp.has_value() && *it->tp != tp) continue;
    const bool post = it->error == ErrorCode::REQUEST_TIMED_OUT ||
                      it->error == ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND;
    if (post != after_append) continue;
    if (it->error != ErrorCode::NOT_LEADER_OR_FOLLOWER && acks != -1) continue;
    const InjectedError e = *it;
    if (!TryCause(b, tp, e, deadline)) continue;
    if (--it->remaining == 0) b->injected_.erase(it);
    Duration lasting = e.lasting;
    if (e.error == ErrorCode::REQUEST_TIMED_OUT) lasting = deadline - sched_.now();
    if (e.error == ErrorCode::NOT_LEADER_OR_FOLLOWER) lasting = Duration();
    UsedCountFault(sched_.now() + lasting);
    return;
  }
}

// One cause, if it can act now; records what it did.
bool Cluster::TryCause(Broker* b, const TopicPartition& tp, const InjectedError& e, Time deadline) {
  PartitionState& p = partitions_.at(tp);
  if (p.leader != b->id_ || !b->Leads(tp)) return false;  // nothing to take from it
  std::string what;
  switch (e.error) {
    case ErrorCode::NOT_LEADER_OR_FOLLOWER: {
      // kafka 2.6.3: a preferred-replica election or reassignment moves the
      // leadership (PartitionStateMachine.electLeaderForPartitions); the old
      // leader answers NOT_LEADER_OR_FOLLOWER once it has processed its
      // LeaderAndIsr (Partition.makeFollower), here before this request.
      BrokerId to = BrokerId::kNone;
      for (BrokerId r : p.replicas) {
        if (r != b->id_ && Contains(p.isr, r) && broker(r).registered_ && broker(r).up_) {
          to = r;
          break;
        }
      }
      if (to == BrokerId::kNone) return false;
      p.leader = to;
      ++p.leader_epoch;
      what = absl::StrCat("leadership of ", tp.ToString(), " moves to broker-", to.value);
      break;
    }
    case ErrorCode::NOT_ENOUGH_REPLICAS:
    case ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      if (!ShrinkBelowMinIsr(b, tp, e.lasting)) return false;
      what = absl::StrCat("the ISR of ", tp.ToString(), " shrinks below min.insync.replicas for ",
                          e.lasting.ToString());
      break;
    case ErrorCode::REQUEST_TIMED_OUT: {
      // The followers stop fetching (a slow disk, a GC pause, a network
      // problem between brokers) until the request has timed out; they
      // stay in the ISR (replica.lag.time.max has not passed).
      if (p.isr.size() < 2) return false;
      const Time until = deadline + config_.replica_fetch_interval;
      for (BrokerId f : p.isr) {
        if (f == b->id_) continue;
        Replica* r = broker(f).MutableReplica(tp);
        r->fetch_paused_until = std::max(r->fetch_paused_until, until);
      }
      what = absl::StrCat("the followers of ", tp.ToString(), " stall until ", until.ToString());
      RecordFault(absl::StrCat("inject_error ", ErrorCodeName(e.error), " on broker-", b->id_.value,
                               ": ", what));
      return true;
    }
    default: PRODSIM_ASSERT_MSG(false, "no cause is modelled for this error");
  }
  // The leader learns the change before it goes on with the request; the
  // other brokers after the usual delay.
  ApplyView(b, Publish());
  RecordFault(absl::StrCat("inject_error ", ErrorCodeName(e.error), " on broker-", b->id_.value,
                           ": ", what));
  return true;
}

// kafka 2.6.3 Partition.maybeShrinkIsr, at the moment its lag check drops
// followers that had not caught up for replica.lag.time.max: the leader
// shrinks the ISR (and learns it at once); the dropped followers keep
// stalling for `lasting`, then catch up and rejoin.
bool Cluster::ShrinkBelowMinIsr(Broker* leader, const TopicPartition& tp, Duration lasting) {
  PartitionState& p = partitions_.at(tp);
  const size_t min_isr = static_cast<size_t>(config_.min_insync_replicas);
  if (min_isr < 2 || p.isr.size() < min_isr) return false;
  const Time until = sched_.now() + lasting;
  // The last in preference order go first.
  for (auto it = p.replicas.rbegin(); it != p.replicas.rend() && p.isr.size() >= min_isr; ++it) {
    if (*it == leader->id_ || !Contains(p.isr, *it)) continue;
    Erase(p.isr, *it);
    Replica* r = broker(*it).MutableReplica(tp);
    r->fetch_paused_until = std::max(r->fetch_paused_until, until);
  }
  PRODSIM_ASSERT(p.isr.size() < min_isr);
  return true;
}

std::shared_ptr<MetadataResponse> Cluster::HandleMetadata(Broker* b, const MetadataRequest& m) {
  auto r = std::make_shared<MetadataResponse>();
  r->api = m.api;
  r->is_response = true;
  r->correlation_id = m.correlation_id;
  const std::optional<ErrorCode> injected = TakeMockError(b, m.api, nullptr);
  for (BrokerId id : b->view_.live_brokers) r->brokers.push_back({id, broker(id).node_});
  r->controller = BrokerId(0);
  std::vector<std::string> names = m.topics;
  if (names.empty() && !m.no_topics) {
    for (const TopicConfig& t : config_.topics) names.push_back(t.name);
  }
  for (const std::string& name : names) {
    TopicMetadata t;
    t.name = name;
    for (const auto& [tp, st] : b->view_.partitions) {
      if (tp.topic != name) continue;
      PartitionMetadata pm{ErrorCode::NONE, tp.partition, st.leader,
                           st.leader_epoch, st.replicas,  st.isr};
      if (st.leader == BrokerId::kNone) {
        // kafka 2.0 to 2.6 MetadataCache.getPartitionMetadata: for a
        // partition without a live leader, a v6+ request gets
        // LISTENER_NOT_FOUND (it tests the answering broker, not the
        // leader, for liveness: KAFKA-10312, fixed in 2.7.0).
        pm.error = config_.version != KafkaVersion::k0_11 && m.version >= 6
                       ? ErrorCode::LISTENER_NOT_FOUND
                       : ErrorCode::LEADER_NOT_AVAILABLE;
      }
      t.partitions.push_back(std::move(pm));
    }
    if (t.partitions.empty()) t.error = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
    if (injected) t.error = *injected;
    r->topics.push_back(std::move(t));
  }
  return r;
}

ProducePartitionResponse Cluster::AppendAsLeader(Broker* b, const TopicPartition& tp,
                                                 const RecordBatch& batch, int16_t acks,
                                                 bool* duplicate) {
  ProducePartitionResponse out;
  Replica* r = b->MutableReplica(tp);
  if (r == nullptr) {
    const bool known = partitions_.contains(tp);
    out.error = known ? ErrorCode::NOT_LEADER_OR_FOLLOWER : ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
    return out;
  }
  // ReplicaManager.getPartitionOrException: a partition in an offline log
  // directory, before the leader check.
  if (r->offline) {
    out.error = ErrorCode::KAFKA_STORAGE_ERROR;
    return out;
  }
  if (!b->Leads(tp)) {
    out.error = ErrorCode::NOT_LEADER_OR_FOLLOWER;
    return out;
  }
  if (batch.compression >= 0 && batch.compression <= 4) {
    ++history_->batches_by_compression[static_cast<uint8_t>(batch.compression)];
  }
  // Wire mode: a batch that failed the codec's validation (a bad CRC, a
  // count that does not match, a stream that does not decompress) is
  // refused with its own answer and a note, before the empty-batch rule.
  const bool refused_by_codec = batch.invalid != ErrorCode::NONE;
  if (batch.records.empty() && !refused_by_codec) {
    out.error = ErrorCode::INVALID_RECORD;
    return out;
  }
  const PartitionState& view = b->view_.partitions.at(tp);
  if (acks == -1 && static_cast<int32_t>(view.isr.size()) < config_.min_insync_replicas) {
    out.error = ErrorCode::NOT_ENOUGH_REPLICAS;
    return out;
  }
  // Wire mode: a batch that failed the codec's validation (Log.append's
  // analyzeAndValidateRecords: CRC, offsets, compression) is refused here,
  // after the leader and ISR checks, before the producer state sees it.
  if (batch.invalid != ErrorCode::NONE) {
    out.error = batch.invalid;
    history_->notes.push_back(
        NoteEvent{sched_.now(),
                  absl::StrCat("broker-", b->id_.value, " refused a batch for ", tp.ToString(),
                               " with ", ErrorCodeName(batch.invalid), ": ", batch.invalid_why),
                  batch.invalid});
    return out;
  }
  if (batch.idempotent()) {
    const ProducerStateManager::AppendCheck check = r->producer_state.Check(
        batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.record_count());
    if (check.kind == ProducerStateManager::AppendCheck::Kind::kError) {
      out.error = check.error;
      return out;
    }
    if (check.kind == ProducerStateManager::AppendCheck::Kind::kDuplicate) {
      *duplicate = true;
      out.base_offset = check.duplicate_base_offset;
      out.log_start_offset = Offset(0);
      return out;
    }
  }
  StoredBatch sb{r->log_end, view.leader_epoch, sched_.now(), batch};
  r->log.push_back(sb);
  r->log_end = Offset(sb.last_offset().value + 1);
  changed_.Notify();
  if (batch.idempotent()) {
    r->producer_state.Update(batch.producer_id, batch.producer_epoch, batch.base_sequence,
                             batch.last_sequence(), sb.base_offset, sb.last_offset(),
                             sb.append_time);
  }
  AppendEvent e{sched_.now(),
                b->id_,
                true,
                tp,
                sb.base_offset,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.last_sequence(),
                {}};
  for (const Record& rec : batch.records) e.record_ids.push_back(rec.record_id);
  history_->appends.push_back(std::move(e));
  UpdateHighWatermark(b, tp, *r);
  out.base_offset = sb.base_offset;
  out.log_start_offset = Offset(0);
  return out;
}

sim::Task<std::shared_ptr<ProduceResponse>> Cluster::HandleProduce(Broker* b,
                                                                   const ProduceRequest& m,
                                                                   uint64_t incarnation) {
  auto resp = std::make_shared<ProduceResponse>();
  resp->api = m.api;
  resp->is_response = true;
  resp->correlation_id = m.correlation_id;
  const bool acks_valid = m.acks == -1 || m.acks == 0 || m.acks == 1;
  // Offsets each partition must reach for acks=all.
  ByPartition<Offset> waiting;
  PartitionSet duplicates;
  const Time deadline = sched_.now() + m.timeout;
  for (const auto& [tp, batch] : m.batches) {
    ProducePartitionResponse pr;
    if (auto injected = TakeMockError(b, m.api, &tp)) {
      pr.error = *injected;
    } else if (!acks_valid) {
      pr.error = ErrorCode::INVALID_REQUIRED_ACKS;
    } else {
      BringAbout(b, tp, m.acks, deadline, /*after_append=*/false);
      bool duplicate = false;
      pr = AppendAsLeader(b, tp, batch, m.acks, &duplicate);
      if (duplicate) duplicates.insert(tp);
      if (pr.error == ErrorCode::NONE) {
        BringAbout(b, tp, m.acks, deadline, /*after_append=*/true);
      }
      // Kafka (ReplicaManager.appendRecords) requires the high watermark to
      // pass lastOffset + 1 for every successful partition, a duplicate
      // included: a resend is answered with the original batch's offsets
      // only once that batch is committed (Log.append returns them as the
      // append's own), never while it could still be truncated.
      if (m.acks == -1 && pr.error == ErrorCode::NONE && pr.base_offset.value >= 0) {
        waiting[tp] = Offset(pr.base_offset.value + batch.record_count());
      }
    }
    resp->partitions[tp] = pr;
  }
  // acks=all: wait until the high watermark passes every appended batch, the
  // request times out, or this broker stops leading.
  while (!waiting.empty()) {
    if (b->incarnation_ != incarnation) co_return nullptr;
    for (auto it = waiting.begin(); it != waiting.end();) {
      const Replica& r = *b->MutableReplica(it->first);
      ProducePartitionResponse& pr = resp->partitions[it->first];
      if (r.offline) {
        // DelayedProduce.tryComplete: getPartitionOrError is
        // KAFKA_STORAGE_ERROR once the directory failed.
        pr = ProducePartitionResponse{ErrorCode::KAFKA_STORAGE_ERROR, Offset::kNone, -1,
                                      Offset::kNone};
      } else if (!b->Leads(it->first)) {
        pr = ProducePartitionResponse{ErrorCode::NOT_LEADER_OR_FOLLOWER, Offset::kNone, -1,
                                      Offset::kNone};
      } else if (r.high_watermark >= it->second) {
        const auto isr = b->view_.partitions.at(it->first).isr.size();
        if (static_cast<int32_t>(isr) < config_.min_insync_replicas) {
          pr.error = ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND;
          pr.base_offset = Offset::kNone;
        }
      } else if (sched_.now() >= deadline) {
        pr = ProducePartitionResponse{ErrorCode::REQUEST_TIMED_OUT, Offset::kNone, -1,
                                      Offset::kNone};
      } else {
        ++it;
        continue;
      }
      it = waiting.erase(it);
    }
    if (waiting.empty()) break;
    // Kafka's DelayedProduce: re-checked whenever something changed.
    co_await changed_.Wait(deadline - sched_.now());
  }
  for (const auto& [tp, pr] : resp->partitions) {
    ResponseEvent e;
    e.at = sched_.now();
    e.broker = b->id_;
    e.api = m.api;
    e.correlation_id = m.correlation_id;
    e.tp = tp;
    e.error = pr.error;
    e.base_offset = pr.base_offset;
    if (const auto batch = m.batches.find(tp); batch != m.batches.end()) {
      e.epoch = batch->second.producer_epoch;
      e.first_seq = batch->second.base_sequence;
      e.duplicate = pr.error == ErrorCode::NONE && duplicates.contains(tp);
      if (e.duplicate || pr.error != ErrorCode::NONE) {
        for (const Record& rec : batch->second.records) e.record_ids.push_back(rec.record_id);
      }
    }
    history_->responses.push_back(std::move(e));
  }
  if (m.acks == 0) co_return nullptr;
  co_return resp;
}

}  // namespace kafka
