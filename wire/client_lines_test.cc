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
  return std::string(R"({"event":"start","t_us":1,"client":")") + client + R"(","version":"1"})";
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
    f.record.kafka.final_logs[kafka::TopicPartition{"t", kafka::PartitionId(0)}] = {kafka::LogEntry{
        kafka::Offset(0), kafka::ProducerId(1), kafka::Epoch(0), kafka::Sequence(0), {1}}};
    EXPECT_FALSE(checks::FindCheck("not-persisted-absent")->Evaluate(f.record).has_value());
  }
}

// librdkafka's not_persisted is held to its word.
TEST(ClientLines, LibrdkafkaNotPersistedIsAPromise) {
  Fed f = Feed({Start("librdkafka"), kProduce, ErrorLine("_MSG_TIMED_OUT", "not_persisted")});
  ASSERT_EQ(f.record.producer.errors.size(), 1u);
  EXPECT_TRUE(f.record.producer.errors[0].not_persisted);
  EXPECT_FALSE(checks::FindCheck("not-persisted-absent")->Evaluate(f.record).has_value());
  f.record.kafka.final_logs[kafka::TopicPartition{"t", kafka::PartitionId(0)}] = {kafka::LogEntry{
      kafka::Offset(4), kafka::ProducerId(1), kafka::Epoch(0), kafka::Sequence(0), {1}}};
  const std::optional<checks::Violation> v =
      checks::FindCheck("not-persisted-absent")->Evaluate(f.record);
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->witnesses[0], HasSubstr("yet id=1 is at t/0 offset=4"));
}

// An error reported after the client's fatal error is of the fatal kind.
TEST(ClientLines, AfterFatal) {
  Fed f = Feed(
      {Start("librdkafka"), kProduce,
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
  Fed f = Feed(
      {Start("sarama"), kProduce,
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

// A closed Sarama run and its goroutine report, each line as the driver
// prints it (clients/sarama/goroutines.go).
std::vector<std::string> ClosedSaramaRun(const std::vector<std::string>& report) {
  std::vector<std::string> lines = {Start("sarama"),
                                    R"({"event":"closing","outstanding":0,"t_us":4})",
                                    R"({"event":"closed","outstanding":0,"flush":"ok","t_us":5})"};
  lines.insert(lines.end(), report.begin(), report.end());
  return lines;
}

const char* kLeakedReceiver =
    R"({"event":"goroutine","function":"(*Broker).responseReceiver","count":1,)"
    R"("state":"chan receive","goroutine_id":43,"stack":"goroutine 43 [chan receive]:\n...","t_us":2005000})";

scenarios::RunOutput Judged(checks::RunRecord record) {
  scenarios::RunOutput out;
  out.record = std::move(record);
  out.violations = checks::EvaluateAll(out.record);
  out.verdict = scenarios::Decide(out, &out.failing_check);
  scenarios::ClassifyFailure(&out);
  return out;
}

// Sarama's goroutine report: a receiver still blocked after Close is
// no-leaked-goroutines' violation, with the model's signature for the
// same mechanism; without the scenario's opt-in nothing fires.
TEST(ClientLines, SaramaLeakedGoroutine) {
  Fed f = Feed(ClosedSaramaRun(
      {kLeakedReceiver, R"({"event":"goroutines","alive":1,"waited_us":2005000,"t_us":2005001})"}));
  EXPECT_EQ(f.record.client->garbage_lines, 0) << testing::PrintToString(f.record.client->garbage);
  EXPECT_TRUE(f.record.client->goroutines_reported);
  EXPECT_EQ(f.record.client->goroutines_alive, 1);
  ASSERT_EQ(f.record.producer_goroutines_at_end.size(), 1u);
  EXPECT_EQ(f.record.producer_goroutines_at_end[0].waits_on, "chan receive");
  EXPECT_EQ(Judged(f.record).verdict, scenarios::Verdict::kPass);  // not opted in

  f.record.check_leaked_goroutines = true;  // real_world.cc: opted in, and reported
  const scenarios::RunOutput out = Judged(f.record);
  EXPECT_EQ(out.verdict, scenarios::Verdict::kSafety);
  EXPECT_EQ(out.failing_check, "no-leaked-goroutines");
  EXPECT_EQ(out.signature.Text(), "goroutine-leak@Broker.responseReceiver");
  ASSERT_FALSE(out.violations.empty());
  EXPECT_THAT(out.violations[0].witnesses[0],
              HasSubstr("goroutine 43 '(*Broker).responseReceiver' still waits: chan receive "
                        "(Close returned t=0.003s, the driver waited 2.005s for it to return)"));
}

// What the runtime calls sleeping or runnable is on its way, as in the
// model, and an empty report is a pass.
TEST(ClientLines, SaramaGoroutinesOnTheirWay) {
  for (
      const std::vector<std::string>& report : std::vector<std::vector<std::string>>{
          {R"({"event":"goroutines","alive":0,"waited_us":12000,"t_us":9})"},
          {R"({"event":"goroutine","function":"(*client).tryRefreshMetadata.func2","count":1,"state":"sleep","goroutine_id":7,"stack":"","t_us":9})",
           R"({"event":"goroutine","function":"(*Broker).Open.func1","count":2,"state":"runnable","goroutine_id":8,"stack":"","t_us":9})",
           R"({"event":"goroutines","alive":3,"waited_us":2000000,"t_us":10})"}}) {
    Fed f = Feed(ClosedSaramaRun(report));
    EXPECT_EQ(f.record.client->garbage_lines, 0);
    f.record.check_leaked_goroutines = true;
    EXPECT_EQ(Judged(f.record).verdict, scenarios::Verdict::kPass) << report.front();
  }
}

// A report that breaks the protocol is garbage, never a guess.
TEST(ClientLines, GoroutineReportGarbage) {
  for (
      const std::vector<std::string>& report : std::vector<std::vector<std::string>>{
          {R"({"event":"goroutine","function":"","count":1,"state":"select","goroutine_id":1,"t_us":9})"},
          {R"({"event":"goroutine","function":"f","count":0,"state":"select","goroutine_id":1,"t_us":9})"},
          {R"({"event":"goroutine","function":"f","count":1,"goroutine_id":1,"t_us":9})"},
          {R"({"event":"goroutines","alive":-1,"waited_us":0,"t_us":9})"},
          {R"({"event":"goroutines","alive":0,"waited_us":0,"t_us":9})",
           R"({"event":"goroutines","alive":0,"waited_us":0,"t_us":10})"},
          {R"({"event":"goroutines","alive":0,"waited_us":0,"t_us":9})", kLeakedReceiver}}) {
    Fed f = Feed(ClosedSaramaRun(report));
    EXPECT_EQ(f.record.client->garbage_lines, 1) << report.back();
  }
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
