// liveness: every produced message resolved, and Close returned, within the
// grace after the faults healed; a deadlock or a limit reached says what
// each task waits on.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::families {
namespace {

// ---------------------------------------------------------------------------
// liveness

class Liveness final : public Check {
 public:
  std::string_view name() const override { return kLiveness; }
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
    return MakeViolation(kLiveness, absl::StrCat("deadlock at ", At(r.run.end_time), ": ", quoted),
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
        kLiveness,
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
        kLiveness,
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
    return MakeViolation(kLiveness, std::move(explanation), w);
  }
};

}  // namespace

std::unique_ptr<Check> MakeLiveness() { return std::make_unique<Liveness>(); }

}  // namespace checks::families
