// explore's summary as data: its JSON reads back to what was written, the
// merge of shards keeps explore's rules for the first run and the smallest
// file, and what is not one exploration's shards is refused with the place
// in the file that says so.
#include "search/summary.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace search {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

FailedRun Failed(uint64_t index, const std::string& check = "per-partition-order") {
  return {.index = index, .seed = 1000 + index, .verdict = "safety", .check = check};
}

// Shard `shard` of 2 of one exploration, with --known, of 3 runs (global
// indexes shard, shard+2, shard+4).
ExploreSummary Shard(uint64_t shard) {
  ExploreSummary s;
  s.base_path = "bench/scenarios/report-config-steady.toml";
  s.base_digest = DigestText("base");
  s.profile = "sarama-main";
  s.known_given = true;
  s.known_dir = "scenarios/known";
  s.known_digest = DigestText("known");
  s.seed = 18446744073709551615ULL;  // past int64: written as a string
  s.shards = 2;
  s.shards_in = {shard};
  s.runs = 3;
  s.wall_ns = 1500000000;
  s.jobs = 2;
  s.cores = 2;
  return s;
}

// Counts `run` of `signature` into `s` as explore's loop does.
void Add(ExploreSummary* s, const std::string& signature, bool known, const FailedRun& run,
         const std::string& path = "", int64_t bytes = 0) {
  ++s->failures;
  ++s->by_check[run.check];
  if (!known) ++s->found_new;
  Finding& f = s->findings[signature];
  if (f.count++ == 0) {
    f.signature = signature;
    f.known = known;
    f.known_on = known ? "" : "sarama-1.42.1";
    f.first = run;
  }
  if (path.empty() || (!f.smallest_path.empty() && bytes >= f.smallest_bytes)) return;
  f.smallest_path = path;
  f.smallest_bytes = bytes;
  f.smallest = run;
}

TEST(Summary, JsonReadsBackToTheSameSummary) {
  ExploreSummary s = Shard(1);
  Add(&s, "two-in-flight@Broker.AsyncProduce", true, Failed(1), "out/a \"quoted\".toml", 300);
  Add(&s, "unclassified#1a2b3c", false, Failed(3, "no-duplicates"));
  const std::string json = SummaryJson(s);
  const absl::StatusOr<ExploreSummary> back = ParseSummary(json, "s.json");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  EXPECT_EQ(SummaryText(*back), SummaryText(s));
  EXPECT_EQ(SummaryJson(*back), json);
  EXPECT_EQ(back->seed, 18446744073709551615ULL);
  EXPECT_EQ(back->findings.at("two-in-flight@Broker.AsyncProduce").smallest_path,
            "out/a \"quoted\".toml");
  EXPECT_EQ(back->findings.at("unclassified#1a2b3c").known_on, "sarama-1.42.1");
  EXPECT_THAT(SummaryText(s), HasSubstr("new   unclassified#1a2b3c (known on sarama-1.42.1 only) "
                                        "first seed 1003\n"));
}

TEST(Summary, OverTheWireTheTrialsReadBack) {
  ExploreSummary s = Shard(0);
  s.real = true;
  s.profile = "kafkajs";
  s.client = "kafkajs 2.2.4";
  s.trials = {{.wall_ns = 3000000000, .cpu_ns = 100000000, .load_centi = 110},
              {.wall_ns = 1000000000, .cpu_ns = 300000000, .load_centi = -1},
              {.wall_ns = 2000000000, .cpu_ns = 200000000, .load_centi = 50}};
  const absl::StatusOr<ExploreSummary> back = ParseSummary(SummaryJson(s), "s.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(SummaryText(*back), SummaryText(s));
  EXPECT_THAT(SummaryText(s), HasSubstr("over the wire: kafkajs 2.2.4, 3 trial(s) on 2 at once, "
                                        "median trial 2.00 s of wall time, harness errors 0; "
                                        "machine: 2 cores, 1-minute load 0.80 on average"));
  // In simulated time: the clock reads back, and the line says so.
  s.simulated = true;
  const absl::StatusOr<ExploreSummary> simulated = ParseSummary(SummaryJson(s), "s.json");
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_TRUE(simulated->simulated);
  EXPECT_THAT(SummaryText(*simulated),
              HasSubstr("in simulated time: kafkajs 2.2.4, 3 run(s) on 2 at once, median run "
                        "2.00 s of wall time"));
  ExploreSummary model = Shard(0);
  std::string json = SummaryJson(model);
  std::string clocked = json;
  absl::StrReplaceAll({{"\"clock\": null", "\"clock\": \"simulated\""}}, &clocked);
  EXPECT_THAT(ParseSummary(clocked, "s.json").status().message(),
              HasSubstr("only where \"real\" is true"));
  absl::StrReplaceAll({{"\"real\": false", "\"real\": true"}}, &json);
  EXPECT_THAT(ParseSummary(json, "s.json").status().message(),
              HasSubstr("a summary over the wire has its \"wire\" figures"));
}

// What one process of all the runs would have counted, from the shards.
TEST(Summary, MergeKeepsTheFirstRunAndTheSmallestFile) {
  ExploreSummary a = Shard(0), b = Shard(1);
  // The first run: global index 1 (shard 1) before 2 (shard 0).
  Add(&a, "x@f", false, Failed(2), "a/2.toml", 500);
  Add(&b, "x@f", false, Failed(1), "b/1.toml", 600);
  // The smallest file: fewest bytes; of equal sizes, the lowest index.
  Add(&a, "x@f", false, Failed(4), "a/4.toml", 400);
  Add(&b, "x@f", false, Failed(5), "b/5.toml", 400);
  Add(&b, "y@g", true, Failed(3));
  b.trials = {};
  std::vector<std::string> notes;
  const absl::StatusOr<ExploreSummary> m = MergeSummaries({b, a}, &notes);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(m->shards_in, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(m->runs, 6);
  EXPECT_EQ(m->wall_ns, 3000000000);
  EXPECT_EQ(m->failures, 5);
  EXPECT_EQ(m->found_new, 4);
  EXPECT_EQ(m->by_check.at("per-partition-order"), 5);
  const Finding& x = m->findings.at("x@f");
  EXPECT_EQ(x.count, 4);
  EXPECT_EQ(x.first.index, 1u);
  EXPECT_EQ(x.smallest_path, "a/4.toml");
  EXPECT_EQ(x.smallest.index, 4u);
  EXPECT_EQ(SummaryExitCode(*m), 1);
  EXPECT_THAT(SummaryText(*m), StartsWith("summary: [explore] runs=6 runs/s=2.0 failures=5 "
                                          "per-partition-order=5 new=4\n"));
}

TEST(Summary, MergeInterleavesTheTrialsByGlobalIndex) {
  ExploreSummary a = Shard(0), b = Shard(1);
  for (ExploreSummary* s : {&a, &b}) {
    s->real = true;
    for (uint64_t i = 0; i < 3; ++i) {
      s->trials.push_back({.wall_ns = static_cast<int64_t>(s->shards_in[0] + 2 * i)});
    }
  }
  std::vector<std::string> notes;
  const absl::StatusOr<ExploreSummary> m = MergeSummaries({b, a}, &notes);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->trials.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(m->trials[i].wall_ns, static_cast<int64_t>(i));
}

// A refusal names the second file, the line and column of the field that
// differs.
TEST(Summary, MergeRefusesOtherExplorationsAndAShardTwice) {
  const absl::StatusOr<ExploreSummary> first = ParseSummary(SummaryJson(Shard(0)), "a.json");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string known = DigestText("known");
  const struct {
    std::vector<std::pair<std::string, std::string>> edits;
    std::string error;
  } kCases[] = {
      {{{R"("seed": "18446744073709551615")", R"("seed": "7")"}},
       "b.json:9:11: root seed 7, but a.json has 18446744073709551615"},
      {{{R"("profile": "sarama-main")", R"("profile": "sarama-1.42.1")"}},
       "b.json:4:14: profile sarama-1.42.1, but a.json has sarama-main"},
      {{{R"("mock_faults": false)", R"("mock_faults": true)"}}, "b.json:7:18: mock faults on"},
      {{{known, "0000000000000000"}}, "b.json:8:12: known signatures"},
      {{{R"("shard": 1,)", R"("shard": 0,)"},
        {R"("first": 1, "last": 5)", R"("first": 0, "last": 4)"}},
       "b.json:11:12: shard 0 of 2 given twice"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.error);
    std::string json = SummaryJson(Shard(1));
    for (const auto& [from, to] : c.edits) {
      ASSERT_THAT(json, HasSubstr(from));
      absl::StrReplaceAll({{from, to}}, &json);
    }
    const absl::StatusOr<ExploreSummary> second = ParseSummary(json, "b.json");
    ASSERT_TRUE(second.ok()) << second.status();
    std::vector<std::string> notes;
    const absl::StatusOr<ExploreSummary> m = MergeSummaries({*first, *second}, &notes);
    ASSERT_FALSE(m.ok());
    EXPECT_THAT(std::string(m.status().message()), StartsWith(c.error));
  }
}

TEST(Summary, WhatIsNotASummaryIsRefusedWhereItStands) {
  ExploreSummary s = Shard(0);
  Add(&s, "x@f", false, Failed(2), "a/2.toml", 500);
  const std::string json = SummaryJson(s);
  auto error = [&](const std::string& from, const std::string& to) {
    std::string text = json;
    absl::StrReplaceAll({{from, to}}, &text);
    return std::string(ParseSummary(text, "s.json").status().message());
  };
  EXPECT_THAT(error("\"runs\": 3,", "\"runs\": 3,,"), MatchesRegex("s.json:12:13: not JSON: .*"));
  EXPECT_THAT(error("\"runs\": 3,", "\"runs\": 3, \"extra\": 1,"),
              StartsWith("s.json:12:23: unknown member \"extra\""));
  EXPECT_THAT(error("\"runs\": 3,", "\"runs\": \"3\","),
              StartsWith("s.json:12:11: \"runs\" is a string, expected an integer"));
  // The counts must add up, and a run must be one of this shard's.
  EXPECT_THAT(error("\"failures\": 1,", "\"failures\": 2,"), HasSubstr("by check 1 failures"));
  EXPECT_THAT(error("\"index\": 2,", "\"index\": 3,"),
              HasSubstr("run 3 is not one of this shard's"));
  EXPECT_THAT(error("\"index\": 2,", "\"index\": 6,"),
              HasSubstr("run 6 is not one of this shard's"));
  EXPECT_THAT(error("\"prodsim_explore_summary\": 1", "\"prodsim_explore_summary\": 2"),
              StartsWith("s.json:2:30: \"prodsim_explore_summary\" is 2, outside 1..1"));
  EXPECT_THAT(error("\"verdict\": \"safety\"", "\"verdict\": \"pass\""),
              HasSubstr("not a failing verdict: pass"));
}

}  // namespace
}  // namespace search
