#include "sim/kafka/types.h"

#include <cstdint>
#include <ostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/core/assert.h"

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

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::NONE:
      return "NONE";
    case ErrorCode::OFFSET_OUT_OF_RANGE:
      return "OFFSET_OUT_OF_RANGE";
    case ErrorCode::CORRUPT_MESSAGE:
      return "CORRUPT_MESSAGE";
    case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
      return "UNKNOWN_TOPIC_OR_PARTITION";
    case ErrorCode::LEADER_NOT_AVAILABLE:
      return "LEADER_NOT_AVAILABLE";
    case ErrorCode::NOT_LEADER_OR_FOLLOWER:
      return "NOT_LEADER_OR_FOLLOWER";
    case ErrorCode::REQUEST_TIMED_OUT:
      return "REQUEST_TIMED_OUT";
    case ErrorCode::BROKER_NOT_AVAILABLE:
      return "BROKER_NOT_AVAILABLE";
    case ErrorCode::REPLICA_NOT_AVAILABLE:
      return "REPLICA_NOT_AVAILABLE";
    case ErrorCode::MESSAGE_TOO_LARGE:
      return "MESSAGE_TOO_LARGE";
    case ErrorCode::NETWORK_EXCEPTION:
      return "NETWORK_EXCEPTION";
    case ErrorCode::NOT_ENOUGH_REPLICAS:
      return "NOT_ENOUGH_REPLICAS";
    case ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case ErrorCode::INVALID_REQUIRED_ACKS:
      return "INVALID_REQUIRED_ACKS";
    case ErrorCode::UNSUPPORTED_VERSION:
      return "UNSUPPORTED_VERSION";
    case ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER:
      return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case ErrorCode::DUPLICATE_SEQUENCE_NUMBER:
      return "DUPLICATE_SEQUENCE_NUMBER";
    case ErrorCode::INVALID_PRODUCER_EPOCH:
      return "INVALID_PRODUCER_EPOCH";
    case ErrorCode::UNKNOWN_PRODUCER_ID:
      return "UNKNOWN_PRODUCER_ID";
    case ErrorCode::INVALID_RECORD:
      return "INVALID_RECORD";
  }
  // Only a cast from an integer can get here; no such cast exists in prodsim.
  PRODSIM_ASSERT_MSG(false, "ErrorCode value outside the enum");
  return {};
}

std::optional<ErrorCode> ErrorCodeFromName(std::string_view name) {
  // Every enumerator, once: ErrorCodeName's switch is the list of names.
  static constexpr ErrorCode kAll[] = {
      ErrorCode::NONE, ErrorCode::OFFSET_OUT_OF_RANGE, ErrorCode::CORRUPT_MESSAGE,
      ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, ErrorCode::LEADER_NOT_AVAILABLE,
      ErrorCode::NOT_LEADER_OR_FOLLOWER, ErrorCode::REQUEST_TIMED_OUT,
      ErrorCode::BROKER_NOT_AVAILABLE, ErrorCode::REPLICA_NOT_AVAILABLE,
      ErrorCode::MESSAGE_TOO_LARGE, ErrorCode::NETWORK_EXCEPTION, ErrorCode::NOT_ENOUGH_REPLICAS,
      ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode::INVALID_REQUIRED_ACKS,
      ErrorCode::UNSUPPORTED_VERSION, ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
      ErrorCode::DUPLICATE_SEQUENCE_NUMBER, ErrorCode::INVALID_PRODUCER_EPOCH,
      ErrorCode::UNKNOWN_PRODUCER_ID, ErrorCode::INVALID_RECORD};
  for (ErrorCode e : kAll) {
    if (ErrorCodeName(e) == name) return e;
  }
  return std::nullopt;
}

bool IsRetriable(ErrorCode code) {
  switch (code) {
    // Subclasses of RetriableException in Kafka 2.6.3: CorruptRecordException,
    // TimeoutException, NotEnoughReplicas(AfterAppend)Exception, and the
    // InvalidMetadataException family (unknown topic, leader not available,
    // not leader, replica not available, NetworkException).
    case ErrorCode::CORRUPT_MESSAGE:
    case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode::LEADER_NOT_AVAILABLE:
    case ErrorCode::NOT_LEADER_OR_FOLLOWER:
    case ErrorCode::REQUEST_TIMED_OUT:
    case ErrorCode::REPLICA_NOT_AVAILABLE:
    case ErrorCode::NETWORK_EXCEPTION:
    case ErrorCode::NOT_ENOUGH_REPLICAS:
    case ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return true;
    // Plain ApiExceptions (or no error at all). UnknownProducerIdException
    // extends OutOfOrderSequenceException, which is not retriable either.
    case ErrorCode::NONE:
    case ErrorCode::OFFSET_OUT_OF_RANGE:
    case ErrorCode::BROKER_NOT_AVAILABLE:
    case ErrorCode::MESSAGE_TOO_LARGE:
    case ErrorCode::INVALID_REQUIRED_ACKS:
    case ErrorCode::UNSUPPORTED_VERSION:
    case ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER:
    case ErrorCode::DUPLICATE_SEQUENCE_NUMBER:
    case ErrorCode::INVALID_PRODUCER_EPOCH:
    case ErrorCode::UNKNOWN_PRODUCER_ID:
    case ErrorCode::INVALID_RECORD:
      return false;
  }
  PRODSIM_ASSERT_MSG(false, "ErrorCode value outside the enum");
  return false;
}

std::ostream& operator<<(std::ostream& os, ErrorCode code) {
  return os << ErrorCodeName(code);
}

absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text) {
  struct Spelling {
    std::string_view text;
    KafkaVersion version;
  };
  // The 2.0-2.4 and 2.5-2.6 ranges share their idempotence rules, so each
  // minor release maps to the model of its range.
  static constexpr Spelling kSpellings[] = {
      {"0.11", KafkaVersion::k0_11}, {"2.0", KafkaVersion::k2_0},
      {"2.1", KafkaVersion::k2_0},   {"2.2", KafkaVersion::k2_0},
      {"2.3", KafkaVersion::k2_0},   {"2.4", KafkaVersion::k2_0},
      {"2.5", KafkaVersion::k2_6},   {"2.6", KafkaVersion::k2_6},
  };
  for (const Spelling& s : kSpellings) {
    if (s.text == text) return s.version;
  }
  // Debian's Abseil has its own string_view type, hence the conversion.
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown Kafka version \"", absl::string_view(text.data(), text.size()),
      "\"; use one of 0.11, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6"));
}

std::string_view KafkaVersionName(KafkaVersion version) {
  switch (version) {
    case KafkaVersion::k0_11:
      return "0.11";
    case KafkaVersion::k2_0:
      return "2.0";
    case KafkaVersion::k2_6:
      return "2.6";
  }
  PRODSIM_ASSERT_MSG(false, "KafkaVersion value outside the enum");
  return {};
}

std::ostream& operator<<(std::ostream& os, KafkaVersion version) {
  return os << KafkaVersionName(version);
}

}  // namespace kafka
