// The real-time world's event loop: one thread, epoll, and the monotonic
// clock as the world's time.
//
// Now() is the time since the loop was made, as a sim::Time, so that the
// simulated cluster's timers (latency, request processing, the fault
// schedule) run against the wall clock. A deadline is waited for with a
// timerfd (nanosecond resolution), not epoll's millisecond timeout.
//
// Invariants: a callback runs only for a registered fd, never for one
// removed earlier in the same round; Now() never decreases.
#ifndef PRODSIM_WIRE_EVENT_LOOP_H_
#define PRODSIM_WIRE_EVENT_LOOP_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "sim/core/time.h"

namespace wire {

class EventLoop {
 public:
  // Called with the epoll events that came for the fd (EPOLLIN, ...).
  using Callback = absl::AnyInvocable<void(uint32_t events)>;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // An error if the loop could not be made (Add then fails too).
  const absl::Status& status() const { return status_; }

  absl::Status Add(int fd, uint32_t events, Callback callback);
  absl::Status Modify(int fd, uint32_t events);
  // Forgets the fd (the caller closes it).
  void Remove(int fd);
  // Runs at the start of every Wait, before the loop looks at its fds (or
  // blocks): the bridge resumes there the connections it stopped reading
  // while the simulated broker had their requests, since the broker taking
  // a request makes no event an fd would report. One hook; an empty one
  // removes it.
  void set_before_wait(absl::AnyInvocable<void()> hook) { before_wait_ = std::move(hook); }

  sim::Time Now() const;
  // Waits for an event until `deadline` (sim::Time::Max(): unbounded) if
  // `block`, else only looks; runs the callbacks of every fd that is ready;
  // returns Now().
  sim::Time Wait(sim::Time deadline, bool block);

 private:
  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  int64_t start_ns_ = 0;  // CLOCK_MONOTONIC at construction
  absl::Status status_;
  absl::btree_map<int, std::shared_ptr<Callback>> callbacks_;
  absl::AnyInvocable<void()> before_wait_;
};

// Sets SO_LINGER 0 on a TCP socket: its close then sends an RST, which the
// peer reads as ECONNRESET (a reset fault, a lost response), as it would
// from a broker's host whose connection broke.
void SetResetOnClose(int fd);

}  // namespace wire

#endif  // PRODSIM_WIRE_EVENT_LOOP_H_
