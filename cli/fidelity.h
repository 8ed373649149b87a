// prodsim fidelity: the model's verdict distribution over schedule seeds
// beside a real client's over wire trials, per scenario file.
#ifndef PRODSIM_CLI_FIDELITY_H_
#define PRODSIM_CLI_FIDELITY_H_

namespace cli {

extern const char* const kFidelityUsage;
int FidelityCommand(int argc, char** argv);

}  // namespace cli

#endif  // PRODSIM_CLI_FIDELITY_H_
