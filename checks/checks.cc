// The property checks declared in check.h: one small class per property,
// each a pure function of a RunRecord.
//
// Every check walks the history once or twice, with sorted vectors or
// ordered maps keyed by plain values (O(n log n), never a hash container);
// text is built only for the witnesses that are kept, and lookups needed only
// for witness text (append times, where a record ended up) scan the history
// linearly, at most a few times per kept witness.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "checks/check.h"
#include "sim/core/assert.h"

namespace checks {
namespace {

using kafka::LogEntry;
using kafka::TopicPartition;

// ---------------------------------------------------------------------------
// Text helpers.

// This Abseil's string_view is its own type; StrCat takes only it.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// "t=1.234s": simulated seconds with 3, 6 or 9 decimals, as few as exact.
std::string At(sim::Time t) {
  const int64_t ns = t.nanos();
  if (ns < 0) return absl::StrCat("t=", t.ToString(), "s");
  const int64_t whole = ns / 1000000000;
  const int64_t frac = ns % 1000000000;
  if (frac % 1000000 == 0) return absl::StrFormat("t=%d.%03ds", whole, frac / 1000000);
  if (frac % 1000 == 0) return absl::StrFormat("t=%d.%06ds", whole, frac / 1000);
  return absl::StrFormat("t=%d.%09ds", whole, frac);
}

// "t/0".
std::string Tp(std::string_view topic, int32_t partition) {
  return absl::StrCat(Sv(topic), "/", partition);
}

// "3, 4, 5 and 7 more": the first few of `ids`, for an explanation line.
std::string FewIds(const std::vector<uint64_t>& ids, size_t total) {
  constexpr size_t kShown = 5;
  std::vector<uint64_t> shown(
      ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), kShown)));
  std::string out = absl::StrJoin(shown, ", ");
  if (total > shown.size()) absl::StrAppend(&out, " and ", total - shown.size(), " more");
  return out;
}

// Witnesses of one check: keeps the first kWitnessesMax, counts them all.
class Witnesses {
 public:
  // `make` runs only when the witness is kept.
  void Add(absl::FunctionRef<std::string()> make) {
    ++total_;
    if (kept_.size() < kWitnessesMax) kept_.push_back(make());
  }
  // Appends `other`'s kept witnesses after this one's, as room allows.
  void Merge(Witnesses other) {
    total_ += other.total_;
    for (std::string& w : other.kept_) {
      if (kept_.size() == kWitnessesMax) break;
      kept_.push_back(std::move(w));
    }
  }
  bool empty() const { return total_ == 0; }
  size_t total() const { return total_; }
  std::vector<std::string> Take() { return std::move(kept_); }

 private:
  size_t total_ = 0;
  std::vector<std::string> kept_;
};

// The subject of an acknowledgement.
Subject AckSubject(const sarama::AckEvent& ack) {
  Subject s;
  s.at = ack.at;
  s.topic = ack.topic;
  s.partition = ack.partition;
  s.ids = {ack.id};
  if (ack.has_sequence) {
    s.epoch = ack.producer_epoch;
    s.sequence = ack.sequence;
  }
  return s;
}

// Takes the witnesses out of `w`.
Violation MakeViolation(std::string_view check, std::string explanation, Witnesses& w,
                        Subject subject = {}) {
  PRODSIM_ASSERT(!w.empty());
  return Violation{std::string(check), std::move(explanation), w.Take(), std::move(subject)};
}

// ---------------------------------------------------------------------------
// History helpers (used for witness text only).

// When the batch `e` of `tp` was appended by a leader (the last such append,
// since an earlier one at the same offset may have been truncated away).
std::optional<sim::Time> AppendTime(const kafka::History& h, const TopicPartition& tp,
                                    const LogEntry& e) {
  for (auto it = h.appends.rbegin(); it != h.appends.rend(); ++it) {
    if (it->leader && it->tp == tp && it->base_offset == e.base_offset &&
        it->producer_id == e.producer_id && it->epoch == e.epoch && it->first_seq == e.first_seq) {
      return it->at;
    }
  }
  return std::nullopt;
}

std::string AppendedText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e) {
  const std::optional<sim::Time> at = AppendTime(h, tp, e);
  return at.has_value() ? absl::StrCat(" appended ", At(*at)) : std::string();
}

// The last sequence of a batch of `e`. REQUIRES: e.first_seq >= 0, a record.
kafka::Sequence LastSeq(const LogEntry& e) {
  PRODSIM_ASSERT(!e.record_ids.empty());
  PRODSIM_ASSERT(e.record_ids.size() <= static_cast<size_t>(INT32_MAX));
  return kafka::LastSequence(e.first_seq, static_cast<int32_t>(e.record_ids.size()));
}

// "t/0 offset=12 pid=1 epoch=0 seq=5..9 first id=17 appended t=1.2s".
std::string BatchText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e) {
  std::string out = absl::StrCat(tp.ToString(), " offset=", e.base_offset.value,
                                 " pid=", e.producer_id.value, " epoch=", e.epoch.value);
  if (e.first_seq.value >= 0 && !e.record_ids.empty()) {
    absl::StrAppend(&out, " seq=", e.first_seq.value, "..", LastSeq(e).value);
  } else {
    absl::StrAppend(&out, " seq=", e.first_seq.value);
  }
  if (!e.record_ids.empty()) absl::StrAppend(&out, " first id=", e.record_ids.front());
  return absl::StrCat(out, AppendedText(h, tp, e));
}

// The subject of a batch of a final log: when a leader appended it.
Subject EntrySubject(const kafka::History& h, const TopicPartition& tp, const LogEntry& e) {
  Subject s;
  s.at = AppendTime(h, tp, e).value_or(sim::Time());
  s.topic = tp.topic;
  s.partition = tp.partition.value;
  s.ids = e.record_ids;
  s.epoch = e.epoch.value;
  s.sequence = e.first_seq.value;
  return s;
}

// "t/0 offset=9 (pid=1 epoch=0 seq=3 appended t=1.2s)": record `i` of `e`.
std::string RecordText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e,
                       size_t i) {
  const int64_t offset = e.base_offset.value + static_cast<int64_t>(i);
  std::string out = absl::StrCat(tp.ToString(), " offset=", offset, " (pid=", e.producer_id.value,
                                 " epoch=", e.epoch.value);
  if (e.first_seq.value >= 0) {
    absl::StrAppend(&out,
                    " seq=", kafka::IncrementSequence(e.first_seq, static_cast<int32_t>(i)).value);
  }
  return absl::StrCat(out, AppendedText(h, tp, e), ")");
}

// Where record `id` first appears in the final logs: "t/0 offset=9", or "".
std::string FindRecord(const kafka::History& h, uint64_t id) {
  for (const auto& [tp, entries] : h.final_logs) {
    for (const LogEntry& e : entries) {
      for (size_t i = 0; i < e.record_ids.size(); ++i) {
        if (e.record_ids[i] != id) continue;
        return absl::StrCat(tp.ToString(),
                            " offset=", e.base_offset.value + static_cast<int64_t>(i));
      }
    }
  }
  return std::string();
}

// One outcome the producer reported: an ack or an error (exactly one set).
struct OutcomeRef {
  uint64_t id;
  sim::Time at;
  const sarama::AckEvent* ack;
  const sarama::ErrorEvent* error;
};

// Every outcome, sorted by message id; for one id, acks before errors, each
// in report order. A sorted vector, not a map: this runs on every history.
std::vector<OutcomeRef> SortedOutcomes(const sarama::ProducerHistory& h) {
  std::vector<OutcomeRef> out;
  out.reserve(h.acks.size() + h.errors.size());
  for (const sarama::AckEvent& a : h.acks) out.push_back(OutcomeRef{a.id, a.at, &a, nullptr});
  for (const sarama::ErrorEvent& e : h.errors) out.push_back(OutcomeRef{e.id, e.at, nullptr, &e});
  std::stable_sort(out.begin(), out.end(),
                   [](const OutcomeRef& x, const OutcomeRef& y) { return x.id < y.id; });
  return out;
}

// The end of the run of outcomes with the id of outcomes[begin].
size_t GroupEnd(const std::vector<OutcomeRef>& outcomes, size_t begin) {
  size_t end = begin + 1;
  while (end < outcomes.size() && outcomes[end].id == outcomes[begin].id) ++end;
  return end;
}

std::string AckText(const sarama::AckEvent& a) {
  std::string out =
      absl::StrCat(At(a.at), " ack id=", a.id, " ", Tp(a.topic, a.partition), " offset=",
                   a.offset_known ? absl::StrCat(a.offset) : absl::StrCat("unknown(", a.offset, ")"));
  if (a.has_sequence) {
    absl::StrAppend(&out, " epoch=", a.producer_epoch, " seq=", a.sequence);
  }
  return out;
}

std::string ErrorText(const sarama::ErrorEvent& e) {
  return absl::StrCat(At(e.at), " error id=", e.id, " ", Tp(e.topic, e.partition), ": ",
                      e.err.ToString());
}

// The produced messages as (id, position in produce order), sorted by id,
// one entry per id (its first position if the application reused an id).
class ProducedIndex {
 public:
  explicit ProducedIndex(const RunRecord& r) {
    by_id_.reserve(r.produced.size());
    for (size_t i = 0; i < r.produced.size(); ++i) by_id_.emplace_back(r.produced[i].id, i);
    std::sort(by_id_.begin(), by_id_.end());
    by_id_.erase(std::unique(by_id_.begin(), by_id_.end(),
                             [](const auto& x, const auto& y) { return x.first == y.first; }),
                 by_id_.end());
  }
  // The position of `id` in produce order, if it was produced.
  std::optional<size_t> Find(uint64_t id) const {
    const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::pair(id, size_t{0}));
    if (it == by_id_.end() || it->first != id) return std::nullopt;
    return it->second;
  }
  const std::vector<std::pair<uint64_t, size_t>>& by_id() const { return by_id_; }

 private:
  std::vector<std::pair<uint64_t, size_t>> by_id_;
};

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
  std::string_view name() const override { return "acked-batches-in-order"; }
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
      auto [it, inserted] = last.try_emplace(
          Key{ack.topic, ack.partition, ack.producer_epoch, call == call_of.end() ? 0 : call->second},
          &ack);
      if (inserted) continue;
      const sarama::AckEvent& prev = *it->second;
      it->second = &ack;
      if (kafka::InSequence(kafka::Sequence(prev.sequence), kafka::Sequence(ack.sequence))) {
        continue;
      }
      if (GapOfFailedMessages(r, ack, prev, failed_may_be_written)) continue;
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
  // A real client (wire mode): a gap `prev` -> `ack` whose missing
  // sequences the log holds for messages the client reported failed without
  // saying they were not written. A real client documents that a message
  // failed in flight may still be in the log (librdkafka's
  // possibly_persisted, and Sarama and kafkajs, which say nothing), so such
  // a gap is the client's promise kept, not broken. The model's Sarama is
  // judged strictly, as before.
  static bool GapOfFailedMessages(const RunRecord& r, const sarama::AckEvent& ack,
                                  const sarama::AckEvent& prev,
                                  std::optional<absl::btree_set<uint64_t>>& failed) {
    if (!r.client.has_value() || ack.sequence <= prev.sequence) return false;
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
        explained = failed->contains(id);
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
  std::string_view name() const override { return "log-sequences-contiguous"; }
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

class NoDuplicates final : public Check {
 public:
  std::string_view name() const override { return "no-duplicates"; }
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
  std::string_view name() const override { return "per-partition-order"; }
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

// ---------------------------------------------------------------------------
// acked-are-durable

class AckedAreDurable final : public Check {
 public:
  std::string_view name() const override { return "acked-are-durable"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    // Only acks=all promises that an acknowledged message survives a
    // failover (with acks=1 losing it is Kafka's documented behaviour; with
    // acks=0 no broker confirmed anything).
    if (r.required_acks != -1) return std::nullopt;
    absl::btree_map<std::pair<std::string_view, int32_t>, const std::vector<LogEntry>*> logs;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      AssertSorted(entries);
      logs.try_emplace(std::pair(std::string_view(tp.topic), tp.partition.value), &entries);
    }
    Witnesses w;
    Subject subject;
    std::vector<uint64_t> ids;
    std::optional<PlacedIds> unknown_offset;
    for (const sarama::AckEvent& ack : r.producer.acks) {
      const auto it = logs.find(std::pair(std::string_view(ack.topic), ack.partition));
      const std::vector<LogEntry>* entries = it == logs.end() ? nullptr : it->second;
      // Written, offset unknown (a real client's ack without an offset):
      // anywhere in its partition's log will do.
      if (!ack.offset_known && entries != nullptr &&
          InLog(r, unknown_offset).contains({{ack.topic, ack.partition}, ack.id})) {
        continue;
      }
      const std::optional<uint64_t> held = entries == nullptr || !ack.offset_known
                                               ? std::nullopt
                                               : RecordAt(*entries, ack.offset);
      if (held.has_value() && *held == ack.id) continue;
      if (ids.empty()) {
        subject = AckSubject(ack);
        if (held.has_value()) subject.ids.push_back(*held);  // what the offset holds instead
      }
      if (ids.size() < kWitnessesMax) ids.push_back(ack.id);
      w.Add([&] { return absl::StrCat(AckText(ack), ": ", Problem(r, ack, entries, held)); });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " acknowledged message(s) not in the final "
                                      "log at the reported offset: ids ",
                                      FewIds(ids, w.total())),
                         w, std::move(subject));
  }

 private:
  // Binary search below needs base offsets in increasing order, which the
  // cluster's log snapshot guarantees.
  static void AssertSorted(const std::vector<LogEntry>& entries) {
    for (size_t i = 1; i < entries.size(); ++i) {
      PRODSIM_ASSERT(entries[i - 1].base_offset < entries[i].base_offset);
    }
  }

  using PlacedIds = absl::btree_set<std::pair<std::pair<std::string_view, int32_t>, uint64_t>>;
  // Every (partition, id) of the final logs, made on first use: only acks
  // without an offset need it.
  static const PlacedIds& InLog(const RunRecord& r, std::optional<PlacedIds>& cache) {
    if (cache.has_value()) return *cache;
    cache.emplace();
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      for (const LogEntry& e : entries) {
        for (uint64_t id : e.record_ids) {
          cache->insert({{std::string_view(tp.topic), tp.partition.value}, id});
        }
      }
    }
    return *cache;
  }

  // The record id at `offset`, if the log holds that offset.
  static std::optional<uint64_t> RecordAt(const std::vector<LogEntry>& entries, int64_t offset) {
    auto it =
        std::upper_bound(entries.begin(), entries.end(), offset,
                         [](int64_t o, const LogEntry& e) { return o < e.base_offset.value; });
    if (it == entries.begin()) return std::nullopt;
    --it;
    const int64_t index = offset - it->base_offset.value;
    if (index >= static_cast<int64_t>(it->record_ids.size())) return std::nullopt;
    return it->record_ids[static_cast<size_t>(index)];
  }

  static std::string Problem(const RunRecord& r, const sarama::AckEvent& ack,
                             const std::vector<LogEntry>* entries, std::optional<uint64_t> held) {
    std::string out;
    if (entries == nullptr) {
      out = "the partition has no final log";
    } else if (!ack.offset_known) {
      out = "acknowledged without an offset, and not in the partition's final log";
    } else if (held.has_value()) {
      out = absl::StrCat("offset ", ack.offset, " holds id=", *held);
    } else {
      out =
          absl::StrCat("offset ", ack.offset, " is not in the final log (", LogSpan(*entries), ")");
    }
    const std::string where = FindRecord(r.kafka, ack.id);
    if (where.empty()) return absl::StrCat(out, "; id=", ack.id, " is in no final log");
    return absl::StrCat(out, "; id=", ack.id, " is at ", where);
  }

  static std::string LogSpan(const std::vector<LogEntry>& entries) {
    if (entries.empty()) return "empty";
    const LogEntry& back = entries.back();
    return absl::StrCat("offsets ", entries.front().base_offset.value, "..",
                        back.base_offset.value + static_cast<int64_t>(back.record_ids.size()) - 1);
  }
};

// ---------------------------------------------------------------------------
// every-message-one-outcome

class EveryMessageOneOutcome final : public Check {
 public:
  std::string_view name() const override { return "every-message-one-outcome"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    const std::vector<OutcomeRef> outcomes = SortedOutcomes(r.producer);
    const ProducedIndex produced(r);
    Witnesses several = Several(outcomes);
    Witnesses late = AfterClose(r);
    Witnesses unknown = Unknown(outcomes, produced);
    Witnesses missing = Missing(r, outcomes, produced);
    std::vector<std::string> parts;
    if (!several.empty()) {
      parts.push_back(absl::StrCat(several.total(), " message(s) with more than one outcome"));
    }
    if (!late.empty()) {
      parts.push_back(absl::StrCat(late.total(), " outcome(s) after Close returned at ",
                                   At(*r.close_returned_at)));
    }
    if (!unknown.empty()) {
      parts.push_back(absl::StrCat(unknown.total(), " outcome(s) for ids never produced"));
    }
    if (!missing.empty()) {
      parts.push_back(absl::StrCat(missing.total(),
                                   " message(s) with no outcome though Close "
                                   "returned at ",
                                   At(*r.close_returned_at)));
    }
    several.Merge(std::move(late));
    several.Merge(std::move(unknown));
    several.Merge(std::move(missing));
    if (several.empty()) return std::nullopt;
    return MakeViolation(name(), absl::StrJoin(parts, "; "), several);
  }

 private:
  static std::string OutcomeText(const OutcomeRef& o) {
    return o.ack != nullptr ? AckText(*o.ack) : ErrorText(*o.error);
  }

  static Witnesses Several(const std::vector<OutcomeRef>& outcomes) {
    Witnesses w;
    for (size_t begin = 0, end = 0; begin < outcomes.size(); begin = end) {
      end = GroupEnd(outcomes, begin);
      if (end - begin == 1) continue;
      w.Add([&] {
        std::vector<std::string> texts;
        for (size_t i = begin; i < end; ++i) texts.push_back(OutcomeText(outcomes[i]));
        return absl::StrCat("id=", outcomes[begin].id, " has ", end - begin,
                            " outcomes: ", absl::StrJoin(texts, "; "));
      });
    }
    return w;
  }

  static Witnesses AfterClose(const RunRecord& r) {
    Witnesses w;
    if (!r.close_returned_at.has_value()) return w;
    const sim::Time closed = *r.close_returned_at;
    const std::string suffix = absl::StrCat(", after Close returned at ", At(closed));
    for (const sarama::AckEvent& a : r.producer.acks) {
      if (a.at > closed) w.Add([&] { return absl::StrCat(AckText(a), suffix); });
    }
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (e.at > closed) w.Add([&] { return absl::StrCat(ErrorText(e), suffix); });
    }
    return w;
  }

  static Witnesses Unknown(const std::vector<OutcomeRef>& outcomes, const ProducedIndex& produced) {
    Witnesses w;
    for (size_t begin = 0, end = 0; begin < outcomes.size(); begin = end) {
      end = GroupEnd(outcomes, begin);
      const OutcomeRef& o = outcomes[begin];
      if (produced.Find(o.id).has_value()) continue;
      w.Add([&] { return absl::StrCat(OutcomeText(o), ": id=", o.id, " was never produced"); });
    }
    return w;
  }

  static Witnesses Missing(const RunRecord& r, const std::vector<OutcomeRef>& outcomes,
                           const ProducedIndex& produced) {
    Witnesses w;
    if (!r.close_returned_at.has_value()) return w;  // liveness judges unfinished runs
    // Both sorted by id: walk them together.
    size_t k = 0;
    for (const auto& [id, position] : produced.by_id()) {
      while (k < outcomes.size() && outcomes[k].id < id) ++k;
      if (k < outcomes.size() && outcomes[k].id == id) continue;
      w.Add([&, id = id, position = position] {
        const ProducedMessage& m = r.produced[position];
        return absl::StrCat("id=", id, " (", Sv(m.topic), ", produced ", At(m.at),
                            ") has no outcome; Close returned ", At(*r.close_returned_at));
      });
    }
    return w;
  }
};

// ---------------------------------------------------------------------------
// not-persisted-absent (wire mode: a client that says so)

// A client that reports a failed message "not persisted" (librdkafka's
// RD_KAFKA_MSG_STATUS_NOT_PERSISTED: "never transmitted to the broker, or
// failed with an error indicating it was not written to the log",
// rdkafka.h) promises it is in no log. An application retries such a
// message, and a copy in the log is then a duplicate it was told could not
// happen. A client that says "possibly persisted" or nothing (Sarama,
// kafkajs) promises nothing, and this check does not apply to it.
class NotPersistedAbsent final : public Check {
 public:
  std::string_view name() const override { return "not-persisted-absent"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    absl::btree_map<uint64_t, std::string> where;  // claimed absent -> where it is
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (e.not_persisted) where.try_emplace(e.id);
    }
    if (where.empty()) return std::nullopt;
    for (const auto& [tp, entries] : r.kafka.final_logs) {
      for (const LogEntry& e : entries) {
        for (size_t i = 0; i < e.record_ids.size(); ++i) {
          auto it = where.find(e.record_ids[i]);
          if (it == where.end() || !it->second.empty()) continue;
          it->second = absl::StrCat(tp.ToString(),
                                    " offset=", e.base_offset.value + static_cast<int64_t>(i));
        }
      }
    }
    Witnesses w;
    Subject subject;
    std::vector<uint64_t> ids;
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (!e.not_persisted || where[e.id].empty()) continue;
      if (w.empty()) {
        subject.at = e.at;
        subject.topic = e.topic;
        subject.partition = e.partition;
        subject.ids = {e.id};
      }
      if (ids.size() < kWitnessesMax) ids.push_back(e.id);
      w.Add([&] { return absl::StrCat(ErrorText(e), "; yet id=", e.id, " is at ", where[e.id]); });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " message(s) the client reported failed and not persisted "
                                      "are in a final log: ids ",
                                      FewIds(ids, w.total())),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// no-panic: the modelled program crashed (a Go panic: send on a closed
// channel, a nil dereference, an unlock of an unlocked mutex). Go prints
// the message, then the goroutine and where it was; so do the witnesses.

class NoPanic final : public Check {
 public:
  std::string_view name() const override { return "no-panic"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (r.run.outcome != sim::Outcome::kProgramCrash) return std::nullopt;
    sim::PanicReport p;
    if (r.run.panic.has_value()) {
      p = *r.run.panic;
    } else {
      p.message = r.run.detail;
    }
    const std::string where = p.file.empty() ? std::string("(the model's line is not known)")
                                             : absl::StrCat(ModelPath(p.file), ":", p.line);
    const std::string goroutine =
        p.goroutine == 0 ? std::string("outside any goroutine (a timer)")
                         : absl::StrCat("goroutine ", p.goroutine, " ", p.goroutine_name);
    Witnesses w;
    w.Add([&] { return absl::StrCat("panic: ", p.message); });
    w.Add([&] { return absl::StrCat(goroutine, " [running], at ", At(r.run.end_time)); });
    w.Add([&] { return absl::StrCat("    ", where); });
    Subject subject;
    subject.at = r.run.end_time;
    return MakeViolation(name(),
                         absl::StrCat("the model panicked: ", p.message, ", in ", goroutine,
                                      ", at ", where),
                         w, std::move(subject));
  }

  // A path as the compiler named it, from the repository's root (the
  // first of the model's top-level folders in it), so the text is the
  // same wherever the tree was built.
  static std::string ModelPath(std::string_view file) {
    for (std::string_view root : {"/producer/", "/sim/", "/scenarios/", "/checks/",
                                  "/fault_models/", "/wire/", "/search/", "/cli/"}) {
      const size_t at = file.rfind(root);
      if (at != std::string_view::npos) return std::string(file.substr(at + 1));
    }
    return std::string(file);
  }
};

// ---------------------------------------------------------------------------
// no-producer-assertion

class NoProducerAssertion final : public Check {
 public:
  std::string_view name() const override { return "no-producer-assertion"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    Witnesses w;
    Subject subject;
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (!e.err.Is(sarama::ErrorKind::kProduceSetAssertion)) continue;
      if (w.empty()) {
        subject.at = e.at;
        subject.topic = e.topic;
        subject.partition = e.partition;
        subject.ids = {e.id};
      }
      w.Add([&] { return ErrorText(e); });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat("the producer failed its produceSet assertion (message out "
                                      "of sequence added to a batch) for ",
                                      w.total(), " message(s)"),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// no-broker-sequence-error

class NoBrokerSequenceError final : public Check {
 public:
  std::string_view name() const override { return "no-broker-sequence-error"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.sequence_error_is_violation) return std::nullopt;
    Witnesses w;
    Subject subject;
    for (const kafka::ResponseEvent& resp : r.kafka.responses) {
      if (resp.error != kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER &&
          resp.error != kafka::ErrorCode::INVALID_PRODUCER_EPOCH) {
        continue;
      }
      if (w.empty()) {
        subject.at = resp.at;
        subject.topic = resp.tp.topic;
        subject.partition = resp.tp.partition.value;
        subject.broker = resp.broker.value;
        subject.correlation_id = resp.correlation_id;
      }
      w.Add([&] {
        return absl::StrCat(At(resp.at), " broker=", resp.broker.value, " ",
                            Sv(kafka::ApiKeyName(resp.api)), " response corr=", resp.correlation_id,
                            " ", resp.tp.ToString(), " ", Sv(kafka::ErrorCodeName(resp.error)),
                            resp.fate != kafka::ResponseFate::kSent
                                ? absl::StrCat(" (", Sv(kafka::ResponseFateName(resp.fate)), ")")
                                : std::string());
      });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat("brokers answered ", w.total(),
                                      " request(s) with OUT_OF_ORDER_SEQUENCE_NUMBER or "
                                      "INVALID_PRODUCER_EPOCH"),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// Wire mode: the real client (RunRecord::client).

// no-fatal-error: the client declared itself unusable (librdkafka's fatal
// error). Over a cluster that keeps every acknowledged write (clean
// elections only, as in every realistic fault here), an idempotent
// producer has no reason to: the fatal error is the client's own assertion,
// as Sarama's produceSet assertion is.
class NoFatalError final : public Check {
 public:
  std::string_view name() const override { return "no-fatal-error"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.client || r.client->fatal_errors.empty()) return std::nullopt;
    Witnesses w;
    for (const std::string& f : r.client->fatal_errors) w.Add([&] { return f; });
    Subject subject;
    subject.at = r.client->first_fatal_at.value_or(r.run.end_time);
    return MakeViolation(
        name(), absl::StrCat("the client raised a fatal error: ", r.client->fatal_errors.front()),
        w, std::move(subject));
  }
};

// The process itself: each check names one way a client fails to be a
// client, so that a verdict about ordering is never drawn from a run whose
// client did not finish its job.
class ClientCheck final : public Check {
 public:
  enum class Kind { kCrashed, kExitedEarly, kHung, kGarbage, kMalformedFrame, kLostMessages };
  explicit ClientCheck(Kind kind) : kind_(kind) {}
  std::string_view name() const override {
    switch (kind_) {
      case Kind::kCrashed: return "client-crashed";
      case Kind::kExitedEarly: return "client-exited-early";
      case Kind::kHung: return "client-hung";
      case Kind::kGarbage: return "client-output-garbage";
      case Kind::kMalformedFrame: return "client-malformed-frame";
      case Kind::kLostMessages: return "client-lost-messages";
    }
    return "?";
  }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.client) return std::nullopt;
    const ClientRecord& c = *r.client;
    Witnesses w;
    std::string what;
    switch (kind_) {
      case Kind::kCrashed:
        if (c.hung) return std::nullopt;
        if (c.signal) {
          what = absl::StrCat("the client was killed by signal ", *c.signal);
        } else if (c.exit_code && *c.exit_code != 0) {
          what = absl::StrCat("the client exited with status ", *c.exit_code);
        } else {
          return std::nullopt;
        }
        break;
      case Kind::kExitedEarly:
        if (c.hung || c.signal || !c.exit_code || *c.exit_code != 0 || c.closed) {
          return std::nullopt;
        }
        what = c.started ? "the client exited (status 0) before its closed line: it did not "
                           "finish its job"
                         : "the client exited (status 0) without starting its job";
        break;
      case Kind::kHung:
        if (!c.hung) return std::nullopt;
        what = absl::StrCat("the client was still running at the trial's bound (",
                            At(c.bound), "), ", c.closed ? "after" : "before",
                            " its closed line; killed");
        break;
      case Kind::kGarbage:
        if (c.garbage_lines == 0) return std::nullopt;
        what = absl::StrCat("the client printed ", c.garbage_lines,
                            " line(s) that are not the driver protocol");
        for (const std::string& g : c.garbage) w.Add([&] { return g; });
        break;
      case Kind::kMalformedFrame:
        if (c.malformed_frames.empty()) return std::nullopt;
        what = absl::StrCat("the client sent ", c.malformed_frames.size(),
                            " malformed frame(s); each connection was closed, as Kafka does");
        for (const std::string& m : c.malformed_frames) w.Add([&] { return m; });
        break;
      case Kind::kLostMessages: {
        // A driver that says it finished its job (closed) and never offered
        // some of the job's messages to its client did not run the job: no
        // verdict about the client may be drawn from it. (A produced message
        // without an outcome is the client's: every-message-one-outcome.)
        // A flush that timed out may have left the driver blocked in a
        // produce call before its job's end (kafkajs awaiting a send() on a
        // dead connection): the client's doing, which other checks judge.
        if (!c.closed || !c.flush_ok || !c.job_messages.has_value()) return std::nullopt;
        std::vector<bool> offered(static_cast<size_t>(*c.job_messages) + 1, false);
        for (const ProducedMessage& m : r.produced) {
          if (m.id >= 1 && m.id < offered.size()) offered[m.id] = true;
        }
        int64_t lost = 0;
        for (size_t id = 1; id < offered.size(); ++id) {
          if (offered[id]) continue;
          ++lost;
          w.Add([&] {
            return absl::StrCat("message ", id, ": neither a produce line nor an error line");
          });
        }
        if (lost <= c.unoffered) return std::nullopt;
        what = absl::StrCat("the client closed having offered ", *c.job_messages - lost, " of the ",
                            *c.job_messages, " messages its job handed it; ", lost,
                            " never produced nor refused",
                            c.unoffered > 0 ? absl::StrCat(" (it said ", c.unoffered, ")") : "");
        break;
      }
    }
    if (w.empty() && !c.stderr_tail.empty()) {
      w.Add([&] { return absl::StrCat("stderr: ", c.stderr_tail); });
    }
    if (w.empty()) w.Add([&] { return what; });
    return MakeViolation(name(), std::move(what), w);
  }

 private:
  Kind kind_;
};

// ---------------------------------------------------------------------------
// no-leaked-goroutines (opt-in: RunRecord::check_leaked_goroutines)
//
// Once Close has returned, every goroutine the producer started has
// returned too: Sarama's own tests check it with goleak, and a program that
// makes and closes producers for its lifetime runs out of memory otherwise.
// A survivor that sleeps wakes by itself (a breaker's timer), and one that
// is runnable is on its way; one blocked on a channel, a lock or a
// WaitGroup with nothing left to wake it is a leak. A real client's
// survivors are those its driver's goroutine report names, still there
// after the driver waited for them (clients/README.md).

class NoLeakedGoroutines final : public Check {
 public:
  std::string_view name() const override { return "no-leaked-goroutines"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.check_leaked_goroutines || !r.close_returned_at.has_value()) return std::nullopt;
    const bool reported = r.client.has_value() && r.client->goroutines_reported;
    Witnesses w;
    for (const sim::LiveGoroutine& g : r.producer_goroutines_at_end) {
      if (g.sleeping || g.runnable) continue;
      w.Add([&] {
        const std::string when =
            reported ? absl::StrCat("the driver waited ",
                                    At(sim::Time() + r.client->goroutines_waited).substr(2),
                                    " for it to return")
                     : absl::StrCat("run ended ", At(r.run.end_time));
        return absl::StrCat("goroutine ", g.id, " '", Sv(g.name), "' still waits: ",
                            Sv(g.waits_on), " (Close returned ", At(*r.close_returned_at), ", ",
                            when, ")");
      });
    }
    if (w.empty()) return std::nullopt;
    Subject subject;
    subject.at = *r.close_returned_at;
    return MakeViolation(name(),
                         absl::StrCat(w.total(), " goroutine(s) the producer started outlived Close"),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// liveness

class Liveness final : public Check {
 public:
  std::string_view name() const override { return "liveness"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    // A crashed program stops: what it left unresolved is the panic's
    // doing, which no-panic reports.
    if (r.run.outcome == sim::Outcome::kProgramCrash) return std::nullopt;
    if (r.run.outcome == sim::Outcome::kDeadlock) return Deadlock(r);
    if (std::optional<Violation> v = Unoffered(r)) return v;
    const Resolved resolved = EarliestOutcomes(r);
    if (r.run.outcome == sim::Outcome::kStepLimit || r.run.outcome == sim::Outcome::kTimeLimit) {
      std::optional<Violation> v = AtLimit(r, resolved);
      if (v.has_value()) return v;
    }
    return AfterHeal(r, resolved);
  }

 private:
  using Resolved = std::vector<std::pair<uint64_t, sim::Time>>;  // sorted by id

  // The earliest outcome of each message that has one.
  static Resolved EarliestOutcomes(const RunRecord& r) {
    const std::vector<OutcomeRef> outcomes = SortedOutcomes(r.producer);
    Resolved out;
    for (size_t begin = 0, end = 0; begin < outcomes.size(); begin = end) {
      end = GroupEnd(outcomes, begin);
      sim::Time first = outcomes[begin].at;
      for (size_t i = begin + 1; i < end; ++i) first = std::min(first, outcomes[i].at);
      out.emplace_back(outcomes[begin].id, first);
    }
    return out;
  }

  static std::optional<Violation> Deadlock(const RunRecord& r) {
    std::vector<std::string_view> lines;
    for (absl::string_view line : absl::StrSplit(r.run.detail, '\n', absl::SkipWhitespace())) {
      lines.emplace_back(line.data(), line.size());
    }
    constexpr size_t kQuoted = 3;
    std::string quoted;
    for (size_t i = 0; i < lines.size() && i < kQuoted; ++i) {
      absl::StrAppend(&quoted, i == 0 ? "" : " | ", Trim(lines[i]));
    }
    if (lines.size() > kQuoted) absl::StrAppend(&quoted, " | ...");
    Witnesses w;
    // The first line is the header; the blocked tasks follow it.
    const size_t from = lines.size() > 1 ? 1 : 0;
    for (size_t i = from; i < lines.size(); ++i) {
      w.Add([&] { return absl::StrCat(At(r.run.end_time), " ", Trim(lines[i])); });
    }
    if (w.empty()) w.Add([&] { return absl::StrCat(At(r.run.end_time), " deadlock (no detail)"); });
    return MakeViolation("liveness", absl::StrCat("deadlock at ", At(r.run.end_time), ": ", quoted),
                         w);
  }

  static std::string Trim(std::string_view s) {
    const size_t b = s.find_first_not_of(' ');
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b));
  }

  // Produced ids with no outcome at or before `by` (all outcomes if nullopt),
  // in produce order, each once.
  static std::vector<size_t> Unresolved(const RunRecord& r, const Resolved& resolved,
                                        std::optional<sim::Time> by) {
    const ProducedIndex produced(r);
    std::vector<size_t> out;
    for (size_t i = 0; i < r.produced.size(); ++i) {
      const uint64_t id = r.produced[i].id;
      if (produced.Find(id) != i) continue;  // a reused id counts once
      const auto it = std::lower_bound(resolved.begin(), resolved.end(), id,
                                       [](const auto& x, uint64_t v) { return x.first < v; });
      const bool has = it != resolved.end() && it->first == id;
      if (has && (!by.has_value() || it->second <= *by)) continue;
      out.push_back(i);
    }
    return out;
  }

  static std::string IdsOf(const RunRecord& r, const std::vector<size_t>& indexes) {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < indexes.size() && i < kWitnessesMax; ++i) {
      ids.push_back(r.produced[indexes[i]].id);
    }
    return FewIds(ids, indexes.size());
  }

  static void AddUnresolved(const RunRecord& r, const std::vector<size_t>& indexes, Witnesses& w) {
    for (size_t i : indexes) {
      w.Add([&] {
        const ProducedMessage& m = r.produced[i];
        return absl::StrCat("id=", m.id, " (", Sv(m.topic), ", produced ", At(m.at),
                            ") unresolved");
      });
    }
  }

  static std::optional<Violation> AtLimit(const RunRecord& r, const Resolved& resolved) {
    const std::vector<size_t> open = Unresolved(r, resolved, std::nullopt);
    if (open.empty()) return std::nullopt;
    Witnesses w;
    AddUnresolved(r, open, w);
    return MakeViolation(
        "liveness",
        absl::StrCat("run hit its ", Sv(sim::OutcomeName(r.run.outcome)), " at ",
                     At(r.run.end_time), " with ", open.size(), " of ", r.produced.size(),
                     " produced message(s) unresolved: ids ", IdsOf(r, open)),
        w);
  }

  // Everything must be settled `liveness_grace` after the last of: the last
  // fault healing, the last message produced, the call to Close.
  static sim::Time Deadline(const RunRecord& r) {
    sim::Time from = r.faults_healed_at;
    for (const ProducedMessage& m : r.produced) from = std::max(from, m.at);
    if (r.close_called_at.has_value()) from = std::max(from, *r.close_called_at);
    return from + r.liveness_grace;
  }

  // A real client whose calls held every slot the application had until
  // its driver gave up offering the job's last messages (the closing line's
  // "unoffered"): the application could not hand them over, which is no
  // progress as surely as a message without an outcome.
  static std::optional<Violation> Unoffered(const RunRecord& r) {
    if (!r.client || r.client->unoffered <= 0 || !r.client->job_messages) return std::nullopt;
    const ClientRecord& c = *r.client;
    const sim::Time at = r.close_called_at.value_or(r.run.end_time);
    Witnesses w;
    w.Add([&] {
      return absl::StrCat(At(at), " the driver gave up offering ", c.unoffered, " of the job's ",
                          *c.job_messages, " messages: the client's calls held every slot");
    });
    return MakeViolation(
        "liveness",
        absl::StrCat(c.unoffered, " of the job's ", *c.job_messages,
                     " message(s) never taken by the client: its produce calls held every slot "
                     "until the flush wait ran out ",
                     At(at), " (faults healed ", At(r.faults_healed_at), ")"),
        w);
  }

  static std::optional<Violation> AfterHeal(const RunRecord& r, const Resolved& resolved) {
    const sim::Time deadline = Deadline(r);
    const std::vector<size_t> open = Unresolved(r, resolved, deadline);
    const bool closed_in_time = r.close_returned_at.has_value() && *r.close_returned_at <= deadline;
    if (open.empty() && closed_in_time) return std::nullopt;
    Witnesses w;
    std::string close_text;
    if (!r.close_returned_at.has_value()) {
      close_text = r.close_called_at.has_value()
                       ? absl::StrCat("Close called ", At(*r.close_called_at), " never returned")
                       : std::string("Close was never called");
    } else {
      close_text = absl::StrCat("Close returned ", At(*r.close_returned_at));
    }
    if (!r.producer_started) {
      w.Add([&] {
        return absl::StrCat("NewAsyncProducer never succeeded (", r.new_producer_failures,
                            " attempt(s); last: ", Sv(r.new_producer_error), ")");
      });
    }
    if (!closed_in_time) {
      w.Add([&] { return absl::StrCat(close_text, ", deadline ", At(deadline)); });
    }
    AddUnresolved(r, open, w);
    std::string explanation = absl::StrCat(
        "not settled by ", At(deadline), " (faults healed ", At(r.faults_healed_at), " + grace ",
        r.liveness_grace.ToString(), "; run ended ", Sv(sim::OutcomeName(r.run.outcome)), " ",
        At(r.run.end_time), "): ", open.size(), " of ", r.produced.size(),
        " produced message(s) unresolved");
    if (!open.empty()) absl::StrAppend(&explanation, " (ids ", IdsOf(r, open), ")");
    absl::StrAppend(&explanation, "; ", close_text);
    return MakeViolation("liveness", std::move(explanation), w);
  }
};

// ---------------------------------------------------------------------------
// retry-pacing (opt-in: RunRecord::retry_backoff)
//
// Sarama waits Retry.Backoff before every retry: partitionProducer.backoff
// when a partition's retry level rises (before the level's first message
// goes out, so after each message's previous attempt), and on main
// retryBatch before it resends (4009ac0b). So a message's consecutive
// attempts are at least Retry.Backoff apart, and a message that fails with
// its retries exhausted has waited Retry.Max backoffs since its first
// attempt. Attempts are the model's request steps (producer/history.h).

class RetryPacing final : public Check {
 public:
  std::string_view name() const override { return "retry-pacing"; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.retry_backoff.has_value()) return std::nullopt;
    const sim::Duration backoff = *r.retry_backoff;
    // Each message's attempts, in the order they were written.
    absl::btree_map<uint64_t, std::vector<const sarama::ProducerStep*>> attempts;
    for (const sarama::ProducerStep* s : sarama::StepsInTimeOrder(r.producer)) {
      if (s->kind != sarama::StepKind::kSend) continue;
      for (uint64_t id : s->ids) attempts[id].push_back(s);
    }
    Witnesses w;
    Subject subject;
    sim::Time first_at = sim::Time::Max();
    auto offend = [&](uint64_t id, const sarama::ProducerStep& s, sim::Time at) {
      if (at >= first_at) return;
      first_at = at;
      subject = Subject{};
      subject.at = at;
      subject.topic = s.topic;
      subject.partition = s.partition;
      subject.ids = {id};
    };
    for (const auto& [key, list] : attempts) {
      const uint64_t id = key;  // (clang 14 cannot capture a structured binding)
      for (size_t i = 1; i < list.size(); ++i) {
        const sarama::ProducerStep& prev = *list[i - 1];
        const sarama::ProducerStep& next = *list[i];
        if (next.retries <= prev.retries) continue;  // not a retry of it
        const sim::Duration gap = next.at - prev.at;
        if (gap >= backoff) continue;
        offend(id, next, next.at);
        w.Add([&] {
          return absl::StrCat(At(next.at), " id=", id, " ", Tp(next.topic, next.partition),
                              " attempt ", next.retries + 1, " to broker ", next.broker, " ",
                              gap.ToString(), " after attempt ", prev.retries + 1, " (",
                              At(prev.at), "), Retry.Backoff ", backoff.ToString());
        });
      }
    }
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (r.retry_max <= 0 || e.retries < r.retry_max) continue;
      if (e.err.Is(sarama::ErrorKind::kProduceSetAssertion) ||
          e.err.Is(sarama::ErrorKind::kShuttingDown)) {
        continue;
      }
      auto it = attempts.find(e.id);
      if (it == attempts.end()) continue;
      // The retries since its first attempt each waited a backoff (a
      // message dropped from a buffer counts a retry it never attempted).
      const sarama::ProducerStep& first = *it->second.front();
      const sim::Duration waited = e.at - first.at;
      const sim::Duration owed = backoff * (e.retries - first.retries);
      if (waited >= owed) continue;
      offend(e.id, *it->second.front(), e.at);
      w.Add([&] {
        return absl::StrCat(ErrorText(e), ": retries exhausted ", waited.ToString(),
                            " after its first attempt (retry ", first.retries, "), sooner than ",
                            e.retries - first.retries, " x ", backoff.ToString());
      });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " retry(ies) sooner than Retry.Backoff allows (attempts "
                                      "closer than ",
                                      backoff.ToString(), ", or retries exhausted too soon)"),
                         w, std::move(subject));
  }
};

// The registry FindCheck and EvaluateAll use: built once, never changed.
const std::vector<std::unique_ptr<Check>>& Registry() {
  static const auto* const kRegistry = new std::vector<std::unique_ptr<Check>>(AllChecks());
  return *kRegistry;
}

}  // namespace

std::vector<std::unique_ptr<Check>> AllChecks() {
  std::vector<std::unique_ptr<Check>> out;
  out.push_back(std::make_unique<AckedBatchesInOrder>());
  out.push_back(std::make_unique<LogSequencesContiguous>());
  out.push_back(std::make_unique<NoDuplicates>());
  out.push_back(std::make_unique<PerPartitionOrder>());
  out.push_back(std::make_unique<AckedAreDurable>());
  out.push_back(std::make_unique<EveryMessageOneOutcome>());
  out.push_back(std::make_unique<NotPersistedAbsent>());
  out.push_back(std::make_unique<NoPanic>());
  out.push_back(std::make_unique<NoProducerAssertion>());
  out.push_back(std::make_unique<NoBrokerSequenceError>());
  out.push_back(std::make_unique<RetryPacing>());
  out.push_back(std::make_unique<NoLeakedGoroutines>());
  out.push_back(std::make_unique<NoFatalError>());
  for (ClientCheck::Kind k : {ClientCheck::Kind::kCrashed, ClientCheck::Kind::kExitedEarly,
                              ClientCheck::Kind::kHung, ClientCheck::Kind::kGarbage,
                              ClientCheck::Kind::kMalformedFrame,
                              ClientCheck::Kind::kLostMessages}) {
    out.push_back(std::make_unique<ClientCheck>(k));
  }
  out.push_back(std::make_unique<Liveness>());
  return out;
}

const Check* FindCheck(std::string_view name) {
  for (const std::unique_ptr<Check>& c : Registry()) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<Violation> EvaluateAll(const RunRecord& r) {
  std::vector<Violation> out;
  for (const std::unique_ptr<Check>& c : Registry()) {
    std::optional<Violation> v = c->Evaluate(r);
    if (v.has_value()) out.push_back(*std::move(v));
  }
  return out;
}

}  // namespace checks
