// Virtual time: the only clock in prodsim.
//
// Time is a point on the simulated timeline, Duration a span, both int64
// nanoseconds wrapped in distinct types so that one cannot be passed for the
// other. Nothing in the simulation reads a wall clock (docs/DESIGN.md rule 1).
#ifndef PRODSIM_SIM_CORE_TIME_H_
#define PRODSIM_SIM_CORE_TIME_H_

#include <compare>
#include <cstdint>
#include <string>

namespace sim {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration Nanos(int64_t n) { return Duration(n); }
  static constexpr Duration Micros(int64_t n) { return Duration(n * 1000); }
  static constexpr Duration Millis(int64_t n) { return Duration(n * 1000000); }
  static constexpr Duration Seconds(int64_t n) { return Duration(n * 1000000000); }
  static constexpr Duration Max() { return Duration(INT64_MAX); }

  constexpr int64_t nanos() const { return ns_; }
  constexpr int64_t millis() const { return ns_ / 1000000; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(ns_ + o.ns_); }
  constexpr Duration operator-(Duration o) const { return Duration(ns_ - o.ns_); }
  constexpr Duration operator*(int64_t k) const { return Duration(ns_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(ns_ / k); }
  constexpr Duration& operator+=(Duration o) {
    ns_ += o.ns_;
    return *this;
  }

  // "1.5s", "250ms", "3us", "7ns": the largest unit that divides exactly.
  std::string ToString() const;

 private:
  constexpr explicit Duration(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

class Time {
 public:
  constexpr Time() = default;  // The start of every run.
  static constexpr Time FromNanos(int64_t n) { return Time(n); }
  static constexpr Time Max() { return Time(INT64_MAX); }

  constexpr int64_t nanos() const { return ns_; }
  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Duration d) const {
    // Saturate: a timer "never" must not wrap to the past.
    return d.nanos() > INT64_MAX - ns_ ? Max() : Time(ns_ + d.nanos());
  }
  constexpr Duration operator-(Time o) const { return Duration::Nanos(ns_ - o.ns_); }

  // Seconds with nine decimals: "12.000250000".
  std::string ToString() const;

 private:
  constexpr explicit Time(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_TIME_H_
