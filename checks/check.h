// Property checks (oracles) over the recorded history of one run.
//
// Each check is a small stateless object: a name, and Evaluate(), which reads
// a RunRecord (checks/run_record.h) and returns a Violation when the property
// fails. A Violation carries a one-line explanation and a few witnesses: the
// events that show the failure, most telling first, each a short line with
// its simulated time ("t=1.234s ack id=17 t/0 epoch=0 seq=5 after seq=7").
//
// Invariants every check keeps, because checks run after every explored
// scenario (thousands per second) and their output lands in findings:
//   - independent: no state shared between checks or between calls;
//   - deterministic: only ordered containers are iterated, so the same
//     record gives the same Violation, byte for byte, on every build;
//   - cheap: O(n log n) in the size of the history; text is built only for
//     witnesses that are kept.
#ifndef PRODSIM_CHECKS_CHECK_H_
#define PRODSIM_CHECKS_CHECK_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/run_record.h"

namespace checks {

// At most this many witnesses are kept per violation; the explanation says
// how many offending events there were in all.
inline constexpr size_t kWitnessesMax = 10;

// The first offending event of a violation, as data, for the failure
// signatures (checks/signature.h) to follow back to its cause. Fields that
// do not apply stay at their defaults.
struct Subject {
  sim::Time at;       // when it happened (or was appended)
  std::string topic;  // its partition, if it has one
  int32_t partition = -1;
  std::vector<uint64_t> ids;  // the messages it is about
  int32_t broker = -1;        // an answer: which broker, which request
  int32_t correlation_id = -1;
  int16_t epoch = -1;  // a batch or an ack: its epoch and sequence
  int32_t sequence = -1;
};

struct Violation {
  std::string check;                   // the check's name
  std::string explanation;             // one line
  std::vector<std::string> witnesses;  // at most kWitnessesMax, most telling first
  Subject subject;
};

class Check {
 public:
  virtual ~Check() = default;
  // Stable, kebab-case; scenario files and the CLI refer to checks by it.
  virtual std::string_view name() const = 0;
  // nullopt when the property holds for `r` (or does not apply to it).
  virtual std::optional<Violation> Evaluate(const RunRecord& r) const = 0;
};

// Every check, in kCheckTable's order (checks/check_registry.h, where each
// is described).
std::vector<std::unique_ptr<Check>> AllChecks();

// The check called `name`, or nullptr if there is none. The object lives for
// the whole program.
const Check* FindCheck(std::string_view name);

// The violation of every check that fails on `r`, in AllChecks() order.
std::vector<Violation> EvaluateAll(const RunRecord& r);

}  // namespace checks

#endif  // PRODSIM_CHECKS_CHECK_H_
