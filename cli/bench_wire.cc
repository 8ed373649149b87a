// prodsim bench --wire: time to the first ordering failure, the simulated
// world with the Sarama model beside a real client over the wire, on the
// same generated scenarios (the same fault mix), in one run.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/bench.h"
#include "scenarios/explore.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "wire/real_world.h"

namespace scenarios {
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
  std::printf("model: Sarama profile %s, at most %llu runs per seed; real: at most %llu trials "
              "per seed (real timing: one sample per trial, not reproducible)\n\n",
              base.producer.profile.c_str(), static_cast<unsigned long long>(a.model_runs),
              static_cast<unsigned long long>(a.real_trials));
  std::printf("%-5s | %-38s %6s %9s | %-38s %6s %9s\n", "seed", "model: first failure", "runs",
              "wall s", "real: first failure", "trials", "wall s");
  double model_wall = 0, real_wall = 0;
  uint64_t model_found = 0, real_found = 0;
  for (uint64_t root = 1; root <= a.seeds; ++root) {
    Search model, real;
    auto t0 = WallClock::now();
    for (uint64_t i = 0; i < a.model_runs && model.found.empty(); ++i) {
      const Scenario s = Generate(base, ExploreSeed(root, 0, 1, i),
                                  GenerateOptions{.vary_producer = false});
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
      const Scenario s = Generate(base, ExploreSeed(root, 0, 1, i),
                                  GenerateOptions{.vary_producer = false});
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
  std::printf("\nseeds with a failure: model %llu/%llu in %.2f wall s; real %llu/%llu in %.1f "
              "wall s; wall ratio real/model %.0fx\n",
              static_cast<unsigned long long>(model_found),
              static_cast<unsigned long long>(a.seeds), model_wall,
              static_cast<unsigned long long>(real_found),
              static_cast<unsigned long long>(a.seeds), real_wall,
              model_wall > 0 ? real_wall / model_wall : 0.0);
  return 0;
}

}  // namespace scenarios
