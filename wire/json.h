// A small strict JSON reader and a string quoter, for the driver protocol
// of clients/README.md: one job line in, event lines out.
//
// The reader takes exactly one JSON value (objects, arrays, strings with
// every escape of RFC 8259 including surrogate pairs, integers, true, false,
// null) surrounded by optional whitespace. It rejects what the protocol
// never sends, so a mistake on prodsim's side shows up as a job_error and
// not as a silently different run: fractions and exponents, leading zeros,
// integers outside int64, raw control characters in strings, lone
// surrogates, duplicate object keys, nesting deeper than kDepthMax, and
// text longer than kTextBytesMax. Object members keep their order.
#ifndef PRODSIM_WIRE_JSON_H_
#define PRODSIM_WIRE_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wire::json {

// Abseil 20220623 as Debian builds it keeps its own string_view type, so a
// std::string_view crosses into absl::StrCat and back through these.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view Sv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

inline constexpr size_t kDepthMax = 16;
inline constexpr size_t kTextBytesMax = size_t{1} << 20;

struct Value {
  enum class Kind { kNull, kBool, kInt, kString, kArray, kObject };

  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  std::string string;
  // An array's elements, or an object's member values.
  std::vector<Value> items;
  // An object's member names, parallel to `items`; empty for an array.
  std::vector<std::string> keys;
  // The byte of the text where the value starts, for a reader's errors
  // about what the value says (FILE:LINE:COLUMN).
  size_t offset = 0;
};

// The name of a kind for error messages: "null", "a boolean", "an integer",
// "a string", "an array", "an object".
std::string_view KindName(Value::Kind kind);

// Parses `text` as one JSON value. Errors name the byte offset; with
// `error_at`, it is set to that offset too.
absl::StatusOr<Value> Parse(std::string_view text, size_t* error_at = nullptr);

// Appends `text` to `out` as a JSON string literal: `"` and `\` escaped,
// control characters as \n, \t, ... or \u00XX; other bytes as they are.
void AppendQuoted(std::string* out, std::string_view text);
std::string Quote(std::string_view text);

}  // namespace wire::json

#endif  // PRODSIM_WIRE_JSON_H_
