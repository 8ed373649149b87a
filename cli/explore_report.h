// explore's reports for CI, made from its summary (search/summary.h), which
// `prodsim explore` and `prodsim merge` both write: the JUnit report
// (--junit) and, for explore, the summary's JSON (--summary).
//
// The JUnit report is one testsuite, "prodsim explore BASE", with one
// testcase per signature in the table's order (classname
// "prodsim.explore.PROFILE"): a known one passes, a new one (unclassified
// included; every one without --known, as explore's exit code has it) is a
// <failure> whose type is the verdict and whose text is the smallest file
// and its replay command. One more testcase, "harness errors", is an
// <error> when any run ended in a harness error; the harness-error
// signature has no case of its own, that one stands for it.
#ifndef PRODSIM_CLI_EXPLORE_REPORT_H_
#define PRODSIM_CLI_EXPLORE_REPORT_H_

#include <string>

#include "cli/junit.h"
#include "search/summary.h"

namespace cli {

junit::Suite ExploreSuite(const search::ExploreSummary& s);

// Whether `path` can be written, tried before a long search by writing it
// empty; false, with a line on stderr, if it cannot.
bool CanWrite(const std::string& path);

}  // namespace cli

#endif  // PRODSIM_CLI_EXPLORE_REPORT_H_
