// The kernel allocates nothing in the steady state: once channels, timers,
// the run queue and the timer slots have grown to a program's peak, a
// channel operation (buffered or a handoff), a select and a sleep cost no
// call of operator new, under every policy. This binary counts the calls
// with its own global operator new; the counter is proven to see an
// allocation (CountingSeesAnAllocation), so a zero means none happened.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>

#include "gtest/gtest.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"

namespace {

bool counting = false;
uint64_t allocations = 0;

void* Counted(size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t n) { return Counted(n); }
void* operator new[](size_t n) { return Counted(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace sim {
namespace {

constexpr int kWarmUp = 200;
constexpr int kRounds = 1200;

// The round at which counting starts and stops: every task passes it
// within a few steps of the others, so the window covers all of them.
Task<void> Window(Scheduler* s) {
  for (int i = 0; i < kRounds; ++i) {
    if (i == kWarmUp) counting = true;
    if (i == kRounds - kWarmUp) counting = false;
    co_await s->Sleep(Duration::Micros(1));
  }
}

Task<void> Sender(Chan<int>* buffered, Chan<int>* unbuffered) {
  for (int i = 0; i < kRounds; ++i) {
    co_await buffered->Send(i);
    co_await unbuffered->Send(i);
  }
}

// Takes every handoff (and, between them, what Other offers), then the
// buffered value sent before it.
Task<void> Receiver(Scheduler* s, Chan<int>* buffered, Chan<int>* unbuffered, Chan<int>* other) {
  int got = 0;
  while (got < kRounds) {
    std::optional<int> a, b;
    Chan<int>* nil = nullptr;
    const int which =
        co_await Select(*s, RecvCase(unbuffered, &a), RecvCase(other, &b), RecvCase(nil, &b));
    if (which == 0) {
      ++got;
      std::optional<int> v = co_await buffered->Recv();
      (void)v;
    }
    co_await s->Sleep(Duration::Micros(1));
  }
}

// Offers a value now and then, without blocking (a select with default).
Task<void> Other(Scheduler* s, Chan<int>* other) {
  for (int i = 0; i < kRounds; ++i) {
    const int which = co_await SelectOrDefault(*s, SendCase(other, &i));
    (void)which;
    co_await s->Sleep(Duration::Micros(2));
  }
}

uint64_t SteadyStateAllocations(Policy policy) {
  SchedulerOptions o;
  o.policy = policy;
  o.seed = 7;
  if (policy == Policy::kGo) o.cpu.sync_op = Duration::Nanos(25);
  Scheduler s(o);
  Chan<int> buffered(s, "buffered", 8), unbuffered(s, "unbuffered"), other(s, "other", 4);
  s.Go("window", Window(&s));
  s.Go("sender", Sender(&buffered, &unbuffered));
  s.Go("receiver", Receiver(&s, &buffered, &unbuffered, &other));
  s.Go("other", Other(&s, &other));
  allocations = 0;
  const RunResult r = s.Run();
  counting = false;
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  return allocations;
}

TEST(SteadyStateAllocTest, CountingSeesAnAllocation) {
  allocations = 0;
  counting = true;
  int* p = new int(1);
  counting = false;
  delete p;
  EXPECT_EQ(allocations, 1u);
}

TEST(SteadyStateAllocTest, NoAllocationPerOperationUnderAnyPolicy) {
  for (Policy p : {Policy::kFifo, Policy::kRandom, Policy::kPct, Policy::kGo}) {
    EXPECT_EQ(SteadyStateAllocations(p), 0u) << PolicyName(p);
  }
}

}  // namespace
}  // namespace sim
