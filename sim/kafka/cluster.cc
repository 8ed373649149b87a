#include "sim/kafka/cluster.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace kafka {

Broker::Broker(BrokerId id, net::NodeId node) : id_(id), node_(node) {}

const Replica* Broker::replica(const TopicPartition& tp) const {
  auto it = replicas_.find(tp);
  return it == replicas_.end() ? nullptr : it->second.get();
}

Replica* Broker::MutableReplica(const TopicPartition& tp) {
  auto it = replicas_.find(tp);
  return it == replicas_.end() ? nullptr : it->second.get();
}

bool Broker::Leads(const TopicPartition& tp) const {
  auto it = view_.partitions.find(tp);
  return it != view_.partitions.end() && it->second.leader == id_;
}

Cluster::Cluster(sim::Scheduler& sched, net::Network& network, ClusterConfig config,
                 History* history)
    : sched_(sched),
      network_(network),
      config_(std::move(config)),
      history_(history),
      prng_(sched.prng().Fork("kafka")),
      next_producer_id_(config_.first_producer_id),
      changed_(sched, "cluster.changed") {
  PRODSIM_ASSERT(config_.brokers >= 1);
  PRODSIM_ASSERT(history_ != nullptr);
  for (int32_t i = 0; i < config_.brokers; ++i) {
    const net::NodeId node = network_.AddNode(absl::StrCat("broker-", i));
    brokers_.push_back(std::make_unique<Broker>(BrokerId(i), node));
  }
  // Replica assignment: partition p of the t-th topic on brokers
  // (p + t + k) mod n, k = 0..rf-1; the first is the preferred leader.
  int32_t topic_index = 0;
  for (const TopicConfig& t : config_.topics) {
    PRODSIM_ASSERT(t.replication_factor >= 1);
    PRODSIM_ASSERT(t.replication_factor <= config_.brokers);
    for (int32_t p = 0; p < t.partitions; ++p) {
      TopicPartition tp{t.name, PartitionId(p)};
      PartitionState st;
      for (int32_t k = 0; k < t.replication_factor; ++k) {
        st.replicas.push_back(BrokerId((p + topic_index + k) % config_.brokers));
      }
      st.leader = st.replicas.front();
      st.isr = st.replicas;
      for (BrokerId b : st.replicas) {
        brokers_[static_cast<size_t>(b.value)]->replicas_.emplace(
            tp, std::make_unique<Replica>(config_.version));
      }
      partitions_.emplace(tp, std::move(st));
    }
    ++topic_index;
  }
  // Every broker starts with the initial metadata (the cluster was set up
  // before the run).
  const std::shared_ptr<const MetadataView> initial = NewView();
  for (auto& b : brokers_) ApplyView(b.get(), initial);
  for (auto& b : brokers_) {
    sched_.Go(absl::StrCat("broker-", b->id_.value, ".accept"), AcceptLoop(b.get()),
              {.daemon = true, .world = true});
    sched_.Go(absl::StrCat("broker-", b->id_.value, ".fetcher"), ReplicaFetcher(b.get()),
              {.daemon = true, .world = true});
  }
}

Cluster::~Cluster() = default;

Broker& Cluster::broker(BrokerId id) {
  PRODSIM_ASSERT(id.value >= 0);
  PRODSIM_ASSERT(id.value < broker_count());
  return *brokers_[static_cast<size_t>(id.value)];
}

const Broker& Cluster::broker(BrokerId id) const {
  PRODSIM_ASSERT(id.value >= 0);
  PRODSIM_ASSERT(id.value < broker_count());
  return *brokers_[static_cast<size_t>(id.value)];
}

std::vector<net::NodeId> Cluster::BootstrapNodes() const {
  std::vector<net::NodeId> out;
  for (const auto& b : brokers_) out.push_back(b->node_);
  return out;
}

const PartitionState* Cluster::partition(const TopicPartition& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : &it->second;
}

std::vector<TopicPartition> Cluster::AllPartitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, st] : partitions_) out.push_back(tp);
  return out;
}

// The brokers the controller believes alive: registered in ZooKeeper. A
// crashed broker stays among them until its session expires.
std::vector<BrokerId> Cluster::LiveBrokers() const {
  std::vector<BrokerId> out;
  for (const auto& b : brokers_) {
    if (b->registered_) out.push_back(b->id_);
  }
  return out;
}

}  // namespace kafka
