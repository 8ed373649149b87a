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
// codec reads it into Record::record_id); one without is a harness error
// (the driver is broken), recorded in `harness_errors()`.
//
// Single-threaded: everything runs on the EventLoop's thread, inside the
// scheduler's Outside::Tick or in the simulated tasks.
#ifndef PRODSIM_WIRE_BRIDGE_H_
#define PRODSIM_WIRE_BRIDGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/wire/codec.h"
#include "sim/net/network.h"
#include "wire/event_loop.h"

namespace wire {

class Bridge {
 public:
  // What the bridge saw that is the client's fault or the harness's, with
  // the world's time.
  struct Problems {
    std::vector<std::string> malformed_frames;
    std::vector<std::string> not_served;
    std::vector<std::string> harness_errors;
  };

  // REQUIRES: every argument outlives the Bridge; the scheduler's tasks are
  // destroyed before it (they hold its connections).
  Bridge(EventLoop& loop, sim::Scheduler& sched, net::Network& network, kafka::Cluster& cluster,
         net::NodeId client_node);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  // Opens one listening socket per broker on 127.0.0.1, port 0.
  absl::Status Listen();
  // "127.0.0.1:P1,127.0.0.1:P2,...", every broker, in id order.
  std::string bootstrap() const;
  const kafka::wire::EncodeContext& context() const { return context_; }
  const Problems& problems() const { return problems_; }
  // Closes every listening socket and connection (RST). Idempotent.
  void CloseAll();
  size_t open_connections() const { return conns_.size(); }
  // Where each accepted and closed connection is recorded (the trial's
  // broker history); none if null.
  void set_history(kafka::History* history) { history_ = history; }
  uint64_t connections_accepted() const { return accepted_; }

 private:
  struct Conn;
  using ConnPtr = std::shared_ptr<Conn>;

  void OnAccept(kafka::BrokerId broker, int listen_fd);
  void OnSocket(const ConnPtr& c, uint32_t events);
  // Decodes every whole frame buffered; false if the connection was closed.
  bool HandleFrames(const ConnPtr& c);
  void SendToBroker(const ConnPtr& c, std::shared_ptr<kafka::Message> m);
  void WriteToSocket(const ConnPtr& c, std::string bytes);
  void Flush(const ConnPtr& c);
  // Closes the socket (with an RST if `reset`) and the simulated connection.
  void Close(const ConnPtr& c, bool reset);
  sim::Task<void> Pump(ConnPtr c);
  std::string Now() const;

  EventLoop& loop_;
  sim::Scheduler& sched_;
  net::Network& network_;
  kafka::Cluster& cluster_;
  net::NodeId client_node_;
  kafka::wire::EncodeContext context_;
  absl::btree_map<int32_t, int> listeners_;  // broker id -> fd
  absl::btree_map<uint64_t, ConnPtr> conns_;
  uint64_t next_conn_ = 1;
  uint64_t accepted_ = 0;
  kafka::History* history_ = nullptr;
  Problems problems_;
};

}  // namespace wire

#endif  // PRODSIM_WIRE_BRIDGE_H_
