// What the prodsim subcommands share: the exit codes for bad input (sysexits),
// loading a scenario file with its one-line error, printing a run's
// violations, and the names a flag can take.
#ifndef PRODSIM_CLI_COMMON_H_
#define PRODSIM_CLI_COMMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "sim/core/time.h"
#include "wire/real_world.h"

namespace cli {

inline constexpr int kExitUsage = 64;
inline constexpr int kExitBadFile = 65;
inline constexpr int kExitNoFile = 66;
inline constexpr int kExitCantCreate = 73;  // sysexits EX_CANTCREAT: an output file

// Loads a scenario, or prints its one-line error and sets *code (65 bad
// file, 66 missing file) and, if given, *said to that line.
bool LoadOrSay(const std::string& path, scenarios::Scenario* s, int* code,
               std::string* said = nullptr);

// The harness error, or each violation with up to three witnesses, indented
// by `indent` spaces (the witnesses two more), one per line.
std::string ViolationsText(const scenarios::RunOutput& out, int indent);
// The failure's signature and its causal chain, one event per line; empty
// for a pass or a run without violations.
std::string SignatureText(const scenarios::RunOutput& out, int indent);
// The same, on stdout.
void PrintViolations(const scenarios::RunOutput& out, int indent);
void PrintSignature(const scenarios::RunOutput& out, int indent);

// The producer profiles' names ("sarama-1.42.1", "sarama-main") and the
// schedule policies' ("fifo", ...), for the flags that take one.
std::vector<std::string> ProfileNames();
std::vector<std::string> PolicyNames();

// `word` as one shell word, for a command a report gives to run again: as
// it is when nothing in it is special to the shell, else single-quoted.
std::string ShellWord(const std::string& word);

// Writes `text` to `path`; false, with a line on stderr, if it cannot.
bool WriteText(const std::string& path, const std::string& text);
// Creates `dir` and its parents; false, with a line on stderr, if it cannot.
bool MakeDirectory(const std::string& dir);

// One real trial's line: "FILE: trial T/N: VERDICT client=NAME VERSION t=..
// wall=.. cpu=.. load=.. connections=.. acked=.. errors=..".
std::string TrialLine(const std::string& file, int64_t t, int64_t trials, const wire::RealOutput& r,
                      const std::string& client);
// What the machine was doing over a set of real trials, said beside every
// real result (a real column moves with load): "machine: 2 cores, 1-minute
// load 0.52 on average before the trials (idle); the client spent 0.31 s
// of CPU per trial". Loaded: a load at or above the cores.
std::string MachineNote(double mean_load, double mean_client_cpu_s);
bool Loaded(double mean_load);

}  // namespace cli

#endif  // PRODSIM_CLI_COMMON_H_
