// The circuit breaker Sarama puts around metadata lookups
// (github.com/eapache/go-resiliency v1.4.0 breaker/breaker.go, the version in
// sarama v1.42.1's go.mod; Sarama builds it as breaker.New(3, 1, 10*time.Second)
// in newTopicProducer and newPartitionProducer).
//
// States and rules, as in that version:
//   closed     Run runs the work. An error counts; the count starts again
//              from zero when more than `timeout` passed since the last
//              counted error. When the count reaches error_threshold, the
//              breaker opens. A success in the closed state changes nothing:
//              it does not reset the error count.
//   open       Run returns ErrBreakerOpen without running the work. A timer
//              goroutine, started when the breaker opened, moves it to
//              half-open after `timeout`. Results of work that began before
//              the breaker opened are ignored.
//   half-open  Run runs the work, with no limit on how many at once. A
//              success counts; success_threshold of them close the breaker.
//              One error opens it again (and starts a new timer).
// Run reads the state once, before the work; if the work then succeeds and
// the state it read was closed, the result is not counted at all, even if
// the breaker has since become half-open (Go's lock-free fast path).
//
// Time is virtual. Go's breaker starts the half-open timer as a goroutine
// (`go b.timer()`, which sleeps `timeout`, then takes the lock), not with
// time.AfterFunc; the model does the same, a daemon task that sleeps on the
// scheduler. As in Go, the timer's sleep begins only when that goroutine
// first runs, after the task that opened the breaker has moved on, so the
// breaker becomes half-open at, or just after, open time + timeout: a Run
// that wakes at exactly that instant, from a sleep set before the timer
// goroutine first ran, still sees the breaker open. Lazy computation from
// the clock would make it half-open a little early instead, and a scheduler
// callback would drop the goroutine that Go has.
//
// The breaker's state lives in a shared block that the timer task and any
// running Run keep alive, so a Breaker may be destroyed while either is
// pending (Go's garbage collector does the same for *Breaker).
#ifndef PRODSIM_PRODUCER_BREAKER_H_
#define PRODSIM_PRODUCER_BREAKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "producer/errors.h"
#include "sim/core/scheduler.h"
#include "sim/core/task.h"
#include "sim/core/time.h"

namespace sarama {

// The parameters Sarama passes to breaker.New in v1.42.1.
inline constexpr int kSaramaBreakerErrorThreshold = 3;
inline constexpr int kSaramaBreakerSuccessThreshold = 1;
inline constexpr sim::Duration kSaramaBreakerTimeout = sim::Duration::Seconds(10);

// breaker.ErrBreakerOpen: "circuit breaker is open".
Error ErrBreakerOpen();

class Breaker {
 public:
  enum class State : uint8_t { kClosed, kOpen, kHalfOpen };

  // go-resiliency v1.4.0 breaker.go: New. Starts closed. `name` names the
  // timer task in traces ("<name>.timer").
  // REQUIRES: sched != nullptr, timeout >= 0.
  Breaker(sim::Scheduler* sched, int error_threshold, int success_threshold, sim::Duration timeout,
          std::string name = "breaker");

  // Movable, not copyable: one Breaker is one *Breaker of Go.
  Breaker(Breaker&&) noexcept = default;
  Breaker& operator=(Breaker&&) noexcept = default;
  Breaker(const Breaker&) = delete;
  Breaker& operator=(const Breaker&) = delete;
  ~Breaker() = default;

  // go-resiliency v1.4.0 breaker.go: Breaker.Run, for work that may block
  // (Sarama's metadata refresh and its send on a channel). Returns
  // ErrBreakerOpen without calling `work` if the breaker is open; else awaits
  // work() and returns its result. The state is read when the returned task
  // starts, so co_await it at once. `work` is kept alive until its task ends,
  // so a lambda coroutine's captures stay valid.
  //
  // gcc 12 bug: a lambda written inside a co_await expression, in a
  // coroutine, has its captures destroyed twice when the coroutine resumes
  // (`co_await b.Run([sp] {...})` with a shared_ptr `sp` frees it early; a
  // string or an Error capture is a double free). Pointer, reference and
  // integer captures are safe. Otherwise build `work` in a named variable
  // first, or use the overload below.
  sim::Task<Error> Run(std::function<sim::Task<Error>()> work);

  // Run with fn(args...) as the work: `co_await b.Run(&UpdateLeaderWork, pp)`.
  // The arguments are copied into the work function here, outside the
  // caller's co_await expression, which keeps clear of the gcc 12 bug.
  template <typename... Params, typename... Args>
  sim::Task<Error> Run(sim::Task<Error> (*fn)(Params...), Args... args) {
    return Run(std::function<sim::Task<Error>()>([fn, args...]() { return fn(args...); }));
  }

  // The same for work that never blocks.
  Error RunSync(absl::FunctionRef<Error()> work);

  // For checks and tests: the state and the counters, as they are now.
  State state() const;
  int errors() const;
  int successes() const;

 private:
  struct Impl;
  static sim::Task<Error> RunTask(std::shared_ptr<Impl> impl,
                                  std::function<sim::Task<Error>()> work);
  std::shared_ptr<Impl> impl_;
};

// Sarama's breaker: breaker.New(3, 1, 10*time.Second).
Breaker NewSaramaBreaker(sim::Scheduler* sched, std::string name = "breaker");

std::string_view BreakerStateName(Breaker::State state);

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_BREAKER_H_
