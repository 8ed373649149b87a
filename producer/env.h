// Env: where a producer model runs (the scheduler, the network, its node).
#ifndef PRODSIM_PRODUCER_ENV_H_
#define PRODSIM_PRODUCER_ENV_H_

#include "producer/history.h"
#include "sim/core/scheduler.h"
#include "sim/net/network.h"

namespace sarama {

struct Env {
  sim::Scheduler* sched = nullptr;
  net::Network* network = nullptr;
  net::NodeId self = 0;
  // Where the producer records what it reported (optional).
  ProducerHistory* history = nullptr;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ENV_H_
