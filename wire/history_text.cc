#include "wire/history_text.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wire {
namespace {

std::string Sv(std::string_view v) { return std::string(v); }

std::string Ids(const std::vector<uint64_t>& ids) { return absl::StrJoin(ids, ","); }

std::string ResponseText(const kafka::ResponseEvent& r) {
  std::string out = absl::StrCat("broker-", r.broker.value, " ", Sv(kafka::ApiKeyName(r.api)),
                                 " response corr=", r.correlation_id);
  if (r.api == kafka::ApiKey::kProduce) {
    absl::StrAppend(&out, " ", r.tp.ToString());
    if (r.first_seq.value >= 0) {
      absl::StrAppend(&out, " (epoch=", r.epoch.value, " seq=", r.first_seq.value, ")");
    }
  }
  absl::StrAppend(&out, " ", Sv(kafka::ErrorCodeName(r.error)), " offset=", r.base_offset.value);
  if (r.duplicate) {
    absl::StrAppend(&out, " answered as a duplicate (request ids=", Ids(r.record_ids), ")");
  } else if (!r.record_ids.empty()) {
    absl::StrAppend(&out, " (request ids=", Ids(r.record_ids), ")");
  }
  if (r.fate != kafka::ResponseFate::kSent) {
    absl::StrAppend(&out, " (", Sv(kafka::ResponseFateName(r.fate)), ")");
  }
  return out;
}

}  // namespace

std::string HistoryText(const checks::RunRecord& rec) {
  const kafka::History& h = rec.kafka;
  std::vector<std::pair<sim::Time, std::string>> lines;
  for (const kafka::FaultEvent& f : h.faults) {
    lines.emplace_back(f.at, absl::StrCat(f.healed ? "heal " : "fault ", f.description));
  }
  for (const kafka::AppendEvent& a : h.appends) {
    lines.emplace_back(
        a.at, absl::StrCat("broker-", a.broker.value, a.leader ? " append " : " copy ",
                           a.tp.ToString(), " offset=", a.base_offset.value,
                           " pid=", a.producer_id.value, " epoch=", a.epoch.value, " seq=",
                           a.first_seq.value, "..", a.last_seq.value, " ids=", Ids(a.record_ids)));
  }
  for (const kafka::TruncateEvent& t : h.truncations) {
    lines.emplace_back(t.at, absl::StrCat("broker-", t.broker.value, " truncate ", t.tp.ToString(),
                                          " to offset ", t.new_end.value));
  }
  for (const kafka::ResponseEvent& r : h.responses) lines.emplace_back(r.at, ResponseText(r));
  for (const kafka::NoteEvent& n : h.notes) lines.emplace_back(n.at, absl::StrCat("note ", n.text));
  for (const kafka::ConnectionEvent& c : h.connections) {
    lines.emplace_back(c.at,
                       absl::StrCat("broker-", c.broker.value, " connection #", c.connection,
                                    c.opened ? " opened by the client" : absl::StrCat(" ", c.why)));
  }
  if (rec.client.has_value()) {
    for (const auto& [at, line] : rec.client->events) {
      lines.emplace_back(at, absl::StrCat("client ", line));
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [at, text] : lines) absl::StrAppend(&out, "t=", at.ToString(), "s ", text, "\n");
  if (rec.client.has_value() &&
      rec.client->event_lines > static_cast<int64_t>(rec.client->events.size())) {
    absl::StrAppend(&out, "(",
                    rec.client->event_lines - static_cast<int64_t>(rec.client->events.size()),
                    " more client line(s) not kept)\n");
  }
  for (const auto& [tp, entries] : h.final_logs) {
    for (const kafka::LogEntry& e : entries) {
      absl::StrAppend(&out, "final ", tp.ToString(), " offset=", e.base_offset.value,
                      " pid=", e.producer_id.value, " epoch=", e.epoch.value,
                      " seq=", e.first_seq.value, " ids=", Ids(e.record_ids), "\n");
    }
  }
  return out;
}

std::string TrialReport(const scenarios::RunOutput& out, const std::string& header) {
  std::string text = header;
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  absl::StrAppend(&text, "verdict: ", scenarios::VerdictText(out), "\n");
  if (out.verdict == scenarios::Verdict::kHarnessError) {
    absl::StrAppend(&text, "harness error: ", out.harness_error, "\n");
  }
  for (const checks::Violation& v : out.violations) {
    absl::StrAppend(&text, v.check, ": ", v.explanation, "\n");
    for (const std::string& w : v.witnesses) absl::StrAppend(&text, "  ", w, "\n");
  }
  if (out.verdict != scenarios::Verdict::kPass && !out.violations.empty()) {
    absl::StrAppend(&text, "signature: ", out.signature.Text(),
                    out.signature.classified() ? "; how it came about:\n"
                                               : " (no rule explains it; the violation:)\n");
    for (const std::string& line : out.signature.chain) absl::StrAppend(&text, "  ", line, "\n");
  }
  if (out.record.client.has_value() && !out.record.client->stderr_tail.empty()) {
    absl::StrAppend(&text, "client stderr (last lines): ", out.record.client->stderr_tail, "\n");
  }
  return text;
}

}  // namespace wire
