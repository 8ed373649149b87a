#include "sim/kafka/producer_state.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "rapidcheck/state.h"
#include "sim/core/time.h"
#include "sim/kafka/producer_state_model.h"
#include "sim/kafka/types.h"

namespace kafka {
namespace {

using namespace kafka::state_model;

using AppendCheck = ProducerStateManager::AppendCheck;
using Kind = AppendCheck::Kind;

constexpr int32_t kMax = INT32_MAX;

// ---------------------------------------------------------------------------
// Sequence arithmetic, error codes and version names.

// LastSequence and IncrementSequence wrap past INT32_MAX to 0, never below.
TEST(SequenceTest, LastSequenceWrapsPastIntMax) {
  EXPECT_EQ(LastSequence(Sequence(0), 1), Sequence(0));
  EXPECT_EQ(LastSequence(Sequence(10), 5), Sequence(14));
  EXPECT_EQ(LastSequence(Sequence(kMax), 1), Sequence(kMax));
  EXPECT_EQ(LastSequence(Sequence(kMax), 2), Sequence(0));
  EXPECT_EQ(LastSequence(Sequence(kMax - 1), 4), Sequence(1));
  EXPECT_EQ(LastSequence(Sequence(kMax), kMax), Sequence(kMax - 2));
  EXPECT_EQ(IncrementSequence(Sequence(kMax), 1), Sequence(0));
  EXPECT_EQ(IncrementSequence(Sequence(5), 0), Sequence(5));
}

// InSequence accepts exactly last+1, and 0 after INT32_MAX.
TEST(SequenceTest, InSequenceIsSuccessorWithWrap) {
  EXPECT_TRUE(InSequence(Sequence(4), Sequence(5)));
  EXPECT_FALSE(InSequence(Sequence(4), Sequence(4)));
  EXPECT_FALSE(InSequence(Sequence(4), Sequence(6)));
  EXPECT_FALSE(InSequence(Sequence(4), Sequence(0)));
  EXPECT_TRUE(InSequence(Sequence(kMax), Sequence(0)));
  EXPECT_FALSE(InSequence(Sequence(kMax), Sequence(1)));
  EXPECT_FALSE(InSequence(Sequence(kMax - 1), Sequence(0)));
  // A fresh entry's NO_SEQUENCE (-1) is followed by 0, as in Kafka.
  EXPECT_TRUE(InSequence(Sequence::kNone, Sequence(0)));
}

// A negative sequence is a caller bug for the arithmetic helpers.
TEST(SequenceDeathTest, NegativeSequenceAsserts) {
  EXPECT_DEATH(LastSequence(Sequence(-1), 1), "0..INT32_MAX");
  EXPECT_DEATH(LastSequence(Sequence(0), 0), "at least one record");
}

// Error codes keep Kafka's numbers, names and retriable flags.
TEST(ErrorCodeTest, NumbersNamesAndRetriableMatchKafka) {
  struct Row {
    ErrorCode code;
    int number;
    std::string_view name;
    bool retriable;
  };
  const Row rows[] = {
      {ErrorCode::UNKNOWN_SERVER_ERROR, -1, "UNKNOWN_SERVER_ERROR", false},
      {ErrorCode::NONE, 0, "NONE", false},
      {ErrorCode::OFFSET_OUT_OF_RANGE, 1, "OFFSET_OUT_OF_RANGE", false},
      {ErrorCode::CORRUPT_MESSAGE, 2, "CORRUPT_MESSAGE", true},
      {ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, 3, "UNKNOWN_TOPIC_OR_PARTITION", true},
      {ErrorCode::LEADER_NOT_AVAILABLE, 5, "LEADER_NOT_AVAILABLE", true},
      {ErrorCode::NOT_LEADER_OR_FOLLOWER, 6, "NOT_LEADER_OR_FOLLOWER", true},
      {ErrorCode::REQUEST_TIMED_OUT, 7, "REQUEST_TIMED_OUT", true},
      {ErrorCode::BROKER_NOT_AVAILABLE, 8, "BROKER_NOT_AVAILABLE", false},
      {ErrorCode::REPLICA_NOT_AVAILABLE, 9, "REPLICA_NOT_AVAILABLE", true},
      {ErrorCode::MESSAGE_TOO_LARGE, 10, "MESSAGE_TOO_LARGE", false},
      {ErrorCode::NETWORK_EXCEPTION, 13, "NETWORK_EXCEPTION", true},
      {ErrorCode::NOT_ENOUGH_REPLICAS, 19, "NOT_ENOUGH_REPLICAS", true},
      {ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true},
      {ErrorCode::INVALID_REQUIRED_ACKS, 21, "INVALID_REQUIRED_ACKS", false},
      {ErrorCode::UNSUPPORTED_VERSION, 35, "UNSUPPORTED_VERSION", false},
      {ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false},
      {ErrorCode::DUPLICATE_SEQUENCE_NUMBER, 46, "DUPLICATE_SEQUENCE_NUMBER", false},
      {ErrorCode::INVALID_PRODUCER_EPOCH, 47, "INVALID_PRODUCER_EPOCH", false},
      {ErrorCode::KAFKA_STORAGE_ERROR, 56, "KAFKA_STORAGE_ERROR", true},
      {ErrorCode::UNKNOWN_PRODUCER_ID, 59, "UNKNOWN_PRODUCER_ID", false},
      {ErrorCode::LISTENER_NOT_FOUND, 72, "LISTENER_NOT_FOUND", true},
      {ErrorCode::INVALID_RECORD, 87, "INVALID_RECORD", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(static_cast<int>(row.code), row.number);
    EXPECT_EQ(ErrorCodeName(row.code), row.name);
    EXPECT_EQ(IsRetriable(row.code), row.retriable);
  }
}

// A code the model does not name is data, not a crash: it has a name that
// says so, is not retriable (Kafka maps it to UNKNOWN_SERVER_ERROR), and no
// name parses to it.
TEST(ErrorCodeTest, UnknownCodesAreCarriedAsData) {
  const ErrorCode odd = static_cast<ErrorCode>(999);
  EXPECT_FALSE(IsNamedErrorCode(odd));
  EXPECT_EQ(ErrorCodeName(odd), "UNKNOWN_CODE(999)");
  EXPECT_FALSE(IsRetriable(odd));
  EXPECT_EQ(ErrorCodeFromName("UNKNOWN_CODE(999)"), std::nullopt);
  EXPECT_TRUE(IsNamedErrorCode(ErrorCode::LISTENER_NOT_FOUND));
}

// Every documented spelling parses to its version; others are rejected.
TEST(KafkaVersionTest, ParseAndName) {
  const std::pair<std::string_view, KafkaVersion> ok[] = {
      {"0.11", KafkaVersion::k0_11}, {"2.0", KafkaVersion::k2_0}, {"2.1", KafkaVersion::k2_0},
      {"2.2", KafkaVersion::k2_0},   {"2.3", KafkaVersion::k2_0}, {"2.4", KafkaVersion::k2_0},
      {"2.5", KafkaVersion::k2_6},   {"2.6", KafkaVersion::k2_6},
  };
  for (const auto& [text, version] : ok) {
    SCOPED_TRACE(text);
    absl::StatusOr<KafkaVersion> parsed = ParseKafkaVersion(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, version);
  }
  for (KafkaVersion v : {KafkaVersion::k0_11, KafkaVersion::k2_0, KafkaVersion::k2_6}) {
    EXPECT_EQ(*ParseKafkaVersion(KafkaVersionName(v)), v);
  }
  for (std::string_view bad : {"", "2.7", "1.0", "0.11.0", "2", " 2.6"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<KafkaVersion> parsed = ParseKafkaVersion(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("use one of"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// The leader's rules, one table row each.

// A batch recorded before the probe. Offsets are handed out consecutively
// from 0 across all producers, so offsets and sequences differ.
struct Batch {
  int64_t pid;
  int16_t epoch;
  int32_t first_seq;
  int32_t count;
};

// Producer 1 appends six 2-record batches (sequences 0..11), producer 2 one
// 3-record batch after the first, so producer 1's batches sit at offsets
// 0, 5, 7, 9, 11 and 13. Five are cached: sequences 2..11.
// clang-format off
const std::vector<Batch> kSixBatches = {
    {1, 0, 0, 2}, {2, 0, 0, 3}, {1, 0, 2, 2}, {1, 0, 4, 2},
    {1, 0, 6, 2}, {1, 0, 8, 2}, {1, 0, 10, 2},
};
// clang-format on

struct RuleCase {
  std::string name;
  KafkaVersion version;
  std::vector<Batch> history;
  Batch probe;
  AppendCheck want;
};

std::vector<RuleCase> RuleCases() {
  using V = KafkaVersion;
  using E = ErrorCode;
  const E kOoo = E::OUT_OF_ORDER_SEQUENCE_NUMBER;
  std::vector<Batch> bumped = kSixBatches;
  bumped.push_back({1, 1, 0, 1});                             // Epoch 1 from 0, at offset 15.
  const std::vector<Batch> straddle = {{1, 0, kMax - 1, 3}};  // MAX-1..0
  // One row per line reads better than bin-packed fields.
  // clang-format off
  return {
      // Duplicates of each of the five cached batches: NONE + base offset.
      {"dup_newest", V::k2_6, kSixBatches, {1, 0, 10, 2}, WantDuplicate(13)},
      {"dup_2nd", V::k2_6, kSixBatches, {1, 0, 8, 2}, WantDuplicate(11)},
      {"dup_3rd", V::k2_6, kSixBatches, {1, 0, 6, 2}, WantDuplicate(9)},
      {"dup_4th", V::k2_6, kSixBatches, {1, 0, 4, 2}, WantDuplicate(7)},
      {"dup_5th_oldest_cached", V::k2_6, kSixBatches, {1, 0, 2, 2},
       WantDuplicate(5)},
      {"dup_6th_evicted", V::k2_6, kSixBatches, {1, 0, 0, 2},
       WantError(kOoo)},
      {"dup_other_producer", V::k2_6, kSixBatches, {2, 0, 0, 3},
       WantDuplicate(2)},
      {"next_in_sequence", V::k2_6, kSixBatches, {1, 0, 12, 1},
       WantAppend()},
      {"gap", V::k2_6, kSixBatches, {1, 0, 13, 1}, WantError(kOoo)},
      {"overlap_same_first", V::k2_6, kSixBatches, {1, 0, 10, 1},
       WantError(kOoo)},
      {"overlap_same_last", V::k2_6, kSixBatches, {1, 0, 11, 1},
       WantError(kOoo)},
      {"overlap_straddles_end", V::k2_6, kSixBatches, {1, 0, 11, 2},
       WantError(kOoo)},
      {"overlap_covers_two", V::k2_6, kSixBatches, {1, 0, 8, 4},
       WantError(kOoo)},
      // Epochs.
      {"lower_epoch", V::k2_6, bumped, {1, 0, 1, 1},
       WantError(E::INVALID_PRODUCER_EPOCH)},
      {"lower_epoch_resend_of_old_batch", V::k2_6, bumped, {1, 0, 10, 2},
       WantError(E::INVALID_PRODUCER_EPOCH)},
      {"higher_epoch_seq0", V::k2_6, kSixBatches, {1, 1, 0, 3}, WantAppend()},
      {"higher_epoch_next_seq", V::k2_6, kSixBatches, {1, 1, 12, 1},
       WantError(kOoo)},
      {"higher_epoch_resend", V::k2_6, kSixBatches, {1, 1, 10, 2},
       WantError(kOoo)},
      {"bump_cleared_cache", V::k2_6, bumped, {1, 1, 2, 2}, WantError(kOoo)},
      {"bump_dup_of_new_epoch", V::k2_6, bumped, {1, 1, 0, 1},
       WantDuplicate(15)},
      {"bump_next", V::k2_6, bumped, {1, 1, 1, 1}, WantAppend()},
      // Wrap-around at INT32_MAX.
      {"wrap_next_after_max", V::k2_6, {{1, 0, kMax - 1, 2}}, {1, 0, 0, 1},
       WantAppend()},
      {"wrap_max_plus_one_is_gap", V::k2_6, {{1, 0, kMax - 1, 2}},
       {1, 0, 1, 1}, WantError(kOoo)},
      {"wrap_straddling_next", V::k2_6, straddle, {1, 0, 1, 1}, WantAppend()},
      {"wrap_straddling_dup", V::k2_6, straddle, {1, 0, kMax - 1, 3},
       WantDuplicate(0)},
      {"wrap_straddling_overlap", V::k2_6, straddle, {1, 0, 0, 2},
       WantError(kOoo)},
      {"wrap_probe_straddles", V::k2_6, {{1, 0, kMax - 4, 3}},
       {1, 0, kMax - 1, 5}, WantAppend()},
      {"wrap_2_0", V::k2_0, straddle, {1, 0, kMax - 1, 3}, WantDuplicate(0)},
      // Unknown producers.
      {"unknown_2_6_any_seq", V::k2_6, {}, {9, 0, 42, 1}, WantAppend()},
      {"unknown_2_6_any_epoch", V::k2_6, {}, {9, 7, 42, 1}, WantAppend()},
      {"unknown_2_6_seq0", V::k2_6, {}, {9, 0, 0, 1}, WantAppend()},
      {"unknown_2_0_seq0", V::k2_0, kSixBatches, {9, 3, 0, 1}, WantAppend()},
      {"unknown_2_0_nonzero", V::k2_0, kSixBatches, {9, 0, 12, 1},
       WantError(E::UNKNOWN_PRODUCER_ID)},
      {"unknown_0_11_seq0", V::k0_11, {}, {9, 0, 0, 1}, WantAppend()},
      {"unknown_0_11_nonzero", V::k0_11, {}, {9, 0, 12, 1}, WantError(kOoo)},
      // 2.0-2.4 deduplicate like 2.6 for known producers.
      {"dup_2_0_oldest_cached", V::k2_0, kSixBatches, {1, 0, 2, 2},
       WantDuplicate(5)},
      {"dup_2_0_evicted", V::k2_0, kSixBatches, {1, 0, 0, 2}, WantError(kOoo)},
      {"lower_epoch_2_0", V::k2_0, bumped, {1, 0, 12, 1},
       WantError(E::INVALID_PRODUCER_EPOCH)},
      // 0.11 caches only the last batch, and answers its resend with NONE.
      {"dup_0_11_last", V::k0_11, kSixBatches, {1, 0, 10, 2},
       WantDuplicate(13)},
      {"dup_0_11_second_last", V::k0_11, kSixBatches, {1, 0, 8, 2},
       WantError(kOoo)},
      {"next_0_11", V::k0_11, kSixBatches, {1, 0, 12, 3}, WantAppend()},
      {"gap_0_11", V::k0_11, kSixBatches, {1, 0, 14, 1}, WantError(kOoo)},
      {"lower_epoch_0_11", V::k0_11, bumped, {1, 0, 1, 1},
       WantError(E::INVALID_PRODUCER_EPOCH)},
      {"higher_epoch_0_11", V::k0_11, kSixBatches, {1, 1, 12, 1},
       WantError(kOoo)},
      // Negative sequences are rejected before any state is consulted.
      {"negative_seq_2_6", V::k2_6, kSixBatches, {1, 0, -1, 1},
       WantError(E::INVALID_RECORD)},
      {"negative_seq_unknown_2_6", V::k2_6, {}, {9, 0, -5, 1},
       WantError(E::INVALID_RECORD)},
      {"negative_seq_2_0", V::k2_0, kSixBatches, {1, 0, -1, 1},
       WantError(E::CORRUPT_MESSAGE)},
      {"negative_seq_0_11", V::k0_11, {}, {9, 0, -1, 1},
       WantError(E::CORRUPT_MESSAGE)},
      // A batch without a producer id is never checked.
      {"no_producer_id", V::k2_6, kSixBatches, {-1, -1, -1, 1}, WantAppend()},
  };
  // clang-format on
}

// Failure messages name the row rather than dumping its bytes.
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

class ProducerStateRuleTest : public testing::TestWithParam<RuleCase> {};

// Each rule of the leader's check gives Kafka's answer for its version.
TEST_P(ProducerStateRuleTest, CheckGivesKafkasAnswer) {
  const RuleCase& c = GetParam();
  ProducerStateManager state(c.version);
  int64_t offset = 0;
  for (const Batch& b : c.history) {
    const int64_t last_offset = offset + b.count - 1;
    state.Update(ProducerId(b.pid), Epoch(b.epoch), Sequence(b.first_seq),
                 LastSequence(Sequence(b.first_seq), b.count), Offset(offset), Offset(last_offset),
                 sim::Time::FromNanos(offset));
    offset = last_offset + 1;
  }
  const ProducerStateManager before = state;
  const Batch& p = c.probe;
  EXPECT_EQ(state.Check(ProducerId(p.pid), Epoch(p.epoch), Sequence(p.first_seq), p.count), c.want);
  // Check is pure: the state is unchanged whatever the verdict.
  EXPECT_EQ(state.producers(), before.producers());
}

INSTANTIATE_TEST_SUITE_P(Rules, ProducerStateRuleTest, testing::ValuesIn(RuleCases()),
                         [](const testing::TestParamInfo<RuleCase>& row) {
                           return row.param.name;
                         });

// ---------------------------------------------------------------------------
// Update, expiry and the retained window.

void Record(ProducerStateManager& state, int64_t pid, int16_t epoch, int32_t first_seq,
            int32_t count, int64_t first_offset, int64_t time_ms) {
  state.Update(ProducerId(pid), Epoch(epoch), Sequence(first_seq),
               LastSequence(Sequence(first_seq), count), Offset(first_offset),
               Offset(first_offset + count - 1), sim::Time() + sim::Duration::Millis(time_ms));
}

// The cache keeps the newest five batches (one in 0.11), oldest first.
TEST(ProducerStateUpdateTest, KeepsTheNewestBatches) {
  for (KafkaVersion v : {KafkaVersion::k0_11, KafkaVersion::k2_6}) {
    SCOPED_TRACE(KafkaVersionName(v));
    ProducerStateManager state(v);
    for (int32_t i = 0; i < 7; ++i) Record(state, 1, 0, i, 1, 10 + i, i);
    const ProducerStateEntry* entry = state.Find(ProducerId(1));
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->epoch, Epoch(0));
    ASSERT_EQ(entry->batches.size(), NumBatchesToRetain(v));
    EXPECT_EQ(entry->batches.back().first_seq, Sequence(6));
    EXPECT_EQ(entry->batches.back().first_offset, Offset(16));
    const int32_t oldest = 7 - static_cast<int32_t>(NumBatchesToRetain(v));
    EXPECT_EQ(entry->batches.front().first_seq, Sequence(oldest));
  }
}

// Any change of epoch, even a lower one arriving by replication, empties
// the cache before the new batch is stored.
TEST(ProducerStateUpdateTest, EpochChangeClearsTheCache) {
  ProducerStateManager state(KafkaVersion::k2_6);
  Record(state, 1, 3, 0, 2, 0, 0);
  Record(state, 1, 3, 2, 2, 2, 0);
  Record(state, 1, 4, 0, 1, 4, 0);
  ASSERT_EQ(state.Find(ProducerId(1))->batches.size(), 1u);
  EXPECT_EQ(state.Find(ProducerId(1))->epoch, Epoch(4));
  Record(state, 1, 2, 7, 1, 5, 0);  // Lower epoch, replicated.
  ASSERT_EQ(state.Find(ProducerId(1))->batches.size(), 1u);
  EXPECT_EQ(state.Find(ProducerId(1))->epoch, Epoch(2));
  EXPECT_EQ(state.Find(ProducerId(1))->batches.front().first_seq, Sequence(7));
}

// A producer expires once its last batch is max_age old, not before, and
// is then unknown to the leader.
TEST(ProducerStateUpdateTest, ExpiryIsMeasuredFromTheLastBatch) {
  ProducerStateManager state(KafkaVersion::k2_0);
  Record(state, 1, 0, 0, 1, 0, /*time_ms=*/100);
  Record(state, 2, 0, 0, 1, 1, /*time_ms=*/50);
  Record(state, 1, 0, 1, 1, 2, /*time_ms=*/300);
  const sim::Duration max_age = sim::Duration::Millis(1000);
  state.ExpireProducers(sim::Time() + sim::Duration::Millis(1049), max_age);
  EXPECT_NE(state.Find(ProducerId(2)), nullptr);
  state.ExpireProducers(sim::Time() + sim::Duration::Millis(1050), max_age);
  EXPECT_EQ(state.Find(ProducerId(2)), nullptr);
  EXPECT_NE(state.Find(ProducerId(1)), nullptr);
  state.ExpireProducers(sim::Time() + sim::Duration::Millis(1300), max_age);
  EXPECT_EQ(state.Find(ProducerId(1)), nullptr);
  EXPECT_EQ(state.Check(ProducerId(1), Epoch(0), Sequence(2), 1),
            WantError(ErrorCode::UNKNOWN_PRODUCER_ID));
}

// Clear forgets every producer.
TEST(ProducerStateUpdateTest, ClearForgetsEverything) {
  ProducerStateManager state(KafkaVersion::k2_6);
  Record(state, 1, 0, 0, 1, 0, 0);
  Record(state, 2, 0, 0, 1, 1, 0);
  state.Clear();
  EXPECT_TRUE(state.producers().empty());
  EXPECT_EQ(state.Find(ProducerId(1)), nullptr);
}

// Update's preconditions are asserted; each canary breaks one on purpose.
TEST(ProducerStateDeathTest, UpdateAssertsItsPreconditions) {
  ProducerStateManager state(KafkaVersion::k2_6);
  Record(state, 1, 0, 0, 2, 10, 0);
  EXPECT_DEATH(Record(state, -1, 0, 0, 1, 20, 0), "needs a producer id");
  EXPECT_DEATH(Record(state, 1, 0, 2, 1, 11, 0), "log order");
  EXPECT_DEATH(state.Update(ProducerId(1), Epoch(0), Sequence(2), Sequence(5), Offset(20),
                            Offset(21), sim::Time()),
               "disagree");
  EXPECT_DEATH(state.Check(ProducerId(1), Epoch(0), Sequence(2), 0), "at least one record");
  EXPECT_DEATH(state.Check(ProducerId(1), Epoch::kNone, Sequence(2), 1), "always has an epoch");
}

// ---------------------------------------------------------------------------
// Stateful property: the manager against an independent model.
//
// The model keeps the whole partition log (every written batch, in offset
// order) and, per producer, the log index before which its history was
// forgotten by expiry. Everything the broker should know is derived from
// that: the producer is known iff it has a batch after that index; its epoch
// is the epoch of its last batch; its cache is the newest five (one in 0.11)
// of the trailing run of batches under that epoch. Answers follow the rules
// of Kafka 2.6.3's ProducerStateManager (ProducerAppendInfo.checkSequence
// and its duplicate cache), computed with modular
// arithmetic on int64 rather than the library's sequence helpers.

// The model's view of one producer, in the library's terms, for comparison.
std::optional<ProducerStateEntry> ModelEntry(const Model& m, int64_t pid) {
  const std::vector<LogBatch> cache = m.Cache(pid);
  if (cache.empty()) return std::nullopt;
  ProducerStateEntry entry;
  entry.epoch = Epoch(cache.back().epoch);
  for (const LogBatch& b : cache) {
    entry.batches.push_back(BatchMetadata{Sequence(b.first_seq), Sequence(b.last_seq),
                                          Offset(b.first_offset), Offset(b.last_offset),
                                          sim::Time() + sim::Duration::Millis(b.time_ms)});
  }
  return entry;
}

constexpr int64_t kPids[] = {1, 2, 3};

void AssertSameState(const Model& m, const ProducerStateManager& sut) {
  size_t known = 0;
  for (int64_t pid : kPids) {
    const std::optional<ProducerStateEntry> want = ModelEntry(m, pid);
    const ProducerStateEntry* got = sut.Find(ProducerId(pid));
    RC_ASSERT((got != nullptr) == want.has_value());
    if (got == nullptr) continue;
    ++known;
    RC_ASSERT(got->epoch == want->epoch);
    RC_ASSERT(got->batches == want->batches);
  }
  RC_ASSERT(sut.producers().size() == known);
}

using Command = rc::state::Command<Model, ProducerStateManager>;

// Sequences worth trying for `pid`: the expected next one, the range of one
// of its last seven batches (a resend of a cached or an evicted batch;
// exact, or one longer for a partial overlap), 0, small values, the top of
// the range, and rarely a negative one.
void PickSequence(const Model& m, int64_t pid, int32_t* first, int32_t* count) {
  std::vector<LogBatch> recent = m.History(pid);
  if (recent.size() > 7) recent.erase(recent.begin(), recent.end() - 7);
  *count = *rc::gen::inRange<int32_t>(1, 5);
  const int choice = *rc::gen::inRange(0, 10);
  if (!recent.empty() && choice < 3) {
    *first = static_cast<int32_t>((int64_t{recent.back().last_seq} + 1) % kSeqSpace);
  } else if (!recent.empty() && choice < 6) {
    const LogBatch b = *rc::gen::elementOf(recent);
    *first = b.first_seq;
    *count = static_cast<int32_t>((int64_t{b.last_seq} - b.first_seq + kSeqSpace) % kSeqSpace + 1);
    if (*rc::gen::inRange(0, 4) == 0) *count += 1;  // Partial overlap.
  } else if (choice < 7) {
    *first = 0;
  } else if (choice < 8) {
    *first = kMax - *rc::gen::inRange<int32_t>(0, 4);
  } else if (choice < 9) {
    *first = *rc::gen::inRange<int32_t>(0, 30);
  } else {
    *first = *rc::gen::element<int32_t>(-1, 5);  // -1 rarely, else small.
  }
}

int16_t PickEpoch(const Model& m, int64_t pid) {
  const std::vector<LogBatch> cache = m.Cache(pid);
  const int current = cache.empty() ? 0 : cache.back().epoch;
  const int delta = *rc::gen::element(-1, 0, 0, 0, 0, 0, 1, 2);
  return static_cast<int16_t>(std::max(0, current + delta));
}

// A client's batch to the leader: Check, and on kAppend write and Update.
struct Produce : Command {
  int64_t pid;
  int16_t epoch = 0;
  int32_t first = 0;
  int32_t count = 1;
  int64_t dt_ms;

  explicit Produce(const Model& m)
      : pid(*rc::gen::weightedElement<int64_t>({{1, -1}, {3, 1}, {3, 2}, {3, 3}})),
        dt_ms(100 * *rc::gen::inRange<int64_t>(0, 3)) {
    if (pid < 0) return;
    epoch = PickEpoch(m, pid);
    PickSequence(m, pid, &first, &count);
  }
  // A given batch, for the canaries.
  Produce(int64_t pid_in, int16_t epoch_in, int32_t first_in, int32_t count_in)
      : pid(pid_in), epoch(epoch_in), first(first_in), count(count_in), dt_ms(0) {}

  void apply(Model& m) const override {
    m.now_ms += dt_ms;
    const AppendCheck want = ModelAnswer(m, pid, epoch, first, count);
    if (want.kind == Kind::kAppend) AppendToLog(m, pid, epoch, first, count);
  }

  void run(const Model& m, ProducerStateManager& sut) const override {
    const Model next = nextState(m);
    const AppendCheck got =
        sut.Check(pid < 0 ? ProducerId::kNone : ProducerId(pid),
                  pid < 0 ? Epoch::kNone : Epoch(epoch), Sequence(first), count);
    // The answer depends on the log before this batch, not on the clock.
    RC_ASSERT(got == ModelAnswer(m, pid, epoch, first, count));
    if (got.kind == Kind::kAppend && pid >= 0) {
      const LogBatch& b = next.log.back();
      sut.Update(ProducerId(pid), Epoch(epoch), Sequence(first),
                 LastSequence(Sequence(first), count), Offset(b.first_offset),
                 Offset(b.last_offset), sim::Time() + sim::Duration::Millis(b.time_ms));
    }
    AssertSameState(next, sut);
  }

  void show(std::ostream& os) const override {
    os << "Produce(pid " << pid << ", epoch " << epoch << ", seq " << first << " x" << count
       << ", +" << dt_ms << "ms)";
  }
};

// A follower replicating a batch: Update without any validation.
struct Replicate : Command {
  int64_t pid;
  int16_t epoch;
  int32_t count;
  int32_t first = 0;

  // Mostly what a leader would have accepted, sometimes not: a follower
  // must record whatever the leader's log holds.
  explicit Replicate(const Model& m)
      : pid(*rc::gen::element<int64_t>(1, 2, 3)),
        epoch(PickEpoch(m, pid)),
        count(*rc::gen::inRange<int32_t>(1, 5)) {
    const std::vector<LogBatch> history = m.History(pid);
    const int32_t next =
        history.empty() ? 0
                        : static_cast<int32_t>((int64_t{history.back().last_seq} + 1) % kSeqSpace);
    first = *rc::gen::elementOf(std::vector<int32_t>{next, next, next, 0, 7, kMax - 2, kMax});
  }

  void apply(Model& m) const override { AppendToLog(m, pid, epoch, first, count); }

  void run(const Model& m, ProducerStateManager& sut) const override {
    const Model next = nextState(m);
    const LogBatch& b = next.log.back();
    sut.Update(ProducerId(pid), Epoch(epoch), Sequence(first), Sequence(b.last_seq),
               Offset(b.first_offset), Offset(b.last_offset),
               sim::Time() + sim::Duration::Millis(b.time_ms));
    AssertSameState(next, sut);
  }

  void show(std::ostream& os) const override {
    os << "Replicate(pid " << pid << ", epoch " << epoch << ", seq " << first << " x" << count
       << ")";
  }
};

// Time passes and the broker expires idle producers. Time moves in steps of
// 100 ms so that a producer's age often equals kMaxAgeMs exactly, the
// boundary where Kafka already expires it.
struct Expire : Command {
  int64_t dt_ms;

  Expire() : dt_ms(100 * *rc::gen::inRange<int64_t>(0, 16)) {}
  explicit Expire(int64_t dt_ms_in) : dt_ms(dt_ms_in) {}

  void apply(Model& m) const override {
    m.now_ms += dt_ms;
    for (int64_t pid : kPids) {
      const std::vector<LogBatch> history = m.History(pid);
      if (!history.empty() && m.now_ms - history.back().time_ms >= kMaxAgeMs) {
        m.forgotten_before[pid] = m.log.size();
      }
    }
  }

  void run(const Model& m, ProducerStateManager& sut) const override {
    const Model next = nextState(m);
    sut.ExpireProducers(sim::Time() + sim::Duration::Millis(next.now_ms),
                        sim::Duration::Millis(kMaxAgeMs));
    AssertSameState(next, sut);
  }

  void show(std::ostream& os) const override { os << "Expire(+" << dt_ms << "ms)"; }
};

// A restart: the state is rebuilt by replaying the whole log, so producers
// forgotten by expiry come back.
struct Rebuild : Command {
  void apply(Model& m) const override { m.forgotten_before.clear(); }

  void run(const Model& m, ProducerStateManager& sut) const override {
    sut.Clear();
    for (const LogBatch& b : m.log) {
      if (b.pid < 0) continue;
      sut.Update(ProducerId(b.pid), Epoch(b.epoch), Sequence(b.first_seq), Sequence(b.last_seq),
                 Offset(b.first_offset), Offset(b.last_offset),
                 sim::Time() + sim::Duration::Millis(b.time_ms));
    }
    AssertSameState(nextState(m), sut);
  }

  void show(std::ostream& os) const override { os << "Rebuild"; }
};

void CheckAgainstModel(KafkaVersion version) {
  Model model;
  model.version = version;
  ProducerStateManager sut(version);
  // Produce is listed four times to make it the most frequent command. The
  // size is scaled up because RapidCheck's default sequences (a dozen
  // commands on average) rarely fill a producer's cache past five batches.
  const auto commands = *rc::gen::scale(
      4.0, rc::state::gen::commands(
               model, rc::state::gen::execOneOfWithArgs<Produce, Produce, Produce, Produce,
                                                        Replicate, Expire, Rebuild>()));
  rc::state::runAll(commands, model, sut);
}

// Any sequence of client produces, replication, expiry and restarts leaves
// the manager agreeing with the model, answer by answer and entry by entry.
RC_GTEST_PROP(ProducerStateModelTest, MatchesModel, ()) {
  const KafkaVersion version =
      *rc::gen::element(KafkaVersion::k0_11, KafkaVersion::k2_0, KafkaVersion::k2_6);
  RC_TAG(KafkaVersionName(version));
  CheckAgainstModel(version);
}

// Canaries: the property's assertions bite when the implementation and the
// model disagree, both on an answer and on the state left behind. (That the
// generators reach such disagreements was checked by hand with mutants of
// producer_state.cc: each broken rule was found in 10 of 10 runs.)
TEST(ProducerStateModelTest, CanaryWrongAnswerIsCaught) {
  Model model;
  model.version = KafkaVersion::k2_6;
  // A 2.0 broker answers UNKNOWN_PRODUCER_ID where the 2.6 model appends.
  ProducerStateManager sut(KafkaVersion::k2_0);
  EXPECT_ANY_THROW(Produce(1, 0, 5, 1).run(model, sut));
  // Control: the same command passes when the versions agree, so the throw
  // above comes from the planted difference.
  ProducerStateManager agreeing(KafkaVersion::k2_6);
  EXPECT_NO_THROW(Produce(1, 0, 5, 1).run(model, agreeing));
}

TEST(ProducerStateModelTest, CanaryWrongStateIsCaught) {
  Model model;
  model.version = KafkaVersion::k2_6;
  ProducerStateManager sut(KafkaVersion::k2_6);
  // A batch the model never saw: the next command finds the extra producer.
  sut.Update(ProducerId(2), Epoch(0), Sequence(0), Sequence(0), Offset(0), Offset(0), sim::Time());
  EXPECT_ANY_THROW(Expire(0).run(model, sut));
  // Control, as above.
  ProducerStateManager agreeing(KafkaVersion::k2_6);
  EXPECT_NO_THROW(Expire(0).run(model, agreeing));
}

}  // namespace
}  // namespace kafka
