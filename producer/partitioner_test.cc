// Tests of Sarama's partitioners (partitioner.cc): golden hash values and
// partitions computed independently of the code under test, consistency of
// the key mapping, nil keys, and the stateful partitioners.
#include "producer/partitioner.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "sim/core/prng.h"

namespace sarama {
namespace {

// FNV-1a 32 written out again from its definition, independent of
// partitioner.cc: XOR the byte in, then multiply by the FNV prime.
uint32_t ReferenceFnv1a32(const std::string& s) {
  uint64_t h = 0x811c9dc5u;
  for (const char ch : s) {
    h = ((h ^ static_cast<unsigned char>(ch)) * 0x01000193u) & 0xffffffffu;
  }
  return static_cast<uint32_t>(h);
}

// Sarama's default mapping computed in 64-bit arithmetic: the hash read as a
// two's-complement int32, the remainder with the dividend's sign (Go), then
// its absolute value.
int32_t ReferenceSaramaPartition(uint32_t hash, int32_t n) {
  const int64_t as_int32 = hash >= 0x80000000u ? int64_t{hash} - (int64_t{1} << 32) : int64_t{hash};
  const int64_t rem = as_int32 % n;
  return static_cast<int32_t>(rem < 0 ? -rem : rem);
}

ProducerMessage Keyed(std::string key) {
  ProducerMessage m;
  m.topic = "t";
  m.key = std::move(key);
  return m;
}

// Known FNV-1a 32 test vectors, from both implementations.
TEST(PartitionerTest, Fnv1a32MatchesKnownVectors) {
  EXPECT_EQ(Fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
  EXPECT_EQ(ReferenceFnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(ReferenceFnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(ReferenceFnv1a32("foobar"), 0xbf9cf968u);
  for (const char* key : {"key-1", "order-42", "user_7", "hello", "\xff\x00\x80"}) {
    EXPECT_EQ(Fnv1a32(key), ReferenceFnv1a32(key)) << key;
  }
}

// CRC-32 (IEEE) matches its standard check value.
TEST(PartitionerTest, Crc32IeeeMatchesCheckValue) {
  EXPECT_EQ(Crc32Ieee("123456789"), 0xcbf43926u);
  EXPECT_EQ(Crc32Ieee(""), 0u);
}

struct Golden {
  const char* key;
  uint32_t fnv;
  int32_t n;
  int32_t sarama;     // NewHashPartitioner
  int32_t reference;  // NewReferenceHashPartitioner
};

// Computed outside C++ (Python: h = fnv1a32(key); s = h - 2**32 if h >= 2**31
// else h; sarama = abs(s) % n; reference = (h & 0x7fffffff) % n). The first
// keys hash with the sign bit set, where the two mappings differ.
constexpr Golden kGolden[] = {
    {"", 0x811c9dc5u, 6, 3, 5},         {"", 0x811c9dc5u, 10, 5, 3},
    {"a", 0xe40c292cu, 7, 6, 3},        {"a", 0xe40c292cu, 10, 6, 2},
    {"a", 0xe40c292cu, 100, 76, 72},    {"foobar", 0xbf9cf968u, 10, 6, 2},
    {"foobar", 0xbf9cf968u, 16, 8, 8},  {"b", 0xe70c2de5u, 10, 9, 9},
    {"b", 0xe70c2de5u, 16, 11, 5},      {"c", 0xe60c2c52u, 7, 3, 6},
    {"key-1", 0x57e03446u, 10, 8, 8},   {"order-42", 0x572446f4u, 7, 4, 4},
    {"user_7", 0x62d75520u, 100, 0, 0}, {"hello", 0x4f9f2cabu, 100, 23, 23},
};

// The hash partitioner maps keys to Sarama's partitions, bit for bit,
// including keys whose hash has the sign bit set.
TEST(PartitionerTest, HashPartitionerGoldenPartitions) {
  auto hash = NewHashPartitioner(sim::Prng(1));
  auto reference = NewReferenceHashPartitioner(sim::Prng(1));
  for (const Golden& g : kGolden) {
    SCOPED_TRACE(std::string("key '") + g.key + "' n=" + std::to_string(g.n));
    ASSERT_EQ(ReferenceFnv1a32(g.key), g.fnv);
    EXPECT_EQ(ReferenceSaramaPartition(g.fnv, g.n), g.sarama);
    const auto [p, err] = hash->Partition(Keyed(g.key), g.n);
    EXPECT_TRUE(err.ok());
    EXPECT_EQ(p, g.sarama);
    const auto [r, rerr] = reference->Partition(Keyed(g.key), g.n);
    EXPECT_TRUE(rerr.ok());
    EXPECT_EQ(r, g.reference);
  }
}

// The signed-remainder-then-negate rule holds at the edges of int32: the
// most negative hash, -1, and the largest positive one.
TEST(PartitionerTest, SaramaHashToPartitionAtInt32Edges) {
  // 0x80000000 is INT32_MIN; 2^31 mod 7 = 2, and the remainder is -2.
  EXPECT_EQ(SaramaHashToPartition(0x80000000u, 7), 2);
  EXPECT_EQ(SaramaHashToPartition(0x80000000u, 1), 0);
  EXPECT_EQ(SaramaHashToPartition(0x80000000u, 2147483647), 1);
  EXPECT_EQ(SaramaHashToPartition(0xffffffffu, 10), 1);  // -1 % 10 = -1
  EXPECT_EQ(SaramaHashToPartition(0x7fffffffu, 10), 7);
  EXPECT_EQ(SaramaHashToPartition(0u, 10), 0);
  for (const uint32_t h : {0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 0x7fffffffu}) {
    for (const int32_t n : {1, 2, 3, 7, 10, 1000, 2147483647}) {
      EXPECT_EQ(SaramaHashToPartition(h, n), ReferenceSaramaPartition(h, n)) << h << " " << n;
    }
  }
}

// The consistent CRC partitioner (librdkafka's mapping) takes the unsigned
// CRC-32 modulo n.
TEST(PartitionerTest, ConsistentCrcPartitionerGolden) {
  auto crc = NewConsistentCrcHashPartitioner(sim::Prng(1));
  // Python: zlib.crc32(key) % n.
  EXPECT_EQ(crc->Partition(Keyed("a"), 7).first, 4);
  EXPECT_EQ(crc->Partition(Keyed("a"), 16).first, 3);
  EXPECT_EQ(crc->Partition(Keyed("key-1"), 16).first, 10);
  EXPECT_EQ(crc->Partition(Keyed("order-42"), 16).first, 14);
  EXPECT_EQ(crc->Partition(Keyed("c"), 16).first, 15);
}

// The same key maps to the same partition every time, whatever the
// partitioner's PRNG stream, and the hash partitioner says it needs
// consistency for keyed messages only.
TEST(PartitionerTest, HashPartitionerIsConsistent) {
  auto a = NewHashPartitioner(sim::Prng(1));
  auto b = NewHashPartitioner(sim::Prng(999));
  for (int i = 0; i < 200; ++i) {
    const std::string key = "key-" + std::to_string(i);
    const int32_t first = a->Partition(Keyed(key), 12).first;
    EXPECT_EQ(a->Partition(Keyed(key), 12).first, first);
    EXPECT_EQ(b->Partition(Keyed(key), 12).first, first);
  }
  EXPECT_TRUE(a->RequiresConsistency());
  EXPECT_TRUE(a->MessageRequiresConsistency(Keyed("")));
  EXPECT_FALSE(a->MessageRequiresConsistency(ProducerMessage{}));
}

// A nil key goes to the random partitioner, drawn from the given stream
// (same seed, same choices); an empty key is hashed, not random.
TEST(PartitionerTest, NilKeysAreRandomEmptyKeysAreHashed) {
  auto a = NewHashPartitioner(sim::Prng(7));
  auto b = NewHashPartitioner(sim::Prng(7));
  const ProducerMessage nil_key;
  std::set<int32_t> seen;
  for (int i = 0; i < 400; ++i) {
    const auto [p, err] = a->Partition(nil_key, 5);
    EXPECT_TRUE(err.ok());
    EXPECT_GE(p, 0);
    EXPECT_LT(p, 5);
    EXPECT_EQ(b->Partition(nil_key, 5).first, p);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 5u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a->Partition(Keyed(""), 6).first, 3);  // 0x811c9dc5 as above
  }
}

// The random partitioner covers every partition, deterministically per seed,
// and does not require consistency.
TEST(PartitionerTest, RandomPartitionerIsDeterministicPerSeed) {
  RandomPartitioner a(sim::Prng(3));
  RandomPartitioner b(sim::Prng(3));
  RandomPartitioner c(sim::Prng(4));
  std::vector<int32_t> va, vb, vc;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.Partition(ProducerMessage{}, 8).first);
    vb.push_back(b.Partition(ProducerMessage{}, 8).first);
    vc.push_back(c.Partition(ProducerMessage{}, 8).first);
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_EQ(std::set<int32_t>(va.begin(), va.end()).size(), 8u);
  EXPECT_FALSE(a.RequiresConsistency());
  EXPECT_FALSE(a.MessageRequiresConsistency(Keyed("k")));
}

// Round robin walks the partitions in order and starts over at 0 when the
// partition count drops to or below its next choice.
TEST(PartitionerTest, RoundRobinWalksAndWraps) {
  RoundRobinPartitioner rr;
  std::vector<int32_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(rr.Partition(ProducerMessage{}, 3).first);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 0, 1, 2, 0}));
  // Next choice is 1; with 1 partition it starts over.
  EXPECT_EQ(rr.Partition(ProducerMessage{}, 1).first, 0);
  // Next is 1 again; with 5 partitions it goes on from there.
  EXPECT_EQ(rr.Partition(ProducerMessage{}, 5).first, 1);
  EXPECT_EQ(rr.Partition(ProducerMessage{}, 5).first, 2);
  EXPECT_FALSE(rr.RequiresConsistency());
}

// The manual partitioner returns the message's partition as is, even out of
// range (the caller turns that into ErrInvalidPartition).
TEST(PartitionerTest, ManualReturnsMessagePartition) {
  ManualPartitioner manual;
  ProducerMessage m;
  m.partition = 2;
  EXPECT_EQ(manual.Partition(m, 3).first, 2);
  m.partition = 9;
  const auto [p, err] = manual.Partition(m, 3);
  EXPECT_EQ(p, 9);
  EXPECT_TRUE(err.ok());
  EXPECT_TRUE(manual.RequiresConsistency());
  EXPECT_TRUE(manual.MessageRequiresConsistency(ProducerMessage{}));
}

// NewPartitioner builds the configured kind, or calls the user's
// constructor with the topic when one is set.
TEST(PartitionerTest, NewPartitionerHonoursConfig) {
  Config conf = NewConfig();
  auto hash = NewPartitioner(conf, "t", sim::Prng(1));
  EXPECT_EQ(hash->Partition(Keyed("a"), 10).first, 6);
  EXPECT_NE(dynamic_cast<HashPartitioner*>(hash.get()), nullptr);
  conf.producer.partitioner = PartitionerKind::kRandom;
  EXPECT_NE(dynamic_cast<RandomPartitioner*>(NewPartitioner(conf, "t", sim::Prng(1)).get()),
            nullptr);
  conf.producer.partitioner = PartitionerKind::kManual;
  EXPECT_NE(dynamic_cast<ManualPartitioner*>(NewPartitioner(conf, "t", sim::Prng(1)).get()),
            nullptr);
  conf.producer.partitioner = PartitionerKind::kRoundRobin;
  EXPECT_NE(dynamic_cast<RoundRobinPartitioner*>(NewPartitioner(conf, "t", sim::Prng(1)).get()),
            nullptr);

  std::vector<std::string> topics;
  conf.producer.partitioner_constructor = [&topics](const std::string& topic) {
    topics.push_back(topic);
    return NewManualPartitioner();
  };
  conf.producer.partitioner = PartitionerKind::kHash;  // ignored: the constructor wins
  auto custom = NewPartitioner(conf, "orders", sim::Prng(1));
  EXPECT_NE(dynamic_cast<ManualPartitioner*>(custom.get()), nullptr);
  EXPECT_EQ(topics, (std::vector<std::string>{"orders"}));
}

// For any key and partition count, the hash partitioner's choice is in range
// and equals the independently computed Sarama mapping of the FNV-1a hash.
RC_GTEST_PROP(PartitionerProperty, HashChoiceMatchesReference, (const std::string& key)) {
  const auto n = *rc::gen::inRange<int32_t>(1, 100001);
  HashPartitioner p(sim::Prng(1), HashPartitioner::Options{});
  ProducerMessage m;
  m.key = key;
  const auto [choice, err] = p.Partition(m, n);
  RC_ASSERT(err.ok());
  RC_ASSERT(choice >= 0);
  RC_ASSERT(choice < n);
  RC_ASSERT(choice == ReferenceSaramaPartition(ReferenceFnv1a32(key), n));
}

}  // namespace
}  // namespace sarama
