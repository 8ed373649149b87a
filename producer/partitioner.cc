// Sarama's partitioners (sarama v1.42.1 partitioner.go), with the PRNG of
// the simulation in place of Go's wall-clock-seeded math/rand.
#include "producer/partitioner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/assert.h"

namespace sarama {

// go hash/fnv: New32a's offset basis and prime.
uint32_t Fnv1a32(std::string_view bytes) {
  constexpr uint32_t kOffsetBasis = 2166136261u;
  constexpr uint32_t kPrime = 16777619u;
  uint32_t h = kOffsetBasis;
  for (const char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= kPrime;
  }
  return h;
}

// go hash/crc32: ChecksumIEEE, the reflected polynomial 0xedb88320, bit by
// bit (keys are short; no table needed).
uint32_t Crc32Ieee(std::string_view bytes) {
  constexpr uint32_t kReflectedPoly = 0xedb88320u;
  uint32_t crc = 0xffffffffu;
  for (const char c : bytes) {
    crc ^= static_cast<uint8_t>(c);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1u) != 0 ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
    }
  }
  return ~crc;
}

// sarama v1.42.1 partitioner.go: hashPartitioner.Partition, the default
// branch: `int32(Sum32()) % numPartitions`, negated if negative. Go's %
// truncates toward zero like C++'s, so the remainder has the sign of the
// hash and lies in (-n, n); its negation is always representable, even for
// a hash of 0x80000000. Note this is not the Java client's mapping, which
// masks the sign bit first (the reference_abs option).
int32_t SaramaHashToPartition(uint32_t hash, int32_t num_partitions) {
  PRODSIM_ASSERT_MSG(num_partitions > 0, "Go panics on a zero divisor");
  // C++20 defines the conversion as modulo 2^32, as Go's int32() does.
  int32_t partition = static_cast<int32_t>(hash) % num_partitions;
  if (partition < 0) partition = -partition;
  PRODSIM_ASSERT(partition >= 0);
  PRODSIM_ASSERT(partition < num_partitions);
  return partition;
}

// sarama v1.42.1 partitioner.go: manualPartitioner.Partition.
std::pair<int32_t, Error> ManualPartitioner::Partition(const ProducerMessage& msg,
                                                       int32_t /*num_partitions*/) {
  return {msg.partition, kNoError};
}

// sarama v1.42.1 partitioner.go: randomPartitioner.Partition.
std::pair<int32_t, Error> RandomPartitioner::Partition(const ProducerMessage& /*msg*/,
                                                       int32_t num_partitions) {
  PRODSIM_ASSERT_MSG(num_partitions > 0, "Go's rand.Intn panics on n <= 0");
  const uint64_t choice = prng_.Below(static_cast<uint64_t>(num_partitions));
  return {static_cast<int32_t>(choice), kNoError};
}

// sarama v1.42.1 partitioner.go: roundRobinPartitioner.Partition. Go does
// not check num_partitions here; neither does the model.
std::pair<int32_t, Error> RoundRobinPartitioner::Partition(const ProducerMessage& /*msg*/,
                                                           int32_t num_partitions) {
  if (partition_ >= num_partitions) partition_ = 0;
  const int32_t choice = partition_;
  ++partition_;
  return {choice, kNoError};
}

// sarama v1.42.1 partitioner.go: NewCustomPartitioner (the options applied
// to a hashPartitioner whose fallback is a random partitioner).
HashPartitioner::HashPartitioner(sim::Prng prng, Options options)
    : random_(prng), options_(options) {}

// sarama v1.42.1 partitioner.go: hashPartitioner.Partition. A key's Encode
// cannot fail here (keys are strings), so the error paths for it are gone.
// With both options set, reference_abs wins, as in Go's if-chain.
std::pair<int32_t, Error> HashPartitioner::Partition(const ProducerMessage& msg,
                                                     int32_t num_partitions) {
  if (!msg.key.has_value()) return random_.Partition(msg, num_partitions);
  PRODSIM_ASSERT_MSG(num_partitions > 0, "Go panics on a zero divisor");
  const uint32_t hash =
      options_.hash == HashFunction::kFnv1a32 ? Fnv1a32(*msg.key) : Crc32Ieee(*msg.key);
  int32_t partition = 0;
  if (options_.reference_abs) {
    partition = (static_cast<int32_t>(hash) & 0x7fffffff) % num_partitions;
  } else if (options_.hash_unsigned) {
    partition = static_cast<int32_t>(hash % static_cast<uint32_t>(num_partitions));
  } else {
    partition = SaramaHashToPartition(hash, num_partitions);
  }
  return {partition, kNoError};
}

std::unique_ptr<Partitioner> NewManualPartitioner() {
  return std::make_unique<ManualPartitioner>();
}

std::unique_ptr<Partitioner> NewRandomPartitioner(sim::Prng prng) {
  return std::make_unique<RandomPartitioner>(prng);
}

std::unique_ptr<Partitioner> NewRoundRobinPartitioner() {
  return std::make_unique<RoundRobinPartitioner>();
}

// sarama v1.42.1 partitioner.go: NewHashPartitioner.
std::unique_ptr<Partitioner> NewHashPartitioner(sim::Prng prng) {
  return std::make_unique<HashPartitioner>(prng, HashPartitioner::Options{});
}

// sarama v1.42.1 partitioner.go: NewReferenceHashPartitioner.
std::unique_ptr<Partitioner> NewReferenceHashPartitioner(sim::Prng prng) {
  HashPartitioner::Options options;
  options.reference_abs = true;
  return std::make_unique<HashPartitioner>(prng, options);
}

// sarama v1.42.1 partitioner.go: NewConsistentCRCHashPartitioner.
std::unique_ptr<Partitioner> NewConsistentCrcHashPartitioner(sim::Prng prng) {
  HashPartitioner::Options options;
  options.hash = HashPartitioner::HashFunction::kCrc32Ieee;
  options.hash_unsigned = true;
  return std::make_unique<HashPartitioner>(prng, options);
}

// sarama v1.42.1 async_producer.go: newTopicProducer's
// `conf.Producer.Partitioner(topic)`.
std::unique_ptr<Partitioner> NewPartitioner(const Config& conf, const std::string& topic,
                                            sim::Prng prng) {
  std::unique_ptr<Partitioner> p;
  if (conf.producer.partitioner_constructor) {
    p = conf.producer.partitioner_constructor(topic);
    PRODSIM_ASSERT_MSG(p != nullptr, "a PartitionerConstructor returned null");
    return p;
  }
  switch (conf.producer.partitioner) {
    case PartitionerKind::kHash: return NewHashPartitioner(prng);
    case PartitionerKind::kRandom: return NewRandomPartitioner(prng);
    case PartitionerKind::kManual: return NewManualPartitioner();
    case PartitionerKind::kRoundRobin: return NewRoundRobinPartitioner();
  }
  PRODSIM_ASSERT_MSG(false, "PartitionerKind value outside the enum");
  return nullptr;
}

}  // namespace sarama
