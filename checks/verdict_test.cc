#include "checks/verdict.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace checks {
namespace {

// Every verdict's name parses back to it, and an unknown name is an error.
TEST(Verdicts, NamesRoundTrip) {
  for (const VerdictInfo& info : kVerdictTable) {
    EXPECT_EQ(VerdictName(info.verdict), info.name);
    absl::StatusOr<Verdict> parsed = ParseVerdict(info.name);
    ASSERT_TRUE(parsed.ok()) << info.name;
    EXPECT_EQ(*parsed, info.verdict);
  }
  EXPECT_EQ(ParseVerdict("passed").status().message(), "unknown verdict 'passed'");
}

// The exit codes scripts and CI depend on do not move.
TEST(Verdicts, ExitCodes) {
  EXPECT_EQ(ExitCode(Verdict::kPass), 0);
  EXPECT_EQ(ExitCode(Verdict::kSafety), 1);
  EXPECT_EQ(ExitCode(Verdict::kLiveness), 2);
  EXPECT_EQ(ExitCode(Verdict::kDeadlock), 3);
  EXPECT_EQ(ExitCode(Verdict::kProducerAssertion), 4);
  EXPECT_EQ(ExitCode(Verdict::kClientFailure), 5);
  EXPECT_EQ(ExitCode(Verdict::kPanic), 6);
  EXPECT_EQ(ExitCode(Verdict::kHarnessError), 70);
}

// The rendered table has a header and one row per verdict, by exit code.
TEST(Verdicts, ExitCodeTable) {
  const std::string table = ExitCodeTable();
  const std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2 + kVerdictCount);
  EXPECT_EQ(lines[0], "| exit code | verdict |");
  EXPECT_EQ(lines[2], "| 0 | pass: every check holds |");
  EXPECT_TRUE(lines.back().starts_with("| 70 | harness-error: ")) << lines.back();
}

// The rows of docs/usage.md's exit-code table ("| exit code | verdict |"), by
// code: the text of the verdict cell.
std::map<int, std::string> ReadmeExitCodes(const std::string& readme) {
  std::map<int, std::string> rows;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(readme, '\n')) {
    if (line == "| exit code | verdict |") {
      in_table = true;
      continue;
    }
    if (!in_table || absl::StartsWith(line, "|---")) continue;
    if (!absl::ConsumePrefix(&line, "| ")) break;
    const std::vector<std::string> cells = absl::StrSplit(line, absl::MaxSplits(" | ", 1));
    if (cells.size() != 2 || cells[0].empty() ||
        cells[0].find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    rows[std::stoi(cells[0])] = cells[1];
  }
  return rows;
}

// docs/usage.md's exit-code table gives each verdict its exit code and
// names it ("harness error" with a space for the hyphen). Until it carries
// ExitCodeTable() itself, the codes and names are what is tied; the CLI's
// own codes (64, 65, 66, 73) are not verdicts.
TEST(Verdicts, ReadmeExitCodesMatchTheTable) {
  const std::filesystem::path readme_path =
      std::filesystem::path(PRODSIM_SOURCE_DIR) / "docs" / "usage.md";
  std::ifstream in(readme_path);
  ASSERT_TRUE(in) << "no " << readme_path;
  std::stringstream text;
  text << in.rdbuf();
  const std::map<int, std::string> rows = ReadmeExitCodes(text.str());
  ASSERT_FALSE(rows.empty()) << readme_path << " has no exit-code table";
  for (const VerdictInfo& info : kVerdictTable) {
    SCOPED_TRACE(info.name);
    const auto it = rows.find(info.exit_code);
    ASSERT_NE(it, rows.end()) << "README has no row for exit code " << info.exit_code;
    std::string spaced(info.name);
    std::replace(spaced.begin(), spaced.end(), '-', ' ');
    EXPECT_TRUE(it->second.starts_with(info.name) || it->second.starts_with(spaced))
        << "README's row " << info.exit_code << " is '" << it->second << "'";
  }
}

}  // namespace
}  // namespace checks
