// The scenario format, described once: every field of every section with
// its TOML key, type, bounds, whether it may be left out, its one-line
// documentation, how prodsim shrink simplifies it, and, where the fuzzer's
// byte codec carries it, the range and width the codec gives it.
//
// Everything that reads or writes the format is driven by this description:
// the parser and the printer (scenarios/scenario.cc), the shrinker's
// per-field simplifications (scenarios/shrink.cc), the byte codec's ranges
// (scenarios/decode.cc), and the field reference of scenarios/README.md,
// which `prodsim schema --markdown` generates and a ctest compares with the
// committed file. Adding a field is one entry here and the code that uses
// the value (the world builder, a cross-field check).
//
// What stays hand-written, next to the description: the checks that relate
// two fields or sections (a fault's broker against the cluster's size, the
// realism of an injected error), and the order of the codec's walk.
//
// Invariants (schema_test checks them): every key of a section is unique;
// every field's getter and setter name the same member; a default-built
// section prints as the defaults the reference shows.
#ifndef PRODSIM_SCENARIOS_SCHEMA_H_
#define PRODSIM_SCENARIOS_SCHEMA_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/assert.h"
#include "fault_models/kinds.h"
#include "producer/profile.h"
#include "scenarios/spec.h"
#include "sim/core/scheduler.h"
#include "sim/core/time.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"
#include "sim/net/network.h"

namespace scenarios::schema {

using StringList = std::span<const std::string_view>;

// A field's value as the reader and the printer move it: unset (an optional
// field left out), an integer, a boolean, a duration, a string, or a list of
// strings.
using Value =
    std::variant<std::monostate, int64_t, bool, Duration, std::string, std::vector<std::string>>;

enum class Type {
  kInt,
  kBool,
  kDuration,
  kString,
  kEnum,      // one of `values`
  kAcks,      // Producer.RequiredAcks: -1, 0, 1, or its Sarama name
  kVersion,   // a Kafka version's spelling: MAJOR.MINOR[.PATCH[.BUILD]]
  kHex,       // bytes, written as hex (schedule.tape)
  kNameList,  // a list of names: the cluster's topics (workload.topics)
  kSiteList,  // buggify.sites: each of `values` at most once, kept in their order
};

// How prodsim shrink simplifies a field.
enum class Shrink {
  kNone,            // not by itself (`shrink_text` says what does)
  kToDefault,       // try the field's default (for an optional field: unset)
  kLowerToDefault,  // try the default, if the value is above it
  kDescend,         // lower it toward `floor`, halving the step
};

// The codec's range for a field, from the base scenario and the decode
// options (scenarios/decode.h): [lo, hi] over `width` bytes (0: the fewest
// that hold the range).
struct CodecRange {
  int64_t lo = 0;
  int64_t hi = 0;
  int width = 0;
};
struct DecodeLimits {
  int32_t max_messages = 64;
};
using CodecFn = CodecRange (*)(const Scenario& base, const DecodeLimits& limits);

struct Field {
  std::string_view key = {};
  Type type = Type::kInt;
  // The member is a std::optional: left out, the field is unset (a
  // producer field then keeps Sarama's default) and is not printed.
  bool optional = false;
  // The file must give it (the reader reports it missing, with a hint).
  bool required = false;
  // kInt: the accepted range. kDuration: `lo` is the least nanoseconds.
  // kString, kHex: `hi` is the most bytes.
  int64_t lo = 0;
  int64_t hi = 0;
  StringList values = {};      // kEnum, kSiteList
  std::string_view unit = {};  // "bytes", ... for the reference ("" if none)
  std::string_view doc = {};   // one line for the reference
  // What "valid values" says beyond the type and bounds (a cross-field rule).
  std::string_view rule = {};
  Shrink shrink = Shrink::kNone;
  int64_t floor = 0;  // kDescend
  // The reference's "shrinks to" where a whole-scenario step does it
  // (the timeline compressed, the schedule toward fifo).
  std::string_view shrink_text = {};
  CodecFn codec = nullptr;  // set: the byte codec carries the field
  // The member of the section struct the field is.
  Value (*get)(const void* section) = nullptr;
  void (*set)(void* section, Value value) = nullptr;
};

struct Section {
  std::string_view path;     // "schedule", "cluster.topics[]", "" for the top level
  std::string_view header;   // "[schedule]", "[[cluster.topics]]", "the top level"
  std::string_view comment;  // above the section in the canonical form ("" if none)
  std::span<const Field> fields;
};

// The sections, in canonical order.
const Section& Top();
const Section& ScheduleSection();
const Section& ProducerSection();
const Section& ClusterSection();
const Section& TopicSection();
const Section& LatencySection();
const Section& WorkloadSection();
const Section& FaultSection();
const Section& BuggifySection();
const Section& LimitsSection();
const Section& ChecksSection();
const Section& ExpectSection();
const Section& ProfileExpectSection();
std::span<const Section* const> Sections();

// The field called `key` in `section`, or null.
const Field* Find(const Section& section, std::string_view key);

// --- Fault kinds: which fault fields each kind reads, and which it needs,
// by key: a view of fault_models/kinds.h, the one place kinds are described.

struct FaultKind {
  std::string_view name;
  std::vector<std::string_view> reads;  // besides kind and at
  std::vector<std::string_view> needs;  // of those, the ones without a usable default
  std::string_view doc;
};
// In canonical order; the mock kinds last.
std::span<const FaultKind> FaultKinds();
const FaultKind* FindFaultKind(std::string_view name);
// The view of registry kind `kind`.
const FaultKind& FaultKindOf(fault_models::FaultKind kind);
// Kinds that were renamed: a file naming one gets this hint.
std::optional<std::string_view> RenamedFaultKindHint(std::string_view name);
bool Reads(const FaultKind& kind, std::string_view key);

// --- Latency kinds: which of max, mean and cap each reads (min always).

struct LatencyKind {
  std::string_view name;
  bool max, mean, cap;
};
std::span<const LatencyKind> LatencyKinds();
const LatencyKind* FindLatencyKind(std::string_view name);
const LatencyKind& LatencyKindOf(net::LatencyModel::Kind kind);

// --- Value lists the format shares with its users.

StringList Profiles();
// The real clients a scenario may give settings of its own ([clients."NAME"]).
StringList ClientNames();
StringList Policies();
StringList Verdicts();
StringList CheckNames();
StringList KafkaErrorNames();
StringList BuggifySites();
// Producer.RequiredAcks by the names of Sarama's constants, snake_case.
std::string_view AcksName(int32_t acks);
std::optional<int32_t> AcksFromName(std::string_view name);

// The canonical text of value `v` of field `f`: integers and booleans as
// TOML writes them, strings quoted, durations in their largest exact unit,
// acks by name, bytes as hex, lists in brackets.
std::string FormatValue(const Field& f, const Value& v);

// The field reference of scenarios/README.md, in Markdown, between the
// markers that bound it there.
std::string MarkdownReference();
inline constexpr std::string_view kReferenceBegin =
    "<!-- BEGIN generated reference: prodsim schema --markdown -->";
inline constexpr std::string_view kReferenceEnd = "<!-- END generated reference -->";

// --- Member access, for the tables (schema.cc).

template <typename T>
struct MemberOf;
template <typename C, typename T>
struct MemberOf<T C::*> {
  using Class = C;
  using Type = T;
};

inline Value ToValue(int32_t v) { return int64_t{v}; }
inline Value ToValue(int64_t v) { return v; }
inline Value ToValue(uint64_t v) { return static_cast<int64_t>(v); }
inline Value ToValue(bool v) { return v; }
inline Value ToValue(Duration v) { return v; }
inline Value ToValue(const std::string& v) { return v; }
inline Value ToValue(const std::vector<std::string>& v) { return v; }
// The typed members a file spells by name: their value is the name (the
// reader checked it against the field's `values`). An unset error (NONE)
// is the empty name.
inline Value ToValue(sim::Policy v) { return std::string(sim::PolicyName(v)); }
inline Value ToValue(sarama::Profile v) { return std::string(sarama::ProfileName(v)); }
// The latency kinds' names, in net::LatencyModel::Kind's order.
inline constexpr std::string_view kLatencyKindNames[] = {"constant", "uniform", "exponential"};
inline Value ToValue(net::LatencyModel::Kind v) {
  return std::string(kLatencyKindNames[static_cast<size_t>(v)]);
}
inline Value ToValue(fault_models::FaultKind v) {
  return std::string(fault_models::FaultKindName(v));
}
inline Value ToValue(fault_models::Direction v) {
  return std::string(fault_models::DirectionKey(v));
}
inline Value ToValue(checks::Verdict v) { return std::string(checks::VerdictName(v)); }
inline Value ToValue(Drain v) { return std::string(DrainName(v)); }
inline Value ToValue(TestDefect v) { return std::string(TestDefectName(v)); }
inline Value ToValue(kafka::KafkaVersion v) { return std::string(kafka::KafkaVersionName(v)); }
inline Value ToValue(kafka::ApiKey v) { return std::string(fault_models::FaultApiKey(v)); }
inline Value ToValue(kafka::ErrorCode v) {
  return v == kafka::ErrorCode::NONE ? std::string() : kafka::ErrorCodeName(v);
}
template <typename T>
Value ToValue(const std::optional<T>& v) {
  return v.has_value() ? ToValue(*v) : Value();
}

inline void FromValue(Value v, int32_t* out) { *out = static_cast<int32_t>(std::get<int64_t>(v)); }
inline void FromValue(Value v, int64_t* out) { *out = std::get<int64_t>(v); }
inline void FromValue(Value v, uint64_t* out) {
  *out = static_cast<uint64_t>(std::get<int64_t>(v));
}
inline void FromValue(Value v, bool* out) { *out = std::get<bool>(v); }
inline void FromValue(Value v, Duration* out) { *out = std::get<Duration>(v); }
inline void FromValue(Value v, std::string* out) { *out = std::move(std::get<std::string>(v)); }
inline void FromValue(Value v, std::vector<std::string>* out) {
  *out = std::move(std::get<std::vector<std::string>>(v));
}
// REQUIRES (the eleven below): a name of the field's `values`.
inline void FromValue(Value v, sarama::Profile* out) {
  const absl::StatusOr<sarama::Profile> p = sarama::ParseProfile(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(p.ok(), "FromValue: an unknown producer profile");
  *out = *p;
}
inline void FromValue(Value v, sim::Policy* out) {
  const absl::StatusOr<sim::Policy> p = sim::ParsePolicy(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(p.ok(), "FromValue: an unknown policy");
  *out = *p;
}
inline void FromValue(Value v, net::LatencyModel::Kind* out) {
  const std::string& name = std::get<std::string>(v);
  for (size_t i = 0; i < std::size(kLatencyKindNames); ++i) {
    if (kLatencyKindNames[i] == name) {
      *out = static_cast<net::LatencyModel::Kind>(i);
      return;
    }
  }
  PRODSIM_ASSERT_MSG(false, "FromValue: an unknown latency kind");
}
inline void FromValue(Value v, fault_models::FaultKind* out) {
  const std::optional<fault_models::FaultKind> k =
      fault_models::FaultKindFromName(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(k.has_value(), "FromValue: an unknown fault kind");
  *out = *k;
}
inline void FromValue(Value v, fault_models::Direction* out) {
  const std::optional<fault_models::Direction> d =
      fault_models::DirectionFromKey(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(d.has_value(), "FromValue: an unknown direction");
  *out = *d;
}
inline void FromValue(Value v, checks::Verdict* out) {
  const absl::StatusOr<checks::Verdict> d = checks::ParseVerdict(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(d.ok(), "FromValue: an unknown verdict");
  *out = *d;
}
inline void FromValue(Value v, Drain* out) {
  const std::optional<Drain> d = FromName<Drain>(kDrainNames, std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(d.has_value(), "FromValue: an unknown drain");
  *out = *d;
}
inline void FromValue(Value v, TestDefect* out) {
  const std::optional<TestDefect> d =
      FromName<TestDefect>(kTestDefectNames, std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(d.has_value(), "FromValue: an unknown test defect");
  *out = *d;
}
inline void FromValue(Value v, kafka::KafkaVersion* out) {
  const absl::StatusOr<kafka::KafkaVersion> k = kafka::ParseKafkaVersion(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(k.ok(), "FromValue: an unknown Kafka version");
  *out = *k;
}
inline void FromValue(Value v, kafka::ApiKey* out) {
  const std::optional<kafka::ApiKey> a = fault_models::FaultApiFromKey(std::get<std::string>(v));
  PRODSIM_ASSERT_MSG(a.has_value(), "FromValue: an unknown api");
  *out = *a;
}
inline void FromValue(Value v, kafka::ErrorCode* out) {
  const std::string& name = std::get<std::string>(v);
  if (name.empty()) {
    *out = kafka::ErrorCode::NONE;
    return;
  }
  const std::optional<kafka::ErrorCode> e = kafka::ErrorCodeFromName(name);
  PRODSIM_ASSERT_MSG(e.has_value(), "FromValue: an unknown Kafka error");
  *out = *e;
}
template <typename T>
void FromValue(Value v, std::optional<T>* out) {
  if (std::holds_alternative<std::monostate>(v)) {
    out->reset();
    return;
  }
  T t{};
  FromValue(std::move(v), &t);
  *out = std::move(t);
}

template <auto M>
Value Get(const void* section) {
  using C = typename MemberOf<decltype(M)>::Class;
  return ToValue(static_cast<const C*>(section)->*M);
}
template <auto M>
void Set(void* section, Value value) {
  using C = typename MemberOf<decltype(M)>::Class;
  FromValue(std::move(value), &(static_cast<C*>(section)->*M));
}
// `f` with the accessors of member M.
template <auto M>
constexpr Field Of(Field f) {
  f.get = &Get<M>;
  f.set = &Set<M>;
  return f;
}

}  // namespace scenarios::schema

#endif  // PRODSIM_SCENARIOS_SCHEMA_H_
