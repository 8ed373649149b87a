#include "sim/kafka/producer_state.h"

#include <ostream>

#include "base/assert.h"

namespace kafka {
namespace {

using AppendCheck = ProducerStateManager::AppendCheck;

AppendCheck Append() { return AppendCheck{}; }

AppendCheck Error(ErrorCode error) {
  PRODSIM_ASSERT(error != ErrorCode::NONE);
  return AppendCheck{AppendCheck::Kind::kError, error, Offset::kNone};
}

AppendCheck Duplicate(Offset base_offset) {
  PRODSIM_ASSERT(base_offset.value >= 0);
  return AppendCheck{AppendCheck::Kind::kDuplicate, ErrorCode::NONE, base_offset};
}

// kafka 2.6.3 ProducerStateManager.scala: ProducerStateEntry.findDuplicateBatch
// and batchWithSequenceRange. Only an exact (first, last) match under the
// same epoch counts; a partial overlap is not a duplicate and falls through
// to the sequence check, which rejects it. The oldest match wins, as Kafka
// takes the head of the filtered queue.
const BatchMetadata* FindDuplicateBatch(const ProducerStateEntry& entry, Epoch epoch,
                                        Sequence first_seq, Sequence last_seq) {
  if (epoch != entry.epoch) return nullptr;
  for (const BatchMetadata& batch : entry.batches) {
    if (batch.first_seq == first_seq && batch.last_seq == last_seq) {
      return &batch;
    }
  }
  return nullptr;
}

}  // namespace

size_t NumBatchesToRetain(KafkaVersion version) {
  // 0.11.0.x kept a single ProducerIdEntry per producer; ProducerStateEntry
  // with a queue of NumBatchesToRetain batches arrived in 1.0 (KAFKA-5494).
  return version == KafkaVersion::k0_11 ? 1 : kNumBatchesToRetain;
}

ProducerStateManager::ProducerStateManager(KafkaVersion version)
    : version_(version), batches_max_(NumBatchesToRetain(version)) {
  PRODSIM_ASSERT(batches_max_ >= 1);
  PRODSIM_ASSERT(batches_max_ <= kNumBatchesToRetain);
}

AppendCheck ProducerStateManager::Check(ProducerId producer_id, Epoch epoch, Sequence first_seq,
                                        int32_t record_count) const {
  PRODSIM_ASSERT_MSG(record_count >= 1, "a batch holds at least one record");
  // Log.analyzeAndValidateProducerState only looks at batches that
  // hasProducerId; plain producers are not deduplicated at all.
  if (producer_id.IsNone()) return Append();
  PRODSIM_ASSERT_MSG(epoch != Epoch::kNone, "an idempotent producer always has an epoch");

  // LogValidator.validateBatch rejects a negative base sequence from a
  // client before the producer state is consulted, with an
  // InvalidRecordException. Up to 2.3 that class extended
  // CorruptRecordException, so the client saw CORRUPT_MESSAGE (retriable);
  // from 2.4 it maps to INVALID_RECORD. k2_0 follows 2.0-2.3 here.
  if (first_seq.value < 0) {
    return Error(version_ == KafkaVersion::k2_6 ? ErrorCode::INVALID_RECORD
                                                : ErrorCode::CORRUPT_MESSAGE);
  }
  const Sequence last_seq = LastSequence(first_seq, record_count);

  const ProducerStateEntry* entry = Find(producer_id);
  if (entry == nullptr) return CheckUnknownProducer(first_seq);
  PRODSIM_ASSERT(!entry->batches.empty());

  // Duplicates first: Log.scala answers a resend from the cache before
  // ProducerAppendInfo validates anything. 0.11 did the same with its one
  // cached batch (Log.analyzeAndValidateProducerState via
  // ProducerIdEntry.isDuplicate, pinned by 0.11's LogTest
  // testDuplicateAppends), so its DuplicateSequenceNumberException in
  // validateAppend could not fire for a one-batch request: no modelled
  // version answers DUPLICATE_SEQUENCE_NUMBER. (1.0.x did, for a resend
  // older than its cache; that version is not modelled.) 2.0 and 2.1 also
  // missed duplicates of a batch whose sequences wrap (KAFKA-7692, fixed in
  // 2.2); the model stores first_seq and has no such bug.
  if (const BatchMetadata* dup = FindDuplicateBatch(*entry, epoch, first_seq, last_seq)) {
    return Duplicate(dup->first_offset);
  }
  // ProducerAppendInfo.checkProducerEpoch: a fenced (older) producer.
  // 2.6 throws ProducerFencedException, which Errors.java maps to
  // INVALID_PRODUCER_EPOCH (47) until 2.7 introduced PRODUCER_FENCED.
  if (epoch < entry->epoch) return Error(ErrorCode::INVALID_PRODUCER_EPOCH);
  // ProducerAppendInfo.checkSequence, new epoch: must restart at 0.
  if (epoch > entry->epoch) {
    return first_seq.value == 0 ? Append() : Error(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
  }
  // Same epoch: must follow the last cached batch exactly. A gap, a partial
  // overlap and a resend older than the cache all land here.
  return InSequence(entry->batches.back().last_seq, first_seq)
             ? Append()
             : Error(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
}

// No state for the producer: Kafka starts from an empty entry whose epoch is
// NO_PRODUCER_EPOCH, so the batch's epoch always counts as new and only a
// batch at sequence 0 is unconditionally fine. What happens otherwise is
// the one rule that changed between the modelled versions.
AppendCheck ProducerStateManager::CheckUnknownProducer(Sequence first_seq) const {
  PRODSIM_ASSERT(first_seq.value >= 0);
  if (first_seq.value == 0) return Append();
  switch (version_) {
    case KafkaVersion::k0_11:
      // 0.11 ProducerAppendInfo.validateAppend: "Invalid sequence number for
      // new epoch".
      return Error(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
    case KafkaVersion::k2_0:
      // 2.0-2.4 checkSequence: UnknownProducerIdException when the stored
      // epoch is NO_PRODUCER_EPOCH.
      return Error(ErrorCode::UNKNOWN_PRODUCER_ID);
    case KafkaVersion::k2_6:
      // 2.5+ (KIP-360): state may have been lost to retention or
      // DeleteRecords, so any sequence is accepted.
      return Append();
  }
  PRODSIM_ASSERT_MSG(false, "KafkaVersion value outside the enum");
  return Append();
}

void ProducerStateManager::Update(ProducerId producer_id, Epoch epoch, Sequence first_seq,
                                  Sequence last_seq, Offset first_offset, Offset last_offset,
                                  sim::Time timestamp) {
  // ProducerStateManager.update throws on NO_PRODUCER_ID: callers gate on
  // hasProducerId, as Log.scala does.
  PRODSIM_ASSERT_MSG(!producer_id.IsNone(), "Update needs a producer id");
  PRODSIM_ASSERT(first_offset.value >= 0);
  PRODSIM_ASSERT(first_offset <= last_offset);
  const int64_t offset_delta = last_offset.value - first_offset.value;
  PRODSIM_ASSERT_MSG(offset_delta < INT32_MAX, "batch too large");
  // Kafka stores lastSeq and the offset delta and derives firstSeq from
  // them; passing both sequences is only safe if they agree.
  PRODSIM_ASSERT_MSG(LastSequence(first_seq, static_cast<int32_t>(offset_delta + 1)) == last_seq,
                     "sequence range and offset range of the batch disagree");

  auto [it, inserted] = producers_.try_emplace(producer_id);
  ProducerStateEntry& entry = it->second;
  // ProducerStateEntry.maybeUpdateProducerEpoch: any change of epoch, even
  // a lower one arriving by replication, empties the cache.
  if (inserted || entry.epoch != epoch) {
    entry.epoch = epoch;
    entry.batches.clear();
  }
  PRODSIM_ASSERT_MSG(entry.batches.empty() || entry.batches.back().last_offset < first_offset,
                     "batches must be recorded in log order; Clear() before replaying a log");
  if (entry.batches.size() == batches_max_) entry.batches.pop_front();
  entry.batches.push_back(BatchMetadata{first_seq, last_seq, first_offset, last_offset, timestamp});
  PRODSIM_ASSERT(entry.batches.size() <= batches_max_);
}

void ProducerStateManager::ExpireProducers(sim::Time now, sim::Duration max_age) {
  PRODSIM_ASSERT(max_age >= sim::Duration());
  std::erase_if(producers_, [&](const auto& id_and_entry) {
    const ProducerStateEntry& entry = id_and_entry.second;
    PRODSIM_ASSERT(!entry.batches.empty());
    return now - entry.batches.back().timestamp >= max_age;
  });
}

void ProducerStateManager::Clear() { producers_.clear(); }

ProducerStateManager::Snapshot ProducerStateManager::TakeSnapshot(Offset log_end) const {
  Snapshot s{log_end, {}};
  for (const auto& [pid, entry] : producers_) {
    PRODSIM_ASSERT(!entry.batches.empty());
    s.producers.emplace(pid, ProducerStateEntry{entry.epoch, {entry.batches.back()}});
  }
  return s;
}

void ProducerStateManager::Reload(std::vector<Snapshot>& snapshots, Offset log_end, sim::Time now,
                                  sim::Duration max_age,
                                  absl::FunctionRef<void(Offset from)> replay) {
  // Log.loadProducerState's isEmptyBeforeTruncation: a state with no
  // producer left (all expired) is not rebuilt from the log, only from the
  // snapshot, so an expired producer stays gone.
  const bool was_empty = producers_.empty();
  Load(snapshots, log_end, now, max_age, was_empty ? nullptr : &replay);
}

void ProducerStateManager::Load(std::vector<Snapshot>& snapshots, Offset log_end, sim::Time now,
                                sim::Duration max_age,
                                const absl::FunctionRef<void(Offset from)>* replay) {
  std::erase_if(snapshots, [&](const Snapshot& s) { return s.end > log_end; });
  const Offset from = LoadLatestSnapshot(snapshots, log_end, now, max_age);
  if (replay != nullptr) (*replay)(from);
  StoreSnapshot(snapshots, log_end);
}

void ProducerStateManager::Recover(std::vector<Snapshot>& snapshots, Offset log_end, bool clean,
                                   sim::Time now, sim::Duration max_age,
                                   absl::FunctionRef<void(Offset from)> replay) {
  if (clean) {
    StoreSnapshot(snapshots, log_end);  // Log.close
  } else {
    snapshots.clear();  // recoverSegment's truncateAndReload to the segment's base offset
  }
  // A new Log's state is empty but its end offset is 0, so the check of
  // Reload does not apply: the log is replayed.
  Load(snapshots, log_end, now, max_age, &replay);
  LoadLatestSnapshot(snapshots, log_end, now, max_age);
}

void ProducerStateManager::StoreSnapshot(std::vector<Snapshot>& snapshots, Offset log_end) const {
  std::erase_if(snapshots, [&](const Snapshot& s) { return s.end == log_end; });
  snapshots.push_back(TakeSnapshot(log_end));
}

Offset ProducerStateManager::LoadLatestSnapshot(const std::vector<Snapshot>& snapshots, Offset upto,
                                                sim::Time now, sim::Duration max_age) {
  producers_.clear();
  const Snapshot* latest = nullptr;
  for (const Snapshot& s : snapshots) {
    if (s.end <= upto && (latest == nullptr || s.end > latest->end)) latest = &s;
  }
  if (latest == nullptr) return Offset(0);
  for (const auto& [pid, entry] : latest->producers) {
    PRODSIM_ASSERT(entry.batches.size() == 1);
    if (now - entry.batches.back().timestamp >= max_age) continue;  // isProducerExpired
    producers_.emplace(pid, entry);
  }
  return latest->end;
}

const ProducerStateEntry* ProducerStateManager::Find(ProducerId producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

std::ostream& operator<<(std::ostream& os, AppendCheck::Kind kind) {
  switch (kind) {
    case AppendCheck::Kind::kAppend: return os << "append";
    case AppendCheck::Kind::kDuplicate: return os << "duplicate";
    case AppendCheck::Kind::kError: return os << "error";
  }
  return os << "kind(" << static_cast<int>(kind) << ")";
}

std::ostream& operator<<(std::ostream& os, const AppendCheck& check) {
  os << "{" << check.kind << " " << check.error;
  if (check.kind == AppendCheck::Kind::kDuplicate) {
    os << " base " << check.duplicate_base_offset;
  }
  return os << "}";
}

std::ostream& operator<<(std::ostream& os, const BatchMetadata& batch) {
  return os << "{" << batch.first_seq.value << ".." << batch.last_seq.value << " @"
            << batch.first_offset.value << ".." << batch.last_offset.value
            << " t=" << batch.timestamp.ToString() << "}";
}

}  // namespace kafka
