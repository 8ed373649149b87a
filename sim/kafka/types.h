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
#include <optional>
#include <ostream>
#include <string_view>

#include "absl/status/statusor.h"

namespace kafka {

// A Kafka id or counter as a distinct type: one instantiation per kind, so
// that two kinds cannot be swapped at a call. Every kind uses -1 for "none"
// (Kafka's NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, ...).
template <typename Tag, typename Rep>
struct StrongId {
  static const StrongId kNone;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  // Kafka tests `producerId > NO_PRODUCER_ID` (RecordBatch.hasProducerId),
  // so any negative id means "none".
  constexpr bool IsNone() const { return value < 0; }
  constexpr auto operator<=>(const StrongId&) const = default;
  Rep value = -1;
};
template <typename Tag, typename Rep>
inline constexpr StrongId<Tag, Rep> StrongId<Tag, Rep>::kNone{-1};

// Printed as "<label>=<value>", e.g. "pid=1000", for test messages.
template <typename Tag, typename Rep>
std::ostream& operator<<(std::ostream& os, StrongId<Tag, Rep> id) {
  return os << Tag::kLabel << "=" << static_cast<int64_t>(id.value);
}

struct ProducerIdTag {
  static constexpr const char* kLabel = "pid";
};
struct EpochTag {
  static constexpr const char* kLabel = "epoch";
};
struct SequenceTag {
  static constexpr const char* kLabel = "seq";
};
struct OffsetTag {
  static constexpr const char* kLabel = "offset";
};
struct PartitionIdTag {
  static constexpr const char* kLabel = "partition";
};
struct BrokerIdTag {
  static constexpr const char* kLabel = "broker";
};

using ProducerId = StrongId<ProducerIdTag, int64_t>;
using Epoch = StrongId<EpochTag, int16_t>;
using Sequence = StrongId<SequenceTag, int32_t>;
using Offset = StrongId<OffsetTag, int64_t>;
using PartitionId = StrongId<PartitionIdTag, int32_t>;
using BrokerId = StrongId<BrokerIdTag, int32_t>;

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

// Kafka protocol error codes, with Kafka's names and numbers. The enum is
// open: any int16 is a value (a response from outside the model, such as a
// real broker's in wire mode, may carry a code the model does not name), and
// every function below takes one. The enumerators are the codes the model
// produces or reacts to; they keep Kafka's spelling on purpose (STYLE.md), so
// naming lint is silenced here.
// NOLINTBEGIN(readability-identifier-naming)
enum class ErrorCode : int16_t {
  UNKNOWN_SERVER_ERROR = -1,
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
  UNSUPPORTED_VERSION = 35,  // only in an ApiVersions response (sim/kafka/cluster_serving.cc)
  OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
  DUPLICATE_SEQUENCE_NUMBER = 46,
  INVALID_PRODUCER_EPOCH = 47,
  KAFKA_STORAGE_ERROR = 56,
  UNKNOWN_PRODUCER_ID = 59,
  LISTENER_NOT_FOUND = 72,
  INVALID_RECORD = 87,
};
// NOLINTEND(readability-identifier-naming)

// Kafka's constant name, e.g. "NOT_LEADER_OR_FOLLOWER"; for a code the model
// does not name, "UNKNOWN_CODE(n)".
std::string ErrorCodeName(ErrorCode code);
// Whether the model names `code` (ErrorCodeName gives Kafka's name).
bool IsNamedErrorCode(ErrorCode code);

// The inverse of ErrorCodeName: the code named `name`, or nullopt.
std::optional<ErrorCode> ErrorCodeFromName(std::string_view name);

// Kafka's retriable flag (Errors.java: the exception class of the code
// extends RetriableException), as of 2.6.3. Note that BROKER_NOT_AVAILABLE
// and MESSAGE_TOO_LARGE are not retriable there, while CORRUPT_MESSAGE and
// NETWORK_EXCEPTION are. A code the model does not name is not retriable
// (Kafka's Errors.forCode maps it to UNKNOWN_SERVER_ERROR, which is not).
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

// The spellings ParseKafkaVersion accepts, oldest first: "0.11", "2.0" ..
// "2.4" (k2_0), "2.5" and "2.6" (k2_6). The scenario format's list.
inline constexpr std::string_view kKafkaVersionSpellings[] = {"0.11", "2.0", "2.1", "2.2",
                                                              "2.3",  "2.4", "2.5", "2.6"};

// One of kKafkaVersionSpellings; anything else is InvalidArgument with the
// accepted spellings in the message.
absl::StatusOr<KafkaVersion> ParseKafkaVersion(std::string_view text);

// "0.11", "2.0" or "2.6": the canonical spelling ParseKafkaVersion accepts.
std::string_view KafkaVersionName(KafkaVersion version);

std::ostream& operator<<(std::ostream& os, KafkaVersion version);

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_TYPES_H_
