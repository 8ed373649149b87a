// What the producer reported to the application, recorded for the checks:
// each success and each error, with the message's id and, for a success,
// the sequence and epoch it was sent with (read before Sarama clears them).
#ifndef PRODSIM_PRODUCER_HISTORY_H_
#define PRODSIM_PRODUCER_HISTORY_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "producer/errors.h"
#include "sim/core/time.h"
#include "sim/kafka/types.h"

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
  // Wire mode: false when the client acknowledged the message without an
  // offset ("written, offset unknown": librdkafka's -1001, kafkajs with
  // acks=0); `offset` is then meaningless. The model always knows it.
  bool offset_known = true;
};

struct ErrorEvent {
  sim::Time at;
  uint64_t id = 0;
  std::string topic;
  int32_t partition = 0;
  Error err;
  int retries = 0;  // the message's retries when it failed
  // Wire mode: the client said the message is not in the log (librdkafka's
  // RD_KAFKA_MSG_STATUS_NOT_PERSISTED); not-persisted-absent holds it to
  // that. Sarama's model says nothing of the kind.
  bool not_persisted = false;
};

// What the producer did on its request path, step by step, for the failure
// signatures (checks/signature.h), which follow a violation back to its
// cause through these: which request carried a message, which answer came
// back, which retry resent it, which epoch bump reset its sequence. The
// model records them; a real client's run has none.
enum class StepKind : uint8_t {
  // The brokerProducer's bridge handed a Produce request to Broker.AsyncProduce
  // (one step per partition of it; correlation_id as sent).
  kSend,
  // The bridge's callback: the answer for one partition of a request
  // (`code`), or, with `error` set and no topic, the request failed as a
  // whole (a transport error; `correlation_id` -1 if it was never sent).
  kAnswer,
  // asyncProducer.retryBatch handed a batch (its sequences kept) straight
  // to a bridge, or (sarama-main) failed it because the producer shuts
  // down (`error` set).
  kRetryBatch,
  // asyncProducer.retryMessage sent a message back through the retry loop
  // (`error`: why); the partitionProducer regroups it into new batches.
  kRetryMessage,
  // asyncProducer.bumpIdempotentProducerEpoch: `epoch` is the new epoch,
  // `ids` the message whose failure caused it.
  kEpochBump,
  // brokerProducer: produceSet.add refused a message (Sarama's assertion).
  kAssertion,
  // partitionProducer.flushRetryBuffers sent a buffered message on; it
  // had no sequence number (`first_seq` -1) unless the profile gives one.
  kFlushRetryBuffer,
};

struct ProducerStep {
  sim::Time at;
  StepKind kind = StepKind::kSend;
  int32_t broker = -1;
  int32_t correlation_id = -1;
  std::string topic;
  int32_t partition = -1;
  int16_t epoch = -1;
  int32_t first_seq = -1;  // -1: no sequence
  std::vector<uint64_t> ids;
  // A batch step some of whose messages took their sequence numbers under
  // an older epoch than the batch carries (Sarama's produceSet takes the
  // epoch when it is made, partitionProducer.dispatch numbered the message
  // earlier; a bump between the two): each message's own epoch, beside
  // `ids`. Empty when every number is the batch's epoch's.
  std::vector<int16_t> numbered_under;
  int retries = 0;
  kafka::ErrorCode code = kafka::ErrorCode::NONE;
  std::string error;
  // A send step of a request the bridge could not write (Broker.
  // AsyncProduce failed before the write): kept in place, so that no step
  // recorded meanwhile moves, and left out of StepsInTimeOrder.
  bool withdrawn = false;
};

struct ProducerHistory {
  std::vector<AckEvent> acks;
  std::vector<ErrorEvent> errors;
  // In the order they were recorded, which is not quite time order: a send
  // step is recorded before Broker.AsyncProduce and given the request's
  // write time after it (StepsInTimeOrder).
  std::vector<ProducerStep> steps;
};

// The steps by time; steps of the same time in the order recorded.
inline std::vector<const ProducerStep*> StepsInTimeOrder(const ProducerHistory& h) {
  std::vector<const ProducerStep*> out;
  out.reserve(h.steps.size());
  for (const ProducerStep& s : h.steps) {
    if (!s.withdrawn) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ProducerStep* a, const ProducerStep* b) { return a->at < b->at; });
  return out;
}

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_HISTORY_H_
