// prodsim merge: the summaries of `prodsim explore --shard=I/N --summary`
// runs (a CI matrix's shards) read back, added up and printed as the one
// summary a single explore of all their runs prints (search/summary.h), with
// its JUnit report (cli/explore_report.h) and its exit code.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_line.h"
#include "cli/common.h"
#include "cli/explore_report.h"
#include "cli/junit.h"
#include "search/summary.h"

namespace cli {
namespace {

struct MergeArgs {
  std::vector<std::string> files;
  std::string junit;
};

// The shards of N that `merged` lacks, as "1, 3" (the first 10, then "...").
std::string Missing(const search::ExploreSummary& merged) {
  constexpr size_t kListed = 10;
  const std::set<uint64_t> have(merged.shards_in.begin(), merged.shards_in.end());
  std::vector<uint64_t> missing;
  for (uint64_t i = 0; i < merged.shards && missing.size() <= kListed; ++i) {
    if (!have.contains(i)) missing.push_back(i);
  }
  if (missing.size() <= kListed) return absl::StrJoin(missing, ", ");
  missing.pop_back();
  return absl::StrCat(absl::StrJoin(missing, ", "), ", ...");
}

int Merge(const MergeArgs& a) {
  if (a.files.empty()) {
    std::fprintf(stderr, "prodsim: merge needs the shards' summary files (explore --summary)\n");
    return kExitUsage;
  }
  std::vector<search::ExploreSummary> shards;
  for (const std::string& path : a.files) {
    absl::StatusOr<search::ExploreSummary> s = search::ReadSummary(path);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.status().message()).c_str());
      return absl::IsNotFound(s.status()) ? kExitNoFile : kExitBadFile;
    }
    shards.push_back(*std::move(s));
  }
  std::vector<std::string> notes;
  absl::StatusOr<search::ExploreSummary> merged = search::MergeSummaries(shards, &notes);
  if (!merged.ok()) {
    std::fprintf(stderr, "%s\n", std::string(merged.status().message()).c_str());
    return kExitBadFile;
  }
  if (merged->shards_in.size() < merged->shards) {
    notes.push_back(absl::StrCat(merged->shards - merged->shards_in.size(), " of ", merged->shards,
                                 " shards not given (", Missing(*merged),
                                 "): the summary covers the runs of the others only"));
  }
  for (const std::string& note : notes) std::fprintf(stderr, "prodsim merge: %s\n", note.c_str());
  std::fputs(search::SummaryText(*merged).c_str(), stdout);
  if (!a.junit.empty() && !junit::WriteFile(a.junit, {ExploreSuite(*merged)})) {
    return kExitCantCreate;
  }
  return search::SummaryExitCode(*merged);
}

}  // namespace

void DeclareMerge(CommandLine* cl) {
  auto a = std::make_shared<MergeArgs>();
  Flags& f =
      cl->Add("merge", "add up the summaries of explore's shards",
              "Reads the --summary files of `prodsim explore --shard=I/N` runs of one exploration\n"
              "(the same base file, by its digest, root seed, N, profile, --mock-faults and\n"
              "--known) and prints the summary one explore of all their runs prints: the counts,\n"
              "and by signature the count, the first seed and the smallest file, with runs/s\n"
              "over the summed wall time. The smallest files' paths are as each explore wrote\n"
              "them, relative to the directory it ran in: upload each shard's --out directory as\n"
              "it is. Refuses (exit 65, FILE:LINE:COLUMN) files of different explorations, a\n"
              "shard given twice, or what is not a summary; says on stderr which shards are\n"
              "missing. Exit 0: nothing (new) found; 1: found failures (with --known: a new\n"
              "signature), as explore's.",
              [a](const Flags&) { return Merge(*a); });
  f.Files(&a->files, "SUMMARY.json", "the shards' summaries (explore --summary)");
  f.Text("--junit", &a->junit, "OUT.xml",
         "write the merged JUnit report (explore --junit's, over all the shards' runs)");
}

}  // namespace cli
