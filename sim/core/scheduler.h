// The deterministic scheduler: goroutines as coroutines, virtual time, timers,
// bounds and verdicts.
//
// One thread runs everything. Time stands still while any task is runnable
// (an infinitely fast CPU) and jumps to the next timer when none is. Which
// runnable task runs next is a policy (FIFO, random, PCT, go); with random
// and PCT a task may also be switched out at every synchronization point
// (channel operation, select, lock, yield), which is what makes every
// interleaving that Go's scheduler could produce reachable. The go policy
// instead follows the rules of Go's own scheduler (runtime/proc.go) on
// GOMAXPROCS simulated Ps, and is the only one on which task steps may
// cost CPU time (CpuCosts). Every choice is drawn from the run's PRNG and
// folded into the trace digest.
//
// Invariants: a task is in exactly one state; a runnable task is in the run
// queue exactly once; a blocked task is resumed only by a wake-up from the
// object it waits on; the run always ends (step and time bounds).
#ifndef PRODSIM_SIM_CORE_SCHEDULER_H_
#define PRODSIM_SIM_CORE_SCHEDULER_H_

#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "sim/core/prng.h"
#include "sim/core/task.h"
#include "sim/core/time.h"
#include "sim/core/trace.h"

namespace sim {

enum class Policy { kFifo, kRandom, kPct, kGo };
std::string_view PolicyName(Policy p);
absl::StatusOr<Policy> ParsePolicy(std::string_view name);

// The world outside a real-time run (wire mode: sockets, child processes, the
// wall clock). sim/core never reads a clock: the Outside owns it. With an
// Outside the scheduler's time follows what Tick returns, timers fire when
// that time reaches them, and no run ends as a deadlock (an outside event
// can always wake a task): the time limit, Stop or the tasks finishing end
// it.
class Outside {
 public:
  // Called when no task is runnable (`block`: wait until `deadline`, the
  // next timer or the time limit, or until an outside event), and every
  // kOutsidePollSteps steps while tasks run (not `block`: only look).
  // Delivers the events that came (it may wake tasks and do non-blocking
  // channel operations, as a timer callback may) and returns the current
  // time, which the scheduler never lets run backwards.
  virtual Time Tick(Time now, Time deadline, bool block) = 0;

 protected:
  ~Outside() = default;
};
inline constexpr uint64_t kOutsidePollSteps = 256;
// Go's runtime: sysmon preempts a goroutine after forcePreemptNS of CPU;
// runqgrab waits 3 us before it steals a running P's runnext.
inline constexpr Duration kGoTimeSlice = Duration::Millis(10);
inline constexpr uint32_t kGoMaxProcs = 64;  // the scenario schema's bound
inline constexpr Duration kGoRunnextStealDelay = Duration::Micros(3);

// What a step of the modelled program costs in CPU time (go policy only:
// the Ps are the CPUs that are busy for it). Zero everywhere: time stands
// still while tasks run, as under every other policy.
struct CpuCosts {
  Duration sync_op;       // every synchronization point (a channel operation)
  Duration wake;          // a blocked task made ready by the running one (goready)
  Duration message;       // a message through the producer's pipeline
  Duration request;       // a request built, encoded and written
  Duration request_byte;  // per byte of a request (encoding, CRC)
  Duration response;      // a response read and decoded
  Duration start;         // the program's start (exec, runtime init), before its first action
  bool zero() const {
    return sync_op.nanos() == 0 && wake.nanos() == 0 && message.nanos() == 0 &&
           request.nanos() == 0 && request_byte.nanos() == 0 && response.nanos() == 0 &&
           start.nanos() == 0;
  }
};

struct SchedulerOptions {
  uint64_t seed = 1;
  Policy policy = Policy::kFifo;
  // Random: chance, in thousandths, of a switch at each synchronization point.
  uint32_t preempt_per_mille = 500;
  // Random: the first decisions (switch or not at a sync point, which
  // runnable task next) are read from these bytes, one per decision, and
  // the seed's stream makes the rest. A fuzzer steers the interleaving
  // through it: changing one byte changes one decision. Empty: every
  // decision from the seed, exactly as before the tape existed.
  std::string tape;
  // PCT (Burckhardt et al. 2010): bug depth d, and the expected number of
  // steps k over which the d-1 priority change points are spread.
  uint32_t pct_depth = 3;
  uint64_t pct_steps = 20000;
  // Go: the number of Ps (GOMAXPROCS), the chance in thousandths of an
  // extra asynchronous preemption at a synchronization point (a
  // perturbation on top of Go's rules; 0: the rules alone), and the CPU
  // costs. The tape, as for random, makes the first choices.
  uint32_t gomaxprocs = 2;
  uint32_t perturb_per_mille = 0;
  CpuCosts cpu;
  // Go preempts a goroutine that runs too long without blocking (a spin on
  // a select whose closed-channel case is always ready, say). Every policy
  // switches a task out after this many synchronization points in a row
  // without blocking, which keeps a spinning task from starving the rest.
  uint32_t time_slice_ops = 1000;
  // Time stands still while a task runs (an infinitely fast CPU), so a task
  // that spins with no other task runnable would freeze the clock, and the
  // timer or delivery it waits for would never come; in Go time passes
  // while it spins. Such a spinner is parked at the end of its time slice
  // until the next timer is due, or for this long (the CPU time a slice of
  // spinning costs) if that is later: until something else happens, it can
  // only read the same state again.
  Duration spin_quantum = Duration::Micros(10);
  // Once parked as a spinner, a task keeps this shorter slice until it next
  // blocks: each wake-up re-reads the state a few times, not a thousand.
  uint32_t spinner_slice_ops = 20;
  // Bounds: reaching either ends the run with a verdict.
  uint64_t step_limit = 50000000;
  Time time_limit = Time::FromNanos(3600LL * 1000000000LL);
  bool record_trace = false;
  // Null: the simulated world (virtual time jumps to the next timer). Set:
  // the real-time world; it must outlive the run.
  Outside* outside = nullptr;
};

enum class Outcome {
  kAllDone,       // every non-daemon task returned
  kStopped,       // Scheduler::Stop() was called (a harness decided)
  kDeadlock,      // all tasks asleep, nothing pending: Go's fatal error
  kStepLimit,     // step budget spent
  kTimeLimit,     // simulated-time limit reached
  kProgramCrash,  // the modelled program crashed (Go panic)
};
std::string_view OutcomeName(Outcome o);

// Where the modelled program did something: a file and line of the model,
// for a panic's report. Taken as a default argument it is the caller's
// (std::source_location needs a newer clang than Debian 12's 14).
struct CodeLocation {
  const char* file = nullptr;
  int line = 0;
  static constexpr CodeLocation Here(const char* file = __builtin_FILE(),
                                     int line = __builtin_LINE()) {
    return CodeLocation{file, line};
  }
};

// A crash of the modelled program, as Go reports one: the message, the
// goroutine that panicked (its id and the model's name for it), and the
// line of the model where it happened (a channel send, a close, an unlock).
struct PanicReport {
  std::string message;         // "send on closed channel bp#1.input"
  uint32_t goroutine = 0;      // 0: outside any task (a timer callback)
  std::string goroutine_name;  // "bp#1.bridge"
  std::string file;            // as the compiler named it; "" if unknown
  int line = 0;
};

// A goroutine alive when asked (Scheduler::LiveGoroutines), as goleak
// would list it: its id and name, and what it waits on.
struct LiveGoroutine {
  uint32_t id = 0;
  std::string name;
  bool daemon = false;
  bool world = false;     // the cluster's, a fault's: not the program's
  bool sleeping = false;  // in a Sleep: it wakes by itself
  bool runnable = false;  // ready to run, or running
  std::string waits_on;   // the blocker's description ("chan receive on 'x'")
};

struct RunResult {
  Outcome outcome = Outcome::kAllDone;
  std::string detail;                // deadlock report, panic message, stop reason
  std::optional<PanicReport> panic;  // kProgramCrash: what crashed, and where
  Time end_time;
  uint64_t steps = 0;
  uint64_t digest = 0;
};

// Describes what a blocked task waits on, for deadlock reports.
class Blocker {
 public:
  virtual std::string Describe() const = 0;

 protected:
  ~Blocker() = default;
};

// A synchronization operation that was interrupted by a switch before it
// ran: when its task is scheduled again it is attempted before resuming.
class PendingOp {
 public:
  // Returns true if the task should be resumed now; false if it blocked or
  // the program crashed.
  virtual bool Retry() = 0;

 protected:
  ~PendingOp() = default;
};

enum class TaskState : uint8_t { kRunnable, kRunning, kBlocked, kDone };

struct Goroutine {
  uint32_t id = 0;
  std::string name;
  bool daemon = false;
  TaskState state = TaskState::kRunnable;
  std::coroutine_handle<> root;
  std::coroutine_handle<> resume;  // where to continue (root or a leaf)
  PendingOp* pending_op = nullptr;
  const Blocker* blocker = nullptr;
  uint64_t priority = 0;  // PCT only
  bool spinner = false;   // parked as a spinner since it last blocked
  uint32_t p = 0;         // go: the P it last ran on
  bool world = false;     // SpawnOptions::world
  // Set when the task was woken only to panic (a sender on a channel that
  // got closed): the scheduler panics in its name instead of resuming it.
  std::string panic_on_run;
  CodeLocation panic_where;  // the blocked operation's, with panic_on_run
};

// The run queue: a ring buffer of tasks (cheaper than std::deque on the
// handoff path). Removal from the middle swaps with the front, which only the
// random and PCT policies use; their choice is by PRNG or priority, so the
// order change is itself deterministic.
class RunQueue {
 public:
  RunQueue() : ring_(16) {}
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  Goroutine* operator[](size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  void PushBack(Goroutine* g) {
    if (size_ == ring_.size()) Grow();
    ring_[(head_ + size_) & (ring_.size() - 1)] = g;
    ++size_;
  }
  Goroutine* PopFront() {
    Goroutine* g = ring_[head_];
    head_ = (head_ + 1) & (ring_.size() - 1);
    --size_;
    return g;
  }
  Goroutine* Take(size_t i) {
    const size_t mask = ring_.size() - 1;
    std::swap(ring_[(head_ + i) & mask], ring_[head_]);
    return PopFront();
  }

 private:
  void Grow();
  std::vector<Goroutine*> ring_;  // size is a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

struct SpawnOptions {
  // A daemon task (a broker's accept loop, say) does not keep the run alive
  // and does not count as a deadlocked task by itself.
  bool daemon = false;
  // A goroutine of the world around the modelled program (the Kafka
  // cluster, a fault): under go it runs on a machine of its own, not on
  // the program's Ps, spends none of their CPU, and a program goroutine it
  // wakes is woken as by the network. Spawned by a world goroutine: world.
  bool world = false;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Spawns a goroutine. It first runs when the scheduler picks it.
  uint32_t Go(std::string name, Task<void> task, SpawnOptions opts = {});

  // Runs until a verdict. May be called once.
  RunResult Run();

  // Destroys every task's coroutine frame now (the destructor does it too).
  // A world whose tasks point into objects destroyed before the scheduler
  // calls this first. REQUIRES: not running.
  void DestroyTasks();

  // Runs `fn` once, in DestroyTasks after every frame is gone. Go leaves
  // objects that point at each other (a producer and its brokerProducers)
  // to its garbage collector; a world whose program is still hung when the
  // run ends has such cycles of shared_ptr, and their owners break them
  // here (the hook must hold its object weakly), so teardown frees
  // everything.
  void AtTeardown(absl::AnyInvocable<void()> fn) { teardown_.push_back(std::move(fn)); }

  // Every goroutine not yet returned, by id, with what it waits on (after
  // Run, before DestroyTasks): what goleak would list.
  std::vector<LiveGoroutine> LiveGoroutines() const;

  // Ends the run at the next scheduling decision (from a task or callback).
  void Stop(std::string reason);

  // Crash of the modelled program (send on closed channel, ...): the current
  // task is never resumed and the run ends with kProgramCrash.
  void Panic(std::string message, CodeLocation where = CodeLocation::Here());
  bool crashed() const { return crashed_; }

  Time now() const { return now_; }
  Prng& prng() { return prng_; }
  // The modelled program's own randomness (Go's select choice, map order).
  Prng& program_prng() { return program_prng_; }
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  const SchedulerOptions& options() const { return options_; }
  Goroutine* current() const { return current_; }
  uint32_t current_id() const { return current_ != nullptr ? current_->id : 0; }
  uint64_t steps() const { return steps_; }
  // The name of a task, live or finished (only while recording: else "g<id>").
  std::string TaskName(uint32_t id) const;

  // --- Timers. Callbacks run between tasks, never inside one; they may wake
  // tasks and do non-blocking channel operations, never block.
  using TimerId = uint64_t;
  TimerId At(Time when, absl::AnyInvocable<void()> fn);
  // Moves the run's time bound (SchedulerOptions::time_limit), e.g. when
  // the harness learns that a fault lasted longer than planned.
  void set_time_limit(Time t) { options_.time_limit = t; }

  TimerId After(Duration d, absl::AnyInvocable<void()> fn) { return At(now_ + d, std::move(fn)); }
  // Returns true if the timer was pending.
  bool Cancel(TimerId id);

  // --- For the synchronization primitives (sim/core only).
  // A synchronization point: counts a step, and returns true when the
  // policy switches the current task out here (the caller then yields).
  bool SyncPoint() {
    ++steps_;
    if (go_) return SyncPointGo();
    if (options_.policy == Policy::kFifo && steps_ <= options_.step_limit &&
        ++slice_ops_ <= options_.time_slice_ops) [[likely]] {
      return false;
    }
    return SyncPointSlow();
  }
  // Parks the current task, runnable again, with an op to retry first.
  void YieldWithOp(std::coroutine_handle<> h, PendingOp* op);
  // runtime.Gosched: a synchronization point that always switches.
  void YieldNow(std::coroutine_handle<> h, PendingOp* op);
  // Blocks the current task until Ready() is called for it.
  void Block(std::coroutine_handle<> h, const Blocker* why);
  // Makes a blocked task runnable.
  void Ready(Goroutine* g) {
    PRODSIM_ASSERT(g != nullptr);
    PRODSIM_ASSERT(g->state == TaskState::kBlocked);
    g->state = TaskState::kRunnable;
    g->blocker = nullptr;
    if (go_) [[unlikely]] {
      ReadyGo(g);
    } else {
      runq_.PushBack(g);
    }
    Emit(EventKind::kWake, g->id);
  }
  // Wakes a blocked task so that it panics with `message` when it next
  // runs, without resuming it (Go's goroutine panics where it blocked).
  void ReadyToPanic(Goroutine* g, std::string message, CodeLocation where) {
    g->panic_on_run = std::move(message);
    g->panic_where = where;
    Ready(g);
  }
  // Registers a channel name for the trace; returns its id.
  uint32_t RegisterObject(std::string_view kind, std::string_view name);
  std::string ObjectName(uint32_t id) const;

  // CPU time the current task spends (go policy; no effect under the
  // others): its P is busy for it from its next synchronization point.
  void Spend(Duration d) {
    if (go_ && current_ != nullptr && !current_->world) pending_cpu_ = pending_cpu_ + d;
  }
  const CpuCosts& cpu() const { return options_.cpu; }

  // Sleep for d of virtual time (Go's time.Sleep).
  struct SleepAwaiter final : Blocker {
    SleepAwaiter(Scheduler* sched, Duration dur) : s(sched), d(dur) {}
    Scheduler* s;
    Duration d;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const {}
    std::string Describe() const override;
  };
  SleepAwaiter Sleep(Duration d) { return SleepAwaiter(this, d); }

  // runtime.Gosched(): always goes back to the run queue.
  struct YieldAwaiter final : PendingOp {
    explicit YieldAwaiter(Scheduler* sched) : s(sched) {}
    Scheduler* s;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> h) { s->YieldNow(h, this); }
    void await_resume() const {}
    bool Retry() override { return true; }
  };
  YieldAwaiter Yield() { return YieldAwaiter(this); }

  // Suspends the current task for good: what a task does after it made the
  // modelled program panic outside a synchronization point.
  struct HaltAwaiter {
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<>) const {}
    void await_resume() const {}
  };
  HaltAwaiter Halt() { return HaltAwaiter{}; }

  // Text rendering of the recorded trace (empty unless recording).
  std::string RenderTrace() const;

 private:
  // The timer heap holds small keys; what a timer does lives in a slot of
  // timer_slots_ (reused through free_slots_), so that sifting the heap
  // moves 24 bytes, not a callback, and a timer allocates nothing once the
  // slots have grown to the run's peak.
  struct TimerEntry {
    Time at;
    uint64_t seq;
    uint32_t slot;
  };
  struct TimerSlot {
    Goroutine* wake = nullptr;  // a sleeping task, or null for a callback
    absl::AnyInvocable<void()> fn;
    // Go: held back by netpoll's millisecond wait; `due` is when it was due.
    bool netpoll = false;
    Time due;
    bool cancelled = false;  // Cancel: it fires as nothing
  };
  struct TimerLater {
    bool operator()(const TimerEntry& x, const TimerEntry& y) const {
      if (x.at != y.at) return x.at > y.at;
      return x.seq > y.seq;
    }
  };

  Goroutine* PickNext();
  bool SyncPointSlow();

  // --- The go policy (runtime/proc.go): a P per GOMAXPROCS.
  struct GoP {
    Goroutine* cur = nullptr;      // on the P: running, or switched out
    Goroutine* runnext = nullptr;  // p.runnext
    Time runnext_at;               // when runnext was set, on the P's clock
    RunQueue local;                // p.runq
    uint32_t schedtick = 0;        // p.schedtick
    Time busy_until;               // the CPU cost spent so far runs until then
    uint32_t slice_ops = 0;        // sync points in the current time slice
    Time slice_start;              // the P's clock when the slice began
  };
  enum class GoSwitch : uint8_t { kKeep, kGlobal };
  bool SyncPointGo();
  void ReadyGo(Goroutine* g);
  void PutReadyGo(Goroutine* g);
  void RunqPut(GoP& p, Goroutine* g, bool next);
  // The Ps that can run at now_, ascending, into `ready` (room for
  // kGoMaxProcs + 1); their count. With none, *busy_until says when the
  // first busy one is free (else Max).
  size_t ReadyPs(size_t* ready, Time* busy_until) const;
  // The P that runs next at now_, drawn among ReadyPs, or -1 if none can.
  int PickP();
  int DrawP(const size_t* ready, size_t n);
  Goroutine* FindRunnable(GoP& p, bool* inherit);
  Goroutine* StealFrom(GoP& thief, size_t victim_index, bool runnext);
  bool Stealable(size_t victim, bool runnext) const;
  Time PReady(const GoP& p) const { return std::max(p.busy_until, now_); }
  void ChargeCpu(GoP& p);
  // Runnable work now: any task that can run at now_ (any policy). Under
  // go it keeps the ready Ps in ready_ for the PickNext that follows.
  bool AnyRunnable();
  // Go: no program goroutine runs or waits to run.
  bool ProgramIdle() const;
  // Go: a sleep's wake-up while the program is idle comes when netpoll's
  // wait (whole milliseconds) ends; true if `e` was held back so.
  bool NetpollHolds(TimerEntry& e);
  // Go: an event from outside woke the program's netpoll: held timers that
  // are due fire now.
  void NetpollWake();
  void FireNextTimer();
  // Time moves to `t` (a busy P becomes free then) with no timer due.
  void AdvanceClock(Time t);
  // Real-time: fires every timer due by `t`, then sets the time to `t`.
  void AdvanceTo(Time t);
  void Finish(Goroutine* g);
  // A new timer (a sleeping task to wake, or a callback); returns its seq.
  uint64_t PushTimer(Time at, Goroutine* wake, absl::AnyInvocable<void()> fn);
  void PushKey(const TimerEntry& e);
  std::string DeadlockReport() const;
  void SetupPct();
  bool PctSwitch();
  // The random policy's decisions: from the tape while it lasts.
  bool RandomSwitch();
  bool TapeChance(uint32_t per_mille);
  size_t RandomPick(size_t n);
  void Emit(EventKind k, uint64_t a = 0, uint64_t b = 0) {
    trace_.Emit(now_, k, current_id(), a, b);
  }

  SchedulerOptions options_;
  Prng prng_;
  Prng sched_prng_;    // only the scheduler's own choices
  Prng program_prng_;  // Go runtime randomness inside the program
  Trace trace_;
  Time now_;
  uint64_t steps_ = 0;
  uint32_t slice_ops_ = 0;     // sync points since the current task was picked
  bool park_spinner_ = false;  // the next yield parks for spin_quantum
  uint32_t next_id_ = 1;
  uint32_t next_object_id_ = 1;
  uint64_t next_timer_seq_ = 1;
  Goroutine* current_ = nullptr;
  RunQueue runq_;
  std::vector<TimerEntry> timers_;  // a heap under TimerLater
  std::vector<TimerSlot> timer_slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<absl::AnyInvocable<void()>> teardown_;  // AtTeardown
  std::optional<PanicReport> panic_;                  // the first Panic
  absl::btree_map<uint32_t, std::unique_ptr<Goroutine>> tasks_;
  uint32_t live_non_daemon_ = 0;
  bool spawned_non_daemon_ = false;
  std::vector<std::string> task_names_;    // by id, when recording
  std::vector<std::string> object_names_;  // by id
  bool stopped_ = false;
  bool crashed_ = false;
  bool ran_ = false;
  std::string end_detail_;
  // PCT state.
  std::vector<uint64_t> pct_change_points_;  // ascending steps
  size_t pct_next_change_ = 0;
  uint64_t pct_low_priority_ = 0;
  size_t tape_pos_ = 0;  // next unread byte of options_.tape
  // Go policy state.
  bool go_ = false;
  std::vector<GoP> ps_;  // the program's Ps, then the world's (its local queue)
  size_t nps_ = 0;       // GOMAXPROCS: ps_[nps_] is the world's
  RunQueue global_;      // sched.runq
  size_t cur_p_ = 0;     // the P of current_
  int next_p_ = -1;      // the P chosen at the last sync point, if another
  GoSwitch go_switch_ = GoSwitch::kKeep;
  Duration pending_cpu_;
  Time program_last_run_;            // when a program goroutine last ran
  uint32_t netpoll_held_ = 0;        // timers in the heap that NetpollHolds holds
  std::vector<size_t> steal_order_;  // scratch for FindRunnable
  // The run loop's AnyRunnable found these Ps ready; PickNext draws among
  // them unless something ran in between (valid is then false).
  struct ReadyCache {
    size_t ps[kGoMaxProcs + 1];
    size_t n = 0;
    Time busy_until;
    bool valid = false;
  };
  ReadyCache ready_;
};

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_SCHEDULER_H_
