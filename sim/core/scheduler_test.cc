#include "sim/core/scheduler.h"

#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "sim/core/chan.h"

namespace sim {
namespace {

Task<int> Add(Scheduler* s, int a, int b) {
  co_await s->Sleep(Duration::Millis(1));
  co_return a + b;
}

Task<int> Nested(Scheduler* s, int depth) {
  if (depth == 0) co_return co_await Add(s, 1, 2);
  const int below = co_await Nested(s, depth - 1);
  co_return below + 1;
}

Task<void> RunNested(Scheduler* s, int* out) { *out = co_await Nested(s, 20); }

// A deep chain of awaited coroutines can block at the bottom and return.
TEST(SchedulerTest, NestedCallsBlockAndReturn) {
  Scheduler s({});
  int out = 0;
  s.Go("nested", RunNested(&s, &out));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone);
  EXPECT_EQ(out, 23);
  EXPECT_EQ(r.end_time, Time() + Duration::Millis(1));
}

Task<void> Sleeper(Scheduler* s, Duration d, std::vector<int>* log, int id) {
  co_await s->Sleep(d);
  log->push_back(id);
}

// Sleeps wake in time order, and equal times in the order they were set.
TEST(SchedulerTest, TimersFireInTimeThenInsertionOrder) {
  Scheduler s({});
  std::vector<int> log;
  s.Go("a", Sleeper(&s, Duration::Millis(30), &log, 1));
  s.Go("b", Sleeper(&s, Duration::Millis(10), &log, 2));
  s.Go("c", Sleeper(&s, Duration::Millis(10), &log, 3));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone);
  EXPECT_EQ(log, (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(r.end_time.nanos(), Duration::Millis(30).nanos());
}

Task<void> Forever(Scheduler* s) {
  for (;;) co_await s->Sleep(Duration::Seconds(1));
}

// Holds a flag that says whether a frame holding it was destroyed.
struct Witness {
  explicit Witness(bool* d) : destroyed(d) {}
  Witness(const Witness&) = delete;
  Witness& operator=(const Witness&) = delete;
  ~Witness() { *destroyed = true; }
  bool* destroyed;
};

Task<void> HoldForever(Scheduler* s, std::shared_ptr<Witness> w) {
  for (;;) co_await s->Sleep(Duration::Seconds(1));
}

// Teardown hooks run once, after every task's frame is gone, so a hook
// that breaks a cycle sees no frame still using what it frees.
TEST(SchedulerTest, TeardownHooksRunAfterTheFramesAreDestroyed) {
  bool frame_gone = false;
  int hook_runs = 0;
  bool frame_gone_in_hook = false;
  {
    SchedulerOptions o;
    o.time_limit = Time() + Duration::Seconds(3);
    Scheduler s(o);
    s.Go("holder", HoldForever(&s, std::make_shared<Witness>(&frame_gone)));
    s.AtTeardown([&] {
      ++hook_runs;
      frame_gone_in_hook = frame_gone;
    });
    s.Run();
    EXPECT_FALSE(frame_gone);
    EXPECT_EQ(hook_runs, 0);
    s.DestroyTasks();
    EXPECT_EQ(hook_runs, 1);
  }  // the destructor calls DestroyTasks again: the hook is not run twice
  EXPECT_EQ(hook_runs, 1);
  EXPECT_TRUE(frame_gone_in_hook);
}

// A run with a ticking task ends at the simulated-time limit, never hangs.
TEST(SchedulerTest, TimeLimitEndsTheRun) {
  SchedulerOptions o;
  o.time_limit = Time() + Duration::Seconds(10);
  Scheduler s(o);
  s.Go("ticker", Forever(&s));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kTimeLimit);
  EXPECT_EQ(r.end_time, o.time_limit);
}

Task<void> Spinner(Scheduler* s, Chan<int>* c) {
  // Busy loop on a non-blocking select: never blocks.
  std::optional<int> v;
  for (;;) co_await SelectOrDefault(*s, RecvCase(c, &v));
}

// A task that spins on non-blocking operations ends at the step limit, even
// under FIFO, where it is never preempted.
TEST(SchedulerTest, StepLimitStopsASpinner) {
  SchedulerOptions o;
  o.step_limit = 1000;
  Scheduler s(o);
  Chan<int> c(s, "c");
  s.Go("spinner", Spinner(&s, &c));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kStepLimit);
  EXPECT_LE(r.steps, 1002u);
}

Task<void> StopAfter(Scheduler* s, Duration d) {
  co_await s->Sleep(d);
  s->Stop("harness done");
}

// Stop() ends the run with kStopped and its reason.
TEST(SchedulerTest, StopEndsTheRun) {
  Scheduler s({});
  s.Go("ticker", Forever(&s), {.daemon = true});
  s.Go("stopper", StopAfter(&s, Duration::Seconds(3)));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kStopped);
  EXPECT_EQ(r.detail, "harness done");
}

// A run whose only non-daemon task returns ends even if a daemon still ticks.
TEST(SchedulerTest, DaemonsDoNotKeepTheRunAlive) {
  Scheduler s({});
  s.Go("ticker", Forever(&s), {.daemon = true});
  std::vector<int> log;
  s.Go("main", Sleeper(&s, Duration::Seconds(2), &log, 1));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone);
  EXPECT_EQ(r.end_time, Time() + Duration::Seconds(2));
}

Task<void> Callbacker(Scheduler* s, std::vector<int>* log) {
  s->After(Duration::Millis(5), [log] { log->push_back(5); });
  const Scheduler::TimerId cancelled = s->After(Duration::Millis(6), [log] { log->push_back(6); });
  s->After(Duration::Millis(7), [log] { log->push_back(7); });
  EXPECT_TRUE(s->Cancel(cancelled));
  co_await s->Sleep(Duration::Millis(10));
}

// Callback timers fire at their time; cancelled ones never do.
TEST(SchedulerTest, CallbackTimersAndCancel) {
  Scheduler s({});
  std::vector<int> log;
  s.Go("main", Callbacker(&s, &log));
  EXPECT_EQ(s.Run().outcome, Outcome::kAllDone);
  EXPECT_EQ(log, (std::vector<int>{5, 7}));
}

// Policy names parse and unknown ones are rejected with a hint.
TEST(SchedulerTest, ParsePolicy) {
  EXPECT_EQ(*ParsePolicy("pct"), Policy::kPct);
  EXPECT_EQ(*ParsePolicy("fifo"), Policy::kFifo);
  EXPECT_FALSE(ParsePolicy("lifo").ok());
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

Task<void> SpinUntil(Scheduler* s, Chan<int>* closed, bool* flag) {
  // Spins on a select whose closed-channel case is always ready, until
  // another task sets the flag: it never blocks.
  std::optional<int> v;
  while (!*flag) co_await Select(*s, RecvCase(closed, &v));
}

Task<void> SetFlag(bool* flag) {
  *flag = true;
  co_return;
}

// Under FIFO, a task spinning without blocking is switched out after its
// time slice, so the task it waits for gets to run (Go's preemption).
TEST(SchedulerTest, TimeSliceLetsOthersRunPastASpinner) {
  SchedulerOptions o;
  o.time_slice_ops = 100;
  Scheduler s(o);
  Chan<int> c(s, "c");
  c.Close();
  bool flag = false;
  s.Go("spinner", SpinUntil(&s, &c, &flag));
  s.Go("setter", SetFlag(&flag));
  const RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone);
  EXPECT_LT(r.steps, 300u);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

// Under PCT too: the spinner is switched out after its time slice and
// loses its priority, so the task it waits for runs, for every seed (PCT
// used to re-pick the spinner, which has the highest priority, forever).
TEST(SchedulerTest, TimeSliceLetsOthersRunPastASpinnerUnderPct) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE(seed);
    SchedulerOptions o;
    o.policy = Policy::kPct;
    o.pct_depth = 1;  // no change points: only the time slice can help
    o.seed = seed;
    o.time_slice_ops = 100;
    o.step_limit = 100000;
    Scheduler s(o);
    Chan<int> c(s, "c");
    c.Close();
    bool flag = false;
    s.Go("spinner", SpinUntil(&s, &c, &flag));
    s.Go("setter", SetFlag(&flag));
    EXPECT_EQ(s.Run().outcome, Outcome::kAllDone);
  }
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

Task<void> SetFlagAfter(Scheduler* s, bool* flag, Duration d) {
  co_await s->Sleep(d);
  *flag = true;
}

// A task spinning alone while another sleeps does not freeze virtual time:
// at the end of each time slice it is parked for a spin quantum, time moves
// on, and the sleeper wakes and releases it (in Go, time passes while a
// goroutine spins). Under every policy.
TEST(SchedulerTest, SpinnerAloneLetsTimePass) {
  for (Policy policy : {Policy::kFifo, Policy::kRandom, Policy::kPct}) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    SchedulerOptions o;
    o.policy = policy;
    o.time_slice_ops = 100;
    o.step_limit = 1000000;
    Scheduler s(o);
    Chan<int> c(s, "c");
    c.Close();
    bool flag = false;
    s.Go("spinner", SpinUntil(&s, &c, &flag));
    s.Go("sleeper", SetFlagAfter(&s, &flag, Duration::Millis(1)));
    const RunResult r = s.Run();
    EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
    EXPECT_GE(r.end_time, Time() + Duration::Millis(1));
  }
}

// A scripted outside world: each blocking Tick returns the next time of the
// script and, at the given call, sends a value to a waiting task.
class ScriptedOutside final : public Outside {
 public:
  ScriptedOutside(std::vector<Time> times, size_t deliver_at_call)
      : times_(std::move(times)), deliver_at_(deliver_at_call) {}
  Time Tick(Time now, Time deadline, bool block) override {
    if (!block) return now;
    deadlines.push_back(deadline);
    const size_t call = calls_++;
    if (call == deliver_at_) {
      EXPECT_TRUE(inbox->TrySend(7));
    }
    return call < times_.size() ? times_[call] : times_.back();
  }
  ChanPtr<int> inbox;
  std::vector<Time> deadlines;

 private:
  std::vector<Time> times_;
  size_t deliver_at_;
  size_t calls_ = 0;
};

Task<void> WaitForOutside(Scheduler* s, ChanPtr<int> inbox, std::vector<int>* log) {
  std::optional<int> v = co_await inbox->Recv();
  log->push_back(v.value_or(-1));
  log->push_back(static_cast<int>(s->now().nanos() / 1000000));
  co_await s->Sleep(Duration::Millis(5));
  log->push_back(static_cast<int>(s->now().nanos() / 1000000));
}

// With an Outside, time is what it says: a sleeper's timer fires once the
// outside time reaches it (not by jumping), a task blocked on a channel is
// not a deadlock while the outside may still send, and the Outside is told
// the next deadline to wait for.
TEST(SchedulerTest, OutsideOwnsTheClockAndWakesTasks) {
  auto ms = [](int64_t m) { return Time() + Duration::Millis(m); };
  // Calls: 0 -> 2 ms (nothing), 1 -> 3 ms and the value arrives, 2 -> 4 ms
  // (the 5 ms sleep is not due), 3 -> 9 ms (it is).
  ScriptedOutside outside({ms(2), ms(3), ms(4), ms(9), ms(100)}, 1);
  SchedulerOptions o;
  o.time_limit = ms(100);
  o.outside = &outside;
  Scheduler s(o);
  outside.inbox = MakeChan<int>(s, "outside", 1);
  std::vector<int> log;
  s.Go("waiter", WaitForOutside(&s, outside.inbox, &log));
  RunResult r = s.Run();
  // The waiter got 7 at 3 ms and slept until the first time >= 8 ms.
  EXPECT_EQ(log, (std::vector<int>{7, 3, 9}));
  EXPECT_EQ(r.outcome, Outcome::kAllDone);
  ASSERT_EQ(outside.deadlines.size(), 4u);
  EXPECT_EQ(outside.deadlines[0], ms(100));  // no timer yet: the time limit
  EXPECT_EQ(outside.deadlines[2], ms(8));    // the sleep's end
}

// A task that waits for what never comes is not a deadlock with an Outside:
// the run ends at the time limit.
TEST(SchedulerTest, OutsideRunEndsAtTheTimeLimitNotAsADeadlock) {
  auto ms = [](int64_t m) { return Time() + Duration::Millis(m); };
  ScriptedOutside outside({ms(10), ms(50), ms(200)}, 99);
  SchedulerOptions o;
  o.time_limit = ms(60);
  o.outside = &outside;
  Scheduler s(o);
  outside.inbox = MakeChan<int>(s, "outside", 1);
  std::vector<int> log;
  s.Go("waiter", WaitForOutside(&s, outside.inbox, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kTimeLimit);
  EXPECT_EQ(r.end_time, ms(60));
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace sim
