#include "scenarios/runner.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "checks/check_registry.h"
#include "fault_models/faults.h"
#include "producer/async_producer.h"
#include "scenarios/realism.h"
#include "scenarios/timeline.h"
#include "sim/core/buggify.h"
#include "sim/kafka/cluster.h"
#include "sim/net/network.h"

namespace scenarios {

using sim::Duration;
using sim::Time;

namespace {

// Everything one run owns. Members are destroyed in reverse order: the
// scheduler (and its coroutine frames) goes last but one, before nothing
// that a frame still points to is freed.
struct World {
  World(const sim::SchedulerOptions& o, kafka::ClusterConfig cc,
        const std::vector<std::string>& buggify_sites)
      : sched(o),
        buggify(sched.prng().Fork("buggify"), buggify_sites),
        network(sched, sched.prng().Fork("net")),
        client(network.AddNode("client")),
        cluster(sched, network, std::move(cc), &record.kafka) {
    network.SetBuggify(&buggify);
    cluster.SetBuggify(&buggify);
  }
  ~World() {
    producer.reset();
    sched.DestroyTasks();  // before the cluster and network the frames point to
  }

  checks::RunRecord record;
  sim::Scheduler sched;
  sim::Buggify buggify;  // the sites of the scenario's [buggify], each its own stream
  net::Network network;
  net::NodeId client;
  kafka::Cluster cluster;
  std::unique_ptr<sarama::AsyncProducer> producer;
  // [workload] drain = "close": closed when the application closes, to stop
  // its reader.
  sim::ChanPtr<bool> stop_reading;
  std::string harness_error;
};

}  // namespace

absl::StatusOr<sarama::Config> ProducerConfigOf(const ProducerSpec& p) {
  sarama::Config c = sarama::NewConfig(p.profile);
  if (p.idempotent) c.producer.idempotent = *p.idempotent;
  if (p.net_max_open_requests) c.net.max_open_requests = *p.net_max_open_requests;
  if (p.net_read_timeout) c.net.read_timeout = *p.net_read_timeout;
  if (p.net_dial_timeout) c.net.dial_timeout = *p.net_dial_timeout;
  if (p.required_acks)
    c.producer.required_acks = static_cast<sarama::RequiredAcks>(*p.required_acks);
  if (p.timeout) c.producer.timeout = *p.timeout;
  if (p.retry_max) c.producer.retry.max = *p.retry_max;
  if (p.retry_backoff) c.producer.retry.backoff = *p.retry_backoff;
  if (p.return_successes) c.producer.return_.successes = *p.return_successes;
  if (p.return_errors) c.producer.return_.errors = *p.return_errors;
  if (p.flush_messages) c.producer.flush.messages = *p.flush_messages;
  if (p.flush_bytes) c.producer.flush.bytes = *p.flush_bytes;
  if (p.flush_frequency) c.producer.flush.frequency = *p.flush_frequency;
  if (p.flush_max_messages) c.producer.flush.max_messages = *p.flush_max_messages;
  if (p.max_message_bytes) c.producer.max_message_bytes = *p.max_message_bytes;
  if (p.channel_buffer_size) c.channel_buffer_size = *p.channel_buffer_size;
  if (p.metadata_retry_max) c.metadata.retry.max = *p.metadata_retry_max;
  if (p.metadata_retry_backoff) c.metadata.retry.backoff = *p.metadata_retry_backoff;
  if (p.metadata_single_flight) c.metadata.single_flight = *p.metadata_single_flight;
  if (p.test_defect == TestDefect::kNoRetryBackoff) c.test_defects.no_retry_backoff = true;
  if (p.test_defect == TestDefect::kNoReadTimeout) c.test_defects.no_read_timeout = true;
  if (p.version) {
    absl::StatusOr<sarama::KafkaVersion> v = sarama::ParseKafkaVersion(*p.version, p.profile);
    if (!v.ok()) return v.status();
    c.version = *v;
  }
  if (absl::Status st = c.Validate(); !st.ok()) return st;
  return c;
}

absl::StatusOr<kafka::ClusterConfig> ClusterConfigOf(const ClusterSpec& s) {
  kafka::ClusterConfig c;
  c.brokers = s.brokers;
  for (const TopicSpec& t : s.topics)
    c.topics.push_back({t.name, t.partitions, t.replication_factor});
  c.min_insync_replicas = s.min_insync_replicas;
  c.version = s.kafka_version;
  c.metadata_delay_max = s.metadata_delay_max;
  c.replica_fetch_interval = s.replica_fetch_interval;
  c.replica_lag_time_max = s.replica_lag_time_max;
  c.zookeeper_session_timeout = s.zookeeper_session_timeout;
  c.request_processing = s.request_processing;
  return c;
}

// The scenario's buggify sites must be sites of sim/net or sim/kafka, each
// once (the parser ensures it for a file; a Scenario built in code may not).
absl::Status CheckBuggifySites(const BuggifySpec& b) {
  std::vector<std::string_view> known;
  for (const sim::BuggifySite& site : net::kBuggifySites) known.push_back(site.name);
  for (const sim::BuggifySite& site : kafka::kBuggifySites) known.push_back(site.name);
  for (size_t i = 0; i < b.sites.size(); ++i) {
    if (std::find(known.begin(), known.end(), b.sites[i]) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown buggify site ", b.sites[i]));
    }
    if (std::find(b.sites.begin(), b.sites.begin() + static_cast<std::ptrdiff_t>(i), b.sites[i]) !=
        b.sites.begin() + static_cast<std::ptrdiff_t>(i)) {
      return absl::InvalidArgumentError(absl::StrCat("buggify site ", b.sites[i], " twice"));
    }
  }
  return absl::OkStatus();
}

fault_models::FaultParams FaultParamsOf(const FaultSpec& f) {
  fault_models::FaultParams p;
  p.kind = f.kind;
  p.at = Time() + f.at;
  p.duration = f.duration;
  p.broker = kafka::BrokerId(f.broker);
  p.direction = f.direction;
  if (!f.topic.empty())
    p.tp = kafka::TopicPartition{f.topic, kafka::PartitionId(std::max(0, f.partition))};
  p.api = f.api;
  if (f.error != kafka::ErrorCode::NONE) p.error = f.error;
  p.count = f.count;
  p.extra = f.extra;
  p.heal = f.heal;
  return p;
}

namespace {

// The application's side of the outcomes: reads Successes and Errors until
// both are closed, and notes when that happened (Close has returned). The
// run then ends once every task has returned, or after kCloseSettle: nothing
// after Close returns can change a check's result, and a task the producer
// leaked (Go lets a program exit past its goroutines) must not keep the
// simulated world turning until the time limit.
constexpr Duration kCloseSettle = Duration::Seconds(1);

// The application's own tasks are named so (not the producer's: a
// goroutine-leak check leaves them out).
constexpr std::string_view kApplicationTask = "app";
constexpr std::string_view kApplicationTaskPrefix = "app.";

// Close has returned: the run ends once every task has, or kCloseSettle
// later.
void CloseReturned(World* w) {
  w->record.close_returned_at = w->sched.now();
  sim::Scheduler* sched = &w->sched;
  sched->After(kCloseSettle, [sched] { sched->Stop("the producer's Close returned"); });
}

// The reader as [workload] drain asks (WorkloadSpec::drain): prompt reads
// each outcome at once; late starts after drain_delay; slow spends
// drain_delay after each read; close stops when the application closes
// (stop_reading), and Close drains the rest.
sim::Task<void> Drain(World* w, const WorkloadSpec* wl) {
  std::optional<sarama::MessagePtr> s;
  std::optional<sarama::ProducerError> e;
  std::optional<bool> stop;
  sim::Chan<sarama::MessagePtr>* sc = w->producer->Successes();
  sim::Chan<sarama::ProducerError>* ec = w->producer->Errors();
  if (wl->drain == Drain::kLate) co_await w->sched.Sleep(wl->drain_delay);
  while (sc != nullptr || ec != nullptr) {
    int which = 0;
    if (w->stop_reading != nullptr) {
      which = co_await sim::Select(w->sched, sim::RecvCase(sc, &s), sim::RecvCase(ec, &e),
                                   sim::RecvCase(w->stop_reading, &stop));
      if (which == 2) co_return;  // Close drains the rest
    } else {
      which = co_await sim::Select(w->sched, sim::RecvCase(sc, &s), sim::RecvCase(ec, &e));
    }
    if (which == 0 && !s.has_value()) sc = nullptr;
    if (which == 1 && !e.has_value()) ec = nullptr;
    if (wl->drain == Drain::kSlow) co_await w->sched.Sleep(wl->drain_delay);
  }
  CloseReturned(w);
}

// The application: create the producer, write the workload, close.
sim::Task<void> Application(World* w, const Scenario* s, sarama::Config conf,
                            sarama::Profile profile) {
  sarama::Env env{&w->sched, &w->network, w->client, &w->record.producer};
  // CPU (go policy): the process's start (exec, Go's runtime, the config)
  // before its first dial, as the real client spends it in wire mode.
  w->sched.Spend(w->sched.cpu().start);
  // NewAsyncProducer fails when no broker answers for metadata (a fault at
  // start-up); the application then tries again a second later, as a
  // service that restarts would, for as long as the run lasts. One that
  // never starts although the faults healed fails the liveness check.
  absl::StatusOr<std::unique_ptr<sarama::AsyncProducer>> p;
  w->record.producer_started = false;
  for (;;) {
    p = co_await sarama::AsyncProducer::New(env, w->cluster.BootstrapNodes(), conf, profile);
    if (p.ok()) break;
    ++w->record.new_producer_failures;
    w->record.new_producer_error = std::string(p.status().message());
    const std::string& why = w->record.new_producer_error;
    w->sched.trace().Note(w->sched.now(), w->sched.current_id(), 0,
                          static_cast<uint64_t>(w->record.new_producer_failures), [&] {
                            return absl::StrCat("app: NewAsyncProducer failed (", why,
                                                "); trying again in 1s");
                          });
    co_await w->sched.Sleep(Duration::Seconds(1));
  }
  w->record.producer_started = true;
  w->producer = std::move(*p);
  if (s->workload.drain == Drain::kClose) {
    w->stop_reading = sim::MakeChan<bool>(w->sched, "app.stop-reading");
  }
  w->sched.Go(std::string(kApplicationTaskPrefix) + "drain", Drain(w, &s->workload));
  const WorkloadSpec& wl = s->workload;
  std::vector<std::string> topics = wl.topics;
  if (topics.empty()) {
    for (const TopicSpec& t : s->cluster.topics) topics.push_back(t.name);
  }
  // With close_at, the application stops producing at that time and calls
  // AsyncClose itself, from this task: Sarama forbids sending on Input()
  // after AsyncClose (the shutdown closes the channel; a send then panics),
  // so a real application stops its producing goroutine first. A send
  // still blocked at close_at is given up (it never reached the producer).
  const std::optional<Time> close_at =
      wl.close_at ? std::optional<Time>(Time() + *wl.close_at) : std::nullopt;
  sim::ChanPtr<Time> close_timer;
  if (close_at)
    close_timer = sim::After(w->sched, std::max(*close_at - w->sched.now(), Duration()));
  for (int32_t i = 0; i < wl.messages; ++i) {
    if (i > 0 && i % wl.burst == 0 && wl.interval.nanos() > 0) {
      Duration nap = wl.interval;
      if (close_at) nap = std::min(nap, std::max(*close_at - w->sched.now(), Duration()));
      co_await w->sched.Sleep(nap);
    }
    if (close_at && w->sched.now() >= *close_at) break;
    auto msg = std::make_shared<sarama::ProducerMessage>();
    msg->topic = topics[static_cast<size_t>(i) % topics.size()];
    msg->key = absl::StrCat("key-", i % wl.keys);
    msg->value_bytes = wl.value_bytes;
    msg->id = static_cast<uint64_t>(i) + 1;
    w->record.produced.push_back({msg->id, msg->topic, *msg->key, w->sched.now()});
    if (!close_at) {
      co_await w->producer->Input()->Send(msg);
      continue;
    }
    std::optional<Time> fired;
    const int which = co_await sim::Select(w->sched, sim::SendCase(w->producer->Input(), &msg),
                                           sim::RecvCase(close_timer, &fired));
    if (which == 1) {
      w->record.produced.pop_back();  // never handed to the producer
      break;
    }
  }
  if (close_at && w->sched.now() < *close_at) co_await w->sched.Sleep(*close_at - w->sched.now());
  w->record.close_called_at = w->sched.now();
  if (w->stop_reading != nullptr) {
    // Sarama's Close: AsyncClose, then it drains Successes and Errors
    // itself, and returns when Errors is closed.
    w->stop_reading->Close();
    co_await w->producer->Close();
    CloseReturned(w);
    co_return;
  }
  w->producer->AsyncClose();
  // A test defect of the application's, not Sarama's: Sarama's second
  // shutdown goroutine closes the channels the first one closed (a panic).
  if (s->producer.test_defect == TestDefect::kCloseTwice) w->producer->AsyncClose();
}

// The producer's goroutines alive at the end of the run, for
// no-leaked-goroutines: every live one but the world's (the cluster, the
// faults) and the application's own (this file's "app" tasks).
void RecordProducerGoroutines(World& w) {
  for (sim::LiveGoroutine& g : w.sched.LiveGoroutines()) {
    if (g.world || g.name == kApplicationTask || g.name.starts_with(kApplicationTaskPrefix)) {
      continue;
    }
    w.record.producer_goroutines_at_end.push_back(std::move(g));
  }
}

// The order in which the classes of the checks' verdicts decide a run: a
// broken model first (nothing it recorded can be trusted), a client that did
// not run its job (no other verdict can be drawn from it), then a crash, an
// assertion, safety, and liveness last (what is stuck may be stuck because
// of any of the others).
constexpr Verdict kDecidingOrder[] = {Verdict::kHarnessError, Verdict::kClientFailure,
                                      Verdict::kPanic,        Verdict::kProducerAssertion,
                                      Verdict::kSafety,       Verdict::kLiveness};

// The verdict a violation of `check` yields (checks/check_registry.h); a
// name the registry does not know is a safety check's.
Verdict VerdictOf(std::string_view check) {
  const checks::CheckInfo* info = checks::FindCheckInfo(check);
  return info == nullptr ? Verdict::kSafety : info->verdict;
}

}  // namespace

Verdict Decide(const RunOutput& out, std::string* failing) {
  PRODSIM_ASSERT(failing != nullptr);
  for (Verdict deciding : kDecidingOrder) {
    // The first violation in check order of this class decides.
    for (const checks::Violation& v : out.violations) {
      if (VerdictOf(v.check) != deciding) continue;
      *failing = v.check;
      if (deciding == Verdict::kLiveness && out.record.run.outcome == sim::Outcome::kDeadlock) {
        return Verdict::kDeadlock;
      }
      return deciding;
    }
  }
  return Verdict::kPass;
}

std::string VerdictText(const RunOutput& out) {
  std::string text(VerdictName(out.verdict));
  if (!out.failing_check.empty()) absl::StrAppend(&text, " [", out.failing_check, "]");
  if (!out.violations.empty() && out.verdict != Verdict::kPass) {
    absl::StrAppend(&text, " ", out.signature.Text());
  }
  return text;
}

std::string SignatureName(const RunOutput& out) {
  if (out.violations.empty()) return std::string(VerdictName(out.verdict));
  return out.signature.Text();
}

ExpectSpec ExpectOf(const RunOutput& out) {
  ExpectSpec e;
  e.verdict = out.verdict;
  e.check = out.failing_check;
  if (out.verdict != Verdict::kPass && !out.violations.empty()) e.signature = SignatureName(out);
  return e;
}

void ClassifyFailure(RunOutput* out) {
  out->signature = checks::Signature{};
  if (out->verdict == Verdict::kPass || out->violations.empty()) return;
  // The deciding violation first, then the others in check order.
  std::vector<const checks::Violation*> order;
  for (const checks::Violation& v : out->violations) {
    if (v.check == out->failing_check) {
      order.insert(order.begin(), &v);
    } else {
      order.push_back(&v);
    }
  }
  for (const checks::Violation* v : order) {
    checks::Signature sig = checks::Classify(out->record, *v);
    if (sig.classified()) {
      out->signature = std::move(sig);
      return;
    }
    if (v == order.front()) out->signature = std::move(sig);  // the unclassified chain
  }
}

std::string FailureName(const RunOutput& out) {
  return out.failing_check.empty() ? std::string(VerdictName(out.verdict)) : out.failing_check;
}

absl::StatusOr<WorldPlan> PlanWorld(const Scenario& s) {
  WorldPlan plan;
  absl::StatusOr<kafka::ClusterConfig> cc = ClusterConfigOf(s.cluster);
  const std::optional<std::string> unrealistic = FirstUnrealisticFault(s);
  const absl::Status realism =
      unrealistic ? absl::InvalidArgumentError(*unrealistic) : absl::OkStatus();
  for (const absl::Status& st : {cc.status(), CheckBuggifySites(s.buggify), realism}) {
    if (!st.ok()) return st;
  }
  plan.cluster = *std::move(cc);
  const LatencySpec& l = s.network.latency;
  plan.latency = net::LatencyModel::Of(l.kind, l.min, l.max, l.mean, l.cap);
  plan.mock_faults = HasMockFaults(s);
  for (const FaultSpec& f : s.faults) {
    const fault_models::FaultParams p = FaultParamsOf(f);
    absl::StatusOr<std::unique_ptr<fault_models::Fault>> fault = fault_models::MakeFault(p);
    if (!fault.ok()) return fault.status();
    plan.faults.Add(p, std::move(*fault));
  }
  sim::SchedulerOptions& o = plan.scheduler;
  o.seed = s.seed;
  o.policy = s.schedule.policy;
  o.pct_depth = static_cast<uint32_t>(s.schedule.pct_depth);
  o.pct_steps = static_cast<uint64_t>(s.schedule.pct_steps);
  o.preempt_per_mille = static_cast<uint32_t>(s.schedule.preempt_per_mille);
  o.gomaxprocs = static_cast<uint32_t>(s.schedule.gomaxprocs);
  o.perturb_per_mille = static_cast<uint32_t>(s.schedule.perturb_per_mille);
  o.cpu = sim::CpuCosts{.sync_op = s.schedule.cpu_sync_op,
                        .wake = s.schedule.cpu_wake,
                        .message = s.schedule.cpu_message,
                        .request = s.schedule.cpu_request,
                        .request_byte = s.schedule.cpu_request_byte,
                        .response = s.schedule.cpu_response,
                        .start = s.schedule.cpu_start};
  o.tape = s.schedule.tape;
  o.step_limit = static_cast<uint64_t>(s.limits.steps);
  // Once the faults healed, the run may go on for the liveness grace only.
  plan.healed = plan.faults.healed_at(s.cluster.zookeeper_session_timeout);
  Time limit = Time() + s.limits.time;
  if (plan.healed != Time::Max()) limit = std::min(limit, plan.healed + s.limits.liveness_grace);
  o.time_limit = limit;
  return plan;
}

void FollowCountFaults(const Scenario& s, const WorldPlan& plan, sim::Scheduler& sched,
                       kafka::Cluster& cluster, checks::RunRecord& record) {
  record.faults_healed_at = plan.healed;
  record.liveness_grace = s.limits.liveness_grace;
  // A count-based fault (inject_error, lose_response, stall_response, the
  // mocks) lasts until its count is used, possibly long after it was
  // applied, and its effect may last beyond that use (a stalled response,
  // stalled followers); the world is fault-free only once the last effect
  // ended, so the liveness grace, and the run's time bound, start from there.
  if (plan.healed == Time::Max()) return;
  const Duration grace = s.limits.liveness_grace;
  const Time cap = Time() + s.limits.time;
  cluster.set_count_fault_hook([&record, &sched, grace, cap](Time until) {
    if (until <= record.faults_healed_at) return;
    record.faults_healed_at = until;
    sched.set_time_limit(std::min(cap, until + grace));
  });
}

RunOutput RunScenario(const Scenario& s, const RunOptions& options) {
  RunOutput out;
  absl::StatusOr<sarama::Config> conf = ProducerConfigOf(s.producer);
  absl::StatusOr<WorldPlan> plan = PlanWorld(s);
  for (const absl::Status& st : {conf.status(), plan.status()}) {
    if (!st.ok()) {
      out.verdict = Verdict::kHarnessError;
      out.harness_error = std::string(st.message());
      return out;
    }
  }
  out.mock_faults = plan->mock_faults;
  sim::SchedulerOptions o = plan->scheduler;
  o.record_trace = options.record_trace || options.timeline;

  auto w = std::make_unique<World>(o, plan->cluster, s.buggify.sites);
  w->network.SetDefaultLatency(plan->latency);
  w->record.idempotent = conf->producer.idempotent;
  w->record.required_acks = conf->producer.required_acks;
  w->record.max_open_requests = conf->net.max_open_requests;
  w->record.read_timeout = conf->net.read_timeout;
  if (s.checks.retry_pacing) {
    w->record.retry_backoff = conf->producer.retry.backoff;
    w->record.retry_max = conf->producer.retry.max;
  }
  w->record.check_leaked_goroutines = s.checks.no_leaked_goroutines;
  FollowCountFaults(s, *plan, w->sched, w->cluster, w->record);
  plan->faults.Start(fault_models::World{&w->sched, &w->network, &w->cluster, w->client});
  w->sched.Go(std::string(kApplicationTask), Application(w.get(), &s, *conf, s.producer.profile));
  w->record.run = w->sched.Run();
  if (s.checks.no_leaked_goroutines) RecordProducerGoroutines(*w);
  w->cluster.SnapshotLogs();
  if (options.record_trace) out.trace = w->sched.RenderTrace();
  if (options.timeline) out.timeline = TimelineJson(w->sched, w->record);
  if (!w->harness_error.empty()) {
    out.verdict = Verdict::kHarnessError;
    out.harness_error = w->harness_error;
    out.record = std::move(w->record);
    return out;
  }
  out.violations = checks::EvaluateAll(w->record);
  out.record = std::move(w->record);
  out.verdict = Decide(out, &out.failing_check);
  ClassifyFailure(&out);
  return out;
}

Scenario WithProfile(const Scenario& s, std::string_view profile) {
  Scenario out = s;
  const std::string own(sarama::ProfileName(out.producer.profile));
  if (own == profile) return out;
  // [expect] follows the file's own profile; remember it among the others
  // so that MatchesExpect finds every profile's entry the same way.
  if (out.expect.has_value() && out.expect->verdict.has_value()) {
    out.expect->profiles.push_back(
        ProfileExpectSpec{own, *out.expect->verdict, out.expect->check, out.expect->signature});
    out.expect->verdict.reset();
    out.expect->check.clear();
    out.expect->signature.clear();
  }
  const absl::StatusOr<sarama::Profile> parsed = sarama::ParseProfile(profile);
  PRODSIM_ASSERT_MSG(parsed.ok(), "WithProfile: an unknown profile");
  out.producer.profile = *parsed;
  return out;
}

bool MatchesExpect(const Scenario& s, const RunOutput& out, std::string* why) {
  const std::string own(sarama::ProfileName(s.producer.profile));
  if (!s.expect.has_value()) return true;
  std::optional<Verdict> verdict = s.expect->verdict;
  std::string check = s.expect->check, signature = s.expect->signature;
  if (!verdict.has_value()) {
    // A profile other than the file's own (WithProfile).
    auto it = std::find_if(s.expect->profiles.begin(), s.expect->profiles.end(),
                           [&](const ProfileExpectSpec& p) { return p.profile == own; });
    if (it == s.expect->profiles.end()) {
      *why = absl::StrCat("no [expect.profiles.\"", own, "\"] entry");
      return false;
    }
    verdict = it->verdict;
    check = it->check;
    signature = it->signature;
  }
  if (out.verdict != *verdict) {
    *why = absl::StrCat("expected verdict ", std::string(VerdictName(*verdict)), " on ", own,
                        ", got ", std::string(VerdictName(out.verdict)));
    return false;
  }
  if (!check.empty() && check != out.failing_check) {
    *why = absl::StrCat("expected failing check ", check, " on ", own, ", got ",
                        out.failing_check.empty() ? "none" : out.failing_check);
    return false;
  }
  if (!signature.empty() && signature != SignatureName(out)) {
    *why =
        absl::StrCat("expected signature ", signature, " on ", own, ", got ", SignatureName(out));
    return false;
  }
  return true;
}

}  // namespace scenarios
