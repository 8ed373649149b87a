#include "producer/transaction_manager.h"

#include "absl/strings/str_cat.h"

namespace sarama {

TransactionManager::TransactionManager(std::shared_ptr<Client> client)
    : client_(std::move(client)), mutex_(*client_->env().sched, "txnmgr.mutex") {}

// sarama v1.42.1 transaction_manager.go: newTransactionManager
sim::Task<std::pair<std::shared_ptr<TransactionManager>, Error>> TransactionManager::New(
    std::shared_ptr<Client> client) {
  using Result = std::pair<std::shared_ptr<TransactionManager>, Error>;
  auto t = std::make_shared<TransactionManager>(client);
  if (client->config().producer.idempotent) {
    auto [id, err] = co_await t->InitProducerId();
    if (err) co_return Result{nullptr, err};
    t->producer_id_ = id.first;
    t->producer_epoch_ = id.second;
  }
  co_return Result{t, kNoError};
}

// sarama v1.42.1 transaction_manager.go: transactionManager.initProducerId
// (the non-transactional path: any broker, the least loaded).
sim::Task<std::pair<std::pair<int64_t, int16_t>, Error>> TransactionManager::InitProducerId() {
  using Result = std::pair<std::pair<int64_t, int16_t>, Error>;
  const Config& conf = client_->config();
  int attempts_remaining = conf.producer.transaction.retry.max;
  Error err;
  while (attempts_remaining >= 0) {
    BrokerPtr coordinator = co_await client_->LeastLoadedBroker();
    if (coordinator == nullptr) {
      // Go calls InitProducerID on a nil *Broker here: a nil dereference.
      client_->env().sched->Panic(
          "runtime error: invalid memory address or nil pointer "
          "dereference (initProducerId with no broker)");
      co_await client_->env().sched->Halt();
    }
    auto req = kafka::NewRequest<kafka::InitProducerIdRequest>(0);
    req->transaction_timeout = conf.producer.transaction.timeout;
    auto [response, rerr] = co_await coordinator->InitProducerID(std::move(req));
    if (!rerr && response->error == kafka::ErrorCode::NONE) {
      co_return Result{{response->producer_id.value, response->producer_epoch.value}, kNoError};
    }
    // Coordinator errors are retriable only for transactional producers;
    // any other Kafka error is fatal.
    if (!rerr) co_return Result{{-1, -1}, Error::Kafka(response->error)};
    err = rerr;
    co_await client_->env().sched->Sleep(conf.producer.transaction.retry.backoff);
    --attempts_remaining;
  }
  co_return Result{{-1, -1}, err};
}

// sarama v1.42.1 transaction_manager.go: getAndIncrementSequenceNumber
sim::Task<std::pair<int32_t, int16_t>> TransactionManager::GetAndIncrementSequenceNumber(
    std::string topic, int32_t partition) {
  const std::string key = absl::StrCat(topic, "-", partition);
  co_await mutex_.Lock();
  int32_t& next = sequence_numbers_[key];
  const int32_t sequence = next;
  // Go's int32 addition wraps (to MinInt32, not to 0 as Kafka would).
  next = static_cast<int32_t>(static_cast<uint32_t>(sequence) + 1u);
  const int16_t epoch = producer_epoch_;
  mutex_.Unlock();
  co_return std::pair<int32_t, int16_t>{sequence, epoch};
}

// sarama v1.42.1 transaction_manager.go: bumpEpoch
sim::Task<void> TransactionManager::BumpEpoch() {
  co_await mutex_.Lock();
  ++producer_epoch_;
  for (auto& [key, seq] : sequence_numbers_) seq = 0;
  mutex_.Unlock();
}

// sarama v1.42.1 transaction_manager.go: getProducerID
sim::Task<std::pair<int64_t, int16_t>> TransactionManager::GetProducerID() {
  co_await mutex_.Lock();
  std::pair<int64_t, int16_t> out{producer_id_, producer_epoch_};
  mutex_.Unlock();
  co_return out;
}

}  // namespace sarama
