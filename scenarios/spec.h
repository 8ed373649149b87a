// The scenario as a plain value: everything that determines a run.
//
// These are the data types alone. The file format that reads and writes
// them is scenarios/scenario.h, and its description, field by field, is
// scenarios/schema.h. A run is a pure function of a Scenario: the world
// builder reads nothing else (no environment, no clock).
#ifndef PRODSIM_SCENARIOS_SPEC_H_
#define PRODSIM_SCENARIOS_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks/verdict.h"
#include "fault_models/kinds.h"
#include "producer/profile.h"
#include "sim/core/scheduler.h"
#include "sim/core/time.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"
#include "sim/net/network.h"

namespace scenarios {

using sim::Duration;

struct ScheduleSpec {
  sim::Policy policy = sim::Policy::kRandom;  // fifo | random | pct | go (sim::PolicyName)
  int32_t pct_depth = 3;
  int64_t pct_steps = 200000;
  int32_t preempt_per_mille = 500;
  // Go only: GOMAXPROCS (the CI machine's and this machine's 2 cores), the
  // perturbation, and what a step costs in CPU time (sim::CpuCosts). The
  // defaults are Sarama v1.42.1's costs measured on this machine with Go
  // 1.19 (tools/cpu-costs/README.md: the minima at GOMAXPROCS=2, rounded).
  int32_t gomaxprocs = 2;
  int32_t perturb_per_mille = 0;
  Duration cpu_sync_op = Duration::Nanos(25);
  Duration cpu_wake = Duration::Nanos(200);
  Duration cpu_message = Duration::Nanos(500);
  Duration cpu_request = Duration::Micros(25);
  Duration cpu_request_byte = Duration::Nanos(2);
  Duration cpu_response = Duration::Micros(40);
  // The process's start before its first dial: Sarama v1.42.1's driver in
  // wire mode completes its first connection 5.7-7.6 ms (median 6.56) into
  // the world, one 1 ms handshake after it dialed (6 trials).
  Duration cpu_start = Duration::Micros(5500);
  // Random and go policies: the first scheduling decisions, one byte each
  // (sim::SchedulerOptions::tape); written in the file as hex. The
  // scenario fuzzer's bytes end up here (scenarios/decode.h).
  std::string tape;

  bool operator==(const ScheduleSpec&) const = default;
};

// The names a file spells an enum with, in the enum's order: the reader
// checks them, FromName and NameOf convert (schema::ToValue, FromValue).
template <typename E, size_t N>
std::optional<E> FromName(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

// [workload] drain: how the application reads Successes and Errors.
enum class Drain { kPrompt, kLate, kSlow, kClose };
inline constexpr std::string_view kDrainNames[] = {"prompt", "late", "slow", "close"};
inline std::string_view DrainName(Drain d) { return kDrainNames[static_cast<size_t>(d)]; }

// [producer] test_defect: a defect switched on in the model on purpose.
enum class TestDefect { kNoRetryBackoff, kNoReadTimeout, kCloseTwice };
inline constexpr std::string_view kTestDefectNames[] = {"no-retry-backoff", "no-read-timeout",
                                                        "close-twice"};
inline std::string_view TestDefectName(TestDefect d) {
  return kTestDefectNames[static_cast<size_t>(d)];
}

// The producer: a profile and Sarama's config fields, by their Sarama
// names in snake_case (Net.MaxOpenRequests -> net_max_open_requests).
// Unset fields keep Sarama's defaults (NewConfig).
struct ProducerSpec {
  sarama::Profile profile = sarama::Profile::kSarama_1_42_1;  // by sarama::ProfileName
  std::optional<bool> idempotent;
  std::optional<int32_t> net_max_open_requests;
  std::optional<Duration> net_read_timeout;
  std::optional<Duration> net_dial_timeout;
  std::optional<int32_t> required_acks;  // -1 (wait_for_all), 0, 1
  std::optional<Duration> timeout;       // Producer.Timeout
  std::optional<int32_t> retry_max;
  std::optional<Duration> retry_backoff;
  std::optional<bool> return_successes;
  std::optional<bool> return_errors;
  std::optional<int32_t> flush_messages;
  std::optional<int32_t> flush_bytes;
  std::optional<Duration> flush_frequency;
  std::optional<int32_t> flush_max_messages;
  std::optional<int32_t> max_message_bytes;
  std::optional<int32_t> channel_buffer_size;
  std::optional<int32_t> metadata_retry_max;
  std::optional<Duration> metadata_retry_backoff;
  std::optional<bool> metadata_single_flight;  // sarama-main only (e566ac67)
  std::optional<std::string> version;          // "2.6.0"
  // Not a Sarama field: a defect switched on in the model on purpose, so a
  // test can show the checks catch it (sarama::Config::TestDefects).
  std::optional<TestDefect> test_defect;

  bool operator==(const ProducerSpec&) const = default;
};

struct TopicSpec {
  std::string name;
  int32_t partitions = 1;
  int32_t replication_factor = 1;

  bool operator==(const TopicSpec&) const = default;
};

struct ClusterSpec {
  int32_t brokers = 3;
  std::vector<TopicSpec> topics;
  int32_t min_insync_replicas = 1;
  // Read from any of kafka::kKafkaVersionSpellings; written as the
  // version whose rules it selects (kafka::KafkaVersionName).
  kafka::KafkaVersion kafka_version = kafka::KafkaVersion::k2_6;
  Duration metadata_delay_max = Duration::Millis(20);
  Duration replica_fetch_interval = Duration::Millis(5);
  Duration replica_lag_time_max = Duration::Seconds(30);
  // zookeeper.session.timeout.ms: how long the controller takes to notice a
  // crashed broker (kafka::ClusterConfig).
  Duration zookeeper_session_timeout = Duration::Seconds(18);
  // How long a broker works on each request before it answers
  // (kafka::ClusterConfig::request_processing).
  Duration request_processing = Duration::Micros(200);

  bool operator==(const ClusterSpec&) const = default;
};

struct LatencySpec {
  // constant | uniform | exponential (schema::kLatencyKindNames)
  net::LatencyModel::Kind kind = net::LatencyModel::Kind::kConstant;
  Duration min = Duration::Micros(500);
  Duration max = Duration::Micros(500);
  Duration mean = Duration::Micros(500);
  Duration cap = Duration::Seconds(1);

  bool operator==(const LatencySpec&) const = default;
};

struct NetworkSpec {
  LatencySpec latency;

  bool operator==(const NetworkSpec&) const = default;
};

struct WorkloadSpec {
  int32_t messages = 100;
  int32_t keys = 10;                        // keys "key-0".."key-{keys-1}", round robin
  std::vector<std::string> topics;          // round robin; empty: every cluster topic
  Duration interval = Duration::Millis(1);  // between bursts
  int32_t burst = 1;                        // messages per burst
  int32_t value_bytes = 100;
  std::optional<Duration> close_at;  // AsyncClose at this time; unset: after the last message
  // How the application reads Successes and Errors (Sarama's documentation
  // says it must read both, and when): "prompt" (each at once), "late"
  // (its reader starts drain_delay after the producer), "slow" (each read
  // followed by drain_delay of work), "close" (it stops its reader when it
  // closes and calls Close, which drains what is left itself).
  Drain drain = Drain::kPrompt;
  Duration drain_delay;

  bool operator==(const WorkloadSpec&) const = default;
};

// One timed fault (fault_models/ applies and heals it). Which fields each
// kind reads is in the kind registry (fault_models/kinds.h).
struct FaultSpec {
  fault_models::FaultKind kind = fault_models::FaultKind::kReset;  // a file must name it
  Duration at;
  std::optional<Duration> duration;  // unset: the kind's default (or instant)
  int32_t broker = 0;                // the target broker
  fault_models::Direction direction = fault_models::Direction::kBoth;
  std::string topic;  // move_leader, shrink_isr, inject_error (optional)
  int32_t partition = -1;
  kafka::ErrorCode error = kafka::ErrorCode::NONE;  // inject_error, mock.error; NONE: unset
  kafka::ApiKey api = kafka::ApiKey::kProduce;      // fault_models::kFaultApis
  int32_t count = 1;                                // the count-based kinds
  Duration extra;    // delay_processing, latency_spike, stall_response
  bool heal = true;  // heal at the end of duration

  bool operator==(const FaultSpec&) const = default;
};

// Perturbation points (FoundationDB's BUGGIFY) switched on for the run:
// small random delays inside the simulated network and brokers (see
// scenarios/README.md for each site and its rate). Empty: none, and the run
// is exactly what it was before buggify existed.
struct BuggifySpec {
  // Site names from BuggifySiteNames(), each once, in that list's order
  // (ParseScenario sorts them so).
  std::vector<std::string> sites;

  bool operator==(const BuggifySpec&) const = default;
};

// Checks a scenario opts into ([checks]): they hold Sarama to what its
// configuration promises beyond ordering.
struct ChecksSpec {
  // retry-pacing: consecutive attempts of a message at least Retry.Backoff
  // apart, and no message failing with its retries exhausted sooner than
  // its backoffs allow.
  bool retry_pacing = false;
  // no-leaked-goroutines: once Close has returned, every goroutine the
  // producer started has returned too (what goleak checks in Go).
  bool no_leaked_goroutines = false;

  bool operator==(const ChecksSpec&) const = default;
};

struct LimitsSpec {
  int64_t steps = 20000000;
  Duration time = Duration::Seconds(600);
  // After the last fault heals, everything must be resolved within this.
  Duration liveness_grace = Duration::Seconds(120);

  bool operator==(const LimitsSpec&) const = default;
};

// What the same scenario reaches with another producer profile (its
// producer.profile replaced, nothing else): [expect.profiles."NAME"].
struct ProfileExpectSpec {
  std::string profile;
  checks::Verdict verdict = checks::Verdict::kPass;
  std::string check;
  std::string signature;

  bool operator==(const ProfileExpectSpec&) const = default;
};

struct ExpectSpec {
  // The file's own profile's verdict; unset when WithProfile moved it
  // among `profiles`.
  std::optional<checks::Verdict> verdict;
  std::string check;  // the failing check's name, for a failing verdict
  // The failure's signature (checks/signature.h), "mechanism@function" or
  // "unclassified"; empty: not checked.
  std::string signature;
  // A real client's finding: the client and versions it is known on
  // (scenarios/known_on.h), "CLIENT@RANGES"; empty: the file's profile.
  std::string known_on;
  std::vector<ProfileExpectSpec> profiles;  // other profiles, sorted by name

  bool operator==(const ExpectSpec&) const = default;
};

// A real client's own settings, for wire mode: [clients."NAME"], each key
// one of that client's own option names (librdkafka's properties, the
// kafkajs driver's options: clients/README.md), each value as text. They
// are passed to that client's driver after the ones mapped from [producer],
// so they win; another client and the model ignore them (and say so).
struct ClientSpec {
  std::string name;  // a client family: schema::ClientNames()
  std::vector<std::pair<std::string, std::string>> settings;  // sorted by key

  bool operator==(const ClientSpec&) const = default;
};
// Bounds on [clients."NAME"] (a limit on everything).
inline constexpr size_t kClientSettingsMax = 64;
inline constexpr size_t kClientKeyBytesMax = 128;
inline constexpr size_t kClientValueBytesMax = 1024;

// Seeds are TOML integers in a file, so a scenario holds seeds 0..kSeedMax.
inline constexpr uint64_t kSeedMax = INT64_MAX;

struct Scenario {
  uint64_t seed = 1;  // 0..kSeedMax
  std::string description;
  ScheduleSpec schedule;
  ProducerSpec producer;
  ClusterSpec cluster;
  NetworkSpec network;
  WorkloadSpec workload;
  std::vector<FaultSpec> faults;
  BuggifySpec buggify;
  ChecksSpec checks;
  LimitsSpec limits;
  std::vector<ClientSpec> clients;  // sorted by name, each name once
  std::optional<ExpectSpec> expect;

  // The settings for client family `name`, or null.
  const ClientSpec* Client(std::string_view name) const {
    for (const ClientSpec& c : clients) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  bool operator==(const Scenario&) const = default;
};

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_SPEC_H_
