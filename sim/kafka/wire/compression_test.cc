// The four codecs round trip, read the framings real clients write
// (xerial's snappy and a raw snappy block, concatenated gzip members), stop
// at their limit, and refuse a corrupt or cut stream with a one-line error
// (never a crash); a compressed batch decodes to the records an
// uncompressed one holds, and a corrupt one is CORRUPT_MESSAGE.
#include "sim/kafka/wire/compression.h"

#include <snappy-c.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/core/prng.h"
#include "sim/kafka/wire/codec.h"

namespace kafka::wire {
namespace {

constexpr Compression kCodecs[] = {Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};

std::string Sample(size_t n) {
  std::string s;
  sim::Prng prng(7);
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + prng.Below(4)));
  return s;
}

// Each codec gives back what it was given, empty, small and past one
// block (snappy's 32 KB, lz4's 64 KB).
TEST(CompressionTest, RoundTrips) {
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(CompressionName(static_cast<int>(c)));
    for (const size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{200000}}) {
      const std::string in = Sample(n);
      const absl::StatusOr<std::string> out =
          Decompress(static_cast<int>(c), Compress(c, in), size_t{1} << 20);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(*out, in);
    }
  }
}

// What librdkafka writes for snappy, one raw block without xerial's
// framing, is read too; so are concatenated gzip members.
TEST(CompressionTest, ReadsTheFramingsClientsWrite) {
  const std::string in = Sample(5000);
  size_t n = snappy_max_compressed_length(in.size());
  std::string raw(n, '\0');
  ASSERT_EQ(snappy_compress(in.data(), in.size(), raw.data(), &n), SNAPPY_OK);
  raw.resize(n);
  absl::StatusOr<std::string> out = Decompress(2, raw, size_t{1} << 20);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, in);
  const std::string two = Compress(Compression::kGzip, "ab") + Compress(Compression::kGzip, "cd");
  out = Decompress(1, two, 100);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "abcd");
}

// A stream that decompresses past the limit is refused before it is
// allocated; a cut, a flipped byte or garbage are errors, never a crash.
TEST(CompressionTest, RefusesBombsAndGarbage) {
  const std::string big(1 << 20, 'x');
  for (const Compression c : kCodecs) {
    SCOPED_TRACE(CompressionName(static_cast<int>(c)));
    const std::string packed = Compress(c, big);
    absl::StatusOr<std::string> out = Decompress(static_cast<int>(c), packed, 1000);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("more than 1000 bytes"), std::string::npos)
        << out.status();
    out = Decompress(static_cast<int>(c), packed.substr(0, packed.size() / 2), big.size());
    EXPECT_FALSE(out.ok());
    sim::Prng prng(static_cast<uint64_t>(c));
    for (int i = 0; i < 200; ++i) {
      std::string junk = packed.substr(0, static_cast<size_t>(prng.UniformInt(0, 64)));
      for (char& ch : junk) ch = static_cast<char>(ch ^ static_cast<char>(prng.Below(256)));
      (void)Decompress(static_cast<int>(c), junk, big.size());  // no crash, no hang
    }
  }
  EXPECT_FALSE(Decompress(5, "x", 10).ok());
}

// A batch compressed with any codec decodes to the records of the same
// batch uncompressed (keys, ids, sequences), and says which codec it came
// with; a corrupt compressed body is CORRUPT_MESSAGE, with why.
TEST(CompressionTest, CompressedBatchesDecodeLikePlainOnes) {
  for (int c = 0; c <= 4; ++c) {
    SCOPED_TRACE(c);
    const auto codec = static_cast<int8_t>(c);
    ProduceRequest req;
    req.correlation_id = 9;
    req.acks = -1;
    req.timeout = sim::Duration::Seconds(30);
    RecordBatch& b = req.batches[TopicPartition{"t", PartitionId(0)}];
    b.producer_id = ProducerId(1000);
    b.producer_epoch = Epoch(0);
    b.base_sequence = Sequence(5);
    b.compression = codec;
    for (uint64_t id = 1; id <= 3; ++id) {
      b.records.push_back(Record{absl::StrCat("key-", id), 100, sim::Time(), id});
    }
    RequestHeader h;
    h.api_key = 0;
    h.api_version = 7;
    h.correlation_id = 9;
    h.client_id = "test";
    const std::string frame = EncodeRequest(h, req);
    // The frame without its size prefix, as the bridge hands it over.
    const absl::StatusOr<DecodedRequest> d = DecodeRequest(std::string_view(frame).substr(4));
    ASSERT_TRUE(d.ok()) << d.status();
    const auto* got = dynamic_cast<const ProduceRequest*>(d->message.get());
    ASSERT_NE(got, nullptr);
    const RecordBatch& gb = got->batches.at(TopicPartition{"t", PartitionId(0)});
    EXPECT_EQ(gb.invalid, ErrorCode::NONE) << gb.invalid_why;
    EXPECT_EQ(gb.compression, codec);
    ASSERT_EQ(gb.records.size(), 3u);
    EXPECT_EQ(gb.records[2].record_id, 3u);
    EXPECT_EQ(gb.records[2].key, "key-3");
    EXPECT_EQ(gb.base_sequence, Sequence(5));
  }
}

}  // namespace
}  // namespace kafka::wire
