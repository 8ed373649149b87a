// Partitioners: how the producer picks a message's partition (sarama v1.42.1
// partitioner.go).
//
// The hash partitioners reproduce Sarama's mapping bit for bit (FNV-1a 32
// over the key bytes, Sarama's own signed modulo and absolute value), so
// that a key lands on the same partition as it would with Sarama. Where
// Sarama draws random numbers (seeded from the wall clock in Go), the model
// draws from a sim::Prng stream that the caller forks, so a run stays a pure
// function of its seed.
//
// A partitioner belongs to one topicProducer task and is not shared; the
// random and round-robin ones keep state between calls, as in Go.
#ifndef PRODSIM_PRODUCER_PARTITIONER_H_
#define PRODSIM_PRODUCER_PARTITIONER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "producer/config.h"
#include "producer/errors.h"
#include "producer/message.h"
#include "sim/core/prng.h"

namespace sarama {

// sarama: Partitioner, and DynamicConsistencyPartitioner folded in.
class Partitioner {
 public:
  virtual ~Partitioner() = default;

  // The partition in [0, num_partitions) for `msg`, or an error. The caller
  // (topicProducer.partitionMessage) rejects a choice outside that range
  // with ErrInvalidPartition; the manual partitioner relies on that.
  // REQUIRES: num_partitions > 0 for the hash and random partitioners (Go
  // panics on a zero divisor; Sarama never calls with zero partitions).
  virtual std::pair<int32_t, Error> Partition(const ProducerMessage& msg,
                                              int32_t num_partitions) = 0;

  // sarama: Partitioner.RequiresConsistency. True if the key-to-partition
  // mapping must hold, so that the caller picks among all partitions
  // (client.Partitions) rather than only the writable ones.
  virtual bool RequiresConsistency() const = 0;

  // sarama: DynamicConsistencyPartitioner.MessageRequiresConsistency. Go
  // asks a partitioner that implements that interface per message, and falls
  // back to RequiresConsistency otherwise; the default here is that fallback.
  virtual bool MessageRequiresConsistency(const ProducerMessage& /*msg*/) const {
    return RequiresConsistency();
  }
};

// sarama: manualPartitioner. Returns the message's own Partition field.
class ManualPartitioner final : public Partitioner {
 public:
  std::pair<int32_t, Error> Partition(const ProducerMessage& msg, int32_t num_partitions) override;
  bool RequiresConsistency() const override { return true; }
};

// sarama: randomPartitioner. Uniform over [0, num_partitions).
class RandomPartitioner final : public Partitioner {
 public:
  explicit RandomPartitioner(sim::Prng prng) : prng_(prng) {}
  std::pair<int32_t, Error> Partition(const ProducerMessage& msg, int32_t num_partitions) override;
  bool RequiresConsistency() const override { return false; }

 private:
  sim::Prng prng_;
};

// sarama: roundRobinPartitioner. 0, 1, ..., n-1, 0, ...; when the partition
// count shrinks below the next choice it starts again from 0.
class RoundRobinPartitioner final : public Partitioner {
 public:
  std::pair<int32_t, Error> Partition(const ProducerMessage& msg, int32_t num_partitions) override;
  bool RequiresConsistency() const override { return false; }

 private:
  int32_t partition_ = 0;
};

// sarama: hashPartitioner with its options (HashPartitionerOption).
class HashPartitioner final : public Partitioner {
 public:
  enum class HashFunction : uint8_t {
    kFnv1a32,    // fnv.New32a, the default
    kCrc32Ieee,  // crc32.NewIEEE (NewConsistentCRCHashPartitioner)
  };
  struct Options {
    HashFunction hash = HashFunction::kFnv1a32;
    // WithAbsFirst: (int32(h) & 0x7fffffff) % n, as the Java client does.
    bool reference_abs = false;
    // WithHashUnsigned: h % uint32(n), as librdkafka does.
    bool hash_unsigned = false;
  };

  // The random partitioner for nil keys draws from `prng`.
  HashPartitioner(sim::Prng prng, Options options);

  // A nil key goes to the random partitioner; any other key, the empty one
  // included, is hashed.
  std::pair<int32_t, Error> Partition(const ProducerMessage& msg, int32_t num_partitions) override;
  bool RequiresConsistency() const override { return true; }
  bool MessageRequiresConsistency(const ProducerMessage& msg) const override {
    return msg.key.has_value();
  }

 private:
  RandomPartitioner random_;
  Options options_;
};

// Sarama's default mapping from a key hash to a partition (hashPartitioner
// with neither option): the hash as int32, Go's truncating remainder, then
// the absolute value of the remainder. Exposed for tests.
// REQUIRES: num_partitions > 0.
int32_t SaramaHashToPartition(uint32_t hash, int32_t num_partitions);

// FNV-1a, 32 bits (Go's hash/fnv New32a).
uint32_t Fnv1a32(std::string_view bytes);
// CRC-32, IEEE polynomial (Go's hash/crc32 ChecksumIEEE).
uint32_t Crc32Ieee(std::string_view bytes);

// The constructors Sarama offers, under its names (NewConsistentCRC... is
// spelled NewConsistentCrc... here). Sarama's take the topic and ignore it;
// here the ones that may draw random numbers take the PRNG stream instead.
std::unique_ptr<Partitioner> NewManualPartitioner();
std::unique_ptr<Partitioner> NewRandomPartitioner(sim::Prng prng);
std::unique_ptr<Partitioner> NewRoundRobinPartitioner();
std::unique_ptr<Partitioner> NewHashPartitioner(sim::Prng prng);
std::unique_ptr<Partitioner> NewReferenceHashPartitioner(sim::Prng prng);
std::unique_ptr<Partitioner> NewConsistentCrcHashPartitioner(sim::Prng prng);

// The partitioner for `topic` that the configuration asks for:
// conf.producer.partitioner_constructor(topic) when it is set (it gets no
// PRNG: a user's constructor brings its own randomness), else the built-in
// of kind conf.producer.partitioner. `prng` is a stream the caller forked
// for this topic's partitioner.
std::unique_ptr<Partitioner> NewPartitioner(const Config& conf, const std::string& topic,
                                            sim::Prng prng);

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_PARTITIONER_H_
