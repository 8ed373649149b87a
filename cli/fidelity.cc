// prodsim fidelity: the model's verdict distribution over schedule seeds
// beside a real client's over wire trials, per scenario file.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/command_line.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/junit.h"
#include "producer/profile.h"
#include "scenarios/explore.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "search/world.h"
#include "sim/core/scheduler.h"
#include "wire/real_world.h"

namespace cli {
namespace {

using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;

constexpr int64_t kCountMax = 100000;
// How far apart the two columns' failure rates may be and still agree: the
// fidelity target (docs/fidelity.md).
constexpr double kAgreement = 0.25;

// Wall time, for the JUnit report only.
using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (reported only)

double SecondsSince(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n", error.c_str());
  return kExitUsage;
}

// The verdicts of one side: counts by verdict text, failures (any verdict
// but pass and harness-error) and harness errors apart.
struct Side {
  int64_t runs = 0;
  int64_t failures = 0;
  int64_t harness_errors = 0;
  std::string first_harness_error;
  absl::btree_map<std::string, int64_t> verdicts;

  void Add(const RunOutput& out) {
    ++runs;
    ++verdicts[scenarios::VerdictText(out)];
    if (out.verdict == Verdict::kHarnessError) {
      ++harness_errors;
      if (first_harness_error.empty()) first_harness_error = out.harness_error;
    } else if (out.verdict != Verdict::kPass) {
      ++failures;
    }
  }
  // Failures among the runs that ran (harness errors left out); -1 if none ran.
  double Rate() const {
    const int64_t ran = runs - harness_errors;
    return ran > 0 ? static_cast<double>(failures) / static_cast<double>(ran) : -1;
  }
  std::string Distribution() const {
    std::vector<std::string> parts;
    for (const auto& [v, n] : verdicts) parts.push_back(absl::StrCat(v, " ", n));
    return absl::StrJoin(parts, "; ");
  }
};

std::string Rate(const Side& s) {
  if (s.Rate() < 0) return "-";
  return absl::StrCat(s.failures, "/", s.runs - s.harness_errors);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// One CSV line into fields (RFC 4180 quoting, as CsvField writes it).
std::vector<std::string> CsvSplit(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The real side of an earlier run, by file: real trials cost real time
// (minutes per file), the model's seconds, so a new model column can be set
// beside real trials already run. Columns as the CSV header names them.
struct SavedReal {
  std::string client;
  Side side;
  double load = -1, cpu = -1;  // -1: not recorded (a CSV from before)
};

// Reads `path`: 0, or on a bad file says why (file:line) and returns the
// exit code.
int ReadSavedReal(const std::string& path, absl::btree_map<std::string, SavedReal>* out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "prodsim: cannot read %s\n", path.c_str());
    return kExitNoFile;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1 || line.empty()) continue;  // the header
    const std::vector<std::string> f = CsvSplit(line);
    int64_t trials = 0, failures = 0, ran = 0, errors = 0;
    // 15 columns before the machine's load and the client's CPU time were
    // kept beside the real column, 17 since.
    if ((f.size() != 15 && f.size() != 17) || !absl::SimpleAtoi(f[9], &trials) ||
        !absl::SimpleAtoi(f[10], &failures) || !absl::SimpleAtoi(f[11], &ran) ||
        !absl::SimpleAtoi(f[12], &errors)) {
      std::fprintf(stderr, "prodsim: %s:%d:1: not a line of prodsim fidelity's CSV\n", path.c_str(),
                   lineno);
      return kExitBadFile;
    }
    SavedReal& r = (*out)[f[0]];
    r.client = f[8];
    // Empty when not measured: they stay -1.
    if (f.size() == 17) {
      if (!f[15].empty() && !absl::SimpleAtod(f[15], &r.load)) r.load = -1;
      if (!f[16].empty() && !absl::SimpleAtod(f[16], &r.cpu)) r.cpu = -1;
    }
    r.side.runs = trials;
    r.side.failures = failures;
    r.side.harness_errors = errors;
    for (const absl::string_view part : absl::StrSplit(f[13], "; ", absl::SkipEmpty())) {
      const size_t sp = part.rfind(' ');
      int64_t n = 0;
      if (sp == absl::string_view::npos || !absl::SimpleAtoi(part.substr(sp + 1), &n)) continue;
      r.side.verdicts[std::string(part.substr(0, sp))] = n;
    }
  }
  return 0;
}

// What fidelity --junit says of one file: a case named by it (its class, the
// client's, is set at the end), passing when the two columns agree (within
// kAgreement); <failure> when they do not; <error> when a side could not run
// it (harness errors only, or no real trials: `no_real` says why); <skipped>
// with --trials=0 and no --real-from column. `block` is what was printed
// for it; `again` the command that runs it again ("": none).
junit::Case FileCase(const std::string& name, const Side& model, const Side& real,
                     const std::string& no_real, const std::string& block, const std::string& again,
                     double seconds) {
  junit::Case c{.name = name, .seconds = std::max(0.0, seconds), .out = block};
  if (model.Rate() < 0) {
    c.outcome = junit::Outcome::kError;
    c.message = absl::StrCat("the model could not run it: ", model.first_harness_error);
    c.type = "harness-error";
  } else if (real.Rate() < 0 && real.runs > 0) {
    c.outcome = junit::Outcome::kError;
    c.message = absl::StrCat("the real client could not run it: ", real.first_harness_error);
    c.type = "harness-error";
  } else if (real.Rate() < 0 && !no_real.empty()) {
    c.outcome = junit::Outcome::kError;
    c.message = absl::StrCat("no real trials: ", no_real);
    c.type = "no-client";
  } else if (real.Rate() < 0) {
    c.outcome = junit::Outcome::kSkipped;
    c.message = "no real column (--trials=0)";
  } else if (const double diff = std::fabs(model.Rate() - real.Rate()); diff > kAgreement) {
    c.outcome = junit::Outcome::kFailure;
    c.message = absl::StrFormat("|diff| %.2f > %.2f: model %s (%s), real %s (%s)", diff, kAgreement,
                                Rate(model), model.Distribution(), Rate(real), real.Distribution());
    c.type = "fidelity";
  }
  if (c.outcome == junit::Outcome::kFailure || c.outcome == junit::Outcome::kError) {
    c.text = absl::StrCat("model: ", model.Distribution(), "\nreal: ", real.Distribution(), "\n");
    if (!again.empty()) absl::StrAppend(&c.text, "again: ", again);
  }
  return c;
}

struct FidelityArgs {
  std::vector<std::string> files;
  wire::RealOptions options;
  int64_t seeds = 40, trials = 20, generated = 0, jobs = 1;
  uint64_t explore_seed = 1;
  std::string profile, policy = "random", csv, real_from, base_file, out_dir, junit_out;
};

// The command that runs one file of the population again as this one did,
// or "" for a generated scenario not written to a file.
std::string AgainCommand(const FidelityArgs& a, const std::string& name) {
  if (a.generated > 0 && a.out_dir.empty()) return "";
  std::string cmd =
      absl::StrCat("prodsim fidelity ", ShellWord(name), " --client=", ShellWord(a.options.client),
                   " --seeds=", a.seeds, " --trials=", a.trials, " --policy=", a.policy);
  if (!a.profile.empty()) absl::StrAppend(&cmd, " --profile=", a.profile);
  if (!a.real_from.empty()) absl::StrAppend(&cmd, " --real-from=", ShellWord(a.real_from));
  return cmd;
}

int FidelityCommand(FidelityArgs& a) {
  const std::vector<std::string>& files = a.files;
  wire::RealOptions& options = a.options;
  const int64_t seeds = a.seeds, trials = a.trials, generated = a.generated, jobs = a.jobs;
  const uint64_t explore_seed = a.explore_seed;
  const std::string &profile = a.profile, &policy = a.policy, &csv = a.csv,
                    &real_from = a.real_from, &base_file = a.base_file, &out_dir = a.out_dir;
  if (generated > 0 && (!files.empty() || base_file.empty())) {
    return Usage("--generated=N takes --base=FILE and no scenario files");
  }
  if (generated == 0 && files.empty()) return Usage("fidelity takes one or more scenario files");
  if (options.client.empty()) return Usage("fidelity needs --client=NAME or --client=CMD");
  // Without the driver, only a --real-from column can be set.
  absl::StatusOr<search::World> world = search::World::Real(options);
  if (!world.ok() && real_from.empty()) {
    std::fprintf(stderr, "prodsim: %s\n", std::string(world.status().message()).c_str());
    return kExitUsage;
  }

  // The population: the files, or scenarios generated from the base.
  std::vector<std::pair<std::string, Scenario>> population;
  if (generated > 0) {
    Scenario base;
    int code = 0;
    if (!LoadOrSay(base_file, &base, &code)) return code;
    if (!out_dir.empty() && !MakeDirectory(out_dir)) return kExitCantCreate;
    scenarios::GenerateOptions g;
    g.client = world.ok() ? world->family() : "other";
    for (int64_t i = 0; i < generated; ++i) {
      const uint64_t seed = scenarios::ExploreSeed(explore_seed, 0, 1, static_cast<uint64_t>(i));
      Scenario s = scenarios::Generate(base, seed, g);
      std::string name = absl::StrCat("generated-", i, " (explore seed ", seed, ")");
      if (!out_dir.empty()) {
        name = absl::StrCat(out_dir, "/generated-", i, ".toml");
        if (!WriteText(name, scenarios::PrintScenario(s))) return kExitCantCreate;
      }
      population.emplace_back(std::move(name), std::move(s));
    }
  } else {
    for (const std::string& f : files) {
      Scenario s;
      int code = 0;
      if (!LoadOrSay(f, &s, &code)) return code;
      population.emplace_back(f, std::move(s));
    }
  }
  absl::btree_map<std::string, SavedReal> saved;
  if (!real_from.empty()) {
    if (const int code = ReadSavedReal(real_from, &saved); code != 0) return code;
  }
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) {
      std::fprintf(stderr, "prodsim: cannot write %s\n", csv.c_str());
      return kExitCantCreate;
    }
    out << "file,profile,policy,seeds,model_failures,model_runs_ran,model_harness_errors,"
           "model_verdicts,client,trials,real_failures,real_trials_ran,real_harness_errors,"
           "real_verdicts,difference,real_load_mean,real_client_cpu_s_mean\n";
  }
  const bool junit = !a.junit_out.empty();
  if (junit && !junit::Claim(a.junit_out)) return kExitCantCreate;
  const auto started = WallClock::now();
  std::vector<junit::Case> cases;
  std::printf(
      "prodsim fidelity: model (policy %s, seeds 1..%lld) beside %s over the wire (%lld "
      "trials, %lld at once; real timing: a distribution)\n\n",
      policy.c_str(), static_cast<long long>(seeds), options.client.c_str(),
      static_cast<long long>(trials), static_cast<long long>(jobs));
  std::printf("%-58s %-14s %9s %9s %6s\n", "file", "profile", "model", "real", "|diff|");
  std::string client_name = options.client;
  int64_t compared = 0, within = 0;
  double diff_sum = 0;
  for (auto& [name, scenario] : population) {
    const auto file_started = WallClock::now();
    std::string no_real;  // why a file has no real column where trials were asked for
    Scenario s = scenario;
    if (!profile.empty()) s = scenarios::WithProfile(s, profile);
    Side model, real;
    for (int64_t seed = 1; seed <= seeds; ++seed) {
      Scenario m = s;
      m.seed = static_cast<uint64_t>(seed);
      m.schedule.policy = *sim::ParsePolicy(policy);  // checked with the flags
      m.schedule.tape.clear();
      // retry-pacing reads the model's producer steps; a real client's run
      // has none (checks/run_record.h), so the wire side can never fail it.
      // Counted on the model side alone it makes a gap that is no
      // difference in behaviour: both sides are judged by the same checks.
      m.checks.retry_pacing = false;
      model.Add(scenarios::RunScenario(m));
      if (model.harness_errors > 0) break;  // the scenario, not the seed: every seed would say it
    }
    const auto saved_real = saved.find(name);
    double load = -1, cpu = -1;
    if (saved_real != saved.end()) {
      real = saved_real->second.side;
      client_name = saved_real->second.client;
      load = saved_real->second.load;
      cpu = saved_real->second.cpu;
    } else if (trials > 0 && !world.ok()) {
      no_real = std::string(world.status().message());
      std::printf("  (no real trials: %s)\n", no_real.c_str());
    } else if (trials > 0) {
      double load_sum = 0, cpu_sum = 0;
      int64_t loads = 0;
      for (const wire::RealOutput& r :
           search::Trials(*world, s, static_cast<int>(trials), static_cast<unsigned>(jobs))) {
        if (r.run.record.client && !r.run.record.client->name.empty()) {
          client_name = r.run.record.client->name;
        }
        real.Add(r.run);
        if (r.load_before >= 0) load_sum += r.load_before, ++loads;
        cpu_sum += static_cast<double>(r.client_cpu.nanos()) / 1e9;
      }
      load = loads > 0 ? load_sum / static_cast<double>(loads) : -1;
      cpu = real.runs > 0 ? cpu_sum / static_cast<double>(real.runs) : -1;
    }
    const bool both = model.Rate() >= 0 && real.Rate() >= 0;
    const double diff = both ? std::fabs(model.Rate() - real.Rate()) : -1;
    if (both) {
      ++compared;
      diff_sum += diff;
      if (diff <= kAgreement) ++within;
    }
    // The file's lines, printed and (with --junit) its case's system-out.
    std::string block =
        absl::StrFormat("%-58s %-14s %9s %9s %6s\n", name, sarama::ProfileName(s.producer.profile),
                        Rate(model), Rate(real), both ? absl::StrFormat("%.2f", diff) : "-");
    absl::StrAppend(&block, "  model: ", model.Distribution(), "\n");
    if (!model.first_harness_error.empty()) {
      absl::StrAppend(&block, "    harness error: ", model.first_harness_error, "\n");
    }
    absl::StrAppend(&block, "  real ", client_name, ": ", real.Distribution(), "\n");
    if (load >= 0 || cpu >= 0) absl::StrAppend(&block, "    ", MachineNote(load, cpu), "\n");
    if (!real.first_harness_error.empty()) {
      absl::StrAppend(&block, "    harness error: ", real.first_harness_error, "\n");
    }
    std::fputs(block.c_str(), stdout);
    std::fflush(stdout);
    if (junit) {
      cases.push_back(FileCase(name, model, real, no_real, block, AgainCommand(a, name),
                               SecondsSince(file_started)));
    }
    if (out) {
      out << CsvField(name) << "," << sarama::ProfileName(s.producer.profile) << "," << policy
          << "," << seeds << "," << model.failures << "," << model.runs - model.harness_errors
          << "," << model.harness_errors << "," << CsvField(model.Distribution()) << ","
          << CsvField(client_name) << "," << real.runs << "," << real.failures << ","
          << real.runs - real.harness_errors << "," << real.harness_errors << ","
          << CsvField(real.Distribution()) << ","
          << (both ? absl::StrFormat("%.3f", diff) : std::string()) << ","
          << (load >= 0 ? absl::StrFormat("%.2f", load) : std::string()) << ","
          << (cpu >= 0 ? absl::StrFormat("%.3f", cpu) : std::string()) << "\n";
    }
  }
  if (compared > 0) {
    std::printf("\n%lld of %lld within %.2f of the real client; mean |diff| %.3f\n",
                static_cast<long long>(within), static_cast<long long>(compared), kAgreement,
                diff_sum / static_cast<double>(compared));
  }
  if (!csv.empty()) std::printf("\nwritten to %s\n", csv.c_str());
  if (junit) {
    for (junit::Case& c : cases) c.classname = absl::StrCat("prodsim.fidelity.", client_name);
    if (!junit::WriteFile(a.junit_out,
                          {junit::Suite{.name = absl::StrCat("prodsim fidelity ", client_name),
                                        .seconds = SecondsSince(started),
                                        .cases = std::move(cases)}})) {
      return kExitCantCreate;
    }
  }
  return 0;
}

}  // namespace

void DeclareFidelity(CommandLine* cl) {
  auto a = std::make_shared<FidelityArgs>();
  a->options.client.clear();
  Flags& f =
      cl->Add("fidelity", "the model's verdicts over seeds beside a real client's over trials",
              "For each scenario file, the model's verdicts over schedule seeds 1..--seeds\n"
              "beside the real client's over --trials wire trials, one table (printed, and\n"
              "written as CSV with --csv). The model side runs the file with --policy (the\n"
              "file's schedule policy is replaced, so that the seeds sample interleavings)\n"
              "and --profile (default the file's own; give the one matching the client's\n"
              "version: sarama-1.42.1 for Sarama v1.42.1, sarama-main for main; for\n"
              "librdkafka and kafkajs no model exists and the column is the file's Sarama\n"
              "profile, for reference). A failure is any verdict but pass; harness errors (a\n"
              "scenario a side cannot run) are counted apart. Real trials are samples of\n"
              "real timing: the real column is a distribution. Every real column says the\n"
              "1-minute load before its trials and the client's CPU time per trial (a real\n"
              "column moves with load; \"loaded\" when the load was at or above the cores).\n"
              "With --generated, the last line gives the share within 0.25 and the mean\n"
              "|diff|.",
              [a](const Flags&) { return FidelityCommand(*a); });
  f.Files(&a->files, "FILE", "the scenario files (or --generated)");
  f.Text("--client", &a->options.client, "NAME|CMD", "the real client (required)");
  f.Count("--seeds", &a->seeds, 1, kCountMax, "model runs per file, seeds 1..N");
  f.Count("--trials", &a->trials, 0, kCountMax, "real trials per file");
  f.Choice("--profile", &a->profile, ProfileNames(), "the model's producer profile")
      ->default_str("the file's");
  f.Choice("--policy", &a->policy, PolicyNames(), "the model's schedule policy");
  f.Text("--csv", &a->csv, "OUT.csv", "write the table as CSV");
  f.Text("--junit", &a->junit_out, "OUT.xml",
         "write a JUnit XML report for CI systems: a test case per file, failing when the "
         "columns' failure rates differ by more than 0.25, an error when a side could not run "
         "it");
  f.Duration("--bound", &a->options.bound, "cap each real trial");
  f.Text("--real-from", &a->real_from, "CSV",
         "take each file's real column from an earlier run's CSV (no trials are run for a "
         "file it has), to set a new model column beside it");
  f.Count("--jobs", &a->jobs, 1, 1024, "run N trials at once");
  f.Count("--generated", &a->generated, 1, kCountMax,
          "instead of files, N scenarios generated from --base as explore --client generates "
          "them, the same scenario on both sides: fidelity over a population")
      ->default_str("");
  f.Text("--base", &a->base_file, "FILE", "with --generated: the base");
  f.Count("--seed", &a->explore_seed, 0, UINT64_MAX, "with --generated: the explore seed");
  f.Text("--out", &a->out_dir, "DIR",
         "with --generated: write the scenarios (generated-I.toml), so the population can be "
         "run again");
}

}  // namespace cli
