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
  // Unclassified only: the failure's shape (UnclassifiedFingerprint), so the
  // same unexplained family is recognised again and can be recorded as
  // known. Empty for a hand-made unclassified signature.
  std::string fingerprint;

  // "mechanism@function", "unclassified#FINGERPRINT" or "unclassified".
  std::string Text() const;
  bool classified() const { return mechanism != kUnclassified; }
};

// The mechanism part of a signature's text: "two-in-flight" of
// "two-in-flight@Broker.AsyncProduce", "unclassified" of
// "unclassified#1f2e3d".
std::string_view MechanismOf(std::string_view signature);

// The signature of a run whose deciding violation is `decisive` (one of
// EvaluateAll's). Deterministic, like the checks.
Signature Classify(const RunRecord& r, const Violation& decisive);

// The signature of every rule that matches `v` when tried alone, in the
// order Classify tries them (Classify keeps the first). For tests: each
// rule has canaries, violations of other mechanisms it must not claim.
std::vector<Signature> EveryRuleMatch(const RunRecord& r, const Violation& v);

// The fingerprint of a failure no rule explains (six hex digits): a hash of
// its shape, which is the deciding check, the subject's kind (how many
// messages, an answer or not, sequenced or not), the producer's steps for
// the subject's first message up to the violation (kind and answer,
// consecutive repeats collapsed). No id, time, sequence, broker number or
// fault enters it, so two runs of one unexplained family share it, and a
// file keeps it while prodsim shrink removes what does not matter. UnclassifiedShape is the text
// hashed.
std::string UnclassifiedFingerprint(const RunRecord& r, const Violation& decisive);
std::string UnclassifiedShape(const RunRecord& r, const Violation& decisive);

// The Sarama function a goroutine of the model runs, from the name the
// model spawned it under (producer/*.cc's sched().Go calls):
// "bp#3.run" is brokerProducer.run; a real Go client's method as a stack
// names it, "(*Broker).responseReceiver", is Broker.responseReceiver. A
// name it does not know is its own.
std::string GoroutineFunction(std::string_view name);

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
