// Kafka's primitive encodings (TYPES/Type.java, ByteUtils.java in Kafka
// 2.6.3), private to the wire codec: a Writer that appends them to a string
// and a Reader that takes them from a frame.
//
// The Reader never reads past its input and never allocates more than the
// input's size: every length and count is checked against the bytes left
// before anything is read or reserved. Its first failure sticks (later reads
// return zeros and empty values), so a decoder reads a whole structure and
// tests ok() once; error() names the first field that failed and where.
#ifndef PRODSIM_SIM_KAFKA_WIRE_BYTES_H_
#define PRODSIM_SIM_KAFKA_WIRE_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/assert.h"

namespace kafka::wire {

// Debian's Abseil has its own string_view; StrCat and friends take that one.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

class Writer {
 public:
  void Int8(int8_t v) { out_.push_back(static_cast<char>(v)); }
  void Int16(int16_t v) { BigEndian(static_cast<uint16_t>(v), 2); }
  void Int32(int32_t v) { BigEndian(static_cast<uint32_t>(v), 4); }
  void Uint32(uint32_t v) { BigEndian(v, 4); }
  void Int64(int64_t v) { BigEndian(static_cast<uint64_t>(v), 8); }
  void Bool(bool v) { Int8(v ? 1 : 0); }
  void UnsignedVarint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  // Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ...
  void Varint(int32_t v) {
    const uint32_t u = static_cast<uint32_t>(v);
    UnsignedVarint((u << 1) ^ (v < 0 ? 0xffffffffu : 0u));
  }
  void Varlong(int64_t v) {
    const uint64_t u = static_cast<uint64_t>(v);
    UnsignedVarint((u << 1) ^ (v < 0 ? ~uint64_t{0} : uint64_t{0}));
  }
  void Raw(std::string_view bytes) { out_.append(bytes); }

  // A string field: an int16 length, or (flexible) an unsigned varint of
  // length + 1. REQUIRES: s.size() <= INT16_MAX.
  void String(std::string_view s, bool flexible) {
    PRODSIM_ASSERT(s.size() <= INT16_MAX);
    Length(s.size(), flexible);
    Raw(s);
  }
  void NullableString(const std::optional<std::string>& s, bool flexible) {
    if (s.has_value()) {
      String(*s, flexible);
    } else if (flexible) {
      UnsignedVarint(0);
    } else {
      Int16(-1);
    }
  }
  // An array's count: int32, or (flexible) an unsigned varint of count + 1.
  void ArrayCount(size_t n, bool flexible) {
    PRODSIM_ASSERT(n <= INT32_MAX);
    if (flexible) {
      UnsignedVarint(uint64_t{n} + 1);
    } else {
      Int32(static_cast<int32_t>(n));
    }
  }
  void NullArray(bool flexible) {
    if (flexible) {
      UnsignedVarint(0);
    } else {
      Int32(-1);
    }
  }
  // An empty tagged-field section (none of the served APIs defines a tag in
  // Kafka 2.6), written only in a flexible version.
  void Tags(bool flexible) {
    if (flexible) UnsignedVarint(0);
  }

  size_t size() const { return out_.size(); }
  // Overwrites the 4 bytes at `pos` (a length or CRC written as a
  // placeholder). REQUIRES: pos + 4 <= size().
  void PatchUint32(size_t pos, uint32_t v) {
    PRODSIM_ASSERT(pos + 4 <= out_.size());
    for (int i = 0; i < 4; ++i) {
      out_[pos + static_cast<size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    }
  }
  std::string_view view() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BigEndian(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void Length(size_t n, bool flexible) {
    if (flexible) {
      UnsignedVarint(uint64_t{n} + 1);
    } else {
      Int16(static_cast<int16_t>(n));
    }
  }

  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool ok() const { return error_.empty(); }
  // The first failure, e.g. "truncated at byte 12 reading acks"; empty if ok.
  const std::string& error() const { return error_; }
  absl::Status status() const {
    return ok() ? absl::OkStatus() : absl::InvalidArgumentError(error_);
  }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  // Records a failure (the first one sticks).
  void Fail(absl::string_view why) {
    if (ok()) error_ = absl::StrCat(why, " at byte ", pos_);
  }

  int8_t Int8(absl::string_view what) { return static_cast<int8_t>(BigEndian(1, what)); }
  int16_t Int16(absl::string_view what) { return static_cast<int16_t>(BigEndian(2, what)); }
  int32_t Int32(absl::string_view what) { return static_cast<int32_t>(BigEndian(4, what)); }
  uint32_t Uint32(absl::string_view what) { return static_cast<uint32_t>(BigEndian(4, what)); }
  int64_t Int64(absl::string_view what) { return static_cast<int64_t>(BigEndian(8, what)); }
  // Kafka reads any non-zero byte as true.
  bool Bool(absl::string_view what) { return Int8(what) != 0; }

  // At most `max_bytes` groups of 7 bits (5 for an int, 10 for a long, as
  // ByteUtils reads them); a longer one is malformed.
  uint64_t UnsignedVarint(absl::string_view what, int max_bytes = 5) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (!Need(1, what)) return 0;
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80) == 0) return v;
    }
    Fail(absl::StrCat("varint too long reading ", what));
    return 0;
  }
  int32_t Varint(absl::string_view what) {
    const uint32_t u = static_cast<uint32_t>(UnsignedVarint(what, 5));
    return static_cast<int32_t>((u >> 1) ^ (0u - (u & 1u)));
  }
  int64_t Varlong(absl::string_view what) {
    const uint64_t u = UnsignedVarint(what, 10);
    return static_cast<int64_t>((u >> 1) ^ (uint64_t{0} - (u & 1u)));
  }

  // `n` bytes as they are.
  std::string_view Raw(size_t n, absl::string_view what) {
    if (!Need(n, what)) return {};
    const std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  // A non-nullable string; null on the wire is malformed.
  std::string String(bool flexible, absl::string_view what) {
    std::optional<std::string> s = NullableString(flexible, what);
    if (!s.has_value()) {
      Fail(absl::StrCat("null ", what));
      return {};
    }
    return *std::move(s);
  }
  std::optional<std::string> NullableString(bool flexible, absl::string_view what) {
    int64_t n = 0;
    if (flexible) {
      n = static_cast<int64_t>(UnsignedVarint(what)) - 1;
      if (n > INT16_MAX) {
        Fail(absl::StrCat("string longer than 32767 bytes reading ", what));
        return std::nullopt;
      }
    } else {
      n = Int16(what);
    }
    // Kafka reads any negative length of a nullable string as null.
    if (!ok() || n < 0) return std::nullopt;
    return std::string(Raw(static_cast<size_t>(n), what));
  }
  // An array's count; nullopt for a null array (-1, or compact 0) and after
  // a failure. A count above the bytes left is malformed (no element takes
  // less than a byte), which bounds every loop and allocation.
  std::optional<size_t> ArrayCount(bool flexible, absl::string_view what) {
    int64_t n = 0;
    if (flexible) {
      n = static_cast<int64_t>(UnsignedVarint(what)) - 1;
    } else {
      n = Int32(what);
    }
    if (!ok() || n < 0) return std::nullopt;
    if (static_cast<uint64_t>(n) > remaining()) {
      Fail(absl::StrCat("count ", n, " above the bytes left reading ", what));
      return std::nullopt;
    }
    return static_cast<size_t>(n);
  }
  // A non-nullable array's count: null is malformed.
  size_t NonNullArrayCount(bool flexible, absl::string_view what) {
    const std::optional<size_t> n = ArrayCount(flexible, what);
    if (!n.has_value()) {
      Fail(absl::StrCat("null array ", what));
      return 0;
    }
    return *n;
  }
  // A tagged-field section (flexible versions only): unknown tags are
  // skipped, as Kafka does; tags out of order are malformed.
  void Tags(bool flexible, absl::string_view what) {
    if (!flexible) return;
    const uint64_t count = UnsignedVarint(what);
    int64_t previous = -1;
    for (uint64_t i = 0; i < count && ok(); ++i) {
      const int64_t tag = static_cast<int64_t>(UnsignedVarint(what));
      if (ok() && tag <= previous) Fail(absl::StrCat("out-of-order tag ", tag, " in ", what));
      previous = tag;
      const uint64_t size = UnsignedVarint(what);
      if (ok()) Raw(static_cast<size_t>(size), what);
    }
  }

 private:
  bool Need(size_t n, absl::string_view what) {
    if (!ok()) return false;
    if (n > remaining()) {
      Fail(absl::StrCat("truncated reading ", what, " (", n, " bytes wanted, ", remaining(),
                        " left)"));
      return false;
    }
    return true;
  }
  uint64_t BigEndian(size_t bytes, absl::string_view what) {
    if (!Need(bytes, what)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += bytes;
    return v;
  }

  std::string_view data_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace kafka::wire

#endif  // PRODSIM_SIM_KAFKA_WIRE_BYTES_H_
