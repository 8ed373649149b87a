#include "checks/check_support.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"

namespace checks::families {

// ---------------------------------------------------------------------------
// Text helpers.

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
                        Subject subject) {
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
  std::string out = absl::StrCat(
      At(a.at), " ack id=", a.id, " ", Tp(a.topic, a.partition), " offset=",
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

}  // namespace checks::families
