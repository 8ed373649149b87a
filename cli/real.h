// prodsim real and prodsim serve: the real-time world (wire/) from the
// command line.
#ifndef PRODSIM_CLI_REAL_H_
#define PRODSIM_CLI_REAL_H_

namespace cli {

extern const char* const kRealUsage;
int RealCommand(int argc, char** argv);
int ServeCommand(int argc, char** argv);

}  // namespace cli

#endif  // PRODSIM_CLI_REAL_H_
