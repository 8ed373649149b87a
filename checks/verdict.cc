#include "checks/verdict.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace checks {
namespace {

// kVerdictTable's invariants, checked where the compiler can.
constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < kVerdictCount; ++i) {
    if (static_cast<size_t>(kVerdictTable[i].verdict) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kVerdictTable: one entry per Verdict, in the enum's order");

constexpr bool NamesAndCodesDistinct() {
  for (size_t i = 0; i < kVerdictCount; ++i) {
    for (size_t j = i + 1; j < kVerdictCount; ++j) {
      if (kVerdictTable[i].name == kVerdictTable[j].name) return false;
      if (kVerdictTable[i].exit_code == kVerdictTable[j].exit_code) return false;
    }
  }
  return true;
}
static_assert(NamesAndCodesDistinct(), "kVerdictTable: names and exit codes are distinct");

}  // namespace

const VerdictInfo& InfoOf(Verdict v) {
  const size_t i = static_cast<size_t>(v);
  PRODSIM_ASSERT(i < kVerdictCount);
  const VerdictInfo& info = kVerdictTable[i];
  PRODSIM_ASSERT(info.verdict == v);
  return info;
}

std::string_view VerdictName(Verdict v) { return InfoOf(v).name; }

absl::StatusOr<Verdict> ParseVerdict(std::string_view name) {
  for (const VerdictInfo& info : kVerdictTable) {
    if (info.name == name) return info.verdict;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown verdict '", std::string(name), "'"));
}

int ExitCode(Verdict v) { return InfoOf(v).exit_code; }

std::string ExitCodeTable() {
  std::vector<const VerdictInfo*> by_code;
  for (const VerdictInfo& info : kVerdictTable) by_code.push_back(&info);
  std::sort(by_code.begin(), by_code.end(),
            [](const VerdictInfo* x, const VerdictInfo* y) { return x->exit_code < y->exit_code; });
  std::string out = "| exit code | verdict |\n|---|---|\n";
  for (const VerdictInfo* info : by_code) {
    absl::StrAppend(&out, "| ", info->exit_code, " | ", std::string(info->name), ": ",
                    std::string(info->meaning), " |\n");
  }
  PRODSIM_ASSERT(by_code.size() == kVerdictCount);
  return out;
}

}  // namespace checks
