#include "cli/fidelity.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "producer/profile.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "cli/common.h"
#include "sim/core/scheduler.h"
#include "wire/real_world.h"

namespace cli {
namespace {

using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;

constexpr int64_t kCountMax = 100000;

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n%s", error.c_str(), kFidelityUsage);
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
    if (f.size() != 15 || !absl::SimpleAtoi(f[9], &trials) || !absl::SimpleAtoi(f[10], &failures) ||
        !absl::SimpleAtoi(f[11], &ran) || !absl::SimpleAtoi(f[12], &errors)) {
      std::fprintf(stderr, "prodsim: %s:%d:1: not a line of prodsim fidelity's CSV\n", path.c_str(),
                   lineno);
      return kExitBadFile;
    }
    SavedReal& r = (*out)[f[0]];
    r.client = f[8];
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

}  // namespace

const char* const kFidelityUsage =
    "usage: prodsim fidelity FILE... --client=NAME|CMD [--seeds=N] [--trials=M]\n"
    "                        [--profile=NAME] [--policy=NAME] [--csv=OUT] [--bound=DURATION]\n"
    "                        [--real-from=CSV]\n"
    "For each scenario file, the model's verdicts over schedule seeds 1..N (default\n"
    "40) beside the real client's over M wire trials (default 20), one table\n"
    "(printed, and written as CSV with --csv). The model side runs the file with\n"
    "--policy (default random: the file's schedule policy is replaced, so that the\n"
    "seeds sample interleavings) and --profile (default the file's own; give the\n"
    "one matching the client's version: sarama-1.42.1 for Sarama v1.42.1,\n"
    "sarama-main for main; for librdkafka and kafkajs no model exists and the\n"
    "column is the file's Sarama profile, for reference). A failure is any verdict\n"
    "but pass; harness errors (a scenario a side cannot run) are counted apart.\n"
    "Real trials are samples of real timing: the real column is a distribution.\n"
    "--real-from=CSV takes the real column of each file from an earlier run's CSV\n"
    "(no trials are run for a file it has), to set a new model column beside it.\n";

int FidelityCommand(int argc, char** argv) {
  std::vector<std::string> files;
  wire::RealOptions options;
  options.client.clear();
  int64_t seeds = 40, trials = 20;
  std::string profile, policy = "random", csv, real_from;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--client=")) {
      options.client = a.substr(9);
    } else if (absl::StartsWith(a, "--seeds=")) {
      if (!absl::SimpleAtoi(a.substr(8), &seeds) || seeds < 1 || seeds > kCountMax) {
        return Usage(absl::StrCat("--seeds takes a count from 1 to ", kCountMax, ": '", a, "'"));
      }
    } else if (absl::StartsWith(a, "--trials=")) {
      if (!absl::SimpleAtoi(a.substr(9), &trials) || trials < 0 || trials > kCountMax) {
        return Usage(absl::StrCat("--trials takes a count from 0 to ", kCountMax, ": '", a, "'"));
      }
    } else if (absl::StartsWith(a, "--profile=")) {
      profile = a.substr(10);
      if (!sarama::ParseProfile(profile).ok()) {
        return Usage(absl::StrCat("unknown --profile '", profile, "' (sarama-1.42.1 or sarama-main)"));
      }
    } else if (absl::StartsWith(a, "--policy=")) {
      policy = a.substr(9);
      if (!sim::ParsePolicy(policy).ok()) {
        return Usage(absl::StrCat("unknown --policy '", policy, "' (fifo, random, pct or go)"));
      }
    } else if (absl::StartsWith(a, "--csv=")) {
      csv = a.substr(6);
      if (csv.empty()) return Usage("--csv needs a file name: --csv=OUT.csv");
    } else if (absl::StartsWith(a, "--real-from=")) {
      real_from = a.substr(12);
      if (real_from.empty()) return Usage("--real-from needs a CSV file: --real-from=OLD.csv");
    } else if (absl::StartsWith(a, "--bound=")) {
      if (!ParsePositiveDuration(a.substr(8), &options.bound)) {
        return Usage(absl::StrCat("--bound takes a positive duration such as 30s: '", a, "'"));
      }
    } else if (a == "--help" || a == "-h") {
      std::fputs(kFidelityUsage, stdout);
      return 0;
    } else if (absl::StartsWith(a, "-")) {
      return Usage(absl::StrCat("unknown flag '", a, "'"));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return Usage("fidelity takes one or more scenario files");
  if (options.client.empty()) return Usage("fidelity needs --client=NAME or --client=CMD");

  std::vector<Scenario> scenarios_in(files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    int code = 0;
    if (!LoadOrSay(files[f], &scenarios_in[f], &code)) return code;
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
           "real_verdicts,difference\n";
  }
  std::printf("prodsim fidelity: model (policy %s, seeds 1..%lld) beside %s over the wire (%lld "
              "trials; real timing: a distribution)\n\n",
              policy.c_str(), static_cast<long long>(seeds), options.client.c_str(),
              static_cast<long long>(trials));
  std::printf("%-58s %-14s %9s %9s %6s\n", "file", "profile", "model", "real", "|diff|");
  std::string client_name = options.client;
  for (size_t f = 0; f < files.size(); ++f) {
    Scenario s = scenarios_in[f];
    if (!profile.empty()) s = scenarios::WithProfile(s, profile);
    Side model, real;
    for (int64_t seed = 1; seed <= seeds; ++seed) {
      Scenario m = s;
      m.seed = static_cast<uint64_t>(seed);
      m.schedule.policy = policy;
      m.schedule.tape.clear();
      model.Add(scenarios::RunScenario(m));
      if (model.harness_errors > 0) break;  // the scenario, not the seed: every seed would say it
    }
    const auto saved_real = saved.find(files[f]);
    if (saved_real != saved.end()) {
      real = saved_real->second.side;
      client_name = saved_real->second.client;
    }
    for (int64_t t = 0; t < trials && saved_real == saved.end(); ++t) {
      const wire::RealOutput r = wire::RunReal(s, options);
      if (r.run.record.client && !r.run.record.client->name.empty()) {
        client_name = r.run.record.client->name;
      }
      real.Add(r.run);
      if (r.run.verdict == Verdict::kHarnessError) break;  // every trial would be the same
    }
    const bool both = model.Rate() >= 0 && real.Rate() >= 0;
    const double diff = both ? std::fabs(model.Rate() - real.Rate()) : -1;
    std::printf("%-58s %-14s %9s %9s %6s\n", files[f].c_str(), s.producer.profile.c_str(),
                Rate(model).c_str(), Rate(real).c_str(),
                both ? absl::StrFormat("%.2f", diff).c_str() : "-");
    std::printf("  model: %s\n", model.Distribution().c_str());
    if (!model.first_harness_error.empty()) {
      std::printf("    harness error: %s\n", model.first_harness_error.c_str());
    }
    std::printf("  real %s: %s\n", client_name.c_str(), real.Distribution().c_str());
    if (!real.first_harness_error.empty()) {
      std::printf("    harness error: %s\n", real.first_harness_error.c_str());
    }
    std::fflush(stdout);
    if (out) {
      out << CsvField(files[f]) << "," << s.producer.profile << "," << policy << "," << seeds
          << "," << model.failures << "," << model.runs - model.harness_errors << ","
          << model.harness_errors << "," << CsvField(model.Distribution()) << ","
          << CsvField(client_name) << "," << real.runs << "," << real.failures << ","
          << real.runs - real.harness_errors << "," << real.harness_errors << ","
          << CsvField(real.Distribution()) << ","
          << (both ? absl::StrFormat("%.3f", diff) : std::string()) << "\n";
    }
  }
  if (!csv.empty()) std::printf("\nwritten to %s\n", csv.c_str());
  return 0;
}

}  // namespace cli
