// The verdicts a run can end in, each described once: its name (as scenario
// files' [expect] verdict and every command print it), the process exit code
// of `prodsim run`, and what it means. VerdictName, ParseVerdict, ExitCode,
// the scenario format's verdict list and the exit-code table are derived
// from kVerdictTable.
//
// It lives in checks/ because each check names the verdict its failure
// yields (checks/check_registry.h); scenarios::Decide picks the run's
// verdict from those.
//
// Invariants: kVerdictTable has one entry per Verdict, in the enum's order;
// names and exit codes are distinct.
#ifndef PRODSIM_CHECKS_VERDICT_H_
#define PRODSIM_CHECKS_VERDICT_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace checks {

enum class Verdict {
  kPass,
  kSafety,             // a safety check failed
  kLiveness,           // stuck, or unresolved messages after faults healed
  kDeadlock,           // all tasks asleep, nothing pending
  kProducerAssertion,  // the producer returned Sarama's own assertion error
  kHarnessError,       // the world could not be built or run as described
  // Wire mode: the real client did not run as a client must (crashed,
  // exited early, hung past the trial's bound, printed what is not the
  // driver protocol, sent malformed frames); checks "client-*".
  kClientFailure,
  // The modelled program crashed: a Go panic (send on a closed channel, a
  // nil dereference); check no-panic. A model bug or a Sarama one, never a
  // client's.
  kPanic,
};

struct VerdictInfo {
  Verdict verdict;
  std::string_view name;
  int exit_code;
  std::string_view meaning;  // one line, for the exit-code table
};

inline constexpr VerdictInfo kVerdictTable[] = {
    {Verdict::kPass, "pass", 0, "every check holds"},
    {Verdict::kSafety, "safety", 1, "a property check failed (the first in check order is named)"},
    {Verdict::kLiveness, "liveness", 2,
     "messages unresolved, or Close not returned, within the grace after the faults healed"},
    {Verdict::kDeadlock, "deadlock", 3,
     "every task asleep with nothing pending; the report lists what each waits on"},
    {Verdict::kProducerAssertion, "producer-assertion", 4,
     "the producer returned Sarama's own assertion error, or a real client raised a fatal "
     "error (a finding, not a prodsim failure)"},
    {Verdict::kHarnessError, "harness-error", 70,  // EX_SOFTWARE
     "the world could not be built as described, or the cluster model broke a rule of Kafka's"},
    {Verdict::kClientFailure, "client-failure", 5,
     "a real client crashed, exited early, hung, printed what is not the driver protocol, sent "
     "malformed frames, or did not offer every message of its job (wire mode)"},
    {Verdict::kPanic, "panic", 6,
     "the modelled program crashed as a Go program panics; the report is Go's"},
};
inline constexpr size_t kVerdictCount = std::size(kVerdictTable);

// The verdict names in the table's order (the scenario format's list).
inline constexpr std::array<std::string_view, kVerdictCount> kVerdictNames = [] {
  std::array<std::string_view, kVerdictCount> names{};
  for (size_t i = 0; i < kVerdictCount; ++i) names[i] = kVerdictTable[i].name;
  return names;
}();

const VerdictInfo& InfoOf(Verdict v);
std::string_view VerdictName(Verdict v);
absl::StatusOr<Verdict> ParseVerdict(std::string_view name);
// The process exit code of `prodsim run` for a verdict.
int ExitCode(Verdict v);

// The verdicts' exit codes as a Markdown table, in exit-code order:
// "| exit code | verdict |\n|---|---|\n| 0 | pass: every check holds |\n"...
// (`prodsim help` and the README show it; the CLI's own codes, usage and
// file errors, are the CLI's to add).
std::string ExitCodeTable();

}  // namespace checks

#endif  // PRODSIM_CHECKS_VERDICT_H_
