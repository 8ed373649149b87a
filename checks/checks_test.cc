// Tests of the property checks: for each check, a clean record it accepts and
// hand-made records that break it on purpose (canaries), plus the registry.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checks/check.h"
#include "checks/signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

sim::Time Ms(int64_t ms) { return sim::Time::FromNanos(ms * 1000000); }

kafka::TopicPartition Tp(int32_t partition) {
  return kafka::TopicPartition{"t", kafka::PartitionId(partition)};
}

kafka::LogEntry Entry(int64_t base_offset, int16_t epoch, int32_t first_seq,
                      std::vector<uint64_t> ids) {
  return kafka::LogEntry{kafka::Offset(base_offset), kafka::ProducerId(1), kafka::Epoch(epoch),
                         kafka::Sequence(first_seq), std::move(ids)};
}

sarama::AckEvent Ack(int64_t at_ms, uint64_t id, int32_t partition, int64_t offset, int32_t seq,
                     int16_t epoch = 0) {
  sarama::AckEvent a;
  a.at = Ms(at_ms);
  a.id = id;
  a.topic = "t";
  a.partition = partition;
  a.offset = offset;
  a.producer_epoch = epoch;
  a.sequence = seq;
  a.has_sequence = true;
  return a;
}

sarama::ErrorEvent Err(int64_t at_ms, uint64_t id, int32_t partition, sarama::Error err) {
  return sarama::ErrorEvent{Ms(at_ms), id, "t", partition, std::move(err)};
}

kafka::ResponseEvent Response(int64_t at_ms, int32_t partition, kafka::ErrorCode error) {
  kafka::ResponseEvent resp;
  resp.at = Ms(at_ms);
  resp.broker = kafka::BrokerId(1);
  resp.correlation_id = 9;
  resp.tp = Tp(partition);
  resp.error = error;
  return resp;
}

// Six messages of topic t, idempotent: ids 1, 3, 5 on t/0 in two batches,
// ids 2, 4, 6 on t/1 in one; all acknowledged and committed; Close returned.
RunRecord CleanRecord() {
  RunRecord r;
  r.idempotent = true;
  for (uint64_t id = 1; id <= 6; ++id) {
    r.produced.push_back(ProducedMessage{id, "t", "", Ms(static_cast<int64_t>(id))});
  }
  r.kafka.final_logs[Tp(0)] = {Entry(0, 0, 0, {1, 3}), Entry(2, 0, 2, {5})};
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {2, 4, 6})};
  r.kafka.appends.push_back(kafka::AppendEvent{Ms(20),
                                               kafka::BrokerId(1),
                                               true,
                                               Tp(0),
                                               kafka::Offset(0),
                                               kafka::ProducerId(1),
                                               kafka::Epoch(0),
                                               kafka::Sequence(0),
                                               kafka::Sequence(1),
                                               {1, 3}});
  r.kafka.responses.push_back(Response(20, 0, kafka::ErrorCode::NONE));
  r.producer.acks = {Ack(30, 1, 0, 0, 0), Ack(30, 3, 0, 1, 1), Ack(31, 2, 1, 0, 0),
                     Ack(31, 4, 1, 1, 1), Ack(31, 6, 1, 2, 2), Ack(40, 5, 0, 2, 2)};
  r.faults_healed_at = Ms(10);
  r.close_called_at = Ms(100);
  r.close_returned_at = Ms(150);
  r.run.outcome = sim::Outcome::kAllDone;
  r.run.end_time = Ms(150);
  return r;
}

std::optional<Violation> EvaluateCheck(std::string_view check, const RunRecord& r) {
  const Check* c = FindCheck(check);
  EXPECT_NE(c, nullptr) << check;
  if (c == nullptr) return std::nullopt;
  return c->Evaluate(r);
}

// Expects `check` to fail on `r` with a first witness containing `needle`.
void ExpectViolation(std::string_view check, const RunRecord& r, std::string_view needle) {
  const std::optional<Violation> v = EvaluateCheck(check, r);
  ASSERT_TRUE(v.has_value()) << check;
  EXPECT_EQ(v->check, check);
  EXPECT_FALSE(v->explanation.empty());
  EXPECT_EQ(v->explanation.find('\n'), std::string::npos) << v->explanation;
  ASSERT_FALSE(v->witnesses.empty());
  EXPECT_LE(v->witnesses.size(), kWitnessesMax);
  EXPECT_THAT(v->witnesses.front(), HasSubstr(std::string(needle)))
      << "explanation: " << v->explanation;
}

// --- Registry.

// All checks exist under their documented names, in the documented order.
TEST(Registry, NamesInFixedOrder) {
  std::vector<std::string> names;
  for (const auto& c : AllChecks()) names.emplace_back(c->name());
  EXPECT_THAT(
      names, ElementsAre("log-offsets-contiguous", "acked-batches-in-order",
                         "log-sequences-contiguous", "no-duplicates", "per-partition-order",
                         "acked-are-durable", "every-message-one-outcome", "not-persisted-absent",
                         "no-panic", "no-producer-assertion", "no-broker-sequence-error",
                         "retry-pacing", "no-leaked-goroutines", "no-fatal-error", "client-crashed",
                         "client-exited-early", "client-hung", "client-output-garbage",
                         "client-malformed-frame", "client-lost-messages", "liveness"));
  for (const std::string& n : names) {
    ASSERT_NE(FindCheck(n), nullptr);
    EXPECT_EQ(FindCheck(n)->name(), n);
  }
  EXPECT_EQ(FindCheck("no-such-check"), nullptr);
}

// A clean record violates nothing.
TEST(Registry, CleanRecordPassesEveryCheck) { EXPECT_THAT(EvaluateAll(CleanRecord()), IsEmpty()); }

// no-leaked-goroutines fires, when asked, for a producer goroutine blocked
// after Close returned (canary), and not for one that sleeps or runs, nor
// when the scenario did not ask, nor when Close never returned.
TEST(NoLeakedGoroutines, ABlockedSurvivorOfCloseIsALeak) {
  RunRecord r = CleanRecord();
  sim::LiveGoroutine sleeper;
  sleeper.id = 40;
  sleeper.name = "partition/t/0.breaker.timer";
  sleeper.sleeping = true;
  sleeper.waits_on = "sleep 10s";
  sim::LiveGoroutine blocked;
  blocked.id = 41;
  blocked.name = "retryBatch/t/0";
  blocked.waits_on = "select on 'bp#1.bridge' (send), 'done' (receive)";
  r.producer_goroutines_at_end = {sleeper};
  r.check_leaked_goroutines = true;
  EXPECT_FALSE(EvaluateCheck("no-leaked-goroutines", r).has_value());
  r.producer_goroutines_at_end.push_back(blocked);
  ExpectViolation("no-leaked-goroutines", r, "goroutine 41 'retryBatch/t/0' still waits: select");
  r.check_leaked_goroutines = false;
  EXPECT_FALSE(EvaluateCheck("no-leaked-goroutines", r).has_value());
  r.check_leaked_goroutines = true;
  r.close_returned_at.reset();
  EXPECT_FALSE(EvaluateCheck("no-leaked-goroutines", r).has_value());
}

// no-panic fires on a crashed run (canary) and prints Go's report: the
// message, the goroutine, the model's line from the repository's root;
// liveness then stays silent, the panic being the cause.
TEST(NoPanic, ACrashedRunIsAPanicNotALivenessFailure) {
  RunRecord r = CleanRecord();
  EXPECT_FALSE(EvaluateCheck("no-panic", r).has_value());
  r.run.outcome = sim::Outcome::kProgramCrash;
  r.close_returned_at.reset();
  r.run.panic = sim::PanicReport{"send on closed channel bp#0.input", 12, "bp#0.bridge",
                                 "/home/someone/prodsim/producer/async_producer.cc", 321};
  ExpectViolation("no-panic", r, "panic: send on closed channel bp#0.input");
  const std::optional<Violation> v = EvaluateCheck("no-panic", r);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->witnesses.size(), 3u);
  EXPECT_THAT(v->witnesses[1], HasSubstr("goroutine 12 bp#0.bridge [running]"));
  EXPECT_THAT(v->witnesses[2], HasSubstr("producer/async_producer.cc:321"));
  EXPECT_EQ(v->explanation.find("/home/someone"), std::string::npos);
  EXPECT_FALSE(EvaluateCheck("liveness", r).has_value());
}

// EvaluateAll reports every failing check, in AllChecks order.
TEST(Registry, EvaluateAllListsEachViolatedCheck) {
  RunRecord r = CleanRecord();
  r.producer.errors.push_back(Err(
      50, 3, 0, sarama::Error::Of(sarama::ErrorKind::kProduceSetAssertion, "assertion failed")));
  r.kafka.responses.push_back(Response(51, 0, kafka::ErrorCode::INVALID_PRODUCER_EPOCH));
  std::vector<std::string> names;
  for (const Violation& v : EvaluateAll(r)) names.push_back(v.check);
  EXPECT_THAT(names, ElementsAre("every-message-one-outcome", "no-producer-assertion",
                                 "no-broker-sequence-error"));
}

// Evaluating the same record twice gives the same text, byte for byte.
TEST(Registry, Deterministic) {
  RunRecord r = CleanRecord();
  std::swap(r.producer.acks[3], r.producer.acks[4]);
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {2, 6, 4})};
  const std::vector<Violation> a = EvaluateAll(r);
  const std::vector<Violation> b = EvaluateAll(r);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].check, b[i].check);
    EXPECT_EQ(a[i].explanation, b[i].explanation);
    EXPECT_EQ(a[i].witnesses, b[i].witnesses);
  }
}

// Witnesses stop at kWitnessesMax while the explanation counts every one.
TEST(Registry, WitnessesAreCapped) {
  RunRecord r = CleanRecord();
  for (int i = 0; i < 25; ++i) {
    r.kafka.responses.push_back(
        Response(60 + i, 0, kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER));
  }
  const std::optional<Violation> v = EvaluateCheck("no-broker-sequence-error", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->witnesses, SizeIs(kWitnessesMax));
  EXPECT_THAT(v->explanation, HasSubstr("25"));
  EXPECT_THAT(v->witnesses.front(), HasSubstr("t=0.060s"));
}

// --- acked-batches-in-order

// The clean record's acks run 0, 1, 2 per partition and epoch.
TEST(AckedBatchesInOrder, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", CleanRecord()).has_value());
}

// Canary (IBM/sarama#2803): seq=2 acknowledged before seq=1 on t/1.
TEST(AckedBatchesInOrder, ReorderedAckFails) {
  RunRecord r = CleanRecord();
  std::swap(r.producer.acks[3], r.producer.acks[4]);
  ExpectViolation("acked-batches-in-order", r, "ack id=6 t/1 offset=2 epoch=0 seq=2 after seq=0");
  const std::optional<Violation> v = EvaluateCheck("acked-batches-in-order", r);
  ASSERT_TRUE(v.has_value());
  ASSERT_THAT(v->witnesses, SizeIs(2));
  EXPECT_THAT(v->witnesses[0], HasSubstr("gap: seq=1 missing"));
  EXPECT_THAT(v->witnesses[1], HasSubstr("id=4"));
  EXPECT_THAT(v->witnesses[1], HasSubstr("seq=1 after seq=2 (decrease"));
}

// Canary: the same sequence acknowledged twice.
TEST(AckedBatchesInOrder, RepeatedSequenceFails) {
  RunRecord r = CleanRecord();
  r.producer.acks.push_back(Ack(45, 7, 0, 3, 2));
  ExpectViolation("acked-batches-in-order", r,
                  "ack id=7 t/0 offset=3 epoch=0 seq=2 after seq=2 (repeat");
}

// A new epoch may restart at 0; acks without a sequence and sequence
// wrap-around are fine; non-idempotent runs are not judged.
TEST(AckedBatchesInOrder, EpochRestartWrapAndNoSequencePass) {
  RunRecord r = CleanRecord();
  r.producer.acks.push_back(Ack(50, 7, 0, 3, 0, /*epoch=*/1));
  r.producer.acks.push_back(Ack(51, 8, 1, 3, INT32_MAX, /*epoch=*/1));
  r.producer.acks.push_back(Ack(52, 9, 1, 4, 0, /*epoch=*/1));
  sarama::AckEvent no_seq = Ack(53, 10, 0, 4, 17);
  no_seq.has_sequence = false;
  r.producer.acks.push_back(no_seq);
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", r).has_value());

  RunRecord plain = CleanRecord();
  plain.idempotent = false;
  std::swap(plain.producer.acks[3], plain.producer.acks[4]);
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", plain).has_value());
}

// Concurrent produce calls: acks of two calls of one partition may come in
// either order; within one call they must not.
TEST(AckedBatchesInOrder, OrderWithinACallOnlyWhenCallsAreConcurrent) {
  RunRecord r = CleanRecord();
  std::swap(r.producer.acks[1], r.producer.acks[5]);  // id 5 (seq 2) acked before id 3 (seq 1)
  ExpectViolation("acked-batches-in-order", r, "ack id=5");
  r.order_within_call = true;
  for (ProducedMessage& m : r.produced) m.call = static_cast<int64_t>(m.id);
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", r).has_value());
  // Canary: ids 3 and 5 in one call.
  r.produced[2].call = 3;
  r.produced[4].call = 3;
  ExpectViolation("acked-batches-in-order", r, "ack id=3");
}

// Several application threads (the Java driver's `threads`, one call
// each): a thread's acks of a partition skip the sequences of the other
// threads' messages, which the log holds; a gap nothing explains, or one
// the model makes, is still caught.
TEST(AckedBatchesInOrder, RealClientGapOfAnotherCallsMessagePasses) {
  RunRecord r = CleanRecord();
  r.client.emplace();
  r.order_within_call = true;
  for (ProducedMessage& m : r.produced) m.call = m.id == 3 ? 2 : 1;  // id 3 (t/0 seq 1) alone
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", r).has_value());
  // Canary: the model is judged strictly.
  RunRecord model = r;
  model.client.reset();
  ExpectViolation("acked-batches-in-order", model, "ack id=5");
  // Canary: seq 1 written for a message of the same call as the gap.
  r.produced[2].call = 1;
  r.producer.acks.erase(r.producer.acks.begin() + 1);
  ExpectViolation("acked-batches-in-order", r, "ack id=5");
}

// A real client: a gap in the acks whose missing sequence the log holds
// for a message the client reported failed (possibly persisted) is its
// documented behaviour; the model is judged strictly; and a gap with
// nothing failed behind it, or a not_persisted failure, is still caught.
TEST(AckedBatchesInOrder, RealClientGapOfAFailedButWrittenMessagePasses) {
  RunRecord r = CleanRecord();
  // id 3 (t/0 seq 1) failed, possibly persisted; it is in the log.
  r.producer.acks.erase(r.producer.acks.begin() + 1);
  r.producer.errors.push_back(Err(30, 3, 0, sarama::Error::Of(sarama::ErrorKind::kClient, "x")));
  r.kafka.appends.push_back(kafka::AppendEvent{Ms(20),
                                               kafka::BrokerId(1),
                                               true,
                                               Tp(0),
                                               kafka::Offset(1),
                                               kafka::ProducerId(1),
                                               kafka::Epoch(0),
                                               kafka::Sequence(1),
                                               kafka::Sequence(1),
                                               {3}});
  ExpectViolation("acked-batches-in-order", r, "ack id=5");  // the model: strict
  r.client.emplace();
  EXPECT_FALSE(EvaluateCheck("acked-batches-in-order", r).has_value());
  // Canary: the client said it was not written.
  r.producer.errors.back().not_persisted = true;
  ExpectViolation("acked-batches-in-order", r, "ack id=5");
}

// --- log-sequences-contiguous

// The clean record's logs hold seq 0..1, 2..2 on t/0 and 0..2 on t/1.
TEST(LogSequencesContiguous, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("log-sequences-contiguous", CleanRecord()).has_value());
}

// Canary: the second batch on t/0 starts at seq=3, leaving seq=2 out.
TEST(LogSequencesContiguous, GapFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)][1].first_seq = kafka::Sequence(3);
  ExpectViolation("log-sequences-contiguous", r, "t/0 offset=2 pid=1 epoch=0 seq=3..3 first id=5");
  const std::optional<Violation> v = EvaluateCheck("log-sequences-contiguous", r);
  ASSERT_TRUE(v.has_value());
  ASSERT_FALSE(v->witnesses.empty());
  EXPECT_THAT(v->witnesses.front(), HasSubstr("after seq=0..1 at offset=0 (gap: seq=2 missing)"));
}

// Canary: a batch that overlaps the one before it.
TEST(LogSequencesContiguous, OverlapFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)][1].first_seq = kafka::Sequence(1);
  ExpectViolation("log-sequences-contiguous", r, "overlap: seq=1 already written");
}

// Canary: a producer's first batch in a partition must start at seq=0, with
// the batch's append time in the witness.
TEST(LogSequencesContiguous, FirstBatchNotAtZeroFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)][0].first_seq = kafka::Sequence(1);
  r.kafka.final_logs[Tp(0)][1].first_seq = kafka::Sequence(3);
  r.kafka.appends[0].first_seq = kafka::Sequence(1);
  ExpectViolation("log-sequences-contiguous", r,
                  "t/0 offset=0 pid=1 epoch=0 seq=1..2 first id=1 appended t=0.020s: first batch "
                  "of pid=1 epoch=0 starts at seq=1, not 0");
}

// A bumped epoch restarts at 0 after the old epoch's batches.
TEST(LogSequencesContiguous, EpochBumpPasses) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)].push_back(Entry(3, 1, 0, {7, 8}));
  r.kafka.final_logs[Tp(0)].push_back(Entry(5, 1, 2, {9}));
  EXPECT_FALSE(EvaluateCheck("log-sequences-contiguous", r).has_value());
}

// --- no-duplicates

// The clean record holds every id once.
TEST(NoDuplicates, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("no-duplicates", CleanRecord()).has_value());
}

// Canary: id 3 written twice on t/0 by an idempotent producer.
TEST(NoDuplicates, DuplicateFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)].push_back(Entry(3, 0, 3, {3}));
  ExpectViolation("no-duplicates", r,
                  "id=3 at t/0 offset=3 (pid=1 epoch=0 seq=3) is already at t/0 offset=1 (pid=1 "
                  "epoch=0 seq=1 appended t=0.020s)");
}

// Duplicates across partitions count too; without idempotence they do not.
TEST(NoDuplicates, AcrossPartitionsAndNonIdempotent) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(1)].push_back(Entry(3, 0, 3, {1}));
  ExpectViolation("no-duplicates", r, "id=1 at t/1 offset=3");
  r.idempotent = false;
  EXPECT_FALSE(EvaluateCheck("no-duplicates", r).has_value());
}

// --- log-offsets-contiguous

// The clean record's logs start at 0 and run on without a gap.
TEST(LogOffsetsContiguous, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("log-offsets-contiguous", CleanRecord()).has_value());
}

// Canary: a batch past the end of t/1 (a gap), and one over the batch
// before it on t/0 (an overlap); the model must never write either.
TEST(LogOffsetsContiguous, GapAndOverlapFail) {
  RunRecord r = CleanRecord();
  const int64_t end = static_cast<int64_t>(r.kafka.final_logs[Tp(1)].size());
  ASSERT_GT(end, 0);
  int64_t t1_end = 0;
  for (const kafka::LogEntry& e : r.kafka.final_logs[Tp(1)]) {
    t1_end = e.base_offset.value + static_cast<int64_t>(e.record_ids.size());
  }
  r.kafka.final_logs[Tp(1)].push_back(Entry(t1_end + 2, 0, 7, {7}));
  ExpectViolation(
      "log-offsets-contiguous", r,
      absl::StrCat("t/1 batch at offset ", t1_end + 2, " where the log ends at ", t1_end));
  r = CleanRecord();
  r.kafka.final_logs[Tp(0)].push_back(Entry(0, 0, 9, {9}));
  ExpectViolation("log-offsets-contiguous", r, "t/0 batch at offset 0 where the log ends at");
}

// --- per-partition-order

// The clean record's logs follow produce order.
TEST(PerPartitionOrder, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("per-partition-order", CleanRecord()).has_value());
}

// Canary: id 2 written after id 4 on t/1.
TEST(PerPartitionOrder, ReorderFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {4, 2, 6})};
  ExpectViolation("per-partition-order", r,
                  "t/1 offset=1 id=2 (produced #1 t=0.002s) follows offset=0 id=4 (produced #3 "
                  "t=0.004s)");
}

// Idempotent: a later repeat of an earlier id is out of order; without
// idempotence only first appearances count.
TEST(PerPartitionOrder, RepeatsJudgedOnlyWhenIdempotent) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {2, 4, 2, 6})};
  ExpectViolation("per-partition-order", r, "offset=2 id=2");
  r.idempotent = false;
  EXPECT_FALSE(EvaluateCheck("per-partition-order", r).has_value());
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {4, 2, 4, 6})};
  ExpectViolation("per-partition-order", r, "offset=1 id=2");
}

// Without idempotence and with Net.MaxOpenRequests > 1 no order is
// promised (Sarama's documentation), so the check does not apply.
TEST(PerPartitionOrder, NoPromiseWithManyOpenRequestsWithoutIdempotence) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {4, 2, 6})};
  r.idempotent = false;
  r.max_open_requests = 5;
  EXPECT_FALSE(EvaluateCheck("per-partition-order", r).has_value());
  r.max_open_requests = 1;
  ExpectViolation("per-partition-order", r, "offset=1 id=2");
}

// Concurrent produce calls ("order":"per_call"): messages of different
// calls may land in any order; within one call they keep theirs.
TEST(PerPartitionOrder, OrderWithinACallOnlyWhenCallsAreConcurrent) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 0, {4, 2, 6})};
  r.order_within_call = true;
  for (ProducedMessage& m : r.produced) m.call = static_cast<int64_t>(m.id);  // one each
  EXPECT_FALSE(EvaluateCheck("per-partition-order", r).has_value());
  // Canary: 2 and 4 in one call, written 4 first.
  r.produced[1].call = 9;
  r.produced[3].call = 9;
  ExpectViolation("per-partition-order", r, "offset=1 id=2");
}

// --- acked-are-durable

// Every ack of the clean record is at its offset.
TEST(AckedAreDurable, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("acked-are-durable", CleanRecord()).has_value());
}

// Canary: the batch holding acknowledged id 5 is not in the final log.
TEST(AckedAreDurable, LostAckFails) {
  RunRecord r = CleanRecord();
  r.kafka.final_logs[Tp(0)].pop_back();
  ExpectViolation("acked-are-durable", r,
                  "ack id=5 t/0 offset=2 epoch=0 seq=2: offset 2 is not in the final log "
                  "(offsets 0..1); id=5 is in no final log");
}

// Canary: an ack that reports another record's offset.
TEST(AckedAreDurable, WrongOffsetFails) {
  RunRecord r = CleanRecord();
  r.producer.acks[1].offset = 0;
  ExpectViolation("acked-are-durable", r,
                  "ack id=3 t/0 offset=0 epoch=0 seq=1: offset 0 holds "
                  "id=1; id=3 is at t/0 offset=1");
}

// Canary: an ack for a partition with no final log.
TEST(AckedAreDurable, MissingPartitionFails) {
  RunRecord r = CleanRecord();
  r.producer.acks.push_back(Ack(45, 7, 5, 0, 0));
  ExpectViolation("acked-are-durable", r,
                  "ack id=7 t/5 offset=0 epoch=0 seq=0: the partition has no final log");
}

// An ack without an offset (a real client's "written, offset unknown")
// holds when its partition's log has the message anywhere.
TEST(AckedAreDurable, AckWithoutOffsetInTheLogPasses) {
  RunRecord r = CleanRecord();
  r.producer.acks[1].offset = -1001;
  r.producer.acks[1].offset_known = false;
  EXPECT_FALSE(EvaluateCheck("acked-are-durable", r).has_value());
}

// Canary: an ack without an offset for a message in no log.
TEST(AckedAreDurable, AckWithoutOffsetNotInTheLogFails) {
  RunRecord r = CleanRecord();
  r.producer.acks[1].offset = -1001;
  r.producer.acks[1].offset_known = false;
  r.kafka.final_logs[Tp(0)] = {Entry(0, 0, 0, {1}), Entry(1, 0, 1, {5})};
  ExpectViolation("acked-are-durable", r,
                  "ack id=3 t/0 offset=unknown(-1001) epoch=0 seq=1: acknowledged without an "
                  "offset, and not in the partition's final log; id=3 is in no final log");
}

// --- not-persisted-absent

// A failure the client calls not persisted, of a message in no log, holds;
// a failure that promises nothing may be in the log.
TEST(NotPersistedAbsent, AbsentOrUnpromisedPasses) {
  RunRecord r = CleanRecord();
  r.producer.acks.pop_back();
  r.producer.errors.push_back(Err(40, 6, 1, sarama::Error::Of(sarama::ErrorKind::kClient, "x")));
  EXPECT_FALSE(EvaluateCheck("not-persisted-absent", r).has_value());
  r.produced.push_back(ProducedMessage{7, "t", "", Ms(7)});
  sarama::ErrorEvent e = Err(41, 7, -1, sarama::Error::Of(sarama::ErrorKind::kClient, "y"));
  e.not_persisted = true;
  r.producer.errors.push_back(e);
  EXPECT_FALSE(EvaluateCheck("not-persisted-absent", r).has_value());
}

// Canary: the client said not persisted, and the log holds the message.
TEST(NotPersistedAbsent, NotPersistedButWrittenFails) {
  RunRecord r = CleanRecord();
  r.producer.acks.pop_back();
  sarama::ErrorEvent e = Err(
      40, 6, 1,
      sarama::Error::Of(sarama::ErrorKind::kClient, "_MSG_TIMED_OUT: Local: Message timed out"));
  e.not_persisted = true;
  r.producer.errors.push_back(e);
  ExpectViolation("not-persisted-absent", r,
                  "error id=6 t/1: _MSG_TIMED_OUT: Local: Message timed out; yet id=6 is at t/1 "
                  "offset=2");
}

// --- every-message-one-outcome

// Each clean message has exactly one ack before Close returned.
TEST(EveryMessageOneOutcome, CleanPasses) {
  EXPECT_FALSE(EvaluateCheck("every-message-one-outcome", CleanRecord()).has_value());
}

// Canary: id 4 both acknowledged and failed.
TEST(EveryMessageOneOutcome, TwoOutcomesFail) {
  RunRecord r = CleanRecord();
  r.producer.errors.push_back(
      Err(60, 4, 1, sarama::Error::Kafka(kafka::ErrorCode::REQUEST_TIMED_OUT)));
  ExpectViolation("every-message-one-outcome", r,
                  "id=4 has 2 outcomes: t=0.031s ack id=4 t/1 offset=1 epoch=0 seq=1; t=0.060s "
                  "error id=4 t/1");
}

// Canary: an outcome after Close returned.
TEST(EveryMessageOneOutcome, OutcomeAfterCloseFails) {
  RunRecord r = CleanRecord();
  r.producer.acks[5].at = Ms(200);
  ExpectViolation("every-message-one-outcome", r,
                  "t=0.200s ack id=5 t/0 offset=2 epoch=0 seq=2, after Close returned at t=0.150s");
}

// Canary: Close returned while id 6 had no outcome; before Close returns a
// missing outcome is not this check's business.
TEST(EveryMessageOneOutcome, MissingOutcomeAfterCloseFails) {
  RunRecord r = CleanRecord();
  r.producer.acks.erase(r.producer.acks.begin() + 4);
  ExpectViolation("every-message-one-outcome", r, "id=6 (t, produced t=0.006s) has no outcome");
  r.close_returned_at.reset();
  EXPECT_FALSE(EvaluateCheck("every-message-one-outcome", r).has_value());
}

// Canary: an outcome for an id that was never produced.
TEST(EveryMessageOneOutcome, UnknownIdFails) {
  RunRecord r = CleanRecord();
  r.producer.errors.push_back(Err(60, 99, 0, sarama::Error::Of(sarama::ErrorKind::kShuttingDown)));
  ExpectViolation("every-message-one-outcome", r, "error id=99 t/0");
}

// --- no-producer-assertion

// Ordinary producer errors are not assertions.
TEST(NoProducerAssertion, OrdinaryErrorPasses) {
  RunRecord r = CleanRecord();
  r.producer.errors.push_back(
      Err(60, 7, 0, sarama::Error::Kafka(kafka::ErrorCode::REQUEST_TIMED_OUT)));
  EXPECT_FALSE(EvaluateCheck("no-producer-assertion", r).has_value());
}

// Canary: Sarama's "message out of sequence added to a batch" for id 5.
TEST(NoProducerAssertion, AssertionFails) {
  RunRecord r = CleanRecord();
  r.producer.errors.push_back(
      Err(60, 5, 0,
          sarama::Error::Of(sarama::ErrorKind::kProduceSetAssertion,
                            "assertion failed: message out of sequence added to a batch")));
  ExpectViolation("no-producer-assertion", r,
                  "t=0.060s error id=5 t/0: assertion failed: message out of sequence");
}

// --- no-broker-sequence-error

// NOT_LEADER_OR_FOLLOWER and NONE are fine.
TEST(NoBrokerSequenceError, OtherErrorsPass) {
  RunRecord r = CleanRecord();
  r.kafka.responses.push_back(Response(60, 1, kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER));
  EXPECT_FALSE(EvaluateCheck("no-broker-sequence-error", r).has_value());
}

// Canary: OUT_OF_ORDER_SEQUENCE_NUMBER, even in a dropped response.
TEST(NoBrokerSequenceError, OutOfOrderFails) {
  RunRecord r = CleanRecord();
  r.kafka.responses.push_back(Response(60, 1, kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER));
  r.kafka.responses.back().fate = kafka::ResponseFate::kMockDropped;
  ExpectViolation("no-broker-sequence-error", r,
                  "t=0.060s broker=1 Produce response corr=9 t/1 OUT_OF_ORDER_SEQUENCE_NUMBER "
                  "(dropped by a mock fault)");
}

// Canary: INVALID_PRODUCER_EPOCH.
TEST(NoBrokerSequenceError, InvalidEpochFails) {
  RunRecord r = CleanRecord();
  r.kafka.responses.push_back(Response(61, 0, kafka::ErrorCode::INVALID_PRODUCER_EPOCH));
  ExpectViolation("no-broker-sequence-error", r, "t/0 INVALID_PRODUCER_EPOCH");
}

// --- liveness

// The clean record settles long before its deadline.
TEST(Liveness, CleanPasses) { EXPECT_FALSE(EvaluateCheck("liveness", CleanRecord()).has_value()); }

// Canary: a deadlock quotes the scheduler's report of the blocked tasks.
TEST(Liveness, DeadlockFails) {
  RunRecord r = CleanRecord();
  r.run.outcome = sim::Outcome::kDeadlock;
  r.run.end_time = Ms(70);
  r.run.detail =
      "all goroutines are asleep - deadlock!\n  goroutine 3 'dispatcher': chan recv input\n  "
      "goroutine 7 'retryHandler': chan send retries";
  ExpectViolation("liveness", r, "t=0.070s goroutine 3 'dispatcher': chan recv input");
  const std::optional<Violation> v = EvaluateCheck("liveness", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->explanation, HasSubstr("deadlock at t=0.070s: all goroutines are asleep"));
  EXPECT_THAT(v->explanation, HasSubstr("'retryHandler'"));
  EXPECT_THAT(v->witnesses, SizeIs(2));
}

// Canary: the step limit hit while id 6 is unresolved.
TEST(Liveness, StepLimitWithUnresolvedFails) {
  RunRecord r = CleanRecord();
  r.producer.acks.erase(r.producer.acks.begin() + 4);
  r.run.outcome = sim::Outcome::kStepLimit;
  ExpectViolation("liveness", r, "id=6 (t, produced t=0.006s) unresolved");
  const std::optional<Violation> v = EvaluateCheck("liveness", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->explanation, HasSubstr("step-limit"));
}

// Canary: the producer never started (NewAsyncProducer kept failing) and
// the faults healed long ago: liveness fails, and says why.
TEST(Liveness, ProducerThatNeverStartsFails) {
  RunRecord r = CleanRecord();
  r.produced.clear();
  r.producer.acks.clear();
  r.kafka.final_logs.clear();
  r.producer_started = false;
  r.new_producer_failures = 130;
  r.new_producer_error = "kafka: client has run out of available brokers to talk to";
  r.close_called_at.reset();
  r.close_returned_at.reset();
  const std::optional<Violation> v = FindCheck("liveness")->Evaluate(r);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->witnesses.front(), HasSubstr("NewAsyncProducer never succeeded (130 attempt(s)"));
}

// Canary: Close never returned although the faults healed long ago.
TEST(Liveness, CloseNeverReturnedFails) {
  RunRecord r = CleanRecord();
  r.close_returned_at.reset();
  r.run.outcome = sim::Outcome::kTimeLimit;
  r.run.end_time = Ms(3600000);
  ExpectViolation("liveness", r, "Close called t=0.100s never returned, deadline t=120.100s");
}

// Canary: a message resolved only after the deadline (faults healed at 10s,
// grace 5s, Close called at 1s): it and the late Close are both reported.
TEST(Liveness, ResolvedAfterDeadlineFails) {
  RunRecord r = CleanRecord();
  r.faults_healed_at = Ms(10000);
  r.close_called_at = Ms(1000);
  r.liveness_grace = sim::Duration::Seconds(5);
  r.producer.acks[5].at = Ms(16000);
  r.close_returned_at = Ms(16000);
  r.run.end_time = Ms(16000);
  ExpectViolation("liveness", r, "Close returned t=16.000s, deadline t=15.000s");
  const std::optional<Violation> v = EvaluateCheck("liveness", r);
  ASSERT_TRUE(v.has_value());
  ASSERT_THAT(v->witnesses, SizeIs(2));
  EXPECT_THAT(v->witnesses[1], HasSubstr("id=5"));
  EXPECT_THAT(v->explanation, HasSubstr("1 of 6 produced message(s) unresolved (ids 5)"));
}

// The deadline counts from the last produce or Close call when that is
// later than the healing, so a long-running application is not penalised.
TEST(Liveness, DeadlineStartsAtLastProduce) {
  RunRecord r = CleanRecord();
  r.liveness_grace = sim::Duration::Seconds(1);
  r.produced.back().at = Ms(5000);
  r.producer.acks[4].at = Ms(5500);
  r.close_called_at = Ms(5600);
  r.close_returned_at = Ms(6000);
  r.run.end_time = Ms(6000);
  EXPECT_FALSE(EvaluateCheck("liveness", r).has_value());
}

// --- Properties.

// A randomly shaped clean history: messages spread over partitions, cut
// into batches, acknowledged in batch order, all committed.
RunRecord RandomCleanRecord(const std::vector<int32_t>& partition_of, int32_t batch_max,
                            bool idempotent) {
  RunRecord r = CleanRecord();
  r.idempotent = idempotent;
  r.produced.clear();
  r.producer.acks.clear();
  r.kafka.final_logs.clear();
  std::map<int32_t, std::vector<uint64_t>> ids_of;
  for (size_t i = 0; i < partition_of.size(); ++i) {
    const uint64_t id = 100 + i;
    r.produced.push_back(ProducedMessage{id, "t", "", Ms(static_cast<int64_t>(i))});
    ids_of[partition_of[i]].push_back(id);
  }
  int64_t at = 1000;
  for (const auto& [p, ids] : ids_of) {
    std::vector<kafka::LogEntry>& log = r.kafka.final_logs[Tp(p)];
    for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(batch_max)) {
      const size_t end = std::min(ids.size(), start + static_cast<size_t>(batch_max));
      std::vector<uint64_t> batch(ids.begin() + static_cast<std::ptrdiff_t>(start),
                                  ids.begin() + static_cast<std::ptrdiff_t>(end));
      log.push_back(Entry(static_cast<int64_t>(start), 0, static_cast<int32_t>(start), batch));
      for (size_t k = start; k < end; ++k) {
        r.producer.acks.push_back(
            Ack(++at, ids[k], p, static_cast<int64_t>(k), static_cast<int32_t>(k)));
      }
    }
  }
  r.close_called_at = Ms(at);
  r.close_returned_at = Ms(at + 1);
  r.run.end_time = Ms(at + 1);
  return r;
}

// No check flags a consistent history, whatever its shape.
RC_GTEST_PROP(ChecksProperty, ConsistentHistoriesPass, ()) {
  const auto partition_of = *rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(0, 4));
  const int32_t batch_max = *rc::gen::inRange(1, 6);
  const bool idempotent = *rc::gen::arbitrary<bool>();
  const std::vector<Violation> v =
      EvaluateAll(RandomCleanRecord(partition_of, batch_max, idempotent));
  RC_ASSERT(v.empty());
}

// Swapping two acks of one partition is always caught by acked-batches-in-order.
RC_GTEST_PROP(ChecksProperty, SwappedAcksAreCaught, ()) {
  const auto partition_of = *rc::gen::suchThat(
      rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(0, 2)),
      [](const std::vector<int32_t>& v) { return std::count(v.begin(), v.end(), 0) >= 2; });
  RunRecord r = RandomCleanRecord(partition_of, *rc::gen::inRange(1, 4), true);
  std::vector<size_t> on_zero;
  for (size_t i = 0; i < r.producer.acks.size(); ++i) {
    if (r.producer.acks[i].partition == 0) on_zero.push_back(i);
  }
  const size_t a = *rc::gen::inRange<size_t>(0, on_zero.size() - 1);
  std::swap(r.producer.acks[on_zero[a]], r.producer.acks[on_zero[a + 1]]);
  const Check* check = FindCheck("acked-batches-in-order");
  RC_ASSERT(check != nullptr);
  const std::optional<Violation> v = check->Evaluate(r);
  RC_ASSERT(v.has_value());
  RC_ASSERT(v->witnesses.front().find("t/0") != std::string::npos);
}

}  // namespace
}  // namespace checks

namespace checks {
namespace {

// --- Wire mode: the real client (RunRecord::client).

RunRecord CleanClientRecord() {
  RunRecord r = CleanRecord();
  r.client.emplace();
  r.client->name = "librdkafka 2.0.2";
  r.client->started = true;
  r.client->closed = true;
  r.client->exit_code = 0;
  r.client->flush_ok = true;
  r.client->job_messages = static_cast<int64_t>(r.produced.size());  // every one offered
  return r;
}

TEST(ClientChecks, ACleanClientPassesEveryCheck) {
  EXPECT_THAT(EvaluateAll(CleanClientRecord()), IsEmpty());
}

TEST(ClientChecks, EachWayOfFailingHasItsCheck) {
  RunRecord crashed = CleanClientRecord();
  crashed.client->closed = false;
  crashed.client->exit_code.reset();
  crashed.client->signal = 11;
  ExpectViolation("client-crashed", crashed, "signal 11");

  RunRecord status = CleanClientRecord();
  status.client->exit_code = 3;
  status.client->stderr_tail = "boom";
  ExpectViolation("client-crashed", status, "stderr: boom");

  RunRecord early = CleanClientRecord();
  early.client->closed = false;
  ExpectViolation("client-exited-early", early, "before its closed line");

  RunRecord hung = CleanClientRecord();
  hung.client->hung = true;
  hung.client->exit_code.reset();
  hung.client->bound = Ms(5000);
  ExpectViolation("client-hung", hung, "t=5.000s");
  EXPECT_FALSE(EvaluateCheck("client-crashed", hung).has_value());  // killed by prodsim

  RunRecord garbage = CleanClientRecord();
  garbage.client->garbage_lines = 7;
  garbage.client->garbage = {"t=0.1s expected '{' at byte 1: hello"};
  ExpectViolation("client-output-garbage", garbage, "hello");

  RunRecord malformed = CleanClientRecord();
  malformed.client->malformed_frames = {"t=0.1s broker-0 connection 1: negative frame size -16"};
  ExpectViolation("client-malformed-frame", malformed, "negative frame size");

  // A driver that closed without offering the job's messages to its client.
  RunRecord nothing = CleanClientRecord();
  nothing.client->job_messages = static_cast<int64_t>(nothing.produced.size()) + 2;
  ExpectViolation("client-lost-messages", nothing, "message 7: neither a produce line");
  nothing.client->unoffered = 2;  // the driver said it gave up on two
  EXPECT_FALSE(EvaluateCheck("client-lost-messages", nothing).has_value());
  nothing.client->unoffered = 0;
  nothing.client->flush_ok = false;  // the flush timed out: not judged
  EXPECT_FALSE(EvaluateCheck("client-lost-messages", nothing).has_value());
  nothing.client->flush_ok = true;
  nothing.client->job_messages.reset();  // close_at: not judged
  EXPECT_FALSE(EvaluateCheck("client-lost-messages", nothing).has_value());
}

TEST(ClientChecks, AFatalErrorIsTheClientsAssertion) {
  RunRecord r = CleanClientRecord();
  r.client->fatal_errors = {"t=6.1s OUT_OF_ORDER_SEQUENCE_NUMBER: ... rewound sequence number"};
  ExpectViolation("no-fatal-error", r, "rewound sequence number");
  // Not a wire run: the checks do not apply.
  EXPECT_FALSE(EvaluateCheck("no-fatal-error", CleanRecord()).has_value());
}

TEST(ClientChecks, BrokerSequenceErrorsCanBeAClientsNormalFlow) {
  RunRecord r = CleanClientRecord();
  r.kafka.responses.push_back(Response(50, 0, kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER));
  ASSERT_TRUE(EvaluateCheck("no-broker-sequence-error", r).has_value());
  r.sequence_error_is_violation = false;
  EXPECT_FALSE(EvaluateCheck("no-broker-sequence-error", r).has_value());
}

// The goal: a real client's OUT_OF_ORDER_SEQUENCE_NUMBER on a resend that
// regroups a written message (its answer lost) with a later one, as real
// Sarama v1.42.1 does after a connection reset, is named regrouped-retry
// from the broker history alone.
TEST(ClientSignatures, RegroupedResendOfAWrittenBatchIsRegroupedRetry) {
  RunRecord r = CleanClientRecord();
  r.client->name = "sarama 1.42.1";
  // Broker 1 writes id 7 as t/0 seq 3; the connection breaks first.
  r.kafka.appends.push_back(kafka::AppendEvent{Ms(40),
                                               kafka::BrokerId(1),
                                               true,
                                               Tp(0),
                                               kafka::Offset(3),
                                               kafka::ProducerId(1),
                                               kafka::Epoch(0),
                                               kafka::Sequence(3),
                                               kafka::Sequence(3),
                                               {7}});
  kafka::ResponseEvent lost = Response(41, 0, kafka::ErrorCode::NONE);
  lost.base_offset = kafka::Offset(3);
  lost.epoch = kafka::Epoch(0);
  lost.first_seq = kafka::Sequence(3);
  lost.fate = kafka::ResponseFate::kLost;
  // The resend: ids 7 and 8 as seq 3..4.
  kafka::ResponseEvent refused = Response(90, 0, kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
  refused.correlation_id = 12;
  refused.epoch = kafka::Epoch(0);
  refused.first_seq = kafka::Sequence(3);
  refused.record_ids = {7, 8};
  r.kafka.responses = {lost, refused};
  std::optional<Violation> v = EvaluateCheck("no-broker-sequence-error", r);
  ASSERT_TRUE(v.has_value());
  const Signature sig = Classify(r, *v);
  EXPECT_EQ(sig.mechanism, "regrouped-retry");
  EXPECT_EQ(sig.function, "sarama");
  EXPECT_THAT(sig.chain.back(), HasSubstr("OUT_OF_ORDER_SEQUENCE_NUMBER"));
  // Canaries: the written batch's answer arrived; the resend is the exact
  // batch (Kafka would have answered it as a duplicate, so another cause).
  r.kafka.responses[0].fate = kafka::ResponseFate::kSent;
  v = EvaluateCheck("no-broker-sequence-error", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
  r.kafka.responses[0].fate = kafka::ResponseFate::kLost;
  r.kafka.responses[1].record_ids = {7};
  v = EvaluateCheck("no-broker-sequence-error", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
}

// The goal: the Java client's callbacks out of partition order (a written
// batch answered REQUEST_TIMED_OUT, acknowledged on its resend, a duplicate,
// after the next batch) are named retry-acked-after-successor.
TEST(ClientSignatures, ADuplicateResendAckedAfterTheNextBatchIsRetryAckedAfterSuccessor) {
  RunRecord r = CleanClientRecord();
  r.client->name = "java 4.4.0";
  // t/0's first batch (ids 1, 3; seq 0..1) is written at 20 ms and answered
  // REQUEST_TIMED_OUT; id 5 (seq 2) is acknowledged at 35 ms; the resend of
  // ids 1 and 3 is answered as a duplicate at 42 ms and acknowledged at 44.
  r.kafka.responses[0].error = kafka::ErrorCode::REQUEST_TIMED_OUT;
  kafka::ResponseEvent dup = Response(42, 0, kafka::ErrorCode::NONE);
  dup.duplicate = true;
  dup.epoch = kafka::Epoch(0);
  dup.first_seq = kafka::Sequence(0);
  dup.record_ids = {1, 3};
  r.kafka.responses.push_back(dup);
  r.producer.acks = {Ack(31, 2, 1, 0, 0), Ack(31, 4, 1, 1, 1), Ack(31, 6, 1, 2, 2),
                     Ack(35, 5, 0, 2, 2), Ack(44, 1, 0, 0, 0), Ack(44, 3, 0, 1, 1)};
  std::optional<Violation> v = EvaluateCheck("acked-batches-in-order", r);
  ASSERT_TRUE(v.has_value());
  const Signature sig = Classify(r, *v);
  EXPECT_EQ(sig.mechanism, "retry-acked-after-successor");
  EXPECT_EQ(sig.function, "java");
  // Canary: the first answer was a success: another cause.
  r.kafka.responses[0].error = kafka::ErrorCode::NONE;
  v = EvaluateCheck("acked-batches-in-order", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
}

// The goal: a partition whose first write under an epoch starts past
// sequence 0 after a lower batch was refused (a leader without the
// producer's state takes any first sequence) is out-of-order-first-write.
TEST(ClientSignatures, AFirstWritePastARefusedBatchIsOutOfOrderFirstWrite) {
  RunRecord r = CleanClientRecord();
  r.client->name = "java 2.8.2";
  r.kafka.final_logs[Tp(1)] = {Entry(0, 0, 1, {4, 6})};
  r.kafka.appends.push_back(kafka::AppendEvent{Ms(25),
                                               kafka::BrokerId(2),
                                               true,
                                               Tp(1),
                                               kafka::Offset(0),
                                               kafka::ProducerId(1),
                                               kafka::Epoch(0),
                                               kafka::Sequence(1),
                                               kafka::Sequence(2),
                                               {4, 6}});
  kafka::ResponseEvent refused = Response(10, 1, kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER);
  refused.epoch = kafka::Epoch(0);
  refused.first_seq = kafka::Sequence(0);
  refused.record_ids = {2};
  r.kafka.responses.push_back(refused);
  std::erase_if(r.producer.acks, [](const sarama::AckEvent& a) { return a.id == 2; });
  std::optional<Violation> v = EvaluateCheck("log-sequences-contiguous", r);
  ASSERT_TRUE(v.has_value());
  const Signature sig = Classify(r, *v);
  EXPECT_EQ(sig.mechanism, "out-of-order-first-write");
  EXPECT_EQ(sig.function, "java");
  EXPECT_THAT(sig.chain.front(), HasSubstr("NOT_LEADER_OR_FOLLOWER"));
  // The client acknowledged the refused message (librdkafka's implicit
  // ack): its own mistake, named on acked-are-durable, not here.
  r.producer.acks.push_back(Ack(30, 2, 1, -1, 0));
  v = EvaluateCheck("log-sequences-contiguous", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
  r.producer.acks.pop_back();
  // Canary: nothing was refused before it.
  r.kafka.responses.pop_back();
  v = EvaluateCheck("log-sequences-contiguous", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
}

// The goal: a Produce request with a null record set (franz-go's failed
// batch), which Kafka 2.6 refuses by closing the connection, is named
// null-record-set; another malformed frame is not.
TEST(ClientSignatures, AProduceWithANullRecordSetIsNullRecordSet) {
  RunRecord r = CleanClientRecord();
  r.client->name = "franz-go 1.22.3";
  r.client->malformed_frames = {
      "t=1.587s broker-1 connection 7: Produce v8 request: null record set at byte 53"};
  std::optional<Violation> v = EvaluateCheck("client-malformed-frame", r);
  ASSERT_TRUE(v.has_value());
  const Signature sig = Classify(r, *v);
  EXPECT_EQ(sig.mechanism, "null-record-set");
  EXPECT_EQ(sig.function, "franz-go");
  // Canary: another malformed frame.
  r.client->malformed_frames = {"t=0.1s broker-0 connection 1: negative frame size -16"};
  v = EvaluateCheck("client-malformed-frame", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(Classify(r, *v).mechanism, std::string(kUnclassified));
}

// ---------------------------------------------------------------------------
// retry-pacing

namespace pacing {

sarama::ProducerStep Send(int64_t at_ms, uint64_t id, int retries) {
  sarama::ProducerStep s;
  s.at = Ms(at_ms);
  s.kind = sarama::StepKind::kSend;
  s.broker = 1;
  s.topic = "t";
  s.partition = 0;
  s.epoch = 0;
  s.first_seq = 0;
  s.ids = {id};
  s.retries = retries;
  return s;
}

RunRecord Paced(sim::Duration backoff, int32_t retry_max) {
  RunRecord r;
  r.idempotent = true;
  r.retry_backoff = backoff;
  r.retry_max = retry_max;
  return r;
}

}  // namespace pacing

TEST(RetryPacing, OnlyWhenTheScenarioOptsIn) {
  RunRecord r;
  r.producer.steps = {pacing::Send(0, 1, 0), pacing::Send(1, 1, 1)};
  EXPECT_FALSE(EvaluateCheck("retry-pacing", r).has_value());
}

TEST(RetryPacing, AttemptsAtLeastTheBackoffApartPass) {
  RunRecord r = pacing::Paced(sim::Duration::Millis(100), 3);
  r.producer.steps = {pacing::Send(0, 1, 0), pacing::Send(100, 1, 1), pacing::Send(350, 1, 2)};
  // The same attempt recorded twice (no retry between) is not a retry.
  r.producer.steps.push_back(pacing::Send(351, 1, 2));
  EXPECT_FALSE(EvaluateCheck("retry-pacing", r).has_value());
}

TEST(RetryPacing, CanaryRetrySoonerThanTheBackoff) {
  RunRecord r = pacing::Paced(sim::Duration::Millis(100), 3);
  r.producer.steps = {pacing::Send(0, 1, 0), pacing::Send(3, 1, 1)};
  ExpectViolation("retry-pacing", r, "id=1 t/0 attempt 2 to broker 1 3ms after attempt 1");
  const std::optional<Violation> v = EvaluateCheck("retry-pacing", r);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->subject.ids, ElementsAre(1u));
  EXPECT_EQ(v->subject.at, Ms(3));
}

TEST(RetryPacing, CanaryRetriesExhaustedTooSoon) {
  RunRecord r = pacing::Paced(sim::Duration::Millis(100), 2);
  r.producer.steps = {pacing::Send(0, 1, 0)};
  sarama::ErrorEvent e =
      Err(150, 1, 0, sarama::Error::Kafka(kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER));
  e.retries = 2;
  r.producer.errors.push_back(e);
  ExpectViolation("retry-pacing", r, "retries exhausted 150ms after its first attempt");
  // Two backoffs after the first attempt is soon enough.
  r.producer.errors[0].at = Ms(200);
  EXPECT_FALSE(EvaluateCheck("retry-pacing", r).has_value());
}

}  // namespace
}  // namespace checks
