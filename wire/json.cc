#include "wire/json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "base/status_macros.h"

namespace wire::json {
namespace {

// A recursive-descent reader over one text. Each Read* starts at a
// non-space byte and leaves `pos_` just past what it read.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  absl::StatusOr<Value> ReadDocument() {
    SkipSpace();
    ASSIGN_OR_RETURN(Value value, ReadValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return value;
  }
  // The byte where ReadDocument's error was found.
  size_t error_at() const { return error_at_; }

 private:
  absl::Status Error(std::string_view what) const {
    error_at_ = pos_;
    return absl::InvalidArgumentError(absl::StrCat("JSON at byte ", pos_, ": ", Av(what)));
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<Value> ReadValue(size_t depth) {
    const size_t start = pos_;
    ASSIGN_OR_RETURN(Value value, ReadValueHere(depth));
    value.offset = start;
    return value;
  }

  absl::StatusOr<Value> ReadValueHere(size_t depth) {
    if (depth >= kDepthMax) return Error("nested too deeply");
    Value value;
    const char c = Peek();
    if (c == '{') return ReadObject(depth);
    if (c == '[') return ReadArray(depth);
    if (c == '"') {
      value.kind = Value::Kind::kString;
      ASSIGN_OR_RETURN(value.string, ReadString());
      return value;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = Value::Kind::kInt;
      ASSIGN_OR_RETURN(value.integer, ReadInteger());
      return value;
    }
    if (Consume("true")) {
      value.kind = Value::Kind::kBool;
      value.boolean = true;
      return value;
    }
    if (Consume("false")) {
      value.kind = Value::Kind::kBool;
      return value;
    }
    if (Consume("null")) return value;
    return AtEnd() ? Error("unexpected end of text") : Error("unexpected character");
  }

  absl::StatusOr<Value> ReadObject(size_t depth) {
    PRODSIM_ASSERT(Peek() == '{');
    ++pos_;
    Value object;
    object.kind = Value::Kind::kObject;
    SkipSpace();
    if (Consume("}")) return object;
    while (true) {
      SkipSpace();
      if (Peek() != '"') return Error("expected a member name");
      ASSIGN_OR_RETURN(std::string key, ReadString());
      for (const std::string& seen : object.keys) {
        if (seen == key) return Error(absl::StrCat("duplicate key \"", key, "\""));
      }
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      SkipSpace();
      ASSIGN_OR_RETURN(Value member, ReadValue(depth + 1));
      object.keys.push_back(std::move(key));
      object.items.push_back(std::move(member));
      SkipSpace();
      if (Consume("}")) return object;
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  absl::StatusOr<Value> ReadArray(size_t depth) {
    PRODSIM_ASSERT(Peek() == '[');
    ++pos_;
    Value array;
    array.kind = Value::Kind::kArray;
    SkipSpace();
    if (Consume("]")) return array;
    while (true) {
      SkipSpace();
      ASSIGN_OR_RETURN(Value element, ReadValue(depth + 1));
      array.items.push_back(std::move(element));
      SkipSpace();
      if (Consume("]")) return array;
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  // An optional '-', then 0 or a digit string without a leading zero; no
  // fraction, no exponent; within int64.
  absl::StatusOr<int64_t> ReadInteger() {
    const bool negative = Consume("-");
    if (Peek() < '0' || Peek() > '9') return Error("expected a digit");
    if (Peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      return Error("leading zero");
    }
    // Accumulate as a negative number: int64's range is one larger below.
    int64_t value = 0;
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    while (Peek() >= '0' && Peek() <= '9') {
      const int64_t digit = Peek() - '0';
      if (value < (kMin + digit) / 10) return Error("integer out of range");
      value = value * 10 - digit;
      ++pos_;
    }
    if (Peek() == '.' || Peek() == 'e' || Peek() == 'E') return Error("not an integer");
    if (negative) return value;
    if (value == kMin) return Error("integer out of range");
    return -value;
  }

  absl::StatusOr<uint32_t> ReadHex4() {
    if (pos_ + 4 > text_.size()) return Error("short \\u escape");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      uint32_t nibble = 0;
      if (h >= '0' && h <= '9') {
        nibble = static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        nibble = static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        nibble = static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Error("bad hex digit in \\u escape");
      }
      code = code * 16 + nibble;
    }
    return code;
  }

  // After "\u": one code point, a surrogate pair taken together.
  absl::StatusOr<uint32_t> ReadCodePoint() {
    ASSIGN_OR_RETURN(uint32_t high, ReadHex4());
    if (high >= 0xDC00 && high <= 0xDFFF) return Error("lone low surrogate");
    if (high < 0xD800 || high > 0xDBFF) return high;
    if (!Consume("\\u")) return Error("lone high surrogate");
    ASSIGN_OR_RETURN(uint32_t low, ReadHex4());
    if (low < 0xDC00 || low > 0xDFFF) return Error("high surrogate without a low one");
    return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
  }

  absl::Status ReadEscape(std::string* out) {
    if (AtEnd()) return Error("unexpected end of text in an escape");
    const char e = text_[pos_++];
    switch (e) {
      case '"': out->push_back('"'); return absl::OkStatus();
      case '\\': out->push_back('\\'); return absl::OkStatus();
      case '/': out->push_back('/'); return absl::OkStatus();
      case 'b': out->push_back('\b'); return absl::OkStatus();
      case 'f': out->push_back('\f'); return absl::OkStatus();
      case 'n': out->push_back('\n'); return absl::OkStatus();
      case 'r': out->push_back('\r'); return absl::OkStatus();
      case 't': out->push_back('\t'); return absl::OkStatus();
      case 'u': break;
      default: return Error("unknown escape");
    }
    ASSIGN_OR_RETURN(uint32_t code, ReadCodePoint());
    AppendUtf8(out, code);
    return absl::OkStatus();
  }

  static void AppendUtf8(std::string* out, uint32_t code) {
    PRODSIM_ASSERT(code <= 0x10FFFF);
    auto byte = [](uint32_t b) { return static_cast<char>(static_cast<unsigned char>(b)); };
    if (code < 0x80) {
      out->push_back(byte(code));
    } else if (code < 0x800) {
      out->push_back(byte(0xC0 | (code >> 6)));
      out->push_back(byte(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(byte(0xE0 | (code >> 12)));
      out->push_back(byte(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(byte(0x80 | (code & 0x3F)));
    } else {
      out->push_back(byte(0xF0 | (code >> 18)));
      out->push_back(byte(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(byte(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(byte(0x80 | (code & 0x3F)));
    }
  }

  absl::StatusOr<std::string> ReadString() {
    PRODSIM_ASSERT(Peek() == '"');
    ++pos_;
    std::string out;
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c == '\\') {
        RETURN_IF_ERROR(ReadEscape(&out));
      } else {
        out.push_back(c);
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  mutable size_t error_at_ = 0;  // set by Error
};

}  // namespace

std::string_view KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNull: return "null";
    case Value::Kind::kBool: return "a boolean";
    case Value::Kind::kInt: return "an integer";
    case Value::Kind::kString: return "a string";
    case Value::Kind::kArray: return "an array";
    case Value::Kind::kObject: return "an object";
  }
  PRODSIM_ASSERT_MSG(false, "unknown JSON kind");
}

absl::StatusOr<Value> Parse(std::string_view text, size_t* error_at) {
  if (text.size() > kTextBytesMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON text of ", text.size(), " bytes, more than ", kTextBytesMax));
  }
  Reader reader(text);
  absl::StatusOr<Value> value = reader.ReadDocument();
  if (!value.ok() && error_at != nullptr) *error_at = reader.error_at();
  return value;
}

void AppendQuoted(std::string* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      default:
        if (u < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 0xF]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string Quote(std::string_view text) {
  std::string out;
  AppendQuoted(&out, text);
  return out;
}

}  // namespace wire::json
