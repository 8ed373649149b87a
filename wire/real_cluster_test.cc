// What a real cluster's trial reads and refuses, without a cluster: the
// --cluster flag, the scenarios it cannot run, and the supervisor's dump
// made into the final logs and appends the checks read.
#include "wire/real_cluster.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "scenarios/scenario.h"

namespace wire {
namespace {

using kafka::TopicPartition;
using sim::Duration;
using sim::Time;

TopicPartition Tp(int32_t p) { return TopicPartition{"t", kafka::PartitionId(p)}; }

TEST(ParseClusterFlag, SimOrAKafkaVersion) {
  // Goal: sim and the empty value mean the simulated cluster, kafka@N.N.N a
  // real one, anything else is an error naming what the flag takes.
  EXPECT_FALSE(ParseClusterFlag("sim")->has_value());
  EXPECT_FALSE(ParseClusterFlag("")->has_value());
  ASSERT_TRUE(ParseClusterFlag("kafka@2.6.2").ok());
  EXPECT_EQ(**ParseClusterFlag("kafka@4.4.0"), "4.4.0");
  for (const char* bad :
       {"kafka", "kafka@", "kafka@2.6", "kafka@2.6.x", "kafka@1.2.3.4", "real", "kafka@../../x"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<std::optional<std::string>> v = ParseClusterFlag(bad);
    ASSERT_FALSE(v.ok());
    EXPECT_TRUE(absl::StrContains(v.status().message(), "kafka@VERSION"));
  }
}

scenarios::FaultSpec Fault(fault_models::FaultKind kind, Duration at) {
  scenarios::FaultSpec f;
  f.kind = kind;
  f.at = at;
  f.topic = "t";
  f.partition = 0;
  return f;
}

scenarios::Scenario ThreeBrokers() {
  scenarios::Scenario s;
  s.cluster.brokers = 3;
  s.cluster.min_insync_replicas = 2;
  s.cluster.topics.push_back(scenarios::TopicSpec{"t", 3, 3});
  return s;
}

TEST(CheckRealCluster, RefusesWhatHasNoRealForm) {
  // Goal: a scenario of realistic network and broker faults runs; each kind
  // with no real form is refused with its reason; buggify sites are left
  // out with a note (a real cluster's timing varies by itself).
  scenarios::Scenario s = ThreeBrokers();
  s.faults.push_back(Fault(fault_models::FaultKind::kPartition, Duration::Seconds(1)));
  s.faults.back().duration = Duration::Seconds(2);
  EXPECT_TRUE(CheckRealCluster(s).ok());
  scenarios::Scenario inject = s;
  inject.faults.push_back(Fault(fault_models::FaultKind::kInjectError, Duration::Seconds(1)));
  inject.faults.back().error = kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER;
  const absl::Status refused = CheckRealCluster(inject);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.message(), "fault 2 (inject_error at 1s) has no real form"))
      << refused.message();
  scenarios::Scenario log_dir = s;
  log_dir.faults.push_back(Fault(fault_models::FaultKind::kLogDirFailure, Duration()));
  EXPECT_FALSE(CheckRealCluster(log_dir).ok());
  scenarios::Scenario bad_topic = s;
  bad_topic.cluster.topics[0].name = "t/0";
  EXPECT_FALSE(CheckRealCluster(bad_topic).ok());
  scenarios::Scenario buggified = s;
  buggified.buggify.sites.push_back("broker.slow_request");
  EXPECT_TRUE(CheckRealCluster(buggified).ok());
  bool noted = false;
  for (const std::string& n : RealClusterNotes(buggified, "2.6.2")) {
    noted |= absl::StrContains(n, "buggify sites are not applied");
  }
  EXPECT_TRUE(noted);
}

TEST(ParseDump, ReadsBatchesAndHighWatermarks) {
  // Goal: each line of the supervisor's dump is read as written; a line
  // that is not the protocol is an error.
  absl::StatusOr<ClusterDump> d =
      ParseDump({"batch 1 t 0 0 2 1000 0 0 2 0 0 5,6,7", "batch 1 t 0 3 3 -1 -1 -1 -1 0 0 -",
                 "batch 0 t 0 4 4 1000 0 3 3 0 0 x41", "hw 0 t 0 4", "hw 1 t 0 3"});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->batches.size(), 3u);
  const DumpBatch& b = d->batches[0];
  EXPECT_EQ(b.broker, 1);
  EXPECT_EQ(b.tp, Tp(0));
  EXPECT_EQ(b.base_offset, 0);
  EXPECT_EQ(b.last_offset, 2);
  EXPECT_EQ(b.producer_id, 1000);
  EXPECT_EQ(b.epoch, 0);
  EXPECT_EQ(b.last_seq, 2);
  EXPECT_EQ(b.record_ids, (std::vector<uint64_t>{5, 6, 7}));
  EXPECT_EQ(d->batches[1].record_ids, std::vector<uint64_t>{0});  // no prodsim-id
  EXPECT_EQ(d->batches[2].record_ids, std::vector<uint64_t>{0});  // not digits
  EXPECT_EQ(d->hw.at(Tp(0)).at(0), 4);
  EXPECT_EQ(d->hw.at(Tp(0)).at(1), 3);
  EXPECT_FALSE(ParseDump({"batch 1 t 0 zero 2 1000 0 0 2 0 0 5"}).ok());
  EXPECT_FALSE(ParseDump({"ok"}).ok());
}

TEST(AddDump, TheHighestWatermarkReplicaUpToItTimedByItsAck) {
  // Goal: the final log is the replica with the highest HW, cut at the HW
  // (a batch across it keeps its records below), control batches left out;
  // each of its batches is an append timed by the response that
  // acknowledged its offset, else by the request that carried it, else at
  // the end.
  ClusterDump d;
  // Replica 0 is behind (HW 3); replica 2 leads with HW 6 and an
  // uncommitted batch above it.
  d.batches = {{0, Tp(0), 0, 2, 7, 0, 0, 2, false, false, {1, 2, 3}},
               {2, Tp(0), 0, 2, 7, 0, 0, 2, false, false, {1, 2, 3}},
               {2, Tp(0), 3, 3, -1, -1, -1, -1, false, true, {0}},  // a control batch
               {2, Tp(0), 4, 6, 7, 0, 3, 5, false, false, {4, 5, 6}},
               {2, Tp(0), 7, 7, 7, 0, 6, 6, false, false, {7}}};
  d.hw[Tp(0)] = {{0, 3}, {2, 6}};
  kafka::History h;
  kafka::ResponseEvent ack;
  ack.at = Time() + Duration::Millis(10);
  ack.broker = kafka::BrokerId(1);
  ack.tp = Tp(0);
  ack.base_offset = kafka::Offset(0);
  h.responses.push_back(ack);
  std::vector<FaultProxy::SentBatch> sent = {{Time() + Duration::Millis(20),
                                              kafka::BrokerId(2),
                                              Tp(0),
                                              kafka::ProducerId(7),
                                              kafka::Epoch(0),
                                              kafka::Sequence(3),
                                              {4, 5, 6}}};
  AddDump(d, sent, Time() + Duration::Seconds(9), h);
  const std::vector<kafka::LogEntry>& log = h.final_logs.at(Tp(0));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].record_ids, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(log[1].base_offset, kafka::Offset(4));
  EXPECT_EQ(log[1].record_ids, (std::vector<uint64_t>{4, 5}));  // offset 6 is above the HW
  ASSERT_EQ(h.appends.size(), 2u);
  EXPECT_EQ(h.appends[0].at, Time() + Duration::Millis(10));
  EXPECT_EQ(h.appends[0].broker, kafka::BrokerId(1));
  EXPECT_TRUE(h.appends[0].leader);
  EXPECT_EQ(h.appends[1].at, Time() + Duration::Millis(20));
  EXPECT_EQ(h.appends[1].last_seq, kafka::Sequence(4));
}

TEST(MarkDuplicates, OtherRecordsAtTheOffsetOrASecondAnswerForTheSameBatch) {
  // Goal: a real broker's answers carry no duplicate flag; a success is a
  // duplicate when the log's batch at its offset holds other records (a
  // reused sequence answered from the cache), or when the same epoch and
  // sequence got that offset before (a resend); an append keeps no ids.
  kafka::History h;
  h.final_logs[Tp(0)] = {
      {kafka::Offset(0), kafka::ProducerId(7), kafka::Epoch(0), kafka::Sequence(0), {1, 2}},
      {kafka::Offset(2), kafka::ProducerId(7), kafka::Epoch(0), kafka::Sequence(2), {3}}};
  const auto success = [&](int64_t offset, int32_t seq, std::vector<uint64_t> ids) {
    kafka::ResponseEvent r;
    r.tp = Tp(0);
    r.base_offset = kafka::Offset(offset);
    r.epoch = kafka::Epoch(0);
    r.first_seq = kafka::Sequence(seq);
    r.record_ids = std::move(ids);
    h.responses.push_back(r);
  };
  success(0, 0, {1, 2});  // the append
  success(2, 2, {3});     // the append
  success(0, 0, {1, 2});  // a resend of the first
  success(2, 2, {9});     // other records under sequence 2: answered from the cache
  MarkDuplicates(h);
  ASSERT_EQ(h.responses.size(), 4u);
  EXPECT_FALSE(h.responses[0].duplicate);
  EXPECT_TRUE(h.responses[0].record_ids.empty());
  EXPECT_FALSE(h.responses[1].duplicate);
  EXPECT_TRUE(h.responses[2].duplicate);
  EXPECT_EQ(h.responses[2].record_ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(h.responses[3].duplicate);
  EXPECT_EQ(h.responses[3].record_ids, (std::vector<uint64_t>{9}));
}

}  // namespace
}  // namespace wire
