// The go policy of sim::Scheduler (Policy::kGo): Ps with local run queues
// and runnext, the global queue, work stealing, time slices, netpoll, and
// the synchronization point under go. Each rule names the function of Go's
// runtime/proc.go (Go 1.19, Debian 12's) that it follows. The rest of the
// scheduler (the other policies, timers, the run loop) is in scheduler.cc;
// scheduler.h describes the whole. go_policy_test.cc tests these rules.

#include <algorithm>
#include <utility>

#include "base/assert.h"
#include "sim/core/scheduler.h"

namespace sim {

bool Scheduler::AnyRunnable() {
  if (!go_) return !runq_.empty();
  ready_.n = ReadyPs(ready_.ps, &ready_.busy_until);
  ready_.valid = true;
  return ready_.n > 0;
}

void Scheduler::ChargeCpu(GoP& p) {
  if (pending_cpu_.nanos() == 0) return;
  p.busy_until = PReady(p) + pending_cpu_;
  pending_cpu_ = Duration();
}

// runqput: next puts g in runnext and kicks the old runnext to the tail of
// the local queue; a full local queue (256) moves half of it and g to the
// global queue (runqputslow).
void Scheduler::RunqPut(GoP& p, Goroutine* g, bool next) {
  if (next) {
    Goroutine* old = std::exchange(p.runnext, g);
    p.runnext_at = now_;
    if (old == nullptr) return;
    g = old;
  }
  constexpr size_t kLocalCap = 256;
  if (p.local.size() < kLocalCap) {
    p.local.PushBack(g);
    return;
  }
  for (size_t i = 0; i < kLocalCap / 2; ++i) global_.PushBack(p.local.PopFront());
  global_.PushBack(g);
}

// ready(gp, traceskip, next=true), as goready does for a channel
// operation, a lock or a WaitGroup: into the runnext of the waker's P. A
// wake-up from outside any goroutine (a timer, a network delivery: Go's
// netpoll hands those to injectglist) goes to the global queue.
void Scheduler::ReadyGo(Goroutine* g) {
  if (!g->world && (current_ == nullptr || current_->world) && netpoll_held_ > 0) {
    NetpollWake();  // the poller wakes for this event and runs due timers
  }
  if (!g->world && current_ != nullptr && !current_->world) {
    pending_cpu_ = pending_cpu_ + options_.cpu.wake;  // the waker is a program goroutine
  }
  PutReadyGo(g);
}

// Where a runnable goroutine goes, woken or new: a world goroutine to the
// world's queue; one made ready by a program goroutine to that one's
// runnext; one made ready from outside the program to the global queue.
void Scheduler::PutReadyGo(Goroutine* g) {
  if (g->world) {
    ps_[nps_].local.PushBack(g);
  } else if (current_ != nullptr && !current_->world) {
    RunqPut(ps_[cur_p_], g, /*next=*/true);
  } else {
    global_.PushBack(g);
  }
}

// runqgrab: a thief may take from P v's local queue; and, on the last
// try, the runnext of a P that is running a goroutine and has not run its
// runnext within kGoRunnextStealDelay (the 3 us runqgrab sleeps for).
bool Scheduler::Stealable(size_t v, bool runnext) const {
  const GoP& victim = ps_[v];
  if (!victim.local.empty()) return true;
  return runnext && victim.runnext != nullptr && victim.cur != nullptr &&
         now_ - victim.runnext_at >= kGoRunnextStealDelay;
}

bool Scheduler::ProgramIdle() const {
  if (!global_.empty()) return false;
  for (size_t i = 0; i < nps_; ++i) {
    const GoP& p = ps_[i];
    if (p.cur != nullptr || p.runnext != nullptr || !p.local.empty()) return false;
  }
  return true;
}

// findRunnable, with nothing to run, blocks in netpoll(delay) until the
// next timer; on Linux netpoll waits whole milliseconds (netpoll_epoll.go:
// a delay under 1 ms waits 1 ms, a longer one is cut to whole ms and the
// rest waited again), so a sleep that ends while the whole program is idle
// is seen only at the next millisecond boundary after the program went
// idle, unless an outside event (a network read: NetpollWake) comes first.
bool Scheduler::NetpollHolds(TimerEntry& e) {
  TimerSlot& slot = timer_slots_[e.slot];
  if (slot.wake == nullptr || slot.wake->world || !ProgramIdle()) return false;
  Time idle = program_last_run_;
  for (size_t i = 0; i < nps_; ++i) idle = std::max(idle, ps_[i].busy_until);
  if (e.at <= idle) return false;
  constexpr int64_t kMs = 1000000;
  const int64_t waits = ((e.at - idle).nanos() + kMs - 1) / kMs;
  const Time fire = idle + Duration::Nanos(waits * kMs);
  if (fire <= e.at) return false;
  slot.netpoll = true;
  slot.due = e.at;
  e.at = fire;
  ++netpoll_held_;
  PushKey(e);
  return true;
}

void Scheduler::NetpollWake() {
  bool moved = false;
  for (TimerEntry& t : timers_) {
    TimerSlot& slot = timer_slots_[t.slot];
    if (!slot.netpoll) continue;
    // Awake now: a held timer fires when due (or now, if it was), and may
    // be held again if the program goes idle before then.
    t.at = std::max(slot.due, now_);
    slot.netpoll = false;
    --netpoll_held_;
    moved = true;
  }
  if (moved) std::make_heap(timers_.begin(), timers_.end(), TimerLater{});
}

// Which Ps can run at now_. Every P that has a goroutine on it, or would
// find one in findRunnable (its own runnext or local queue, the global
// queue, or one to steal from another P), runs in parallel with the others;
// the simulation runs one at a time, the one whose CPU is free first (the
// cost it spent). The world's P runs only its own queue. Whether a P could
// steal is counted once for all of them: P i can when any P but i is
// stealable.
size_t Scheduler::ReadyPs(size_t* ready, Time* busy_until) const {
  Time first_free = Time::Max();
  const bool global = !global_.empty();
  bool stealable[kGoMaxProcs];
  size_t nstealable = 0;
  bool counted = false;
  size_t n = 0;
  const GoP* ps = ps_.data();
  for (size_t i = 0; i <= nps_; ++i) {
    const GoP& p = ps[i];
    if (p.cur == nullptr) {
      if (i == nps_) {
        if (p.local.empty()) continue;
      } else if (p.runnext == nullptr && p.local.empty() && !global) {
        if (!counted) {
          counted = true;
          for (size_t v = 0; v < nps_; ++v) {
            stealable[v] = Stealable(v, /*runnext=*/true);
            nstealable += stealable[v] ? 1 : 0;
          }
        }
        if (nstealable <= (stealable[i] ? 1u : 0u)) continue;
      }
    }
    if (p.busy_until > now_) {
      first_free = std::min(first_free, p.busy_until);
      continue;
    }
    ready[n++] = i;
  }
  *busy_until = first_free;
  return n;
}

// Among the Ps free now a draw decides (parallel execution interleaves
// anywhere).
int Scheduler::PickP() {
  size_t ready[kGoMaxProcs + 1];  // the program's Ps and the world's
  Time busy_until;
  return DrawP(ready, ReadyPs(ready, &busy_until));
}

int Scheduler::DrawP(const size_t* ready, size_t n) {
  if (n == 0) return -1;
  if (n == 1) return static_cast<int>(ready[0]);
  return static_cast<int>(ready[RandomPick(n)]);
}

// findRunnable, in its order: the global queue first on every 61st tick
// (fairness), runnext (the time slice inherited), the local queue, the
// global queue (globrunqget takes a share onto the local queue), then
// stealing (stealWork: victims in a random order; half of a local queue;
// a running P's runnext only as the last resort, after the 3 us runqgrab
// waits for its owner to run it).
Goroutine* Scheduler::FindRunnable(GoP& p, bool* inherit) {
  *inherit = false;
  if (&p == &ps_[nps_]) return p.local.empty() ? nullptr : p.local.PopFront();
  if (p.schedtick % 61 == 0 && !global_.empty()) return global_.PopFront();
  if (p.runnext != nullptr) {
    *inherit = true;
    return std::exchange(p.runnext, nullptr);
  }
  if (!p.local.empty()) return p.local.PopFront();
  if (!global_.empty()) {
    size_t take = std::min(global_.size(), global_.size() / nps_ + 1);
    take = std::min<size_t>(take, 128);
    Goroutine* g = global_.PopFront();
    for (size_t i = 1; i < take; ++i) p.local.PushBack(global_.PopFront());
    return g;
  }
  const size_t self = static_cast<size_t>(&p - ps_.data());
  steal_order_.clear();
  for (size_t v = 0; v < nps_; ++v) {
    if (v != self) steal_order_.push_back(v);
  }
  const size_t start = steal_order_.size() > 1 ? RandomPick(steal_order_.size()) : 0;
  for (const bool runnext : {false, true}) {
    for (size_t k = 0; k < steal_order_.size(); ++k) {
      const size_t v = steal_order_[(start + k) % steal_order_.size()];
      if (Goroutine* g = StealFrom(p, v, runnext)) return g;
    }
  }
  return nullptr;
}

// runqsteal: half of the victim's local queue (rounded up), the first of
// them to run and the rest onto the thief's local queue; or its runnext.
Goroutine* Scheduler::StealFrom(GoP& thief, size_t victim_index, bool runnext) {
  if (!Stealable(victim_index, runnext)) return nullptr;
  GoP& victim = ps_[victim_index];
  if (victim.local.empty()) return std::exchange(victim.runnext, nullptr);
  const size_t n = victim.local.size() - victim.local.size() / 2;
  for (size_t i = 0; i + 1 < n; ++i) thief.local.PushBack(victim.local.PopFront());
  return victim.local.PopFront();
}

// A synchronization point under go. The goroutine keeps its P (Go never
// switches goroutines at a channel operation that does not block) unless
// its time slice is over (sysmon's retake after forcePreemptNS: to the
// global queue), or a perturbation preempts it; another P may run in the
// meantime (parallel execution), and a P busy for the CPU cost spent lets
// the others catch up.
bool Scheduler::SyncPointGo() {
  PRODSIM_ASSERT(current_ != nullptr);
  if (steps_ > options_.step_limit) return true;
  GoP& p = ps_[cur_p_];
  const bool world = current_->world;
  if (!world) pending_cpu_ = pending_cpu_ + options_.cpu.sync_op;
  ChargeCpu(p);
  ++p.slice_ops;
  const uint32_t slice = current_->spinner ? options_.spinner_slice_ops : options_.time_slice_ops;
  const bool slice_over = p.slice_ops > slice || p.busy_until - p.slice_start >= kGoTimeSlice;
  bool others = !global_.empty();
  for (size_t i = 0; i < ps_.size() && !others; ++i) {
    const GoP& q = ps_[i];
    others = q.runnext != nullptr || !q.local.empty() || (i != cur_p_ && q.cur != nullptr);
  }
  if (slice_over && !others && !timers_.empty()) {
    park_spinner_ = true;  // nobody else can run: let time pass instead
    return true;
  }
  if (slice_over && others) {
    go_switch_ = GoSwitch::kGlobal;
    return true;
  }
  if (!world && others && options_.perturb_per_mille > 0 &&
      TapeChance(options_.perturb_per_mille)) {
    go_switch_ = GoSwitch::kGlobal;
    return true;
  }
  // Its CPU is busy until later: the other Ps (and timers) go first.
  if (p.busy_until > now_) return true;
  const int next = PickP();
  if (next < 0 || static_cast<size_t>(next) == cur_p_) return false;
  next_p_ = next;
  return true;
}

}  // namespace sim
