#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "checks/check_families.h"

namespace checks {
namespace {

// The registry FindCheck and EvaluateAll use: built once, never changed.
const std::vector<std::unique_ptr<Check>>& Registry() {
  static const auto* const kRegistry = new std::vector<std::unique_ptr<Check>>(AllChecks());
  return *kRegistry;
}

}  // namespace

std::vector<std::unique_ptr<Check>> AllChecks() {
  std::vector<std::unique_ptr<Check>> out;
  for (auto make : {families::MakeAckedBatchesInOrder, families::MakeLogSequencesContiguous,
                    families::MakeNoDuplicates, families::MakePerPartitionOrder,
                    families::MakeAckedAreDurable, families::MakeEveryMessageOneOutcome,
                    families::MakeNotPersistedAbsent, families::MakeNoPanic,
                    families::MakeNoProducerAssertion, families::MakeNoBrokerSequenceError,
                    families::MakeRetryPacing, families::MakeNoLeakedGoroutines,
                    families::MakeNoFatalError, families::MakeClientCrashed,
                    families::MakeClientExitedEarly, families::MakeClientHung,
                    families::MakeClientOutputGarbage, families::MakeClientMalformedFrame,
                    families::MakeClientLostMessages, families::MakeLiveness}) {
    out.push_back(make());
  }
  return out;
}

const Check* FindCheck(std::string_view name) {
  for (const std::unique_ptr<Check>& c : Registry()) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<Violation> EvaluateAll(const RunRecord& r) {
  std::vector<Violation> out;
  for (const std::unique_ptr<Check>& c : Registry()) {
    std::optional<Violation> v = c->Evaluate(r);
    if (v.has_value()) out.push_back(*std::move(v));
  }
  return out;
}

}  // namespace checks
