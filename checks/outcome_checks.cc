// The outcome checks: what the producer reported for each message against
// what the logs kept (acked-are-durable, every-message-one-outcome, and a
// real client's not-persisted-absent).
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
// acked-are-durable

class AckedAreDurable final : public Check {
 public:
  std::string_view name() const override { return kAckedAreDurable; }
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
      const std::optional<uint64_t> held =
          entries == nullptr || !ack.offset_known ? std::nullopt : RecordAt(*entries, ack.offset);
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
  std::string_view name() const override { return kEveryMessageOneOutcome; }
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
  std::string_view name() const override { return kNotPersistedAbsent; }
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

}  // namespace

std::unique_ptr<Check> MakeAckedAreDurable() { return std::make_unique<AckedAreDurable>(); }
std::unique_ptr<Check> MakeEveryMessageOneOutcome() {
  return std::make_unique<EveryMessageOneOutcome>();
}
std::unique_ptr<Check> MakeNotPersistedAbsent() { return std::make_unique<NotPersistedAbsent>(); }

}  // namespace checks::families
