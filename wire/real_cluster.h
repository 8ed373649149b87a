// A real client against a real Kafka cluster: `prodsim real FILE
// --client=NAME --cluster=kafka@VERSION`. Each trial starts a cluster of
// the scenario's brokers and topics with wire/kafka's supervisor
// (kafka-cluster, wire/kafka/README.md) behind a fault proxy per broker
// (fault_proxy.h), runs the client's driver against the proxy's ports as
// RunReal does (real_trial.h), applies the scenario's faults on the wall
// clock, then stops the brokers, reads every replica's log (`dump`), and
// judges the trial with the same checks as RunReal.
//
// Each fault kind, as near as a real cluster comes to the simulation's
// (fault_models/kinds.h):
//   reset, partition, isolate, blackhole, connect_hang, lose_response,
//   stall_response, latency_spike: the proxy (fault_proxy.h);
//   delay_processing: the proxy holds each request to the broker `extra`
//     longer (the broker itself is not slowed);
//   crash: `crash ID` (kill -9), and `restart ID` at the heal (the
//     supervisor waits for the broker's registration to lapse first);
//   move_leader: `move-leader TOPIC PARTITION ID` (a reassignment putting
//     ID first, then a preferred-leader election); a refusal (ID holds no
//     replica) changes nothing, as in the simulation, and is noted;
//   shrink_isr: `shrink-isr TOPIC PARTITION ID` (SIGSTOP, until the leader
//     drops ID from the ISR after replica.lag.time.max.ms), `resume ID` at
//     the end of `duration`: the whole broker stops, its leaderships too;
//   pause_fetching: `pause ID` / `resume ID` for `duration`, with the same
//     difference.
// With no real form, refused (CheckRealCluster): inject_error (a real
// broker's errors come from their causes; the simulation stages them),
// log_dir_failure, the mocks. Buggify sites (they perturb the simulation's
// timing) are left out, and a note says so.
// What a trial does differently from the simulation is said in its notes.
//
// The history (kafka::History) a trial's checks read: connections,
// responses (per partition of each Produce response the proxy decoded) and
// the batches the client sent, from the proxy; faults as they were applied
// and healed; the final logs from the dump: for each partition, the log of
// the replica with the highest high watermark, up to it; and an append per
// batch of the final logs (a real broker reports no appends), timed by the
// response that acknowledged it at that offset, else by the request that
// carried it, else at the end. Truncations are unknowable; a success is
// marked `duplicate` (MarkDuplicates) when the final log's batch at its
// offset holds other records than the request (a resend of a sequence the
// broker holds, as findDuplicateBatch answers it), or when an earlier
// success for the same epoch and sequence got that offset (a resend).
// A resend whose first answer was lost, of the very records the log holds,
// is not told from the append: it stays unmarked.
//
// Bounds: the cluster's start (kStartBound), the trial (the scenario's
// limits and --bound, as RunReal), the dump and the quit (kDumpBound,
// kQuitBound). Nothing outlives a trial: the supervisor is a Child (its
// whole process tree is killed with it, even when prodsim is killed), the
// proxy's sockets are closed, and the cluster's directory
// (TMPDIR/prodsim-kafka-PID-XXXXXX) is removed, whatever happened. A
// prodsim killed outright (SIGKILL) cannot remove its directory: the next
// trial on the machine removes every such directory whose PID is gone.
#ifndef PRODSIM_WIRE_REAL_CLUSTER_H_
#define PRODSIM_WIRE_REAL_CLUSTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/scenario.h"
#include "sim/core/time.h"
#include "sim/kafka/history.h"
#include "wire/fault_proxy.h"
#include "wire/real_world.h"

namespace wire {

inline constexpr sim::Duration kStartBound = sim::Duration::Seconds(180);
inline constexpr sim::Duration kDumpBound = sim::Duration::Seconds(120);
inline constexpr sim::Duration kQuitBound = sim::Duration::Seconds(30);

// The real cluster a trial runs against.
struct RealCluster {
  std::string version;   // Kafka's, "2.6.2"
  std::string launcher;  // the kafka-cluster program built for it
};

// --cluster's value: "sim" (or empty) is the simulated cluster (nullopt);
// "kafka@N.N.N" a real one of that version. An error names what it takes.
absl::StatusOr<std::optional<std::string>> ParseClusterFlag(std::string_view value);

// The kafka-cluster launcher for `version`: $PRODSIM_KAFKA_CLUSTER_DIR's,
// the build tree's or the install's kafka-cluster-VERSION/, or the versions
// directory's (VersionsDir()); else built now by wire/kafka/build.sh (its
// lines on stderr; java and mvn) into the build tree's (when prodsim runs
// from one) or the versions directory's. An error says why it is not there.
absl::StatusOr<std::string> FindKafkaCluster(const std::string& version);

// OK if a real cluster can run the scenario; else, in one line, the first
// thing it cannot.
absl::Status CheckRealCluster(const scenarios::Scenario& s);

// How a real cluster's trial of `s` differs from the simulation's run.
std::vector<std::string> RealClusterNotes(const scenarios::Scenario& s, const std::string& version);

// One trial. A harness error if the cluster does not start, a fault it
// must apply fails, or its logs cannot be read.
RealOutput RunRealCluster(const scenarios::Scenario& s, const RealOptions& options,
                          const RealCluster& cluster);

// The supervisor's `dump` answer (the lines between "ok" and "end").
struct DumpBatch {
  int32_t broker = 0;
  kafka::TopicPartition tp;
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t producer_id = -1;
  int16_t epoch = -1;
  int32_t base_seq = -1;
  int32_t last_seq = -1;
  bool transactional = false;
  bool control = false;
  std::vector<uint64_t> record_ids;  // 0: a record without a prodsim-id
};
struct ClusterDump {
  std::vector<DumpBatch> batches;
  // Each replica's high watermark: partition -> broker -> HW.
  kafka::ByPartition<absl::btree_map<int32_t, int64_t>> hw;
};
absl::StatusOr<ClusterDump> ParseDump(const std::vector<std::string>& lines);

// Marks the Produce successes of `history` that were duplicate answers (see
// above), from its final logs; the others lose their record ids.
void MarkDuplicates(kafka::History& history);

// The final logs and the appends of the history from `dump`, timed by the
// history's responses and the proxy's `sent` batches (see above); `end`:
// the time of an append neither times.
void AddDump(const ClusterDump& dump, const std::vector<FaultProxy::SentBatch>& sent, sim::Time end,
             kafka::History& history);

}  // namespace wire

#endif  // PRODSIM_WIRE_REAL_CLUSTER_H_
