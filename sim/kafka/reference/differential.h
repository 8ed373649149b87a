// sim/kafka's producer-state rules beside Kafka's own code: the two sides of
// the differential test (README.md here).
//
// prodsim's side is ModelPartition: one partition's log and its
// ProducerStateManager, driven the way sim/kafka's Cluster drives them
// (cluster_serving.cc Cluster::Append for a leader, cluster_replication.cc
// FetchFrom for a follower and Truncate for a truncation,
// cluster_controller.cc Rejoin for a restart). Kafka's
// side is the JVM harness of this directory (Main.java): a real Log or
// UnifiedLog of the kafka_2.13 artifact, driven by the same operations as
// protocol lines. Both answer every operation in the harness's words
// ("append 0 2", "duplicate 0 2", "error OUT_OF_ORDER_SEQUENCE_NUMBER",
// "ok 5") and describe their producer state after it ("state 7:0:0-2@0-2");
// a Pair runs an operation on both and keeps the steps, so that the first
// difference comes with the whole sequence that led to it, in lines anyone
// replays (`kafka_differential --replay=FILE`).
#ifndef PRODSIM_SIM_KAFKA_REFERENCE_DIFFERENTIAL_H_
#define PRODSIM_SIM_KAFKA_REFERENCE_DIFFERENTIAL_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/core/time.h"
#include "sim/kafka/producer_state.h"
#include "sim/kafka/types.h"

namespace kafka::reference {

// One operation on the partition, as the harness's protocol spells it.
struct Op {
  enum class Kind : uint8_t {
    kAppend,        // append PID EPOCH SEQ COUNT: a leader append from a client
    kAppendPlain,   // append-plain COUNT: a batch without a producer id
    kReplicate,     // replicate PID EPOCH SEQ COUNT: a follower's copy at the log end
    kTruncate,      // truncate OFFSET
    kRestartClean,  // restart clean: the broker shut down cleanly and came back
    kRestartCrash,  // restart crash: killed, then recovered from its log
    kAdvance,       // advance MS: the clock moves
    kExpire,        // expire: removeExpiredProducers at the current time
  };
  Kind kind = Kind::kAppend;
  int64_t pid = -1;
  int16_t epoch = -1;
  int32_t seq = -1;
  int32_t count = 1;
  int64_t arg = 0;  // kTruncate: the offset; kAdvance: milliseconds

  bool operator==(const Op&) const = default;
};

// The protocol line of `op`, e.g. "append 7 0 3 2".
std::string OpLine(const Op& op);
// The inverse of OpLine; InvalidArgument naming what is wrong otherwise.
absl::StatusOr<Op> ParseOpLine(std::string_view line);

// The producer-id expiration age both sides use (the harness passes it to
// Kafka's log as maxProducerIdExpirationMs).
inline constexpr int64_t kExpirationMs = 1000;

// The model's version for a Kafka release as the harness names it ("2.6.2"):
// 0.11.x is k0_11, 2.0-2.4 k2_0, anything later k2_6 (the newest rules the
// model has; later lines are compared with them, and their differences
// listed in README.md).
absl::StatusOr<KafkaVersion> ModelVersionFor(std::string_view kafka_release);

// Deliberate mistakes in prodsim's side, for the test that the comparison
// fails when the model is wrong (the canary).
enum class Mutant : uint8_t {
  kNone,
  kNoDuplicates,          // a resend of a cached batch is refused as out of order
  kStateSurvivesRestart,  // a restart keeps the producer state instead of rebuilding it
};
absl::StatusOr<Mutant> ParseMutant(std::string_view name);

class ModelPartition {
 public:
  struct Stored {
    int64_t pid;  // -1: a plain batch
    int16_t epoch;
    int32_t first_seq;
    int32_t last_seq;
    int64_t first_offset;
    int64_t last_offset;
    int64_t time_ms;
  };

  // `removes_stray_snapshots`: a clean restart leaves only the newest
  // snapshot file (Kafka 2.8 and later: LogLoader's
  // ProducerStateManager.removeStraySnapshots keeps the latest and those at
  // segment base offsets; 2.6 keeps them all). The cluster never stops a
  // broker cleanly, so only this test needs it.
  explicit ModelPartition(KafkaVersion version, Mutant mutant = Mutant::kNone,
                          bool removes_stray_snapshots = false);

  // Applies `op` and answers it as the harness would.
  // REQUIRES: op is well formed (count >= 1; an append's pid >= 0).
  std::string Apply(const Op& op);
  // "state" and the producers in id order, as the harness prints them.
  std::string State() const;

  const std::vector<Stored>& log() const { return log_; }
  const ProducerStateManager& producers() const { return state_; }
  int64_t LogEnd() const { return log_.empty() ? 0 : log_.back().last_offset + 1; }

 private:
  std::string Append(const Op& op);
  void Write(int64_t pid, int16_t epoch, int32_t first_seq, int32_t count);
  void Replay(int64_t from);
  sim::Time Now() const { return sim::Time::FromNanos(now_ms_ * 1000000); }

  Mutant mutant_;
  bool removes_stray_snapshots_;
  std::vector<Stored> log_;
  ProducerStateManager state_;
  std::vector<ProducerStateManager::Snapshot> snapshots_;
  int64_t now_ms_ = 0;
};

// The JVM harness as a child process: one request line in, one answer line
// out. The process is killed (and reaped) when the object goes, and dies
// with prodsim (PR_SET_PDEATHSIG); every answer is awaited for at most
// `answer_bound_ms`.
class ReferenceProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ReferenceProcess>> Start(const std::string& launcher,
                                                                 int answer_bound_ms = 60000);
  ~ReferenceProcess();
  ReferenceProcess(const ReferenceProcess&) = delete;
  ReferenceProcess& operator=(const ReferenceProcess&) = delete;

  // Sends `line`, returns the answer (without its newline). An answer
  // starting "bad " or "crash " is returned as it is: the caller decides.
  absl::StatusOr<std::string> Ask(std::string_view line);
  // The Kafka release on the classpath ("2.6.2"), asked once at Start.
  const std::string& release() const { return release_; }

 private:
  ReferenceProcess() = default;

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int answer_bound_ms_ = 0;
  std::string pending_;  // bytes read past the last answer
  std::string release_;
};

// One operation and what each side made of it.
struct Step {
  Op op;
  std::string model;
  std::string kafka;
  std::string model_state;
  std::string kafka_state;

  std::string departure;  // a known departure excused the answers (KnownDeparture)

  bool Same() const { return (model == kafka || !departure.empty()) && model_state == kafka_state; }
};

// Whether Kafka `release` removes stray snapshots on a clean restart (2.8+).
bool RemovesStraySnapshots(std::string_view kafka_release);

// A difference between the model's version and a Kafka release it stands
// for that is known and explained (README.md), by name; empty when the step
// is not one. 2.4 answers a negative base sequence with INVALID_RECORD
// where k2_0 answers CORRUPT_MESSAGE as 2.0-2.3 do ("2.4-invalid-record").
std::string KnownDeparture(std::string_view kafka_release, KafkaVersion version, const Op& op,
                           std::string_view model_answer, std::string_view kafka_answer);

// Both sides, run side by side from an empty partition.
class Pair {
 public:
  Pair(ReferenceProcess& kafka, KafkaVersion version, Mutant mutant = Mutant::kNone);

  // Empties both partitions and forgets the steps.
  absl::Status Reset();
  // Runs `op` on both sides and compares the answers and the states after
  // it. True when they agree; the step is kept either way. An error is the
  // harness's (the JVM died, answered "bad" or "crash"), not a difference.
  absl::StatusOr<bool> Do(const Op& op);

  const ModelPartition& model() const { return *model_; }
  const std::vector<Step>& steps() const { return steps_; }
  // How often each known departure excused a step, by name.
  const std::map<std::string, int64_t>& departures() const { return departures_; }

 private:
  ReferenceProcess& kafka_;
  KafkaVersion version_;
  Mutant mutant_;
  std::unique_ptr<ModelPartition> model_;
  std::vector<Step> steps_;
  std::map<std::string, int64_t> departures_;
};

// Runs `ops` from an empty partition until the first difference: true if
// there is one (pair.steps() then ends with it).
absl::StatusOr<bool> RunUntilDifferent(Pair& pair, const std::vector<Op>& ops);

// Removes operations from a sequence that differs, one at a time, as long
// as what is left still differs somewhere (delta debugging's one-minimal
// pass, repeated to a fixed point): RapidCheck shrinks the random choices
// that made the sequence, which leaves operations that only happened to be
// drawn. Returns the smaller sequence (the steps of its run in pair).
// REQUIRES: `ops` differs.
absl::StatusOr<std::vector<Op>> Minimize(Pair& pair, std::vector<Op> ops);

// The steps as a file `--replay` reads: the operations one per line, each
// followed by comments with both answers (and both states where they
// differ), the first difference marked.
std::string StepsText(const std::vector<Step>& steps, std::string_view kafka_release,
                      KafkaVersion version);

// The operations of a replay file: one per line; blank lines and lines
// starting with '#' are skipped. A bad line is InvalidArgument with
// "FILE:LINE:COLUMN: ..." (column 1: the line as a whole).
absl::StatusOr<std::vector<Op>> ParseReplay(std::string_view path, std::string_view text);

}  // namespace kafka::reference

#endif  // PRODSIM_SIM_KAFKA_REFERENCE_DIFFERENTIAL_H_
