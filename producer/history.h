// What the producer reported to the application, recorded for the checks:
// each success and each error, with the message's id and, for a success,
// the sequence and epoch it was sent with (read before Sarama clears them).
#ifndef PRODSIM_PRODUCER_HISTORY_H_
#define PRODSIM_PRODUCER_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "producer/errors.h"
#include "sim/core/time.h"

namespace sarama {

struct AckEvent {
  sim::Time at;
  uint64_t id = 0;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int16_t producer_epoch = 0;
  int32_t sequence = 0;
  bool has_sequence = false;
  int retries = 0;
};

struct ErrorEvent {
  sim::Time at;
  uint64_t id = 0;
  std::string topic;
  int32_t partition = 0;
  Error err;
};

struct ProducerHistory {
  std::vector<AckEvent> acks;
  std::vector<ErrorEvent> errors;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_HISTORY_H_
