// The compression codecs of Kafka's record batches (the attributes' three
// low bits): what a Kafka 2.6 broker takes from a producer, read with
// Debian's libraries (zlib, libsnappy, liblz4, libzstd), and written the way
// the Java client writes them (for tests, the fuzzers' seeds and the fake
// client).
//
// The framings, as Kafka 2.6 reads them (CompressionType.wrapForInput):
//   1 gzip    an RFC 1952 stream (GZIPInputStream);
//   2 snappy  xerial's framing (SnappyInputStream): an 8-byte magic, two
//             version words, then blocks of [big-endian length][snappy];
//             a stream without the magic is one raw snappy block, which
//             SnappyInputStream also takes (librdkafka writes those);
//   3 lz4     the LZ4 frame format (KafkaLZ4BlockInputStream), with the
//             header checksum right (magic 2 batches; the broken checksum
//             of KAFKA-3160 is magic 0 only);
//   4 zstd    zstd frames (ZstdInputStream), content size known or not.
//
// Invariants: Decompress never returns more than `limit` bytes (a
// decompression bomb is an error, not an allocation), never reads past
// `in`, and a stream that does not end cleanly is an error.
#ifndef PRODSIM_SIM_KAFKA_WIRE_COMPRESSION_H_
#define PRODSIM_SIM_KAFKA_WIRE_COMPRESSION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kafka::wire {

enum class Compression : int { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

// "gzip", ...; "none" for 0, "unknown" outside 0..4.
std::string_view CompressionName(int codec);

// The records' bytes of a batch compressed with `codec` (1..4).
// InvalidArgument (one line, what went wrong) for a stream that is not
// one, or that decompresses to more than `limit` bytes.
absl::StatusOr<std::string> Decompress(int codec, std::string_view in, size_t limit);

// `in` compressed with `codec` (1..4), framed as the Java client frames it.
std::string Compress(Compression codec, std::string_view in);

}  // namespace kafka::wire

#endif  // PRODSIM_SIM_KAFKA_WIRE_COMPRESSION_H_
