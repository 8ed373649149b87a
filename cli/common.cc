#include "cli/common.h"

#include <cstdio>
#include <utility>

#include "absl/status/statusor.h"
#include "checks/check.h"
#include "scenarios/toml_reader.h"

namespace cli {

bool LoadOrSay(const std::string& path, scenarios::Scenario* s, int* code) {
  absl::StatusOr<scenarios::Scenario> parsed = scenarios::LoadScenario(path);
  if (parsed.ok()) {
    *s = std::move(*parsed);
    return true;
  }
  std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
  *code = absl::IsNotFound(parsed.status()) ? kExitNoFile : kExitBadFile;
  return false;
}

void PrintViolations(const scenarios::RunOutput& out, int indent) {
  if (out.verdict == scenarios::Verdict::kHarnessError) {
    std::printf("%*sharness error: %s\n", indent, "", out.harness_error.c_str());
    return;
  }
  for (const checks::Violation& v : out.violations) {
    std::printf("%*s%s: %s\n", indent, "", v.check.c_str(), v.explanation.c_str());
    for (size_t i = 0; i < v.witnesses.size() && i < 3; ++i) {
      std::printf("%*s%s\n", indent + 2, "", v.witnesses[i].c_str());
    }
  }
}

void PrintSignature(const scenarios::RunOutput& out, int indent) {
  if (out.verdict == scenarios::Verdict::kPass || out.violations.empty()) return;
  const checks::Signature& sig = out.signature;
  std::printf("%*ssignature: %s%s\n", indent, "", sig.Text().c_str(),
              sig.classified() ? "; how it came about:" : " (no rule explains it; the violation:)");
  for (const std::string& line : sig.chain) std::printf("%*s%s\n", indent + 2, "", line.c_str());
}

bool ParsePositiveDuration(const std::string& text, sim::Duration* d) {
  return !scenarios::internal::ParseDuration(text, d).has_value() && d->nanos() > 0;
}

}  // namespace cli
