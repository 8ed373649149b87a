// kernel_bench: the cost of the kernel's primitives, side by side in one run.
//
// The headline figure is the ratio of one channel handoff (a value passed
// from one task to another over an unbuffered channel, including the switch
// to the receiver) to one bare coroutine resume (resuming a coroutine that
// immediately suspends again). Target: handoff/resume ratio <= 4.
#include <coroutine>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "benchmark/benchmark.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"

namespace {

constexpr int64_t kOpsPerIteration = 10000;

// A coroutine that suspends forever in a loop: the cheapest possible resume.
struct Bare {
  struct promise_type {
    Bare get_return_object() {
      return Bare{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
  std::coroutine_handle<promise_type> h;
};

Bare Spin(int64_t* counter) {
  for (;;) {
    ++*counter;
    co_await std::suspend_always{};
  }
}

void BM_BareResume(benchmark::State& state) {
  int64_t counter = 0;
  Bare b = Spin(&counter);
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) b.h.resume();
  }
  benchmark::DoNotOptimize(counter);
  b.h.destroy();
  state.SetItemsProcessed(state.iterations() * kOpsPerIteration);
}
BENCHMARK(BM_BareResume);

sim::Task<void> Pinger(sim::Chan<int>* ping, sim::Chan<int>* pong, int64_t rounds) {
  for (int64_t i = 0; i < rounds; ++i) {
    co_await ping->Send(static_cast<int>(i));
    benchmark::DoNotOptimize(co_await pong->Recv());
  }
}

sim::Task<void> Ponger(sim::Chan<int>* ping, sim::Chan<int>* pong, int64_t rounds) {
  for (int64_t i = 0; i < rounds; ++i) {
    std::optional<int> v = co_await ping->Recv();
    co_await pong->Send(*v);
  }
}

void PingPong(benchmark::State& state, sim::Policy policy) {
  const int64_t rounds = kOpsPerIteration / 2;  // two handoffs per round
  for (auto _ : state) {
    sim::SchedulerOptions o;
    o.policy = policy;
    sim::Scheduler s(o);
    sim::Chan<int> ping(s, "ping"), pong(s, "pong");
    s.Go("pinger", Pinger(&ping, &pong, rounds));
    s.Go("ponger", Ponger(&ping, &pong, rounds));
    benchmark::DoNotOptimize(s.Run());
  }
  state.SetItemsProcessed(state.iterations() * kOpsPerIteration);
}
void BM_HandoffFifo(benchmark::State& state) { PingPong(state, sim::Policy::kFifo); }
void BM_HandoffRandom(benchmark::State& state) { PingPong(state, sim::Policy::kRandom); }
BENCHMARK(BM_HandoffFifo);
BENCHMARK(BM_HandoffRandom);

sim::Task<void> Feeder(sim::Chan<int>* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) co_await c->Send(1);
}

sim::Task<void> Selector(sim::Scheduler* s, sim::Chan<int>* a, sim::Chan<int>* b, sim::Chan<int>* c,
                         int64_t n) {
  std::optional<int> v;
  sim::Chan<int>* nil = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    co_await sim::Select(*s, sim::RecvCase(a, &v), sim::RecvCase(b, &v), sim::RecvCase(c, &v),
                         sim::RecvCase(nil, &v));
  }
}

// A select over three buffered channels fed by three tasks, plus a nil case:
// the shape of Sarama's brokerProducer loop.
void BM_SelectLoop(benchmark::State& state) {
  const int64_t per_feeder = kOpsPerIteration / 3;
  for (auto _ : state) {
    sim::Scheduler s({});
    sim::Chan<int> a(s, "a", 16), b(s, "b", 16), c(s, "c", 16);
    s.Go("fa", Feeder(&a, per_feeder));
    s.Go("fb", Feeder(&b, per_feeder));
    s.Go("fc", Feeder(&c, per_feeder));
    s.Go("select", Selector(&s, &a, &b, &c, per_feeder * 3));
    benchmark::DoNotOptimize(s.Run());
  }
  state.SetItemsProcessed(state.iterations() * (kOpsPerIteration / 3) * 3);
}
BENCHMARK(BM_SelectLoop);

// Keeps nanoseconds per item of every benchmark, for the ratio line.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end() && it->second.value > 0) {
        ns_per_item_[r.benchmark_name()] = 1e9 / it->second.value;
      }
    }
  }
  double Get(const std::string& name) const {
    auto it = ns_per_item_.find(name);
    return it == ns_per_item_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> ns_per_item_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double resume = reporter.Get("BM_BareResume");
  const double fifo = reporter.Get("BM_HandoffFifo");
  const double random = reporter.Get("BM_HandoffRandom");
  const double select = reporter.Get("BM_SelectLoop");
  if (resume <= 0 || fifo <= 0) {
    std::printf("handoff/resume ratio: n/a (filtered out)\n");
    return 0;
  }
  std::printf(
      "bare resume: %.2f ns  handoff (fifo): %.2f ns  handoff (random): %.2f ns"
      "  select: %.2f ns\n",
      resume, fifo, random, select);
  std::printf("handoff/resume ratio: %.2f  (target <= 4.00, fifo policy)\n", fifo / resume);
  if (random > 0) std::printf("handoff/resume ratio, random policy: %.2f\n", random / resume);
  if (select > 0) std::printf("select/resume ratio: %.2f\n", select / resume);
  benchmark::Shutdown();
  return 0;
}
