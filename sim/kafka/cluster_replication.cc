// kafka::Cluster, replication: the followers' fetchers, truncation, the high
// watermark and the ISR. (cluster.h describes the model.)

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/cluster_internal.h"

namespace kafka {

using cluster_internal::Contains;
using cluster_internal::Erase;

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
  r.producer_state.Reload(r.snapshots, r.log_end, sched_.now(), kProducerIdExpiration,
                          [&](Offset from) { ReplayProducerState(r, from); });
  history_->truncations.push_back(TruncateEvent{sched_.now(), b->id_, tp, new_end});
  sched_.trace().Note(sched_.now(), sched_.current_id(), 0x7472756e /*trun*/,
                      static_cast<uint64_t>(new_end.value), [&] {
                        return absl::StrCat("broker-", b->id_.value, " truncates ", tp.ToString(),
                                            " to ", new_end.value);
                      });
}

// The log from `from` on, into the producer state (Log.loadProducersFromLog).
void Cluster::ReplayProducerState(Replica& r, Offset from) {
  for (const StoredBatch& sb : r.log) {
    if (!sb.batch.idempotent() || sb.base_offset < from) continue;
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
      f.producer_state.Update(sb.batch.producer_id, sb.batch.producer_epoch, sb.batch.base_sequence,
                              sb.batch.last_sequence(), sb.base_offset, sb.last_offset(),
                              sb.append_time);
    }
    AppendEvent e{sched_.now(),
                  follower->id_,
                  false,
                  tp,
                  sb.base_offset,
                  sb.batch.producer_id,
                  sb.batch.producer_epoch,
                  sb.batch.base_sequence,
                  sb.batch.last_sequence(),
                  {}};
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
  if (!Contains(p.isr, follower->id_) && f.log_end >= l.high_watermark && p.leader == leader->id_) {
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

}  // namespace kafka
