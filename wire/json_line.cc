#include "wire/json_line.h"

#include "absl/strings/str_cat.h"
#include "wire/json.h"

namespace wire {

absl::StatusOr<JsonLine> JsonLine::Parse(std::string_view line) {
  absl::StatusOr<json::Value> v = json::Parse(line);
  if (!v.ok()) return v.status();
  if (v->kind != json::Value::Kind::kObject) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an object, got ", json::Av(json::KindName(v->kind))));
  }
  JsonLine out;
  for (size_t i = 0; i < v->keys.size(); ++i) {
    const json::Value& item = v->items[i];
    JsonValue value;
    switch (item.kind) {
      case json::Value::Kind::kNull: value = nullptr; break;
      case json::Value::Kind::kBool: value = item.boolean; break;
      case json::Value::Kind::kInt: value = item.integer; break;
      case json::Value::Kind::kString: value = item.string; break;
      case json::Value::Kind::kArray:
      case json::Value::Kind::kObject:
        return absl::InvalidArgumentError(
            absl::StrCat("\"", json::Av(v->keys[i]), "\" is ", json::Av(json::KindName(item.kind)),
                         "; an event line holds only strings, integers, booleans and null"));
    }
    out.fields_.emplace(v->keys[i], std::move(value));
  }
  return out;
}

std::string JsonQuote(std::string_view s) { return json::Quote(s); }

}  // namespace wire
