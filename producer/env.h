// Env: where a producer model runs (the scheduler, the network, its node),
// and which Sarama it follows.
#ifndef PRODSIM_PRODUCER_ENV_H_
#define PRODSIM_PRODUCER_ENV_H_

#include "producer/history.h"
#include "producer/profile.h"
#include "sim/core/scheduler.h"
#include "sim/net/network.h"

namespace sarama {

struct Env {
  sim::Scheduler* sched = nullptr;
  net::Network* network = nullptr;
  net::NodeId self = 0;
  // Where the producer records what it reported (optional).
  ProducerHistory* history = nullptr;
  // Whose client.go and broker.go the Client and its Brokers follow (the
  // AsyncProducer's own profile is the State's; AsyncProducer::New sets
  // this one to it).
  Profile profile = Profile::kSarama_1_42_1;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ENV_H_
