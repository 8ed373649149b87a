#include "sim/core/prng.h"

#include "base/assert.h"

namespace sim {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  x += 0x9e3779b97f4a7c15ULL;
  uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t Fnv1a64(std::string_view s, uint64_t h) {
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

Prng::Prng(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (uint64_t& w : s_) w = SplitMix64(x);
  // xoshiro's state must not be all zero; SplitMix64 never yields four zeros,
  // but the invariant is cheap to state.
  PRODSIM_ASSERT((s_[0] | s_[1] | s_[2] | s_[3]) != 0);
}

Prng Prng::Fork(std::string_view name) const {
  uint64_t mixed = Fnv1a64(name, seed_ ^ 0x6a09e667f3bcc909ULL);
  return Prng(SplitMix64(mixed));
}

uint64_t Prng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t Prng::Below(uint64_t n) {
  PRODSIM_ASSERT(n > 0);
  // Lemire's multiply-and-reject: unbiased, and the same on every platform.
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Prng::UniformInt(int64_t lo, int64_t hi) {
  PRODSIM_ASSERT(lo <= hi);
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(Next());
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + Below(span + 1));
}

double Prng::UniformDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

bool Prng::Bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return UniformDouble() < p;
}

bool Prng::Chance(uint64_t num, uint64_t den) {
  PRODSIM_ASSERT(den > 0);
  if (num >= den) return true;
  return Below(den) < num;
}

Duration Prng::Exponential(Duration mean, Duration cap) {
  PRODSIM_ASSERT(mean.nanos() >= 0);
  PRODSIM_ASSERT(cap.nanos() >= 0);
  // u in (0, 1]: never log(0).
  const double u = 1.0 - UniformDouble();
  const double ns = -DeterministicLog(u) * static_cast<double>(mean.nanos());
  if (!(ns < static_cast<double>(cap.nanos()))) return cap;
  return Duration::Nanos(static_cast<int64_t>(ns));
}

double DeterministicLog(double x) {
  PRODSIM_ASSERT(x > 0.0);
  // Bring x into [sqrt(1/2), sqrt(2)) by exact scaling with powers of two,
  // then ln(x) = 2 atanh((x-1)/(x+1)), a fast-converging series there.
  constexpr double kLn2 = 0.6931471805599453094;
  int exponent = 0;
  while (x >= 1.4142135623730951) {
    x *= 0.5;
    ++exponent;
  }
  while (x < 0.7071067811865476) {
    x *= 2.0;
    --exponent;
  }
  const double z = (x - 1.0) / (x + 1.0);
  const double z2 = z * z;
  double term = z;
  double sum = 0.0;
  for (int k = 1; k < 60; k += 2) {
    sum += term / k;
    term *= z2;
  }
  return 2.0 * sum + exponent * kLn2;
}

}  // namespace sim
