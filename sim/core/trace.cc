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

void Trace::Store(Time at, EventKind kind, uint32_t task, uint64_t a,
                  uint64_t b, std::string text) {
  if (events_.size() >= max_events_) {
    truncated_ = true;
    return;
  }
  events_.push_back(TraceEvent{at, kind, task, a, b, std::move(text)});
}

}  // namespace sim
