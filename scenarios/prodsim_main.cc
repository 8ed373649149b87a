// prodsim: run, print and check scenario files.
//
//   prodsim run FILE... [--trace=OUT] [--check-expect]
//   prodsim print FILE
//   prodsim determinism FILE...
//   prodsim help
//
// Exit codes: 0 pass (or, with --check-expect, every file's expect block
// holds), 1 safety violation, 2 liveness violation, 3 deadlock,
// 4 producer-assertion finding, 70 harness error, 64 usage, 65 bad
// scenario file, 66 missing file. (Flags are parsed here rather than with
// absl flags, whose errors exit with 1, not 64.)
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace scenarios {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitBadFile = 65;
constexpr int kExitNoFile = 66;

constexpr const char* kUsage =
    "usage: prodsim run FILE... [--trace=OUT] [--timeline=OUT.json] [--check-expect]\n"
    "       prodsim print FILE\n"
    "       prodsim determinism FILE...\n"
    "       prodsim digest FILE...\n"
    "       prodsim help\n"
    "run: runs each scenario and prints one line per file (verdict, failing check,\n"
    "  digest, simulated time, steps, wall time). --trace=OUT writes the readable\n"
    "  trace of the (single) file; --timeline=OUT.json a Chrome/Perfetto trace-event\n"
    "  file (open it in ui.perfetto.dev). --check-expect: exit 0 iff each file's [expect]\n"
    "  block holds.\n"
    "print: prints the scenario in canonical form.\n"
    "determinism: runs each scenario twice, once recording the trace, and checks\n"
    "  that the digests are equal.\n"
    "digest: prints each file's verdict and digest only (for comparing builds).\n"
    "exit codes: 0 pass, 1 safety, 2 liveness, 3 deadlock, 4 producer-assertion,\n"
    "  70 harness error, 64 usage, 65 bad scenario file, 66 missing file\n";

struct Args {
  std::vector<std::string> files;
  std::string trace_out;
  std::string timeline_out;
  bool check_expect = false;
};

// Wall time, for the report line only: it never enters a run.
using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (printed only)

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n%s", error.c_str(), kUsage);
  return kExitUsage;
}

// Parses the flags after the subcommand; returns an exit code on error.
int ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--trace=")) {
      args->trace_out = a.substr(8);
      if (args->trace_out.empty()) return Usage("--trace needs a file name: --trace=OUT");
    } else if (absl::StartsWith(a, "--timeline=")) {
      args->timeline_out = a.substr(11);
      if (args->timeline_out.empty()) return Usage("--timeline needs a file name: --timeline=OUT.json");
    } else if (a == "--check-expect") {
      args->check_expect = true;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (absl::StartsWith(a, "-")) {
      return Usage(absl::StrCat("unknown flag '", a, "'"));
    } else {
      args->files.push_back(a);
    }
  }
  if (args->files.empty()) return Usage("no scenario file given");
  return -1;
}

// Loads a scenario or prints its one-line error; sets *code on failure.
bool Load(const std::string& path, Scenario* s, int* code) {
  absl::StatusOr<Scenario> parsed = LoadScenario(path);
  if (parsed.ok()) {
    *s = std::move(*parsed);
    return true;
  }
  std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
  *code = absl::IsNotFound(parsed.status()) ? kExitNoFile : kExitBadFile;
  return false;
}

// Calls fn(path, scenario) for each file that loads; a file that does not
// load prints its error and sets *code (the first failure's code wins).
template <typename Fn>
void ForEachScenario(const Args& args, int* code, Fn fn) {
  for (const std::string& path : args.files) {
    Scenario s;
    int load_code = 0;
    if (!Load(path, &s, &load_code)) {
      if (*code == 0) *code = load_code;
      continue;
    }
    fn(path, s);
  }
}

void PrintOutcome(const std::string& path, const RunOutput& out, double wall_ms) {
  const sim::RunResult& r = out.record.run;
  std::printf("%s: %s%s digest=%016llx t=%ss steps=%llu wall=%.1fms\n", path.c_str(),
              std::string(VerdictName(out.verdict)).c_str(),
              out.failing_check.empty() ? "" : absl::StrCat(" [", out.failing_check, "]").c_str(),
              static_cast<unsigned long long>(r.digest), r.end_time.ToString().c_str(),
              static_cast<unsigned long long>(r.steps), wall_ms);
  if (out.verdict == Verdict::kHarnessError) {
    std::printf("  harness error: %s\n", out.harness_error.c_str());
    return;
  }
  for (const checks::Violation& v : out.violations) {
    std::printf("  %s: %s\n", v.check.c_str(), v.explanation.c_str());
    for (size_t i = 0; i < v.witnesses.size() && i < 3; ++i) {
      std::printf("    %s\n", v.witnesses[i].c_str());
    }
  }
  if (out.verdict != Verdict::kPass) {
    std::printf("  see the trace: prodsim run %s --trace=trace.txt\n", path.c_str());
  }
}

int Run(const Args& args) {
  int code = 0;
  size_t done = 0, failed = 0;
  const auto started = WallClock::now();
  ForEachScenario(args, &code, [&](const std::string& path, const Scenario& s) {
    if (args.files.size() >= 20 && done > 0 && done % 20 == 0) {
      const double secs = std::chrono::duration<double>(WallClock::now() - started).count();
      std::fprintf(stderr, "[progress] %zu/%zu files, %zu not passing, %.1f files/s\n", done,
                   args.files.size(), failed, static_cast<double>(done) / secs);
    }
    ++done;
    RunOptions options;
    options.record_trace = !args.trace_out.empty();
    options.timeline = !args.timeline_out.empty();
    const auto start = WallClock::now();
    const RunOutput out = RunScenario(s, options);
    const double wall_ms = std::chrono::duration<double, std::milli>(WallClock::now() - start).count();
    PrintOutcome(path, out, wall_ms);
    if (!args.trace_out.empty()) {
      std::ofstream f(args.trace_out);
      f << out.trace;
      std::printf("  trace written to %s\n", args.trace_out.c_str());
    }
    if (!args.timeline_out.empty()) {
      std::ofstream f(args.timeline_out);
      f << out.timeline;
      std::printf("  timeline written to %s (open it in ui.perfetto.dev)\n", args.timeline_out.c_str());
    }
    int this_code = ExitCode(out.verdict);
    if (args.check_expect) {
      std::string why;
      this_code = MatchesExpect(s, out, &why) ? 0 : 1;
      if (this_code != 0) std::printf("  expect does not hold: %s\n", why.c_str());
    }
    if (this_code != 0) ++failed;
    if (code == 0) code = this_code;
  });
  return code;
}

int Print(const Args& args) {
  if (args.files.size() != 1) return Usage("print takes exactly one file");
  Scenario s;
  int code = 0;
  if (!Load(args.files[0], &s, &code)) return code;
  std::fputs(PrintScenario(s).c_str(), stdout);
  return 0;
}

int Determinism(const Args& args) {
  int code = 0;
  ForEachScenario(args, &code, [&](const std::string& path, const Scenario& s) {
    const uint64_t a = RunScenario(s).record.run.digest;
    RunOptions traced;
    traced.record_trace = true;
    const uint64_t b = RunScenario(s, traced).record.run.digest;
    std::printf("%s: digest=%016llx again-with-trace=%016llx %s\n", path.c_str(),
                static_cast<unsigned long long>(a), static_cast<unsigned long long>(b),
                a == b ? "same" : "DIFFERENT");
    if (a != b && code == 0) code = 1;
  });
  return code;
}

int Digest(const Args& args) {
  int code = 0;
  ForEachScenario(args, &code, [&](const std::string& path, const Scenario& s) {
    const RunOutput out = RunScenario(s);
    std::printf("%s %s digest=%016llx\n", path.c_str(), std::string(VerdictName(out.verdict)).c_str(),
                static_cast<unsigned long long>(out.record.run.digest));
  });
  return code;
}

}  // namespace
}  // namespace scenarios

int main(int argc, char** argv) {
  using namespace scenarios;
  if (argc < 2) return Usage("no subcommand");
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Args args;
  if (int code = ParseArgs(argc, argv, &args); code >= 0) return code;
  if (cmd == "run") return Run(args);
  if (cmd == "print") return Print(args);
  if (cmd == "determinism") return Determinism(args);
  if (cmd == "digest") return Digest(args);
  return Usage(absl::StrCat("unknown subcommand '", cmd, "'"));
}
