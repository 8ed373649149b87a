// The prodsim command line: its subcommands, each declared once (a name, a
// one-line summary, a paragraph, its flags on a Flags, and the function that
// runs it), and Main, which parses argv with CLI11 and runs the subcommand.
// `prodsim help` and `prodsim SUB --help` print what the declarations say;
// the exit-code table of the help is made from the verdicts' own exit codes.
//
// Exit codes of the command line itself: 0 for help, kExitUsage (64) for a
// bad command line (one line on stderr), else the subcommand's.
#ifndef PRODSIM_CLI_COMMAND_LINE_H_
#define PRODSIM_CLI_COMMAND_LINE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/flags.h"

namespace cli {

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Declares subcommand `name`: `summary` is its line in `prodsim help`,
  // `details` the paragraph its --help ends with. `run` runs it once its
  // flags are parsed and checked (it is given them, for Flags::Given), and
  // returns the exit code. Declare the
  // flags on the returned Flags (it lives as long as this).
  Flags& Add(const std::string& name, const std::string& summary, const std::string& details,
             std::function<int(const Flags&)> run);

  // Parses argv (argv[1] the subcommand) and runs the subcommand; the exit
  // code.
  int Main(int argc, char** argv);

  // The help: every subcommand with its flags, and the exit codes.
  std::string Help() const;
  // One subcommand's help; REQUIRES: `name` was added.
  std::string Help(const std::string& name) const;

  // The subcommands, in the order added.
  std::vector<const Flags*> Subcommands() const;

 private:
  struct Sub {
    std::unique_ptr<Flags> flags;
    std::function<int(const Flags&)> run;
  };
  const Sub* Find(const std::string& name) const;

  std::unique_ptr<CLI::App> root_;
  std::vector<Sub> subs_;
};

// The table of exit codes, one per line: the verdicts' (scenarios::ExitCode
// over every Verdict) and the command line's own (64, 65, 66, 70, 73).
std::string ExitCodeTable();

// Declares every prodsim subcommand (cli/prodsim.cc and the files it names).
void DeclareProdsim(CommandLine* cl);
// Each file's own subcommands.
void DeclareScenarioCommands(CommandLine* cl);  // cli/prodsim.cc
void DeclareMerge(CommandLine* cl);             // cli/merge.cc
void DeclareBench(CommandLine* cl);             // cli/bench.cc
void DeclareReal(CommandLine* cl);              // cli/real.cc
void DeclareFidelity(CommandLine* cl);          // cli/fidelity.cc

}  // namespace cli

#endif  // PRODSIM_CLI_COMMAND_LINE_H_
