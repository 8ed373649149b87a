// The client drivers prodsim knows by name, and what each needs from a
// scenario: the program, the scenario's producer settings in the client's
// own configuration names (clients/README.md has the table), the client's
// defaults for the settings the checks read, and the job line.
//
// A driver is a program that speaks the driver protocol (clients/README.md):
// one job line on stdin, one JSON object per line on stdout. `--client=CMD`
// runs any such program; it gets the scenario's settings under their
// scenario names ("idempotent", "net_max_open_requests", ...).
#ifndef PRODSIM_WIRE_DRIVERS_H_
#define PRODSIM_WIRE_DRIVERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/spec.h"
#include "sim/core/time.h"

namespace wire {

using ConfigList = std::vector<std::pair<std::string, std::string>>;

struct ClientConfig {
  ConfigList config;
  // Settings the scenario sets that the client has no equivalent for: not
  // passed, and said in the output (never dropped in silence).
  std::vector<std::string> ignored;
};

struct Driver {
  std::string name;  // "librdkafka", or the command for --client=CMD
  std::vector<std::string> argv;
  // The scenario's producer settings for this client.
  ClientConfig (*config)(const scenarios::ProducerSpec&) = nullptr;
  // The client's defaults, for the checks (RunRecord): what it does when
  // the scenario leaves the setting unset.
  bool idempotent_default = false;
  int16_t acks_default = -1;
  int32_t max_in_flight_default = 5;
  // RunRecord::sequence_error_is_violation.
  bool sequence_error_is_violation = true;
};

// `client` is a known name ("librdkafka") or a command (a path; split on
// spaces). An error: a known driver whose program was not built.
absl::StatusOr<Driver> FindDriver(std::string_view client);
std::vector<std::string> DriverNames();

// The job line (one JSON object, no newline) for a run of `workload` over
// `topics` against `bootstrap`. `flush_timeout` bounds the client's flush
// at close.
std::string JobLine(const scenarios::WorkloadSpec& workload, const std::vector<std::string>& topics,
                    const std::string& bootstrap, sim::Duration flush_timeout,
                    const ConfigList& config);

// librdkafka's configuration for the scenario's settings (exposed for the
// driver table test).
ClientConfig LibrdkafkaConfig(const scenarios::ProducerSpec& p);

}  // namespace wire

#endif  // PRODSIM_WIRE_DRIVERS_H_
