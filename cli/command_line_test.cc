// The command line as a person meets it: every subcommand's --help exits 0
// and lists every flag the subcommand declares; a bad count, a bad duration,
// an unknown flag or a missing value is one line on stderr and exit 64.
#include "cli/command_line.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "gtest/gtest.h"

namespace cli {
namespace {

// Runs `prodsim ARGS...` in this process; the exit code, and what it wrote.
struct Ran {
  int code = -1;
  std::string out, err;
};
Ran Prodsim(std::vector<std::string> args) {
  CommandLine cl;
  DeclareProdsim(&cl);
  args.insert(args.begin(), "prodsim");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Ran r;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  r.code = cl.Main(static_cast<int>(argv.size()), argv.data());
  r.out = testing::internal::GetCapturedStdout();
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

int Lines(const std::string& text) {
  return static_cast<int>(
      std::vector<std::string>(absl::StrSplit(text, '\n', absl::SkipEmpty())).size());
}

std::vector<std::string> SubcommandNames() {
  CommandLine cl;
  DeclareProdsim(&cl);
  std::vector<std::string> names;
  for (const Flags* f : cl.Subcommands()) names.push_back(f->name());
  return names;
}

// Goal: each subcommand's help, however asked for, names each of its flags.
TEST(CommandLineTest, EverySubcommandsHelpListsEveryDeclaredFlag) {
  CommandLine cl;
  DeclareProdsim(&cl);
  ASSERT_GE(cl.Subcommands().size(), 13u);
  for (const Flags* f : cl.Subcommands()) {
    SCOPED_TRACE(f->name());
    const Ran help = Prodsim({f->name(), "--help"});
    EXPECT_EQ(help.code, 0);
    EXPECT_EQ(help.err, "");
    EXPECT_EQ(Prodsim({"help", f->name()}).out, help.out);
    EXPECT_EQ(Prodsim({f->name(), "-h"}).out, help.out);
    int flags = 0;
    for (const CLI::Option* option : f->app()->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        ++flags;
        EXPECT_TRUE(absl::StrContains(help.out, "--" + name)) << "--" << name << " not in:\n"
                                                              << help.out;
      }
    }
    EXPECT_GT(flags, 0);
  }
}

// Goal: `prodsim help` and `prodsim --help` list every subcommand, and the
// exit codes made from the verdicts.
TEST(CommandLineTest, HelpListsEverySubcommandAndTheExitCodes) {
  const Ran help = Prodsim({"help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(Prodsim({"--help"}).out, help.out);
  for (const std::string& name : SubcommandNames()) {
    EXPECT_TRUE(absl::StrContains(help.out, name)) << name;
  }
  for (const char* code : {"  0  pass", "  1  safety", "  4  producer-assertion", "  6  panic",
                           "  64  usage", "  70  harness-error", "  73  "}) {
    EXPECT_TRUE(absl::StrContains(help.out, code)) << code << " not in:\n" << help.out;
  }
}

// Goal: bad input is one line and exit 64, naming what was wrong.
TEST(CommandLineTest, BadFlagsAreOneLineUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"explore", "--base=x.toml", "--runs=ten"}, "bad explore flag '--runs=ten'"},
      {{"explore", "--base=x.toml", "--runs=-1"}, "bad explore flag '--runs=-1'"},
      {{"explore", "--base=x.toml", "--runs=99999999999999999999999"}, "--runs takes"},
      {{"explore", "--base=x.toml", "--time=5parsecs"}, "--time takes a positive duration"},
      {{"explore", "--base=x.toml", "--time=0s"}, "--time takes a positive duration"},
      {{"explore", "--base=x.toml", "--shard=3/3"}, "--shard takes I/N with I < N"},
      {{"run", "--frobnicate", "x.toml"}, "unknown flag '--frobnicate'"},
      {{"run", "--trace"}, "run: "},
      {{"bench", "--runs"}, "bench: "},
      {{"shrink", "x.toml", "-o"}, "shrink: "},
      {{"real", "x.toml", "--client=c", "--trials=0"}, "--trials takes a count from 1 to 10000"},
      {{"fidelity", "x.toml", "--client=c", "--policy=lifo"}, "unknown --policy 'lifo'"},
      {{"decode", "x", "-o", "y", "--profile=kafka-go"}, "unknown --profile 'kafka-go'"},
      {{"frobnicate"}, "unknown subcommand 'frobnicate'"},
      {{}, "no subcommand"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrJoin(c.args, " "));
    const Ran r = Prodsim(c.args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, "prodsim: ")) << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.says)) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// Goal: the one integer parser takes digits only, within its bounds.
TEST(CommandLineTest, ParseCountTakesDigitsWithinBounds) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseCount("0", 0, 10, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseCount("18446744073709551615", 0, UINT64_MAX, &v));
  EXPECT_EQ(v, UINT64_MAX);
  v = 7;
  for (const char* bad :
       {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "18446744073709551616", "11"}) {
    EXPECT_FALSE(ParseCount(bad, 0, 10, &v)) << bad;
  }
  EXPECT_EQ(v, 7u);
}

// Goal: the one duration parser takes the scenario file's durations, positive.
TEST(CommandLineTest, ParsePositiveDurationTakesTheScenarioFormsOnly) {
  sim::Duration d;
  EXPECT_TRUE(ParsePositiveDuration("250ms", &d));
  EXPECT_EQ(d, sim::Duration::Millis(250));
  EXPECT_TRUE(ParsePositiveDuration("5s", &d));
  EXPECT_EQ(d, sim::Duration::Seconds(5));
  EXPECT_TRUE(ParsePositiveDuration("2m", &d));
  EXPECT_EQ(d, sim::Duration::Seconds(120));
  for (const char* bad : {"", "5", "0s", "-5s", "5parsecs", "s"}) {
    EXPECT_FALSE(ParsePositiveDuration(bad, &d)) << bad;
  }
}

}  // namespace
}  // namespace cli
