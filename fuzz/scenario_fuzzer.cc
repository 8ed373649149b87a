// scenario_fuzzer: the input bytes decide a scenario (scenarios/decode.h:
// the fault schedule, the cluster and workload within the base's, and the
// random schedule's first decisions), which runs through the producer
// model and the Kafka model; a property violation aborts with the check's
// explanation, so libFuzzer keeps the input as a crash file. Turn that into
// a scenario file with `prodsim decode CRASH -o scenario.toml` (the abort
// message prints the exact command), then `prodsim shrink`.
//
// Set by environment (libFuzzer owns the flags):
//   PRODSIM_FUZZ_BASE          the base scenario file (default: the
//                              compiled-in report configuration)
//   PRODSIM_FUZZ_PROFILE       the producer profile instead of the base's
//   PRODSIM_FUZZ_MAX_MESSAGES  messages cap (default 64)
//   PRODSIM_FUZZ_MAX_FAULTS    faults cap (default 8; 0: schedules only)
//   PRODSIM_FUZZ_MOCK_FAULTS   1: decode the mock fault kinds too (what no
//                              real cluster does); unset or 0: realistic only
//   PRODSIM_FUZZ_CHECKS        only these checks abort (comma-separated)
//   PRODSIM_FUZZ_IGNORE        these checks, or these failure signatures
//                              (mechanism@function, or a mechanism alone),
//                              do not abort (known findings)
// A bad value stops the fuzzer at start with a one-line error (exit 64).
// A harness error (a decoded scenario the world cannot run) always aborts:
// it is a decoder bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "checks/check.h"
#include "checks/signature.h"
#include "scenarios/decode.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace {

// PRODSIM_FUZZ_IGNORE: check names and signatures, told apart by name (a
// check is one of checks::AllChecks, a mechanism one of checks::Mechanisms,
// a signature "mechanism@function").
struct Ignore {
  std::set<std::string> checks, mechanisms, signatures;
};

struct Setup {
  scenarios::Scenario base;
  scenarios::DecodeOptions options;
  std::set<std::string> only;
  Ignore ignore;
  std::string decode_flags;  // for the replay hint
};

Setup* setup = nullptr;

std::string Env(const char* name) {
  const char* v = std::getenv(name);  // determinism-lint: allow (fuzzer set-up, before any run)
  return v == nullptr ? std::string() : std::string(v);
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "scenario_fuzzer: %s\n", message.c_str());
  std::exit(64);
}

int32_t EnvCount(const char* name, int32_t fallback, std::string* flags, const char* flag) {
  const std::string text = Env(name);
  if (text.empty()) return fallback;
  int32_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 0 || n > 100000) {
    Fail(absl::StrCat(name, "='", text, "' is not a count (0..100000)"));
  }
  absl::StrAppend(flags, " ", flag, "=", n);
  return n;
}

// "acked-batches-in-order, ..., liveness": every check's name, for errors.
std::string CheckNames() {
  std::string known;
  for (const auto& c : checks::AllChecks()) {
    absl::StrAppend(&known, known.empty() ? "" : ", ", std::string(c->name()));
  }
  return known;
}

Ignore EnvIgnore(const char* name) {
  Ignore out;
  const std::string text = Env(name);
  if (text.empty()) return out;
  std::set<std::string> mechanisms{std::string(checks::kUnclassified)};
  for (const checks::MechanismInfo& m : checks::Mechanisms()) mechanisms.emplace(m.mechanism);
  for (const absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::string entry(absl::StripAsciiWhitespace(part));
    const std::string mechanism(checks::MechanismOf(entry));
    if (checks::FindCheck(entry) != nullptr) {
      out.checks.insert(entry);
    } else if (mechanisms.contains(mechanism)) {
      // "unclassified#1f2e3d" is one unexplained family; "unclassified" all.
      (entry == mechanism ? out.mechanisms : out.signatures).insert(entry);
    } else {
      std::string known = CheckNames();
      for (const std::string& m : mechanisms) absl::StrAppend(&known, ", ", m);
      Fail(absl::StrCat(name, ": '", entry,
                        "' is neither a check nor a signature's mechanism (known: ", known, ")"));
    }
  }
  return out;
}

std::set<std::string> EnvChecks(const char* name) {
  std::set<std::string> out;
  const std::string text = Env(name);
  if (text.empty()) return out;
  for (const absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::string check(absl::StripAsciiWhitespace(part));
    if (checks::FindCheck(check) == nullptr) {
      Fail(absl::StrCat(name, ": unknown check '", check, "' (known: ", CheckNames(), ")"));
    }
    out.insert(check);
  }
  return out;
}

// Does this run's outcome stop the fuzzer?
bool IsFinding(const scenarios::RunOutput& out) {
  if (out.verdict == scenarios::Verdict::kHarnessError) return true;
  // A known mechanism is not a finding, whichever checks it trips.
  if (setup->ignore.signatures.contains(out.signature.Text()) ||
      setup->ignore.mechanisms.contains(out.signature.mechanism)) {
    return false;
  }
  for (const checks::Violation& v : out.violations) {
    if (!setup->only.empty() && !setup->only.contains(v.check)) continue;
    if (setup->ignore.checks.contains(v.check)) continue;
    return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  setup = new Setup;
  const std::string base = Env("PRODSIM_FUZZ_BASE");
  const std::string profile = Env("PRODSIM_FUZZ_PROFILE");
  absl::StatusOr<scenarios::Scenario> b = scenarios::LoadBase(base, profile);
  if (!b.ok()) Fail(std::string(b.status().message()));
  setup->base = std::move(*b);
  if (!base.empty()) absl::StrAppend(&setup->decode_flags, " --base=", base);
  if (!profile.empty()) absl::StrAppend(&setup->decode_flags, " --profile=", profile);
  setup->options.max_messages = EnvCount("PRODSIM_FUZZ_MAX_MESSAGES", setup->options.max_messages,
                                         &setup->decode_flags, "--max-messages");
  setup->options.max_faults = EnvCount("PRODSIM_FUZZ_MAX_FAULTS", setup->options.max_faults,
                                       &setup->decode_flags, "--max-faults");
  const std::string mock = Env("PRODSIM_FUZZ_MOCK_FAULTS");
  if (mock != "" && mock != "0" && mock != "1") {
    Fail(absl::StrCat("PRODSIM_FUZZ_MOCK_FAULTS='", mock, "' is not 0 or 1"));
  }
  if (mock == "1") {
    setup->options.mock_faults = true;
    absl::StrAppend(&setup->decode_flags, " --mock-faults");
  }
  setup->only = EnvChecks("PRODSIM_FUZZ_CHECKS");
  setup->ignore = EnvIgnore("PRODSIM_FUZZ_IGNORE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const scenarios::Scenario s =
      scenarios::Decode(setup->base, std::span(data, size), setup->options);
  const scenarios::RunOutput out = scenarios::RunScenario(s);
  if (!IsFinding(out)) return 0;
  std::fprintf(stderr, "==prodsim== %s on %s (%zu faults, %d messages)\n",
               scenarios::VerdictText(out).c_str(),
               std::string(sarama::ProfileName(s.producer.profile)).c_str(), s.faults.size(),
               s.workload.messages);
  if (out.verdict == scenarios::Verdict::kHarnessError) {
    std::fprintf(stderr, "==prodsim== harness error: %s\n", out.harness_error.c_str());
  }
  for (const checks::Violation& v : out.violations) {
    std::fprintf(stderr, "==prodsim== %s: %s\n", v.check.c_str(), v.explanation.c_str());
  }
  std::fprintf(stderr,
               "==prodsim== replay: prodsim decode CRASH_FILE -o finding.toml%s; "
               "prodsim shrink finding.toml -o min.toml\n",
               setup->decode_flags.c_str());
  std::abort();
}
