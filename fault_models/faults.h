// Fault kinds and the fault schedule.
//
// Each fault is a small type that applies itself to the world (network and
// cluster, through their public fault hooks) and, if it lasts, heals itself.
// A FaultSchedule applies its faults at their times and heals them at the
// end of their durations, in a daemon task; it records each application and
// each heal in the cluster's History, and knows when the last one healed
// (after which the liveness check applies).
#ifndef PRODSIM_FAULT_MODELS_FAULTS_H_
#define PRODSIM_FAULT_MODELS_FAULTS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/cluster.h"
#include "sim/net/network.h"

namespace fault_models {

using sim::Duration;
using sim::Time;

// What faults act on.
struct World {
  sim::Scheduler* sched = nullptr;
  net::Network* network = nullptr;
  kafka::Cluster* cluster = nullptr;
  net::NodeId client = 0;
};

enum class Direction { kToBroker, kFromBroker, kBoth };

// The parameters of one fault, as the scenario gives them.
struct FaultParams {
  std::string kind;
  Time at;
  std::optional<Duration> duration;
  kafka::BrokerId broker{0};
  Direction direction = Direction::kBoth;
  std::optional<kafka::TopicPartition> tp;
  kafka::ApiKey api = kafka::ApiKey::kProduce;
  kafka::ErrorCode error = kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER;
  int32_t count = 1;
  Duration extra;
  bool heal = true;
};

class Fault {
 public:
  virtual ~Fault() = default;
  virtual void Apply(World& w) = 0;
  // Undoes what lasts (a partition, a crash); instant faults do nothing.
  virtual void Heal(World& w) {}
  // True for faults that last until healed.
  virtual bool Lasting() const { return false; }
  virtual std::string Describe() const = 0;
};

// The kinds: reset, partition, crash, move_leader, shrink_isr,
// inject_error, drop_responses, delay_processing, latency_spike,
// pause_fetching. INVALID_ARGUMENT for an unknown kind.
absl::StatusOr<std::unique_ptr<Fault>> MakeFault(const FaultParams& p);
const std::vector<std::string>& FaultKinds();

class FaultSchedule {
 public:
  void Add(const FaultParams& p, std::unique_ptr<Fault> fault);
  // Starts the daemon task that applies and heals the faults.
  void Start(World w);
  // When the last fault healed (or was applied, for instant faults), as
  // planned: the time after which the world is fault-free.
  Time healed_at() const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    FaultParams params;
    std::shared_ptr<Fault> fault;
  };
  std::vector<Entry> entries_;
};

}  // namespace fault_models

#endif  // PRODSIM_FAULT_MODELS_FAULTS_H_
