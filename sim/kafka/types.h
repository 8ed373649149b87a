// Kafka's identifiers, error codes and broker versions, as the cluster model
// and the producer models share them.
//
// Each id is a distinct one-field type with an explicit constructor, so that
// a producer id can never be passed where an offset is expected, nor an epoch
// where a sequence is. Every id defaults to its kNone value, -1, which is the
// value Kafka itself uses for "no such id" (RecordBatch.NO_PRODUCER_ID,
// NO_PRODUCER_EPOCH, NO_SEQUENCE, an error's base offset -1, "no leader" -1).
//
// Error codes keep Kafka's names and numbers (Errors.java), so a trace reads
// like a broker log. Sequences live in 0..INT32_MAX and wrap to 0 after
// INT32_MAX, as DefaultRecordBatch.incrementSequence does.
#ifndef PRODSIM_SIM_KAFKA_TYPES_H_
#define PRODSIM_SIM_KAFKA_TYPES_H_

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "absl/status/statusor.h"

namespace kafka {

struct ProducerId {
  static const ProducerId kNone;
  constexpr ProducerId() = default;
  constexpr explicit ProducerId(int64_t v) : value(v) {}
  // Kafka tests `producerId > NO_PRODUCER_ID` (RecordBatch.hasProducerId),
  // so any negative id means "not idempotent".
  constexpr bool IsNone() const { return value < 0; }
  constexpr auto operator<=>(const ProducerId&) const = default;
  int64_t value = -1;
};
inline constexpr ProducerId ProducerId::kNone{-1};

struct Epoch {
  static const Epoch kNone;
  constexpr Epoch() = default;
  constexpr explicit Epoch(int16_t v) : value(v) {}
  constexpr auto operator<=>(const Epoch&) const = default;
  int16_t value = -1;
};
inline constexpr Epoch Epoch::kNone{-1};

struct Sequence {
  static const Sequence kNone;
  constexpr Sequence() = default;
  constexpr explicit Sequence(int32_t v) : value(v) {}
  constexpr auto operator<=>(const Sequence&) const = default;
  int32_t value = -1;
};
inline constexpr Sequence Sequence::kNone{-1};

struct Offset {
  static const Offset kNone;
  constexpr Offset() = default;
  constexpr explicit Offset(int64_t v) : value(v) {}
  constexpr auto operator<=>(const Offset&) const = default;
  int64_t value = -1;
};
inline constexpr Offset Offset::kNone{-1};

struct PartitionId {
  static const PartitionId kNone;
  constexpr PartitionId() = default;
  constexpr explicit PartitionId(int32_t v) : value(v) {}
  constexpr auto operator<=>(const PartitionId&) const = default;
  int32_t value = -1;
};
inline constexpr PartitionId PartitionId::kNone{-1};

struct BrokerId {
  static const BrokerId kNone;
  constexpr BrokerId() = default;
  constexpr explicit BrokerId(int32_t v) : value(v) {}
  constexpr auto operator<=>(const BrokerId&) const = default;
  int32_t value = -1;
};
inline constexpr BrokerId BrokerId::kNone{-1};

// Printing, for traces and for test failure messages: "pid=7", "epoch=0",
// "seq=42", "offset=100", "partition=3", "broker=1".
std::ostream& operator<<(std::ostream& os, ProducerId id);
std::ostream& operator<<(std::ostream& os, Epoch epoch);
std::ostream& operator<<(std::ostream& os, Sequence seq);
std::ostream& operator<<(std::ostream& os, Offset offset);
std::ostream& operator<<(std::ostream& os, PartitionId id);
std::ostream& operator<<(std::ostream& os, BrokerId id);

// `seq` advanced by `n`, wrapping past INT32_MAX to 0
// (DefaultRecordBatch.incrementSequence).
// REQUIRES: seq.value >= 0, n >= 0.
Sequence IncrementSequence(Sequence seq, int32_t n);

// The sequence of the last record of a batch of `record_count` records whose
// first record has sequence `first` (RecordBatch.lastSequence).
// REQUIRES: first.value >= 0, record_count >= 1.
Sequence LastSequence(Sequence first, int32_t record_count);

// Whether a batch starting at `next_first` directly follows one ending at
// `last`: next_first == last + 1, or 0 after INT32_MAX
// (ProducerAppendInfo.inSequence).
bool InSequence(Sequence last, Sequence next_first);

// The Kafka protocol error codes the model produces or reacts to, with
// Kafka's names and numbers. The enumerators keep Kafka's spelling on
// purpose (STYLE.md), so naming lint is silenced here.
// NOLINTBEGIN(readability-identifier-naming)
enum class ErrorCode : int16_t {
  NONE = 0,
  OFFSET_OUT_OF_RANGE = 1,
  CORRUPT_MESSAGE = 2,
  UNKNOWN_TOPIC_OR_PARTITION = 3,
  LEADER_NOT_AVAILABLE = 5,
  NOT_LEADER_OR_FOLLOWER = 6,
  REQUEST_TIMED_OUT = 7,
  BROKER_NOT_AVAILABLE = 8,
  REPLICA_NOT_AVAILABLE = 9,
  MESSAGE_TOO_LARGE = 10,
  NETWORK_EXCEPTION = 13,
  NOT_ENOUGH_REPLICAS = 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20,
  INVALID_REQUIRED_ACKS = 21,
  OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
  DUPLICATE_SEQUENCE_NUMBER = 46,
  INVALID_PRODUCER_EPOCH = 47,
  UNKNOWN_PRODUCER_ID = 59,
  INVALID_RECORD = 87,
};
// NOLINTEND(readability-identifier-naming)

// Kafka's constant name, e.g. "NOT_LEADER_OR_FOLLOWER".
std::string_view ErrorCodeName(ErrorCode code);

// Kafka's retriable flag (Errors.java: the exception class of the code
// extends RetriableException), as of 2.6.3. Note that BROKER_NOT_AVAILABLE
// and MESSAGE_TOO_LARGE are not retriable there, while CORRUPT_MESSAGE and
// NETWORK_EXCEPTION are.
bool IsRetriable(ErrorCode code);

std::ostream& operator<<(std::ostream& os, ErrorCode code);

// The broker behaviours the model can take on. They differ only where the
// idempotent-produce rules changed (see producer_state.h for each rule):
//   k0_11: Kafka 0.11.0.x. Keeps the last batch per producer only. A
//          producer the broker does not know must start at sequence 0, else
//          OUT_OF_ORDER_SEQUENCE_NUMBER.
//   k2_0:  Kafka 2.0-2.4. Keeps 5 batches. An unknown producer must start
//          at sequence 0, else UNKNOWN_PRODUCER_ID.
//   k2_6:  Kafka 2.5-2.6. Keeps 5 batches. An unknown producer is accepted
//          at any sequence (KIP-360).
// In all three a resend of a cached batch is answered NONE with the
// original batch's base offset.
enum class KafkaVersion { k0_11, k2_0, k2_6 };

// Accepts "0.11", "2.0" .. "2.4" (k2_0), "2.5" and "2.6" (k2_6); anything
// else is InvalidArgument with the accepted spellings in the message.
absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text);

// "0.11", "2.0" or "2.6": the canonical spelling ParseKafkaVersion accepts.
std::string_view KafkaVersionName(KafkaVersion version);

std::ostream& operator<<(std::ostream& os, KafkaVersion version);

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_TYPES_H_
