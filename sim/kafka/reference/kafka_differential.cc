// kafka_differential: random sequences of appends, replications,
// truncations, restarts and expiries, run on prodsim's producer state and on
// Kafka's own Log side by side (differential.h); the first difference is
// shrunk by RapidCheck and printed as a file `--replay` runs again.
//
//   kafka_differential --reference=DIR/kafka-reference [--sequences=N]
//       [--seconds=S] [--seed=S] [--mutant=NAME] [--out=FILE]
//   kafka_differential --reference=DIR/kafka-reference --replay=FILE
//
// Exit codes: 0 no difference; 1 a difference (printed, and written to
// --out); 2 bad flags or replay file (one line, FILE:LINE:COLUMN); 3 the
// Kafka harness failed (did not start, died, answered "bad" or "crash").
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "rapidcheck.h"
#include "sim/kafka/reference/differential.h"

namespace kafka::reference {
namespace {

constexpr int kExitDifference = 1;
constexpr int kExitUsage = 2;
constexpr int kExitHarness = 3;

// The next operation, drawn near what the rules care about: mostly appends
// from three producers whose sequences follow, repeat, skip or overlap what
// the model's cache holds (a resend of a cached batch, a gap, an overlap, a
// wrap at INT32_MAX, a restart at 0), with epoch bumps and fencing, and now
// and then a follower's copy, a plain batch, a truncation to a batch
// boundary, a restart (clean or crash), time passing and expiry.
Op GenOp(const ModelPartition& m) {
  Op op;
  const int what = *rc::gen::weightedElement<int>(
      {{60, 0}, {6, 1}, {3, 2}, {6, 3}, {4, 4}, {4, 5}, {6, 6}, {4, 7}});
  switch (what) {
    case 2:
      op.kind = Op::Kind::kAppendPlain;
      op.count = *rc::gen::inRange<int32_t>(1, 4);
      return op;
    case 3: {
      op.kind = Op::Kind::kTruncate;
      // A batch boundary (the start of one, or the end), as a follower's
      // truncation to a leader epoch's end offset always is.
      std::vector<int64_t> bounds{m.LogEnd()};
      for (const ModelPartition::Stored& s : m.log()) bounds.push_back(s.first_offset);
      op.arg = *rc::gen::elementOf(bounds);
      return op;
    }
    case 4: op.kind = Op::Kind::kRestartClean; return op;
    case 5: op.kind = Op::Kind::kRestartCrash; return op;
    case 6:
      op.kind = Op::Kind::kAdvance;
      op.arg = 100 * *rc::gen::inRange<int64_t>(0, 16);
      return op;
    case 7: op.kind = Op::Kind::kExpire; return op;
    default: break;
  }
  op.kind = what == 1 ? Op::Kind::kReplicate : Op::Kind::kAppend;
  op.pid = *rc::gen::element<int64_t>(1, 2, 3);
  const ProducerStateEntry* e = m.producers().Find(ProducerId(op.pid));
  const int current = e == nullptr ? 0 : e->epoch.value;
  op.epoch = static_cast<int16_t>(
      std::max(0, current + *rc::gen::element<int>(-1, 0, 0, 0, 0, 0, 0, 1, 2)));
  op.count = *rc::gen::inRange<int32_t>(1, 5);
  const int32_t next = e == nullptr ? 0 : IncrementSequence(e->batches.back().last_seq, 1).value;
  switch (
      *rc::gen::weightedElement<int>({{10, 0}, {4, 1}, {2, 2}, {2, 3}, {1, 4}, {2, 5}, {1, 6}})) {
    case 0: op.seq = next; break;
    case 1:  // a resend of a cached batch, or of one like it
      if (e != nullptr) {
        const BatchMetadata& b = *rc::gen::elementOf(e->batches);
        op.seq = b.first_seq.value;
        op.count = static_cast<int32_t>(b.last_offset.value - b.first_offset.value + 1);
        if (*rc::gen::inRange(0, 4) == 0) op.count += 1;  // a partial overlap
      } else {
        op.seq = 0;
      }
      break;
    case 2: op.seq = IncrementSequence(Sequence(next), *rc::gen::inRange(1, 4)).value; break;
    case 3: op.seq = std::max(0, next - *rc::gen::inRange(1, 4)); break;
    case 4: op.seq = INT32_MAX - *rc::gen::inRange(0, 4); break;
    case 5: op.seq = 0; break;
    case 6: op.seq = op.kind == Op::Kind::kAppend ? -1 : 0; break;
  }
  return op;
}

struct Found {
  std::vector<Step> steps;
};

// RapidCheck's listener, to count what it ran.
class Counter : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override { ++cases; }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++shrinks;
    if (accepted) ++shrinks_accepted;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  int64_t cases = 0, shrinks = 0, shrinks_accepted = 0;
};

int Replay(ReferenceProcess& kafka, KafkaVersion version, Mutant mutant, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "kafka_differential: %s: cannot read\n", path.c_str());
    return kExitUsage;
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<Op>> ops = ParseReplay(path, text.str());
  if (!ops.ok()) {
    std::fprintf(stderr, "kafka_differential: %s\n", std::string(ops.status().message()).c_str());
    return kExitUsage;
  }
  Pair pair(kafka, version, mutant);
  if (absl::Status s = pair.Reset(); !s.ok()) {
    std::fprintf(stderr, "kafka_differential: %s\n", std::string(s.message()).c_str());
    return kExitHarness;
  }
  bool same = true;
  for (const Op& op : *ops) {
    absl::StatusOr<bool> r = pair.Do(op);
    if (!r.ok()) {
      std::fprintf(stderr, "kafka_differential: %s\n", std::string(r.status().message()).c_str());
      return kExitHarness;
    }
    if (!*r) {
      same = false;
      break;
    }
  }
  std::fputs(StepsText(pair.steps(), kafka.release(), version).c_str(), stdout);
  std::printf("%s: %s\n", path.c_str(), same ? "no difference" : "a difference");
  return same ? 0 : kExitDifference;
}

}  // namespace
}  // namespace kafka::reference

int main(int argc, char** argv) {
  using namespace kafka::reference;  // NOLINT(google-build-using-namespace): main only
  CLI::App app{
      "prodsim's producer-state rules beside Kafka's own Log (sim/kafka/reference/README.md)"};
  std::string launcher, replay, mutant_name = "none", out;
  int64_t sequences = 200, seconds = 0;
  uint64_t seed = 39;
  int max_ops = 40;
  app.add_option("--reference", launcher,
                 "the Kafka harness's launcher (build.sh's kafka-reference)")
      ->required();
  app.add_option("--sequences", sequences, "random sequences per round")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  app.add_option("--seconds", seconds,
                 "keep running rounds of --sequences (a new seed each) for this long")
      ->check(CLI::Range(int64_t{0}, int64_t{86400}));
  app.add_option("--seed", seed, "the first round's seed");
  app.add_option("--max-ops", max_ops, "operations per sequence at most")
      ->check(CLI::Range(1, 1000));
  app.add_option("--mutant", mutant_name,
                 "a deliberate mistake on prodsim's side: no-duplicates, state-survives-restart");
  app.add_option("--replay", replay, "run the operations of FILE on both sides, no random ones");
  app.add_option("--out", out, "where to write a difference's replay file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "kafka_differential: %s\n", e.what());
    return kExitUsage;
  }
  absl::StatusOr<Mutant> mutant = ParseMutant(mutant_name);
  if (!mutant.ok()) {
    std::fprintf(stderr, "kafka_differential: --mutant: %s\n",
                 std::string(mutant.status().message()).c_str());
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<ReferenceProcess>> kafka = ReferenceProcess::Start(launcher);
  if (!kafka.ok()) {
    std::fprintf(stderr, "kafka_differential: %s: %s\n", launcher.c_str(),
                 std::string(kafka.status().message()).c_str());
    return kExitHarness;
  }
  absl::StatusOr<kafka::KafkaVersion> version = ModelVersionFor((*kafka)->release());
  if (!version.ok()) {
    std::fprintf(stderr, "kafka_differential: %s\n",
                 std::string(version.status().message()).c_str());
    return kExitUsage;
  }
  if (!replay.empty()) return Replay(**kafka, *version, *mutant, replay);

  Pair pair(**kafka, *version, *mutant);
  std::optional<std::vector<Step>> last_failing;
  // RapidCheck says which seed it uses when it loads its configuration:
  // make that the seed this run passes it, not a random one it never uses.
  setenv("RC_PARAMS", absl::StrCat("seed=", seed).c_str(), 1);
  std::optional<std::string> harness_error;
  int64_t ops_run = 0;
  const auto property = [&] {
    if (harness_error) RC_DISCARD("the harness failed");
    if (absl::Status s = pair.Reset(); !s.ok()) {
      harness_error = std::string(s.message());
      RC_DISCARD("the harness failed");
    }
    const int n = *rc::gen::inRange(1, max_ops + 1);
    for (int i = 0; i < n; ++i) {
      const Op op = GenOp(pair.model());
      absl::StatusOr<bool> same = pair.Do(op);
      ++ops_run;
      if (!same.ok()) {
        harness_error = std::string(same.status().message());
        RC_DISCARD("the harness failed");
      }
      if (!*same) {
        last_failing = pair.steps();
        RC_FAIL(StepsText(pair.steps(), (*kafka)->release(), *version));
      }
    }
  };
  using Clock = std::chrono::steady_clock;  // determinism-lint: allow (how long to search)
  const auto started = Clock::now();
  int64_t rounds = 0, cases = 0;
  for (;;) {
    rc::detail::TestParams params;
    params.seed = seed + static_cast<uint64_t>(rounds);
    params.maxSuccess = static_cast<int>(sequences);
    params.maxSize = 100;
    rc::detail::TestMetadata metadata;
    metadata.id = "kafka_differential";
    metadata.description = "prodsim's producer state answers as Kafka's Log does";
    Counter counter;
    const rc::detail::TestResult result =
        rc::detail::checkTestable(property, metadata, params, counter);
    ++rounds;
    cases += counter.cases;
    if (harness_error) {
      std::fprintf(stderr, "kafka_differential: the Kafka harness failed: %s\n",
                   harness_error->c_str());
      return kExitHarness;
    }
    if (result.is<rc::detail::FailureResult>()) {
      std::printf(
          "kafka_differential: a difference with Kafka %s (seed %llu), shrunk in %lld "
          "of %lld tries:\n",
          (*kafka)->release().c_str(), static_cast<unsigned long long>(params.seed),
          static_cast<long long>(counter.shrinks_accepted),
          static_cast<long long>(counter.shrinks));
      // RapidCheck shrank the random choices; now drop the operations
      // that were only drawn along the way.
      std::vector<Op> ops;
      for (const Step& step : *last_failing) ops.push_back(step.op);
      absl::StatusOr<std::vector<Op>> minimal = Minimize(pair, ops);
      if (!minimal.ok()) {
        std::fprintf(stderr, "kafka_differential: the Kafka harness failed: %s\n",
                     std::string(minimal.status().message()).c_str());
        return kExitHarness;
      }
      std::printf("  then %zu operation(s) of %zu kept by removing one at a time:\n",
                  minimal->size(), ops.size());
      const std::string text = StepsText(pair.steps(), (*kafka)->release(), *version);
      std::fputs(text.c_str(), stdout);
      if (!out.empty()) {
        std::ofstream f(out);
        f << text;
        if (!f) {
          std::fprintf(stderr, "kafka_differential: --out: cannot write %s\n", out.c_str());
          return kExitUsage;
        }
        std::printf("written to %s\n", out.c_str());
      }
      return kExitDifference;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    if (elapsed >= static_cast<double>(seconds)) {
      std::string excused;
      for (const auto& [name, n] : pair.departures()) absl::StrAppend(&excused, ", ", name, " ", n);
      std::printf(
          "kafka_differential: no difference with Kafka %s (model rules %s): %lld sequences, "
          "%lld operations, %lld round(s) from seed %llu, %.1f s; known departures excused: "
          "%s\n",
          (*kafka)->release().c_str(), std::string(kafka::KafkaVersionName(*version)).c_str(),
          static_cast<long long>(cases), static_cast<long long>(ops_run),
          static_cast<long long>(rounds), static_cast<unsigned long long>(seed), elapsed,
          excused.empty() ? "none" : excused.c_str() + 2);
      return 0;
    }
  }
}
