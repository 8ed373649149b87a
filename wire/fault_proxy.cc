#include "wire/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "sim/kafka/wire/bytes.h"
#include "sim/kafka/wire/codec.h"
#include "sim/net/network.h"

namespace wire {

using fault_models::Direction;
using kafka::ApiKey;
using sim::Duration;
using sim::Time;

namespace {

// One read's bytes.
constexpr size_t kReadChunkBytes = size_t{64} * 1024;
// The listening sockets' backlog outside a connect hang.
constexpr int kBacklog = 128;

void CloseFd(int* fd, bool reset) {
  if (*fd < 0) return;
  if (reset) SetResetOnClose(*fd);
  close(*fd);
  *fd = -1;
}

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

int LocalPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  return ntohs(a.sin_port);
}

// A non-blocking connect to 127.0.0.1:`port`: the socket, or -1 (errno set)
// if it failed at once.
int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in a = Loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A request's header (api key, version, correlation id), or nullopt if the
// frame is too short to hold one.
std::optional<kafka::wire::RequestHeader> PeekHeader(std::string_view frame) {
  kafka::wire::Reader r(frame);
  kafka::wire::RequestHeader h;
  h.api_key = r.Int16("api key");
  h.api_version = r.Int16("api version");
  h.correlation_id = r.Int32("correlation id");
  if (!r.ok()) return std::nullopt;
  return h;
}

// Produce's first flexible version (request header v2, compact strings):
// Kafka's ProduceRequest.json, "flexibleVersions": "9+".
constexpr int16_t kProduceFirstFlexible = 9;
// InitProducerId's (InitProducerIdRequest.json: "2+").
constexpr int16_t kInitProducerIdFirstFlexible = 2;

// The acks of a Produce request of any version, read past its header and
// transactional id (ProduceRequest.json), or nullopt.
std::optional<int16_t> ProduceAcks(std::string_view frame, int16_t version) {
  const bool flexible = version >= kProduceFirstFlexible;
  kafka::wire::Reader r(frame);
  r.Raw(8, "request header");  // api key, version, correlation id
  // The client id: a plain nullable string in every header version.
  r.NullableString(/*flexible=*/false, "client id");
  r.Tags(flexible, "header tags");
  r.NullableString(flexible, "transactional id");
  const int16_t acks = r.Int16("acks");
  if (!r.ok()) return std::nullopt;
  return acks;
}

// The error code of an InitProducerId response (InitProducerIdResponse.json:
// throttle time, then the error), after its correlation id.
std::optional<kafka::ErrorCode> InitProducerIdError(std::string_view frame, int16_t version) {
  kafka::wire::Reader r(frame);
  r.Raw(4, "correlation id");
  r.Tags(version >= kInitProducerIdFirstFlexible, "header tags");  // response header v1
  r.Int32("throttle time");
  const int16_t error = r.Int16("error code");
  if (!r.ok()) return std::nullopt;
  return static_cast<kafka::ErrorCode>(error);
}

}  // namespace

bool CapProduceVersion(std::string& frame, int16_t request_version) {
  // ApiVersionsResponse.json: the header is always v0 (KIP-511); the body is
  // flexible from v3: error code, api keys (key, min, max, tags), throttle.
  const bool flexible = request_version >= 3;
  kafka::wire::Reader r(frame);
  r.Raw(4, "correlation id");
  if (r.Int16("error code") != 0 || !r.ok()) return false;
  const uint64_t n =
      flexible ? r.UnsignedVarint("api keys") - 1 : static_cast<uint64_t>(r.Int32("api keys"));
  bool changed = false;
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    const int16_t key = r.Int16("api key");
    r.Int16("min version");
    const size_t max_at = r.position();
    const int16_t max = r.Int16("max version");
    r.Tags(flexible, "tags");
    if (!r.ok()) return false;
    if (key != static_cast<int16_t>(ApiKey::kProduce) || max <= kProduceVersionMax) continue;
    frame[max_at] = static_cast<char>(kProduceVersionMax >> 8);
    frame[max_at + 1] = static_cast<char>(kProduceVersionMax & 0xff);
    changed = true;
  }
  return changed;
}

// A request the proxy forwarded that owes a response.
struct FaultProxy::Pending {
  kafka::wire::RequestHeader header;
  bool lose = false;
  Duration stall;
  std::shared_ptr<const kafka::ProduceRequest> produce;  // decoded, for the history
};

struct FaultProxy::Pair {
  // Bytes waiting to go one way: whole frames, each with the time it may go.
  struct Chunk {
    std::string bytes;
    Time due;  // loop time
    // The ResponseEvents of a response, marked late if it is never written.
    size_t events_begin = 0, events_end = 0;
  };
  uint64_t id = 0;
  kafka::BrokerId broker;
  int fd[2] = {-1, -1};  // by Side: the client's socket, the broker's
  uint32_t events[2] = {0, 0};
  bool connected = false;  // to the broker
  bool closed = false;
  bool blackholed = false;
  bool eof[2] = {false, false};   // by Side: that side closed its writing end
  kafka::wire::Framer framer[2];  // by the side the bytes come from
  std::deque<Chunk> toward[2];    // by the side the bytes go to
  size_t held[2] = {0, 0};        // bytes in toward[] and out[]
  std::string out[2];             // released, being written
  std::deque<Pending> in_flight;
  Time blackhole_reset = Time::Max();
};

namespace {
constexpr size_t Index(int side) { return static_cast<size_t>(side); }
}  // namespace

FaultProxy::FaultProxy(EventLoop& loop, int32_t brokers, kafka::History* history)
    : loop_(loop), history_(history), brokers_(static_cast<size_t>(brokers)) {
  PRODSIM_ASSERT(brokers >= 1);
  PRODSIM_ASSERT(history != nullptr);
}

FaultProxy::~FaultProxy() { CloseAll(); }

FaultProxy::BrokerState& FaultProxy::broker(kafka::BrokerId b) {
  PRODSIM_ASSERT(b.value >= 0);
  PRODSIM_ASSERT(static_cast<size_t>(b.value) < brokers_.size());
  return brokers_[static_cast<size_t>(b.value)];
}

Time FaultProxy::Now() const {
  const Time now = loop_.Now();
  return now < origin_ ? Time() : Time() + (now - origin_);
}

absl::Status FaultProxy::Listen() {
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) return absl::InternalError(absl::StrCat("timerfd: ", std::strerror(errno)));
  if (absl::Status st = loop_.Add(timer_fd_, EPOLLIN, [this](uint32_t) { OnTimer(); }); !st.ok()) {
    return st;
  }
  for (size_t i = 0; i < brokers_.size(); ++i) {
    BrokerState& bs = brokers_[i];
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    const sockaddr_in a = Loopback(0);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
        listen(fd, kBacklog) != 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return absl::InternalError(absl::StrCat("listening on 127.0.0.1 for broker ", i, ": ", why));
    }
    bs.listen_fd = fd;
    bs.port = LocalPort(fd);
    const kafka::BrokerId b(static_cast<int32_t>(i));
    if (absl::Status st = loop_.Add(fd, EPOLLIN, [this, b](uint32_t) { OnAccept(b); }); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

int FaultProxy::port(kafka::BrokerId b) const {
  PRODSIM_ASSERT(b.value >= 0 && static_cast<size_t>(b.value) < brokers_.size());
  return brokers_[static_cast<size_t>(b.value)].port;
}

std::string FaultProxy::bootstrap() const {
  std::vector<std::string> parts;
  for (const BrokerState& bs : brokers_) parts.push_back(absl::StrCat("127.0.0.1:", bs.port));
  return absl::StrJoin(parts, ",");
}

void FaultProxy::SetUpstream(kafka::BrokerId b, int port) {
  PRODSIM_ASSERT(port > 0 && port < 65536);
  broker(b).upstream_port = port;
}

void FaultProxy::Keep(std::vector<std::string>& kept, uint64_t& total, std::string text) {
  ++total;
  if (kept.size() < kProblemsKept) kept.push_back(absl::StrCat("t=", Now().ToString(), "s ", text));
}

// --- Accepting ---------------------------------------------------------------

void FaultProxy::OnAccept(kafka::BrokerId b) {
  BrokerState& bs = broker(b);
  const int filler_port = bs.filler_fd >= 0 ? LocalPort(bs.filler_fd) : 0;
  while (bs.listen_fd >= 0 && bs.hangs == 0) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    int fd = accept4(bs.listen_fd, reinterpret_cast<sockaddr*>(&peer), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == ECONNABORTED || errno == EINTR) continue;
      // EAGAIN: none pending. Anything else (out of descriptors) leaves the
      // connection in the backlog: the next round tries again.
      break;
    }
    if (filler_port != 0 && ntohs(peer.sin_port) == filler_port) {
      CloseFd(&fd, /*reset=*/true);
      continue;
    }
    Admit(b, fd);
  }
  Rearm();
}

void FaultProxy::Admit(kafka::BrokerId b, int fd) {
  ++accepted_;
  const BrokerState& bs = broker(b);
  if (bs.upstream_port == 0 || pairs_.size() >= kConnectionsMax) {
    // No broker to pair it with (not started, or the proxy is full): what a
    // host with nothing on the port does, as near as an accepted socket can.
    int closing = fd;
    CloseFd(&closing, /*reset=*/true);
    return;
  }
  auto p = std::make_shared<Pair>();
  p->id = next_id_++;
  p->broker = b;
  p->fd[Index(0)] = fd;
  pairs_[p->id] = p;
  history_->connections.push_back(kafka::ConnectionEvent{Now(), b, p->id, /*opened=*/true, ""});
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  p->fd[Index(1)] = ConnectLoopback(bs.upstream_port);
  for (int side = 0; side < 2; ++side) {
    if (p->fd[Index(side)] < 0) break;
    const Side s = static_cast<Side>(side);
    if (!loop_.Add(p->fd[Index(side)], 0, [this, p, s](uint32_t ev) { OnEvents(p, s, ev); }).ok()) {
      break;
    }
  }
  if (p->fd[Index(1)] < 0) {
    Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
    return;
  }
  UpdateEvents(*p);
}

void FaultProxy::OnConnected(const PairPtr& p) {
  int error = 0;
  socklen_t len = sizeof error;
  if (getsockopt(p->fd[Index(1)], SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  if (error != 0) {
    // The broker's port refused (the broker is down): the client sees its
    // connection reset.
    Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
    return;
  }
  p->connected = true;
  const int one = 1;
  setsockopt(p->fd[Index(1)], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Pump(p, Side::kBroker);
}

// --- Moving bytes ---------------------------------------------------------------

bool FaultProxy::CutToward(const Pair& p, Side to) const {
  const BrokerState& bs = brokers_[static_cast<size_t>(p.broker.value)];
  return to == Side::kBroker ? bs.cuts_to_broker > 0 : bs.cuts_from_broker > 0;
}

bool FaultProxy::Reading(const Pair& p, Side from) const {
  const Side to = from == Side::kClient ? Side::kBroker : Side::kClient;
  if (p.closed || p.blackholed || p.eof[static_cast<size_t>(from)]) return false;
  if (from == Side::kBroker && !p.connected) return false;
  return !CutToward(p, to) && p.held[static_cast<size_t>(to)] < kHeldBytesMax;
}

void FaultProxy::UpdateEvents(Pair& p) {
  if (p.closed) return;
  for (int side = 0; side < 2; ++side) {
    const Side s = static_cast<Side>(side);
    const size_t i = Index(side);
    uint32_t want = 0;
    if (s == Side::kBroker && !p.connected) {
      want = EPOLLOUT;
    } else {
      // EPOLLRDHUP only while reading: it stays set once the peer shut its
      // side, and a socket not read would report it for ever.
      if (Reading(p, s)) want |= uint32_t{EPOLLIN} | uint32_t{EPOLLRDHUP};
      if (!p.out[i].empty() && !p.blackholed && !CutToward(p, s)) want |= EPOLLOUT;
    }
    if (want == p.events[i]) continue;
    p.events[i] = want;
    loop_.Modify(p.fd[i], want).IgnoreError();
  }
}

void FaultProxy::OnEvents(const PairPtr& p, Side side, uint32_t events) {
  if (p->closed) return;
  if (side == Side::kBroker && !p->connected) {
    if ((events & (uint32_t{EPOLLOUT} | EPOLLERR | EPOLLHUP)) != 0) OnConnected(p);
  } else {
    if ((events & EPOLLOUT) != 0) Flush(p, side);
    if (p->closed) return;
    if (Reading(*p, side)) {
      if ((events & (uint32_t{EPOLLIN} | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) ReadFrom(p, side);
    } else if ((events & (uint32_t{EPOLLERR} | EPOLLHUP)) != 0) {
      // A socket not being read (a cut, a blackhole) still reports a reset:
      // the peer is gone. (Across a real partition the other side would
      // learn only after the heal; the proxy cannot keep a dead socket
      // without epoll reporting it for ever.)
      Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
    }
  }
  if (!p->closed) UpdateEvents(*p);
  Rearm();
}

void FaultProxy::ReadFrom(const PairPtr& p, Side side) {
  const size_t i = static_cast<size_t>(side);
  char buf[kReadChunkBytes];
  while (!p->closed && Reading(*p, side)) {
    const ssize_t n = read(p->fd[i], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {
      // ECONNRESET and the like: the peer reset; so is the other side.
      Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
      return;
    }
    if (n == 0) {
      // An orderly close: forwarded once what it sent before went on.
      p->eof[i] = true;
      Pump(p, side == Side::kClient ? Side::kBroker : Side::kClient);
      return;
    }
    p->framer[i].Append(std::string_view(buf, static_cast<size_t>(n)));
    while (!p->closed && p->framer[i].Ready()) {
      absl::StatusOr<std::optional<std::string>> frame = p->framer[i].Next();
      if (!frame.ok()) {
        const std::string why = absl::StrCat("broker-", p->broker.value, " connection ", p->id,
                                             ": ", frame.status().message());
        if (side == Side::kClient) {
          // Kafka closes a connection whose frame size is bad, unanswered.
          Keep(problems_.malformed_frames, problems_.malformed_total, why);
          Close(p, /*reset_client=*/false, /*reset_broker=*/false, "closed");
        } else {
          Keep(problems_.undecoded, problems_.undecoded_total,
               absl::StrCat(why, " (from the broker)"));
          Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
        }
        return;
      }
      PRODSIM_ASSERT(frame->has_value());
      if (side == Side::kClient) {
        OnRequest(p, **std::move(frame));
      } else {
        OnResponse(p, **std::move(frame));
      }
    }
  }
}

Duration FaultProxy::ExtraToward(kafka::BrokerId b, Side to) {
  BrokerState& bs = broker(b);
  const Time now = loop_.Now();
  std::erase_if(bs.slow, [now](const Slow& s) { return s.until <= now; });
  Duration extra;
  for (const Slow& s : bs.slow) {
    if (s.to_broker == (to == Side::kBroker)) extra += s.extra;
  }
  return extra;
}

void FaultProxy::OnRequest(const PairPtr& p, std::string frame) {
  const std::optional<kafka::wire::RequestHeader> header = PeekHeader(frame);
  if (!header.has_value()) {
    Keep(problems_.malformed_frames, problems_.malformed_total,
         absl::StrCat("broker-", p->broker.value, " connection ", p->id, ": a request of ",
                      frame.size(), " bytes has no header"));
    Close(p, /*reset_client=*/false, /*reset_broker=*/false, "closed");
    return;
  }
  Pending pending{*header, false, Duration(), nullptr};
  bool owes = true;
  if (header->api_key == static_cast<int16_t>(ApiKey::kProduce)) {
    owes = RecordProduceRequest(p, frame, pending);
  }
  if (owes) {
    // The broker's next requests of an API meet the faults armed for them,
    // in the order the faults were applied.
    std::deque<Armed>& armed = broker(p->broker).armed;
    for (auto it = armed.begin(); it != armed.end(); ++it) {
      if (static_cast<int16_t>(it->api) != header->api_key) continue;
      pending.lose = it->stall == Duration();
      pending.stall = it->stall;
      if (--it->count == 0) armed.erase(it);
      break;
    }
    p->in_flight.push_back(std::move(pending));
  }
  const size_t to = Index(1);
  std::string bytes = kafka::wire::Frame(frame);
  p->held[to] += bytes.size();
  p->toward[to].push_back(
      Pair::Chunk{std::move(bytes), loop_.Now() + ExtraToward(p->broker, Side::kBroker)});
  Pump(p, Side::kBroker);
}

bool FaultProxy::RecordProduceRequest(const PairPtr& p, std::string_view body, Pending& pending) {
  absl::StatusOr<kafka::wire::DecodedRequest> decoded = kafka::wire::DecodeRequest(body);
  const auto* produce =
      decoded.ok() ? dynamic_cast<const kafka::ProduceRequest*>(decoded->message.get()) : nullptr;
  if (produce == nullptr) {
    // Not read (a version above the codec's, a transactional id, a batch
    // the codec refuses): forwarded as it is; the broker judges it, and the
    // final logs still say what it wrote.
    Keep(
        problems_.undecoded, problems_.undecoded_total,
        absl::StrCat("broker-", p->broker.value, " connection ", p->id, ": Produce v",
                     pending.header.api_version, " request not decoded: ",
                     decoded.ok() ? decoded->not_served : std::string(decoded.status().message())));
    return ProduceAcks(body, pending.header.api_version).value_or(-1) != 0;
  }
  const Time now = Now();
  for (const auto& [tp, batch] : produce->batches) {
    if (batch.compression >= 0) {
      const auto codec = static_cast<size_t>(static_cast<uint8_t>(batch.compression));
      if (codec < history_->batches_by_compression.size()) {
        ++history_->batches_by_compression[codec];
      }
    }
    SentBatch sent{now, p->broker, tp, batch.producer_id, batch.producer_epoch, batch.base_sequence,
                   {}};
    for (const kafka::Record& r : batch.records) {
      if (r.record_id == 0) {
        Keep(problems_.records_without_id, problems_.without_id_total,
             absl::StrCat("a record for ", tp.ToString(),
                          " without a valid prodsim-id header (the client driver must write one "
                          "on every message)"));
      }
      sent.record_ids.push_back(r.record_id);
    }
    sent_.push_back(std::move(sent));
  }
  pending.produce = std::static_pointer_cast<const kafka::ProduceRequest>(decoded->message);
  return produce->acks != 0;
}

void FaultProxy::OnResponse(const PairPtr& p, std::string frame) {
  kafka::wire::Reader r(frame);
  const int32_t correlation_id = r.Int32("correlation id");
  if (p->in_flight.empty() || p->in_flight.front().header.correlation_id != correlation_id) {
    // Not the answer to the oldest request: forwarded, but nothing is
    // known of what it answers.
    Keep(problems_.undecoded, problems_.undecoded_total,
         absl::StrCat("broker-", p->broker.value, " connection ", p->id,
                      ": a response with correlation id ", correlation_id, " where ",
                      p->in_flight.empty()
                          ? std::string("none was owed")
                          : absl::StrCat(p->in_flight.front().header.correlation_id, " was next")));
    if (!p->in_flight.empty()) p->in_flight.pop_front();
  } else {
    const Pending pending = std::move(p->in_flight.front());
    p->in_flight.pop_front();
    if (pending.header.api_key == static_cast<int16_t>(ApiKey::kApiVersions)) {
      CapProduceVersion(frame, pending.header.api_version);
    }
    const auto [begin, end] = RecordResponse(p, pending, frame, pending.lose);
    if (pending.lose) {
      // lose_response: processed, and the connection breaks before the
      // answer arrives.
      if (count_fault_hook_) count_fault_hook_(Now());
      Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
      return;
    }
    if (pending.stall > Duration() && count_fault_hook_) count_fault_hook_(Now() + pending.stall);
    std::string bytes = kafka::wire::Frame(frame);
    p->held[Index(0)] += bytes.size();
    p->toward[Index(0)].push_back(Pair::Chunk{
        std::move(bytes), loop_.Now() + pending.stall + ExtraToward(p->broker, Side::kClient),
        begin, end});
    Pump(p, Side::kClient);
    return;
  }
  std::string bytes = kafka::wire::Frame(frame);
  p->held[Index(0)] += bytes.size();
  p->toward[Index(0)].push_back(
      Pair::Chunk{std::move(bytes), loop_.Now() + ExtraToward(p->broker, Side::kClient)});
  Pump(p, Side::kClient);
}

std::pair<size_t, size_t> FaultProxy::RecordResponse(const PairPtr& p, const Pending& pending,
                                                     std::string_view body, bool lost) {
  const size_t begin = history_->responses.size();
  kafka::ResponseEvent e;
  e.at = Now();
  e.broker = p->broker;
  e.correlation_id = pending.header.correlation_id;
  e.fate = lost ? kafka::ResponseFate::kLost : kafka::ResponseFate::kSent;
  if (pending.header.api_key == static_cast<int16_t>(ApiKey::kInitProducerId)) {
    if (std::optional<kafka::ErrorCode> error =
            InitProducerIdError(body, pending.header.api_version)) {
      e.api = ApiKey::kInitProducerId;
      e.error = *error;
      e.base_offset = kafka::Offset::kNone;
      history_->responses.push_back(std::move(e));
    }
    return {begin, history_->responses.size()};
  }
  if (pending.produce == nullptr) return {begin, begin};
  absl::StatusOr<std::shared_ptr<kafka::Message>> m =
      kafka::wire::DecodeResponse(pending.header, body);
  const auto* resp = m.ok() ? dynamic_cast<const kafka::ProduceResponse*>(m->get()) : nullptr;
  if (resp == nullptr) {
    Keep(problems_.undecoded, problems_.undecoded_total,
         absl::StrCat(
             "broker-", p->broker.value, " connection ", p->id, ": Produce v",
             pending.header.api_version, " response not decoded: ",
             m.ok() ? std::string("not a Produce response") : std::string(m.status().message())));
    return {begin, begin};
  }
  for (const auto& [tp, pr] : resp->partitions) {
    kafka::ResponseEvent r = e;
    r.api = ApiKey::kProduce;
    r.tp = tp;
    r.error = pr.error;
    r.base_offset = pr.base_offset;
    if (const auto batch = pending.produce->batches.find(tp);
        batch != pending.produce->batches.end()) {
      r.epoch = batch->second.producer_epoch;
      r.first_seq = batch->second.base_sequence;
      // Kept for a success too, until AddDump (real_cluster.h) has told a
      // duplicate answer from an append by the final log.
      for (const kafka::Record& rec : batch->second.records) r.record_ids.push_back(rec.record_id);
    }
    history_->responses.push_back(std::move(r));
  }
  return {begin, history_->responses.size()};
}

void FaultProxy::Pump(const PairPtr& p, Side to) {
  const size_t i = static_cast<size_t>(to);
  if (p->closed || p->blackholed || CutToward(*p, to)) return;
  if (to == Side::kBroker && !p->connected) return;
  const Time now = loop_.Now();
  while (!p->toward[i].empty() && p->toward[i].front().due <= now) {
    p->out[i] += p->toward[i].front().bytes;
    p->toward[i].pop_front();
  }
  Flush(p, to);
  if (p->closed) return;
  // The other side closed its writing end: closed here too once what it
  // sent before has gone on.
  const Side from = to == Side::kClient ? Side::kBroker : Side::kClient;
  if (p->eof[static_cast<size_t>(from)] && p->toward[i].empty() && p->out[i].empty()) {
    Close(p, /*reset_client=*/false, /*reset_broker=*/false, "closed");
  }
}

void FaultProxy::Flush(const PairPtr& p, Side to) {
  const size_t i = static_cast<size_t>(to);
  if (p->closed || p->blackholed || CutToward(*p, to)) return;
  std::string& out = p->out[i];
  size_t written = 0;
  while (written < out.size()) {
    const ssize_t n = send(p->fd[i], out.data() + written, out.size() - written, MSG_NOSIGNAL);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");  // that side is gone
    return;
  }
  out.erase(0, written);
  size_t held = out.size();
  for (const Pair::Chunk& c : p->toward[i]) held += c.bytes.size();
  p->held[i] = held;
  UpdateEvents(*p);
}

// --- Closing --------------------------------------------------------------------

void FaultProxy::Close(const PairPtr& pair, bool reset_client, bool reset_broker,
                       std::string_view why) {
  const PairPtr p = pair;  // NOLINT(performance-unnecessary-copy-initialization): the hold
  if (p->closed) return;
  p->closed = true;
  for (int side = 0; side < 2; ++side) {
    const size_t i = Index(side);
    if (p->fd[i] < 0) continue;
    loop_.Remove(p->fd[i]);
    CloseFd(&p->fd[i], side == 0 ? reset_client : reset_broker);
  }
  // Responses the proxy held that the client never got: late (stalled
  // past the connection's end), as the simulation marks them.
  for (const Pair::Chunk& c : p->toward[Index(0)]) {
    for (size_t e = c.events_begin; e < c.events_end; ++e) {
      history_->responses[e].fate = kafka::ResponseFate::kLate;
    }
  }
  for (int side = 0; side < 2; ++side) {
    p->toward[Index(side)].clear();
    std::string().swap(p->out[Index(side)]);
    p->framer[Index(side)] = kafka::wire::Framer();
  }
  p->in_flight.clear();
  pairs_.erase(p->id);
  history_->connections.push_back(
      kafka::ConnectionEvent{Now(), p->broker, p->id, /*opened=*/false, std::string(why)});
}

void FaultProxy::CloseAll() {
  while (!pairs_.empty()) {
    Close(pairs_.begin()->second, /*reset_client=*/true, /*reset_broker=*/true, "reset");
  }
  for (BrokerState& bs : brokers_) {
    if (bs.listen_fd >= 0) loop_.Remove(bs.listen_fd);
    CloseFd(&bs.listen_fd, /*reset=*/false);
    CloseFd(&bs.filler_fd, /*reset=*/true);
  }
  if (timer_fd_ >= 0) {
    loop_.Remove(timer_fd_);
    close(timer_fd_);
    timer_fd_ = -1;
  }
}

// --- Time ---------------------------------------------------------------------------

void FaultProxy::OnTimer() {
  uint64_t expirations = 0;
  [[maybe_unused]] const ssize_t n = read(timer_fd_, &expirations, sizeof expirations);
  armed_at_ = Time::Max();
  const Time now = loop_.Now();
  std::vector<PairPtr> pairs;
  for (const auto& [id, p] : pairs_) pairs.push_back(p);
  for (const PairPtr& p : pairs) {
    if (p->blackhole_reset <= now) {
      // tcp_retries2 ran out: TCP fails the connection (ETIMEDOUT).
      Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
      continue;
    }
    Pump(p, Side::kBroker);
    if (!p->closed) Pump(p, Side::kClient);
    if (!p->closed) UpdateEvents(*p);
  }
  Rearm();
}

void FaultProxy::Rearm() {
  if (timer_fd_ < 0) return;
  Time next = Time::Max();
  for (const auto& [id, p] : pairs_) {
    next = std::min(next, p->blackhole_reset);
    if (p->blackholed) continue;
    for (int side = 0; side < 2; ++side) {
      const Side s = static_cast<Side>(side);
      if (p->toward[Index(side)].empty() || CutToward(*p, s)) continue;
      if (s == Side::kBroker && !p->connected) continue;
      next = std::min(next, p->toward[Index(side)].front().due);
    }
  }
  if (next == armed_at_) return;
  armed_at_ = next;
  itimerspec spec{};
  if (next != Time::Max()) {
    const Duration in = next - loop_.Now();
    const int64_t at = MonotonicNanos() + std::max<int64_t>(in.nanos(), 1);
    spec.it_value.tv_sec = at / 1000000000;
    spec.it_value.tv_nsec = at % 1000000000;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

// --- Faults -------------------------------------------------------------------------

void FaultProxy::Reset(kafka::BrokerId b) {
  broker(b);
  std::vector<PairPtr> pairs;
  for (const auto& [id, p] : pairs_) {
    if (p->broker == b) pairs.push_back(p);
  }
  for (const PairPtr& p : pairs) Close(p, /*reset_client=*/true, /*reset_broker=*/true, "reset");
  Rearm();
}

void FaultProxy::LoseResponses(kafka::BrokerId b, ApiKey api, int32_t count) {
  PRODSIM_ASSERT(count >= 1);
  broker(b).armed.push_back(Armed{api, count, Duration()});
}

void FaultProxy::StallResponses(kafka::BrokerId b, ApiKey api, int32_t count, Duration extra) {
  PRODSIM_ASSERT(count >= 1);
  PRODSIM_ASSERT(extra > Duration());
  broker(b).armed.push_back(Armed{api, count, extra});
}

void FaultProxy::Cut(kafka::BrokerId b, Direction direction) {
  BrokerState& bs = broker(b);
  if (direction != Direction::kFromBroker) ++bs.cuts_to_broker;
  if (direction != Direction::kToBroker) ++bs.cuts_from_broker;
  // A connect across the cut gets no SYN-ACK back.
  SetHang(b, true);
  for (const auto& [id, p] : pairs_) UpdateEvents(*p);
  Rearm();
}

void FaultProxy::Heal(kafka::BrokerId b, Direction direction) {
  BrokerState& bs = broker(b);
  if (direction != Direction::kFromBroker) --bs.cuts_to_broker;
  if (direction != Direction::kToBroker) --bs.cuts_from_broker;
  PRODSIM_ASSERT(bs.cuts_to_broker >= 0);
  PRODSIM_ASSERT(bs.cuts_from_broker >= 0);
  SetHang(b, false);
  std::vector<PairPtr> pairs;
  for (const auto& [id, p] : pairs_) {
    if (p->broker == b) pairs.push_back(p);
  }
  // What the cut held goes on, in order.
  for (const PairPtr& p : pairs) {
    Pump(p, Side::kBroker);
    if (!p->closed) Pump(p, Side::kClient);
    if (!p->closed) UpdateEvents(*p);
  }
  Rearm();
}

void FaultProxy::Blackhole(kafka::BrokerId b) {
  broker(b);
  const Time reset_at = loop_.Now() + net::kTcpRetries2Timeout;
  for (const auto& [id, p] : pairs_) {
    if (p->broker != b || p->blackholed) continue;
    p->blackholed = true;
    p->blackhole_reset = reset_at;
    // What the hole swallowed: held requests and responses are lost.
    for (const Pair::Chunk& c : p->toward[Index(0)]) {
      for (size_t e = c.events_begin; e < c.events_end; ++e) {
        history_->responses[e].fate = kafka::ResponseFate::kLost;
      }
    }
    for (int side = 0; side < 2; ++side) {
      p->toward[Index(side)].clear();
      p->out[Index(side)].clear();
      p->held[Index(side)] = 0;
    }
    UpdateEvents(*p);
  }
  Rearm();
}

void FaultProxy::HangConnects(kafka::BrokerId b, bool hang) {
  SetHang(b, hang);
  Rearm();
}

void FaultProxy::SetHang(kafka::BrokerId b, bool hang) {
  BrokerState& bs = broker(b);
  bs.hangs += hang ? 1 : -1;
  PRODSIM_ASSERT(bs.hangs >= 0);
  if (bs.listen_fd < 0) return;
  if (hang && bs.hangs == 1) {
    // Linux drops a SYN while the listener's accept queue is full
    // (tcp_conn_request's sk_acceptq_is_full): a backlog of 0 holds one
    // connection, the proxy's own, and nothing is accepted until the heal.
    listen(bs.listen_fd, 0);
    loop_.Modify(bs.listen_fd, 0).IgnoreError();
    bs.filler_fd = ConnectLoopback(bs.port);
  } else if (!hang && bs.hangs == 0) {
    listen(bs.listen_fd, kBacklog);
    loop_.Modify(bs.listen_fd, EPOLLIN).IgnoreError();
    // The filler is recognised by its port when accepted, and dropped.
    OnAccept(b);
    CloseFd(&bs.filler_fd, /*reset=*/true);
  }
}

void FaultProxy::AddLatency(kafka::BrokerId b, Direction direction, Duration extra,
                            Duration lasting) {
  PRODSIM_ASSERT(extra > Duration());
  BrokerState& bs = broker(b);
  const Time until = loop_.Now() + lasting;
  if (direction != Direction::kFromBroker) bs.slow.push_back(Slow{true, extra, until});
  if (direction != Direction::kToBroker) bs.slow.push_back(Slow{false, extra, until});
}

void FaultProxy::DelayRequests(kafka::BrokerId b, Duration extra, Duration lasting) {
  AddLatency(b, Direction::kToBroker, extra, lasting);
}

}  // namespace wire
