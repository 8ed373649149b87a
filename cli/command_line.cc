#include "cli/command_line.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/assert.h"
#include "checks/verdict.h"
#include "cli/common.h"
#include "scenarios/runner.h"

namespace cli {
namespace {

constexpr int kNameColumn = 34;  // the flags' names and types, then their descriptions
constexpr int kLineMax = 100;

// CLI11's formatter, with each flag's description wrapped to the line.
class Formatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* option) const override {
    std::string out, line;
    for (const absl::string_view word :
         absl::StrSplit(CLI::Formatter::make_option_desc(option), ' ', absl::SkipEmpty())) {
      if (!line.empty() && line.size() + 1 + word.size() > kLineMax - kNameColumn) {
        absl::StrAppend(&out, out.empty() ? "" : "\n", line);
        line.clear();
      }
      absl::StrAppend(&line, line.empty() ? "" : " ", word);
    }
    absl::StrAppend(&out, out.empty() ? "" : "\n", line);
    return out;
  }
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "prodsim: %s\n", message.c_str());
  return kExitUsage;
}

}  // namespace

std::string ExitCodeTable() {
  std::vector<std::pair<int, std::string>> codes;
  // Every verdict, as its registry (checks/verdict.h) describes it.
  for (const checks::VerdictInfo& v : checks::kVerdictTable) {
    codes.emplace_back(v.exit_code,
                       absl::StrCat(std::string(v.name), ": ", std::string(v.meaning)));
  }
  codes.emplace_back(kExitUsage, "usage: a bad command line");
  codes.emplace_back(kExitBadFile, "a bad scenario file");
  codes.emplace_back(kExitNoFile, "a missing file");
  codes.emplace_back(kExitCantCreate, "an output file cannot be written");
  std::stable_sort(codes.begin(), codes.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "Exit codes:\n";
  for (const auto& [code, what] : codes) absl::StrAppend(&out, "  ", code, "  ", what, "\n");
  return out;
}

CommandLine::CommandLine() : root_(std::make_unique<CLI::App>("", "prodsim")) {
  root_->description(
      "prodsim: run, explore, shrink and check scenario files of a Kafka producer\n"
      "in a deterministic simulation (and against real clients over the wire).\n"
      "`prodsim SUBCOMMAND --help` (or `prodsim help SUBCOMMAND`) shows one\n"
      "subcommand's flags.");
  root_->require_subcommand(1);
  root_->footer(ExitCodeTable());
  auto formatter = std::make_shared<Formatter>();
  formatter->column_width(kNameColumn);
  root_->formatter(formatter);  // before Add: each subcommand takes its parent's
}

Flags& CommandLine::Add(const std::string& name, const std::string& summary,
                        const std::string& details, std::function<int(const Flags&)> run) {
  PRODSIM_ASSERT_MSG(Find(name) == nullptr, "a subcommand declared twice");
  CLI::App* app = root_->add_subcommand(name, summary);
  if (!details.empty()) app->footer(details);
  subs_.push_back(Sub{std::make_unique<Flags>(app, name), std::move(run)});
  return *subs_.back().flags;
}

const CommandLine::Sub* CommandLine::Find(const std::string& name) const {
  for (const Sub& s : subs_) {
    if (s.flags->name() == name) return &s;
  }
  return nullptr;
}

std::string CommandLine::Help() const { return root_->help("", CLI::AppFormatMode::All); }

std::string CommandLine::Help(const std::string& name) const {
  const Sub* sub = Find(name);
  PRODSIM_ASSERT(sub != nullptr);
  return sub->flags->app()->help("prodsim");
}

std::vector<const Flags*> CommandLine::Subcommands() const {
  std::vector<const Flags*> out;
  for (const Sub& s : subs_) out.push_back(s.flags.get());
  return out;
}

int CommandLine::Main(int argc, char** argv) {
  if (argc < 2) return UsageError("no subcommand (prodsim help lists them)");
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (argc == 2) {
      std::fputs(Help().c_str(), stdout);
      return 0;
    }
    if (argc == 3 && Find(argv[2]) != nullptr) {
      std::fputs(Help(argv[2]).c_str(), stdout);
      return 0;
    }
    return UsageError("help takes at most a subcommand's name (prodsim help lists them)");
  }
  const Sub* sub = Find(cmd);
  if (sub == nullptr) {
    return UsageError(absl::StrCat("unknown subcommand '", cmd, "' (prodsim help lists them)"));
  }
  if (const absl::Status s = sub->flags->CheckEmptyValues(argc - 2, argv + 2); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  // CLI11 reports through exceptions; they stop here, as exit codes.
  try {
    root_->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(Help(cmd).c_str(), stdout);
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return UsageError(
        absl::StrCat(cmd, ": ", e.what(), " (prodsim ", cmd, " --help lists its flags)"));
  }
  if (const absl::Status s = sub->flags->Check(); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  return sub->run(*sub->flags);
}

void DeclareProdsim(CommandLine* cl) {
  DeclareScenarioCommands(cl);
  DeclareMerge(cl);
  DeclareReal(cl);
  DeclareFidelity(cl);
  DeclareBench(cl);
}

}  // namespace cli
