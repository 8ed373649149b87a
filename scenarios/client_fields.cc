#include "scenarios/client_fields.h"

#include <algorithm>
#include <iterator>

#include "base/assert.h"

namespace scenarios {
namespace {

using V = std::string_view;

// librdkafka (CONFIGURATION.md; every value valid from 2.0.2 on). Its
// enable.idempotence and acks come from [producer] (wire/drivers.cc
// LibrdkafkaConfig), as does socket.timeout.ms (the read timeout).
constexpr V kInFlight[] = {"1", "2", "5"};
constexpr V kLinger[] = {"0", "5", "20"};
constexpr V kBatch[] = {"1", "10", "100", "10000"};
constexpr V kRdRetries[] = {"0", "1", "3", "100", "2147483647"};
constexpr V kRdBackoff[] = {"10", "100", "500"};
constexpr V kAckTimeout[] = {"500", "1000", "3000", "5000"};
constexpr V kMessageTimeout[] = {"2000", "5000", "10000"};
constexpr V kSetupTimeout[] = {"1000", "3000"};
constexpr ClientField kLibrdkafkaFields[] = {
    {"max.in.flight.requests.per.connection", kInFlight, 200},
    {"linger.ms", kLinger, 300},
    {"batch.num.messages", kBatch, 300},
    {"retries", kRdRetries, 300},
    {"retry.backoff.ms", kRdBackoff, 300},
    {"request.timeout.ms", kAckTimeout, 0},
    // Short, so that a trial ends: librdkafka's default is 300 s.
    {"message.timeout.ms", kMessageTimeout, 0},
    {"socket.connection.setup.timeout.ms", kSetupTimeout, 500},
};

// The kafkajs driver (clients/kafkajs/README.md): the application's
// concurrency and kafkajs's own options. idempotent and acks come from
// [producer], requestTimeout from the read timeout.
constexpr V kConcurrent[] = {"1", "2", "4", "8"};
constexpr V kPerSend[] = {"1", "2", "5"};
constexpr V kJsInFlight[] = {"1", "2", "5"};
constexpr V kJsRetries[] = {"0", "1", "3", "5", "10"};
constexpr V kJsInitial[] = {"50", "100", "300"};
constexpr V kJsMaxRetry[] = {"1000", "3000"};
constexpr V kJsConnect[] = {"500", "1000", "3000"};
constexpr ClientField kKafkajsFields[] = {
    {"concurrent_sends", kConcurrent, 250},      {"messages_per_send", kPerSend, 300},
    {"maxInFlightRequests", kJsInFlight, 300},   {"retry.retries", kJsRetries, 300},
    {"retry.initialRetryTime", kJsInitial, 300}, {"retry.maxRetryTime", kJsMaxRetry, 300},
    {"connectionTimeout", kJsConnect, 300},
};

// The read timeouts drawn (librdkafka socket.timeout.ms, kafkajs
// requestTimeout, Sarama Net.ReadTimeout): seconds, where the defaults are
// 30 to 60 s, so that a wedged request is noticed within a trial.
constexpr sim::Duration kReadTimeouts[] = {sim::Duration::Millis(500), sim::Duration::Seconds(1),
                                           sim::Duration::Seconds(3), sim::Duration::Seconds(5)};

// Kafka's default before 2.5 (KIP-537 raised it to 18 s): a crashed
// leader's partitions move within a trial.
constexpr sim::Duration kWireZkSession = sim::Duration::Seconds(6);
constexpr sim::Duration kWireGrace = sim::Duration::Seconds(15);
constexpr sim::Duration kWireTime = sim::Duration::Seconds(60);

void Set(ClientSpec& c, std::string_view key, std::string_view value) {
  for (auto& [k, v] : c.settings) {
    if (k == key) {
      v = std::string(value);
      return;
    }
  }
}

const std::string* Get(const ClientSpec& c, std::string_view key) {
  for (const auto& [k, v] : c.settings) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

std::span<const ClientField> ClientFields(std::string_view family) {
  if (family == "librdkafka") return kLibrdkafkaFields;
  if (family == "kafkajs") return kKafkajsFields;
  return {};
}

ClientDraw DrawClient(sim::Prng& prng, std::string_view family) {
  ClientDraw d;
  d.read_timeout = kReadTimeouts[prng.Below(std::size(kReadTimeouts))];
  if (ClientFields(family).empty()) return d;
  d.settings.name = std::string(family);
  for (const ClientField& f : ClientFields(family)) {
    PRODSIM_ASSERT(!f.values.empty());
    if (f.unset_per_mille > 0 && prng.Chance(f.unset_per_mille, 1000)) continue;
    d.settings.settings.emplace_back(std::string(f.key),
                                     std::string(f.values[prng.Below(f.values.size())]));
  }
  std::sort(d.settings.settings.begin(), d.settings.settings.end());
  return d;
}

void ApplyClientDraw(const ClientDraw& d, std::string_view family, Scenario* s) {
  s->producer.net_read_timeout = d.read_timeout;
  const bool idempotent = s->producer.idempotent.value_or(false);
  ClientSpec c = d.settings;
  // librdkafka refuses retries=0 with idempotence (rd_kafka_new); kafkajs
  // refuses an idempotent producer without retries (producer/index.js).
  if (idempotent && family == "librdkafka") {
    if (const std::string* r = Get(c, "retries"); r != nullptr && *r == "0") Set(c, "retries", "1");
  }
  if (idempotent && family == "kafkajs") {
    if (const std::string* r = Get(c, "retry.retries"); r != nullptr && *r == "0") {
      Set(c, "retry.retries", "1");
    }
  }
  s->clients.erase(std::remove_if(s->clients.begin(), s->clients.end(),
                                  [&](const ClientSpec& x) { return x.name == c.name; }),
                   s->clients.end());
  if (!c.name.empty()) {
    s->clients.push_back(std::move(c));
    std::sort(s->clients.begin(), s->clients.end(),
              [](const ClientSpec& a, const ClientSpec& b) { return a.name < b.name; });
  }
  s->cluster.zookeeper_session_timeout =
      std::min(s->cluster.zookeeper_session_timeout, kWireZkSession);
  s->limits.liveness_grace = std::min(s->limits.liveness_grace, kWireGrace);
  s->limits.time = std::min(s->limits.time, kWireTime);
}

}  // namespace scenarios
