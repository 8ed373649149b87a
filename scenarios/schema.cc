#include "scenarios/schema.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "checks/check_registry.h"
#include "checks/verdict.h"
#include "fault_models/kinds.h"
#include "scenarios/draw_ranges.h"
#include "scenarios/toml_reader.h"

namespace scenarios::schema {
namespace {

constexpr int64_t kMaxCount = 1'000'000;
constexpr int64_t kMaxSteps = 10'000'000'000;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kPositive = 1;  // the least positive duration, in ns

// The value lists. A new profile (e.g. "sarama-main") is one more entry.
constexpr std::string_view kProfiles[] = {"sarama-1.42.1", "sarama-main"};
constexpr StringList kTestDefects = kTestDefectNames;
constexpr std::string_view kPolicies[] = {"fifo", "random", "pct", "go"};
constexpr StringList kDrains = kDrainNames;
// The verdicts (checks/verdict.h) and the checks (checks/check_registry.h),
// each described there once.
constexpr StringList kVerdicts = checks::kVerdictNames;
constexpr StringList kChecks = checks::kCheckNamesSimulatedFirst;
// The cluster model's versions (kafka::ParseKafkaVersion's spellings).
constexpr StringList kKafkaVersions = kafka::kKafkaVersionSpellings;
// The error codes the model names (sim/kafka/types.h ErrorCode, without
// NONE); a test keeps them in sync.
constexpr std::string_view kKafkaErrors[] = {"UNKNOWN_SERVER_ERROR",
                                             "OFFSET_OUT_OF_RANGE",
                                             "CORRUPT_MESSAGE",
                                             "UNKNOWN_TOPIC_OR_PARTITION",
                                             "LEADER_NOT_AVAILABLE",
                                             "NOT_LEADER_OR_FOLLOWER",
                                             "REQUEST_TIMED_OUT",
                                             "BROKER_NOT_AVAILABLE",
                                             "REPLICA_NOT_AVAILABLE",
                                             "MESSAGE_TOO_LARGE",
                                             "NETWORK_EXCEPTION",
                                             "NOT_ENOUGH_REPLICAS",
                                             "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                                             "INVALID_REQUIRED_ACKS",
                                             "UNSUPPORTED_VERSION",
                                             "OUT_OF_ORDER_SEQUENCE_NUMBER",
                                             "DUPLICATE_SEQUENCE_NUMBER",
                                             "INVALID_PRODUCER_EPOCH",
                                             "KAFKA_STORAGE_ERROR",
                                             "UNKNOWN_PRODUCER_ID",
                                             "LISTENER_NOT_FOUND",
                                             "INVALID_RECORD"};
// The buggify sites, in canonical order: sim/net's, then sim/kafka's
// (net::kBuggifySites, kafka::kBuggifySites; a test keeps them in sync).
constexpr std::string_view kBuggifySites[] = {"net.delay", "net.slow_connect",
                                              "broker.slow_request", "broker.slow_metadata",
                                              "broker.slow_fetch"};

struct AcksEntry {
  std::string_view name;
  int32_t value;
};
constexpr AcksEntry kAcks[] = {{"wait_for_all", -1}, {"no_response", 0}, {"wait_for_local", 1}};

// --- The codec's ranges (scenarios/decode.h): a decoded scenario is no
// bigger than its base.

CodecRange MessagesRange(const Scenario& b, const DecodeLimits& l) {
  return {1, std::max(1, std::min(b.workload.messages, l.max_messages)), 0};
}
CodecRange KeysRange(const Scenario& b, const DecodeLimits&) { return {1, b.workload.keys, 0}; }
CodecRange BurstRange(const Scenario& b, const DecodeLimits&) { return {1, b.workload.burst, 0}; }
CodecRange IntervalRange(const Scenario& b, const DecodeLimits&) {
  const int64_t ns = b.workload.interval.nanos();
  return {ns / 64, ns, 1};
}
CodecRange BrokersRange(const Scenario& b, const DecodeLimits&) {
  return {1, b.cluster.brokers, 0};
}
CodecRange PreemptRange(const Scenario&, const DecodeLimits&) {
  return {internal::kCodecPerMille.lo, internal::kCodecPerMille.hi, 1};
}
CodecRange PctDepthRange(const Scenario&, const DecodeLimits&) {
  return {internal::kPctDepth.lo, internal::kPctDepth.hi, 0};
}
CodecRange GoProcsRange(const Scenario&, const DecodeLimits&) {
  return {internal::kCodecGoMaxProcs.lo, internal::kCodecGoMaxProcs.hi, 0};
}

// --- The tables.

constexpr Field kTopFields[] = {
    Of<&Scenario::seed>({.key = "seed",
                         .type = Type::kInt,
                         .lo = 0,
                         .hi = static_cast<int64_t>(kSeedMax),
                         .doc = "the root of every random draw (kSeedMax = 2^63-1)"}),
    Of<&Scenario::description>({.key = "description",
                                .type = Type::kString,
                                .hi = 10000,
                                .doc = "what the scenario shows, in words"}),
};

constexpr Field kScheduleFields[] = {
    Of<&ScheduleSpec::policy>({.key = "policy",
                               .type = Type::kEnum,
                               .values = kPolicies,
                               .doc = "how the scheduler picks the next runnable task",
                               .shrink_text = "random with the defaults, then fifo"}),
    Of<&ScheduleSpec::pct_depth>({.key = "pct_depth",
                                  .type = Type::kInt,
                                  .lo = 1,
                                  .hi = 20,
                                  .doc = "pct: the number of priority change points",
                                  .shrink_text = "default (with policy)",
                                  .codec = &PctDepthRange}),
    Of<&ScheduleSpec::pct_steps>({.key = "pct_steps",
                                  .type = Type::kInt,
                                  .lo = 1,
                                  .hi = kMaxSteps,
                                  .doc = "pct: the expected run length in steps",
                                  .shrink_text = "default (with policy)"}),
    Of<&ScheduleSpec::preempt_per_mille>({.key = "preempt_per_mille",
                                          .type = Type::kInt,
                                          .lo = 0,
                                          .hi = 1000,
                                          .doc = "the chance per mille of a time-slice preemption",
                                          .shrink_text = "default (with policy)",
                                          .codec = &PreemptRange}),
    Of<&ScheduleSpec::gomaxprocs>({.key = "gomaxprocs",
                                   .type = Type::kInt,
                                   .lo = 1,
                                   .hi = 64,
                                   .doc = "go: GOMAXPROCS, the number of Ps (default 2: the cores "
                                          "of the machine the real clients run on in CI)",
                                   .shrink = Shrink::kToDefault,
                                   .codec = &GoProcsRange}),
    Of<&ScheduleSpec::perturb_per_mille>({.key = "perturb_per_mille",
                                          .type = Type::kInt,
                                          .lo = 0,
                                          .hi = 1000,
                                          .doc = "go: the chance per mille of an extra preemption "
                                                 "at a synchronization point, on top of Go's rules",
                                          .shrink = Shrink::kToDefault,
                                          .codec = &PreemptRange}),
    Of<&ScheduleSpec::cpu_sync_op>({.key = "cpu_sync_op",
                                    .type = Type::kDuration,
                                    .hi = 1000000000,
                                    .doc = "go: the CPU time of a synchronization point (a "
                                           "channel operation that does not block)",
                                    .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_wake>({.key = "cpu_wake",
                                 .type = Type::kDuration,
                                 .hi = 1000000000,
                                 .doc = "go: the CPU time of waking a blocked goroutine (goready), "
                                        "on the waker's P",
                                 .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_message>({.key = "cpu_message",
                                    .type = Type::kDuration,
                                    .hi = 1000000000,
                                    .doc = "go: the CPU time of a message through the producer "
                                           "(input to produce set)",
                                    .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_request>({.key = "cpu_request",
                                    .type = Type::kDuration,
                                    .hi = 1000000000,
                                    .doc = "go: the CPU time of a request built, encoded and "
                                           "written, besides its bytes",
                                    .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_request_byte>({.key = "cpu_request_byte",
                                         .type = Type::kDuration,
                                         .hi = 1000000,
                                         .doc = "go: the CPU time per byte of a request (encoding, "
                                                "CRC)",
                                         .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_response>({.key = "cpu_response",
                                     .type = Type::kDuration,
                                     .hi = 1000000000,
                                     .doc = "go: the CPU time of a response read and decoded",
                                     .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::cpu_start>({.key = "cpu_start",
                                  .type = Type::kDuration,
                                  .hi = 1000000000,
                                  .doc = "go: the CPU time of the program's start (exec, the "
                                         "runtime, the config) before its first dial",
                                  .shrink = Shrink::kToDefault}),
    Of<&ScheduleSpec::tape>(
        {.key = "tape",
         .type = Type::kHex,
         .hi = size_t{1} << 20,
         .doc = "random and go policies: the first scheduling decisions, a byte each (random: "
                "switch iff byte/256 < preempt_per_mille/1000, which runnable task: byte mod "
                "count; go: which P runs, the perturbation, the steal order), then the seed "
                "decides",
         .rule = "`policy = \"random\"` or `\"go\"` only; `prodsim decode` writes it (the "
                 "scenario fuzzer's left-over input bytes)",
         .shrink_text = "halves"}),
};

// Producer fields: Sarama config fields in snake_case; left out, Sarama's
// default (the profile's NewConfig).
constexpr Field kProducerFields[] = {
    Of<&ProducerSpec::profile>({.key = "profile",
                                .type = Type::kEnum,
                                .values = kProfiles,
                                .doc = "which model of the producer"}),
    Of<&ProducerSpec::idempotent>({.key = "idempotent",
                                   .type = Type::kBool,
                                   .optional = true,
                                   .doc = "Producer.Idempotent",
                                   .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::net_max_open_requests>({.key = "net_max_open_requests",
                                              .type = Type::kInt,
                                              .optional = true,
                                              .lo = 1,
                                              .hi = 1000,
                                              .doc = "Net.MaxOpenRequests",
                                              .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::net_read_timeout>({.key = "net_read_timeout",
                                         .type = Type::kDuration,
                                         .optional = true,
                                         .lo = kPositive,
                                         .doc = "Net.ReadTimeout",
                                         .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::net_dial_timeout>({.key = "net_dial_timeout",
                                         .type = Type::kDuration,
                                         .optional = true,
                                         .lo = kPositive,
                                         .doc = "Net.DialTimeout",
                                         .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::required_acks>(
        {.key = "required_acks",
         .type = Type::kAcks,
         .optional = true,
         .doc = "Producer.RequiredAcks: -1, 0, 1, or wait_for_all, no_response, wait_for_local",
         .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::timeout>({.key = "timeout",
                                .type = Type::kDuration,
                                .optional = true,
                                .lo = kPositive,
                                .doc = "Producer.Timeout",
                                .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::retry_max>({.key = "retry_max",
                                  .type = Type::kInt,
                                  .optional = true,
                                  .lo = 0,
                                  .hi = kMaxCount,
                                  .doc = "Producer.Retry.Max",
                                  .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::retry_backoff>({.key = "retry_backoff",
                                      .type = Type::kDuration,
                                      .optional = true,
                                      .doc = "Producer.Retry.Backoff",
                                      .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::return_successes>({.key = "return_successes",
                                         .type = Type::kBool,
                                         .optional = true,
                                         .doc = "Producer.Return.Successes",
                                         .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::return_errors>({.key = "return_errors",
                                      .type = Type::kBool,
                                      .optional = true,
                                      .doc = "Producer.Return.Errors",
                                      .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::flush_messages>({.key = "flush_messages",
                                       .type = Type::kInt,
                                       .optional = true,
                                       .lo = 0,
                                       .hi = kMaxCount,
                                       .doc = "Producer.Flush.Messages",
                                       .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::flush_bytes>({.key = "flush_bytes",
                                    .type = Type::kInt,
                                    .optional = true,
                                    .lo = 0,
                                    .hi = kInt32Max,
                                    .unit = "bytes",
                                    .doc = "Producer.Flush.Bytes",
                                    .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::flush_frequency>({.key = "flush_frequency",
                                        .type = Type::kDuration,
                                        .optional = true,
                                        .doc = "Producer.Flush.Frequency",
                                        .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::flush_max_messages>({.key = "flush_max_messages",
                                           .type = Type::kInt,
                                           .optional = true,
                                           .lo = 0,
                                           .hi = kMaxCount,
                                           .doc = "Producer.Flush.MaxMessages",
                                           .rule = "0, or at least `flush_messages`",
                                           .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::max_message_bytes>({.key = "max_message_bytes",
                                          .type = Type::kInt,
                                          .optional = true,
                                          .lo = 1,
                                          .hi = 100'000'000,
                                          .unit = "bytes",
                                          .doc = "Producer.MaxMessageBytes",
                                          .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::channel_buffer_size>({.key = "channel_buffer_size",
                                            .type = Type::kInt,
                                            .optional = true,
                                            .lo = 0,
                                            .hi = kMaxCount,
                                            .doc = "ChannelBufferSize",
                                            .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::metadata_retry_max>({.key = "metadata_retry_max",
                                           .type = Type::kInt,
                                           .optional = true,
                                           .lo = 0,
                                           .hi = kMaxCount,
                                           .doc = "Metadata.Retry.Max",
                                           .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::metadata_retry_backoff>({.key = "metadata_retry_backoff",
                                               .type = Type::kDuration,
                                               .optional = true,
                                               .doc = "Metadata.Retry.Backoff",
                                               .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::metadata_single_flight>(
        {.key = "metadata_single_flight",
         .type = Type::kBool,
         .optional = true,
         .doc = "Metadata.SingleFlight (sarama-main only, e566ac67, v1.46.0: one metadata refresh "
                "at a time, on by default; sarama-1.42.1 has no such setting and refreshes "
                "concurrently)",
         .shrink = Shrink::kToDefault}),
    Of<&ProducerSpec::test_defect>(
        {.key = "test_defect",
         .type = Type::kEnum,
         .optional = true,
         .values = kTestDefects,
         .doc = "not Sarama: a defect switched on in the model on purpose (no-retry-backoff: "
                "retries ignore Retry.Backoff; no-read-timeout: Produce responses are awaited "
                "without Net.ReadTimeout; close-twice: the application calls AsyncClose twice, "
                "and Sarama's second shutdown closes closed channels), to show the checks catch "
                "it"}),
    Of<&ProducerSpec::version>(
        {.key = "version",
         .type = Type::kVersion,
         .optional = true,
         .hi = 32,
         .doc = "Version, the Kafka version Sarama speaks",
         .rule = "MAJOR.MINOR[.PATCH[.BUILD]]; which releases a profile knows, and Sarama's rules "
                 "that tie fields together, are checked by the world builder "
                 "(sarama::Config::Validate)",
         .shrink = Shrink::kToDefault}),
};

constexpr Field kClusterFields[] = {
    Of<&ClusterSpec::brokers>({.key = "brokers",
                               .type = Type::kInt,
                               .lo = 1,
                               .hi = 16,
                               .doc = "brokers 0..brokers-1",
                               .shrink_text = "down to the largest replication_factor",
                               .codec = &BrokersRange}),
    Of<&ClusterSpec::min_insync_replicas>({.key = "min_insync_replicas",
                                           .type = Type::kInt,
                                           .lo = 1,
                                           .hi = 16,
                                           .doc = "min.insync.replicas of every topic",
                                           .rule = "at most every topic's `replication_factor`",
                                           .shrink_text = "1"}),
    Of<&ClusterSpec::kafka_version>({.key = "kafka_version",
                                     .type = Type::kEnum,
                                     .values = kKafkaVersions,
                                     .doc = "the brokers' rules (producer-state, metadata)",
                                     .shrink = Shrink::kToDefault}),
    Of<&ClusterSpec::metadata_delay_max>(
        {.key = "metadata_delay_max",
         .type = Type::kDuration,
         .doc = "the most a broker's metadata lags behind a controller change",
         .shrink = Shrink::kToDefault}),
    Of<&ClusterSpec::replica_fetch_interval>({.key = "replica_fetch_interval",
                                              .type = Type::kDuration,
                                              .lo = kPositive,
                                              .doc = "how often followers fetch",
                                              .shrink = Shrink::kToDefault}),
    Of<&ClusterSpec::replica_lag_time_max>({.key = "replica_lag_time_max",
                                            .type = Type::kDuration,
                                            .lo = kPositive,
                                            .doc = "replica.lag.time.max.ms",
                                            .shrink = Shrink::kToDefault}),
    Of<&ClusterSpec::zookeeper_session_timeout>(
        {.key = "zookeeper_session_timeout",
         .type = Type::kDuration,
         .lo = kPositive,
         .doc = "zookeeper.session.timeout.ms: how long after a crash the controller notices it",
         .shrink = Shrink::kToDefault}),
    Of<&ClusterSpec::request_processing>(
        {.key = "request_processing",
         .type = Type::kDuration,
         .doc = "how long a broker works on each request before it answers",
         .shrink = Shrink::kToDefault}),
};

constexpr Field kTopicFields[] = {
    Of<&TopicSpec::name>({.key = "name",
                          .type = Type::kString,
                          .required = true,
                          .hi = std::numeric_limits<int64_t>::max(),
                          .doc = "a Kafka topic name",
                          .rule = "1..249 of [a-zA-Z0-9._-], unique"}),
    Of<&TopicSpec::partitions>({.key = "partitions",
                                .type = Type::kInt,
                                .lo = 1,
                                .hi = 64,
                                .doc = "the topic's partitions",
                                .shrink_text = "down to 1 (and a topic removed)"}),
    Of<&TopicSpec::replication_factor>({.key = "replication_factor",
                                        .type = Type::kInt,
                                        .lo = 1,
                                        .hi = 16,
                                        .doc = "the topic's replicas",
                                        .rule = "at most `cluster.brokers`",
                                        .shrink_text = "down to min_insync_replicas"}),
};

constexpr Field kLatencyFields[] = {
    Of<&LatencySpec::kind>({.key = "kind",
                            .type = Type::kEnum,
                            .values = kLatencyKindNames,
                            .doc = "constant (min), uniform (min..max) or exponential (min plus a "
                                   "draw of the given mean, capped)",
                            .shrink_text = "the whole latency to its default"}),
    Of<&LatencySpec::min>({.key = "min",
                           .type = Type::kDuration,
                           .doc = "constant: the latency; uniform and exponential: the least"}),
    Of<&LatencySpec::max>({.key = "max",
                           .type = Type::kDuration,
                           .doc = "uniform only: the most",
                           .rule = "uniform only, at least `min`"}),
    Of<&LatencySpec::mean>({.key = "mean",
                            .type = Type::kDuration,
                            .doc = "exponential only: the mean of the draw added to min",
                            .rule = "exponential only"}),
    Of<&LatencySpec::cap>({.key = "cap",
                           .type = Type::kDuration,
                           .doc = "exponential only: no draw exceeds it",
                           .rule = "exponential only, at least `min`"}),
};

constexpr Field kWorkloadFields[] = {
    Of<&WorkloadSpec::messages>({.key = "messages",
                                 .type = Type::kInt,
                                 .lo = 0,
                                 .hi = kMaxCount,
                                 .doc = "how many messages the application writes",
                                 .shrink = Shrink::kDescend,
                                 .floor = 1,
                                 .codec = &MessagesRange}),
    Of<&WorkloadSpec::keys>({.key = "keys",
                             .type = Type::kInt,
                             .lo = 1,
                             .hi = kMaxCount,
                             .doc = "keys key-0.. key-(keys-1), round robin",
                             .shrink = Shrink::kDescend,
                             .floor = 1,
                             .codec = &KeysRange}),
    Of<&WorkloadSpec::topics>(
        {.key = "topics",
         .type = Type::kNameList,
         .hi = 64,
         .doc = "the topics, round robin; [] (the default): every cluster topic",
         .rule = "cluster topics, at most 64 entries",
         .shrink_text = "[] (every topic)"}),
    Of<&WorkloadSpec::interval>({.key = "interval",
                                 .type = Type::kDuration,
                                 .doc = "between bursts",
                                 .shrink = Shrink::kLowerToDefault,
                                 .shrink_text = "default, if above; halves with the timeline",
                                 .codec = &IntervalRange}),
    Of<&WorkloadSpec::burst>({.key = "burst",
                              .type = Type::kInt,
                              .lo = 1,
                              .hi = kMaxCount,
                              .doc = "messages per burst",
                              .shrink = Shrink::kDescend,
                              .floor = 1,
                              .codec = &BurstRange}),
    Of<&WorkloadSpec::value_bytes>({.key = "value_bytes",
                                    .type = Type::kInt,
                                    .lo = 0,
                                    .hi = 10'000'000,
                                    .unit = "bytes",
                                    .doc = "each message's value size",
                                    .shrink = Shrink::kToDefault}),
    Of<&WorkloadSpec::close_at>(
        {.key = "close_at",
         .type = Type::kDuration,
         .optional = true,
         .doc = "AsyncClose at this time; left out: after the last message. The application stops "
                "producing then and calls AsyncClose from its producing task",
         .rule = "at most `limits.time`",
         .shrink_text = "unset (kept with --keep-close-at); halves with the timeline"}),
    Of<&WorkloadSpec::drain>(
        {.key = "drain",
         .type = Type::kEnum,
         .values = kDrains,
         .doc = "how the application reads Successes and Errors, as Sarama's documentation lets "
                "it: prompt (each at once), late (its reader starts `drain_delay` after the "
                "producer), slow (`drain_delay` of work after each read), close (it stops reading "
                "when it closes, and calls Close, which drains the rest itself). The model's "
                "application only; a real client's driver reads promptly",
         .shrink = Shrink::kToDefault}),
    Of<&WorkloadSpec::drain_delay>({.key = "drain_delay",
                                    .type = Type::kDuration,
                                    .doc = "late: when the reader starts; slow: the work per read",
                                    .rule = "at most `limits.time`",
                                    .shrink = Shrink::kToDefault}),
};

// Which fault kinds read a field is in the kind registry
// (fault_models/kinds.h kFaultFieldKeys: the same keys, in this order).
constexpr Field kFaultFields[] = {
    Of<&FaultSpec::kind>({.key = "kind",
                          .type = Type::kEnum,
                          .required = true,
                          .values = fault_models::kFaultKindNames,
                          .doc = "the fault (table below)"}),
    Of<&FaultSpec::at>({.key = "at",
                        .type = Type::kDuration,
                        .required = true,
                        .doc = "when it happens",
                        .rule = "before `limits.time`",
                        .shrink_text = "halves (with the whole timeline too)"}),
    Of<&FaultSpec::duration>(
        {.key = "duration",
         .type = Type::kDuration,
         .optional = true,
         .doc = "how long it lasts. Left out: partition and crash last for the rest of the run, "
                "shrink_isr 5 s, the others 1 s (connect_hang needs it). inject_error: how long "
                "the cause lasts (the NOT_ENOUGH_REPLICAS pair only)",
         .rule = "`at + duration` at most `limits.time`",
         .shrink_text = "halves"}),
    Of<&FaultSpec::broker>({.key = "broker",
                            .type = Type::kInt,
                            .lo = 0,
                            .hi = 15,
                            .doc = "the broker it acts on",
                            .rule = "0..`cluster.brokers`-1"}),
    Of<&FaultSpec::direction>({.key = "direction",
                               .type = Type::kEnum,
                               .values = fault_models::kDirectionKeys,
                               .doc = "which way the network fails"}),
    Of<&FaultSpec::topic>({.key = "topic",
                           .type = Type::kString,
                           .hi = std::numeric_limits<int64_t>::max(),
                           .doc = "with `partition`: one partition; neither: every partition",
                           .rule = "a cluster topic; needs `partition`"}),
    Of<&FaultSpec::partition>({.key = "partition",
                               .type = Type::kInt,
                               .lo = 0,
                               .hi = 63,
                               .doc = "with `topic`: the partition",
                               .rule = "0..partitions-1 of `topic`; needs `topic`"}),
    Of<&FaultSpec::error>(
        {.key = "error",
         .type = Type::kEnum,
         .values = kKafkaErrors,
         .doc = "a Kafka error name",
         .rule =
             "inject_error: NOT_LEADER_OR_FOLLOWER (a replicated partition), "
             "NOT_ENOUGH_REPLICAS and NOT_ENOUGH_REPLICAS_AFTER_APPEND (acks=all, "
             "`min_insync_replicas` >= 2, a replicated partition), REQUEST_TIMED_OUT (acks=all, "
             "a replicated partition); mock.error: any name here"}),
    Of<&FaultSpec::api>({.key = "api",
                         .type = Type::kEnum,
                         .values = fault_models::kFaultApiKeys,
                         .doc = "the requests it acts on",
                         .rule = "inject_error: produce only"}),
    Of<&FaultSpec::count>({.key = "count",
                           .type = Type::kInt,
                           .lo = 1,
                           .hi = kMaxCount,
                           .doc = "how many requests or responses",
                           .shrink_text = "1"}),
    Of<&FaultSpec::extra>(
        {.key = "extra",
         .type = Type::kDuration,
         .lo = kPositive,
         .doc = "the added delay (stall_response: how long each response is held)",
         .shrink_text = "halves"}),
    Of<&FaultSpec::heal>({.key = "heal",
                          .type = Type::kBool,
                          .doc = "false: the fault never ends (partition and crash only)",
                          .shrink_text = "true"}),
};

constexpr Field kBuggifyFields[] = {
    Of<&BuggifySpec::sites>({.key = "sites",
                             .type = Type::kSiteList,
                             .values = kBuggifySites,
                             .doc = "the perturbation points switched on; [] (the default): none",
                             .rule = "site names, each once",
                             .shrink_text = "each site off"}),
};

constexpr Field kChecksFields[] = {
    Of<&ChecksSpec::retry_pacing>(
        {.key = "retry_pacing",
         .type = Type::kBool,
         .doc =
             "check retry-pacing: a message's consecutive attempts at least Retry.Backoff apart, "
             "and none failing with retries exhausted sooner than its backoffs allow"}),
    Of<&ChecksSpec::no_leaked_goroutines>(
        {.key = "no_leaked_goroutines",
         .type = Type::kBool,
         .doc = "check no-leaked-goroutines: once Close has returned, every goroutine the producer "
                "started has returned too (goleak's check); a survivor blocked on a channel, lock "
                "or WaitGroup is named with what it waits on. Over the wire: the survivors the "
                "Sarama driver's goroutine report names (clients/README.md)"}),
};

constexpr Field kLimitsFields[] = {
    Of<&LimitsSpec::steps>(
        {.key = "steps", .type = Type::kInt, .lo = 1, .hi = kMaxSteps, .doc = "scheduler steps"}),
    Of<&LimitsSpec::time>(
        {.key = "time", .type = Type::kDuration, .lo = kPositive, .doc = "simulated time"}),
    Of<&LimitsSpec::liveness_grace>(
        {.key = "liveness_grace",
         .type = Type::kDuration,
         .doc = "after the last fault heals (a count-based fault: when its last use's effect "
                "ends), everything resolves within this"}),
};

constexpr Field kExpectFields[] = {
    Of<&ExpectSpec::verdict>({.key = "verdict",
                              .type = Type::kEnum,
                              .required = true,
                              .values = kVerdicts,
                              .doc = "the verdict this scenario is expected to reach"}),
    Of<&ExpectSpec::check>({.key = "check",
                            .type = Type::kEnum,
                            .values = kChecks,
                            .doc = "the failing check",
                            .rule = "a check name; not with `pass`"}),
    Of<&ExpectSpec::signature>({.key = "signature",
                                .type = Type::kString,
                                .hi = 200,
                                .doc = "the failure's signature: mechanism@function, as `prodsim "
                                       "run` prints it (checks/signature.h)",
                                .rule = "not with `pass`; left out: not checked"}),
    Of<&ExpectSpec::known_on>(
        {.key = "known_on",
         .type = Type::kString,
         .hi = 200,
         .doc = "a real client's finding: the client and its versions it is known on, "
                "CLIENT@RANGES (\"librdkafka@2.0.2..2.15.1,2.16.0\"; \"3.0.0..\" is open "
                "above); explore --known keys the signature by them",
         .rule = "with `signature`; left out: known on the file's profile"}),
};

constexpr Field kProfileExpectFields[] = {
    Of<&ProfileExpectSpec::verdict>({.key = "verdict",
                                     .type = Type::kEnum,
                                     .required = true,
                                     .values = kVerdicts,
                                     .doc = "what the scenario reaches with that profile"}),
    Of<&ProfileExpectSpec::check>({.key = "check",
                                   .type = Type::kEnum,
                                   .values = kChecks,
                                   .doc = "its failing check",
                                   .rule = "not with `pass`"}),
    Of<&ProfileExpectSpec::signature>({.key = "signature",
                                       .type = Type::kString,
                                       .hi = 200,
                                       .doc = "its failure's signature",
                                       .rule = "not with `pass`; left out: not checked"}),
};

// Sections that hold other tables list those keys too, for hints.
const Section kTop{"", "the top level", "", kTopFields};
const Section kSchedule{
    "schedule", "[schedule]",
    "Which runnable task the scheduler picks next: fifo, random, pct or go (Go's "
    "runtime scheduler on gomaxprocs Ps, with CPU costs).",
    kScheduleFields};
const Section kProducer{"producer", "[producer]",
                        "The producer model: a profile, and Sarama config fields by their Sarama\n"
                        "names in snake_case; a field left out keeps Sarama's default.",
                        kProducerFields};
const Section kCluster{"cluster", "[cluster]",
                       "The simulated Kafka cluster: brokers 0..brokers-1 and its topics.",
                       kClusterFields};
const Section kTopic{"cluster.topics[]", "[[cluster.topics]]", "", kTopicFields};
const Section kLatency{"network.latency", "[network.latency]",
                       "Per-message network latency: constant (min), uniform (min..max) or\n"
                       "exponential (min plus an exponential draw of mean, capped at cap).",
                       kLatencyFields};
const Section kWorkload{"workload", "[workload]",
                        "The application: `messages` messages in bursts of `burst`, one burst\n"
                        "per interval, keys key-0.., topics round robin (empty: every topic).",
                        kWorkloadFields};
const Section kFault{"faults[]", "[[faults]]",
                     "Timed faults, applied at `at` and healed after `duration`.", kFaultFields};
const Section kBuggify{"buggify", "[buggify]",
                       "Perturbation points switched on (BUGGIFY): small random delays in the\n"
                       "simulated network and brokers.",
                       kBuggifyFields};
const Section kChecksSection{"checks", "[checks]", "Checks the scenario opts into.", kChecksFields};
const Section kLimits{"limits", "[limits]",
                      "Bounds of the run: reaching one is a verdict, never a hang.", kLimitsFields};
const Section kExpect{"expect", "[expect]", "The verdict this scenario is expected to reach.",
                      kExpectFields};
const Section kProfileExpect{"expect.profiles.\"PROFILE\"", "[expect.profiles.\"PROFILE\"]", "",
                             kProfileExpectFields};

constexpr const Section* kSections[] = {
    &kTop,   &kSchedule, &kProducer,      &kCluster, &kTopic,  &kLatency,      &kWorkload,
    &kFault, &kBuggify,  &kChecksSection, &kLimits,  &kExpect, &kProfileExpect};

}  // namespace

const Section& Top() { return kTop; }
const Section& ScheduleSection() { return kSchedule; }
const Section& ProducerSection() { return kProducer; }
const Section& ClusterSection() { return kCluster; }
const Section& TopicSection() { return kTopic; }
const Section& LatencySection() { return kLatency; }
const Section& WorkloadSection() { return kWorkload; }
const Section& FaultSection() { return kFault; }
const Section& BuggifySection() { return kBuggify; }
const Section& LimitsSection() { return kLimits; }
const Section& ChecksSection() { return kChecksSection; }
const Section& ExpectSection() { return kExpect; }
const Section& ProfileExpectSection() { return kProfileExpect; }
std::span<const Section* const> Sections() { return kSections; }

const Field* Find(const Section& section, std::string_view key) {
  for (const Field& f : section.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::span<const FaultKind> FaultKinds() {
  // The registry's rows with their fields by key (fault_models/kinds.h).
  static const std::vector<FaultKind>* const kKinds = [] {
    auto* kinds = new std::vector<FaultKind>;
    const auto keys = [](fault_models::FaultFieldSet set) {
      std::vector<std::string_view> out;
      for (size_t i = 0; i < fault_models::kFaultFieldCount; ++i) {
        if ((set >> i) & 1) out.push_back(fault_models::kFaultFieldKeys[i]);
      }
      return out;
    };
    for (const fault_models::FaultKindInfo& k : fault_models::kFaultKindInfo) {
      kinds->push_back(FaultKind{k.name, keys(k.reads), keys(k.needs), k.doc});
    }
    return kinds;
  }();
  return *kKinds;
}

const FaultKind& FaultKindOf(fault_models::FaultKind kind) {
  return FaultKinds()[static_cast<size_t>(kind)];
}

const FaultKind* FindFaultKind(std::string_view name) {
  for (const FaultKind& k : FaultKinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::optional<std::string_view> RenamedFaultKindHint(std::string_view name) {
  if (name == "drop_responses") {
    return "renamed mock.drop_response: no real broker skips a response on a live connection; "
           "lose_response is the real event (the connection breaks after the broker processed "
           "the request)";
  }
  return std::nullopt;
}

bool Reads(const FaultKind& kind, std::string_view key) {
  return key == "kind" || key == "at" ||
         std::find(kind.reads.begin(), kind.reads.end(), key) != kind.reads.end();
}

std::span<const LatencyKind> LatencyKinds() {
  static constexpr LatencyKind kKinds[] = {
      // In net::LatencyModel::Kind's order (LatencyKindOf indexes it).
      {kLatencyKindNames[0], false, false, false},
      {kLatencyKindNames[1], true, false, false},
      {kLatencyKindNames[2], false, true, true},
  };
  return kKinds;
}

const LatencyKind& LatencyKindOf(net::LatencyModel::Kind kind) {
  return LatencyKinds()[static_cast<size_t>(kind)];
}

const LatencyKind* FindLatencyKind(std::string_view name) {
  for (const LatencyKind& k : LatencyKinds()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

StringList Profiles() { return kProfiles; }

// The driver families of wire/drivers.cc that take settings of their own
// (kafkajs-fixes runs the kafkajs driver, so it reads [clients.kafkajs]).
constexpr std::string_view kClientNames[] = {"franz-go", "java", "kafkajs", "librdkafka"};
StringList ClientNames() { return kClientNames; }
StringList Policies() { return kPolicies; }
StringList Verdicts() { return kVerdicts; }
StringList CheckNames() { return kChecks; }
StringList KafkaErrorNames() { return kKafkaErrors; }
StringList BuggifySites() { return kBuggifySites; }

std::string_view AcksName(int32_t acks) {
  for (const AcksEntry& a : kAcks) {
    if (a.value == acks) return a.name;
  }
  return {};
}

std::optional<int32_t> AcksFromName(std::string_view name) {
  for (const AcksEntry& a : kAcks) {
    if (a.name == name) return a.value;
  }
  return std::nullopt;
}

std::string FormatValue(const Field& f, const Value& v) {
  using internal::TomlQuote;
  const auto list = [](const std::vector<std::string>& items) {
    std::vector<std::string> quoted;
    for (const std::string& i : items) quoted.push_back(TomlQuote(i));
    return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
  };
  switch (f.type) {
    case Type::kInt: return absl::StrCat(std::get<int64_t>(v));
    case Type::kBool: return std::get<bool>(v) ? "true" : "false";
    case Type::kDuration: return TomlQuote(std::get<Duration>(v).ToString());
    case Type::kString:
    case Type::kEnum:
    case Type::kVersion: return TomlQuote(std::get<std::string>(v));
    case Type::kAcks: {
      const int64_t acks = std::get<int64_t>(v);
      const std::string_view name = AcksName(static_cast<int32_t>(acks));
      return name.empty() ? absl::StrCat(acks) : TomlQuote(name);  // invalid: as it is
    }
    case Type::kHex:
      return absl::StrCat("\"", absl::BytesToHexString(std::get<std::string>(v)), "\"");
    case Type::kNameList:
    case Type::kSiteList: return list(std::get<std::vector<std::string>>(v));
  }
  return {};
}

namespace {

std::string_view TypeText(const Field& f) {
  switch (f.type) {
    case Type::kInt: return "integer";
    case Type::kBool: return "boolean";
    case Type::kDuration: return "duration";
    case Type::kString:
    case Type::kEnum:
    case Type::kVersion: return "string";
    case Type::kAcks: return "string or integer";
    case Type::kHex: return "hex string";
    case Type::kNameList:
    case Type::kSiteList: return "array of strings";
  }
  return "?";
}

std::string Backticked(StringList values) {
  std::vector<std::string> out;
  for (const std::string_view v : values) out.push_back(absl::StrCat("`", internal::Av(v), "`"));
  return absl::StrJoin(out, ", ");
}

// What the reference says a field accepts.
std::string ValidText(const Field& f) {
  std::string out;
  switch (f.type) {
    case Type::kInt: out = absl::StrCat(f.lo, "..", f.hi); break;
    case Type::kDuration:
      out = f.lo == 0   ? ">= 0"
            : f.lo == 1 ? "> 0"
                        : absl::StrCat(">= ", Duration::Nanos(f.lo).ToString());
      break;
    case Type::kString:
      if (f.hi < std::numeric_limits<int64_t>::max())
        out = absl::StrCat("at most ", f.hi, " bytes");
      break;
    case Type::kEnum:
      out = f.values.size() > 12 ? "a name from the list below" : Backticked(f.values);
      break;
    case Type::kSiteList: out = Backticked(f.values); break;
    case Type::kAcks: out = "`wait_for_all` (-1), `no_response` (0), `wait_for_local` (1)"; break;
    case Type::kHex: out = absl::StrCat("two hex digits a byte, at most ", f.hi, " bytes"); break;
    case Type::kBool:
    case Type::kVersion:
    case Type::kNameList: break;
  }
  if (!f.rule.empty()) absl::StrAppend(&out, out.empty() ? "" : "; ", internal::Av(f.rule));
  return out.empty() ? "-" : out;
}

std::string ShrinkText(const Field& f) {
  if (!f.shrink_text.empty()) return std::string(f.shrink_text);
  switch (f.shrink) {
    case Shrink::kNone: return "-";
    case Shrink::kToDefault: return f.optional ? "unset" : "default";
    case Shrink::kLowerToDefault: return "default, if above";
    case Shrink::kDescend: return absl::StrCat("down to ", f.floor);
  }
  return "-";
}

// One table of a section's fields, from its default-built struct.
template <typename T>
void Table(std::string* out, const Section& s, const T& defaults, std::string_view unset) {
  absl::StrAppend(out, "\n#### ", s.path.empty() ? "Top level" : internal::Av(s.header), "\n\n",
                  "| Key | Type | Default | Valid values | Shrinks to | What it is |\n",
                  "| --- | --- | --- | --- | --- | --- |\n");
  for (const Field& f : s.fields) {
    const Value v = f.get(&defaults);
    std::string d = std::holds_alternative<std::monostate>(v)
                        ? std::string(unset)
                        : absl::StrCat("`", FormatValue(f, v), "`");
    if (f.required) d = "required";
    if (&s == &FaultSection()) {
      // A fault field some kinds need has no usable default for them.
      std::vector<std::string> needers;
      for (const FaultKind& k : FaultKinds()) {
        if (absl::c_linear_search(k.needs, f.key)) needers.push_back(std::string(k.name));
      }
      if (!needers.empty()) d = absl::StrCat("required by ", absl::StrJoin(needers, ", "));
    }
    std::string doc(f.doc);
    if (!f.unit.empty()) absl::StrAppend(&doc, " (", internal::Av(f.unit), ")");
    absl::StrAppend(out, "| `", internal::Av(f.key), "` | ", internal::Av(TypeText(f)), " | ", d,
                    " | ", ValidText(f), " | ", ShrinkText(f), " | ", doc, " |\n");
  }
}

}  // namespace

std::string MarkdownReference() {
  std::string out;
  absl::StrAppend(&out, internal::Av(kReferenceBegin),
                  "\n\nGenerated from scenarios/schema.cc by `prodsim schema --markdown`; "
                  "a ctest fails when this part of the file differs from it.\n");
  const Scenario scenario;
  Table(&out, Top(), scenario, "unset");
  Table(&out, ScheduleSection(), scenario.schedule, "unset");
  Table(&out, ProducerSection(), scenario.producer, "Sarama's");
  Table(&out, ClusterSection(), scenario.cluster, "unset");
  Table(&out, TopicSection(), TopicSpec{}, "unset");
  Table(&out, LatencySection(), scenario.network.latency, "unset");
  Table(&out, WorkloadSection(), scenario.workload, "unset (after the last message)");
  Table(&out, FaultSection(), FaultSpec{}, "unset (the kind's default)");
  Table(&out, BuggifySection(), scenario.buggify, "unset");
  Table(&out, ChecksSection(), scenario.checks, "unset");
  Table(&out, LimitsSection(), scenario.limits, "unset");
  Table(&out, ExpectSection(), ExpectSpec{}, "unset");
  Table(&out, ProfileExpectSection(), ProfileExpectSpec{}, "unset");
  absl::StrAppend(
      &out, "\n#### Fault kinds\n\n| Kind | Reads (besides kind, at) | Needs | What it does |\n",
      "| --- | --- | --- | --- |\n");
  for (const FaultKind& k : FaultKinds()) {
    std::vector<std::string> reads, needs;
    for (const std::string_view r : k.reads)
      reads.push_back(absl::StrCat("`", internal::Av(r), "`"));
    for (const std::string_view n : k.needs)
      needs.push_back(absl::StrCat("`", internal::Av(n), "`"));
    absl::StrAppend(&out, "| `", internal::Av(k.name), "` | ", absl::StrJoin(reads, ", "), " | ",
                    needs.empty() ? "-" : absl::StrJoin(needs, ", "), " | ", internal::Av(k.doc),
                    " |\n");
  }
  absl::StrAppend(&out, "\nError names (`faults[].error`): ", Backticked(KafkaErrorNames()),
                  ".\n\nCheck names (`expect.check`): ", Backticked(CheckNames()), ".\n\n",
                  internal::Av(kReferenceEnd), "\n");
  return out;
}

}  // namespace scenarios::schema
