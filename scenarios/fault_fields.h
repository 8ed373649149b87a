// How a generated fault's fields are chosen: one description serves
// explore (each field drawn from a PRNG) and the fuzzer's byte codec
// (decode.h: each field read from, or written to, bytes).
//
// An IO type provides, each choosing a value in a range (explore: a draw;
// decoding: read from the bytes; encoding: the current value, clamped, is
// written out and kept):
//   void Index(int32_t* v, int64_t n);                  // [0, n)
//   void Dur(Duration* v, Duration lo, Duration hi);    // [lo, hi]
//   void Int(int32_t* v, int64_t lo, int64_t hi);       // [lo, hi]
//   void Choice(std::string* v, std::span<const std::string_view> options);
//   void Flag(bool* v);                                 // even odds
#ifndef PRODSIM_SCENARIOS_FAULT_FIELDS_H_
#define PRODSIM_SCENARIOS_FAULT_FIELDS_H_

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "scenarios/scenario.h"

namespace scenarios::internal {

// The kinds generated faults take, in the order both generators index them.
inline constexpr std::string_view kFaultKinds[] = {
    "reset",        "partition",        "crash",         "move_leader",    "drop_responses",
    "inject_error", "delay_processing", "latency_spike", "pause_fetching", "shrink_isr"};
inline constexpr std::string_view kDirections[] = {"both", "to_broker", "from_broker"};
inline constexpr std::string_view kInjectedErrors[] = {
    "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS", "LEADER_NOT_AVAILABLE",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND"};

// Generated faults fall within the workload's span (one burst per
// interval), at least 100 ms and at most `cap`.
inline Duration HealBy(const WorkloadSpec& w, Duration cap) {
  const int64_t bursts = (w.messages + w.burst - 1) / std::max(w.burst, 1);
  const int64_t span = w.interval.nanos() * bursts;
  return Duration::Nanos(std::clamp(span, Duration::Millis(100).nanos(), cap.nanos()));
}

// A topic and one of its partitions.
template <class IO>
void TopicPartition(IO& io, const ClusterSpec& c, FaultSpec* f) {
  int32_t t = 0;
  for (size_t i = 0; i < c.topics.size(); ++i) {
    if (c.topics[i].name == f->topic) t = static_cast<int32_t>(i);
  }
  io.Index(&t, static_cast<int64_t>(c.topics.size()));
  f->topic = c.topics[static_cast<size_t>(t)].name;
  io.Index(&f->partition, c.topics[static_cast<size_t>(t)].partitions);
}

// The fields of a fault of kind f->kind against cluster `c`, healed by
// `heal_by`. Fields the kind does not use keep their defaults.
template <class IO>
void FaultFields(IO& io, const ClusterSpec& c, Duration heal_by, FaultSpec* f) {
  const std::string& kind = f->kind;
  io.Index(&f->broker, c.brokers);
  io.Dur(&f->at, Duration::Nanos(heal_by.nanos() / 100), Duration::Nanos(heal_by.nanos() / 4 * 3));
  const Duration room = heal_by - f->at;
  Duration d = f->duration.value_or(Duration());
  if (kind == "partition" || kind == "crash") {
    io.Dur(&d, std::min(Duration::Millis(50), room), room);
    f->duration = d;
    if (kind == "partition") io.Choice(&f->direction, kDirections);
  } else if (kind == "delay_processing" || kind == "latency_spike") {
    io.Dur(&d, std::min(Duration::Millis(10), room), room);
    f->duration = d;
    io.Dur(&f->extra, Duration::Millis(1), Duration::Millis(500));
    if (kind == "latency_spike") f->direction = "both";
  } else if (kind == "pause_fetching" || kind == "shrink_isr") {
    io.Dur(&d, std::min(Duration::Millis(10), room), room);
    f->duration = d;
    if (kind == "shrink_isr") TopicPartition(io, c, f);
  } else if (kind == "move_leader") {
    bool one_partition = !f->topic.empty();
    io.Flag(&one_partition);
    if (one_partition) TopicPartition(io, c, f);
  } else if (kind == "inject_error") {
    io.Choice(&f->error, kInjectedErrors);
    io.Int(&f->count, 1, 3);
  } else if (kind == "drop_responses") {
    io.Int(&f->count, 1, 2);
  }
}

}  // namespace scenarios::internal

#endif  // PRODSIM_SCENARIOS_FAULT_FIELDS_H_
