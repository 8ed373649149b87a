#include "cli/explore_report.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checks/verdict.h"
#include "cli/common.h"

namespace cli {
namespace {

using search::ExploreSummary;
using search::Finding;

const std::string kHarnessError(checks::VerdictName(checks::Verdict::kHarnessError));

// The command that replays a written file in the summary's world.
std::string Replay(const ExploreSummary& s, const std::string& path) {
  if (s.real && s.simulated) {
    return absl::StrCat("prodsim run ", ShellWord(path), " --client=", ShellWord(s.profile));
  }
  return s.real ? absl::StrCat("prodsim real ", ShellWord(path), " --client=", ShellWord(s.profile),
                               " --trials=10")
                : absl::StrCat("prodsim run ", ShellWord(path));
}

// Count and first seed (and, with `smallest`, the smallest file), as the
// table says them.
std::string Facts(const ExploreSummary& s, const Finding& f, bool smallest) {
  std::string out = absl::StrFormat(
      "%d failure(s) of %d runs, %s%s; first seed %d (run %d)\n", f.count, s.runs, f.first.verdict,
      f.first.check.empty() ? "" : absl::StrCat(" [", f.first.check, "]"), f.first.seed,
      f.first.index);
  if (f.smallest_path.empty()) {
    absl::StrAppend(&out, "no file written (explore ran without --out)\n");
  } else if (smallest) {
    absl::StrAppend(&out, "smallest ", f.smallest_path, " (", f.smallest_bytes, " bytes, seed ",
                    f.smallest.seed, ")\n");
  }
  if (!f.known_on.empty()) absl::StrAppend(&out, "known on ", f.known_on, " only\n");
  return out;
}

junit::Case SignatureCase(const ExploreSummary& s, const Finding& f) {
  junit::Case c{.name = f.signature, .classname = absl::StrCat("prodsim.explore.", s.profile)};
  if (s.known_given && f.known) {
    c.out = Facts(s, f, true);
    return c;
  }
  c.outcome = junit::Outcome::kFailure;
  c.message = absl::StrCat("new signature ", f.signature, ": ", f.count, " failures");
  // The verdict of the file the text says to replay, else the first run's.
  c.type = f.smallest_path.empty() ? f.first.verdict : f.smallest.verdict;
  if (!f.smallest_path.empty()) {
    c.text = absl::StrCat(f.smallest_path, " (", f.smallest_bytes,
                          " bytes)\nreplay: ", Replay(s, f.smallest_path), "\n");
  }
  absl::StrAppend(&c.text, Facts(s, f, false));
  return c;
}

junit::Case HarnessCase(const ExploreSummary& s) {
  junit::Case c{.name = "harness errors", .classname = absl::StrCat("prodsim.explore.", s.profile)};
  if (s.harness_errors == 0) return c;
  c.outcome = junit::Outcome::kError;
  c.type = kHarnessError;
  c.message = absl::StrCat(s.harness_errors, " of ", s.runs, " runs ended in a harness error");
  c.text =
      "the world could not be built as described, or the cluster model broke a rule of "
      "Kafka's; explore's found: lines say which\n";
  // The first run that ended so, whatever signature it is grouped under.
  const Finding* first = nullptr;
  for (const auto& [signature, f] : s.findings) {
    if (f.first.verdict == kHarnessError &&
        (first == nullptr || f.first.index < first->first.index)) {
      first = &f;
    }
  }
  if (first != nullptr) {
    absl::StrAppend(&c.text, "first seed ", first->first.seed, " (run ", first->first.index, ")\n");
  }
  return c;
}

}  // namespace

junit::Suite ExploreSuite(const ExploreSummary& s) {
  junit::Suite suite{.name = absl::StrCat("prodsim explore ", s.base_path),
                     .seconds = static_cast<double>(s.wall_ns) / 1e9};
  for (const Finding* f : search::TableOrder(s)) {
    if (f->signature == kHarnessError) continue;  // the harness errors case
    suite.cases.push_back(SignatureCase(s, *f));
  }
  suite.cases.push_back(HarnessCase(s));
  return suite;
}

bool CanWrite(const std::string& path) { return WriteText(path, ""); }

}  // namespace cli
