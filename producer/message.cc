// ProducerMessage's size estimate and reset (sarama v1.42.1
// async_producer.go). Headers are not modelled, so a record's size is its
// fixed overhead plus its key and value lengths.
#include "producer/message.h"

#include <cstdint>

#include "base/assert.h"

namespace sarama {

// sarama v1.42.1 async_producer.go: ProducerMessage.ByteSize. Version 2 is
// the record-batch format (Kafka >= 0.11), which counts the worst-case record
// overhead; older versions count the legacy message overhead. A nil Value and
// an empty one both add nothing, so value_bytes == 0 stands for either.
int ProducerMessage::ByteSize(int version) const {
  PRODSIM_ASSERT(value_bytes >= 0);
  // Go's int is 64 bits; sum in 64 bits and require that the total fits.
  int64_t size = version >= 2 ? kMaximumRecordOverhead : kProducerMessageOverhead;
  if (key.has_value()) size += static_cast<int64_t>(key->size());
  size += value_bytes;
  PRODSIM_ASSERT_MSG(size <= INT32_MAX, "message size does not fit an int");
  return static_cast<int>(size);
}

// sarama v1.42.1 async_producer.go: ProducerMessage.clear. It resets the
// retry bookkeeping only: topic, key, value, partition, offset and timestamp
// stay as they are.
void ProducerMessage::Clear() {
  flags = 0;
  retries = 0;
  sequence_number = 0;
  producer_epoch = 0;
  has_sequence = false;
}

}  // namespace sarama
