// Fault kinds and the fault schedule.
//
// Each fault is a small type that applies itself to the world (network and
// cluster, through their public fault hooks) and, if it lasts, heals itself.
// Every kind but the two mock kinds stands for an event a real Kafka 2.6
// cluster on a real network has, with Kafka's side effects
// (fault_models/README.md: the realism table, with the Kafka source each
// follows). The mock kinds (`mock.error`, `mock.drop_response`) do what no
// real broker does, for exact ports of Sarama's MockBroker tests; nothing
// generates them unless asked (IsMockKind). Each kind is described once,
// in fault_models/kinds.h.
// A FaultSchedule applies its faults at their times and heals them at the
// end of their durations, in a daemon task; it records each application and
// each heal in the cluster's History, and knows when the last one healed
// (after which the liveness check applies).
#ifndef PRODSIM_FAULT_MODELS_FAULTS_H_
#define PRODSIM_FAULT_MODELS_FAULTS_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fault_models/kinds.h"
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

// The parameters of one fault, as the scenario gives them.
struct FaultParams {
  FaultKind kind = FaultKind::kReset;
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

// The kinds a realistic inject_error brings about through their causes
// (kafka::Cluster::CauseError), and what each needs of the world: an
// error Kafka cannot give at a produce request of this scenario is an
// error in the scenario, not a fault.
struct InjectableError {
  kafka::ErrorCode code;
  bool needs_acks_all;   // the request must have acks = -1
  int32_t min_replicas;  // the partition needs this replication factor
  int32_t min_insync;    // and at least this min.insync.replicas
  bool reads_duration;   // the cause lasts `duration`
  const char* cause;     // one line, for hints and the README
};
// NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
// REQUEST_TIMED_OUT.
std::span<const InjectableError> InjectableErrors();
const InjectableError* FindInjectableError(kafka::ErrorCode code);
// How long an inject_error cause lasts when the scenario says nothing.
inline constexpr Duration kInjectErrorLastingDefault = Duration::Seconds(1);

class Fault {
 public:
  virtual ~Fault() = default;
  virtual void Apply(World& w) = 0;
  // Undoes what lasts (a partition, a crash); instant faults do nothing.
  virtual void Heal(World& w) {}
  // True for faults that last until healed.
  virtual bool Lasting() const { return false; }
  // True for faults that act on the next requests, whenever they come
  // (inject_error, lose_response, ...): applying them arms them; the
  // cluster reports each use (set_count_fault_hook).
  virtual bool CountBased() const { return false; }
  virtual std::string Describe() const = 0;
};

// The fault of kind p.kind (kinds.h). INVALID_ARGUMENT for a field the kind
// needs that `p` leaves unset (a duration, an `extra` above 0, a topic and
// partition), or an inject_error whose error has no modelled cause.
absl::StatusOr<std::unique_ptr<Fault>> MakeFault(const FaultParams& p);

class FaultSchedule {
 public:
  void Add(const FaultParams& p, std::unique_ptr<Fault> fault);
  // Starts the daemon task that applies and heals the faults.
  void Start(World w);
  // When the last fault healed (or was applied, for instant faults), as
  // planned: the time after which the world is fault-free. A crashed
  // broker rejoins no sooner than `crash_detection` after its crash (the
  // cluster's zookeeper_session_timeout: it cannot register before).
  Time healed_at(Duration crash_detection) const;
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
