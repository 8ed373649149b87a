// The simulated network: nodes, connections, latency, resets, partitions.
//
// No sockets and no bytes: a connection carries C++ payload objects. Each
// direction of a connection is FIFO, like TCP: a message is delivered no
// earlier than the one sent before it. Latency is drawn per message from the
// link's distribution (the net PRNG stream). A partition holds messages (TCP
// retransmits; nothing gets through, and no side is told) until it heals or
// the connection is reset; the client notices only through its own read
// timeout. A reset tells both sides (Recv yields nullopt, Send returns false)
// and loses what was in transit; a message that was already delivered stays
// delivered (a request that reached the broker is still processed; its
// response is lost). A dial fails when the target is down (refused, after a
// round trip) or unreachable (after the dial timeout).
//
// Choices the model makes, stated:
// - A message already on the wire when its direction is partitioned is held
//   too (TCP would drop the segment and retransmit it after the heal): from
//   the moment of Partition nothing gets through in that direction. On Heal
//   every held message is sent again, in order, with a fresh latency drawn
//   from the heal time.
// - A dial checks for a partition when it starts and again after its round
//   trip; a partitioned dial fails only when its timeout has passed (no SYN
//   retransmission is modelled for a partition, so a heal during the wait
//   does not help; a connect hang, below, does model them).
// - A blackhole (a stateful middlebox between two nodes losing its state:
//   a NAT gateway's idle timeout, a conntrack flush, a firewall failing
//   over) marks the connections open between them at that moment: from
//   then on every message of theirs, either way, is dropped and no side is
//   told; what was on the wire or held is dropped too. A connection dialled
//   later is not affected (the middlebox builds fresh state for it). Real
//   TCP retransmits the unacknowledged data until tcp_retries2 (15: about
//   924.6 s with Linux's RTO bounds, ip-sysctl.rst) and then fails the
//   connection with ETIMEDOUT; the model resets such a connection for both
//   sides kTcpRetries2Timeout after its first message lost in the hole (a
//   message on the wire at the blackhole counts from then: its real send
//   was at most one latency earlier). A blackholed connection nothing is
//   written to stays open. TCP keepalive is not modelled (Go's dialer turns
//   it on for Sarama's connections: an idle client side would learn of the
//   hole after about 150 s of Linux keepalive probes).
// - A connect hang (SYNs dropped: a firewall, a SYN flood, a full listen
//   backlog) holds a dial that starts during it: the dial goes on at the
//   first SYN retransmission (Linux's tcp_syn_retries = 6, an initial RTO of
//   1 s: kSynRetransmitsAfter) that finds the link free, or fails at its dial
//   timeout (Go's net.Dialer Timeout), or with ETIMEDOUT at kSynTimeout,
//   whichever comes first. Connections already open are not affected.
// - A listener's accept channel lives as long as the Network, across a node
//   going down and up; while the node is down dials are refused. Its backlog
//   is bounded (kAcceptBacklogMax); a full backlog refuses the dial.
// - Node ids and connection ids increase from 1; 0 is never a node.
// - Randomness: each direction of each link (node pair) has its own stream
//   forked from the Network's PRNG, so traffic on one link never shifts the
//   latency draws of another.
// - Buggify (sim/core/buggify.h), when given one, adds what a real network
//   allows besides: net.delay holds one message on a link a little longer
//   (later messages in its direction wait behind it, as TCP's in-order
//   delivery makes them; other connections overtake it), and
//   net.slow_connect makes a dial's handshake slower. Off, they draw nothing.
//
// Invariants: in each direction, delivery times never decrease and messages
// are delivered in the order sent; a reset connection never receives a
// delivery again; a direction holds messages only while it is partitioned;
// a blackholed connection holds nothing and delivers nothing again.
//
// sim/net knows nothing of Kafka: payloads derive from net::Payload.
#ifndef PRODSIM_SIM_NET_NETWORK_H_
#define PRODSIM_SIM_NET_NETWORK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "sim/core/buggify.h"
#include "sim/core/chan.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/core/time.h"

namespace net {

using sim::Duration;
using sim::Time;

using NodeId = uint32_t;
using ConnId = uint64_t;

// A message on a connection. Layers above derive their structs from it.
class Payload {
 public:
  virtual ~Payload() = default;
  // One line for the trace.
  virtual std::string Describe() const = 0;
};
using PayloadPtr = std::shared_ptr<const Payload>;

// Per-message latency of a link, in one direction.
struct LatencyModel {
  enum class Kind { kConstant, kUniform, kExponential };
  Kind kind = Kind::kConstant;
  Duration min = Duration::Micros(500);   // constant: the value; uniform: low
  Duration max = Duration::Micros(500);   // uniform: high
  Duration mean = Duration::Micros(500);  // exponential: mean (added to min)
  Duration cap = Duration::Seconds(1);    // no draw exceeds this

  static LatencyModel Constant(Duration d);
  static LatencyModel Uniform(Duration lo, Duration hi);
  static LatencyModel Exponential(Duration min, Duration mean, Duration cap);
  // The model of `kind` from a scenario's fields, each read as that kind
  // reads it (Constant: min; Uniform: min, max; Exponential: min, mean, cap).
  static LatencyModel Of(Kind kind, Duration min, Duration max, Duration mean, Duration cap);
  Duration Draw(sim::Prng& prng) const;
};

class Network;
struct Connection;
struct QueuedMessage;

// One side of a connection.
class Endpoint {
 public:
  Endpoint() = default;
  Endpoint(std::shared_ptr<Connection> conn, int side) : conn_(std::move(conn)), side_(side) {}

  bool valid() const { return conn_ != nullptr; }
  ConnId id() const;
  NodeId local() const;
  NodeId peer() const;
  // False if the connection was reset or closed: nothing is sent.
  bool Send(PayloadPtr msg);
  // The next message, or nullopt once the connection is reset or closed
  // (messages already delivered are still received first).
  sim::Chan<PayloadPtr>::RecvAwaiter Recv();
  // The channel Recv reads, for a select (a read with a timeout).
  // REQUIRES: valid().
  sim::Chan<PayloadPtr>* inbox() const;
  // Closes the connection from this side: both sides see it reset.
  void Close();
  bool closed() const;
  // The messages this side sent that the peer has not yet taken with Recv
  // (on the wire, held by a partition, or in the peer's inbox); 0 once
  // closed. The wire bridge bounds what a real client has in flight with
  // it: a request the broker has taken is being served or done.
  size_t Queued() const;

 private:
  std::shared_ptr<Connection> conn_;
  int side_ = 0;
};

// The network's buggify sites. Rates are per opportunity: net.delay per
// message put on the wire, net.slow_connect per dial that gets to its
// handshake.
inline constexpr sim::BuggifySite kBuggifyDelay{"net.delay", 1, 10};
inline constexpr sim::BuggifySite kBuggifySlowConnect{"net.slow_connect", 1, 4};
// The most a fired site adds.
inline constexpr Duration kBuggifyDelayMax = Duration::Millis(5);
inline constexpr Duration kBuggifySlowConnectMax = Duration::Millis(50);
inline constexpr sim::BuggifySite kBuggifySites[] = {kBuggifyDelay, kBuggifySlowConnect};

struct DialOptions {
  Duration dial_timeout = Duration::Seconds(30);  // Sarama's Net.DialTimeout
};

// Linux's TCP timers, with the default sysctls (Documentation/networking/
// ip-sysctl.rst). tcp_retries2 = 15: data unacknowledged this long fails the
// connection with ETIMEDOUT ("a hypothetical timeout of 924.6 seconds", RTO
// from 200 ms doubling to 120 s).
inline constexpr Duration kTcpRetries2Timeout = Duration::Millis(924600);
// tcp_syn_retries = 6 with TCP_TIMEOUT_INIT = 1 s: the SYN goes again 1, 3,
// 7, 15, 31 and 63 s after the first, and connect() gives up with ETIMEDOUT
// after 127 s.
inline constexpr Duration kSynRetransmitsAfter[] = {Duration::Seconds(1),  Duration::Seconds(3),
                                                    Duration::Seconds(7),  Duration::Seconds(15),
                                                    Duration::Seconds(31), Duration::Seconds(63)};
inline constexpr Duration kSynTimeout = Duration::Seconds(127);

class Network {
 public:
  Network(sim::Scheduler& sched, sim::Prng prng);
  ~Network();

  NodeId AddNode(std::string name);
  const std::string& NodeName(NodeId n) const;

  // A node that is down refuses dials; taking it down resets all its
  // connections (a crashed process).
  void SetNodeUp(NodeId n, bool up);
  bool NodeUp(NodeId n) const;

  // Perturbation points (kBuggifySites); null, the default, is off. The
  // Buggify must outlive the Network.
  void SetBuggify(sim::Buggify* buggify);

  void SetDefaultLatency(LatencyModel m);
  // Latency for messages from `from` to `to` (one direction).
  void SetLinkLatency(NodeId from, NodeId to, LatencyModel m);
  // Adds `extra` to every message from `from` to `to` sent before `until`.
  void AddLatencySpike(NodeId from, NodeId to, Duration extra, Time until);

  // One-way partition: messages from `from` to `to` are held. Two-way:
  // call for both directions. Heal delivers what was held (in order).
  void Partition(NodeId from, NodeId to);
  void Heal(NodeId from, NodeId to);
  bool Partitioned(NodeId from, NodeId to) const;

  // A stateful middlebox between `a` and `b` loses its state: every
  // connection open between them now (either side dialled) silently drops
  // all its messages from now on, both ways, and resets with ETIMEDOUT
  // kTcpRetries2Timeout after its first lost message. Connections dialled
  // later are not affected.
  void Blackhole(NodeId a, NodeId b);
  // SYNs from `from` to `to` get no answer until `until`: a dial that
  // starts before then waits for a SYN retransmission after it (Dial).
  // Windows add up: the link is free once the latest has ended.
  void HangConnects(NodeId from, NodeId to, Time until);
  bool ConnectsHang(NodeId from, NodeId to) const;

  // The channel on which `node` accepts connections (created on first use).
  sim::Chan<Endpoint>* Listen(NodeId node);

  // Connects from -> to. Succeeds after one round trip; fails with
  // UNAVAILABLE (refused) if `to` is down or not listening, or
  // DEADLINE_EXCEEDED after the dial timeout if either direction is
  // partitioned. While the link's connects hang, the round trip starts at
  // the first SYN retransmission that finds it free; none before the dial
  // timeout or kSynTimeout: DEADLINE_EXCEEDED then.
  sim::Task<absl::StatusOr<Endpoint>> Dial(NodeId from, NodeId to, DialOptions opts = {});

  // Resets one connection (both sides learn; in-transit messages are lost),
  // or every connection of a node, or every connection between two nodes.
  void Reset(ConnId id);
  void ResetNode(NodeId n);
  void ResetBetween(NodeId a, NodeId b);

  // Test hooks.
  size_t open_connections() const;
  uint64_t messages_delivered() const { return delivered_; }
  uint64_t messages_lost() const { return lost_; }

  // Limits: messages queued in one direction of a connection (on the wire,
  // held, or delivered but not yet received), and dials waiting in a
  // listener's accept channel. Exceeding the first stops the run with a
  // message (a runaway scenario); a full backlog refuses the dial.
  static constexpr size_t kQueuedMessagesMax = size_t{1} << 20;
  static constexpr size_t kAcceptBacklogMax = 4096;

 private:
  friend class Endpoint;
  friend struct Connection;
  struct Impl;
  using ConnPtr = std::shared_ptr<Connection>;

  bool SendOn(const ConnPtr& c, int side, PayloadPtr msg);
  // Puts a message on the wire in the direction sent by `side`.
  void Transmit(const ConnPtr& c, int side, uint64_t seq, PayloadPtr msg);
  void Deliver(const ConnPtr& c, int side, uint64_t epoch);
  // Partition: moves what is on the wire into the held queue, in order.
  void HoldInFlight(Connection& c, int side);
  // Heal: sends the held queue, in order.
  void ReleaseHeld(const ConnPtr& c, int side);
  void ResetConnection(Connection& c, uint64_t reason, const std::string& why);
  // Blackhole: drops one message lost in the hole, counted and noted.
  void DropInHole(Connection& c, int side, const QueuedMessage& m);
  // Blackhole: the connection fails kTcpRetries2Timeout from now, unless
  // an earlier lost message already set that.
  void ArmRetransmitTimeout(const ConnPtr& c);
  // The first SYN retransmission of a dial started at `start` that finds
  // from -> to free, before `deadline`, waited for; false if none.
  sim::Task<bool> AwaitSynAnswered(NodeId from, NodeId to, Time start, Time deadline);
  Duration DrawLatency(NodeId from, NodeId to);
  Duration SpikeExtra(NodeId from, NodeId to);
  bool Listening(NodeId n) const;
  absl::StatusOr<Endpoint> Accept(NodeId from, NodeId to);
  template <typename Describe>
  void Note(uint64_t kind, uint64_t a, uint64_t b, Describe&& describe);

  std::unique_ptr<Impl> impl_;
  uint64_t delivered_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace net

#endif  // PRODSIM_SIM_NET_NETWORK_H_
