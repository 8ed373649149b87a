// RunRecord: what the checks read after a run, and nothing else (docs/DESIGN.md:
// checks read a recorded history, never live objects).
#ifndef PRODSIM_CHECKS_RUN_RECORD_H_
#define PRODSIM_CHECKS_RUN_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
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
};

}  // namespace checks

#endif  // PRODSIM_CHECKS_RUN_RECORD_H_
