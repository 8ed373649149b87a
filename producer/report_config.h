// The producer configuration of IBM/sarama#2803's report, for tests: Sarama
// v1.42.1 against Kafka 2.6 with Idempotent, Net.MaxOpenRequests=1,
// RequiredAcks=WaitForAll, Retry.Max=100000, Retry.Backoff=100ms and both
// Return channels on.
#ifndef PRODSIM_PRODUCER_REPORT_CONFIG_H_
#define PRODSIM_PRODUCER_REPORT_CONFIG_H_

#include "producer/config.h"

namespace sarama {

inline Config ReportConfig() {
  Config c = NewConfig();
  c.producer.idempotent = true;
  c.net.max_open_requests = 1;
  c.producer.required_acks = kWaitForAll;
  c.producer.retry.max = 100000;
  c.producer.retry.backoff = sim::Duration::Millis(100);
  c.producer.return_.successes = true;
  c.producer.return_.errors = true;
  c.version = V2_6_0_0;
  return c;
}

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_REPORT_CONFIG_H_
