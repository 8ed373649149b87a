// Realism rules that tie a fault to the rest of a scenario.
//
// A realistic fault kind stands for an event a real Kafka 2.6 cluster has
// (fault_models/README.md). Most kinds can happen in any scenario; an
// injected error cannot: Kafka answers a produce request with
// REQUEST_TIMED_OUT only for acks=all and a replicated partition, with
// NOT_ENOUGH_REPLICAS only where min.insync.replicas can be missed, and so
// on (fault_models::InjectableErrors). A scenario whose inject_error asks
// for an error its cluster and producer cannot get from Kafka is a bad
// scenario, reported like any other (the parser gives FILE:LINE:COLUMN);
// the generators (explore, the fuzzer's decoder) repair or drop such a
// fault instead of producing it.
#ifndef PRODSIM_SCENARIOS_REALISM_H_
#define PRODSIM_SCENARIOS_REALISM_H_

#include <cstdint>
#include <optional>
#include <string>

#include "scenarios/spec.h"

namespace scenarios {

// What is wrong with a fault, for an error line: the offending field, what,
// and how to fix it.
struct FaultProblem {
  std::string field;  // "error", "api", "duration", "topic"
  std::string what;
  std::string hint;
};

// The producer's RequiredAcks as the run will have it: the scenario's, or
// the profile's Sarama default (NewConfig: WaitForLocal).
int32_t EffectiveRequiredAcks(const ProducerSpec& p);
// The same for Net.ReadTimeout.
Duration EffectiveReadTimeout(const ProducerSpec& p);

// The problem with inject_error fault `f` in a scenario with producer `p`
// and cluster `c`, if any. REQUIRES: f.kind is inject_error, f.error set
// (not NONE), f.topic empty or a topic of `c`.
std::optional<FaultProblem> InjectErrorProblem(const FaultSpec& f, const ProducerSpec& p,
                                               const ClusterSpec& c);

// The first fault of `s` that is not realistic where a realistic kind is
// asked for (an inject_error a problem above), as "faults[i].field: what";
// nullopt if none. Mock kinds are not checked here.
std::optional<std::string> FirstUnrealisticFault(const Scenario& s);

// Removes the inject_error faults that FirstUnrealisticFault would name:
// what a generator does with a drawn error the drawn scenario cannot get
// from Kafka (dropping, not redrawing, keeps the fuzzer's codec a
// bijection on what it decodes).
void DropUnrealisticFaults(Scenario* s);

// Whether any fault of `s` is a mock fault (fault_models::IsMockKind).
bool HasMockFaults(const Scenario& s);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_REALISM_H_
