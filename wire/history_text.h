// A trial's history as text for a person: every broker event (faults,
// appends, truncations, responses, notes) and, in wire mode, every line the
// client's driver printed, one line each in time order, then the final
// committed logs. `prodsim real --history`, `--out` and `prodsim serve`
// write it; explore and shrink over the wire keep it beside a failing file.
#ifndef PRODSIM_WIRE_HISTORY_TEXT_H_
#define PRODSIM_WIRE_HISTORY_TEXT_H_

#include <string>

#include "checks/run_record.h"
#include "scenarios/runner.h"

namespace wire {

// The broker history of `r`, with the client's event lines when it has a
// client.
std::string HistoryText(const checks::RunRecord& r);

// A failing trial's report: the verdict line, every violation with all its
// witnesses, the signature and its chain; `header` lines first.
std::string TrialReport(const scenarios::RunOutput& out, const std::string& header);

}  // namespace wire

#endif  // PRODSIM_WIRE_HISTORY_TEXT_H_
