// RunInOrder: independent runs on several threads, consumed in index order.
//
// A run of the model is a pure function of its scenario, so N runs may go
// on N threads at once; what must not change with the thread count is what
// a person sees: the lines printed, the files written, the run at which a
// search stops. RunInOrder therefore computes compute(i) for i = 0, 1, ...
// on `jobs` threads, at most a window of runs ahead of the consumer, and
// hands each result to consume(i, result) on the calling thread in index
// order; consume returns false to stop (runs already started finish and are
// dropped). With jobs <= 1 it is the plain loop, on the calling thread.
//
// compute must not touch state shared between runs (RunScenario and
// Generate do not: every run owns its scheduler, cluster and PRNGs).
#ifndef PRODSIM_SCENARIOS_PARALLEL_H_
#define PRODSIM_SCENARIOS_PARALLEL_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace scenarios {

// The machine's cores (at least 1): explore's default --jobs.
inline unsigned MachineCores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

template <typename Compute, typename Consume>
void RunInOrder(unsigned jobs, uint64_t limit, Compute compute, Consume consume) {
  using T = std::invoke_result_t<Compute&, uint64_t>;
  if (jobs <= 1) {
    for (uint64_t i = 0; i < limit; ++i) {
      T r = compute(i);
      if (!consume(i, r)) return;
    }
    return;
  }
  // Four runs per thread ahead: enough that no thread waits for the
  // consumer while run times vary, few enough that a stop wastes little.
  const uint64_t window = uint64_t{4} * jobs;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<T>> slots(window);  // slot i % window holds run i
  uint64_t next = 0;                            // the next run to start
  uint64_t consumed = 0;                        // runs handed to consume
  bool stop = false;
  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || (next < limit && next < consumed + window); });
      if (stop) return;
      const uint64_t i = next++;
      lock.unlock();
      T r = compute(i);
      lock.lock();
      slots[i % window].emplace(std::move(r));
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(jobs);
  for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (uint64_t i = 0; i < limit; ++i) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return slots[i % window].has_value(); });
    T r = std::move(*slots[i % window]);
    slots[i % window].reset();
    lock.unlock();
    const bool more = consume(i, r);
    lock.lock();
    ++consumed;
    if (!more) stop = true;
    cv.notify_all();
    if (!more) break;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) t.join();
}

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_PARALLEL_H_
