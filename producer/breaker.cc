// The go-resiliency v1.4.0 circuit breaker on the simulation's scheduler.
// See breaker.h for the rules; each function names the Go one it models.
#include "producer/breaker.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace sarama {

// go-resiliency v1.4.0 breaker.go: the fields of Breaker. There is no lock:
// the simulation runs one task at a time and nothing below suspends, so each
// of these functions is atomic, as the Go code's critical sections are.
struct Breaker::Impl : std::enable_shared_from_this<Breaker::Impl> {
  sim::Scheduler* sched = nullptr;
  int error_threshold = 0;
  int success_threshold = 0;
  sim::Duration timeout;
  std::string name;

  State state = State::kClosed;
  int errors = 0;
  int successes = 0;
  sim::Time last_error;

  // go-resiliency v1.4.0 breaker.go: Breaker.doWork, after the work. Only a
  // success that started in the closed state skips processResult.
  void AfterWork(State state_at_start, const Error& result) {
    if (result.ok() && state_at_start == State::kClosed) return;
    ProcessResult(result);
  }

  // go-resiliency v1.4.0 breaker.go: Breaker.processResult. Go also counts a
  // panic in the work as an error; model work does not panic.
  void ProcessResult(const Error& result) {
    if (result.ok()) {
      if (state == State::kHalfOpen) {
        ++successes;
        if (successes == success_threshold) ChangeState(State::kClosed);
      }
      return;
    }
    // Errors expire, in any state, once strictly more than `timeout` has
    // passed since the last counted one (Go: time.Now().After(expiry)).
    if (errors > 0 && sched->now() > last_error + timeout) errors = 0;
    switch (state) {
      case State::kClosed:
        ++errors;
        if (errors == error_threshold) {
          OpenBreaker();
        } else {
          last_error = sched->now();
        }
        break;
      case State::kHalfOpen: OpenBreaker(); break;
      case State::kOpen:
        // Work that began before the breaker opened: its error is dropped.
        break;
    }
  }

  // go-resiliency v1.4.0 breaker.go: Breaker.openBreaker.
  void OpenBreaker() {
    ChangeState(State::kOpen);
    sched->Go(absl::StrCat(name, ".timer"), Timer(shared_from_this()),
              sim::SpawnOptions{.daemon = true});
  }

  // Defined out of the class: clang 14 cannot compile a coroutine that is
  // an inline function under UBSan ("Cannot represent a difference across
  // sections").
  static sim::Task<void> Timer(std::shared_ptr<Impl> self);

  // go-resiliency v1.4.0 breaker.go: Breaker.changeState. Every change
  // clears both counters (but not last_error).
  void ChangeState(State new_state) {
    errors = 0;
    successes = 0;
    state = new_state;
  }
};

// go-resiliency v1.4.0 breaker.go: Breaker.timer. The state is set to
// half-open unconditionally, as in Go; nothing else can leave the open
// state, so it is still open here.
sim::Task<void> Breaker::Impl::Timer(std::shared_ptr<Impl> self) {
  co_await self->sched->Sleep(self->timeout);
  PRODSIM_ASSERT(self->state == State::kOpen);
  self->ChangeState(State::kHalfOpen);
}

Error ErrBreakerOpen() { return Error::Of(ErrorKind::kBreakerOpen); }

// go-resiliency v1.4.0 breaker.go: New.
Breaker::Breaker(sim::Scheduler* sched, int error_threshold, int success_threshold,
                 sim::Duration timeout, std::string name)
    : impl_(std::make_shared<Impl>()) {
  PRODSIM_ASSERT(sched != nullptr);
  PRODSIM_ASSERT_MSG(timeout >= sim::Duration(), "a timer cannot sleep a negative time");
  impl_->sched = sched;
  impl_->error_threshold = error_threshold;
  impl_->success_threshold = success_threshold;
  impl_->timeout = timeout;
  impl_->name = std::move(name);
}

// go-resiliency v1.4.0 breaker.go: Breaker.Run. The task owns a reference
// to the state and the work function, so neither dies while it is suspended.
sim::Task<Error> Breaker::RunTask(std::shared_ptr<Impl> impl,
                                  std::function<sim::Task<Error>()> work) {
  const State state_at_start = impl->state;
  if (state_at_start == State::kOpen) co_return ErrBreakerOpen();
  Error result = co_await work();
  impl->AfterWork(state_at_start, result);
  co_return result;
}

sim::Task<Error> Breaker::Run(std::function<sim::Task<Error>()> work) {
  PRODSIM_ASSERT_MSG(impl_ != nullptr, "Run on a moved-from Breaker");
  PRODSIM_ASSERT(work != nullptr);
  return RunTask(impl_, std::move(work));
}

// go-resiliency v1.4.0 breaker.go: Breaker.Run with work that returns
// without blocking.
Error Breaker::RunSync(absl::FunctionRef<Error()> work) {
  PRODSIM_ASSERT_MSG(impl_ != nullptr, "RunSync on a moved-from Breaker");
  const State state_at_start = impl_->state;
  if (state_at_start == State::kOpen) return ErrBreakerOpen();
  Error result = work();
  impl_->AfterWork(state_at_start, result);
  return result;
}

Breaker::State Breaker::state() const { return impl_->state; }
int Breaker::errors() const { return impl_->errors; }
int Breaker::successes() const { return impl_->successes; }

// sarama v1.42.1 async_producer.go: newTopicProducer / newPartitionProducer's
// breaker.New(3, 1, 10*time.Second).
Breaker NewSaramaBreaker(sim::Scheduler* sched, std::string name) {
  return Breaker(sched, kSaramaBreakerErrorThreshold, kSaramaBreakerSuccessThreshold,
                 kSaramaBreakerTimeout, std::move(name));
}

std::string_view BreakerStateName(Breaker::State state) {
  switch (state) {
    case Breaker::State::kClosed: return "closed";
    case Breaker::State::kOpen: return "open";
    case Breaker::State::kHalfOpen: return "half-open";
  }
  PRODSIM_ASSERT_MSG(false, "Breaker::State value outside the enum");
  return {};
}

}  // namespace sarama
