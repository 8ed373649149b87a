#include "wire/real_trial.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "checks/check_registry.h"
#include "wire/json_line.h"

namespace wire {

using scenarios::Scenario;
using sim::Duration;
using sim::Time;

namespace {

// The stderr lines kept in ClientRecord::stderr_tail.
constexpr size_t kStderrTailLines = 5;
// How long a driver may wait for its client's goroutines after "closed"
// before its goroutine report (clients/README.md; prodsim-sarama's 2 s).
constexpr Duration kGoroutineReportWait = Duration::Seconds(2);

// The sequence and epoch of each acknowledged message, from the leader
// appends of the broker history: the model reads them from the producer,
// a real client's driver cannot (librdkafka keeps them private), and the
// broker's record is the same fact.
void AddSequences(checks::RunRecord& r) {
  struct At {
    uint64_t id;
    int16_t epoch;
    int32_t seq;
  };
  absl::btree_map<std::pair<kafka::TopicPartition, int64_t>, At> by_offset;
  for (const kafka::AppendEvent& a : r.kafka.appends) {
    if (!a.leader || a.producer_id.IsNone()) continue;
    for (size_t i = 0; i < a.record_ids.size(); ++i) {
      by_offset[{a.tp, a.base_offset.value + static_cast<int64_t>(i)}] =
          At{a.record_ids[i], a.epoch.value, a.first_seq.value + static_cast<int32_t>(i)};
    }
  }
  // An ack without an offset ("written, offset unknown"): the message's
  // place in its partition's final log, if it holds the message once.
  absl::btree_map<std::pair<kafka::TopicPartition, uint64_t>, std::optional<int64_t>> in_log;
  for (const auto& [tp, entries] : r.kafka.final_logs) {
    for (const kafka::LogEntry& e : entries) {
      for (size_t i = 0; i < e.record_ids.size(); ++i) {
        auto [it, inserted] = in_log.try_emplace({tp, e.record_ids[i]},
                                                 e.base_offset.value + static_cast<int64_t>(i));
        if (!inserted) it->second.reset();  // twice: no one place
      }
    }
  }
  for (sarama::AckEvent& ack : r.producer.acks) {
    const kafka::TopicPartition tp{ack.topic, kafka::PartitionId(ack.partition)};
    int64_t offset = ack.offset;
    if (!ack.offset_known) {
      const auto placed = in_log.find({tp, ack.id});
      if (placed == in_log.end() || !placed->second.has_value()) continue;
      offset = *placed->second;
    }
    auto it = by_offset.find({tp, offset});
    if (it == by_offset.end() || it->second.id != ack.id) continue;
    ack.has_sequence = true;
    ack.producer_epoch = it->second.epoch;
    ack.sequence = it->second.seq;
  }
}

std::string StderrTail(const std::string& text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  const size_t from = lines.size() > kStderrTailLines ? lines.size() - kStderrTailLines : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i) {
    absl::StrAppend(&out, out.empty() ? "" : " | ", lines[i].substr(0, 300));
  }
  return out;
}

}  // namespace

std::vector<std::string> TopicsOf(const Scenario& s) {
  std::vector<std::string> topics = s.workload.topics;
  if (topics.empty()) {
    for (const scenarios::TopicSpec& t : s.cluster.topics) topics.push_back(t.name);
  }
  return topics;
}

void HarnessError(scenarios::RunOutput& out, std::string why) {
  out.verdict = scenarios::Verdict::kHarnessError;
  out.harness_error = std::move(why);
}

// The scenario with its time bounded by `bound` (a real trial costs real
// time), so that the plan's limit and the count-fault hook's cap agree.
Scenario Bounded(const Scenario& s, Duration bound) {
  Scenario b = s;
  b.limits.time = std::min(s.limits.time, bound);
  return b;
}

// PlanWorld's plan, refused if it has mock faults: they answer what no real
// broker does, and wire mode runs realistic faults only.
absl::StatusOr<scenarios::WorldPlan> PlanRealWorld(const Scenario& s) {
  absl::StatusOr<scenarios::WorldPlan> plan = scenarios::PlanWorld(s);
  if (plan.ok() && plan->mock_faults) {
    return absl::InvalidArgumentError(
        "mock faults (mock.*) answer what no real broker does; wire mode runs realistic faults "
        "only");
  }
  if (plan.ok() && s.workload.drain != scenarios::Drain::kPrompt) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload.drain = \"", std::string(scenarios::DrainName(s.workload.drain)),
        "\" is the model's application; a real client's driver reads its outcomes promptly"));
  }
  return plan;
}

// OK if the client is told to close (workload.close_at; the driver's
// close_at_us, clients/README.md) before the trial's bound. A trial bounded
// no later kills a client that is only waiting as told: client-hung
// whatever the client did, a verdict that outranks the run's real one.
absl::Status ClosesBeforeBound(const Scenario& s) {
  if (!s.workload.close_at || *s.workload.close_at < s.limits.time) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "workload.close_at (", s.workload.close_at->ToString(), ") is not before the trial's bound (",
      s.limits.time.ToString(),
      ", the smaller of --bound and limits.time): the client would be killed as hung before it is "
      "told to close; give a bound past close_at"));
}

ConfigList ClientConfigFor(const Driver& driver, const Scenario& s, RealOutput& result) {
  ClientConfig config = driver.config(s.producer);
  result.ignored_settings = config.ignored;
  result.client = driver.name;
  return WithClientSettings(driver, s, std::move(config.config), &result.ignored_settings);
}

void SetClientRecord(const Driver& driver, const Scenario& s, checks::RunRecord& record) {
  const Effective effective = EffectiveSettings(driver, s);
  record.idempotent = effective.idempotent;
  record.required_acks = effective.acks;
  record.max_open_requests = effective.max_in_flight;
  record.sequence_error_is_violation = driver.sequence_error_is_violation;
  record.client.emplace();
  record.client->name = driver.name;
  if (!s.workload.close_at) record.client->job_messages = s.workload.messages;
}

Child::Spec ClientSpec(const Driver& driver, const Scenario& s, const std::string& bootstrap,
                       Duration time_limit, const ConfigList& config) {
  // The client's flush at close may wait until about a second before the
  // bound, less the goroutine report's wait, so that a report of a leak is
  // not cut off as a hung client: after that prodsim would kill it anyway.
  const Duration workload_span =
      s.workload.close_at ? *s.workload.close_at
                          : Duration::Nanos(s.workload.interval.nanos() *
                                            (s.workload.messages / std::max(1, s.workload.burst)));
  const Duration flush_timeout =
      std::max(Duration::Seconds(1),
               time_limit - workload_span - Duration::Seconds(1) - kGoroutineReportWait);
  Child::Spec spec;
  spec.argv = driver.argv;
  spec.env = driver.env;
  spec.stdin_text = JobLine(s.workload, TopicsOf(s), bootstrap, flush_timeout, config) + "\n";
  return spec;
}

void EndClient(EventLoop& loop, Child& c, bool exiting, Time now, checks::ClientRecord& client,
               RealOutput& result) {
  // A driver that said it exits is given the reaping wait to do so.
  const Time exit_until = loop.Now() + kReapWait;
  while (exiting && !c.Poll() && loop.Now() < exit_until) {
    loop.Wait(std::min(exit_until, loop.Now() + Duration::Millis(10)), /*block=*/true);
  }
  // The bound: a client still running is killed, then reaped, and what it
  // wrote meanwhile read.
  if (!c.exited()) {
    client.hung = true;
    client.bound = now;
    c.Kill();
  }
  const Time reap_until = loop.Now() + kReapWait;
  while ((!c.Poll() || !c.stdout_closed()) && loop.Now() < reap_until) {
    loop.Wait(std::min(reap_until, loop.Now() + Duration::Millis(10)), /*block=*/true);
  }
  client.exit_code = c.exit_code();
  result.client_cpu = c.cpu();
  client.signal = client.hung ? std::nullopt : c.signal();
  client.stderr_tail = StderrTail(c.stderr_text());
}

void Judge(const Scenario& s, std::string harness, checks::RunRecord record,
           scenarios::RunOutput& out) {
  AddSequences(record);
  // A driver that reports no goroutines (librdkafka, kafkajs: no Go
  // runtime to ask) leaves no-leaked-goroutines silent, as does a flush
  // that timed out (Close had not returned; the driver reports nothing).
  record.check_leaked_goroutines = s.checks.no_leaked_goroutines && record.client.has_value() &&
                                   record.client->goroutines_reported;
  out.violations = checks::EvaluateAll(record);
  out.record = std::move(record);
  if (!harness.empty()) {
    HarnessError(out, std::move(harness));
    return;
  }
  out.verdict = scenarios::Decide(out, &out.failing_check);
  scenarios::ClassifyFailure(&out);
}

}  // namespace wire
