#include "search/world.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "scenarios/parallel.h"
#include "wire/drivers.h"

namespace search {

absl::StatusOr<World> World::Real(wire::RealOptions options, std::optional<wire::Clock> clock) {
  absl::StatusOr<wire::Driver> driver = wire::FindDriver(options.client);
  if (!driver.ok()) return driver.status();
  options.clock =
      clock.value_or(driver->simulated_time ? wire::Clock::kSimulated : wire::Clock::kWall);
  World w;
  w.exact_ = driver->exact_replay;
  w.real_ = std::move(options);
  w.family_ = driver->family.empty() ? "other" : driver->family;
  w.version_ = driver->version;
  return w;
}

wire::RealOutput World::Run(const scenarios::Scenario& s) const {
  if (real_) return wire::RunReal(s, *real_);
  wire::RealOutput out;
  out.run = scenarios::RunScenario(s);
  return out;
}

std::string World::Name() const { return real_ ? real_->client : "model"; }

std::string World::ReplayCommand(const std::string& path) const {
  if (!real_) return absl::StrCat("prodsim run ", path);
  if (simulated()) return absl::StrCat("prodsim run ", path, " --client=", real_->client);
  return absl::StrCat("prodsim real ", path, " --client=", real_->client, " --trials=10");
}

std::vector<wire::RealOutput> Trials(const World& w, const scenarios::Scenario& s, int k,
                                     unsigned jobs) {
  std::vector<wire::RealOutput> out;
  out.reserve(static_cast<size_t>(k));
  scenarios::RunInOrder(
      jobs, static_cast<uint64_t>(k), [&](uint64_t) { return w.Run(s); },
      [&](uint64_t, wire::RealOutput& r) {
        out.push_back(std::move(r));
        return true;
      });
  return out;
}

std::vector<scenarios::RunOutput> Outputs(std::vector<wire::RealOutput> trials) {
  std::vector<scenarios::RunOutput> out;
  out.reserve(trials.size());
  for (wire::RealOutput& t : trials) out.push_back(std::move(t.run));
  return out;
}

}  // namespace search
