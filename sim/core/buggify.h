// Buggify: perturbation points in the simulated world, after FoundationDB's
// BUGGIFY. A layer (sim/net, sim/kafka) marks places where the real world is
// allowed to be slower or less orderly than usual (a message that takes a
// little longer, a slow dial, a slow request) as named sites; a run switches
// some sites on, and at each opportunity an enabled site fires with its
// fixed probability and adds a small random extra.
//
// Invariants: a site that is not enabled never draws, so a run without
// buggify makes exactly the draws it made before buggify existed (its trace
// digest does not change). Each enabled site draws from its own stream,
// forked by the site's name from the root, so enabling one site does not
// shift the draws of another (docs/DESIGN.md rule 2). Buggify knows nothing of
// Kafka: the layers name and define their sites.
#ifndef PRODSIM_SIM_CORE_BUGGIFY_H_
#define PRODSIM_SIM_CORE_BUGGIFY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/prng.h"
#include "sim/core/time.h"

namespace sim {

// A perturbation point: its name (part of the scenario file format, so
// stable) and the probability num/den with which it fires at each
// opportunity once enabled.
struct BuggifySite {
  std::string_view name;
  uint64_t fire_num = 1;
  uint64_t fire_den = 10;
};

class Buggify {
 public:
  // Nothing enabled: every site stays quiet and draws nothing.
  Buggify() = default;
  // Enables `sites` (by name), each drawing from root.Fork(name).
  // REQUIRES: no name twice.
  Buggify(const Prng& root, const std::vector<std::string>& sites);

  bool Enabled(std::string_view site) const { return Find(site) != nullptr; }
  bool any_enabled() const { return !sites_.empty(); }

  // Whether `site` fires at this opportunity: false, with no draw, if the
  // site is off; else true with probability fire_num/fire_den (one draw).
  // REQUIRES: site.fire_den > 0.
  bool Fires(const BuggifySite& site);
  // The extra a fired site adds: uniform in [1ns, max], from the site's
  // stream. REQUIRES: the site is enabled; max > 0.
  Duration Extra(const BuggifySite& site, Duration max);

  // How often `site` had an opportunity, and how often it fired (0 for a
  // site that is off).
  uint64_t opportunities(std::string_view site) const;
  uint64_t fired(std::string_view site) const;

 private:
  struct Site {
    std::string name;
    Prng prng;
    uint64_t opportunities = 0;
    uint64_t fired = 0;
  };
  const Site* Find(std::string_view name) const;
  Site* Find(std::string_view name);

  std::vector<Site> sites_;  // few: a linear search is the fastest lookup
};

}  // namespace sim

#endif  // PRODSIM_SIM_CORE_BUGGIFY_H_
