// The Kafka cluster model: brokers, partition logs, replication, a
// controller, and the fault hooks that fault_models/ drives.
//
// What it models (Kafka 2.6 unless the version says otherwise):
// - Each broker serves each client connection one request at a time, in
//   order (Kafka mutes a connection while a request is in flight), after a
//   processing delay. It answers from its own view of the metadata, which
//   the controller propagates with a per-broker delay: a client can be sent
//   to a stale leader and get NOT_LEADER_OR_FOLLOWER.
// - Produce: leader check, acks (0: no response; 1: after the append; -1:
//   once the high watermark passes the batch, else REQUEST_TIMED_OUT with
//   the batch left in the log), min.insync.replicas (NOT_ENOUGH_REPLICAS
//   before the append, NOT_ENOUGH_REPLICAS_AFTER_APPEND after it), and the
//   idempotent producer-state rules (ProducerStateManager).
// - ApiVersions: the version's list of API ranges; a request newer than
//   the broker knows gets UNSUPPORTED_VERSION (with ApiVersions' own range
//   from 2.6, as KIP-511 brokers send it; with none from older ones).
// - Replication: followers fetch from the leader every fetch interval
//   (directly, not over sim/net: a network partition between brokers is not
//   modelled); the leader's high watermark is the smallest log end offset in
//   its ISR; a follower that has not caught up for replica.lag.time.max
//   leaves the ISR, and rejoins once it reaches the high watermark.
// - Controller: clean leader election from the ISR on a crash or on request;
//   a crashed broker loses its in-memory state (connections, producer state,
//   pending requests) and keeps its log; on restart it rebuilds producer
//   state from the log, and as a follower truncates its log to where it
//   agrees with the leader's (what leader epochs achieve), which removes an
//   uncommitted suffix written while it led. The controller learns of a
//   crash only when the broker's ZooKeeper session expires
//   (zookeeper.session.timeout.ms, 18 s in 2.6: KafkaController.
//   onBrokerFailure runs then): until then the dead broker stays in every
//   ISR and keeps the partitions it led, so they are unavailable and an
//   acks=all write to a partition it follows waits (REQUEST_TIMED_OUT). A
//   broker restarted before its old session expired cannot register
//   (its ephemeral node is still there), so it rejoins at the expiry.
// - Faults on responses (fault_models/ drives them): a lost response (the
//   request is processed, then the connection breaks before the answer
//   arrives: both sides see the reset), a stalled response (held longer
//   than the client waits; it dies with the connection the client closes),
//   and an error brought about by its real cause at a request (a leadership
//   move, an ISR shrink, stalled followers). Mock faults, for ports of
//   Sarama's MockBroker tests only, answer with any error unprocessed or
//   skip a response on a live connection, which no real broker does.
// - Buggify (sim/core/buggify.h), when given one: broker.slow_request makes
//   one request's processing slower (responses reorder across connections
//   and brokers), broker.slow_metadata makes one broker learn a metadata
//   update later (a wider stale-metadata window), broker.slow_fetch makes
//   one follower's fetch round slower (the high watermark lags, so acks=all
//   waits longer). Off, they draw nothing.
//
// Invariants: offsets in a log are contiguous from 0; a leader's high
// watermark never exceeds its log end; only the controller changes leaders
// and ISRs; every append, truncation, response and fault is recorded in the
// History.
#ifndef PRODSIM_SIM_KAFKA_CLUSTER_H_
#define PRODSIM_SIM_KAFKA_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "sim/core/buggify.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/core/sync.h"
#include "sim/kafka/history.h"
#include "sim/kafka/producer_state.h"
#include "sim/kafka/protocol.h"
#include "sim/net/network.h"

namespace kafka {

using sim::Duration;
using sim::Time;

struct TopicConfig {
  std::string name;
  int32_t partitions = 1;
  int32_t replication_factor = 1;
};

struct ClusterConfig {
  int32_t brokers = 3;
  std::vector<TopicConfig> topics;
  int32_t min_insync_replicas = 1;
  KafkaVersion version = KafkaVersion::k2_6;
  // Controller-to-broker metadata propagation: uniform in [0, max] per broker.
  Duration metadata_delay_max = Duration::Millis(20);
  Duration replica_fetch_interval = Duration::Millis(5);
  Duration replica_lag_time_max = Duration::Seconds(30);  // 2.6 default
  // replica.fetch.wait.max.ms: how long a caught-up follower's fetch waits
  // at the leader for new data before it returns empty.
  Duration replica_fetch_wait_max = Duration::Millis(500);
  Duration request_processing = Duration::Micros(200);
  int64_t first_producer_id = 1000;
  // zookeeper.session.timeout.ms: how long after a crash the controller
  // notices it (2.6 default: 18 s). Zero, for tests only: at once.
  Duration zookeeper_session_timeout = Duration::Seconds(18);
};

// The cluster's buggify sites. Rates are per opportunity: per request a
// broker takes up, per (broker, metadata update), per fetch round of a live
// broker.
inline constexpr sim::BuggifySite kBuggifySlowRequest{"broker.slow_request", 1, 10};
inline constexpr sim::BuggifySite kBuggifySlowMetadata{"broker.slow_metadata", 1, 4};
inline constexpr sim::BuggifySite kBuggifySlowFetch{"broker.slow_fetch", 1, 10};
// The most a fired site adds.
inline constexpr Duration kBuggifySlowRequestMax = Duration::Millis(10);
inline constexpr Duration kBuggifySlowMetadataMax = Duration::Millis(100);
inline constexpr Duration kBuggifySlowFetchMax = Duration::Millis(50);
inline constexpr sim::BuggifySite kBuggifySites[] = {kBuggifySlowRequest, kBuggifySlowMetadata,
                                                     kBuggifySlowFetch};

// The controller's record of one partition.
struct PartitionState {
  std::vector<BrokerId> replicas;  // assignment order = preference order
  BrokerId leader = BrokerId::kNone;
  std::vector<BrokerId> isr;
  int32_t leader_epoch = 0;
};

// A broker's view of the cluster, as last propagated to it.
struct MetadataView {
  uint64_t version = 0;
  ByPartition<PartitionState> partitions;
  std::vector<BrokerId> live_brokers;
};

// A batch in a partition log.
struct StoredBatch {
  Offset base_offset;
  int32_t leader_epoch = 0;
  Time append_time;
  RecordBatch batch;
  Offset last_offset() const { return Offset(base_offset.value + batch.record_count() - 1); }
};

// One replica of a partition on one broker.
struct Replica {
  explicit Replica(KafkaVersion v) : producer_state(v) {}
  std::vector<StoredBatch> log;
  Offset log_end{0};
  Offset high_watermark{0};
  ProducerStateManager producer_state;
  // The producer-state snapshot files of the log directory: on disk, so
  // they outlive a crash; a truncation deletes the ones past its offset.
  std::vector<ProducerStateManager::Snapshot> snapshots;
  bool needs_truncation = false;
  // Its log directory failed (Cluster::FailLogDir): the broker serves it no
  // more, as leader or follower, until the run ends (Kafka brings a failed
  // directory back only with a broker restart on a repaired disk).
  bool offline = false;
  Time fetch_paused_until;  // this follower does not fetch before then
  // Leader side: each follower's log end and when it was last caught up.
  absl::btree_map<int32_t, Offset> follower_end;
  absl::btree_map<int32_t, Time> follower_caught_up;
};

// An error to bring about at the next produce requests that allow it
// (Cluster::CauseError), or, for a mock, to answer with unprocessed.
struct InjectedError {
  ApiKey api = ApiKey::kProduce;
  std::optional<TopicPartition> tp;  // all partitions if unset
  ErrorCode error = ErrorCode::NONE;
  int32_t remaining = 0;
  bool mock = false;
  Duration lasting;  // NOT_ENOUGH_REPLICAS*: how long the dropped followers stall
};

// A fault on the responses of one broker (lose_response, stall_response,
// mock.drop_response), used up one response at a time.
struct ResponseFault {
  enum class Kind { kLose, kStall, kMockDrop };
  Kind kind = Kind::kLose;
  std::optional<ApiKey> api;  // unset: any request (mock.drop_response)
  int32_t remaining = 0;
  Duration hold;  // kStall
};

class Cluster;

class Broker {
 public:
  Broker(BrokerId id, net::NodeId node);
  BrokerId id() const { return id_; }
  net::NodeId node() const { return node_; }
  bool up() const { return up_; }
  const MetadataView& view() const { return view_; }
  const Replica* replica(const TopicPartition& tp) const;

 private:
  friend class Cluster;
  bool Leads(const TopicPartition& tp) const;
  Replica* MutableReplica(const TopicPartition& tp);

  BrokerId id_;
  net::NodeId node_;
  bool up_ = true;
  // The controller's view: the broker's ZooKeeper registration is alive.
  // False only between the expiry of a crashed broker's session and its
  // restart.
  bool registered_ = true;
  bool restart_pending_ = false;  // restarted before its session expired
  uint64_t crash_serial_ = 0;
  uint64_t incarnation_ = 1;
  MetadataView view_;
  ByPartition<std::unique_ptr<Replica>> replicas_;
  std::vector<InjectedError> injected_;
  std::vector<ResponseFault> response_faults_;
  Duration extra_processing_;
  Time extra_processing_until_;
  Time fetch_paused_until_;
};

class Cluster {
 public:
  // Creates the brokers as network nodes and starts their tasks (daemons).
  Cluster(sim::Scheduler& sched, net::Network& network, ClusterConfig config, History* history);
  ~Cluster();

  // Perturbation points (kBuggifySites); null, the default, is off. The
  // Buggify must outlive the Cluster. Set it before the run starts.
  void SetBuggify(sim::Buggify* buggify) { buggify_ = buggify; }

  const ClusterConfig& config() const { return config_; }
  int32_t broker_count() const { return static_cast<int32_t>(brokers_.size()); }
  Broker& broker(BrokerId id);
  const Broker& broker(BrokerId id) const;
  // Seed brokers for a client: every broker's node.
  std::vector<net::NodeId> BootstrapNodes() const;
  const PartitionState* partition(const TopicPartition& tp) const;
  std::vector<TopicPartition> AllPartitions() const;

  // --- Fault hooks. They do not record themselves: the fault schedule
  // (fault_models/) records each fault it applies and heals, once.
  void CrashBroker(BrokerId b);
  void RestartBroker(BrokerId b);
  absl::Status MoveLeader(const TopicPartition& tp, BrokerId to);
  // Drops follower `b` from the ISR of `tp`, and stalls its fetching of
  // `tp` until `until` (a follower that kept fetching would rejoin at once,
  // as in Kafka, where a shrink is the consequence of lag).
  absl::Status ShrinkIsr(const TopicPartition& tp, BrokerId b, Time until);
  // inject_error: brings `error` about at the next `count` produce requests
  // to `b` (for partition `tp`, or any) where its real cause can act, by
  // that cause, with its side effects (fault_models/README.md has the table):
  //   NOT_LEADER_OR_FOLLOWER: the controller moves the leadership to another
  //     live ISR member, and `b` learns it before it takes up the request;
  //   NOT_ENOUGH_REPLICAS (acks=all): followers drop out of the ISR, below
  //     min.insync.replicas, before the append; they stall for `lasting`;
  //   NOT_ENOUGH_REPLICAS_AFTER_APPEND (acks=all): the same right after the
  //     append, so the high watermark passes the batch with too small an ISR;
  //   REQUEST_TIMED_OUT (acks=all): the ISR followers stop fetching the
  //     partition until the request's timeout has passed; the batch stays in
  //     the log and is committed once they catch up.
  // A request the cause cannot act on (no other ISR member, acks != all, an
  // ISR too small to shrink) is served as usual and uses up nothing.
  // REQUIRES: CausableError(error), count >= 1.
  void CauseError(BrokerId b, std::optional<TopicPartition> tp, ErrorCode error, int32_t count,
                  Duration lasting);
  // The errors CauseError brings about.
  static bool CausableError(ErrorCode e);
  // mock.error (a MockBroker's canned error, which no real broker gives):
  // answers the next `count` requests of `api` on broker `b` (for Produce:
  // the partition `tp`, or every partition) with `error`, unprocessed.
  void MockError(BrokerId b, ApiKey api, std::optional<TopicPartition> tp, ErrorCode error,
                 int32_t count);
  // lose_response: the next `count` requests of `api` that `b` answers are
  // processed in full, then the connection breaks before the response gets
  // to the client: both sides see the reset, and requests sent behind it on
  // that connection are lost.
  void LoseResponses(BrokerId b, ApiKey api, int32_t count);
  // stall_response: the next `count` responses of `api` on `b` are held for
  // `hold` after processing (a GC pause, a slow disk); the connection stays
  // muted meanwhile (Kafka reads no request on a connection while it owes a
  // response). A response whose connection closed meanwhile is dropped.
  void StallResponses(BrokerId b, ApiKey api, int32_t count, Duration hold);
  // mock.drop_response (which no real broker does): processes the next
  // `count` requests on `b` fully, then sends no response on a connection
  // that stays open.
  void MockDropResponses(BrokerId b, int32_t count);
  // Called each time a count-based fault (the five above) takes effect,
  // with the time its effect ends. Such a fault lasts until its count is
  // used, which may be long after it was applied (a lost response to a
  // request retried every 30 s), so the world is fault-free only after its
  // last use.
  void set_count_fault_hook(absl::AnyInvocable<void(Time)> hook) {
    count_fault_hook_ = std::move(hook);
  }
  // Adds `extra` to the processing of every request on `b` until `until`.
  void DelayProcessing(BrokerId b, Duration extra, Time until);
  // Broker `b` stops fetching as a follower until `until` (a stalled
  // replica fetcher: a GC pause, a slow disk, a network problem between
  // brokers). Its partitions' acks=all requests wait; it may leave the ISR.
  void PauseFetching(BrokerId b, Time until);
  // The log directory holding broker `b`'s replica of `tp` (or, unset,
  // every replica of `b`: a broker with one directory) fails (an I/O error,
  // a dead disk). As Kafka 2.6's ReplicaManager.handleLogDirFailure: the
  // replica goes offline at once, produce requests for it are answered
  // KAFKA_STORAGE_ERROR (acks=all ones waiting too) and it stops fetching;
  // the controller, told through ZooKeeper, drops `b` from the partition's
  // ISR and elects another leader (KafkaController.onBrokerLogDirFailure).
  // A broker left with no directory halts (LogManager: Exit.halt), which is
  // the crash fault's, not this one's.
  void FailLogDir(BrokerId b, std::optional<TopicPartition> tp);
  // Records a fault (applied or healed) in the History and the trace.
  void RecordFault(std::string description, bool healed = false);

  // The committed log of every partition (up to the leader's high
  // watermark) into the History. Call at the end of a run.
  void SnapshotLogs();

 private:
  friend class Broker;
  sim::Task<void> AcceptLoop(Broker* b);
  sim::Task<void> Serve(Broker* b, net::Endpoint ep, uint64_t incarnation);
  sim::Task<void> ReplicaFetcher(Broker* b);
  sim::Task<net::PayloadPtr> Handle(Broker* b, const Message& m, uint64_t incarnation);
  std::shared_ptr<MetadataResponse> HandleMetadata(Broker* b, const MetadataRequest& m);
  std::shared_ptr<ApiVersionsResponse> HandleApiVersions(const ApiVersionsRequest& m);
  sim::Task<std::shared_ptr<ProduceResponse>> HandleProduce(Broker* b, const ProduceRequest& m,
                                                            uint64_t incarnation);
  // `*duplicate` is set when the batch is answered as a duplicate of one the
  // log holds.
  ProducePartitionResponse AppendAsLeader(Broker* b, const TopicPartition& tp,
                                          const RecordBatch& batch, int16_t acks, bool* duplicate);
  std::optional<ErrorCode> TakeMockError(Broker* b, ApiKey api, const TopicPartition* tp);
  // CauseError's causes that act before (`after_append` false) or after an
  // append of `tp` by leader `b` for a request with `acks` and `deadline`.
  void BringAbout(Broker* b, const TopicPartition& tp, int16_t acks, Time deadline,
                  bool after_append);
  bool TryCause(Broker* b, const TopicPartition& tp, const InjectedError& e, Time deadline);
  // Drops followers of `tp` from its ISR until it is below min.insync;
  // they stall for `lasting`. False if it cannot (ISR already too small).
  bool ShrinkBelowMinIsr(Broker* leader, const TopicPartition& tp, Duration lasting);
  std::optional<ResponseFault> TakeResponseFault(Broker* b, ApiKey api);
  void MarkResponses(const Broker* b, int32_t correlation_id, Time processed, ResponseFate fate);
  void UsedCountFault(Time until);
  // The controller learns that `b` crashed (its session expired).
  void DetectCrash(BrokerId id, uint64_t crash_serial);
  void Rejoin(Broker& b);
  void FetchFrom(Broker* follower, Broker* leader, const TopicPartition& tp);
  void Truncate(Broker* b, Replica& r, const TopicPartition& tp, size_t keep_batches);
  void ReplayProducerState(Replica& r, Offset from);
  void UpdateHighWatermark(Broker* leader, const TopicPartition& tp, Replica& r);
  void CheckIsrShrink(Broker* leader, const TopicPartition& tp, Replica& r);
  void ElectLeader(const TopicPartition& tp, PartitionState& p);
  // The controller's state as a new metadata version.
  std::shared_ptr<const MetadataView> NewView();
  // Sends a new version to every live broker, each after its own delay;
  // returns it.
  std::shared_ptr<const MetadataView> Publish();
  void ApplyView(Broker* b, const std::shared_ptr<const MetadataView>& view);
  std::vector<BrokerId> LiveBrokers() const;
  // Whether a fetch by follower `b` now would change anything.
  bool FetchHasWork(const Broker* b) const;
  // The extra delay of `site` at this opportunity on broker `b`: zero
  // unless the site is enabled and fires (then noted in the trace).
  Duration Perturb(const sim::BuggifySite& site, Duration max, const Broker& b);

  sim::Scheduler& sched_;
  net::Network& network_;
  ClusterConfig config_;
  History* history_;
  absl::AnyInvocable<void(Time)> count_fault_hook_;
  sim::Prng prng_;
  sim::Buggify* buggify_ = nullptr;
  std::vector<std::unique_ptr<Broker>> brokers_;
  ByPartition<PartitionState> partitions_;
  uint64_t metadata_version_ = 0;
  int64_t next_producer_id_;
  // Notified whenever a log, a high watermark or a broker's view changes:
  // the fetchers' long poll and the acks=all purgatory wait on it.
  sim::Notifier changed_;
};

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_CLUSTER_H_
