#include "wire/bridge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"

namespace wire {

using kafka::wire::DecodedRequest;
using kafka::wire::RequestHeader;

struct Bridge::Conn {
  uint64_t id = 0;
  kafka::BrokerId broker;
  int fd = -1;
  uint64_t virtual_id = 0;  // the client's id of a virtual connection; 0: a socket
  bool client_closed = false;
  kafka::wire::Framer framer;
  // The simulated connection, once the dial succeeded; requests decoded
  // before that wait in `early`.
  net::Endpoint ep;
  bool dialing = true;
  std::vector<std::shared_ptr<kafka::Message>> early;
  // The requests sent on (or waiting in `early`) and not yet retired, in
  // order: one that owes a response (its header set) until the response is
  // written out, an acks=0 one until the broker has taken it. The broker
  // model answers a connection's requests one at a time, in order.
  struct InFlight {
    std::optional<RequestHeader> header;
    size_t bytes = 0;  // what the decoded request holds (RequestBytes)
  };
  std::deque<InFlight> in_flight;
  size_t in_flight_bytes = 0;
  uint64_t sent = 0;     // requests given to `ep` (those of `early` once sent)
  uint64_t retired = 0;  // requests popped from `in_flight`
  std::string out;       // bytes not yet written to the socket
  bool closed = false;
  bool reading = true;  // EPOLLIN armed
  bool want_write = false;
  uint64_t active = 0;  // Bridge::activity_ at its last read
  size_t held = 0;      // its bytes as last counted in Bridge::held_total_
};

namespace {

// How long a simulated dial may take before the bridge gives up and resets
// the socket. The kernel completed the real handshake at once, so the
// client believes it is connected; over a partitioned path a real connect
// would instead wait for a SYN retransmission (the first comes after 1 s,
// RFC 6298's initial RTO) and fail or succeed then. One second stands for
// that first retransmission: the client sees its connection reset and
// dials again, as it would see a connect time out.
constexpr sim::Duration kDialTimeout = sim::Duration::Seconds(1);
// A virtual dial waits as a real connect does (the kernel's SYN
// retransmissions, sim/net's kSynTimeout) unless the client gives up first
// and closes it.
constexpr sim::Duration kVirtualDialTimeout = sim::Duration::Seconds(300);

// One read's bytes: the most the bridge reads past a whole frame that must
// wait.
constexpr size_t kReadChunkBytes = size_t{64} * 1024;

// One history event or log entry with its containers' bookkeeping, for the
// estimates below (the largest event struct is about 130 bytes; the rest
// is the allocator's and the map's overhead).
constexpr size_t kEventBytes = 256;

bool NoResponse(const kafka::Message& m) {
  const auto* p = dynamic_cast<const kafka::ProduceRequest*>(&m);
  return p != nullptr && p->acks == 0;
}

// What a decoded request holds in memory while it is in flight: its frame's
// size stands for the fixed parts, and a Produce request's records, keys and
// partition entries come on top (a record of 7 bytes on the wire is a
// 56-byte Record).
size_t RequestBytes(const kafka::Message& m, size_t frame_bytes) {
  size_t bytes = frame_bytes + kEventBytes;
  if (const auto* p = dynamic_cast<const kafka::ProduceRequest*>(&m)) {
    for (const auto& [tp, batch] : p->batches) {
      bytes += kEventBytes + tp.topic.size() + batch.invalid_why.size();
      bytes += batch.records.size() * sizeof(kafka::Record);
      for (const kafka::Record& r : batch.records) bytes += r.key.size();
    }
  }
  return bytes;
}

// The most serving `m` can add to the brokers' logs and the history: per
// partition an append, a response and a note, on every broker (followers
// copy the batch); per record its copy in each log (key included) and its
// id in the append, the response and the final log.
size_t WorldCharge(const kafka::Message& m, int32_t brokers) {
  const auto* p = dynamic_cast<const kafka::ProduceRequest*>(&m);
  if (p == nullptr) return kEventBytes;
  size_t bytes = 0;
  for (const auto& [tp, batch] : p->batches) {
    bytes += 3 * (kEventBytes + tp.topic.size()) + batch.invalid_why.size();
    for (const kafka::Record& r : batch.records) {
      bytes += sizeof(kafka::Record) + r.key.size() + 3 * sizeof(uint64_t);
    }
  }
  return bytes * static_cast<size_t>(std::max(brokers, 1));
}

const char* LimitName(size_t i) {
  static constexpr const char* kNames[] = {
      "accept paused for want of file descriptors", "connections closed at the connection limit",
      "connections closed over the bytes limit", "runs stopped at the history limit"};
  return kNames[i];
}

}  // namespace

Bridge::Bridge(EventLoop& loop, sim::Scheduler& sched, net::Network& network,
               kafka::Cluster& cluster, net::NodeId client_node, BridgeLimits limits)
    : loop_(loop),
      sched_(sched),
      network_(network),
      cluster_(cluster),
      client_node_(client_node),
      limits_(limits) {
  PRODSIM_ASSERT(limits_.connections_max >= 1);
  PRODSIM_ASSERT(limits_.in_flight_max >= 1);
  loop_.set_before_wait([this] { ResumeMuted(); });
}

Bridge::~Bridge() {
  loop_.set_before_wait(nullptr);
  CloseAll();
}

std::string Bridge::Now() const { return absl::StrCat("t=", sched_.now().ToString(), "s"); }

void Bridge::Keep(Kept& kept, std::string text) {
  ++kept.total;
  if (kept.first.size() < limits_.problems_kept) kept.first.push_back(std::move(text));
}

void Bridge::Note(std::string text) {
  if (say_) say_(text);
  if (history_ != nullptr)
    history_->notes.push_back(kafka::NoteEvent{sched_.now(), std::move(text)});
}

void Bridge::Reached(Limit limit, std::string text) {
  const size_t i = static_cast<size_t>(limit);
  Keep(problems_.limits, absl::StrCat(Now(), " ", text));
  if (reached_[i]++ == 0) {
    Note(absl::StrCat("prodsim's wire limit: ", text, " (said once; the count comes at the end)"));
  }
}

std::vector<std::string> Bridge::Summary() const {
  std::vector<std::string> lines;
  const auto add = [&lines](const char* what, const Kept& k) {
    if (k.empty()) return;
    lines.push_back(absl::StrCat(what, ": ", k.total, "; the first: ", k.first.front()));
  };
  add("malformed frames (connection closed)", problems_.malformed_frames);
  add("requests not served (connection closed)", problems_.not_served);
  add("records without a prodsim-id header (connection closed, not appended)",
      problems_.records_without_id);
  add("harness errors", problems_.harness_errors);
  for (size_t i = 0; i < reached_.size(); ++i) {
    if (reached_[i] > 0) lines.push_back(absl::StrCat(LimitName(i), ": ", reached_[i]));
  }
  return lines;
}

absl::Status Bridge::Listen() {
  for (int32_t i = 0; i < cluster_.broker_count(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return absl::InternalError(absl::StrCat("listening on 127.0.0.1 for broker-", i, ": ", why));
    }
    listeners_[i] = fd;
    context_.brokers[kafka::BrokerId(i)] =
        kafka::wire::BrokerAddress{"127.0.0.1", static_cast<int32_t>(ntohs(addr.sin_port))};
    const kafka::BrokerId broker(i);
    if (absl::Status st =
            loop_.Add(fd, EPOLLIN, [this, broker, fd](uint32_t) { OnAccept(broker, fd); });
        !st.ok()) {
      return st;
    }
  }
  context_.cluster_id = "prodsim";
  return absl::OkStatus();
}

std::string Bridge::bootstrap() const {
  std::vector<std::string> parts;
  for (const auto& [id, addr] : context_.brokers)
    parts.push_back(absl::StrCat(addr.host, ":", addr.port));
  return absl::StrJoin(parts, ",");
}

void Bridge::ListenVirtual(VirtualSink* sink) {
  PRODSIM_ASSERT(sink != nullptr && listeners_.empty());
  sink_ = sink;
  loop_.set_before_wait(nullptr);
  for (int32_t i = 0; i < cluster_.broker_count(); ++i) {
    context_.brokers[kafka::BrokerId(i)] = kafka::wire::BrokerAddress{"127.0.0.1", i + 1};
  }
  context_.cluster_id = "prodsim";
}

bool Bridge::VirtualDial(uint64_t conn, std::string_view host, int port) {
  PRODSIM_ASSERT(sink_ != nullptr);
  if (conn == 0 || virtual_ids_.contains(conn)) return false;
  virtual_ids_[conn] = 0;
  ++accepted_;
  std::optional<kafka::BrokerId> broker;
  for (const auto& [id, addr] : context_.brokers) {
    if (addr.host == host && addr.port == port) broker = id;
  }
  if (!broker) {
    // No broker there: a host where nothing listens answers with an RST.
    sink_->Closed(conn, "refused");
    return true;
  }
  if (conns_.size() >= limits_.connections_max) EvictIdlest();
  auto c = std::make_shared<Conn>();
  c->id = next_conn_++;
  c->broker = *broker;
  c->virtual_id = conn;
  c->active = ++activity_;
  conns_[c->id] = c;
  virtual_ids_[conn] = c->id;
  world_bytes_ += 2 * kEventBytes;
  if (history_ != nullptr) {
    history_->connections.push_back(
        kafka::ConnectionEvent{sched_.now(), c->broker, c->id, /*opened=*/true, ""});
  }
  sched_.Go(absl::StrCat("wire.conn", c->id), Pump(c), {.daemon = true, .world = true});
  return true;
}

bool Bridge::VirtualWrite(uint64_t conn, std::string_view bytes) {
  auto id = virtual_ids_.find(conn);
  if (id == virtual_ids_.end()) return false;
  auto it = conns_.find(id->second);
  if (it == conns_.end()) return true;  // closed: TCP drops what comes after a reset
  const ConnPtr c = it->second;
  Received(c, bytes);
  return true;
}

bool Bridge::VirtualClose(uint64_t conn) {
  auto id = virtual_ids_.find(conn);
  if (id == virtual_ids_.end()) return false;
  auto it = conns_.find(id->second);
  if (it == conns_.end()) return true;
  const ConnPtr c = it->second;
  c->client_closed = true;
  Close(c, /*reset=*/false);
  return true;
}

void Bridge::OnAccept(kafka::BrokerId broker, int listen_fd) {
  while (!accept_paused_) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(broker, fd);
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // none pending
    // A connection reset while in the backlog, or a signal: the next one.
    if (errno == ECONNABORTED || errno == EINTR) continue;
    // Anything else (EMFILE, ENFILE, ENOBUFS, ENOMEM) leaves the connection
    // in the backlog and the listener readable: trying again at once would
    // spin, so accepting pauses.
    PauseAccepting(errno);
    return;
  }
}

void Bridge::Admit(kafka::BrokerId broker, int fd) {
  ++accepted_;
  const net::NodeId node = cluster_.broker(broker).node();
  if (!network_.NodeUp(node)) {
    SetResetOnClose(fd);
    close(fd);
    return;
  }
  if (conns_.size() >= limits_.connections_max) EvictIdlest();
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto c = std::make_shared<Conn>();
  c->id = next_conn_++;
  c->broker = broker;
  c->fd = fd;
  c->active = ++activity_;
  conns_[c->id] = c;
  // Two connection events in the history (opened, closed).
  world_bytes_ += 2 * kEventBytes;
  if (history_ != nullptr) {
    history_->connections.push_back(
        kafka::ConnectionEvent{sched_.now(), broker, c->id, /*opened=*/true, ""});
  }
  if (absl::Status st = loop_.Add(fd, uint32_t{EPOLLIN} | uint32_t{EPOLLRDHUP},
                                  [this, c](uint32_t events) { OnSocket(c, events); });
      !st.ok()) {
    Keep(problems_.harness_errors, absl::StrCat(Now(), " ", st.message()));
    Close(c, /*reset=*/true);
    return;
  }
  sched_.Go(absl::StrCat("wire.conn", c->id), Pump(c), {.daemon = true, .world = true});
}

void Bridge::PauseAccepting(int error) {
  accept_paused_ = true;
  for (const auto& [id, fd] : listeners_) loop_.Modify(fd, 0).IgnoreError();
  Reached(
      Limit::kDescriptors,
      absl::StrCat("accept failed (", std::strerror(error), ") with ", conns_.size(),
                   " connections open: accepting pauses for ", limits_.accept_backoff.ToString(),
                   "s at a time until it succeeds; the open connections are still served"));
  sched_.Go("wire.accept-backoff", ResumeAcceptingLater(), {.daemon = true, .world = true});
}

sim::Task<void> Bridge::ResumeAcceptingLater() {
  co_await sched_.Sleep(limits_.accept_backoff);
  if (!accept_paused_) co_return;
  accept_paused_ = false;
  // The connections waiting in the backlog make the listeners readable at
  // the loop's next look.
  for (const auto& [id, fd] : listeners_) loop_.Modify(fd, EPOLLIN).IgnoreError();
}

void Bridge::EvictIdlest() {
  PRODSIM_ASSERT(!conns_.empty());
  ConnPtr idlest;
  for (const auto& [id, c] : conns_) {
    if (idlest == nullptr || c->active < idlest->active) idlest = c;
  }
  Reached(Limit::kConnections,
          absl::StrCat(conns_.size(), " connections open, the limit: connection ", idlest->id,
                       " to broker-", idlest->broker.value,
                       ", the least recently active, closed to make room"));
  Close(idlest, /*reset=*/true);
}

// The simulated side of one connection: dials the broker's node, sends what
// was decoded meanwhile, then writes each response to the socket until the
// simulated connection ends.
sim::Task<void> Bridge::Pump(ConnPtr c) {
  absl::StatusOr<net::Endpoint> ep = co_await network_.Dial(
      client_node_, cluster_.broker(c->broker).node(),
      net::DialOptions{c->virtual_id != 0 ? kVirtualDialTimeout : kDialTimeout});
  c->dialing = false;
  if (c->closed) {
    if (ep.ok()) ep->Close();
    co_return;
  }
  if (!ep.ok()) {
    Close(c, /*reset=*/true, absl::IsUnavailable(ep.status()) ? "refused" : "timeout");
    co_return;
  }
  c->ep = *ep;
  if (c->virtual_id != 0) sink_->Connected(c->virtual_id);
  std::vector<std::shared_ptr<kafka::Message>> early = std::move(c->early);
  for (auto& m : early) SendToBroker(c, std::move(m));
  for (;;) {
    std::optional<net::PayloadPtr> in = co_await c->ep.Recv();
    if (c->closed) co_return;
    if (!in) {
      Close(c, /*reset=*/true);
      co_return;
    }
    const auto* m = dynamic_cast<const kafka::Message*>(in->get());
    // A response means the broker took every request before it: the acks=0
    // ones ahead of it are done.
    while (!c->in_flight.empty() && !c->in_flight.front().header.has_value()) {
      c->in_flight_bytes -= c->in_flight.front().bytes;
      c->in_flight.pop_front();
      ++c->retired;
    }
    if (m == nullptr || c->in_flight.empty() ||
        c->in_flight.front().header->correlation_id != m->correlation_id) {
      Keep(problems_.harness_errors,
           absl::StrCat(Now(), " broker-", c->broker.value, " answered correlation id ",
                        m == nullptr ? -1 : m->correlation_id, " on connection ", c->id,
                        c->in_flight.empty()
                            ? " where none was owed"
                            : absl::StrCat(" where ", c->in_flight.front().header->correlation_id,
                                           " was next")));
      Close(c, /*reset=*/true);
      co_return;
    }
    const RequestHeader header = *c->in_flight.front().header;
    WriteToSocket(c, kafka::wire::EncodeResponse(header, *m, context_));
    if (c->closed) co_return;
    // Retired once written to the bridge's buffer: out_bytes_max bounds
    // what waits there for a client that does not read.
    c->in_flight_bytes -= c->in_flight.front().bytes;
    c->in_flight.pop_front();
    ++c->retired;
    Resume(c);
    if (!c->closed) Reaccount(*c);
  }
}

void Bridge::OnSocket(const ConnPtr& c, uint32_t events) {
  if (c->closed) return;
  if ((events & EPOLLOUT) != 0) Flush(c);
  if (c->closed) return;
  if (!c->reading) {
    // Not reading: epoll still reports an error or a hang-up (the client
    // reset the connection); nothing more can come from it.
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) Close(c, /*reset=*/true);
    return;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) return;
  ReadSocket(c);
}

bool Bridge::ReadSocket(const ConnPtr& c) {
  char buf[kReadChunkBytes];
  for (;;) {
    const ssize_t n = read(c->fd, buf, sizeof buf);
    if (n > 0) {
      if (!Received(c, std::string_view(buf, static_cast<size_t>(n)))) return false;
      // A whole frame waits for room: read no further (Kafka's mute); the
      // kernel's buffers hold the rest and stop the client.
      if (!c->reading) return true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    // EOF or an error: the client closed (or reset) its side.
    Close(c, /*reset=*/false);
    return false;
  }
}

bool Bridge::Received(const ConnPtr& c, std::string_view bytes) {
  c->framer.Append(bytes);
  c->active = ++activity_;
  if (!HandleFrames(c)) return false;
  Reaccount(*c);
  if (!EnforceHeldBytes(c)) return false;
  // A virtual connection's bytes all go to the framer (they stand for the
  // kernel's buffers), and wait there while a frame cannot be sent on.
  if (c->framer.Ready()) SetReading(c, false);
  return true;
}

bool Bridge::CanDispatch(const Conn& c) const {
  return !c.closed && !world_full_ && c.in_flight.size() < limits_.in_flight_max &&
         c.out.size() < limits_.out_bytes_max;
}

bool Bridge::HandleFrames(const ConnPtr& c) {
  while (CanDispatch(*c) && c->framer.Ready()) {
    absl::StatusOr<std::optional<std::string>> frame = c->framer.Next();
    if (!frame.ok()) {
      Keep(problems_.malformed_frames,
           absl::StrCat(Now(), " broker-", c->broker.value, " connection ", c->id, ": ",
                        frame.status().message()));
      Close(c, /*reset=*/false);
      return false;
    }
    PRODSIM_ASSERT(frame->has_value());  // Ready() said so
    if (!Dispatch(c, **frame)) return false;
  }
  return !c->closed;
}

bool Bridge::Dispatch(const ConnPtr& c, const std::string& frame) {
  absl::StatusOr<DecodedRequest> req = kafka::wire::DecodeRequest(frame);
  const std::string where = absl::StrCat(Now(), " broker-", c->broker.value, " connection ", c->id);
  if (!req.ok()) {
    Keep(problems_.malformed_frames, absl::StrCat(where, ": ", req.status().message()));
    Close(c, /*reset=*/false);
    return false;
  }
  if (req->message == nullptr) {
    Keep(problems_.not_served,
         absl::StrCat(where, ": ", req->not_served, " is not served; connection closed"));
    Close(c, /*reset=*/false);
    return false;
  }
  if (const auto* p = dynamic_cast<const kafka::ProduceRequest*>(req->message.get())) {
    for (const auto& [tp, batch] : p->batches) {
      for (const kafka::Record& r : batch.records) {
        if (r.record_id != 0) continue;
        Keep(problems_.records_without_id,
             absl::StrCat(Now(), " a record for ", tp.ToString(),
                          " without a valid prodsim-id header (the client driver must write "
                          "one on every message)"));
        Close(c, /*reset=*/false);
        return false;
      }
    }
  }
  const size_t charge = WorldCharge(*req->message, cluster_.broker_count());
  if (world_bytes_ + charge > limits_.world_bytes_max) {
    world_full_ = true;
    const std::string why = absl::StrCat(
        "the requests served could add more than ", limits_.world_bytes_max,
        " bytes to the brokers' logs and history (BridgeLimits::world_bytes_max); the run stops");
    Reached(Limit::kWorldBytes, why);
    Keep(problems_.harness_errors, absl::StrCat(Now(), " ", why));
    sched_.Stop(why);
    Close(c, /*reset=*/true);
    return false;
  }
  world_bytes_ += charge;
  ++dispatched_;
  const size_t bytes = RequestBytes(*req->message, frame.size());
  c->in_flight.push_back(Conn::InFlight{
      NoResponse(*req->message) ? std::nullopt : std::optional<RequestHeader>(req->header), bytes});
  c->in_flight_bytes += bytes;
  SendToBroker(c, std::move(req->message));
  return true;
}

void Bridge::SendToBroker(const ConnPtr& c, std::shared_ptr<kafka::Message> m) {
  if (c->dialing) {
    c->early.push_back(std::move(m));
    return;
  }
  // A send on a reset connection is lost, as TCP loses it; the pump sees
  // the reset and closes the socket.
  c->ep.Send(std::move(m));
  ++c->sent;
}

void Bridge::RetireTaken(Conn& c) {
  if (!c.ep.valid()) return;
  PRODSIM_ASSERT(c.sent >= c.ep.Queued());
  const uint64_t taken = c.sent - c.ep.Queued();
  while (!c.in_flight.empty() && !c.in_flight.front().header.has_value() && c.retired < taken) {
    c.in_flight_bytes -= c.in_flight.front().bytes;
    c.in_flight.pop_front();
    ++c.retired;
  }
}

void Bridge::Resume(const ConnPtr& c) {
  if (c->closed) return;
  RetireTaken(*c);
  if (!HandleFrames(c)) return;
  if (!c->reading && !c->framer.Ready()) SetReading(c, true);
}

bool Bridge::ResumeMuted() {
  if (muted_.empty()) return false;
  const uint64_t before = dispatched_;
  const std::vector<uint64_t> ids(muted_.begin(), muted_.end());
  for (const uint64_t id : ids) {
    auto it = conns_.find(id);
    if (it == conns_.end()) continue;
    const ConnPtr c = it->second;
    Resume(c);
    if (!c->closed) Reaccount(*c);
  }
  return dispatched_ != before;
}

void Bridge::SetReading(const ConnPtr& c, bool reading) {
  if (c->reading == reading) return;
  c->reading = reading;
  if (reading) {
    muted_.erase(c->id);
  } else {
    muted_.insert(c->id);
  }
  UpdateEvents(*c);
}

void Bridge::UpdateEvents(Conn& c) {
  if (c.virtual_id != 0) return;
  // EPOLLRDHUP only while reading: it stays set once the client shut its
  // side, and a connection not reading would be woken by it forever.
  const uint32_t events = (c.reading ? uint32_t{EPOLLIN} | uint32_t{EPOLLRDHUP} : uint32_t{0}) |
                          (c.want_write ? uint32_t{EPOLLOUT} : uint32_t{0});
  loop_.Modify(c.fd, events).IgnoreError();
}

void Bridge::WriteToSocket(const ConnPtr& c, std::string bytes) {
  c->out += bytes;
  Flush(c);
}

void Bridge::Flush(const ConnPtr& c) {
  if (c->virtual_id != 0) {
    // The driver is handed every byte; it reads them all.
    if (!c->out.empty()) sink_->Data(c->virtual_id, std::exchange(c->out, {}));
    if (!c->reading) Resume(c);
    if (!c->closed) Reaccount(*c);
    return;
  }
  const size_t before = c->out.size();
  while (!c->out.empty()) {
    const ssize_t n = send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c->out.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    Close(c, /*reset=*/true);  // the client's side is gone
    return;
  }
  if (c->out.empty() && c->out.capacity() > limits_.out_bytes_max) c->out.shrink_to_fit();
  const bool want = !c->out.empty();
  if (want != c->want_write) {
    c->want_write = want;
    UpdateEvents(*c);
  }
  // Room for responses again: what waited for it may go on.
  if (c->out.size() < before && !c->reading) Resume(c);
  if (!c->closed) Reaccount(*c);
}

void Bridge::Reaccount(Conn& c) {
  PRODSIM_ASSERT(!c.closed);
  const size_t held = c.framer.memory() + c.in_flight_bytes + c.out.capacity();
  PRODSIM_ASSERT(held_total_ >= c.held);
  held_total_ = held_total_ - c.held + held;
  c.held = held;
}

bool Bridge::EnforceHeldBytes(const ConnPtr& c) {
  while (held_total_ > limits_.held_bytes_max && !conns_.empty()) {
    ConnPtr most;
    for (const auto& [id, other] : conns_) {
      if (most == nullptr || other->held > most->held) most = other;
    }
    Reached(Limit::kHeldBytes,
            absl::StrCat("the connections held ", held_total_, " bytes, over the limit of ",
                         limits_.held_bytes_max, ": connection ", most->id, " to broker-",
                         most->broker.value, ", holding the most (", most->held, "), closed"));
    Close(most, /*reset=*/true);
  }
  return !c->closed;
}

void Bridge::Close(const ConnPtr& conn, bool reset, std::string_view how) {
  // Hold the connection: the caller's reference may be the one in conns_
  // (CloseAll passes the map's own element), which the erase below frees.
  const ConnPtr c = conn;  // NOLINT(performance-unnecessary-copy-initialization): the hold
  if (c->closed) return;
  c->closed = true;
  if (c->virtual_id != 0) {
    if (!c->client_closed)
      sink_->Closed(c->virtual_id, !how.empty() ? how : reset ? "reset" : "eof");
  } else {
    loop_.Remove(c->fd);
    if (reset) SetResetOnClose(c->fd);
    close(c->fd);
    c->fd = -1;
  }
  if (c->ep.valid()) c->ep.Close();
  PRODSIM_ASSERT(held_total_ >= c->held);
  held_total_ -= c->held;
  c->held = 0;
  // What it held goes with it (the pump may still hold the struct).
  c->framer = kafka::wire::Framer();
  c->in_flight.clear();
  c->in_flight_bytes = 0;
  c->early.clear();
  std::string().swap(c->out);
  muted_.erase(c->id);
  conns_.erase(c->id);
  if (history_ != nullptr) {
    history_->connections.push_back(kafka::ConnectionEvent{
        sched_.now(), c->broker, c->id, /*opened=*/false, reset ? "reset" : "closed"});
  }
}

void Bridge::CloseAll() {
  while (!conns_.empty()) Close(conns_.begin()->second, /*reset=*/true);
  for (const auto& [id, fd] : listeners_) {
    loop_.Remove(fd);
    close(fd);
  }
  listeners_.clear();
}

}  // namespace wire
