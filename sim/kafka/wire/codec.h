// Kafka's wire protocol for the messages of sim/kafka/protocol.h: bytes in,
// structs out, and back. No sockets here: the real-time world (wire/) reads
// and writes the sockets and hands this code whole frames.
//
// What is served, as a Kafka 2.6.3 broker lays it out (sources: apache/kafka
// 2.6.3 clients/src/main/resources/common/message/*.json, the hand-written
// schemas of requests/ProduceRequest.java and ProduceResponse.java, and
// record/DefaultRecordBatch.java, DefaultRecord.java):
//   ApiVersions (key 18) v0-v3, Metadata (3) v0-v9, InitProducerId (22)
//   v0-v3, Produce (0) v3-v8 with record batches of magic 2 (CRC-32C
//   checked, varint records, headers; compressed with gzip, snappy, lz4 or
//   zstd, or not: sim/kafka/wire/compression.h).
// Request header v1, or v2 for a flexible version; response header v0, or
// v1 for a flexible version, except ApiVersions, always v0 (KIP-511).
//
// What a 2.6 broker does with what this code does not serve, and what the
// caller must do with each outcome of DecodeRequest:
//   - a malformed frame (truncated, a bad length, an unknown api key, a
//     null where none is allowed, out-of-order tags): an error status; Kafka
//     closes the connection without a response (SocketServer's
//     processChannelException), and so must the caller;
//   - a well-formed header for an API or version the model does not serve
//     (Fetch, FindCoordinator, Produce v0-v2, ...): `message` is null and
//     `not_served` says what; the caller closes the connection (what Kafka
//     does for an unsupported version; for a supported API the model does
//     not implement, the closest honest answer) and records why;
//   - an ApiVersions request of a version above 3: Kafka does not parse its
//     body and answers a v0 response; here `message` is an
//     ApiVersionsRequest with that version, which the cluster answers with
//     UNSUPPORTED_VERSION, and EncodeResponse writes it in the v0 layout.
//   - an InitProducerId or Produce request with a transactional id: the
//     model serves no transactions, so `message` is null and `not_served`
//     says so (a 2.6 broker would serve it);
//   - an ApiVersions request of a negative version: Kafka answers it like
//     v4, but the cluster's rule (a version above its maximum) would answer
//     it in full, so it is not served here;
//   - a request over one of prodsim's limits per request (below: a topic
//     name, topics, partitions, records, decompressed bytes): `message` is
//     null and `not_served` names the limit; decoding stops there, so the
//     limit bounds what decoding allocates.
//
// Records: a Record keeps the key, the value's size (not its bytes) and
// its timestamp. The header "prodsim-id" (the workload message's id, in
// decimal ASCII, written by every prodsim client driver) becomes
// Record::record_id; a record without a valid one keeps record_id 0, which
// the caller treats as a harness error. A batch that fails Kafka's
// validation is decoded with RecordBatch::invalid set to Kafka's answer for
// its partition (CORRUPT_MESSAGE for a CRC mismatch; INVALID_RECORD for a
// base offset other than 0, a count or offset-delta mismatch, a control or
// transactional batch, more than one batch, a producer id without a base
// sequence, a malformed record; INVALID_TIMESTAMP for LogAppendTime set by
// the producer; UNSUPPORTED_COMPRESSION_TYPE for zstd below Produce v7;
// CORRUPT_MESSAGE for a compressed body that does not decompress, or
// decompresses past 64 MiB, which no client's batch comes near) and
// `invalid_why` saying what was wrong; RecordBatch::compression says which
// codec a batch came with. A record's timestamp is its
// milliseconds as a sim::Time (saturated past the year 2262); a null key is
// "", a null value has value_bytes -1 (Kafka's valueSize()).
#ifndef PRODSIM_SIM_KAFKA_WIRE_CODEC_H_
#define PRODSIM_SIM_KAFKA_WIRE_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"

namespace kafka::wire {

// socket.request.max.bytes, Kafka 2.6's default: a larger frame closes the
// connection.
inline constexpr int32_t kMaxFrameBytes = 100 * 1024 * 1024;

// What one request may ask for, so that a small request cannot become a
// large allocation (a frame of 82 KB naming one 32,767-byte topic with
// 1,500 partitions made 1,500 copies of the name, 48 MB, and as many in
// the history). A request over one of these is well formed and refused as
// not served (`DecodedRequest::not_served` says which limit): the harness
// cannot serve it, and no scenario's client comes near any of them.
//   - a topic name: 249 bytes, Kafka's own longest (Topic.MAX_NAME_LENGTH,
//     the scenario schema's rule too); a 2.6 broker would answer a longer
//     one UNKNOWN_TOPIC_OR_PARTITION, since no topic can have it;
//   - topics per request: 1,000 (prodsim's; Kafka has no limit but the
//     frame's): a workload names at most 64 topics;
//   - partitions per Produce request: 10,000 (prodsim's): 64 topics of at
//     most 64 partitions each is 4,096;
//   - records per Produce request: 1,000,000 (prodsim's): a workload has at
//     most that many messages (scenarios/schema.cc, kMaxCount);
//   - decompressed bytes per Produce request: 64 MiB in all (prodsim's; the
//     same bound as one batch's, kept across the request's batches so that
//     many small compressed batches cannot cost more).
inline constexpr size_t kTopicNameBytesMax = 249;
inline constexpr size_t kTopicsPerRequestMax = 1000;
inline constexpr size_t kPartitionsPerRequestMax = 10000;
inline constexpr size_t kRecordsPerRequestMax = 1000000;
inline constexpr size_t kDecompressedBytesPerRequestMax = size_t{64} << 20;

// Splits a byte stream into frames (a 4-byte big-endian size, then that many
// bytes).
class Framer {
 public:
  void Append(std::string_view bytes);
  // The next whole frame's bytes without the size prefix; nullopt if more
  // bytes are needed; an error for a negative size or one above
  // kMaxFrameBytes (the caller closes the connection).
  absl::StatusOr<std::optional<std::string>> Next();
  // True if Next() would return a frame or an error (not "more bytes").
  bool Ready() const;
  size_t buffered() const { return buffer_.size() - start_; }
  // The memory the buffer holds (its capacity), for the caller's budget.
  size_t memory() const { return buffer_.capacity(); }

 private:
  std::string buffer_;
  size_t start_ = 0;
};

// The size prefix followed by `body`.
std::string Frame(std::string_view body);

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;  // null on the wire: nullopt
  bool operator==(const RequestHeader&) const = default;
};

struct DecodedRequest {
  RequestHeader header;
  // The request as the cluster model takes it (api and correlation id set);
  // null when the API or version is not served.
  std::shared_ptr<Message> message;
  std::string not_served;  // e.g. "FindCoordinator v3 (api key 10)"
};

// One frame's bytes (no size prefix) from a client. An error means Kafka
// would close the connection; its message says what was malformed, in one
// line.
absl::StatusOr<DecodedRequest> DecodeRequest(std::string_view frame);

// Where each broker listens, for Metadata responses.
struct BrokerAddress {
  std::string host;
  int32_t port = 0;
};
struct EncodeContext {
  absl::btree_map<BrokerId, BrokerAddress> brokers;  // every broker in a response must be here
  std::optional<std::string> cluster_id;             // Metadata v2+
};

// The framed response (size prefix included) to the request with `header`,
// in that request's version. REQUIRES: `response` answers a request that
// DecodeRequest returned a message for, with the same header.
std::string EncodeResponse(const RequestHeader& header, const Message& response,
                           const EncodeContext& context);

// The client's side, for tests, fuzzing and prodsim's own raw test client:
// the framed request (size prefix included), and a response frame's bytes
// (no size prefix) decoded for the request that had `header`.
// REQUIRES for EncodeRequest: `header` names a served API and version for
// `request`'s type.
std::string EncodeRequest(const RequestHeader& header, const Message& request);
absl::StatusOr<std::shared_ptr<Message>> DecodeResponse(const RequestHeader& header,
                                                        std::string_view frame);

// What this codec serves, as ApiVersionsResponse ranges: Produce 3-8,
// Metadata 0-9, ApiVersions 0-3, InitProducerId 0-3. EncodeResponse writes an
// ApiVersionsResponse's ranges clamped to these (an API or range outside them
// is left out), so that a client never picks a version DecodeRequest refuses.
std::vector<ApiVersionRange> ServedApiVersions();

// Kafka error codes the codec answers that kafka::ErrorCode does not name
// (the enum is open; these keep Kafka's names and numbers, Errors.java).
inline constexpr ErrorCode kInvalidTimestamp = static_cast<ErrorCode>(32);
inline constexpr ErrorCode kUnsupportedCompressionType = static_cast<ErrorCode>(76);

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as record batches
// carry it.
uint32_t Crc32c(std::string_view bytes);

}  // namespace kafka::wire

#endif  // PRODSIM_SIM_KAFKA_WIRE_CODEC_H_
