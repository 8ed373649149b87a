#include "clients/librdkafka/job.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"
#include "wire/json.h"

namespace clients {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kGoodJob =
    R"({"bootstrap":"127.0.0.1:9092,127.0.0.1:9093", "topics":["t0","t1"], "messages":10,)"
    R"( "keys":3, "burst":2, "interval_us":1000, "value_bytes":16, "close_at_us":-1,)"
    R"( "flush_timeout_ms":5000, "config":[["enable.idempotence","true"],["acks","all"]]})";

// A job with one key's text replaced; the replaced text must occur once.
std::string With(std::string_view from, std::string_view to) {
  std::string job(kGoodJob);
  EXPECT_EQ(job.find(from), job.rfind(from)) << from;
  EXPECT_NE(job.find(from), std::string::npos) << from;
  const size_t at = job.find(from);
  if (at != std::string::npos) job.replace(at, from.size(), to);
  return job;
}

// The job of the protocol's example parses into exactly its fields.
TEST(ParseJob, ReadsEveryField) {
  absl::StatusOr<Job> job = ParseJob(std::string(kGoodJob) + "\n");
  ASSERT_TRUE(job.ok()) << job.status();
  Job want;
  want.bootstrap = "127.0.0.1:9092,127.0.0.1:9093";
  want.topics = {"t0", "t1"};
  want.messages = 10;
  want.keys = 3;
  want.burst = 2;
  want.interval_us = 1000;
  want.value_bytes = 16;
  want.close_at_us = -1;
  want.flush_timeout_ms = 5000;
  want.config = {{"enable.idempotence", "true"}, {"acks", "all"}};
  EXPECT_EQ(*job, want);
}

// Each way a job can be wrong is refused, with a message that says where.
TEST(ParseJob, RefusesMalformedJobs) {
  struct Case {
    std::string job;
    std::string_view says;
  };
  const Case cases[] = {
      {"", "unexpected end"},
      {"[]", "want an object"},
      {std::string(kGoodJob) + "x", "after the value"},
      {With(R"("keys":3,)", R"("keys":3, "colour":1,)"), "unknown key \"colour\""},
      {With(R"("keys":3,)", R"("keys":3, "keys":4,)"), "duplicate key"},
      {With(R"("keys":3,)", ""), "missing key \"keys\""},
      {With(R"("keys":3)", R"("keys":"3")"), "want an integer, got a string"},
      {With(R"("keys":3)", R"("keys":3.0)"), "not an integer"},
      {With(R"("keys":3)", R"("keys":1e3)"), "not an integer"},
      {With(R"("keys":3)", R"("keys":03)"), "leading zero"},
      {With(R"("keys":3)", R"("keys":-1)"), "want an integer in [0, "},
      {With(R"("burst":2)", R"("burst":0)"), "\"burst\""},
      {With(R"("close_at_us":-1)", R"("close_at_us":-2)"), "\"close_at_us\""},
      {With(R"("messages":10)", R"("messages":10000001)"), "\"messages\""},
      {With(R"("messages":10)", R"("messages":99999999999999999999)"), "out of range"},
      {With(R"("topics":["t0","t1"])", R"("topics":[])"), "\"topics\": empty"},
      {With(R"("topics":["t0","t1"])", R"("topics":["t0",1])"), "got an integer"},
      {With(R"("topics":["t0","t1"])", R"("topics":[""])"), "empty topic"},
      {With(R"("bootstrap":"127.0.0.1:9092,127.0.0.1:9093")", R"("bootstrap":null)"), "got null"},
      {With(R"(["acks","all"])", R"(["acks"])"), "other than 2"},
      {With(R"(["acks","all"])", R"(["acks",true])"), "got a boolean"},
      {With(R"(["acks","all"])", R"(["","all"])"), "empty property name"},
      {With(R"("t0")", "\"t\x01\""), "control character"},
      {With(R"("t0")", R"("t\q")"), "unknown escape"},
      {With(R"("t0")", R"("t\ud800")"), "lone high surrogate"},
      {With(R"("t0")", R"("t\udc00")"), "lone low surrogate"},
      {With(R"("t0")", R"("t0)"), ""},
      {With(R"("keys":3,)", R"("keys":3)"), "expected ','"},
      {std::string(json::kDepthMax + 1, '['), "nested too deeply"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.job);
    absl::StatusOr<Job> job = ParseJob(c.job);
    ASSERT_FALSE(job.ok());
    EXPECT_THAT(job.status().message(), HasSubstr(c.says));
  }
}

// Integers reach both ends of int64 and no further.
TEST(JsonParse, IntegersSpanInt64) {
  absl::StatusOr<json::Value> v = json::Parse("[-9223372036854775808, 9223372036854775807, 0]");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->items.size(), 3u);
  EXPECT_EQ(v->items[0].integer, INT64_MIN);
  EXPECT_EQ(v->items[1].integer, INT64_MAX);
  EXPECT_EQ(v->items[2].integer, 0);
  EXPECT_FALSE(json::Parse("9223372036854775808").ok());
  EXPECT_FALSE(json::Parse("-9223372036854775809").ok());
  EXPECT_FALSE(json::Parse("-").ok());
}

// Escapes decode to UTF-8, a surrogate pair to one code point.
TEST(JsonParse, DecodesEscapes) {
  absl::StatusOr<json::Value> v = json::Parse(R"("a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00")");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->string, "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80");
  absl::StatusOr<json::Value> t = json::Parse(" {\"a\" : [true, false, null]} ");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->items.size(), 1u);
  ASSERT_EQ(t->items[0].items.size(), 3u);
  EXPECT_TRUE(t->items[0].items[0].boolean);
  EXPECT_EQ(t->items[0].items[1].kind, json::Value::Kind::kBool);
  EXPECT_FALSE(t->items[0].items[1].boolean);
  EXPECT_EQ(t->items[0].items[2].kind, json::Value::Kind::kNull);
}

// The quoter escapes what JSON requires and nothing the reader cannot read.
TEST(JsonQuote, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(json::Quote("a\"b\\c\nd\x01"), R"("a\"b\\c\nd\u0001")");
}

// Whatever bytes are quoted, the reader gives them back.
RC_GTEST_PROP(JsonQuote, RoundTripsThroughParse, (const std::string& text)) {
  absl::StatusOr<json::Value> v = json::Parse(json::Quote(text));
  RC_ASSERT(v.ok());
  RC_ASSERT(v->kind == json::Value::Kind::kString);
  RC_ASSERT(v->string == text);
}

}  // namespace
}  // namespace clients
