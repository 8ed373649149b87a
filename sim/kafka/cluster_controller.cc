// kafka::Cluster, controller: metadata views and their propagation, leader
// election, crashes and restarts, and the fault hooks fault_models/ drives.
// (cluster.h describes the model.)

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/cluster_internal.h"

namespace kafka {

using cluster_internal::Contains;
using cluster_internal::Erase;

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
    const bool was_leader = before != b->view_.partitions.end() && before->second.leader == b->id_;
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
                        return absl::StrCat("broker-", b->id_.value, " metadata v", view->version);
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
                      static_cast<uint64_t>(p.leader.value) + 1, [&] {
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
  sched_.After(config_.zookeeper_session_timeout, [this, id, serial] { DetectCrash(id, serial); });
}

// kafka 2.6.3 KafkaController.onBrokerFailure -> onReplicasBecomeOffline:
// the dead broker leaves every ISR (the last member stays: the partition is
// offline), and the partitions it led get a new leader.
void Cluster::DetectCrash(BrokerId id, uint64_t crash_serial) {
  Broker& b = broker(id);
  if (b.crash_serial_ != crash_serial || !b.registered_) return;
  if (b.up_) return;  // restarted in the meantime and registered anew
  b.registered_ = false;
  sched_.trace().Note(
      sched_.now(), sched_.current_id(), 0x64746374 /*dtct*/, static_cast<uint64_t>(id.value),
      [&] { return absl::StrCat("controller: broker-", id.value, "'s session expired"); });
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
    // A crash: Log.recoverLog, then loadProducerState.
    Replica& replica = *r;
    replica.producer_state.Recover(replica.snapshots, replica.log_end, /*clean=*/false,
                                   sched_.now(), kProducerIdExpiration,
                                   [&](Offset from) { ReplayProducerState(replica, from); });
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
    return absl::FailedPreconditionError(
        absl::StrCat("broker-", b.value, " is the leader or not in the ISR of ", tp.ToString()));
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
  broker(b).response_faults_.push_back(
      ResponseFault{ResponseFault::Kind::kStall, api, count, hold});
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
      LogEntry e{sb.base_offset,
                 sb.batch.producer_id,
                 sb.batch.producer_epoch,
                 sb.batch.base_sequence,
                 {}};
      for (const Record& rec : sb.batch.records) e.record_ids.push_back(rec.record_id);
      out.push_back(std::move(e));
    }
  }
}

}  // namespace kafka
