// Kafka's protocol messages as C++ structs (no wire format).
//
// Only the fields the producer/broker interaction needs, with Kafka's names:
// Metadata (v1+), InitProducerId (no transactional id), Produce (v3+: exactly
// one record batch per partition, carrying producer id, epoch and base
// sequence), ApiVersions (the one request with a version: its answer
// depends on it) and their responses. A Record also carries `record_id`, a
// harness annotation (not a Kafka field) that names the application message
// so that the checks can follow it from Input to the partition log.
#ifndef PRODSIM_SIM_KAFKA_PROTOCOL_H_
#define PRODSIM_SIM_KAFKA_PROTOCOL_H_

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/types/compare.h"
#include "sim/core/time.h"
#include "sim/kafka/types.h"
#include "sim/net/network.h"

namespace kafka {

struct TopicPartition {
  std::string topic;
  PartitionId partition;
  bool operator==(const TopicPartition&) const = default;
  // By topic, then partition. Written out, not defaulted: libc++ 14 (the
  // standard library ClusterFuzzLite builds with) has no operator<=> for
  // std::string, which deletes a defaulted one.
  std::strong_ordering operator<=>(const TopicPartition& o) const {
    if (const int c = CompareTopics(topic, o.topic); c != 0) {
      return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    return partition <=> o.partition;
  }
  // std::string::compare's order (bytes as unsigned char, then length) as
  // an inline loop: topic names are short, and a call of memcmp per
  // comparison was a tenth of a run's time (the cluster's maps by
  // partition are searched at every fetch round).
  static int CompareTopics(const std::string& a, const std::string& b) {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    const char* x = a.data();
    const char* y = b.data();
    for (size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) {
        return static_cast<unsigned char>(x[i]) < static_cast<unsigned char>(y[i]) ? -1 : 1;
      }
    }
    if (a.size() == b.size()) return 0;
    return a.size() < b.size() ? -1 : 1;
  }
  std::string ToString() const;
};

// The order of the maps by partition: TopicPartition's, as one three-way
// comparison. absl's btree takes a comparator that returns
// absl::weak_ordering as "compare-to" and finds a key with one comparison
// per key it passes, where std::less needs a second to see equality (a
// search per replica and per view entry at every fetch round: a twentieth of
// a run). The order, and so every iteration and digest, is the same.
struct TopicPartitionOrder {
  absl::weak_ordering operator()(const TopicPartition& a, const TopicPartition& b) const {
    if (const int c = TopicPartition::CompareTopics(a.topic, b.topic); c != 0) {
      return c < 0 ? absl::weak_ordering::less : absl::weak_ordering::greater;
    }
    if (a.partition == b.partition) return absl::weak_ordering::equivalent;
    return a.partition < b.partition ? absl::weak_ordering::less : absl::weak_ordering::greater;
  }
};
template <typename V>
using ByPartition = absl::btree_map<TopicPartition, V, TopicPartitionOrder>;
using PartitionSet = absl::btree_set<TopicPartition, TopicPartitionOrder>;

struct Record {
  std::string key;
  int32_t value_bytes = 0;
  sim::Time timestamp;
  uint64_t record_id = 0;  // harness annotation: the application message
};

struct RecordBatch {
  ProducerId producer_id = ProducerId::kNone;
  Epoch producer_epoch = Epoch::kNone;
  Sequence base_sequence = Sequence::kNone;
  std::vector<Record> records;
  // Wire mode only (kafka::wire decodes batches from real clients): the
  // error Kafka answers for this partition without appending anything,
  // found while validating the batch as Log.analyzeAndValidateRecords and
  // ProduceRequest.validateRecords do (CORRUPT_MESSAGE for a CRC mismatch,
  // INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE), and why, for the history.
  // NONE in the simulated world.
  ErrorCode invalid = ErrorCode::NONE;
  std::string invalid_why;
  // Wire mode: the codec the client compressed the batch with (the
  // attributes' low bits: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd); the
  // codec reads the records from the decompressed bytes and writes them
  // compressed again for a batch it encodes.
  int8_t compression = 0;

  int32_t record_count() const { return static_cast<int32_t>(records.size()); }
  bool idempotent() const { return !producer_id.IsNone(); }
  // The last record's sequence; kNone for a batch without sequences (a
  // non-idempotent producer's, base sequence -1).
  Sequence last_sequence() const {
    if (base_sequence.value < 0 || records.empty()) return Sequence::kNone;
    return LastSequence(base_sequence, record_count());
  }
};

enum class ApiKey : int16_t {
  kProduce = 0,
  kMetadata = 3,
  kApiVersions = 18,
  kInitProducerId = 22
};
std::string_view ApiKeyName(ApiKey k);

// Common header of requests and responses.
struct Message : net::Payload {
  ApiKey api = ApiKey::kProduce;
  int32_t correlation_id = 0;
  bool is_response = false;
  // Harness annotation, not on the wire: when the client wrote it (the
  // producer model's request steps, producer/history.h).
  sim::Time written_at;
};

struct MetadataRequest final : Message {
  // The request's version: the broker's answer for a partition without a
  // live leader depends on it (Cluster::HandleMetadata, KAFKA-10312).
  int16_t version = 0;
  std::vector<std::string> topics;  // empty: all topics
  // Wire mode: v1+ distinguishes a null topic list (all topics) from an
  // empty one (none: a brokers-only request, as librdkafka sends on
  // connect). The model's own clients always ask for topics or for all.
  bool no_topics = false;
  std::string Describe() const override;
};

struct BrokerMetadata {
  BrokerId id;
  net::NodeId node = 0;
};

struct PartitionMetadata {
  ErrorCode error = ErrorCode::NONE;
  PartitionId partition;
  BrokerId leader = BrokerId::kNone;
  int32_t leader_epoch = 0;
  std::vector<BrokerId> replicas;
  std::vector<BrokerId> isr;
};

struct TopicMetadata {
  ErrorCode error = ErrorCode::NONE;
  std::string name;
  std::vector<PartitionMetadata> partitions;
};

struct MetadataResponse final : Message {
  std::vector<BrokerMetadata> brokers;
  BrokerId controller = BrokerId::kNone;
  std::vector<TopicMetadata> topics;
  std::string Describe() const override;
};

// Sent by clients on connect. Requests carry no version in this model but
// this one: whether a broker can answer it depends on it (v3 is KIP-511's,
// Kafka 2.4).
struct ApiVersionsRequest final : Message {
  int16_t version = 0;
  std::string Describe() const override;
};

// One entry of ApiVersionsResponse.ApiKeys: the versions of `api` a broker
// accepts.
struct ApiVersionRange {
  ApiKey api = ApiKey::kProduce;
  int16_t min_version = 0;
  int16_t max_version = 0;
};

// With UNSUPPORTED_VERSION (a request newer than the broker's), `api_keys`
// holds only ApiVersions' own range from a broker with KIP-511 (2.4+), and
// nothing from an older one; the client then asks again at that version.
struct ApiVersionsResponse final : Message {
  ErrorCode error = ErrorCode::NONE;
  std::vector<ApiVersionRange> api_keys;  // of the four APIs the model knows
  std::string Describe() const override;
};

struct InitProducerIdRequest final : Message {
  sim::Duration transaction_timeout = sim::Duration::Seconds(60);
  // v3 (KIP-360): the producer id and epoch to bump, -1 and -1 for a new
  // producer (what every client in the model and on the wire sends first).
  ProducerId producer_id = ProducerId::kNone;
  Epoch producer_epoch = Epoch::kNone;
  std::string Describe() const override;
};

struct InitProducerIdResponse final : Message {
  ErrorCode error = ErrorCode::NONE;
  ProducerId producer_id = ProducerId::kNone;
  Epoch producer_epoch = Epoch::kNone;
  std::string Describe() const override;
};

struct ProduceRequest final : Message {
  int16_t acks = -1;
  sim::Duration timeout = sim::Duration::Seconds(10);
  ByPartition<RecordBatch> batches;  // one per partition
  std::string Describe() const override;
};

struct ProducePartitionResponse {
  ErrorCode error = ErrorCode::NONE;
  Offset base_offset = Offset::kNone;
  int64_t log_append_time_ms = -1;
  Offset log_start_offset = Offset::kNone;
};

struct ProduceResponse final : Message {
  ByPartition<ProducePartitionResponse> partitions;
  std::string Describe() const override;
};

// The ApiKey of each message type.
template <typename T>
constexpr ApiKey kApiOf = ApiKey::kProduce;
template <>
inline constexpr ApiKey kApiOf<MetadataRequest> = ApiKey::kMetadata;
template <>
inline constexpr ApiKey kApiOf<MetadataResponse> = ApiKey::kMetadata;
template <>
inline constexpr ApiKey kApiOf<ApiVersionsRequest> = ApiKey::kApiVersions;
template <>
inline constexpr ApiKey kApiOf<ApiVersionsResponse> = ApiKey::kApiVersions;
template <>
inline constexpr ApiKey kApiOf<InitProducerIdRequest> = ApiKey::kInitProducerId;
template <>
inline constexpr ApiKey kApiOf<InitProducerIdResponse> = ApiKey::kInitProducerId;

// A request of type T with its api key and correlation id set.
template <typename T>
std::shared_ptr<T> NewRequest(int32_t correlation_id) {
  auto m = std::make_shared<T>();
  m->api = kApiOf<T>;
  m->correlation_id = correlation_id;
  return m;
}

// A response of type T answering `request`.
template <typename T>
std::shared_ptr<T> NewResponse(const Message& request) {
  auto m = std::make_shared<T>();
  m->api = request.api;
  m->correlation_id = request.correlation_id;
  m->is_response = true;
  return m;
}

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_PROTOCOL_H_
