// A Chrome/Perfetto trace-event JSON timeline of one run (opens in
// ui.perfetto.dev): a track per task (running slices), per broker (appends
// and responses), per connection (sends and deliveries), and instant
// events for faults and for the producer's acks and errors.
#ifndef PRODSIM_SCENARIOS_TIMELINE_H_
#define PRODSIM_SCENARIOS_TIMELINE_H_

#include <string>

#include "checks/run_record.h"
#include "sim/core/scheduler.h"

namespace scenarios {

// REQUIRES: the scheduler recorded its trace.
std::string TimelineJson(const sim::Scheduler& sched, const checks::RunRecord& record);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_TIMELINE_H_
