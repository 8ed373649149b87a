#include "sim/core/time.h"

#include "absl/strings/str_format.h"

namespace sim {

std::string Duration::ToString() const {
  struct Unit {
    int64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
  if (ns_ == 0) return "0s";
  for (const Unit& u : kUnits) {
    if (ns_ % u.ns == 0) return absl::StrFormat("%d%s", ns_ / u.ns, u.name);
  }
  return absl::StrFormat("%dns", ns_);
}

std::string Time::ToString() const {
  int64_t whole = ns_ / 1000000000;
  int64_t frac = ns_ % 1000000000;
  if (frac < 0) {
    whole -= 1;
    frac += 1000000000;
  }
  return absl::StrFormat("%d.%09d", whole, frac);
}

}  // namespace sim
