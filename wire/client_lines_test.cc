// What each driver's reports mean for the checks (wire/client_lines.h):
// one case per error class per driver, fed as the driver prints it, read
// into a RunRecord, and judged by the checks and the verdict as a trial is.
#include "wire/client_lines.h"

#include <string>
#include <vector>

#include "checks/check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/runner.h"

namespace wire {
namespace {

using ::testing::HasSubstr;

sim::Time Ms(int64_t ms) { return sim::Time::FromNanos(ms * 1000000); }

struct Fed {
  checks::RunRecord record;
  scenarios::WorkloadSpec workload;
};

// The record of a trial whose driver printed `lines` (one per millisecond).
Fed Feed(const std::vector<std::string>& lines) {
  Fed f;
  f.workload.messages = 3;
  f.record.idempotent = true;
  f.record.client.emplace();
  ClientLines reader(f.record, f.workload, {"t"});
  int64_t ms = 0;
  for (const std::string& l : lines) reader.OnLine(Ms(++ms), l);
  return f;
}

std::string Start(const char* client) {
  return std::string(R"({"event":"start","t_us":1,"client":")") + client +
         R"(","version":"1"})";
}

std::string ErrorLine(const char* name, const char* status, bool fatal = false) {
  return std::string(R"({"event":"error","id":1,"partition":0,"code":-1,"name":")") + name +
         R"(","text":"x","status":")" + status + R"(","fatal":)" + (fatal ? "true" : "false") +
         R"(,"t_us":9})";
}

const char* kProduce = R"({"event":"produce","id":1,"topic":"t","key":null,"t_us":2})";

// The table itself, per driver.
TEST(ErrorClassOf, EachDriversClasses) {
  EXPECT_EQ(ErrorClassOf("sarama", "ErrProduceSetAssertion", "unknown", false),
            ErrorClass::kAssertion);
  EXPECT_EQ(ErrorClassOf("sarama", "ErrOutOfBrokers", "unknown", false), ErrorClass::kFailed);
  EXPECT_EQ(ErrorClassOf("sarama", "ErrOutOfOrderSequenceNumber", "unknown", false),
            ErrorClass::kFailed);
  EXPECT_EQ(ErrorClassOf("librdkafka", "_MSG_TIMED_OUT", "not_persisted", false),
            ErrorClass::kNotPersisted);
  EXPECT_EQ(ErrorClassOf("librdkafka", "_MSG_TIMED_OUT", "possibly_persisted", false),
            ErrorClass::kFailed);
  EXPECT_EQ(ErrorClassOf("librdkafka", "OUT_OF_ORDER_SEQUENCE_NUMBER", "not_persisted", true),
            ErrorClass::kAfterFatal);
  // Only Sarama's driver names its assertion so.
  EXPECT_EQ(ErrorClassOf("librdkafka", "ErrProduceSetAssertion", "possibly_persisted", false),
            ErrorClass::kFailed);
  EXPECT_EQ(ErrorClassOf("kafkajs", "KafkaJSNumberOfRetriesExceeded", "unknown", false),
            ErrorClass::kFailed);
  EXPECT_EQ(ErrorClassOf("kafkajs", "KafkaJSProtocolError", "unknown", false), ErrorClass::kFailed);
}

// Canary for the bug this table fixed: Sarama's assertion over the wire is
// the producer-assertion verdict, as in the model.
TEST(ClientLines, SaramaAssertionIsTheProducerAssertion) {
  Fed f = Feed({Start("sarama"), kProduce, ErrorLine("ErrProduceSetAssertion", "unknown")});
  ASSERT_EQ(f.record.producer.errors.size(), 1u);
  EXPECT_TRUE(f.record.producer.errors[0].err.Is(sarama::ErrorKind::kProduceSetAssertion));
  scenarios::RunOutput out;
  out.record = std::move(f.record);
  out.violations = checks::EvaluateAll(out.record);
  EXPECT_EQ(scenarios::Decide(out, &out.failing_check), scenarios::Verdict::kProducerAssertion);
  EXPECT_EQ(out.failing_check, "no-producer-assertion");
}

// A plain failure of each driver is only a failure: no check fires on it.
TEST(ClientLines, PlainFailuresPromiseNothing) {
  for (const auto& [client, name, status] :
       std::vector<std::tuple<const char*, const char*, const char*>>{
           {"sarama", "ErrOutOfBrokers", "unknown"},
           {"librdkafka", "_MSG_TIMED_OUT", "possibly_persisted"},
           {"kafkajs", "KafkaJSNumberOfRetriesExceeded", "unknown"}}) {
    SCOPED_TRACE(client);
    Fed f = Feed({Start(client), kProduce, ErrorLine(name, status)});
    ASSERT_EQ(f.record.producer.errors.size(), 1u);
    EXPECT_TRUE(f.record.producer.errors[0].err.Is(sarama::ErrorKind::kClient));
    EXPECT_FALSE(f.record.producer.errors[0].not_persisted);
    // Written anyway: the client did not say otherwise.
    f.record.kafka.final_logs[kafka::TopicPartition{"t", kafka::PartitionId(0)}] = {
        kafka::LogEntry{kafka::Offset(0), kafka::ProducerId(1), kafka::Epoch(0),
                        kafka::Sequence(0), {1}}};
    EXPECT_FALSE(checks::FindCheck("not-persisted-absent")->Evaluate(f.record).has_value());
  }
}

// librdkafka's not_persisted is held to its word.
TEST(ClientLines, LibrdkafkaNotPersistedIsAPromise) {
  Fed f = Feed({Start("librdkafka"), kProduce, ErrorLine("_MSG_TIMED_OUT", "not_persisted")});
  ASSERT_EQ(f.record.producer.errors.size(), 1u);
  EXPECT_TRUE(f.record.producer.errors[0].not_persisted);
  EXPECT_FALSE(checks::FindCheck("not-persisted-absent")->Evaluate(f.record).has_value());
  f.record.kafka.final_logs[kafka::TopicPartition{"t", kafka::PartitionId(0)}] = {
      kafka::LogEntry{kafka::Offset(4), kafka::ProducerId(1), kafka::Epoch(0), kafka::Sequence(0),
                      {1}}};
  const std::optional<checks::Violation> v =
      checks::FindCheck("not-persisted-absent")->Evaluate(f.record);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->witnesses[0], HasSubstr("yet id=1 is at t/0 offset=4"));
}

// An error reported after the client's fatal error is of the fatal kind.
TEST(ClientLines, AfterFatal) {
  Fed f = Feed({Start("librdkafka"), kProduce,
                R"({"event":"fatal","code":45,"name":"OUT_OF_ORDER_SEQUENCE_NUMBER","text":"t","t_us":5})",
                ErrorLine("OUT_OF_ORDER_SEQUENCE_NUMBER", "not_persisted", /*fatal=*/true)});
  ASSERT_EQ(f.record.producer.errors.size(), 1u);
  EXPECT_TRUE(f.record.producer.errors[0].err.Is(sarama::ErrorKind::kClientFatal));
  EXPECT_EQ(f.record.client->fatal_errors.size(), 1u);
}

// An ack without an offset is "written, offset unknown"; one with an
// offset is taken as it is.
TEST(ClientLines, AckWithoutOffset) {
  Fed f = Feed({Start("librdkafka"), kProduce,
                R"({"event":"ack","id":1,"partition":0,"offset":-1001,"t_us":3})",
                R"({"event":"produce","id":2,"topic":"t","key":null,"t_us":4})",
                R"({"event":"ack","id":2,"partition":0,"offset":7,"t_us":5})"});
  ASSERT_EQ(f.record.producer.acks.size(), 2u);
  EXPECT_FALSE(f.record.producer.acks[0].offset_known);
  EXPECT_TRUE(f.record.producer.acks[1].offset_known);
  EXPECT_EQ(f.record.producer.acks[1].offset, 7);
}

// An error the driver cannot name a message for (id 0) is an outcome for a
// message the application never produced, not garbage.
TEST(ClientLines, AnErrorForNoMessageOfTheJob) {
  Fed f = Feed({Start("sarama"), kProduce,
                R"({"event":"error","id":0,"partition":1,"code":-1,"name":"ErrShuttingDown","text":"x","status":"unknown","fatal":false,"t_us":9})"});
  EXPECT_EQ(f.record.client->garbage_lines, 0);
  ASSERT_EQ(f.record.producer.errors.size(), 1u);
  EXPECT_EQ(f.record.producer.errors[0].id, 0u);
  f.record.close_returned_at = Ms(10);
  const std::optional<checks::Violation> v =
      checks::FindCheck("every-message-one-outcome")->Evaluate(f.record);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->explanation, HasSubstr("outcome(s) for ids never produced"));
}

// Every line is kept with its time, garbage too, for a person to read.
TEST(ClientLines, KeepsEveryLine) {
  Fed f = Feed({Start("kafkajs"), "not json", kProduce});
  EXPECT_EQ(f.record.client->event_lines, 3);
  ASSERT_EQ(f.record.client->events.size(), 3u);
  EXPECT_EQ(f.record.client->events[1].second, "not json");
  EXPECT_EQ(f.record.client->garbage_lines, 1);
  EXPECT_THAT(EventsText(*f.record.client), HasSubstr("t=0.002000000s not json\n"));
}

}  // namespace
}  // namespace wire
