// The trace of a run: structured events, a 64-bit digest, a text rendering.
//
// Every event is folded into the digest, always. The events themselves are
// stored only when recording is on (prodsim run --trace), up to a bound, so
// that fuzzing pays for the digest alone. The digest is a pure function of
// the sequence of (kind, task, a, b) words, and of nothing else: no pointer,
// no wall time and no hash seed ever enters it. Layers above the kernel add
// their own events (kNote) with a short text made only when recording.
#ifndef PRODSIM_SIM_CORE_TRACE_H_
#define PRODSIM_SIM_CORE_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/time.h"

namespace sim {

enum class EventKind : uint8_t {
  kSpawn,        // a: new task id
  kExit,         // a: task id
  kRun,          // the scheduler resumed the task
  kSchedule,     // a: chosen task, b: how many were runnable (a choice)
  kPreempt,      // the task was switched out at a synchronization point
  kBlock,        // the task blocked
  kWake,         // a: task woken
  kSend,         // a: channel id
  kRecv,         // a: channel id, b: 1 if ok (not closed)
  kClose,        // a: channel id
  kSelect,       // a: chosen case (or -1 for default), b: ready cases
  kSleep,        // a: duration ns
  kTimer,        // a: timer id (fired)
  kTimeAdvance,  // a: new time ns
  kPanic,        // a crash of the modelled program
  kNote,         // a, b: caller-defined; text from the layer above
};

std::string_view EventKindName(EventKind k);

struct TraceEvent {
  Time at;
  EventKind kind;
  uint32_t task;
  uint64_t a;
  uint64_t b;
  std::string text;
};

class Trace {
 public:
  static constexpr size_t kDefaultMaxEvents = 2000000;

  void set_recording(bool on, size_t max_events = kDefaultMaxEvents) {
    recording_ = on;
    max_events_ = max_events;
  }
  bool recording() const { return recording_; }

  void Emit(Time at, EventKind kind, uint32_t task, uint64_t a, uint64_t b) {
    Mix(Word(kind, task, a, b));
    if (recording_) [[unlikely]]
      Store(at, kind, task, a, b, {});
  }

  // An event with a text built only when recording. The text does not enter
  // the digest (the words do), so keep the words meaningful.
  template <typename Describe>
  void Note(Time at, uint32_t task, uint64_t a, uint64_t b, Describe&& describe) {
    Mix(Word(EventKind::kNote, task, a, b));
    if (recording_) Store(at, EventKind::kNote, task, a, b, describe());
  }

  // Folds a string into the digest (for names that matter to behaviour).
  void MixString(std::string_view s);

  // The digest, finalised (MurmurHash3's fmix64) so that every bit of it
  // depends on every event.
  uint64_t digest() const;
  uint64_t event_count() const { return count_; }
  const std::vector<TraceEvent>& events() const { return events_; }
  bool truncated() const { return truncated_; }

 private:
  // One word per event. The words of different events differ in their
  // fields; b is spread by an odd multiplier so that it does not alias a.
  static uint64_t Word(EventKind kind, uint32_t task, uint64_t a, uint64_t b) {
    return (static_cast<uint64_t>(kind) | (uint64_t{task} << 8)) ^ (a << 32 | a >> 32) ^
           (b * 0xc2b2ae3d27d4eb4fULL);
  }
  // A polynomial hash: multiplying by an odd constant is a bijection mod
  // 2^64, so changing any one word always changes the digest. Its latency
  // (an add and a multiply) is what the hot path pays per event.
  void Mix(uint64_t w) {
    ++count_;
    digest_ = (digest_ + w) * 0x9e3779b97f4a7c15ULL;
  }
  void Store(Time at, EventKind kind, uint32_t task, uint64_t a, uint64_t b, std::string text);

  uint64_t digest_ = 0xcbf29ce484222325ULL;
  uint64_t count_ = 0;
  bool recording_ = false;
  bool truncated_ = false;
  size_t max_events_ = kDefaultMaxEvents;
  std::vector<TraceEvent> events_;
};

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_TRACE_H_
