// Exploration: scenarios generated from a base scenario, swarm style.
//
// Generate(base, seed) keeps the base's cluster and workload and draws the
// rest from `seed` alone: the schedule policy (random, or PCT with a random
// depth), the network latency, a fault schedule of realistic kinds (the
// mock kinds only when asked), and the producer's settings (the base's with
// probability 1/2, else the settings people use: internal::ProducerFields). Swarm testing
// (as FoundationDB and TigerBeetle do it): each generated scenario switches
// on a random subset of the fault kinds and gives it a random rate, so rare
// combinations get their turn. Every fault heals by a heal time, after
// which the liveness check applies. The wedge kinds (a blackhole, a connect
// hang) are drawn the same way in a step of their own, after everything
// else. Each buggify site (scenario.h
// BuggifySpec) is switched on with probability 1/2, and the chosen sites are
// written into the scenario, so a finding's file replays exactly.
#ifndef PRODSIM_SCENARIOS_EXPLORE_H_
#define PRODSIM_SCENARIOS_EXPLORE_H_

#include <cstdint>

#include "scenarios/scenario.h"

namespace scenarios {

// The faults of generated scenarios all heal by this time, or sooner: they
// fall within the base workload's span (at least 100 ms).
inline constexpr Duration kExploreHealBy = Duration::Seconds(4);

struct GenerateOptions {
  // Draw the mock fault kinds too (what no real cluster does; prodsim
  // explore --mock-faults). Off: only realistic kinds.
  bool mock_faults = false;
  // Draw the producer's settings (ProducerFields). Off: the base's, as a
  // benchmark of one configuration needs.
  bool vary_producer = true;
  // Draw the wedge kinds too (blackhole, connect_hang: internal::
  // kWedgeFaultKinds), after every other draw. Off: what explore drew
  // before they existed, seed for seed.
  bool wedge_faults = true;
  // Draw a log directory failure and the application's drain too
  // (internal::LateFields), from a stream of their own (so no other draw
  // moves). Off: what explore drew before they existed, seed for seed.
  // Over the wire the drain stays prompt (the driver reads its outcomes).
  bool late_draws = true;
  // The share of runs, per mille, on the go policy (the rest: random and
  // PCT, half each). 0: the policies explore drew before go existed.
  uint32_t go_share_per_mille = 500;
  // Over the wire (explore --client): the client family ("librdkafka",
  // "kafkajs", "sarama", or "other" for a driver prodsim does not know)
  // whose own settings and timing are drawn too (scenarios/client_fields.h),
  // and whether topics get several partitions per broker (so one request
  // carries several partitions). "": the model, every draw as before.
  std::string client = {};
  // Its version ("3.9.1"): settings the version lacks are not drawn
  // (ClientField::since). "": every setting.
  std::string client_version = {};
};

// A scenario from `base` and `seed` (a pure function of both and the
// options).
Scenario Generate(const Scenario& base, uint64_t seed, const GenerateOptions& options = {});

// The seed of the i-th run of shard `shard` of `shards` from `root`: shards
// split one seed space, so CI runners can share one search.
uint64_t ExploreSeed(uint64_t root, uint64_t shard, uint64_t shards, uint64_t i);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_EXPLORE_H_
