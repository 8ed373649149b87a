#include "sim/core/chan.h"

#include "absl/strings/str_join.h"

namespace sim {
namespace internal {

void WaitQueue::PushBack(Waiter* w) {
  PRODSIM_ASSERT(!w->linked);
  w->linked = true;
  w->next = nullptr;
  w->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = w;
  } else {
    head_ = w;
  }
  tail_ = w;
}

void WaitQueue::Remove(Waiter* w) {
  if (!w->linked) return;
  if (w->prev != nullptr) {
    w->prev->next = w->next;
  } else {
    PRODSIM_ASSERT(head_ == w);
    head_ = w->next;
  }
  if (w->next != nullptr) {
    w->next->prev = w->prev;
  } else {
    PRODSIM_ASSERT(tail_ == w);
    tail_ = w->prev;
  }
  w->prev = w->next = nullptr;
  w->linked = false;
}

bool WaitQueue::HasServable() {
  while (head_ != nullptr && head_->sel != nullptr && head_->sel->fired) {
    Remove(head_);
  }
  return head_ != nullptr;
}

Waiter* WaitQueue::PopServable() {
  if (!HasServable()) return nullptr;
  Waiter* w = head_;
  Remove(w);
  if (w->sel != nullptr) {
    w->sel->fired = true;
    w->sel->chosen = w->case_index;
  }
  return w;
}

}  // namespace internal

ChanBase::ChanBase(Scheduler& s, std::string name, size_t capacity)
    : sched_(&s),
      name_(std::move(name)),
      capacity_(capacity),
      trace_id_(s.RegisterObject("chan", name_)) {}

SelectAwaiter::SelectAwaiter(Scheduler& s, const SelectCase* cases, int n, bool has_default)
    : sched_(&s), has_default_(has_default) {
  PRODSIM_ASSERT(n >= 0);
  PRODSIM_ASSERT(n <= kMaxCases);
  for (int i = 0; i < n; ++i) new (&cases_.c[n_++]) SelectCase(cases[i]);
}

internal::OpResult SelectAwaiter::TryNow() {
  std::array<int, kMaxCases> ready;
  int n_ready = 0;
  for (int i = 0; i < n_; ++i) {
    SelectCase& c = cases_.c[i];
    if (c.chan == nullptr) continue;
    if (c.send ? c.chan->SendReady() : c.chan->RecvReady()) {
      ready[static_cast<size_t>(n_ready++)] = i;
    }
  }
  if (n_ready == 0) {
    if (!has_default_) return internal::OpResult::kWouldBlock;
    chosen_ = kDefault;
    sched_->trace().Emit(sched_->now(), EventKind::kSelect, sched_->current_id(),
                         static_cast<uint64_t>(kDefault), 0);
    return internal::OpResult::kDone;
  }
  // Go picks uniformly among ready cases (selectgo's random poll order).
  const int pick =
      n_ready == 1 ? 0
                   : static_cast<int>(sched_->program_prng().Below(static_cast<uint64_t>(n_ready)));
  chosen_ = ready[static_cast<size_t>(pick)];
  sched_->trace().Emit(sched_->now(), EventKind::kSelect, sched_->current_id(),
                       static_cast<uint64_t>(chosen_), static_cast<uint64_t>(n_ready));
  SelectCase& c = cases_.c[chosen_];
  if (c.send) return c.chan->SendFrom(c.elem, c.where);
  c.chan->RecvInto(c.elem);
  return internal::OpResult::kDone;
}

void SelectAwaiter::Park(std::coroutine_handle<> h) {
  parked_ = true;
  for (int i = 0; i < n_; ++i) {
    const auto idx = static_cast<size_t>(i);
    SelectCase& c = cases_.c[idx];
    if (c.chan == nullptr) continue;
    internal::Waiter& w = *new (&waiters_.w[idx]) internal::Waiter{};
    w.g = sched_->current();
    w.sel = &state_;
    w.case_index = i;
    w.elem = c.elem;
    w.where = c.where;
    if (c.send) {
      c.chan->EnqueueSender(&w);
    } else {
      c.chan->EnqueueReceiver(&w);
    }
  }
  // With no non-nil case this blocks forever, like Go's empty select.
  sched_->Block(h, this);
}

int SelectAwaiter::await_resume() {
  if (!parked_) return chosen_;
  PRODSIM_ASSERT(state_.fired);
  chosen_ = state_.chosen;
  for (int i = 0; i < n_; ++i) {
    const auto idx = static_cast<size_t>(i);
    if (cases_.c[idx].chan == nullptr) continue;
    cases_.c[idx].chan->Dequeue(&waiters_.w[idx], cases_.c[idx].send);
  }
  sched_->trace().Emit(sched_->now(), EventKind::kSelect, sched_->current_id(),
                       static_cast<uint64_t>(chosen_), 1);
  // A send case woken by close never gets here: its task panicked instead.
  PRODSIM_ASSERT(!cases_.c[chosen_].send || waiters_.w[chosen_].success);
  return chosen_;
}

std::string SelectAwaiter::Describe() const {
  std::vector<std::string> parts;
  for (int i = 0; i < n_; ++i) {
    const SelectCase& c = cases_.c[i];
    if (c.chan == nullptr) continue;
    parts.push_back(absl::StrCat(c.send ? "send '" : "receive '", c.chan->name(), "'"));
  }
  if (parts.empty()) return "select (no cases)";
  return absl::StrCat("select [", absl::StrJoin(parts, ", "), "]");
}

}  // namespace sim
