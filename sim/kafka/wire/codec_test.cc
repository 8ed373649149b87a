// Unit tests of the wire codec against byte layouts assembled by hand from
// the Kafka 2.6.3 protocol (docs in /work/notes/kafka-wire-2.6.md, schemas in
// apache/kafka's common/message/*.json): one or more per API and version
// class, each validation rule of a record batch, framing and truncation.
#include "sim/kafka/wire/codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/kafka/wire/compression.h"

namespace kafka::wire {
namespace {

// Bytes from hex digits; spaces are for reading only.
std::string FromHex(std::string_view hex) {
  std::string digits;
  for (const char c : hex) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  return absl::HexStringToBytes(digits);  // a std::string: Debian Abseil has its own string_view
}

std::string ToHex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

template <typename T>
const T& As(const std::shared_ptr<Message>& m) {
  return dynamic_cast<const T&>(*m);
}

// --- CRC-32C -------------------------------------------------------------------

// Goal: the CRC matches the published CRC-32C check values.
TEST(WireCrc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0x00000000u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
}

// --- Framer ------------------------------------------------------------------------

// Goal: a frame split over many appends comes out whole, once.
TEST(WireFramerTest, SplitsAcrossAppends) {
  const std::string stream = Frame("hello") + Frame("") + Frame("world!");
  Framer f;
  std::vector<std::string> frames;
  for (const char c : stream) {
    f.Append(std::string_view(&c, 1));
    for (;;) {
      absl::StatusOr<std::optional<std::string>> next = f.Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!next->has_value()) break;
      frames.push_back(**next);
    }
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"hello", "", "world!"}));
  EXPECT_EQ(f.buffered(), 0u);
}

// Goal: two frames in one append are both returned, in order.
TEST(WireFramerTest, TwoFramesInOneAppend) {
  Framer f;
  f.Append(Frame("ab") + Frame("cde") + std::string("\0\0", 2));
  EXPECT_EQ(f.Next()->value(), "ab");
  EXPECT_EQ(f.Next()->value(), "cde");
  EXPECT_FALSE(f.Next()->has_value());
  EXPECT_EQ(f.buffered(), 2u);
}

// Goal: a negative size and one above socket.request.max.bytes are errors;
// exactly the limit waits for its bytes.
TEST(WireFramerTest, RejectsNegativeAndOversizedSizes) {
  Framer negative;
  negative.Append(FromHex("ffffffff"));
  EXPECT_FALSE(negative.Next().ok());

  Framer oversized;
  oversized.Append(FromHex("06400001"));  // 100 MiB + 1
  absl::StatusOr<std::optional<std::string>> next = oversized.Next();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().message().find("socket.request.max.bytes"), std::string::npos);

  Framer limit;
  limit.Append(FromHex("06400000 0102"));
  next = limit.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
}

// --- Request headers and what is not served ---------------------------------------------

// Goal: an API key outside Kafka 2.6's 0..49 is malformed (Kafka closes the
// connection); a known API or version the model does not serve is named.
TEST(WireDecodeRequestTest, UnknownAndUnservedApis) {
  EXPECT_FALSE(DecodeRequest(FromHex("03e7 0000 00000001 ffff")).ok());  // key 999
  EXPECT_FALSE(DecodeRequest(FromHex("0032 0000 00000001 ffff")).ok());  // key 50

  absl::StatusOr<DecodedRequest> fetch = DecodeRequest(FromHex("0001 000b 00000005 0001 78"));
  ASSERT_TRUE(fetch.ok()) << fetch.status();
  EXPECT_EQ(fetch->message, nullptr);
  EXPECT_EQ(fetch->not_served, "Fetch v11 (api key 1)");
  EXPECT_EQ(fetch->header.correlation_id, 5);
  EXPECT_EQ(fetch->header.client_id, "x");

  // FindCoordinator v3 is flexible: header v2, whose tags must parse.
  absl::StatusOr<DecodedRequest> find = DecodeRequest(FromHex("000a 0003 00000006 ffff 00"));
  ASSERT_TRUE(find.ok()) << find.status();
  EXPECT_EQ(find->not_served, "FindCoordinator v3 (api key 10)");
  EXPECT_EQ(find->header.client_id, std::nullopt);
  EXPECT_FALSE(DecodeRequest(FromHex("000a 0003 00000006 ffff")).ok());

  absl::StatusOr<DecodedRequest> produce_v2 = DecodeRequest(FromHex("0000 0002 00000001 ffff"));
  ASSERT_TRUE(produce_v2.ok());
  EXPECT_EQ(produce_v2->not_served, "Produce v2 (api key 0)");

  absl::StatusOr<DecodedRequest> metadata_v10 =
      DecodeRequest(FromHex("0003 000a 00000001 ffff 00"));
  ASSERT_TRUE(metadata_v10.ok());
  EXPECT_EQ(metadata_v10->not_served, "Metadata v10 (api key 3)");

  absl::StatusOr<DecodedRequest> negative = DecodeRequest(FromHex("0012 ffff 00000001 ffff"));
  ASSERT_TRUE(negative.ok());
  EXPECT_EQ(negative->not_served, "ApiVersions v-1 (api key 18)");
}

// Goal: header tags out of order are malformed.
TEST(WireDecodeRequestTest, OutOfOrderTagsAreMalformed) {
  // Metadata v9, all topics, with two header tags: 5 then 3.
  const std::string ok = "0003 0009 00000001 ffff 02 0300 0501 aa 00 00 00 00 00";
  EXPECT_FALSE(
      DecodeRequest(FromHex("0003 0009 00000001 ffff 02 0500 0301 aa 00 00 00 00 00")).ok());
  absl::StatusOr<DecodedRequest> d = DecodeRequest(FromHex(ok));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NE(d->message, nullptr);
}

// --- ApiVersions ---------------------------------------------------------------------

// Goal: Sarama 1.42.1's ApiVersions v3 request (the notes' worked bytes)
// decodes through the Framer.
TEST(WireApiVersionsTest, SaramaV3Request) {
  Framer f;
  f.Append(
      FromHex("00000021 0012 0003 00000001 0006 736172616d61 00 07 736172616d61 08"
              "76312e34322e31 00"));
  absl::StatusOr<std::optional<std::string>> frame = f.Next();
  ASSERT_TRUE(frame.ok() && frame->has_value());
  absl::StatusOr<DecodedRequest> d = DecodeRequest(**frame);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->header, (RequestHeader{18, 3, 1, "sarama"}));
  ASSERT_NE(d->message, nullptr);
  EXPECT_EQ(d->message->api, ApiKey::kApiVersions);
  EXPECT_EQ(d->message->correlation_id, 1);
  EXPECT_EQ(As<ApiVersionsRequest>(d->message).version, 3);
}

// Goal: librdkafka's v3 request (client id "rdkafka", software
// "librdkafka"/"2.0.2") decodes; a null software name is malformed.
TEST(WireApiVersionsTest, LibrdkafkaV3Request) {
  absl::StatusOr<DecodedRequest> d = DecodeRequest(FromHex(
      "0012 0003 00000002 0007 72646b61666b61 00 0b 6c696272646b61666b61 06 322e302e32 00"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->header.client_id, "rdkafka");
  EXPECT_EQ(As<ApiVersionsRequest>(d->message).version, 3);
  EXPECT_FALSE(DecodeRequest(FromHex("0012 0003 00000002 0007 72646b61666b61 00 00 00 00")).ok());
}

// Goal: a v4 request is answered in the v0 layout (header v0, no throttle),
// byte for byte as the notes give Kafka's answer.
TEST(WireApiVersionsTest, UnsupportedVersionAnswersInV0) {
  absl::StatusOr<DecodedRequest> d =
      DecodeRequest(FromHex("0012 0004 00000001 0006 736172616d61 00 ffff"));  // body not parsed
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_NE(d->message, nullptr);
  EXPECT_EQ(As<ApiVersionsRequest>(d->message).version, 4);
  auto r = NewResponse<ApiVersionsResponse>(*d->message);
  r->error = ErrorCode::UNSUPPORTED_VERSION;
  r->api_keys = {{ApiKey::kApiVersions, 0, 3}};
  EXPECT_EQ(ToHex(EncodeResponse(d->header, *r, {})),
            ToHex(FromHex("00000010 00000001 0023 00000001 0012 0000 0003")));
}

// Goal: the v3 response has header v0 (no tag byte), a compact array with
// per-entry tags, throttle and tags; ranges are clamped to what is served.
// The latest version of each key 0..49 a 2.6.3 broker advertises (the
// table of /work's Kafka 2.6 notes: PROTO/ApiKeys.java latestVersion).
constexpr int16_t kKafka26Latest[50] = {8, 11, 5, 9, 4, 3, 6, 3, 8, 7, 3, 7, 4, 4, 5, 5, 4,
                                        1, 3,  5, 4, 2, 3, 3, 1, 1, 1, 0, 3, 2, 2, 2, 3, 1,
                                        1, 2,  2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 0, 0};

// Goal: a successful answer lists every key as a 2.6 broker does, the four
// served up to the codec's newest version from the broker's own oldest
// (Produce 0-8, not 3-8: librdkafka compresses with gzip, snappy or lz4
// only if the range holds v0; a range past 8 is cut at 8), the rest with
// 2.6's {0, latest}; v3 is flexible (compact arrays, tags), v1 is not.
TEST(WireApiVersionsTest, V3ResponseLayoutAndClamping) {
  const RequestHeader h{18, 3, 9, "c"};
  auto req = NewRequest<ApiVersionsRequest>(9);
  auto r = NewResponse<ApiVersionsResponse>(*req);
  r->api_keys = {{ApiKey::kProduce, 0, 9},
                 {ApiKey::kMetadata, 0, 9},
                 {ApiKey::kApiVersions, 0, 3},
                 {ApiKey::kInitProducerId, 0, 3}};
  std::string v3 = "00000009 0000 33";  // correlation id, error, compact count 50 + 1
  std::string v1 = "00000009 0000 00000032";
  for (int key = 0; key < 50; ++key) {
    const std::string entry =
        absl::StrFormat("%04x %04x %04x", key, 0, static_cast<int>(kKafka26Latest[key]));
    v3 += " " + entry + " 00";
    v1 += " " + entry;
  }
  v3 += " 00000000 00";
  v1 += " 00000000";
  EXPECT_EQ(ToHex(EncodeResponse(h, *r, {})), ToHex(Frame(FromHex(v3))));
  EXPECT_EQ(ToHex(EncodeResponse({18, 1, 9, "c"}, *r, {})), ToHex(Frame(FromHex(v1))));
  // The client's side keeps the four it knows.
  absl::StatusOr<std::shared_ptr<Message>> back =
      DecodeResponse(h, std::string_view(EncodeResponse(h, *r, {})).substr(4));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(static_cast<const ApiVersionsResponse&>(**back).api_keys.size(), 4u);
}

// --- Metadata ----------------------------------------------------------------------

// Goal: Sarama's Metadata v9 request (null compact array: all topics) and
// one naming a topic decode; v9 is flexible, header v2.
TEST(WireMetadataTest, V9Requests) {
  absl::StatusOr<DecodedRequest> all =
      DecodeRequest(FromHex("0003 0009 00000007 0006 736172616d61 00 00 01 00 00 00"));
  ASSERT_TRUE(all.ok()) << all.status();
  const auto& m = As<MetadataRequest>(all->message);
  EXPECT_EQ(m.version, 9);
  EXPECT_TRUE(m.topics.empty());
  EXPECT_FALSE(m.no_topics);

  absl::StatusOr<DecodedRequest> one =
      DecodeRequest(FromHex("0003 0009 00000008 ffff 00 02 04 666f6f 00 01 00 00 00"));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(As<MetadataRequest>(one->message).topics, std::vector<std::string>{"foo"});

  // No topics (librdkafka's brokers-only request) at v9: compact count 0.
  absl::StatusOr<DecodedRequest> none =
      DecodeRequest(FromHex("0003 0009 00000008 ffff 00 01 01 00 00 00"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(As<MetadataRequest>(none->message).no_topics);
}

// Goal: null and empty topic arrays mean what the version says they mean.
TEST(WireMetadataTest, NullAndEmptyTopicArrays) {
  // v0: empty means all; null is malformed.
  absl::StatusOr<DecodedRequest> v0 = DecodeRequest(FromHex("0003 0000 00000001 ffff 00000000"));
  ASSERT_TRUE(v0.ok());
  EXPECT_FALSE(As<MetadataRequest>(v0->message).no_topics);
  EXPECT_FALSE(DecodeRequest(FromHex("0003 0000 00000001 ffff ffffffff")).ok());
  // v1: null means all, empty means none.
  absl::StatusOr<DecodedRequest> v1_null =
      DecodeRequest(FromHex("0003 0001 00000001 ffff ffffffff"));
  ASSERT_TRUE(v1_null.ok());
  EXPECT_FALSE(As<MetadataRequest>(v1_null->message).no_topics);
  absl::StatusOr<DecodedRequest> v1_empty =
      DecodeRequest(FromHex("0003 0001 00000001 ffff 00000000"));
  ASSERT_TRUE(v1_empty.ok());
  EXPECT_TRUE(As<MetadataRequest>(v1_empty->message).no_topics);
  // kafkajs's v6: nullable array, then allow_auto_topic_creation.
  absl::StatusOr<DecodedRequest> v6 =
      DecodeRequest(FromHex("0003 0006 00000001 0007 6b61666b616a73 00000001 0001 74 01"));
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(As<MetadataRequest>(v6->message).topics, std::vector<std::string>{"t"});
  EXPECT_EQ(As<MetadataRequest>(v6->message).version, 6);
}

MetadataResponse SmallMetadata(const Message& request) {
  MetadataResponse r;
  r.api = request.api;
  r.correlation_id = request.correlation_id;
  r.is_response = true;
  r.brokers = {{BrokerId(1), 0}};
  r.controller = BrokerId(1);
  PartitionMetadata p{ErrorCode::NONE, PartitionId(0), BrokerId(1), 3,
                      {BrokerId(1)},   {BrokerId(1)}};
  r.topics = {{ErrorCode::NONE, "t", {p}}};
  return r;
}

// Goal: the v9 response has header v1, compact fields, leader epoch,
// offline replicas and both authorized-operations fields at INT32_MIN.
TEST(WireMetadataTest, V9ResponseLayout) {
  auto req = NewRequest<MetadataRequest>(7);
  const MetadataResponse r = SmallMetadata(*req);
  EncodeContext context;
  context.brokers[BrokerId(1)] = {"b1", 9092};
  context.cluster_id = "c";
  EXPECT_EQ(
      ToHex(EncodeResponse({3, 9, 7, std::nullopt}, r, context)),
      ToHex(Frame(FromHex("00000007 00 00000000 02 00000001 03 6231 00002384 00 00"
                          "02 63 00000001 02 0000 02 74 00 02 0000 00000000 00000001"
                          "00000003 02 00000001 02 00000001 01 00 80000000 00 80000000 00"))));
  // v0: no throttle, rack, cluster id, controller, is_internal, epoch.
  EXPECT_EQ(ToHex(EncodeResponse({3, 0, 7, std::nullopt}, r, context)),
            ToHex(Frame(FromHex("00000007 00000001 00000001 0002 6231 00002384 00000001 0000"
                                "0001 74 00000001 0000 00000000 00000001 00000001 00000001"
                                "00000001 00000001"))));
}

// --- InitProducerId ----------------------------------------------------------------

// Goal: v3 (flexible, with producer id and epoch) and v1 decode; a
// transactional id is refused as not served.
TEST(WireInitProducerIdTest, Requests) {
  absl::StatusOr<DecodedRequest> v3 = DecodeRequest(
      FromHex("0016 0003 00000004 0006 736172616d61 00 00 0000ea60 ffffffffffffffff ffff 00"));
  ASSERT_TRUE(v3.ok()) << v3.status();
  const auto& m = As<InitProducerIdRequest>(v3->message);
  EXPECT_EQ(m.transaction_timeout, sim::Duration::Seconds(60));
  EXPECT_EQ(m.producer_id, ProducerId::kNone);
  EXPECT_EQ(m.producer_epoch, Epoch::kNone);

  absl::StatusOr<DecodedRequest> v1 =
      DecodeRequest(FromHex("0016 0001 00000004 ffff ffff 00007530"));
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(As<InitProducerIdRequest>(v1->message).transaction_timeout, sim::Duration::Seconds(30));

  absl::StatusOr<DecodedRequest> txn = DecodeRequest(
      FromHex("0016 0003 00000004 ffff 00 03 7478 0000ea60 ffffffffffffffff ffff 00"));
  ASSERT_TRUE(txn.ok()) << txn.status();
  EXPECT_EQ(txn->message, nullptr);
  EXPECT_NE(txn->not_served.find("transactional id \"tx\""), std::string::npos) << txn->not_served;
}

// Goal: the response has throttle first; header v1 and tags from v2.
TEST(WireInitProducerIdTest, ResponseLayout) {
  auto req = NewRequest<InitProducerIdRequest>(4);
  auto r = NewResponse<InitProducerIdResponse>(*req);
  r->producer_id = ProducerId(1000);
  r->producer_epoch = Epoch(0);
  EXPECT_EQ(ToHex(EncodeResponse({22, 3, 4, std::nullopt}, *r, {})),
            ToHex(Frame(FromHex("00000004 00 00000000 0000 00000000000003e8 0000 00"))));
  EXPECT_EQ(ToHex(EncodeResponse({22, 1, 4, std::nullopt}, *r, {})),
            ToHex(Frame(FromHex("00000004 00000000 0000 00000000000003e8 0000"))));
}

// --- Produce ---------------------------------------------------------------------------

// Two records, pid 1000 epoch 0 base sequence 7, timestamps 1700000000000
// and +5 ms: "k0"="v0" with prodsim-id 41, null key with "abc" and
// prodsim-id 42. The CRC (bytes 17..20) is filled in by WithCrc.
constexpr std::string_view kBatchHex =
    "0000000000000000 00000062 ffffffff 02 00000000"
    "0000 00000001 0000018bcfe56800 0000018bcfe56805 00000000000003e8 0000 00000007 00000002"
    "30 00 00 00 04 6b30 04 7630 02 14 70726f647369 6d2d6964 04 3431"
    "2e 00 0a 02 01 06 616263 02 14 70726f647369 6d2d6964 04 3432";

std::string WithCrc(std::string batch) {
  const uint32_t crc = Crc32c(std::string_view(batch).substr(21));
  for (int i = 0; i < 4; ++i)
    batch[17 + static_cast<size_t>(i)] = static_cast<char>(crc >> (24 - 8 * i));
  return batch;
}

// A Produce v`version` request (correlation 42, client "sarama", acks -1,
// timeout 10 s) for foo/2 carrying `record_set`.
std::string ProduceRequestBytes(int version, std::string_view record_set) {
  std::string out = FromHex(absl::StrCat("0000 000", version,
                                         " 0000002a 0006 736172616d61 ffff ffff 00002710"
                                         "00000001 0003 666f6f 00000001 00000002"));
  const uint32_t n = static_cast<uint32_t>(record_set.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(n >> (24 - 8 * i)));
  return out + std::string(record_set);
}

const RecordBatch& OnlyBatch(const absl::StatusOr<DecodedRequest>& d) {
  const auto& m = As<ProduceRequest>(d->message);
  EXPECT_EQ(m.batches.size(), 1u);
  return m.batches.begin()->second;
}

// Goal: a Produce v7 request with one batch of two records decodes into the
// model's fields, record ids from the prodsim-id headers.
TEST(WireProduceTest, V7RequestWithTwoRecords) {
  const std::string batch = WithCrc(FromHex(kBatchHex));
  ASSERT_EQ(batch.size(), 110u);
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(7, batch));
  ASSERT_TRUE(d.ok()) << d.status();
  const auto& m = As<ProduceRequest>(d->message);
  EXPECT_EQ(m.api, ApiKey::kProduce);
  EXPECT_EQ(m.correlation_id, 42);
  EXPECT_EQ(m.acks, -1);
  EXPECT_EQ(m.timeout, sim::Duration::Seconds(10));
  ASSERT_EQ(m.batches.count(TopicPartition{"foo", PartitionId(2)}), 1u);
  const RecordBatch& b = OnlyBatch(d);
  EXPECT_EQ(b.invalid, ErrorCode::NONE) << b.invalid_why;
  EXPECT_EQ(b.producer_id, ProducerId(1000));
  EXPECT_EQ(b.producer_epoch, Epoch(0));
  EXPECT_EQ(b.base_sequence, Sequence(7));
  ASSERT_EQ(b.records.size(), 2u);
  EXPECT_EQ(b.records[0].key, "k0");
  EXPECT_EQ(b.records[0].value_bytes, 2);
  EXPECT_EQ(b.records[0].record_id, 41u);
  EXPECT_EQ(b.records[0].timestamp, sim::Time::FromNanos(1700000000000 * 1000000));
  EXPECT_EQ(b.records[1].key, "");
  EXPECT_EQ(b.records[1].value_bytes, 3);
  EXPECT_EQ(b.records[1].record_id, 42u);
  EXPECT_EQ(b.records[1].timestamp, sim::Time::FromNanos(1700000000005 * 1000000));
}

// Goal: the notes' worked one-record batch has the CRC they give and
// decodes (no prodsim-id: record id 0).
TEST(WireProduceTest, NotesWorkedBatch) {
  const std::string batch = FromHex(
      "0000000000000000 0000003a ffffffff 02 bbcc4115 0000 00000000 0000018bcfe56800"
      "0000018bcfe56800 ffffffffffffffff ffff ffffffff 00000001 10 00 00 00 01 04 6869 00");
  EXPECT_EQ(Crc32c(std::string_view(batch).substr(21)), 0xBBCC4115u);
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(3, batch));
  ASSERT_TRUE(d.ok()) << d.status();
  const RecordBatch& b = OnlyBatch(d);
  EXPECT_EQ(b.invalid, ErrorCode::NONE) << b.invalid_why;
  EXPECT_FALSE(b.idempotent());
  ASSERT_EQ(b.records.size(), 1u);
  EXPECT_EQ(b.records[0].value_bytes, 2);
  EXPECT_EQ(b.records[0].record_id, 0u);
}

// The batch's `invalid` after changing kBatchHex with `edit` (CRC redone
// unless `keep_crc`).
template <typename Edit>
RecordBatch Edited(Edit edit, bool fix_crc = true) {
  std::string batch = WithCrc(FromHex(kBatchHex));
  edit(batch);
  if (fix_crc) batch = WithCrc(batch);
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(7, batch));
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return {};
  return OnlyBatch(d);
}

// Goal: a flipped byte under the CRC is CORRUPT_MESSAGE for the partition.
TEST(WireProduceTest, CrcMismatchIsCorruptMessage) {
  const RecordBatch b = Edited([](std::string& s) { s[s.size() - 1] ^= 1; }, false);
  EXPECT_EQ(b.invalid, ErrorCode::CORRUPT_MESSAGE);
  EXPECT_NE(b.invalid_why.find("CRC mismatch"), std::string::npos) << b.invalid_why;
  // Outside the CRC (partition leader epoch): still valid.
  EXPECT_EQ(Edited([](std::string& s) { s[12] = 0; }, false).invalid, ErrorCode::NONE);
}

// Goal: a batch marked compressed whose body is not that codec's stream is
// CORRUPT_MESSAGE, named (compression_test decodes real compressed ones);
// codecs 5-7 do not exist; zstd below Produce v7 is
// UNSUPPORTED_COMPRESSION_TYPE, as ProduceRequest.validateRecords says.
TEST(WireProduceTest, BadlyCompressedIsCorruptMessage) {
  const RecordBatch gzip = Edited([](std::string& s) { s[22] = 1; });
  EXPECT_EQ(gzip.invalid, ErrorCode::CORRUPT_MESSAGE);
  EXPECT_EQ(gzip.invalid_why.rfind("gzip: ", 0), 0u) << gzip.invalid_why;
  EXPECT_TRUE(gzip.records.empty());
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 2; }).invalid_why.rfind("snappy: ", 0), 0u);
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 3; }).invalid, ErrorCode::CORRUPT_MESSAGE);
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 4; }).invalid, ErrorCode::CORRUPT_MESSAGE);
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 5; }).invalid_why,
            "compression codec 5 does not exist");
  std::string batch = WithCrc(FromHex(kBatchHex));
  batch[22] = 4;
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(3, WithCrc(batch)));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(OnlyBatch(d).invalid, kUnsupportedCompressionType);
}

// Goal: each of Kafka's INVALID_RECORD rules for a client batch fires.
TEST(WireProduceTest, InvalidRecordRules) {
  EXPECT_EQ(Edited([](std::string& s) { s[7] = 5; }).invalid_why, "base offset 5, not 0");
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 0x10; }).invalid, ErrorCode::INVALID_RECORD);
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 0x20; }).invalid_why, "control batch");
  EXPECT_EQ(Edited([](std::string& s) { s[22] = 0x08; }).invalid, kInvalidTimestamp);
  // last offset delta 0 with two records.
  EXPECT_EQ(Edited([](std::string& s) { s[26] = 0; }).invalid, ErrorCode::INVALID_RECORD);
  // record count 3 with two records.
  const RecordBatch count = Edited([](std::string& s) {
    s[60] = 3;
    s[26] = 2;
  });
  EXPECT_EQ(count.invalid, ErrorCode::INVALID_RECORD);
  EXPECT_TRUE(count.records.empty());
  // Second record's offset delta 3 (byte 61 + 25 + 3).
  EXPECT_EQ(Edited([](std::string& s) { s[89] = 6; }).invalid_why, "record 1 has offset delta 3");
  // Producer id with base sequence -1.
  EXPECT_EQ(Edited([](std::string& s) { s.replace(53, 4, "\xff\xff\xff\xff"); }).invalid,
            ErrorCode::INVALID_RECORD);
  // Magic 1 on v3+.
  EXPECT_EQ(Edited([](std::string& s) { s[16] = 1; }).invalid, ErrorCode::INVALID_RECORD);
}

// Goal: two batches in one partition's record set are INVALID_RECORD.
TEST(WireProduceTest, TwoBatchesAreInvalidRecord) {
  const std::string batch = WithCrc(FromHex(kBatchHex));
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(7, batch + batch));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(OnlyBatch(d).invalid, ErrorCode::INVALID_RECORD);
}

// Goal: what Kafka finds while parsing (magic 3, a short batch length, a
// null or short record set) is an error, not a partition's answer.
TEST(WireProduceTest, ParseTimeFailuresAreErrors) {
  std::string batch = WithCrc(FromHex(kBatchHex));
  std::string magic3 = batch;
  magic3[16] = 3;
  EXPECT_FALSE(DecodeRequest(ProduceRequestBytes(7, magic3)).ok());
  std::string short_length = batch;
  short_length[11] = 13;
  EXPECT_FALSE(DecodeRequest(ProduceRequestBytes(7, short_length)).ok());
  EXPECT_FALSE(DecodeRequest(ProduceRequestBytes(7, batch.substr(0, 100))).ok());
  EXPECT_FALSE(DecodeRequest(ProduceRequestBytes(7, "")).ok());
  std::string null_set = ProduceRequestBytes(7, "");
  null_set.replace(null_set.size() - 4, 4, "\xff\xff\xff\xff");
  EXPECT_FALSE(DecodeRequest(null_set).ok());
}

// Goal: every strict prefix of a served request is malformed, with a
// one-line message.
TEST(WireDecodeRequestTest, TruncatedFramesAreErrors) {
  const std::vector<std::string> requests = {
      ProduceRequestBytes(7, WithCrc(FromHex(kBatchHex))),
      FromHex("0003 0009 00000008 ffff 00 02 04 666f6f 00 01 00 00 00"),
      FromHex("0016 0003 00000004 ffff 00 00 0000ea60 ffffffffffffffff ffff 00"),
      FromHex("0012 0003 00000001 0006 736172616d61 00 07 736172616d61 08 76312e34322e31 00"),
  };
  for (const std::string& full : requests) {
    ASSERT_TRUE(DecodeRequest(full).ok());
    for (size_t n = 0; n < full.size(); ++n) {
      SCOPED_TRACE(absl::StrCat(ToHex(full.substr(0, 4)), " cut at ", n));
      absl::StatusOr<DecodedRequest> d = DecodeRequest(full.substr(0, n));
      ASSERT_FALSE(d.ok());
      EXPECT_EQ(d.status().message().find('\n'), std::string::npos);
    }
  }
}

// Goal: a client's string in an error message is escaped, so that the
// message stays one line (a fuzzer finding: a topic named "f\no").
TEST(WireProduceTest, ErrorMessagesStayOneLine) {
  std::string request = ProduceRequestBytes(7, "");
  const size_t topic = request.find("foo");
  ASSERT_NE(topic, std::string::npos);
  request[topic + 1] = '\n';
  absl::StatusOr<DecodedRequest> d = DecodeRequest(request);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message().find('\n'), std::string::npos) << d.status();
  EXPECT_NE(d.status().message().find("f\\no/2"), std::string::npos) << d.status();
}

// Goal: the v8 response carries log start offset, empty record errors and a
// null error message; v3 rewrites KAFKA_STORAGE_ERROR as Kafka does.
TEST(WireProduceTest, ResponseLayout) {
  auto req = NewRequest<ProduceRequest>(9);
  auto r = NewResponse<ProduceResponse>(*req);
  r->partitions[{"foo", PartitionId(2)}] = {ErrorCode::NONE, Offset(5), -1, Offset(0)};
  EXPECT_EQ(ToHex(EncodeResponse({0, 8, 9, std::nullopt}, *r, {})),
            ToHex(Frame(FromHex("00000009 00000001 0003 666f6f 00000001 00000002 0000"
                                "0000000000000005 ffffffffffffffff 0000000000000000 00000000 ffff"
                                "00000000"))));
  r->partitions[{"foo", PartitionId(2)}] = {ErrorCode::KAFKA_STORAGE_ERROR, Offset(-1), -1,
                                            Offset(-1)};
  EXPECT_EQ(ToHex(EncodeResponse({0, 3, 9, std::nullopt}, *r, {})),
            ToHex(Frame(FromHex("00000009 00000001 0003 666f6f 00000001 00000002 0006"
                                "ffffffffffffffff ffffffffffffffff 00000000"))));
}

// Goal: a response with another correlation id than the request's is an
// error on the client's side.
TEST(WireDecodeResponseTest, CorrelationIdMismatch) {
  const RequestHeader h{22, 1, 4, std::nullopt};
  EXPECT_TRUE(DecodeResponse(h, FromHex("00000004 00000000 0000 00000000000003e8 0000")).ok());
  EXPECT_FALSE(DecodeResponse(h, FromHex("00000005 00000000 0000 00000000000003e8 0000")).ok());
  EXPECT_FALSE(DecodeResponse(h, FromHex("00000004 00000000 0000 00000000000003e8 00")).ok());
}

// Goal: the fuzzer's hand-made seeds (fuzz/corpus/wire_codec) still decode
// as their names say, so that fuzzing starts from every served API.
TEST(WireCorpusTest, SeedsDecodeAsNamed) {
  const std::vector<std::pair<std::string, int>> seeds = {
      {"apiversions-v0-kafkajs", 1},
      {"apiversions-v3-sarama", 1},
      {"apiversions-v3-librdkafka", 1},
      {"apiversions-v4-unsupported", 1},
      {"metadata-v0-all", 1},
      {"metadata-v4-librdkafka-topic", 1},
      {"metadata-v9-sarama-all", 1},
      {"metadata-v9-one-topic", 1},
      {"initproducerid-v0", 1},
      {"initproducerid-v3-sarama", 1},
      {"produce-v3-one-record", 1},
      {"produce-v7-two-records-prodsim-id", 1},
      {"produce-v8-gzip-flag-plain-body", 1},
      {"fetch-v11-not-served", 0},
      {"produce-v8-gzip-three-records", 1},
      {"produce-v8-snappy-three-records", 1},
      {"produce-v8-lz4-three-records", 1},
      {"produce-v8-zstd-three-records", 1},
      {"connection-sarama-1.42.1", 4},
  };
  for (const auto& [name, messages] : seeds) {
    SCOPED_TRACE(name);
    std::ifstream in(absl::StrCat(PRODSIM_SOURCE_DIR, "/fuzz/corpus/wire_codec/", name),
                     std::ios::binary);
    ASSERT_TRUE(in.good());
    Framer f;
    f.Append(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    int decoded = 0;
    for (;;) {
      absl::StatusOr<std::optional<std::string>> frame = f.Next();
      ASSERT_TRUE(frame.ok()) << frame.status();
      if (!frame->has_value()) break;
      absl::StatusOr<DecodedRequest> d = DecodeRequest(**frame);
      ASSERT_TRUE(d.ok()) << d.status();
      if (d->message == nullptr) continue;
      ++decoded;
      if (d->message->api != ApiKey::kProduce) continue;
      const auto& m = As<ProduceRequest>(d->message);
      ASSERT_EQ(m.batches.size(), 1u);
      const RecordBatch& b = m.batches.begin()->second;
      EXPECT_EQ(b.invalid, name == "produce-v8-gzip-flag-plain-body" ? ErrorCode::CORRUPT_MESSAGE
                                                                     : ErrorCode::NONE)
          << b.invalid_why;
      if (name.ends_with("-three-records")) {
        EXPECT_EQ(b.records.size(), 3u);
      }
    }
    EXPECT_EQ(f.buffered(), 0u);
    EXPECT_EQ(decoded, messages);
  }
}

// --- Limits per request (codec.h) ----------------------------------------------------

// The frame body (no size prefix) of `req` as Produce v7.
std::string ProduceBody(const ProduceRequest& req) {
  return EncodeRequest({0, 7, 1, std::string("limits")}, req).substr(4);
}

// A Produce request with one one-record batch per partition, `partitions`
// partitions in each of `topics` topics named `name` + an index.
ProduceRequest Spread(const std::string& name, int topics, int partitions) {
  auto req = NewRequest<ProduceRequest>(1);
  for (int t = 0; t < topics; ++t) {
    for (int p = 0; p < partitions; ++p) {
      RecordBatch b;
      b.records.push_back(Record{"", 1, sim::Time(), 7});
      req->batches[{topics == 1 ? name : absl::StrCat(name, t), PartitionId(p)}] = b;
    }
  }
  return *req;
}

void ExpectRefused(const std::string& body, std::string_view what) {
  absl::StatusOr<DecodedRequest> d = DecodeRequest(body);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->message, nullptr);
  EXPECT_NE(d->not_served.find(what), std::string::npos) << d->not_served;
  EXPECT_NE(d->not_served.find("prodsim's limit per request"), std::string::npos);
}

void ExpectServed(const std::string& body) {
  absl::StatusOr<DecodedRequest> d = DecodeRequest(body);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NE(d->message, nullptr) << d->not_served;
}

// Goal: a topic name past Kafka's 249 bytes (the 82 KB request that pinned
// 48 MB named one of 32,767), more than 1,000 topics or more than 10,000
// partitions in one request are refused as not served, naming the limit,
// and a request at each limit is served.
TEST(WireLimitsTest, TopicNamesTopicsAndPartitions) {
  ExpectServed(ProduceBody(Spread(std::string(249, 't'), 1, 1)));
  ExpectRefused(ProduceBody(Spread(std::string(250, 't'), 1, 1)), "topic name of 250 bytes");
  ExpectRefused(ProduceBody(Spread(std::string(32767, 't'), 1, 1500)), "topic name of 32767");
  ExpectServed(ProduceBody(Spread("t", 1000, 1)));
  ExpectRefused(ProduceBody(Spread("t", 1001, 1)), "1001 topics");
  ExpectServed(ProduceBody(Spread("t", 100, 100)));
  ExpectRefused(ProduceBody(Spread("t", 100, 101)), "more than 10000 partitions");

  MetadataRequest m;
  m.api = ApiKey::kMetadata;
  m.topics.push_back(std::string(250, 'm'));
  ExpectRefused(EncodeRequest({3, 9, 1, std::nullopt}, m).substr(4), "topic name of 250");
  m.topics.assign(1001, "m");
  ExpectRefused(EncodeRequest({3, 9, 1, std::nullopt}, m).substr(4), "1001 topics");
  m.topics.assign(1000, "m");
  ExpectServed(EncodeRequest({3, 9, 1, std::nullopt}, m).substr(4));
}

// Goal: more than 1,000,000 records in one request are refused (6 bytes on
// the wire each, 56 decoded), counted as they decode; a batch whose count
// claims more than its bytes hold stays INVALID_RECORD, Kafka's answer.
TEST(WireLimitsTest, RecordsPerRequest) {
  auto req = NewRequest<ProduceRequest>(1);
  RecordBatch b;
  b.records.assign(500001, Record{"", 0, sim::Time(), 0});
  req->batches[{"t", PartitionId(0)}] = b;
  req->batches[{"t", PartitionId(1)}] = b;
  ExpectRefused(ProduceBody(*req), "more than 1000000 records");

  std::string batch = WithCrc(FromHex(kBatchHex));
  batch.replace(57, 4, "\x7f\xff\xff\xff");  // record count 2^31 - 1
  batch.replace(23, 4, "\x7f\xff\xff\xfe");  // last offset delta to match
  absl::StatusOr<DecodedRequest> d = DecodeRequest(ProduceRequestBytes(7, WithCrc(batch)));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_NE(d->message, nullptr) << d->not_served;
  EXPECT_EQ(OnlyBatch(d).invalid, ErrorCode::INVALID_RECORD);
}

// Goal: compressed batches may decompress to 64 MiB in all per request, so
// that many batches each under the per-batch bound cannot cost more.
TEST(WireLimitsTest, DecompressedBytesPerRequest) {
  auto req = NewRequest<ProduceRequest>(1);
  RecordBatch b;
  b.compression = static_cast<int8_t>(Compression::kZstd);
  b.records.push_back(Record{"", 40 << 20, sim::Time(), 1});
  req->batches[{"t", PartitionId(0)}] = b;
  ExpectServed(ProduceBody(*req));
  req->batches[{"t", PartitionId(1)}] = b;
  const std::string two = ProduceBody(*req);
  EXPECT_LT(two.size(), 100u << 10);  // 80 MiB of records in a few kilobytes
  ExpectRefused(two, "decompressed bytes");
}

// Goal: Ready says whether Next has a frame or an error to give, and a
// buffer that held a large frame gives its memory back.
TEST(WireFramerTest, ReadyAndGivesMemoryBack) {
  Framer f;
  EXPECT_FALSE(f.Ready());
  const std::string big = Frame(std::string(size_t{4} << 20, 'x'));
  f.Append(std::string_view(big).substr(0, 100));
  EXPECT_FALSE(f.Ready());
  f.Append(std::string_view(big).substr(100));
  EXPECT_TRUE(f.Ready());
  EXPECT_GE(f.memory(), size_t{4} << 20);
  absl::StatusOr<std::optional<std::string>> frame = f.Next();
  ASSERT_TRUE(frame.ok());
  ASSERT_TRUE(frame->has_value());
  EXPECT_FALSE(f.Ready());
  EXPECT_LE(f.memory(), size_t{1} << 20);
  Framer bad;
  bad.Append(FromHex("ffffffff"));
  EXPECT_TRUE(bad.Ready());
}

}  // namespace
}  // namespace kafka::wire
