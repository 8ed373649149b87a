// JUnit XML, the test-report format GitHub, GitLab, Jenkins and Buildkite
// render as test results: <testsuites> of <testsuite> of <testcase>, a case
// passing, or with one <failure> (a check failed), <error> (the harness or
// the client could not run it) or <skipped>, and its <system-out>.
//
// The subset written is the one tools/junit.xsd describes (the attributes
// those systems read; ctest junit_reports validates every subcommand's
// report against it). Text is escaped for XML 1.0: the five markup
// characters as entities, characters XML 1.0 cannot hold (most C0 controls,
// invalid UTF-8) as U+FFFD.
#ifndef PRODSIM_CLI_JUNIT_H_
#define PRODSIM_CLI_JUNIT_H_

#include <string>
#include <string_view>
#include <vector>

namespace cli::junit {

enum class Outcome { kPass, kFailure, kError, kSkipped };

struct Case {
  std::string name = {};       // e.g. the scenario file's path, or the signature
  std::string classname = {};  // e.g. "prodsim.run.sarama-main"
  double seconds = 0;
  Outcome outcome = Outcome::kPass;
  std::string message = {};  // failure/error/skipped: one line (the verdict line)
  std::string type = {};     // failure/error: e.g. the verdict's name
  std::string text = {};     // failure/error: the body (witnesses, the replay command)
  std::string out = {};      // <system-out>; empty: none
};

struct Suite {
  std::string name = {};  // e.g. "prodsim run"
  double seconds = 0;
  std::vector<Case> cases = {};
};

// The document: <testsuites> with each suite's counts and time summed.
std::string Render(const std::vector<Suite>& suites);

// Writes Render(suites) to `path`; false, with a line on stderr, if it
// cannot (cli::WriteText).
bool WriteFile(const std::string& path, const std::vector<Suite>& suites);

// Empties `path` before a command's work: a report that cannot be written
// is said at the start (false, with a line on stderr), and a command that
// dies before WriteFile leaves an empty file, which no CI system reads as
// tests that passed.
bool Claim(const std::string& path);

// `text` escaped for an XML attribute or element (see the file comment).
std::string Escape(std::string_view text);

}  // namespace cli::junit

#endif  // PRODSIM_CLI_JUNIT_H_
