// Sarama's configuration defaults, validation and Kafka version parsing
// (sarama v1.42.1 config.go, utils.go), for the fields in config.h.
//
// Validate keeps Sarama's rule order and its messages word for word, so a
// configuration error here reads like the one Sarama would return. Rules for
// settings the model does not have (SASL, TLS, Admin, compression, consumer)
// are left out; where a rule cannot be broken in C++ it says why below.
#include "producer/config.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"

namespace sarama {
namespace {

absl::Status ConfigError(std::string_view text) {
  return absl::InvalidArgumentError(std::string(text));
}

// The Kafka release lines Sarama v1.42.1 names in SupportedVersions, as
// (major, minor). Any patch level within a line is accepted: Sarama compares
// versions only with IsAtLeast, and real patch releases (2.6.3, 0.11.0.3)
// exist that its list omits.
struct ReleaseLine {
  int major;
  int minor;
};
constexpr ReleaseLine kReleaseLines[] = {
    {0, 8}, {0, 9}, {0, 10}, {0, 11}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4},
    {2, 5}, {2, 6}, {2, 7},  {2, 8},  {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}, {3, 6},
};
// The release lines sarama main adds (utils.go at 282cd488).
constexpr ReleaseLine kReleaseLinesMain[] = {
    {3, 7}, {3, 8}, {3, 9}, {4, 0}, {4, 1}, {4, 2}, {4, 3},
};
// sarama utils.go: MinVersion and MaxVersion (v1.42.1; main's MaxVersion
// is 4.3.1).
constexpr KafkaVersion kMinVersion = V0_8_2_0;
constexpr KafkaVersion kMaxVersion = V3_6_0_0;
constexpr KafkaVersion kMaxVersionMain = V4_3_1_0;
// Each component has at most this many digits, so it fits an int.
constexpr size_t kVersionDigitsMax = 6;

bool IsKnownLine(const KafkaVersion& v, Profile profile) {
  for (const ReleaseLine& line : kReleaseLines) {
    if (line.major == v.major && line.minor == v.minor) return true;
  }
  if (profile != Profile::kSaramaMain) return false;
  for (const ReleaseLine& line : kReleaseLinesMain) {
    if (line.major == v.major && line.minor == v.minor) return true;
  }
  return false;
}

// Splits "a.b.c" into its decimal components; false if any component is
// empty, has a character other than an ASCII digit, or is too long.
bool SplitVersion(std::string_view text, std::vector<int>* parts) {
  size_t start = 0;
  for (;;) {
    const size_t dot = text.find('.', start);
    const std::string_view piece =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (piece.empty() || piece.size() > kVersionDigitsMax) return false;
    int value = 0;
    for (const char c : piece) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    parts->push_back(value);
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Go's strconv.Quote, as fmt's %q prints a string, for ClientID in Validate's
// message. ASCII is quoted exactly as Go does; bytes of 0x80 and above are
// kept as they are (Go keeps printable UTF-8, and escapes invalid UTF-8 and
// non-printable runes as \x or \u, which a client id is very unlikely to hold).
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\x%02x", c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

// sarama config.go: validClientID, `\A[A-Za-z0-9._-]+\z`.
bool IsValidClientId(std::string_view id) {
  if (id.empty()) return false;
  for (const char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// sarama v1.42.1 config.go: Config.Validate, the "validate Net values" switch.
// The SASL cases that follow it in Sarama are not modelled.
absl::Status ValidateNet(const Config::NetConfig& net) {
  if (net.max_open_requests <= 0) return ConfigError("Net.MaxOpenRequests must be > 0");
  if (net.dial_timeout <= sim::Duration()) return ConfigError("Net.DialTimeout must be > 0");
  if (net.read_timeout <= sim::Duration()) return ConfigError("Net.ReadTimeout must be > 0");
  if (net.write_timeout <= sim::Duration()) {
    return ConfigError("Net.WriteTimeout must be > 0");
  }
  return absl::OkStatus();
}

// sarama v1.42.1 config.go: Config.Validate, the "validate the Metadata
// values" switch. (Sarama checks Admin.Timeout between Net and Metadata;
// Admin is not modelled.) Metadata.Timeout has no rule in v1.42.1.
absl::Status ValidateMetadata(const Config::MetadataConfig& metadata) {
  if (metadata.retry.max < 0) return ConfigError("Metadata.Retry.Max must be >= 0");
  if (metadata.retry.backoff < sim::Duration()) {
    return ConfigError("Metadata.Retry.Backoff must be >= 0");
  }
  if (metadata.refresh_frequency < sim::Duration()) {
    return ConfigError("Metadata.RefreshFrequency must be >= 0");
  }
  return absl::OkStatus();
}

// sarama v1.42.1 config.go: Config.Validate, the "validate the Producer
// values" switch. Sarama's "Producer.Partitioner must not be nil" cannot be
// broken here: the partitioner is a PartitionerKind, and an empty
// partitioner_constructor means "use the kind", not nil.
absl::Status ValidateProducer(const Config::ProducerConfig& p) {
  if (p.max_message_bytes <= 0) return ConfigError("Producer.MaxMessageBytes must be > 0");
  if (p.required_acks < -1) return ConfigError("Producer.RequiredAcks must be >= -1");
  if (p.timeout <= sim::Duration()) return ConfigError("Producer.Timeout must be > 0");
  if (p.flush.bytes < 0) return ConfigError("Producer.Flush.Bytes must be >= 0");
  if (p.flush.messages < 0) return ConfigError("Producer.Flush.Messages must be >= 0");
  if (p.flush.frequency < sim::Duration()) {
    return ConfigError("Producer.Flush.Frequency must be >= 0");
  }
  if (p.flush.max_messages < 0) return ConfigError("Producer.Flush.MaxMessages must be >= 0");
  if (p.flush.max_messages > 0 && p.flush.max_messages < p.flush.messages) {
    return ConfigError("Producer.Flush.MaxMessages must be >= Producer.Flush.Messages when set");
  }
  if (p.retry.max < 0) return ConfigError("Producer.Retry.Max must be >= 0");
  if (p.retry.backoff < sim::Duration()) return ConfigError("Producer.Retry.Backoff must be >= 0");
  return absl::OkStatus();
}

// sarama v1.42.1 config.go: Config.Validate, the Idempotent and Transaction
// rules. (The compression rules that Sarama checks before these are not
// modelled.) Retry.Max == 0 is the test, as in Sarama: a negative value was
// already rejected above.
absl::Status ValidateIdempotence(const Config& c) {
  if (c.producer.idempotent) {
    if (!c.version.IsAtLeast(V0_11_0_0)) {
      return ConfigError("Idempotent producer requires Version >= V0_11_0_0");
    }
    if (c.producer.retry.max == 0) {
      return ConfigError("Idempotent producer requires Producer.Retry.Max >= 1");
    }
    if (c.producer.required_acks != kWaitForAll) {
      return ConfigError("Idempotent producer requires Producer.RequiredAcks to be WaitForAll");
    }
    if (c.net.max_open_requests > 1) {
      return ConfigError("Idempotent producer requires Net.MaxOpenRequests to be 1");
    }
  }
  if (!c.producer.transaction.id.empty() && !c.producer.idempotent) {
    return ConfigError("Transactional producer requires Idempotent to be true");
  }
  return absl::OkStatus();
}

// sarama v1.42.1 config.go: Config.Validate, the "validate misc shared
// values" switch and the pre-1.0 ClientID check. (The consumer rules that
// Sarama checks before these are not modelled.)
absl::Status ValidateShared(const Config& c) {
  if (c.channel_buffer_size < 0) return ConfigError("ChannelBufferSize must be >= 0");
  if (!c.version.IsAtLeast(V1_0_0_0) && !IsValidClientId(c.client_id)) {
    return ConfigError(absl::StrCat("ClientID value ", GoQuote(c.client_id),
                                    " is not valid for Kafka versions before 1.0.0"));
  }
  return absl::OkStatus();
}

}  // namespace

// sarama v1.42.1 utils.go: KafkaVersion.String. Sarama prints versions
// before 1.0 with four components ("0.11.0.0"); this struct keeps three, so
// it prints three ("0.11.0"), which ParseKafkaVersion reads back.
std::string KafkaVersion::ToString() const { return absl::StrCat(major, ".", minor, ".", patch); }

// sarama v1.42.1 utils.go: ParseKafkaVersion. Sarama takes exactly
// "0.a.b.c" before 1.0 and exactly "a.b.c" from 1.0 on, and does not check
// the range. Here the patch may be left out ("2.6", "0.11"), the fourth
// component of a pre-1.0 version is read and dropped ("0.11.0.2" is 0.11.0),
// and a version outside Sarama's known releases is an error.
absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text) {
  return ParseKafkaVersion(text, Profile::kSarama_1_42_1);
}

absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text, Profile profile) {
  const std::string quoted = absl::StrCat("\"", std::string(text), "\"");
  std::vector<int> parts;
  const bool split = SplitVersion(text, &parts);
  const size_t max_parts = !parts.empty() && parts[0] == 0 ? 4 : 3;
  if (!split || parts.size() < 2 || parts.size() > max_parts) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid Kafka version ", quoted,
                     ": write MAJOR.MINOR[.PATCH] (\"2.6.0\", \"2.6\"), or before 1.0 "
                     "0.MINOR.PATCH[.BUILD] (\"0.11.0.2\")"));
  }
  KafkaVersion v;
  v.major = parts[0];
  v.minor = parts[1];
  v.patch = parts.size() >= 3 ? parts[2] : 0;
  const bool main = profile == Profile::kSaramaMain;
  const KafkaVersion max = main ? kMaxVersionMain : kMaxVersion;
  if (!v.IsAtLeast(kMinVersion) || !max.IsAtLeast(v) || !IsKnownLine(v, profile)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown Kafka version ", quoted, ": Sarama ", main ? "main" : "v1.42.1",
                     " knows ", kMinVersion.ToString(), " to ", max.ToString(),
                     " (release lines 0.8-0.11, 1.0-1.1, 2.0-2.8",
                     main ? ", 3.0-3.9 and 4.0-4.3)" : " and 3.0-3.6)"));
  }
  return v;
}

// sarama v1.42.1 config.go: Config.Validate. Sarama first logs warnings
// (RequiredAcks > 1, MaxMessageBytes >= MaxRequestSize, Flush without
// Frequency, ...) without failing; the model has no logger, so they are
// left out. The rule groups run in Sarama's order.
absl::Status Config::Validate() const {
  if (absl::Status s = ValidateNet(net); !s.ok()) return s;
  if (absl::Status s = ValidateMetadata(metadata); !s.ok()) return s;
  if (absl::Status s = ValidateProducer(producer); !s.ok()) return s;
  if (absl::Status s = ValidateIdempotence(*this); !s.ok()) return s;
  return ValidateShared(*this);
}

// sarama v1.42.1 config.go: NewConfig. The member initializers in config.h
// hold the same values; this spells out the ones Sarama's NewConfig sets,
// in its order, and the test checks that both agree.
Config NewConfig() {
  Config c;
  c.net.max_open_requests = 5;
  c.net.dial_timeout = sim::Duration::Seconds(30);
  c.net.read_timeout = sim::Duration::Seconds(30);
  c.net.write_timeout = sim::Duration::Seconds(30);

  c.metadata.retry.max = 3;
  c.metadata.retry.backoff = sim::Duration::Millis(250);
  c.metadata.refresh_frequency = sim::Duration::Seconds(int64_t{10} * 60);
  c.metadata.full = true;
  c.metadata.allow_auto_topic_creation = true;

  c.producer.max_message_bytes = 1000000;
  c.producer.required_acks = kWaitForLocal;
  c.producer.timeout = sim::Duration::Seconds(10);
  c.producer.partitioner = PartitionerKind::kHash;
  c.producer.retry.max = 3;
  c.producer.retry.backoff = sim::Duration::Millis(100);
  c.producer.return_.errors = true;

  c.producer.transaction.timeout = sim::Duration::Seconds(60);
  c.producer.transaction.retry.max = 50;
  c.producer.transaction.retry.backoff = sim::Duration::Millis(100);

  c.client_id = "sarama";
  c.channel_buffer_size = 256;
  c.api_versions_request = true;
  c.version = kDefaultVersion;
  PRODSIM_ASSERT(c.Validate().ok());
  return c;
}

// sarama main (282cd488) config.go: NewConfig, where it differs.
Config NewConfig(Profile profile) {
  Config c = NewConfig();
  if (profile == Profile::kSaramaMain) {
    c.producer.max_message_bytes = 1024 * 1024;  // 80b180c1 (#2804)
    c.version = kDefaultVersionMain;             // a15eb5ed (#3676)
    c.metadata.single_flight = true;             // e566ac67 (#3225)
  }
  PRODSIM_ASSERT(c.Validate().ok());
  return c;
}

}  // namespace sarama
