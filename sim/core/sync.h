// Go's sync.WaitGroup, sync.Mutex and sync.Cond, and time.Timer, on the
// deterministic scheduler.
//
// Differences from Go, stated: Mutex hands ownership to the first waiter on
// Unlock (Go's starvation mode), so a lock is FIFO-fair; the scheduler's
// policy still decides when each task runs. Timer has the pre-Go-1.23
// semantics that Sarama's era relies on: its channel has capacity 1, a fired
// value stays in it after Stop or Reset, and Stop reports whether the timer
// was still pending.
#ifndef PRODSIM_SIM_CORE_SYNC_H_
#define PRODSIM_SIM_CORE_SYNC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/chan.h"
#include "sim/core/scheduler.h"
#include "sim/core/task.h"

namespace sim {

namespace internal {
// A plain FIFO of blocked tasks, for the sync primitives.
class TaskQueue {
 public:
  bool empty() const { return queue_.empty(); }
  void Push(Goroutine* g) { queue_.push_back(g); }
  Goroutine* Pop() {
    Goroutine* g = queue_.front();
    queue_.pop_front();
    return g;
  }

 private:
  std::deque<Goroutine*> queue_;
};
}  // namespace internal

class WaitGroup {
 public:
  WaitGroup(Scheduler& s, std::string name) : sched_(&s), name_(std::move(name)) {}
  // Panics (modelled program crash) if the counter goes negative.
  // `where`: the caller's line, for the report of a panic.
  void Add(int64_t delta, CodeLocation where = CodeLocation::Here());
  void Done(CodeLocation where = CodeLocation::Here()) { Add(-1, where); }
  int64_t count() const { return count_; }

  class WaitAwaiter;
  WaitAwaiter Wait();

 private:
  Scheduler* sched_;
  std::string name_;
  int64_t count_ = 0;
  internal::TaskQueue waiters_;
};

class WaitGroup::WaitAwaiter final : public OpAwaiter<WaitAwaiter> {
 public:
  explicit WaitAwaiter(WaitGroup* wg) : wg_(wg) {}
  Scheduler& sched() { return *wg_->sched_; }
  internal::OpResult TryNow() {
    return wg_->count_ == 0 ? internal::OpResult::kDone : internal::OpResult::kWouldBlock;
  }
  void Park(std::coroutine_handle<> h) {
    wg_->waiters_.Push(sched().current());
    sched().Block(h, this);
  }
  void await_resume() {}
  std::string Describe() const override {
    return absl::StrCat("WaitGroup.Wait on '", wg_->name_, "'");
  }

 private:
  WaitGroup* wg_;
};

inline WaitGroup::WaitAwaiter WaitGroup::Wait() { return WaitAwaiter(this); }

class Mutex {
 public:
  Mutex(Scheduler& s, std::string name) : sched_(&s), name_(std::move(name)) {}
  class LockAwaiter;
  LockAwaiter Lock();
  // Panics if not locked ("sync: unlock of unlocked mutex").
  void Unlock(CodeLocation where = CodeLocation::Here());
  bool TryLock();
  bool locked() const { return locked_; }

 private:
  friend class Cond;
  Scheduler* sched_;
  std::string name_;
  bool locked_ = false;
  internal::TaskQueue waiters_;
};

class Mutex::LockAwaiter final : public OpAwaiter<LockAwaiter> {
 public:
  explicit LockAwaiter(Mutex* mu) : mu_(mu) {}
  Scheduler& sched() { return *mu_->sched_; }
  internal::OpResult TryNow() {
    if (mu_->locked_) return internal::OpResult::kWouldBlock;
    mu_->locked_ = true;
    return internal::OpResult::kDone;
  }
  void Park(std::coroutine_handle<> h) {
    mu_->waiters_.Push(sched().current());
    sched().Block(h, this);
  }
  // Ownership was handed over by Unlock when we were woken.
  void await_resume() { PRODSIM_ASSERT(mu_->locked_); }
  std::string Describe() const override { return absl::StrCat("Mutex.Lock on '", mu_->name_, "'"); }

 private:
  Mutex* mu_;
};

inline Mutex::LockAwaiter Mutex::Lock() { return LockAwaiter(this); }

// Go's sync.RWMutex: many readers or one writer. As in Go, a writer that
// is waiting blocks new readers, so a stream of readers cannot starve it.
// Unlock hands over to all waiting readers if any, else to the next writer;
// the last RUnlock hands over to a waiting writer.
class RWMutex {
 public:
  RWMutex(Scheduler& s, std::string name) : sched_(&s), name_(std::move(name)) {}
  class LockAwaiter;
  LockAwaiter RLock();
  LockAwaiter Lock();
  void RUnlock(CodeLocation where = CodeLocation::Here());  // panics if not read-locked
  void Unlock(CodeLocation where = CodeLocation::Here());   // panics if not write-locked
  int readers() const { return readers_; }
  bool writer() const { return writer_; }

 private:
  void HandOver(bool readers_first);
  Scheduler* sched_;
  std::string name_;
  int readers_ = 0;
  bool writer_ = false;
  internal::TaskQueue waiting_readers_;
  internal::TaskQueue waiting_writers_;
};

class RWMutex::LockAwaiter final : public OpAwaiter<LockAwaiter> {
 public:
  LockAwaiter(RWMutex* mu, bool write) : mu_(mu), write_(write) {}
  Scheduler& sched() { return *mu_->sched_; }
  internal::OpResult TryNow() {
    if (write_) {
      if (mu_->writer_ || mu_->readers_ > 0) return internal::OpResult::kWouldBlock;
      mu_->writer_ = true;
      return internal::OpResult::kDone;
    }
    if (mu_->writer_ || !mu_->waiting_writers_.empty()) return internal::OpResult::kWouldBlock;
    ++mu_->readers_;
    return internal::OpResult::kDone;
  }
  void Park(std::coroutine_handle<> h) {
    (write_ ? mu_->waiting_writers_ : mu_->waiting_readers_).Push(sched().current());
    sched().Block(h, this);
  }
  // The lock was handed over (counted for us) when we were woken.
  void await_resume() const {}
  std::string Describe() const override {
    return absl::StrCat(write_ ? "RWMutex.Lock" : "RWMutex.RLock", " on '", mu_->name_, "'");
  }

 private:
  RWMutex* mu_;
  bool write_;
};

inline RWMutex::LockAwaiter RWMutex::RLock() { return LockAwaiter(this, false); }
inline RWMutex::LockAwaiter RWMutex::Lock() { return LockAwaiter(this, true); }

class Cond {
 public:
  Cond(Mutex& mu, std::string name) : mu_(&mu), name_(std::move(name)) {}
  // Unlocks, waits for Signal/Broadcast, and locks again before returning.
  // Without the mutex held, the modelled program crashes, as in Go.
  Task<void> Wait();
  void Signal();
  void Broadcast();

 private:
  class ParkAwaiter;
  Mutex* mu_;
  std::string name_;
  internal::TaskQueue waiters_;
};

// Go's time.Timer: C() receives the fire time once the duration has passed.
class Timer {
 public:
  Timer(Scheduler& s, std::string name, Duration d);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  Chan<Time>* C() { return state_->c.get(); }
  // The channel, kept alive by the caller as long as it holds it: Go's
  // timer.C outlives the Timer that a select may still name (a stopped
  // timer's channel never fires again, or holds one stale tick).
  ChanPtr<Time> SharedC() const { return state_->c; }
  // Returns true if the call stopped a pending timer.
  bool Stop();
  // Re-arms for d from now; returns true if the timer had been pending.
  bool Reset(Duration d);

 private:
  struct State {
    ChanPtr<Time> c;
    uint64_t generation = 0;
    bool pending = false;
  };
  void Arm(Duration d);

  Scheduler* sched_;
  std::shared_ptr<State> state_;
};

// Go's time.After: a channel that receives once, d from now.
ChanPtr<Time> After(Scheduler& s, Duration d);

// A broadcast wake-up with a timeout, for the simulated world's own waiting
// loops (a broker's produce purgatory, a replica fetcher's long poll), so
// they sleep until something changed instead of polling. Wait returns at
// the next Notify (true) or when the timeout passes (false). Edge-triggered:
// a Notify with nobody waiting is not remembered, so check the condition
// before waiting (nothing runs in between).
class Notifier {
 public:
  Notifier(Scheduler& s, std::string name) : sched_(&s), name_(std::move(name)) {}
  Task<bool> Wait(Duration timeout);
  void Notify();

 private:
  Scheduler* sched_;
  std::string name_;
  std::vector<ChanPtr<bool>> waiters_;
};

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_SYNC_H_
