// Tests of the scenario file format: parsing, canonical printing, the round
// trip between them, and the one-line error for each kind of mistake.
#include "scenarios/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scenarios/realism.h"
#include "scenarios/schema.h"

namespace scenarios {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kFullExample = R"(# Every section, with values away from the defaults.
seed = 42
description = "Leader moves while an \"idempotent\" producer retries"

[schedule]
policy = "pct"
pct_depth = 4
pct_steps = 500000
preempt_per_mille = 250

[producer]
profile = "sarama-1.42.1"
idempotent = true
net_max_open_requests = 1
net_read_timeout = "2s"
net_dial_timeout = "1s"
required_acks = "wait_for_all"
timeout = "1.5s"
retry_max = 5
retry_backoff = "100ms"
return_successes = true
return_errors = false
flush_messages = 10
flush_bytes = 65536
flush_frequency = "5ms"
flush_max_messages = 20
max_message_bytes = 1000000
channel_buffer_size = 256
metadata_retry_max = 3
metadata_retry_backoff = "250ms"
version = "2.6.0"

[cluster]
brokers = 3
min_insync_replicas = 2
kafka_version = "2.5"
metadata_delay_max = "20ms"
replica_fetch_interval = "5ms"
replica_lag_time_max = "10s"

[[cluster.topics]]
name = "orders"
partitions = 4
replication_factor = 3

[[cluster.topics]]
name = "audit.log"
partitions = 1
replication_factor = 2

[network]
latency = { kind = "uniform", min = "200us", max = "2ms" }

[workload]
messages = 1000
keys = 16
topics = ["orders", "audit.log"]
interval = "2ms"
burst = 4
value_bytes = 256
close_at = "50s"

[[faults]]
kind = "move_leader"
at = "1.5s"
broker = 2
topic = "orders"
partition = 3

[[faults]]
kind = "partition"
at = "2s"
duration = "500ms"
broker = 1
direction = "from_broker"
heal = false

[[faults]]
kind = "inject_error"
at = "3s"
broker = 0
topic = "orders"
partition = 1
error = "NOT_LEADER_OR_FOLLOWER"
api = "produce"
count = 2

[[faults]]
kind = "latency_spike"
at = "4s"
duration = "1m"
broker = 2
extra = "20ms"

[buggify]
sites = ["broker.slow_request", "net.delay"]

[limits]
steps = 5000000
time = "90s"
liveness_grace = "30s"

[expect]
verdict = "safety"
check = "acked-batches-in-order"

[expect.profiles."sarama-main"]
verdict = "pass"
)";

ProducerSpec ExpectedFullExampleProducer() {
  ProducerSpec p;
  p.idempotent = true;
  p.net_max_open_requests = 1;
  p.net_read_timeout = Duration::Seconds(2);
  p.net_dial_timeout = Duration::Seconds(1);
  p.required_acks = -1;
  p.timeout = Duration::Millis(1500);
  p.retry_max = 5;
  p.retry_backoff = Duration::Millis(100);
  p.return_successes = true;
  p.return_errors = false;
  p.flush_messages = 10;
  p.flush_bytes = 65536;
  p.flush_frequency = Duration::Millis(5);
  p.flush_max_messages = 20;
  p.max_message_bytes = 1000000;
  p.channel_buffer_size = 256;
  p.metadata_retry_max = 3;
  p.metadata_retry_backoff = Duration::Millis(250);
  p.version = "2.6.0";
  return p;
}

std::vector<FaultSpec> ExpectedFullExampleFaults() {
  // Faults field by field: designated initializers would leave members
  // without default initializers to -Wmissing-field-initializers.
  FaultSpec move, part, inject, spike;
  move.kind = fault_models::FaultKind::kMoveLeader;
  move.at = Duration::Millis(1500);
  move.broker = 2;
  move.topic = "orders";
  move.partition = 3;
  part.kind = fault_models::FaultKind::kPartition;
  part.at = Duration::Seconds(2);
  part.duration = Duration::Millis(500);
  part.broker = 1;
  part.direction = fault_models::Direction::kFromBroker;
  part.heal = false;
  inject.kind = fault_models::FaultKind::kInjectError;
  inject.at = Duration::Seconds(3);
  inject.topic = "orders";
  inject.partition = 1;
  inject.error = kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER;
  inject.count = 2;
  spike.kind = fault_models::FaultKind::kLatencySpike;
  spike.at = Duration::Seconds(4);
  spike.duration = Duration::Seconds(60);
  spike.broker = 2;
  spike.extra = Duration::Millis(20);
  return {move, part, inject, spike};
}

Scenario ExpectedFullExample() {
  Scenario s;
  s.seed = 42;
  s.description = "Leader moves while an \"idempotent\" producer retries";
  s.schedule = ScheduleSpec{};
  s.schedule.policy = sim::Policy::kPct;
  s.schedule.pct_depth = 4;
  s.schedule.pct_steps = 500000;
  s.schedule.preempt_per_mille = 250;
  s.producer = ExpectedFullExampleProducer();
  s.cluster.brokers = 3;
  s.cluster.min_insync_replicas = 2;
  s.cluster.kafka_version = kafka::KafkaVersion::k2_6;
  s.cluster.replica_lag_time_max = Duration::Seconds(10);
  s.cluster.topics = {{"orders", 4, 3}, {"audit.log", 1, 2}};
  s.network.latency.kind = net::LatencyModel::Kind::kUniform;
  s.network.latency.min = Duration::Micros(200);
  s.network.latency.max = Duration::Millis(2);
  s.workload = {.messages = 1000,
                .keys = 16,
                .topics = {"orders", "audit.log"},
                .interval = Duration::Millis(2),
                .burst = 4,
                .value_bytes = 256,
                .close_at = Duration::Seconds(50),
                .drain = Drain::kPrompt,
                .drain_delay = Duration()};
  s.faults = ExpectedFullExampleFaults();
  s.buggify.sites = {"net.delay", "broker.slow_request"};  // canonical order
  s.limits = {
      .steps = 5000000, .time = Duration::Seconds(90), .liveness_grace = Duration::Seconds(30)};
  s.expect =
      ExpectSpec{.verdict = checks::Verdict::kSafety,
                 .check = "acked-batches-in-order",
                 .signature = "",
                 .known_on = "",
                 .profiles = {ProfileExpectSpec{"sarama-main", checks::Verdict::kPass, "", ""}}};
  return s;
}

// The smallest valid file: one topic, everything else by default.
constexpr std::string_view kMinimal = "[[cluster.topics]]\nname = \"t\"\n";

// Checks that `status` is one line "origin:LINE:COL: message (hint: ...)"
// and returns LINE (0 if the form is wrong).
int ErrorLine(const absl::Status& status) {
  const std::string message(status.message());
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  EXPECT_THAT(message, HasSubstr(" (hint: "));
  std::smatch m;
  static const std::regex kForm(R"(^origin:([0-9]+):([0-9]+): .+ \(hint: .+\)$)");
  if (!std::regex_match(message, m, kForm)) {
    ADD_FAILURE() << "not in the error form: " << message;
    return 0;
  }
  EXPECT_GE(std::stoi(m[2].str()), 1);
  return std::stoi(m[1].str());
}

// The full example parses to the expected struct, field by field.
TEST(ScenarioParse, FullExampleGivesTheExpectedStruct) {
  absl::StatusOr<Scenario> s = ParseScenario(kFullExample, "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  const Scenario want = ExpectedFullExample();
  EXPECT_EQ(s->seed, want.seed);
  EXPECT_EQ(s->description, want.description);
  EXPECT_EQ(s->schedule, want.schedule);
  EXPECT_EQ(s->producer, want.producer);
  EXPECT_EQ(s->cluster, want.cluster);
  EXPECT_EQ(s->network, want.network);
  EXPECT_EQ(s->workload, want.workload);
  ASSERT_EQ(s->faults.size(), want.faults.size());
  for (size_t i = 0; i < want.faults.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(s->faults[i], want.faults[i]);
  }
  EXPECT_EQ(s->buggify, want.buggify);
  EXPECT_EQ(s->limits, want.limits);
  EXPECT_EQ(s->expect, want.expect);
  EXPECT_EQ(*s, want);
}

// A file with one topic gets every default of the header.
TEST(ScenarioParse, MinimalFileKeepsDefaults) {
  absl::StatusOr<Scenario> s = ParseScenario(kMinimal, "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  Scenario want;
  want.cluster.topics = {TopicSpec{.name = "t"}};
  EXPECT_EQ(*s, want);
}

// The canonical text of the full example parses back to the same struct,
// and printing is a fixed point.
TEST(ScenarioPrint, RoundTripOfTheFullExample) {
  const Scenario want = ExpectedFullExample();
  const std::string text = PrintScenario(want);
  absl::StatusOr<Scenario> back = ParseScenario(text, "origin");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, want);
  EXPECT_EQ(PrintScenario(*back), text);
}

// Printing writes defaults explicitly, durations in their largest exact
// unit, optional producer fields only when set, and a comment per section.
TEST(ScenarioPrint, CanonicalForm) {
  Scenario s = *ParseScenario(kMinimal, "origin");
  s.limits.time = Duration::Millis(1500);
  s.workload.interval = Duration::Nanos(1000001);
  const std::string text = PrintScenario(s);
  EXPECT_THAT(text, HasSubstr("\npct_depth = 3\n"));
  EXPECT_THAT(text, HasSubstr("\ntime = \"1500ms\"\n"));
  EXPECT_THAT(text, HasSubstr("\ninterval = \"1000001ns\"\n"));
  EXPECT_THAT(text, HasSubstr("\nreplica_lag_time_max = \"30s\"\n"));
  EXPECT_THAT(text, HasSubstr("\nmin = \"500us\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("idempotent")));
  EXPECT_THAT(text, Not(HasSubstr("[expect]")));
  EXPECT_THAT(text, Not(HasSubstr("close_at")));
  EXPECT_THAT(text, Not(HasSubstr("buggify")));  // off: the section is left out
  for (const char* section :
       {"[schedule]", "[producer]", "[cluster]", "[network.latency]", "[workload]", "[limits]"}) {
    const size_t at = text.find(std::string("\n") + section + "\n");
    ASSERT_NE(at, std::string::npos) << section;
    EXPECT_EQ(text.rfind("\n# ", at), text.rfind('\n', at - 1)) << "no comment above " << section;
  }
}

// Duration strings parse exactly, in every unit, with no rounding.
TEST(ScenarioParse, DurationsAreExact) {
  struct Case {
    const char* text;
    int64_t ns;
  };
  const Case cases[] = {
      {"1.5s", 1500000000},
      {"250ms", 250000000},
      {"10us", 10000},
      {"0s", 0},
      {"2m", 120000000000},
      {"1h", 3600000000000},
      {"7ns", 7},
      {"0.001ms", 1000},
      {"1.000000001s", 1000000001},
      {"2.5m", 150000000000},
      {"0.1h", 360000000000},
      {"007ms", 7000000},
      {"1.50s", 1500000000},
      {"9223372036854775807ns", INT64_MAX},
      {"0.000000000005h", 18},
      {"9223372036.854775807s", INT64_MAX},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string text =
        absl::StrCat(std::string(kMinimal), "[workload]\ninterval = \"", c.text, "\"\n");
    absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->workload.interval.nanos(), c.ns);
  }
}

// Durations that are negative, unitless, of an unknown unit, finer than a
// nanosecond or too long are each refused on the line of the value.
TEST(ScenarioParse, BadDurationsAreRefused) {
  const char* cases[] = {"-5s",
                         "500",
                         "5sec",
                         "5 ms",
                         "ms",
                         "1.5ns",
                         "1.s",
                         ".5s",
                         "",
                         "9223372036854775808ns",
                         "9223372036.854775808s",
                         "99999999999999999999999999h",
                         "1.0000000000000000001s",
                         "5S",
                         "1m30s"};
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    const std::string text =
        absl::StrCat(std::string(kMinimal), "[workload]\ninterval = \"", c, "\"\n");
    absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(ErrorLine(s.status()), 4);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("workload.interval"));
  }
}

// required_acks takes -1/0/1 or Sarama's constant names.
TEST(ScenarioParse, RequiredAcksByNumberOrName) {
  const std::pair<const char*, int32_t> cases[] = {{"-1", -1},
                                                   {"0", 0},
                                                   {"1", 1},
                                                   {"\"wait_for_all\"", -1},
                                                   {"\"no_response\"", 0},
                                                   {"\"wait_for_local\"", 1}};
  for (const auto& [value, want] : cases) {
    SCOPED_TRACE(value);
    const std::string text =
        absl::StrCat(std::string(kMinimal), "[producer]\nrequired_acks = ", value, "\n");
    absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->producer.required_acks, want);
  }
}

struct MalformedCase {
  const char* name;
  std::string text;
  int line;            // the line the error must point at
  const char* needle;  // a part of the message
};

// The base the malformed cases start from (6 lines).
const std::string kBase =
    "[cluster]\nbrokers = 3\n[[cluster.topics]]\nname = \"orders\"\n"
    "partitions = 2\nreplication_factor = 3\n";

std::vector<MalformedCase> MalformedCases() {
  const std::string fault = kBase + "[[faults]]\n";  // a fault's keys start on line 8
  return {
      {"unknown_key", "colour = 1\n" + kBase, 1, "unknown key \"colour\""},
      {"typo_did_you_mean", kBase + "[schedule]\npolcy = \"fifo\"\n", 8, "did you mean \"policy\""},
      {"typo_in_section_name", kBase + "[shedule]\npolicy = \"fifo\"\n", 7,
       "did you mean \"schedule\""},
      {"key_in_wrong_section", kBase + "[producer]\nbrokers = 3\n", 8, "belongs in [cluster]"},
      {"wrong_type", "[cluster]\nbrokers = \"3\"\n[[cluster.topics]]\nname = \"t\"\n", 2,
       "must be an integer, not a string"},
      {"float_for_integer", kBase + "[workload]\nmessages = 1.5\n", 8, "not a float"},
      {"negative_seed", "seed = -1\n" + kBase, 1, "seed must be in 0.."},
      {"bad_duration_unit", kBase + "[limits]\ntime = \"5sec\"\n", 8, "unknown unit \"sec\""},
      {"duration_without_unit", kBase + "[limits]\ntime = \"500\"\n", 8, "has no unit"},
      {"negative_duration", kBase + "[limits]\ntime = \"-5s\"\n", 8, "is negative"},
      {"duration_as_number", kBase + "[limits]\ntime = 5\n", 8, "must be a duration string"},
      {"zero_time_limit", kBase + "[limits]\ntime = \"0s\"\n", 8, "limits.time must be at least"},
      {"unknown_policy", kBase + "[schedule]\npolicy = \"chaos\"\n", 8,
       "unknown schedule.policy \"chaos\""},
      {"unknown_profile", kBase + "[producer]\nprofile = \"sarama-9.9\"\n", 8,
       "unknown producer.profile"},
      {"expect_unknown_profile",
       kBase + "[expect]\nverdict = \"pass\"\n[expect.profiles.\"sarama-9\"]\nverdict = \"pass\"\n",
       9, "unknown profile \"sarama-9\" in [expect.profiles]"},
      {"expect_own_profile",
       kBase + "[expect]\nverdict = \"pass\"\n[expect.profiles.\"sarama-1.42.1\"]\nverdict = "
               "\"pass\"\n",
       9, "names the scenario's own profile"},
      {"expect_profile_without_verdict",
       kBase + "[expect]\nverdict = \"pass\"\n[expect.profiles.\"sarama-main\"]\ncheck = "
               "\"liveness\"\n",
       9, ".verdict is missing"},
      {"brokers_zero", "[cluster]\nbrokers = 0\n[[cluster.topics]]\nname = \"t\"\n", 2,
       "cluster.brokers must be in 1..16"},
      {"partitions_zero", "[cluster]\n[[cluster.topics]]\nname = \"t\"\npartitions = 0\n", 4,
       "partitions must be in 1..64"},
      {"rf_above_brokers",
       "[cluster]\nbrokers = 2\n[[cluster.topics]]\nname = \"t\"\nreplication_factor = 3\n", 5,
       "exceeds the cluster's 2 broker(s)"},
      {"min_insync_above_rf",
       "[cluster]\nbrokers = 3\nmin_insync_replicas = 3\n[[cluster.topics]]\nname = \"t\"\n"
       "replication_factor = 2\n",
       3, "exceeds the replication_factor 2"},
      {"min_insync_above_second_topic",
       "[cluster]\nbrokers = 3\nmin_insync_replicas = 2\n[[cluster.topics]]\nname = \"a\"\n"
       "replication_factor = 3\n[[cluster.topics]]\nname = \"b\"\n",
       3, "of topic \"b\""},
      {"workload_topic_missing", kBase + "[workload]\ntopics = [\"orders\", \"ordrs\"]\n", 8,
       "workload topic \"ordrs\" is not in the cluster"},
      {"fault_broker_out_of_range", fault + "kind = \"crash\"\nat = \"1s\"\nbroker = 3\n", 10,
       "the cluster has 3 broker(s)"},
      {"fault_partition_out_of_range",
       fault + "kind = \"move_leader\"\nat = \"1s\"\ntopic = \"orders\"\npartition = 2\n", 11,
       "has 2 partition(s)"},
      {"fault_topic_missing_from_cluster",
       fault + "kind = \"shrink_isr\"\nat = \"1s\"\ntopic = \"other\"\npartition = 0\n", 10,
       "fault topic \"other\" is not in the cluster"},
      {"topic_without_partition",
       fault + "kind = \"move_leader\"\nat = \"1s\"\ntopic = \"orders\"\n", 10,
       "partition is missing"},
      {"empty_topic",
       fault +
           "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NETWORK_EXCEPTION\"\ntopic = \"\"\n",
       11, "topic is empty"},
      {"heal_on_self_healing_kind",
       fault + "kind = \"latency_spike\"\nat = \"1s\"\nextra = \"5ms\"\nheal = false\n", 11,
       "heal is not used by a latency_spike fault"},
      {"unknown_fault_kind", fault + "kind = \"explode\"\nat = \"1s\"\n", 8,
       "unknown faults[0].kind \"explode\""},
      {"fault_kind_missing", fault + "at = \"1s\"\n", 7, "faults[0].kind is missing"},
      {"unknown_error_name",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NOT_LEADER_FOR_PARTITION\"\n", 10,
       "unknown faults[0].error"},
      {"field_not_used_by_kind", fault + "kind = \"crash\"\nat = \"1s\"\ncount = 2\n", 10,
       "count is not used by a crash fault"},
      {"fault_after_time_limit",
       kBase + "[limits]\ntime = \"10s\"\n[[faults]]\nkind = \"reset\"\nat = \"10s\"\n", 11,
       "is not before limits.time"},
      {"fault_duration_beyond_limit",
       kBase + "[limits]\ntime = \"10s\"\n[[faults]]\nkind = \"crash\"\nat = \"9s\"\n"
               "duration = \"1001ms\"\n",
       12, "would end after limits.time"},
      {"uniform_min_above_max",
       kBase + "[network.latency]\nkind = \"uniform\"\nmin = \"5ms\"\nmax = \"1ms\"\n", 9,
       "min is above max"},
      {"exponential_min_above_cap",
       kBase + "[network]\nlatency = { kind = \"exponential\", min = \"2s\", cap = \"1s\" }\n", 8,
       "min is above cap"},
      {"latency_field_not_used", kBase + "[network.latency]\nkind = \"constant\"\nmax = \"1ms\"\n",
       9, "max is not used by constant latency"},
      {"unknown_latency_kind", kBase + "[network.latency]\nkind = \"gaussian\"\n", 8,
       "unknown network.latency.kind"},
      {"unknown_verdict", kBase + "[expect]\nverdict = \"fail\"\n", 8, "unknown expect.verdict"},
      {"expect_pass_with_check",
       kBase + "[expect]\nverdict = \"pass\"\ncheck = \"no-duplicates\"\n", 9,
       "the verdict is \"pass\""},
      {"unknown_check", kBase + "[expect]\nverdict = \"safety\"\ncheck = \"no-dupes\"\n", 9,
       "unknown expect.check"},
      {"expect_without_verdict", kBase + "[expect]\ncheck = \"liveness\"\n", 7,
       "expect.verdict is missing"},
      {"duplicate_topic", kBase + "[[cluster.topics]]\nname = \"orders\"\n", 8,
       "duplicate topic \"orders\""},
      {"no_topics", "seed = 3\n[cluster]\nbrokers = 3\n", 2, "the cluster has no topics"},
      {"no_cluster", "seed = 3\n", 2, "no [cluster] section"},
      {"typo_beats_missing_section", "sead = 3\n", 1, "did you mean \"seed\""},
      {"toml_unterminated_string", kBase + "description = \"abc\n", 7, "invalid TOML"},
      {"toml_duplicate_key", "[cluster]\nbrokers = 3\nbrokers = 4\n", 3, "invalid TOML"},
      {"array_where_table_expected", kBase + "[[schedule]]\npolicy = \"fifo\"\n", 7,
       "schedule must be a table, not an array of tables"},
      {"table_where_array_expected", "[cluster]\n[cluster.topics]\nname = \"t\"\n", 2,
       "must be an array of tables"},
      {"bad_required_acks", kBase + "[producer]\nrequired_acks = 2\n", 8,
       "required_acks must be -1, 0 or 1"},
      {"bad_topic_name", "[[cluster.topics]]\nname = \"my topic\"\n", 2,
       "not a valid Kafka topic name"},
      {"bad_version_spelling", kBase + "[producer]\nversion = \"v2.6\"\n", 8,
       "is not a Kafka version"},
      {"unknown_kafka_version",
       "[cluster]\nkafka_version = \"3.0\"\n[[cluster.topics]]\nname = \"t\"\n", 2,
       "unknown cluster.kafka_version"},
      {"unknown_direction", fault + "kind = \"partition\"\nat = \"1s\"\ndirection = \"inbound\"\n",
       10, "unknown faults[0].direction"},
      {"unknown_api",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NETWORK_EXCEPTION\"\n"
               "api = \"fetch\"\n",
       11, "unknown faults[0].api"},
      {"count_zero", fault + "kind = \"mock.drop_response\"\nat = \"1s\"\ncount = 0\n", 10,
       "count must be in 1..1000000"},
      {"renamed_kind", fault + "kind = \"drop_responses\"\nat = \"1s\"\n", 8,
       "renamed mock.drop_response"},
      {"blackhole_with_duration", fault + "kind = \"blackhole\"\nat = \"1s\"\nduration = \"5s\"\n",
       10, "duration is not used by a blackhole fault"},
      {"blackhole_broker_out_of_range", fault + "kind = \"blackhole\"\nat = \"1s\"\nbroker = 7\n",
       10, "broker = 7 but the cluster has 3 broker(s)"},
      {"connect_hang_without_duration", fault + "kind = \"connect_hang\"\nat = \"1s\"\n", 7,
       "duration is missing (hint: a connect_hang fault needs duration)"},
      {"connect_hang_with_direction",
       fault + "kind = \"connect_hang\"\nat = \"1s\"\nduration = \"2s\"\n"
               "direction = \"to_broker\"\n",
       11, "direction is not used by a connect_hang fault"},
      {"connect_hang_beyond_limit",
       kBase + "[limits]\ntime = \"10s\"\n[[faults]]\nkind = \"connect_hang\"\nat = \"9s\"\n"
               "duration = \"2s\"\n",
       12, "would end after limits.time"},
      {"inject_error_without_a_cause",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"OUT_OF_ORDER_SEQUENCE_NUMBER\"\n",
       10, "does not answer a produce request with OUT_OF_ORDER_SEQUENCE_NUMBER"},
      {"inject_error_needs_acks_all",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"REQUEST_TIMED_OUT\"\n", 10,
       "only to acks=all"},
      {"inject_error_needs_min_insync",
       kBase + "[producer]\nrequired_acks = \"wait_for_all\"\n[[faults]]\nkind = \"inject_error\"\n"
               "at = \"1s\"\nerror = \"NOT_ENOUGH_REPLICAS\"\n",
       12, "min_insync_replicas >= 2"},
      {"inject_error_on_metadata",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NOT_LEADER_OR_FOLLOWER\"\n"
               "api = \"metadata\"\n",
       11, "at produce requests only"},
      {"inject_error_cause_without_length",
       fault + "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NOT_LEADER_OR_FOLLOWER\"\n"
               "duration = \"1s\"\n",
       11, "has no length"},
      {"partition_without_topic",
       fault +
           "kind = \"inject_error\"\nat = \"1s\"\nerror = \"NETWORK_EXCEPTION\"\npartition = 1\n",
       11, "partition is set but topic is not"},
      {"keys_zero", kBase + "[workload]\nkeys = 0\n", 8, "keys must be in 1.."},
      {"burst_zero", kBase + "[workload]\nburst = 0\n", 8, "burst must be in 1.."},
      {"too_many_messages", kBase + "[workload]\nmessages = 1000001\n", 8,
       "messages must be in 0..1000000"},
      {"value_bytes_too_large", kBase + "[workload]\nvalue_bytes = 10000001\n", 8,
       "value_bytes must be in 0..10000000"},
      {"pct_depth_too_deep", kBase + "[schedule]\npct_depth = 21\n", 8,
       "pct_depth must be in 1..20"},
      {"preempt_above_1000", kBase + "[schedule]\npreempt_per_mille = 1001\n", 8,
       "preempt_per_mille must be in 0..1000"},
      {"steps_zero", kBase + "[limits]\nsteps = 0\n", 8, "steps must be in 1..10000000000"},
      {"close_after_time_limit", kBase + "[limits]\ntime = \"1s\"\n[workload]\nclose_at = \"2s\"\n",
       10, "close_at is after limits.time"},
      {"flush_max_below_flush_messages",
       kBase + "[producer]\nflush_messages = 10\nflush_max_messages = 5\n", 9,
       "flush_max_messages is below flush_messages"},
      {"workload_topics_not_array", kBase + "[workload]\ntopics = \"orders\"\n", 8,
       "must be an array of topic names"},
      {"boolean_as_string", kBase + "[producer]\nidempotent = \"yes\"\n", 8,
       "must be a boolean, not a string"},
      {"extra_missing", fault + "kind = \"latency_spike\"\nat = \"1s\"\n", 7, "extra is missing"},
      {"earliest_problem_wins", "seed = -1\nseed2 = 1\n" + kBase, 1, "seed must be"},
      {"unknown_buggify_site", kBase + "[buggify]\nsites = [\"net.delay\", \"net.dealy\"]\n", 8,
       "unknown buggify site \"net.dealy\""},
      {"duplicate_buggify_site",
       kBase + "[buggify]\nsites = [\"broker.slow_fetch\",\n  \"broker.slow_fetch\"]\n", 9,
       "duplicate buggify site \"broker.slow_fetch\""},
      {"buggify_sites_not_array", kBase + "[buggify]\nsites = \"net.delay\"\n", 8,
       "buggify.sites must be an array of site names"},
      {"buggify_site_not_string", kBase + "[buggify]\nsites = [1]\n", 8, "entries must be strings"},
      {"unknown_key_in_buggify", kBase + "[buggify]\nsite = [\"net.delay\"]\n", 8,
       "did you mean \"sites\""},
      {"unknown_client", kBase + "[clients.rdkafka]\nacks = 1\n", 7,
       "unknown client \"rdkafka\" in [clients]"},
      {"client_not_table", kBase + "[clients]\nlibrdkafka = 1\n", 8,
       "clients.librdkafka must be a table"},
      {"client_bad_key", kBase + "[clients.librdkafka]\n\"linger ms\" = 5\n", 8,
       "bad setting name \"linger ms\""},
      {"client_bad_value", kBase + "[clients.librdkafka]\n\"linger.ms\" = 1.5\n", 8,
       "must be a string, an integer or a boolean"},
      {"known_on_bad_range",
       kBase + "[expect]\nverdict = \"safety\"\nsignature = \"x@librdkafka\"\n"
               "known_on = \"librdkafka@2.15..2.0\"\n",
       10, "expect.known_on: bad version range \"2.15..2.0\": its low end is above its high end"},
      {"known_on_without_signature",
       kBase + "[expect]\nverdict = \"safety\"\nknown_on = \"librdkafka@2.0.2\"\n", 9,
       "expect.known_on is set but signature is not"},
  };
}

// Each kind of malformed input gives exactly one line, "origin:LINE:COL:
// message (hint: ...)", pointing at the offending line; nothing crashes.
TEST(ScenarioErrors, EachMistakeGivesOneLineAtItsPosition) {
  const std::vector<MalformedCase> cases = MalformedCases();
  EXPECT_GE(cases.size(), 25u);
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Scenario> s = ParseScenario(c.text, "origin");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(ErrorLine(s.status()), c.line) << s.status().message();
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.needle));
  }
}

// Canary for the table above: the base it starts from is itself valid, so
// each case fails because of its own change.
TEST(ScenarioErrors, TheBaseOfTheMalformedCasesIsValid) {
  absl::StatusOr<Scenario> s = ParseScenario(kBase, "origin");
  EXPECT_TRUE(s.ok()) << s.status();
}

// The column points at the key or value: an unknown key at its first
// character, a bad value at its start.
TEST(ScenarioErrors, ColumnPointsAtTheKeyOrValue) {
  absl::StatusOr<Scenario> s = ParseScenario(kBase + "[schedule]\n  polcy = \"fifo\"\n", "origin");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith("origin:8:3: "));
  s = ParseScenario(kBase + "[schedule]\npct_depth =   99\n", "origin");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith("origin:8:15: "));
}

// [buggify] sites parse into canonical order, whatever the file's order; an
// empty list is the same as no section.
TEST(ScenarioParse, BuggifySites) {
  absl::StatusOr<Scenario> s = ParseScenario(
      kBase + "[buggify]\nsites = [\"broker.slow_fetch\", \"net.slow_connect\", \"net.delay\"]\n",
      "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->buggify.sites,
            (std::vector<std::string>{"net.delay", "net.slow_connect", "broker.slow_fetch"}));
  s = ParseScenario("buggify = { sites = [] }\n" + kBase, "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, ParseScenario(kBase, "origin").value());
  // Every name the format lists parses.
  std::string all = kBase + "[buggify]\nsites = [";
  for (const std::string_view site : BuggifySiteNames()) {
    absl::StrAppend(&all, "\"", std::string(site), "\",");
  }
  s = ParseScenario(all + "]\n", "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->buggify.sites.size(), BuggifySiteNames().size());
  EXPECT_EQ(BuggifySiteNames().size(), 5u);
}

// An unknown site is one line at the entry's line and column, and the hint
// lists the valid names.
TEST(ScenarioErrors, UnknownBuggifySiteAtItsColumnWithTheValidNames) {
  absl::StatusOr<Scenario> s =
      ParseScenario(kBase + "[buggify]\nsites = [\"net.delay\", \"net.dealy\"]\n", "origin");
  ASSERT_FALSE(s.ok());
  const std::string message(s.status().message());
  EXPECT_THAT(message, ::testing::StartsWith("origin:8:23: unknown buggify site \"net.dealy\""));
  EXPECT_THAT(message, HasSubstr("did you mean \"net.delay\"?"));
  for (const std::string_view site : BuggifySiteNames()) {
    EXPECT_THAT(message, HasSubstr(std::string(site)));
  }
  s = ParseScenario(kBase + "[buggify]\nsites = [\"everything\"]\n", "origin");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("(hint: use one of: net.delay, net.slow_connect, broker.slow_request, "
                        "broker.slow_metadata, broker.slow_fetch)"));
  ErrorLine(s.status());
}

// [clients."NAME"]: each client's own settings, values as text, sorted by
// key; they print back and parse to the same scenario.
TEST(ScenarioParse, ClientSettings) {
  absl::StatusOr<Scenario> s = ParseScenario(
      kBase +
          "[clients.librdkafka]\n\"linger.ms\" = 5\n\"enable.idempotence\" = true\n"
          "\"compression.type\" = \"none\"\n[clients.kafkajs]\nconcurrent_sends = 4\n",
      "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->clients.size(), 2u);
  EXPECT_EQ(s->clients[0].name, "kafkajs");
  EXPECT_EQ(s->clients[1].name, "librdkafka");
  using KV = std::pair<std::string, std::string>;
  EXPECT_EQ(s->clients[1].settings,
            (std::vector<KV>{
                {"compression.type", "none"}, {"enable.idempotence", "true"}, {"linger.ms", "5"}}));
  ASSERT_NE(s->Client("kafkajs"), nullptr);
  EXPECT_EQ(s->Client("sarama"), nullptr);
  absl::StatusOr<Scenario> again = ParseScenario(PrintScenario(*s), "printed");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *s);
}

// More than 10,000 faults are refused at the first one over the limit.
TEST(ScenarioErrors, TooManyFaults) {
  std::string text = kBase;
  for (int i = 0; i < 10001; ++i) text += "[[faults]]\nkind = \"reset\"\nat = \"1s\"\n";
  absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(ErrorLine(s.status()), 7 + 3 * 10000);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("too many faults entries"));
  // Canary: exactly the limit is accepted.
  text.resize(text.size() - std::string("[[faults]]\nkind = \"reset\"\nat = \"1s\"\n").size());
  EXPECT_TRUE(ParseScenario(text, "origin").ok());
}

// More than 64 topics are refused.
TEST(ScenarioErrors, TooManyTopics) {
  std::string text;
  for (int i = 0; i < 65; ++i) text += absl::StrCat("[[cluster.topics]]\nname = \"t", i, "\"\n");
  absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(ErrorLine(s.status()), 129);
}

// Inputs built to exhaust the stack or memory are refused, not crashed on:
// deep dotted keys and headers, deep arrays and inline tables, huge files.
TEST(ScenarioErrors, HostileInputsAreRefused) {
  std::string dotted = "a";
  for (int i = 0; i < 200000; ++i) dotted += ".a";
  std::string arrays = "x = " + std::string(100000, '[');
  std::string inline_tables = "x = ";
  for (int i = 0; i < 100000; ++i) inline_tables += "{a=";
  // Many lines each just under the dot limit, nested through arrays.
  std::string stacked = "x = [\n";
  for (int i = 0; i < 300; ++i) stacked += "{a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a = [\n";
  const std::string cases[] = {
      dotted + " = 1\n",
      "[" + dotted + "]\n",
      "[[" + dotted + "]]\n",
      arrays,
      inline_tables,
      stacked,
      kBase + "description = \"" + std::string(5 << 20, 'x') + "\"\n",
      std::string(1 << 20, '\0'),
      std::string("\xff\xfe\x00\x01", 4),
  };
  for (const std::string& text : cases) {
    absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
    ASSERT_FALSE(s.ok());
    ErrorLine(s.status());
  }
}

// Dots inside strings and comments do not count toward the dot limit.
TEST(ScenarioErrors, DotsInStringsAndCommentsAreFine) {
  const std::string dots(100, '.');
  const std::string text = "description = \"" + dots + "\" # " + dots + "\n# " + dots + "\n" +
                           kBase + "[workload]\ntopics = ['orders'] # '\"" + dots + "\n";
  absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->description, dots);
  const std::string multi =
      "description = \"\"\"\n" + dots + "\n\"\\\"\"\" " + dots + "\"\"\"\n" + kBase;
  s = ParseScenario(multi, "origin");
  ASSERT_TRUE(s.ok()) << s.status();
}

// LoadScenario reads a file, names it in errors, and reports a file it
// cannot read as NOT_FOUND.
TEST(ScenarioLoad, ReadsFilesAndReportsMissingOnes) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/scenario_test_good.toml";
  const std::string bad = dir + "/scenario_test_bad.toml";
  std::ofstream(good) << kFullExample;
  std::ofstream(bad) << kBase << "[schedule]\npolicy = \"chaos\"\n";
  absl::StatusOr<Scenario> s = LoadScenario(good);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, ExpectedFullExample());
  s = LoadScenario(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith(bad + ":8:10: "));
  const std::string missing = dir + "/scenario_test_no_such_file.toml";
  s = LoadScenario(missing);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(missing + ": cannot read file"));
  s = LoadScenario(dir);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

// The commented example in scenarios/README.md is a valid scenario, and its
// canonical form round-trips.
TEST(ScenarioReadme, ExampleIsValid) {
  const std::filesystem::path readme =
      std::filesystem::path(PRODSIM_SOURCE_DIR) / "scenarios" / "README.md";
  std::ifstream in(readme);
  ASSERT_TRUE(in) << "no " << readme;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t begin = text.find("```toml\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = text.find("\n```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  absl::StatusOr<Scenario> s = ParseScenario(text.substr(begin + 8, end - begin - 7), "README");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->faults.empty());
  EXPECT_TRUE(s->expect.has_value());
  EXPECT_EQ(ParseScenario(PrintScenario(*s), "printed").value(), *s);
}

// Canary for operator==: changing any one field makes scenarios differ, so
// the round-trip properties below can fail.
TEST(ScenarioEquality, EveryFieldCounts) {
  const Scenario base = ExpectedFullExample();
  std::vector<std::function<void(Scenario&)>> edits = {
      [](Scenario& s) { s.seed++; },
      [](Scenario& s) { s.description += "x"; },
      [](Scenario& s) { s.schedule.pct_depth++; },
      [](Scenario& s) { s.producer.version.reset(); },
      [](Scenario& s) { s.producer.flush_bytes = 1; },
      [](Scenario& s) { s.cluster.topics[1].partitions++; },
      [](Scenario& s) { s.cluster.replica_fetch_interval += Duration::Nanos(1); },
      [](Scenario& s) { s.network.latency.max += Duration::Nanos(1); },
      [](Scenario& s) { s.workload.topics.pop_back(); },
      [](Scenario& s) { s.workload.close_at.reset(); },
      [](Scenario& s) { s.faults[2].count++; },
      [](Scenario& s) { s.faults[1].heal = true; },
      [](Scenario& s) { s.faults.pop_back(); },
      [](Scenario& s) { s.buggify.sites.pop_back(); },
      [](Scenario& s) { s.limits.liveness_grace += Duration::Nanos(1); },
      [](Scenario& s) { s.expect->check.clear(); },
      [](Scenario& s) { s.expect.reset(); },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    SCOPED_TRACE(i);
    Scenario changed = base;
    edits[i](changed);
    EXPECT_FALSE(changed == base);
  }
  EXPECT_TRUE(ExpectedFullExample() == base);
}

// ---------------------------------------------------------------------------
// Generators of valid scenarios, for the round-trip property.

// A duration from lo to hi, often a round number of some unit.
Duration GenDuration(Duration lo, Duration hi) {
  static const std::vector<int64_t> kUnits = {1, 1000, 1000000, 1000000000, 60000000000};
  const int64_t unit = *rc::gen::elementOf(kUnits);
  const int64_t first = (lo.nanos() + unit - 1) / unit, last = hi.nanos() / unit;
  if (first > last) return lo;
  return Duration::Nanos(*rc::gen::inRange<int64_t>(first, last + 1) * unit);
}

template <typename T>
std::optional<T> Maybe(const std::function<T()>& make) {
  if (*rc::gen::arbitrary<bool>()) return make();
  return std::nullopt;
}

std::string OneOf(std::initializer_list<const char*> values) {
  const auto i = *rc::gen::inRange<size_t>(0, values.size());
  return values.begin()[i];
}

int32_t Int32In(int32_t lo, int32_t hi) {
  return static_cast<int32_t>(*rc::gen::inRange<int64_t>(lo, int64_t{hi} + 1));
}

// Text with every kind of character a TOML string must escape.
std::string GenText(size_t max_pieces) {
  static const std::vector<std::string> kPieces = {"a",
                                                   "Z",
                                                   "0",
                                                   " ",
                                                   ".",
                                                   "#",
                                                   "'",
                                                   "\"",
                                                   "\\",
                                                   "\n",
                                                   "\t",
                                                   "\r",
                                                   "\x01",
                                                   "\x7f",
                                                   std::string(1, '\0'),
                                                   "\xc3\xa9",
                                                   "\xe2\x86\x92",
                                                   "\xf0\x9f\x90\x9b",
                                                   "[",
                                                   "=",
                                                   "\"\"\""};
  const auto n = *rc::gen::inRange<size_t>(0, max_pieces + 1);
  std::string out;
  for (size_t i = 0; i < n; ++i) out += *rc::gen::elementOf(kPieces);
  return out;
}

ProducerSpec GenProducer() {
  ProducerSpec p;
  const Duration kDay = Duration::Seconds(86400);
  p.idempotent = Maybe<bool>([] { return *rc::gen::arbitrary<bool>(); });
  p.net_max_open_requests = Maybe<int32_t>([] { return Int32In(1, 1000); });
  p.net_read_timeout = Maybe<Duration>([&] { return GenDuration(Duration::Nanos(1), kDay); });
  p.net_dial_timeout = Maybe<Duration>([&] { return GenDuration(Duration::Nanos(1), kDay); });
  p.required_acks = Maybe<int32_t>([] { return Int32In(-1, 1); });
  p.timeout = Maybe<Duration>([&] { return GenDuration(Duration::Nanos(1), kDay); });
  p.retry_max = Maybe<int32_t>([] { return Int32In(0, 1000000); });
  p.retry_backoff = Maybe<Duration>([&] { return GenDuration(Duration(), kDay); });
  p.return_successes = Maybe<bool>([] { return *rc::gen::arbitrary<bool>(); });
  p.return_errors = Maybe<bool>([] { return *rc::gen::arbitrary<bool>(); });
  p.flush_messages = Maybe<int32_t>([] { return Int32In(0, 1000000); });
  p.flush_bytes = Maybe<int32_t>([] { return Int32In(0, INT32_MAX); });
  p.flush_frequency = Maybe<Duration>([&] { return GenDuration(Duration(), kDay); });
  p.flush_max_messages = Maybe<int32_t>([&] {
    return *rc::gen::arbitrary<bool>() ? 0 : Int32In(p.flush_messages.value_or(0), 1000000);
  });
  p.max_message_bytes = Maybe<int32_t>([] { return Int32In(1, 100000000); });
  p.channel_buffer_size = Maybe<int32_t>([] { return Int32In(0, 1000000); });
  p.metadata_retry_max = Maybe<int32_t>([] { return Int32In(0, 1000000); });
  p.metadata_retry_backoff = Maybe<Duration>([&] { return GenDuration(Duration(), kDay); });
  p.version = Maybe<std::string>([] {
    return OneOf({"2.6.0", "0.11.0.2", "3.6", "1.0.0", "2.8.1"});
  });
  return p;
}

ClusterSpec GenCluster() {
  ClusterSpec c;
  c.brokers = Int32In(1, 16);
  const int32_t topics = Int32In(1, 6);
  int32_t min_rf = c.brokers;
  for (int32_t i = 0; i < topics; ++i) {
    TopicSpec t;
    t.name = absl::StrCat("t", i, OneOf({"", ".log", "_x", "-Y9"}));
    t.partitions = Int32In(1, 64);
    t.replication_factor = Int32In(1, c.brokers);
    min_rf = std::min(min_rf, t.replication_factor);
    c.topics.push_back(t);
  }
  c.min_insync_replicas = Int32In(1, min_rf);
  c.kafka_version = *kafka::ParseKafkaVersion(OneOf({"0.11", "2.0", "2.4", "2.6"}));
  c.metadata_delay_max = GenDuration(Duration(), Duration::Seconds(10));
  c.replica_fetch_interval = GenDuration(Duration::Nanos(1), Duration::Seconds(10));
  c.replica_lag_time_max = GenDuration(Duration::Nanos(1), Duration::Seconds(100));
  return c;
}

LatencySpec GenLatency() {
  LatencySpec l;
  const std::string kind = OneOf({"constant", "uniform", "exponential"});
  schema::FromValue(kind, &l.kind);
  l.min = GenDuration(Duration(), Duration::Seconds(1));
  if (kind == "uniform") l.max = GenDuration(l.min, Duration::Seconds(2));
  if (kind == "exponential") {
    l.mean = GenDuration(Duration(), Duration::Seconds(1));
    l.cap = GenDuration(l.min, Duration::Seconds(5));
  }
  return l;
}

const TopicSpec& GenTopicOf(const ClusterSpec& c) {
  return c.topics[*rc::gen::inRange<size_t>(0, c.topics.size())];
}

// One fault of a random kind, using only the fields its kind reads. An
// inject_error may ask for an error its scenario cannot get from Kafka;
// GenScenario turns those into mock.error.
FaultSpec GenFault(const ClusterSpec& c, Duration time) {
  FaultSpec f;
  const std::string k =
      OneOf({"reset", "partition", "crash", "move_leader", "shrink_isr", "inject_error",
             "lose_response", "stall_response", "delay_processing", "latency_spike",
             "pause_fetching", "mock.error", "mock.drop_response", "blackhole", "connect_hang"});
  f.kind = *fault_models::FaultKindFromName(k);
  f.at = GenDuration(Duration(), time - Duration::Nanos(1));
  f.broker = Int32In(0, c.brokers - 1);
  const bool count_based = k == "inject_error" || k == "lose_response" || k == "stall_response" ||
                           k == "mock.error" || k == "mock.drop_response";
  if (k == "connect_hang") {
    f.duration = GenDuration(Duration(), time - f.at);  // required
  } else if (k != "reset" && k != "move_leader" && k != "blackhole" && !count_based) {
    f.duration = Maybe<Duration>([&] { return GenDuration(Duration(), time - f.at); });
  }
  if (k == "partition" || k == "crash") f.heal = *rc::gen::arbitrary<bool>();
  if (k == "partition" || k == "latency_spike") {
    f.direction = *fault_models::DirectionFromKey(OneOf({"to_broker", "from_broker", "both"}));
  }
  const bool reads_topic =
      k == "move_leader" || k == "shrink_isr" || k == "inject_error" || k == "mock.error";
  if (reads_topic && *rc::gen::arbitrary<bool>()) {
    const TopicSpec& t = GenTopicOf(c);
    f.topic = t.name;
    f.partition = Int32In(0, t.partitions - 1);
  }
  if (k == "inject_error") {
    const std::string error = OneOf({"NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT",
                                     "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"});
    f.error = *kafka::ErrorCodeFromName(error);
    if (error == "NOT_ENOUGH_REPLICAS" || error == "NOT_ENOUGH_REPLICAS_AFTER_APPEND") {
      f.duration = Maybe<Duration>([&] { return GenDuration(Duration(), time - f.at); });
    }
  }
  if (k == "mock.error") {
    f.error = *kafka::ErrorCodeFromName(
        OneOf({"NOT_LEADER_OR_FOLLOWER", "NETWORK_EXCEPTION", "OUT_OF_ORDER_SEQUENCE_NUMBER"}));
    f.api = *fault_models::FaultApiFromKey(OneOf({"produce", "metadata", "init_producer_id"}));
  }
  if (k == "lose_response" || k == "stall_response") {
    f.api = *fault_models::FaultApiFromKey(OneOf({"produce", "metadata", "init_producer_id"}));
  }
  if (count_based) f.count = Int32In(1, 1000000);
  if (k == "delay_processing" || k == "latency_spike" || k == "stall_response") {
    f.extra = GenDuration(Duration::Nanos(1), Duration::Seconds(60));
  }
  return f;
}

WorkloadSpec GenWorkload(const ClusterSpec& c, Duration time) {
  WorkloadSpec w;
  w.messages = Int32In(0, 1000000);
  w.keys = Int32In(1, 1000000);
  const int32_t topics = Int32In(0, 4);
  for (int32_t i = 0; i < topics; ++i) w.topics.push_back(GenTopicOf(c).name);
  w.interval = GenDuration(Duration(), Duration::Seconds(10));
  w.burst = Int32In(1, 1000000);
  w.value_bytes = Int32In(0, 10000000);
  w.close_at = Maybe<Duration>([&] { return GenDuration(Duration(), time); });
  return w;
}

Scenario GenScenario() {
  Scenario s;
  s.seed = *rc::gen::arbitrary<uint64_t>() & kSeedMax;
  s.description = GenText(12);
  s.schedule.policy = *sim::ParsePolicy(OneOf({"fifo", "random", "pct", "go"}));
  s.schedule.pct_depth = Int32In(1, 20);
  s.schedule.pct_steps = *rc::gen::inRange<int64_t>(1, 10000000001);
  s.schedule.preempt_per_mille = Int32In(0, 1000);
  s.producer = GenProducer();
  s.cluster = GenCluster();
  s.network.latency = GenLatency();
  s.limits.steps = *rc::gen::inRange<int64_t>(1, 10000000001);
  s.limits.time = GenDuration(Duration::Nanos(1), Duration::Seconds(100000));
  s.limits.liveness_grace = GenDuration(Duration(), Duration::Seconds(1000));
  s.workload = GenWorkload(s.cluster, s.limits.time);
  const int32_t faults = Int32In(0, 6);
  for (int32_t i = 0; i < faults; ++i) s.faults.push_back(GenFault(s.cluster, s.limits.time));
  for (FaultSpec& f : s.faults) {
    if (f.kind == fault_models::FaultKind::kInjectError &&
        InjectErrorProblem(f, s.producer, s.cluster).has_value()) {
      f.kind = fault_models::FaultKind::kMockError;  // any error, for a MockBroker port
      f.duration.reset();
    }
  }
  for (const std::string_view site : BuggifySiteNames()) {
    if (*rc::gen::arbitrary<bool>()) s.buggify.sites.emplace_back(site);
  }
  s.expect = Maybe<ExpectSpec>([] {
    ExpectSpec e;
    e.verdict =
        *checks::ParseVerdict(OneOf({"pass", "safety", "liveness", "deadlock", "producer-assertion",
                                     "harness-error", "client-failure"}));
    if (e.verdict != checks::Verdict::kPass && *rc::gen::arbitrary<bool>()) {
      e.check = OneOf(
          {"acked-batches-in-order", "no-duplicates", "liveness", "no-broker-sequence-error"});
    }
    return e;
  });
  return s;
}

// For every valid scenario, parse(print(s)) == s, and printing is a fixed
// point.
RC_GTEST_PROP(ScenarioProperty, PrintThenParseIsTheIdentity, ()) {
  const Scenario s = GenScenario();
  const std::string text = PrintScenario(s);
  absl::StatusOr<Scenario> back = ParseScenario(text, "printed");
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == s);
  RC_ASSERT(PrintScenario(*back) == text);
}

// Any edit of a valid file either parses (and then round-trips) or gives
// one error line in the documented form; it never crashes.
RC_GTEST_PROP(ScenarioProperty, EditedFilesParseOrGiveOneLine, ()) {
  std::string text = PrintScenario(ExpectedFullExample());
  static const std::string kAlphabet = "[]{}=.,\"'#\\\n 0123456789-abcdefghijklmnopqrstuvwxyz_";
  const int edits = *rc::gen::inRange(1, 6);
  for (int i = 0; i < edits; ++i) {
    const auto at = *rc::gen::inRange<size_t>(0, text.size());
    const char c = kAlphabet[*rc::gen::inRange<size_t>(0, kAlphabet.size())];
    switch (*rc::gen::inRange(0, 3)) {
      case 0: text.erase(at, 1); break;
      case 1: text.insert(at, 1, c); break;
      default: text[at] = c; break;
    }
  }
  absl::StatusOr<Scenario> s = ParseScenario(text, "origin");
  if (s.ok()) {
    absl::StatusOr<Scenario> back = ParseScenario(PrintScenario(*s), "printed");
    RC_ASSERT(back.ok());
    RC_ASSERT(*back == *s);
  } else {
    static const std::regex kForm(R"(^origin:[0-9]+:[0-9]+: .+ \(hint: .+\)$)");
    const std::string message(s.status().message());
    RC_ASSERT(std::regex_match(message, kForm));
  }
}

}  // namespace
}  // namespace scenarios
