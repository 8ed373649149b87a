// The broker's idempotence state for one partition: per producer id, the
// last epoch and the last few appended batches, and the rules a partition
// leader applies to an incoming idempotent batch.
//
// Models Kafka 2.6.3 core/src/main/scala/kafka/log/ProducerStateManager.scala
// (ProducerStateEntry, ProducerAppendInfo.checkProducerEpoch/checkSequence,
// removeExpiredProducers) and the duplicate lookup of Log.scala
// (analyzeAndValidateProducerState -> ProducerStateEntry.findDuplicateBatch),
// with the 0.11 and 2.0-2.4 differences selected by KafkaVersion. Only
// non-transactional idempotent batches are modelled: no transaction markers
// (so never an entry with an epoch but no batch, the case Kafka's
// "sequence not known" branches handle), no coordinator epochs, no
// snapshots.
//
// Invariants:
// - Every entry holds at least one batch and at most NumBatchesToRetain(v)
//   batches, oldest first, all appended under the entry's epoch (a change of
//   epoch empties the cache before the new batch goes in).
// - Within an entry, batches are in log order: offsets strictly increase.
// - The state is a pure function of the sequence of Update, Clear and
//   ExpireProducers calls; Check never changes it. Producers are kept in a
//   std::map, so any iteration is in producer-id order (docs/DESIGN.md rule 3).
#ifndef PRODSIM_SIM_KAFKA_PRODUCER_STATE_H_
#define PRODSIM_SIM_KAFKA_PRODUCER_STATE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <map>

#include "sim/core/time.h"
#include "sim/kafka/types.h"

namespace kafka {

// ProducerStateEntry.NumBatchesToRetain (Kafka 1.0 and later).
inline constexpr size_t kNumBatchesToRetain = 5;

// How many batches per producer the broker remembers for duplicate
// detection: 0.11 kept only the last one (ProducerIdEntry), later versions
// kNumBatchesToRetain.
size_t NumBatchesToRetain(KafkaVersion version);

// One appended batch as the broker remembers it (BatchMetadata).
struct BatchMetadata {
  Sequence first_seq;
  Sequence last_seq;
  Offset first_offset;
  Offset last_offset;
  // The batch's timestamp; producer expiry is measured from the last one.
  sim::Time timestamp;

  bool operator==(const BatchMetadata&) const = default;
};

// What the broker knows about one producer id on one partition.
struct ProducerStateEntry {
  Epoch epoch;
  // Oldest first; never empty; at most NumBatchesToRetain(version).
  std::deque<BatchMetadata> batches;

  bool operator==(const ProducerStateEntry&) const = default;
};

class ProducerStateManager {
 public:
  // The leader's verdict on an incoming batch.
  struct AppendCheck {
    enum class Kind {
      kAppend,     // Write it, then call Update.
      kDuplicate,  // A resend of a cached batch: write nothing, answer NONE
                   // with duplicate_base_offset as the base offset.
      kError,      // Write nothing; answer `error` with base offset -1.
    };
    Kind kind = Kind::kAppend;
    ErrorCode error = ErrorCode::NONE;
    Offset duplicate_base_offset;  // Offset::kNone unless kDuplicate.

    bool operator==(const AppendCheck&) const = default;
  };

  explicit ProducerStateManager(KafkaVersion version);

  // Validates a batch from a client the way the partition leader does,
  // after the batch itself passed LogValidator: the sequence must not be
  // negative; then the duplicate lookup; then the epoch; then the sequence.
  // A batch without a producer id (a non-idempotent producer) is not looked
  // at, as in Kafka, and gets kAppend.
  // REQUIRES: record_count >= 1; epoch != Epoch::kNone when producer_id is
  // set (an idempotent producer always has an epoch).
  AppendCheck Check(ProducerId producer_id, Epoch epoch, Sequence first_seq,
                    int32_t record_count) const;

  // Records an appended batch without validating it: the leader calls it
  // after writing a batch that Check accepted, a follower for each batch it
  // replicates, and a restarted broker for each batch of its log. An epoch
  // different from the stored one (higher or lower) replaces it and empties
  // the cache, as ProducerStateEntry.maybeUpdateProducerEpoch does.
  // REQUIRES: producer_id is set; first_offset <= last_offset; the sequence
  // range matches the offset range; batches of one producer come in log
  // order (to rebuild after a truncation, Clear and replay the log).
  void Update(ProducerId producer_id, Epoch epoch, Sequence first_seq, Sequence last_seq,
              Offset first_offset, Offset last_offset, sim::Time timestamp);

  // Forgets every producer whose last batch is at least `max_age` old at
  // `now` (ProducerStateManager.removeExpiredProducers, which compares
  // `now - lastTimestamp >= maxProducerIdExpirationMs`).
  // REQUIRES: max_age >= 0.
  void ExpireProducers(sim::Time now, sim::Duration max_age);

  // Forgets everything (ProducerStateManager.truncate).
  void Clear();

  // The entry for `producer_id`, or nullptr when the broker has no state
  // for it (never seen, expired, or cleared).
  const ProducerStateEntry* Find(ProducerId producer_id) const;

  const std::map<ProducerId, ProducerStateEntry>& producers() const { return producers_; }
  KafkaVersion version() const { return version_; }

 private:
  AppendCheck CheckUnknownProducer(Sequence first_seq) const;

  KafkaVersion version_;
  size_t batches_max_;
  std::map<ProducerId, ProducerStateEntry> producers_;
};

std::ostream& operator<<(std::ostream& os, ProducerStateManager::AppendCheck::Kind kind);
std::ostream& operator<<(std::ostream& os, const ProducerStateManager::AppendCheck& check);
std::ostream& operator<<(std::ostream& os, const BatchMetadata& batch);

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_PRODUCER_STATE_H_
