// Failure signatures: the mechanism behind a failing run, not the check
// that saw it.
//
// Checks name a symptom (an OUT_OF_ORDER answer, a gap in a log); many bugs
// share one symptom and one bug shows several. A signature names the
// mechanism, a short stable name, and the Sarama function where its
// decisive step happened, as in "epoch-reset-in-flight@asyncProducer.
// bumpIdempotentProducerEpoch". It is derived by rules that follow the
// violation's subject (checks/check.h Subject: the first offending event)
// back through the producer's recorded steps (producer/history.h) and the
// cluster's history: which request carried the messages, which answer came
// back, which retry resent them, which epoch bump reset their sequences.
// Each rule states the causal chain it found, event by event with times, so
// a reader can check it; when no rule establishes a chain the signature is
// "unclassified", never a guess. docs/DESIGN.md "Failure signatures" lists
// the rules; each has a scenario under scenarios/signatures/ that must give
// it.
#ifndef PRODSIM_CHECKS_SIGNATURE_H_
#define PRODSIM_CHECKS_SIGNATURE_H_

#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "checks/run_record.h"

namespace checks {

inline constexpr std::string_view kUnclassified = "unclassified";

struct Signature {
  std::string mechanism = std::string(kUnclassified);
  std::string function;            // Sarama's name for it; empty when unclassified
  std::vector<std::string> chain;  // "t=1.2s what", in time order, the fault first

  // "mechanism@function", or "unclassified".
  std::string Text() const;
  bool classified() const { return mechanism != kUnclassified; }
};

// The signature of a run whose deciding violation is `decisive` (one of
// EvaluateAll's). Deterministic, like the checks.
Signature Classify(const RunRecord& r, const Violation& decisive);

// Every mechanism a rule can name, with its function, in rule order (for
// --help, the docs and tests).
struct MechanismInfo {
  std::string_view mechanism;
  std::string_view function;
  std::string_view what;  // one line
  // Derived from the cluster's history and the client's own report alone:
  // a real client's rule (wire mode), shown by its wire test, not by a
  // model scenario.
  bool real_client = false;
};
std::vector<MechanismInfo> Mechanisms();

std::string DebugSteps(const RunRecord& r);

}  // namespace checks

#endif  // PRODSIM_CHECKS_SIGNATURE_H_
