#include "search/explore.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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
#include "base/assert.h"
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
  uint64_t index = 0;  // global: i*shards + shard
  uint64_t seed = 0;
  bool failed = false;
  bool harness_error = false;
  std::string name;       // the failure's tally key: the check, or the verdict
  std::string signature;  // SignatureName
  std::string verdict, check;
  std::string text;   // VerdictText
  std::string path;   // where --out puts it
  std::string file;   // the scenario with its verdict as [expect]
  Scenario scenario;  // with --out: the scenario, for shrinking
  // A real trial: what the line says beside the verdict, and what is kept
  // beside the file (its report and history, with the client's lines).
  std::string trial;  // "client=librdkafka 2.0.2 wall=3.10s cpu=0.20s load=1.10"
  std::string report, history;
  TrialFigures figures;
  std::string client;
};

Explored Explore1(const Scenario& base, const World& world, const ExploreOptions& o, uint64_t i) {
  Explored run;
  run.index = i * o.shards + o.shard;
  run.seed = scenarios::ExploreSeed(o.seed, o.shard, o.shards, i);
  Scenario s = scenarios::Generate(base, run.seed, o.generate);
  const wire::RealOutput r = world.Run(s);
  const RunOutput& out = r.run;
  if (world.real()) {
    run.figures = {.wall_ns = r.wall.nanos(),
                   .cpu_ns = r.client_cpu.nanos(),
                   // /proc/loadavg says hundredths.
                   .load_centi = r.load_before < 0 ? -1 : std::llround(r.load_before * 100)};
    run.client = out.record.client && !out.record.client->name.empty() ? out.record.client->name
                                                                       : world.Name();
    // In simulated time the wall clock and the load decide nothing: the
    // digest says which run it was.
    run.trial =
        world.simulated()
            ? absl::StrFormat("client=%s digest=%016x", run.client, out.record.run.digest)
            : absl::StrFormat("client=%s wall=%.2fs cpu=%.2fs load=%.2f", run.client,
                              static_cast<double>(r.wall.nanos()) / 1e9,
                              static_cast<double>(r.client_cpu.nanos()) / 1e9, r.load_before);
  }
  if (out.verdict == Verdict::kPass) return run;
  run.failed = true;
  run.harness_error = out.verdict == Verdict::kHarnessError;
  run.name = scenarios::FailureName(out);
  run.signature = scenarios::SignatureName(out);
  run.verdict = std::string(scenarios::VerdictName(out.verdict));
  run.check = out.failing_check;
  run.text = scenarios::VerdictText(out);
  if (!o.out.empty()) {
    s.expect = scenarios::ExpectOf(out);
    if (world.simulated()) {
      s.description = absl::StrCat(s.description, "; a run of ", run.client,
                                   " in simulated time failed it (replay with prodsim run "
                                   "--client)");
      run.report = wire::TrialReport(out, run.trial);
      run.history = wire::HistoryText(out.record);
    } else if (world.real()) {
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
int ShrinkNew(const World& world, const ExploreOptions& o, const ExploreSummary& summary,
              const std::map<std::string, Scenario>& smallest) {
  for (const auto& [sig, g] : summary.findings) {
    if (g.known || g.smallest_path.empty()) continue;
    if (sig == "harness-error") continue;
    scenarios::ShrinkOptions so;
    const auto started = WallClock::now();
    // Where a run is a replay, one trial decides.
    const int trials = world.exact() ? 1 : o.shrink_trials;
    const int needed = world.exact() ? 1 : o.shrink_needed;
    if (world.real()) {
      so.trials = [&](const Scenario& s) { return Outputs(Trials(world, s, trials, o.jobs)); };
      so.needed = needed;
      so.stop = [&] {
        return std::chrono::duration<double>(WallClock::now() - started).count() * 1e9 >=
               static_cast<double>(o.shrink_time.nanos());
      };
      so.max_runs = 1000000;  // the time bounds it
    }
    const scenarios::ShrinkResult r = scenarios::Shrink(smallest.at(sig), so);
    if (!r.reproduced) {
      if (world.real()) {
        std::printf("not shrunk %s: %s failed the same way in %d of %d trials (< %d)\n",
                    sig.c_str(), g.smallest_path.c_str(), r.first_kept, trials, needed);
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
      std::printf("; the result failed so in %d of %d trials", r.last_kept, trials);
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

// The summary before any run: what the exploration is.
ExploreSummary Begin(const Scenario& base, const World& world, const ExploreOptions& o) {
  ExploreSummary s;
  s.base_path = o.base_path;
  s.base_digest = o.base_digest;
  s.profile = WorldProfile(base, world);
  s.real = world.real();
  s.simulated = world.simulated();
  s.mock_faults = o.generate.mock_faults;
  s.known_given = !o.known.empty();
  if (s.known_given) {
    s.known_dir = o.known_dir;
    s.known_digest = DigestText(o.known.Listing());
  }
  s.seed = o.seed;
  s.shards = o.shards;
  s.shards_in = {o.shard};
  s.jobs = o.jobs;
  s.cores = scenarios::MachineCores();
  return s;
}

// Counts a failed run into the summary's tallies and its signature's
// finding (the first run; the smallest file: fewest bytes, the first of
// those, never a harness error's). True when it is the new smallest file.
bool Tally(const ExploreOptions& o, const Explored& run, ExploreSummary* s) {
  PRODSIM_ASSERT(run.failed);
  ++s->failures;
  ++s->by_check[run.name];
  if (run.harness_error) ++s->harness_errors;
  const bool is_known = o.known.Known(run.signature, s->profile);
  if (!is_known) ++s->found_new;
  const FailedRun failed = {
      .index = run.index, .seed = run.seed, .verdict = run.verdict, .check = run.check};
  Finding& f = s->findings[run.signature];
  if (f.count++ == 0) {
    f.signature = run.signature;
    f.known = is_known;
    f.known_on = is_known ? "" : o.known.ProfilesOf(run.signature);
    f.first = failed;
  }
  PRODSIM_ASSERT(f.first.index <= run.index);
  if (run.path.empty() || run.harness_error) return false;
  const auto bytes = static_cast<int64_t>(run.file.size());
  if (!f.smallest_path.empty() && bytes >= f.smallest_bytes) return false;
  f.smallest_path = run.path;
  f.smallest_bytes = bytes;
  f.smallest = failed;
  return true;
}

}  // namespace

int Explore(const Scenario& base, const World& world, const ExploreOptions& o) {
  ExploreSummary summary = Begin(base, world, o);
  std::map<std::string, Scenario> smallest;  // by signature: the smallest file's, for shrinking
  const auto started = WallClock::now();
  auto elapsed_ns = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(WallClock::now() - started).count();
  };
  auto elapsed = [&] { return static_cast<double>(elapsed_ns()) / 1e9; };
  double last_progress = 0;
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
        ++summary.runs;
        if (world.real()) {
          summary.trials.push_back(run.figures);
          if (summary.client.empty()) summary.client = run.client;
        }
        if (run.failed) {
          const bool is_known = o.known.Known(run.signature, summary.profile);
          const std::string mark =
              o.known.empty()
                  ? ""
                  : absl::StrCat(" (", KnownMark(o, run.signature, summary.profile), ")");
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
                  "  written to %s, its trial's report and history beside it (replay: %s)\n",
                  run.path.c_str(), world.ReplayCommand(run.path).c_str());
            } else {
              std::printf("  written to %s (replay: prodsim run %s)\n", run.path.c_str(),
                          run.path.c_str());
            }
          }
          if (Tally(o, run, &summary)) smallest[run.signature] = std::move(run.scenario);
          // With --known, a known finding does not stop the search.
          if (!o.keep_going && !is_known) return false;
        }
        if (elapsed() - last_progress >= 2.0) {
          last_progress = elapsed();
          summary.wall_ns = elapsed_ns();
          std::fprintf(stderr, "%s\n", ProgressLine(summary).c_str());
        }
        return true;
      });
  if (write_error != 0) return write_error;
  summary.wall_ns = elapsed_ns();
  std::fputs(SummaryText(summary).c_str(), stdout);
  if (o.on_summary) {
    std::fflush(stdout);
    if (const int code = o.on_summary(summary); code != 0) return code;
  }
  if (!o.out.empty() && o.shrink) {
    if (const int code = ShrinkNew(world, o, summary, smallest); code != 0) return code;
  }
  return SummaryExitCode(summary);
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

void KnownSignatures::Add(const std::string& signature, const scenarios::KnownOn& on,
                          const std::string& text) {
  by_client_[signature].emplace(text, on);
}

bool KnownSignatures::Known(const std::string& signature, const std::string& profile) const {
  if (const auto it = by_signature_.find(signature); it != by_signature_.end()) {
    if (it->second.contains(profile) || it->second.contains(std::string(kAnyWorld))) return true;
  }
  const auto it = by_client_.find(signature);
  if (it == by_client_.end()) return false;
  const size_t at = profile.find('@');
  if (at == std::string::npos) return false;
  const std::string_view client = std::string_view(profile).substr(0, at);
  const std::string_view version = std::string_view(profile).substr(at + 1);
  for (const auto& [text, on] : it->second) {
    if (on.Covers(client, version)) return true;
  }
  return false;
}

size_t KnownSignatures::size() const {
  std::set<std::string> all;
  for (const auto& [signature, profiles] : by_signature_) all.insert(signature);
  for (const auto& [signature, ons] : by_client_) all.insert(signature);
  return all.size();
}

std::string KnownSignatures::Listing() const {
  std::map<std::string, std::set<std::string>> merged = by_signature_;
  for (const auto& [signature, ons] : by_client_) {
    for (const auto& [text, on] : ons) merged[signature].insert(text);
  }
  std::string out;
  for (const auto& [signature, profiles] : merged) {
    absl::StrAppend(&out, signature, " ", absl::StrJoin(profiles, ", "), "\n");
  }
  return out;
}

std::string KnownSignatures::ProfilesOf(const std::string& signature) const {
  std::set<std::string> all;
  if (const auto it = by_signature_.find(signature); it != by_signature_.end()) all = it->second;
  if (const auto it = by_client_.find(signature); it != by_client_.end()) {
    for (const auto& [text, on] : it->second) all.insert(text);
  }
  return absl::StrJoin(all, ", ");
}

std::string WorldProfile(const Scenario& base, const World& world) {
  if (!world.real()) return std::string(sarama::ProfileName(base.producer.profile));
  if (world.version().empty()) return world.Name();
  const std::string name = world.Name();
  return absl::StrCat(name.substr(0, name.find('@')), "@", world.version());
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
      if (!s->expect->signature.empty() && !s->expect->known_on.empty()) {
        // The parser checked the text.
        absl::StatusOr<scenarios::KnownOn> on = scenarios::ParseKnownOn(s->expect->known_on);
        PRODSIM_ASSERT(on.ok());
        known->Add(s->expect->signature, *on, s->expect->known_on);
        ++named;
      } else if (!s->expect->signature.empty()) {
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
