// Go channels and select on the deterministic scheduler.
//
// Chan<T> follows the Go specification and runtime (chan.go, select.go):
// - unbuffered (capacity 0): a send completes only by handing the value to a
//   receiver (rendezvous); buffered: a send completes while there is room;
// - receive from a closed, drained channel yields nothing (ok == false, here
//   an empty optional); send on a closed channel, or close of a closed
//   channel, crashes the modelled program (Scheduler::Panic);
// - a select case on a nil channel (nullptr) never fires; a select with no
//   ready case blocks unless it has a default; among several ready cases the
//   choice is uniform, drawn from the run's PRNG;
// - waiting senders and receivers are served in FIFO order, as Go's sudog
//   queues are.
// Every operation is a synchronization point: with the random and PCT
// policies the scheduler may switch tasks just before it.
//
// Invariants: a channel never has both waiting receivers and a non-empty
// buffer, nor both waiting senders and buffer room; a waiter is linked in at
// most one queue.
#ifndef PRODSIM_SIM_CORE_CHAN_H_
#define PRODSIM_SIM_CORE_CHAN_H_

#include <array>
#include <coroutine>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "sim/core/scheduler.h"

namespace sim {

class ChanBase;

namespace internal {

// Shared by the waiters of one blocked select: the first channel to serve
// one of them marks it fired, and the others are skipped.
struct SelectState {
  bool fired = false;
  int chosen = -1;
};

// A task waiting on one channel (Go's sudog).
struct Waiter {
  Goroutine* g = nullptr;
  SelectState* sel = nullptr;
  int case_index = 0;
  void* elem = nullptr;  // send: T*; receive: std::optional<T>*
  bool success = false;  // send: false if woken by close
  CodeLocation where;    // send: the model's line, for the panic a close brings
  Waiter* prev = nullptr;
  Waiter* next = nullptr;
  bool linked = false;
};

// An intrusive FIFO of waiters.
class WaitQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  void PushBack(Waiter* w);
  void Remove(Waiter* w);
  // Removes and returns the first waiter that may still be served (skipping
  // and unlinking waiters of selects that already fired), or null. Marks a
  // select waiter's select as fired on this case.
  Waiter* PopServable();
  // True if PopServable would return a waiter (unlinks dead ones).
  bool HasServable();

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

enum class OpResult : uint8_t { kDone, kWouldBlock, kPanic };

// A buffered channel's FIFO (Go's hchan buf): a ring over a power-of-two
// array that is allocated on the first send and grows, doubling, to the
// first power of two that holds the channel's capacity. A std::deque allocated its map and a
// 512-byte block as it was constructed, and the model makes channels by the thousand (a time.After,
// a response promise, a notifier wait each make one or two).
template <typename T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push_back(T v) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)].emplace(std::move(v));
    ++size_;
  }
  T& front() { return *slots_[head_]; }
  void pop_front() {
    slots_[head_].reset();
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  void Grow() {
    std::vector<std::optional<T>> bigger(slots_.empty() ? 4 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) {
      bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<std::optional<T>> slots_;  // size 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace internal

// Type-erased channel interface, used by select.
class ChanBase {
 public:
  ChanBase(Scheduler& s, std::string name, size_t capacity);
  ChanBase(const ChanBase&) = delete;
  ChanBase& operator=(const ChanBase&) = delete;

  Scheduler& sched() const { return *sched_; }
  const std::string& name() const { return name_; }
  uint32_t trace_id() const { return trace_id_; }
  size_t capacity() const { return capacity_; }
  bool closed() const { return closed_; }

  virtual bool SendReady() = 0;
  virtual bool RecvReady() = 0;
  virtual internal::OpResult SendFrom(void* elem, CodeLocation where) = 0;
  virtual void RecvInto(void* out) = 0;

  void EnqueueSender(internal::Waiter* w) { sendq_.PushBack(w); }
  void EnqueueReceiver(internal::Waiter* w) { recvq_.PushBack(w); }
  void Dequeue(internal::Waiter* w, bool send) { (send ? sendq_ : recvq_).Remove(w); }

 protected:
  ~ChanBase() = default;
  // The channel side of a wake-up: make the waiter's task runnable.
  void Wake(internal::Waiter* w) { sched_->Ready(w->g); }
  void EmitOp(EventKind k, uint64_t b = 0) {
    sched_->trace().Emit(sched_->now(), k, sched_->current_id(), trace_id_, b);
  }

  Scheduler* sched_;
  std::string name_;
  size_t capacity_;
  uint32_t trace_id_;
  bool closed_ = false;
  internal::WaitQueue sendq_;
  internal::WaitQueue recvq_;
};

template <typename T>
class Chan final : public ChanBase {
 public:
  Chan(Scheduler& s, std::string name, size_t capacity = 0)
      : ChanBase(s, std::move(name), capacity) {}

  size_t size() const { return buffer_.size(); }

  // --- The Go operations, as awaitables.
  class SendAwaiter;
  class RecvAwaiter;
  // ch <- v. `where` is the caller's line, for the report of a panic.
  SendAwaiter Send(T v, CodeLocation where = CodeLocation::Here()) {
    return SendAwaiter(this, std::move(v), where);
  }
  // v, ok := <-ch  (nullopt: closed and drained)
  RecvAwaiter Recv() { return RecvAwaiter(this); }
  // close(ch)
  void Close(CodeLocation where = CodeLocation::Here());

  // Non-blocking forms, as a select with a default (also usable from timer
  // callbacks, which run outside any task). Return true if done.
  bool TrySend(T v, CodeLocation where = CodeLocation::Here());
  bool TryRecv(std::optional<T>* out);

  // --- ChanBase, for select.
  bool SendReady() override {
    return closed_ || recvq_.HasServable() || buffer_.size() < capacity_;
  }
  bool RecvReady() override { return !buffer_.empty() || sendq_.HasServable() || closed_; }
  internal::OpResult SendFrom(void* elem, CodeLocation where) override {
    return DoSend(static_cast<T*>(elem), where);
  }
  void RecvInto(void* out) override { DoRecv(static_cast<std::optional<T>*>(out)); }

 private:
  // REQUIRES for DoSend: SendReady(). For DoRecv: RecvReady().
  internal::OpResult DoSend(T* v, CodeLocation where);
  void DoRecv(std::optional<T>* out);

  internal::Ring<T> buffer_;
};

template <typename T>
using ChanPtr = std::shared_ptr<Chan<T>>;

template <typename T>
ChanPtr<T> MakeChan(Scheduler& s, std::string name, size_t capacity = 0) {
  return std::make_shared<Chan<T>>(s, std::move(name), capacity);
}

// ---------------------------------------------------------------------------
// Channel operations.

template <typename T>
internal::OpResult Chan<T>::DoSend(T* v, CodeLocation where) {
  if (closed_) {
    sched_->Panic(absl::StrCat("send on closed channel ", name_), where);
    return internal::OpResult::kPanic;
  }
  if (internal::Waiter* r = recvq_.PopServable()) {
    static_cast<std::optional<T>*>(r->elem)->emplace(std::move(*v));
    r->success = true;
    EmitOp(EventKind::kSend);
    Wake(r);
    return internal::OpResult::kDone;
  }
  if (buffer_.size() < capacity_) {
    buffer_.push_back(std::move(*v));
    EmitOp(EventKind::kSend);
    return internal::OpResult::kDone;
  }
  return internal::OpResult::kWouldBlock;
}

template <typename T>
void Chan<T>::DoRecv(std::optional<T>* out) {
  if (!buffer_.empty()) {
    out->emplace(std::move(buffer_.front()));
    buffer_.pop_front();
    // A sender waiting on a full buffer moves its value into the room made.
    if (internal::Waiter* s = sendq_.PopServable()) {
      buffer_.push_back(std::move(*static_cast<T*>(s->elem)));
      s->success = true;
      Wake(s);
    }
    EmitOp(EventKind::kRecv, 1);
    return;
  }
  if (internal::Waiter* s = sendq_.PopServable()) {
    PRODSIM_ASSERT(capacity_ == 0);
    out->emplace(std::move(*static_cast<T*>(s->elem)));
    s->success = true;
    EmitOp(EventKind::kRecv, 1);
    Wake(s);
    return;
  }
  PRODSIM_ASSERT_MSG(closed_, "DoRecv on a channel that is not ready");
  out->reset();
  EmitOp(EventKind::kRecv, 0);
}

template <typename T>
void Chan<T>::Close(CodeLocation where) {
  if (closed_) {
    sched_->Panic(absl::StrCat("close of closed channel ", name_), where);
    return;
  }
  closed_ = true;
  EmitOp(EventKind::kClose);
  while (internal::Waiter* r = recvq_.PopServable()) {
    static_cast<std::optional<T>*>(r->elem)->reset();
    r->success = false;
    Wake(r);
  }
  // Blocked senders are woken unsuccessful; each panics in its own task
  // when it resumes (Go's closechan and chansend), not in the closer.
  while (internal::Waiter* s = sendq_.PopServable()) {
    s->success = false;
    sched_->ReadyToPanic(s->g, absl::StrCat("send on closed channel ", name_), s->where);
  }
}

template <typename T>
bool Chan<T>::TrySend(T v, CodeLocation where) {
  if (!SendReady()) return false;
  return DoSend(&v, where) == internal::OpResult::kDone;
}

template <typename T>
bool Chan<T>::TryRecv(std::optional<T>* out) {
  if (!RecvReady()) return false;
  DoRecv(out);
  return true;
}

// The shape every blocking operation shares: a synchronization point (the
// policy may switch tasks first), a fast path, else park and block.
// Derived supplies TryNow() -> OpResult and Park(handle).
template <typename Derived>
class OpAwaiter : public PendingOp, public Blocker {
 public:
  bool await_ready() {
    Scheduler& s = self().sched();
    if (s.crashed()) {
      phase_ = Phase::kPanicked;  // a panicking task goes no further
      return false;
    }
    if (s.SyncPoint()) {
      phase_ = Phase::kPreempted;
      return false;
    }
    return Attempt();
  }
  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    switch (phase_) {
      case Phase::kPreempted: self().sched().YieldWithOp(h, this); break;
      case Phase::kPark: self().Park(h); break;
      case Phase::kPanicked: break;  // never resumed
      case Phase::kDone: PRODSIM_ASSERT(false);
    }
  }
  bool Retry() override {
    if (Attempt()) return true;
    if (phase_ == Phase::kPark) self().Park(handle_);
    return false;
  }

 protected:
  ~OpAwaiter() = default;
  enum class Phase : uint8_t { kDone, kPreempted, kPark, kPanicked };
  Derived& self() { return static_cast<Derived&>(*this); }
  bool Attempt() {
    switch (self().TryNow()) {
      case internal::OpResult::kDone: phase_ = Phase::kDone; return true;
      case internal::OpResult::kWouldBlock: phase_ = Phase::kPark; return false;
      case internal::OpResult::kPanic: phase_ = Phase::kPanicked; return false;
    }
    return false;
  }
  Phase phase_ = Phase::kDone;
  std::coroutine_handle<> handle_;
};

template <typename T>
class Chan<T>::SendAwaiter final : public OpAwaiter<SendAwaiter> {
 public:
  SendAwaiter(Chan* ch, T v, CodeLocation where) : ch_(ch), value_(std::move(v)), where_(where) {}
  Scheduler& sched() { return ch_->sched(); }
  internal::OpResult TryNow() {
    if (!ch_->SendReady()) return internal::OpResult::kWouldBlock;
    return ch_->DoSend(&value_, where_);
  }
  void Park(std::coroutine_handle<> h) {
    waiter_ = internal::Waiter{};
    waiter_.g = sched().current();
    waiter_.elem = &value_;
    waiter_.where = where_;
    ch_->EnqueueSender(&waiter_);
    sched().Block(h, this);
  }
  void await_resume() { PRODSIM_ASSERT(waiter_.g == nullptr || waiter_.success); }
  std::string Describe() const override { return absl::StrCat("chan send on '", ch_->name(), "'"); }

 private:
  Chan* ch_;
  T value_;
  CodeLocation where_;
  internal::Waiter waiter_;
};

template <typename T>
class Chan<T>::RecvAwaiter final : public OpAwaiter<RecvAwaiter> {
 public:
  explicit RecvAwaiter(Chan* ch) : ch_(ch) {}
  Scheduler& sched() { return ch_->sched(); }
  internal::OpResult TryNow() {
    if (!ch_->RecvReady()) return internal::OpResult::kWouldBlock;
    ch_->DoRecv(&out_);
    return internal::OpResult::kDone;
  }
  void Park(std::coroutine_handle<> h) {
    waiter_ = internal::Waiter{};
    waiter_.g = sched().current();
    waiter_.elem = &out_;
    ch_->EnqueueReceiver(&waiter_);
    sched().Block(h, this);
  }
  std::optional<T> await_resume() {
    if (waiter_.g != nullptr) {
      // Woken by a sender or by close; the sender emitted the send event.
      ch_->EmitOp(EventKind::kRecv, waiter_.success ? 1 : 0);
    }
    return std::move(out_);
  }
  std::string Describe() const override {
    return absl::StrCat("chan receive on '", ch_->name(), "'");
  }

 private:
  Chan* ch_;
  std::optional<T> out_;
  internal::Waiter waiter_;
};

// ---------------------------------------------------------------------------
// Select.

// One case of a select. A case whose channel is null never fires, as in Go.
struct SelectCase {
  ChanBase* chan = nullptr;
  bool send = false;
  void* elem = nullptr;  // send: T* (moved from if chosen); recv: optional<T>*
  CodeLocation where;    // send: the model's line, for the report of a panic
};

// case v, ok := <-ch: on firing, *out holds the value, or nullopt if closed.
template <typename T>
SelectCase RecvCase(Chan<T>* ch, std::optional<T>* out) {
  return SelectCase{ch, false, out, CodeLocation{}};
}
template <typename T>
SelectCase RecvCase(const ChanPtr<T>& ch, std::optional<T>* out) {
  return SelectCase{ch.get(), false, out, CodeLocation{}};
}
// case ch <- *v: *v is moved from only if this case fires.
template <typename T>
SelectCase SendCase(Chan<T>* ch, T* v, CodeLocation where = CodeLocation::Here()) {
  return SelectCase{ch, true, v, where};
}
template <typename T>
SelectCase SendCase(const ChanPtr<T>& ch, T* v, CodeLocation where = CodeLocation::Here()) {
  return SelectCase{ch.get(), true, v, where};
}

class SelectAwaiter final : public OpAwaiter<SelectAwaiter> {
 public:
  static constexpr int kMaxCases = 8;
  static constexpr int kDefault = -1;

  SelectAwaiter(Scheduler& s, const SelectCase* cases, int n, bool has_default);
  Scheduler& sched() { return *sched_; }
  internal::OpResult TryNow();
  void Park(std::coroutine_handle<> h);
  // The index of the case that fired, or kDefault.
  int await_resume();
  std::string Describe() const override;

 private:
  Scheduler* sched_;
  // Only the first n_ cases and their waiters are ever written or read;
  // the rest stay uninitialised (zeroing all eight of each was 2% of a run).
  union Cases {
    Cases() {}
    SelectCase c[kMaxCases];
  } cases_;
  union Waiters {
    Waiters() {}
    internal::Waiter w[kMaxCases];
  } waiters_;
  internal::SelectState state_;
  int n_ = 0;
  int chosen_ = kDefault;
  bool has_default_;
  bool parked_ = false;
};

// co_await Select(s, RecvCase(a, &v), SendCase(b, &x)) -> the case index.
// (Variadic rather than an initializer list: g++ 12 miscompiles braced lists
// inside co_await expressions.)
template <typename... Cases>
SelectAwaiter Select(Scheduler& s, Cases... cases) {
  const SelectCase all[] = {cases...};
  return SelectAwaiter(s, all, static_cast<int>(sizeof...(cases)), false);
}
// The same with a default clause: returns SelectAwaiter::kDefault when no
// case is ready.
template <typename... Cases>
SelectAwaiter SelectOrDefault(Scheduler& s, Cases... cases) {
  if constexpr (sizeof...(cases) == 0) {
    return SelectAwaiter(s, nullptr, 0, true);
  } else {
    const SelectCase all[] = {cases...};
    return SelectAwaiter(s, all, static_cast<int>(sizeof...(cases)), true);
  }
}

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_CHAN_H_
