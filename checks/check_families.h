// The factories of the check families (checks/*_checks.cc, liveness_check.cc),
// one per check; the registry (checks/check_registry.h) names each with its
// properties. Internal to checks/.
#ifndef PRODSIM_CHECKS_CHECK_FAMILIES_H_
#define PRODSIM_CHECKS_CHECK_FAMILIES_H_

#include <memory>

#include "checks/check.h"

namespace checks::families {

// ordering_checks.cc
std::unique_ptr<Check> MakeLogOffsetsContiguous();
std::unique_ptr<Check> MakeAckedBatchesInOrder();
std::unique_ptr<Check> MakeLogSequencesContiguous();
std::unique_ptr<Check> MakeNoDuplicates();
std::unique_ptr<Check> MakePerPartitionOrder();
// outcome_checks.cc
std::unique_ptr<Check> MakeAckedAreDurable();
std::unique_ptr<Check> MakeEveryMessageOneOutcome();
std::unique_ptr<Check> MakeNotPersistedAbsent();
// producer_checks.cc
std::unique_ptr<Check> MakeNoPanic();
std::unique_ptr<Check> MakeNoProducerAssertion();
std::unique_ptr<Check> MakeNoBrokerSequenceError();
// opt_in_checks.cc
std::unique_ptr<Check> MakeRetryPacing();
std::unique_ptr<Check> MakeNoLeakedGoroutines();
// client_checks.cc
std::unique_ptr<Check> MakeNoFatalError();
std::unique_ptr<Check> MakeClientCrashed();
std::unique_ptr<Check> MakeClientExitedEarly();
std::unique_ptr<Check> MakeClientHung();
std::unique_ptr<Check> MakeClientOutputGarbage();
std::unique_ptr<Check> MakeClientMalformedFrame();
std::unique_ptr<Check> MakeClientLostMessages();
// liveness_check.cc
std::unique_ptr<Check> MakeLiveness();

}  // namespace checks::families

#endif  // PRODSIM_CHECKS_CHECK_FAMILIES_H_
