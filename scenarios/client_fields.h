// What explore --client draws for a real client, beyond the producer
// settings the model's generator draws (fault_fields.h ProducerFields):
// each client's own settings (its [clients."NAME"] table), within what that
// client accepts, and the timing that keeps a trial short: the client's
// timeouts in seconds rather than minutes, faults timed against them, a
// ZooKeeper session of 6 s (Kafka's default before 2.5, KIP-537) so a
// crashed broker's partitions move on within a trial, and limits of a
// minute.
//
// One table per client (kLibrdkafkaFields, kKafkajsFields): a setting's
// name, the values drawn, and the chance it is left at the client's
// default. The rules that tie settings together (librdkafka's consistency
// checks, kafkajs's idempotence requirements) are in DrawClient, next to
// the table they constrain.
//
// The draws come from their own PRNG stream ("client"), forked from the
// scenario's seed, so the faults and schedule a seed draws are the model's
// for that seed; only the timeouts they are timed against differ.
#ifndef PRODSIM_SCENARIOS_CLIENT_FIELDS_H_
#define PRODSIM_SCENARIOS_CLIENT_FIELDS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/spec.h"
#include "sim/core/prng.h"
#include "sim/core/time.h"

namespace scenarios {

// One drawable setting: `values` as the client spells them; left at the
// client's default with probability unset_per_mille / 1000.
struct ClientField {
  std::string_view key;
  std::span<const std::string_view> values;
  uint32_t unset_per_mille = 0;
  // The client's first version with the setting ("3.7.0"); "": every one.
  // Not drawn for an older version (an unknown setting is a job error).
  std::string_view since = {};
};

// The table of a client family ("librdkafka", "kafkajs", "java",
// "franz-go"); empty for
// "sarama" (whose settings are the [producer] fields) and for a driver of
// another client (explore --client=CMD), which get only the timing.
std::span<const ClientField> ClientFields(std::string_view family);

// What DrawClient chose that the rest of Generate needs: the read timeout
// the faults are timed against.
struct ClientDraw {
  ClientSpec settings;         // empty for sarama
  sim::Duration read_timeout;  // the client's wait for an answer
  std::optional<int32_t> max_in_flight;
};

// The draw for `family` at `version` ("" or not a number: every field)
// from `prng`.
ClientDraw DrawClient(sim::Prng& prng, std::string_view family, std::string_view version = {});

// Applies `d` to `s` after its producer settings were drawn: the client's
// table, the read timeout as net_read_timeout (drivers map it:
// socket.timeout.ms, requestTimeout, Net.ReadTimeout), the rules between
// settings that depend on the drawn producer settings (idempotence), and
// the wire's timing (ZooKeeper session, limits).
void ApplyClientDraw(const ClientDraw& d, std::string_view family, Scenario* s);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_CLIENT_FIELDS_H_
