#include "sim/core/sync.h"

namespace sim {

void WaitGroup::Add(int64_t delta, CodeLocation where) {
  count_ += delta;
  if (count_ < 0) {
    sched_->Panic(absl::StrCat("sync: negative WaitGroup counter in '", name_, "'"), where);
    return;
  }
  if (count_ == 0) {
    while (!waiters_.empty()) sched_->Ready(waiters_.Pop());
  }
}

void Mutex::Unlock(CodeLocation where) {
  if (!locked_) {
    sched_->Panic(absl::StrCat("sync: unlock of unlocked mutex '", name_, "'"), where);
    return;
  }
  if (waiters_.empty()) {
    locked_ = false;
    return;
  }
  // Hand the lock straight to the first waiter: it stays locked.
  sched_->Ready(waiters_.Pop());
}

bool Mutex::TryLock() {
  if (locked_) return false;
  locked_ = true;
  return true;
}

void RWMutex::RUnlock(CodeLocation where) {
  if (readers_ <= 0) {
    sched_->Panic(absl::StrCat("sync: RUnlock of unlocked RWMutex '", name_, "'"), where);
    return;
  }
  // The last reader out hands the lock to a waiting writer (Go's readerWait).
  if (--readers_ == 0) HandOver(/*readers_first=*/false);
}

void RWMutex::Unlock(CodeLocation where) {
  if (!writer_) {
    sched_->Panic(absl::StrCat("sync: Unlock of unlocked RWMutex '", name_, "'"), where);
    return;
  }
  writer_ = false;
  // A writer's Unlock releases every reader that queued behind it first.
  HandOver(/*readers_first=*/true);
}

void RWMutex::HandOver(bool readers_first) {
  PRODSIM_ASSERT(!writer_);
  PRODSIM_ASSERT(readers_ == 0);
  if (!waiting_readers_.empty() && (readers_first || waiting_writers_.empty())) {
    while (!waiting_readers_.empty()) {
      ++readers_;
      sched_->Ready(waiting_readers_.Pop());
    }
    return;
  }
  if (!waiting_writers_.empty()) {
    writer_ = true;
    sched_->Ready(waiting_writers_.Pop());
  }
}

class Cond::ParkAwaiter final : public Blocker {
 public:
  explicit ParkAwaiter(Cond* c) : c_(c) {}
  bool await_ready() const { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    Scheduler& s = *c_->mu_->sched_;
    c_->waiters_.Push(s.current());
    c_->mu_->Unlock();
    s.Block(h, this);
  }
  void await_resume() const {}
  std::string Describe() const override { return absl::StrCat("Cond.Wait on '", c_->name_, "'"); }

 private:
  Cond* c_;
};

Task<void> Cond::Wait() {
  if (!mu_->locked()) {
    // Go: "fatal error: sync: unlock of unlocked mutex" from Cond.Wait.
    mu_->sched_->Panic(absl::StrCat("sync: unlock of unlocked mutex (Cond.Wait on '", name_, "')"));
    co_await mu_->sched_->Halt();
  }
  co_await ParkAwaiter(this);
  co_await mu_->Lock();
}

void Cond::Signal() {
  if (!waiters_.empty()) mu_->sched_->Ready(waiters_.Pop());
}

void Cond::Broadcast() {
  while (!waiters_.empty()) mu_->sched_->Ready(waiters_.Pop());
}

Timer::Timer(Scheduler& s, std::string name, Duration d)
    : sched_(&s), state_(std::make_shared<State>()) {
  state_->c = MakeChan<Time>(s, std::move(name), 1);
  Arm(d);
}

Timer::~Timer() { state_->pending = false; }

void Timer::Arm(Duration d) {
  PRODSIM_ASSERT(d.nanos() >= 0);
  const uint64_t gen = ++state_->generation;
  state_->pending = true;
  std::weak_ptr<State> weak = state_;
  Scheduler* s = sched_;
  sched_->After(d, [weak, gen, s] {
    std::shared_ptr<State> st = weak.lock();
    if (st == nullptr || st->generation != gen || !st->pending) return;
    st->pending = false;
    // A full channel keeps its old value (Go's sendTime is non-blocking).
    st->c->TrySend(s->now());
  });
}

bool Timer::Stop() {
  const bool was_pending = state_->pending;
  state_->pending = false;
  ++state_->generation;
  return was_pending;
}

bool Timer::Reset(Duration d) {
  const bool was_pending = Stop();
  Arm(d);
  return was_pending;
}

ChanPtr<Time> After(Scheduler& s, Duration d) {
  ChanPtr<Time> c = MakeChan<Time>(s, "time.After", 1);
  // The weak pointer alone (16 bytes) fits the callback's inline storage.
  std::weak_ptr<Chan<Time>> weak = c;
  s.After(d, [weak] {
    if (ChanPtr<Time> ch = weak.lock()) ch->TrySend(ch->sched().now());
  });
  return c;
}

Task<bool> Notifier::Wait(Duration timeout) {
  ChanPtr<bool> mine = MakeChan<bool>(*sched_, name_, 1);
  waiters_.push_back(mine);
  ChanPtr<Time> timer = After(*sched_, timeout);
  std::optional<bool> woken;
  std::optional<Time> fired;
  const int which =
      co_await Select(*sched_, RecvCase(mine.get(), &woken), RecvCase(timer.get(), &fired));
  if (which != 0) std::erase(waiters_, mine);
  co_return which == 0;
}

void Notifier::Notify() {
  for (const ChanPtr<bool>& w : waiters_) w->TrySend(true);
  waiters_.clear();
}

}  // namespace sim
