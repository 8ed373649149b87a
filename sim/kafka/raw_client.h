// RawClient: a minimal request/response client for the cluster model, used
// by tests and demos (not a producer model). One connection per broker,
// dialled on first use and again after a reset; a call waits for its
// response, the connection's reset, or its timeout.
#ifndef PRODSIM_SIM_KAFKA_RAW_CLIENT_H_
#define PRODSIM_SIM_KAFKA_RAW_CLIENT_H_

#include <memory>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/protocol.h"
#include "sim/net/network.h"

namespace kafka {

class RawClient {
 public:
  RawClient(sim::Scheduler& sched, net::Network& network, net::NodeId self)
      : sched_(sched), network_(network), self_(self) {}

  // Sends `req` to `broker` and waits for the response with the same
  // correlation id. UNAVAILABLE if the connection fails or is reset,
  // DEADLINE_EXCEEDED after `timeout`.
  sim::Task<absl::StatusOr<net::PayloadPtr>> Call(net::NodeId broker, std::shared_ptr<Message> req,
                                                  sim::Duration timeout);
  // Sends without waiting (acks=0).
  sim::Task<absl::Status> Send(net::NodeId broker, std::shared_ptr<Message> req);

  int32_t NextCorrelationId() { return next_correlation_id_++; }
  // Closes the connection to `broker` (the next call dials again).
  void Disconnect(net::NodeId broker);

 private:
  sim::Task<absl::StatusOr<net::Endpoint>> Connection(net::NodeId broker);

  sim::Scheduler& sched_;
  net::Network& network_;
  net::NodeId self_;
  absl::btree_map<net::NodeId, net::Endpoint> conns_;
  int32_t next_correlation_id_ = 1;
};

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_RAW_CLIENT_H_
