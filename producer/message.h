// ProducerMessage and ProducerError, as the application and the producer's
// goroutines see them (sarama async_producer.go: ProducerMessage,
// ProducerError, flagSet).
//
// Messages travel between goroutines as shared pointers, as Go passes
// *ProducerMessage: every stage mutates the same object (retries, flags,
// sequence number), and the application gets the same object back on
// Successes or Errors. `id` is the harness's name for an application
// message (Sarama's Metadata field is where a user would keep it).
#ifndef PRODSIM_PRODUCER_MESSAGE_H_
#define PRODSIM_PRODUCER_MESSAGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "producer/errors.h"
#include "sim/core/time.h"

namespace sarama {

// sarama: flagSet.
enum Flag : int8_t {
  kSyn = 1 << 0,       // first message from partitionProducer to brokerProducer
  kFin = 1 << 1,       // final message from partitionProducer to brokerProducer and back
  kShutdown = 1 << 2,  // start the shutdown process
};

struct ProducerMessage {
  std::string topic;
  std::optional<std::string> key;  // nullopt: a nil Encoder
  int32_t value_bytes = 0;         // the Value's length (its bytes never matter here)
  uint64_t id = 0;                 // harness annotation (Sarama: Metadata)

  // Filled in by the producer.
  int64_t offset = 0;
  int32_t partition = 0;
  sim::Time timestamp;  // zero: set when added to a produce set

  // Internal (unexported in Go).
  int retries = 0;
  int8_t flags = 0;
  int32_t sequence_number = 0;
  int16_t producer_epoch = 0;
  bool has_sequence = false;

  // sarama: ProducerMessage.ByteSize.
  int ByteSize(int version) const;
  // sarama: ProducerMessage.clear.
  void Clear();
};

using MessagePtr = std::shared_ptr<ProducerMessage>;

// sarama: producerMessageOverhead, maximumRecordOverhead, recordBatchOverhead.
inline constexpr int kProducerMessageOverhead = 26;
inline constexpr int kMaximumRecordOverhead = 5 * 5 + 10 + 1;
inline constexpr int kRecordBatchOverhead = 61;
// sarama: MaxRequestSize (100 MiB).
inline constexpr int kMaxRequestSize = 100 * 1024 * 1024;

struct ProducerError {
  MessagePtr msg;
  Error err;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_MESSAGE_H_
