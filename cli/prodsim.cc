// prodsim's scenario subcommands (run, print, determinism, digest, explore,
// shrink, decode, encode, schema): each declared once, in
// DeclareScenarioCommands at the end of this file, with its flags (cli/flags.h),
// and run by the function it names. The exit codes are in `prodsim help`
// (command_line.cc, made from the verdicts' own).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/signature.h"
#include "cli/command_line.h"
#include "cli/common.h"
#include "cli/explore_report.h"
#include "cli/flags.h"
#include "cli/junit.h"
#include "producer/async_producer.h"
#include "producer/profile.h"
#include "scenarios/decode.h"
#include "scenarios/explore.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "scenarios/shrink.h"
#include "search/explore.h"
#include "search/summary.h"
#include "search/world.h"
#include "sim/kafka/wire/compression.h"
#include "wire/real_world.h"

namespace cli {
namespace {

using scenarios::DecodeOptions;
using scenarios::Duration;
using scenarios::kDefaultBaseName;
using scenarios::LoadBase;
using scenarios::MachineCores;
using scenarios::ProfileExpectSpec;
using scenarios::RunOptions;
using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::ShrinkOptions;
using scenarios::ShrinkResult;
using scenarios::Verdict;
using scenarios::VerdictName;
using scenarios::VerdictText;

struct Args {
  std::vector<std::string> files;
  std::string trace_out;
  std::string timeline_out;
  bool check_expect = false;
  std::string profile;    // --profile: run with this producer profile instead
  bool check = false;     // print --check: compare, do not print
  std::string junit_out;  // run --junit: the JUnit XML report
  // --client: a real client in simulated time instead of the model
  // (wire::RunReal with Clock::kSimulated), each step answered within
  // --step-bound of wall time.
  std::string client;
  Duration step_bound = Duration::Seconds(60);
};

// A file's run: the model's (RunScenario), or with --client the real
// client's in simulated time, bounded by the scenario's own limits.
wire::RealOutput RunClient(const Args& args, const Scenario& s, const RunOptions& options = {}) {
  if (args.client.empty()) {
    wire::RealOutput out;
    out.run = RunScenario(s, options);
    return out;
  }
  wire::RealOptions o;
  o.client = args.client;
  o.clock = wire::Clock::kSimulated;
  o.bound = s.limits.time;
  o.record_trace = options.record_trace || options.timeline;
  o.step_bound = args.step_bound;
  return wire::RunReal(s, o);
}
RunOutput RunOne(const Args& args, const Scenario& s, const RunOptions& options = {}) {
  return RunClient(args, s, options).run;
}

// run --client's second line: what the client did and what it cost.
std::string ClientLine(const wire::RealOutput& r) {
  std::string line = absl::StrFormat(
      "  client: %d step(s), %d connection(s), acked=%d errors=%d", r.client_steps, r.connections,
      r.run.record.producer.acks.size(), r.run.record.producer.errors.size());
  const auto& by = r.run.record.kafka.batches_by_compression;
  for (size_t c = 1; c < by.size(); ++c) {
    if (by[c] > 0) {
      absl::StrAppend(&line, " ", std::string(kafka::wire::CompressionName(static_cast<int>(c))),
                      "-batches=", by[c]);
    }
  }
  absl::StrAppend(&line, absl::StrFormat("; %.1f ms of wall time waiting for it",
                                         static_cast<double>(r.client_wait.nanos()) / 1e6));
  return line;
}

// Wall time, for the report line only: it never enters a run.
using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (printed only)

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n", error.c_str());
  return kExitUsage;
}

// Loads a scenario or prints its one-line error; sets *code on failure.
bool Load(const std::string& path, Scenario* s, int* code) { return cli::LoadOrSay(path, s, code); }

// Calls fn(path, scenario) for each file that loads; a file that does not
// load prints its error, sets *code (the first failure's code wins) and is
// given to bad(path, the error's line, its code).
template <typename Fn, typename Bad>
void ForEachScenario(const Args& args, int* code, Fn fn, Bad bad) {
  for (const std::string& path : args.files) {
    Scenario s;
    int load_code = 0;
    std::string said;
    if (!cli::LoadOrSay(path, &s, &load_code, &said)) {
      if (*code == 0) *code = load_code;
      bad(path, said, load_code);
      continue;
    }
    fn(path, s);
  }
}
template <typename Fn>
void ForEachScenario(const Args& args, int* code, Fn fn) {
  ForEachScenario(args, code, fn, [](const std::string&, const std::string&, int) {});
}

// The line run prints first for a file: verdict, digest, simulated time,
// steps, wall time.
std::string OutcomeLine(const std::string& path, const RunOutput& out, double wall_ms) {
  const sim::RunResult& r = out.record.run;
  // A world with mock faults is not a real cluster's: the line says so.
  std::string client;
  if (out.record.client.has_value()) {
    client = absl::StrCat(" client=", out.record.client->name);
  }
  return absl::StrFormat("%s: %s%s%s digest=%016x t=%ss steps=%d wall=%.1fms", path,
                         VerdictText(out), out.mock_faults ? " (mock faults)" : "", client,
                         r.digest, r.end_time.ToString(), r.steps, wall_ms);
}

// `second`: a line printed right after the outcome's (run --client's
// ClientLine), or empty; `client`: run's --client, for the trace command.
void PrintOutcome(const std::string& path, const RunOutput& out, double wall_ms,
                  const std::string& second = "", const std::string& client = "") {
  std::printf("%s\n", OutcomeLine(path, out, wall_ms).c_str());
  if (!second.empty()) std::printf("%s\n", second.c_str());
  cli::PrintViolations(out, 2);
  if (std::getenv("PRODSIM_STEPS")) std::printf("%s", checks::DebugSteps(out.record).c_str());
  if (out.verdict == Verdict::kHarnessError) return;
  cli::PrintSignature(out, 2);
  if (out.verdict != Verdict::kPass) {
    std::printf("  see the trace: prodsim run %s%s --trace=trace.txt\n", path.c_str(),
                client.empty() ? "" : absl::StrCat(" --client=", client).c_str());
  }
}

// With --check-expect: whether the run's [expect] (or profile entry) holds,
// and MatchesExpect's why when it does not.
struct ExpectHeld {
  bool holds = false;
  std::string why = {};
};

// What run --junit says of one run of a file: a case named by the file, its
// class by the profile it ran with (or the real client, `client`). Without
// --check-expect it passes iff the verdict is pass; with it (`expect` given)
// iff the expectation holds. A harness error that was not expected is an
// <error>.
junit::Case RunCase(const std::string& path, const Scenario& run, const RunOutput& out,
                    double wall_ms, const std::optional<ExpectHeld>& expect,
                    const std::string& client = "") {
  PRODSIM_ASSERT(wall_ms >= 0);
  const std::string profile =
      client.empty() ? std::string(sarama::ProfileName(run.producer.profile)) : client;
  junit::Case c{.name = path,
                .classname = absl::StrCat("prodsim.run.", profile),
                .seconds = wall_ms / 1000,
                .out = OutcomeLine(path, out, wall_ms)};
  if (expect ? expect->holds : out.verdict == Verdict::kPass) return c;
  c.outcome =
      out.verdict == Verdict::kHarnessError ? junit::Outcome::kError : junit::Outcome::kFailure;
  c.message = expect ? expect->why : VerdictText(out);
  c.type = std::string(VerdictName(out.verdict));
  // The verdict line is the message, unless the expectation took its place.
  if (expect) c.text = absl::StrCat(VerdictText(out), "\n");
  absl::StrAppend(&c.text, cli::ViolationsText(out, 0));
  if (out.verdict != Verdict::kHarnessError) absl::StrAppend(&c.text, cli::SignatureText(out, 0));
  absl::StrAppend(&c.text, "replay: prodsim run ", ShellWord(path),
                  client.empty() ? " --profile " : " --client=", profile,
                  expect ? " --check-expect" : "");
  return c;
}

// A file run could not load: an <error> with the line it printed.
junit::Case UnloadedCase(const std::string& path, const std::string& profile,
                         const std::string& said, int code) {
  return junit::Case{
      .name = path,
      .classname = profile.empty() ? "prodsim.run" : absl::StrCat("prodsim.run.", profile),
      .outcome = junit::Outcome::kError,
      .message = said,
      .type = code == kExitNoFile ? "missing-file" : "bad-file"};
}

double MillisSince(WallClock::time_point start) {
  return std::chrono::duration<double, std::milli>(WallClock::now() - start).count();
}

// With --check-expect and no --profile: each [expect.profiles."NAME"] entry
// of `s`, run with its profile and printed under the file's lines; false if
// one does not hold. With --junit, each is a case of its own in *cases.
bool CheckProfileEntries(const std::string& path, const Scenario& s,
                         std::vector<junit::Case>* cases) {
  bool all = true;
  if (!s.expect.has_value()) return all;
  for (const ProfileExpectSpec& p : s.expect->profiles) {
    const Scenario other = WithProfile(s, p.profile);
    const auto start = WallClock::now();
    const RunOutput o = RunScenario(other);
    const double wall_ms = MillisSince(start);
    std::string why;
    const bool ok = MatchesExpect(other, o, &why);
    std::printf("  on %s: %s digest=%016llx%s%s\n", p.profile.c_str(), VerdictText(o).c_str(),
                static_cast<unsigned long long>(o.record.run.digest),
                ok ? "" : ": expect does not hold: ", ok ? "" : why.c_str());
    if (!ok) all = false;
    if (cases != nullptr) cases->push_back(RunCase(path, other, o, wall_ms, ExpectHeld{ok, why}));
  }
  return all;
}

int Run(const Args& args) {
  int code = 0;
  size_t done = 0, failed = 0;
  const auto started = WallClock::now();
  const bool junit = !args.junit_out.empty();
  if (junit && !junit::Claim(args.junit_out)) return kExitCantCreate;
  junit::Suite suite{.name = args.profile.empty()
                                 ? "prodsim run"
                                 : absl::StrCat("prodsim run --profile ", args.profile)};
  std::vector<junit::Case>* cases = junit ? &suite.cases : nullptr;
  const auto one = [&](const std::string& path, const Scenario& s) {
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
    const wire::RealOutput real = RunClient(args, run, options);
    const RunOutput& out = real.run;
    const double wall_ms = MillisSince(start);
    PrintOutcome(path, out, wall_ms, args.client.empty() ? "" : ClientLine(real), args.client);
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
    std::optional<ExpectHeld> expect;
    if (args.check_expect) {
      std::string why;
      this_code = MatchesExpect(run, out, &why) ? 0 : 1;
      if (this_code != 0) std::printf("  expect does not hold: %s\n", why.c_str());
      expect = ExpectHeld{this_code == 0, why};
    }
    if (cases != nullptr) cases->push_back(RunCase(path, run, out, wall_ms, expect, args.client));
    // Without --profile, every [expect.profiles."NAME"] entry too.
    if (args.check_expect && args.profile.empty() && args.client.empty() &&
        !CheckProfileEntries(path, s, cases)) {
      this_code = 1;
    }
    if (this_code != 0) ++failed;
    if (code == 0) code = this_code;
  };
  const auto bad = [&](const std::string& path, const std::string& said, int load_code) {
    if (cases != nullptr) cases->push_back(UnloadedCase(path, args.profile, said, load_code));
  };
  ForEachScenario(args, &code, one, bad);
  suite.seconds = MillisSince(started) / 1000;
  if (junit && !junit::WriteFile(args.junit_out, {suite})) return kExitCantCreate;
  return code;
}

int Print(const Args& args) {
  if (args.files.size() != 1) return Usage("print takes exactly one file");
  Scenario s;
  int code = 0;
  if (!Load(args.files[0], &s, &code)) return code;
  const std::string printed = PrintScenario(s);
  if (!args.check) {
    std::fputs(printed.c_str(), stdout);
    return 0;
  }
  // Load read the file just now; what it holds is compared byte for byte.
  std::ifstream in(args.files[0], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text == printed) return 0;
  std::printf("%s: not in canonical form (prodsim print %s writes it)\n", args.files[0].c_str(),
              args.files[0].c_str());
  return 1;
}

int Determinism(const Args& args) {
  int code = 0;
  ForEachScenario(args, &code, [&](const std::string& path, const Scenario& s) {
    const uint64_t a = RunOne(args, s).record.run.digest;
    RunOptions traced;
    traced.record_trace = true;
    const uint64_t b = RunOne(args, s, traced).record.run.digest;
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
    const RunOutput out = RunOne(args, s);
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
  std::string summary, junit;  // the summary's JSON and JUnit report: "" none
  unsigned jobs = 0;           // 0: the default (the cores; over the wire search::kRealJobsDefault)
  // Over the wire.
  std::string client;
  std::string clock;  // --clock: "simulated", "wall", or "" (the driver's)
  Duration bound = Duration::Seconds(120);
  int64_t shrink_trials = 5, shrink_needed = 2;
  Duration shrink_time = Duration::Seconds(600);
};

// The search's world for a real `client` (explore --client, shrink
// --client), each trial bounded by `bound`, on `clock` ("simulated", "wall",
// or "": simulated where the driver has it); nullopt after printing why not.
std::optional<search::World> RealWorld(const std::string& client, Duration bound,
                                       const std::string& clock) {
  wire::RealOptions real;
  real.client = client;
  real.bound = bound;
  std::optional<wire::Clock> c;
  if (clock == "simulated") c = wire::Clock::kSimulated;
  if (clock == "wall") c = wire::Clock::kWall;
  absl::StatusOr<search::World> w = search::World::Real(real, c);
  if (!w.ok()) {
    std::fprintf(stderr, "prodsim: %s\n", std::string(w.status().message()).c_str());
    return std::nullopt;
  }
  return *std::move(w);
}

int Explore(const ExploreArgs& a) {
  if (a.shrink_needed > a.shrink_trials) {
    return Usage(absl::StrCat("--shrink-needed=", a.shrink_needed,
                              " is more than --shrink-trials=", a.shrink_trials));
  }
  if (a.base.empty()) return Usage("explore needs --base=FILE");
  if ((a.runs > 0) == (a.time.nanos() > 0)) {
    return Usage("explore needs one of --runs=N or --time=DURATION");
  }
  Scenario base;
  int code = 0;
  if (!Load(a.base, &base, &code)) return code;
  search::ExploreOptions o;
  if (!a.known.empty() && !search::LoadKnownSignatures(a.known, &o.known, &code)) return code;
  if (!a.out.empty() && !cli::MakeDirectory(a.out)) return kExitCantCreate;
  // Before the search, not after it: a nightly job learns of a bad path at once.
  for (const std::string& report : {a.summary, a.junit}) {
    if (!report.empty() && !cli::CanWrite(report)) return kExitCantCreate;
  }
  search::World world = search::World::Model();
  if (!a.client.empty()) {
    std::optional<search::World> real = RealWorld(a.client, a.bound, a.clock);
    if (!real) return kExitUsage;
    world = *std::move(real);
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
  o.generate.client_version = world.version();
  // A wall-clock trial sleeps most of its time; a simulated one computes.
  o.jobs = a.jobs > 0                           ? a.jobs
           : world.real() && !world.simulated() ? search::kRealJobsDefault
                                                : MachineCores();
  o.shrink_trials = static_cast<int>(a.shrink_trials);
  o.shrink_needed = static_cast<int>(a.shrink_needed);
  o.shrink_time = a.shrink_time;
  // Load read the file just now; the summary says which base it was.
  std::ifstream in(a.base, std::ios::binary);
  o.base_digest = search::DigestText(
      std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  o.base_path = a.base;
  o.known_dir = a.known;
  o.on_summary = [&a](const search::ExploreSummary& s) {
    if (!a.summary.empty() && !WriteText(a.summary, search::SummaryJson(s))) {
      return kExitCantCreate;
    }
    if (!a.junit.empty() && !junit::WriteFile(a.junit, {ExploreSuite(s)})) return kExitCantCreate;
    return 0;
  };
  return search::Explore(base, world, o);
}

struct ShrinkArgs {
  std::vector<std::string> files;  // the one scenario file
  std::string out;
  int64_t max_runs = ShrinkOptions{}.max_runs;
  bool keep_close_at = false;
  std::string check;
  // Over the wire: K trials per candidate, kept when R of them fail the
  // same way, at most --time in all, trials --jobs at once.
  std::string client;
  std::string clock;  // --clock, as explore's
  int64_t trials = 5, needed = 2;
  Duration time_bound = Duration::Seconds(1800), bound = Duration::Seconds(120);
  unsigned jobs = search::kRealJobsDefault;
};

int ShrinkCommand(const ShrinkArgs& a) {
  if (a.files.size() > 1) return Usage("shrink takes exactly one scenario file");
  if (a.files.empty()) {
    return Usage("shrink needs a scenario file: prodsim shrink FILE -o MIN.toml");
  }
  if (a.out.empty()) return Usage("shrink needs -o MIN.toml");
  if (a.needed > a.trials) {
    return Usage(absl::StrCat("shrink: --needed=", a.needed, " is more than --trials=", a.trials));
  }
  const std::string& file = a.files[0];
  const std::string& out = a.out;
  const std::string& client = a.client;
  Scenario s;
  int code = 0;
  if (!Load(file, &s, &code)) return code;
  const auto started = WallClock::now();
  std::optional<search::World> world;
  if (!client.empty()) {
    world = RealWorld(client, a.bound, a.clock);
    if (!world) return kExitUsage;
  }
  // Where a run is a replay (simulated time, a driver that replays
  // exactly), one run decides a change.
  const bool simulated = world && world->simulated();
  const bool exact = simulated && world->exact();
  const int64_t trials = exact ? 1 : a.trials, needed = exact ? 1 : a.needed;
  std::string how;
  if (exact) {
    how = absl::StrCat("; ", client,
                       " in simulated time: a change is kept when its run fails the "
                       "same way");
  } else if (simulated) {
    how = absl::StrCat("; ", client, " in simulated time (near replays): a change is kept when ",
                       needed, " of ", trials, " runs fail the same way");
  } else if (world) {
    how = absl::StrCat("; over the wire with ", client, ": a change is kept when ", needed, " of ",
                       trials, " trials fail the same way");
  }
  std::printf("shrinking %s: %s%s\n", file.c_str(), DescribeSize(s).c_str(), how.c_str());
  ShrinkOptions options;
  options.max_runs = world ? INT64_MAX : a.max_runs;
  options.keep_close_at = a.keep_close_at;
  options.check = a.check;
  options.log = [](const std::string& step) {
    std::printf("  %s\n", step.c_str());
    std::fflush(stdout);
  };
  if (world) {
    options.trials = [&](const Scenario& c) {
      return search::Outputs(search::Trials(*world, c, static_cast<int>(trials), a.jobs));
    };
    options.needed = static_cast<int>(needed);
    options.stop = [&] {
      return std::chrono::duration<double>(WallClock::now() - started).count() * 1e9 >=
             static_cast<double>(a.time_bound.nanos());
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
  r.scenario.description =
      absl::StrCat("Shrunk by prodsim shrink from ", file, " (", r.runs,
                   world ? absl::StrCat(" trials of ", client, ", a change kept when ", needed,
                                        " of ", trials, " failed the same way")
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
    std::printf("written to %s (replay: %s)\n", out.c_str(),
                simulated
                    ? world->ReplayCommand(out).c_str()
                    : absl::StrCat("prodsim real ", out, " --client=", client, " --trials=", trials)
                          .c_str());
  } else {
    std::printf("written to %s (replay: prodsim run %s)\n", out.c_str(), out.c_str());
  }
  return 0;
}

struct CodecArgs {
  std::vector<std::string> files;  // the one input file
  std::string out, base, profile;
  DecodeOptions options;
};

// The checks decode and encode share, after the flags.
int CheckCodecArgs(const char* cmd, const CodecArgs& a) {
  if (a.files.size() > 1) return Usage(absl::StrCat(cmd, " takes exactly one input file"));
  if (a.files.empty()) return Usage(absl::StrCat(cmd, " needs an input file"));
  if (a.out.empty()) return Usage(absl::StrCat(cmd, " needs -o OUT"));
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

int DecodeCommand(const CodecArgs& a) {
  if (int code = CheckCodecArgs("decode", a); code >= 0) return code;
  const std::string& in_file = a.files[0];
  Scenario base;
  int code = 0;
  if (!LoadCodecBase(a, &base, &code)) return code;
  std::ifstream in(in_file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read file (hint: check the path and its permissions)\n",
                 in_file.c_str());
    return kExitNoFile;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Scenario s = Decode(base, std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                      a.options);
  const RunOutput out = RunScenario(s);
  s.description = absl::StrCat(s.description, ": ", in_file, " on base ",
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

int EncodeCommand(const CodecArgs& a) {
  if (int code = CheckCodecArgs("encode", a); code >= 0) return code;
  const std::string& in_file = a.files[0];
  Scenario base, s;
  int code = 0;
  if (!LoadCodecBase(a, &base, &code)) return code;
  if (!Load(in_file, &s, &code)) return code;
  const std::string bytes = Encode(base, s, a.options);
  if (!WriteFile(a.out, bytes)) return kExitCantCreate;
  std::printf("%s: %zu bytes\n", a.out.c_str(), bytes.size());
  return 0;
}

void DeclareExplore(CommandLine* cl) {
  auto a = std::make_shared<ExploreArgs>();
  Flags& f =
      cl->Add("explore", "run scenarios generated from a base and report the failures",
              "Generates scenarios from the base (random faults, swarm style, random schedules,\n"
              "latencies and producer settings); prints progress, writes each failing scenario\n"
              "to --out with its verdict as [expect], and a summary grouping the failures by\n"
              "signature (mechanism@function: count, first seed, smallest file). Stops at the\n"
              "first failure unless --keep-going. The lines, files and summary are those of\n"
              "--jobs=1 (runs are consumed in order), but for runs/s and, with --time, how far\n"
              "it got. --shard=I/N runs the runs I, N+I, 2N+I, ... (--runs counts a shard's);\n"
              "prodsim merge adds up the shards' --summary files. Exit 0: nothing (new) found;\n"
              "1: found failures (with --known: a new signature, unclassified included).",
              [a](const Flags&) { return Explore(*a); });
  f.Text("--base", &a->base, "FILE", "the scenario the runs are generated from (required)");
  f.Count("--runs", &a->runs, 1, INT64_MAX, "run N generated scenarios (or --time)")
      ->default_str("");
  f.Duration("--time", &a->time, "run for this long (or --runs)");
  f.Count("--seed", &a->seed, 0, UINT64_MAX, "the root seed of the generated scenarios");
  f.Custom(
       "--shard", "I/N", "I/N with I < N",
       [a](const std::string& text) {
         const size_t slash = text.find('/');
         uint64_t i = 0, n = 0;
         if (slash == std::string::npos ||
             !ParseCount(std::string_view(text).substr(0, slash), 0, UINT64_MAX, &i) ||
             !ParseCount(std::string_view(text).substr(slash + 1), 1, UINT64_MAX, &n) || i >= n) {
           return false;
         }
         a->shard = i;
         a->shards = n;
         return true;
       },
       "run the I-th of N disjoint shares of the runs")
      ->default_str("0/1");
  f.Switch("--keep-going", &a->keep_going, "do not stop at the first failure");
  f.Text("--out", &a->out, "DIR",
         "write each failing scenario to DIR, and shrink the smallest file of each new "
         "signature (keeping its signature) to DIR/new-MECHANISM.toml");
  f.Switch("--no-shrink", &a->shrink, "with --out: do not shrink the new signatures' files", false);
  f.Switch("--mock-faults", &a->mock_faults,
           "draw mock.error and mock.drop_response faults too (what no real cluster does)");
  f.Count("--jobs", &a->jobs, 1, 1024, "run on N threads")->default_str("cores; 8 over the wire");
  f.Text("--known", &a->known, "DIR",
         "the signatures of DIR's scenario files ([expect] signature) are known findings: "
         "reported as known, not new; without --keep-going the search stops at the first new "
         "one");
  f.Text("--summary", &a->summary, "OUT.json",
         "write the summary as JSON (base and its digest, seed, shard, runs, counts, each "
         "signature's first run and smallest file), for prodsim merge");
  f.Text("--junit", &a->junit, "OUT.xml",
         "write a JUnit report: a case per signature, a new one failing, and one for harness "
         "errors");
  f.Text("--client", &a->client, "NAME[@VERSION]|CMD",
         "run each generated scenario over the wire against a real client (prodsim real's "
         "drivers), one trial each; each failing file gets its trial's report and broker "
         "history beside it, and a new signature's smallest file is shrunk over the wire");
  f.Choice("--clock", &a->clock, {"simulated", "wall"},
           "with --client: the client in simulated time (a run is a replay) or on the wall clock "
           "over real sockets (a trial is a sample)")
      ->default_str("simulated where the driver has it, else wall");
  f.Duration("--bound", &a->bound, "with --client: bound each trial");
  f.Count("--shrink-trials", &a->shrink_trials, 1, 1000,
          "with --client on the wall clock: trials per shrink candidate (simulated time: 1)");
  f.Count("--shrink-needed", &a->shrink_needed, 1, 1000,
          "with --client on the wall clock: a shrink change is kept when this many of the "
          "trials fail the same way");
  f.Duration("--shrink-time", &a->shrink_time, "with --client: bound each shrink");
}

void DeclareShrink(CommandLine* cl) {
  auto a = std::make_shared<ShrinkArgs>();
  Flags& f =
      cl->Add("shrink", "make a failing scenario small while it keeps failing the same way",
              "Removes faults, shortens them, cuts messages, keys, topics, partitions and\n"
              "brokers, and moves settings toward their defaults, keeping the verdict, the\n"
              "deciding check and the signature. Prints each step and the final size; writes\n"
              "MIN.toml with its verdict as [expect]. Exit 0: written; 1: FILE does not fail\n"
              "(nothing to shrink).",
              [a](const Flags&) { return ShrinkCommand(*a); });
  f.Files(&a->files, "FILE", "the failing scenario file");
  f.Text("-o,--out", &a->out, "MIN.toml", "where to write the result (required)");
  f.Count("--max-runs", &a->max_runs, 1, INT64_MAX, "bound the search");
  f.Switch("--keep-close-at", &a->keep_close_at, "keep workload.close_at");
  f.Checked(
      "--check", &a->check, "NAME", "a check's name",
      [](const std::string& name) { return checks::FindCheck(name) != nullptr; },
      "keep that check among the violations instead of the verdict and deciding check (a "
      "symptom another check's verdict hides)");
  f.Text("--client", &a->client, "NAME[@VERSION]|CMD",
         "shrink against a real client: in simulated time (where its driver has it) each "
         "candidate runs once; on the wall clock each runs --trials times and is kept when "
         "--needed of them fail with the same verdict, check and signature");
  f.Choice("--clock", &a->clock, {"simulated", "wall"},
           "with --client: simulated time or the wall clock")
      ->default_str("simulated where the driver has it, else wall");
  f.Count("--trials", &a->trials, 1, 1000, "with --client on the wall clock: trials per candidate");
  f.Count("--needed", &a->needed, 1, 1000,
          "with --client on the wall clock: failing trials to keep a change");
  f.Count("--jobs", &a->jobs, 1, 1000, "with --client: trials at once");
  f.Duration("--time", &a->time_bound, "with --client: bound the whole search");
  f.Duration("--bound", &a->bound, "with --client: bound each trial");
}

void DeclareCodec(CommandLine* cl) {
  for (const char* name : {"decode", "encode"}) {
    const std::string cmd = name;
    auto a = std::make_shared<CodecArgs>();
    Flags& f =
        cmd == "decode"
            ? cl->Add("decode", "the scenario a scenario_fuzzer input stands for",
                      "Writes the scenario a scenario_fuzzer input (a libFuzzer crash file)\n"
                      "stands for, with the verdict of its run as [expect]; then prodsim shrink\n"
                      "makes it small. --base, --profile, --max-messages and --max-faults must\n"
                      "be what the fuzzer ran with (PRODSIM_FUZZ_BASE, PRODSIM_FUZZ_PROFILE,\n"
                      "PRODSIM_FUZZ_MAX_MESSAGES, PRODSIM_FUZZ_MAX_FAULTS,\n"
                      "PRODSIM_FUZZ_MOCK_FAULTS=1 for --mock-faults). Exit 0: written.",
                      [a](const Flags&) { return DecodeCommand(*a); })
            : cl->Add("encode", "the scenario_fuzzer input that decodes to a scenario",
                      "The inverse of decode, for seed corpora: the bytes that decode to the\n"
                      "scenario as nearly as the encoding can say it (fields clamped to the\n"
                      "base's ranges).",
                      [a](const Flags&) { return EncodeCommand(*a); });
    f.Files(&a->files, cmd == "decode" ? "CRASH_FILE" : "SCENARIO.toml", "the input file");
    f.Text("-o,--out", &a->out, cmd == "decode" ? "SCENARIO.toml" : "BYTES",
           "where to write the result (required)");
    f.Text("--base", &a->base, "FILE", "the fuzzer's base scenario")
        ->default_str("the compiled-in bench/scenarios/report-config-steady.toml");
    f.Choice("--profile", &a->profile, ProfileNames(), "the fuzzer's producer profile");
    f.Count("--max-messages", &a->options.max_messages, 0, 100000, "the fuzzer's bound");
    f.Count("--max-faults", &a->options.max_faults, 0, 100000, "the fuzzer's bound");
    f.Switch("--mock-faults", &a->options.mock_faults, "the fuzzer drew mock faults too");
  }
}

}  // namespace

void DeclareScenarioCommands(CommandLine* cl) {
  // The subcommands that take scenario files and nothing else but run's flags.
  struct FileCommand {
    const char* name;
    const char* summary;
    const char* details;
    int (*run)(const Args&);
  };
  constexpr FileCommand kFileCommands[] = {
      {"run", "run each scenario file and print its verdict",
       "Prints one line per file: verdict, failing check, digest, simulated time,\n"
       "steps and wall time; a failure's violations and signature follow it.",
       Run},
      {"print", "print a scenario file in canonical form", "", Print},
      {"determinism", "run each scenario twice and check the digests are equal",
       "The second run records the trace; the digests must not differ.", Determinism},
      {"digest", "print each file's verdict and digest only",
       "For comparing builds (tools/compare_digests.sh).", Digest},
  };
  for (const FileCommand& c : kFileCommands) {
    auto a = std::make_shared<Args>();
    Flags& f = cl->Add(c.name, c.summary, c.details, [a, run = c.run](const Flags&) {
      if (a->files.empty()) return Usage("no scenario file given");
      return run(*a);
    });
    f.Files(&a->files, "FILE", "the scenario file(s)");
    if (c.run == Print) {
      f.Switch("--check", &a->check,
               "print nothing; exit 1 when the file is not byte for byte what print writes");
    }
    if (c.run == Print) continue;
    f.Text("--client", &a->client, "NAME[@VERSION]|CMD",
           "run a real client in simulated time instead of the model: its driver in lockstep "
           "with the simulated cluster (clients/README.md), deterministic as far as the driver "
           "makes its client (docs/real-clients.md)");
    f.Duration("--step-bound", &a->step_bound,
               "with --client: the wall time the driver may take to answer one step before it is "
               "killed as hung (client-hung)")
        ->default_str("60s");
    if (c.run != Run) continue;
    f.Text("--trace", &a->trace_out, "OUT", "write the readable trace of the (single) file to OUT");
    f.Text("--timeline", &a->timeline_out, "OUT.json",
           "write a Chrome/Perfetto trace-event file (open it in ui.perfetto.dev)");
    f.Switch("--check-expect", &a->check_expect,
             "exit 0 iff each file's [expect] block holds, and each "
             "[expect.profiles.\"NAME\"] entry with that profile");
    f.Choice("--profile", &a->profile, ProfileNames(),
             "run with this producer profile instead of the file's; --check-expect then "
             "checks its entry");
    f.Text("--junit", &a->junit_out, "OUT.xml",
           "write a JUnit XML report for CI systems: a test case per file (with --check-expect, "
           "per [expect] entry checked), failing as the exit code does, with the violations "
           "and the replay command");
  }
  DeclareExplore(cl);
  DeclareShrink(cl);
  DeclareCodec(cl);
  auto markdown = std::make_shared<bool>(false);
  Flags& schema = cl->Add(
      "schema", "print the scenario format's field reference",
      "Generated from the format's description (scenarios/schema.cc); scenarios/README.md\n"
      "holds its output.",
      [markdown](const Flags&) -> int {
        if (!*markdown) {
          return Usage("schema takes --markdown (the field reference of scenarios/README.md)");
        }
        std::fputs(scenarios::schema::MarkdownReference().c_str(), stdout);
        return 0;
      });
  schema.Switch("--markdown", markdown.get(), "print it as Markdown (required)");
}

}  // namespace cli
