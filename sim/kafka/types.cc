#include "sim/kafka/types.h"

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace kafka {

Sequence IncrementSequence(Sequence seq, int32_t n) {
  PRODSIM_ASSERT_MSG(seq.value >= 0, "sequences live in 0..INT32_MAX");
  PRODSIM_ASSERT(n >= 0);
  // Sum in 64 bits, then fold once: both terms are at most INT32_MAX, so the
  // sum is below 2^32 and one subtraction of 2^31 brings it back in range.
  int64_t sum = int64_t{seq.value} + int64_t{n};
  if (sum > INT32_MAX) sum -= int64_t{INT32_MAX} + 1;
  PRODSIM_ASSERT(sum >= 0);
  PRODSIM_ASSERT(sum <= INT32_MAX);
  return Sequence(static_cast<int32_t>(sum));
}

Sequence LastSequence(Sequence first, int32_t record_count) {
  PRODSIM_ASSERT_MSG(record_count >= 1, "a batch holds at least one record");
  return IncrementSequence(first, record_count - 1);
}

bool InSequence(Sequence last, Sequence next_first) {
  // 64-bit sum: last == INT32_MAX must not overflow into a negative match.
  return int64_t{next_first.value} == int64_t{last.value} + 1 ||
         (next_first.value == 0 && last.value == INT32_MAX);
}

namespace {

// Every code the model names, with Kafka's constant name (Errors.java).
struct NamedCode {
  ErrorCode code;
  std::string_view name;
  bool retriable;  // Errors.java: the exception extends RetriableException
};
// Retriable in Kafka 2.6.3: CorruptRecordException, TimeoutException,
// NotEnoughReplicas(AfterAppend)Exception, KafkaStorageException, and the
// InvalidMetadataException family (unknown topic, leader not available, not
// leader, replica not available, listener not found, NetworkException).
// UnknownProducerIdException extends OutOfOrderSequenceException, which is
// not retriable.
constexpr NamedCode kNamedCodes[] = {
    {ErrorCode::UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR", false},
    {ErrorCode::NONE, "NONE", false},
    {ErrorCode::OFFSET_OUT_OF_RANGE, "OFFSET_OUT_OF_RANGE", false},
    {ErrorCode::CORRUPT_MESSAGE, "CORRUPT_MESSAGE", true},
    {ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, "UNKNOWN_TOPIC_OR_PARTITION", true},
    {ErrorCode::LEADER_NOT_AVAILABLE, "LEADER_NOT_AVAILABLE", true},
    {ErrorCode::NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER", true},
    {ErrorCode::REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", true},
    {ErrorCode::BROKER_NOT_AVAILABLE, "BROKER_NOT_AVAILABLE", false},
    {ErrorCode::REPLICA_NOT_AVAILABLE, "REPLICA_NOT_AVAILABLE", true},
    {ErrorCode::MESSAGE_TOO_LARGE, "MESSAGE_TOO_LARGE", false},
    {ErrorCode::NETWORK_EXCEPTION, "NETWORK_EXCEPTION", true},
    {ErrorCode::NOT_ENOUGH_REPLICAS, "NOT_ENOUGH_REPLICAS", true},
    {ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true},
    {ErrorCode::INVALID_REQUIRED_ACKS, "INVALID_REQUIRED_ACKS", false},
    {ErrorCode::UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", false},
    {ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER, "OUT_OF_ORDER_SEQUENCE_NUMBER", false},
    {ErrorCode::DUPLICATE_SEQUENCE_NUMBER, "DUPLICATE_SEQUENCE_NUMBER", false},
    {ErrorCode::INVALID_PRODUCER_EPOCH, "INVALID_PRODUCER_EPOCH", false},
    {ErrorCode::KAFKA_STORAGE_ERROR, "KAFKA_STORAGE_ERROR", true},
    {ErrorCode::UNKNOWN_PRODUCER_ID, "UNKNOWN_PRODUCER_ID", false},
    {ErrorCode::LISTENER_NOT_FOUND, "LISTENER_NOT_FOUND", true},
    {ErrorCode::INVALID_RECORD, "INVALID_RECORD", false},
};

const NamedCode* Find(ErrorCode code) {
  for (const NamedCode& n : kNamedCodes) {
    if (n.code == code) return &n;
  }
  return nullptr;
}

}  // namespace

std::string ErrorCodeName(ErrorCode code) {
  if (const NamedCode* n = Find(code)) return std::string(n->name);
  return absl::StrCat("UNKNOWN_CODE(", static_cast<int>(code), ")");
}

bool IsNamedErrorCode(ErrorCode code) { return Find(code) != nullptr; }

std::optional<ErrorCode> ErrorCodeFromName(std::string_view name) {
  for (const NamedCode& n : kNamedCodes) {
    if (n.name == name) return n.code;
  }
  return std::nullopt;
}

bool IsRetriable(ErrorCode code) {
  const NamedCode* n = Find(code);
  return n != nullptr && n->retriable;
}

std::ostream& operator<<(std::ostream& os, ErrorCode code) { return os << ErrorCodeName(code); }

absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text) {
  // The 2.0-2.4 and 2.5-2.6 ranges share their idempotence rules, so each
  // minor release maps to the model of its range (kKafkaVersionSpellings'
  // order: 0.11, then 2.0..2.4, then 2.5 and 2.6).
  static constexpr KafkaVersion kModelOf[] = {
      KafkaVersion::k0_11, KafkaVersion::k2_0, KafkaVersion::k2_0, KafkaVersion::k2_0,
      KafkaVersion::k2_0,  KafkaVersion::k2_0, KafkaVersion::k2_6, KafkaVersion::k2_6,
  };
  static_assert(std::size(kModelOf) == std::size(kKafkaVersionSpellings));
  for (size_t i = 0; i < std::size(kKafkaVersionSpellings); ++i) {
    if (kKafkaVersionSpellings[i] == text) return kModelOf[i];
  }
  // Debian's Abseil has its own string_view type, hence the conversions.
  std::string accepted;
  for (std::string_view spelling : kKafkaVersionSpellings) {
    absl::StrAppend(&accepted, accepted.empty() ? "" : ", ",
                    absl::string_view(spelling.data(), spelling.size()));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown Kafka version \"",
                                                 absl::string_view(text.data(), text.size()),
                                                 "\"; use one of ", accepted));
}

std::string_view KafkaVersionName(KafkaVersion version) {
  switch (version) {
    case KafkaVersion::k0_11: return "0.11";
    case KafkaVersion::k2_0: return "2.0";
    case KafkaVersion::k2_6: return "2.6";
  }
  PRODSIM_ASSERT_MSG(false, "KafkaVersion value outside the enum");
  return {};
}

std::ostream& operator<<(std::ostream& os, KafkaVersion version) {
  return os << KafkaVersionName(version);
}

}  // namespace kafka
