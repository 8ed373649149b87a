// TransactionManager: the idempotent part of Sarama's transaction manager
// (sarama transaction_manager.go): the producer id and epoch obtained with
// InitProducerId, per-partition sequence counters, and the local epoch bump
// that resets every counter to 0. Transactions themselves are not modelled.
//
// Its mutex is a sim::Mutex, so each call is a synchronization point where
// other tasks may interleave, as goroutines may around Go's mutex.
#ifndef PRODSIM_PRODUCER_TRANSACTION_MANAGER_H_
#define PRODSIM_PRODUCER_TRANSACTION_MANAGER_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "producer/client.h"
#include "producer/errors.h"
#include "sim/core/sync.h"

namespace sarama {

inline constexpr int64_t kNoProducerId = -1;
inline constexpr int16_t kNoProducerEpoch = -1;

class TransactionManager {
 public:
  // sarama: newTransactionManager. With Idempotent, obtains a producer id
  // (initProducerId, retried Transaction.Retry.Max times).
  static sim::Task<std::pair<std::shared_ptr<TransactionManager>, Error>> New(
      std::shared_ptr<Client> client);

  explicit TransactionManager(std::shared_ptr<Client> client);

  // sarama: getAndIncrementSequenceNumber -> (sequence, epoch).
  sim::Task<std::pair<int32_t, int16_t>> GetAndIncrementSequenceNumber(std::string topic,
                                                                       int32_t partition);
  // sarama: bumpEpoch.
  sim::Task<void> BumpEpoch();
  // sarama: getProducerID -> (id, epoch).
  sim::Task<std::pair<int64_t, int16_t>> GetProducerID();
  // Unlocked reads, for code that Go runs without the lock
  // (brokerProducer.run compares txnmgr.producerID directly).
  int64_t producer_id() const { return producer_id_; }
  int16_t producer_epoch() const { return producer_epoch_; }
  bool IsTransactional() const { return false; }

 private:
  sim::Task<std::pair<std::pair<int64_t, int16_t>, Error>> InitProducerId();

  std::shared_ptr<Client> client_;
  int64_t producer_id_ = kNoProducerId;
  int16_t producer_epoch_ = kNoProducerEpoch;
  absl::btree_map<std::string, int32_t> sequence_numbers_;
  sim::Mutex mutex_;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_TRANSACTION_MANAGER_H_
