// The generic layer under the scenario format: TOML read through toml++
// into typed, range-checked values with positions, and the text helpers the
// reader, the printer and the messages share.
//
// Nothing here knows a scenario's sections or fields: those are in
// scenarios/schema.h, which drives this layer. Every problem is collected
// with its source position (Diagnostics) and the earliest one is reported,
// as one line "FILE:LINE:COLUMN: what (hint: how)", so the message does not
// depend on the order in which tables are read. No exception leaves this
// layer: toml++ (Debian builds it with exceptions) throws toml::parse_error,
// which ParseToml catches and converts.
#ifndef PRODSIM_SCENARIOS_TOML_READER_H_
#define PRODSIM_SCENARIOS_TOML_READER_H_

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/assert.h"
#include "sim/core/time.h"

namespace scenarios::internal {

using sim::Duration;
using StringList = std::span<const std::string_view>;

// Limits on the input, so that no file (or fuzz input) can exhaust memory,
// stack or time.
inline constexpr size_t kMaxInputBytes = size_t{4} << 20;
inline constexpr int kMaxDotsPerLine = 16;
inline constexpr size_t kMaxSuggestKeyBytes = 64;

// "a, b, c" (absl::StrJoin cannot format std::string_view here).
std::string Join(StringList list);
// Debian's Abseil has its own string_view type, hence the conversion.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
// A TOML basic string literal for `s`: quotes, backslashes and control
// characters escaped; other bytes (UTF-8) as they are.
std::string TomlQuote(std::string_view s);
// A user's string, quoted and shortened, for an error message.
std::string Shown(std::string_view s);
// The entry of `candidates` closest to `word`, if close enough to be a typo.
std::optional<std::string_view> Closest(std::string_view word, StringList candidates);
bool Contains(StringList list, std::string_view s);
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A problem: what is wrong, and how to fix it.
struct Problem {
  std::string message;
  std::string hint;
};

// Parses a duration, "<digits>[.<digits>]<unit>", exact to the nanosecond;
// on failure, the problem.
std::optional<Problem> ParseDuration(std::string_view text, Duration* out);

struct Pos {
  uint32_t line = 1;
  uint32_t column = 1;
  auto operator<=>(const Pos&) const = default;
};
Pos PosOf(const toml::source_region& region);

// Problems with positions; the earliest one is reported.
class Diagnostics {
 public:
  explicit Diagnostics(std::string_view origin) : origin_(origin) {}
  // Whether a problem at `pos` would be reported, so that an expensive hint
  // is only worked out when it matters.
  bool WouldReport(Pos pos) const { return count_ == 0 || pos < first_pos_; }
  void Add(Pos pos, std::string message, std::string hint);
  void Add(Pos pos, Problem problem) {
    Add(pos, std::move(problem.message), std::move(problem.hint));
  }
  size_t count() const { return count_; }
  // REQUIRES: count() > 0.
  absl::Status ToStatus() const;

 private:
  std::string_view origin_;
  size_t count_ = 0;
  Pos first_pos_;
  std::string first_message_;
  std::string first_hint_;
};

// The input's bounds: its size, and the dots of dotted keys on one line
// (toml++ nests a table per part and destroys them recursively).
std::optional<Problem> CheckInputBounds(std::string_view text, Pos* pos);
// toml++ parsing; a syntax error is recorded, with a hint.
std::optional<toml::table> ParseToml(std::string_view text, Diagnostics* diag);

std::string_view TypeName(const toml::node& node);

// One table's keys, in canonical order, for hints ("known keys here: ...",
// "\"brokers\" belongs in [cluster]").
struct SectionKeys {
  std::string_view section;  // "[cluster]", "the top level"
  std::vector<std::string_view> keys;
};

// Typed, range-checked reads of one table's keys.
class TableReader {
 public:
  // `path` names the table in messages ("" for the top level, "cluster",
  // "faults[2]"); `section` is its entry in `sections`, every table's keys
  // (for the hint that a key belongs elsewhere).
  TableReader(const toml::table& table, std::string path, std::string_view section,
              Diagnostics* diag, std::span<const SectionKeys> sections)
      : table_(table), path_(std::move(path)), section_(section), diag_(diag), sections_(sections) {
    PRODSIM_ASSERT(diag_ != nullptr);
  }
  // A reader of a sub-table, with this one's diagnostics and sections.
  TableReader Sub(const toml::table& table, std::string path, std::string_view section) const {
    return TableReader(table, std::move(path), section, diag_, sections_);
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
  std::span<const SectionKeys> sections_;
  std::vector<std::string_view> known_;
};

inline bool Clean(const Diagnostics& diag, size_t before) { return diag.count() == before; }

}  // namespace scenarios::internal

#endif  // PRODSIM_SCENARIOS_TOML_READER_H_
