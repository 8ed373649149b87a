// The ordering checks: what the producer's acknowledgements and the final
// logs say about the order and the uniqueness of what it wrote
// (acked-batches-in-order, log-sequences-contiguous, no-duplicates,
// per-partition-order).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::families {
namespace {

// ---------------------------------------------------------------------------
// acked-batches-in-order

// How `next` departs from `prev` + 1.
std::string AckJump(int64_t prev, int64_t next) {
  if (next == prev) return "repeat";
  if (next < prev) return "decrease";
  if (next - prev - 1 == 1) return absl::StrCat("gap: seq=", prev + 1, " missing");
  return absl::StrCat("gap: seq=", prev + 1, "..", next - 1, " missing");
}

class AckedBatchesInOrder final : public Check {
 public:
  std::string_view name() const override { return kAckedBatchesInOrder; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.idempotent) return std::nullopt;
    // topic, partition, epoch, and the produce call when the application
    // asked for order within a call only (concurrent calls: a client may
    // report a call when all its partitions are done, so two calls' acks
    // of one partition may come in either order).
    using Key = std::tuple<std::string_view, int32_t, int16_t, int64_t>;
    absl::btree_map<uint64_t, int64_t> call_of;
    if (r.order_within_call) {
      for (const ProducedMessage& m : r.produced) call_of.try_emplace(m.id, m.call);
    }
    absl::btree_map<Key, const sarama::AckEvent*> last;
    Witnesses w;
    std::string first;
    Subject subject;
    std::optional<absl::btree_set<uint64_t>> failed_may_be_written;
    for (const sarama::AckEvent& ack : r.producer.acks) {
      if (!ack.has_sequence) continue;
      const auto call = call_of.find(ack.id);
      auto [it, inserted] = last.try_emplace(Key{ack.topic, ack.partition, ack.producer_epoch,
                                                 call == call_of.end() ? 0 : call->second},
                                             &ack);
      if (inserted) continue;
      const sarama::AckEvent& prev = *it->second;
      it->second = &ack;
      if (kafka::InSequence(kafka::Sequence(prev.sequence), kafka::Sequence(ack.sequence))) {
        continue;
      }
      if (GapExplained(r, ack, prev, failed_may_be_written, call_of)) continue;
      const std::string jump = AckJump(prev.sequence, ack.sequence);
      if (first.empty()) {
        subject = AckSubject(ack);
        first = absl::StrCat(Tp(ack.topic, ack.partition), " epoch=", ack.producer_epoch,
                             " seq=", ack.sequence, " acked after seq=", prev.sequence, " (", jump,
                             ")");
      }
      w.Add([&] {
        return absl::StrCat(AckText(ack), " after seq=", prev.sequence, " (", jump,
                            "; seq=", prev.sequence, " was id=", prev.id, " acked ", At(prev.at),
                            ")");
      });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " acknowledgement(s) out of sequence order within a "
                                      "partition and epoch; first: ",
                                      first),
                         w, std::move(subject));
  }

 private:
  // A real client (wire mode): a gap `prev` -> `ack` whose every missing
  // sequence the log holds for a message that explains it: one the client
  // reported failed without saying it was not written (a real client
  // documents that a message failed in flight may still be in the log:
  // librdkafka's possibly_persisted, and Sarama and kafkajs, which say
  // nothing), so such a gap is the client's promise kept, not broken; or,
  // with order within a call only, a message of another call (several
  // application threads of the Java client share a partition's sequence
  // numbers, so one thread's acks skip the others'). The model's Sarama is
  // judged strictly, as before.
  static bool GapExplained(const RunRecord& r, const sarama::AckEvent& ack,
                           const sarama::AckEvent& prev,
                           std::optional<absl::btree_set<uint64_t>>& failed,
                           const absl::btree_map<uint64_t, int64_t>& call_of) {
    if (!r.client.has_value() || ack.sequence <= prev.sequence) return false;
    const auto call = call_of.find(ack.id);
    if (!failed.has_value()) {
      failed.emplace();
      for (const sarama::ErrorEvent& e : r.producer.errors) {
        if (!e.not_persisted) failed->insert(e.id);
      }
    }
    for (int64_t seq = int64_t{prev.sequence} + 1; seq < ack.sequence; ++seq) {
      bool explained = false;
      for (const kafka::AppendEvent& a : r.kafka.appends) {
        if (!a.leader || a.tp.topic != ack.topic || a.tp.partition.value != ack.partition ||
            a.epoch.value != ack.producer_epoch || a.first_seq.value > seq ||
            seq > a.last_seq.value) {
          continue;
        }
        const uint64_t id = a.record_ids[static_cast<size_t>(seq - a.first_seq.value)];
        const auto other = call_of.find(id);
        explained = failed->contains(id) || (call != call_of.end() && other != call_of.end() &&
                                             other->second != call->second);
        break;
      }
      if (!explained) return false;
    }
    return true;
  }
};

// ---------------------------------------------------------------------------
// log-sequences-contiguous

class LogSequencesContiguous final : public Check {
 public:
  std::string_view name() const override { return kLogSequencesContiguous; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.idempotent) return std::nullopt;
    Witnesses w;
    Subject subject;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      CheckPartition(r.kafka, tp, entries, w, &subject);
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " batch(es) in the final logs break a producer's sequence "
                                      "(each (pid, epoch) must start at seq=0 and continue "
                                      "without gap or repeat)"),
                         w, std::move(subject));
  }

 private:
  static void CheckPartition(const kafka::History& h, const TopicPartition& tp,
                             const std::vector<LogEntry>& entries, Witnesses& w, Subject* subject) {
    // The first offending batch is the subject.
    auto offend = [&](const LogEntry& e) {
      if (w.empty()) *subject = EntrySubject(h, tp, e);
    };
    // The last batch seen for each (producer id, epoch).
    absl::btree_map<std::pair<int64_t, int16_t>, const LogEntry*> last;
    for (const LogEntry& e : entries) {
      if (e.producer_id.IsNone() || e.record_ids.empty()) continue;
      if (e.first_seq.value < 0) {
        offend(e);
        w.Add([&] {
          return absl::StrCat(BatchText(h, tp, e), ": a producer id without a sequence");
        });
        continue;
      }
      auto [it, inserted] = last.try_emplace(std::pair(e.producer_id.value, e.epoch.value), &e);
      if (inserted) {
        if (e.first_seq.value != 0) {
          offend(e);
          w.Add([&] {
            return absl::StrCat(BatchText(h, tp, e), ": first batch of pid=", e.producer_id.value,
                                " epoch=", e.epoch.value, " starts at seq=", e.first_seq.value,
                                ", not 0");
          });
        }
        continue;
      }
      const LogEntry& prev = *it->second;
      it->second = &e;
      const kafka::Sequence prev_last = LastSeq(prev);
      if (kafka::InSequence(prev_last, e.first_seq)) continue;
      offend(e);
      w.Add([&] {
        return absl::StrCat(BatchText(h, tp, e), " after seq=", prev.first_seq.value, "..",
                            prev_last.value, " at offset=", prev.base_offset.value, " (",
                            LogJump(prev_last.value, e.first_seq.value), ")");
      });
    }
  }

  static std::string LogJump(int64_t prev_last, int64_t first) {
    if (first <= prev_last) return absl::StrCat("overlap: seq=", first, " already written");
    if (first - prev_last - 1 == 1) return absl::StrCat("gap: seq=", prev_last + 1, " missing");
    return absl::StrCat("gap: seq=", prev_last + 1, "..", first - 1, " missing");
  }
};

// ---------------------------------------------------------------------------
// no-duplicates

// Kafka's leader gives each appended batch the offsets after the log end
// (Log.append, LogValidator's assignOffsets), truncation keeps a prefix,
// and the model has no retention or compaction, so a final log covers
// 0..n-1 without a gap or an overlap. A failure is the cluster model's.
class LogOffsetsContiguous final : public Check {
 public:
  std::string_view name() const override { return kLogOffsetsContiguous; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    Witnesses w;
    Subject subject;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      int64_t next = 0;  // the offset the next batch must start at
      for (const LogEntry& e : entries) {
        PRODSIM_ASSERT(!e.record_ids.empty());
        const int64_t base = e.base_offset.value;
        if (base != next) {
          if (w.empty()) subject = EntrySubject(r.kafka, tp, e);
          w.Add([&, &tp = tp, next] {
            return absl::StrCat(Tp(tp.topic, tp.partition.value), " batch at offset ", base,
                                " where the log ends at ", next);
          });
        }
        next = base + static_cast<int64_t>(e.record_ids.size());
      }
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " batch(es) in the final logs not where the log ended: "
                                      "the cluster model broke Kafka's offset rule"),
                         w, std::move(subject));
  }
};

class NoDuplicates final : public Check {
 public:
  std::string_view name() const override { return kNoDuplicates; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.idempotent) return std::nullopt;
    struct Where {
      const TopicPartition* tp;
      const LogEntry* entry;
      size_t index;
    };
    absl::btree_map<uint64_t, Where> first;
    Witnesses w;
    Subject subject;
    std::vector<uint64_t> ids;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      for (const LogEntry& e : entries) {
        for (size_t i = 0; i < e.record_ids.size(); ++i) {
          const uint64_t id = e.record_ids[i];
          auto [it, inserted] = first.try_emplace(id, Where{&tp, &e, i});
          if (inserted) continue;
          if (ids.empty()) {
            subject = EntrySubject(r.kafka, tp, e);
            subject.ids = {id};
          }
          if (ids.size() < kWitnessesMax) ids.push_back(id);
          const Where& was = it->second;
          w.Add([&, &tp = tp] {
            return absl::StrCat("id=", id, " at ", RecordText(r.kafka, tp, e, i), " is already at ",
                                RecordText(r.kafka, *was.tp, *was.entry, was.index));
          });
        }
      }
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " duplicate record(s) in the final logs of an "
                                      "idempotent producer: ids ",
                                      FewIds(ids, w.total())),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// per-partition-order

class PerPartitionOrder final : public Check {
 public:
  std::string_view name() const override { return kPerPartitionOrder; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    // sarama config.go, Net.MaxOpenRequests: "message ordering is not
    // guaranteed if Producer.Idempotent is disabled" with more than one;
    // Kafka's max.in.flight.requests.per.connection says the same.
    if (!r.idempotent && r.max_open_requests > 1) return std::nullopt;
    const ProducedIndex index(r);
    Witnesses w;
    // Non-idempotent runs: the number (1-based) of the last partition in
    // which each produced message was placed, by produce position.
    std::vector<size_t> placed_in(r.produced.size(), 0);
    size_t partition_number = 0;
    Subject subject;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      ++partition_number;
      CheckPartition(r, index, tp, entries, partition_number, placed_in, w, &subject);
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(
        name(),
        absl::StrCat(w.total(), " record(s) in a final log come after a record produced later",
                     r.idempotent ? "" : " (first appearances only: not idempotent)"),
        w, std::move(subject));
  }

 private:
  struct Seen {
    uint64_t id;
    size_t index;  // position in produce order
    int64_t offset;
  };

  static void CheckPartition(const RunRecord& r, const ProducedIndex& index,
                             const TopicPartition& tp, const std::vector<LogEntry>& entries,
                             size_t partition_number, std::vector<size_t>& placed_in, Witnesses& w,
                             Subject* subject) {
    // The last record seen of each produce call (one for all calls, unless
    // the application asked for order within a call only).
    absl::btree_map<int64_t, Seen> last;
    for (const LogEntry& e : entries) {
      for (size_t i = 0; i < e.record_ids.size(); ++i) {
        const uint64_t id = e.record_ids[i];
        const std::optional<size_t> position = index.Find(id);
        if (!position.has_value()) continue;  // not the application's message
        if (!r.idempotent) {
          if (placed_in[*position] == partition_number) continue;  // a later copy
          placed_in[*position] = partition_number;
        }
        const Seen cur{id, *position, e.base_offset.value + static_cast<int64_t>(i)};
        const int64_t call = r.order_within_call ? r.produced[*position].call : 0;
        auto [it, first] = last.try_emplace(call, cur);
        std::optional<Seen> prev;
        if (!first) prev = std::exchange(it->second, cur);
        if (prev.has_value() && cur.index < prev->index) {
          if (w.empty()) {
            // The earlier-produced record, then the one it follows.
            *subject = EntrySubject(r.kafka, tp, e);
            subject->ids = {id, prev->id};
          }
          w.Add([&] {
            return absl::StrCat(tp.ToString(), " offset=", cur.offset, " ", Produced(r, cur),
                                " follows offset=", prev->offset, " ", Produced(r, *prev));
          });
        }
      }
    }
  }

  // "id=3 (produced #2 t=0.003s)".
  static std::string Produced(const RunRecord& r, const Seen& s) {
    return absl::StrCat("id=", s.id, " (produced #", s.index, " ", At(r.produced[s.index].at), ")");
  }
};

}  // namespace

std::unique_ptr<Check> MakeAckedBatchesInOrder() { return std::make_unique<AckedBatchesInOrder>(); }
std::unique_ptr<Check> MakeLogSequencesContiguous() {
  return std::make_unique<LogSequencesContiguous>();
}
std::unique_ptr<Check> MakeLogOffsetsContiguous() {
  return std::make_unique<LogOffsetsContiguous>();
}
std::unique_ptr<Check> MakeNoDuplicates() { return std::make_unique<NoDuplicates>(); }
std::unique_ptr<Check> MakePerPartitionOrder() { return std::make_unique<PerPartitionOrder>(); }

}  // namespace checks::families
