// The one source of randomness in a run: xoshiro256** with in-house
// distributions.
//
// Invariants: the same seed gives the same sequence of draws on every
// compiler and standard library (no std::*_distribution, whose output is
// implementation-defined; floating point is only +,-,*,/ and comparisons,
// which IEEE 754 fixes). A stream is forked by name from a root seed without
// consuming draws from its parent, so adding a component (or a fault) does not
// shift every other component's draws (docs/DESIGN.md rule 2).
#ifndef PRODSIM_SIM_CORE_PRNG_H_
#define PRODSIM_SIM_CORE_PRNG_H_

#include <cstdint>
#include <string_view>

#include "sim/core/time.h"

namespace sim {

class Prng {
 public:
  explicit Prng(uint64_t seed);

  // A child stream named `name`: a pure function of this stream's seed and
  // the name, independent of how many draws this stream has made.
  Prng Fork(std::string_view name) const;

  uint64_t seed() const { return seed_; }

  uint64_t Next();

  // Uniform in [lo, hi], both inclusive. REQUIRES: lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n);
  // An index into a collection of n items: PickOne(n) == Below(n).
  uint64_t PickOne(uint64_t n) { return Below(n); }
  // Uniform double in [0, 1), 53 bits.
  double UniformDouble();
  // True with probability p (clamped to [0, 1]).
  bool Bernoulli(double p);
  // True with probability num/den, exactly, with integers only.
  bool Chance(uint64_t num, uint64_t den);
  // Exponentially distributed duration with the given mean, capped at `cap`.
  Duration Exponential(Duration mean, Duration cap);

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

// FNV-1a, 64 bits: names and strings into seeds and digests.
uint64_t Fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ULL);

// A deterministic natural logarithm in plain IEEE arithmetic, so that the
// exponential distribution does not depend on the libm of the machine.
// REQUIRES: x > 0.
double DeterministicLog(double x);

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_PRNG_H_
