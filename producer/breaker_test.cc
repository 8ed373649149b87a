// Tests of the go-resiliency v1.4.0 circuit breaker model (breaker.cc) in
// virtual time: its state changes, its counting rules (expiry of errors, what
// a success does in each state, the fast path), the timer task, and
// Sarama's parameters.
#include "producer/breaker.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/core/scheduler.h"
#include "sim/core/task.h"
#include "sim/core/time.h"
#include "sim/kafka/types.h"

namespace sarama {
namespace {

using sim::Duration;
using sim::Scheduler;
using sim::Task;
using sim::Time;
using State = Breaker::State;

const Error kFail = Error::Kafka(kafka::ErrorCode::LEADER_NOT_AVAILABLE);

Time At(Duration d) { return Time() + d; }

// One call to Run: when it starts, how long its work blocks, what it returns.
struct Step {
  Time at;
  Duration work;
  Error result;
};

// What a step saw: Run's result, whether the work ran, the state and the
// error count after.
struct Seen {
  Error got;
  bool ran = false;
  State after = State::kClosed;
  int errors_after = 0;
};

Task<Error> Work(Scheduler* s, Duration d, Error result, bool* ran) {
  *ran = true;
  if (d > Duration()) co_await s->Sleep(d);
  co_return result;
}

// Runs the steps one after another on one task, each at its time.
Task<void> Script(Scheduler* s, Breaker* b, std::vector<Step> steps, std::vector<Seen>* seen) {
  for (const Step& step : steps) {
    if (s->now() < step.at) co_await s->Sleep(step.at - s->now());
    Seen out;
    bool* ran = &out.ran;
    const Duration d = step.work;
    const Error r = step.result;
    // A named function, not a lambda inside the co_await expression: gcc 12
    // destroys such a lambda's captures twice (see breaker.h).
    std::function<Task<Error>()> work = [s, d, r, ran] { return Work(s, d, r, ran); };
    out.got = co_await b->Run(std::move(work));
    out.after = b->state();
    out.errors_after = b->errors();
    seen->push_back(out);
  }
}

Task<Error> CountedWork(Scheduler* s, std::shared_ptr<int> calls, Error result) {
  ++*calls;
  co_await s->Sleep(Duration::Millis(1));
  co_return result;
}

// Calls Run(fn, args...) with a shared_ptr argument written inside the
// co_await expression, the form that dodges gcc 12's lambda-capture bug.
Task<void> RunWithArguments(Scheduler* s, Breaker* b, std::shared_ptr<int> calls,
                            std::vector<Error>* got) {
  got->push_back(co_await b->Run(&CountedWork, s, calls, kFail));
  got->push_back(co_await b->Run(&CountedWork, s, calls, kNoError));
  got->push_back(co_await b->Run(&CountedWork, s, std::make_shared<int>(0), kFail));
  got->push_back(co_await b->Run(&CountedWork, s, calls, kNoError));
}

// Records the state at each of the given times.
Task<void> Probe(Scheduler* s, const Breaker* b, std::vector<Time> times,
                 std::vector<State>* states) {
  for (const Time t : times) {
    if (s->now() < t) co_await s->Sleep(t - s->now());
    states->push_back(b->state());
  }
}

std::vector<Seen> RunScript(Breaker& b, Scheduler& s, std::vector<Step> steps) {
  std::vector<Seen> seen;
  s.Go("script", Script(&s, &b, std::move(steps), &seen));
  EXPECT_EQ(s.Run().outcome, sim::Outcome::kAllDone);
  return seen;
}

// Three errors within the timeout open the breaker, and then Run refuses
// without running the work.
TEST(BreakerTest, OpensAfterErrorThresholdAndRefuses) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  const std::vector<Seen> seen = RunScript(b, s,
                                           {{At(Duration::Seconds(0)), Duration(), kFail},
                                            {At(Duration::Seconds(1)), Duration(), kFail},
                                            {At(Duration::Seconds(2)), Duration(), kFail},
                                            {At(Duration::Seconds(3)), Duration(), kNoError}});
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].after, State::kClosed);
  EXPECT_EQ(seen[1].after, State::kClosed);
  EXPECT_EQ(seen[2].after, State::kOpen);
  EXPECT_EQ(seen[2].got, kFail);
  EXPECT_FALSE(seen[3].ran);
  EXPECT_EQ(seen[3].got, ErrBreakerOpen());
  EXPECT_EQ(seen[3].got.ToString(), "circuit breaker is open");
}

// Errors expire once strictly more than the timeout has passed since the
// last one: an error exactly one timeout later still counts.
TEST(BreakerTest, ErrorsExpireStrictlyAfterTimeoutSinceLastError) {
  {
    Scheduler s({});
    Breaker b = NewSaramaBreaker(&s);
    const std::vector<Seen> seen =
        RunScript(b, s,
                  {{At(Duration::Seconds(0)), Duration(), kFail},
                   {At(Duration::Seconds(5)), Duration(), kFail},
                   {At(Duration::Seconds(15) + Duration::Nanos(1)), Duration(), kFail}});
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[2].after, State::kClosed);
    EXPECT_EQ(b.errors(), 1);  // the first two expired; this one counts
  }
  {
    Scheduler s({});
    Breaker b = NewSaramaBreaker(&s);
    const std::vector<Seen> seen = RunScript(b, s,
                                             {{At(Duration::Seconds(0)), Duration(), kFail},
                                              {At(Duration::Seconds(5)), Duration(), kFail},
                                              {At(Duration::Seconds(15)), Duration(), kFail}});
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[2].after, State::kOpen);  // 15s is not After(5s + 10s)
  }
}

// A success in the closed state does not reset the error count: errors
// separated by successes still open the breaker.
TEST(BreakerTest, SuccessInClosedStateDoesNotResetErrors) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  const std::vector<Seen> seen = RunScript(b, s,
                                           {{At(Duration::Seconds(0)), Duration(), kFail},
                                            {At(Duration::Seconds(1)), Duration(), kNoError},
                                            {At(Duration::Seconds(2)), Duration(), kFail},
                                            {At(Duration::Seconds(3)), Duration(), kNoError},
                                            {At(Duration::Seconds(4)), Duration(), kFail}});
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[3].after, State::kClosed);
  EXPECT_EQ(b.errors(), 0);  // cleared by the change to open
  EXPECT_EQ(seen[4].after, State::kOpen);
}

// The breaker becomes half-open one timeout after it opened, and one
// success (Sarama's threshold) closes it again.
TEST(BreakerTest, HalfOpenAfterTimeoutThenSuccessCloses) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  std::vector<State> states;
  const Time opened = At(Duration::Seconds(2));
  s.Go("probe", Probe(&s, &b,
                      {opened + (Duration::Seconds(10) - Duration::Nanos(1)),
                       opened + Duration::Seconds(10) + Duration::Nanos(1)},
                      &states));
  const std::vector<Seen> seen =
      RunScript(b, s,
                {{At(Duration::Seconds(0)), Duration(), kFail},
                 {At(Duration::Seconds(1)), Duration(), kFail},
                 {opened, Duration(), kFail},
                 {opened + (Duration::Seconds(10) - Duration::Nanos(1)), Duration(), kNoError},
                 {opened + Duration::Seconds(11), Duration(), kNoError}});
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[2].after, State::kOpen);
  EXPECT_EQ(seen[3].got, ErrBreakerOpen());
  EXPECT_FALSE(seen[3].ran);
  EXPECT_EQ(states, (std::vector<State>{State::kOpen, State::kHalfOpen}));
  EXPECT_TRUE(seen[4].ran);
  EXPECT_TRUE(seen[4].got.ok());
  EXPECT_EQ(seen[4].after, State::kClosed);
}

// At exactly open time + timeout, the task that opened the breaker and slept
// until then still finds it open (Go's timer goroutine starts its sleep
// after the opener moves on); a nanosecond later it is half-open.
TEST(BreakerTest, TimerGoroutineSleepsAfterTheOpenerMovesOn) {
  Scheduler s({});
  Breaker b(&s, 1, 1, Duration::Seconds(10));
  const std::vector<Seen> seen =
      RunScript(b, s,
                {{At(Duration()), Duration(), kFail},
                 {At(Duration::Seconds(10)), Duration(), kNoError},
                 {At(Duration::Seconds(10) + Duration::Nanos(1)), Duration(), kNoError}});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].after, State::kOpen);
  EXPECT_EQ(seen[1].got, ErrBreakerOpen());
  EXPECT_TRUE(seen[2].ran);
  EXPECT_EQ(seen[2].after, State::kClosed);
}

// An error in the half-open state opens the breaker again and starts a new
// timeout from that error.
TEST(BreakerTest, HalfOpenErrorReopensWithNewTimer) {
  Scheduler s({});
  Breaker b(&s, 1, 1, Duration::Seconds(10));
  std::vector<State> states;
  const Time reopened = At(Duration::Seconds(12));
  s.Go("probe", Probe(&s, &b,
                      {reopened + (Duration::Seconds(10) - Duration::Nanos(1)),
                       reopened + Duration::Seconds(10) + Duration::Nanos(1)},
                      &states));
  const std::vector<Seen> seen =
      RunScript(b, s, {{At(Duration()), Duration(), kFail}, {reopened, Duration(), kFail}});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[1].ran);
  EXPECT_EQ(seen[1].after, State::kOpen);
  EXPECT_EQ(states, (std::vector<State>{State::kOpen, State::kHalfOpen}));
}

// With a success threshold of two, the half-open breaker needs two
// successes to close, and an error between them reopens it.
TEST(BreakerTest, SuccessThresholdCountsConsecutiveSuccesses) {
  Scheduler s({});
  Breaker b(&s, 1, 2, Duration::Seconds(10));
  const std::vector<Seen> seen = RunScript(b, s,
                                           {{At(Duration()), Duration(), kFail},
                                            {At(Duration::Seconds(11)), Duration(), kNoError},
                                            {At(Duration::Seconds(12)), Duration(), kFail},
                                            {At(Duration::Seconds(23)), Duration(), kNoError},
                                            {At(Duration::Seconds(24)), Duration(), kNoError}});
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[1].after, State::kHalfOpen);
  EXPECT_EQ(seen[2].after, State::kOpen);
  EXPECT_EQ(seen[3].after, State::kHalfOpen);
  EXPECT_EQ(b.successes(), 0);  // cleared when it closed
  EXPECT_EQ(seen[4].after, State::kClosed);
}

// A success of work that started while the breaker was closed is not
// counted, even if the breaker is half-open when the work ends (Go's
// fast path skips processResult).
TEST(BreakerTest, SuccessStartedClosedIsNotCountedInHalfOpen) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  std::vector<Seen> slow;
  s.Go("slow", Script(&s, &b, {{At(Duration()), Duration::Seconds(15), kNoError}}, &slow));
  const std::vector<Seen> seen = RunScript(b, s,
                                           {{At(Duration::Seconds(1)), Duration(), kFail},
                                            {At(Duration::Seconds(2)), Duration(), kFail},
                                            {At(Duration::Seconds(3)), Duration(), kFail},
                                            {At(Duration::Seconds(16)), Duration(), kNoError}});
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_TRUE(slow[0].got.ok());
  EXPECT_EQ(slow[0].after, State::kHalfOpen);  // half-open since 13s; not closed
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3].after, State::kClosed);  // a success started half-open counts
}

// An error of work that started before the breaker opened is dropped: the
// breaker stays open and no second timer starts (one would turn the breaker,
// closed again by then, back to half-open at 15s).
TEST(BreakerTest, ErrorEndingWhileOpenIsIgnored) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  std::vector<Seen> slow;
  std::vector<State> states;
  s.Go("slow", Script(&s, &b, {{At(Duration::Seconds(0)), Duration::Seconds(5), kFail}}, &slow));
  s.Go("probe",
       Probe(&s, &b, {At(Duration::Seconds(13) + Duration::Nanos(1)), At(Duration::Seconds(20))},
             &states));
  const std::vector<Seen> seen = RunScript(b, s,
                                           {{At(Duration::Seconds(1)), Duration(), kFail},
                                            {At(Duration::Seconds(2)), Duration(), kFail},
                                            {At(Duration::Seconds(3)), Duration(), kFail},
                                            {At(Duration::Seconds(14)), Duration(), kNoError}});
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[2].after, State::kOpen);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].got, kFail);
  EXPECT_EQ(slow[0].after, State::kOpen);
  EXPECT_EQ(slow[0].errors_after, 0);
  EXPECT_EQ(seen[3].after, State::kClosed);
  // Half-open 3s + 10s after it opened, not 5s + 10s; closed for good at 14s.
  EXPECT_EQ(states, (std::vector<State>{State::kHalfOpen, State::kClosed}));
}

// Errors are timed when the work ends, not when it starts: a slow error
// that ends within the timeout of the previous one still counts.
TEST(BreakerTest, ErrorExpiryUsesTheTimeTheWorkEnds) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  const std::vector<Seen> seen =
      RunScript(b, s,
                {{At(Duration()), Duration(), kFail},
                 {At(Duration::Seconds(1)), Duration::Seconds(8), kFail},     // ends at 9s
                 {At(Duration::Seconds(12)), Duration::Seconds(6), kFail}});  // ends at 18s
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].after, State::kClosed);
  EXPECT_EQ(seen[2].after, State::kOpen);  // 18s - 9s <= 10s
}

// While one Run's work blocks, other tasks go on, and two Runs may be in
// the half-open state at once.
TEST(BreakerTest, HalfOpenAdmitsConcurrentRuns) {
  Scheduler s({});
  Breaker b(&s, 1, 1, Duration::Seconds(10));
  std::vector<Seen> first, a, c;
  s.Go("first", Script(&s, &b, {{At(Duration()), Duration(), kFail}}, &first));
  s.Go("a", Script(&s, &b, {{At(Duration::Seconds(11)), Duration::Seconds(2), kNoError}}, &a));
  s.Go("c", Script(&s, &b, {{At(Duration::Seconds(12)), Duration::Seconds(2), kNoError}}, &c));
  EXPECT_EQ(s.Run().outcome, sim::Outcome::kAllDone);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(a[0].ran);
  EXPECT_TRUE(c[0].ran);  // started at 12s, still half-open
  EXPECT_EQ(a[0].after, State::kClosed);
  EXPECT_EQ(c[0].after, State::kClosed);
}

// RunSync follows the same rules for work that does not block.
TEST(BreakerTest, RunSyncFollowsTheSameRules) {
  Scheduler s({});
  Breaker b = NewSaramaBreaker(&s);
  int calls = 0;
  auto fail = [&calls] {
    ++calls;
    return kFail;
  };
  EXPECT_EQ(b.RunSync(fail), kFail);
  EXPECT_EQ(b.RunSync([] { return kNoError; }), kNoError);
  EXPECT_EQ(b.RunSync(fail), kFail);
  EXPECT_EQ(b.state(), State::kClosed);
  EXPECT_EQ(b.RunSync(fail), kFail);
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_EQ(b.RunSync(fail), ErrBreakerOpen());
  EXPECT_EQ(calls, 3);
  // The timer task runs when the scheduler does.
  EXPECT_EQ(s.Run().outcome, sim::Outcome::kAllDone);
  EXPECT_EQ(b.state(), State::kHalfOpen);
  EXPECT_EQ(s.now(), Time() + kSaramaBreakerTimeout);
}

// Run(fn, args...) runs fn with the arguments, keeps them alive across the
// work's suspension, and releases them afterwards (no double release).
TEST(BreakerTest, RunWithFunctionAndArguments) {
  Scheduler s({});
  Breaker b(&s, 2, 1, Duration::Seconds(10));
  auto calls = std::make_shared<int>(0);
  std::vector<Error> got;
  s.Go("caller", RunWithArguments(&s, &b, calls, &got));
  EXPECT_EQ(s.Run().outcome, sim::Outcome::kAllDone);
  EXPECT_EQ(got, (std::vector<Error>{kFail, kNoError, kFail, ErrBreakerOpen()}));
  EXPECT_EQ(*calls, 2);  // the third call counted in its own counter
  EXPECT_EQ(calls.use_count(), 1);
}

// Destroying a Breaker while its timer task sleeps is safe: the task keeps
// the state alive and finishes.
TEST(BreakerTest, DestroyedWhileTimerPending) {
  Scheduler s({});
  {
    auto b = std::make_unique<Breaker>(&s, 1, 1, Duration::Seconds(10));
    EXPECT_EQ(b->RunSync([] { return kFail; }), kFail);
    EXPECT_EQ(b->state(), State::kOpen);
  }
  const sim::RunResult r = s.Run();
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone);
  EXPECT_EQ(r.end_time, Time() + Duration::Seconds(10));
}

// Sarama's parameters are breaker.New(3, 1, 10*time.Second), and the state
// names print for traces.
TEST(BreakerTest, SaramaParametersAndNames) {
  EXPECT_EQ(kSaramaBreakerErrorThreshold, 3);
  EXPECT_EQ(kSaramaBreakerSuccessThreshold, 1);
  EXPECT_EQ(kSaramaBreakerTimeout, Duration::Seconds(10));
  EXPECT_EQ(BreakerStateName(State::kClosed), "closed");
  EXPECT_EQ(BreakerStateName(State::kOpen), "open");
  EXPECT_EQ(BreakerStateName(State::kHalfOpen), "half-open");
  EXPECT_TRUE(ErrBreakerOpen().Is(ErrorKind::kBreakerOpen));
}

}  // namespace
}  // namespace sarama
