// What the check families (checks/*_checks.cc) share: the text of a witness
// and of the history's events, the bounded witness list, and the sorted
// views of the history the checks walk. Internal to checks/.
//
// Invariants: every helper is a pure function of its arguments; the lookups
// that scan the history (AppendTime, FindRecord) are for witness text only,
// so they run at most a few times per kept witness, never per event.
#ifndef PRODSIM_CHECKS_CHECK_SUPPORT_H_
#define PRODSIM_CHECKS_CHECK_SUPPORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "checks/chain.h"
#include "checks/check.h"
#include "checks/run_record.h"

namespace checks::families {

using kafka::LogEntry;
using kafka::TopicPartition;

// --- Text.

// This Abseil's string_view is its own type; StrCat takes only it.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// "t=1.234s" (checks/chain.h).
using internal::At;
// "t/0".
std::string Tp(std::string_view topic, int32_t partition);
// "3, 4, 5 and 7 more": the first few of `ids`, for an explanation line.
std::string FewIds(const std::vector<uint64_t>& ids, size_t total);

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
Subject AckSubject(const sarama::AckEvent& ack);

// Takes the witnesses out of `w`. REQUIRES: `w` is not empty.
Violation MakeViolation(std::string_view check, std::string explanation, Witnesses& w,
                        Subject subject = {});

// --- The history (for witness text only).

// When the batch `e` of `tp` was appended by a leader (the last such append,
// since an earlier one at the same offset may have been truncated away).
std::optional<sim::Time> AppendTime(const kafka::History& h, const TopicPartition& tp,
                                    const LogEntry& e);
// " appended t=1.2s", or "" if no leader appended it.
std::string AppendedText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e);
// The last sequence of a batch of `e`. REQUIRES: e.first_seq >= 0, a record.
kafka::Sequence LastSeq(const LogEntry& e);
// "t/0 offset=12 pid=1 epoch=0 seq=5..9 first id=17 appended t=1.2s".
std::string BatchText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e);
// The subject of a batch of a final log: when a leader appended it.
Subject EntrySubject(const kafka::History& h, const TopicPartition& tp, const LogEntry& e);
// "t/0 offset=9 (pid=1 epoch=0 seq=3 appended t=1.2s)": record `i` of `e`.
std::string RecordText(const kafka::History& h, const TopicPartition& tp, const LogEntry& e,
                       size_t i);
// Where record `id` first appears in the final logs: "t/0 offset=9", or "".
std::string FindRecord(const kafka::History& h, uint64_t id);

// One outcome the producer reported: an ack or an error (exactly one set).
struct OutcomeRef {
  uint64_t id;
  sim::Time at;
  const sarama::AckEvent* ack;
  const sarama::ErrorEvent* error;
};

// Every outcome, sorted by message id; for one id, acks before errors, each
// in report order. A sorted vector, not a map: this runs on every history.
std::vector<OutcomeRef> SortedOutcomes(const sarama::ProducerHistory& h);
// The end of the run of outcomes with the id of outcomes[begin].
size_t GroupEnd(const std::vector<OutcomeRef>& outcomes, size_t begin);

std::string AckText(const sarama::AckEvent& a);
std::string ErrorText(const sarama::ErrorEvent& e);

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

}  // namespace checks::families

#endif  // PRODSIM_CHECKS_CHECK_SUPPORT_H_
