#include "checks/check_registry.h"

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/assert.h"
#include "checks/check.h"

namespace checks {
namespace {

constexpr bool NamesDistinct() {
  for (size_t i = 0; i < kCheckCount; ++i) {
    for (size_t j = i + 1; j < kCheckCount; ++j) {
      if (kCheckTable[i].name == kCheckTable[j].name) return false;
    }
  }
  return true;
}
static_assert(NamesDistinct(), "kCheckTable: names are distinct");

// The checks FindCheck and EvaluateAll use: built once, never changed.
const std::vector<std::unique_ptr<Check>>& Registry() {
  static const auto* const kRegistry = new std::vector<std::unique_ptr<Check>>(AllChecks());
  return *kRegistry;
}

}  // namespace

std::span<const CheckInfo> CheckInfos() { return kCheckTable; }

const CheckInfo* FindCheckInfo(std::string_view name) {
  for (const CheckInfo& c : kCheckTable) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::unique_ptr<Check>> AllChecks() {
  std::vector<std::unique_ptr<Check>> out;
  out.reserve(kCheckCount);
  for (const CheckInfo& c : kCheckTable) {
    out.push_back(c.make());
    PRODSIM_ASSERT(out.back() != nullptr);
    PRODSIM_ASSERT(out.back()->name() == c.name);
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
