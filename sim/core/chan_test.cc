// Tests of Chan<T> and select against what a Go programmer expects from the
// language specification and the runtime (chan.go, select.go).
//
// Behaviour that must not depend on the schedule is checked under every
// policy and several seeds (ForEachSchedule). Goroutine bodies are free
// functions taking their arguments by value (task.h's lifetime rule); the
// channels, logs and results they touch live on the test's stack, which
// outlives the run.
#include "sim/core/chan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/core/scheduler.h"

namespace sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using Log = std::vector<std::string>;

constexpr Policy kAllPolicies[] = {Policy::kFifo, Policy::kRandom, Policy::kPct, Policy::kGo};
constexpr uint64_t kSeedsPerPolicy = 12;

// Runs `check` once per policy and seed, for behaviour that every schedule
// must show. Stops at the first failing schedule so its trace is the one read.
void ForEachSchedule(void (*check)(const SchedulerOptions&)) {
  for (Policy policy : kAllPolicies) {
    for (uint64_t seed = 1; seed <= kSeedsPerPolicy; ++seed) {
      SCOPED_TRACE(absl::StrCat("policy=", std::string(PolicyName(policy)), " seed=", seed));
      SchedulerOptions o;
      o.policy = policy;
      o.seed = seed;
      check(o);
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

std::string Show(const std::optional<int>& v) {
  return v.has_value() ? absl::StrCat(*v) : std::string("nullopt");
}

Duration Ms(int64_t n) { return Duration::Millis(n); }

Task<void> SleepIfPositive(Scheduler* s, Duration d) {
  if (d > Duration()) co_await s->Sleep(d);
}

// ---------------------------------------------------------------------------
// Goroutine bodies shared by several tests.

// After `delay`, sends `v` on c, noting "send<v>" before and "sent<v>" after.
Task<void> SendAfter(Scheduler* s, Chan<int>* c, Duration delay, int v, Log* log) {
  co_await SleepIfPositive(s, delay);
  Note(s, log, absl::StrCat("send", v));
  co_await c->Send(v);
  Note(s, log, absl::StrCat("sent", v));
}

// After `delay`, receives once from c, noting "<tag>-wait" before and
// "<tag>-got<value or nullopt>" after.
Task<void> RecvAfter(Scheduler* s, Chan<int>* c, Duration delay, std::string tag, Log* log) {
  co_await SleepIfPositive(s, delay);
  Note(s, log, absl::StrCat(tag, "-wait"));
  std::optional<int> v = co_await c->Recv();
  Note(s, log, absl::StrCat(tag, "-got", Show(v)));
}

// Sends first..last in order, noting "sent<i>" after each.
Task<void> SendRange(Scheduler* s, Chan<int>* c, int first, int last, Log* log) {
  for (int i = first; i <= last; ++i) {
    co_await c->Send(i);
    Note(s, log, absl::StrCat("sent", i));
  }
}

// After `delay`, receives n times, appending what arrives (-1 for closed).
Task<void> RecvN(Scheduler* s, Chan<int>* c, Duration delay, int n, std::vector<int>* got) {
  co_await SleepIfPositive(s, delay);
  for (int i = 0; i < n; ++i) {
    std::optional<int> v = co_await c->Recv();
    got->push_back(v.value_or(-1));
  }
}

// After `delay`, closes c and notes "closed".
Task<void> CloseAfter(Scheduler* s, Chan<int>* c, Duration delay, Log* log) {
  co_await SleepIfPositive(s, delay);
  c->Close();
  Note(s, log, "closed");
}

// ---------------------------------------------------------------------------
// Unbuffered channels.

void CheckUnbufferedSendWaitsForReceiver(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("sender", SendAfter(&s, &c, Duration(), 7, &log));
  s.Go("receiver", RecvAfter(&s, &c, Ms(10), "r", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "send7@0ms"), 0);
  EXPECT_GE(IndexOf(log, "r-wait@10ms"), 0);
  EXPECT_GE(IndexOf(log, "r-got7@10ms"), 0);
  // The send completes only at 10ms, after the receiver arrived.
  EXPECT_GT(IndexOf(log, "sent7@10ms"), IndexOf(log, "r-wait@10ms"));
}

// An unbuffered send blocks until a receiver takes the value.
TEST(ChanTest, UnbufferedSendWaitsForReceiver) {
  ForEachSchedule(CheckUnbufferedSendWaitsForReceiver);
}

void CheckUnbufferedRecvWaitsForSender(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("receiver", RecvAfter(&s, &c, Duration(), "r", &log));
  s.Go("sender", SendAfter(&s, &c, Ms(10), 7, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "r-wait@0ms"), 0);
  EXPECT_GE(IndexOf(log, "sent7@10ms"), 0);
  EXPECT_GT(IndexOf(log, "r-got7@10ms"), IndexOf(log, "send7@10ms"));
}

// An unbuffered receive blocks until a sender arrives, then gets its value.
TEST(ChanTest, UnbufferedRecvWaitsForSender) { ForEachSchedule(CheckUnbufferedRecvWaitsForSender); }

// ---------------------------------------------------------------------------
// Buffered channels.

void CheckBufferedFifo(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c", 5);
  Log log;
  std::vector<int> got;
  s.Go("producer", SendRange(&s, &c, 1, 5, &log));
  s.Go("consumer", RecvN(&s, &c, Ms(1), 5, &got));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // Five sends fit the buffer: none waits for the consumer.
  EXPECT_THAT(log, ElementsAre("sent1@0ms", "sent2@0ms", "sent3@0ms", "sent4@0ms", "sent5@0ms"));
  EXPECT_THAT(got, ElementsAre(1, 2, 3, 4, 5));
}

// A buffered channel delivers values in the order they were sent, and sends
// within its capacity do not block.
TEST(ChanTest, BufferedChannelIsFifo) { ForEachSchedule(CheckBufferedFifo); }

void CheckBufferedBlocksWhenFull(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c", 2);
  Log log;
  std::vector<int> got;
  s.Go("producer", SendRange(&s, &c, 1, 3, &log));
  s.Go("consumer", RecvN(&s, &c, Ms(10), 3, &got));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // The third send waits for room, made by the first receive at 10ms.
  EXPECT_THAT(log, ElementsAre("sent1@0ms", "sent2@0ms", "sent3@10ms"));
  EXPECT_THAT(got, ElementsAre(1, 2, 3));
  EXPECT_EQ(c.size(), 0u);
}

// A send on a full buffered channel blocks until a receive makes room, and
// the blocked value takes its place at the back of the queue.
TEST(ChanTest, BufferedSendBlocksWhenFullUntilRecv) {
  ForEachSchedule(CheckBufferedBlocksWhenFull);
}

// ---------------------------------------------------------------------------
// Close.

Task<void> SendTwoThenClose(Chan<int>* c) {
  co_await c->Send(1);
  co_await c->Send(2);
  c->Close();
}

void CheckCloseDrainsBufferFirst(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c", 3);
  std::vector<int> got;
  s.Go("producer", SendTwoThenClose(&c));
  s.Go("consumer", RecvN(&s, &c, Ms(1), 4, &got));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(got, ElementsAre(1, 2, -1, -1));
  EXPECT_TRUE(c.closed());
}

// Values buffered before close are still delivered; after them every receive
// returns at once with nullopt (Go's ok == false).
TEST(ChanTest, CloseDeliversBufferedValuesThenNullopt) {
  ForEachSchedule(CheckCloseDrainsBufferFirst);
}

void CheckCloseWakesReceivers(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("r1", RecvAfter(&s, &c, Duration(), "r1", &log));
  s.Go("r2", RecvAfter(&s, &c, Duration(), "r2", &log));
  s.Go("r3", RecvAfter(&s, &c, Duration(), "r3", &log));
  s.Go("closer", CloseAfter(&s, &c, Ms(5), &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "r1-gotnullopt@5ms"), 0);
  EXPECT_GE(IndexOf(log, "r2-gotnullopt@5ms"), 0);
  EXPECT_GE(IndexOf(log, "r3-gotnullopt@5ms"), 0);
}

// Close wakes every blocked receiver, each with nullopt.
TEST(ChanTest, CloseWakesAllBlockedReceivers) { ForEachSchedule(CheckCloseWakesReceivers); }

Task<void> CloseThenSend(Scheduler* s, Chan<int>* c, Log* log) {
  c->Close();
  Note(s, log, "closed");
  co_await c->Send(1);
  Note(s, log, "after-send");
}

void CheckSendOnClosedCrashes(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c", 1);
  Log log;
  s.Go("sender", CloseThenSend(&s, &c, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("send on closed channel"));
  EXPECT_THAT(r.detail, HasSubstr("'sender'"));
  // A panicking goroutine does not go on past the send.
  EXPECT_THAT(log, ElementsAre("closed@0ms"));
}

// Sending on a closed channel (even one with buffer room) crashes the
// program, and the sending goroutine does not continue.
TEST(ChanTest, SendOnClosedChannelCrashes) { ForEachSchedule(CheckSendOnClosedCrashes); }

Task<void> CloseTwice(Scheduler* s, Chan<int>* c, Log* log) {
  c->Close();
  Note(s, log, "closed");
  c->Close();
  // The kernel lets a panicking task run on to its next synchronization
  // point (scheduler.cc, Scheduler::Panic); there it stops, even though this
  // receive on a closed channel would complete at once.
  std::optional<int> v = co_await c->Recv();
  Note(s, log, absl::StrCat("after-next-op ", Show(v)));
}

void CheckCloseTwiceCrashes(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("closer", CloseTwice(&s, &c, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("close of closed channel c"));
  EXPECT_THAT(r.detail, HasSubstr("'closer'"));
  EXPECT_EQ(IndexOf(log, "closed@0ms"), 0);
  EXPECT_EQ(IndexOf(log, "after-next-op nullopt@0ms"), -1);
}

// Closing a closed channel crashes the program, and the closing goroutine
// goes no further than its next channel operation.
TEST(ChanTest, CloseOfClosedChannelCrashes) { ForEachSchedule(CheckCloseTwiceCrashes); }

constexpr int kBlockedSendLine = __LINE__ + 3;
Task<void> SendBlocked(Chan<int>* c) {
  // Blocks (no receiver); the close below makes it panic here.
  co_await c->Send(1);
}

Task<void> CloseLater(Scheduler* s, Chan<int>* c) {
  co_await s->Sleep(Duration::Millis(1));
  c->Close();
}

// A panic's report names the goroutine that panicked and the model's line
// where it did: the close's for a close of a closed channel, the blocked
// send's (not the closer's) for a sender woken by a close.
TEST(ChanTest, PanicReportNamesTheGoroutineAndTheLine) {
  {
    Scheduler s({});
    Chan<int> c(s, "c");
    Log log;
    s.Go("closer", CloseTwice(&s, &c, &log));
    const RunResult r = s.Run();
    ASSERT_TRUE(r.panic.has_value());
    EXPECT_EQ(r.panic->message, "close of closed channel c");
    EXPECT_EQ(r.panic->goroutine_name, "closer");
    EXPECT_THAT(r.panic->file, HasSubstr("chan_test.cc"));
    EXPECT_GT(r.panic->line, 0);
  }
  {
    Scheduler s({});
    Chan<int> c(s, "c");
    s.Go("sender", SendBlocked(&c));
    s.Go("closer", CloseLater(&s, &c));
    const RunResult r = s.Run();
    ASSERT_TRUE(r.panic.has_value());
    EXPECT_EQ(r.panic->message, "send on closed channel c");
    EXPECT_EQ(r.panic->goroutine_name, "sender");
    EXPECT_THAT(r.panic->file, HasSubstr("chan_test.cc"));
    EXPECT_EQ(r.panic->line, kBlockedSendLine);
  }
}

Task<void> CloseBoth(Chan<int>* a, Chan<int>* b) {
  a->Close();
  b->Close();
  co_return;  // a coroutine, like every goroutine body
}

// A goroutine whose first close panics never reaches its second one: the
// run ends with one crash, reported for the first close. (Go's shutdown
// code often closes several channels in a row.)
TEST(ChanTest, OnlyTheFirstPanicIsReported) {
  Scheduler s({});
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  a.Close();
  b.Close();
  s.Go("shutdown", CloseBoth(&a, &b));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("close of closed channel a"));
  EXPECT_THAT(r.detail, Not(HasSubstr("channel b")));
}

void CloseTwiceInCallback(Chan<int>* c) {
  c->Close();
  c->Close();
}

// Closing a closed channel from a timer callback (the runtime's side, as
// time.AfterFunc) crashes the program with Go's message.
TEST(ChanTest, CloseOfClosedChannelInCallbackCrashes) {
  Scheduler s({});
  Chan<int> c(s, "c");
  Log log;
  s.After(Ms(1), [&c] { CloseTwiceInCallback(&c); });
  s.Go("main", RecvAfter(&s, &c, Ms(5), "r", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("close of closed channel c"));
  EXPECT_EQ(r.end_time, Time() + Ms(1));
  EXPECT_TRUE(log.empty());
}

void CheckBlockedSenderCrashesOnClose(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("sender", SendAfter(&s, &c, Duration(), 1, &log));
  s.Go("closer", CloseAfter(&s, &c, Ms(5), &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("send on closed channel c"));
  EXPECT_EQ(r.end_time, Time() + Ms(5));
  EXPECT_EQ(IndexOf(log, "sent1@5ms"), -1);
}

// A sender blocked on a channel that gets closed crashes the program (Go's
// chansend panics when closechan wakes it).
TEST(ChanTest, BlockedSenderCrashesWhenChannelCloses) {
  ForEachSchedule(CheckBlockedSenderCrashesOnClose);
}

void CheckBlockedSenderIsBlamed(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Log log;
  s.Go("sender", SendAfter(&s, &c, Duration(), 1, &log));
  s.Go("closer", CloseAfter(&s, &c, Ms(5), &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("'sender'"));
  EXPECT_THAT(r.detail, Not(HasSubstr("'closer'")));
}

// The crash of a sender blocked on a channel that gets closed is reported in
// the sender's goroutine, where Go's chansend panics; the closer goes on.
TEST(ChanTest, BlockedSenderCrashIsReportedInTheSender) {
  ForEachSchedule(CheckBlockedSenderIsBlamed);
}

// ---------------------------------------------------------------------------
// Select.

Task<void> SelectTwoRecvs(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  std::optional<int> va;
  std::optional<int> vb;
  const int i = co_await Select(*s, RecvCase(a, &va), RecvCase(b, &vb));
  Note(s, log, absl::StrCat("case", i, " a=", Show(va), " b=", Show(vb)));
}

void CheckSelectPicksReadyCase(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b", 1);
  ASSERT_TRUE(b.TrySend(9));
  Log log;
  s.Go("selector", SelectTwoRecvs(&s, &a, &b, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // a's case did not fire: its std::optional stays empty.
  EXPECT_THAT(log, ElementsAre("case1 a=nullopt b=9@0ms"));
}

// A select with exactly one ready case takes it at once.
TEST(ChanTest, SelectPicksTheReadyCase) { ForEachSchedule(CheckSelectPicksReadyCase); }

Task<void> SelectThreeReady(Scheduler* s, Chan<int>* a, Chan<int>* b, Chan<int>* c, int* chosen) {
  std::optional<int> v;
  *chosen = co_await Select(*s, RecvCase(a, &v), RecvCase(b, &v), RecvCase(c, &v));
  EXPECT_EQ(v, *chosen);  // each channel holds its own index
}

// One run with three channels that are all ready; returns the chosen case.
int SelectAmongThreeReady(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a", 1);
  Chan<int> b(s, "b", 1);
  Chan<int> c(s, "c", 1);
  EXPECT_TRUE(a.TrySend(0));
  EXPECT_TRUE(b.TrySend(1));
  EXPECT_TRUE(c.TrySend(2));
  int chosen = -2;
  s.Go("selector", SelectThreeReady(&s, &a, &b, &c, &chosen));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  return chosen;
}

constexpr uint64_t kSpreadSeeds = 200;

// Across seeds, a select with several ready cases picks each of them about
// equally often (Go's uniform choice), under every policy.
TEST(ChanTest, SelectChoiceIsSpreadOverReadyCases) {
  for (Policy policy : kAllPolicies) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    int counts[3] = {0, 0, 0};
    for (uint64_t seed = 1; seed <= kSpreadSeeds; ++seed) {
      SchedulerOptions o;
      o.policy = policy;
      o.seed = seed;
      const int chosen = SelectAmongThreeReady(o);
      ASSERT_GE(chosen, 0);
      ASSERT_LE(chosen, 2);
      ++counts[chosen];
    }
    // Expected 66.7 each, sd 6.7: the bounds are four sd away.
    for (int count : counts) {
      EXPECT_GE(count, 40);
      EXPECT_LE(count, 93);
    }
  }
}

// For a fixed seed and policy, the select's choice is the same on every run.
TEST(ChanTest, SelectChoiceIsReproducibleForASeed) {
  for (Policy policy : kAllPolicies) {
    for (uint64_t seed = 1; seed <= 50; ++seed) {
      SCOPED_TRACE(absl::StrCat("policy=", std::string(PolicyName(policy)), " seed=", seed));
      SchedulerOptions o;
      o.policy = policy;
      o.seed = seed;
      const int first = SelectAmongThreeReady(o);
      EXPECT_EQ(SelectAmongThreeReady(o), first);
    }
  }
}

Task<void> SelectLoop(Scheduler* s, Chan<int>* a, Chan<int>* b, int n, int* from_a) {
  for (int i = 0; i < n; ++i) {
    std::optional<int> v;
    const int chosen = co_await Select(*s, RecvCase(a, &v), RecvCase(b, &v));
    if (chosen == 0) ++*from_a;
  }
}

void CheckSelectLoopIsFair(const SchedulerOptions& o) {
  constexpr int kRounds = 100;
  Scheduler s(o);
  Chan<int> a(s, "a", kRounds);
  Chan<int> b(s, "b", kRounds);
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(a.TrySend(i));
    ASSERT_TRUE(b.TrySend(i));
  }
  int from_a = 0;
  s.Go("selector", SelectLoop(&s, &a, &b, kRounds, &from_a));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // Expected 50, sd 5: four sd either side.
  EXPECT_GE(from_a, 30);
  EXPECT_LE(from_a, 70);
}

// Within one run, a select loop over two always-ready channels takes both
// about equally often: neither starves.
TEST(ChanTest, SelectLoopDoesNotStarveACase) { ForEachSchedule(CheckSelectLoopIsFair); }

Task<void> SelectWithNilCases(Scheduler* s, Chan<int>* b, Log* log) {
  Chan<int>* nil_chan = nullptr;
  std::optional<int> v_nil;
  std::optional<int> v_b;
  int x = 3;
  const int i =
      co_await Select(*s, RecvCase(nil_chan, &v_nil), RecvCase(b, &v_b), SendCase(nil_chan, &x));
  Note(s, log, absl::StrCat("case", i, " b=", Show(v_b), " nil=", Show(v_nil)));
  const int j = co_await SelectOrDefault(*s, RecvCase(nil_chan, &v_nil), SendCase(nil_chan, &x));
  Note(s, log, absl::StrCat("default=", j == SelectAwaiter::kDefault));
}

void CheckNilCaseNeverFires(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> b(s, "b");
  Log log;
  s.Go("selector", SelectWithNilCases(&s, &b, &log));
  s.Go("sender", SendAfter(&s, &b, Ms(5), 8, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // The select waits for b; nil cases neither fire nor count as ready.
  EXPECT_GE(IndexOf(log, "case1 b=8 nil=nullopt@5ms"), 0);
  EXPECT_GE(IndexOf(log, "default=1@5ms"), 0);
}

// A case on a nil channel never fires, neither in a blocking select nor in
// one with a default.
TEST(ChanTest, SelectNilCaseNeverFires) { ForEachSchedule(CheckNilCaseNeverFires); }

Task<void> PollTwice(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  std::optional<int> v;
  int x = 1;
  const int i = co_await SelectOrDefault(*s, RecvCase(a, &v), SendCase(b, &x));
  Note(s, log, absl::StrCat("first=", i));
  const int j = co_await SelectOrDefault(*s);
  Note(s, log, absl::StrCat("empty=", j));
  EXPECT_TRUE(a->TrySend(4));
  const int k = co_await SelectOrDefault(*s, RecvCase(a, &v), SendCase(b, &x));
  Note(s, log, absl::StrCat("third=", k, " v=", Show(v)));
}

void CheckSelectOrDefault(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a", 1);  // empty
  Chan<int> b(s, "b");     // unbuffered, no receiver
  Log log;
  s.Go("poller", PollTwice(&s, &a, &b, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("first=-1@0ms", "empty=-1@0ms", "third=0 v=4@0ms"));
  EXPECT_EQ(SelectAwaiter::kDefault, -1);
  EXPECT_EQ(r.end_time, Time());
}

// SelectOrDefault returns kDefault at once when no case is ready (also with
// no cases at all), and a ready case when there is one.
TEST(ChanTest, SelectOrDefaultDoesNotBlock) { ForEachSchedule(CheckSelectOrDefault); }

Task<void> FeedAThenB(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  co_await a->Send(1);
  // The selector's waiter on b belongs to a select that has fired: it must
  // not take this value.
  Note(s, log, absl::StrCat("trysend=", b->TrySend(41)));
  co_await b->Send(42);
  Note(s, log, "sent42");
}

void CheckNoStaleSelectWaiter(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  Log log;
  s.Go("selector", SelectTwoRecvs(&s, &a, &b, &log));
  s.Go("feeder", FeedAThenB(&s, &a, &b, &log));
  s.Go("drainer", RecvAfter(&s, &b, Ms(5), "d", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "case0 a=1 b=nullopt@0ms"), 0);
  EXPECT_GE(IndexOf(log, "trysend=0@0ms"), 0);
  EXPECT_GE(IndexOf(log, "sent42@5ms"), 0);
  EXPECT_GE(IndexOf(log, "d-got42@5ms"), 0);
}

// A select blocked on two channels is served by the first, and its waiter on
// the other channel is dead from then on: later sends there go to other
// receivers, none is lost.
TEST(ChanTest, BlockedSelectLeavesNoStaleWaiter) { ForEachSchedule(CheckNoStaleSelectWaiter); }

Task<void> FeedAThenBufferB(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  co_await a->Send(1);
  co_await b->Send(42);
  Note(s, log, absl::StrCat("sent42 size=", b->size()));
}

void CheckNoStaleWaiterBuffered(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b", 1);
  Log log;
  s.Go("selector", SelectTwoRecvs(&s, &a, &b, &log));
  s.Go("feeder", FeedAThenBufferB(&s, &a, &b, &log));
  s.Go("drainer", RecvAfter(&s, &b, Ms(5), "d", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "case0 a=1 b=nullopt@0ms"), 0);
  EXPECT_GE(IndexOf(log, "sent42 size=1@0ms"), 0);
  EXPECT_GE(IndexOf(log, "d-got42@5ms"), 0);
}

// After a select fired on another channel, a send on a buffered channel it
// also waited on goes into the buffer, not to the dead select waiter.
TEST(ChanTest, BlockedSelectLeavesNoStaleWaiterBuffered) {
  ForEachSchedule(CheckNoStaleWaiterBuffered);
}

Task<void> SelectRecvOrSendNote(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  std::optional<int> va;
  int x = 5;
  const int i = co_await Select(*s, RecvCase(a, &va), SendCase(b, &x));
  Note(s, log, absl::StrCat("case", i, " a=", Show(va)));
}

Task<void> SendThenClose(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  co_await a->Send(1);
  // The selector also waits to send on b, but its select has already fired.
  b->Close();
  Note(s, log, "closed-b");
}

void CheckFiredSelectIgnoresClose(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  Log log;
  s.Go("selector", SelectRecvOrSendNote(&s, &a, &b, &log));
  s.Go("feeder", SendThenClose(&s, &a, &b, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "case0 a=1@0ms"), 0);
  EXPECT_GE(IndexOf(log, "closed-b@0ms"), 0);
}

// Closing a channel on which a select had a send case does not crash once
// that select has fired on another case (Go's closechan skips its sudog).
TEST(ChanTest, CloseAfterSelectFiredElsewhereIsNoCrash) {
  ForEachSchedule(CheckFiredSelectIgnoresClose);
}

Task<void> SelectSendOnClosed(Scheduler* s, Chan<int>* a, Chan<int>* b, Log* log) {
  std::optional<int> va;
  int x = 5;
  co_await Select(*s, RecvCase(a, &va), SendCase(b, &x));
  Note(s, log, "after-select");
}

void CheckSelectSendOnClosedCrashes(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b", 1);
  b.Close();
  Log log;
  s.Go("selector", SelectSendOnClosed(&s, &a, &b, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kProgramCrash);
  EXPECT_THAT(r.detail, HasSubstr("send on closed channel b"));
  EXPECT_TRUE(log.empty());
}

// A select whose send case is on a closed channel takes that case, as ready,
// and crashes the program.
TEST(ChanTest, SelectSendCaseOnClosedChannelCrashes) {
  ForEachSchedule(CheckSelectSendOnClosedCrashes);
}

void CheckSelectSendCase(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  Log log;
  s.Go("selector", SelectRecvOrSendNote(&s, &a, &b, &log));
  s.Go("receiver", RecvAfter(&s, &b, Ms(3), "r", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "case1 a=nullopt@3ms"), 0);
  EXPECT_GE(IndexOf(log, "r-got5@3ms"), 0);
}

// A blocked select with a send case fires it when a receiver arrives, and the
// receiver gets the case's value.
TEST(ChanTest, SelectSendCaseFiresWhenReceiverArrives) { ForEachSchedule(CheckSelectSendCase); }

void CheckSelectOnClosedReady(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  a.Close();
  Log log;
  s.Go("selector", SelectTwoRecvs(&s, &a, &b, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("case0 a=nullopt b=nullopt@0ms"));
}

// A receive case on a closed channel is ready, and fires with nullopt.
TEST(ChanTest, SelectOnClosedChannelFiresWithNullopt) { ForEachSchedule(CheckSelectOnClosedReady); }

void CheckSelectWokenByClose(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> a(s, "a");
  Chan<int> b(s, "b");
  Log log;
  s.Go("selector", SelectTwoRecvs(&s, &a, &b, &log));
  s.Go("closer", CloseAfter(&s, &b, Ms(4), &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_GE(IndexOf(log, "case1 a=nullopt b=nullopt@4ms"), 0);
}

// A select blocked on receive cases is woken by a close of one of its
// channels, which fires that case with nullopt.
TEST(ChanTest, BlockedSelectIsWokenByClose) { ForEachSchedule(CheckSelectWokenByClose); }

Task<void> SelectForever(Scheduler* s, Log* log) {
  co_await Select(*s);
  Note(s, log, "unreachable");
}

Task<void> SelectOnNilOnly(Scheduler* s, Log* log) {
  Chan<int>* nil_chan = nullptr;
  std::optional<int> v;
  co_await Select(*s, RecvCase(nil_chan, &v));
  Note(s, log, "unreachable");
}

Task<void> Finishes(Scheduler* s, Log* log) {
  co_await s->Sleep(Ms(1));
  Note(s, log, "worker-done");
}

void CheckEmptySelectDeadlocks(const SchedulerOptions& o) {
  Scheduler s(o);
  Log log;
  s.Go("main", SelectForever(&s, &log));
  s.Go("nilmain", SelectOnNilOnly(&s, &log));
  s.Go("worker", Finishes(&s, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_THAT(r.detail, HasSubstr("all goroutines are asleep - deadlock!"));
  EXPECT_THAT(r.detail, HasSubstr("'main': select (no cases)"));
  EXPECT_THAT(r.detail, HasSubstr("'nilmain': select (no cases)"));
  EXPECT_THAT(log, ElementsAre("worker-done@1ms"));
}

// An empty select, and one whose cases are all nil, block forever (Go's
// `select {}`): once nothing else can run, the run ends in a deadlock.
TEST(ChanTest, EmptySelectBlocksForever) { ForEachSchedule(CheckEmptySelectDeadlocks); }

// ---------------------------------------------------------------------------
// Range, callbacks, deadlock, daemons.

Task<void> SendRangeThenClose(Chan<int>* c, int n) {
  for (int i = 1; i <= n; ++i) co_await c->Send(i);
  c->Close();
}

// for v := range c { ... }
Task<void> RangeOver(Scheduler* s, Chan<int>* c, std::vector<int>* got, Log* log) {
  for (;;) {
    std::optional<int> v = co_await c->Recv();
    if (!v.has_value()) break;
    got->push_back(*v);
  }
  Note(s, log, "range-done");
}

void CheckRangeUntilClose(const SchedulerOptions& o) {
  for (size_t capacity : {size_t{0}, size_t{3}}) {
    SCOPED_TRACE(absl::StrCat("capacity=", capacity));
    Scheduler s(o);
    Chan<int> c(s, "c", capacity);
    std::vector<int> got;
    Log log;
    s.Go("consumer", RangeOver(&s, &c, &got, &log));
    s.Go("producer", SendRangeThenClose(&c, 6));
    RunResult r = s.Run();
    EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
    EXPECT_THAT(got, ElementsAre(1, 2, 3, 4, 5, 6));
    EXPECT_THAT(log, ElementsAre("range-done@0ms"));
  }
}

// A range loop over a channel receives every value sent, in order, and ends
// when the channel is closed.
TEST(ChanTest, RangeLoopEndsAtClose) { ForEachSchedule(CheckRangeUntilClose); }

struct CallbackResults {
  bool sent_to_receiver = false;
  bool sent_without_receiver = true;
};

void CheckTrySendFromCallback(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c");
  Chan<int> lonely(s, "lonely");
  Log log;
  CallbackResults res;
  s.After(Ms(5), [&c, &lonely, &res] {
    res.sent_to_receiver = c.TrySend(7);
    res.sent_without_receiver = lonely.TrySend(8);
  });
  s.Go("receiver", RecvAfter(&s, &c, Duration(), "r", &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_TRUE(res.sent_to_receiver);
  // An unbuffered channel with no receiver cannot take a non-blocking send.
  EXPECT_FALSE(res.sent_without_receiver);
  EXPECT_THAT(log, ElementsAre("r-wait@0ms", "r-got7@5ms"));
}

// A timer callback's TrySend hands its value to a blocked receiver, and
// fails without blocking when nobody can take it.
TEST(ChanTest, TrySendFromTimerCallback) { ForEachSchedule(CheckTrySendFromCallback); }

Task<void> SendTwoAndWait(Scheduler* s, Chan<int>* c) {
  co_await c->Send(3);
  co_await c->Send(4);
  co_await s->Sleep(Ms(10));
}

struct TryRecvResults {
  std::vector<std::string> seen;
};

void TryRecvInto(Chan<int>* c, TryRecvResults* out) {
  std::optional<int> v;
  const bool ok = c->TryRecv(&v);
  out->seen.push_back(ok ? Show(v) : std::string("empty"));
}

void CheckTryRecvFromCallback(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "c", 2);
  TryRecvResults res;
  s.After(Ms(2), [&c, &res] {
    TryRecvInto(&c, &res);
    TryRecvInto(&c, &res);
    TryRecvInto(&c, &res);
  });
  s.After(Ms(3), [&c, &res] {
    c.Close();
    TryRecvInto(&c, &res);
  });
  s.Go("producer", SendTwoAndWait(&s, &c));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(res.seen, ElementsAre("3", "4", "empty", "nullopt"));
}

// A timer callback's TryRecv takes buffered values in order, reports an
// empty open channel without blocking, and a closed one as nullopt.
TEST(ChanTest, TryRecvFromTimerCallback) { ForEachSchedule(CheckTryRecvFromCallback); }

Task<void> RecvThenSend(Chan<int>* in, Chan<int>* out) {
  std::optional<int> v = co_await in->Recv();
  co_await out->Send(v.value_or(0) + 1);
}

void CheckMutualRecvDeadlock(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> to_ping(s, "to-ping");
  Chan<int> to_pong(s, "to-pong");
  s.Go("ping", RecvThenSend(&to_ping, &to_pong));
  s.Go("pong", RecvThenSend(&to_pong, &to_ping));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kDeadlock);
  EXPECT_THAT(r.detail, HasSubstr("all goroutines are asleep - deadlock!"));
  EXPECT_THAT(r.detail, HasSubstr("'ping': chan receive on 'to-ping'"));
  EXPECT_THAT(r.detail, HasSubstr("'pong': chan receive on 'to-pong'"));
}

// Two goroutines each waiting to receive from the other deadlock, and the
// report names both and what each waits on.
TEST(ChanTest, MutualReceiveIsADeadlock) { ForEachSchedule(CheckMutualRecvDeadlock); }

// A daemon that serves a channel forever.
Task<void> Server(Chan<int>* c, int* served) {
  for (;;) {
    std::optional<int> v = co_await c->Recv();
    if (!v.has_value()) co_return;
    ++*served;
  }
}

void CheckDaemonDoesNotKeepRunAlive(const SchedulerOptions& o) {
  Scheduler s(o);
  Chan<int> c(s, "requests");
  Log log;
  int served = 0;
  s.Go("server", Server(&c, &served), {.daemon = true});
  s.Go("client", SendRange(&s, &c, 1, 3, &log));
  RunResult r = s.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  EXPECT_THAT(log, ElementsAre("sent1@0ms", "sent2@0ms", "sent3@0ms"));
  EXPECT_GE(served, 2);  // the third may still be in the server's hands
}

// A daemon blocked on a channel forever does not keep the run alive, nor
// make it a deadlock, once every other goroutine has returned.
TEST(ChanTest, DaemonDoesNotKeepTheRunAlive) { ForEachSchedule(CheckDaemonDoesNotKeepRunAlive); }

}  // namespace
}  // namespace sim
