// The causal chain a failure signature prints (checks/signature.h): lines
// with their times, the fault that began it placed first, the violation
// last. Shared by the model's rules (signature.cc, over the producer's
// steps) and a real client's (client_signature.cc, over the broker history
// and the client's report).
#ifndef PRODSIM_CHECKS_CHAIN_H_
#define PRODSIM_CHECKS_CHAIN_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks/check.h"
#include "checks/run_record.h"
#include "checks/signature.h"

namespace checks::internal {

// "t=1.234s": simulated seconds with 3, 6 or 9 decimals, as few as exact;
// the one time format of witnesses and chains (check_support.h uses it).
std::string At(sim::Time t);

class Chain {
 public:
  // REQUIRES: every argument outlives the Chain.
  Chain(const RunRecord& r, const Violation& v, const Subject& subject)
      : r_(r), v_(v), subject_(subject) {}
  // A line "t=... text" at `at`.
  Chain& Line(sim::Time at, std::string_view text);
  // A line already carrying its time.
  Chain& Timed(sim::Time at, std::string text);
  // The signature `mechanism@function` with the lines in time order, after
  // the last fault applied before the first of them (or, if none was,
  // before the last), and the violation's first witness at the end.
  Signature Done(std::string_view mechanism, std::string_view function);

 private:
  const RunRecord& r_;
  const Violation& v_;
  const Subject& subject_;
  std::vector<std::pair<sim::Time, std::string>> lines_;
};

// The signature of a real client's run (wire mode: no producer steps),
// from the broker history and the client's report, or nullopt.
std::optional<Signature> ClassifyRealClient(const RunRecord& r, const Violation& v);

}  // namespace checks::internal

#endif  // PRODSIM_CHECKS_CHAIN_H_
