// prodsim: the command line. Every subcommand, with its flags, is declared
// once in cli/ (DeclareProdsim, cli/command_line.h); `prodsim help` lists
// them and the exit codes.
#include "cli/command_line.h"

int main(int argc, char** argv) {
  cli::CommandLine command_line;
  cli::DeclareProdsim(&command_line);
  return command_line.Main(argc, argv);
}
