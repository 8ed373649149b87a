// Tests of Sarama's configuration defaults, validation and version parsing
// (config.cc), and of the error texts and message sizes (errors.cc,
// message.cc), against the values and strings of sarama v1.42.1.
#include "producer/config.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "producer/errors.h"
#include "producer/message.h"
#include "sim/kafka/types.h"

namespace sarama {
namespace {

using sim::Duration;

// Every field of config.h against the literal value Sarama's NewConfig sets.
void ExpectSaramaDefaults(const Config& c) {
  EXPECT_EQ(c.net.max_open_requests, 5);
  EXPECT_EQ(c.net.dial_timeout, Duration::Seconds(30));
  EXPECT_EQ(c.net.read_timeout, Duration::Seconds(30));
  EXPECT_EQ(c.net.write_timeout, Duration::Seconds(30));
  EXPECT_EQ(c.metadata.retry.max, 3);
  EXPECT_EQ(c.metadata.retry.backoff, Duration::Millis(250));
  EXPECT_EQ(c.metadata.refresh_frequency, Duration::Seconds(600));
  EXPECT_TRUE(c.metadata.full);
  EXPECT_EQ(c.metadata.timeout, Duration());
  EXPECT_TRUE(c.metadata.allow_auto_topic_creation);
  EXPECT_EQ(c.producer.max_message_bytes, 1000000);
  EXPECT_EQ(c.producer.required_acks, kWaitForLocal);
  EXPECT_EQ(c.producer.timeout, Duration::Seconds(10));
  EXPECT_EQ(c.producer.partitioner, PartitionerKind::kHash);
  EXPECT_FALSE(c.producer.partitioner_constructor);
  EXPECT_FALSE(c.producer.idempotent);
  EXPECT_FALSE(c.producer.return_.successes);
  EXPECT_TRUE(c.producer.return_.errors);
  EXPECT_EQ(c.producer.flush.bytes, 0);
  EXPECT_EQ(c.producer.flush.messages, 0);
  EXPECT_EQ(c.producer.flush.frequency, Duration());
  EXPECT_EQ(c.producer.flush.max_messages, 0);
  EXPECT_EQ(c.producer.retry.max, 3);
  EXPECT_EQ(c.producer.retry.backoff, Duration::Millis(100));
  EXPECT_FALSE(c.producer.retry.backoff_func);
  EXPECT_EQ(c.producer.transaction.id, "");
  EXPECT_EQ(c.producer.transaction.timeout, Duration::Seconds(60));
  EXPECT_EQ(c.producer.transaction.retry.max, 50);
  EXPECT_EQ(c.producer.transaction.retry.backoff, Duration::Millis(100));
  EXPECT_EQ(c.client_id, "sarama");
  EXPECT_EQ(c.channel_buffer_size, 256);
  EXPECT_TRUE(c.api_versions_request);
  EXPECT_EQ(c.version, (KafkaVersion{2, 1, 0}));
}

// NewConfig returns Sarama v1.42.1's defaults.
TEST(ConfigTest, NewConfigHasSaramaDefaults) { ExpectSaramaDefaults(NewConfig()); }

// The member initializers of config.h agree with NewConfig.
TEST(ConfigTest, DefaultConstructedConfigHasSaramaDefaults) { ExpectSaramaDefaults(Config{}); }

// Sarama's defaults validate.
TEST(ConfigTest, DefaultsValidate) { EXPECT_TRUE(NewConfig().Validate().ok()); }

// The configuration reported in IBM/sarama#2803 validates.
TEST(ConfigTest, Issue2803ConfigurationValidates) {
  Config c = NewConfig();
  c.producer.idempotent = true;
  c.net.max_open_requests = 1;
  c.producer.required_acks = kWaitForAll;
  c.producer.retry.max = 100000;
  c.producer.retry.backoff = Duration::Millis(100);
  c.producer.return_.successes = true;
  c.producer.return_.errors = true;
  c.version = V2_6_0_0;
  const absl::Status s = c.Validate();
  EXPECT_TRUE(s.ok()) << s;
}

// The idempotent producer with Sarama's default of five open requests is
// rejected with Sarama's message.
TEST(ConfigTest, IdempotentWithFiveOpenRequestsFails) {
  Config c = NewConfig();
  c.producer.idempotent = true;
  c.producer.required_acks = kWaitForAll;
  c.version = V2_6_0_0;
  ASSERT_EQ(c.net.max_open_requests, 5);
  const absl::Status s = c.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Idempotent producer requires Net.MaxOpenRequests to be 1");
}

// A valid idempotent configuration, to break one rule at a time.
Config IdempotentConfig() {
  Config c = NewConfig();
  c.producer.idempotent = true;
  c.net.max_open_requests = 1;
  c.producer.required_acks = kWaitForAll;
  c.version = V2_6_0_0;
  return c;
}

struct RuleCase {
  const char* name;
  std::function<void(Config&)> brk;  // breaks exactly one rule
  const char* message;               // Sarama's ConfigurationError text
};

std::vector<RuleCase> RuleCases() {
  return {
      {"net-max-open-requests", [](Config& c) { c.net.max_open_requests = 0; },
       "Net.MaxOpenRequests must be > 0"},
      {"net-dial-timeout", [](Config& c) { c.net.dial_timeout = Duration(); },
       "Net.DialTimeout must be > 0"},
      {"net-read-timeout", [](Config& c) { c.net.read_timeout = Duration::Millis(-1); },
       "Net.ReadTimeout must be > 0"},
      {"net-write-timeout", [](Config& c) { c.net.write_timeout = Duration(); },
       "Net.WriteTimeout must be > 0"},
      {"metadata-retry-max", [](Config& c) { c.metadata.retry.max = -1; },
       "Metadata.Retry.Max must be >= 0"},
      {"metadata-retry-backoff", [](Config& c) { c.metadata.retry.backoff = Duration::Nanos(-1); },
       "Metadata.Retry.Backoff must be >= 0"},
      {"metadata-refresh", [](Config& c) { c.metadata.refresh_frequency = Duration::Seconds(-1); },
       "Metadata.RefreshFrequency must be >= 0"},
      {"producer-max-message-bytes", [](Config& c) { c.producer.max_message_bytes = 0; },
       "Producer.MaxMessageBytes must be > 0"},
      {"producer-required-acks",
       [](Config& c) { c.producer.required_acks = static_cast<RequiredAcks>(-2); },
       "Producer.RequiredAcks must be >= -1"},
      {"producer-timeout", [](Config& c) { c.producer.timeout = Duration(); },
       "Producer.Timeout must be > 0"},
      {"flush-bytes", [](Config& c) { c.producer.flush.bytes = -1; },
       "Producer.Flush.Bytes must be >= 0"},
      {"flush-messages", [](Config& c) { c.producer.flush.messages = -1; },
       "Producer.Flush.Messages must be >= 0"},
      {"flush-frequency", [](Config& c) { c.producer.flush.frequency = Duration::Millis(-5); },
       "Producer.Flush.Frequency must be >= 0"},
      {"flush-max-messages", [](Config& c) { c.producer.flush.max_messages = -1; },
       "Producer.Flush.MaxMessages must be >= 0"},
      {"flush-max-below-messages",
       [](Config& c) {
         c.producer.flush.messages = 10;
         c.producer.flush.max_messages = 9;
       },
       "Producer.Flush.MaxMessages must be >= Producer.Flush.Messages when set"},
      {"producer-retry-max", [](Config& c) { c.producer.retry.max = -1; },
       "Producer.Retry.Max must be >= 0"},
      {"producer-retry-backoff",
       [](Config& c) { c.producer.retry.backoff = Duration::Millis(-100); },
       "Producer.Retry.Backoff must be >= 0"},
      {"idempotent-version",
       [](Config& c) {
         c.version = KafkaVersion{0, 10, 2};
       },
       "Idempotent producer requires Version >= V0_11_0_0"},
      {"idempotent-retry-max", [](Config& c) { c.producer.retry.max = 0; },
       "Idempotent producer requires Producer.Retry.Max >= 1"},
      {"idempotent-acks", [](Config& c) { c.producer.required_acks = kWaitForLocal; },
       "Idempotent producer requires Producer.RequiredAcks to be WaitForAll"},
      {"idempotent-open-requests", [](Config& c) { c.net.max_open_requests = 2; },
       "Idempotent producer requires Net.MaxOpenRequests to be 1"},
      {"transaction-needs-idempotent",
       [](Config& c) {
         c.producer.idempotent = false;
         c.producer.transaction.id = "txn-1";
       },
       "Transactional producer requires Idempotent to be true"},
      {"channel-buffer-size", [](Config& c) { c.channel_buffer_size = -1; },
       "ChannelBufferSize must be >= 0"},
      {"client-id-before-1.0",
       [](Config& c) {
         c.version = KafkaVersion{0, 11, 0};
         c.client_id = "my client";
       },
       "ClientID value \"my client\" is not valid for Kafka versions before 1.0.0"},
  };
}

// Each rule of Sarama's Validate, broken alone in an otherwise valid
// idempotent configuration, fails with Sarama's exact message.
TEST(ConfigTest, EachRuleFailsWithSaramasMessage) {
  for (const RuleCase& rc : RuleCases()) {
    SCOPED_TRACE(rc.name);
    Config c = IdempotentConfig();
    ASSERT_TRUE(c.Validate().ok());
    rc.brk(c);
    const absl::Status s = c.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), rc.message);
  }
}

// The edges of the rules: zero is allowed where Sarama says ">= 0", one open
// request and Retry.Max 1 satisfy the idempotent rules, and RequiredAcks -1
// passes the ">= -1" rule.
TEST(ConfigTest, RuleBoundariesPass) {
  Config c = IdempotentConfig();
  c.metadata.retry.max = 0;
  c.metadata.retry.backoff = Duration();
  c.metadata.refresh_frequency = Duration();
  c.producer.retry.max = 1;
  c.producer.retry.backoff = Duration();
  c.producer.flush.messages = 10;
  c.producer.flush.max_messages = 10;
  c.channel_buffer_size = 0;
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
  Config plain = NewConfig();
  plain.producer.required_acks = kNoResponse;
  plain.producer.flush.messages = 10;
  plain.producer.flush.max_messages = 0;  // 0 means "no limit": not compared
  EXPECT_TRUE(plain.Validate().ok()) << plain.Validate();
}

// When several rules are broken, the one Sarama checks first is reported.
TEST(ConfigTest, FirstRuleInSaramasOrderWins) {
  Config c = IdempotentConfig();
  c.producer.retry.max = -1;
  c.channel_buffer_size = -1;
  // Retry.Max -1 breaks the producer rule, not the idempotent one (which
  // tests == 0); ChannelBufferSize, checked last, is not reported.
  EXPECT_EQ(c.Validate().message(), "Producer.Retry.Max must be >= 0");
  c.metadata.retry.max = -1;
  EXPECT_EQ(c.Validate().message(), "Metadata.Retry.Max must be >= 0");
  c.net.write_timeout = Duration();
  EXPECT_EQ(c.Validate().message(), "Net.WriteTimeout must be > 0");
  c.net.max_open_requests = 0;
  EXPECT_EQ(c.Validate().message(), "Net.MaxOpenRequests must be > 0");
}

// The idempotent rules run in Sarama's order: version, retries, acks, then
// open requests.
TEST(ConfigTest, IdempotentRulesInSaramasOrder) {
  Config c = NewConfig();
  c.producer.idempotent = true;
  c.version = V0_10_0_0;
  c.producer.retry.max = 0;
  EXPECT_EQ(c.Validate().message(), "Idempotent producer requires Version >= V0_11_0_0");
  c.version = V0_11_0_0;
  EXPECT_EQ(c.Validate().message(), "Idempotent producer requires Producer.Retry.Max >= 1");
  c.producer.retry.max = 1;
  EXPECT_EQ(c.Validate().message(),
            "Idempotent producer requires Producer.RequiredAcks to be WaitForAll");
  c.producer.required_acks = kWaitForAll;
  EXPECT_EQ(c.Validate().message(), "Idempotent producer requires Net.MaxOpenRequests to be 1");
  c.net.max_open_requests = 1;
  EXPECT_TRUE(c.Validate().ok());
}

// A transactional id with the idempotent producer on is accepted (the
// transaction rules beyond that are not modelled).
TEST(ConfigTest, TransactionIdWithIdempotentValidates) {
  Config c = IdempotentConfig();
  c.producer.transaction.id = "txn-1";
  EXPECT_TRUE(c.Validate().ok());
}

// The pre-1.0 client id rule quotes the id as Go's %q does, and does not
// apply from 1.0 on.
TEST(ConfigTest, ClientIdRuleQuotesLikeGoAndStopsAt1_0) {
  Config c = NewConfig();
  c.version = KafkaVersion{0, 10, 2};
  c.client_id = "a\"b\\c\n\x01";
  EXPECT_EQ(c.Validate().message(),
            "ClientID value \"a\\\"b\\\\c\\n\\x01\" is not valid for Kafka versions before 1.0.0");
  c.client_id = "";
  EXPECT_EQ(c.Validate().message(),
            "ClientID value \"\" is not valid for Kafka versions before 1.0.0");
  c.client_id = "app-1.prod_A";
  EXPECT_TRUE(c.Validate().ok());
  c.client_id = "my client";
  c.version = V1_0_0_0;
  EXPECT_TRUE(c.Validate().ok());
}

// ParseKafkaVersion reads the spellings Sarama uses, and the short ones.
TEST(KafkaVersionTest, ParsesSaramaSpellings) {
  struct Case {
    const char* text;
    KafkaVersion want;
  };
  const Case cases[] = {
      {"2.6.0", {2, 6, 0}},     {"2.6", {2, 6, 0}},   {"0.11.0", {0, 11, 0}},
      {"0.11.0.2", {0, 11, 0}}, {"0.11", {0, 11, 0}}, {"0.8.2.0", {0, 8, 2}},
      {"0.10.2.1", {0, 10, 2}}, {"1.0.0", {1, 0, 0}}, {"2.6.3", {2, 6, 3}},
      {"3.6.0", {3, 6, 0}},     {"3.6", {3, 6, 0}},   {"2.1.0", kDefaultVersion},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.text);
    const absl::StatusOr<KafkaVersion> v = ParseKafkaVersion(tc.text);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, tc.want);
  }
}

// Malformed text is rejected with a message that shows the accepted forms.
TEST(KafkaVersionTest, RejectsMalformedText) {
  for (const char* text : {"", "2", "2.", ".6", "2..0", "2.6.0.0", "0.11.0.2.1", "v2.6.0", "2.6.x",
                           "2.6.0 ", "-2.6", "1234567.0"}) {
    SCOPED_TRACE(text);
    const absl::StatusOr<KafkaVersion> v = ParseKafkaVersion(text);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(v.status().message(),
              "invalid Kafka version \"" + std::string(text) +
                  "\": write MAJOR.MINOR[.PATCH] (\"2.6.0\", \"2.6\"), or before 1.0 "
                  "0.MINOR.PATCH[.BUILD] (\"0.11.0.2\")");
  }
}

// Versions outside Sarama v1.42.1's range, or of release lines Kafka never
// had, are rejected with a message that states the accepted range.
TEST(KafkaVersionTest, RejectsUnknownAndOutOfRange) {
  for (const char* text : {"0.8.1", "0.8.1.1", "0.7", "0.12.0", "1.2.0", "2.9.0", "3.6.1", "3.7.0",
                           "4.0.0", "10.0.0"}) {
    SCOPED_TRACE(text);
    const absl::StatusOr<KafkaVersion> v = ParseKafkaVersion(text);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().message(),
              "unknown Kafka version \"" + std::string(text) +
                  "\": Sarama v1.42.1 knows 0.8.2 to 3.6.0 (release lines 0.8-0.11, "
                  "1.0-1.1, 2.0-2.8 and 3.0-3.6)");
  }
}

// Sarama main knows the release lines up to 4.3 (MaxVersion 4.3.1); the
// v1.42.1 profile still refuses them, and main still refuses what no
// Sarama knows.
TEST(KafkaVersionTest, MainKnowsReleasesUpTo4_3) {
  for (const char* text : {"3.7.0", "3.9.2", "4.0", "4.3.1"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(ParseKafkaVersion(text, Profile::kSaramaMain).ok());
    EXPECT_FALSE(ParseKafkaVersion(text, Profile::kSarama_1_42_1).ok());
  }
  for (const char* text : {"2.9.0", "3.10.0", "4.3.2", "4.4.0", "5.0.0"}) {
    SCOPED_TRACE(text);
    const absl::StatusOr<KafkaVersion> v = ParseKafkaVersion(text, Profile::kSaramaMain);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().message(),
              "unknown Kafka version \"" + std::string(text) +
                  "\": Sarama main knows 0.8.2 to 4.3.1 (release lines 0.8-0.11, 1.0-1.1, "
                  "2.0-2.8, 3.0-3.9 and 4.0-4.3)");
  }
  EXPECT_TRUE(ParseKafkaVersion("2.6.0", Profile::kSaramaMain).ok());
}

// sarama main's NewConfig differs from v1.42.1's in MaxMessageBytes and the
// default Version only; its producer validation rules are the same.
TEST(ConfigTest, MainDefaults) {
  const Config old_defaults = NewConfig(Profile::kSarama_1_42_1);
  ExpectSaramaDefaults(old_defaults);
  Config main_defaults = NewConfig(Profile::kSaramaMain);
  EXPECT_EQ(main_defaults.producer.max_message_bytes, 1048576);
  EXPECT_EQ(main_defaults.version, V2_8_0_0);
  main_defaults.producer.max_message_bytes = old_defaults.producer.max_message_bytes;
  main_defaults.version = old_defaults.version;
  ExpectSaramaDefaults(main_defaults);
  Config idempotent = NewConfig(Profile::kSaramaMain);
  idempotent.producer.idempotent = true;
  idempotent.producer.required_acks = kWaitForAll;
  EXPECT_EQ(idempotent.Validate().message(),
            "Idempotent producer requires Net.MaxOpenRequests to be 1");
}

// ToString prints major.minor.patch, and ParseKafkaVersion reads it back.
TEST(KafkaVersionTest, ToStringRoundTrips) {
  EXPECT_EQ(V2_6_0_0.ToString(), "2.6.0");
  EXPECT_EQ(V0_11_0_0.ToString(), "0.11.0");
  for (const KafkaVersion& v : {V0_8_2_0, V0_10_0_0, V0_11_0_0, V1_0_0_0, V2_0_0_0, V2_1_0_0,
                                V2_4_0_0, V2_5_0_0, V2_6_0_0, V2_7_0_0, V3_6_0_0}) {
    SCOPED_TRACE(v.ToString());
    const absl::StatusOr<KafkaVersion> back = ParseKafkaVersion(v.ToString());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, v);
  }
}

// IsAtLeast compares component by component, as Sarama's does.
TEST(KafkaVersionTest, IsAtLeastOrdersComponents) {
  EXPECT_TRUE(V2_6_0_0.IsAtLeast(V0_11_0_0));
  EXPECT_FALSE(V0_10_0_0.IsAtLeast(V0_11_0_0));
  EXPECT_TRUE(V0_11_0_0.IsAtLeast(V0_11_0_0));
  EXPECT_FALSE((KafkaVersion{0, 8, 2}).IsAtLeast(KafkaVersion{0, 8, 3}));
  EXPECT_TRUE((KafkaVersion{1, 0, 0}).IsAtLeast(KafkaVersion{0, 11, 9}));
}

// Error texts. (They live here until errors.cc has a test file of its own.)

// Each Kafka error code prints as Sarama's KError.Error().
TEST(ErrorTest, KafkaCodesPrintSaramasText) {
  using kafka::ErrorCode;
  struct Case {
    ErrorCode code;
    const char* text;
  };
  const Case cases[] = {
      {ErrorCode::OFFSET_OUT_OF_RANGE,
       "kafka server: The requested offset is outside the range of offsets maintained by the "
       "server for the given topic/partition"},
      {ErrorCode::CORRUPT_MESSAGE, "kafka server: Message contents does not match its CRC"},
      {ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
       "kafka server: Request was for a topic or partition that does not exist on this broker"},
      {ErrorCode::LEADER_NOT_AVAILABLE,
       "kafka server: In the middle of a leadership election, there is currently no leader for "
       "this partition and hence it is unavailable for writes"},
      {ErrorCode::NOT_LEADER_OR_FOLLOWER,
       "kafka server: Tried to send a message to a replica that is not the leader for some "
       "partition. Your metadata is out of date"},
      {ErrorCode::REQUEST_TIMED_OUT,
       "kafka server: Request exceeded the user-specified time limit in the request"},
      {ErrorCode::BROKER_NOT_AVAILABLE,
       "kafka server: Broker not available. Not a client facing error, we should never receive "
       "this!!!"},
      {ErrorCode::REPLICA_NOT_AVAILABLE,
       "kafka server: Replica information not available, one or more brokers are down"},
      {ErrorCode::MESSAGE_TOO_LARGE,
       "kafka server: Message was too large, server rejected it to avoid allocation error"},
      {ErrorCode::NETWORK_EXCEPTION,
       "kafka server: The server disconnected before a response was received"},
      {ErrorCode::NOT_ENOUGH_REPLICAS,
       "kafka server: Messages are rejected since there are fewer in-sync replicas than required"},
      {ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND,
       "kafka server: Messages are written to the log, but to fewer in-sync replicas than "
       "required"},
      {ErrorCode::INVALID_REQUIRED_ACKS,
       "kafka server: The number of required acks is invalid (should be either -1, 0, or 1)"},
      {ErrorCode::UNSUPPORTED_VERSION, "kafka server: The version of API is not supported"},
      {ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
       "kafka server: The broker received an out of order sequence number"},
      {ErrorCode::DUPLICATE_SEQUENCE_NUMBER,
       "kafka server: The broker received a duplicate sequence number"},
      {ErrorCode::INVALID_PRODUCER_EPOCH,
       "kafka server: Producer attempted an operation with an old epoch"},
      {ErrorCode::UNKNOWN_PRODUCER_ID,
       "kafka server: The broker could not locate the producer metadata associated with the "
       "Producer ID"},
      {ErrorCode::INVALID_RECORD,
       "kafka server: This record has failed the validation on broker and hence will be "
       "rejected"},
      {ErrorCode::UNKNOWN_SERVER_ERROR, "kafka server: Unexpected (unknown?) server error"},
      {ErrorCode::KAFKA_STORAGE_ERROR,
       "kafka server: Disk error when trying to access log file on the disk"},
      {ErrorCode::LISTENER_NOT_FOUND,
       "kafka server: There is no listener on the leader broker that matches the listener on "
       "which metadata request was processed"},
      // Sarama's KError.Error for a code it does not name.
      {static_cast<ErrorCode>(999), "Unknown error, how did this happen? Error code = 999"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(std::string(kafka::ErrorCodeName(tc.code)));
    const Error e = Error::Kafka(tc.code);
    EXPECT_FALSE(e.ok());
    EXPECT_TRUE(e.Is(tc.code));
    EXPECT_TRUE(e.Is(ErrorKind::kKafka));
    EXPECT_EQ(e.code(), tc.code);
    EXPECT_EQ(e.ToString(), tc.text);
  }
}

// Code NONE is no error at all, and a code outside the enum prints Sarama's
// fallback text.
TEST(ErrorTest, NoneIsNoErrorAndUnknownCodesFallBack) {
  const Error none = Error::Kafka(kafka::ErrorCode::NONE);
  EXPECT_TRUE(none.ok());
  EXPECT_FALSE(static_cast<bool>(none));
  EXPECT_EQ(none, kNoError);
  EXPECT_EQ(none.ToString(), "<nil>");
  EXPECT_EQ(Error::Kafka(static_cast<kafka::ErrorCode>(90)).ToString(),
            "Unknown error, how did this happen? Error code = 90");
}

// The sentinel errors print errors.go's texts; with a message, as Sarama's
// Wrap prints them.
TEST(ErrorTest, SentinelsPrintSaramasText) {
  struct Case {
    ErrorKind kind;
    const char* text;
  };
  const Case cases[] = {
      {ErrorKind::kShuttingDown, "kafka: message received by producer in process of shutting down"},
      {ErrorKind::kOutOfBrokers, "kafka: client has run out of available brokers to talk to"},
      {ErrorKind::kNotConnected, "kafka: broker not connected"},
      {ErrorKind::kAlreadyConnected, "kafka: broker connection already initiated"},
      {ErrorKind::kClosedClient, "kafka: tried to use a client that was closed"},
      {ErrorKind::kIncompleteResponse,
       "kafka: response did not contain all the expected topic/partition blocks"},
      {ErrorKind::kBreakerOpen, "circuit breaker is open"},
      {ErrorKind::kInvalidPartition, "kafka: partitioner returned an invalid partition index"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.text);
    const Error e = Error::Of(tc.kind);
    EXPECT_TRUE(static_cast<bool>(e));
    EXPECT_TRUE(e.Is(tc.kind));
    EXPECT_EQ(e.ToString(), tc.text);
  }
  EXPECT_EQ(Error::Of(ErrorKind::kOutOfBrokers, "EOF").ToString(),
            "kafka: client has run out of available brokers to talk to: EOF");
}

// Network, configuration, decoding and assertion errors print the message
// they were given; equal kinds with different messages differ.
TEST(ErrorTest, MessageKindsPrintTheirMessage) {
  const Error net = Error::Network("read tcp 10.0.0.1:9092: i/o timeout");
  EXPECT_TRUE(net.Is(ErrorKind::kNetwork));
  EXPECT_EQ(net.ToString(), "read tcp 10.0.0.1:9092: i/o timeout");
  EXPECT_EQ(Error::Of(ErrorKind::kConfiguration,
                      "kafka: invalid configuration (Producing headers requires Kafka at least "
                      "v0.11)")
                .ToString(),
            "kafka: invalid configuration (Producing headers requires Kafka at least v0.11)");
  EXPECT_EQ(Error::Of(ErrorKind::kProduceSetAssertion,
                      "assertion failed: message out of sequence added to a batch")
                .ToString(),
            "assertion failed: message out of sequence added to a batch");
  EXPECT_EQ(Error::Of(ErrorKind::kDecoding, "x").ToString(), "x");
  EXPECT_FALSE(Error::Network("a") == Error::Network("b"));
  EXPECT_TRUE(Error::Network("a") == Error::Network("a"));
}

// Message size and reset. (Here until message.cc has a test file.)

// ByteSize counts Sarama's overheads per record format, plus key and value.
TEST(MessageTest, ByteSizeMatchesSarama) {
  ProducerMessage m;
  EXPECT_EQ(m.ByteSize(2), 36);  // maximumRecordOverhead = 5*5 + 10 + 1
  EXPECT_EQ(m.ByteSize(1), 26);  // producerMessageOverhead
  m.key = "";
  EXPECT_EQ(m.ByteSize(2), 36);
  m.key = "key-1";
  m.value_bytes = 100;
  EXPECT_EQ(m.ByteSize(2), 36 + 5 + 100);
  EXPECT_EQ(m.ByteSize(1), 26 + 5 + 100);
}

// Clear resets the retry bookkeeping only, as Sarama's clear does.
TEST(MessageTest, ClearResetsRetryStateOnly) {
  ProducerMessage m;
  m.topic = "t";
  m.key = "k";
  m.partition = 3;
  m.offset = 42;
  m.retries = 2;
  m.flags = static_cast<int8_t>(kSyn | kFin);
  m.sequence_number = 17;
  m.producer_epoch = 4;
  m.has_sequence = true;
  m.Clear();
  EXPECT_EQ(m.retries, 0);
  EXPECT_EQ(m.flags, 0);
  EXPECT_EQ(m.sequence_number, 0);
  EXPECT_EQ(m.producer_epoch, 0);
  EXPECT_FALSE(m.has_sequence);
  EXPECT_EQ(m.topic, "t");
  EXPECT_EQ(m.key, "k");
  EXPECT_EQ(m.partition, 3);
  EXPECT_EQ(m.offset, 42);
}

}  // namespace
}  // namespace sarama
