// The job a prodsim client driver runs: the one JSON line prodsim writes on
// its stdin (clients/README.md, "The job").
//
// ParseJob is strict: every key is required, none may be unknown or
// repeated, each has one JSON type, and each number lies in a stated range
// (the limits below), so that a job that parses is one the driver can run
// to the end in bounded time and memory. Whether librdkafka accepts the
// `config` pairs is not checked here; the driver learns it from
// rd_kafka_conf_set.
#ifndef PRODSIM_CLIENTS_LIBRDKAFKA_JOB_H_
#define PRODSIM_CLIENTS_LIBRDKAFKA_JOB_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "wire/json.h"

namespace clients {

// The driver protocol's JSON (wire/json.h), shared with prodsim's reader.
namespace json = ::wire::json;

inline constexpr int64_t kMessagesMax = 10'000'000;
inline constexpr int64_t kValueBytesMax = 16 << 20;
inline constexpr int64_t kIntervalUsMax = 3'600'000'000;  // an hour
inline constexpr int64_t kCloseAtUsMax = 86'400'000'000;  // a day
inline constexpr int64_t kFlushTimeoutMsMax = 3'600'000;  // an hour
inline constexpr size_t kTopicsMax = 1000;
inline constexpr size_t kTopicBytesMax = 249;  // Kafka's longest topic name
inline constexpr size_t kConfigPairsMax = 1000;

struct Job {
  std::string bootstrap;  // bootstrap.servers: "127.0.0.1:PORT,127.0.0.1:PORT2"
  std::vector<std::string> topics;
  int64_t messages = 0;     // ids 1..messages
  int64_t keys = 0;         // key "key-" + (id-1) % keys; 0: null keys
  int64_t burst = 1;        // messages per burst
  int64_t interval_us = 0;  // from one burst's start to the next; 0: all at once
  int64_t value_bytes = 0;
  int64_t close_at_us = -1;  // when to stop producing and close; -1: after the last message
  int64_t flush_timeout_ms = 0;
  // librdkafka properties, applied in order after the driver's defaults.
  std::vector<std::pair<std::string, std::string>> config;

  bool operator==(const Job&) const = default;
};

// Parses the job line (without or with its trailing newline).
absl::StatusOr<Job> ParseJob(std::string_view line);

}  // namespace clients

#endif  // PRODSIM_CLIENTS_LIBRDKAFKA_JOB_H_
