#include "scenarios/realism.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "fault_models/faults.h"
#include "producer/config.h"

namespace scenarios {
namespace {

std::string InjectableNames() {
  std::vector<std::string> names;
  for (const fault_models::InjectableError& e : fault_models::InjectableErrors()) {
    names.push_back(kafka::ErrorCodeName(e.code));
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

namespace {

sarama::Config DefaultsOf(const ProducerSpec& p) { return sarama::NewConfig(p.profile); }

}  // namespace

int32_t EffectiveRequiredAcks(const ProducerSpec& p) {
  if (p.required_acks) return *p.required_acks;
  return static_cast<int32_t>(DefaultsOf(p).producer.required_acks);
}

Duration EffectiveReadTimeout(const ProducerSpec& p) {
  if (p.net_read_timeout) return *p.net_read_timeout;
  return DefaultsOf(p).net.read_timeout;
}

std::optional<FaultProblem> InjectErrorProblem(const FaultSpec& f, const ProducerSpec& p,
                                               const ClusterSpec& c) {
  PRODSIM_ASSERT(f.kind == fault_models::FaultKind::kInjectError);
  PRODSIM_ASSERT_MSG(f.error != kafka::ErrorCode::NONE, "InjectErrorProblem: no error");
  const std::string error = kafka::ErrorCodeName(f.error);
  const fault_models::InjectableError* e = fault_models::FindInjectableError(f.error);
  if (e == nullptr) {
    return FaultProblem{
        "error",
        absl::StrCat("a Kafka 2.6 broker does not answer a produce request with ", error,
                     " from any cause prodsim models"),
        absl::StrCat("inject_error brings about ", InjectableNames(),
                     "; for a MockBroker port, kind = \"mock.error\" answers with any error")};
  }
  if (f.api != kafka::ApiKey::kProduce) {
    return FaultProblem{
        "api",
        absl::StrCat("inject_error brings ", error, " about at produce requests only, not ",
                     std::string(fault_models::FaultApiKey(f.api))),
        "set api = \"produce\" or leave it out; mock.error answers other "
        "requests with any error"};
  }
  if (e->needs_acks_all && EffectiveRequiredAcks(p) != -1) {
    return FaultProblem{"error",
                        absl::StrCat("Kafka answers ", error,
                                     " only to acks=all (-1) produce requests, and the producer "
                                     "sends acks=",
                                     EffectiveRequiredAcks(p)),
                        "set producer.required_acks = \"wait_for_all\", or inject "
                        "NOT_LEADER_OR_FOLLOWER"};
  }
  int32_t rf = 0;
  for (const TopicSpec& t : c.topics) {
    if (f.topic.empty() || t.name == f.topic) rf = std::max(rf, t.replication_factor);
  }
  if (rf < e->min_replicas) {
    return FaultProblem{
        f.topic.empty() ? "error" : "topic",
        absl::StrCat(error, " needs a partition with replication_factor >= ", e->min_replicas, " (",
                     e->cause, "), and ",
                     f.topic.empty() ? std::string("no topic") : absl::StrCat("topic ", f.topic),
                     " has it"),
        "raise the topic's replication_factor, or pick another error"};
  }
  if (c.min_insync_replicas < e->min_insync) {
    return FaultProblem{"error",
                        absl::StrCat(error, " needs cluster.min_insync_replicas >= ", e->min_insync,
                                     " (with ", c.min_insync_replicas,
                                     " the leader alone is enough, and Kafka never gives it)"),
                        "raise cluster.min_insync_replicas, or pick another error"};
  }
  if (f.duration && !e->reads_duration) {
    return FaultProblem{"duration",
                        absl::StrCat("inject_error's duration means how long the cause lasts, "
                                     "and the cause of ",
                                     error, " (", e->cause, ") has no length"),
                        "remove duration"};
  }
  return std::nullopt;
}

std::optional<std::string> FirstUnrealisticFault(const Scenario& s) {
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const FaultSpec& f = s.faults[i];
    if (f.kind != fault_models::FaultKind::kInjectError) continue;
    // A scenario built in code may leave it unset (a file cannot).
    if (f.error == kafka::ErrorCode::NONE) {
      return absl::StrCat("faults[", i, "].error: unknown Kafka error ");
    }
    if (std::optional<FaultProblem> p = InjectErrorProblem(f, s.producer, s.cluster)) {
      return absl::StrCat("faults[", i, "].", p->field, ": ", p->what);
    }
  }
  return std::nullopt;
}

void DropUnrealisticFaults(Scenario* s) {
  std::erase_if(s->faults, [&](const FaultSpec& f) {
    if (f.kind != fault_models::FaultKind::kInjectError) return false;
    if (f.error == kafka::ErrorCode::NONE) return true;
    return InjectErrorProblem(f, s->producer, s->cluster).has_value();
  });
}

bool HasMockFaults(const Scenario& s) {
  return std::any_of(s.faults.begin(), s.faults.end(),
                     [](const FaultSpec& f) { return fault_models::IsMockKind(f.kind); });
}

}  // namespace scenarios
