// The ranges the two scenario generators draw the schedule and the network
// latency from, in one place: explore (scenarios/explore.cc, each value a
// draw from the PRNG) and the scenario fuzzer's byte codec
// (scenarios/decode.cc, and the schema's codec ranges in
// scenarios/schema.cc, each value read from bytes). Where the two differ,
// both stand here side by side. A fault's fields have their one
// description in scenarios/fault_fields.h.
//
// Changing a range changes what every seed and every input generates (and
// so every explore finding's seed): do it only on purpose.
#ifndef PRODSIM_SCENARIOS_DRAW_RANGES_H_
#define PRODSIM_SCENARIOS_DRAW_RANGES_H_

#include <cstdint>

namespace scenarios::internal {

// [lo, hi], both included.
struct DrawRange {
  int64_t lo = 0;
  int64_t hi = 0;
};

// The network latency, uniform in both: its least value, in microseconds,
// and the spread above it (max = min + spread).
inline constexpr DrawRange kLatencyMinMicros{50, 500};
inline constexpr DrawRange kLatencySpreadMicros{0, 5000};

// PCT's depth (the number of priority change points): both.
inline constexpr DrawRange kPctDepth{1, 6};

// The per-mille chances, the random policy's preemption and the go
// policy's perturbation: the codec reads any. Explore keeps the preemption
// away from never and always, and perturbs a third of its go runs, lightly.
inline constexpr DrawRange kCodecPerMille{0, 1000};
inline constexpr DrawRange kExplorePreemptPerMille{50, 950};
inline constexpr DrawRange kExplorePerturbPerMille{1, 300};

// GOMAXPROCS: explore picks one of the machines it stands for; the codec
// reads any count up to 4.
inline constexpr int32_t kExploreGoMaxProcs[] = {1, 2, 4};
inline constexpr DrawRange kCodecGoMaxProcs{1, 4};

}  // namespace scenarios::internal

#endif  // PRODSIM_SCENARIOS_DRAW_RANGES_H_
