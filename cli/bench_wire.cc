// prodsim bench --wire: time to the first ordering failure, the simulated
// world with the Sarama model beside a real client over the wire, on the
// same generated scenarios (the same fault mix), in one run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/bench.h"
#include "scenarios/explore.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "search/world.h"
#include "wire/real_world.h"

namespace cli {

using scenarios::ExploreSeed;
using scenarios::GenerateOptions;
using scenarios::MachineCores;
using scenarios::RunInOrder;
using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;
using scenarios::VerdictText;
namespace {

using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (printed only)

double Since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// What a failure is here: any verdict but pass and harness-error (which
// says the scenario could not run, and is counted apart).
bool Fails(Verdict v) { return v != Verdict::kPass && v != Verdict::kHarnessError; }

struct Search {
  uint64_t runs = 0;
  uint64_t harness_errors = 0;
  double wall = 0;
  std::string found;  // the first failure's verdict, or empty
};

}  // namespace

int WireBench(const Scenario& base, const std::string& base_path, const WireBenchArgs& a) {
  std::printf("prodsim bench --wire: time to the first failure, model vs %s over the wire\n",
              a.client.c_str());
  std::printf("base %s; exploration seeds 1..%llu; the same generated scenarios on both sides\n",
              base_path.c_str(), static_cast<unsigned long long>(a.seeds));
  std::printf(
      "model: Sarama profile %s, at most %llu runs per seed; real: at most %llu trials "
      "per seed (real timing: one sample per trial, not reproducible)\n\n",
      std::string(sarama::ProfileName(base.producer.profile)).c_str(),
      static_cast<unsigned long long>(a.model_runs),
      static_cast<unsigned long long>(a.real_trials));
  std::printf("%-5s | %-38s %6s %9s | %-38s %6s %9s\n", "seed", "model: first failure", "runs",
              "wall s", "real: first failure", "trials", "wall s");
  double model_wall = 0, real_wall = 0;
  uint64_t model_found = 0, real_found = 0;
  for (uint64_t root = 1; root <= a.seeds; ++root) {
    Search model, real;
    auto t0 = WallClock::now();
    for (uint64_t i = 0; i < a.model_runs && model.found.empty(); ++i) {
      const Scenario s =
          Generate(base, ExploreSeed(root, 0, 1, i), GenerateOptions{.vary_producer = false});
      const RunOutput out = RunScenario(s);
      ++model.runs;
      if (out.verdict == Verdict::kHarnessError) ++model.harness_errors;
      if (Fails(out.verdict)) model.found = VerdictText(out);
    }
    model.wall = Since(t0);
    t0 = WallClock::now();
    wire::RealOptions options;
    options.client = a.client;
    options.bound = sim::Duration::Seconds(60);
    for (uint64_t i = 0; i < a.real_trials && real.found.empty(); ++i) {
      const Scenario s =
          Generate(base, ExploreSeed(root, 0, 1, i), GenerateOptions{.vary_producer = false});
      const wire::RealOutput out = wire::RunReal(s, options);
      ++real.runs;
      if (out.run.verdict == Verdict::kHarnessError) ++real.harness_errors;
      if (Fails(out.run.verdict)) real.found = VerdictText(out.run);
    }
    real.wall = Since(t0);
    model_wall += model.wall;
    real_wall += real.wall;
    if (!model.found.empty()) ++model_found;
    if (!real.found.empty()) ++real_found;
    auto shown = [](const Search& s) {
      std::string t = s.found.empty() ? std::string("none") : s.found;
      if (s.harness_errors > 0) absl::StrAppend(&t, " (", s.harness_errors, " harness errors)");
      return t;
    };
    std::printf("%-5llu | %-38s %6llu %9.3f | %-38s %6llu %9.2f\n",
                static_cast<unsigned long long>(root), shown(model).c_str(),
                static_cast<unsigned long long>(model.runs), model.wall, shown(real).c_str(),
                static_cast<unsigned long long>(real.runs), real.wall);
    std::fflush(stdout);
  }
  std::printf(
      "\nseeds with a failure: model %llu/%llu in %.2f wall s; real %llu/%llu in %.1f "
      "wall s; wall ratio real/model %.0fx\n",
      static_cast<unsigned long long>(model_found), static_cast<unsigned long long>(a.seeds),
      model_wall, static_cast<unsigned long long>(real_found),
      static_cast<unsigned long long>(a.seeds), real_wall,
      model_wall > 0 ? real_wall / model_wall : 0.0);
  return 0;
}

namespace {

// Fisher's exact test, two-sided: the probability, under "both columns
// have one failure rate", of a table at least as unlikely as this one
// (a failures of n against b of m).
double FisherTwoSided(int64_t a, int64_t n, int64_t b, int64_t m) {
  const int64_t k = a + b, total = n + m;
  auto log_choose = [](int64_t x, int64_t y) {
    return std::lgamma(static_cast<double>(x + 1)) - std::lgamma(static_cast<double>(y + 1)) -
           std::lgamma(static_cast<double>(x - y + 1));
  };
  auto p = [&](int64_t x) {
    return std::exp(log_choose(n, x) + log_choose(m, k - x) - log_choose(total, k));
  };
  const double observed = p(a);
  double sum = 0;
  for (int64_t x = std::max<int64_t>(0, k - m); x <= std::min(k, n); ++x) {
    const double px = p(x);
    if (px <= observed * (1 + 1e-9)) sum += px;
  }
  return std::min(1.0, sum);
}

struct Column {
  int64_t trials = 0, failures = 0, harness_errors = 0;
  double wall = 0;
  std::vector<double> trial_walls;
};

Column RunColumn(const search::World& w, const std::vector<Scenario>& scenarios, unsigned jobs) {
  Column c;
  const auto t0 = WallClock::now();
  RunInOrder(
      jobs, scenarios.size(), [&](uint64_t i) { return w.Run(scenarios[i]); },
      [&](uint64_t, wire::RealOutput& r) {
        ++c.trials;
        if (r.run.verdict == Verdict::kHarnessError) ++c.harness_errors;
        if (Fails(r.run.verdict)) ++c.failures;
        c.trial_walls.push_back(static_cast<double>(r.wall.nanos()) / 1e9);
        return true;
      });
  c.wall = Since(t0);
  return c;
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int WireJobsBench(const Scenario& file, const std::string& file_path, const Scenario& base,
                  const std::string& base_path, const WireJobsArgs& args) {
  WireJobsArgs a = args;
  if (a.jobs == 0) a.jobs = search::kRealJobsDefault;
  wire::RealOptions options;
  options.client = a.client;
  options.bound = sim::Duration::Seconds(120);
  absl::StatusOr<search::World> world = search::World::Real(options);
  if (!world.ok()) {
    std::fprintf(stderr, "prodsim: %s\n", std::string(world.status().message()).c_str());
    return 64;
  }
  std::printf(
      "prodsim bench --wire-jobs: %s over the wire, trials one at a time beside %u at "
      "once (explore --client's default), side by side in one run\n\n",
      a.client.c_str(), a.jobs);
  // 1. Throughput: the same generated scenarios (explore --client's, from
  //    the base), at --jobs=1 and at --jobs=J.
  scenarios::GenerateOptions g;
  g.client = world->family();
  g.client_version = world->version();
  std::vector<Scenario> generated;
  for (uint64_t i = 0; i < a.generated; ++i) {
    generated.push_back(Generate(base, ExploreSeed(1, 0, 1, i), g));
  }
  const Column one = RunColumn(*world, generated, 1);
  const Column many = RunColumn(*world, generated, a.jobs);
  std::printf("1. throughput: %llu scenarios generated from %s (explore seeds of 1)\n",
              static_cast<unsigned long long>(a.generated), base_path.c_str());
  std::printf(
      "   --jobs=1: %.1f s, %.2f trials/s, median trial %.2f s, failures %lld, harness "
      "errors %lld\n",
      one.wall, static_cast<double>(one.trials) / one.wall, MedianOf(one.trial_walls),
      static_cast<long long>(one.failures), static_cast<long long>(one.harness_errors));
  std::printf(
      "   --jobs=%u: %.1f s, %.2f trials/s, median trial %.2f s, failures %lld, harness "
      "errors %lld\n",
      a.jobs, many.wall, static_cast<double>(many.trials) / many.wall, MedianOf(many.trial_walls),
      static_cast<long long>(many.failures), static_cast<long long>(many.harness_errors));
  std::printf("   throughput ratio --jobs=%u / --jobs=1: %.2fx (target >= 5x)\n\n", a.jobs,
              one.wall / many.wall);
  // 2. Agreement: one file's failure rate, N trials each way.
  const std::vector<Scenario> same(a.trials, file);
  const Column j1 = RunColumn(*world, same, 1);
  const Column jn = RunColumn(*world, same, a.jobs);
  const double p = FisherTwoSided(j1.failures, j1.trials - j1.harness_errors, jn.failures,
                                  jn.trials - jn.harness_errors);
  std::printf("2. agreement: %s, %llu trials each way\n", file_path.c_str(),
              static_cast<unsigned long long>(a.trials));
  std::printf("   --jobs=1: %lld/%lld fail (%.1f s); --jobs=%u: %lld/%lld fail (%.1f s)\n",
              static_cast<long long>(j1.failures), static_cast<long long>(j1.trials), j1.wall,
              a.jobs, static_cast<long long>(jn.failures), static_cast<long long>(jn.trials),
              jn.wall);
  std::printf(
      "   Fisher's exact test, two-sided: p = %.3f (%s at the 5%% level)\n", p,
      p < 0.05 ? "the rates DIFFER: timing at this --jobs changes outcomes" : "no difference");
  std::printf("   machine: %u cores, 1-minute load %.2f now\n", MachineCores(),
              wire::LoadAverage());
  return p < 0.05 ? 1 : 0;
}

int SimulatedBench(const Scenario& file, const std::string& file_path,
                   const SimulatedBenchArgs& a) {
  const unsigned wall_jobs = a.wall_jobs > 0 ? a.wall_jobs : search::kRealJobsDefault;
  const unsigned sim_jobs = MachineCores();
  std::printf(
      "prodsim bench --simulated: %s, %llu trials of %s in simulated time beside %llu on "
      "the wall clock\n\n",
      file_path.c_str(), static_cast<unsigned long long>(a.trials), a.client.c_str(),
      static_cast<unsigned long long>(a.trials));
  std::printf("%-10s %5s %7s %9s %9s %10s  %s\n", "clock", "jobs", "trials", "wall s", "trials/s",
              "median s", "verdicts (digests)");
  double rate[2] = {0, 0};
  for (const bool simulated : {false, true}) {
    wire::RealOptions o;
    o.client = a.client;
    o.clock = simulated ? wire::Clock::kSimulated : wire::Clock::kWall;
    o.bound = simulated ? file.limits.time : sim::Duration::Seconds(120);
    absl::StatusOr<search::World> world = search::World::Real(o, o.clock);
    if (!world.ok()) {
      std::fprintf(stderr, "prodsim: %s\n", std::string(world.status().message()).c_str());
      return 64;
    }
    const unsigned jobs = simulated ? sim_jobs : wall_jobs;
    const auto t0 = WallClock::now();
    const std::vector<wire::RealOutput> trials =
        search::Trials(*world, file, static_cast<int>(a.trials), jobs);
    const double wall = Since(t0);
    std::map<std::string, int> verdicts;
    std::set<uint64_t> digests;
    std::vector<double> each;
    for (const wire::RealOutput& r : trials) {
      ++verdicts[VerdictText(r.run)];
      digests.insert(r.run.record.run.digest);
      each.push_back(static_cast<double>(r.wall.nanos()) / 1e9);
    }
    std::sort(each.begin(), each.end());
    std::string said;
    for (const auto& [v, n] : verdicts) absl::StrAppend(&said, said.empty() ? "" : ", ", n, " ", v);
    if (simulated) absl::StrAppend(&said, " (", digests.size(), " digest(s))");
    rate[simulated ? 1 : 0] = static_cast<double>(trials.size()) / wall;
    std::printf("%-10s %5u %7zu %9.2f %9.2f %10.2f  %s\n", simulated ? "simulated" : "wall", jobs,
                trials.size(), wall, rate[simulated ? 1 : 0], each[each.size() / 2], said.c_str());
  }
  std::printf(
      "\nratio: simulated time runs %.1fx the trials per second of the wall clock "
      "(machine: %u cores)\n",
      rate[0] > 0 ? rate[1] / rate[0] : 0.0, MachineCores());
  return 0;
}

}  // namespace cli
