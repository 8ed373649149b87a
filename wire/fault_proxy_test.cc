// The fault proxy against a fake upstream: a broker stand-in on a thread of
// its own (the codec's requests in, the codec's responses out), a client on
// another thread (TestClient), and the proxy on the test's event loop. Each
// test applies one fault and checks what the client sees, what the broker
// saw, and what the history says.
#include "wire/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/kafka/wire/codec.h"
#include "wire/event_loop.h"
#include "wire/kafka_client_testing.h"

namespace wire {
namespace {

using fault_models::Direction;
using kafka::ApiKey;
using kafka::BrokerId;
using sim::Duration;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Big-endian bytes, for frames written by hand.
void Put16(std::string& s, int16_t v) {
  s.push_back(static_cast<char>((static_cast<uint16_t>(v) >> 8) & 0xff));
  s.push_back(static_cast<char>(static_cast<uint16_t>(v) & 0xff));
}
void Put32(std::string& s, int32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    s.push_back(static_cast<char>((static_cast<uint32_t>(v) >> shift) & 0xff));
  }
}

struct Range {
  int16_t key, min, max;
};

// An ApiVersions response body (correlation id first) as a broker writes it
// for a request of `version`: flexible (compact array, tags) from v3.
std::string ApiVersionsBody(int32_t correlation_id, int16_t version, int16_t error,
                            const std::vector<Range>& ranges) {
  const bool flexible = version >= 3;
  std::string s;
  Put32(s, correlation_id);
  Put16(s, error);
  if (flexible) {
    s.push_back(static_cast<char>(ranges.size() + 1));  // one varint byte
  } else {
    Put32(s, static_cast<int32_t>(ranges.size()));
  }
  for (const Range& r : ranges) {
    Put16(s, r.key);
    Put16(s, r.min);
    Put16(s, r.max);
    if (flexible) s.push_back(0);  // no tags
  }
  Put32(s, 0);  // throttle time
  if (flexible) s.push_back(0);
  return s;
}

// What a Kafka 4.x broker offers (ApiVersions keys 0, 3, 18, 22).
const std::vector<Range> kKafka4Ranges = {{0, 3, 12}, {3, 0, 13}, {18, 0, 4}, {22, 0, 5}};

// A broker stand-in: accepts on 127.0.0.1 and answers each request frame
// (no size prefix) with what `answer` returns (a whole framed response), or
// with nothing. One thread, non-blocking sockets.
class FakeBroker {
 public:
  using Answer = std::function<std::optional<std::string>(const std::string& frame)>;

  explicit FakeBroker(Answer answer) : answer_(std::move(answer)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeBroker() {
    stop_ = true;
    thread_.join();
    for (Conn& c : conns_) close(c.fd);
    close(listen_fd_);
  }
  int port() const { return port_; }
  int requests() const { return requests_.load(); }

 private:
  struct Conn {
    int fd;
    kafka::wire::Framer framer;
  };

  void Serve() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const Conn& c : conns_) fds.push_back({c.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if ((fds[0].revents & POLLIN) != 0) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) conns_.push_back(Conn{fd, {}});
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        Conn& c = conns_[i - 1];
        char buf[65536];
        const ssize_t n = read(c.fd, buf, sizeof buf);
        if (n <= 0) continue;  // closed: left for the destructor
        c.framer.Append(std::string_view(buf, static_cast<size_t>(n)));
        while (c.framer.Ready()) {
          absl::StatusOr<std::optional<std::string>> frame = c.framer.Next();
          if (!frame.ok()) break;
          ++requests_;
          if (std::optional<std::string> out = answer_(**frame)) {
            [[maybe_unused]] const ssize_t w = send(c.fd, out->data(), out->size(), MSG_NOSIGNAL);
          }
        }
      }
    }
  }

  Answer answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<Conn> conns_;
  std::atomic<int> requests_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Answers ApiVersions as a Kafka 4.x broker and Produce with every
// partition written at the next offset.
std::optional<std::string> Kafka4Answer(const std::string& frame) {
  absl::StatusOr<kafka::wire::DecodedRequest> req = kafka::wire::DecodeRequest(frame);
  if (!req.ok() || req->message == nullptr) return std::nullopt;
  const kafka::wire::RequestHeader& h = req->header;
  if (h.api_key == static_cast<int16_t>(ApiKey::kApiVersions)) {
    return kafka::wire::Frame(ApiVersionsBody(h.correlation_id, h.api_version, 0, kKafka4Ranges));
  }
  const auto* produce = dynamic_cast<const kafka::ProduceRequest*>(req->message.get());
  if (produce == nullptr) return std::nullopt;
  static std::atomic<int64_t> next_offset{0};
  kafka::ProduceResponse resp;
  resp.api = ApiKey::kProduce;
  resp.is_response = true;
  resp.correlation_id = h.correlation_id;
  for (const auto& [tp, batch] : produce->batches) {
    kafka::ProducePartitionResponse p;
    p.base_offset = kafka::Offset(next_offset.fetch_add(1));
    resp.partitions[tp] = p;
  }
  return kafka::wire::EncodeResponse(h, resp, kafka::wire::EncodeContext{});
}

// The proxy on the test's loop, with a way for the client's thread to have
// something done on the loop's thread (the proxy is single-threaded).
class ProxyWorld {
 public:
  explicit ProxyWorld(int upstream_port) : proxy(loop, 1, &history) {
    EXPECT_TRUE(proxy.Listen().ok());
    if (upstream_port > 0) proxy.SetUpstream(BrokerId(0), upstream_port);
  }
  ~ProxyWorld() { proxy.CloseAll(); }

  int port() const { return proxy.port(BrokerId(0)); }

  // Runs the loop until `client` returns on its thread (at most 30 s).
  void Run(const std::function<void()>& client) {
    std::atomic<bool> done{false};
    std::thread t([&] {
      client();
      done = true;
    });
    const sim::Time give_up = loop.Now() + Duration::Seconds(30);
    while (!done && loop.Now() < give_up) {
      loop.Wait(loop.Now() + Duration::Millis(5), /*block=*/true);
      RunPosted();
    }
    t.join();
  }

  // Runs the loop until the proxy holds no connection (at most 5 s): a
  // client's close reaches the proxy after the client's thread is done.
  void Settle() {
    const sim::Time give_up = loop.Now() + Duration::Seconds(5);
    while (proxy.open_connections() > 0 && loop.Now() < give_up) {
      loop.Wait(loop.Now() + Duration::Millis(5), /*block=*/true);
    }
  }

  // From the client's thread: runs `fn` on the loop's thread, and returns
  // once it has run.
  void Do(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    posted_.push_back(std::move(fn));
    const size_t want = ++posted_count_;
    cv_.wait(lock, [&] { return ran_count_ >= want; });
  }

  EventLoop loop;
  kafka::History history;
  FaultProxy proxy;

 private:
  void RunPosted() {
    std::vector<std::function<void()>> fns;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fns.swap(posted_);
    }
    for (auto& fn : fns) fn();
    std::lock_guard<std::mutex> lock(mu_);
    ran_count_ += fns.size();
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> posted_;
  size_t posted_count_ = 0, ran_count_ = 0;
};

kafka::ApiVersionsRequest ApiVersions(int16_t version) {
  kafka::ApiVersionsRequest r;
  r.api = ApiKey::kApiVersions;
  r.version = version;
  return r;
}

int16_t ProduceMax(const kafka::Message& m) {
  const auto& r = dynamic_cast<const kafka::ApiVersionsResponse&>(m);
  for (const kafka::ApiVersionRange& range : r.api_keys) {
    if (range.api == ApiKey::kProduce) return range.max_version;
  }
  return -1;
}

TEST(CapProduceVersion, CapsEveryLayoutAndLeavesErrorsAlone) {
  // Goal: the one rewrite changes Produce's maximum, and nothing else, in
  // the flexible and the old layout; an error response is untouched.
  for (const int16_t version : {int16_t{0}, int16_t{2}, int16_t{3}, int16_t{4}}) {
    SCOPED_TRACE(version);
    std::string body = ApiVersionsBody(7, version, 0, kKafka4Ranges);
    EXPECT_TRUE(CapProduceVersion(body, version));
    std::string want = ApiVersionsBody(
        7, version, 0, {{0, 3, kProduceVersionMax}, {3, 0, 13}, {18, 0, 4}, {22, 0, 5}});
    EXPECT_EQ(body, want);
    EXPECT_FALSE(CapProduceVersion(body, version));  // already capped
  }
  std::string error = ApiVersionsBody(7, 0, 35, {{18, 0, 3}});
  const std::string before = error;
  EXPECT_FALSE(CapProduceVersion(error, 4));
  EXPECT_EQ(error, before);
  std::string truncated = ApiVersionsBody(7, 3, 0, kKafka4Ranges).substr(0, 12);
  EXPECT_FALSE(CapProduceVersion(truncated, 3));
}

TEST(FaultProxy, ForwardsCapsProduceAndRecordsProduce) {
  // Goal: requests and responses pass whole, the client sees Produce capped
  // at v8, and a Produce's batch and response land in the history.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  int16_t produce_max = -1;
  bool produced = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    absl::StatusOr<std::shared_ptr<kafka::Message>> versions = c->Call(3, ApiVersions(3));
    ASSERT_TRUE(versions.ok()) << versions.status();
    produce_max = ProduceMax(**versions);
    absl::StatusOr<std::shared_ptr<kafka::Message>> resp = c->Call(8, OneRecord("t", 42));
    ASSERT_TRUE(resp.ok()) << resp.status();
    produced = true;
  });
  w.Settle();
  EXPECT_EQ(produce_max, kProduceVersionMax);
  EXPECT_TRUE(produced);
  ASSERT_EQ(w.proxy.sent_batches().size(), 1u);
  EXPECT_EQ(w.proxy.sent_batches()[0].record_ids, std::vector<uint64_t>{42});
  ASSERT_EQ(w.history.responses.size(), 1u);
  const kafka::ResponseEvent& r = w.history.responses[0];
  EXPECT_EQ(r.api, ApiKey::kProduce);
  EXPECT_EQ(r.tp.topic, "t");
  EXPECT_EQ(r.error, kafka::ErrorCode::NONE);
  EXPECT_EQ(r.fate, kafka::ResponseFate::kSent);
  EXPECT_FALSE(r.duplicate);
  // Opened, then closed by the client (its end of stream, forwarded).
  ASSERT_EQ(w.history.connections.size(), 2u);
  EXPECT_TRUE(w.history.connections[0].opened);
  EXPECT_EQ(w.history.connections[1].why, "closed");
}

TEST(FaultProxy, LostResponseIsProcessedAndTheConnectionResets) {
  // Goal: lose_response lets the broker process the request, drops its
  // answer, resets the client, and records the response as lost.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  w.proxy.LoseResponses(BrokerId(0), ApiKey::kProduce, 1);
  bool failed = false, second_ok = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    failed = !c->Call(8, OneRecord("t", 1)).ok();
    // The fault is used up: a new connection is served.
    absl::StatusOr<TestClient> again = TestClient::Connect(w.port());
    ASSERT_TRUE(again.ok());
    second_ok = again->Call(8, OneRecord("t", 2)).ok();
  });
  EXPECT_TRUE(failed);
  EXPECT_TRUE(second_ok);
  EXPECT_EQ(broker.requests(), 2);
  ASSERT_EQ(w.history.responses.size(), 2u);
  EXPECT_EQ(w.history.responses[0].fate, kafka::ResponseFate::kLost);
  EXPECT_EQ(w.history.responses[1].fate, kafka::ResponseFate::kSent);
  bool reset = false;
  for (const kafka::ConnectionEvent& e : w.history.connections) {
    reset = reset || (!e.opened && e.why == "reset");
  }
  EXPECT_TRUE(reset);
}

TEST(FaultProxy, ResetClosesTheClientsConnection) {
  // Goal: a reset fault ends every open connection to the broker with an
  // RST the client sees.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  bool before = false, closed = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    before = c->Call(8, OneRecord("t", 1)).ok();
    w.Do([&] { w.proxy.Reset(BrokerId(0)); });
    closed = c->ClosedByPeer(Duration::Seconds(2));
  });
  EXPECT_TRUE(before);
  EXPECT_TRUE(closed);
  EXPECT_EQ(w.proxy.open_connections(), 0u);
}

TEST(FaultProxy, StallHoldsTheResponse) {
  // Goal: stall_response holds the next matching response for `extra`.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  w.proxy.StallResponses(BrokerId(0), ApiKey::kProduce, 1, Duration::Millis(400));
  double stalled = 0, plain = 0;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    Clock::time_point t = Clock::now();
    ASSERT_TRUE(c->Call(8, OneRecord("t", 1)).ok());
    stalled = SecondsSince(t);
    t = Clock::now();
    ASSERT_TRUE(c->Call(8, OneRecord("t", 2)).ok());
    plain = SecondsSince(t);
  });
  EXPECT_GE(stalled, 0.4);
  EXPECT_LT(plain, 0.4);
}

TEST(FaultProxy, CutHoldsBytesAndConnectsUntilTheHeal) {
  // Goal: across a cut nothing moves and a new connect hangs; on heal the
  // held request is answered and the connect goes through at its SYN
  // retransmission.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  bool answered_in_cut = true, answered_after = false, connected_in_cut = true;
  bool connected_after = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c->Call(8, OneRecord("t", 1)).ok());
    w.Do([&] { w.proxy.Cut(BrokerId(0), Direction::kBoth); });
    const kafka::wire::RequestHeader h = c->NextHeader(ApiKey::kProduce, 8);
    ASSERT_TRUE(c->Write(kafka::wire::EncodeRequest(h, OneRecord("t", 2))).ok());
    pollfd p{c->fd(), POLLIN, 0};
    answered_in_cut = poll(&p, 1, 400) > 0;
    // A connect during the cut: no SYN-ACK.
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(w.port()));
    connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    pollfd q{fd, POLLOUT, 0};
    connected_in_cut = poll(&q, 1, 300) > 0;
    w.Do([&] { w.proxy.Heal(BrokerId(0), Direction::kBoth); });
    answered_after = c->ReadFrame().ok();
    connected_after = poll(&q, 1, 5000) > 0;
    int error = -1;
    socklen_t len = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    connected_after = connected_after && error == 0;
    close(fd);
  });
  EXPECT_FALSE(answered_in_cut);
  EXPECT_FALSE(connected_in_cut);
  EXPECT_TRUE(answered_after);
  EXPECT_TRUE(connected_after);
  EXPECT_EQ(broker.requests(), 2);
}

TEST(FaultProxy, BlackholeSwallowsOpenConnectionsOnly) {
  // Goal: a blackholed connection gets no answer and no reset; a new
  // connection is served.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  bool answered = true, closed = true, fresh = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c->Call(8, OneRecord("t", 1)).ok());
    w.Do([&] { w.proxy.Blackhole(BrokerId(0)); });
    const kafka::wire::RequestHeader h = c->NextHeader(ApiKey::kProduce, 8);
    ASSERT_TRUE(c->Write(kafka::wire::EncodeRequest(h, OneRecord("t", 2))).ok());
    pollfd p{c->fd(), POLLIN, 0};
    answered = poll(&p, 1, 400) > 0;
    closed = answered;
    absl::StatusOr<TestClient> other = TestClient::Connect(w.port());
    ASSERT_TRUE(other.ok());
    fresh = other->Call(8, OneRecord("t", 3)).ok();
  });
  EXPECT_FALSE(answered);
  EXPECT_FALSE(closed);
  EXPECT_TRUE(fresh);
  EXPECT_EQ(broker.requests(), 2);  // the swallowed request never reached it
}

TEST(FaultProxy, LatencyDelaysEachRequestWhileItLasts) {
  // Goal: latency_spike holds each frame toward the broker for `extra`
  // while it lasts, and not after.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  double slow = 0, fast = 0;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    w.Do([&] {
      w.proxy.AddLatency(BrokerId(0), Direction::kToBroker, Duration::Millis(300),
                         Duration::Millis(500));
    });
    Clock::time_point t = Clock::now();
    ASSERT_TRUE(c->Call(8, OneRecord("t", 1)).ok());
    slow = SecondsSince(t);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    t = Clock::now();
    ASSERT_TRUE(c->Call(8, OneRecord("t", 2)).ok());
    fast = SecondsSince(t);
  });
  EXPECT_GE(slow, 0.3);
  EXPECT_LT(fast, 0.3);
}

TEST(FaultProxy, BrokerDownResetsTheClient) {
  // Goal: a client connecting while the broker's port refuses (a crashed
  // broker) sees its connection reset, and the history says so.
  int dead_port = 0;
  {
    FakeBroker gone([](const std::string&) { return std::nullopt; });
    dead_port = gone.port();
  }
  ProxyWorld w(dead_port);
  bool closed = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    closed = c->ClosedByPeer(Duration::Seconds(2));
  });
  EXPECT_TRUE(closed);
  ASSERT_EQ(w.history.connections.size(), 2u);
  EXPECT_EQ(w.history.connections[1].why, "reset");
}

TEST(FaultProxy, MalformedFrameClosesTheConnection) {
  // Goal: a negative frame size from the client closes its connection, as
  // Kafka does, and is counted as the client's.
  FakeBroker broker(Kafka4Answer);
  ProxyWorld w(broker.port());
  bool closed = false;
  w.Run([&] {
    absl::StatusOr<TestClient> c = TestClient::Connect(w.port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c->Write(std::string("\xff\xff\xff\xff", 4)).ok());
    closed = c->ClosedByPeer(Duration::Seconds(2));
  });
  EXPECT_TRUE(closed);
  EXPECT_EQ(w.proxy.problems().malformed_total, 1u);
}

}  // namespace
}  // namespace wire
