// The scenario file format: TOML text in, a Scenario (scenarios/spec.h)
// out, and back.
//
// A scenario file (see scenarios/README.md) parses into a Scenario and
// prints back from it; print(parse(text)) parses to the same struct. What
// each field is, its bounds and default, is described once, in
// scenarios/schema.h, which drives the reader and the printer.
#ifndef PRODSIM_SCENARIOS_SCENARIO_H_
#define PRODSIM_SCENARIOS_SCENARIO_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scenarios/spec.h"

namespace scenarios {

// Every buggify site a scenario may name, in canonical order. Keep in sync
// with net::kBuggifySites and kafka::kBuggifySites (a test checks).
std::span<const std::string_view> BuggifySiteNames();

// Parses scenario text. `origin` names the file in errors, which read
// "FILE:LINE:COLUMN: what is wrong (hint: how to fix it)" on one line.
absl::StatusOr<Scenario> ParseScenario(std::string_view text, std::string_view origin);
// Reads and parses a file; NOT_FOUND if it cannot be read.
absl::StatusOr<Scenario> LoadScenario(const std::string& path);
// The canonical TOML text of a scenario (every field, commented sections).
// REQUIRES: `s` is valid, i.e. ParseScenario accepts some text giving it;
// then ParseScenario(PrintScenario(s)) == s. Fields that a fault kind or a
// latency kind does not use must keep their defaults (they are not printed).
std::string PrintScenario(const Scenario& s);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_SCENARIO_H_
