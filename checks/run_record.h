// RunRecord: what the checks read after a run, and nothing else (docs/DESIGN.md:
// checks read a recorded history, never live objects).
#ifndef PRODSIM_CHECKS_RUN_RECORD_H_
#define PRODSIM_CHECKS_RUN_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "producer/history.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/history.h"

namespace checks {

// A message the application wrote to Input, in the order it wrote them.
struct ProducedMessage {
  uint64_t id = 0;
  std::string topic;
  std::string key;
  sim::Time at;
  // Wire mode: the produce call that handed the message over (a driver's
  // "call"), -1 if the driver does not say. See RunRecord::order_within_call.
  int64_t call = -1;
};

// Wire mode: what the real client process did, as prodsim saw it (absent in
// the simulated world). The client-* checks and no-fatal-error read it.
struct ClientRecord {
  std::string name;       // e.g. "librdkafka 2.0.2", as the driver's start line says
  bool started = false;   // printed its start line
  bool closed = false;    // printed its closed line (flushed, then destroyed)
  bool flush_ok = false;  // ... and its flush settled everything in time ("flush":"ok")
  std::optional<sim::Time> closed_at;
  // How the process ended: an exit code, or the signal that killed it;
  // `hung`: prodsim killed it at the trial's bound.
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool hung = false;
  sim::Time bound;  // the trial's bound, when `hung`
  // Lines on stdout that are not the driver protocol (the first few), and
  // how many in all.
  std::vector<std::string> garbage;
  int32_t garbage_lines = 0;
  // Connections prodsim closed because the client sent a malformed frame,
  // or asked for what the model does not serve: why, with the time.
  std::vector<std::string> malformed_frames;
  std::vector<std::string> not_served;
  // The client's fatal errors (librdkafka: the error callback with
  // RD_KAFKA_RESP_ERR__FATAL), with the time: "t=1.2s NAME: text".
  std::vector<std::string> fatal_errors;
  std::optional<sim::Time> first_fatal_at;  // when the first came
  std::string stderr_tail;                  // the last lines it wrote to stderr
  // The goroutine report (clients/README.md), printed after "closed" by a
  // driver whose client runs goroutines (Sarama's): whether it came, how
  // many of the client's goroutines were still alive, and how long the
  // driver waited for them to return first. The survivors themselves go
  // to RunRecord::producer_goroutines_at_end, which no-leaked-goroutines
  // reads in both worlds.
  bool goroutines_reported = false;
  int64_t goroutines_alive = 0;
  sim::Duration goroutines_waited;
  // How many messages the job handed the client when it had to offer every
  // one (the workload has no close_at): ids 1..job_messages, each of which
  // must have a produce line or an error line of its produce call once the
  // client printed closed with its flush ok (client-lost-messages; a flush
  // that timed out may have left the driver blocked before the job's end).
  // Unset: not judged.
  std::optional<int64_t> job_messages;
  // How many of them the driver says it gave up offering (its closing
  // line's "unoffered": its client held every slot until the flush wait
  // ran out); not counted as lost.
  int64_t unoffered = 0;
  // Every line the driver printed on stdout, as prodsim received it (the
  // first wire::kEventLinesKept), and how many there were in all.
  std::vector<std::pair<sim::Time, std::string>> events;
  int64_t event_lines = 0;
};

struct RunRecord {
  bool idempotent = false;
  // Producer.RequiredAcks: -1 (all), 1 or 0. Only with -1 is an acknowledged
  // message promised to survive a leader failover.
  int16_t required_acks = -1;
  // Net.MaxOpenRequests. Without idempotence Sarama promises the order of a
  // partition only with 1 (its documentation of the setting).
  int32_t max_open_requests = 1;
  std::vector<ProducedMessage> produced;
  sarama::ProducerHistory producer;  // successes and errors, in report order
  kafka::History kafka;              // appends, truncations, responses, faults, final logs
  // When the application called AsyncClose, and when both output channels
  // had closed (Close returned); unset if it never happened in the run.
  std::optional<sim::Time> close_called_at;
  std::optional<sim::Time> close_returned_at;
  // When the last fault healed (zero if there were none).
  sim::Time faults_healed_at;
  // How long after faults_healed_at everything must be resolved.
  sim::Duration liveness_grace = sim::Duration::Seconds(120);
  sim::RunResult run;  // outcome, detail (deadlock report), end time
  // The application's calls of NewAsyncProducer that failed (a fault at
  // start-up: no broker answered for metadata), and the last one's error.
  // It keeps trying, a second apart, as a restarting service would.
  int32_t new_producer_failures = 0;
  std::string new_producer_error;
  bool producer_started = true;
  // Wire mode only.
  std::optional<ClientRecord> client;
  // Wire mode: the application made its produce calls concurrently (the
  // driver's start line says "order":"per_call", e.g. kafkajs with several
  // send() calls in flight), so it asked for no order between calls: only
  // the messages of one call must keep their order (per-partition-order).
  bool order_within_call = false;
  // Whether a broker's OUT_OF_ORDER_SEQUENCE_NUMBER or INVALID_PRODUCER_EPOCH
  // answer is itself a violation (no-broker-sequence-error). True for the
  // Sarama model; false for a client that pipelines idempotent requests and
  // recovers from such an answer by design (librdkafka retries a batch
  // refused because an earlier one in flight failed), where only what the
  // client then does (a fatal error, an order or loss violation) counts.
  bool sequence_error_is_violation = true;
  // retry-pacing ([checks] retry_pacing): Producer.Retry.Backoff and
  // Retry.Max, set only when the scenario opts in (the model's steps carry
  // the attempts; a real client's run has none).
  std::optional<sim::Duration> retry_backoff;
  int32_t retry_max = 0;
  // no-leaked-goroutines ([checks] no_leaked_goroutines): whether it
  // applies, and the goroutines of the producer (the model's, not the
  // application's or the world's) still alive when the run ended; in wire
  // mode, those the driver's goroutine report names (it applies only when
  // the driver reported).
  bool check_leaked_goroutines = false;
  std::vector<sim::LiveGoroutine> producer_goroutines_at_end;
  // Net.ReadTimeout of the model's producer: how long Broker.responseReceiver
  // waits for an answer before it fails the connection. The close-hang
  // signature needs it to tell a request nothing gave up on from one still
  // within its deadline. Unset for a real client.
  std::optional<sim::Duration> read_timeout;
};

}  // namespace checks

#endif  // PRODSIM_CHECKS_RUN_RECORD_H_
