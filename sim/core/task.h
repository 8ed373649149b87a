// Task<T>: a lazily started coroutine that one other coroutine awaits.
//
// A goroutine of the modelled program is a Task<void> handed to
// Scheduler::Go. Inside it, ordinary calls that may block are Task<T>
// functions awaited with co_await, so a deep call chain can suspend at any
// depth (the suspension propagates by symmetric transfer, with no stack).
//
// Lifetime rule: a coroutine keeps references to its arguments, not copies.
// Pass arguments by value, and never start a coroutine from a lambda with
// captures that dies before the coroutine does.
//
// Compiler rule (g++ 12, Debian 12's): a braced temporary of an aggregate
// type inside a co_await expression (`co_await ch.Send(Pair{a, b})`) is
// destroyed twice, and so are the captures of a lambda written inside a
// co_await expression (`co_await b.Run([p] {...})`); a braced initializer
// list there is miscompiled, and so are `c ? co_await x : co_await y` and
// a co_await that is itself an if/while condition (`while (co_await
// ch.Recv())` hangs; `while (auto v = co_await ch.Recv())` is fine). Name the value first
// (`Pair p{a, b}; co_await ch.Send(std::move(p));`). The determinism lint
// (tools/determinism_lint.sh) rejects the braced form.
#ifndef PRODSIM_SIM_CORE_TASK_H_
#define PRODSIM_SIM_CORE_TASK_H_

#include <coroutine>
#include <optional>
#include <utility>

#include "base/assert.h"

namespace sim {

template <typename T>
class Task;

namespace internal {

struct FinalAwaiter {
  bool await_ready() noexcept { return false; }
  template <typename P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
    std::coroutine_handle<> next = h.promise().continuation;
    return next ? next : std::noop_coroutine();
  }
  void await_resume() noexcept {}
};

struct PromiseBase {
  std::coroutine_handle<> continuation;
  std::suspend_always initial_suspend() noexcept { return {}; }
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept {
    PRODSIM_ASSERT_MSG(false, "exception escaped a simulated coroutine");
  }
};

template <typename T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <typename U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

}  // namespace internal

template <typename T = void>
class [[nodiscard]] Task {
 public:
  using promise_type = internal::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { Reset(); }

  bool valid() const { return static_cast<bool>(h_); }

  // Hands the frame to the scheduler, which then owns it.
  Handle Release() { return std::exchange(h_, {}); }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) {
    PRODSIM_ASSERT(h_);
    h_.promise().continuation = caller;
    return h_;
  }
  T await_resume() {
    PRODSIM_ASSERT(h_.done());
    if constexpr (!std::is_void_v<T>) {
      PRODSIM_ASSERT(h_.promise().value.has_value());
      return std::move(*h_.promise().value);
    }
  }

 private:
  void Reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_;
};

namespace internal {
template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace internal

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_TASK_H_
