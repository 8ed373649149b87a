#include "search/explore.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "checks/signature.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/shrink.h"
#include "wire/history_text.h"

namespace search {
namespace {

using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;
// The CLI's own progress and the wire's --time bound; never reaches a run.
using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (printed only)

constexpr int kExitCantCreate = 73;

bool Write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) std::fprintf(stderr, "prodsim: cannot write %s\n", path.c_str());
  return static_cast<bool>(f);
}

std::string FailureFile(const ExploreOptions& o, const RunOutput& out, uint64_t seed) {
  return absl::StrCat(o.out, "/", std::string(scenarios::VerdictName(out.verdict)),
                      out.failing_check.empty() ? "" : absl::StrCat("-", out.failing_check),
                      "-seed", seed, ".toml");
}

// What the consumer needs of a run, made on the worker's thread: the run's
// output (its history, its logs) is freed where it was allocated, and a
// passing run hands over a few bytes.
struct Explored {
  uint64_t seed = 0;
  bool failed = false;
  bool harness_error = false;
  std::string name;       // the failure's tally key: the check, or the verdict
  std::string signature;  // SignatureName
  std::string text;       // VerdictText
  std::string path;       // where --out puts it
  std::string file;       // the scenario with its verdict as [expect]
  Scenario scenario;      // with --out: the scenario, for shrinking
  // A real trial: what the line says beside the verdict, and what is kept
  // beside the file (its report and history, with the client's lines).
  std::string trial;  // "client=librdkafka 2.0.2 wall=3.10s cpu=0.20s load=1.10"
  std::string report, history;
  double wall_s = 0, cpu_s = 0, load = -1;
  std::string client;
};

// Findings by signature: how many, the first seed, the smallest file.
struct Group {
  int64_t count = 0;
  uint64_t first_seed = 0;
  std::string smallest_path;
  size_t smallest_size = SIZE_MAX;
  Scenario smallest;
};

Explored Explore1(const Scenario& base, const World& world, const ExploreOptions& o, uint64_t i) {
  Explored run;
  run.seed = scenarios::ExploreSeed(o.seed, o.shard, o.shards, i);
  Scenario s = scenarios::Generate(base, run.seed, o.generate);
  const wire::RealOutput r = world.Run(s);
  const RunOutput& out = r.run;
  if (world.real()) {
    run.wall_s = static_cast<double>(r.wall.nanos()) / 1e9;
    run.cpu_s = static_cast<double>(r.client_cpu.nanos()) / 1e9;
    run.load = r.load_before;
    run.client = out.record.client && !out.record.client->name.empty() ? out.record.client->name
                                                                       : world.Name();
    run.trial = absl::StrFormat("client=%s wall=%.2fs cpu=%.2fs load=%.2f", run.client, run.wall_s,
                                run.cpu_s, run.load);
  }
  if (out.verdict == Verdict::kPass) return run;
  run.failed = true;
  run.harness_error = out.verdict == Verdict::kHarnessError;
  run.name = scenarios::FailureName(out);
  run.signature = scenarios::SignatureName(out);
  run.text = scenarios::VerdictText(out);
  if (!o.out.empty()) {
    s.expect = scenarios::ExpectOf(out);
    if (world.real()) {
      s.description = absl::StrCat(s.description, "; a trial of ", run.client,
                                   " over the wire failed it (a sample: replay with prodsim real "
                                   "--trials=N)");
      run.report = wire::TrialReport(out, run.trial);
      run.history = wire::HistoryText(out.record);
    }
    run.path = FailureFile(o, out, run.seed);
    run.file = scenarios::PrintScenario(s);
    run.scenario = std::move(s);
  }
  return run;
}

// The smallest file of each new signature, shrunk while it keeps the
// signature (over the wire: in shrink_needed of shrink_trials trials).
int ShrinkNew(const World& world, const ExploreOptions& o, const std::string& profile,
              std::map<std::string, Group>& groups) {
  for (auto& [sig, g] : groups) {
    if (o.known.Known(sig, profile) || g.smallest_path.empty()) continue;
    if (sig == "harness-error") continue;
    scenarios::ShrinkOptions so;
    const auto started = WallClock::now();
    if (world.real()) {
      so.trials = [&](const Scenario& s) {
        return Outputs(Trials(world, s, o.shrink_trials, o.jobs));
      };
      so.needed = o.shrink_needed;
      so.stop = [&] {
        return std::chrono::duration<double>(WallClock::now() - started).count() * 1e9 >=
               static_cast<double>(o.shrink_time.nanos());
      };
      so.max_runs = 1000000;  // the time bounds it
    }
    const scenarios::ShrinkResult r = scenarios::Shrink(g.smallest, so);
    if (!r.reproduced) {
      if (world.real()) {
        std::printf("not shrunk %s: %s failed the same way in %d of %d trials (< %d)\n",
                    sig.c_str(), g.smallest_path.c_str(), r.first_kept, o.shrink_trials,
                    o.shrink_needed);
      }
      continue;
    }
    // "unclassified#1a2b3c" gives new-unclassified-1a2b3c.toml.
    std::string mechanism = sig.substr(0, sig.find('@'));
    std::replace(mechanism.begin(), mechanism.end(), '#', '-');
    const std::string path = absl::StrCat(o.out, "/new-", mechanism, ".toml");
    Scenario shrunk = r.scenario;
    // The file's name, not its directory: the text is the same wherever --out is.
    const std::string name = std::filesystem::path(g.smallest_path).filename().string();
    shrunk.description =
        absl::StrCat("Shrunk by prodsim explore from ", name, " (", r.runs,
                     world.real() ? absl::StrCat(" trials of ", world.Name()) : " runs",
                     ", signature ", sig, "), which said: ", shrunk.description);
    if (!Write(path, scenarios::PrintScenario(shrunk))) return kExitCantCreate;
    std::printf("shrunk %s: %s (%s)", sig.c_str(), path.c_str(),
                scenarios::DescribeSize(shrunk).c_str());
    if (world.real()) {
      std::printf("; the result failed so in %d of %d trials", r.last_kept, o.shrink_trials);
    }
    std::printf("\n");
  }
  return 0;
}

// How a finding stands against --known: "known", "new", or "new on P
// (known on Q)" when another profile's file records it.
std::string KnownMark(const ExploreOptions& o, const std::string& signature,
                      const std::string& profile) {
  if (o.known.Known(signature, profile)) return "known";
  const std::string elsewhere = o.known.ProfilesOf(signature);
  if (elsewhere.empty()) return "new";
  return absl::StrCat("new on ", profile, " (known on ", elsewhere, ")");
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int Explore(const Scenario& base, const World& world, const ExploreOptions& o) {
  std::map<std::string, int64_t> failures;
  std::map<std::string, Group> groups;
  int64_t runs = 0, found = 0, found_new = 0, harness_errors = 0;
  std::vector<double> walls, loads, cpus;
  std::string client;
  const std::string profile = WorldProfile(base, world);
  const auto started = WallClock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(WallClock::now() - started).count(); };
  double last_progress = 0;
  auto progress = [&](FILE* f) {
    std::fprintf(f, "[explore] runs=%lld runs/s=%.1f failures=%lld", static_cast<long long>(runs),
                 static_cast<double>(runs) / std::max(elapsed(), 1e-9),
                 static_cast<long long>(found));
    for (const auto& [name, n] : failures)
      std::fprintf(f, " %s=%lld", name.c_str(), static_cast<long long>(n));
    if (!o.known.empty()) std::fprintf(f, " new=%lld", static_cast<long long>(found_new));
    std::fprintf(f, "\n");
  };
  int write_error = 0;
  // Runs go on --jobs threads; they are consumed (printed, written, counted)
  // in index order, so in the model the output is the same for every --jobs.
  scenarios::RunInOrder(
      o.jobs, o.runs > 0 ? static_cast<uint64_t>(o.runs) : UINT64_MAX,
      [&](uint64_t i) { return Explore1(base, world, o, i); },
      [&](uint64_t, Explored& run) {
        if (o.time.nanos() > 0 && elapsed() * 1e9 >= static_cast<double>(o.time.nanos())) {
          return false;
        }
        ++runs;
        if (world.real()) {
          walls.push_back(run.wall_s);
          cpus.push_back(run.cpu_s);
          if (run.load >= 0) loads.push_back(run.load);
          if (client.empty()) client = run.client;
        }
        if (run.failed) {
          ++found;
          ++failures[run.name];
          if (run.harness_error) ++harness_errors;
          const bool is_known = o.known.Known(run.signature, profile);
          if (!is_known) ++found_new;
          const std::string mark =
              o.known.empty() ? "" : absl::StrCat(" (", KnownMark(o, run.signature, profile), ")");
          Group& g = groups[run.signature];
          if (g.count++ == 0) g.first_seed = run.seed;
          std::printf("found: seed %llu: %s%s%s%s\n", static_cast<unsigned long long>(run.seed),
                      run.text.c_str(), run.trial.empty() ? "" : " ", run.trial.c_str(),
                      mark.c_str());
          if (!o.out.empty()) {
            if (!Write(run.path, run.file)) {
              write_error = kExitCantCreate;
              return false;
            }
            if (world.real()) {
              const std::string stem = run.path.substr(0, run.path.size() - 5);
              if (!Write(stem + ".txt", run.report) || !Write(stem + "-history.txt", run.history)) {
                write_error = kExitCantCreate;
                return false;
              }
              std::printf(
                  "  written to %s, its trial's report and history beside it (replay: "
                  "prodsim real %s --client=%s --trials=10)\n",
                  run.path.c_str(), run.path.c_str(), world.Name().c_str());
            } else {
              std::printf("  written to %s (replay: prodsim run %s)\n", run.path.c_str(),
                          run.path.c_str());
            }
            if (run.file.size() < g.smallest_size && !run.harness_error) {
              g.smallest_size = run.file.size();
              g.smallest_path = run.path;
              g.smallest = std::move(run.scenario);
            }
          }
          // With --known, a known finding does not stop the search.
          if (!o.keep_going && !is_known) return false;
        }
        if (elapsed() - last_progress >= 2.0) {
          last_progress = elapsed();
          progress(stderr);
        }
        return true;
      });
  if (write_error != 0) return write_error;
  std::printf("summary: ");
  progress(stdout);
  if (world.real()) {
    double load = 0;
    for (double l : loads) load += l;
    std::printf(
        "  over the wire: %s, %lld trial(s) on %u at once, median trial %.2f s of wall "
        "time, harness errors %lld; machine: %u cores, 1-minute load %.2f on average "
        "before the trials; the client spent %.2f s of CPU per trial (median)\n",
        client.empty() ? world.Name().c_str() : client.c_str(), static_cast<long long>(runs),
        o.jobs, Median(walls), static_cast<long long>(harness_errors), scenarios::MachineCores(),
        loads.empty() ? -1.0 : load / static_cast<double>(loads.size()), Median(cpus));
  }
  if (!groups.empty()) {
    // By count, then name: the table a CI job reads.
    std::vector<std::pair<std::string, const Group*>> rows;
    for (const auto& [sig, g] : groups) rows.emplace_back(sig, &g);
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
      return x.second->count > y.second->count;
    });
    std::printf("by signature (%zu):\n", rows.size());
    for (const auto& [sig, g] : rows) {
      const bool is_known = o.known.Known(sig, profile);
      const std::string elsewhere = is_known ? "" : o.known.ProfilesOf(sig);
      std::printf("  %6lld %5.1f%% %-5s %s%s first seed %llu%s%s\n",
                  static_cast<long long>(g->count),
                  100.0 * static_cast<double>(g->count) / static_cast<double>(found),
                  o.known.empty() ? ""
                  : is_known      ? "known"
                                  : "new",
                  sig.c_str(),
                  elsewhere.empty() ? "" : absl::StrCat(" (known on ", elsewhere, " only)").c_str(),
                  static_cast<unsigned long long>(g->first_seed),
                  g->smallest_path.empty() ? "" : ", smallest ", g->smallest_path.c_str());
    }
  }
  if (!o.out.empty() && o.shrink) {
    if (const int code = ShrinkNew(world, o, profile, groups); code != 0) return code;
  }
  if (!o.known.empty()) return found_new > 0 ? 1 : 0;
  return found > 0 ? 1 : 0;
}

namespace {

// A signature whose function is one of the model's (a Sarama function):
// known per profile. Any other names a real client.
bool IsModelSignature(const std::string& signature) {
  const size_t at = signature.find('@');
  if (at == std::string::npos) return true;  // unclassified, or a verdict's name
  const std::string_view mechanism = std::string_view(signature).substr(0, at);
  const std::string_view function = std::string_view(signature).substr(at + 1);
  for (const checks::MechanismInfo& m : checks::Mechanisms()) {
    if (m.real_client || m.mechanism != mechanism) continue;
    if (m.function == "GOROUTINE") return true;  // panic@, goroutine-leak@ any goroutine's
    // "a | b": either function.
    for (std::string_view rest = m.function; !rest.empty();) {
      const size_t bar = rest.find(" | ");
      if (rest.substr(0, bar) == function) return true;
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 3);
    }
  }
  return false;
}

}  // namespace

void KnownSignatures::Add(const std::string& signature, const std::string& profile) {
  by_signature_[signature].insert(IsModelSignature(signature) ? profile : std::string(kAnyWorld));
}

bool KnownSignatures::Known(const std::string& signature, const std::string& profile) const {
  const auto it = by_signature_.find(signature);
  if (it == by_signature_.end()) return false;
  return it->second.contains(profile) || it->second.contains(std::string(kAnyWorld));
}

std::string KnownSignatures::ProfilesOf(const std::string& signature) const {
  const auto it = by_signature_.find(signature);
  if (it == by_signature_.end()) return "";
  return absl::StrJoin(it->second, ", ");
}

std::string WorldProfile(const Scenario& base, const World& world) {
  return world.real() ? world.Name() : std::string(sarama::ProfileName(base.producer.profile));
}

bool LoadKnownSignatures(const std::string& dir, KnownSignatures* known, int* code) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::fprintf(stderr, "prodsim: --known=%s: not a directory\n", dir.c_str());
    *code = 66;
    return false;
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    absl::StatusOr<Scenario> s = scenarios::LoadScenario(f);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.status().message()).c_str());
      *code = absl::IsNotFound(s.status()) ? 66 : 65;
      return false;
    }
    size_t named = 0;
    if (s->expect.has_value()) {
      if (!s->expect->signature.empty()) {
        known->Add(s->expect->signature, std::string(sarama::ProfileName(s->producer.profile)));
        ++named;
      }
      for (const scenarios::ProfileExpectSpec& p : s->expect->profiles) {
        if (p.signature.empty()) continue;
        known->Add(p.signature, p.profile);
        ++named;
      }
    }
    if (named > 0) continue;
    const RunOutput out = scenarios::RunScenario(*s);
    if (out.verdict != Verdict::kPass && out.verdict != Verdict::kHarnessError) {
      known->Add(scenarios::SignatureName(out),
                 std::string(sarama::ProfileName(s->producer.profile)));
    }
  }
  return true;
}

}  // namespace search
