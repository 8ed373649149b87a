#include "sim/kafka/reference/differential.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kafka::reference {
namespace {

TEST(OpLineTest, RoundTrips) {
  for (const char* line : {"append 7 0 3 2", "append 1 2 -1 1", "append-plain 3",
                           "replicate 2 1 2147483647 4", "replicate -1 -1 -1 2", "truncate 12",
                           "restart clean", "restart crash", "advance 1500", "expire"}) {
    absl::StatusOr<Op> op = ParseOpLine(line);
    ASSERT_TRUE(op.ok()) << line << ": " << op.status();
    EXPECT_EQ(OpLine(*op), line);
  }
}

TEST(OpLineTest, RefusesWhatNoSideCouldRun) {
  for (const char* line : {"", "append 7 0 3", "append -1 0 0 1", "append 7 -1 0 1",
                           "append 7 0 0 0", "replicate 7 0 -1 1", "restart", "restart now",
                           "truncate -1", "advance x", "expire 3", "fetch 0"}) {
    EXPECT_FALSE(ParseOpLine(line).ok()) << line;
  }
}

TEST(ParseReplayTest, SkipsCommentsAndNamesTheBadLine) {
  absl::StatusOr<std::vector<Op>> ops =
      ParseReplay("f.txt", "# a comment\nappend 1 0 0 1\n\n#   both: ...\nexpire\n");
  ASSERT_TRUE(ops.ok()) << ops.status();
  EXPECT_EQ(ops->size(), 2u);
  absl::StatusOr<std::vector<Op>> bad = ParseReplay("f.txt", "append 1 0 0 1\nappend 1\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(std::string(bad.status().message()).starts_with("f.txt:2:1: ")) << bad.status();
}

TEST(ModelVersionForTest, MapsReleasesToTheModelsRules) {
  EXPECT_EQ(*ModelVersionFor("2.6.2"), KafkaVersion::k2_6);
  EXPECT_EQ(*ModelVersionFor("2.4.1"), KafkaVersion::k2_0);
  EXPECT_EQ(*ModelVersionFor("0.11.0.3"), KafkaVersion::k0_11);
  EXPECT_EQ(*ModelVersionFor("4.4.0"), KafkaVersion::k2_6);
  EXPECT_FALSE(ModelVersionFor("1.1.1").ok());
  EXPECT_FALSE(ModelVersionFor("x").ok());
}

std::vector<std::string> RunOps(ModelPartition& m, const std::vector<std::string>& lines) {
  std::vector<std::string> answers;
  for (const std::string& line : lines) {
    absl::StatusOr<Op> op = ParseOpLine(line);
    EXPECT_TRUE(op.ok()) << line;
    answers.push_back(m.Apply(*op));
  }
  return answers;
}

// The answers Kafka 2.6's Log gives to this session (the harness's README):
// prodsim's side must give the same words.
TEST(ModelPartitionTest, AnswersInTheHarnesssWords) {
  ModelPartition m(KafkaVersion::k2_6);
  EXPECT_EQ(RunOps(m, {"append 7 0 0 3", "append 7 0 3 1", "append 7 0 0 3", "append 7 0 5 1",
                       "append 7 1 4 1", "append 7 1 0 1", "append 8 0 5 2", "append-plain 1",
                       "replicate 9 0 0 1"}),
            (std::vector<std::string>{"append 0 2", "append 3 3", "duplicate 0 2",
                                      "error OUT_OF_ORDER_SEQUENCE_NUMBER",
                                      "error OUT_OF_ORDER_SEQUENCE_NUMBER", "append 4 4",
                                      "append 5 6", "append 7 7", "ok 8 8"}));
  EXPECT_EQ(m.State(), "state 7:1:0-0@4-4 8:0:5-6@5-6 9:0:0-0@8-8");
  EXPECT_EQ(RunOps(m, {"truncate 5", "advance 1500", "expire"}),
            (std::vector<std::string>{"ok 5", "ok 1500", "ok"}));
  EXPECT_EQ(m.State(), "state");
}

TEST(ModelPartitionTest, TruncationDropsTheBatchHoldingTheOffsetAndRebuilds) {
  ModelPartition m(KafkaVersion::k2_6);
  RunOps(m, {"append 1 0 0 2", "append 1 0 2 2", "append 1 0 4 1"});
  EXPECT_EQ(RunOps(m, {"truncate 3"}), (std::vector<std::string>{"ok 2"}));
  EXPECT_EQ(m.State(), "state 1:0:0-1@0-1");
  EXPECT_EQ(RunOps(m, {"truncate 9"}), (std::vector<std::string>{"ok 2"}));
}

TEST(ModelPartitionTest, TheMutantsDepartFromTheRules) {
  ModelPartition dup(KafkaVersion::k2_6, Mutant::kNoDuplicates);
  EXPECT_EQ(RunOps(dup, {"append 1 0 0 1", "append 1 0 0 1"})[1],
            "error OUT_OF_ORDER_SEQUENCE_NUMBER");
  ModelPartition keep(KafkaVersion::k2_6, Mutant::kStateSurvivesRestart);
  RunOps(keep, {"append 1 0 0 1", "append 1 0 1 1", "restart crash"});
  EXPECT_EQ(keep.State(), "state 1:0:0-0@0-0,1-1@1-1");
}

// Kafka's Log after a restart knows each producer's last batch only (a
// snapshot holds no more), drops producers past the expiration age, and a
// crash's recovery deletes the older snapshots, so a later truncation
// replays the log from the start; a clean stop keeps them.
TEST(ModelPartitionTest, RestartsLoadASnapshotOfTheLastBatches) {
  ModelPartition m(KafkaVersion::k2_6);
  RunOps(m, {"append 1 0 0 1", "append 1 0 1 1", "restart crash"});
  EXPECT_EQ(m.State(), "state 1:0:1-1@1-1");
  EXPECT_EQ(RunOps(m, {"append 1 0 0 1"})[0], "error OUT_OF_ORDER_SEQUENCE_NUMBER");
  RunOps(m, {"append 2 0 0 1", "restart crash", "truncate 2"});
  EXPECT_EQ(m.State(), "state 1:0:0-0@0-0,1-1@1-1");

  ModelPartition clean(KafkaVersion::k2_6);
  RunOps(clean, {"append 1 0 0 1", "append 1 0 1 1", "restart clean", "append 2 0 0 1",
                 "restart clean", "truncate 2"});
  EXPECT_EQ(clean.State(), "state 1:0:1-1@1-1");

  ModelPartition old(KafkaVersion::k2_6);
  RunOps(old, {"append 1 0 0 1", "advance 1000", "restart clean"});
  EXPECT_EQ(old.State(), "state");
}

}  // namespace
}  // namespace kafka::reference
