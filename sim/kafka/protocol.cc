#include "sim/kafka/protocol.h"

#include "absl/strings/str_cat.h"

namespace kafka {

std::string TopicPartition::ToString() const { return absl::StrCat(topic, "/", partition.value); }

std::string_view ApiKeyName(ApiKey k) {
  switch (k) {
    case ApiKey::kProduce: return "Produce";
    case ApiKey::kMetadata: return "Metadata";
    case ApiKey::kInitProducerId: return "InitProducerId";
    case ApiKey::kApiVersions: return "ApiVersions";
  }
  return "?";
}

std::string MetadataRequest::Describe() const {
  return absl::StrCat("MetadataRequest corr=", correlation_id, " topics=", topics.size());
}

std::string MetadataResponse::Describe() const {
  std::string out = absl::StrCat("MetadataResponse corr=", correlation_id);
  for (const TopicMetadata& t : topics) {
    for (const PartitionMetadata& p : t.partitions) {
      absl::StrAppend(&out, " ", t.name, "/", p.partition.value, "@", p.leader.value);
    }
  }
  return out;
}

std::string ApiVersionsRequest::Describe() const {
  return absl::StrCat("ApiVersionsRequest corr=", correlation_id, " v", version);
}

std::string ApiVersionsResponse::Describe() const {
  std::string out = absl::StrCat("ApiVersionsResponse corr=", correlation_id, " ",
                                 std::string(ErrorCodeName(error)));
  for (const ApiVersionRange& r : api_keys) {
    absl::StrAppend(&out, " ", std::string(ApiKeyName(r.api)), "[", int{r.min_version}, "..",
                    int{r.max_version}, "]");
  }
  return out;
}

std::string InitProducerIdRequest::Describe() const {
  return absl::StrCat("InitProducerIdRequest corr=", correlation_id);
}

std::string InitProducerIdResponse::Describe() const {
  return absl::StrCat("InitProducerIdResponse corr=", correlation_id, " ",
                      std::string(ErrorCodeName(error)), " pid=", producer_id.value,
                      " epoch=", producer_epoch.value);
}

std::string ProduceRequest::Describe() const {
  std::string out = absl::StrCat("ProduceRequest corr=", correlation_id, " acks=", acks);
  for (const auto& [tp, b] : batches) {
    absl::StrAppend(&out, " ", tp.ToString(), "{pid=", b.producer_id.value,
                    " epoch=", b.producer_epoch.value, " seq=", b.base_sequence.value,
                    " n=", b.record_count(), "}");
  }
  return out;
}

std::string ProduceResponse::Describe() const {
  std::string out = absl::StrCat("ProduceResponse corr=", correlation_id);
  for (const auto& [tp, p] : partitions) {
    absl::StrAppend(&out, " ", tp.ToString(), "{", std::string(ErrorCodeName(p.error)),
                    " offset=", p.base_offset.value, "}");
  }
  return out;
}

}  // namespace kafka
