// Client: Sarama's cluster client, the parts the producer uses (sarama
// client.go): seed brokers, registered brokers by id, the metadata cache,
// RefreshMetadata with Metadata.Retry.Max/Backoff, Leader, Partitions,
// WritablePartitions, LeastLoadedBroker, and the background refresh.
//
// As in Sarama: the cache is guarded by an RWMutex (client.lock); Leader
// opens (lazily dials) the broker it returns; a broker that fails a
// metadata request is closed and deregistered; when all have failed, the
// dead seeds are resurrected and the refresh retried after a backoff. Go's
// random choices (seed order, map iteration in LeastLoadedBroker) are drawn
// from the run's PRNG.
//
// Profile sarama-main (Env::profile; Sarama main at 282cd488) differs where
// main's client.go does, each place marked in client.cc:
// - With Metadata.SingleFlight (main's default), RefreshMetadata goes
//   through a SingleFlightRefresher: one refresh at a time, shared by the
//   callers it covers (e566ac67), each given only its topics' errors
//   (fa624c04).
// - updateMetadata first closes and forgets every registered broker whose
//   connection holds an unreported reset (Broker::GetSockError), so the
//   same metadata registers a new Broker for its id; seed brokers with one
//   are closed and kept (8eafc465, ea568bd5, e025a734).
// - updateMetadata returns the topic errors it met, per topic, leaderless
//   partitions included, so a refresh whose retries end with a leaderless
//   partition fails with LEADER_NOT_AVAILABLE instead of returning nil; and
//   only a refresh that worked stamps updateMetadataMs (1fe27c9d, fa624c04).
#ifndef PRODSIM_PRODUCER_CLIENT_H_
#define PRODSIM_PRODUCER_CLIENT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "producer/broker.h"
#include "producer/config.h"
#include "producer/env.h"
#include "producer/metadata_refresh.h"
#include "sim/core/sync.h"
#include "sim/kafka/protocol.h"

namespace sarama {

class ClientTestPeer;  // client_test.cc

class Client {
 public:
  // sarama: NewClient. Validates the config; with Metadata.Full, fetches
  // all metadata (a leaderless cluster is not fatal); starts the
  // background updater.
  static sim::Task<absl::StatusOr<std::shared_ptr<Client>>> New(Env env,
                                                                std::vector<net::NodeId> addrs,
                                                                Config conf);
  Client(Env env, Config conf);

  const Config& config() const { return conf_; }
  const Env& env() const { return env_; }
  bool Closed() const { return closed_; }
  // sarama: Client.Close: closes every broker connection.
  sim::Task<Error> Close();

  // sarama: Client.Partitions / WritablePartitions.
  sim::Task<std::pair<std::vector<int32_t>, Error>> Partitions(std::string topic);
  sim::Task<std::pair<std::vector<int32_t>, Error>> WritablePartitions(std::string topic);
  // sarama: Client.Leader.
  sim::Task<std::pair<BrokerPtr, Error>> Leader(std::string topic, int32_t partition);
  // sarama: Client.RefreshMetadata(topics...); empty: all topics.
  sim::Task<Error> RefreshMetadata(std::vector<std::string> topics);
  // sarama: Client.LeastLoadedBroker (opens it); null when none is left.
  sim::Task<BrokerPtr> LeastLoadedBroker();
  // For tests: sarama main's single-flight refresher, or null.
  const SingleFlightRefresher* refresher() const { return refresher_.get(); }

 private:
  struct PartitionMetadata {
    kafka::ErrorCode err = kafka::ErrorCode::NONE;
    int32_t id = 0;
    int32_t leader = -1;
    int32_t leader_epoch = 0;
  };
  friend class ClientTestPeer;
  enum PartitionType { kAllPartitions = 0, kWritablePartitions = 1 };

  bool IsMain() const { return env_.profile == Profile::kSaramaMain; }
  template <typename Describe>
  void Note(uint64_t word, Describe&& describe) const;
  // Go: the refresh closure NewClient builds (a deadline from
  // Metadata.Timeout, then tryRefreshMetadata).
  sim::Task<Error> RefreshWithDeadline(std::vector<std::string> topics);
  sim::Task<std::pair<std::vector<int32_t>, Error>> PartitionsOf(std::string topic,
                                                                 PartitionType type);
  sim::Task<Error> TryRefreshMetadata(std::vector<std::string> topics, int attempts_remaining,
                                      sim::Time deadline);
  sim::Task<Error> RetryRefresh(std::vector<std::string> topics, int attempts_remaining,
                                sim::Time deadline, Error err);
  sim::Task<std::pair<bool, Error>> UpdateMetadata(
      std::shared_ptr<const kafka::MetadataResponse> data, bool all_known);
  sim::Task<std::pair<bool, Error>> UpdateMetadataMain(
      std::shared_ptr<const kafka::MetadataResponse> data, bool all_known);
  // The parts of updateMetadata both profiles share. REQUIRES: lock_ held.
  void ForgetAllMetadata();
  void ForgetTopic(const std::string& topic);
  // Stores the topic's partitions; true if one of them has no leader.
  bool StorePartitions(const kafka::TopicMetadata& topic);
  // sarama main: checkBrokersHealth and checkSeedBrokersHealth. REQUIRES:
  // lock_ held for writing.
  void CheckBrokersHealth();
  void CheckSeedBrokersHealth(const std::vector<BrokerPtr>& brokers);
  sim::Task<std::pair<BrokerPtr, Error>> CachedLeader(const std::string& topic, int32_t partition);
  void UpdateBroker(const std::vector<kafka::BrokerMetadata>& brokers);
  sim::Task<void> DeregisterBroker(BrokerPtr broker);
  sim::Task<void> ResurrectDeadBrokers();
  std::vector<int32_t> PartitionCache(const std::string& topic, PartitionType type) const;
  // The goroutine holds the client, as Go's closure does: a client nobody
  // closed (v1.42.1's NewAsyncProducer drops it when the transaction
  // manager cannot start) lives on with its updater, never freed under it.
  static sim::Task<void> BackgroundMetadataUpdater(std::shared_ptr<Client> self);
  void SafeAsyncClose(BrokerPtr b);
  static sim::Task<void> CloseBroker(BrokerPtr b);

  Env env_;
  Config conf_;
  sim::RWMutex lock_;
  bool closed_ = false;
  std::vector<BrokerPtr> seed_brokers_;
  std::vector<BrokerPtr> dead_seeds_;
  absl::btree_map<int32_t, BrokerPtr> brokers_;
  absl::btree_map<std::string, absl::btree_map<int32_t, PartitionMetadata>> metadata_;
  absl::btree_map<std::string, bool> metadata_topics_;
  absl::btree_map<std::string, std::vector<int32_t>> cached_partitions_[2];
  sim::Time update_metadata_time_;  // Go: updateMetadataMs
  sim::ChanPtr<bool> closer_;
  // sarama main: client.metadataRefresh when Metadata.SingleFlight (null
  // otherwise, and always with sarama-1.42.1).
  std::unique_ptr<SingleFlightRefresher> refresher_;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_CLIENT_H_
