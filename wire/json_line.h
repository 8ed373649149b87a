// The driver protocol's event lines: one flat object per line (string,
// integer, boolean and null values; no nesting), as every client driver
// prints it (clients/README.md), read with wire/json.h's strict reader; and
// the quoting of the job line prodsim sends.
//
// Strict on purpose: a line that is not such an object is the client's
// garbage, counted by the client-output-garbage check, never guessed at.
#ifndef PRODSIM_WIRE_JSON_LINE_H_
#define PRODSIM_WIRE_JSON_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"

namespace wire {

using JsonValue = std::variant<std::nullptr_t, bool, int64_t, std::string>;

class JsonLine {
 public:
  // One object; an error says where the line departs from the grammar.
  static absl::StatusOr<JsonLine> Parse(std::string_view line);

  bool Has(std::string_view key) const { return fields_.contains(std::string(key)); }
  // The value of `key` if it has that type.
  std::optional<std::string> String(std::string_view key) const { return Get<std::string>(key); }
  std::optional<int64_t> Int(std::string_view key) const { return Get<int64_t>(key); }
  std::optional<bool> Bool(std::string_view key) const { return Get<bool>(key); }

 private:
  template <typename T>
  std::optional<T> Get(std::string_view key) const {
    auto it = fields_.find(std::string(key));
    if (it == fields_.end() || !std::holds_alternative<T>(it->second)) return std::nullopt;
    return std::get<T>(it->second);
  }

  absl::btree_map<std::string, JsonValue> fields_;
};

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view s);

}  // namespace wire

#endif  // PRODSIM_WIRE_JSON_LINE_H_
