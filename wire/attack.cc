// prodsim-attack: what a hostile or broken client does to `prodsim serve`,
// kind by kind, over real sockets (wire/attack_test.sh runs it against a
// serve, under ASan in the asan preset, and watches serve's memory):
//
//   prodsim-attack PORT [TOPIC]
//
// After each kind a good client must still be served: an ApiVersions round
// trip and a Produce of one record (acks=1) answered without error on a new
// connection. Prints "ok KIND" or "FAIL KIND: why" per kind; exits 0 if
// every kind was survived, 1 otherwise, 64 on bad arguments.
//
// The kinds: random bytes; bad frame sizes (negative, zero, past
// socket.request.max.bytes, a size that promises more than ever comes);
// bad headers (an unknown API, an unserved version, a client id longer
// than its frame); bad record batches (a CRC that does not match, a batch
// cut short); compressed batches (gzip, snappy, lz4, zstd: served); a
// request naming a 32,767-byte topic with 1,500 partitions; slow
// connections (a byte at a time); many connections (600 held open); RSTs
// mid-request and with answers unread; a pipelined flood whose answers are
// never read (up to 1,000,000 requests). Misbehaving client processes are
// wire/misbehaving_clients_test.sh.
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/wire/codec.h"
#include "wire/kafka_client_testing.h"

namespace {

using sim::Duration;
using wire::TestClient;

int g_port = 0;
std::string g_topic = "t";
uint64_t g_next_id = 1000000;  // ids of the good client's records

std::string Frame(std::string_view body) {
  const uint32_t n = htonl(static_cast<uint32_t>(body.size()));
  std::string out(reinterpret_cast<const char*>(&n), 4);
  out.append(body);
  return out;
}

std::string SizeOnly(int32_t size) {
  const uint32_t n = htonl(static_cast<uint32_t>(size));
  return std::string(reinterpret_cast<const char*>(&n), 4);
}

// The encoded frame (size prefix included) of a Produce v8 request.
std::string ProduceFrame(TestClient& c, const kafka::ProduceRequest& req) {
  return kafka::wire::EncodeRequest(c.NextHeader(kafka::ApiKey::kProduce, 8), req);
}

// `n` ApiVersions requests, framed one after another on `c`'s
// correlation ids: what a client pipelines without reading an answer.
std::string PipelinedApiVersions(TestClient& c, int n) {
  kafka::ApiVersionsRequest v;
  v.api = kafka::ApiKey::kApiVersions;
  std::string out;
  for (int k = 0; k < n; ++k) {
    out += kafka::wire::EncodeRequest(c.NextHeader(kafka::ApiKey::kApiVersions, 2), v);
  }
  return out;
}

// A good client: ApiVersions, then one record produced with acks=1 and
// answered without error, on a connection of its own.
absl::Status GoodClient(int8_t codec = 0) {
  absl::StatusOr<TestClient> c = TestClient::Connect(g_port);
  if (!c.ok()) return c.status();
  kafka::ApiVersionsRequest v;
  v.api = kafka::ApiKey::kApiVersions;
  if (absl::StatusOr<std::shared_ptr<kafka::Message>> r = c->Call(2, v); !r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat("ApiVersions: ", r.status().message()));
  }
  absl::StatusOr<std::shared_ptr<kafka::Message>> r =
      c->Call(8, wire::OneRecord(g_topic, g_next_id++, 1, codec));
  if (!r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat("Produce: ", r.status().message()));
  }
  const auto* resp = dynamic_cast<const kafka::ProduceResponse*>(r->get());
  if (resp == nullptr || resp->partitions.size() != 1) {
    return absl::InternalError("Produce: not one partition answered");
  }
  const kafka::ErrorCode e = resp->partitions.begin()->second.error;
  if (e != kafka::ErrorCode::NONE) {
    return absl::InternalError(absl::StrCat("Produce answered ", kafka::ErrorCodeName(e)));
  }
  return absl::OkStatus();
}

// Writes `bytes` on a new connection and waits up to `wait` for the server
// to close it or answer; the connection is then dropped.
void SendAndDrop(std::string_view bytes, Duration wait = Duration::Millis(500)) {
  absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
  if (!c.ok()) return;
  (void)c->Write(bytes);
  (void)c->ClosedByPeer(wait);
}

void RandomBytes() {
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 20; ++i) {
    std::string junk(size_t{64} * 1024, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    SendAndDrop(junk, Duration::Millis(200));
  }
}

void BadSizes() {
  SendAndDrop(SizeOnly(-16) + "hello");
  SendAndDrop(SizeOnly(0));
  SendAndDrop(SizeOnly(0x7fffffff) + "hello");  // past socket.request.max.bytes
  SendAndDrop(SizeOnly(200 << 20) + std::string(4096, 'x'));
  SendAndDrop(SizeOnly(64) + "short", Duration::Millis(100));  // promises more than comes
}

void BadHeaders() {
  // api_key, api_version, correlation id, client id (int16 length + bytes).
  auto header = [](int16_t api, int16_t version, int16_t client_id_len) {
    std::string h;
    auto put16 = [&](int16_t v) {
      const uint16_t n = htons(static_cast<uint16_t>(v));
      h.append(reinterpret_cast<const char*>(&n), 2);
    };
    put16(api);
    put16(version);
    const uint32_t corr = htonl(7);
    h.append(reinterpret_cast<const char*>(&corr), 4);
    put16(client_id_len);
    return h;
  };
  SendAndDrop(Frame(header(99, 0, 0)));      // no such API
  SendAndDrop(Frame(header(0, 99, 0)));      // Produce v99
  SendAndDrop(Frame(header(18, 2, 30000)));  // a client id longer than the frame
  SendAndDrop(Frame(header(3, 9, -5)));      // a negative client id length
  SendAndDrop(Frame(std::string(3, '\0')));  // shorter than any header
  SendAndDrop(Frame(header(22, 1, 0)));      // InitProducerId v1, no body
}

void BadBatches() {
  for (int variant = 0; variant < 3; ++variant) {
    absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
    if (!c.ok()) return;
    std::string f = ProduceFrame(*c, wire::OneRecord(g_topic, g_next_id++, 1));
    if (variant == 0) {
      f.back() = static_cast<char>(f.back() ^ 0x5a);  // in the record: the CRC no longer holds
    } else if (variant == 1) {
      f.resize(f.size() - 12);  // the batch cut short, the frame's size made to match
      const uint32_t n = htonl(static_cast<uint32_t>(f.size() - 4));
      std::memcpy(f.data(), &n, 4);
    } else {
      // A codec byte past zstd (attributes' low 3 bits) in an otherwise valid
      // request: the batch's attributes are after base offset (8), length (4),
      // leader epoch (4), magic (1), CRC (4); found from the end, as the
      // records follow them. The CRC then fails first: either answer will do.
      f[f.size() - 30] = static_cast<char>(f[f.size() - 30] | 0x07);
    }
    (void)c->Write(f);
    (void)c->ClosedByPeer(Duration::Millis(300));
  }
}

// Each codec a 2.6 broker takes, through the good client: served.
absl::Status Compressed() {
  for (int8_t codec = 1; codec <= 4; ++codec) {
    if (absl::Status st = GoodClient(codec); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("codec ", codec, ": ", st.message()));
    }
  }
  return absl::OkStatus();
}

void HugeTopic() {
  absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(5));
  if (!c.ok()) return;
  kafka::ProduceRequest req;
  req.api = kafka::ApiKey::kProduce;
  req.acks = 1;
  const std::string name(32767, 'x');
  for (int p = 0; p < 1500; ++p) {
    kafka::RecordBatch b;
    b.records.push_back(kafka::Record{"k", 1, sim::Time(), g_next_id++});
    req.batches[kafka::TopicPartition{name, kafka::PartitionId(p)}] = std::move(b);
  }
  for (int i = 0; i < 4; ++i) {
    (void)c->Write(ProduceFrame(*c, req));
  }
  (void)c->ClosedByPeer(Duration::Seconds(1));
}

void Slow() {
  std::vector<TestClient> conns;
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
    if (c.ok()) conns.push_back(*std::move(c));
  }
  TestClient probe = *TestClient::Connect(g_port);
  const std::string f = ProduceFrame(probe, wire::OneRecord(g_topic, g_next_id++, 1));
  // A byte at a time, 20 ms apart, for a second: never a whole frame.
  for (size_t i = 0; i < 50 && i < f.size(); ++i) {
    for (TestClient& c : conns) (void)c.WriteSome(std::string_view(f).substr(i, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Many() {
  std::vector<TestClient> conns;
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
    if (!c.ok()) break;
    conns.push_back(*std::move(c));
  }
  std::printf("  %zu connections opened\n", conns.size());
}

void Resets() {
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
    if (!c.ok()) return;
    const std::string f = ProduceFrame(*c, wire::OneRecord(g_topic, g_next_id++, 1));
    (void)c->Write(std::string_view(f).substr(0, f.size() / 2));
    c->Reset();
  }
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
    if (!c.ok()) return;
    (void)c->WriteSome(PipelinedApiVersions(*c, 1000));
    c->Reset();
  }
}

// 1,000,000 requests pipelined without reading an answer, for at most 5 s:
// back-pressure stops the writes once the bridge stops reading.
void Flood() {
  absl::StatusOr<TestClient> c = TestClient::Connect(g_port, Duration::Seconds(2));
  if (!c.ok()) return;
  const std::string batch = PipelinedApiVersions(*c, 1000);
  const int flags = fcntl(c->fd(), F_GETFL);
  fcntl(c->fd(), F_SETFL, flags | O_NONBLOCK);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t sent = 0, requests = 0;
  std::string_view rest;
  while (requests < 1000000 && std::chrono::steady_clock::now() < until) {
    if (rest.empty()) {
      rest = batch;
      requests += 1000;
    }
    const size_t n = c->WriteSome(rest);
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    sent += n;
    rest.remove_prefix(n);
  }
  std::printf("  %zu bytes of requests written before the writes stopped or 5 s\n", sent);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || !absl::SimpleAtoi(argv[1], &g_port) || g_port <= 0 ||
      g_port > 65535) {
    std::fprintf(stderr, "usage: prodsim-attack PORT [TOPIC]\n");
    return 64;
  }
  if (argc == 3) g_topic = argv[2];
  struct Kind {
    const char* name;
    std::function<absl::Status()> run;
  };
  auto plain = [](void (*f)()) {
    return [f] {
      f();
      return absl::OkStatus();
    };
  };
  const std::vector<Kind> kinds = {
      {"good-client", [] { return absl::OkStatus(); }},
      {"random-bytes", plain(RandomBytes)},
      {"bad-sizes", plain(BadSizes)},
      {"bad-headers", plain(BadHeaders)},
      {"bad-batches", plain(BadBatches)},
      {"compressed-batches", Compressed},
      {"huge-topic", plain(HugeTopic)},
      {"slow-connections", plain(Slow)},
      {"many-connections", plain(Many)},
      {"resets", plain(Resets)},
      {"flood-unread", plain(Flood)},
  };
  int failed = 0;
  for (const Kind& k : kinds) {
    const auto started = std::chrono::steady_clock::now();
    absl::Status st = k.run();
    if (st.ok()) st = GoodClient();
    const long ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - started)
                                          .count());
    if (st.ok()) {
      std::printf("ok   %s (%ld ms; a good client served after it)\n", k.name, ms);
    } else {
      std::printf("FAIL %s: %s\n", k.name, std::string(st.message()).c_str());
      ++failed;
    }
    std::fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}
