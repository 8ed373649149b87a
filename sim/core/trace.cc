#include "sim/core/trace.h"

#include "sim/core/prng.h"

namespace sim {

std::string_view EventKindName(EventKind k) {
  switch (k) {
    case EventKind::kSpawn: return "spawn";
    case EventKind::kExit: return "exit";
    case EventKind::kRun: return "run";
    case EventKind::kSchedule: return "schedule";
    case EventKind::kPreempt: return "preempt";
    case EventKind::kBlock: return "block";
    case EventKind::kWake: return "wake";
    case EventKind::kSend: return "send";
    case EventKind::kRecv: return "recv";
    case EventKind::kClose: return "close";
    case EventKind::kSelect: return "select";
    case EventKind::kSleep: return "sleep";
    case EventKind::kTimer: return "timer";
    case EventKind::kTimeAdvance: return "time";
    case EventKind::kPanic: return "panic";
    case EventKind::kNote: return "note";
  }
  return "?";
}

void Trace::MixString(std::string_view s) { Mix(Fnv1a64(s)); }

uint64_t Trace::digest() const {
  uint64_t h = digest_ ^ count_;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

void Trace::Store(Time at, EventKind kind, uint32_t task, uint64_t a, uint64_t b,
                  std::string text) {
  if (events_.size() >= max_events_) {
    truncated_ = true;
    return;
  }
  events_.push_back(TraceEvent{at, kind, task, a, b, std::move(text)});
}

}  // namespace sim
