#include "sim/core/buggify.h"

#include "base/assert.h"

namespace sim {

Buggify::Buggify(const Prng& root, const std::vector<std::string>& sites) {
  for (const std::string& name : sites) {
    PRODSIM_ASSERT_MSG(Find(name) == nullptr, "a buggify site enabled twice");
    sites_.push_back(Site{name, root.Fork(name)});
  }
}

const Buggify::Site* Buggify::Find(std::string_view name) const {
  for (const Site& s : sites_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Buggify::Site* Buggify::Find(std::string_view name) {
  for (Site& s : sites_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool Buggify::Fires(const BuggifySite& site) {
  PRODSIM_ASSERT(site.fire_den > 0);
  if (sites_.empty()) return false;  // the common case: buggify is off
  Site* s = Find(site.name);
  if (s == nullptr) return false;
  ++s->opportunities;
  if (!s->prng.Chance(site.fire_num, site.fire_den)) return false;
  ++s->fired;
  return true;
}

Duration Buggify::Extra(const BuggifySite& site, Duration max) {
  PRODSIM_ASSERT(max.nanos() > 0);
  Site* s = Find(site.name);
  PRODSIM_ASSERT_MSG(s != nullptr, "Buggify::Extra on a site that is off");
  return Duration::Nanos(s->prng.UniformInt(1, max.nanos()));
}

uint64_t Buggify::opportunities(std::string_view site) const {
  const Site* s = Find(site);
  return s == nullptr ? 0 : s->opportunities;
}

uint64_t Buggify::fired(std::string_view site) const {
  const Site* s = Find(site);
  return s == nullptr ? 0 : s->fired;
}

}  // namespace sim
