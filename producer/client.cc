#include "producer/client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sarama {

using sim::Duration;
using sim::Time;

namespace {

// Go's rand.Perm over n items, from the run's PRNG (Fisher-Yates).
std::vector<size_t> Permutation(sim::Prng& prng, size_t n) {
  std::vector<size_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = i;
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[prng.Below(i)]);
  return p;
}

}  // namespace

Client::Client(Env env, Config conf)
    : env_(env),
      conf_(std::move(conf)),
      lock_(*env.sched, "client.lock"),
      closer_(sim::MakeChan<bool>(*env.sched, "client.closer")) {
  // sarama-main only (e566ac67): NewClient picks the refresh function.
  if (IsMain() && conf_.metadata.single_flight) {
    refresher_ = std::make_unique<SingleFlightRefresher>(
        *env_.sched,
        [this](std::vector<std::string> topics) { return RefreshWithDeadline(std::move(topics)); });
  }
}

template <typename Describe>
void Client::Note(uint64_t word, Describe&& describe) const {
  env_.sched->trace().Note(env_.sched->now(), env_.sched->current_id(), 0x636c6e74 /*clnt*/, word,
                           std::forward<Describe>(describe));
}

// sarama v1.42.1 client.go: NewClient
sim::Task<absl::StatusOr<std::shared_ptr<Client>>> Client::New(Env env,
                                                               std::vector<net::NodeId> addrs,
                                                               Config conf) {
  if (absl::Status st = conf.Validate(); !st.ok()) co_return st;
  if (addrs.empty()) {
    co_return absl::InvalidArgumentError("You must provide at least one broker address");
  }
  auto client = std::make_shared<Client>(env, std::move(conf));
  // sarama: client.randomizeSeedBrokers.
  for (size_t i : Permutation(env.sched->program_prng(), addrs.size())) {
    client->seed_brokers_.push_back(std::make_shared<Broker>(env, -1, addrs[i]));
  }
  if (client->conf_.metadata.full) {
    Error err = co_await client->RefreshMetadata(std::vector<std::string>());
    // (Main also tolerates TOPIC_/CLUSTER_AUTHORIZATION_FAILED, which the
    // cluster model never returns; with main's per-topic errors, Is matches
    // any topic's.)
    const bool tolerable = err.Is(kafka::ErrorCode::LEADER_NOT_AVAILABLE) ||
                           err.Is(kafka::ErrorCode::REPLICA_NOT_AVAILABLE);
    if (err && !tolerable) {
      co_await client->Close();
      co_return absl::UnavailableError(err.ToString());
    }
  }
  env.sched->Go("client.backgroundMetadataUpdater", BackgroundMetadataUpdater(client),
                {.daemon = true});
  co_return client;
}

// sarama v1.42.1 client.go: safeAsyncClose
void Client::SafeAsyncClose(BrokerPtr b) {
  // The name first: argument evaluation order is unspecified.
  std::string name = absl::StrCat("client.safeAsyncClose#", b->ID());
  env_.sched->Go(std::move(name), CloseBroker(std::move(b)));
}

sim::Task<void> Client::CloseBroker(BrokerPtr b) {
  auto [connected, err] = co_await b->Connected();
  if (connected) co_await b->Close();
}

// sarama v1.42.1 client.go: client.Close
sim::Task<Error> Client::Close() {
  if (closed_) co_return Error::Of(ErrorKind::kClosedClient);
  closed_ = true;
  closer_->Close();
  co_await lock_.Lock();
  for (auto& [id, b] : brokers_) SafeAsyncClose(b);
  for (auto& b : seed_brokers_) SafeAsyncClose(b);
  brokers_.clear();
  metadata_.clear();
  metadata_topics_.clear();
  lock_.Unlock();
  co_return kNoError;
}

std::vector<int32_t> Client::PartitionCache(const std::string& topic, PartitionType type) const {
  std::vector<int32_t> out;
  auto it = metadata_.find(topic);
  if (it == metadata_.end()) return out;
  for (const auto& [id, pm] : it->second) {
    if (type == kWritablePartitions && pm.err == kafka::ErrorCode::LEADER_NOT_AVAILABLE) continue;
    out.push_back(id);
  }
  return out;  // ascending, as Sarama sorts them
}

// sarama v1.42.1 client.go: Client.Partitions and Client.WritablePartitions
sim::Task<std::pair<std::vector<int32_t>, Error>> Client::PartitionsOf(std::string topic,
                                                                       PartitionType type) {
  using Result = std::pair<std::vector<int32_t>, Error>;
  if (closed_) co_return Result{{}, Error::Of(ErrorKind::kClosedClient)};
  auto cached = [&]() -> std::optional<std::vector<int32_t>> {
    auto it = cached_partitions_[type].find(topic);
    if (it == cached_partitions_[type].end()) return std::nullopt;
    return it->second;
  };
  co_await lock_.RLock();
  std::optional<std::vector<int32_t>> parts = cached();
  lock_.RUnlock();
  if (!parts.has_value() || parts->empty()) {
    if (Error err = co_await RefreshMetadata(std::vector<std::string>(1, topic)))
      co_return Result{{}, err};
    co_await lock_.RLock();
    parts = cached();
    lock_.RUnlock();
  }
  // Partitions fails on an empty list; WritablePartitions only on none at all.
  const bool missing =
      type == kAllPartitions ? (!parts.has_value() || parts->empty()) : !parts.has_value();
  if (missing) co_return Result{{}, Error::Kafka(kafka::ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)};
  co_return Result{*parts, kNoError};
}

sim::Task<std::pair<std::vector<int32_t>, Error>> Client::Partitions(std::string topic) {
  co_return co_await PartitionsOf(std::move(topic), kAllPartitions);
}

sim::Task<std::pair<std::vector<int32_t>, Error>> Client::WritablePartitions(std::string topic) {
  co_return co_await PartitionsOf(std::move(topic), kWritablePartitions);
}

// sarama v1.42.1 client.go: client.cachedLeader
sim::Task<std::pair<BrokerPtr, Error>> Client::CachedLeader(const std::string& topic,
                                                            int32_t partition) {
  using Result = std::pair<BrokerPtr, Error>;
  co_await lock_.RLock();
  Result out{nullptr, Error::Kafka(kafka::ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)};
  auto t = metadata_.find(topic);
  if (t != metadata_.end()) {
    auto p = t->second.find(partition);
    if (p != t->second.end()) {
      out.second = Error::Kafka(kafka::ErrorCode::LEADER_NOT_AVAILABLE);
      auto b = brokers_.find(p->second.leader);
      if (p->second.err != kafka::ErrorCode::LEADER_NOT_AVAILABLE && b != brokers_.end()) {
        co_await b->second->Open(&conf_);
        out = Result{b->second, kNoError};
      }
    }
  }
  lock_.RUnlock();
  co_return out;
}

// sarama v1.42.1 client.go: Client.Leader / LeaderAndEpoch
sim::Task<std::pair<BrokerPtr, Error>> Client::Leader(std::string topic, int32_t partition) {
  using Result = std::pair<BrokerPtr, Error>;
  if (closed_) co_return Result{nullptr, Error::Of(ErrorKind::kClosedClient)};
  Result r = co_await CachedLeader(topic, partition);
  if (r.first == nullptr) {
    if (Error err = co_await RefreshMetadata(std::vector<std::string>(1, topic)))
      co_return Result{nullptr, err};
    r = co_await CachedLeader(topic, partition);
  }
  co_return r;
}

// sarama v1.42.1 client.go: Client.RefreshMetadata
sim::Task<Error> Client::RefreshMetadata(std::vector<std::string> topics) {
  if (closed_) co_return Error::Of(ErrorKind::kClosedClient);
  for (const std::string& t : topics) {
    if (t.empty()) {
      co_return Error::Of(ErrorKind::kConfiguration,
                          "kafka server: The request attempted to perform an operation on an "
                          "invalid topic");  // ErrInvalidTopic (KError 17)
    }
  }
  // sarama-main only (e566ac67): client.metadataRefresh, single-flight.
  if (refresher_ != nullptr) co_return co_await refresher_->Refresh(std::move(topics));
  co_return co_await RefreshWithDeadline(std::move(topics));
}

// sarama main client.go: the refresh closure of NewClient (v1.42.1 has it
// inline in RefreshMetadata)
sim::Task<Error> Client::RefreshWithDeadline(std::vector<std::string> topics) {
  const Time deadline =
      conf_.metadata.timeout.nanos() > 0 ? env_.sched->now() + conf_.metadata.timeout : Time();
  co_return co_await TryRefreshMetadata(std::move(topics), conf_.metadata.retry.max, deadline);
}

// sarama v1.42.1 client.go: client.tryRefreshMetadata's retry closure
sim::Task<Error> Client::RetryRefresh(std::vector<std::string> topics, int attempts_remaining,
                                      Time deadline, Error err) {
  if (attempts_remaining <= 0) co_return err;
  const Duration backoff = conf_.metadata.retry.backoff;
  if (deadline != Time() && env_.sched->now() + backoff > deadline) co_return err;
  if (backoff.nanos() > 0) co_await env_.sched->Sleep(backoff);
  // Another task refreshed while we slept: its result stands.
  if (env_.sched->now() - update_metadata_time_ < backoff) co_return err;
  co_return co_await TryRefreshMetadata(std::move(topics), attempts_remaining - 1, deadline);
}

namespace {

// sarama v1.42.1 metadata_request.go: NewMetadataRequest's choice of version
// (v8 is never chosen there: its branch repeats V2_4_0_0's test).
int16_t MetadataRequestVersion(const KafkaVersion& v) {
  if (v.IsAtLeast(V2_8_0_0)) return 10;
  if (v.IsAtLeast(V2_4_0_0)) return 9;
  if (v.IsAtLeast(V2_1_0_0)) return 7;
  if (v.IsAtLeast(V2_0_0_0)) return 6;
  if (v.IsAtLeast(V1_0_0_0)) return 5;
  if (v.IsAtLeast(V0_11_0_0)) return 4;
  if (v.IsAtLeast(V0_10_0_0)) return 1;
  return 0;
}

}  // namespace

// sarama v1.42.1 client.go: client.tryRefreshMetadata
sim::Task<Error> Client::TryRefreshMetadata(std::vector<std::string> topics, int attempts_remaining,
                                            Time deadline) {
  auto past_deadline = [&](Duration backoff) {
    return deadline != Time() && env_.sched->now() + backoff > deadline;
  };
  BrokerPtr broker = co_await LeastLoadedBroker();
  Error last_error;
  for (; broker != nullptr && !past_deadline(Duration()); broker = co_await LeastLoadedBroker()) {
    auto req = kafka::NewRequest<kafka::MetadataRequest>(0);
    req->version = MetadataRequestVersion(conf_.version);
    req->topics = topics;
    // sarama-main stamps only a refresh that worked (1fe27c9d), below.
    if (!IsMain()) update_metadata_time_ = env_.sched->now();
    auto [response, err] = co_await broker->GetMetadata(std::move(req));
    if (!err) PRODSIM_ASSERT(response != nullptr);
    if (!err && response->brokers.empty()) {
      // KAFKA-7924: a broker that is starting up answers with no brokers.
      co_await broker->Close();
      co_await DeregisterBroker(broker);
      continue;
    }
    if (!err) {
      auto [retry, uerr] = co_await UpdateMetadata(response, topics.empty());
      if (retry)
        co_return co_await RetryRefresh(std::move(topics), attempts_remaining, deadline, uerr);
      if (IsMain()) update_metadata_time_ = env_.sched->now();  // sarama-main only (1fe27c9d)
      co_return uerr;
    }
    last_error = err;
    co_await broker->Close();
    co_await DeregisterBroker(broker);
  }
  Error out_of_brokers =
      Error::Of(ErrorKind::kOutOfBrokers, last_error ? last_error.ToString() : std::string());
  if (broker != nullptr) {
    co_return co_await RetryRefresh(std::move(topics), attempts_remaining, deadline,
                                    out_of_brokers);
  }
  co_await ResurrectDeadBrokers();
  co_return co_await RetryRefresh(std::move(topics), attempts_remaining, deadline, out_of_brokers);
}

// sarama v1.42.1 client.go: client.updateBroker (under the write lock)
void Client::UpdateBroker(const std::vector<kafka::BrokerMetadata>& brokers) {
  PRODSIM_ASSERT(lock_.writer());
  absl::btree_map<int32_t, bool> current;
  for (const kafka::BrokerMetadata& bm : brokers) {
    current[bm.id.value] = true;
    auto it = brokers_.find(bm.id.value);
    if (it == brokers_.end()) {
      brokers_[bm.id.value] = std::make_shared<Broker>(env_, bm.id.value, bm.node);
    } else if (it->second->Addr() != bm.node) {
      SafeAsyncClose(it->second);
      it->second = std::make_shared<Broker>(env_, bm.id.value, bm.node);
    }
  }
  for (auto it = brokers_.begin(); it != brokers_.end();) {
    if (current.contains(it->first)) {
      ++it;
      continue;
    }
    SafeAsyncClose(it->second);
    it = brokers_.erase(it);
  }
  // The registered brokers are exactly the response's.
  PRODSIM_ASSERT(brokers_.size() == current.size());
}

// REQUIRES: lock_ held for writing.
void Client::ForgetAllMetadata() {
  PRODSIM_ASSERT(lock_.writer());
  metadata_.clear();
  metadata_topics_.clear();
  cached_partitions_[0].clear();
  cached_partitions_[1].clear();
}

// REQUIRES: lock_ held for writing. (The topic stays tracked.)
void Client::ForgetTopic(const std::string& topic) {
  PRODSIM_ASSERT(lock_.writer());
  metadata_topics_[topic] = true;
  metadata_.erase(topic);
  cached_partitions_[0].erase(topic);
  cached_partitions_[1].erase(topic);
}

// REQUIRES: lock_ held for writing.
bool Client::StorePartitions(const kafka::TopicMetadata& topic) {
  PRODSIM_ASSERT(lock_.writer());
  bool leaderless = false;
  auto& parts = metadata_[topic.name];
  for (const kafka::PartitionMetadata& p : topic.partitions) {
    parts[p.partition.value] =
        PartitionMetadata{p.error, p.partition.value, p.leader.value, p.leader_epoch};
    if (p.error == kafka::ErrorCode::LEADER_NOT_AVAILABLE) leaderless = true;
  }
  cached_partitions_[kAllPartitions][topic.name] = PartitionCache(topic.name, kAllPartitions);
  cached_partitions_[kWritablePartitions][topic.name] =
      PartitionCache(topic.name, kWritablePartitions);
  return leaderless;
}

// sarama v1.42.1 client.go: client.updateMetadata
sim::Task<std::pair<bool, Error>> Client::UpdateMetadata(
    std::shared_ptr<const kafka::MetadataResponse> data, bool all_known) {
  using kafka::ErrorCode;
  if (IsMain()) co_return co_await UpdateMetadataMain(std::move(data), all_known);
  bool retry = false;
  Error err;
  if (closed_) co_return std::pair<bool, Error>{false, kNoError};
  co_await lock_.Lock();
  UpdateBroker(data->brokers);
  if (all_known) ForgetAllMetadata();
  for (const kafka::TopicMetadata& topic : data->topics) {
    ForgetTopic(topic.name);
    switch (topic.error) {
      case ErrorCode::NONE: break;
      case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
        err = Error::Kafka(topic.error);
        retry = true;
        continue;
      case ErrorCode::LEADER_NOT_AVAILABLE: retry = true; break;
      default: err = Error::Kafka(topic.error); continue;
    }
    if (StorePartitions(topic)) retry = true;
  }
  lock_.Unlock();
  co_return std::pair<bool, Error>{retry, err};
}

// sarama main (8eafc465, 1fe27c9d, fa624c04) client.go: client.updateMetadata.
// The errors are kept per topic (refreshError; the last one met for each),
// leaderless partitions included.
sim::Task<std::pair<bool, Error>> Client::UpdateMetadataMain(
    std::shared_ptr<const kafka::MetadataResponse> data, bool all_known) {
  using kafka::ErrorCode;
  if (closed_) co_return std::pair<bool, Error>{false, kNoError};
  bool retry = false;
  absl::btree_map<std::string, ErrorCode> topic_errors;  // Go sorts them by topic
  co_await lock_.Lock();
  CheckBrokersHealth();
  UpdateBroker(data->brokers);
  if (all_known) ForgetAllMetadata();
  for (const kafka::TopicMetadata& topic : data->topics) {
    ForgetTopic(topic.name);
    switch (topic.error) {
      case ErrorCode::NONE: break;
      case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
        topic_errors[topic.name] = topic.error;
        retry = true;
        continue;
      case ErrorCode::LEADER_NOT_AVAILABLE:
        topic_errors[topic.name] = topic.error;
        retry = true;
        break;
      default: topic_errors[topic.name] = topic.error; continue;
    }
    if (StorePartitions(topic)) {
      topic_errors[topic.name] = ErrorCode::LEADER_NOT_AVAILABLE;
      retry = true;
    }
  }
  lock_.Unlock();
  std::vector<std::pair<std::string, ErrorCode>> sorted(topic_errors.begin(), topic_errors.end());
  co_return std::pair<bool, Error>{retry, Error::JoinTopicErrors(std::move(sorted))};
}

// sarama main (8eafc465, ea568bd5, e025a734) client.go: client.checkBrokersHealth.
// A registered broker whose connection holds an unreported reset is closed
// (in a task of its own) and forgotten; Go visits them in map order, which
// only orders those close tasks, so that order is drawn when there are
// several.
void Client::CheckBrokersHealth() {
  PRODSIM_ASSERT(lock_.writer());
  std::vector<BrokerPtr> failed;
  for (auto it = brokers_.begin(); it != brokers_.end();) {
    const Error err = it->second->GetSockError();
    if (!err) {
      ++it;
      continue;
    }
    Note(static_cast<uint64_t>(it->first), [&, id = it->first] {
      return absl::StrCat("client: close broker #", id, " due to socket error: ", err.ToString());
    });
    failed.push_back(it->second);
    it = brokers_.erase(it);
  }
  for (size_t i : Permutation(env_.sched->program_prng(), failed.size())) SafeAsyncClose(failed[i]);
  CheckSeedBrokersHealth(seed_brokers_);
  CheckSeedBrokersHealth(dead_seeds_);
}

// sarama main (ea568bd5, e025a734) client.go: client.checkSeedBrokersHealth.
// Seed brokers stay where they are, to be dialled again when needed.
void Client::CheckSeedBrokersHealth(const std::vector<BrokerPtr>& brokers) {
  for (const BrokerPtr& b : brokers) {
    const Error err = b->GetSockError();
    if (!err) continue;
    Note(0, [&] {
      return absl::StrCat("client: close seed broker #", b->ID(), "@", b->Addr(),
                          " due to socket error: ", err.ToString());
    });
    SafeAsyncClose(b);
  }
}

// sarama v1.42.1 client.go: client.deregisterBroker
sim::Task<void> Client::DeregisterBroker(BrokerPtr broker) {
  co_await lock_.Lock();
  auto it = brokers_.find(broker->ID());
  if (it != brokers_.end() && broker->ID() >= 0) {
    brokers_.erase(it);
  } else if (!seed_brokers_.empty() && seed_brokers_.front() == broker) {
    dead_seeds_.push_back(broker);
    seed_brokers_.erase(seed_brokers_.begin());
  }
  lock_.Unlock();
}

// sarama v1.42.1 client.go: client.resurrectDeadBrokers
sim::Task<void> Client::ResurrectDeadBrokers() {
  co_await lock_.Lock();
  for (auto& b : dead_seeds_) seed_brokers_.push_back(std::move(b));
  dead_seeds_.clear();
  lock_.Unlock();
}

// sarama v1.42.1 client.go: client.LeastLoadedBroker
sim::Task<BrokerPtr> Client::LeastLoadedBroker() {
  co_await lock_.RLock();
  // Go ranges over a map: a random order, in which the first broker with
  // the fewest pending responses wins.
  std::vector<BrokerPtr> all;
  for (auto& [id, b] : brokers_) all.push_back(b);
  BrokerPtr least;
  int pending = INT32_MAX;
  for (size_t i : Permutation(env_.sched->program_prng(), all.size())) {
    // Go calls ResponseSize twice: once to compare, once to keep.
    if (pending > co_await all[i]->ResponseSize()) {
      pending = co_await all[i]->ResponseSize();
      least = all[i];
    }
  }
  if (least == nullptr && !seed_brokers_.empty()) least = seed_brokers_.front();
  if (least != nullptr) co_await least->Open(&conf_);
  lock_.RUnlock();
  co_return least;
}

// sarama v1.42.1 client.go: client.backgroundMetadataUpdater and refreshMetadata
sim::Task<void> Client::BackgroundMetadataUpdater(std::shared_ptr<Client> self) {
  const Config& conf = self->conf_;
  if (conf.metadata.refresh_frequency.nanos() == 0) co_return;
  sim::Timer ticker(*self->env_.sched, "client.metadata-ticker", conf.metadata.refresh_frequency);
  for (;;) {
    std::optional<Time> tick;
    std::optional<bool> closed;
    const int which = co_await sim::Select(*self->env_.sched, sim::RecvCase(ticker.C(), &tick),
                                           sim::RecvCase(self->closer_, &closed));
    if (which == 1) co_return;
    ticker.Reset(conf.metadata.refresh_frequency);
    std::vector<std::string> topics;
    if (!conf.metadata.full) {
      for (const auto& [t, unused] : self->metadata_topics_) topics.push_back(t);
      if (topics.empty()) continue;  // ErrNoTopicsToUpdateMetadata
    }
    co_await self->RefreshMetadata(std::move(topics));
  }
}

}  // namespace sarama
