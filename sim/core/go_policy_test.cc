// The go policy, rule by rule: each test fails if its rule is taken out of
// Scheduler (the rule's name in runtime/proc.go is in the test's comment).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"

namespace sim {
namespace {

SchedulerOptions GoOptions(uint32_t procs, uint64_t seed = 1) {
  SchedulerOptions o;
  o.policy = Policy::kGo;
  o.gomaxprocs = procs;
  o.seed = seed;
  o.time_limit = Time() + Duration::Seconds(10);
  return o;
}

using Log = std::vector<std::string>;

Task<void> Note(Log* log, std::string what) {
  log->push_back(std::move(what));
  co_return;
}

Task<void> RecvThenNote(Chan<int>* ch, Log* log, std::string name) {
  std::optional<int> v = co_await ch->Recv();
  (void)v;
  log->push_back(name);
}

Task<void> Park(Chan<int>* never) {
  std::optional<int> v = co_await never->Recv();
  (void)v;
}

// ready(gp, next=true): a goroutine made ready by a channel operation runs
// next on the waker's P, before a goroutine that was queued earlier.
Task<void> WakeThenBlock(Chan<int>* wake, Chan<int>* never, Log* log) {
  co_await wake->Send(1);
  log->push_back("waker blocks");
  std::optional<int> v = co_await never->Recv();
  (void)v;
}

TEST(GoPolicyTest, ChannelWakeRunsNextOnTheWakersP) {
  Scheduler s(GoOptions(1));
  Chan<int> wake(s, "wake"), never(s, "never");
  Log log;
  s.Go("woken", RecvThenNote(&wake, &log, "woken"));
  s.Go("waker", WakeThenBlock(&wake, &never, &log));
  s.Go("queued", Note(&log, "queued"));
  s.Run();
  EXPECT_EQ(log, (Log{"waker blocks", "woken", "queued"}));
}

// runqput(next=true) kicks the old runnext to the tail of the local queue:
// of two goroutines woken in a row, the second runs first.
Task<void> WakeTwoThenBlock(Chan<int>* a, Chan<int>* b, Chan<int>* never) {
  co_await a->Send(1);
  co_await b->Send(1);
  std::optional<int> v = co_await never->Recv();
  (void)v;
}

TEST(GoPolicyTest, ASecondWakeKicksTheFirstToTheLocalQueue) {
  Scheduler s(GoOptions(1));
  Chan<int> a(s, "a"), b(s, "b"), never(s, "never");
  Log log;
  s.Go("first", RecvThenNote(&a, &log, "first"));
  s.Go("second", RecvThenNote(&b, &log, "second"));
  s.Go("waker", WakeTwoThenBlock(&a, &b, &never));
  s.Go("queued", Note(&log, "queued"));
  s.Run();
  // The world's goroutines went to the global queue; globrunqget moved
  // "queued" to the local queue before "first" was kicked behind it.
  EXPECT_EQ(log, (Log{"second", "queued", "first"}));
}

// newproc: runqput(pp, newg, true): a new goroutine runs next.
Task<void> SpawnThenBlock(Scheduler* s, Chan<int>* never, Log* log) {
  s->Go("child", Note(log, "child"));
  log->push_back("parent blocks");
  std::optional<int> v = co_await never->Recv();
  (void)v;
}

TEST(GoPolicyTest, ANewGoroutineRunsNext) {
  Scheduler s(GoOptions(1));
  Chan<int> never(s, "never");
  Log log;
  s.Go("parent", SpawnThenBlock(&s, &never, &log));
  s.Go("queued", Note(&log, "queued"));
  s.Run();
  EXPECT_EQ(log, (Log{"parent blocks", "child", "queued"}));
}

// A goroutine keeps its P at channel operations that do not block: the
// receiver it wakes runs only when it blocks.
Task<void> SendMany(Chan<int>* ch, int n, Log* log) {
  for (int i = 0; i < n; ++i) {
    co_await ch->Send(i);
    log->push_back("sent");
  }
}

Task<void> RecvMany(Chan<int>* ch, int n, Log* log) {
  for (int i = 0; i < n; ++i) {
    std::optional<int> v = co_await ch->Recv();
    (void)v;
    log->push_back("received");
  }
}

TEST(GoPolicyTest, AGoroutineRunsUntilItBlocks) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scheduler s(GoOptions(1, seed));
    Chan<int> ch(s, "ch", 10);
    Log log;
    s.Go("receiver", RecvMany(&ch, 10, &log));
    s.Go("sender", SendMany(&ch, 10, &log));
    s.Run();
    Log want(10, "sent");
    want.insert(want.end(), 10, "received");
    EXPECT_EQ(log, want) << "seed " << seed;
  }
}

// execute(gp, inheritTime): goroutines that hand off to each other through
// runnext share one time slice, so a third one is not starved: sysmon
// preempts the pair when the slice is spent (to the global queue).
Task<void> PingPong(Chan<int>* in, Chan<int>* out, bool send_first, bool* stop, int* rounds) {
  while (!*stop) {
    if (send_first) co_await out->Send(1);
    std::optional<int> v = co_await in->Recv();
    (void)v;
    if (!send_first) co_await out->Send(1);
    ++*rounds;
  }
}

Task<void> SetFlag(bool* flag) {
  *flag = true;
  co_return;
}

TEST(GoPolicyTest, AHandoffChainSharesOneTimeSlice) {
  SchedulerOptions o = GoOptions(1);
  o.time_slice_ops = 50;
  o.step_limit = 100000;
  Scheduler s(o);
  Chan<int> ab(s, "ab"), ba(s, "ba");
  bool stop = false;
  int rounds = 0;
  s.Go("ping", PingPong(&ba, &ab, true, &stop, &rounds));
  s.Go("pong", PingPong(&ab, &ba, false, &stop, &rounds));
  s.Go("third", SetFlag(&stop));
  s.Run();
  EXPECT_TRUE(stop);
  EXPECT_LT(rounds, 200);
}

// schedule: every 61st schedtick the global queue goes first, so a long
// local queue cannot hold off a goroutine in the global queue
// (runtime.Gosched put it there: goschedImpl -> globrunqput).
Task<void> YieldThenNote(Scheduler* s, Log* log) {
  co_await s->Yield();
  log->push_back("yielder");
}

Task<void> SpawnMany(Scheduler* s, Chan<int>* never, Log* log, int n) {
  s->Go("yielder", YieldThenNote(s, log));
  for (int i = 0; i < n; ++i) s->Go("w", Note(log, "w"));
  std::optional<int> v = co_await never->Recv();
  (void)v;
}

TEST(GoPolicyTest, TheGlobalQueueGoesFirstEvery61Ticks) {
  Scheduler s(GoOptions(1));
  Chan<int> never(s, "never");
  Log log;
  s.Go("spawner", SpawnMany(&s, &never, &log, 200));
  s.Run();
  ASSERT_EQ(log.size(), 201u);
  size_t at = 0;
  while (log[at] != "yielder") ++at;
  EXPECT_LT(at, 70u);
  EXPECT_GT(at, 50u);
}

// stealWork/runqsteal: an idle P steals half of a running P's local queue
// while the owner goroutine still runs; runqgrab leaves a running P's
// runnext alone until it has waited 3 us, which with no CPU cost never
// happens before the owner blocks.
Task<void> SpawnThreeThenSpin(Scheduler* s, Chan<int>* ch, Log* log) {
  s->Go("b", Note(log, "b"));
  s->Go("c", Note(log, "c"));
  s->Go("d", Note(log, "d"));
  for (int i = 0; i < 40; ++i) co_await ch->Send(i);  // buffered: never blocks
  log->push_back("a done");
}

TEST(GoPolicyTest, AnIdlePStealsTheLocalQueueButNotRunnext) {
  int stolen_early = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scheduler s(GoOptions(2, seed));
    Chan<int> ch(s, "ch", 100);
    Log log;
    s.Go("a", SpawnThreeThenSpin(&s, &ch, &log));
    s.Run();
    ASSERT_EQ(log.size(), 4u);
    size_t done = 0, d = 0;
    for (size_t i = 0; i < log.size(); ++i) {
      if (log[i] == "a done") done = i;
      if (log[i] == "d") d = i;
    }
    EXPECT_GT(d, done) << "seed " << seed << ": runnext stolen";
    stolen_early += done > 0 ? 1 : 0;
  }
  EXPECT_GT(stolen_early, 10);  // b or c ran on the other P while a ran
}

// With CPU cost the owner runs long enough that the idle P takes runnext.
TEST(GoPolicyTest, RunnextIsStolenFromAPThatRunsOn) {
  SchedulerOptions o = GoOptions(2);
  o.cpu.sync_op = Duration::Micros(1);
  Scheduler s(o);
  Chan<int> ch(s, "ch", 100);
  Log log;
  s.Go("a", SpawnThreeThenSpin(&s, &ch, &log));
  s.Run();
  ASSERT_EQ(log.back(), "a done");
}

// GOMAXPROCS=1: one P, so no goroutine runs beside another: the same
// program gives the same order whatever the seed. With two Ps, the seeds
// interleave the Ps' goroutines differently.
Task<void> Count(Chan<int>* ch, Log* log, std::string name) {
  for (int i = 0; i < 5; ++i) {
    co_await ch->Send(i);
    log->push_back(name);
  }
}

// The distinct logs run(seed) gives over seeds 1..seeds, in the order first
// seen.
template <typename Run>
std::vector<Log> DistinctOrders(uint64_t seeds, Run run) {
  std::vector<Log> orders;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    Log log = run(seed);
    if (std::find(orders.begin(), orders.end(), log) == orders.end()) {
      orders.push_back(std::move(log));
    }
  }
  return orders;
}

TEST(GoPolicyTest, PsInterleaveAndOnePDoesNot) {
  for (uint32_t procs : {1u, 2u}) {
    const std::vector<Log> orders = DistinctOrders(10, [procs](uint64_t seed) {
      Scheduler s(GoOptions(procs, seed));
      Chan<int> a(s, "a", 10), b(s, "b", 10);
      Log log;
      s.Go("x", Count(&a, &log, "x"));
      s.Go("y", Count(&b, &log, "y"));
      s.Run();
      return log;
    });
    if (procs == 1) {
      EXPECT_EQ(orders.size(), 1u);
    } else {
      EXPECT_GT(orders.size(), 3u);
    }
  }
}

// CPU cost: a step's cost is time on its P. Two goroutines that each spend
// 1 ms take 1 ms on two Ps and 2 ms on one.
Task<void> Burn(Scheduler* s) {
  s->Spend(Duration::Millis(1));
  co_await s->Yield();
}

TEST(GoPolicyTest, CpuCostIsTimeOnTheP) {
  for (uint32_t procs : {1u, 2u}) {
    Scheduler s(GoOptions(procs));
    s.Go("one", Burn(&s));
    s.Go("two", Burn(&s));
    const RunResult r = s.Run();
    EXPECT_EQ(r.outcome, Outcome::kAllDone);
    EXPECT_EQ(r.end_time, Time() + Duration::Millis(procs == 1 ? 2 : 1)) << procs << " Ps";
  }
}

// Spend under any other policy does nothing: time stands still there.
TEST(GoPolicyTest, CpuCostOnlyUnderGo) {
  SchedulerOptions o;
  o.policy = Policy::kRandom;
  Scheduler s(o);
  s.Go("one", Burn(&s));
  EXPECT_EQ(s.Run().end_time, Time());
}

// The perturbation preempts at synchronization points; without it the
// rules alone decide and every seed on one P gives one order.
TEST(GoPolicyTest, PerturbationPreempts) {
  const std::vector<Log> orders = DistinctOrders(20, [](uint64_t seed) {
    SchedulerOptions o = GoOptions(1, seed);
    o.perturb_per_mille = 300;
    Scheduler s(o);
    Chan<int> ch(s, "ch", 10);
    Log log;
    s.Go("receiver", RecvMany(&ch, 10, &log));
    s.Go("sender", SendMany(&ch, 10, &log));
    s.Run();
    return log;
  });
  EXPECT_GT(orders.size(), 3u);
}

// The tape steers the go policy's draws: two tapes, two interleavings.
TEST(GoPolicyTest, TheTapeSteersThePChoice) {
  std::vector<Log> orders;
  std::string alternating;
  for (int i = 0; i < 64; ++i) alternating.push_back(static_cast<char>(i % 2));
  for (const std::string& tape : {std::string(64, '\0'), alternating}) {
    SchedulerOptions o = GoOptions(2);
    o.tape = tape;
    Scheduler s(o);
    Chan<int> a(s, "a", 10), b(s, "b", 10);
    Log log;
    s.Go("x", Count(&a, &log, "x"));
    s.Go("y", Count(&b, &log, "y"));
    s.Run();
    orders.push_back(log);
  }
  EXPECT_NE(orders[0], orders[1]);
}

// A deadlock is still one: every goroutine blocked, no P busy, no timer.
TEST(GoPolicyTest, DeadlockIsReported) {
  Scheduler s(GoOptions(2));
  Chan<int> never(s, "never");
  s.Go("stuck", Park(&never));
  EXPECT_EQ(s.Run().outcome, Outcome::kDeadlock);
}

// A world goroutine (the cluster, a fault) runs on a machine of its own:
// while a program goroutine that does not block holds the only P, the
// world goroutine still runs, at different points of it by seed.
TEST(GoPolicyTest, WorldGoroutinesRunBesideTheProgramsPs) {
  const std::vector<Log> orders = DistinctOrders(10, [](uint64_t seed) {
    Scheduler s(GoOptions(1, seed));
    Chan<int> ch(s, "ch", 100);
    Log log;
    s.Go("busy", SendMany(&ch, 20, &log));
    s.Go("world", Note(&log, "world"), {.world = true});
    s.Run();
    return log;
  });
  EXPECT_GE(orders.size(), 2u);  // not only before or after it
}

// netpoll: a sleep that ends while the whole program is idle is seen at the
// next whole millisecond after the program went idle (netpoll_epoll.go waits
// whole ms); an outside event (a network read) wakes the poller sooner; and
// a program that is busy elsewhere sees its timers on time.
Task<void> SleepAndStamp(Scheduler* s, Duration d, Time* woke) {
  co_await s->Sleep(d);
  *woke = s->now();
}

TEST(GoPolicyTest, AnIdleProgramSeesItsTimersAtNetpollsMillisecond) {
  Scheduler s(GoOptions(1));
  Time woke;
  s.Go("sleeper", SleepAndStamp(&s, Duration::Micros(40), &woke));
  s.Run();
  EXPECT_EQ(woke, Time() + Duration::Millis(1));
}

Task<void> WorldSendsAt(Scheduler* s, Duration d, Chan<int>* ch) {
  co_await s->Sleep(d);
  co_await ch->Send(1);
}

TEST(GoPolicyTest, AnOutsideEventWakesNetpollEarly) {
  Scheduler s(GoOptions(1));
  Chan<int> ch(s, "ch", 1);
  Time woke;
  Log log;
  s.Go("sleeper", SleepAndStamp(&s, Duration::Micros(40), &woke));
  s.Go("reader", RecvThenNote(&ch, &log, "read"));
  s.Go("network", WorldSendsAt(&s, Duration::Micros(300), &ch), {.world = true});
  s.Run();
  EXPECT_EQ(woke, Time() + Duration::Micros(300));
}

Task<void> BurnLong(Scheduler* s) {
  s->Spend(Duration::Millis(2));
  co_await s->Yield();
}

TEST(GoPolicyTest, ABusyProgramSeesItsTimersOnTime) {
  Scheduler s(GoOptions(2));
  Time woke;
  s.Go("sleeper", SleepAndStamp(&s, Duration::Micros(40), &woke));
  s.Go("busy", BurnLong(&s));
  s.Run();
  EXPECT_EQ(woke, Time() + Duration::Micros(40));
}

}  // namespace
}  // namespace sim
