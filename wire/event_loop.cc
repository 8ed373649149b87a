#include "wire/event_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace wire {
namespace {

int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

EventLoop::EventLoop() : start_ns_(MonotonicNanos()) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    status_ = Errno("epoll_create1");
    return;
  }
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) {
    status_ = Errno("timerfd_create");
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = timer_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) != 0) status_ = Errno("epoll_ctl");
}

EventLoop::~EventLoop() {
  if (timer_fd_ >= 0) close(timer_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

absl::Status EventLoop::Add(int fd, uint32_t events, Callback callback) {
  if (!status_.ok()) return status_;
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return Errno("epoll_ctl add");
  callbacks_[fd] = std::make_shared<Callback>(std::move(callback));
  return absl::OkStatus();
}

absl::Status EventLoop::Modify(int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) return Errno("epoll_ctl mod");
  return absl::OkStatus();
}

void EventLoop::Remove(int fd) {
  if (callbacks_.erase(fd) == 0) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

sim::Time EventLoop::Now() const {
  return sim::Time::FromNanos(std::max<int64_t>(MonotonicNanos() - start_ns_, 0));
}

sim::Time EventLoop::Wait(sim::Time deadline, bool block) {
  if (before_wait_) before_wait_();
  int timeout_ms = 0;
  if (block) {
    timeout_ms = -1;
    if (deadline != sim::Time::Max()) {
      const int64_t at = start_ns_ + deadline.nanos();
      itimerspec spec{};
      spec.it_value.tv_sec = at / 1000000000;
      spec.it_value.tv_nsec = at % 1000000000;
      if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
      timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
    }
  }
  epoll_event events[64];
  const int n = epoll_wait(epoll_fd_, events, 64, timeout_ms);
  // Collect first: a callback may remove another fd of this round.
  std::vector<std::pair<int, uint32_t>> ready;
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == timer_fd_) {
      uint64_t expirations = 0;
      [[maybe_unused]] const ssize_t r = read(timer_fd_, &expirations, sizeof expirations);
      continue;
    }
    const uint32_t ev = events[i].events;  // epoll_event is packed
    ready.emplace_back(fd, ev);
  }
  for (const auto& [fd, ev] : ready) {
    auto it = callbacks_.find(fd);
    if (it == callbacks_.end()) continue;
    std::shared_ptr<Callback> cb = it->second;  // alive even if the callback removes itself
    (*cb)(ev);
  }
  if (block) {
    const itimerspec off{};
    timerfd_settime(timer_fd_, 0, &off, nullptr);
  }
  return Now();
}

void SetResetOnClose(int fd) {
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

}  // namespace wire
