// The scenario file format: TOML in, Scenario out, and back.
//
// Parsing runs in three steps. A lexical guard bounds the input (size, and
// the depth of dotted keys, which toml++ would otherwise turn into tables
// nested deep enough to overflow the stack when they are destroyed). toml++
// parses the text. A schema walk then reads each table with a TableReader,
// which knows the keys it was asked for and reports every other key as
// unknown. Every problem is collected with its source position and the
// earliest one is reported, so the message does not depend on the order of
// the walk. Checks that relate two sections (a fault's broker against the
// cluster's size) run only when the sections they read parsed cleanly, so a
// bad value never causes a second, misleading error.
//
// No exception leaves this file: toml++ (Debian builds it with exceptions)
// throws toml::parse_error, which is caught and converted.
#include "scenarios/scenario.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "scenarios/realism.h"
#include "sim/core/assert.h"

namespace scenarios {
namespace {

using StringList = std::span<const std::string_view>;

// "a, b, c" (absl::StrJoin cannot format std::string_view here).
std::string Join(StringList list) {
  std::string out;
  for (const std::string_view s : list) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// Limits on the input, so that no file (or fuzz input) can exhaust memory,
// stack or time.
constexpr size_t kMaxInputBytes = size_t{4} << 20;
constexpr int kMaxDotsPerLine = 16;
constexpr size_t kMaxFaults = 10000;
constexpr size_t kMaxTopics = 64;
constexpr size_t kMaxWorkloadTopics = 64;
constexpr size_t kMaxDescriptionBytes = 10000;
constexpr size_t kMaxTopicNameBytes = 249;  // Kafka's own limit
constexpr size_t kMaxVersionBytes = 32;
constexpr size_t kMaxSuggestKeyBytes = 64;
constexpr int64_t kMaxSteps = 10'000'000'000;
constexpr size_t kMaxTapeBytes = size_t{1} << 20;

constexpr int64_t kMaxCount = 1'000'000;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The value lists of the format. A new profile (e.g. "sarama-main") is one
// more entry in kProfiles.
constexpr std::string_view kProfiles[] = {"sarama-1.42.1", "sarama-main"};
constexpr std::string_view kPolicies[] = {"fifo", "random", "pct"};
constexpr std::string_view kLatencyKinds[] = {"constant", "uniform", "exponential"};
constexpr std::string_view kDirections[] = {"to_broker", "from_broker", "both"};
constexpr std::string_view kApis[] = {"produce", "metadata", "init_producer_id"};
constexpr std::string_view kVerdicts[] = {
    "pass", "safety", "liveness", "deadlock", "producer-assertion", "harness-error"};
constexpr std::string_view kChecks[] = {
    "acked-batches-in-order", "log-sequences-contiguous", "no-duplicates",
    "per-partition-order",    "acked-are-durable",        "every-message-one-outcome",
    "no-producer-assertion",  "no-broker-sequence-error", "liveness"};
// The cluster model's versions: keep in sync with kafka::ParseKafkaVersion.
constexpr std::string_view kKafkaVersions[] = {"0.11", "2.0", "2.1", "2.2",
                                               "2.3",  "2.4", "2.5", "2.6"};
// The error codes the cluster model can return (sim/kafka/types.h
// ErrorCode, without NONE): keep in sync.
constexpr std::string_view kKafkaErrors[] = {
    "UNKNOWN_SERVER_ERROR",       "OFFSET_OUT_OF_RANGE",        "CORRUPT_MESSAGE",
    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE",
    "NOT_LEADER_OR_FOLLOWER",     "REQUEST_TIMED_OUT",
    "BROKER_NOT_AVAILABLE",       "REPLICA_NOT_AVAILABLE",
    "MESSAGE_TOO_LARGE",          "NETWORK_EXCEPTION",
    "NOT_ENOUGH_REPLICAS",        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "INVALID_REQUIRED_ACKS",      "UNSUPPORTED_VERSION",
    "OUT_OF_ORDER_SEQUENCE_NUMBER", "DUPLICATE_SEQUENCE_NUMBER",
    "INVALID_PRODUCER_EPOCH",     "KAFKA_STORAGE_ERROR",
    "UNKNOWN_PRODUCER_ID",        "LISTENER_NOT_FOUND",
    "INVALID_RECORD"};

// The buggify sites, in canonical order: sim/net's, then sim/kafka's
// (net::kBuggifySites, kafka::kBuggifySites; a test keeps them in sync).
constexpr std::string_view kBuggifySites[] = {"net.delay", "net.slow_connect",
                                              "broker.slow_request", "broker.slow_metadata",
                                              "broker.slow_fetch"};

// sarama RequiredAcks, by the names of its constants in snake_case.
struct AcksName {
  std::string_view name;
  int32_t value;
};
constexpr AcksName kAcksNames[] = {{"wait_for_all", -1}, {"no_response", 0}, {"wait_for_local", 1}};

// ---------------------------------------------------------------------------
// Fault kinds: which fields each kind reads, and which it needs.

enum FaultField : uint32_t {
  kFDuration = 1u << 0,
  kFBroker = 1u << 1,
  kFDirection = 1u << 2,
  kFTopic = 1u << 3,
  kFPartition = 1u << 4,
  kFError = 1u << 5,
  kFApi = 1u << 6,
  kFCount = 1u << 7,
  kFExtra = 1u << 8,
  kFHeal = 1u << 9,
};

struct FaultKindInfo {
  std::string_view name;
  uint32_t uses;   // FaultField bits the kind reads (besides kind and at)
  uint32_t needs;  // of those, the ones without a usable default
};

// As fault_models/faults.cc applies them. `topic` and `partition` go
// together: both name one partition, neither means every partition. Only
// partition and crash last until healed; the other kinds with a duration
// end after it by themselves, so `heal` means nothing to them. The mock
// kinds come last (fault_models::IsMockKind).
constexpr FaultKindInfo kFaultKinds[] = {
    {"reset", kFBroker, 0},
    {"partition", kFBroker | kFDirection | kFDuration | kFHeal, 0},
    {"crash", kFBroker | kFDuration | kFHeal, 0},
    {"move_leader", kFBroker | kFTopic | kFPartition, 0},
    {"shrink_isr", kFBroker | kFTopic | kFPartition | kFDuration, 0},
    {"inject_error",
     kFBroker | kFTopic | kFPartition | kFError | kFApi | kFCount | kFDuration, kFError},
    {"lose_response", kFBroker | kFApi | kFCount, 0},
    {"stall_response", kFBroker | kFApi | kFCount | kFExtra, kFExtra},
    {"delay_processing", kFBroker | kFDuration | kFExtra, kFExtra},
    {"latency_spike", kFBroker | kFDirection | kFDuration | kFExtra, kFExtra},
    {"pause_fetching", kFBroker | kFDuration, 0},
    {"mock.error", kFBroker | kFTopic | kFPartition | kFError | kFApi | kFCount, kFError},
    {"mock.drop_response", kFBroker | kFCount, 0},
};

// Kinds that were renamed: a file naming one gets a hint to the new name.
struct RenamedKind {
  std::string_view old_name;
  std::string_view hint;
};
constexpr RenamedKind kRenamedKinds[] = {
    {"drop_responses",
     "renamed mock.drop_response: no real broker skips a response on a live connection; "
     "lose_response is the real event (the connection breaks after the broker processed the "
     "request)"},
};

// The fault fields in canonical order.
struct FaultFieldName {
  FaultField field;
  std::string_view name;
};
constexpr FaultFieldName kFaultFieldNames[] = {
    {kFDuration, "duration"}, {kFBroker, "broker"},       {kFDirection, "direction"},
    {kFTopic, "topic"},       {kFPartition, "partition"}, {kFError, "error"},
    {kFApi, "api"},           {kFCount, "count"},         {kFExtra, "extra"},
    {kFHeal, "heal"}};

const FaultKindInfo* FindFaultKind(std::string_view name) {
  for (const FaultKindInfo& k : kFaultKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string_view> FaultKindNames() {
  std::vector<std::string_view> names;
  for (const FaultKindInfo& k : kFaultKinds) names.push_back(k.name);
  return names;
}

// "at, broker, duration": the keys a fault kind reads, for hints.
std::string FaultKeysOf(const FaultKindInfo& kind) {
  std::vector<std::string_view> keys = {"kind", "at"};
  for (const FaultFieldName& f : kFaultFieldNames) {
    if (kind.uses & f.field) keys.push_back(f.name);
  }
  return Join(keys);
}

// Latency kinds: which of min, max, mean and cap each reads (sim/net
// LatencyModel: constant takes min; uniform min..max; exponential min plus
// an exponential draw of the given mean, capped).
struct LatencyKindInfo {
  std::string_view name;
  bool max, mean, cap;
};
constexpr LatencyKindInfo kLatencyKindInfo[] = {
    {"constant", false, false, false},
    {"uniform", true, false, false},
    {"exponential", false, true, true},
};

// Every table's keys, in canonical order, for hints.
constexpr std::string_view kTopKeys[] = {"seed",    "description", "schedule", "producer",
                                         "cluster", "network",     "workload", "faults",
                                         "buggify", "limits",      "expect"};
constexpr std::string_view kScheduleKeys[] = {"policy", "pct_depth", "pct_steps",
                                              "preempt_per_mille", "tape"};
constexpr std::string_view kProducerKeys[] = {"profile",
                                              "idempotent",
                                              "net_max_open_requests",
                                              "net_read_timeout",
                                              "net_dial_timeout",
                                              "required_acks",
                                              "timeout",
                                              "retry_max",
                                              "retry_backoff",
                                              "return_successes",
                                              "return_errors",
                                              "flush_messages",
                                              "flush_bytes",
                                              "flush_frequency",
                                              "flush_max_messages",
                                              "max_message_bytes",
                                              "channel_buffer_size",
                                              "metadata_retry_max",
                                              "metadata_retry_backoff",
                                              "version"};
constexpr std::string_view kClusterKeys[] = {"brokers",
                                             "topics",
                                             "min_insync_replicas",
                                             "kafka_version",
                                             "metadata_delay_max",
                                             "replica_fetch_interval",
                                             "replica_lag_time_max"};
constexpr std::string_view kTopicKeys[] = {"name", "partitions", "replication_factor"};
constexpr std::string_view kNetworkKeys[] = {"latency"};
constexpr std::string_view kLatencyKeys[] = {"kind", "min", "max", "mean", "cap"};
constexpr std::string_view kWorkloadKeys[] = {"messages", "keys",        "topics",  "interval",
                                              "burst",    "value_bytes", "close_at"};
constexpr std::string_view kFaultKeys[] = {"kind",      "at",    "duration",  "broker",
                                           "direction", "topic", "partition", "error",
                                           "api",       "count", "extra",     "heal"};
constexpr std::string_view kBuggifyKeys[] = {"sites"};
constexpr std::string_view kLimitsKeys[] = {"steps", "time", "liveness_grace"};
constexpr std::string_view kExpectKeys[] = {"verdict", "check", "profiles"};
constexpr std::string_view kProfileExpectKeys[] = {"verdict", "check"};

struct SectionKeys {
  std::string_view section;
  StringList keys;
};
constexpr SectionKeys kSections[] = {
    {"the top level", kTopKeys},         {"[schedule]", kScheduleKeys},
    {"[producer]", kProducerKeys},       {"[cluster]", kClusterKeys},
    {"[[cluster.topics]]", kTopicKeys},  {"[network]", kNetworkKeys},
    {"[network.latency]", kLatencyKeys}, {"[workload]", kWorkloadKeys},
    {"[[faults]]", kFaultKeys},          {"[buggify]", kBuggifyKeys},
    {"[limits]", kLimitsKeys},           {"[expect]", kExpectKeys},
    {"[expect.profiles.\"PROFILE\"]", kProfileExpectKeys},
};

// ---------------------------------------------------------------------------
// Small text helpers.

// Debian's Abseil has its own string_view type, hence the conversion.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// A TOML basic string literal for `s`: quotes, backslashes and control
// characters escaped; other bytes (UTF-8) as they are.
std::string TomlQuote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += absl::StrFormat("\\u%04X", static_cast<unsigned>(u));
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

// A user's string, quoted and shortened, for an error message.
std::string Shown(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() <= kMax) return TomlQuote(s);
  size_t cut = kMax;  // not inside a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(TomlQuote(s.substr(0, cut)), "...");
}

// Levenshtein distance, capped: both strings are short (callers check).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// The entry of `candidates` closest to `word`, if close enough to be a typo.
std::optional<std::string_view> Closest(std::string_view word, StringList candidates) {
  if (word.size() > kMaxSuggestKeyBytes) return std::nullopt;
  std::optional<std::string_view> best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string_view c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

bool Contains(StringList list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// ---------------------------------------------------------------------------
// Durations: "<digits>[.<digits>]<unit>", exact to the nanosecond.

struct Problem {
  std::string message;
  std::string hint;
};

struct DurationUnit {
  std::string_view name;
  int64_t ns;
};
constexpr DurationUnit kDurationUnits[] = {{"ns", 1},
                                           {"us", 1000},
                                           {"ms", 1000000},
                                           {"s", 1000000000},
                                           {"m", 60 * int64_t{1000000000}},
                                           {"h", 3600 * int64_t{1000000000}}};
constexpr std::string_view kUnitHint =
    "write a number and a unit (ns, us, ms, s, m or h), e.g. \"250ms\"";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The exact nanoseconds of the decimal fraction 0.`frac` of `unit_ns`, or
// nullopt if that is not a whole number.
std::optional<int64_t> FractionNanos(std::string_view frac, int64_t unit_ns) {
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  if (frac.empty()) return 0;
  // A fraction whose last digit is not 0 needs at least frac.size() factors
  // of 2 or of 5 from the unit, which has at most 13 of each.
  if (frac.size() > 13) return std::nullopt;
  int64_t value = 0, scale = 1;
  for (const char c : frac) {
    value = value * 10 + (c - '0');
    scale *= 10;
  }
  const int64_t g = std::gcd(unit_ns, scale);
  if (value % (scale / g) != 0) return std::nullopt;
  return value / (scale / g) * (unit_ns / g);  // < unit_ns: no overflow
}

std::optional<int64_t> UnitNanos(std::string_view unit) {
  for (const DurationUnit& u : kDurationUnits) {
    if (u.name == unit) return u.ns;
  }
  return std::nullopt;
}

// Splits "1.5ms" into "1", "5", "ms"; a problem if the number is malformed.
std::optional<Problem> SplitDuration(std::string_view text, std::string_view* whole,
                                     std::string_view* frac, std::string_view* unit) {
  if (text.empty()) return Problem{"the duration is empty", std::string(kUnitHint)};
  if (text[0] == '-') {
    return Problem{absl::StrCat("duration ", Shown(text), " is negative"),
                   "durations are >= 0; remove the minus sign"};
  }
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i])) ++i;
  *whole = text.substr(0, i);
  if (i < text.size() && text[i] == '.') {
    const size_t start = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    *frac = text.substr(start, i - start);
    if (frac->empty()) {
      return Problem{absl::StrCat("duration ", Shown(text), " has no digits after the point"),
                     "write e.g. \"1.5s\" or \"1s\""};
    }
  }
  *unit = text.substr(i);
  if (whole->empty()) {
    return Problem{absl::StrCat("duration ", Shown(text), " does not start with a number"),
                   std::string(kUnitHint)};
  }
  return std::nullopt;
}

// Parses a duration; on failure, the problem.
std::optional<Problem> ParseDuration(std::string_view text, Duration* out) {
  std::string_view whole, frac, unit;
  if (auto p = SplitDuration(text, &whole, &frac, &unit)) return p;
  if (unit.empty()) {
    return Problem{
        absl::StrCat("duration ", Shown(text), " has no unit"),
        absl::StrCat("add a unit, e.g. \"", Av(whole), "ms\"; units: ns, us, ms, s, m, h")};
  }
  const std::optional<int64_t> unit_ns = UnitNanos(unit);
  if (!unit_ns) {
    return Problem{absl::StrCat("unknown unit ", Shown(unit), " in duration ", Shown(text)),
                   "use ns, us, ms, s, m or h, right after the number (\"250ms\")"};
  }
  const std::optional<int64_t> frac_ns = FractionNanos(frac, *unit_ns);
  if (!frac_ns) {
    return Problem{absl::StrCat("duration ", Shown(text), " is not a whole number of nanoseconds"),
                   "use fewer decimals or a smaller unit"};
  }
  const int64_t max = std::numeric_limits<int64_t>::max();
  int64_t count = 0;
  bool overflow = false;
  for (const char c : whole) {
    const int64_t digit = c - '0';
    if (count > (max - digit) / 10) overflow = true;
    if (overflow) break;
    count = count * 10 + digit;
  }
  if (overflow || count > (max - *frac_ns) / *unit_ns) {
    return Problem{absl::StrCat("duration ", Shown(text), " is too long"),
                   "durations are at most 9223372036854775807ns (about 292 years)"};
  }
  *out = Duration::Nanos(count * *unit_ns + *frac_ns);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Diagnostics: problems with positions; the earliest one is reported.

struct Pos {
  uint32_t line = 1;
  uint32_t column = 1;
  auto operator<=>(const Pos&) const = default;
};

Pos PosOf(const toml::source_region& region) {
  if (region.begin.line == 0) return Pos{};  // a table toml++ made implicitly
  return Pos{static_cast<uint32_t>(region.begin.line), static_cast<uint32_t>(region.begin.column)};
}

class Diagnostics {
 public:
  explicit Diagnostics(std::string_view origin) : origin_(origin) {}

  // Whether a problem at `pos` would be reported, so that an expensive hint
  // is only worked out when it matters.
  bool WouldReport(Pos pos) const { return count_ == 0 || pos < first_pos_; }

  void Add(Pos pos, std::string message, std::string hint) {
    ++count_;
    if (count_ > 1 && !(pos < first_pos_)) return;
    first_pos_ = pos;
    first_message_ = std::move(message);
    first_hint_ = std::move(hint);
  }
  void Add(Pos pos, Problem problem) {
    Add(pos, std::move(problem.message), std::move(problem.hint));
  }

  size_t count() const { return count_; }

  // REQUIRES: count() > 0.
  absl::Status ToStatus() const {
    PRODSIM_ASSERT(count_ > 0);
    std::string line = absl::StrFormat("%s:%d:%d: %s (hint: %s)", Av(origin_), first_pos_.line,
                                       first_pos_.column, first_message_, first_hint_);
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::replace(line.begin(), line.end(), '\r', ' ');
    return absl::InvalidArgumentError(line);
  }

 private:
  std::string_view origin_;
  size_t count_ = 0;
  Pos first_pos_;
  std::string first_message_;
  std::string first_hint_;
};

// ---------------------------------------------------------------------------
// The lexical guard: toml++ nests a table per part of a dotted key, and
// destroys them recursively, so "a.a.a...=1" with 100000 parts overflows the
// stack. A key's parts all sit on one line, and nested arrays and inline
// tables are capped by toml++ (TOML_MAX_NESTED_VALUES), so capping the dots
// outside strings and comments on each line bounds the depth of every tree.

class DotGuard {
 public:
  // The position of the first dot over the limit, if any.
  std::optional<Pos> Scan(std::string_view text);

 private:
  enum class State { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };
  // Consumes the byte(s) at text[i] in the current state; returns how many.
  size_t Step(std::string_view text, size_t i);
  size_t StepCode(std::string_view text, size_t i);
  static size_t QuoteRun(std::string_view text, size_t i, char quote);

  State state_ = State::kCode;
  int dots_ = 0;
  bool over_ = false;
};

size_t DotGuard::QuoteRun(std::string_view text, size_t i, char quote) {
  size_t n = 0;
  while (i + n < text.size() && text[i + n] == quote && n < 5) ++n;
  return n;
}

size_t DotGuard::StepCode(std::string_view text, size_t i) {
  const char c = text[i];
  if (c == '#') state_ = State::kComment;
  if (c == '.') over_ = ++dots_ > kMaxDotsPerLine;
  if (c != '"' && c != '\'') return 1;
  const bool multi = QuoteRun(text, i, c) >= 3;
  if (c == '"') state_ = multi ? State::kMultiBasic : State::kBasic;
  if (c == '\'') state_ = multi ? State::kMultiLiteral : State::kLiteral;
  return multi ? 3 : 1;
}

size_t DotGuard::Step(std::string_view text, size_t i) {
  const char c = text[i];
  const bool escape = c == '\\' && i + 1 < text.size() && text[i + 1] != '\n';
  switch (state_) {
    case State::kCode:
      return StepCode(text, i);
    case State::kComment:
      return 1;
    case State::kBasic:
      if (c == '"') state_ = State::kCode;
      return escape ? 2 : 1;
    case State::kLiteral:
      if (c == '\'') state_ = State::kCode;
      return 1;
    case State::kMultiBasic:
    case State::kMultiLiteral: {
      const char quote = state_ == State::kMultiBasic ? '"' : '\'';
      if (state_ == State::kMultiBasic && escape) return 2;
      const size_t run = QuoteRun(text, i, quote);
      if (run < 3) return 1;
      state_ = State::kCode;
      return run;
    }
  }
  PRODSIM_ASSERT_MSG(false, "DotGuard state outside the enum");
  return 1;
}

std::optional<Pos> DotGuard::Scan(std::string_view text) {
  Pos pos;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
      dots_ = 0;
      if (state_ != State::kMultiBasic && state_ != State::kMultiLiteral) state_ = State::kCode;
      ++i;
      continue;
    }
    const size_t n = Step(text, i);
    PRODSIM_ASSERT(n >= 1);
    if (over_) return pos;
    for (size_t k = i; k < i + n && k < text.size(); ++k) {
      // Columns count code points, as toml++ does: skip UTF-8 continuations.
      if ((static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) ++pos.column;
    }
    i += n;
  }
  return std::nullopt;
}

std::optional<Problem> CheckInputBounds(std::string_view text, Pos* pos) {
  if (text.size() > kMaxInputBytes) {
    *pos = Pos{};
    return Problem{absl::StrCat("the file is too large (", text.size(), " bytes, at most ",
                                kMaxInputBytes, ")"),
                   "split the scenario, or drop faults"};
  }
  if (std::optional<Pos> p = DotGuard().Scan(text)) {
    *pos = *p;
    return Problem{absl::StrCat("more than ", kMaxDotsPerLine, " dots on one line"),
                   "a scenario's keys have at most one dot, e.g. network.latency"};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// TableReader: typed, range-checked reads of one table's keys.

std::string_view TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return node.is_array_of_tables() ? "an array of tables" : "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      return "nothing";
  }
  return "a value";
}

class TableReader {
 public:
  // `path` names the table in messages ("" for the top level, "cluster",
  // "faults[2]"); `section` is its entry in kSections.
  TableReader(const toml::table& table, std::string path, std::string_view section,
              Diagnostics* diag)
      : table_(table), path_(std::move(path)), section_(section), diag_(diag) {
    PRODSIM_ASSERT(diag_ != nullptr);
  }

  Diagnostics& diag() { return *diag_; }
  Pos pos() const { return PosOf(table_.source()); }
  // "cluster.brokers", or "seed" at the top level.
  std::string Name(std::string_view key) const {
    return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", Av(key));
  }
  // Where a cross-field problem about `key` points: its value if present.
  Pos PosOrTable(std::string_view key) const {
    const toml::node* n = table_.get(key);
    return n != nullptr ? PosOf(n->source()) : pos();
  }
  bool Has(std::string_view key) const { return table_.get(key) != nullptr; }

  // Marks `key` as one this table may have.
  void MarkKnown(std::string_view key) { known_.push_back(key); }
  // Marks `key` as known and returns its node, or null if absent.
  const toml::node* Get(std::string_view key) {
    MarkKnown(key);
    return table_.get(key);
  }

  // Each read leaves *out alone when the key is absent. It returns false
  // only when the key is present and wrong (the problem is recorded).
  bool Int(std::string_view key, int64_t lo, int64_t hi, int64_t* out);
  template <typename T>
  bool Int(std::string_view key, int64_t lo, int64_t hi, T* out) {
    int64_t v = static_cast<int64_t>(*out);
    if (!Int(key, lo, hi, &v)) return false;
    *out = static_cast<T>(v);
    return true;
  }
  template <typename T>
  bool OptInt(std::string_view key, int64_t lo, int64_t hi, std::optional<T>* out) {
    if (!Has(key)) {
      MarkKnown(key);
      return true;
    }
    T v{};
    if (!Int(key, lo, hi, &v)) return false;
    *out = v;
    return true;
  }
  bool Bool(std::string_view key, bool* out);
  bool OptBool(std::string_view key, std::optional<bool>* out);
  // A duration of at least `lo`.
  bool Dur(std::string_view key, Duration lo, Duration* out);
  bool OptDur(std::string_view key, Duration lo, std::optional<Duration>* out);
  bool Str(std::string_view key, size_t max_bytes, std::string* out);
  bool OptStr(std::string_view key, size_t max_bytes, std::optional<std::string>* out);
  bool Enum(std::string_view key, StringList allowed, std::string* out);
  // A sub-table (standard or inline); null if absent or not a table.
  const toml::table* Table(std::string_view key);
  // An array of tables (or an empty array) of at most `max` entries.
  const toml::array* TableArray(std::string_view key, size_t max);

  // Marks `key` known but not allowed here: a problem if present.
  void Forbid(std::string_view key, std::string message, std::string hint);
  // Records a problem for each key not asked for.
  void Finish();

 private:
  bool TypeProblem(const toml::node& node, std::string_view key, std::string_view expected,
                   std::string hint);
  std::string UnknownKeyHint(std::string_view key) const;

  const toml::table& table_;
  std::string path_;
  std::string_view section_;
  Diagnostics* diag_;
  std::vector<std::string_view> known_;
};

bool TableReader::TypeProblem(const toml::node& node, std::string_view key,
                              std::string_view expected, std::string hint) {
  diag_->Add(PosOf(node.source()),
             absl::StrCat(Name(key), " must be ", Av(expected), ", not ", Av(TypeName(node))),
             std::move(hint));
  return false;
}

bool TableReader::Int(std::string_view key, int64_t lo, int64_t hi, int64_t* out) {
  PRODSIM_ASSERT(lo <= hi);
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* v = node->as_integer();
  if (v == nullptr) {
    return TypeProblem(*node, key, "an integer",
                       absl::StrCat("write a number without quotes, e.g. ", Av(key), " = ", lo));
  }
  if (v->get() < lo || v->get() > hi) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " must be in ", lo, "..", hi, ", not ", v->get()),
               absl::StrCat("set ", Av(key), " to a value from ", lo, " to ", hi));
    return false;
  }
  *out = v->get();
  return true;
}

bool TableReader::Bool(std::string_view key, bool* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* v = node->as_boolean();
  if (v == nullptr) return TypeProblem(*node, key, "a boolean", "write true or false, unquoted");
  *out = v->get();
  return true;
}

bool TableReader::OptBool(std::string_view key, std::optional<bool>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  bool v = false;
  if (!Bool(key, &v)) return false;
  *out = v;
  return true;
}

bool TableReader::Dur(std::string_view key, Duration lo, Duration* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* s = node->as_string();
  if (s == nullptr) {
    return TypeProblem(*node, key, "a duration string",
                       absl::StrCat("quote it with a unit, e.g. ", Av(key), " = \"250ms\""));
  }
  Duration d;
  if (std::optional<Problem> p = ParseDuration(s->get(), &d)) {
    p->message = absl::StrCat(Name(key), ": ", p->message);
    diag_->Add(PosOf(node->source()), std::move(*p));
    return false;
  }
  if (d < lo) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " must be at least ", lo.ToString(), ", not ", d.ToString()),
               lo == Duration::Nanos(1) ? "use a positive duration, e.g. \"1ms\""
                                        : absl::StrCat("use at least \"", lo.ToString(), "\""));
    return false;
  }
  *out = d;
  return true;
}

bool TableReader::OptDur(std::string_view key, Duration lo, std::optional<Duration>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  Duration d;
  if (!Dur(key, lo, &d)) return false;
  *out = d;
  return true;
}

bool TableReader::Str(std::string_view key, size_t max_bytes, std::string* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* s = node->as_string();
  if (s == nullptr) {
    return TypeProblem(*node, key, "a string", absl::StrCat("quote it: ", Av(key), " = \"...\""));
  }
  if (s->get().size() > max_bytes) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " is too long (", s->get().size(), " bytes)"),
               absl::StrCat("keep it to ", max_bytes, " bytes"));
    return false;
  }
  *out = s->get();
  return true;
}

bool TableReader::OptStr(std::string_view key, size_t max_bytes, std::optional<std::string>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  std::string v;
  if (!Str(key, max_bytes, &v)) return false;
  *out = std::move(v);
  return true;
}

bool TableReader::Enum(std::string_view key, StringList allowed, std::string* out) {
  std::string value;
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  if (!Str(key, std::numeric_limits<size_t>::max(), &value)) return false;
  if (Contains(allowed, value)) {
    *out = value;
    return true;
  }
  // Short values ("3.0" for "2.0") are too close to everything to guess.
  const std::optional<std::string_view> near =
      value.size() >= 4 ? Closest(value, allowed) : std::nullopt;
  diag_->Add(PosOrTable(key), absl::StrCat("unknown ", Name(key), " ", Shown(value)),
             near ? absl::StrCat("did you mean \"", Av(*near), "\"?")
                  : absl::StrCat("use one of: ", Join(allowed)));
  return false;
}

const toml::table* TableReader::Table(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) return nullptr;
  if (const toml::table* t = node->as_table()) return t;
  const std::string header = Name(key);
  TypeProblem(*node, key, "a table",
              node->is_array_of_tables()
                  ? absl::StrCat("write [", header, "], not [[", header, "]]")
                  : absl::StrCat("write a [", header, "] section with its keys"));
  return nullptr;
}

const toml::array* TableReader::TableArray(std::string_view key, size_t max) {
  const toml::node* node = Get(key);
  if (node == nullptr) return nullptr;
  const toml::array* a = node->as_array();
  const std::string header = Name(key);
  if (a == nullptr || (!a->empty() && !a->is_array_of_tables())) {
    TypeProblem(*node, key, "an array of tables",
                absl::StrCat("write each entry as its own [[", header, "]] section"));
    return nullptr;
  }
  if (a->size() > max) {
    diag_->Add(PosOf((*a)[max].source()),
               absl::StrCat("too many ", header, " entries (", a->size(), ", at most ", max, ")"),
               absl::StrCat("keep ", max, " [[", header, "]] entries or fewer"));
    return nullptr;
  }
  return a;
}

void TableReader::Forbid(std::string_view key, std::string message, std::string hint) {
  const toml::node* node = Get(key);
  if (node != nullptr) diag_->Add(PosOf(node->source()), std::move(message), std::move(hint));
}

std::string TableReader::UnknownKeyHint(std::string_view key) const {
  if (std::optional<std::string_view> near = Closest(key, known_)) {
    return absl::StrCat("did you mean \"", Av(*near), "\"?");
  }
  for (const SectionKeys& s : kSections) {
    if (s.section != section_ && Contains(s.keys, key)) {
      return absl::StrCat("\"", Av(key), "\" belongs ", s.section[0] == '[' ? "in " : "at ",
                          Av(s.section));
    }
  }
  for (const SectionKeys& s : kSections) {
    if (s.section == section_) return absl::StrCat("known keys here: ", Join(s.keys));
  }
  return absl::StrCat("known keys here: ", Join(known_));
}

void TableReader::Finish() {
  for (auto&& [key, node] : table_) {
    if (Contains(known_, key.str())) continue;
    const Pos pos = PosOf(key.source());
    const std::string where = path_.empty() ? "at the top level" : absl::StrCat("in [", path_, "]");
    // Every problem counts, but only a reported one needs its hint.
    diag_->Add(pos, absl::StrCat("unknown key ", Shown(key.str()), " ", where),
               diag_->WouldReport(pos) ? UnknownKeyHint(key.str()) : std::string());
  }
}

// ---------------------------------------------------------------------------
// The sections. Each Read* fills its part of the Scenario and reports
// problems; it returns whether the section was clean, for the cross checks.

bool Clean(const Diagnostics& diag, size_t before) { return diag.count() == before; }

// schedule.tape: hex, two digits a byte, for the random policy only.
void ReadTape(TableReader& r, ScheduleSpec* s) {
  std::string hex;
  if (!r.Has("tape")) {
    r.MarkKnown("tape");
    return;
  }
  const Pos pos = r.PosOrTable("tape");
  if (!r.Str("tape", 2 * kMaxTapeBytes, &hex)) return;
  if (hex.size() % 2 != 0) {
    r.diag().Add(pos, absl::StrCat("schedule.tape has an odd number of hex digits (", hex.size(), ")"),
                 "write two hex digits per byte, e.g. \"00ff1a\"");
    return;
  }
  const auto bad = std::find_if_not(hex.begin(), hex.end(),
                                    [](char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); });
  if (bad != hex.end()) {
    r.diag().Add(pos, absl::StrCat("schedule.tape has a character that is not a hex digit at offset ",
                                   bad - hex.begin()),
                 "use only 0-9 and a-f");
    return;
  }
  std::string bytes = absl::HexStringToBytes(hex);
  if (!bytes.empty() && s->policy != "random") {
    r.diag().Add(pos, absl::StrCat("schedule.tape is only read by policy \"random\", not \"",
                                   s->policy, "\""),
                 "set policy = \"random\" or remove the tape");
    return;
  }
  s->tape = std::move(bytes);
}

void ReadSchedule(TableReader& r, ScheduleSpec* s) {
  r.Enum("policy", kPolicies, &s->policy);
  r.Int("pct_depth", 1, 20, &s->pct_depth);
  r.Int("pct_steps", 1, kMaxSteps, &s->pct_steps);
  r.Int("preempt_per_mille", 0, 1000, &s->preempt_per_mille);
  ReadTape(r, s);
  r.Finish();
}

void ReadRequiredAcks(TableReader& r, std::optional<int32_t>* out) {
  const toml::node* node = r.Get("required_acks");
  if (node == nullptr) return;
  if (const auto* name = node->as_string()) {
    for (const AcksName& a : kAcksNames) {
      if (a.name == name->get()) {
        *out = a.value;
        return;
      }
    }
  } else if (const auto* v = node->as_integer()) {
    if (v->get() >= -1 && v->get() <= 1) {
      *out = static_cast<int32_t>(v->get());
      return;
    }
  }
  r.diag().Add(PosOf(node->source()),
               absl::StrCat(r.Name("required_acks"), " must be -1, 0 or 1 (or its name)"),
               "use \"wait_for_all\" (-1), \"wait_for_local\" (1) or \"no_response\" (0)");
}

// Sarama versions: MAJOR.MINOR[.PATCH[.BUILD]]. Which releases a profile
// knows is the producer's business (sarama::ParseKafkaVersion), since it
// differs between profiles; here only the spelling is checked.
void CheckVersionSpelling(TableReader& r, const std::optional<std::string>& version) {
  if (!version) return;
  int parts = 1;
  bool ok = !version->empty() && IsDigit(version->front()) && IsDigit(version->back());
  for (size_t i = 0; ok && i < version->size(); ++i) {
    const char c = (*version)[i];
    if (c == '.') ok = ++parts <= 4 && IsDigit((*version)[i - 1]);
    if (c != '.' && !IsDigit(c)) ok = false;
  }
  if (ok && parts >= 2) return;
  r.diag().Add(r.PosOrTable("version"),
               absl::StrCat(r.Name("version"), " ", Shown(*version), " is not a Kafka version"),
               "write MAJOR.MINOR[.PATCH], e.g. \"2.6.0\"");
}

void ReadProducerInts(TableReader& r, ProducerSpec* p) {
  r.OptInt("net_max_open_requests", 1, 1000, &p->net_max_open_requests);
  r.OptInt("retry_max", 0, kMaxCount, &p->retry_max);
  r.OptInt("flush_messages", 0, kMaxCount, &p->flush_messages);
  r.OptInt("flush_bytes", 0, kInt32Max, &p->flush_bytes);
  r.OptInt("flush_max_messages", 0, kMaxCount, &p->flush_max_messages);
  r.OptInt("max_message_bytes", 1, 100'000'000, &p->max_message_bytes);
  r.OptInt("channel_buffer_size", 0, kMaxCount, &p->channel_buffer_size);
  r.OptInt("metadata_retry_max", 0, kMaxCount, &p->metadata_retry_max);
  if (p->flush_max_messages.value_or(0) > 0 &&
      *p->flush_max_messages < p->flush_messages.value_or(0)) {
    r.diag().Add(r.PosOrTable("flush_max_messages"),
                 absl::StrCat(r.Name("flush_max_messages"), " is below flush_messages"),
                 "Sarama needs flush_max_messages >= flush_messages when it is set");
  }
}

void ReadProducer(TableReader& r, ProducerSpec* p) {
  const Duration positive = Duration::Nanos(1);
  r.Enum("profile", kProfiles, &p->profile);
  r.OptBool("idempotent", &p->idempotent);
  r.OptDur("net_read_timeout", positive, &p->net_read_timeout);
  r.OptDur("net_dial_timeout", positive, &p->net_dial_timeout);
  ReadRequiredAcks(r, &p->required_acks);
  r.OptDur("timeout", positive, &p->timeout);
  r.OptDur("retry_backoff", Duration(), &p->retry_backoff);
  r.OptBool("return_successes", &p->return_successes);
  r.OptBool("return_errors", &p->return_errors);
  r.OptDur("flush_frequency", Duration(), &p->flush_frequency);
  r.OptDur("metadata_retry_backoff", Duration(), &p->metadata_retry_backoff);
  ReadProducerInts(r, p);
  if (r.OptStr("version", kMaxVersionBytes, &p->version)) CheckVersionSpelling(r, p->version);
  r.Finish();
}

void ReadLimits(TableReader& r, LimitsSpec* l) {
  r.Int("steps", 1, kMaxSteps, &l->steps);
  r.Dur("time", Duration::Nanos(1), &l->time);
  r.Dur("liveness_grace", Duration(), &l->liveness_grace);
  r.Finish();
}

// Kafka topic names: 1..249 of [a-zA-Z0-9._-], and not "." or "..".
bool IsTopicName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTopicNameBytes || name == "." || name == "..") {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' ||
           c == '-';
  });
}

// `brokers` is 0 if cluster.brokers was bad (then it is not checked against).
void ReadTopic(TableReader& r, int32_t brokers, TopicSpec* t) {
  const bool has_name = r.Has("name");
  r.Str("name", std::numeric_limits<size_t>::max(), &t->name);
  r.Int("partitions", 1, static_cast<int64_t>(kMaxTopics), &t->partitions);
  const size_t before = r.diag().count();
  r.Int("replication_factor", 1, 16, &t->replication_factor);
  r.Finish();
  if (!has_name) {
    r.diag().Add(r.pos(), absl::StrCat(r.Name("name"), " is missing"),
                 "every [[cluster.topics]] entry needs a name, e.g. name = \"orders\"");
  } else if (!IsTopicName(t->name)) {
    r.diag().Add(r.PosOrTable("name"),
                 absl::StrCat("topic name ", Shown(t->name), " is not a valid Kafka topic name"),
                 "use 1 to 249 characters from a-z, A-Z, 0-9, '.', '_' and '-'");
  }
  if (brokers > 0 && Clean(r.diag(), before) && t->replication_factor > brokers) {
    r.diag().Add(r.PosOrTable("replication_factor"),
                 absl::StrCat(r.Name("replication_factor"), " = ", t->replication_factor,
                              " exceeds the cluster's ", brokers, " broker(s)"),
                 absl::StrCat("use a replication_factor from 1 to ", brokers, ", or add brokers"));
  }
}

// Reads [[cluster.topics]]; `brokers` as for ReadTopic.
void ReadTopics(TableReader& r, int32_t brokers, ClusterSpec* c) {
  const bool present = r.Has("topics");
  const toml::array* topics = r.TableArray("topics", kMaxTopics);
  if (!present || (topics != nullptr && topics->empty())) {
    r.diag().Add(r.PosOrTable("topics"), "the cluster has no topics",
                 "add a [[cluster.topics]] section with a name, e.g. name = \"orders\"");
    return;
  }
  if (topics == nullptr) return;  // the problem is recorded
  for (size_t i = 0; i < topics->size(); ++i) {
    const toml::table& table = *(*topics)[i].as_table();
    TableReader tr(table, absl::StrCat("cluster.topics[", i, "]"), "[[cluster.topics]]", &r.diag());
    TopicSpec t;
    ReadTopic(tr, brokers, &t);
    for (const TopicSpec& earlier : c->topics) {
      if (!t.name.empty() && earlier.name == t.name) {
        r.diag().Add(tr.PosOrTable("name"), absl::StrCat("duplicate topic ", Shown(t.name)),
                     "give each [[cluster.topics]] entry its own name");
      }
    }
    c->topics.push_back(std::move(t));
  }
}

void ReadCluster(TableReader& r, ClusterSpec* c) {
  const size_t before = r.diag().count();
  r.Int("brokers", 1, 16, &c->brokers);
  const int32_t brokers = Clean(r.diag(), before) ? c->brokers : 0;
  r.Enum("kafka_version", kKafkaVersions, &c->kafka_version);
  r.Dur("metadata_delay_max", Duration(), &c->metadata_delay_max);
  r.Dur("replica_fetch_interval", Duration::Nanos(1), &c->replica_fetch_interval);
  r.Dur("replica_lag_time_max", Duration::Nanos(1), &c->replica_lag_time_max);
  r.Dur("zookeeper_session_timeout", Duration::Nanos(1), &c->zookeeper_session_timeout);
  ReadTopics(r, brokers, c);
  const size_t before_isr = r.diag().count();
  r.Int("min_insync_replicas", 1, 16, &c->min_insync_replicas);
  if (Clean(r.diag(), before_isr)) {
    for (const TopicSpec& t : c->topics) {
      if (c->min_insync_replicas <= t.replication_factor) continue;
      r.diag().Add(r.PosOrTable("min_insync_replicas"),
                   absl::StrCat(r.Name("min_insync_replicas"), " = ", c->min_insync_replicas,
                                " exceeds the replication_factor ", t.replication_factor,
                                " of topic ", Shown(t.name)),
                   "min_insync_replicas must be at most every topic's replication_factor");
      break;
    }
  }
  r.Finish();
}

void ReadLatency(TableReader& r, LatencySpec* l) {
  const size_t before = r.diag().count();
  r.Enum("kind", kLatencyKinds, &l->kind);
  r.Dur("min", Duration(), &l->min);
  const LatencyKindInfo* info = nullptr;
  for (const LatencyKindInfo& k : kLatencyKindInfo) {
    if (k.name == l->kind && Clean(r.diag(), before)) info = &k;
  }
  const auto field = [&](std::string_view key, bool used, Duration* out) {
    if (info == nullptr || used) {
      r.Dur(key, Duration(), out);
      return;
    }
    r.Forbid(key, absl::StrCat(r.Name(key), " is not used by ", Av(info->name), " latency"),
             absl::StrCat("remove it; ", Av(info->name), " latency reads ",
                          info->max    ? "min and max"
                          : info->mean ? "min, mean and cap"
                                       : "min"));
  };
  field("max", info != nullptr && info->max, &l->max);
  field("mean", info != nullptr && info->mean, &l->mean);
  field("cap", info != nullptr && info->cap, &l->cap);
  r.Finish();
  if (info == nullptr || !Clean(r.diag(), before)) return;
  if (info->max && l->min > l->max) {
    r.diag().Add(r.PosOrTable("min"), absl::StrCat(r.Name("min"), " is above max"),
                 "uniform latency needs min <= max");
  }
  if (info->cap && l->min > l->cap) {
    r.diag().Add(r.PosOrTable("min"), absl::StrCat(r.Name("min"), " is above cap"),
                 "exponential latency needs min <= cap");
  }
}

void ReadNetwork(TableReader& r, NetworkSpec* n) {
  if (const toml::table* latency = r.Table("latency")) {
    TableReader lr(*latency, "network.latency", "[network.latency]", &r.diag());
    ReadLatency(lr, &n->latency);
  }
  r.Finish();
}

bool HasTopic(const ClusterSpec& c, std::string_view name) {
  return std::any_of(c.topics.begin(), c.topics.end(),
                     [&](const TopicSpec& t) { return t.name == name; });
}

// The workload's topic list; each must be a cluster topic (if the cluster
// parsed cleanly, else the check would only repeat its problem).
void ReadWorkloadTopics(TableReader& r, const ClusterSpec* cluster, WorkloadSpec* w) {
  const toml::node* node = r.Get("topics");
  if (node == nullptr) return;
  const toml::array* a = node->as_array();
  if (a == nullptr) {
    r.diag().Add(PosOf(node->source()),
                 absl::StrCat(r.Name("topics"), " must be an array of topic names, not ",
                              Av(TypeName(*node))),
                 "write topics = [\"orders\"], or leave it out for every topic");
    return;
  }
  if (a->size() > kMaxWorkloadTopics) {
    r.diag().Add(PosOf(node->source()), absl::StrCat(r.Name("topics"), " has too many entries"),
                 absl::StrCat("list at most ", kMaxWorkloadTopics, " topics"));
    return;
  }
  for (const toml::node& e : *a) {
    const auto* s = e.as_string();
    if (s == nullptr) {
      r.diag().Add(
          PosOf(e.source()),
          absl::StrCat(r.Name("topics"), " entries must be strings, not ", Av(TypeName(e))),
          "quote each topic name");
      continue;
    }
    if (cluster != nullptr && !HasTopic(*cluster, s->get())) {
      r.diag().Add(PosOf(e.source()),
                   absl::StrCat("workload topic ", Shown(s->get()), " is not in the cluster"),
                   "add it as a [[cluster.topics]] entry, or fix the name");
    }
    w->topics.push_back(s->get());
  }
}

void ReadWorkload(TableReader& r, const ClusterSpec* cluster, const LimitsSpec* limits,
                  WorkloadSpec* w) {
  r.Int("messages", 0, kMaxCount, &w->messages);
  r.Int("keys", 1, kMaxCount, &w->keys);
  ReadWorkloadTopics(r, cluster, w);
  r.Dur("interval", Duration(), &w->interval);
  r.Int("burst", 1, kMaxCount, &w->burst);
  r.Int("value_bytes", 0, 10'000'000, &w->value_bytes);
  const size_t before = r.diag().count();
  r.OptDur("close_at", Duration(), &w->close_at);
  if (limits != nullptr && Clean(r.diag(), before) && w->close_at && *w->close_at > limits->time) {
    r.diag().Add(
        r.PosOrTable("close_at"),
        absl::StrCat(r.Name("close_at"), " is after limits.time (", limits->time.ToString(), ")"),
        "close before the run's time limit, or raise limits.time");
  }
  r.Finish();
}

// ---------------------------------------------------------------------------
// Faults.

// What a fault's cross checks read: null members mean "that section had
// problems, skip the check".
struct FaultContext {
  const ClusterSpec* cluster = nullptr;
  const LimitsSpec* limits = nullptr;
  const ProducerSpec* producer = nullptr;
};

// Reads the fields `kind` uses, and forbids the others.
void ReadFaultFields(TableReader& r, const FaultKindInfo& kind, FaultSpec* f) {
  for (const FaultFieldName& field : kFaultFieldNames) {
    if (kind.uses & field.field) continue;
    r.Forbid(field.name,
             absl::StrCat(r.Name(field.name), " is not used by a ", Av(kind.name), " fault"),
             absl::StrCat("remove it; ", Av(kind.name), " reads ", FaultKeysOf(kind)));
  }
  const uint32_t u = kind.uses;
  if (u & kFDuration) r.OptDur("duration", Duration(), &f->duration);
  if (u & kFBroker) r.Int("broker", 0, 15, &f->broker);
  if (u & kFDirection) r.Enum("direction", kDirections, &f->direction);
  if (u & kFTopic) r.Str("topic", std::numeric_limits<size_t>::max(), &f->topic);
  if (u & kFPartition) r.Int("partition", 0, static_cast<int64_t>(kMaxTopics) - 1, &f->partition);
  if (u & kFError) r.Enum("error", kKafkaErrors, &f->error);
  if (u & kFApi) r.Enum("api", kApis, &f->api);
  if (u & kFCount) r.Int("count", 1, kMaxCount, &f->count);
  if (u & kFExtra) r.Dur("extra", Duration::Nanos(1), &f->extra);
  if (u & kFHeal) r.Bool("heal", &f->heal);
}

// The fields a kind needs: present, and not the "any" value.
void CheckRequired(TableReader& r, const FaultKindInfo& kind, const FaultSpec& f) {
  for (const FaultFieldName& field : kFaultFieldNames) {
    if (!(kind.needs & field.field) || r.Has(field.name)) continue;
    r.diag().Add(r.pos(), absl::StrCat(r.Name(field.name), " is missing"),
                 absl::StrCat("a ", Av(kind.name), " fault needs ", Av(field.name)));
  }
  if (!(kind.uses & kFTopic)) return;
  const bool has_topic = r.Has("topic"), has_partition = r.Has("partition");
  if (has_topic && f.topic.empty()) {
    r.diag().Add(r.PosOrTable("topic"), absl::StrCat(r.Name("topic"), " is empty"),
                 "name a cluster topic, or leave topic and partition out for every partition");
  } else if (has_topic && !has_partition) {
    r.diag().Add(r.PosOrTable("topic"), absl::StrCat(r.Name("partition"), " is missing"),
                 "a topic goes with a partition: add partition = 0 (or another)");
  } else if (!has_topic && has_partition) {
    r.diag().Add(r.PosOrTable("partition"),
                 absl::StrCat(r.Name("partition"), " is set but topic is not"),
                 "name the partition's topic, or remove partition");
  }
}

void CheckFaultTopic(TableReader& r, const FaultSpec& f, const ClusterSpec& cluster) {
  if (f.topic.empty()) return;  // every partition
  const auto it = std::find_if(cluster.topics.begin(), cluster.topics.end(),
                               [&](const TopicSpec& t) { return t.name == f.topic; });
  if (it == cluster.topics.end()) {
    r.diag().Add(r.PosOrTable("topic"),
                 absl::StrCat("fault topic ", Shown(f.topic), " is not in the cluster"),
                 "use a topic from [[cluster.topics]]");
  } else if (f.partition >= it->partitions) {
    r.diag().Add(r.PosOrTable("partition"),
                 absl::StrCat(r.Name("partition"), " = ", f.partition, " but topic ",
                              Shown(f.topic), " has ", it->partitions, " partition(s)"),
                 absl::StrCat("use a partition from 0 to ", it->partitions - 1));
  }
}

void CheckFaultAgainstCluster(TableReader& r, const FaultKindInfo& kind, const FaultSpec& f,
                              const ClusterSpec& cluster) {
  if ((kind.uses & kFBroker) && f.broker >= cluster.brokers) {
    r.diag().Add(r.PosOrTable("broker"),
                 absl::StrCat(r.Name("broker"), " = ", f.broker, " but the cluster has ",
                              cluster.brokers, " broker(s)"),
                 absl::StrCat("brokers are numbered 0 to ", cluster.brokers - 1));
  }
  if (kind.uses & kFTopic) CheckFaultTopic(r, f, cluster);
}

void CheckFaultTiming(TableReader& r, const FaultSpec& f, const LimitsSpec& limits) {
  if (f.at >= limits.time) {
    r.diag().Add(r.PosOrTable("at"),
                 absl::StrCat(r.Name("at"), " = ", f.at.ToString(), " is not before limits.time (",
                              limits.time.ToString(), ")"),
                 "start the fault earlier, or raise limits.time");
  } else if (f.duration && *f.duration > limits.time - f.at) {
    r.diag().Add(r.PosOrTable("duration"),
                 absl::StrCat(r.Name("duration"), ": the fault would end after limits.time (",
                              limits.time.ToString(), ")"),
                 "shorten the fault, or raise limits.time");
  }
}

void ReadFault(TableReader& r, const FaultContext& ctx, FaultSpec* f) {
  const size_t before = r.diag().count();
  const bool has_kind = r.Has("kind");
  const std::vector<std::string_view> kinds = FaultKindNames();
  if (const toml::node* k = r.Get("kind"); k != nullptr && k->is_string()) {
    for (const RenamedKind& old : kRenamedKinds) {
      if (k->value<std::string>() != old.old_name) continue;
      r.diag().Add(PosOf(k->source()),
                   absl::StrCat(r.Name("kind"), " = ", Shown(old.old_name), " is gone"),
                   std::string(old.hint));
      for (const FaultFieldName& field : kFaultFieldNames) r.MarkKnown(field.name);
      r.MarkKnown("kind");
      r.MarkKnown("at");
      r.Finish();
      return;
    }
  }
  r.Enum("kind", kinds, &f->kind);
  const bool has_at = r.Has("at");
  r.Dur("at", Duration(), &f->at);
  const FaultKindInfo* kind = FindFaultKind(f->kind);
  if (kind == nullptr) {
    if (!has_kind) {
      r.diag().Add(r.pos(), absl::StrCat(r.Name("kind"), " is missing"),
                   absl::StrCat("add kind = one of: ", Join(kinds)));
    }
    for (const FaultFieldName& field : kFaultFieldNames) r.MarkKnown(field.name);
    r.Finish();
    return;
  }
  if (!has_at) {
    r.diag().Add(r.pos(), absl::StrCat(r.Name("at"), " is missing"),
                 "say when the fault starts, e.g. at = \"2s\"");
  }
  const size_t before_fields = r.diag().count();
  ReadFaultFields(r, *kind, f);
  if (Clean(r.diag(), before_fields)) CheckRequired(r, *kind, *f);
  r.Finish();
  if (!Clean(r.diag(), before)) return;
  if (ctx.cluster != nullptr) CheckFaultAgainstCluster(r, *kind, *f, *ctx.cluster);
  if (ctx.limits != nullptr) CheckFaultTiming(r, *f, *ctx.limits);
  if (!Clean(r.diag(), before) || ctx.cluster == nullptr || ctx.producer == nullptr) return;
  if (f->kind != "inject_error") return;
  if (std::optional<FaultProblem> p = InjectErrorProblem(*f, *ctx.producer, *ctx.cluster)) {
    r.diag().Add(r.PosOrTable(p->field), absl::StrCat(r.Name(p->field), ": ", p->what), p->hint);
  }
}

void ReadFaults(TableReader& top, const FaultContext& ctx, std::vector<FaultSpec>* faults) {
  const toml::array* array = top.TableArray("faults", kMaxFaults);
  if (array == nullptr) return;
  faults->reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    TableReader r(*(*array)[i].as_table(), absl::StrCat("faults[", i, "]"), "[[faults]]",
                  &top.diag());
    FaultSpec f;
    ReadFault(r, ctx, &f);
    faults->push_back(std::move(f));
  }
}

// ---------------------------------------------------------------------------
// Buggify.

// "did you mean ...? sites: ..." or "use one of: ...", for a bad site name.
std::string BuggifySiteHint(std::string_view name) {
  const std::optional<std::string_view> near = Closest(name, kBuggifySites);
  if (!near) return absl::StrCat("use one of: ", Join(kBuggifySites));
  return absl::StrCat("did you mean \"", Av(*near), "\"? sites: ", Join(kBuggifySites));
}

// Reads buggify.sites: known names, each once; stored in canonical order.
void ReadBuggify(TableReader& r, BuggifySpec* b) {
  const toml::node* node = r.Get("sites");
  const toml::array* a = node == nullptr ? nullptr : node->as_array();
  if (node != nullptr && a == nullptr) {
    r.diag().Add(PosOf(node->source()),
                 absl::StrCat(r.Name("sites"), " must be an array of site names, not ",
                              Av(TypeName(*node))),
                 absl::StrCat("write sites = [\"net.delay\"]; sites: ", Join(kBuggifySites)));
  }
  constexpr size_t kSiteCount = std::size(kBuggifySites);
  bool seen[kSiteCount] = {};
  for (size_t i = 0; a != nullptr && i < a->size(); ++i) {
    const toml::node& e = (*a)[i];
    const auto* name = e.as_string();
    if (name == nullptr) {
      r.diag().Add(PosOf(e.source()),
                   absl::StrCat(r.Name("sites"), " entries must be strings, not ", Av(TypeName(e))),
                   "quote each site name, e.g. \"net.delay\"");
      continue;
    }
    const std::string_view* it =
        std::find(std::begin(kBuggifySites), std::end(kBuggifySites), name->get());
    if (it == std::end(kBuggifySites)) {
      const Pos pos = PosOf(e.source());
      r.diag().Add(pos, absl::StrCat("unknown buggify site ", Shown(name->get())),
                   r.diag().WouldReport(pos) ? BuggifySiteHint(name->get()) : std::string());
      continue;
    }
    bool& was_seen = seen[static_cast<size_t>(it - std::begin(kBuggifySites))];
    if (was_seen) {
      r.diag().Add(PosOf(e.source()), absl::StrCat("duplicate buggify site ", Shown(name->get())),
                   "list each site once");
    }
    was_seen = true;
  }
  for (size_t i = 0; i < kSiteCount; ++i) {
    if (seen[i]) b->sites.emplace_back(kBuggifySites[i]);
  }
  r.Finish();
}

// A verdict and its check; `name` is the table's name in messages.
void ReadVerdictAndCheck(TableReader& r, std::string_view name, std::string* verdict,
                         std::string* check) {
  const bool has_verdict = r.Has("verdict");
  r.Enum("verdict", kVerdicts, verdict);
  const bool has_check = r.Has("check");
  r.Enum("check", kChecks, check);
  if (!has_verdict) {
    r.diag().Add(r.pos(), absl::StrCat(Av(name), ".verdict is missing"),
                 absl::StrCat("add verdict = one of: ", Join(kVerdicts)));
  } else if (*verdict == "pass" && has_check) {
    r.diag().Add(r.PosOrTable("check"), absl::StrCat(Av(name), ".check is set but the verdict is \"pass\""),
                 "a passing run fails no check: remove check, or expect a failing verdict");
  }
}

// [expect] and its [expect.profiles."NAME"] tables; `own` is the
// scenario's producer.profile (which the top of [expect] is about).
void ReadExpect(TableReader& r, std::string_view own, ExpectSpec* e) {
  ReadVerdictAndCheck(r, "expect", &e->verdict, &e->check);
  if (const toml::table* profiles = r.Table("profiles")) {
    for (auto&& [key, node] : *profiles) {
      const std::string name(key.str());
      const Pos pos = PosOf(key.source());
      if (!Contains(kProfiles, name)) {
        r.diag().Add(pos, absl::StrCat("unknown profile ", Shown(name), " in [expect.profiles]"),
                     absl::StrCat("use one of: ", Join(kProfiles)));
        continue;
      }
      if (name == own) {
        r.diag().Add(pos, absl::StrCat("[expect.profiles.\"", name, "\"] names the scenario's own profile"),
                     "its verdict goes in [expect] itself; list other profiles here");
        continue;
      }
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        r.diag().Add(pos, absl::StrCat("expect.profiles.", name, " must be a table"),
                     absl::StrCat("write [expect.profiles.\"", name, "\"] with verdict (and check)"));
        continue;
      }
      const std::string path = absl::StrCat("expect.profiles.\"", name, "\"");
      TableReader pr(*table, path, "[expect.profiles.\"PROFILE\"]", &r.diag());
      ProfileExpectSpec p;
      p.profile = name;
      ReadVerdictAndCheck(pr, path, &p.verdict, &p.check);
      pr.Finish();
      e->profiles.push_back(std::move(p));
    }
    std::sort(e->profiles.begin(), e->profiles.end(),
              [](const ProfileExpectSpec& a, const ProfileExpectSpec& b) { return a.profile < b.profile; });
  }
  r.Finish();
}

// ---------------------------------------------------------------------------
// The top level.

// "[schedule]": the kSections entry of a top-level section.
std::string_view SectionName(std::string_view key) {
  for (const SectionKeys& s : kSections) {
    if (s.section.size() == key.size() + 2 && s.section.substr(1, key.size()) == key) {
      return s.section;
    }
  }
  PRODSIM_ASSERT_MSG(false, "a top-level section missing from kSections");
  return {};
}

// Reads a section table through `read`; absent sections keep defaults.
// Returns whether no problem was found in it.
template <typename Fn>
bool ReadSection(TableReader& top, std::string_view key, Fn read) {
  const size_t before = top.diag().count();
  if (const toml::table* t = top.Table(key)) {
    TableReader r(*t, std::string(key), SectionName(key), &top.diag());
    read(r);
  }
  return Clean(top.diag(), before);
}

// `end` is the end of the file, where a missing section is reported (so
// that any concrete problem in the file comes first).
void ReadTop(TableReader& top, Pos end, Scenario* s) {
  top.Int("seed", 0, static_cast<int64_t>(kSeedMax), &s->seed);
  top.Str("description", kMaxDescriptionBytes, &s->description);
  ReadSection(top, "schedule", [&](TableReader& r) { ReadSchedule(r, &s->schedule); });
  const bool producer_ok =
      ReadSection(top, "producer", [&](TableReader& r) { ReadProducer(r, &s->producer); });
  const bool limits_ok =
      ReadSection(top, "limits", [&](TableReader& r) { ReadLimits(r, &s->limits); });
  if (!top.Has("cluster")) {
    top.diag().Add(end, "the scenario has no [cluster] section",
                   "add [cluster] with brokers, and a [[cluster.topics]] entry");
  }
  const bool cluster_ok =
      ReadSection(top, "cluster", [&](TableReader& r) { ReadCluster(r, &s->cluster); }) &&
      top.Has("cluster");
  ReadSection(top, "network", [&](TableReader& r) { ReadNetwork(r, &s->network); });
  const ClusterSpec* cluster = cluster_ok ? &s->cluster : nullptr;
  const LimitsSpec* limits = limits_ok ? &s->limits : nullptr;
  ReadSection(top, "workload",
              [&](TableReader& r) { ReadWorkload(r, cluster, limits, &s->workload); });
  ReadFaults(top, FaultContext{cluster, limits, producer_ok ? &s->producer : nullptr},
             &s->faults);
  ReadSection(top, "buggify", [&](TableReader& r) { ReadBuggify(r, &s->buggify); });
  ReadSection(top, "expect", [&](TableReader& r) {
    s->expect.emplace();
    ReadExpect(r, s->producer.profile, &*s->expect);
  });
  top.Finish();
}

// A hint for a toml++ syntax error, by the words of its description.
std::string SyntaxHint(std::string_view description) {
  struct Rule {
    std::string_view words;
    std::string_view hint;
  };
  static constexpr Rule kRules[] = {
      {"parsing string", "close the string on the same line, or use \"\"\" for several lines"},
      {"redefine", "each key and table may be defined once; merge the two"},
      {"nested value depth", "nest arrays and inline tables less deeply"},
  };
  for (const Rule& r : kRules) {
    if (description.find(r.words) != std::string_view::npos) return std::string(r.hint);
  }
  return "fix the TOML syntax at this position (see https://toml.io)";
}

// toml++ parsing, with or without exceptions.
std::optional<toml::table> ParseToml(std::string_view text, Diagnostics* diag) {
  const auto report = [&](const toml::parse_error& e) {
    diag->Add(PosOf(e.source()), absl::StrCat("invalid TOML: ", Av(e.description())),
              SyntaxHint(e.description()));
  };
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    report(e);
  } catch (const std::exception& e) {
    diag->Add(Pos{}, absl::StrCat("cannot parse: ", e.what()), "report this input as a bug");
  }
  return std::nullopt;
#else
  toml::parse_result result = toml::parse(text);
  if (result) return std::move(result).table();
  report(result.error());
  return std::nullopt;
#endif
}

// ---------------------------------------------------------------------------
// Printing.

std::string Q(const std::string& s) { return TomlQuote(s); }
std::string Q(Duration d) { return TomlQuote(d.ToString()); }

std::string AcksText(int32_t acks) {
  for (const AcksName& a : kAcksNames) {
    if (a.value == acks) return TomlQuote(a.name);
  }
  return absl::StrCat(acks);  // invalid; printed as is
}

// Appends `key = value` when the optional is set.
template <typename T, typename Fmt>
void PrintOpt(std::string* out, std::string_view key, const std::optional<T>& v, Fmt fmt) {
  if (v) absl::StrAppend(out, Av(key), " = ", fmt(*v), "\n");
}

void PrintProducer(const ProducerSpec& p, std::string* out) {
  const auto num = [](int32_t v) { return absl::StrCat(v); };
  const auto dur = [](Duration d) { return Q(d); };
  const auto boolean = [](bool b) { return std::string(b ? "true" : "false"); };
  absl::StrAppend(out,
                  "\n# The producer model: a profile, and Sarama config fields by their Sarama\n"
                  "# names in snake_case; a field left out keeps Sarama's default.\n"
                  "[producer]\nprofile = ",
                  Q(p.profile), "\n");
  PrintOpt(out, "idempotent", p.idempotent, boolean);
  PrintOpt(out, "net_max_open_requests", p.net_max_open_requests, num);
  PrintOpt(out, "net_read_timeout", p.net_read_timeout, dur);
  PrintOpt(out, "net_dial_timeout", p.net_dial_timeout, dur);
  PrintOpt(out, "required_acks", p.required_acks, AcksText);
  PrintOpt(out, "timeout", p.timeout, dur);
  PrintOpt(out, "retry_max", p.retry_max, num);
  PrintOpt(out, "retry_backoff", p.retry_backoff, dur);
  PrintOpt(out, "return_successes", p.return_successes, boolean);
  PrintOpt(out, "return_errors", p.return_errors, boolean);
  PrintOpt(out, "flush_messages", p.flush_messages, num);
  PrintOpt(out, "flush_bytes", p.flush_bytes, num);
  PrintOpt(out, "flush_frequency", p.flush_frequency, dur);
  PrintOpt(out, "flush_max_messages", p.flush_max_messages, num);
  PrintOpt(out, "max_message_bytes", p.max_message_bytes, num);
  PrintOpt(out, "channel_buffer_size", p.channel_buffer_size, num);
  PrintOpt(out, "metadata_retry_max", p.metadata_retry_max, num);
  PrintOpt(out, "metadata_retry_backoff", p.metadata_retry_backoff, dur);
  PrintOpt(out, "version", p.version, [](const std::string& v) { return Q(v); });
}

void PrintCluster(const ClusterSpec& c, std::string* out) {
  absl::StrAppend(out,
                  "\n# The simulated Kafka cluster: brokers 0..brokers-1 and its topics.\n"
                  "[cluster]\nbrokers = ",
                  c.brokers, "\nmin_insync_replicas = ", c.min_insync_replicas,
                  "\nkafka_version = ", Q(c.kafka_version),
                  "\nmetadata_delay_max = ", Q(c.metadata_delay_max),
                  "\nreplica_fetch_interval = ", Q(c.replica_fetch_interval),
                  "\nreplica_lag_time_max = ", Q(c.replica_lag_time_max),
                  "\nzookeeper_session_timeout = ", Q(c.zookeeper_session_timeout), "\n");
  for (const TopicSpec& t : c.topics) {
    absl::StrAppend(out, "\n[[cluster.topics]]\nname = ", Q(t.name),
                    "\npartitions = ", t.partitions,
                    "\nreplication_factor = ", t.replication_factor, "\n");
  }
}

void PrintNetwork(const NetworkSpec& n, std::string* out) {
  const LatencySpec& l = n.latency;
  absl::StrAppend(out,
                  "\n# Per-message network latency: constant (min), uniform (min..max) or\n"
                  "# exponential (min plus an exponential draw of mean, capped at cap).\n"
                  "[network.latency]\nkind = ",
                  Q(l.kind), "\nmin = ", Q(l.min), "\n");
  for (const LatencyKindInfo& k : kLatencyKindInfo) {
    if (k.name != l.kind) continue;
    if (k.max) absl::StrAppend(out, "max = ", Q(l.max), "\n");
    if (k.mean) absl::StrAppend(out, "mean = ", Q(l.mean), "\n");
    if (k.cap) absl::StrAppend(out, "cap = ", Q(l.cap), "\n");
  }
}

void PrintWorkload(const WorkloadSpec& w, std::string* out) {
  std::vector<std::string> topics;
  for (const std::string& t : w.topics) topics.push_back(Q(t));
  absl::StrAppend(out,
                  "\n# The application: `messages` messages in bursts of `burst`, one burst\n"
                  "# per interval, keys key-0.., topics round robin (empty: every topic).\n"
                  "[workload]\nmessages = ",
                  w.messages, "\nkeys = ", w.keys, "\ntopics = [", absl::StrJoin(topics, ", "),
                  "]\ninterval = ", Q(w.interval), "\nburst = ", w.burst,
                  "\nvalue_bytes = ", w.value_bytes, "\n");
  PrintOpt(out, "close_at", w.close_at, [](Duration d) { return Q(d); });
}

void PrintFault(const FaultSpec& f, std::string* out) {
  const FaultKindInfo* kind = FindFaultKind(f.kind);
  PRODSIM_ASSERT_MSG(kind != nullptr, "PrintScenario: unknown fault kind");
  absl::StrAppend(out, "\n[[faults]]\nkind = ", Q(f.kind), "\nat = ", Q(f.at), "\n");
  const uint32_t u = kind->uses;
  if ((u & kFDuration) && f.duration) absl::StrAppend(out, "duration = ", Q(*f.duration), "\n");
  if (u & kFBroker) absl::StrAppend(out, "broker = ", f.broker, "\n");
  if (u & kFDirection) absl::StrAppend(out, "direction = ", Q(f.direction), "\n");
  if ((u & kFTopic) && !f.topic.empty()) {
    absl::StrAppend(out, "topic = ", Q(f.topic), "\npartition = ", f.partition, "\n");
  }
  if (u & kFError) absl::StrAppend(out, "error = ", Q(f.error), "\n");
  if (u & kFApi) absl::StrAppend(out, "api = ", Q(f.api), "\n");
  if (u & kFCount) absl::StrAppend(out, "count = ", f.count, "\n");
  if (u & kFExtra) absl::StrAppend(out, "extra = ", Q(f.extra), "\n");
  if (u & kFHeal) absl::StrAppend(out, "heal = ", f.heal ? "true" : "false", "\n");
}

void PrintBuggify(const BuggifySpec& b, std::string* out) {
  if (b.sites.empty()) return;  // off: the section is left out
  std::vector<std::string> sites;
  for (const std::string& site : b.sites) sites.push_back(Q(site));
  absl::StrAppend(out,
                  "\n# Perturbation points switched on (BUGGIFY): small random delays in the\n"
                  "# simulated network and brokers.\n"
                  "[buggify]\nsites = [",
                  absl::StrJoin(sites, ", "), "]\n");
}

}  // namespace

std::span<const std::string_view> BuggifySiteNames() { return kBuggifySites; }

bool Scenario::operator==(const Scenario& o) const {
  return seed == o.seed && description == o.description && schedule == o.schedule &&
         producer == o.producer && cluster == o.cluster && network == o.network &&
         workload == o.workload && faults == o.faults && buggify == o.buggify &&
         limits == o.limits && expect == o.expect;
}

absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view origin) {
  Diagnostics diag(origin);
  Pos pos;
  if (std::optional<Problem> p = CheckInputBounds(text, &pos)) {
    diag.Add(pos, std::move(*p));
    return diag.ToStatus();
  }
  std::optional<toml::table> table = ParseToml(text, &diag);
  if (!table) return diag.ToStatus();
  Scenario s;
  TableReader top(*table, "", kSections[0].section, &diag);
  const auto newlines = std::count(text.begin(), text.end(), '\n');
  ReadTop(top, Pos{static_cast<uint32_t>(newlines + 1), 1}, &s);
  if (diag.count() > 0) return diag.ToStatus();
  return s;
}

absl::StatusOr<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (in) {
    // Read one byte past the limit, so that ParseScenario reports the size.
    text.resize(kMaxInputBytes + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  if (!in && !in.eof()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read file (hint: check the path and its permissions)"));
  }
  return ParseScenario(text, path);
}

std::string PrintScenario(const Scenario& s) {
  const ScheduleSpec& sc = s.schedule;
  std::string out = absl::StrCat(
      "# A prodsim scenario, in canonical form: every field is written (see\n"
      "# scenarios/README.md). Durations take a unit: ns, us, ms, s, m, h.\n"
      "seed = ",
      s.seed, "\ndescription = ", Q(s.description), "\n",
      "\n# Which runnable task the scheduler picks next: fifo, random or pct.\n"
      "[schedule]\npolicy = ",
      Q(sc.policy), "\npct_depth = ", sc.pct_depth, "\npct_steps = ", sc.pct_steps,
      "\npreempt_per_mille = ", sc.preempt_per_mille, "\n");
  if (!sc.tape.empty()) {
    absl::StrAppend(&out, "# The random policy's first decisions, a byte each (hex).\ntape = \"",
                    absl::BytesToHexString(sc.tape), "\"\n");
  }
  PrintProducer(s.producer, &out);
  PrintCluster(s.cluster, &out);
  PrintNetwork(s.network, &out);
  PrintWorkload(s.workload, &out);
  if (!s.faults.empty()) {
    absl::StrAppend(&out, "\n# Timed faults, applied at `at` and healed after `duration`.\n");
  }
  for (const FaultSpec& f : s.faults) PrintFault(f, &out);
  PrintBuggify(s.buggify, &out);
  absl::StrAppend(&out,
                  "\n# Bounds of the run: reaching one is a verdict, never a hang.\n"
                  "[limits]\nsteps = ",
                  s.limits.steps, "\ntime = ", Q(s.limits.time),
                  "\nliveness_grace = ", Q(s.limits.liveness_grace), "\n");
  if (s.expect) {
    absl::StrAppend(&out,
                    "\n# The verdict this scenario is expected to reach.\n"
                    "[expect]\nverdict = ",
                    Q(s.expect->verdict), "\n");
    if (!s.expect->check.empty()) absl::StrAppend(&out, "check = ", Q(s.expect->check), "\n");
    for (const ProfileExpectSpec& p : s.expect->profiles) {
      absl::StrAppend(&out, "\n# The same scenario with producer.profile = ", Q(p.profile),
                      ".\n[expect.profiles.", Q(p.profile), "]\nverdict = ", Q(p.verdict), "\n");
      if (!p.check.empty()) absl::StrAppend(&out, "check = ", Q(p.check), "\n");
    }
  }
  return out;
}

}  // namespace scenarios
