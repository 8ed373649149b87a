#include "producer/produce_set.h"

#include "base/assert.h"

namespace sarama {

// sarama v1.42.1 produce_set.go: produceSet.add
Error ProduceSet::Add(MessagePtr msg, sim::Time now) {
  sim::Time timestamp = msg->timestamp == sim::Time() ? now : msg->timestamp;
  timestamp =
      sim::Time::FromNanos(timestamp.nanos() - timestamp.nanos() % 1000000);  // Truncate(ms)
  const bool v2 = conf_->version.IsAtLeast(V0_11_0_0);
  auto& partitions = msgs_[msg->topic];
  int size = 0;
  PartitionSetPtr& set = partitions[msg->partition];
  if (set == nullptr) {
    set = std::make_shared<PartitionSet>();
    if (v2) {
      set->first_timestamp = timestamp;
      set->records_to_send.producer_id = kafka::ProducerId(producer_id_);
      set->records_to_send.producer_epoch = kafka::Epoch(producer_epoch_);
      if (conf_->producer.idempotent) {
        set->records_to_send.base_sequence = kafka::Sequence(msg->sequence_number);
      } else {
        set->records_to_send.base_sequence = kafka::Sequence(-1);
      }
      size = kRecordBatchOverhead;
    }
  }
  if (v2 && conf_->producer.idempotent &&
      msg->sequence_number < set->records_to_send.base_sequence.value) {
    return Error::Of(ErrorKind::kProduceSetAssertion,
                     "assertion failed: message out of sequence added to a batch");
  }
  // Past this point Go cannot fail: the message is in the set.
  set->msgs.push_back(msg);
  const int key_len = msg->key.has_value() ? static_cast<int>(msg->key->size()) : 0;
  if (v2) {
    size += kMaximumRecordOverhead + key_len + msg->value_bytes;
  } else {
    size = kProducerMessageOverhead + key_len + msg->value_bytes;
  }
  set->records_to_send.records.push_back(
      kafka::Record{msg->key.value_or(std::string()), msg->value_bytes, timestamp, msg->id});
  set->buffer_bytes += size;
  buffer_bytes_ += size;
  ++buffer_count_;
  return kNoError;
}

// sarama v1.42.1 produce_set.go: produceSet.buildRequest (v3+ record batches)
std::shared_ptr<kafka::ProduceRequest> ProduceSet::BuildRequest() const {
  auto req = kafka::NewRequest<kafka::ProduceRequest>(0);
  req->acks = conf_->producer.required_acks;
  req->timeout = conf_->producer.timeout;
  for (const auto& [topic, partitions] : msgs_) {
    for (const auto& [partition, set] : partitions) {
      req->batches[kafka::TopicPartition{topic, kafka::PartitionId(partition)}] =
          set->records_to_send;
    }
  }
  return req;
}

std::vector<ProduceSet::Entry> ProduceSet::Partitions(sim::Prng& prng) const {
  std::vector<const std::string*> topics;
  for (const auto& [topic, partitions] : msgs_) topics.push_back(&topic);
  for (size_t i = topics.size(); i > 1; --i) std::swap(topics[i - 1], topics[prng.Below(i)]);
  std::vector<Entry> out;
  for (const std::string* topic : topics) {
    const size_t first = out.size();
    for (const auto& [p, set] : msgs_.at(*topic)) out.push_back(Entry{*topic, p, set});
    for (size_t i = out.size() - first; i > 1; --i) {
      std::swap(out[first + i - 1], out[first + prng.Below(i)]);
    }
  }
  return out;
}

// sarama v1.42.1 produce_set.go: produceSet.dropPartition
std::vector<MessagePtr> ProduceSet::DropPartition(const std::string& topic, int32_t partition) {
  auto t = msgs_.find(topic);
  if (t == msgs_.end()) return {};
  auto p = t->second.find(partition);
  if (p == t->second.end()) return {};
  PartitionSetPtr set = p->second;
  buffer_bytes_ -= set->buffer_bytes;
  buffer_count_ -= static_cast<int>(set->msgs.size());
  t->second.erase(p);
  return set->msgs;
}

// sarama v1.42.1 produce_set.go: produceSet.wouldOverflow
bool ProduceSet::WouldOverflow(const ProducerMessage& msg) const {
  const int version = conf_->version.IsAtLeast(V0_11_0_0) ? 2 : 1;
  if (buffer_bytes_ + msg.ByteSize(version) >= kMaxRequestSize - 10 * 1024) return true;
  if (PartitionSetPtr set = Find(msg.topic, msg.partition);
      set != nullptr &&
      set->buffer_bytes + msg.ByteSize(version) >= conf_->producer.max_message_bytes) {
    return true;
  }
  return conf_->producer.flush.max_messages > 0 &&
         buffer_count_ >= conf_->producer.flush.max_messages;
}

// sarama v1.42.1 produce_set.go: produceSet.readyToFlush
bool ProduceSet::ReadyToFlush() const {
  const auto& flush = conf_->producer.flush;
  if (Empty()) return false;
  if (flush.frequency.nanos() == 0 && flush.bytes == 0 && flush.messages == 0) return true;
  if (flush.messages > 0 && buffer_count_ >= flush.messages) return true;
  return flush.bytes > 0 && buffer_bytes_ >= flush.bytes;
}

void ProduceSet::PutPartition(const std::string& topic, int32_t partition, PartitionSetPtr set) {
  PRODSIM_ASSERT(set != nullptr);
  buffer_bytes_ += set->buffer_bytes;
  buffer_count_ += static_cast<int>(set->msgs.size());
  msgs_[topic][partition] = std::move(set);
}

PartitionSetPtr ProduceSet::Find(const std::string& topic, int32_t partition) const {
  auto t = msgs_.find(topic);
  if (t == msgs_.end()) return nullptr;
  auto p = t->second.find(partition);
  return p == t->second.end() ? nullptr : p->second;
}

std::vector<ProduceSet::Entry> ProduceSet::SortedPartitions() const {
  std::vector<Entry> out;
  for (const auto& [topic, partitions] : msgs_) {
    for (const auto& [p, set] : partitions) out.push_back(Entry{topic, p, set});
  }
  return out;
}

PartitionSetPtr ProduceSet::TakePartition(const std::string& topic, int32_t partition) {
  auto t = msgs_.find(topic);
  if (t == msgs_.end()) return nullptr;
  auto p = t->second.find(partition);
  if (p == t->second.end()) return nullptr;
  PartitionSetPtr set = std::move(p->second);
  t->second.erase(p);
  if (t->second.empty()) msgs_.erase(t);  // as takePartitions deletes an emptied topic
  buffer_bytes_ -= set->buffer_bytes;
  buffer_count_ -= static_cast<int>(set->msgs.size());
  PRODSIM_ASSERT(buffer_bytes_ >= 0);
  PRODSIM_ASSERT(buffer_count_ >= 0);
  return set;
}

// sarama main (282cd488) produce_set.go: produceSet.copyFunc
std::shared_ptr<ProduceSet> ProduceSet::CopyFunc(
    const std::function<bool(const std::string&, int32_t)>& keep) const {
  auto out = std::make_shared<ProduceSet>(conf_, producer_id_, producer_epoch_);
  for (const auto& [topic, partitions] : msgs_) {
    for (const auto& [p, set] : partitions) {
      if (keep(topic, p)) out->PutPartition(topic, p, set);
    }
  }
  return out;
}

}  // namespace sarama
