// wire_codec_fuzzer: bytes from a client, as the real-time world reads them
// from a socket, through kafka::wire. The input is split into frames by a
// Framer (a bad size ends the input, as it closes the connection); each
// frame goes through DecodeRequest. For a decoded request it checks:
//   - the codec agrees with itself: re-encoding the decoded request and
//     decoding that again gives the same bytes when encoded once more;
//   - a plausible answer (what the cluster model would say: the served
//     ranges for ApiVersions, the asked-for topics, a producer id, each
//     partition's `invalid` code or an offset) encodes into a frame whose
//     size prefix is its length, and decodes on the client's side.
// A broken check aborts with what broke. No I/O, no clock, no randomness.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/wire/codec.h"

namespace {

using kafka::ApiKey;
using kafka::Message;
using kafka::wire::DecodedRequest;

[[noreturn]] void Fail(const char* what, absl::string_view detail) {
  std::fprintf(stderr, "wire_codec_fuzzer: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

kafka::wire::EncodeContext Context() {
  kafka::wire::EncodeContext c;
  c.brokers[kafka::BrokerId(1)] = {"broker-1", 9092};
  c.brokers[kafka::BrokerId(2)] = {"broker-2", 9093};
  c.cluster_id = "prodsim";
  return c;
}

std::shared_ptr<Message> MetadataAnswer(const kafka::MetadataRequest& m) {
  auto r = kafka::NewResponse<kafka::MetadataResponse>(m);
  r->brokers = {{kafka::BrokerId(1), 0}, {kafka::BrokerId(2), 0}};
  r->controller = kafka::BrokerId(1);
  for (const std::string& name : m.topics) {
    kafka::TopicMetadata t{kafka::ErrorCode::NONE, name, {}};
    t.partitions.push_back({kafka::ErrorCode::NONE,
                            kafka::PartitionId(0),
                            kafka::BrokerId(1),
                            0,
                            {kafka::BrokerId(1), kafka::BrokerId(2)},
                            {kafka::BrokerId(1)}});
    r->topics.push_back(std::move(t));
  }
  return r;
}

std::shared_ptr<Message> ProduceAnswer(const kafka::ProduceRequest& m) {
  auto r = kafka::NewResponse<kafka::ProduceResponse>(m);
  int64_t next = 0;
  for (const auto& [tp, batch] : m.batches) {
    kafka::ProducePartitionResponse p;
    p.error = batch.invalid;
    if (batch.invalid == kafka::ErrorCode::NONE) {
      p.base_offset = kafka::Offset(next);
      next += batch.record_count();
      p.log_start_offset = kafka::Offset(0);
    }
    r->partitions[tp] = p;
  }
  return r;
}

// What the cluster model would answer, in outline.
std::shared_ptr<Message> Answer(const DecodedRequest& d) {
  const Message& m = *d.message;
  switch (m.api) {
    case ApiKey::kApiVersions: {
      auto r = kafka::NewResponse<kafka::ApiVersionsResponse>(m);
      if (d.header.api_version > 3) {
        r->error = kafka::ErrorCode::UNSUPPORTED_VERSION;
        r->api_keys = {{ApiKey::kApiVersions, 0, 3}};
      } else {
        r->api_keys = kafka::wire::ServedApiVersions();
      }
      return r;
    }
    case ApiKey::kMetadata: return MetadataAnswer(static_cast<const kafka::MetadataRequest&>(m));
    case ApiKey::kInitProducerId: {
      auto r = kafka::NewResponse<kafka::InitProducerIdResponse>(m);
      r->producer_id = kafka::ProducerId(1000);
      r->producer_epoch = kafka::Epoch(0);
      return r;
    }
    case ApiKey::kProduce: return ProduceAnswer(static_cast<const kafka::ProduceRequest&>(m));
  }
  return nullptr;
}

// Encode, decode, encode: the two encodings must be the same bytes.
void CheckRequestRoundTrip(const DecodedRequest& d) {
  if (d.message->api == ApiKey::kApiVersions && d.header.api_version > 3) return;  // not encodable
  const std::string once = kafka::wire::EncodeRequest(d.header, *d.message);
  absl::StatusOr<DecodedRequest> again =
      kafka::wire::DecodeRequest(std::string_view(once).substr(4));
  if (!again.ok()) Fail("a re-encoded request does not decode", again.status().message());
  if (again->message == nullptr) Fail("a re-encoded request is not served", again->not_served);
  if (!(again->header == d.header)) Fail("a re-encoded request's header differs", once);
  const std::string twice = kafka::wire::EncodeRequest(again->header, *again->message);
  if (once != twice) {
    Fail("encode(decode(encode(m))) differs from encode(m)", d.message->Describe());
  }
}

void CheckResponse(const DecodedRequest& d, const kafka::wire::EncodeContext& context) {
  const std::shared_ptr<Message> answer = Answer(d);
  if (answer == nullptr) Fail("no answer for", d.message->Describe());
  const std::string framed = kafka::wire::EncodeResponse(d.header, *answer, context);
  if (framed.size() < 8) Fail("a response frame shorter than its header", answer->Describe());
  const uint32_t size = (uint32_t{static_cast<uint8_t>(framed[0])} << 24) |
                        (uint32_t{static_cast<uint8_t>(framed[1])} << 16) |
                        (uint32_t{static_cast<uint8_t>(framed[2])} << 8) |
                        uint32_t{static_cast<uint8_t>(framed[3])};
  if (size != framed.size() - 4)
    Fail("a response's size prefix is not its length", answer->Describe());
  absl::StatusOr<std::shared_ptr<Message>> decoded =
      kafka::wire::DecodeResponse(d.header, std::string_view(framed).substr(4));
  if (!decoded.ok()) Fail("a response does not decode", decoded.status().message());
  if ((*decoded)->api != answer->api)
    Fail("a decoded response has another api", answer->Describe());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kafka::wire::EncodeContext context = Context();
  kafka::wire::Framer framer;
  framer.Append(std::string_view(reinterpret_cast<const char*>(data), size));
  // At most 64 frames: the input is at most a few kB, and each frame costs.
  for (int i = 0; i < 64; ++i) {
    absl::StatusOr<std::optional<std::string>> frame = framer.Next();
    if (!frame.ok() || !frame->has_value()) break;
    absl::StatusOr<DecodedRequest> d = kafka::wire::DecodeRequest(**frame);
    if (!d.ok()) {
      if (d.status().message().find('\n') != std::string_view::npos) {
        Fail("an error message of more than one line", d.status().message());
      }
      continue;
    }
    if (d->message == nullptr) {
      if (d->not_served.empty()) Fail("neither a message nor a reason", "");
      if (d->not_served.find('\n') != std::string::npos) {
        Fail("a not-served reason of more than one line", d->not_served);
      }
      continue;
    }
    if (d->message->correlation_id != d->header.correlation_id) {
      Fail("the message's correlation id is not the header's", d->message->Describe());
    }
    CheckRequestRoundTrip(*d);
    CheckResponse(*d, context);
  }
  return 0;
}
