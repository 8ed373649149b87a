// Tests of WaitGroup, Mutex, Cond, Timer, After and Yield against what a Go
// programmer expects from package sync, package time and runtime.Gosched,
// and of the run's determinism.
//
// Behaviour that must not depend on the schedule is checked under every
// policy and several seeds (ForEachSchedule). Goroutine bodies are free
// functions taking their arguments by value (task.h's lifetime rule); the
// primitives and logs they touch live on the test's stack, which outlives
// the run.
#include "sim/core/sync.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"

namespace sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

using Log = std::vector<std::string>;

constexpr Policy kAllPolicies[] = {Policy::kFifo, Policy::kRandom, Policy::kPct, Policy::kGo};
constexpr uint64_t kSeedsPerPolicy = 12;

SchedulerOptions Options(Policy policy, uint64_t seed) {
  SchedulerOptions o;
  o.policy = policy;
  o.seed = seed;
  return o;
}

// Runs `check` once per policy and seed, for behaviour that every schedule
// must show. Stops at the first failing schedule so its trace is the one read.
void ForEachSchedule(void (*check)(const SchedulerOptions&), uint64_t seeds = kSeedsPerPolicy) {
  for (Policy policy : kAllPolicies) {
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE(absl::StrCat("policy=", std::string(PolicyName(policy)), " seed=", seed));
      check(Options(policy, seed));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Appends "what@<virtual ms>", so a log shows both order and virtual time.
void Note(Scheduler* s, Log* log, std::string_view what) {
  log->push_back(absl::StrCat(std::string(what), "@", (s->now() - Time()).millis(), "ms"));
}

// The position of `entry` in `log`, or -1.
int IndexOf(const Log& log, std::string_view entry) {
  for (size_t i = 0; i < log.size(); ++i) {
    if (log[i] == entry) return static_cast<int>(i);
  }
  return -1;
}

Duration Ms(int64_t n) { return Duration::Millis(n); }

// A received time as "<ms>", or "nullopt".
std::string ShowTime(const std::optional<Time>& t) {
  return t.has_value() ? absl::StrCat((*t - Time()).millis()) : "nullopt";
}

// ---------------------------------------------------------------------------
// WaitGroup.

Task<void> WorkThenDone(Scheduler* s, WaitGroup* wg, Duration d, Log* log) {
  co_await s->Sleep(d);
  Note(s, log, "done");
  wg->Done();
}

Task<void> WaitThenNote(Scheduler* s, WaitGroup* wg, Log* log, std::string tag) {
  co_await wg->Wait();
  Note(s, log, tag);
}

void CheckWaitGroupWaitsForAll(const SchedulerOptions& o) {
  Scheduler s(o);
  WaitGroup wg(s, "wg");
  Log log;
  wg.Add(3);
  s.Go("waiter1", WaitThenNote(&s, &wg, &log, "waited1"));
  s.Go("waiter2", WaitThenNote(&s, &wg, &log, "waited2"));
  for (int i = 1; i <= 3; ++i) {
    s.Go(absl::StrCat("worker", i), WorkThenDone(&s, &wg, Ms(i), &log));
  }
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  ASSERT_EQ(log.size(), 5u);
  EXPECT_THAT(Log(log.begin(), log.begin() + 3), ElementsAre("done@1ms", "done@2ms", "done@3ms"));
  EXPECT_THAT(Log(log.begin() + 3, log.end()), UnorderedElementsAre("waited1@3ms", "waited2@3ms"));
  EXPECT_EQ(wg.count(), 0);
}

// WaitGroup.Wait returns, in every waiter, once every Add has been matched
// by a Done, not before.
TEST(SyncTest, WaitGroupWaitReturnsAfterAllDone) { ForEachSchedule(CheckWaitGroupWaitsForAll); }

Task<void> AddDoneThenWait(Scheduler* s, WaitGroup* wg, Log* log) {
  co_await wg->Wait();
  Note(s, log, "first");
  wg->Add(2);
  wg->Done();
  wg->Done();
  co_await wg->Wait();
  Note(s, log, "second");
}

void CheckWaitGroupZeroDoesNotBlock(const SchedulerOptions& o) {
  Scheduler s(o);
  WaitGroup wg(s, "wg");
  Log log;
  s.Go("main", AddDoneThenWait(&s, &wg, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("first@0ms", "second@0ms"));
  EXPECT_EQ(r.end_time, Time());
}

// WaitGroup.Wait with a zero counter (never used, or back to zero) returns
// at once.
TEST(SyncTest, WaitGroupWaitWithZeroCountReturnsAtOnce) {
  ForEachSchedule(CheckWaitGroupZeroDoesNotBlock);
}

Task<void> DoneTooOften(Scheduler* s, WaitGroup* wg, Log* log) {
  wg->Add(1);
  wg->Done();
  wg->Done();
  co_await wg->Wait();
  Note(s, log, "after-wait");
}

void CheckNegativeCounterCrashes(const SchedulerOptions& o) {
  Scheduler s(o);
  WaitGroup wg(s, "wg");
  Log log;
  s.Go("worker", DoneTooOften(&s, &wg, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("sync: negative WaitGroup counter"));
  EXPECT_THAT(r.detail, HasSubstr("'worker'"));
  EXPECT_TRUE(log.empty());
}

// A WaitGroup counter going negative crashes the program, and the goroutine
// goes no further than its next synchronization.
TEST(SyncTest, WaitGroupNegativeCounterCrashes) { ForEachSchedule(CheckNegativeCounterCrashes); }

// ---------------------------------------------------------------------------
// Mutex.

struct Section {
  int inside = 0;
  int inside_max = 0;
  int entries = 0;
};

// Enters a critical section `rounds` times, yielding inside it; with
// `use_lock` false it skips the mutex (the canary).
Task<void> EnterSection(Scheduler* s, Mutex* mu, Section* sec, int rounds, bool use_lock) {
  for (int i = 0; i < rounds; ++i) {
    if (use_lock) co_await mu->Lock();
    ++sec->inside;
    ++sec->entries;
    if (sec->inside > sec->inside_max) sec->inside_max = sec->inside;
    co_await s->Yield();
    // Also a synchronization point (a select polling nothing): PCT switches
    // tasks only at those, never at a Yield (see YieldSpinWaitEndsUnderPct).
    co_await SelectOrDefault(*s);
    --sec->inside;
    if (use_lock) mu->Unlock();
    co_await s->Yield();
  }
}

constexpr int kSectionWorkers = 4;
constexpr int kSectionRounds = 5;

Section RunSections(SchedulerOptions o, bool use_lock) {
  // PCT spreads its priority change points over pct_steps; at the default
  // (20000) they would all fall after this short program ends, and PCT would
  // run the tasks one after the other.
  o.pct_steps = 200;
  Scheduler s(o);
  Mutex mu(s, "mu");
  Section sec;
  for (int w = 0; w < kSectionWorkers; ++w) {
    s.Go(absl::StrCat("w", w), EnterSection(&s, &mu, &sec, kSectionRounds, use_lock));
  }
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_FALSE(mu.locked());
  return sec;
}

void CheckMutualExclusion(const SchedulerOptions& o) {
  const Section sec = RunSections(o, /*use_lock=*/true);
  EXPECT_EQ(sec.inside_max, 1);
  EXPECT_EQ(sec.entries, kSectionWorkers * kSectionRounds);
}

// A critical section that yields inside never interleaves with another
// holder of the mutex, under any policy and seed.
TEST(SyncTest, MutexExcludesOtherHoldersAcrossYields) {
  ForEachSchedule(CheckMutualExclusion, /*seeds=*/100);
}

// Canary for the test above: without the mutex the same sections do overlap
// (under every policy, for some seed), so the check can fail.
TEST(SyncTest, SectionsOverlapWithoutTheMutex) {
  for (Policy policy : kAllPolicies) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    int overlapping_seeds = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      if (RunSections(Options(policy, seed), /*use_lock=*/false).inside_max > 1) {
        ++overlapping_seeds;
      }
    }
    EXPECT_GT(overlapping_seeds, 0);
  }
}

Task<void> UnlockUnlocked(Scheduler* s, Mutex* mu, Log* log) {
  mu->Unlock();
  co_await mu->Lock();
  Note(s, log, "locked");
}

void CheckUnlockOfUnlockedCrashes(const SchedulerOptions& o) {
  Scheduler s(o);
  Mutex mu(s, "mu");
  Log log;
  s.Go("main", UnlockUnlocked(&s, &mu, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("sync: unlock of unlocked mutex"));
  EXPECT_TRUE(log.empty());
}

// Unlocking an unlocked mutex crashes the program.
TEST(SyncTest, MutexUnlockOfUnlockedCrashes) { ForEachSchedule(CheckUnlockOfUnlockedCrashes); }

Task<void> HoldThenRelease(Scheduler* s, Mutex* mu, Log* log) {
  co_await mu->Lock();
  co_await s->Sleep(Ms(10));
  mu->Unlock();
  // Ownership went to the first waiter: the releaser cannot take it back.
  Note(s, log, absl::StrCat("relock=", mu->TryLock()));
}

Task<void> LockAfter(Scheduler* s, Mutex* mu, Duration d, std::string tag, Log* log) {
  co_await s->Sleep(d);
  co_await mu->Lock();
  Note(s, log, tag);
  mu->Unlock();
}

void CheckFifoHandOff(const SchedulerOptions& o) {
  Scheduler s(o);
  Mutex mu(s, "mu");
  Log log;
  s.Go("holder", HoldThenRelease(&s, &mu, &log));
  // Spawned in the reverse of their arrival order, so spawn order cannot
  // pass for queue order.
  s.Go("w3", LockAfter(&s, &mu, Ms(3), "w3", &log));
  s.Go("w2", LockAfter(&s, &mu, Ms(2), "w2", &log));
  s.Go("w1", LockAfter(&s, &mu, Ms(1), "w1", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "relock=0@10ms"), 0);
  EXPECT_LT(IndexOf(log, "w1@10ms"), IndexOf(log, "w2@10ms"));
  EXPECT_LT(IndexOf(log, "w2@10ms"), IndexOf(log, "w3@10ms"));
  EXPECT_GE(IndexOf(log, "w1@10ms"), 0);
  EXPECT_FALSE(mu.locked());
}

// Unlock hands the mutex to the longest waiter: waiters get it in the order
// they arrived, and the releaser cannot barge back in.
TEST(SyncTest, MutexHandsOffToWaitersInFifoOrder) { ForEachSchedule(CheckFifoHandOff); }

Task<void> LockTwo(Scheduler* s, Mutex* first, Mutex* second) {
  co_await first->Lock();
  co_await s->Sleep(Ms(1));
  co_await second->Lock();
  second->Unlock();
  first->Unlock();
}

void CheckLockOrderDeadlock(const SchedulerOptions& o) {
  Scheduler s(o);
  Mutex a(s, "a");
  Mutex b(s, "b");
  s.Go("ab", LockTwo(&s, &a, &b));
  s.Go("ba", LockTwo(&s, &b, &a));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_THAT(r.detail, HasSubstr("'ab': Mutex.Lock on 'b'"));
  EXPECT_THAT(r.detail, HasSubstr("'ba': Mutex.Lock on 'a'"));
}

// Two goroutines taking two mutexes in opposite orders deadlock, and the
// report says which lock each waits for.
TEST(SyncTest, LockOrderInversionIsADeadlock) { ForEachSchedule(CheckLockOrderDeadlock); }

// ---------------------------------------------------------------------------
// Cond.

struct Pool {
  explicit Pool(Scheduler& s) : mu(s, "pool.mu"), cond(mu, "pool.cond") {}
  Mutex mu;
  Cond cond;
  int items = 0;
  int wakeups = 0;
  bool ready = false;
};

// for p.items == 0 { p.cond.Wait() }; p.items--
Task<void> TakeItem(Scheduler* s, Pool* p, Log* log) {
  co_await p->mu.Lock();
  while (p->items == 0) {
    co_await p->cond.Wait();
    ++p->wakeups;
  }
  --p->items;
  Note(s, log, "took");
  p->mu.Unlock();
}

Task<void> SignalThenBroadcast(Scheduler* s, Pool* p, Log* log) {
  co_await s->Sleep(Ms(1));
  co_await p->mu.Lock();
  p->items = 1;
  p->cond.Signal();
  p->mu.Unlock();
  co_await s->Sleep(Ms(1));
  Note(s, log, absl::StrCat("wakeups=", p->wakeups));
  co_await p->mu.Lock();
  p->items += 2;
  p->cond.Broadcast();
  p->mu.Unlock();
}

void CheckCondSignalAndBroadcast(const SchedulerOptions& o) {
  Scheduler s(o);
  Pool p(s);
  Log log;
  for (int i = 0; i < 3; ++i) s.Go(absl::StrCat("taker", i), TakeItem(&s, &p, &log));
  s.Go("producer", SignalThenBroadcast(&s, &p, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // Signal woke exactly one waiter; Broadcast woke the other two.
  EXPECT_THAT(log, ElementsAre("took@1ms", "wakeups=1@2ms", "took@2ms", "took@2ms"));
  EXPECT_EQ(p.wakeups, 3);
  EXPECT_EQ(p.items, 0);
}

// Cond.Signal wakes one waiter and Cond.Broadcast all of them; each
// re-checks its predicate with the mutex held.
TEST(SyncTest, CondSignalWakesOneAndBroadcastWakesAll) {
  ForEachSchedule(CheckCondSignalAndBroadcast);
}

// for !p.ready { p.cond.Wait() }
Task<void> AwaitReady(Scheduler* s, Pool* p, Log* log) {
  co_await p->mu.Lock();
  while (!p->ready) {
    co_await p->cond.Wait();
    ++p->wakeups;
  }
  Note(s, log, "go");
  p->mu.Unlock();
}

Task<void> BroadcastTwice(Scheduler* s, Pool* p) {
  co_await s->Sleep(Ms(5));
  co_await p->mu.Lock();
  p->cond.Broadcast();  // the predicate still fails: everyone waits again
  p->mu.Unlock();
  co_await s->Sleep(Ms(5));
  co_await p->mu.Lock();
  p->ready = true;
  p->cond.Broadcast();
  p->mu.Unlock();
}

void CheckCondPredicateLoop(const SchedulerOptions& o) {
  Scheduler s(o);
  Pool p(s);
  Log log;
  for (int i = 0; i < 3; ++i) s.Go(absl::StrCat("waiter", i), AwaitReady(&s, &p, &log));
  s.Go("setter", BroadcastTwice(&s, &p));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("go@10ms", "go@10ms", "go@10ms"));
  EXPECT_EQ(p.wakeups, 6);
}

// Waiters in a predicate loop go back to waiting when woken while the
// predicate is false, and all proceed once it holds.
TEST(SyncTest, CondWaitInAPredicateLoop) { ForEachSchedule(CheckCondPredicateLoop); }

Task<void> SignalEarlyThenLate(Scheduler* s, Pool* p) {
  co_await p->mu.Lock();
  p->cond.Signal();  // nobody waits yet: the signal is lost, as in Go
  p->ready = true;
  p->mu.Unlock();
  co_await s->Sleep(Ms(5));
  co_await p->mu.Lock();
  p->cond.Signal();
  p->mu.Unlock();
}

Task<void> WaitOnceAfter(Scheduler* s, Pool* p, Duration d, Log* log) {
  co_await s->Sleep(d);
  co_await p->mu.Lock();
  co_await p->cond.Wait();  // no predicate: shows which Signal woke it
  Note(s, log, "woken");
  p->mu.Unlock();
}

void CheckSignalIsNotRemembered(const SchedulerOptions& o) {
  Scheduler s(o);
  Pool p(s);
  Log log;
  s.Go("signaller", SignalEarlyThenLate(&s, &p));
  s.Go("waiter", WaitOnceAfter(&s, &p, Ms(1), &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("woken@5ms"));
}

// A Signal with no waiter is lost: a later Wait blocks until the next one.
TEST(SyncTest, CondSignalWithoutWaiterIsNotRemembered) {
  ForEachSchedule(CheckSignalIsNotRemembered);
}

Task<void> WaitWithoutLock(Scheduler* s, Pool* p, Log* log) {
  co_await p->cond.Wait();
  Note(s, log, "woken");
}

// Cond.Wait without holding the mutex crashes the modelled program as Go
// does (its Unlock is "sync: unlock of unlocked mutex"); it is a bug in the
// program, not in prodsim.
TEST(SyncTest, CondWaitWithoutTheLockCrashes) {
  Scheduler s({});
  Pool p(s);
  Log log;
  s.Go("main", WaitWithoutLock(&s, &p, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("unlock of unlocked mutex"));
  EXPECT_TRUE(log.empty());
}

// ---------------------------------------------------------------------------
// Timer and After.

Task<void> RecvTimer(Scheduler* s, Timer* t, Log* log) {
  std::optional<Time> v = co_await t->C()->Recv();
  Note(s, log, absl::StrCat("fired ", ShowTime(v)));
}

void CheckTimerFires(const SchedulerOptions& o) {
  Scheduler s(o);
  Timer t(s, "t", Ms(10));
  Log log;
  s.Go("main", RecvTimer(&s, &t, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // The value received is the fire time, as in Go.
  EXPECT_THAT(log, ElementsAre("fired 10@10ms"));
}

// A timer delivers its fire time on C() once its duration has passed.
TEST(SyncTest, TimerFiresAtItsTime) { ForEachSchedule(CheckTimerFires); }

Task<void> StopBeforeFire(Scheduler* s, Timer* t, Log* log) {
  co_await s->Sleep(Ms(5));
  Note(s, log, absl::StrCat("stop=", t->Stop()));
  co_await s->Sleep(Ms(20));
  std::optional<Time> v;
  Note(s, log, absl::StrCat("tryrecv=", t->C()->TryRecv(&v)));
}

void CheckStopBeforeFire(const SchedulerOptions& o) {
  Scheduler s(o);
  Timer t(s, "t", Ms(10));
  Log log;
  s.Go("main", StopBeforeFire(&s, &t, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("stop=1@5ms", "tryrecv=0@25ms"));
  EXPECT_EQ(t.C()->size(), 0u);
}

// Stop before the timer fires returns true, and nothing is ever delivered.
TEST(SyncTest, TimerStopBeforeFireDeliversNothing) { ForEachSchedule(CheckStopBeforeFire); }

Task<void> StopAfterFire(Scheduler* s, Timer* t, Log* log) {
  co_await s->Sleep(Ms(15));
  Note(s, log, absl::StrCat("stop=", t->Stop(), " size=", t->C()->size()));
  std::optional<Time> v = co_await t->C()->Recv();
  Note(s, log, absl::StrCat("got ", ShowTime(v)));
}

void CheckStopAfterFire(const SchedulerOptions& o) {
  Scheduler s(o);
  Timer t(s, "t", Ms(10));
  Log log;
  s.Go("main", StopAfterFire(&s, &t, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("stop=0 size=1@15ms", "got 10@15ms"));
}

// Stop after the timer fired returns false and leaves the fired value in C()
// (pre-Go-1.23 semantics, which Sarama's era relies on).
TEST(SyncTest, TimerStopAfterFireKeepsTheValue) { ForEachSchedule(CheckStopAfterFire); }

Task<void> ResetTwice(Scheduler* s, Timer* t, Log* log) {
  co_await s->Sleep(Ms(5));
  Note(s, log, absl::StrCat("reset=", t->Reset(Ms(10))));
  std::optional<Time> v = co_await t->C()->Recv();
  Note(s, log, absl::StrCat("got ", ShowTime(v)));
  Note(s, log, absl::StrCat("reset=", t->Reset(Ms(5))));
  v = co_await t->C()->Recv();
  Note(s, log, absl::StrCat("got ", ShowTime(v)));
}

void CheckReset(const SchedulerOptions& o) {
  Scheduler s(o);
  Timer t(s, "t", Ms(10));
  Log log;
  s.Go("main", ResetTwice(&s, &t, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // Reset while pending moves the fire time (10ms never fires); Reset after
  // a fire arms the timer again.
  EXPECT_THAT(log, ElementsAre("reset=1@5ms", "got 15@15ms", "reset=0@15ms", "got 20@20ms"));
}

// Reset re-arms a timer for its new duration from now, whether it was
// pending (returns true) or had fired (returns false).
TEST(SyncTest, TimerResetReArms) { ForEachSchedule(CheckReset); }

Task<void> ResetWithoutDrain(Scheduler* s, Timer* t, Log* log) {
  co_await s->Sleep(Ms(15));
  Note(s, log, absl::StrCat("reset=", t->Reset(Ms(5))));
  co_await s->Sleep(Ms(10));
  std::optional<Time> v = co_await t->C()->Recv();
  Note(s, log, absl::StrCat("got ", ShowTime(v)));
  Note(s, log, absl::StrCat("tryrecv=", t->C()->TryRecv(&v)));
}

void CheckResetWithoutDrain(const SchedulerOptions& o) {
  Scheduler s(o);
  Timer t(s, "t", Ms(10));
  Log log;
  s.Go("main", ResetWithoutDrain(&s, &t, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // The stale 10ms value is read; the 20ms fire found C() full and was lost.
  EXPECT_THAT(log, ElementsAre("reset=0@15ms", "got 10@25ms", "tryrecv=0@25ms"));
}

// Reset does not drain C(): a value fired before it is still read after it,
// and the re-armed fire is dropped while C() is full (pre-Go-1.23).
TEST(SyncTest, TimerResetDoesNotDrainTheChannel) { ForEachSchedule(CheckResetWithoutDrain); }

Task<void> AwaitAfter(Scheduler* s, Log* log) {
  ChanPtr<Time> c = After(*s, Ms(7));
  std::optional<Time> v = co_await c->Recv();
  Note(s, log, absl::StrCat("after ", ShowTime(v)));
}

Task<void> SelectWithTimeout(Scheduler* s, Chan<int>* data, Log* log) {
  std::optional<int> v;
  std::optional<Time> t;
  ChanPtr<Time> timeout = After(*s, Ms(5));
  const int i = co_await Select(*s, RecvCase(data, &v), RecvCase(timeout, &t));
  Note(s, log, absl::StrCat("case", i, " ", ShowTime(t)));
}

void CheckAfter(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> data(s, "data");
  Log log;
  s.Go("sleeper", AwaitAfter(&s, &log));
  s.Go("selector", SelectWithTimeout(&s, &data, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("case1 5@5ms", "after 7@7ms"));
}

// sim::After delivers the time once, d from now, also as a select timeout.
TEST(SyncTest, AfterDeliversOnceAfterTheDuration) { ForEachSchedule(CheckAfter); }

// ---------------------------------------------------------------------------
// Yield.

Task<void> YieldBetween(Scheduler* s, Log* log) {
  log->push_back("a1");
  co_await s->Yield();
  log->push_back("a2");
}

Task<void> Once(Log* log) {
  log->push_back("b1");
  co_return;  // a coroutine, like every goroutine body
}

// Under FIFO, Yield lets the other runnable task run before continuing.
TEST(SyncTest, YieldRunsAnotherTaskFirstUnderFifo) {
  Scheduler s({});
  Log log;
  s.Go("a", YieldBetween(&s, &log));
  s.Go("b", Once(&log));
  EXPECT_EQ(s.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("a1", "b1", "a2"));
}

// for !*flag { runtime.Gosched() }
Task<void> SpinUntil(Scheduler* s, const bool* flag, int* spins) {
  while (!*flag) {
    ++*spins;
    co_await s->Yield();
  }
}

Task<void> SetFlag(bool* flag) {
  *flag = true;
  co_return;  // a coroutine, like every goroutine body
}

// Runs the spin-wait under o; a step limit far above what it needs keeps a
// livelock short.
void CheckSpinWaitEnds(SchedulerOptions o) {
  o.step_limit = 100000;
  Scheduler s(o);
  bool flag = false;
  int spins = 0;
  s.Go("spinner", SpinUntil(&s, &flag, &spins));
  s.Go("setter", SetFlag(&flag));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_TRUE(flag);
}

// A loop that yields until another task sets a flag ends under the FIFO and
// random policies: Yield lets the other task run.
TEST(SyncTest, YieldSpinWaitEnds) {
  for (Policy policy : {Policy::kFifo, Policy::kRandom}) {
    for (uint64_t seed = 1; seed <= kSeedsPerPolicy; ++seed) {
      SCOPED_TRACE(absl::StrCat("policy=", std::string(PolicyName(policy)), " seed=", seed));
      CheckSpinWaitEnds(Options(policy, seed));
    }
  }
}

// The same spin-wait ends under PCT too: runtime.Gosched always lets other
// goroutines run, whatever the priorities.
TEST(SyncTest, YieldSpinWaitEndsUnderPct) {
  for (uint64_t seed = 1; seed <= kSeedsPerPolicy; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    CheckSpinWaitEnds(Options(Policy::kPct, seed));
    if (HasFailure()) return;
  }
}

// ---------------------------------------------------------------------------
// Determinism.

Task<void> Producer(Scheduler* s, Chan<int>* out, WaitGroup* wg, int id) {
  for (int i = 0; i < 5; ++i) {
    int v = id * 100 + i;
    ChanPtr<Time> timeout = After(*s, Ms(2));
    std::optional<Time> t;
    co_await Select(*s, SendCase(out, &v), RecvCase(timeout, &t));
  }
  wg->Done();
}

Task<void> Consumer(Scheduler* s, Chan<int>* in, Mutex* mu, int* sum) {
  for (;;) {
    std::optional<int> v = co_await in->Recv();
    if (!v.has_value()) co_return;
    co_await mu->Lock();
    *sum += *v;
    co_await s->Sleep(Ms(1));
    mu->Unlock();
  }
}

Task<void> CloseWhenDone(WaitGroup* wg, Chan<int>* c) {
  co_await wg->Wait();
  c->Close();
}

// The small program for the determinism tests: three producers with
// timeouts, two consumers sharing a mutex.
RunResult RunSmallProgram(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "work", 1);
  WaitGroup wg(s, "producers");
  Mutex mu(s, "sum");
  int sum = 0;
  wg.Add(3);
  for (int p = 1; p <= 3; ++p) {
    s.Go(absl::StrCat("producer", p), Producer(&s, &c, &wg, p));
  }
  s.Go("consumer1", Consumer(&s, &c, &mu, &sum));
  s.Go("consumer2", Consumer(&s, &c, &mu, &sum));
  s.Go("closer", CloseWhenDone(&wg, &c));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  return r;
}

// The same program, policy and seed give the same run: digest, steps and
// end time.
TEST(SyncTest, SameSeedGivesTheSameDigest) {
  for (Policy policy : kAllPolicies) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    const RunResult first = RunSmallProgram(Options(policy, 42));
    const RunResult second = RunSmallProgram(Options(policy, 42));
    EXPECT_EQ(first.digest, second.digest);
    EXPECT_EQ(first.steps, second.steps);
    EXPECT_EQ(first.end_time, second.end_time);
  }
}

// Recording the trace changes nothing in the run: the digest is the same
// with and without it.
TEST(SyncTest, DigestDoesNotDependOnRecording) {
  for (Policy policy : kAllPolicies) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    SchedulerOptions o = Options(policy, 7);
    const RunResult plain = RunSmallProgram(o);
    o.record_trace = true;
    const RunResult recorded = RunSmallProgram(o);
    EXPECT_EQ(plain.digest, recorded.digest);
    EXPECT_EQ(plain.steps, recorded.steps);
  }
}

// Different seeds usually give different runs under the random policy, so
// the digest does tell schedules apart.
TEST(SyncTest, DifferentSeedsUsuallyGiveDifferentDigests) {
  std::set<uint64_t> digests;
  constexpr uint64_t kSeeds = 20;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    digests.insert(RunSmallProgram(Options(Policy::kRandom, seed)).digest);
  }
  EXPECT_GE(digests.size(), 15u);
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

Task<void> Reader(Scheduler* s, RWMutex* mu, int* inside, int* max_inside,
                  std::vector<std::string>* log, std::string name) {
  co_await mu->RLock();
  ++*inside;
  *max_inside = std::max(*max_inside, *inside);
  log->push_back(name + "+");
  co_await s->Sleep(Duration::Millis(10));
  --*inside;
  log->push_back(name + "-");
  mu->RUnlock();
}

Task<void> Writer(Scheduler* s, RWMutex* mu, int* inside, std::vector<std::string>* log,
                  Duration delay) {
  co_await s->Sleep(delay);
  co_await mu->Lock();
  EXPECT_EQ(*inside, 0);
  log->push_back("W+");
  co_await s->Sleep(Duration::Millis(10));
  log->push_back("W-");
  mu->Unlock();
}

// RWMutex: readers share the lock; a waiting writer blocks later readers,
// so the writer runs between the first readers and the late one (Go's rule).
TEST(RWMutexTest, ReadersShareAndWaitingWriterBlocksNewReaders) {
  Scheduler s({});
  RWMutex mu(s, "mu");
  int inside = 0, max_inside = 0;
  std::vector<std::string> log;
  s.Go("r1", Reader(&s, &mu, &inside, &max_inside, &log, "r1"));
  s.Go("r2", Reader(&s, &mu, &inside, &max_inside, &log, "r2"));
  s.Go("w", Writer(&s, &mu, &inside, &log, Duration::Millis(1)));
  s.Go("r3",
       [](Scheduler* sp, RWMutex* m, int* in, int* mx, std::vector<std::string>* l) -> Task<void> {
         co_await sp->Sleep(Duration::Millis(2));
         co_await Reader(sp, m, in, mx, l, "r3");
       }(&s, &mu, &inside, &max_inside, &log));
  EXPECT_EQ(s.Run().outcome, Outcome::kAllDone);
  EXPECT_EQ(max_inside, 2);
  EXPECT_EQ(log, (std::vector<std::string>{"r1+", "r2+", "r1-", "r2-", "W+", "W-", "r3+", "r3-"}));
}

Task<void> BadRUnlock(RWMutex* mu) {
  mu->RUnlock();
  co_return;
}

// RUnlock without a read lock crashes the modelled program.
TEST(RWMutexTest, RUnlockOfUnlockedCrashes) {
  Scheduler s({});
  RWMutex mu(s, "mu");
  s.Go("bad", BadRUnlock(&mu));
  EXPECT_EQ(s.Run().outcome, Outcome::kProgramCrash);
}

}  // namespace
}  // namespace sim
