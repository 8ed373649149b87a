// Config: Sarama's client and producer configuration, the fields that the
// model uses, with Sarama's names (sarama config.go, v1.42.1), its defaults
// (NewConfig) and its validation rules (Config.Validate).
//
// Durations are sim::Duration. Only what changes the producer's behaviour is
// here: no TLS, SASL, metrics, compression codecs or consumer settings.
#ifndef PRODSIM_PRODUCER_CONFIG_H_
#define PRODSIM_PRODUCER_CONFIG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "producer/profile.h"
#include "sim/core/time.h"

namespace sarama {

class Partitioner;
struct ProducerMessage;

// sarama: KafkaVersion, compared by IsAtLeast. Only the versions that the
// producer's code paths distinguish, plus the common ones users set.
struct KafkaVersion {
  int major = 0, minor = 0, patch = 0;
  constexpr bool IsAtLeast(const KafkaVersion& o) const {
    if (major != o.major) return major > o.major;
    if (minor != o.minor) return minor > o.minor;
    return patch >= o.patch;
  }
  constexpr bool operator==(const KafkaVersion&) const = default;
  std::string ToString() const;  // "2.6.0"
};
inline constexpr KafkaVersion V0_8_2_0{0, 8, 2};
inline constexpr KafkaVersion V0_10_0_0{0, 10, 0};
inline constexpr KafkaVersion V0_11_0_0{0, 11, 0};
inline constexpr KafkaVersion V1_0_0_0{1, 0, 0};
inline constexpr KafkaVersion V2_0_0_0{2, 0, 0};
inline constexpr KafkaVersion V2_1_0_0{2, 1, 0};
inline constexpr KafkaVersion V2_4_0_0{2, 4, 0};
inline constexpr KafkaVersion V2_5_0_0{2, 5, 0};
inline constexpr KafkaVersion V2_6_0_0{2, 6, 0};
inline constexpr KafkaVersion V2_7_0_0{2, 7, 0};
inline constexpr KafkaVersion V2_8_0_0{2, 8, 0};
inline constexpr KafkaVersion V3_6_0_0{3, 6, 0};
inline constexpr KafkaVersion V3_9_0_0{3, 9, 0};
inline constexpr KafkaVersion V4_3_1_0{4, 3, 1};
// sarama: DefaultVersion in v1.42.1.
inline constexpr KafkaVersion kDefaultVersion = V2_1_0_0;
// sarama main: DefaultVersion (a15eb5ed, #3676).
inline constexpr KafkaVersion kDefaultVersionMain = V2_8_0_0;
// Parses "2.6.0", "0.11.0", "2.6" (patch 0); rejects versions Sarama does
// not know (below 0.8.2 or above 3.6).
absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text);
// The same for a profile: sarama main also knows 3.7 to 4.3 (its MaxVersion
// is 4.3.1).
absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text, Profile profile);

// sarama: RequiredAcks.
enum RequiredAcks : int16_t { kNoResponse = 0, kWaitForLocal = 1, kWaitForAll = -1 };

// sarama: the built-in partitioners (Partitioner constructors).
enum class PartitionerKind { kHash, kRandom, kManual, kRoundRobin };

struct Config {
  struct NetConfig {
    int max_open_requests = 5;                                 // Net.MaxOpenRequests
    sim::Duration dial_timeout = sim::Duration::Seconds(30);   // Net.DialTimeout
    sim::Duration read_timeout = sim::Duration::Seconds(30);   // Net.ReadTimeout
    sim::Duration write_timeout = sim::Duration::Seconds(30);  // Net.WriteTimeout
  } net;

  struct MetadataConfig {
    struct {
      int max = 3;                                         // Metadata.Retry.Max
      sim::Duration backoff = sim::Duration::Millis(250);  // Metadata.Retry.Backoff
    } retry;
    sim::Duration refresh_frequency = sim::Duration::Seconds(600);  // Metadata.RefreshFrequency
    bool full = true;                                               // Metadata.Full
    sim::Duration timeout;                                          // Metadata.Timeout (0: none)
    bool allow_auto_topic_creation = true;  // Metadata.AllowAutoTopicCreation
    // Metadata.SingleFlight: sarama main only (e566ac67, on by default);
    // v1.42.1 has no such option and its model never reads this.
    bool single_flight = true;
  } metadata;

  struct ProducerConfig {
    int max_message_bytes = 1000000;                       // Producer.MaxMessageBytes
    RequiredAcks required_acks = kWaitForLocal;            // Producer.RequiredAcks
    sim::Duration timeout = sim::Duration::Seconds(10);    // Producer.Timeout
    PartitionerKind partitioner = PartitionerKind::kHash;  // Producer.Partitioner
    // A user's PartitionerConstructor; when set, it replaces `partitioner`.
    std::function<std::unique_ptr<Partitioner>(const std::string& topic)> partitioner_constructor;
    bool idempotent = false;  // Producer.Idempotent
    struct {
      bool successes = false;  // Producer.Return.Successes
      bool errors = true;      // Producer.Return.Errors
    } return_;
    struct {
      int bytes = 0;            // Producer.Flush.Bytes
      int messages = 0;         // Producer.Flush.Messages
      sim::Duration frequency;  // Producer.Flush.Frequency
      int max_messages = 0;     // Producer.Flush.MaxMessages
    } flush;
    struct {
      int max = 3;                                         // Producer.Retry.Max
      sim::Duration backoff = sim::Duration::Millis(100);  // Producer.Retry.Backoff
      // Producer.Retry.BackoffFunc(retries, maxRetries); empty: use backoff.
      std::function<sim::Duration(int, int)> backoff_func;
    } retry;
    struct {
      std::string id;  // Producer.Transaction.ID (transactions are not modelled)
      sim::Duration timeout = sim::Duration::Seconds(60);
      struct {
        int max = 50;
        sim::Duration backoff = sim::Duration::Millis(100);
      } retry;
    } transaction;
  } producer;

  std::string client_id = "sarama";        // ClientID
  int channel_buffer_size = 256;           // ChannelBufferSize
  bool api_versions_request = true;        // ApiVersionsRequest
  KafkaVersion version = kDefaultVersion;  // Version

  // NOT a Sarama setting: test-only switches that break the model on
  // purpose, so that a test can show a check catches the bug (a canary).
  // All off by default, and off in every profile; Validate ignores them.
  struct TestDefects {
    // The responseReceiver reads a Produce response without a deadline,
    // where Sarama's readFull sets Net.ReadTimeout (broker.go): a request
    // whose response never comes wedges its broker's request path.
    bool no_read_timeout = false;
    // Retries wait no Retry.Backoff (RetryBackoff gives zero), where
    // Sarama's partitionProducer.backoff and (main) retryBatch sleep it.
    bool no_retry_backoff = false;
  } test_defects;

  // sarama: Config.Validate. The first rule broken, as Sarama's
  // ConfigurationError text, e.g. "Producer.Retry.Max must be >= 0".
  absl::Status Validate() const;
};

// sarama: NewConfig (the defaults above, spelled out in one place).
Config NewConfig();
// The defaults of a profile's Sarama. Main's NewConfig differs from
// v1.42.1's in Producer.MaxMessageBytes (1 MiB, 80b180c1) and Version
// (2.8.0, a15eb5ed) and has Metadata.SingleFlight (true, e566ac67); its
// new Producer.Retry.MaxBufferLength/MaxBufferBytes (0: unlimited) are not
// modelled. Main's Config.Validate has the same producer rules (Idempotent
// still requires Net.MaxOpenRequests == 1, WaitForAll, Retry.Max >= 1 and
// Version >= 0.11).
Config NewConfig(Profile profile);

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_CONFIG_H_
