#include "wire/real_world.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "checks/check_registry.h"
#include "scenarios/realism.h"
#include "sim/core/buggify.h"
#include "sim/kafka/cluster.h"
#include "sim/kafka/wire/codec.h"
#include "sim/net/network.h"
#include "wire/bridge.h"
#include "wire/child.h"
#include "wire/client_lines.h"
#include "wire/drivers.h"
#include "wire/event_loop.h"
#include "wire/json.h"
#include "wire/json_line.h"
#include "wire/real_trial.h"

namespace wire {

using scenarios::Scenario;
using sim::Duration;
using sim::Time;

namespace {

// The scheduler's window on the event loop; `after` runs after every wait.
class LoopOutside final : public sim::Outside {
 public:
  explicit LoopOutside(EventLoop& loop) : loop_(loop) {}
  void set_after(std::function<void()> after) { after_ = std::move(after); }
  Time Tick(Time /*now*/, Time deadline, bool block) override {
    const Time t = loop_.Wait(deadline, block);
    if (after_) after_();
    return t;
  }

 private:
  EventLoop& loop_;
  std::function<void()> after_;
};

// Simulated time: prodsim's side of the lockstep protocol
// (clients/README.md, "Simulated time"). The scheduler calls Tick whenever
// no simulated task can run at the current time; the driver is stepped then
// if something arrived for it or its next timer is due, and the simulated
// clock otherwise goes on to whichever comes first, the simulation's next
// timer or the driver's. Every line either way is folded into the run's
// digest, so the digest says whether two runs were the same run.
class Lockstep final : public sim::Outside, public VirtualSink {
 public:
  explicit Lockstep(EventLoop& loop) : loop_(loop) {}
  void set_step_bound(Duration bound) { step_bound_ = bound; }

  // REQUIRES: everything given outlives the run.
  void Attach(sim::Scheduler* sched, Bridge* bridge) {
    sched_ = sched;
    bridge_ = bridge;
  }
  void set_client(Child* child, ClientLines* lines) {
    child_ = child;
    lines_ = lines;
  }
  // The protocol error that ended the run (the driver's), or empty.
  const std::string& error() const { return error_; }
  uint64_t steps() const { return step_; }
  // The driver's last answer was its exit line.
  bool exiting() const { return exiting_; }
  // Wall time spent waiting for the driver's answers.
  Duration waited() const { return waited_; }

  Time Tick(Time now, Time deadline, bool block) override {
    // The broker took acks=0 requests: what waited behind them may go.
    if (bridge_->ResumeMuted() || !block || done_) return now;
    // The driver ran ahead to `now` and wrote there: its lines apply now.
    if (deferred_at_.has_value()) {
      PRODSIM_ASSERT(*deferred_at_ == now);
      deferred_at_.reset();
      ApplyAll(now, std::exchange(deferred_, {}));
      if (exiting_) Exited();
      return now;
    }
    if (!pending_.empty() || client_next_ <= now) {
      // Nothing happens in the simulation before `deadline` unless the
      // driver makes it happen, so the driver may run its own timers up to
      // it (until_ns, exclusive: the simulation's events at `deadline` come
      // first, as they would if the driver were stepped there).
      return Step(now, deadline);
    }
    return std::min(deadline, client_next_);
  }

  void Connected(uint64_t conn) override {
    pending_.push_back(absl::StrCat("{\"connected\":", conn, "}"));
  }
  void Data(uint64_t conn, std::string bytes) override {
    for (size_t at = 0; at < bytes.size(); at += kChunkBytes) {
      pending_.push_back(absl::StrCat(
          "{\"data\":", conn, ",\"bytes\":\"",
          absl::Base64Escape(absl::string_view(bytes).substr(at, kChunkBytes)), "\"}"));
    }
  }
  void Closed(uint64_t conn, std::string_view how) override {
    pending_.push_back(absl::StrCat("{\"closed\":", conn, ",\"how\":\"", json::Av(how), "\"}"));
  }

  // A line of the driver's stdout, as the event loop reads it.
  void OnLine(std::string line) {
    if (absl::StartsWith(line, "{\"idle\":") || absl::StartsWith(line, "{\"exit\":")) {
      idle_seen_ = true;
    }
    inbox_.push_back(std::move(line));
  }

 private:
  // Decoded bytes per data or write line (the protocol's bound).
  static constexpr size_t kChunkBytes = 262144;

  // Steps the driver at `now`, letting it run ahead until `until`; returns
  // where it stopped (its lines are applied there: now, or at the next Tick).
  Time Step(Time now, Time until) {
    std::string out;
    for (const std::string& line : pending_) {
      Trace(now, '>', line);
      absl::StrAppend(&out, line, "\n");
    }
    pending_.clear();
    const std::string step =
        absl::StrCat("{\"step\":", step_, ",\"now_ns\":", (now - Time()).nanos(),
                     ",\"until_ns\":", until == Time::Max() ? -1 : (until - Time()).nanos(), "}");
    Trace(now, '>', step);
    absl::StrAppend(&out, step, "\n");
    child_->Write(out);
    idle_seen_ = false;
    const Time began = loop_.Now();
    const Time give_up = began + step_bound_;
    while (!idle_seen_ && !(child_->exited() && child_->stdout_closed()) && loop_.Now() < give_up) {
      loop_.Wait(give_up, /*block=*/true);
      child_->Poll();
    }
    waited_ = waited_ + (loop_.Now() - began);
    std::vector<std::string> inbox = std::exchange(inbox_, {});
    const uint64_t stepped = step_;
    if (!idle_seen_) {
      ApplyAll(now, std::move(inbox));
      if (done_) return now;
      done_ = true;
      if (child_->exited()) {
        sched_->Stop("the client exited");
      } else {
        sched_->Stop(absl::StrCat("the client did not answer step ", stepped, " within ",
                                  step_bound_.ToString(), "s of wall time"));
      }
      return now;
    }
    // The idle line is the last: where the driver stopped and its next timer.
    const std::string idle = std::move(inbox.back());
    inbox.pop_back();
    Trace(now, '<', idle);
    std::optional<Time> stopped = Idle(now, until, stepped, idle);
    if (!stopped) return now;
    ++step_;
    if (*stopped == now) {
      ApplyAll(now, std::move(inbox));
      if (exiting_) Exited();
    } else {
      deferred_ = std::move(inbox);
      deferred_at_ = *stopped;
    }
    return *stopped;
  }

  // The driver said it exits (its exit line): the trial ends where it
  // stopped, whenever the process itself is reaped.
  void Exited() {
    if (done_) return;
    done_ = true;
    sched_->Stop("the client exited");
  }

  // A line to ('>') or from ('<') the driver, in the digest and, when the
  // trace is recorded, in it (the first 300 bytes).
  void Trace(Time now, char way, const std::string& line) {
    sched_->trace().MixString(line);
    sched_->trace().Note(now, 0, static_cast<uint64_t>(way), line.size(), [&] {
      return absl::StrCat("client", std::string(1, way), " ", line.substr(0, 300));
    });
  }

  // The driver's lines (its idle line apart) at `at`: the step's time, or
  // where it stopped running ahead.
  void ApplyAll(Time at, std::vector<std::string> lines) {
    for (std::string& line : lines) {
      if (done_) return;
      Trace(at, '<', line);
      Apply(at, std::move(line));
    }
  }

  // The idle line of step `stepped` (at `now`, run ahead until `until`):
  // where the driver stopped, its next timer set; nullopt after a protocol
  // error.
  std::optional<Time> Idle(Time now, Time until, uint64_t stepped, const std::string& line) {
    absl::StatusOr<json::Value> v = json::Parse(line);
    const auto is_int = [&](size_t i, std::string_view key) {
      return v->keys.size() > i && v->keys[i] == key && v->items[i].kind == json::Value::Kind::kInt;
    };
    const bool exit = v.ok() && v->kind == json::Value::Kind::kObject && is_int(0, "exit");
    if (!v.ok() || v->kind != json::Value::Kind::kObject || v->keys.size() != (exit ? 2 : 3) ||
        !(exit || is_int(0, "idle")) || !is_int(1, "now_ns") || (!exit && !is_int(2, "next_ns")) ||
        v->items[0].integer != static_cast<int64_t>(stepped)) {
      ProtocolError(line, absl::StrCat("want {\"idle\":", stepped,
                                       ",\"now_ns\":T,\"next_ns\":N} or {\"exit\":", stepped,
                                       ",\"now_ns\":T} last"));
      return std::nullopt;
    }
    const int64_t at = v->items[1].integer, next = exit ? -1 : v->items[2].integer;
    exiting_ = exit;
    const int64_t now_ns = (now - Time()).nanos();
    if (at < now_ns || (until != Time::Max() && at >= (until - Time()).nanos())) {
      ProtocolError(line, "now_ns is not in [the step's now_ns, its until_ns)");
      return std::nullopt;
    }
    if (next != -1 && next <= at) {
      ProtocolError(line, "next_ns is not after now_ns");
      return std::nullopt;
    }
    client_next_ = next == -1 ? Time::Max() : Time() + Duration::Nanos(next);
    return Time() + Duration::Nanos(at);
  }

  void ProtocolError(std::string_view line, std::string why) {
    error_ = absl::StrCat("the driver broke the lockstep protocol at step ", step_, ": ", why, ": ",
                          json::Av(line.substr(0, 200)));
    done_ = true;
    sched_->Stop(error_);
  }

  // One line the driver printed (not its idle line), at `now`.
  void Apply(Time now, std::string line) {
    static constexpr std::string_view kKeys[] = {
        "{\"dial\":", "{\"write\":", "{\"close\":", "{\"idle\":", "{\"exit\":"};
    const bool lockstep = std::any_of(std::begin(kKeys), std::end(kKeys), [&](std::string_view k) {
      return absl::StartsWith(line, json::Av(k));
    });
    if (!lockstep) {
      lines_->OnLine(now, std::move(line));
      return;
    }
    absl::StatusOr<json::Value> v = json::Parse(line);
    if (!v.ok() || v->kind != json::Value::Kind::kObject || v->keys.empty() ||
        v->items[0].kind != json::Value::Kind::kInt || v->items[0].integer < 0) {
      ProtocolError(line, "not a lockstep line");
      return;
    }
    const std::string& what = v->keys[0];
    const uint64_t n = static_cast<uint64_t>(v->items[0].integer);
    const auto field = [&](size_t i, std::string_view key,
                           json::Value::Kind kind) -> const json::Value* {
      if (v->keys.size() <= i || v->keys[i] != key || v->items[i].kind != kind) return nullptr;
      return &v->items[i];
    };
    if (what == "idle" || what == "exit") {
      ProtocolError(line, "an idle or exit line before the step's last line");
      return;
    }
    bool known = true;
    if (what == "dial") {
      const json::Value* host = field(1, "host", json::Value::Kind::kString);
      const json::Value* port = field(2, "port", json::Value::Kind::kInt);
      if (host == nullptr || port == nullptr || v->keys.size() != 3) {
        ProtocolError(line, "want {\"dial\":C,\"host\":H,\"port\":P}");
        return;
      }
      if (!bridge_->VirtualDial(n, host->string, static_cast<int>(port->integer))) {
        ProtocolError(line, "a connection id used before");
      }
      return;
    }
    if (what == "write") {
      const json::Value* bytes = field(1, "bytes", json::Value::Kind::kString);
      std::string decoded;
      if (bytes == nullptr || v->keys.size() != 2 ||
          !absl::Base64Unescape(bytes->string, &decoded) || decoded.size() > kChunkBytes) {
        ProtocolError(line, "want {\"write\":C,\"bytes\":BASE64} of at most 262144 bytes");
        return;
      }
      known = bridge_->VirtualWrite(n, decoded);
    } else {  // close
      if (v->keys.size() != 1) {
        ProtocolError(line, "want {\"close\":C}");
        return;
      }
      known = bridge_->VirtualClose(n);
    }
    if (!known) ProtocolError(line, "a connection that was never dialled");
  }

  EventLoop& loop_;
  Duration step_bound_ = Duration::Seconds(60);
  sim::Scheduler* sched_ = nullptr;
  Bridge* bridge_ = nullptr;
  Child* child_ = nullptr;
  ClientLines* lines_ = nullptr;
  std::vector<std::string> pending_;  // lines for the driver's next step
  std::vector<std::string> inbox_;    // lines from the driver in this step
  // The lines of a driver that ran ahead and stopped at *deferred_at_.
  std::vector<std::string> deferred_;
  std::optional<Time> deferred_at_;
  bool exiting_ = false;  // the last step's answer was an exit line
  Duration waited_;
  bool idle_seen_ = false;
  Time client_next_ = Time();  // step 0 is at time 0
  uint64_t step_ = 0;
  bool done_ = false;
  std::string error_;
};

// Everything one trial owns, in construction order; the destructor ends the
// client and the simulated tasks before the objects they point to go.
struct RealWorld {
  RealWorld(const sim::SchedulerOptions& o, kafka::ClusterConfig cc,
            const std::vector<std::string>& buggify_sites, bool simulated_time)
      : outside(loop),
        lockstep(loop),
        sched(WithOutside(o, simulated_time ? static_cast<sim::Outside*>(&lockstep) : &outside)),
        buggify(sched.prng().Fork("buggify"), buggify_sites),
        network(sched, sched.prng().Fork("net")),
        client(network.AddNode("client")),
        cluster(sched, network, std::move(cc), &record.kafka),
        bridge(loop, sched, network, cluster, client) {
    bridge.set_history(&record.kafka);
    lockstep.Attach(&sched, &bridge);
    network.SetBuggify(&buggify);
    cluster.SetBuggify(&buggify);
  }
  ~RealWorld() {
    child.reset();
    bridge.CloseAll();
    sched.DestroyTasks();
  }
  static sim::SchedulerOptions WithOutside(sim::SchedulerOptions o, sim::Outside* outside) {
    o.outside = outside;
    return o;
  }

  EventLoop loop;
  LoopOutside outside;
  Lockstep lockstep;
  checks::RunRecord record;
  sim::Scheduler sched;
  sim::Buggify buggify;
  net::Network network;
  net::NodeId client;
  kafka::Cluster cluster;
  Bridge bridge;
  std::unique_ptr<Child> child;
};

// The world of `plan` with its ports open and its faults scheduled (they
// apply once the scheduler runs).
absl::StatusOr<std::unique_ptr<RealWorld>> OpenWorld(const Scenario& s, scenarios::WorldPlan& plan,
                                                     const sim::SchedulerOptions& o,
                                                     bool simulated_time = false) {
  auto w = std::make_unique<RealWorld>(o, plan.cluster, s.buggify.sites, simulated_time);
  if (!w->loop.status().ok()) return w->loop.status();
  if (simulated_time) {
    w->bridge.ListenVirtual(&w->lockstep);
  } else if (absl::Status st = w->bridge.Listen(); !st.ok()) {
    return st;
  }
  w->network.SetDefaultLatency(plan.latency);
  scenarios::FollowCountFaults(s, plan, w->sched, w->cluster, w->record);
  plan.faults.Start(fault_models::World{&w->sched, &w->network, &w->cluster, w->client});
  return w;
}

}  // namespace

double LoadAverage() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double load = -1;
  if (std::fscanf(f, "%lf", &load) != 1) load = -1;
  std::fclose(f);
  return load;
}

RealOutput RunReal(const Scenario& scenario, const RealOptions& options) {
  RealOutput result;
  result.load_before = LoadAverage();
  scenarios::RunOutput& out = result.run;
  signal(SIGPIPE, SIG_IGN);  // writes to a gone client fail with EPIPE instead
  const Scenario s = Bounded(scenario, options.bound);
  out.mock_faults = scenarios::HasMockFaults(s);
  absl::StatusOr<scenarios::WorldPlan> plan = PlanRealWorld(s);
  absl::StatusOr<Driver> driver = FindDriver(options.client);
  for (const absl::Status& st : {plan.status(), ClosesBeforeBound(s), driver.status()}) {
    if (!st.ok()) {
      HarnessError(out, std::string(st.message()));
      return result;
    }
  }
  const ConfigList config = ClientConfigFor(*driver, s, result);

  const bool simulated_time = options.clock == Clock::kSimulated;
  sim::SchedulerOptions o = plan->scheduler;
  o.record_trace = options.record_trace;
  absl::StatusOr<std::unique_ptr<RealWorld>> opened = OpenWorld(s, *plan, o, simulated_time);
  if (!opened.ok()) {
    HarnessError(out, std::string(opened.status().message()));
    return result;
  }
  std::unique_ptr<RealWorld> w = *std::move(opened);
  checks::RunRecord& record = w->record;
  SetClientRecord(*driver, s, record);
  checks::ClientRecord& client = *record.client;
  ClientLines lines(record, s.workload, TopicsOf(s));
  Child::Spec spec = ClientSpec(*driver, s, w->bridge.bootstrap(), o.time_limit - Time(), config);
  Child::LineCallback on_line;
  if (simulated_time) {
    spec.keep_stdin_open = true;
    spec.env.emplace_back("PRODSIM_CLOCK", "simulated");
    spec.env.emplace_back("PRODSIM_SEED", absl::StrCat(s.seed));
    on_line = [&lockstep = w->lockstep](std::string&& line) { lockstep.OnLine(std::move(line)); };
  } else {
    on_line = [&lines, &loop = w->loop](std::string line) {
      lines.OnLine(loop.Now(), std::move(line));
    };
  }
  absl::StatusOr<std::unique_ptr<Child>> child = Child::Start(w->loop, spec, std::move(on_line));
  if (!child.ok()) {
    HarnessError(out, std::string(child.status().message()));
    return result;
  }
  w->child = *std::move(child);
  Child* c = w->child.get();
  RealWorld* world = w.get();
  if (simulated_time) {
    w->lockstep.set_client(c, &lines);
    w->lockstep.set_step_bound(options.step_bound);
  } else {
    w->outside.set_after([c, world] {
      c->Poll();
      if (c->exited() && c->stdout_closed()) world->sched.Stop("the client exited");
    });
  }
  record.run = w->sched.Run();
  w->outside.set_after(nullptr);
  EndClient(w->loop, *c, w->lockstep.exiting(), w->sched.now(), client, result);
  result.connections = w->bridge.connections_accepted();
  result.client_steps = w->lockstep.steps();
  result.client_wait = w->lockstep.waited();
  result.wall = w->loop.Now() - Time();
  w->bridge.CloseAll();
  w->cluster.SnapshotLogs();
  if (options.record_trace) out.trace = w->sched.RenderTrace();

  const Bridge::Problems& problems = w->bridge.problems();
  client.malformed_frames = problems.malformed_frames.first;
  client.not_served = problems.not_served.first;
  // A batch the broker refused on the codec's word (a bad CRC, an invalid
  // batch, a stream that does not decompress, zstd below Produce v7) is the
  // client's malformed input: a 2.6 broker refuses it too.
  for (const kafka::NoteEvent& n : record.kafka.notes) {
    if (n.refused == kafka::ErrorCode::NONE) continue;
    client.malformed_frames.push_back(absl::StrCat("t=", n.at.ToString(), "s ", n.text));
  }
  std::string harness;
  if (!lines.job_error().empty()) {
    harness = absl::StrCat("the client refused its job: ", lines.job_error());
  } else if (!w->lockstep.error().empty()) {
    harness = w->lockstep.error();
  } else if (!problems.harness_errors.empty()) {
    harness = problems.harness_errors.first.front();
  } else if (!problems.records_without_id.empty()) {
    harness = problems.records_without_id.first.front();
  } else if (!problems.limits.empty()) {
    // A trial's client never comes near a limit; one reached means the
    // machine or the client is not what the trial assumes.
    harness = absl::StrCat("prodsim's wire limit reached: ", problems.limits.first.front());
  } else if (!problems.not_served.empty()) {
    harness = absl::StrCat("the client asked for what the model does not serve: ",
                           problems.not_served.first.front());
  }
  Judge(s, std::move(harness), std::move(w->record), out);
  return result;
}

scenarios::RunOutput Serve(const Scenario& s, const ServeOptions& options) {
  scenarios::RunOutput out;
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<scenarios::WorldPlan> plan = PlanRealWorld(s);
  absl::StatusOr<std::unique_ptr<RealWorld>> opened =
      plan.ok() ? OpenWorld(s, *plan, plan->scheduler) : plan.status();
  if (!opened.ok()) {
    HarnessError(out, std::string(opened.status().message()));
    return out;
  }
  std::unique_ptr<RealWorld> w = *std::move(opened);
  w->record.idempotent = true;  // the log checks look at producer ids only
  // Serve ends at SIGINT/SIGTERM or limits.time, not at the last heal plus
  // limits.liveness_grace: the user's application decides how long it
  // runs, and the grace bounds the wait for a client's outcomes, which
  // serve neither sees nor checks.
  w->cluster.set_count_fault_hook(nullptr);
  w->sched.set_time_limit(Time() + s.limits.time);
  if (options.say) w->bridge.set_say(options.say);
  if (options.on_ready) options.on_ready(w->bridge.bootstrap());
  RealWorld* world = w.get();
  w->outside.set_after([world, &options] {
    if (options.stop && options.stop()) world->sched.Stop("stopped");
  });
  w->record.run = w->sched.Run();
  w->outside.set_after(nullptr);
  w->bridge.CloseAll();
  w->cluster.SnapshotLogs();
  for (std::string_view name : {checks::kLogSequencesContiguous, checks::kNoDuplicates}) {
    if (std::optional<checks::Violation> v = checks::FindCheck(name)->Evaluate(w->record)) {
      out.violations.push_back(*std::move(v));
    }
  }
  // What the clients sent that was not served (malformed frames, records
  // without a prodsim-id, limits reached) is counted and reported, and
  // fails no check of the clients that were served.
  for (std::string& line : w->bridge.Summary()) {
    w->record.kafka.notes.push_back(kafka::NoteEvent{w->sched.now(), "wire: " + line});
  }
  if (!w->bridge.problems().harness_errors.empty()) {
    HarnessError(out, w->bridge.problems().harness_errors.first.front());
  }
  out.record = std::move(w->record);
  if (out.verdict != scenarios::Verdict::kHarnessError) {
    out.verdict = scenarios::Decide(out, &out.failing_check);
    scenarios::ClassifyFailure(&out);
  }
  return out;
}

}  // namespace wire
