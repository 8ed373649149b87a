// Every check, described in one place: kCheckTable gives each its name, the
// verdict its failure yields, whether a scenario must opt into it
// ([checks]), whether only a real client's run (wire mode) can fail it, a
// one-line doc, and its factory. AllChecks, FindCheck and EvaluateAll
// (check.h), the scenario format's check list and scenarios::Decide derive
// from it. Adding a check is one entry here plus its class in a family file
// (checks/*_checks.cc) and its factory in checks/check_families.h.
//
// Invariants: the table's order is the evaluation order (check.h's "check
// order": the first failing check of a verdict's class decides it); names
// are distinct; each factory makes a check whose name() is its entry's.
#ifndef PRODSIM_CHECKS_CHECK_REGISTRY_H_
#define PRODSIM_CHECKS_CHECK_REGISTRY_H_

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/verdict.h"

namespace checks {

// The checks' names, for code that refers to one check.
inline constexpr std::string_view kLogOffsetsContiguous = "log-offsets-contiguous";
inline constexpr std::string_view kAckedBatchesInOrder = "acked-batches-in-order";
inline constexpr std::string_view kLogSequencesContiguous = "log-sequences-contiguous";
inline constexpr std::string_view kNoDuplicates = "no-duplicates";
inline constexpr std::string_view kPerPartitionOrder = "per-partition-order";
inline constexpr std::string_view kAckedAreDurable = "acked-are-durable";
inline constexpr std::string_view kEveryMessageOneOutcome = "every-message-one-outcome";
inline constexpr std::string_view kNotPersistedAbsent = "not-persisted-absent";
inline constexpr std::string_view kNoPanic = "no-panic";
inline constexpr std::string_view kNoProducerAssertion = "no-producer-assertion";
inline constexpr std::string_view kNoBrokerSequenceError = "no-broker-sequence-error";
inline constexpr std::string_view kRetryPacing = "retry-pacing";
inline constexpr std::string_view kNoLeakedGoroutines = "no-leaked-goroutines";
inline constexpr std::string_view kNoFatalError = "no-fatal-error";
inline constexpr std::string_view kClientCrashed = "client-crashed";
inline constexpr std::string_view kClientExitedEarly = "client-exited-early";
inline constexpr std::string_view kClientHung = "client-hung";
inline constexpr std::string_view kClientOutputGarbage = "client-output-garbage";
inline constexpr std::string_view kClientMalformedFrame = "client-malformed-frame";
inline constexpr std::string_view kClientLostMessages = "client-lost-messages";
inline constexpr std::string_view kLiveness = "liveness";

struct CheckInfo {
  std::string_view name;
  // The verdict a failure yields. kLiveness's check gives kDeadlock when
  // the run ended deadlocked (scenarios::Decide).
  Verdict verdict;
  bool opt_in;     // off unless the scenario's [checks] asks for it
  bool wire_only;  // only a real client's run (wire mode) can fail it
  std::string_view doc;
  std::unique_ptr<Check> (*make)();
};

inline constexpr CheckInfo kCheckTable[] = {
    // The cluster's own rule, before anything is read from its logs: a
    // failure is the model's, never the producer's (harness-error).
    {kLogOffsetsContiguous, Verdict::kHarnessError, false, false,
     "every final log starts at offset 0 and each batch at the offset after the one before "
     "(Kafka's leader assigns offsets so; the model holds no retention or compaction)",
     families::MakeLogOffsetsContiguous},
    {kAckedBatchesInOrder, Verdict::kSafety, false, false,
     "an idempotent producer's acks of a partition and epoch follow its sequence, no gap or "
     "repeat",
     families::MakeAckedBatchesInOrder},
    {kLogSequencesContiguous, Verdict::kSafety, false, false,
     "an idempotent producer's batches in a final log start at seq=0 per (pid, epoch) and "
     "continue without gap or repeat",
     families::MakeLogSequencesContiguous},
    {kNoDuplicates, Verdict::kSafety, false, false,
     "an idempotent producer's message is in the final logs at most once",
     families::MakeNoDuplicates},
    {kPerPartitionOrder, Verdict::kSafety, false, false,
     "a partition's final log keeps the produce order of its messages (idempotent, or one "
     "request in flight)",
     families::MakePerPartitionOrder},
    {kAckedAreDurable, Verdict::kSafety, false, false,
     "with acks=all, every acknowledged message is in its partition's final log",
     families::MakeAckedAreDurable},
    {kEveryMessageOneOutcome, Verdict::kSafety, false, false,
     "every produced message gets exactly one outcome, an ack or an error",
     families::MakeEveryMessageOneOutcome},
    {kNotPersistedAbsent, Verdict::kSafety, false, true,
     "a message the client reported failed and not persisted is in no final log",
     families::MakeNotPersistedAbsent},
    {kNoPanic, Verdict::kPanic, false, false,
     "the modelled program did not panic as a Go program panics", families::MakeNoPanic},
    {kNoProducerAssertion, Verdict::kProducerAssertion, false, false,
     "the producer never returned Sarama's own assertion error", families::MakeNoProducerAssertion},
    {kNoBrokerSequenceError, Verdict::kSafety, false, false,
     "no broker answered OUT_OF_ORDER_SEQUENCE_NUMBER or INVALID_PRODUCER_EPOCH",
     families::MakeNoBrokerSequenceError},
    {kRetryPacing, Verdict::kSafety, true, false,
     "a message's attempts are Retry.Backoff apart, and none exhausts its retries sooner",
     families::MakeRetryPacing},
    {kNoLeakedGoroutines, Verdict::kSafety, true, false,
     "every goroutine the producer started has returned once Close has",
     families::MakeNoLeakedGoroutines},
    {kNoFatalError, Verdict::kProducerAssertion, false, true,
     "the real client raised no fatal error (its analogue of Sarama's assertion)",
     families::MakeNoFatalError},
    {kClientCrashed, Verdict::kClientFailure, false, true,
     "the client was not killed by a signal and did not exit non-zero",
     families::MakeClientCrashed},
    {kClientExitedEarly, Verdict::kClientFailure, false, true,
     "the client did not exit before its closed line", families::MakeClientExitedEarly},
    {kClientHung, Verdict::kClientFailure, false, true,
     "the client was not still running at the trial's bound", families::MakeClientHung},
    {kClientOutputGarbage, Verdict::kClientFailure, false, true,
     "the client printed only the driver protocol", families::MakeClientOutputGarbage},
    {kClientMalformedFrame, Verdict::kClientFailure, false, true,
     "the client sent no malformed frame", families::MakeClientMalformedFrame},
    {kClientLostMessages, Verdict::kClientFailure, false, true,
     "a client that closed offered its client every message of its job",
     families::MakeClientLostMessages},
    {kLiveness, Verdict::kLiveness, false, false,
     "every message resolved and Close returned within the grace after the faults healed",
     families::MakeLiveness},
};
inline constexpr size_t kCheckCount = std::size(kCheckTable);

// The check names as the scenario format lists them: the checks a
// simulated run can fail, then the wire-mode-only ones, each group in table
// order.
inline constexpr std::array<std::string_view, kCheckCount> kCheckNamesSimulatedFirst = [] {
  std::array<std::string_view, kCheckCount> names{};
  size_t n = 0;
  for (bool wire_only : {false, true}) {
    for (const CheckInfo& c : kCheckTable) {
      if (c.wire_only == wire_only) names[n++] = c.name;
    }
  }
  return names;
}();

std::span<const CheckInfo> CheckInfos();
// The entry called `name`, or nullptr.
const CheckInfo* FindCheckInfo(std::string_view name);

}  // namespace checks

#endif  // PRODSIM_CHECKS_CHECK_REGISTRY_H_
