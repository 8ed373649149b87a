#include "sim/kafka/wire/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace kafka::wire {
namespace {

absl::Status Bad(std::string_view codec, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(codec), ": ", std::string(what)));
}

absl::Status TooLarge(std::string_view codec, size_t limit) {
  return Bad(codec, absl::StrCat("decompresses to more than ", limit, " bytes"));
}

// --- gzip (zlib's inflate with the gzip wrapper) ------------------------------

absl::StatusOr<std::string> Gunzip(std::string_view in, size_t limit) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Bad("gzip", "inflateInit2 failed");
  const std::unique_ptr<z_stream, int (*)(z_stream*)> cleanup(&z, inflateEnd);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::array<char, 16384> chunk;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    const size_t got = chunk.size() - z.avail_out;
    if (out.size() + got > limit) return TooLarge("gzip", limit);
    out.append(chunk.data(), got);
    if (rc == Z_STREAM_END) {
      // GZIPInputStream reads concatenated members.
      if (z.avail_in == 0) return out;
      if (inflateReset(&z) != Z_OK) return Bad("gzip", "inflateReset failed");
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) return Bad("gzip", "the stream ends early");
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Bad("gzip", z.msg != nullptr ? z.msg : "corrupt stream");
    }
  }
}

std::string Gzip(std::string_view in) {
  z_stream z{};
  PRODSIM_ASSERT(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                              Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  PRODSIM_ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// --- snappy (xerial's framing, or one raw block) ------------------------------

constexpr std::array<unsigned char, 8> kXerialMagic = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeaderBytes = 16;  // the magic, version and compatible version
constexpr size_t kXerialBlockBytes = size_t{32} * 1024;  // SnappyOutputStream's default block

uint32_t BigEndian32(std::string_view b) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[0])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[2])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[3]));
}

void AppendBigEndian32(uint32_t v, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((v >> shift) & 0xff));
}

absl::Status UnsnappyBlock(std::string_view block, size_t limit, std::string* out) {
  size_t n = 0;
  if (snappy_uncompressed_length(block.data(), block.size(), &n) != SNAPPY_OK) {
    return Bad("snappy", "a block's length cannot be read");
  }
  if (out->size() + n > limit) return TooLarge("snappy", limit);
  const size_t at = out->size();
  out->resize(at + n);
  if (snappy_uncompress(block.data(), block.size(), out->data() + at, &n) != SNAPPY_OK) {
    return Bad("snappy", "a corrupt block");
  }
  out->resize(at + n);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Unsnappy(std::string_view in, size_t limit) {
  std::string out;
  const bool framed = in.size() >= kXerialMagic.size() &&
                      std::memcmp(in.data(), kXerialMagic.data(), kXerialMagic.size()) == 0;
  if (!framed) {
    if (absl::Status st = UnsnappyBlock(in, limit, &out); !st.ok()) return st;
    return out;
  }
  if (in.size() < kXerialHeaderBytes) return Bad("snappy", "a framing header cut short");
  in.remove_prefix(kXerialHeaderBytes);
  while (!in.empty()) {
    if (in.size() < 4) return Bad("snappy", "a block length cut short");
    const uint32_t n = BigEndian32(in);
    in.remove_prefix(4);
    if (n > in.size()) return Bad("snappy", absl::StrCat("a block of ", n, " bytes cut short"));
    if (absl::Status st = UnsnappyBlock(in.substr(0, n), limit, &out); !st.ok()) return st;
    in.remove_prefix(n);
  }
  return out;
}

std::string Snappy(std::string_view in) {
  std::string out(reinterpret_cast<const char*>(kXerialMagic.data()), kXerialMagic.size());
  AppendBigEndian32(1, &out);  // version
  AppendBigEndian32(1, &out);  // compatible version
  for (size_t at = 0; at < in.size(); at += kXerialBlockBytes) {
    const std::string_view block = in.substr(at, kXerialBlockBytes);
    size_t n = snappy_max_compressed_length(block.size());
    std::string packed(n, '\0');
    PRODSIM_ASSERT(snappy_compress(block.data(), block.size(), packed.data(), &n) == SNAPPY_OK);
    AppendBigEndian32(static_cast<uint32_t>(n), &out);
    out.append(packed.data(), n);
  }
  return out;
}

// --- lz4 (the frame format) ----------------------------------------------------

absl::StatusOr<std::string> Unlz4(std::string_view in, size_t limit) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) {
    return Bad("lz4", "no decompression context");
  }
  const std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> ctx(
      raw, LZ4F_freeDecompressionContext);
  std::string out;
  std::array<char, 65536> chunk;
  size_t hint = 1;
  while (!in.empty()) {
    size_t out_n = chunk.size();
    size_t in_n = in.size();
    hint = LZ4F_decompress(ctx.get(), chunk.data(), &out_n, in.data(), &in_n, nullptr);
    if (LZ4F_isError(hint)) return Bad("lz4", LZ4F_getErrorName(hint));
    if (out.size() + out_n > limit) return TooLarge("lz4", limit);
    out.append(chunk.data(), out_n);
    in.remove_prefix(in_n);
    if (hint == 0 && !in.empty()) return Bad("lz4", "bytes after the frame's end");
    if (in_n == 0 && out_n == 0) return Bad("lz4", "no progress");
  }
  // Output still held in the context, without more input.
  for (;;) {
    size_t out_n = chunk.size();
    size_t in_n = 0;
    if (hint == 0) break;
    hint = LZ4F_decompress(ctx.get(), chunk.data(), &out_n, nullptr, &in_n, nullptr);
    if (LZ4F_isError(hint)) return Bad("lz4", LZ4F_getErrorName(hint));
    if (out.size() + out_n > limit) return TooLarge("lz4", limit);
    out.append(chunk.data(), out_n);
    if (out_n == 0) break;
  }
  if (hint != 0) return Bad("lz4", "the frame ends early");
  return out;
}

std::string Lz4(std::string_view in) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;  // KafkaLZ4BlockOutputStream's 64 KB
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  std::string out(LZ4F_compressFrameBound(in.size(), &prefs), '\0');
  const size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  PRODSIM_ASSERT(!LZ4F_isError(n));
  out.resize(n);
  return out;
}

// --- zstd ------------------------------------------------------------------------

absl::StatusOr<std::string> Unzstd(std::string_view in, size_t limit) {
  const std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(),
                                                                    ZSTD_freeDStream);
  if (ds == nullptr) return Bad("zstd", "no decompression stream");
  ZSTD_initDStream(ds.get());
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  std::string out;
  std::array<char, 65536> chunk;
  size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
    const size_t before = input.pos;
    rc = ZSTD_decompressStream(ds.get(), &output, &input);
    if (ZSTD_isError(rc)) return Bad("zstd", ZSTD_getErrorName(rc));
    if (out.size() + output.pos > limit) return TooLarge("zstd", limit);
    out.append(chunk.data(), output.pos);
    if (rc != 0 && input.pos == before && output.pos == 0)
      return Bad("zstd", "the frame ends early");
  }
  return out;
}

std::string Zstd(std::string_view in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  PRODSIM_ASSERT(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace

std::string_view CompressionName(int codec) {
  switch (codec) {
    case 0: return "none";
    case 1: return "gzip";
    case 2: return "snappy";
    case 3: return "lz4";
    case 4: return "zstd";
  }
  return "unknown";
}

absl::StatusOr<std::string> Decompress(int codec, std::string_view in, size_t limit) {
  switch (codec) {
    case 1: return Gunzip(in, limit);
    case 2: return Unsnappy(in, limit);
    case 3: return Unlz4(in, limit);
    case 4: return Unzstd(in, limit);
  }
  return absl::InvalidArgumentError(absl::StrCat("compression codec ", codec, " does not exist"));
}

std::string Compress(Compression codec, std::string_view in) {
  switch (codec) {
    case Compression::kGzip: return Gzip(in);
    case Compression::kSnappy: return Snappy(in);
    case Compression::kLz4: return Lz4(in);
    case Compression::kZstd: return Zstd(in);
    case Compression::kNone: break;
  }
  return std::string(in);
}

}  // namespace kafka::wire
