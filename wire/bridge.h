// The simulated cluster on real sockets: one listening socket per broker on
// 127.0.0.1 (a port the kernel picks), each accepted TCP connection bridged
// to a simulated connection from the client node to that broker, so that
// every fault of sim/net and sim/kafka acts on the real client's bytes as it
// acts on the model's messages.
//
// What happens to a connection, and why (Kafka 2.6's SocketServer, or what
// TCP does):
//   - bytes from the client are split into frames (kafka::wire::Framer) and
//     decoded; each request is sent on the simulated connection, where the
//     network's latency, partitions and resets apply, and the broker model
//     serves it; its response comes back the same way, is encoded in the
//     request's version and written to the socket;
//   - a malformed frame, or a request the model does not serve: the socket
//     is closed without an answer (SocketServer closes the channel), and the
//     reason is recorded (ClientRecord::malformed_frames, not_served);
//   - the simulated connection is reset (a reset fault, a lost response, a
//     crash): the socket is closed with an RST (SO_LINGER 0), which the
//     client sees as ECONNRESET, as it would from a real broker's host;
//   - the client closes its socket: the simulated connection is closed, and
//     the broker model sees the reset, as Kafka sees the channel close;
//   - a connection to a crashed broker (its node down): accepted and reset at
//     once. A real host with no process on the port answers the SYN with an
//     RST (ECONNREFUSED); here the listening socket stays open across the
//     crash, so the client sees the connect succeed and then ECONNRESET,
//     which every client handles the same way (a transport failure).
//   - a dial the network model fails (a partition at connect time): reset.
//
// Every record of a produce request must carry the header prodsim-id (the
// codec reads it into Record::record_id); one without closes the connection
// and is counted in `records_without_id` (RunReal makes it a harness error:
// its driver is broken; serve reports it: a user's application may be).
//
// Everything a client can make the bridge hold is bounded (BridgeLimits),
// so that a hostile or broken client cannot take the harness down:
//   - back-pressure, Kafka's muting made a bound: a 2.6 broker reads no
//     further request from a connection until the one it read is answered
//     (SocketServer's Processor mutes the channel on each receive and
//     unmutes it once the response is sent). The bridge sends a
//     connection's requests on as they come, up to `in_flight_max`, because
//     the broker model serves a connection's requests one at a time, in
//     order, which is what muting gives (a request waiting in the bridge
//     instead of on the simulated link would pay the link's latency twice).
//     Past that, or while `out_bytes_max` of responses wait for a client
//     that does not read them, the bridge stops reading the socket (the
//     kernel's buffers then stop the client), holding at most one whole
//     frame and one read's bytes beyond it;
//   - request size and content: the codec's limits (socket.request.max.bytes,
//     and sim/kafka/wire/codec.h's per-request ones);
//   - memory across connections: `held_bytes_max` (read buffers, requests
//     in flight, responses not yet written); over it, the connection holding
//     the most is closed;
//   - connections: `connections_max`; at the cap the least recently active
//     connection is closed to make room, as Kafka's Processor closes
//     Selector.lowestPriorityChannel when max.connections is exceeded;
//   - descriptors: when accept fails (EMFILE, ENFILE, ...) the listeners are
//     paused for `accept_backoff` and tried again; the open connections are
//     still served. (Kafka 2.6's Acceptor logs the IOException and selects
//     again at once, a busy loop while the descriptors stay short.)
//   - the history: what requests can add to the brokers' logs and history is
//     charged against `world_bytes_max`; past it the run stops with a
//     harness error, as a runaway scenario stops at limits.steps.
// Each limit reached is noted in the history once (and said through
// `set_say`, which serve prints to stderr) and counted; Summary() gives the
// counts for the end of a run.
//
// Simulated time (wire/lockstep_world.h): the same connections without
// sockets. The client's driver dials, writes and closes through the
// lockstep protocol (clients/README.md); ListenVirtual gives the brokers
// addresses where nothing listens, VirtualDial/Write/Close stand for the
// kernel's connect, the bytes a read would return and the client's close,
// and what a socket would carry back goes to a VirtualSink. The framing,
// the faults, the limits and the history are the same code; what differs:
//   - a dial answers when the simulated dial does (connected, refused by a
//     node that is down, or no answer across a partition until the client
//     gives up), where a real loopback connect succeeds at once;
//   - bytes the bridge is not reading (muted) wait in the connection, as
//     they would in the kernel's buffers; responses go to the sink whole,
//     since the driver reads everything it is handed.
//
// Single-threaded: everything runs on the EventLoop's thread, inside the
// scheduler's Outside::Tick or in the simulated tasks.
#ifndef PRODSIM_WIRE_BRIDGE_H_
#define PRODSIM_WIRE_BRIDGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/status/status.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/wire/codec.h"
#include "sim/net/network.h"
#include "wire/event_loop.h"

namespace wire {

// The bridge's bounds. Kafka 2.6 sets none of these by default (max.connections
// and queued.max.request.bytes are unbounded); the values are prodsim's, each
// far above what a scenario's client uses.
struct BridgeLimits {
  // Below the 1,024 descriptors a process usually may open; a trial's client
  // opens one connection per broker and a bootstrap one, a few dozen at most.
  size_t connections_max = 512;
  // Requests of one connection sent to the broker and not yet answered (or,
  // for acks=0, not yet taken by the broker). Clients keep at most 5 in
  // flight (librdkafka and the Java client with idempotence, Sarama's
  // default); kafkajs has no bound of its own.
  size_t in_flight_max = 32;
  // Response bytes of one connection waiting for the client to read them.
  size_t out_bytes_max = size_t{1} << 20;
  // Everything the connections hold together: room for two frames of
  // socket.request.max.bytes (100 MiB) and more.
  size_t held_bytes_max = size_t{256} << 20;
  // What served requests may add to the brokers' logs and the history,
  // estimated per request (WorldCharge in bridge.cc); a 1,000-message trial
  // adds about a megabyte.
  size_t world_bytes_max = size_t{1} << 30;
  // How long accepting pauses when accept fails (out of descriptors).
  sim::Duration accept_backoff = sim::Duration::Millis(200);
  // Texts kept per kind of problem (every one is counted).
  size_t problems_kept = 100;
};

// Where a virtual connection's bytes and ends go (the lockstep world).
class VirtualSink {
 public:
  virtual void Connected(uint64_t conn) = 0;
  virtual void Data(uint64_t conn, std::string bytes) = 0;
  // `how`: "reset", "eof", "refused" or "timeout" (clients/README.md).
  virtual void Closed(uint64_t conn, std::string_view how) = 0;

 protected:
  ~VirtualSink() = default;
};

class Bridge {
 public:
  // The first texts of one kind of problem, with the world's time, and how
  // many there were in all.
  struct Kept {
    std::vector<std::string> first;
    uint64_t total = 0;
    bool empty() const { return total == 0; }
  };
  // What the bridge saw that is the client's fault or the harness's.
  struct Problems {
    Kept malformed_frames;
    Kept not_served;
    Kept records_without_id;  // records without a valid prodsim-id header
    Kept limits;              // a BridgeLimits bound reached
    Kept harness_errors;
  };

  // REQUIRES: every argument outlives the Bridge; the scheduler's tasks are
  // destroyed before it (they hold its connections).
  Bridge(EventLoop& loop, sim::Scheduler& sched, net::Network& network, kafka::Cluster& cluster,
         net::NodeId client_node, BridgeLimits limits = {});
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  // Opens one listening socket per broker on 127.0.0.1, port 0.
  absl::Status Listen();
  // Simulated time: no socket; broker-i is 127.0.0.1:(i+1), where nothing
  // listens, and connections come through VirtualDial. The event loop's
  // before-wait hook is not used: the lockstep world calls ResumeMuted
  // itself, at points of the simulation's own.
  void ListenVirtual(VirtualSink* sink);
  // The client's dial `conn` (its own id, unused before) to host:port; the
  // answer goes to the sink. False if `conn` was used before (the driver's
  // protocol error).
  bool VirtualDial(uint64_t conn, std::string_view host, int port);
  // Bytes the client wrote on `conn`; dropped if it is closed. False if
  // `conn` was never dialled.
  bool VirtualWrite(uint64_t conn, std::string_view bytes);
  // The client closed `conn` (nothing goes to the sink). False if `conn`
  // was never dialled.
  bool VirtualClose(uint64_t conn);
  // Sends on what waits in connections that were not reading, where there
  // is room again (the broker took a request); true if a request went.
  bool ResumeMuted();
  // "127.0.0.1:P1,127.0.0.1:P2,...", every broker, in id order.
  std::string bootstrap() const;
  const kafka::wire::EncodeContext& context() const { return context_; }
  const Problems& problems() const { return problems_; }
  // One line per kind of problem and limit seen, with its count and first
  // text, for the end of a run; empty if none.
  std::vector<std::string> Summary() const;
  // Closes every listening socket and connection (RST). Idempotent.
  void CloseAll();
  size_t open_connections() const { return conns_.size(); }
  // Where each accepted and closed connection is recorded (the trial's
  // broker history); none if null.
  void set_history(kafka::History* history) { history_ = history; }
  // Also told each limit's first note as it happens (serve prints it).
  void set_say(std::function<void(const std::string&)> say) { say_ = std::move(say); }
  uint64_t connections_accepted() const { return accepted_; }
  // The bytes the connections hold now (read buffers, requests in flight,
  // responses not yet written), as counted against held_bytes_max.
  size_t held_bytes() const { return held_total_; }

 private:
  struct Conn;
  using ConnPtr = std::shared_ptr<Conn>;
  enum class Limit : size_t { kDescriptors, kConnections, kHeldBytes, kWorldBytes, kCount };

  void OnAccept(kafka::BrokerId broker, int listen_fd);
  void Admit(kafka::BrokerId broker, int fd);
  void PauseAccepting(int error);
  sim::Task<void> ResumeAcceptingLater();
  void EvictIdlest();
  void OnSocket(const ConnPtr& c, uint32_t events);
  // Reads until the socket is drained or a whole frame must wait; false if
  // the connection was closed.
  bool ReadSocket(const ConnPtr& c);
  // Sends on every whole frame buffered while the connection has room; false
  // if the connection was closed.
  bool HandleFrames(const ConnPtr& c);
  bool CanDispatch(const Conn& c) const;
  // Decodes one frame and sends it on; false if the connection was closed.
  bool Dispatch(const ConnPtr& c, const std::string& frame);
  void SendToBroker(const ConnPtr& c, std::shared_ptr<kafka::Message> m);
  // Retires the acks=0 requests at the head of the connection's in-flight
  // list that the broker has taken.
  void RetireTaken(Conn& c);
  // Sends what waits if there is room again, and reads again once no whole
  // frame waits.
  void Resume(const ConnPtr& c);
  // Feeds bytes read (a socket's, or a virtual connection's) to the framer.
  bool Received(const ConnPtr& c, std::string_view bytes);
  void SetReading(const ConnPtr& c, bool reading);
  void UpdateEvents(Conn& c);
  void WriteToSocket(const ConnPtr& c, std::string bytes);
  void Flush(const ConnPtr& c);
  // Brings held_total_ up to date with the connection's bytes.
  void Reaccount(Conn& c);
  // Closes the connections holding the most until held_total_ is within
  // its limit; false if `c` was among them.
  bool EnforceHeldBytes(const ConnPtr& c);
  // Closes the socket (with an RST if `reset`) and the simulated connection;
  // a virtual one tells the sink `how` (by default "reset" or "eof"),
  // unless the client closed it.
  void Close(const ConnPtr& c, bool reset, std::string_view how = {});
  sim::Task<void> Pump(ConnPtr c);
  void Keep(Kept& kept, std::string text);
  // Counts a limit reached; the first of its kind is noted in the history
  // and said.
  void Reached(Limit limit, std::string text);
  void Note(std::string text);
  std::string Now() const;

  EventLoop& loop_;
  sim::Scheduler& sched_;
  net::Network& network_;
  kafka::Cluster& cluster_;
  net::NodeId client_node_;
  BridgeLimits limits_;
  kafka::wire::EncodeContext context_;
  absl::btree_map<int32_t, int> listeners_;  // broker id -> fd
  absl::btree_map<uint64_t, ConnPtr> conns_;
  absl::btree_set<uint64_t> muted_;  // connections not reading their socket
  VirtualSink* sink_ = nullptr;      // set: simulated time, no sockets
  // A virtual connection's client id -> the bridge's id (0 once closed).
  absl::btree_map<uint64_t, uint64_t> virtual_ids_;
  uint64_t next_conn_ = 1;
  uint64_t accepted_ = 0;
  uint64_t activity_ = 0;
  uint64_t dispatched_ =
      0;  // requests sent on, in all  // bumped at each read: the connections' recency
  size_t held_total_ = 0;
  size_t world_bytes_ = 0;
  bool world_full_ = false;
  bool accept_paused_ = false;
  std::array<uint64_t, static_cast<size_t>(Limit::kCount)> reached_{};
  kafka::History* history_ = nullptr;
  std::function<void(const std::string&)> say_;
  Problems problems_;
};

}  // namespace wire

#endif  // PRODSIM_WIRE_BRIDGE_H_
