#include "sim/core/scheduler.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"

namespace sim {

std::string_view PolicyName(Policy p) {
  switch (p) {
    case Policy::kFifo: return "fifo";
    case Policy::kRandom: return "random";
    case Policy::kPct: return "pct";
    case Policy::kGo: return "go";
  }
  return "?";
}

absl::StatusOr<Policy> ParsePolicy(std::string_view name) {
  if (name == "fifo") return Policy::kFifo;
  if (name == "random") return Policy::kRandom;
  if (name == "pct") return Policy::kPct;
  if (name == "go") return Policy::kGo;
  return absl::InvalidArgumentError(absl::StrCat("unknown schedule policy '", std::string(name),
                                                 "' (expected fifo, random, pct or go)"));
}

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kAllDone: return "all-done";
    case Outcome::kStopped: return "stopped";
    case Outcome::kDeadlock: return "deadlock";
    case Outcome::kStepLimit: return "step-limit";
    case Outcome::kTimeLimit: return "time-limit";
    case Outcome::kProgramCrash: return "program-crash";
  }
  return "?";
}

Scheduler::Scheduler(SchedulerOptions options)
    : options_(options),
      prng_(options.seed),
      sched_prng_(prng_.Fork("scheduler")),
      program_prng_(prng_.Fork("program")) {
  PRODSIM_ASSERT(options_.step_limit > 0);
  PRODSIM_ASSERT(options_.pct_depth >= 1);
  trace_.set_recording(options_.record_trace);
  task_names_.emplace_back("<none>");
  object_names_.emplace_back("<none>");
  if (options_.policy == Policy::kPct) SetupPct();
  if (options_.policy == Policy::kGo) {
    PRODSIM_ASSERT(options_.gomaxprocs >= 1 && options_.gomaxprocs <= kGoMaxProcs);
    go_ = true;
    nps_ = options_.gomaxprocs;
    ps_.resize(nps_ + 1);
  }
}

Scheduler::~Scheduler() { DestroyTasks(); }

void Scheduler::DestroyTasks() {
  PRODSIM_ASSERT(current_ == nullptr);
  // Frames suspended mid-operation are destroyed without running any
  // synchronization logic: awaiter and channel destructors are trivial.
  for (auto& [id, g] : tasks_) {
    if (g->root) g->root.destroy();
    g->root = {};
  }
  tasks_.clear();
  runq_ = RunQueue();
  global_ = RunQueue();
  for (GoP& p : ps_) p = GoP{};
  timers_.clear();
  timer_slots_.clear();
  free_slots_.clear();
  // A hook may drop the last reference to objects whose destructors
  // register nothing new; take the list first all the same.
  std::vector<absl::AnyInvocable<void()>> teardown = std::move(teardown_);
  teardown_.clear();
  for (absl::AnyInvocable<void()>& fn : teardown) fn();
}

void Scheduler::SetupPct() {
  const uint64_t k = std::max<uint64_t>(options_.pct_steps, 1);
  for (uint32_t i = 1; i < options_.pct_depth; ++i) {
    pct_change_points_.push_back(1 + sched_prng_.Below(k));
  }
  std::sort(pct_change_points_.begin(), pct_change_points_.end());
  // Lowered priorities count down from d-1 (below every initial priority,
  // which are >= d), so a later change point yields a lower priority.
  pct_low_priority_ = options_.pct_depth;
}

uint32_t Scheduler::Go(std::string name, Task<void> task, SpawnOptions opts) {
  PRODSIM_ASSERT(task.valid());
  auto g = std::make_unique<Goroutine>();
  g->id = next_id_++;
  g->daemon = opts.daemon;
  g->world = opts.world || (current_ != nullptr && current_->world);
  g->root = task.Release();
  g->resume = g->root;
  g->state = TaskState::kRunnable;
  if (options_.policy == Policy::kPct) {
    g->priority = options_.pct_depth + sched_prng_.Below(uint64_t{1} << 40);
  }
  trace_.MixString(name);
  if (trace_.recording()) {
    PRODSIM_ASSERT(task_names_.size() == g->id);
    task_names_.push_back(name);
  }
  g->name = std::move(name);
  if (!g->daemon) {
    ++live_non_daemon_;
    spawned_non_daemon_ = true;
  }
  Emit(EventKind::kSpawn, g->id);
  Goroutine* raw = g.get();
  tasks_.emplace(raw->id, std::move(g));
  if (!go_) {
    runq_.PushBack(raw);
  } else {
    PutReadyGo(raw);  // newproc: runqput(pp, newg, true)
  }
  return raw->id;
}

std::string Scheduler::TaskName(uint32_t id) const {
  if (id < task_names_.size()) return task_names_[id];
  auto it = tasks_.find(id);
  if (it != tasks_.end()) return it->second->name;
  return absl::StrCat("g", id);
}

uint32_t Scheduler::RegisterObject(std::string_view kind, std::string_view name) {
  // Ids are assigned whether or not the trace is recorded: they enter the
  // digest, which must not depend on --trace.
  const uint32_t id = next_object_id_++;
  if (trace_.recording()) {
    PRODSIM_ASSERT(object_names_.size() == id);
    object_names_.push_back(absl::StrCat(std::string(kind), " '", std::string(name), "'"));
  }
  return id;
}

std::string Scheduler::ObjectName(uint32_t id) const {
  return id < object_names_.size() ? object_names_[id] : absl::StrCat("#", id);
}

void Scheduler::Stop(std::string reason) {
  if (stopped_ || crashed_) return;
  stopped_ = true;
  end_detail_ = std::move(reason);
}

void Scheduler::Panic(std::string message, CodeLocation where) {
  // Go unwinds at the first panic; a task that runs on to its next
  // synchronization point may panic again before it stops: keep the first.
  if (crashed_) return;
  crashed_ = true;
  end_detail_ = current_ != nullptr ? absl::StrCat("panic in goroutine ", current_->id, " '",
                                                   current_->name, "': ", message)
                                    : absl::StrCat("panic: ", message);
  PanicReport report;
  report.goroutine = current_ != nullptr ? current_->id : 0;
  report.goroutine_name = current_ != nullptr ? current_->name : std::string();
  report.file = where.file != nullptr ? where.file : "";
  report.line = where.line;
  report.message = message;
  panic_ = std::move(report);
  // Go unwinds the panicking goroutine at once; a coroutine cannot be
  // unwound from here, so the task runs on to its next synchronization point,
  // where it stops for good (OpAwaiter), and the loop ends the run.
  Emit(EventKind::kPanic, Fnv1a64(message));
}

void RunQueue::Grow() {
  std::vector<Goroutine*> bigger(ring_.size() * 2);
  for (size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
  ring_ = std::move(bigger);
  head_ = 0;
}

bool Scheduler::SyncPointSlow() {
  PRODSIM_ASSERT(current_ != nullptr);
  // Over budget: force a return to the loop even under FIFO, so that a task
  // spinning on non-blocking operations cannot hang the run.
  if (steps_ > options_.step_limit) return true;
  if (options_.policy != Policy::kFifo) ++slice_ops_;
  const uint32_t slice = current_->spinner ? options_.spinner_slice_ops : options_.time_slice_ops;
  if (slice_ops_ > slice && runq_.empty() && !timers_.empty()) {
    park_spinner_ = true;  // nobody else can run: let time pass instead
    return true;
  }
  if (slice_ops_ > slice && !runq_.empty()) {
    // A task that ran a whole time slice without blocking is spinning. PCT
    // would pick it again (it has the highest priority), and the task it
    // waits for would never run; Go's scheduler lets the others run, so the
    // spinner drops below every PCT priority, as a yield does.
    if (options_.policy == Policy::kPct) current_->priority = 0;
    return true;
  }
  switch (options_.policy) {
    case Policy::kFifo: return false;
    case Policy::kRandom: return !runq_.empty() && RandomSwitch();
    case Policy::kPct: return PctSwitch();
    case Policy::kGo: break;  // SyncPointGo
  }
  return false;
}

bool Scheduler::PctSwitch() {
  if (pct_next_change_ < pct_change_points_.size() &&
      steps_ >= pct_change_points_[pct_next_change_]) {
    ++pct_next_change_;
    PRODSIM_ASSERT(pct_low_priority_ > 0);
    current_->priority = --pct_low_priority_;
  }
  for (size_t i = 0; i < runq_.size(); ++i) {
    if (runq_[i]->priority > current_->priority) return true;
  }
  return false;
}

bool Scheduler::RandomSwitch() { return TapeChance(options_.preempt_per_mille); }

bool Scheduler::TapeChance(uint32_t per_mille) {
  if (tape_pos_ < options_.tape.size()) {
    // A byte b in [0, 256) says yes iff b / 256 < per_mille / 1000.
    const uint32_t b = static_cast<uint8_t>(options_.tape[tape_pos_++]);
    return b * 1000 < per_mille * 256;
  }
  return sched_prng_.Chance(per_mille, 1000);
}

size_t Scheduler::RandomPick(size_t n) {
  if (tape_pos_ < options_.tape.size()) {
    return static_cast<uint8_t>(options_.tape[tape_pos_++]) % n;
  }
  return static_cast<size_t>(sched_prng_.Below(n));
}

void Scheduler::YieldNow(std::coroutine_handle<> h, PendingOp* op) {
  ++steps_;
  if (go_) {
    // runtime.Gosched -> goschedImpl: the goroutine goes to the global queue.
    ChargeCpu(ps_[cur_p_]);
    go_switch_ = GoSwitch::kGlobal;
  }
  if (options_.policy == Policy::kPct) {
    // PCT runs the highest-priority task, which would be the yielder again:
    // a spin-wait on Gosched would never end. A yield therefore lowers the
    // task below every priority PCT assigns (as PCT implementations with
    // yield support do), so that every other runnable task goes first.
    PctSwitch();
    current_->priority = 0;
  }
  YieldWithOp(h, op);
}

void Scheduler::YieldWithOp(std::coroutine_handle<> h, PendingOp* op) {
  PRODSIM_ASSERT(current_ != nullptr);
  PRODSIM_ASSERT(current_->state == TaskState::kRunning);
  current_->resume = h;
  current_->pending_op = op;
  if (std::exchange(park_spinner_, false)) {
    // Parked, not runnable: a timer readies it (and its op) after the
    // quantum, and time can move on to whatever it waits for.
    current_->state = TaskState::kBlocked;
    current_->blocker = nullptr;
    // Until the next timer, nothing but the spinner can act, and it only
    // re-reads the same state: parking it until then (after that timer,
    // by sequence) is the same as letting it spin there, without the steps.
    Time wake = now_ + options_.spin_quantum;
    if (!timers_.empty()) wake = std::max(wake, timers_.front().at);
    PushTimer(wake, current_, nullptr);
    if (go_) {
      ps_[cur_p_].cur = nullptr;
      go_switch_ = GoSwitch::kKeep;
    }
    Emit(EventKind::kPreempt, 1);
    return;
  }
  current_->state = TaskState::kRunnable;
  if (!go_) {
    runq_.PushBack(current_);
    Emit(EventKind::kPreempt);
    return;
  }
  if (std::exchange(go_switch_, GoSwitch::kKeep) == GoSwitch::kGlobal) {
    // Preempted (time slice, Gosched, a perturbation): off the P, onto the
    // global queue (goschedImpl -> globrunqput).
    ps_[cur_p_].cur = nullptr;
    (current_->world ? ps_[nps_].local : global_).PushBack(current_);
    Emit(EventKind::kPreempt, 2);
  } else {
    // Still on its P: another P runs for a while (parallel execution, or
    // this P's CPU is busy for the cost spent).
    Emit(EventKind::kPreempt, 3);
  }
}

void Scheduler::Block(std::coroutine_handle<> h, const Blocker* why) {
  PRODSIM_ASSERT(current_ != nullptr);
  PRODSIM_ASSERT(current_->state == TaskState::kRunning);
  current_->resume = h;
  current_->blocker = why;
  current_->state = TaskState::kBlocked;
  current_->spinner = false;
  if (go_) {
    // gopark: the P is free for the next goroutine once its CPU is.
    ChargeCpu(ps_[cur_p_]);
    ps_[cur_p_].cur = nullptr;
  }
  Emit(EventKind::kBlock);
}

Goroutine* Scheduler::PickNext() {
  if (go_) {
    int chosen;
    if (next_p_ >= 0) {
      chosen = std::exchange(next_p_, -1);
    } else if (ready_.valid) {
      chosen = DrawP(ready_.ps, ready_.n);
    } else {
      chosen = PickP();
    }
    ready_.valid = false;
    PRODSIM_ASSERT(chosen >= 0);
    cur_p_ = static_cast<size_t>(chosen);
    GoP& p = ps_[cur_p_];
    p.busy_until = PReady(p);
    if (p.cur != nullptr) return p.cur;  // resumes where another P took over
    bool inherit = false;
    Goroutine* g = FindRunnable(p, &inherit);
    PRODSIM_ASSERT(g != nullptr);
    // execute(gp, inheritTime): a goroutine taken from runnext runs in the
    // time slice of the one that readied it; any other starts a new one.
    if (!inherit) {
      ++p.schedtick;
      p.slice_ops = 0;
      p.slice_start = p.busy_until;
    }
    g->p = static_cast<uint32_t>(cur_p_);
    p.cur = g;
    if (!g->world) program_last_run_ = p.busy_until;
    return g;
  }
  PRODSIM_ASSERT(!runq_.empty());
  size_t index = 0;
  const size_t n = runq_.size();
  if (n > 1 && options_.policy == Policy::kRandom) {
    index = RandomPick(n);
  } else if (n > 1 && options_.policy == Policy::kPct) {
    for (size_t i = 1; i < n; ++i) {
      if (runq_[i]->priority > runq_[index]->priority) index = i;
    }
  }
  Goroutine* g = index == 0 ? runq_.PopFront() : runq_.Take(index);
  slice_ops_ = 0;
  if (n > 1 && options_.policy != Policy::kFifo) {
    trace_.Emit(now_, EventKind::kSchedule, 0, g->id, n);
  }
  return g;
}

RunResult Scheduler::Run() {
  PRODSIM_ASSERT(!ran_);
  ran_ = true;
  RunResult result;
  for (;;) {
    if (crashed_) {
      result.outcome = Outcome::kProgramCrash;
      break;
    }
    if (stopped_) {
      result.outcome = Outcome::kStopped;
      break;
    }
    if (live_non_daemon_ == 0 && spawned_non_daemon_) {
      result.outcome = Outcome::kAllDone;
      break;
    }
    if (steps_ >= options_.step_limit) {
      result.outcome = Outcome::kStepLimit;
      end_detail_ = absl::StrCat("step limit of ", options_.step_limit, " reached");
      break;
    }
    if (Outside* outside = options_.outside; outside != nullptr) {
      if (now_ >= options_.time_limit) {
        now_ = options_.time_limit;
        result.outcome = Outcome::kTimeLimit;
        end_detail_ = absl::StrCat("time limit of ", options_.time_limit.ToString(), "s reached");
        break;
      }
      if (!AnyRunnable()) {
        Time next = timers_.empty() ? Time::Max() : timers_.front().at;
        if (go_) next = std::min(next, ready_.busy_until);
        AdvanceTo(outside->Tick(now_, std::min(next, options_.time_limit), /*block=*/true));
        continue;
      }
      if (steps_ % kOutsidePollSteps == 0) {
        AdvanceTo(outside->Tick(now_, now_, /*block=*/false));
        ready_.valid = false;  // a delivery may have readied a goroutine
      }
    } else if (!AnyRunnable()) {
      // A P that is busy for the CPU cost it spent becomes free later.
      const Time busy = go_ ? ready_.busy_until : Time::Max();
      if (timers_.empty() && busy == Time::Max()) {
        result.outcome = tasks_.empty() ? Outcome::kAllDone : Outcome::kDeadlock;
        if (!tasks_.empty()) end_detail_ = DeadlockReport();
        break;
      }
      const Time next = timers_.empty() ? busy : std::min(busy, timers_.front().at);
      if (next > options_.time_limit) {
        now_ = options_.time_limit;
        result.outcome = Outcome::kTimeLimit;
        end_detail_ =
            absl::StrCat("simulated time limit of ", options_.time_limit.ToString(), "s reached");
        break;
      }
      if (!timers_.empty() && timers_.front().at <= busy) {
        FireNextTimer();
      } else {
        AdvanceClock(busy);
      }
      continue;
    }
    ++steps_;
    Goroutine* g = PickNext();
    current_ = g;
    g->state = TaskState::kRunning;
    Emit(EventKind::kRun, g->id);
    bool resume = true;
    if (!g->panic_on_run.empty()) [[unlikely]] {
      Panic(std::exchange(g->panic_on_run, {}), g->panic_where);
      resume = false;
    } else if (g->pending_op != nullptr) {
      PendingOp* op = std::exchange(g->pending_op, nullptr);
      resume = op->Retry();
    }
    if (resume) g->resume.resume();
    if (g->root.done()) Finish(g);
    current_ = nullptr;
  }
  result.detail = end_detail_;
  result.panic = panic_;
  result.end_time = now_;
  result.steps = steps_;
  result.digest = trace_.digest();
  return result;
}

void Scheduler::Finish(Goroutine* g) {
  PRODSIM_ASSERT(g->state == TaskState::kRunning || crashed_);
  if (go_) {
    ChargeCpu(ps_[g->p]);
    if (ps_[g->p].cur == g) ps_[g->p].cur = nullptr;  // goexit0: the P schedules
  }
  Emit(EventKind::kExit, g->id);
  g->state = TaskState::kDone;
  g->root.destroy();
  g->root = {};
  if (!g->daemon) {
    PRODSIM_ASSERT(live_non_daemon_ > 0);
    --live_non_daemon_;
  }
  tasks_.erase(g->id);
}

uint64_t Scheduler::PushTimer(Time at, Goroutine* wake, absl::AnyInvocable<void()> fn) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(timer_slots_.size());
    timer_slots_.emplace_back();
  }
  TimerSlot& t = timer_slots_[slot];
  t.wake = wake;
  t.fn = std::move(fn);
  t.netpoll = false;
  t.cancelled = false;
  const uint64_t seq = next_timer_seq_++;
  PushKey(TimerEntry{at, seq, slot});
  return seq;
}

void Scheduler::PushKey(const TimerEntry& e) {
  timers_.push_back(e);
  std::push_heap(timers_.begin(), timers_.end(), TimerLater{});
}

Scheduler::TimerId Scheduler::At(Time when, absl::AnyInvocable<void()> fn) {
  PRODSIM_ASSERT(when >= now_);
  return PushTimer(when, nullptr, std::move(fn));
}

bool Scheduler::Cancel(TimerId id) {
  for (const TimerEntry& e : timers_) {
    if (e.seq == id) return !std::exchange(timer_slots_[e.slot].cancelled, true);
  }
  return false;
}

void Scheduler::FireNextTimer() {
  std::pop_heap(timers_.begin(), timers_.end(), TimerLater{});
  TimerEntry e = timers_.back();
  timers_.pop_back();
  TimerSlot& slot = timer_slots_[e.slot];
  const bool held = slot.netpoll;  // held, and now due: never held twice
  if (held) {
    slot.netpoll = false;
    --netpoll_held_;
  }
  if (!slot.cancelled) {
    PRODSIM_ASSERT(e.at >= now_);
    if (go_ && !held && NetpollHolds(e)) return;
  }
  // The slot is free before the timer acts: what it does may add timers.
  const bool cancelled = slot.cancelled;
  Goroutine* wake = slot.wake;
  absl::AnyInvocable<void()> fn = std::move(slot.fn);
  slot.fn = nullptr;
  free_slots_.push_back(e.slot);
  if (cancelled) return;
  if (e.at > now_) {
    now_ = e.at;
    Emit(EventKind::kTimeAdvance, static_cast<uint64_t>(now_.nanos()));
  }
  Emit(EventKind::kTimer, e.seq);
  if (wake != nullptr) {
    Ready(wake);
  } else {
    fn();
  }
}

void Scheduler::AdvanceClock(Time t) {
  PRODSIM_ASSERT(t >= now_);
  if (t > now_) {
    now_ = t;
    Emit(EventKind::kTimeAdvance, static_cast<uint64_t>(now_.nanos()));
  }
}

void Scheduler::AdvanceTo(Time t) {
  while (!timers_.empty() && timers_.front().at <= t) FireNextTimer();
  if (t > now_) {
    now_ = t;
    Emit(EventKind::kTimeAdvance, static_cast<uint64_t>(now_.nanos()));
  }
}

void Scheduler::SleepAwaiter::await_suspend(std::coroutine_handle<> h) {
  PRODSIM_ASSERT(d.nanos() >= 0);
  s->Emit(EventKind::kSleep, static_cast<uint64_t>(d.nanos()));
  Goroutine* g = s->current_;
  s->Block(h, this);
  s->PushTimer(s->now_ + d, g, nullptr);
}

std::string Scheduler::SleepAwaiter::Describe() const {
  return absl::StrCat("sleep ", d.ToString());
}

std::vector<LiveGoroutine> Scheduler::LiveGoroutines() const {
  std::vector<LiveGoroutine> out;
  for (const auto& [id, g] : tasks_) {
    if (g->state == TaskState::kDone) continue;
    LiveGoroutine live;
    live.id = id;
    live.name = g->name;
    live.daemon = g->daemon;
    live.world = g->world;
    live.runnable = g->state != TaskState::kBlocked;
    live.sleeping = dynamic_cast<const SleepAwaiter*>(g->blocker) != nullptr;
    live.waits_on = g->blocker != nullptr ? g->blocker->Describe()
                                          : std::string(live.runnable ? "runnable" : "blocked");
    out.push_back(std::move(live));
  }
  return out;
}

std::string Scheduler::DeadlockReport() const {
  std::string out = "all goroutines are asleep - deadlock!";
  for (const auto& [id, g] : tasks_) {
    absl::StrAppend(&out, "\n  goroutine ", id, " '", g->name, "'", g->daemon ? " (daemon)" : "",
                    ": ", g->blocker != nullptr ? g->blocker->Describe() : std::string("blocked"));
  }
  return out;
}

std::string Scheduler::RenderTrace() const {
  std::string out;
  for (const TraceEvent& e : trace_.events()) {
    absl::StrAppend(&out, e.at.ToString(), " ");
    if (e.task != 0) absl::StrAppend(&out, "[", TaskName(e.task), "] ");
    absl::StrAppend(&out, std::string(EventKindName(e.kind)));
    switch (e.kind) {
      case EventKind::kSpawn:
      case EventKind::kExit:
      case EventKind::kRun:
      case EventKind::kWake:
        absl::StrAppend(&out, " ", TaskName(static_cast<uint32_t>(e.a)));
        break;
      case EventKind::kSchedule:
        absl::StrAppend(&out, " ", TaskName(static_cast<uint32_t>(e.a)), " of ", e.b, " runnable");
        break;
      case EventKind::kSend:
      case EventKind::kClose:
        absl::StrAppend(&out, " ", ObjectName(static_cast<uint32_t>(e.a)));
        break;
      case EventKind::kRecv:
        absl::StrAppend(&out, " ", ObjectName(static_cast<uint32_t>(e.a)),
                        e.b != 0 ? "" : " (closed)");
        break;
      case EventKind::kSelect:
        absl::StrAppend(&out, " case ", static_cast<int64_t>(e.a), " of ", e.b, " ready");
        break;
      case EventKind::kSleep:
        absl::StrAppend(&out, " ", Duration::Nanos(static_cast<int64_t>(e.a)).ToString());
        break;
      case EventKind::kNote: absl::StrAppend(&out, " ", e.text); break;
      default: break;
    }
    out.push_back('\n');
  }
  if (trace_.truncated()) out += "... (trace truncated)\n";
  return out;
}

}  // namespace sim
