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
#include <vector>

#include "absl/functional/function_ref.h"
#include "sim/core/time.h"
#include "sim/kafka/types.h"

namespace kafka {

// The age at which a 2.6 broker forgets a producer: transactional.id.expiration.ms,
// which 2.6 also uses for producer ids (7 days; producer.id.expiration.ms,
// 1 day, from 3.4: KIP-854). No run lasts that long; it matters only as the
// age a snapshot's entry must not reach to be loaded.
inline constexpr sim::Duration kProducerIdExpiration = sim::Duration::Seconds(int64_t{7} * 86400);

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

  // What Kafka writes to a .snapshot file (ProducerStateManager.takeSnapshot,
  // writeSnapshot): per producer, its epoch and its last batch only. The
  // rest of the cache is not kept, so a broker that reloads its state from
  // a snapshot knows one batch per producer, not five.
  struct Snapshot {
    Offset end;  // the log end offset it was taken at (its file's name)
    std::map<ProducerId, ProducerStateEntry> producers;  // one batch each

    bool operator==(const Snapshot&) const = default;
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

  // The state as a snapshot file at `log_end` records it.
  Snapshot TakeSnapshot(Offset log_end) const;

  // After a truncation to `log_end` (kafka 2.6.3 Log.truncateTo ->
  // loadProducerState): the snapshots past `log_end` are deleted, the
  // latest one left is loaded (none: an empty state) without the producers
  // whose last batch is at least `max_age` old at `now`
  // (ProducerStateManager.truncateAndReload -> loadFromSnapshot skips
  // expired entries), and `replay(from)` must then Update every batch of the
  // log from offset `from` on (the segments after the snapshot; batches
  // replayed that way are not checked for age), unless no producer was
  // left before the truncation (Kafka then loads the snapshot only, so an
  // expired producer stays gone). Then a snapshot is taken at
  // `log_end`, as loadProducerState ends with one, so that a later
  // truncation or restart starts from it.
  void Reload(std::vector<Snapshot>& snapshots, Offset log_end, sim::Time now,
              sim::Duration max_age, absl::FunctionRef<void(Offset from)> replay);

  // After a restart. Clean (Log.close took a snapshot at `log_end`; the
  // reopened log loads it): a snapshot at `log_end`, loaded. Not clean
  // (Log.recoverLog -> recoverSegment, for the one segment prodsim's logs
  // have: its ProducerStateManager.truncateAndReload to the segment's base
  // offset deletes every snapshot file, the segment is replayed from the
  // start, and a snapshot is taken at the end; loadProducerState then loads
  // it): the same, once the snapshots are gone. Either way the restarted
  // broker knows each producer's last batch only: a resend of an older one
  // of the five is out of order where it was a duplicate before. Found by
  // the differential test against Kafka's Log (sim/kafka/reference).
  void Recover(std::vector<Snapshot>& snapshots, Offset log_end, bool clean, sim::Time now,
               sim::Duration max_age, absl::FunctionRef<void(Offset from)> replay);

  // The entry for `producer_id`, or nullptr when the broker has no state
  // for it (never seen, expired, or cleared).
  const ProducerStateEntry* Find(ProducerId producer_id) const;

  const std::map<ProducerId, ProducerStateEntry>& producers() const { return producers_; }
  KafkaVersion version() const { return version_; }

 private:
  AppendCheck CheckUnknownProducer(Sequence first_seq) const;
  // Reload's work: loads the latest snapshot at or before `log_end` (after
  // deleting the later ones), replays the log after it unless `replay` is
  // null, and takes a snapshot at `log_end`.
  void Load(std::vector<Snapshot>& snapshots, Offset log_end, sim::Time now, sim::Duration max_age,
            const absl::FunctionRef<void(Offset from)>* replay);
  // Adds a snapshot of the state at `log_end`, in place of one there.
  void StoreSnapshot(std::vector<Snapshot>& snapshots, Offset log_end) const;
  // Loads the latest of `snapshots` ending at or before `upto`; returns its
  // end (0 without one).
  Offset LoadLatestSnapshot(const std::vector<Snapshot>& snapshots, Offset upto, sim::Time now,
                            sim::Duration max_age);

  KafkaVersion version_;
  size_t batches_max_;
  std::map<ProducerId, ProducerStateEntry> producers_;
};

std::ostream& operator<<(std::ostream& os, ProducerStateManager::AppendCheck::Kind kind);
std::ostream& operator<<(std::ostream& os, const ProducerStateManager::AppendCheck& check);
std::ostream& operator<<(std::ostream& os, const BatchMetadata& batch);

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_PRODUCER_STATE_H_
