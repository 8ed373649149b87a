// What the prodsim subcommands share: the exit codes for bad input (sysexits),
// loading a scenario file with its one-line error, printing a run's
// violations, and the duration flags.
#ifndef PRODSIM_CLI_COMMON_H_
#define PRODSIM_CLI_COMMON_H_

#include <string>

#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "sim/core/time.h"

namespace cli {

inline constexpr int kExitUsage = 64;
inline constexpr int kExitBadFile = 65;
inline constexpr int kExitNoFile = 66;
inline constexpr int kExitCantCreate = 73;  // sysexits EX_CANTCREAT: an output file

// Loads a scenario, or prints its one-line error and sets *code (65 bad
// file, 66 missing file).
bool LoadOrSay(const std::string& path, scenarios::Scenario* s, int* code);

// The harness error, or each violation with up to three witnesses, indented
// by `indent` spaces (the witnesses two more).
void PrintViolations(const scenarios::RunOutput& out, int indent);
// The failure's signature and its causal chain, one event per line.
void PrintSignature(const scenarios::RunOutput& out, int indent);

// A positive duration such as "30s" (scenario file syntax); false otherwise.
bool ParsePositiveDuration(const std::string& text, sim::Duration* d);

}  // namespace cli

#endif  // PRODSIM_CLI_COMMON_H_
