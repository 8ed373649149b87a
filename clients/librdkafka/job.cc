#include "clients/librdkafka/job.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "base/status_macros.h"
#include "wire/json.h"

namespace clients {
namespace {

using Kind = json::Value::Kind;

constexpr size_t kBootstrapBytesMax = 4096;

absl::Status FieldError(std::string_view key, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("job key \"", json::Av(key), "\": ", json::Av(what)));
}

absl::Status WantKind(std::string_view key, const json::Value& value, Kind kind) {
  if (value.kind == kind) return absl::OkStatus();
  return FieldError(key, absl::StrCat("want ", json::Av(json::KindName(kind)), ", got ",
                                      json::Av(json::KindName(value.kind))));
}

absl::Status ReadBootstrap(const json::Value& value, Job* job) {
  RETURN_IF_ERROR(WantKind("bootstrap", value, Kind::kString));
  if (value.string.empty()) return FieldError("bootstrap", "empty");
  if (value.string.size() > kBootstrapBytesMax) return FieldError("bootstrap", "too long");
  job->bootstrap = value.string;
  return absl::OkStatus();
}

absl::Status ReadTopics(const json::Value& value, Job* job) {
  RETURN_IF_ERROR(WantKind("topics", value, Kind::kArray));
  if (value.items.empty()) return FieldError("topics", "empty");
  if (value.items.size() > kTopicsMax) {
    return FieldError("topics", absl::StrCat("more than ", kTopicsMax, " topics"));
  }
  for (const json::Value& topic : value.items) {
    RETURN_IF_ERROR(WantKind("topics", topic, Kind::kString));
    if (topic.string.empty()) return FieldError("topics", "an empty topic name");
    if (topic.string.size() > kTopicBytesMax) {
      return FieldError("topics", absl::StrCat("a topic name longer than ", kTopicBytesMax));
    }
    job->topics.push_back(topic.string);
  }
  return absl::OkStatus();
}

// [["name","value"], ...]: each pair exactly two strings, the name non-empty.
absl::Status ReadConfig(const json::Value& value, Job* job) {
  RETURN_IF_ERROR(WantKind("config", value, Kind::kArray));
  if (value.items.size() > kConfigPairsMax) {
    return FieldError("config", absl::StrCat("more than ", kConfigPairsMax, " pairs"));
  }
  for (const json::Value& pair : value.items) {
    RETURN_IF_ERROR(WantKind("config", pair, Kind::kArray));
    if (pair.items.size() != 2) return FieldError("config", "a pair of other than 2 elements");
    RETURN_IF_ERROR(WantKind("config", pair.items[0], Kind::kString));
    RETURN_IF_ERROR(WantKind("config", pair.items[1], Kind::kString));
    if (pair.items[0].string.empty()) return FieldError("config", "an empty property name");
    job->config.emplace_back(pair.items[0].string, pair.items[1].string);
  }
  return absl::OkStatus();
}

// One entry per job key: an integer member with its range, or a reader.
struct Field {
  std::string_view key;
  int64_t Job::*integer = nullptr;
  int64_t lo = 0;
  int64_t hi = 0;
  absl::Status (*read)(const json::Value&, Job*) = nullptr;
};

constexpr Field kFields[] = {
    {.key = "bootstrap", .read = &ReadBootstrap},
    {.key = "topics", .read = &ReadTopics},
    {.key = "messages", .integer = &Job::messages, .lo = 0, .hi = kMessagesMax},
    {.key = "keys", .integer = &Job::keys, .lo = 0, .hi = kMessagesMax},
    {.key = "burst", .integer = &Job::burst, .lo = 1, .hi = kMessagesMax},
    {.key = "interval_us", .integer = &Job::interval_us, .lo = 0, .hi = kIntervalUsMax},
    {.key = "value_bytes", .integer = &Job::value_bytes, .lo = 0, .hi = kValueBytesMax},
    {.key = "close_at_us", .integer = &Job::close_at_us, .lo = -1, .hi = kCloseAtUsMax},
    {.key = "flush_timeout_ms",
     .integer = &Job::flush_timeout_ms,
     .lo = 0,
     .hi = kFlushTimeoutMsMax},
    {.key = "config", .read = &ReadConfig},
};
constexpr size_t kFieldCount = std::size(kFields);

absl::Status ReadField(const Field& field, const json::Value& value, Job* job) {
  if (field.read != nullptr) return field.read(value, job);
  PRODSIM_ASSERT(field.integer != nullptr);
  RETURN_IF_ERROR(WantKind(field.key, value, Kind::kInt));
  if (value.integer < field.lo || value.integer > field.hi) {
    return FieldError(field.key, absl::StrCat("want an integer in [", field.lo, ", ", field.hi,
                                              "], got ", value.integer));
  }
  job->*field.integer = value.integer;
  return absl::OkStatus();
}

const Field* FindField(std::string_view key) {
  for (const Field& field : kFields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<Job> ParseJob(std::string_view line) {
  ASSIGN_OR_RETURN(json::Value root, json::Parse(line));
  if (root.kind != Kind::kObject) {
    return absl::InvalidArgumentError(
        absl::StrCat("job: want an object, got ", json::Av(json::KindName(root.kind))));
  }
  PRODSIM_ASSERT(root.keys.size() == root.items.size());
  Job job;
  std::array<bool, kFieldCount> seen{};
  for (size_t i = 0; i < root.keys.size(); ++i) {
    const Field* field = FindField(root.keys[i]);
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("job: unknown key \"", root.keys[i], "\""));
    }
    // json::Parse has already refused a repeated key.
    seen[static_cast<size_t>(field - kFields)] = true;
    RETURN_IF_ERROR(ReadField(*field, root.items[i], &job));
  }
  for (size_t f = 0; f < kFieldCount; ++f) {
    if (!seen[f]) {
      return absl::InvalidArgumentError(
          absl::StrCat("job: missing key \"", json::Av(kFields[f].key), "\""));
    }
  }
  return job;
}

}  // namespace clients
