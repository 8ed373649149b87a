// The application's ways of reading Successes and Errors ([workload] drain)
// through the whole world: every one Sarama's documentation allows keeps
// every promise on a fault-free run on both profiles, and each does what
// it says (a late reader leaves the producer blocked until it starts; a
// closing reader hands the rest to Close).
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"

namespace scenarios {
namespace {

// 300 messages, 1 ms apart, to three partitions; a channel buffer of 8, so
// a reader that does not keep up holds the producer back.
std::string Text(const std::string& drain, const std::string& delay) {
  return absl::StrCat(R"(seed = 1
[schedule]
policy = "fifo"
[producer]
return_successes = true
channel_buffer_size = 8
[cluster]
brokers = 3
[[cluster.topics]]
name = "t"
partitions = 3
[network.latency]
kind = "constant"
min = "1ms"
[workload]
messages = 300
interval = "1ms"
drain = ")",
                      drain, R"("
drain_delay = ")",
                      delay, R"("
[checks]
no_leaked_goroutines = true
[limits]
time = "600s"
)");
}

RunOutput RunDrain(const std::string& drain, const std::string& delay, std::string_view profile) {
  absl::StatusOr<Scenario> s = ParseScenario(Text(drain, delay), "drain.toml");
  EXPECT_TRUE(s.ok()) << s.status();
  return RunScenario(WithProfile(*s, profile));
}

// Every drain passes, and Close returns; a late reader is the first to
// see an outcome only after its delay, and a slow one takes at least its
// work per message.
TEST(ApplicationTest, EveryDrainSaramaAllowsPasses) {
  for (const std::string_view profile : {"sarama-1.42.1", "sarama-main"}) {
    SCOPED_TRACE(profile);
    const RunOutput prompt = RunDrain("prompt", "0s", profile);
    EXPECT_EQ(prompt.verdict, Verdict::kPass) << VerdictText(prompt);
    ASSERT_TRUE(prompt.record.close_returned_at.has_value());
    for (const auto& [drain, delay] :
         {std::pair<std::string, std::string>{"late", "2s"}, {"slow", "5ms"}, {"close", "0s"}}) {
      SCOPED_TRACE(drain);
      const RunOutput out = RunDrain(drain, delay, profile);
      EXPECT_EQ(out.verdict, Verdict::kPass) << VerdictText(out);
      ASSERT_TRUE(out.record.close_returned_at.has_value());
      EXPECT_EQ(out.record.producer.acks.size(), 300u);
      const sim::Duration took = *out.record.close_returned_at - sim::Time();
      if (drain == "late") {
        EXPECT_GE(took, sim::Duration::Seconds(2));
      } else if (drain == "slow") {
        EXPECT_GE(took, sim::Duration::Millis(1500));  // 300 reads, 5 ms of work each
      } else {
        EXPECT_LT(took, sim::Duration::Seconds(1));
      }
    }
  }
}

// A real client's driver reads promptly: prodsim real refuses another
// drain (wire/real_world.cc), and the field is checked like any other.
TEST(ApplicationTest, DrainIsOneOfTheFour) {
  absl::StatusOr<Scenario> s = ParseScenario(Text("never", "0s"), "drain.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("drain"), std::string_view::npos) << s.status();
}

}  // namespace
}  // namespace scenarios
