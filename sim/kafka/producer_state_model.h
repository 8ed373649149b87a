// An independent model of Kafka's producer-state rules, for testing
// ProducerStateManager: the stateful RapidCheck property in
// producer_state_test.cc and fuzz/broker_state_fuzzer.cc both compare the
// manager with it. Test support only; nothing in the simulation includes it.
//
// The model keeps the whole partition log (every written batch, in offset
// order) and, per producer, the log index before which its history was
// forgotten by expiry. Everything the broker should know is derived from
// that: the producer is known iff it has a batch after that index; its epoch
// is the epoch of its last batch; its cache is the newest five (one in 0.11)
// of the trailing run of batches under that epoch. Answers follow the rules
// of Kafka 2.6.3's ProducerStateManager (ProducerAppendInfo.checkSequence
// and its duplicate cache), computed with modular
// arithmetic on int64 rather than the library's sequence helpers.
#ifndef PRODSIM_SIM_KAFKA_PRODUCER_STATE_MODEL_H_
#define PRODSIM_SIM_KAFKA_PRODUCER_STATE_MODEL_H_

#include <cstdint>
#include <map>
#include <vector>

#include "sim/kafka/producer_state.h"
#include "sim/kafka/types.h"

namespace kafka::state_model {

using AppendCheck = ProducerStateManager::AppendCheck;

inline AppendCheck WantAppend() { return AppendCheck{}; }
inline AppendCheck WantError(ErrorCode e) {
  return AppendCheck{AppendCheck::Kind::kError, e, Offset::kNone};
}
inline AppendCheck WantDuplicate(int64_t base_offset) {
  return AppendCheck{AppendCheck::Kind::kDuplicate, ErrorCode::NONE, Offset(base_offset)};
}

inline constexpr int64_t kSeqSpace = int64_t{1} << 31;
inline constexpr int64_t kMaxAgeMs = 1000;

struct LogBatch {
  int64_t pid;  // -1: a batch from a non-idempotent producer.
  int16_t epoch;
  int32_t first_seq;
  int32_t last_seq;
  int64_t first_offset;
  int64_t last_offset;
  int64_t time_ms;
};

struct Model {
  KafkaVersion version = KafkaVersion::k2_6;
  std::vector<LogBatch> log;
  std::map<int64_t, size_t> forgotten_before;
  int64_t now_ms = 0;

  int64_t NextOffset() const { return log.empty() ? 0 : log.back().last_offset + 1; }
  size_t Window() const { return version == KafkaVersion::k0_11 ? 1 : 5; }

  // The producer's batches the broker still has reason to know, oldest
  // first.
  std::vector<LogBatch> History(int64_t pid) const {
    auto it = forgotten_before.find(pid);
    const size_t from = it == forgotten_before.end() ? 0 : it->second;
    std::vector<LogBatch> out;
    for (size_t i = from; i < log.size(); ++i) {
      if (log[i].pid == pid) out.push_back(log[i]);
    }
    return out;
  }

  // The cached batches: the newest Window() of the trailing same-epoch run.
  std::vector<LogBatch> Cache(int64_t pid) const {
    const std::vector<LogBatch> history = History(pid);
    std::vector<LogBatch> cache;
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      if (it->epoch != history.back().epoch || cache.size() == Window()) break;
      cache.insert(cache.begin(), *it);
    }
    return cache;
  }
};

inline AppendCheck ModelAnswer(const Model& m, int64_t pid, int16_t epoch, int32_t first,
                               int32_t count) {
  if (pid < 0) return WantAppend();
  if (first < 0) {
    return WantError(m.version == KafkaVersion::k2_6 ? ErrorCode::INVALID_RECORD
                                                     : ErrorCode::CORRUPT_MESSAGE);
  }
  const int64_t last = (int64_t{first} + count - 1) % kSeqSpace;
  const std::vector<LogBatch> cache = m.Cache(pid);
  if (cache.empty()) {
    if (first == 0 || m.version == KafkaVersion::k2_6) return WantAppend();
    return WantError(m.version == KafkaVersion::k2_0 ? ErrorCode::UNKNOWN_PRODUCER_ID
                                                     : ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
  }
  const int16_t current = cache.back().epoch;
  for (const LogBatch& b : cache) {
    if (epoch == current && b.first_seq == first && b.last_seq == last) {
      return WantDuplicate(b.first_offset);
    }
  }
  if (epoch < current) return WantError(ErrorCode::INVALID_PRODUCER_EPOCH);
  const int64_t expected = epoch > current ? 0 : (int64_t{cache.back().last_seq} + 1) % kSeqSpace;
  return first == expected ? WantAppend() : WantError(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER);
}

inline void AppendToLog(Model& m, int64_t pid, int16_t epoch, int32_t first, int32_t count) {
  const int64_t offset = m.NextOffset();
  const auto last = static_cast<int32_t>((int64_t{first} + count - 1) % kSeqSpace);
  m.log.push_back({pid, epoch, first, last, offset, offset + count - 1, m.now_ms});
}

}  // namespace kafka::state_model

#endif  // PRODSIM_SIM_KAFKA_PRODUCER_STATE_MODEL_H_
