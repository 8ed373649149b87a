#include "sim/kafka/cluster.h"

#include <algorithm>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "sim/core/assert.h"
#include "sim/core/chan.h"

namespace kafka {
namespace {

bool Contains(const std::vector<BrokerId>& v, BrokerId b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}

void Erase(std::vector<BrokerId>& v, BrokerId b) {
  v.erase(std::remove(v.begin(), v.end(), b), v.end());
}

// What a broker of `version` lists in its ApiVersionsResponse, for the four
// APIs the model knows: Kafka 0.11.0, 2.0 (k2_0 stands for 2.0 to 2.4; this
// is 2.0's list, so 2.4's ApiVersions v3 and KIP-511 are left to k2_6) and
// 2.6.
std::vector<ApiVersionRange> SupportedApiVersions(KafkaVersion version) {
  switch (version) {
    case KafkaVersion::k0_11:
      return {{ApiKey::kProduce, 0, 3}, {ApiKey::kMetadata, 0, 4},
              {ApiKey::kApiVersions, 0, 1}, {ApiKey::kInitProducerId, 0, 0}};
    case KafkaVersion::k2_0:
      return {{ApiKey::kProduce, 0, 6}, {ApiKey::kMetadata, 0, 6},
              {ApiKey::kApiVersions, 0, 2}, {ApiKey::kInitProducerId, 0, 1}};
    case KafkaVersion::k2_6:
      return {{ApiKey::kProduce, 0, 8}, {ApiKey::kMetadata, 0, 9},
              {ApiKey::kApiVersions, 0, 3}, {ApiKey::kInitProducerId, 0, 3}};
  }
  PRODSIM_ASSERT_MSG(false, "KafkaVersion value outside the enum");
  return {};
}

}  // namespace

Broker::Broker(BrokerId id, net::NodeId node) : id_(id), node_(node) {}

const Replica* Broker::replica(const TopicPartition& tp) const {
  auto it = replicas_.find(tp);
  return it == replicas_.end() ? nullptr : it->second.get();
}

Replica* Broker::MutableReplica(const TopicPartition& tp) {
  auto it = replicas_.find(tp);
  return it == replicas_.end() ? nullptr : it->second.get();
}

bool Broker::Leads(const TopicPartition& tp) const {
  auto it = view_.partitions.find(tp);
  return it != view_.partitions.end() && it->second.leader == id_;
}

Cluster::Cluster(sim::Scheduler& sched, net::Network& network, ClusterConfig config,
                 History* history)
    : sched_(sched),
      network_(network),
      config_(std::move(config)),
      history_(history),
      prng_(sched.prng().Fork("kafka")),
      next_producer_id_(config_.first_producer_id),
      changed_(sched, "cluster.changed") {
  PRODSIM_ASSERT(config_.brokers >= 1);
  PRODSIM_ASSERT(history_ != nullptr);
  for (int32_t i = 0; i < config_.brokers; ++i) {
    const net::NodeId node = network_.AddNode(absl::StrCat("broker-", i));
    brokers_.push_back(std::make_unique<Broker>(BrokerId(i), node));
  }
  // Replica assignment: partition p of the t-th topic on brokers
  // (p + t + k) mod n, k = 0..rf-1; the first is the preferred leader.
  int32_t topic_index = 0;
  for (const TopicConfig& t : config_.topics) {
    PRODSIM_ASSERT(t.replication_factor >= 1);
    PRODSIM_ASSERT(t.replication_factor <= config_.brokers);
    for (int32_t p = 0; p < t.partitions; ++p) {
      TopicPartition tp{t.name, PartitionId(p)};
      PartitionState st;
      for (int32_t k = 0; k < t.replication_factor; ++k) {
        st.replicas.push_back(BrokerId((p + topic_index + k) % config_.brokers));
      }
      st.leader = st.replicas.front();
      st.isr = st.replicas;
      for (BrokerId b : st.replicas) {
        brokers_[static_cast<size_t>(b.value)]->replicas_.emplace(
            tp, std::make_unique<Replica>(config_.version));
      }
      partitions_.emplace(tp, std::move(st));
    }
    ++topic_index;
  }
  // Every broker starts with the initial metadata (the cluster was set up
  // before the run).
  const std::shared_ptr<const MetadataView> initial = NewView();
  for (auto& b : brokers_) ApplyView(b.get(), initial);
  for (auto& b : brokers_) {
    sched_.Go(absl::StrCat("broker-", b->id_.value, ".accept"), AcceptLoop(b.get()),
              {.daemon = true, .world = true});
    sched_.Go(absl::StrCat("broker-", b->id_.value, ".fetcher"), ReplicaFetcher(b.get()),
              {.daemon = true, .world = true});
  }
}

Cluster::~Cluster() = default;

Broker& Cluster::broker(BrokerId id) {
  PRODSIM_ASSERT(id.value >= 0);
  PRODSIM_ASSERT(id.value < broker_count());
  return *brokers_[static_cast<size_t>(id.value)];
}

const Broker& Cluster::broker(BrokerId id) const {
  PRODSIM_ASSERT(id.value >= 0);
  PRODSIM_ASSERT(id.value < broker_count());
  return *brokers_[static_cast<size_t>(id.value)];
}

std::vector<net::NodeId> Cluster::BootstrapNodes() const {
  std::vector<net::NodeId> out;
  for (const auto& b : brokers_) out.push_back(b->node_);
  return out;
}

const PartitionState* Cluster::partition(const TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : &it->second;
}

std::vector<TopicPartition> Cluster::AllPartitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, st] : partitions_) out.push_back(tp);
  return out;
}

// The brokers the controller believes alive: registered in ZooKeeper. A
// crashed broker stays among them until its session expires.
std::vector<BrokerId> Cluster::LiveBrokers() const {
  std::vector<BrokerId> out;
  for (const auto& b : brokers_) {
    if (b->registered_) out.push_back(b->id_);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Controller.

std::shared_ptr<const MetadataView> Cluster::NewView() {
  auto view = std::make_shared<MetadataView>();
  view->version = ++metadata_version_;
  view->partitions = partitions_;
  view->live_brokers = LiveBrokers();
  return view;
}

std::shared_ptr<const MetadataView> Cluster::Publish() {
  std::shared_ptr<const MetadataView> shared = NewView();
  for (auto& b : brokers_) {
    if (!b->up_) continue;
    Duration delay = Duration::Nanos(prng_.UniformInt(0, config_.metadata_delay_max.nanos()));
    delay += Perturb(kBuggifySlowMetadata, kBuggifySlowMetadataMax, *b);
    Broker* target = b.get();
    sched_.After(delay, [this, target, shared] {
      if (target->up_) ApplyView(target, shared);
    });
  }
  return shared;
}

void Cluster::ApplyView(Broker* b, const std::shared_ptr<const MetadataView>& view) {
  if (view->version <= b->view_.version) return;  // older news
  for (const auto& [tp, now_state] : view->partitions) {
    Replica* r = b->MutableReplica(tp);
    if (r == nullptr) continue;
    auto before = b->view_.partitions.find(tp);
    const bool was_leader =
        before != b->view_.partitions.end() && before->second.leader == b->id_;
    const bool is_leader = now_state.leader == b->id_;
    const bool epoch_changed = before == b->view_.partitions.end() ||
                               before->second.leader_epoch != now_state.leader_epoch;
    if (!is_leader && (was_leader || epoch_changed)) r->needs_truncation = true;
    if (is_leader && !was_leader) {
      // A new leader tracks its followers afresh from now.
      r->follower_end.clear();
      r->follower_caught_up.clear();
      for (BrokerId f : now_state.isr) r->follower_caught_up[f.value] = sched_.now();
    }
  }
  b->view_ = *view;
  // A smaller ISR can let the high watermark advance at once (Kafka's
  // Partition.maybeIncrementLeaderHW on an ISR change).
  for (auto& [tp, r] : b->replicas_) {
    if (b->Leads(tp)) UpdateHighWatermark(b, tp, *r);
  }
  changed_.Notify();
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x6d657461 /*meta*/,
                      static_cast<uint64_t>(b->id_.value) << 32 | view->version, [&] {
                        return absl::StrCat("broker-", b->id_.value, " metadata v",
                                            view->version);
                      });
}

void Cluster::ElectLeader(const TopicPartition& tp, PartitionState& p) {
  // Clean election: the first replica, in preference order, that is in the
  // ISR and alive as far as the controller knows (a crash it has not yet
  // noticed can be elected: the partition then stays unavailable until the
  // session expires), on a log directory that works. None: the partition is
  // offline until one comes back.
  p.leader = BrokerId::kNone;
  for (BrokerId r : p.replicas) {
    const Replica* rep = broker(r).replica(tp);
    if (Contains(p.isr, r) && broker(r).registered_ && (rep == nullptr || !rep->offline)) {
      p.leader = r;
      break;
    }
  }
  ++p.leader_epoch;
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x656c6563 /*elec*/,
                      static_cast<uint64_t>(p.leader.value + 1), [&] {
                        return absl::StrCat("controller: ", tp.ToString(), " leader ",
                                            p.leader.value, " epoch ", p.leader_epoch);
                      });
}

void Cluster::CrashBroker(BrokerId id) {
  Broker& b = broker(id);
  if (!b.up_) return;
  b.up_ = false;
  ++b.incarnation_;
  const uint64_t serial = ++b.crash_serial_;
  network_.SetNodeUp(b.node_, false);
  // In-memory state is gone; the log stays on disk.
  for (auto& [tp, r] : b.replicas_) {
    r->producer_state.Clear();
    r->follower_end.clear();
    r->follower_caught_up.clear();
  }
  b.injected_.clear();
  b.response_faults_.clear();
  changed_.Notify();
  // The controller notices when the broker's ZooKeeper session expires.
  if (config_.zookeeper_session_timeout.nanos() == 0) {
    DetectCrash(id, serial);
    return;
  }
  sched_.After(config_.zookeeper_session_timeout,
               [this, id, serial] { DetectCrash(id, serial); });
}

// kafka 2.6.3 KafkaController.onBrokerFailure -> onReplicasBecomeOffline:
// the dead broker leaves every ISR (the last member stays: the partition is
// offline), and the partitions it led get a new leader.
void Cluster::DetectCrash(BrokerId id, uint64_t crash_serial) {
  Broker& b = broker(id);
  if (b.crash_serial_ != crash_serial || !b.registered_) return;
  if (b.up_) return;  // restarted in the meantime and registered anew
  b.registered_ = false;
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x64746374 /*dtct*/,
                      static_cast<uint64_t>(id.value), [&] {
                        return absl::StrCat("controller: broker-", id.value,
                                            "'s session expired");
                      });
  for (auto& [tp, p] : partitions_) {
    if (Contains(p.isr, id) && p.isr.size() > 1) Erase(p.isr, id);
    if (p.leader == id) ElectLeader(tp, p);
  }
  Publish();
  changed_.Notify();
  if (b.restart_pending_) {
    b.restart_pending_ = false;
    Rejoin(b);
  }
}

void Cluster::RestartBroker(BrokerId id) {
  Broker& b = broker(id);
  if (b.up_) return;
  if (b.registered_) {
    // Its old session is still alive: the restarted broker cannot register
    // (the ephemeral node /brokers/ids/N exists) until it expires.
    b.restart_pending_ = true;
    return;
  }
  Rejoin(b);
}

void Cluster::Rejoin(Broker& b) {
  b.up_ = true;
  b.registered_ = true;
  network_.SetNodeUp(b.node_, true);
  for (auto& [tp, r] : b.replicas_) {
    if (r->offline) continue;  // the directory is still broken
    RebuildProducerState(*r);
    r->needs_truncation = true;
  }
  for (auto& [tp, p] : partitions_) {
    if (p.leader == BrokerId::kNone && Contains(p.replicas, b.id_)) ElectLeader(tp, p);
  }
  // The restarted broker learns the current metadata at once (it registers
  // with the controller); the others after the usual delay.
  b.view_ = MetadataView{};  // forget the pre-crash view
  ApplyView(&b, Publish());
}

absl::Status Cluster::MoveLeader(const TopicPartition& tp, BrokerId to) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) {
    return absl::NotFoundError(absl::StrCat("no partition ", tp.ToString()));
  }
  PartitionState& p = it->second;
  if (!Contains(p.isr, to) || !broker(to).registered_) {
    return absl::FailedPreconditionError(
        absl::StrCat("broker-", to.value, " is not a live ISR member of ", tp.ToString()));
  }
  p.leader = to;
  ++p.leader_epoch;
  Publish();
  return absl::OkStatus();
}

absl::Status Cluster::ShrinkIsr(const TopicPartition& tp, BrokerId b, Time until) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) {
    return absl::NotFoundError(absl::StrCat("no partition ", tp.ToString()));
  }
  PartitionState& p = it->second;
  if (p.leader == b || !Contains(p.isr, b)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "broker-", b.value, " is the leader or not in the ISR of ", tp.ToString()));
  }
  Erase(p.isr, b);
  broker(b).MutableReplica(tp)->fetch_paused_until = until;
  Publish();
  return absl::OkStatus();
}

bool Cluster::CausableError(ErrorCode e) {
  return e == ErrorCode::NOT_LEADER_OR_FOLLOWER || e == ErrorCode::NOT_ENOUGH_REPLICAS ||
         e == ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND || e == ErrorCode::REQUEST_TIMED_OUT;
}

void Cluster::CauseError(BrokerId b, std::optional<TopicPartition> tp, ErrorCode error,
                         int32_t count, Duration lasting) {
  PRODSIM_ASSERT(count >= 1);
  PRODSIM_ASSERT_MSG(CausableError(error), "no cause is modelled for this error");
  broker(b).injected_.push_back(
      InjectedError{ApiKey::kProduce, std::move(tp), error, count, false, lasting});
}

void Cluster::MockError(BrokerId b, ApiKey api, std::optional<TopicPartition> tp, ErrorCode error,
                        int32_t count) {
  PRODSIM_ASSERT(count >= 1);
  broker(b).injected_.push_back(InjectedError{api, std::move(tp), error, count, true, Duration()});
}

void Cluster::LoseResponses(BrokerId b, ApiKey api, int32_t count) {
  PRODSIM_ASSERT(count >= 1);
  broker(b).response_faults_.push_back(
      ResponseFault{ResponseFault::Kind::kLose, api, count, Duration()});
}

void Cluster::StallResponses(BrokerId b, ApiKey api, int32_t count, Duration hold) {
  PRODSIM_ASSERT(count >= 1);
  PRODSIM_ASSERT(hold.nanos() > 0);
  broker(b).response_faults_.push_back(ResponseFault{ResponseFault::Kind::kStall, api, count, hold});
}

void Cluster::MockDropResponses(BrokerId b, int32_t count) {
  PRODSIM_ASSERT(count >= 1);
  broker(b).response_faults_.push_back(
      ResponseFault{ResponseFault::Kind::kMockDrop, std::nullopt, count, Duration()});
}

void Cluster::UsedCountFault(Time until) {
  if (count_fault_hook_) count_fault_hook_(until);
}

void Cluster::FailLogDir(BrokerId id, std::optional<TopicPartition> only) {
  Broker& b = broker(id);
  std::vector<TopicPartition> failed;
  for (auto& [tp, r] : b.replicas_) {
    if (only.has_value() && tp != *only) continue;
    if (r->offline) continue;
    r->offline = true;
    r->producer_state.Clear();
    failed.push_back(tp);
  }
  if (failed.empty()) return;
  changed_.Notify();  // acks=all requests waiting on the replica end now
  // kafka 2.6.3 KafkaController.onBrokerLogDirFailure: the replicas answer
  // LeaderAndIsr with KAFKA_STORAGE_ERROR and become OfflineReplica, which
  // leaves the ISR (the last member stays: the partition is then offline)
  // and gives the partitions they led a new leader.
  for (const TopicPartition& tp : failed) {
    PartitionState& p = partitions_.at(tp);
    if (Contains(p.isr, id) && p.isr.size() > 1) Erase(p.isr, id);
    if (p.leader == id) ElectLeader(tp, p);
  }
  Publish();
}

void Cluster::DelayProcessing(BrokerId b, Duration extra, Time until) {
  broker(b).extra_processing_ = extra;
  broker(b).extra_processing_until_ = until;
}

void Cluster::PauseFetching(BrokerId b, Time until) {
  broker(b).fetch_paused_until_ = until;
  changed_.Notify();
}

void Cluster::RecordFault(std::string description, bool healed) {
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x6661756c /*faul*/, healed ? 1 : 0,
                      [&] { return absl::StrCat(healed ? "heal: " : "fault: ", description); });
  history_->faults.push_back(FaultEvent{sched_.now(), std::move(description), healed});
}

void Cluster::SnapshotLogs() {
  for (const auto& [tp, p] : partitions_) {
    // The leader's committed prefix; for an offline partition, the replica
    // with the highest high watermark.
    // A replica on a failed directory cannot be read; it counts only when
    // there is no other.
    const Replica* best = nullptr;
    for (BrokerId r : p.replicas) {
      const Replica* rep = broker(r).replica(tp);
      if (rep->offline && best != nullptr) continue;
      if (r == p.leader) {
        best = rep;
        break;
      }
      if (best == nullptr || rep->high_watermark > best->high_watermark) best = rep;
    }
    // What was committed anywhere is committed: a new leader's own high
    // watermark can still lag the old leader's (it learns it on the next
    // fetch round), but its log holds every committed record (clean
    // election), so a run that ends right after a failover must not
    // count those records as lost.
    Offset committed = best->high_watermark;
    for (BrokerId r : p.replicas) {
      committed = std::max(committed, broker(r).replica(tp)->high_watermark);
    }
    committed = std::min(committed, best->log_end);
    std::vector<LogEntry>& out = history_->final_logs[tp];
    out.clear();
    for (const StoredBatch& sb : best->log) {
      if (sb.base_offset >= committed) break;
      LogEntry e{sb.base_offset, sb.batch.producer_id, sb.batch.producer_epoch,
                 sb.batch.base_sequence, {}};
      for (const Record& rec : sb.batch.records) e.record_ids.push_back(rec.record_id);
      out.push_back(std::move(e));
    }
  }
}

// ---------------------------------------------------------------------------
// Replication.

// A follower's fetcher thread (Kafka's ReplicaFetcherThread) for all the
// partitions it follows, as a long poll: after each round it waits until the
// cluster changed, or replica.fetch.wait.max (a caught-up follower's empty
// fetch, which still counts as caught up), whichever is first. The fetch
// interval stands for the fetch round trip.
sim::Task<void> Cluster::ReplicaFetcher(Broker* b) {
  const Duration poll = std::min(config_.replica_fetch_wait_max,
                                 Duration::Nanos(config_.replica_lag_time_max.nanos() / 2));
  for (;;) {
    Duration round = config_.replica_fetch_interval;
    if (b->up_) round += Perturb(kBuggifySlowFetch, kBuggifySlowFetchMax, *b);
    co_await sched_.Sleep(round);
    if (b->up_) {
      const bool paused = sched_.now() < b->fetch_paused_until_;
      for (auto& [tp, r] : b->replicas_) {
        auto it = b->view_.partitions.find(tp);
        if (it == b->view_.partitions.end()) continue;
        if (r->offline) continue;  // a failed directory: served no more
        const BrokerId leader = it->second.leader;
        if (leader == b->id_) {
          CheckIsrShrink(b, tp, *r);
          continue;
        }
        if (leader == BrokerId::kNone || paused) continue;
        if (sched_.now() < r->fetch_paused_until) continue;
        Broker& l = broker(leader);
        // A fetch reaches only a live broker that knows it leads (else Kafka
        // answers NOT_LEADER / FENCED_LEADER_EPOCH and the follower retries),
        // from a replica it can still read (else KAFKA_STORAGE_ERROR).
        if (!l.up_ || !l.Leads(tp) || l.replica(tp)->offline) continue;
        FetchFrom(b, &l, tp);
      }
    }
    if (FetchHasWork(b)) continue;
    Duration wait = poll;
    const Time now = sched_.now();
    if (b->fetch_paused_until_ > now) wait = std::min(wait, b->fetch_paused_until_ - now);
    for (const auto& [tp, r] : b->replicas_) {
      if (r->fetch_paused_until > now) wait = std::min(wait, r->fetch_paused_until - now);
    }
    co_await changed_.Wait(wait);
  }
}

bool Cluster::FetchHasWork(const Broker* b) const {
  if (!b->up_ || sched_.now() < b->fetch_paused_until_) return false;
  // The replicas and the view's partitions are both in TopicPartition
  // order: one pass over the two finds each replica's partition, where a
  // search per replica made this function a third of a run with 300
  // partitions. Nothing here changes either map.
  auto it = b->view_.partitions.begin();
  const auto view_end = b->view_.partitions.end();
  for (const auto& [tp, r] : b->replicas_) {
    while (it != view_end && it->first < tp) ++it;
    if (it == view_end) break;  // no later replica is in the view either
    if (tp < it->first) continue;
    const BrokerId leader = it->second.leader;
    if (leader == b->id_ || leader == BrokerId::kNone) continue;
    if (sched_.now() < r->fetch_paused_until || r->offline) continue;
    const Broker& l = broker(leader);
    if (!l.up_ || !l.Leads(tp)) continue;
    const Replica& lr = *l.replica(tp);
    if (lr.offline) continue;
    auto end = lr.follower_end.find(b->id_.value);
    const bool leader_knows = end != lr.follower_end.end() && end->second == r->log_end;
    const PartitionState& p = partitions_.at(tp);
    if (r->needs_truncation || lr.log_end != r->log_end || !leader_knows ||
        r->high_watermark < std::min(lr.high_watermark, r->log_end) ||
        (!Contains(p.isr, b->id_) && r->log_end >= lr.high_watermark)) {
      return true;
    }
  }
  return false;
}

Duration Cluster::Perturb(const sim::BuggifySite& site, Duration max, const Broker& b) {
  if (buggify_ == nullptr || !buggify_->Fires(site)) return Duration();
  const Duration extra = buggify_->Extra(site, max);
  PRODSIM_ASSERT(extra.nanos() > 0);
  sched_.trace().Note(sched_.now(), sched_.current_id(),
                      sim::Fnv1a64(site.name) ^ static_cast<uint64_t>(b.id_.value),
                      static_cast<uint64_t>(extra.nanos()), [&] {
                        return absl::StrCat("buggify ", std::string(site.name), " broker-",
                                            b.id_.value, ": +", extra.ToString());
                      });
  return extra;
}

void Cluster::Truncate(Broker* b, Replica& r, const TopicPartition& tp, size_t keep_batches) {
  if (keep_batches >= r.log.size()) return;
  const Offset new_end = r.log[keep_batches].base_offset;
  r.log.resize(keep_batches);
  r.log_end = new_end;
  if (r.high_watermark > new_end) r.high_watermark = new_end;
  RebuildProducerState(r);
  history_->truncations.push_back(TruncateEvent{sched_.now(), b->id_, tp, new_end});
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x7472756e /*trun*/,
                      static_cast<uint64_t>(new_end.value), [&] {
                        return absl::StrCat("broker-", b->id_.value, " truncates ",
                                            tp.ToString(), " to ", new_end.value);
                      });
}

void Cluster::RebuildProducerState(Replica& r) {
  r.producer_state.Clear();
  for (const StoredBatch& sb : r.log) {
    if (!sb.batch.idempotent()) continue;
    r.producer_state.Update(sb.batch.producer_id, sb.batch.producer_epoch, sb.batch.base_sequence,
                            sb.batch.last_sequence(), sb.base_offset, sb.last_offset(),
                            sb.append_time);
  }
}

void Cluster::FetchFrom(Broker* follower, Broker* leader, const TopicPartition& tp) {
  Replica& f = *follower->MutableReplica(tp);
  Replica& l = *leader->MutableReplica(tp);
  const Offset f_end_before = f.log_end;
  const Offset f_hw_before = f.high_watermark;
  const Offset l_hw_before = l.high_watermark;
  const bool truncating = f.needs_truncation;
  if (f.needs_truncation) {
    // Keep the longest prefix on which both logs agree (same batches
    // written in the same leader epoch), drop the rest.
    size_t agree = 0;
    while (agree < f.log.size() && agree < l.log.size() &&
           f.log[agree].base_offset == l.log[agree].base_offset &&
           f.log[agree].leader_epoch == l.log[agree].leader_epoch &&
           f.log[agree].batch.record_count() == l.log[agree].batch.record_count()) {
      ++agree;
    }
    Truncate(follower, f, tp, agree);
    f.needs_truncation = false;
  }
  for (size_t i = f.log.size(); i < l.log.size(); ++i) {
    const StoredBatch& sb = l.log[i];
    PRODSIM_ASSERT(sb.base_offset == f.log_end);
    f.log.push_back(sb);
    f.log_end = Offset(sb.last_offset().value + 1);
    if (sb.batch.idempotent()) {
      f.producer_state.Update(sb.batch.producer_id, sb.batch.producer_epoch,
                              sb.batch.base_sequence, sb.batch.last_sequence(), sb.base_offset,
                              sb.last_offset(), sb.append_time);
    }
    AppendEvent e{sched_.now(), follower->id_, false, tp, sb.base_offset,
                  sb.batch.producer_id, sb.batch.producer_epoch, sb.batch.base_sequence,
                  sb.batch.last_sequence(), {}};
    for (const Record& rec : sb.batch.records) e.record_ids.push_back(rec.record_id);
    history_->appends.push_back(std::move(e));
  }
  // Leader side of the fetch: the follower's progress.
  auto known = l.follower_end.find(follower->id_.value);
  bool changed = truncating || f.log_end != f_end_before || known == l.follower_end.end() ||
                 known->second != f.log_end;
  l.follower_end[follower->id_.value] = f.log_end;
  if (f.log_end == l.log_end) l.follower_caught_up[follower->id_.value] = sched_.now();
  PartitionState& p = partitions_.at(tp);
  if (!Contains(p.isr, follower->id_) && f.log_end >= l.high_watermark &&
      p.leader == leader->id_) {
    // ISR expansion (kafka 2.6.3 Partition.maybeExpandIsr): the leader
    // makes it and knows at once; the others learn it later.
    p.isr.push_back(follower->id_);
    ApplyView(leader, Publish());
    changed = true;
  }
  UpdateHighWatermark(leader, tp, l);
  f.high_watermark = std::min(l.high_watermark, f.log_end);
  changed = changed || f.high_watermark != f_hw_before || l.high_watermark != l_hw_before;
  if (changed) changed_.Notify();
}

void Cluster::UpdateHighWatermark(Broker* leader, const TopicPartition& tp, Replica& r) {
  const PartitionState& view = leader->view_.partitions.at(tp);
  Offset hw = r.log_end;
  for (BrokerId m : view.isr) {
    if (m == leader->id_) continue;
    auto it = r.follower_end.find(m.value);
    const Offset end = it == r.follower_end.end() ? Offset(0) : it->second;
    hw = std::min(hw, end);
  }
  if (hw > r.high_watermark) r.high_watermark = hw;
  PRODSIM_ASSERT(r.high_watermark <= r.log_end);
}

void Cluster::CheckIsrShrink(Broker* leader, const TopicPartition& tp, Replica& r) {
  PartitionState& p = partitions_.at(tp);
  if (p.leader != leader->id_) return;  // the controller moved on already
  std::vector<BrokerId> lagging;
  for (BrokerId m : p.isr) {
    if (m == leader->id_) continue;
    auto it = r.follower_caught_up.find(m.value);
    const Time last = it == r.follower_caught_up.end() ? Time() : it->second;
    if (sched_.now() - last > config_.replica_lag_time_max) lagging.push_back(m);
  }
  if (lagging.empty()) return;
  // kafka 2.6.3 Partition.maybeShrinkIsr: the leader shrinks the ISR itself
  // and knows at once; the others learn it later.
  for (BrokerId m : lagging) Erase(p.isr, m);
  ApplyView(leader, Publish());
}

// ---------------------------------------------------------------------------
// Serving requests.

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
    case ApiKey::kMetadata:
      co_return HandleMetadata(b, static_cast<const MetadataRequest&>(m));
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
  auto own = std::find_if(supported.begin(), supported.end(), [](const ApiVersionRange& v) {
    return v.api == ApiKey::kApiVersions;
  });
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
    default:
      PRODSIM_ASSERT_MSG(false, "no cause is modelled for this error");
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
      PartitionMetadata pm{ErrorCode::NONE, tp.partition, st.leader, st.leader_epoch,
                           st.replicas, st.isr};
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
    ++history_->batches_by_compression[static_cast<size_t>(batch.compression)];
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
    history_->notes.push_back(NoteEvent{
        sched_.now(), absl::StrCat("broker-", b->id_.value, " refused a batch for ", tp.ToString(),
                                   " with ", ErrorCodeName(batch.invalid), ": ",
                                   batch.invalid_why),
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
  AppendEvent e{sched_.now(), b->id_, true, tp, sb.base_offset, batch.producer_id,
                batch.producer_epoch, batch.base_sequence, batch.last_sequence(), {}};
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
  absl::btree_map<TopicPartition, Offset> waiting;
  absl::btree_set<TopicPartition> duplicates;
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
