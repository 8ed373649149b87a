// The worlds a search runs a scenario in: the model (scenarios::RunScenario,
// a pure function of the scenario) or a real client over the wire
// (wire::RunReal, one sample per trial). explore, shrink and fidelity take
// a World and do not care which; the room sits above scenarios/ and wire/
// so that neither has to know the other (docs/DESIGN.md, the layers).
//
// Real trials sleep most of their time (the client waits for timers and
// the network), so many run at once on few cores: Trials runs them on
// `jobs` threads, each with its own ports, event loop, process group and
// bounds (RunReal owns everything it touches). How many before timing
// changes outcomes is measured by `prodsim bench --wire-jobs`.
#ifndef PRODSIM_SEARCH_WORLD_H_
#define PRODSIM_SEARCH_WORLD_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "wire/real_world.h"

namespace search {

// explore --client's default --jobs: trials at once (README "Hunting a
// real client" has the measurement behind it).
inline constexpr unsigned kRealJobsDefault = 8;

class World {
 public:
  // The model, with each scenario's own profile.
  static World Model() { return World(); }
  // A real client (`options.client`: a driver name, NAME@VERSION or a
  // command). `clock`: simulated or wall, or, if not given, simulated where
  // the driver has it and wall otherwise (options.clock is set from it). An
  // error: the driver cannot be found.
  static absl::StatusOr<World> Real(wire::RealOptions options,
                                    std::optional<wire::Clock> clock = std::nullopt);

  bool real() const { return real_.has_value(); }
  // A real client in simulated time: free of the machine's load.
  bool simulated() const { return real_ && real_->clock == wire::Clock::kSimulated; }
  // Every run of a scenario is the same run (the model; a real client in
  // simulated time whose driver replays exactly): one run decides.
  bool exact() const { return !real_ || (simulated() && exact_); }
  // The command that replays a file written in this world.
  std::string ReplayCommand(const std::string& path) const;
  // One run: the model's, or one trial (RealOutput::run holds the verdict
  // either way; the wire fields are set for a trial).
  wire::RealOutput Run(const scenarios::Scenario& s) const;
  // "model" or the --client text ("librdkafka@2.15.1").
  std::string Name() const;
  // The client family explore draws settings for ("librdkafka", "kafkajs",
  // "sarama", "other"), "" for the model.
  const std::string& family() const { return family_; }
  // The client's version as run ("2.0.2" for --client=librdkafka), "" for
  // the model and a --client=CMD driver.
  const std::string& version() const { return version_; }
  const wire::RealOptions* real_options() const { return real_ ? &*real_ : nullptr; }

 private:
  std::optional<wire::RealOptions> real_;
  std::string family_;
  std::string version_;
  bool exact_ = false;
};

// `k` runs of `s` in `w`, on up to `jobs` threads, in index order.
std::vector<wire::RealOutput> Trials(const World& w, const scenarios::Scenario& s, int k,
                                     unsigned jobs);

// The run outputs of `trials` (for ShrinkOptions::trials).
std::vector<scenarios::RunOutput> Outputs(std::vector<wire::RealOutput> trials);

}  // namespace search

#endif  // PRODSIM_SEARCH_WORLD_H_
