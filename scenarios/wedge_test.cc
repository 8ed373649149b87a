// Fault kinds through the whole world (scenarios::RunScenario from a
// scenario file's text): a blackhole under requests in flight, which
// Sarama survives through its Net.ReadTimeout and a producer without one
// does not (the liveness check catches it); a connect hang, which holds
// the producer's first dial until a SYN retransmission; a failed log
// directory, which sarama-main retries past (3aea989f) and v1.42.1 does not.
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace scenarios {
namespace {

// One broker, one partition, 20 messages 5 ms apart; at 40 ms, in the middle
// of the traffic, a middlebox between the producer and the broker loses its
// state. The requests the producer writes after it go into the hole, and
// the response of the one in flight then is lost.
constexpr std::string_view kBlackhole = R"(seed = 1
[schedule]
policy = "fifo"
[producer]
return_successes = true
[cluster]
brokers = 1
[[cluster.topics]]
name = "t"
[network.latency]
kind = "constant"
min = "1ms"
[workload]
messages = 20
interval = "5ms"
[[faults]]
kind = "blackhole"
at = "40ms"
broker = 0
[limits]
time = "600s"
liveness_grace = "120s"
)";

constexpr Duration kBlackholeAt = Duration::Millis(40);

Scenario Parse(std::string_view text) {
  absl::StatusOr<Scenario> s = ParseScenario(text, "wedge.toml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Scenario{};
}

// The same file with the producer's test-only defect (producer/config.h
// Config::TestDefects), or an error while the scenario format does not
// carry it.
absl::StatusOr<Scenario> WithDefect(std::string_view text, std::string_view defect) {
  std::string t(text);
  const std::string section = "[producer]\n";
  t.insert(t.find(section) + section.size(),
           absl::StrCat("test_defect = \"", std::string(defect), "\"\n"));
  return ParseScenario(t, "wedge-defect.toml");
}

// Sarama's responseReceiver reads each response with Net.ReadTimeout (30 s):
// the first read past the blackhole fails, the broker connection is closed,
// the batches are retried on a new connection (which the middlebox lets
// through) and everything is acknowledged, about 30 s after the blackhole.
TEST(WedgeTest, BlackholeUnderTrafficIsSurvivedThroughTheReadTimeout) {
  for (const std::string_view profile : {"sarama-1.42.1", "sarama-main"}) {
    SCOPED_TRACE(profile);
    const Scenario s = WithProfile(Parse(kBlackhole), profile);
    const RunOutput out = RunScenario(s);
    EXPECT_EQ(out.verdict, Verdict::kPass) << VerdictText(out) << ": " << out.harness_error;
    ASSERT_TRUE(out.record.close_returned_at.has_value());
    EXPECT_GE(*out.record.close_returned_at - sim::Time(), kBlackholeAt + Duration::Seconds(30));
    EXPECT_EQ(out.record.faults_healed_at, sim::Time() + kBlackholeAt);  // instant
  }
}

// The canary: without the read deadline on Produce responses the request
// path stays wedged (TCP would give up only after 924.6 s), Close does not
// return within the liveness grace after the (instant) fault, and the run
// is a liveness failure.
TEST(WedgeTest, BlackholeCatchesAProducerWithoutReadTimeout) {
  const absl::StatusOr<Scenario> s = WithDefect(kBlackhole, "no-read-timeout");
  if (!s.ok() && s.status().message().find("test_defect") != std::string_view::npos) {
    GTEST_SKIP() << "[producer] test_defect is not in the scenario format yet: " << s.status();
  }
  ASSERT_TRUE(s.ok()) << s.status();
  for (const std::string_view profile : {"sarama-1.42.1", "sarama-main"}) {
    SCOPED_TRACE(profile);
    const RunOutput out = RunScenario(WithProfile(*s, profile));
    EXPECT_EQ(out.verdict, Verdict::kLiveness) << VerdictText(out) << ": " << out.harness_error;
    EXPECT_EQ(out.failing_check, "liveness");
    EXPECT_FALSE(out.record.close_returned_at.has_value());
  }
}

// A connect hang from the start: the producer's first dial (its metadata
// request's) waits for the SYN retransmission at 1 s, after the 600 ms
// window, and everything is then delivered.
TEST(WedgeTest, ConnectHangHoldsTheFirstDialUntilTheSynRetransmission) {
  std::string text(kBlackhole);
  const std::string fault = "kind = \"blackhole\"\nat = \"40ms\"\n";
  text.replace(text.find(fault), fault.size(),
               "kind = \"connect_hang\"\nat = \"0s\"\nduration = \"600ms\"\n");
  for (const std::string_view profile : {"sarama-1.42.1", "sarama-main"}) {
    SCOPED_TRACE(profile);
    const RunOutput out = RunScenario(WithProfile(Parse(text), profile));
    EXPECT_EQ(out.verdict, Verdict::kPass) << VerdictText(out) << ": " << out.harness_error;
    ASSERT_TRUE(out.record.close_returned_at.has_value());
    EXPECT_GE(*out.record.close_returned_at - sim::Time(), Duration::Seconds(1));
    EXPECT_EQ(out.record.faults_healed_at, sim::Time() + Duration::Millis(600));
  }
}

// Three brokers, one partition replicated three times; at 40 ms the log
// directory holding the leader's replica fails (the application closes at
// 300 ms, after main's retry: a retry still waiting then would fail with
// ErrShuttingDown, main's close-during-retry). KAFKA_STORAGE_ERROR is
// retriable in sarama-main (3aea989f, #2939): it refreshes metadata, finds
// the new leader, and every message is acknowledged. v1.42.1 fails the
// messages and, never refreshing metadata for that error, sends every
// later one to the same broker: all of them fail (the checks allow a
// failure; this test pins the profiles' difference).
TEST(WedgeTest, FailedLogDirIsRetriedOnMainOnly) {
  const std::string text = absl::StrCat(R"(seed = 1
[schedule]
policy = "fifo"
[producer]
return_successes = true
required_acks = "wait_for_all"
[cluster]
brokers = 3
min_insync_replicas = 2
[[cluster.topics]]
name = "t"
replication_factor = 3
[network.latency]
kind = "constant"
min = "1ms"
[workload]
messages = 60
interval = "5ms"
[[faults]]
kind = "log_dir_failure"
at = "40ms"
broker = 0
topic = "t"
partition = 0
[limits]
time = "600s"
)");
  for (const std::string_view profile : {"sarama-1.42.1", "sarama-main"}) {
    SCOPED_TRACE(profile);
    const RunOutput out = RunScenario(WithProfile(Parse(text), profile));
    EXPECT_EQ(out.verdict, Verdict::kPass) << VerdictText(out) << ": " << out.harness_error;
    size_t storage_errors = 0;
    for (const sarama::ErrorEvent& e : out.record.producer.errors) {
      if (e.err.Is(kafka::ErrorCode::KAFKA_STORAGE_ERROR)) ++storage_errors;
    }
    if (profile == "sarama-main") {
      EXPECT_EQ(out.record.producer.errors.size(), 0u);
      EXPECT_EQ(out.record.producer.acks.size(), 60u);
    } else {
      EXPECT_GT(storage_errors, 10u);
      EXPECT_EQ(storage_errors, out.record.producer.errors.size());
    }
  }
}

}  // namespace
}  // namespace scenarios
