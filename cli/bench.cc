#include "cli/bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"
#include "cli/command_line.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "scenarios/builtin.h"
#include "scenarios/explore.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace cli {
namespace {

using scenarios::BuiltinScenarioText;
using scenarios::Duration;
using scenarios::ExploreSeed;
using scenarios::GenerateOptions;
using scenarios::LoadScenario;
using scenarios::ParseScenario;
using scenarios::RunInOrder;
using scenarios::RunOutput;
using scenarios::RunScenario;
using scenarios::Scenario;
using scenarios::TopicSpec;
using scenarios::Verdict;
using scenarios::WithProfile;

using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (printed only)

double Since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// A scenario file: a path given by a flag, or the compiled-in copy of a
// source-tree file (builtin.h).
struct BenchFile {
  std::string path;
  bool given = false;
};

struct BenchArgs {
  BenchFile small{"bench/scenarios/small-5-faults.toml"};
  BenchFile base{"bench/scenarios/report-config-steady.toml"};
  BenchFile base_non_idempotent{"bench/scenarios/report-config-non-idempotent.toml"};
  bool compare = false;
  bool wire = false;
  bool wire_jobs = false;
  bool simulated = false;
  SimulatedBenchArgs simulated_args;
  BenchFile file{"scenarios/known/real/librdkafka-2.0.2-4438-sequence-desync.toml"};
  WireJobsArgs jobs_args;
  bool scaling = false;
  uint64_t max_messages = 1000000;
  bool seeds_set = false;
  bool max_runs_set = false;
  WireBenchArgs wire_args;
  bool runs_set = false;
  uint64_t runs = 2000, seeds = 20, max_runs_per_seed = 5000;
  uint64_t jobs_set = 0;
};

// Counts as the bench has always taken them: at most 12 digits.
constexpr uint64_t kBenchCountMax = 999999999999;

// The #2803 kinds: Sarama's own assertion, or the broker rejecting a
// sequence or epoch (the report's "out of order sequence number").
bool Is2803Kind(const RunOutput& out) {
  return out.verdict == Verdict::kProducerAssertion ||
         out.failing_check == checks::kNoBrokerSequenceError;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool LoadOrSay(const BenchFile& file, Scenario* s, int* code) {
  const std::optional<std::string_view> builtin = BuiltinScenarioText(file.path);
  PRODSIM_ASSERT_MSG(file.given || builtin.has_value(), "a default bench file is compiled in");
  absl::StatusOr<Scenario> parsed =
      file.given ? LoadScenario(file.path) : ParseScenario(*builtin, file.path);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
    *code = absl::IsNotFound(parsed.status()) ? 66 : 65;
    return false;
  }
  *s = std::move(*parsed);
  return true;
}

// One row of the comparison: a base, a close mode and a profile over the
// same generated scenarios.
struct CompareRow {
  std::string config, close, profile;
  uint64_t runs = 0, failed = 0;
  std::map<std::string, uint64_t> by_check;
  int64_t first_failure = -1;  // run index
  double first_failure_wall = 0;
  uint64_t acks = 0;
  double ack_span = 0;  // simulated seconds, first message to last ack
};

CompareRow CompareOne(const Scenario& base, const std::string& config, bool late_close,
                      const std::string& profile, uint64_t runs) {
  CompareRow row;
  row.config = config;
  row.close = late_close ? "at 60 s" : "after last";
  row.profile = profile;
  const auto start = WallClock::now();
  for (uint64_t i = 0; i < runs; ++i) {
    Scenario s = WithProfile(
        Generate(base, ExploreSeed(1, 0, 1, i), GenerateOptions{.vary_producer = false}), profile);
    if (late_close) s.workload.close_at = Duration::Seconds(60);
    const RunOutput out = RunScenario(s);
    ++row.runs;
    if (out.verdict != Verdict::kPass) {
      ++row.failed;
      ++row.by_check[FailureName(out)];
      if (row.first_failure < 0) {
        row.first_failure = static_cast<int64_t>(i) + 1;
        row.first_failure_wall = Since(start);
      }
    }
    const auto& acks = out.record.producer.acks;
    if (!acks.empty() && !out.record.produced.empty()) {
      sim::Time last = acks.front().at;
      for (const auto& ack : acks) last = std::max(last, ack.at);
      row.acks += acks.size();
      row.ack_span += static_cast<double>((last - out.record.produced.front().at).nanos()) / 1e9;
    }
  }
  return row;
}

int Compare(const BenchArgs& a) {
  Scenario idem, non_idem;
  int code = 0;
  if (!LoadOrSay(a.base, &idem, &code) || !LoadOrSay(a.base_non_idempotent, &non_idem, &code)) {
    return code;
  }
  const uint64_t runs = a.runs_set ? a.runs : 500;
  std::printf(
      "prodsim bench --compare: the same %llu generated scenarios per row (explore seeds "
      "1/0..%llu)\n\n",
      static_cast<unsigned long long>(runs), static_cast<unsigned long long>(runs - 1));
  std::printf(
      "| configuration | AsyncClose | profile | failing runs | by check | first failure (run, wall "
      "s) | acked msgs per simulated s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  struct Config {
    const Scenario* base;
    const char* name;
  };
  const Config configs[] = {{&idem, "report (idempotent)"}, {&non_idem, "Idempotent=false"}};
  for (const Config& c : configs) {
    for (bool late : {false, true}) {
      for (const char* profile : {"sarama-1.42.1", "sarama-main"}) {
        const CompareRow r = CompareOne(*c.base, c.name, late, profile, runs);
        std::string checks;
        for (const auto& [name, n] : r.by_check) {
          absl::StrAppend(&checks, checks.empty() ? "" : ", ", name, " ", n);
        }
        std::printf("| %s | %s | %s | %llu (%.1f%%) | %s | %s | %.0f |\n", r.config.c_str(),
                    r.close.c_str(), r.profile.c_str(), static_cast<unsigned long long>(r.failed),
                    100.0 * static_cast<double>(r.failed) / static_cast<double>(r.runs),
                    checks.empty() ? "-" : checks.c_str(),
                    r.first_failure < 0
                        ? "none"
                        : absl::StrCat("#", r.first_failure, ", ",
                                       absl::StrFormat("%.3f", r.first_failure_wall))
                              .c_str(),
                    r.ack_span > 0 ? static_cast<double>(r.acks) / r.ack_span : 0.0);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

// One run in a child process: its wall time, steps and verdict through a
// pipe, its peak RSS from wait4. A child per run, so that each peak is its
// own and not the largest so far.
struct ChildRun {
  bool ok = false;
  double wall = 0;
  uint64_t steps = 0;
  char verdict[48] = {};
  int64_t max_rss_kib = 0;
};

ChildRun RunInChild(const Scenario* s) {
  ChildRun r;
  int fds[2];
  if (pipe(fds) != 0) return r;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    close(fds[0]);
    ChildRun c;
    if (s != nullptr) {
      const auto t0 = WallClock::now();
      const RunOutput out = RunScenario(*s);
      c.wall = Since(t0);
      c.steps = out.record.run.steps;
      std::strncpy(c.verdict, VerdictText(out).c_str(), sizeof(c.verdict) - 1);
    }
    c.ok = true;
    const ssize_t n = write(fds[1], &c, sizeof(c));
    _exit(n == static_cast<ssize_t>(sizeof(c)) ? 0 : 1);
  }
  close(fds[1]);
  ChildRun got;
  const ssize_t n = read(fds[0], &got, sizeof(got));
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return r;
  if (n != static_cast<ssize_t>(sizeof(got)) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return r;
  }
  got.max_rss_kib = usage.ru_maxrss;
  return got;
}

// The base with `messages` messages and the limits to carry them.
Scenario Sized(const Scenario& base, int64_t messages) {
  Scenario s = base;
  s.faults.clear();
  s.workload.messages = static_cast<int32_t>(messages);
  s.workload.close_at.reset();
  const Duration traffic =
      Duration::Nanos(s.workload.interval.nanos() * (messages / std::max(s.workload.burst, 1) + 1));
  s.limits.time = traffic + Duration::Seconds(600);
  // Without faults the world is healed from the start, so the liveness
  // grace bounds the run: it must cover the traffic.
  s.limits.liveness_grace = traffic + s.limits.liveness_grace;
  s.limits.steps = std::max<int64_t>(s.limits.steps, 200 * messages + 1000000);
  return s;
}

int Scaling(const Scenario& base, uint64_t max_messages) {
  const ChildRun idle = RunInChild(nullptr);
  if (!idle.ok) {
    std::fprintf(stderr, "prodsim bench: cannot run a child process\n");
    return 70;
  }
  std::printf(
      "prodsim bench --scaling: one run per row, each in a child process; memory is the\n"
      "child's peak RSS less an idle child's (%lld KiB)\n\n",
      static_cast<long long>(idle.max_rss_kib));
  std::printf(
      "| messages | brokers | partitions | verdict | steps | wall s | us per message | "
      "steps per message | peak MiB | KiB per message |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  struct Row {
    int64_t messages;
    int32_t brokers, partitions;
  };
  std::vector<Row> rows;
  for (int64_t m : {100, 1000, 10000, 100000, 1000000}) {
    if (static_cast<uint64_t>(m) <= max_messages) rows.push_back({m, 0, 0});
  }
  const size_t by_messages = rows.size();
  for (int32_t b : {1, 3, 9}) {
    for (int32_t p : {3, 30, 300}) {
      rows.push_back({std::min<int64_t>(10000, static_cast<int64_t>(max_messages)), b, p});
    }
  }
  std::vector<double> us_per_message;
  bool failed = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    Scenario s = Sized(base, row.messages);
    if (row.brokers > 0) {
      s.cluster.brokers = row.brokers;
      s.cluster.min_insync_replicas = std::min(s.cluster.min_insync_replicas, row.brokers);
      for (TopicSpec& t : s.cluster.topics) {
        t.partitions = row.partitions;
        t.replication_factor = std::min(t.replication_factor, row.brokers);
      }
    }
    if (i == by_messages) std::printf("|  |  |  |  |  |  |  |  |  |  |\n");
    const ChildRun r = RunInChild(&s);
    if (!r.ok) {
      std::printf("| %lld | %d | %d | child failed |  |  |  |  |  |  |\n",
                  static_cast<long long>(row.messages), s.cluster.brokers,
                  s.cluster.topics.empty() ? 0 : s.cluster.topics[0].partitions);
      failed = true;
      continue;
    }
    const double msgs = static_cast<double>(row.messages);
    const double mib = static_cast<double>(r.max_rss_kib - idle.max_rss_kib) / 1024.0;
    const double us = r.wall * 1e6 / msgs;
    if (i < by_messages) us_per_message.push_back(us);
    std::printf("| %lld | %d | %d | %s | %llu | %.3f | %.2f | %.1f | %.1f | %.2f |\n",
                static_cast<long long>(row.messages), s.cluster.brokers,
                s.cluster.topics.empty() ? 0 : s.cluster.topics[0].partitions, r.verdict,
                static_cast<unsigned long long>(r.steps), r.wall, us,
                static_cast<double>(r.steps) / msgs, mib, mib * 1024.0 / msgs);
    std::fflush(stdout);
  }
  // Flat: the per-message cost from 1k messages up within 1.5x of 1k's.
  if (us_per_message.size() >= 2) {
    const double lo = *std::min_element(us_per_message.begin() + 1, us_per_message.end());
    const double hi = *std::max_element(us_per_message.begin() + 1, us_per_message.end());
    std::printf(
        "\nper-message wall cost from 1k to %llu messages: %.2f..%.2f us, max/min %.2f "
        "(target <= 1.5: %s)\n",
        static_cast<unsigned long long>(std::min<uint64_t>(max_messages, 1000000)), lo, hi, hi / lo,
        hi / lo <= 1.5 ? "flat" : "not flat");
  }
  return failed ? 70 : 0;
}

int BenchCommand(BenchArgs& a) {
  Scenario small, base;
  int code = 0;
  if (a.compare) return Compare(a);
  if (a.scaling) {
    if (!LoadOrSay(a.base, &base, &code)) return code;
    return Scaling(base, a.max_messages);
  }
  if (a.wire_jobs) {
    if (!LoadOrSay(a.base, &base, &code)) return code;
    absl::StatusOr<Scenario> parsed = LoadScenario(a.file.path);
    if (!parsed.ok()) {
      std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
      return absl::IsNotFound(parsed.status()) ? 66 : 65;
    }
    a.jobs_args.client = a.wire_args.client;
    if (a.jobs_set > 0) a.jobs_args.jobs = static_cast<unsigned>(a.jobs_set);
    if (a.runs_set) a.jobs_args.generated = a.runs;
    if (a.wire_args.real_trials != WireBenchArgs{}.real_trials) {
      a.jobs_args.trials = a.wire_args.real_trials;
    }
    return WireJobsBench(*parsed, a.file.path, base, a.base.path, a.jobs_args);
  }
  if (a.simulated) {
    if (!a.file.given) {
      std::fprintf(stderr, "prodsim: bench --simulated needs --file=FILE\n");
      return kExitUsage;
    }
    Scenario file;
    if (!LoadOrSay(a.file, &file, &code)) return code;
    a.simulated_args.client = a.wire_args.client;
    if (a.jobs_set > 0) a.simulated_args.wall_jobs = static_cast<unsigned>(a.jobs_set);
    if (a.wire_args.real_trials != WireBenchArgs{}.real_trials) {
      a.simulated_args.trials = a.wire_args.real_trials;
    }
    return SimulatedBench(file, a.file.path, a.simulated_args);
  }
  if (a.wire) {
    if (!a.base.given) a.base = {"bench/scenarios/wire-mix.toml"};
    if (!LoadOrSay(a.base, &base, &code)) return code;
    a.wire_args.seeds = a.seeds_set ? a.seeds : a.wire_args.seeds;
    if (a.max_runs_set) a.wire_args.model_runs = a.max_runs_per_seed;
    return WireBench(base, a.base.path, a.wire_args);
  }
  if (!LoadOrSay(a.small, &small, &code) || !LoadOrSay(a.base, &base, &code)) return code;

  // 1. The small scenario, seeds 1..N.
  std::map<std::string, uint64_t> verdicts;
  double simulated = 0;
  uint64_t steps = 0;
  const auto start = WallClock::now();
  for (uint64_t seed = 1; seed <= a.runs; ++seed) {
    small.seed = seed;
    const RunOutput out = RunScenario(small);
    simulated += static_cast<double>(out.record.run.end_time.nanos()) / 1e9;
    steps += out.record.run.steps;
    ++verdicts[VerdictText(out)];
  }
  const double small_wall = Since(start);
  // The same runs on two threads, consumed in order as explore --jobs=2 does.
  const auto start2 = WallClock::now();
  uint64_t steps2 = 0;
  RunInOrder(
      2, a.runs,
      [&small](uint64_t i) {
        Scenario s = small;
        s.seed = i + 1;
        return RunScenario(s).record.run.steps;
      },
      [&steps2](uint64_t, uint64_t& n) {
        steps2 += n;
        return true;
      });
  const double small_wall2 = Since(start2);
  PRODSIM_ASSERT_MSG(steps2 == steps, "two threads ran other runs than one");

  // 2. Exploration from the base until the first #2803-kind failure, side
  // by side: explore's draw before the go policy existed (random and PCT),
  // today's (half go), and go alone.
  struct Search {
    uint32_t go_share;
    const char* name;
    std::vector<double> secs, runs;
    uint64_t not_found = 0;
  };
  std::vector<Search> searches = {{0, "random+pct (no go)", {}, {}},
                                  {500, "explore's default (half go)", {}, {}},
                                  {1000, "go only", {}, {}}};
  for (Search& search : searches) {
    for (uint64_t root = 1; root <= a.seeds; ++root) {
      const auto t0 = WallClock::now();
      uint64_t i = 0;
      bool found = false;
      for (; i < a.max_runs_per_seed && !found; ++i) {
        found = Is2803Kind(RunScenario(Generate(
            base, ExploreSeed(root, 0, 1, i),
            GenerateOptions{.vary_producer = false, .go_share_per_mille = search.go_share})));
      }
      // A seed that found nothing counts with its whole search time (a lower
      // bound), so the median cannot look better than it is.
      if (!found) ++search.not_found;
      search.secs.push_back(Since(t0));
      search.runs.push_back(static_cast<double>(i));
    }
  }

  std::printf("prodsim bench (one thread)\n\n");
  std::printf("%-58s %14s  %s\n", "figure", "value", "target");
  std::printf(
      "%-58s %14.0f  %s\n",
      absl::StrCat("small scenario runs/s (", a.small.path, ", ", a.runs, " seeds)").c_str(),
      static_cast<double>(a.runs) / small_wall, ">= 2000");
  std::printf("%-58s %14.0f\n", "  simulated seconds per wall second", simulated / small_wall);
  std::printf("%-58s %14.0f\n", "  scheduler steps per wall second",
              static_cast<double>(steps) / small_wall);
  std::printf("%-58s %14.1f\n", "  mean simulated seconds per run",
              simulated / static_cast<double>(a.runs));
  std::printf("%-58s %14.0f\n", "  mean scheduler steps per run",
              static_cast<double>(steps) / static_cast<double>(a.runs));
  std::printf("%-58s %14.0f\n", "small scenario runs/s on 2 threads (explore --jobs=2)",
              static_cast<double>(a.runs) / small_wall2);
  std::printf("%-58s %14.2f  %s\n", "  ratio to one thread", small_wall / small_wall2,
              ">= 1.8 (on 2 idle cores)");
  const double before = searches[0].secs.empty() ? 0 : Median(searches[0].secs);
  for (const Search& search : searches) {
    const std::vector<double>& secs = search.secs;
    const std::vector<double>& runs = search.runs;
    std::printf("\nexplore's schedule draw: %s\n", search.name);
    if (!secs.empty()) {
      std::printf("%-58s %14.3f  %s\n",
                  absl::StrCat("#2803-kind failure: median wall s to first (", a.seeds,
                               " exploration seeds)")
                      .c_str(),
                  Median(secs), "< 1");
      std::printf("%-58s %7.3f..%-6.3f\n", "  min..max wall s",
                  *std::min_element(secs.begin(), secs.end()),
                  *std::max_element(secs.begin(), secs.end()));
      std::printf("%-58s %14.1f\n", "  median runs to first", Median(runs));
      std::printf("%-58s %7.0f..%-6.0f\n", "  min..max runs",
                  *std::min_element(runs.begin(), runs.end()),
                  *std::max_element(runs.begin(), runs.end()));
      if (search.go_share > 0 && before > 0) {
        std::printf("%-58s %14.2f  %s\n", "  median wall s, ratio to random+pct",
                    Median(secs) / before, "<= 1 (go loses no speed)");
      }
    }
    std::printf("%-58s %14llu\n",
                absl::StrCat("  seeds with no #2803-kind failure in ", a.max_runs_per_seed, " runs")
                    .c_str(),
                static_cast<unsigned long long>(search.not_found));
  }
  std::printf("\nsmall scenario verdicts:");
  for (const auto& [name, n] : verdicts) {
    std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("\n");
  return 0;
}

}  // namespace

void DeclareBench(CommandLine* cl) {
  auto a = std::make_shared<BenchArgs>();
  Flags& f =
      cl->Add("bench", "whole-run figures: runs/s and time to the first #2803-kind failure",
              "Prints, side by side: runs/s and simulated s per wall s for the small scenario\n"
              "over seeds 1..--runs; and the wall time and runs to the first\n"
              "IBM/sarama#2803-kind failure exploring from the base (its producer settings\n"
              "kept, faults, schedules and latencies drawn as explore draws them, realistic\n"
              "kinds only) for exploration seeds 1..--seeds, at most --max-runs-per-seed runs\n"
              "each. One thread, but for the small scenario run again on two threads\n"
              "(RunInOrder, as explore --jobs=2) beside one. The default files are compiled\n"
              "in (an installed prodsim runs them from any directory); a flag reads the file\n"
              "it names. --scaling, --compare, --wire and --wire-jobs measure other things\n"
              "instead (their flags say what).",
              [a](const Flags& given) {
                a->small.given = given.Given("--small");
                a->base.given = given.Given("--base");
                a->base_non_idempotent.given = given.Given("--base-non-idempotent");
                a->file.given = given.Given("--file");
                a->runs_set = given.Given("--runs");
                a->seeds_set = given.Given("--seeds");
                a->max_runs_set = given.Given("--max-runs-per-seed");
                return BenchCommand(*a);
              });
  f.Text("--small", &a->small.path, "FILE", "the small scenario");
  f.Text("--base", &a->base.path, "FILE",
         "the base explored from (--wire: default bench/scenarios/wire-mix.toml)");
  f.Count("--runs", &a->runs, 1, kBenchCountMax,
          "small scenario seeds (--compare: generated scenarios per row, default 500; "
          "--wire-jobs: scenarios generated, default 32)");
  f.Count("--seeds", &a->seeds, 1, kBenchCountMax, "exploration seeds (--wire: default 3)");
  f.Count("--max-runs-per-seed", &a->max_runs_per_seed, 1, kBenchCountMax,
          "runs per exploration seed at most (--wire: the model's, default 2000)");
  f.Switch("--scaling", &a->scaling,
           "instead: how a run's cost grows with its work. The base (its faults dropped) with "
           "100, 1k, 10k, 100k and 1M messages (those up to --max-messages), then 10k messages "
           "(or fewer) on 1, 3 and 9 brokers with 3, 30 and 300 partitions; each run in a child "
           "process: wall time, steps and peak memory (the child's peak RSS less an idle "
           "child's), per run and per message, and whether the per-message wall cost from 1k "
           "messages up stays within 1.5x");
  f.Count("--max-messages", &a->max_messages, 1, kBenchCountMax, "--scaling: the largest run");
  f.Switch("--compare", &a->compare,
           "instead: compare the producer profiles on the same --runs generated scenarios per "
           "configuration (the report's, and --base-non-idempotent; each closing after the "
           "last message, and closing at 60 s) on sarama-1.42.1 and sarama-main: the share of "
           "runs that fail and by which check, the first failing run, and the throughput");
  f.Text("--base-non-idempotent", &a->base_non_idempotent.path, "FILE",
         "--compare: the Idempotent=false configuration");
  f.Switch("--wire", &a->wire,
           "instead: time to the first failure exploring from the base per exploration seed, "
           "the Sarama model in the simulated world beside the real client over the wire on "
           "the same generated scenarios (at most --trials trials)");
  f.Text("--client", &a->wire_args.client, "librdkafka|CMD", "--wire, --wire-jobs: the client");
  f.Count("--trials", &a->wire_args.real_trials, 1, kBenchCountMax,
          "--wire: real trials per seed at most; --wire-jobs: trials of --file each way "
          "(default 40)");
  f.Switch("--wire-jobs", &a->wire_jobs,
           "instead: explore --client's trials one at a time beside --jobs at once: the "
           "throughput over --runs scenarios generated from the base, then --file's failure "
           "rate over --trials trials each way, with Fisher's exact test. Exit 1 if the rates "
           "differ at the 5% level");
  f.Switch("--simulated", &a->simulated,
           "instead: --file's --trials trials of --client in simulated time beside as many on "
           "the wall clock (those --jobs at once, as explore runs them; simulated ones on the "
           "cores): trials per second each way and their ratio, with each side's verdicts "
           "(and digests)");
  f.Text("--file", &a->file.path, "FILE",
         "--wire-jobs: the file whose failure rate is compared; --simulated: the file run");
  f.Count("--jobs", &a->jobs_set, 1, 1024, "--wire-jobs, --simulated: wall-clock trials at once")
      ->default_str("8");
}

}  // namespace cli
