#include "wire/bridge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wire {

using kafka::wire::DecodedRequest;
using kafka::wire::RequestHeader;

struct Bridge::Conn {
  uint64_t id = 0;
  kafka::BrokerId broker;
  int fd = -1;
  kafka::wire::Framer framer;
  // The simulated connection, once the dial succeeded; requests decoded
  // before that wait in `early`.
  net::Endpoint ep;
  bool dialing = true;
  std::vector<std::shared_ptr<kafka::Message>> early;
  // The headers of the requests that owe a response, in order: the broker
  // model answers a connection's requests one at a time, in order.
  std::deque<RequestHeader> owed;
  std::string out;  // bytes not yet written to the socket
  bool closed = false;
  bool want_write = false;
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

void SetResetOnClose(int fd) {
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

bool NoResponse(const kafka::Message& m) {
  const auto* p = dynamic_cast<const kafka::ProduceRequest*>(&m);
  return p != nullptr && p->acks == 0;
}

}  // namespace

Bridge::Bridge(EventLoop& loop, sim::Scheduler& sched, net::Network& network,
               kafka::Cluster& cluster, net::NodeId client_node)
    : loop_(loop), sched_(sched), network_(network), cluster_(cluster), client_node_(client_node) {}

Bridge::~Bridge() { CloseAll(); }

std::string Bridge::Now() const { return absl::StrCat("t=", sched_.now().ToString(), "s"); }

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
  for (const auto& [id, addr] : context_.brokers) parts.push_back(absl::StrCat(addr.host, ":", addr.port));
  return absl::StrJoin(parts, ",");
}

void Bridge::OnAccept(kafka::BrokerId broker, int listen_fd) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more; anything else: try at the next event
    ++accepted_;
    const net::NodeId node = cluster_.broker(broker).node();
    if (!network_.NodeUp(node)) {
      SetResetOnClose(fd);
      close(fd);
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_shared<Conn>();
    c->id = next_conn_++;
    c->broker = broker;
    c->fd = fd;
    conns_[c->id] = c;
    if (history_ != nullptr) {
      history_->connections.push_back(
          kafka::ConnectionEvent{sched_.now(), broker, c->id, /*opened=*/true, ""});
    }
    if (absl::Status st = loop_.Add(fd, uint32_t{EPOLLIN} | uint32_t{EPOLLRDHUP},
                                    [this, c](uint32_t events) { OnSocket(c, events); });
        !st.ok()) {
      problems_.harness_errors.push_back(absl::StrCat(Now(), " ", st.message()));
      Close(c, /*reset=*/true);
      continue;
    }
    sched_.Go(absl::StrCat("wire.conn", c->id), Pump(c), {.daemon = true, .world = true});
  }
}

// The simulated side of one connection: dials the broker's node, sends what
// was decoded meanwhile, then writes each response to the socket until the
// simulated connection ends.
sim::Task<void> Bridge::Pump(ConnPtr c) {
  absl::StatusOr<net::Endpoint> ep = co_await network_.Dial(
      client_node_, cluster_.broker(c->broker).node(), net::DialOptions{kDialTimeout});
  c->dialing = false;
  if (c->closed) {
    if (ep.ok()) ep->Close();
    co_return;
  }
  if (!ep.ok()) {
    Close(c, /*reset=*/true);
    co_return;
  }
  c->ep = *ep;
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
    if (m == nullptr || c->owed.empty() || c->owed.front().correlation_id != m->correlation_id) {
      problems_.harness_errors.push_back(absl::StrCat(
          Now(), " broker-", c->broker.value, " answered correlation id ",
          m == nullptr ? -1 : m->correlation_id, " on connection ", c->id,
          c->owed.empty() ? " where none was owed"
                          : absl::StrCat(" where ", c->owed.front().correlation_id, " was next")));
      Close(c, /*reset=*/true);
      co_return;
    }
    const RequestHeader header = c->owed.front();
    c->owed.pop_front();
    WriteToSocket(c, kafka::wire::EncodeResponse(header, *m, context_));
  }
}

void Bridge::OnSocket(const ConnPtr& c, uint32_t events) {
  if (c->closed) return;
  if ((events & EPOLLOUT) != 0) Flush(c);
  if (c->closed) return;
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) return;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = read(c->fd, buf, sizeof buf);
    if (n > 0) {
      c->framer.Append(std::string_view(buf, static_cast<size_t>(n)));
      if (!HandleFrames(c)) return;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    // EOF or an error: the client closed (or reset) its side.
    Close(c, /*reset=*/false);
    return;
  }
}

bool Bridge::HandleFrames(const ConnPtr& c) {
  for (;;) {
    absl::StatusOr<std::optional<std::string>> frame = c->framer.Next();
    if (!frame.ok()) {
      problems_.malformed_frames.push_back(absl::StrCat(Now(), " broker-", c->broker.value,
                                                        " connection ", c->id, ": ",
                                                        frame.status().message()));
      Close(c, /*reset=*/false);
      return false;
    }
    if (!frame->has_value()) return true;
    absl::StatusOr<DecodedRequest> req = kafka::wire::DecodeRequest(**frame);
    if (!req.ok()) {
      problems_.malformed_frames.push_back(absl::StrCat(Now(), " broker-", c->broker.value,
                                                        " connection ", c->id, ": ",
                                                        req.status().message()));
      Close(c, /*reset=*/false);
      return false;
    }
    if (req->message == nullptr) {
      problems_.not_served.push_back(absl::StrCat(Now(), " broker-", c->broker.value,
                                                  " connection ", c->id, ": ", req->not_served,
                                                  " is not served; connection closed"));
      Close(c, /*reset=*/false);
      return false;
    }
    if (const auto* p = dynamic_cast<const kafka::ProduceRequest*>(req->message.get())) {
      for (const auto& [tp, batch] : p->batches) {
        for (const kafka::Record& r : batch.records) {
          if (r.record_id != 0) continue;
          problems_.harness_errors.push_back(absl::StrCat(
              Now(), " a record for ", tp.ToString(),
              " without a valid prodsim-id header (the client driver must write one on every "
              "message)"));
          Close(c, /*reset=*/false);
          return false;
        }
      }
    }
    if (!NoResponse(*req->message)) c->owed.push_back(req->header);
    SendToBroker(c, std::move(req->message));
  }
}

void Bridge::SendToBroker(const ConnPtr& c, std::shared_ptr<kafka::Message> m) {
  if (c->dialing) {
    c->early.push_back(std::move(m));
    return;
  }
  // A send on a reset connection is lost, as TCP loses it; the pump sees
  // the reset and closes the socket.
  c->ep.Send(std::move(m));
}

void Bridge::WriteToSocket(const ConnPtr& c, std::string bytes) {
  c->out += bytes;
  Flush(c);
}

void Bridge::Flush(const ConnPtr& c) {
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
  const bool want = !c->out.empty();
  if (want != c->want_write) {
    c->want_write = want;
    const uint32_t events = EPOLLIN | EPOLLRDHUP | (want ? uint32_t{EPOLLOUT} : uint32_t{0});
    loop_.Modify(c->fd, events).IgnoreError();
  }
}

void Bridge::Close(const ConnPtr& conn, bool reset) {
  // Hold the connection: the caller's reference may be the one in conns_
  // (CloseAll passes the map's own element), which the erase below frees.
  const ConnPtr c = conn;
  if (c->closed) return;
  c->closed = true;
  loop_.Remove(c->fd);
  if (reset) SetResetOnClose(c->fd);
  close(c->fd);
  c->fd = -1;
  if (c->ep.valid()) c->ep.Close();
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
