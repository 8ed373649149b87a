#include "scenarios/client_fields.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "scenarios/known_on.h"

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

// The Java producer (kafka-clients; clients/java/README.md): its own
// properties, valid from 2.2 on unless `since` says. enable.idempotence and
// acks come from [producer]; request.timeout.ms is the read timeout drawn
// below (ApplyClientDraw), the client's wait for an answer. delivery.timeout.ms
// is at least request.timeout.ms + linger.ms (KafkaProducer refuses less):
// 6 s against at most 5 s + 20 ms; Kafka's default, 120 s, outlasts a trial.
// `threads`: the application's sending threads (the driver's own setting).
constexpr V kJavaRetries[] = {"0", "1", "3", "2147483647"};
constexpr V kJavaBatch[] = {"100", "1000", "16384"};
constexpr V kJavaDelivery[] = {"6000", "10000", "30000"};
constexpr V kJavaBackoffMax[] = {"100", "1000"};
constexpr V kJavaMetadataAge[] = {"1000", "5000", "300000"};
constexpr V kJavaThreads[] = {"1", "2", "4"};
constexpr ClientField kJavaFields[] = {
    {"max.in.flight.requests.per.connection", kInFlight, 200},
    {"retries", kJavaRetries, 300},
    {"linger.ms", kLinger, 300},
    {"batch.size", kJavaBatch, 300},
    {"retry.backoff.ms", kRdBackoff, 300},
    {"retry.backoff.max.ms", kJavaBackoffMax, 500, "3.7.0"},
    {"delivery.timeout.ms", kJavaDelivery, 0},
    {"metadata.max.age.ms", kJavaMetadataAge, 300},
    {"threads", kJavaThreads, 300},
};

// franz-go's kgo (clients/franz-go/README.md): its options by their
// function names. DisableIdempotentWrite and RequiredAcks come from
// [producer]; RequestTimeoutOverhead is the read timeout drawn below, so
// kgo gives up on an unanswered produce request after at most 5 s + 5 s.
constexpr V kKgoRetries[] = {"1", "3", "100"};
constexpr V kKgoDelivery[] = {"5000ms", "10000ms", "30000ms"};
constexpr V kKgoProduceTimeout[] = {"1000ms", "3000ms", "5000ms"};
constexpr V kKgoLinger[] = {"0ms", "5ms", "20ms"};
constexpr V kKgoBuffered[] = {"10", "100", "10000"};
constexpr V kKgoBackoff[] = {"10ms", "100ms", "500ms"};
constexpr V kKgoTrue[] = {"true"};
constexpr V kKgoProducers[] = {"1", "2", "4"};
constexpr ClientField kFranzGoFields[] = {
    // Not in 1.0.0; kgo refuses it with idempotence (ApplyClientDraw).
    {"MaxProduceRequestsInflightPerBroker", kInFlight, 200, "1.7.0"},
    {"RecordRetries", kKgoRetries, 300},
    {"RecordDeliveryTimeout", kKgoDelivery, 300},
    // Always drawn: kgo's wait for a produce answer is this plus
    // RequestTimeoutOverhead, and its default (10 s) would outlast the
    // liveness grace after a blackhole (explore's first franz-go hour).
    {"ProduceRequestTimeout", kKgoProduceTimeout, 0},
    {"ProducerLinger", kKgoLinger, 300},
    {"MaxBufferedRecords", kKgoBuffered, 300},
    {"RetryBackoff", kKgoBackoff, 300},
    {"AllowIdempotentProduceCancellation", kKgoTrue, 700, "1.21.2"},
    {"concurrent_producers", kKgoProducers, 300},
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

// Sets `key`, added in order if it is not there.
void Put(ClientSpec& c, std::string_view key, std::string_view value) {
  for (auto& [k, v] : c.settings) {
    if (k == key) {
      v = std::string(value);
      return;
    }
  }
  c.settings.emplace_back(std::string(key), std::string(value));
  std::sort(c.settings.begin(), c.settings.end());
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
  if (family == "java") return kJavaFields;
  if (family == "franz-go") return kFranzGoFields;
  return {};
}

ClientDraw DrawClient(sim::Prng& prng, std::string_view family, std::string_view version) {
  ClientDraw d;
  d.read_timeout = kReadTimeouts[prng.Below(std::size(kReadTimeouts))];
  if (ClientFields(family).empty()) return d;
  d.settings.name = std::string(family);
  for (const ClientField& f : ClientFields(family)) {
    PRODSIM_ASSERT(!f.values.empty());
    if (!f.since.empty() && !version.empty() && CompareVersions(version, f.since) < 0) continue;
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
  // KafkaProducer refuses retries=0 with idempotence (ConfigException).
  if (idempotent && family == "java") {
    if (const std::string* r = Get(c, "retries"); r != nullptr && *r == "0") Set(c, "retries", "1");
  }
  // The Java client's and kgo's wait for an answer is the read timeout the
  // faults are timed against.
  if (family == "java") Put(c, "request.timeout.ms", absl::StrCat(d.read_timeout.millis()));
  if (family == "franz-go") {
    // At least 1 s: kgo before 1.x's later releases refuses less
    // ("request timeout min overhead 500ms is less than allowed 1s", 1.0.0).
    Put(c, "RequestTimeoutOverhead",
        absl::StrCat(std::max<int64_t>(d.read_timeout.millis(), 1000), "ms"));
    // kgo takes more than one request in flight only without idempotence
    // (config.go's validation); with it, it sends up to 5 on its own.
    if (idempotent) {
      std::erase_if(c.settings, [](const auto& kv) {
        return kv.first == "MaxProduceRequestsInflightPerBroker";
      });
    }
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
