// prodsim: run, print and check scenario files.
//
//   prodsim run FILE... [--trace=OUT] [--check-expect]
//   prodsim print FILE
//   prodsim determinism FILE...
//   prodsim help
//
// Exit codes: 0 pass (or, with --check-expect, every file's expect block
// holds), 1 safety violation, 2 liveness violation, 3 deadlock,
// 4 producer-assertion finding, 5 client failure (prodsim real), 6 panic (the
// model crashed), 70 harness error, 64 usage, 65 bad scenario file, 66
// missing file. (Flags are parsed here rather than with
// absl flags, whose errors exit with 1, not 64.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checks/check.h"
#include "checks/signature.h"
#include "producer/async_producer.h"
#include "cli/bench.h"
#include "cli/common.h"
#include "cli/fidelity.h"
#include "cli/real.h"
#include "scenarios/decode.h"
#include "scenarios/explore.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "scenarios/shrink.h"
#include "search/explore.h"
#include "search/world.h"

namespace scenarios {
namespace {

using cli::kExitBadFile;
using cli::kExitCantCreate;
using cli::kExitNoFile;
using cli::kExitUsage;

constexpr const char* kUsage =
    "usage: prodsim run FILE... [--trace=OUT] [--timeline=OUT.json] [--check-expect]\n"
    "                   [--profile=NAME]\n"
    "       prodsim print FILE\n"
    "       prodsim determinism FILE...\n"
    "       prodsim digest FILE...\n"
    "       prodsim explore --base=FILE (--runs=N | --time=DURATION) [--seed=S]\n"
    "                       [--shard=I/N] [--keep-going] [--out=DIR] [--mock-faults]\n"
    "                       [--jobs=N] [--known=DIR] [--no-shrink]\n"
    "                       [--client=NAME[@VERSION]|CMD [--bound=DURATION]\n"
    "                        [--shrink-trials=K] [--shrink-needed=R] [--shrink-time=DURATION]]\n"
    "       prodsim shrink FILE -o MIN.toml [--max-runs=N] [--keep-close-at] [--check=NAME]\n"
    "                      [--client=NAME[@VERSION]|CMD [--trials=K] [--needed=R]\n"
    "                       [--time=DURATION] [--jobs=N] [--bound=DURATION]]\n"
    "       prodsim decode CRASH_FILE -o SCENARIO.toml [--base=FILE] [--profile=NAME]\n"
    "                      [--max-messages=N] [--max-faults=N] [--mock-faults]\n"
    "       prodsim encode SCENARIO.toml -o BYTES [--base=FILE] [--profile=NAME]\n"
    "                      [--max-messages=N] [--max-faults=N] [--mock-faults]\n"
    "       prodsim real FILE --client=NAME[@VERSION]|CMD [--trials=N] [--jobs=N]\n"
    "                    [--until-failure] [--bound=DURATION] [--trace=OUT] [--history=OUT]\n"
    "                    [--events=OUT] [--out=DIR]\n"
    "       prodsim serve FILE [--history=OUT]\n"
    "       prodsim fidelity FILE... --client=NAME|CMD [--seeds=N] [--trials=M]\n"
    "                        [--profile=NAME] [--policy=NAME] [--csv=OUT] [--jobs=N]\n"
    "       prodsim fidelity --generated=N --base=FILE --client=NAME [--out=DIR] ...\n"
    "       prodsim bench [--help]\n"
    "       prodsim schema --markdown\n"
    "       prodsim help\n"
    "run: runs each scenario and prints one line per file (verdict, failing check,\n"
    "  digest, simulated time, steps, wall time). --trace=OUT writes the readable\n"
    "  trace of the (single) file; --timeline=OUT.json a Chrome/Perfetto trace-event\n"
    "  file (open it in ui.perfetto.dev). --check-expect: exit 0 iff each file's [expect]\n"
    "  block holds, and each [expect.profiles.\"NAME\"] entry with that profile.\n"
    "  --profile=NAME runs with that producer profile instead of the file's\n"
    "  (sarama-1.42.1 or sarama-main); --check-expect then checks its entry.\n"
    "print: prints the scenario in canonical form.\n"
    "determinism: runs each scenario twice, once recording the trace, and checks\n"
    "  that the digests are equal.\n"
    "digest: prints each file's verdict and digest only (for comparing builds).\n"
    "explore: runs scenarios generated from the base (random faults, swarm style,\n"
    "  random schedules, latencies and producer settings); prints progress, writes\n"
    "  each failing scenario to --out with its verdict as [expect], and a summary.\n"
    "  Stops at the first failure unless --keep-going. Only realistic fault kinds,\n"
    "  unless --mock-faults (then mock.error and mock.drop_response too: what no\n"
    "  real cluster does). --jobs=N runs on N threads (default: the machine's\n"
    "  cores); the lines, files and summary are those of --jobs=1 (runs are\n"
    "  consumed in order), but for runs/s and, with --time, how far it got.\n"
    "  The summary groups failures by signature (mechanism@function: count, first\n"
    "  seed, smallest file); with --out, the smallest file of each new signature is\n"
    "  shrunk (keeping its signature) to DIR/new-MECHANISM.toml (--no-shrink: not).\n"
    "  --known=DIR: the signatures of DIR's scenario files ([expect] signature) are\n"
    "  known findings: reported as known, not new; without --keep-going the search\n"
    "  stops at the first new one. Exit 0: nothing (new) found; 1: found failures\n"
    "  (with --known: a new signature, unclassified included).\n"
    "  --client=NAME runs each generated scenario over the wire against a real\n"
    "  client instead (prodsim real's drivers; NAME@VERSION another version), one\n"
    "  trial each, --jobs trials at once (default 8: trials sleep most of the\n"
    "  time), each bounded by --bound (default 120s); every line names the client\n"
    "  and its version and the load; each failing file gets its trial's report\n"
    "  and broker history beside it; a new signature's smallest file is shrunk\n"
    "  over the wire (a change kept when --shrink-needed of --shrink-trials\n"
    "  trials fail the same way, default 2 of 5, at most --shrink-time, 600s).\n"
    "shrink: makes a failing scenario small while it keeps failing with the same\n"
    "  verdict and check: removes faults, shortens them, cuts messages, keys, topics,\n"
    "  partitions and brokers, and moves settings toward their defaults. Prints each\n"
    "  step and the final size; writes MIN.toml with its verdict as [expect]. Exit 0:\n"
    "  written; 1: FILE does not fail (nothing to shrink). --max-runs bounds the\n"
    "  search (default 3000 runs). --keep-close-at keeps workload.close_at.\n"
    "  --check=NAME keeps that check among the violations instead of the verdict\n"
    "  and deciding check (a symptom another check's verdict hides).\n"
    "  --client=NAME shrinks over the wire against a real client: each candidate\n"
    "  runs --trials=K times (default 5, --jobs at once, default 8) and is kept\n"
    "  when --needed=R of them (default 2) fail with the same verdict, check and\n"
    "  signature; --time bounds the whole search (default 1800s).\n"
    "decode: the scenario a scenario_fuzzer input (a libFuzzer crash file) stands\n"
    "  for, written as a scenario file with the verdict of its run as [expect]; then\n"
    "  prodsim shrink makes it small. --base (default: the compiled-in\n"
    "  bench/scenarios/report-config-steady.toml), --profile, --max-messages\n"
    "  (default 64) and --max-faults (default 8) must be what the fuzzer ran with\n"
    "  (PRODSIM_FUZZ_BASE, PRODSIM_FUZZ_PROFILE, PRODSIM_FUZZ_MAX_MESSAGES,\n"
    "  PRODSIM_FUZZ_MAX_FAULTS, PRODSIM_FUZZ_MOCK_FAULTS=1 for --mock-faults).\n"
    "  Exit 0 written.\n"
    "schema: prints the scenario format's field reference (Markdown), generated\n"
    "  from its description (scenarios/schema.cc).\n"
    "encode: the inverse, for seed corpora: the bytes that decode to the scenario\n"
    "  as nearly as the encoding can say it (fields clamped to the base's ranges).\n"
    "real, serve: the scenario's cluster on 127.0.0.1 for a real client (prodsim\n"
    "  real --help says more).\n"
    "fidelity: the model's verdicts over seeds beside a real client's over trials\n"
    "  (prodsim fidelity --help says more).\n"
    "exit codes: 0 pass, 1 safety, 2 liveness, 3 deadlock, 4 producer-assertion,\n"
    "  5 client-failure (real), 6 panic (the model crashed), 70 harness error, 64 usage,\n"
    "  65 bad scenario file, 66 missing file, 73 cannot write an output file\n";

struct Args {
  std::vector<std::string> files;
  std::string trace_out;
  std::string timeline_out;
  bool check_expect = false;
  std::string profile;  // --profile: run with this producer profile instead
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
      if (args->timeline_out.empty())
        return Usage("--timeline needs a file name: --timeline=OUT.json");
    } else if (a == "--check-expect") {
      args->check_expect = true;
    } else if (absl::StartsWith(a, "--profile=")) {
      args->profile = a.substr(10);
      if (!sarama::ParseProfile(args->profile).ok()) {
        return Usage(
            absl::StrCat("unknown --profile '", args->profile, "' (sarama-1.42.1 or sarama-main)"));
      }
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
bool Load(const std::string& path, Scenario* s, int* code) { return cli::LoadOrSay(path, s, code); }

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
  // A world with mock faults is not a real cluster's: the line says so.
  std::printf("%s: %s%s digest=%016llx t=%ss steps=%llu wall=%.1fms\n", path.c_str(),
              VerdictText(out).c_str(), out.mock_faults ? " (mock faults)" : "", static_cast<unsigned long long>(r.digest),
              r.end_time.ToString().c_str(), static_cast<unsigned long long>(r.steps), wall_ms);
  cli::PrintViolations(out, 2);
  if (std::getenv("PRODSIM_STEPS")) std::printf("%s", checks::DebugSteps(out.record).c_str());
  if (out.verdict == Verdict::kHarnessError) return;
  cli::PrintSignature(out, 2);
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
    const Scenario run = args.profile.empty() ? s : WithProfile(s, args.profile);
    const auto start = WallClock::now();
    const RunOutput out = RunScenario(run, options);
    const double wall_ms =
        std::chrono::duration<double, std::milli>(WallClock::now() - start).count();
    PrintOutcome(path, out, wall_ms);
    if (!args.trace_out.empty()) {
      std::ofstream f(args.trace_out);
      f << out.trace;
      std::printf("  trace written to %s\n", args.trace_out.c_str());
    }
    if (!args.timeline_out.empty()) {
      std::ofstream f(args.timeline_out);
      f << out.timeline;
      std::printf("  timeline written to %s (open it in ui.perfetto.dev)\n",
                  args.timeline_out.c_str());
    }
    int this_code = ExitCode(out.verdict);
    if (args.check_expect) {
      std::string why;
      this_code = MatchesExpect(run, out, &why) ? 0 : 1;
      if (this_code != 0) std::printf("  expect does not hold: %s\n", why.c_str());
      // Without --profile, every [expect.profiles."NAME"] entry too.
      if (args.profile.empty() && s.expect.has_value()) {
        for (const ProfileExpectSpec& p : s.expect->profiles) {
          const Scenario other = WithProfile(s, p.profile);
          const RunOutput o = RunScenario(other);
          std::string other_why;
          const bool ok = MatchesExpect(other, o, &other_why);
          std::printf(
              "  on %s: %s digest=%016llx%s%s\n", p.profile.c_str(), VerdictText(o).c_str(),
              static_cast<unsigned long long>(o.record.run.digest),
              ok ? "" : ": expect does not hold: ", ok ? "" : other_why.c_str());
          if (!ok) this_code = 1;
        }
      }
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
    std::printf("%s %s digest=%016llx\n", path.c_str(),
                std::string(VerdictName(out.verdict)).c_str(),
                static_cast<unsigned long long>(out.record.run.digest));
  });
  return code;
}

struct ExploreArgs {
  std::string base, out;
  int64_t runs = -1;
  Duration time;
  uint64_t seed = 1, shard = 0, shards = 1;
  bool keep_going = false;
  bool mock_faults = false;
  bool shrink = true;
  std::string known;
  unsigned jobs = 0;  // 0: the default (the cores; over the wire search::kRealJobsDefault)
  // Over the wire.
  std::string client;
  Duration bound = Duration::Seconds(120);
  int64_t shrink_trials = 5, shrink_needed = 2;
  Duration shrink_time = Duration::Seconds(600);
};

bool ParseUint(const std::string& text, uint64_t* v) {
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *v = std::stoull(text);
  return true;
}

// --name=value or --name value.
int ParseExploreArgs(int argc, char** argv, ExploreArgs* a) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    const bool needs_value =
        arg != "--keep-going" && arg != "--help" && arg != "--mock-faults" && arg != "--no-shrink";
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (needs_value && i + 1 < argc) {
      value = argv[++i];
    }
    uint64_t n = 0;
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--keep-going") {
      a->keep_going = true;
    } else if (arg == "--mock-faults") {
      a->mock_faults = true;
    } else if (arg == "--no-shrink") {
      a->shrink = false;
    } else if (arg == "--known" && !value.empty()) {
      a->known = value;
    } else if (arg == "--base") {
      a->base = value;
    } else if (arg == "--out") {
      a->out = value;
    } else if (arg == "--runs" && ParseUint(value, &n) && n > 0) {
      a->runs = static_cast<int64_t>(n);
    } else if (arg == "--seed" && ParseUint(value, &n)) {
      a->seed = n;
    } else if (arg == "--jobs" && ParseUint(value, &n) && n > 0 && n <= 1024) {
      a->jobs = static_cast<unsigned>(n);
    } else if (arg == "--time" && !value.empty() && value.back() == 's' &&
               ParseUint(value.substr(0, value.size() - 1), &n) && n > 0) {
      a->time = Duration::Seconds(static_cast<int64_t>(n));
    } else if (arg == "--shard" && value.find('/') != std::string::npos &&
               ParseUint(value.substr(0, value.find('/')), &a->shard) &&
               ParseUint(value.substr(value.find('/') + 1), &a->shards) && a->shards > 0 &&
               a->shard < a->shards) {
    } else if (arg == "--client" && !value.empty()) {
      a->client = value;
    } else if (arg == "--bound" && cli::ParsePositiveDuration(value, &a->bound)) {
    } else if (arg == "--shrink-time" && cli::ParsePositiveDuration(value, &a->shrink_time)) {
    } else if (arg == "--shrink-trials" && ParseUint(value, &n) && n > 0 && n <= 1000) {
      a->shrink_trials = static_cast<int64_t>(n);
    } else if (arg == "--shrink-needed" && ParseUint(value, &n) && n > 0 && n <= 1000) {
      a->shrink_needed = static_cast<int64_t>(n);
    } else {
      return Usage(absl::StrCat("bad explore flag '", argv[i], "'",
                                value.empty() ? "" : absl::StrCat(" = '", value, "'"),
                                " (--runs=N>0, --time=SECONDSs, --seed=N, --shard=I/N with I<N, "
                                "--jobs=1..1024, --client=NAME[@VERSION]|CMD, --bound=DURATION, "
                                "--shrink-trials=K, --shrink-needed=R<=K, --shrink-time=DURATION)"));
    }
  }
  if (a->shrink_needed > a->shrink_trials) {
    return Usage(absl::StrCat("--shrink-needed=", a->shrink_needed, " is more than --shrink-trials=",
                              a->shrink_trials));
  }
  if (a->base.empty()) return Usage("explore needs --base=FILE");
  if ((a->runs > 0) == (a->time.nanos() > 0))
    return Usage("explore needs one of --runs=N or --time=Ns");
  return -1;
}

int Explore(int argc, char** argv) {
  ExploreArgs a;
  if (int code = ParseExploreArgs(argc, argv, &a); code >= 0) return code;
  Scenario base;
  int code = 0;
  if (!Load(a.base, &base, &code)) return code;
  search::ExploreOptions o;
  if (!a.known.empty() && !search::LoadKnownSignatures(a.known, &o.known, &code)) return code;
  if (!a.out.empty() && !cli::MakeDirectory(a.out)) return kExitCantCreate;
  search::World world = search::World::Model();
  if (!a.client.empty()) {
    wire::RealOptions real;
    real.client = a.client;
    real.bound = a.bound;
    absl::StatusOr<search::World> w = search::World::Real(real);
    if (!w.ok()) {
      std::fprintf(stderr, "prodsim: %s\n", std::string(w.status().message()).c_str());
      return kExitUsage;
    }
    world = *std::move(w);
  }
  o.out = a.out;
  o.runs = a.runs;
  o.time = a.time;
  o.seed = a.seed;
  o.shard = a.shard;
  o.shards = a.shards;
  o.keep_going = a.keep_going;
  o.shrink = a.shrink;
  o.generate.mock_faults = a.mock_faults;
  o.generate.client = world.family();
  o.jobs = a.jobs > 0 ? a.jobs : world.real() ? search::kRealJobsDefault : MachineCores();
  o.shrink_trials = static_cast<int>(a.shrink_trials);
  o.shrink_needed = static_cast<int>(a.shrink_needed);
  o.shrink_time = a.shrink_time;
  return search::Explore(base, world, o);
}

int ShrinkCommand(int argc, char** argv) {
  std::string file, out;
  int64_t max_runs = ShrinkOptions{}.max_runs;
  bool keep_close_at = false;
  std::string check;
  // Over the wire: K trials per candidate, kept when R of them fail the
  // same way, at most --time in all, trials --jobs at once.
  std::string client;
  int64_t trials = 5, needed = 2;
  Duration time_bound = Duration::Seconds(1800), bound = Duration::Seconds(120);
  unsigned jobs = search::kRealJobsDefault;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    if (absl::StartsWith(arg, "-") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if ((arg == "-o" || arg == "--out" || arg == "--max-runs" || arg == "--check") &&
               i + 1 < argc) {
      value = argv[++i];
    }
    uint64_t n = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--client") {
      if (value.empty()) return Usage("shrink: --client needs a driver name or a command");
      client = value;
    } else if (arg == "--trials" || arg == "--needed" || arg == "--jobs") {
      if (!ParseUint(value, &n) || n == 0 || n > 1000) {
        return Usage(absl::StrCat("shrink: bad ", arg, " '", value, "' (1..1000)"));
      }
      if (arg == "--trials") trials = static_cast<int64_t>(n);
      if (arg == "--needed") needed = static_cast<int64_t>(n);
      if (arg == "--jobs") jobs = static_cast<unsigned>(n);
    } else if (arg == "--time" || arg == "--bound") {
      if (!cli::ParsePositiveDuration(value, arg == "--time" ? &time_bound : &bound)) {
        return Usage(absl::StrCat("shrink: bad ", arg, " '", value, "' (a duration such as 600s)"));
      }
    } else if (arg == "--keep-close-at") {
      keep_close_at = true;
    } else if (arg == "--check") {
      if (checks::FindCheck(value) == nullptr) {
        return Usage(absl::StrCat("shrink: unknown --check '", value, "'"));
      }
      check = value;
    } else if (arg == "-o" || arg == "--out") {
      if (value.empty()) return Usage("shrink: -o needs a file name");
      out = value;
    } else if (arg == "--max-runs") {
      if (!ParseUint(value, &n) || n == 0) {
        return Usage(absl::StrCat("shrink: bad --max-runs '", value, "' (a number > 0)"));
      }
      max_runs = static_cast<int64_t>(n);
    } else if (absl::StartsWith(arg, "-")) {
      return Usage(absl::StrCat("unknown flag '", argv[i], "'"));
    } else if (file.empty()) {
      file = arg;
    } else {
      return Usage("shrink takes exactly one scenario file");
    }
  }
  if (file.empty()) return Usage("shrink needs a scenario file: prodsim shrink FILE -o MIN.toml");
  if (out.empty()) return Usage("shrink needs -o MIN.toml");
  if (needed > trials) {
    return Usage(absl::StrCat("shrink: --needed=", needed, " is more than --trials=", trials));
  }
  Scenario s;
  int code = 0;
  if (!Load(file, &s, &code)) return code;
  const auto started = WallClock::now();
  std::optional<search::World> world;
  if (!client.empty()) {
    wire::RealOptions real;
    real.client = client;
    real.bound = bound;
    absl::StatusOr<search::World> w = search::World::Real(real);
    if (!w.ok()) {
      std::fprintf(stderr, "prodsim: %s\n", std::string(w.status().message()).c_str());
      return kExitUsage;
    }
    world = *std::move(w);
  }
  std::printf("shrinking %s: %s%s\n", file.c_str(), DescribeSize(s).c_str(),
              world ? absl::StrCat("; over the wire with ", client, ": a change is kept when ",
                                   needed, " of ", trials, " trials fail the same way")
                          .c_str()
                    : "");
  ShrinkOptions options;
  options.max_runs = world ? INT64_MAX : max_runs;
  options.keep_close_at = keep_close_at;
  options.check = check;
  options.log = [](const std::string& step) {
    std::printf("  %s\n", step.c_str());
    std::fflush(stdout);
  };
  if (world) {
    options.trials = [&](const Scenario& c) {
      return search::Outputs(search::Trials(*world, c, static_cast<int>(trials), jobs));
    };
    options.needed = static_cast<int>(needed);
    options.stop = [&] {
      return std::chrono::duration<double>(WallClock::now() - started).count() * 1e9 >=
             static_cast<double>(time_bound.nanos());
    };
  }
  ShrinkResult r = Shrink(s, options);
  if (!r.reproduced) {
    std::printf("%s: %s, nothing to shrink", file.c_str(),
                std::string(VerdictName(r.verdict)).c_str());
    if (world) {
      std::printf(" (it failed the same way in %d of %lld trials, fewer than %lld)", r.first_kept,
                  static_cast<long long>(trials), static_cast<long long>(needed));
    }
    std::printf("\n");
    return 1;
  }
  const double secs = std::chrono::duration<double>(WallClock::now() - started).count();
  r.scenario.description = absl::StrCat(
      "Shrunk by prodsim shrink from ", file, " (", r.runs,
      world ? absl::StrCat(" trials of ", client, ", a change kept when ", needed, " of ", trials,
                           " failed the same way")
            : std::string(" runs"),
      "), which said: ", s.description);
  std::ofstream f(out);
  f << PrintScenario(r.scenario);
  f.close();
  if (!f) {
    std::fprintf(stderr, "prodsim: cannot write %s\n", out.c_str());
    return kExitCantCreate;
  }
  std::printf("kept %s%s %s; %zu step(s) in %lld run(s), %.1f s\n",
              std::string(VerdictName(r.verdict)).c_str(),
              r.failing_check.empty() ? "" : absl::StrCat(" [", r.failing_check, "]").c_str(),
              r.signature.c_str(), r.steps.size(), static_cast<long long>(r.runs), secs);
  std::printf("final size: %s\n", DescribeSize(r.scenario).c_str());
  if (world) {
    std::printf("the result failed the same way in %d of %lld trials (the original: %d)\n",
                r.last_kept, static_cast<long long>(trials), r.first_kept);
    std::printf("written to %s (replay: prodsim real %s --client=%s --trials=%lld)\n",
                out.c_str(), out.c_str(), client.c_str(), static_cast<long long>(trials));
  } else {
    std::printf("written to %s (replay: prodsim run %s)\n", out.c_str(), out.c_str());
  }
  return 0;
}

struct CodecArgs {
  std::string in, out, base, profile;
  DecodeOptions options;
};

int ParseCodecArgs(const char* cmd, int argc, char** argv, CodecArgs* a) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    if (absl::StartsWith(arg, "--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (absl::StartsWith(arg, "-") && arg != "--help" && arg != "-h" &&
               arg != "--mock-faults" && i + 1 < argc) {
      value = argv[++i];
    }
    uint64_t n = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--mock-faults") {
      a->options.mock_faults = true;
    } else if (arg == "-o" || arg == "--out") {
      a->out = value;
    } else if (arg == "--base") {
      if (value.empty()) return Usage(absl::StrCat(cmd, ": --base needs a scenario file"));
      a->base = value;
    } else if (arg == "--profile") {
      a->profile = value;
      if (!sarama::ParseProfile(a->profile).ok()) {
        return Usage(
            absl::StrCat("unknown --profile '", a->profile, "' (sarama-1.42.1 or sarama-main)"));
      }
    } else if (arg == "--max-messages" || arg == "--max-faults") {
      if (!ParseUint(value, &n) || n > 100000) {
        return Usage(absl::StrCat(cmd, ": bad ", arg, " '", value, "' (a number, at most 100000)"));
      }
      (arg == "--max-messages" ? a->options.max_messages : a->options.max_faults) =
          static_cast<int32_t>(n);
    } else if (absl::StartsWith(arg, "-")) {
      return Usage(absl::StrCat("unknown flag '", argv[i], "'"));
    } else if (a->in.empty()) {
      a->in = arg;
    } else {
      return Usage(absl::StrCat(cmd, " takes exactly one input file"));
    }
  }
  if (a->in.empty()) return Usage(absl::StrCat(cmd, " needs an input file"));
  if (a->out.empty()) return Usage(absl::StrCat(cmd, " needs -o OUT"));
  return -1;
}

bool LoadCodecBase(const CodecArgs& a, Scenario* base, int* code) {
  absl::StatusOr<Scenario> b = LoadBase(a.base, a.profile);
  if (b.ok()) {
    *base = std::move(*b);
    return true;
  }
  std::fprintf(stderr, "prodsim: %s\n", std::string(b.status().message()).c_str());
  *code = absl::IsNotFound(b.status()) ? kExitNoFile : kExitBadFile;
  return false;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) std::fprintf(stderr, "prodsim: cannot write %s\n", path.c_str());
  return static_cast<bool>(f);
}

int DecodeCommand(int argc, char** argv) {
  CodecArgs a;
  if (int code = ParseCodecArgs("decode", argc, argv, &a); code >= 0) return code;
  Scenario base;
  int code = 0;
  if (!LoadCodecBase(a, &base, &code)) return code;
  std::ifstream in(a.in, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read file (hint: check the path and its permissions)\n",
                 a.in.c_str());
    return kExitNoFile;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Scenario s = Decode(base, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                      a.options);
  const RunOutput out = RunScenario(s);
  s.description = absl::StrCat(s.description, ": ", a.in, " on base ",
                               a.base.empty() ? std::string(kDefaultBaseName) : a.base);
  s.expect = ExpectOf(out);
  if (!WriteFile(a.out, PrintScenario(s))) return kExitCantCreate;
  std::printf("%s: %s (%zu bytes decoded, %zu faults, %d messages)\n", a.out.c_str(),
              VerdictText(out).c_str(), bytes.size(), s.faults.size(), s.workload.messages);
  if (out.verdict == Verdict::kHarnessError)
    std::printf("  harness error: %s\n", out.harness_error.c_str());
  if (out.verdict != Verdict::kPass) {
    std::printf("  shrink it: prodsim shrink %s -o min.toml\n", a.out.c_str());
  }
  return 0;
}

int EncodeCommand(int argc, char** argv) {
  CodecArgs a;
  if (int code = ParseCodecArgs("encode", argc, argv, &a); code >= 0) return code;
  Scenario base, s;
  int code = 0;
  if (!LoadCodecBase(a, &base, &code)) return code;
  if (!Load(a.in, &s, &code)) return code;
  const std::string bytes = Encode(base, s, a.options);
  if (!WriteFile(a.out, bytes)) return kExitCantCreate;
  std::printf("%s: %zu bytes\n", a.out.c_str(), bytes.size());
  return 0;
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
  if (cmd == "explore") return Explore(argc, argv);
  if (cmd == "shrink") return ShrinkCommand(argc, argv);
  if (cmd == "bench") return BenchCommand(argc, argv);
  if (cmd == "real") return cli::RealCommand(argc, argv);
  if (cmd == "serve") return cli::ServeCommand(argc, argv);
  if (cmd == "fidelity") return cli::FidelityCommand(argc, argv);
  if (cmd == "decode") return DecodeCommand(argc, argv);
  if (cmd == "encode") return EncodeCommand(argc, argv);
  if (cmd == "schema") {
    if (argc != 3 || std::string(argv[2]) != "--markdown") {
      return Usage("schema takes --markdown (the field reference of scenarios/README.md)");
    }
    std::fputs(schema::MarkdownReference().c_str(), stdout);
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
