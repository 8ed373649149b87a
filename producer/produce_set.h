// ProduceSet: the batch a brokerProducer accumulates for one request
// (sarama produce_set.go: produceSet, partitionSet).
//
// Kept as Sarama has it, including its assertion: add() refuses a message
// whose sequence number is below its partition batch's first sequence,
// with "assertion failed: message out of sequence added to a batch" — the
// error of IBM/sarama#2803. A batch's first sequence is the sequence of the
// first message added; the producer id and epoch are those of the
// transaction manager when the set was created.
#ifndef PRODSIM_PRODUCER_PRODUCE_SET_H_
#define PRODSIM_PRODUCER_PRODUCE_SET_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "producer/config.h"
#include "producer/message.h"
#include "sim/core/prng.h"
#include "sim/kafka/protocol.h"

namespace sarama {

struct PartitionSet {
  std::vector<MessagePtr> msgs;
  kafka::RecordBatch records_to_send;
  sim::Time first_timestamp;
  int buffer_bytes = 0;
};
using PartitionSetPtr = std::shared_ptr<PartitionSet>;

class ProduceSet {
 public:
  ProduceSet(const Config* conf, int64_t producer_id, int16_t producer_epoch)
      : conf_(conf), producer_id_(producer_id), producer_epoch_(producer_epoch) {}

  // sarama: produceSet.add. `now` stands for time.Now().
  Error Add(MessagePtr msg, sim::Time now);
  // sarama: produceSet.buildRequest.
  std::shared_ptr<kafka::ProduceRequest> BuildRequest() const;
  // sarama: produceSet.eachPartition, as the list of entries in Go's random
  // map order (topics in a random order, each topic's partitions in a
  // random order), so that the caller's loop body may block.
  struct Entry {
    std::string topic;
    int32_t partition;
    PartitionSetPtr set;
  };
  std::vector<Entry> Partitions(sim::Prng& prng) const;
  // sarama: produceSet.dropPartition.
  std::vector<MessagePtr> DropPartition(const std::string& topic, int32_t partition);
  // sarama: produceSet.wouldOverflow / readyToFlush / empty.
  bool WouldOverflow(const ProducerMessage& msg) const;
  bool ReadyToFlush() const;
  bool Empty() const { return buffer_count_ == 0; }

  int64_t producer_id() const { return producer_id_; }
  int16_t producer_epoch() const { return producer_epoch_; }
  int buffer_bytes() const { return buffer_bytes_; }
  int buffer_count() const { return buffer_count_; }
  // For retryBatch, which builds a set around one partition's batch.
  void PutPartition(const std::string& topic, int32_t partition, PartitionSetPtr set);
  PartitionSetPtr Find(const std::string& topic, int32_t partition) const;

  // --- For sarama main's partition muting (producer/async_producer_main.cc).
  const Config* config() const { return conf_; }
  // The entries in (topic, partition) order: for loops whose order cannot
  // reach behaviour (Go's map order, where nothing in the loop blocks).
  std::vector<Entry> SortedPartitions() const;
  // Removes one partition's batch and returns it (null if absent); the
  // building block of sarama main's produceSet.takePartitions, whose
  // predicate blocks here and so is looped over by the caller.
  PartitionSetPtr TakePartition(const std::string& topic, int32_t partition);
  // sarama main produce_set.go: produceSet.copyFunc: a set with the same
  // producer id and epoch sharing the batches of the partitions `keep`
  // accepts. (Go leaves the copy's counters at zero; only its partitions
  // are ever read, by partitionMuter.unmute, so they are kept exact here.)
  std::shared_ptr<ProduceSet> CopyFunc(
      const std::function<bool(const std::string&, int32_t)>& keep) const;

 private:
  const Config* conf_;
  absl::btree_map<std::string, absl::btree_map<int32_t, PartitionSetPtr>> msgs_;
  int64_t producer_id_;
  int16_t producer_epoch_;
  int buffer_bytes_ = 0;
  int buffer_count_ = 0;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_PRODUCE_SET_H_
