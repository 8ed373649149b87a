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
  std::string name;  // "librdkafka", "kafkajs@2.2.4", or the command for --client=CMD
  // The client family whose [clients."NAME"] settings the driver takes
  // ("librdkafka", "kafkajs"), or "" (a --client=CMD driver: none).
  std::string family;
  // The client's version as run: the @VERSION given, else the one the
  // program is built on ("2.0.2" for librdkafka). "" for --client=CMD.
  std::string version;
  std::vector<std::string> argv;
  // Set in the driver's environment: the library or module of a version
  // (LD_LIBRARY_PATH for librdkafka@V, PRODSIM_KAFKAJS_MODULE for kafkajs).
  std::vector<std::pair<std::string, std::string>> env;
  // The scenario's producer settings for this client.
  ClientConfig (*config)(const scenarios::ProducerSpec&) = nullptr;
  // The client's defaults, for the checks (RunRecord): what it does when
  // the scenario leaves the setting unset.
  bool idempotent_default = false;
  int16_t acks_default = -1;
  int32_t max_in_flight_default = 5;
  // RunRecord::sequence_error_is_violation.
  bool sequence_error_is_violation = true;
  // The driver has simulated time (clients/README.md): explore and shrink
  // run it so unless told --clock=wall. A --client=CMD driver: unknown, so
  // false (run --client still tries it: run is the simulated command).
  bool simulated_time = false;
  // Its replays in simulated time are exact (one scenario, one digest:
  // kafkajs), not near (Sarama: the Go runtime's own randomness stays;
  // docs/real-clients.md). shrink needs one run per candidate only if exact.
  bool exact_replay = false;
};

// `client` is a known name ("librdkafka"), a known name and a version
// ("librdkafka@2.15.1", "kafkajs@2.2.4", "sarama@1.61.1", "sarama@main"), or
// a command (a path; split on spaces). A version other than the one built in
// is looked up in the versions directory (VersionsDir()): librdkafka-V/lib
// (clients/librdkafka/build-version.sh), kafkajs-V/node_modules/kafkajs
// (kafkajs_fixes-V for kafkajs-fixes), sarama-V/prodsim-sarama. A Sarama
// version is first looked for beside the built-in drivers (CMake builds the
// pinned releases), and one found nowhere is built into the versions
// directory now by clients/sarama/build.sh: a release from the module proxy,
// main from the checkout $PRODSIM_SARAMA_MAIN names. An error: a known
// driver whose program or version was not built and cannot be, saying how
// to build it.
absl::StatusOr<Driver> FindDriver(std::string_view client);
std::vector<std::string> DriverNames();
// $PRODSIM_VERSIONS_DIR, else $XDG_CACHE_HOME/prodsim/versions, else
// ~/.cache/prodsim/versions.
std::string VersionsDir();
// What the client runs with, for the checks (RunRecord): the scenario's
// [producer] fields, else the client's defaults, and over both what the
// scenario's [clients."family"] sets of them in the client's own names
// (librdkafka's enable.idempotence, acks, max.in.flight...; kafkajs's
// idempotent, acks, maxInFlightRequests), since those are passed last and
// win.
struct Effective {
  bool idempotent = false;
  int16_t acks = -1;
  int32_t max_in_flight = 5;
};
Effective EffectiveSettings(const Driver& driver, const scenarios::Scenario& s);

// The config pairs of the scenario's [clients."family"] for `driver`, after
// `mapped`; and the families it sets that this driver does not take.
ConfigList WithClientSettings(const Driver& driver, const scenarios::Scenario& s, ConfigList mapped,
                              std::vector<std::string>* not_taken);

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
