#include "sim/net/network.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace net {

namespace {

// Trace note kinds: the low bits of a note's first word.
enum NoteKind : uint64_t {
  kNoteConnect = 1,
  kNoteSend = 2,
  kNoteDeliver = 3,
  kNoteHold = 4,
  kNoteReset = 5,
  kNoteDrop = 6,
  kNoteRefused = 7,
  kNoteDialTimeout = 8,
  kNoteBuggify = 9,
  kNoteBlackhole = 10,
  kNoteSynUnanswered = 11,
};

// Why a connection was reset: the second word of a reset note.
enum ResetReason : uint64_t {
  kResetByNetwork = 0,
  kResetClosedByClient = 1,
  kResetClosedByServer = 2,
  kResetNodeDown = 3,
  kResetTimedOut = 4,  // ETIMEDOUT: tcp_retries2 spent in a blackhole
};

using Link = std::pair<NodeId, NodeId>;  // (from, to): one direction

struct Spike {
  Duration extra;
  Time until;
};

}  // namespace

// A message on the wire (scheduled) or held by a partition.
struct QueuedMessage {
  uint64_t seq = 0;
  PayloadPtr payload;
  Time deliver_at;  // on the wire only
};

// One direction of a connection, indexed by the sending side.
struct Direction {
  uint64_t next_seq = 1;
  // Bumped whenever the wire is emptied without delivery (partition, reset),
  // so that delivery callbacks already scheduled do nothing.
  uint64_t epoch = 0;
  Time last_deliver_at;            // of the latest message on the wire
  std::deque<QueuedMessage> wire;  // in delivery order
  std::deque<QueuedMessage> held;  // in send order; only while partitioned
};

// Side 0 dialled (the client), side 1 accepted (the server).
struct Connection {
  Network* net = nullptr;  // null once the Network is destroyed
  ConnId id = 0;
  NodeId node[2] = {0, 0};
  bool closed = false;
  // A middlebox on the way lost this connection's state (Blackhole): every
  // message is dropped from then on.
  bool blackholed = false;
  // The ETIMEDOUT of a blackholed connection is scheduled.
  bool retransmit_timeout_armed = false;
  std::unique_ptr<sim::Chan<PayloadPtr>> inbox[2];  // what side i receives
  Direction dir[2];                                 // what side i sends
};

struct Network::Impl {
  struct Node {
    std::string name;
    bool up = true;
  };

  Impl(sim::Scheduler& s, sim::Prng prng) : sched(&s), latency_root(prng.Fork("latency")) {}

  sim::Scheduler* sched;
  sim::Prng latency_root;
  sim::Buggify* buggify = nullptr;  // off unless set
  std::vector<Node> nodes;          // NodeId n is nodes[n - 1]
  LatencyModel default_latency;
  absl::btree_map<Link, LatencyModel> link_latency;
  absl::btree_map<Link, sim::Prng> link_prng;
  absl::btree_map<Link, std::vector<Spike>> spikes;
  absl::btree_set<Link> partitions;
  absl::btree_map<Link, Time> connect_hangs;  // until when SYNs go unanswered
  absl::btree_map<NodeId, std::unique_ptr<sim::Chan<Endpoint>>> listeners;
  absl::btree_map<ConnId, std::shared_ptr<Connection>> open;  // by id: ordered
  ConnId next_conn_id = 1;

  Node& node(NodeId n) {
    PRODSIM_ASSERT(n >= 1);
    PRODSIM_ASSERT(n <= nodes.size());
    return nodes[n - 1];
  }
};

// ---------------------------------------------------------------------------
// LatencyModel.

LatencyModel LatencyModel::Constant(Duration d) {
  PRODSIM_ASSERT(d.nanos() >= 0);
  LatencyModel m;
  m.kind = Kind::kConstant;
  m.min = m.max = m.mean = m.cap = d;
  return m;
}

LatencyModel LatencyModel::Uniform(Duration lo, Duration hi) {
  PRODSIM_ASSERT(lo.nanos() >= 0);
  PRODSIM_ASSERT(lo <= hi);
  LatencyModel m;
  m.kind = Kind::kUniform;
  m.min = lo;
  m.max = m.cap = hi;
  m.mean = (lo + hi) / 2;
  return m;
}

LatencyModel LatencyModel::Of(Kind kind, Duration min, Duration max, Duration mean, Duration cap) {
  switch (kind) {
    case Kind::kConstant: return Constant(min);
    case Kind::kUniform: return Uniform(min, max);
    case Kind::kExponential: return Exponential(min, mean, cap);
  }
  PRODSIM_ASSERT_MSG(false, "LatencyModel::Kind value outside the enum");
  return Constant(min);
}

LatencyModel LatencyModel::Exponential(Duration min, Duration mean, Duration cap) {
  PRODSIM_ASSERT(min.nanos() >= 0);
  PRODSIM_ASSERT(mean.nanos() >= 0);
  PRODSIM_ASSERT(min <= cap);
  LatencyModel m;
  m.kind = Kind::kExponential;
  m.min = min;
  m.max = cap;
  m.mean = mean;
  m.cap = cap;
  return m;
}

Duration LatencyModel::Draw(sim::Prng& prng) const {
  PRODSIM_ASSERT(min.nanos() >= 0);
  PRODSIM_ASSERT(min <= cap);
  Duration d = min;
  switch (kind) {
    case Kind::kConstant: break;
    case Kind::kUniform:
      PRODSIM_ASSERT(min <= max);
      d = Duration::Nanos(prng.UniformInt(min.nanos(), max.nanos()));
      break;
    case Kind::kExponential:
      // The tail above `min` is exponential, cut so that min + tail <= cap.
      d = min + prng.Exponential(mean, cap - min);
      break;
  }
  return std::min(d, cap);
}

// ---------------------------------------------------------------------------
// Endpoint.

ConnId Endpoint::id() const {
  PRODSIM_ASSERT(valid());
  return conn_->id;
}

NodeId Endpoint::local() const {
  PRODSIM_ASSERT(valid());
  return conn_->node[side_];
}

NodeId Endpoint::peer() const {
  PRODSIM_ASSERT(valid());
  return conn_->node[1 - side_];
}

bool Endpoint::Send(PayloadPtr msg) {
  PRODSIM_ASSERT(valid());
  PRODSIM_ASSERT(msg != nullptr);
  if (conn_->closed || conn_->net == nullptr) return false;
  return conn_->net->SendOn(conn_, side_, std::move(msg));
}

sim::Chan<PayloadPtr>::RecvAwaiter Endpoint::Recv() { return inbox()->Recv(); }

size_t Endpoint::Queued() const {
  PRODSIM_ASSERT(valid());
  if (conn_->closed) return 0;
  const Direction& d = conn_->dir[side_];
  return d.wire.size() + d.held.size() + conn_->inbox[1 - side_]->size();
}

sim::Chan<PayloadPtr>* Endpoint::inbox() const {
  PRODSIM_ASSERT(valid());
  return conn_->inbox[side_].get();
}

void Endpoint::Close() {
  PRODSIM_ASSERT(valid());
  if (conn_->closed) return;
  if (conn_->net == nullptr) {
    // The Network (and perhaps its scheduler) is gone: nothing to tell.
    conn_->closed = true;
    return;
  }
  const uint64_t reason = side_ == 0 ? kResetClosedByClient : kResetClosedByServer;
  conn_->net->ResetConnection(*conn_, reason,
                              absl::StrCat("closed by ", conn_->net->NodeName(conn_->node[side_])));
}

bool Endpoint::closed() const {
  PRODSIM_ASSERT(valid());
  return conn_->closed;
}

// ---------------------------------------------------------------------------
// Network: nodes, links, partitions.

Network::Network(sim::Scheduler& sched, sim::Prng prng)
    : impl_(std::make_unique<Impl>(sched, prng)) {}

Network::~Network() {
  // Endpoints may outlive the Network (in coroutine frames the scheduler
  // destroys later): detach them so that they touch nothing of ours.
  for (auto& [id, c] : impl_->open) c->net = nullptr;
}

NodeId Network::AddNode(std::string name) {
  impl_->nodes.push_back(Impl::Node{std::move(name), true});
  return static_cast<NodeId>(impl_->nodes.size());
}

const std::string& Network::NodeName(NodeId n) const { return impl_->node(n).name; }

void Network::SetNodeUp(NodeId n, bool up) {
  Impl::Node& node = impl_->node(n);
  const bool was_up = std::exchange(node.up, up);
  if (was_up && !up) {
    std::vector<ConnId> ids;
    for (const auto& [id, c] : impl_->open) {
      if (c->node[0] == n || c->node[1] == n) ids.push_back(id);
    }
    for (ConnId id : ids) {
      ResetConnection(*impl_->open.at(id), kResetNodeDown,
                      absl::StrCat("node ", node.name, " down"));
    }
  }
}

bool Network::NodeUp(NodeId n) const { return impl_->node(n).up; }

void Network::SetBuggify(sim::Buggify* buggify) { impl_->buggify = buggify; }

void Network::SetDefaultLatency(LatencyModel m) { impl_->default_latency = m; }

void Network::SetLinkLatency(NodeId from, NodeId to, LatencyModel m) {
  impl_->node(from);
  impl_->node(to);
  impl_->link_latency[Link{from, to}] = m;
}

void Network::AddLatencySpike(NodeId from, NodeId to, Duration extra, Time until) {
  impl_->node(from);
  impl_->node(to);
  PRODSIM_ASSERT(extra.nanos() >= 0);
  impl_->spikes[Link{from, to}].push_back(Spike{extra, until});
}

void Network::Partition(NodeId from, NodeId to) {
  impl_->node(from);
  impl_->node(to);
  if (!impl_->partitions.insert(Link{from, to}).second) return;
  for (const auto& [id, c] : impl_->open) {
    for (int side = 0; side < 2; ++side) {
      if (c->node[side] == from && c->node[1 - side] == to) HoldInFlight(*c, side);
    }
  }
}

void Network::Heal(NodeId from, NodeId to) {
  impl_->node(from);
  impl_->node(to);
  if (impl_->partitions.erase(Link{from, to}) == 0) return;
  // Releasing never opens or resets a connection, so iterating is safe.
  for (const auto& [id, c] : impl_->open) {
    for (int side = 0; side < 2; ++side) {
      if (c->node[side] == from && c->node[1 - side] == to) ReleaseHeld(c, side);
    }
  }
}

bool Network::Partitioned(NodeId from, NodeId to) const {
  return impl_->partitions.contains(Link{from, to});
}

void Network::Blackhole(NodeId a, NodeId b) {
  impl_->node(a);
  impl_->node(b);
  // Dropping never opens or resets a connection, so iterating is safe.
  for (const auto& entry : impl_->open) {
    const ConnPtr& c = entry.second;  // not a structured binding: the lambda below uses it
    const bool between =
        (c->node[0] == a && c->node[1] == b) || (c->node[0] == b && c->node[1] == a);
    if (!between || c->blackholed) continue;
    c->blackholed = true;
    Note(kNoteBlackhole, c->id, 0, [&] {
      return absl::StrCat("net blackhole c", c->id, " ", NodeName(c->node[0]), "<->",
                          NodeName(c->node[1]), ": its packets are dropped from now on");
    });
    bool unacknowledged = false;
    for (int side = 0; side < 2; ++side) {
      Direction& d = c->dir[side];
      // What is on the wire or held never arrives: TCP's retransmissions of
      // it fall into the hole too.
      for (std::deque<QueuedMessage>* q : {&d.wire, &d.held}) {
        for (const QueuedMessage& m : *q) DropInHole(*c, side, m);
        unacknowledged = unacknowledged || !q->empty();
        q->clear();
      }
      ++d.epoch;
      d.last_deliver_at = Time();
    }
    if (unacknowledged) ArmRetransmitTimeout(c);
  }
}

void Network::HangConnects(NodeId from, NodeId to, Time until) {
  impl_->node(from);
  impl_->node(to);
  Time& end = impl_->connect_hangs[Link{from, to}];
  end = std::max(end, until);
}

bool Network::ConnectsHang(NodeId from, NodeId to) const {
  auto it = impl_->connect_hangs.find(Link{from, to});
  return it != impl_->connect_hangs.end() && impl_->sched->now() < it->second;
}

sim::Chan<Endpoint>* Network::Listen(NodeId node) {
  auto& slot = impl_->listeners[node];
  if (slot == nullptr) {
    slot = std::make_unique<sim::Chan<Endpoint>>(
        *impl_->sched, absl::StrCat("accept ", NodeName(node)), kAcceptBacklogMax);
  }
  return slot.get();
}

bool Network::Listening(NodeId n) const {
  auto it = impl_->listeners.find(n);
  return it != impl_->listeners.end() && !it->second->closed();
}

size_t Network::open_connections() const { return impl_->open.size(); }

// ---------------------------------------------------------------------------
// Latency.

Duration Network::SpikeExtra(NodeId from, NodeId to) {
  auto it = impl_->spikes.find(Link{from, to});
  if (it == impl_->spikes.end()) return Duration();
  const Time now = impl_->sched->now();
  std::vector<Spike>& spikes = it->second;
  std::erase_if(spikes, [now](const Spike& s) { return s.until <= now; });
  Duration extra;
  for (const Spike& s : spikes) extra += s.extra;
  if (spikes.empty()) impl_->spikes.erase(it);
  return extra;
}

Duration Network::DrawLatency(NodeId from, NodeId to) {
  const Link link{from, to};
  auto model_it = impl_->link_latency.find(link);
  const LatencyModel& model =
      model_it != impl_->link_latency.end() ? model_it->second : impl_->default_latency;
  auto prng_it = impl_->link_prng.find(link);
  if (prng_it == impl_->link_prng.end()) {
    prng_it =
        impl_->link_prng.emplace(link, impl_->latency_root.Fork(absl::StrCat(from, ">", to))).first;
  }
  const Duration d = model.Draw(prng_it->second) + SpikeExtra(from, to);
  PRODSIM_ASSERT(d.nanos() >= 0);
  return d;
}

// ---------------------------------------------------------------------------
// Messages.

template <typename Describe>
void Network::Note(uint64_t kind, uint64_t a, uint64_t b, Describe&& describe) {
  sim::Scheduler& s = *impl_->sched;
  s.trace().Note(s.now(), s.current_id(), a << 4 | kind, b, std::forward<Describe>(describe));
}

namespace {
std::string MessageText(const Network& net, const Connection& c, int side, std::string_view what,
                        uint64_t seq, const Payload& p) {
  return absl::StrCat("net ", std::string(what), " c", c.id, " ", net.NodeName(c.node[side]), "->",
                      net.NodeName(c.node[1 - side]), " #", seq, ": ", p.Describe());
}
}  // namespace

bool Network::SendOn(const ConnPtr& c, int side, PayloadPtr msg) {
  PRODSIM_ASSERT(!c->closed);
  PRODSIM_ASSERT(side == 0 || side == 1);
  Direction& d = c->dir[side];
  const size_t queued = Endpoint(c, side).Queued();
  if (queued >= kQueuedMessagesMax) {
    impl_->sched->Stop(absl::StrCat("net: connection ", c->id, " has ", queued,
                                    " messages queued in one direction (limit ", kQueuedMessagesMax,
                                    ")"));
    return false;
  }
  const uint64_t seq = d.next_seq++;
  Note(kNoteSend, c->id, seq << 1 | static_cast<uint64_t>(side),
       [&] { return MessageText(*this, *c, side, "send", seq, *msg); });
  if (c->blackholed) {
    // The kernel takes the bytes (the write succeeds) and retransmits them
    // into the hole until tcp_retries2 is spent.
    DropInHole(*c, side, QueuedMessage{seq, std::move(msg), Time()});
    ArmRetransmitTimeout(c);
    return true;
  }
  if (Partitioned(c->node[side], c->node[1 - side])) {
    d.held.push_back(QueuedMessage{seq, std::move(msg), Time()});
    return true;
  }
  PRODSIM_ASSERT_MSG(d.held.empty(), "held messages on a direction that is not partitioned");
  Transmit(c, side, seq, std::move(msg));
  return true;
}

void Network::Transmit(const ConnPtr& c, int side, uint64_t seq, PayloadPtr msg) {
  Direction& d = c->dir[side];
  sim::Scheduler& s = *impl_->sched;
  Duration latency = DrawLatency(c->node[side], c->node[1 - side]);
  if (impl_->buggify != nullptr && impl_->buggify->Fires(kBuggifyDelay)) {
    // This message is slow; the FIFO rule below makes the ones sent after
    // it in this direction wait for it, while other connections overtake.
    const Duration extra = impl_->buggify->Extra(kBuggifyDelay, kBuggifyDelayMax);
    latency += extra;
    const uint64_t word = static_cast<uint64_t>(extra.nanos()) << 1 | static_cast<uint64_t>(side);
    Note(kNoteBuggify, c->id, word, [&] {
      return absl::StrCat("buggify net.delay c", c->id, " ", NodeName(c->node[side]), "->",
                          NodeName(c->node[1 - side]), " #", seq, ": +", extra.ToString());
    });
  }
  // FIFO, as TCP: never before the message sent before it.
  const Time at = std::max(s.now() + latency, d.last_deliver_at);
  d.last_deliver_at = at;
  d.wire.push_back(QueuedMessage{seq, std::move(msg), at});
  std::weak_ptr<Connection> weak = c;
  const uint64_t epoch = d.epoch;
  s.At(at, [weak, side, epoch] {
    std::shared_ptr<Connection> conn = weak.lock();
    if (conn == nullptr || conn->closed || conn->net == nullptr) return;
    conn->net->Deliver(conn, side, epoch);
  });
}

void Network::Deliver(const ConnPtr& c, int side, uint64_t epoch) {
  Direction& d = c->dir[side];
  if (d.epoch != epoch) return;  // the wire was emptied by a partition
  // Timers fire in (time, insertion) order and the wire is in that order.
  PRODSIM_ASSERT(!d.wire.empty());
  PRODSIM_ASSERT(d.wire.front().deliver_at == impl_->sched->now());
  QueuedMessage m = std::move(d.wire.front());
  d.wire.pop_front();
  ++delivered_;
  Note(kNoteDeliver, c->id, m.seq << 1 | static_cast<uint64_t>(side),
       [&] { return MessageText(*this, *c, side, "deliver", m.seq, *m.payload); });
  const bool pushed = c->inbox[1 - side]->TrySend(std::move(m.payload));
  PRODSIM_ASSERT_MSG(pushed, "inbox full despite the queued-messages limit");
}

void Network::HoldInFlight(Connection& c, int side) {
  Direction& d = c.dir[side];
  PRODSIM_ASSERT_MSG(d.held.empty(), "held messages on a direction that was not partitioned");
  for (QueuedMessage& m : d.wire) {
    Note(kNoteHold, c.id, m.seq << 1 | static_cast<uint64_t>(side),
         [&] { return MessageText(*this, c, side, "hold", m.seq, *m.payload); });
    d.held.push_back(std::move(m));
  }
  d.wire.clear();
  ++d.epoch;
  d.last_deliver_at = Time();
}

void Network::ReleaseHeld(const ConnPtr& c, int side) {
  std::deque<QueuedMessage> held = std::exchange(c->dir[side].held, {});
  for (QueuedMessage& m : held) Transmit(c, side, m.seq, std::move(m.payload));
}

void Network::ResetConnection(Connection& c, uint64_t reason, const std::string& why) {
  PRODSIM_ASSERT(!c.closed);
  PRODSIM_ASSERT(c.net == this);
  c.closed = true;
  Note(kNoteReset, c.id, reason, [&] { return absl::StrCat("net reset c", c.id, " (", why, ")"); });
  for (int side = 0; side < 2; ++side) {
    Direction& d = c.dir[side];
    for (std::deque<QueuedMessage>* q : {&d.wire, &d.held}) {
      for (const QueuedMessage& m : *q) {
        ++lost_;
        Note(kNoteDrop, c.id, m.seq << 1 | static_cast<uint64_t>(side),
             [&] { return MessageText(*this, c, side, "drop", m.seq, *m.payload); });
      }
      q->clear();
    }
    ++d.epoch;
  }
  // Receivers drain what was delivered, then see nullopt.
  c.inbox[0]->Close();
  c.inbox[1]->Close();
  const size_t erased = impl_->open.erase(c.id);
  PRODSIM_ASSERT(erased == 1);
}

void Network::DropInHole(Connection& c, int side, const QueuedMessage& m) {
  PRODSIM_ASSERT(c.blackholed);
  ++lost_;
  Note(kNoteDrop, c.id, m.seq << 1 | static_cast<uint64_t>(side),
       [&] { return MessageText(*this, c, side, "drop in the blackhole", m.seq, *m.payload); });
}

void Network::ArmRetransmitTimeout(const ConnPtr& c) {
  PRODSIM_ASSERT(c->blackholed);
  if (c->retransmit_timeout_armed) return;
  c->retransmit_timeout_armed = true;
  std::weak_ptr<Connection> weak = c;
  impl_->sched->After(kTcpRetries2Timeout, [weak] {
    std::shared_ptr<Connection> conn = weak.lock();
    if (conn == nullptr || conn->closed || conn->net == nullptr) return;
    conn->net->ResetConnection(*conn, kResetTimedOut,
                               "ETIMEDOUT: tcp_retries2 spent retransmitting into a blackhole");
  });
}

void Network::Reset(ConnId id) {
  auto it = impl_->open.find(id);
  if (it == impl_->open.end()) return;  // already reset or closed
  ResetConnection(*it->second, kResetByNetwork, "reset");
}

void Network::ResetNode(NodeId n) {
  impl_->node(n);
  std::vector<ConnId> ids;
  for (const auto& [id, c] : impl_->open) {
    if (c->node[0] == n || c->node[1] == n) ids.push_back(id);
  }
  for (ConnId id : ids) Reset(id);
}

void Network::ResetBetween(NodeId a, NodeId b) {
  impl_->node(a);
  impl_->node(b);
  std::vector<ConnId> ids;
  for (const auto& [id, c] : impl_->open) {
    if ((c->node[0] == a && c->node[1] == b) || (c->node[0] == b && c->node[1] == a)) {
      ids.push_back(id);
    }
  }
  for (ConnId id : ids) Reset(id);
}

// ---------------------------------------------------------------------------
// Dial.

absl::StatusOr<Endpoint> Network::Accept(NodeId from, NodeId to) {
  sim::Chan<Endpoint>* backlog = impl_->listeners.at(to).get();
  if (backlog->size() >= kAcceptBacklogMax) {
    return absl::UnavailableError("connection refused (accept backlog full)");
  }
  auto c = std::make_shared<Connection>();
  c->net = this;
  c->id = impl_->next_conn_id++;
  c->node[0] = from;
  c->node[1] = to;
  for (int side = 0; side < 2; ++side) {
    c->inbox[side] = std::make_unique<sim::Chan<PayloadPtr>>(
        *impl_->sched, absl::StrCat("conn ", c->id, " inbox of ", NodeName(c->node[side])),
        kQueuedMessagesMax);
  }
  impl_->open.emplace(c->id, c);
  Note(kNoteConnect, c->id, uint64_t{from} << 32 | to, [&] {
    return absl::StrCat("net connect c", c->id, " ", NodeName(from), "->", NodeName(to));
  });
  const bool pushed = backlog->TrySend(Endpoint(c, 1));
  PRODSIM_ASSERT(pushed);
  return Endpoint(c, 0);
}

sim::Task<bool> Network::AwaitSynAnswered(NodeId from, NodeId to, Time start, Time deadline) {
  sim::Scheduler& s = *impl_->sched;
  Note(kNoteSynUnanswered, 0, uint64_t{from} << 32 | to, [&] {
    return absl::StrCat("net dial ", NodeName(from), "->", NodeName(to),
                        ": SYN unanswered, waiting for its retransmission");
  });
  for (const Duration after : kSynRetransmitsAfter) {
    const Time at = start + after;
    if (at >= deadline) co_return false;
    co_await s.Sleep(at - s.now());
    // A SYN lost to a partition is as unanswered as one a firewall drops.
    const bool free = !ConnectsHang(from, to) && !Partitioned(from, to) && !Partitioned(to, from);
    if (free) co_return true;
  }
  co_return false;
}

sim::Task<absl::StatusOr<Endpoint>> Network::Dial(NodeId from, NodeId to, DialOptions opts) {
  PRODSIM_ASSERT(opts.dial_timeout.nanos() >= 0);
  impl_->node(from);
  impl_->node(to);
  sim::Scheduler& s = *impl_->sched;
  const Time start = s.now();
  auto unreachable = [&] { return Partitioned(from, to) || Partitioned(to, from); };
  auto timeout = [&] {
    Note(kNoteDialTimeout, 0, uint64_t{from} << 32 | to,
         [&] { return absl::StrCat("net dial timeout ", NodeName(from), "->", NodeName(to)); });
    return absl::DeadlineExceededError(
        absl::StrCat("dial ", NodeName(from), "->", NodeName(to), ": i/o timeout"));
  };
  if (!NodeUp(from)) co_return absl::UnavailableError("dial from a node that is down");
  if (unreachable()) {
    co_await s.Sleep(opts.dial_timeout);
    co_return timeout();
  }
  if (ConnectsHang(from, to)) {
    // The SYN gets no answer; the kernel sends it again on its schedule.
    const Time deadline = start + opts.dial_timeout;
    const bool answered = co_await AwaitSynAnswered(from, to, start, deadline);
    if (!answered) {
      const Time give_up = std::min(deadline, start + kSynTimeout);
      if (give_up > s.now()) co_await s.Sleep(give_up - s.now());
      if (give_up == deadline) co_return timeout();  // Go's dial deadline first
      co_return absl::DeadlineExceededError(absl::StrCat(
          "dial ", NodeName(from), "->", NodeName(to), ": connect: connection timed out"));
    }
  }
  // SYN there, SYN-ACK (or RST) back.
  Duration rtt = DrawLatency(from, to) + DrawLatency(to, from);
  if (impl_->buggify != nullptr && impl_->buggify->Fires(kBuggifySlowConnect)) {
    // A slow handshake: a busy peer, a full accept queue, a slow path.
    const Duration extra = impl_->buggify->Extra(kBuggifySlowConnect, kBuggifySlowConnectMax);
    rtt += extra;
    Note(kNoteBuggify, 0, uint64_t{from} << 32 | to, [&] {
      return absl::StrCat("buggify net.slow_connect ", NodeName(from), "->", NodeName(to), ": +",
                          extra.ToString());
    });
  }
  co_await s.Sleep(rtt);
  if (unreachable()) {
    // Partitioned during the handshake: the answer never comes.
    const Time deadline = start + opts.dial_timeout;
    if (deadline > s.now()) co_await s.Sleep(deadline - s.now());
    co_return timeout();
  }
  if (!NodeUp(from)) co_return absl::UnavailableError("dial from a node that is down");
  if (!NodeUp(to) || !Listening(to)) {
    Note(kNoteRefused, 0, uint64_t{from} << 32 | to,
         [&] { return absl::StrCat("net dial refused ", NodeName(from), "->", NodeName(to)); });
    co_return absl::UnavailableError(
        absl::StrCat("dial ", NodeName(from), "->", NodeName(to), ": connection refused"));
  }
  co_return Accept(from, to);
}

}  // namespace net
