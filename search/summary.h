// explore's summary as data: what `prodsim explore` prints at its end
// (SummaryText), writes with --summary (SummaryJson) and turns into a JUnit
// report, and what `prodsim merge` reads back from each shard's file
// (ReadSummary), adds up (MergeSummaries) and prints with the same
// SummaryText. A CI matrix runs `explore --shard=I/N` on N runners and
// merges their summaries into the one table a single runner would print.
//
// Runs are numbered globally: shard s of N runs its runs i = 0, 1, ... as
// global index i*N+s (scenarios::ExploreSeed), and consumes them in that
// order. So "first" (the lowest global index) and "smallest" (explore's
// rule: the fewest bytes of scenario text, the lowest global index among
// those, never a harness error's file) are the same whether the runs were
// done by one process or by shards: the merge of shards 0..N-1 of --runs=R
// prints what one process prints for --runs=N*R, but for runs/s (over the
// summed wall time) and the directories of the files.
//
// The JSON (one object, written by hand; read with wire/json.h's strict
// reader, so at most 1 MiB and integers only): what the exploration was
// (base path and digest, profile, mock faults, --known, root seed, shards),
// which runs this file covers, the counts, and one entry per signature.
// docs/usage.md shows its shape.
#ifndef PRODSIM_SEARCH_SUMMARY_H_
#define PRODSIM_SEARCH_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace search {

// One run that failed: its global index, its scenario's seed, its verdict
// and deciding check ("" when no check decided it: a deadlock, a harness
// error).
struct FailedRun {
  uint64_t index = 0;
  uint64_t seed = 0;
  std::string verdict = {};
  std::string check = {};
};

// The failures of one signature.
struct Finding {
  std::string signature = {};
  // Against --known on the summary's profile; when not known, the profiles
  // whose files record it ("" none).
  bool known = false;
  std::string known_on = {};
  int64_t count = 0;
  FailedRun first = {};
  // The smallest file written (see the file comment): its path as explore
  // wrote it (relative to where explore ran), "" when none was (no --out, or
  // only harness errors), and its size in bytes.
  std::string smallest_path = {};
  int64_t smallest_bytes = 0;
  FailedRun smallest = {};
};

// One real trial (explore --client), for the over-the-wire line.
struct TrialFigures {
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;
  int64_t load_centi = -1;  // the 1-minute load before it, in hundredths; -1 unknown
};

struct ExploreSummary {
  // What the runs were; the shards of one exploration agree on all of it.
  std::string base_path;    // as given to explore
  std::string base_digest;  // FNV-1a 64 of the base file's bytes, 16 hex digits
  std::string profile;      // the model's producer profile, or the real client's name
  bool real = false;        // a real client's (explore --client)
  bool simulated = false;   // that client in simulated time (JSON "clock"), not a wall-clock sample
  bool mock_faults = false;
  bool known_given = false;  // --known named signatures: findings are known or new
  std::string known_dir;
  std::string known_digest;  // of the known signatures and their profiles
  uint64_t seed = 1;
  uint64_t shards = 1;
  // Which runs: explore's own summary is one shard's runs 0..runs-1; a
  // merged one, the union of `shards_in`'s.
  std::vector<uint64_t> shards_in;  // ascending
  int64_t runs = 0;
  int64_t wall_ns = 0;
  int64_t failures = 0;
  int64_t found_new = 0;  // failures whose signature is not known (counted with --known only)
  int64_t harness_errors = 0;
  std::map<std::string, int64_t> by_check;  // the failing check, or the verdict
  std::map<std::string, Finding> findings;  // by signature
  // Over the wire: the first trial's client and version, trials at once, the
  // machine's cores, and each trial's figures (by global index).
  std::string client;
  unsigned jobs = 0;
  unsigned cores = 0;
  std::vector<TrialFigures> trials;
  // Where a summary read from a file came from, and where each field merge
  // compares stands in it ("FILE:LINE:COLUMN"), for merge's errors.
  std::string source;
  std::map<std::string, std::string> located;
};

// The line explore prints as progress and opens its summary with:
// "[explore] runs=N runs/s=R failures=F CHECK=n ... [new=K]" (no newline).
std::string ProgressLine(const ExploreSummary& s);

// The summary lines: "summary: " and ProgressLine, the over-the-wire line
// (real only), and the table by signature (by count, then signature).
std::string SummaryText(const ExploreSummary& s);

// The findings in the table's order: by count, then signature.
std::vector<const Finding*> TableOrder(const ExploreSummary& s);

// explore's exit code for it: with --known 1 when a signature is new, else
// 1 when anything failed; 0 otherwise.
int SummaryExitCode(const ExploreSummary& s);

// REQUIRES: an explore summary of one shard (shards_in has one element).
std::string SummaryJson(const ExploreSummary& s);

// Reads a file SummaryJson wrote. Errors: NotFound (it cannot be read), or
// InvalidArgument with one line "FILE:LINE:COLUMN: what" (not a summary,
// or one whose counts do not add up).
absl::StatusOr<ExploreSummary> ReadSummary(const std::string& path);
// The same from text, `path` naming it in errors.
absl::StatusOr<ExploreSummary> ParseSummary(const std::string& text, const std::string& path);

// The summaries of the shards of one exploration as one. Refuses (an
// InvalidArgument of one line, "FILE:LINE:COLUMN: what") summaries of
// different bases, root seeds, shard counts, profiles, mock faults or known
// signatures, and a shard given twice. Shards may be missing (the merge
// covers the runs it was given). `notes`: what the merged lines cannot say
// (shards that ran on machines of different sizes). REQUIRES: non-empty.
absl::StatusOr<ExploreSummary> MergeSummaries(const std::vector<ExploreSummary>& shards,
                                              std::vector<std::string>* notes);

// The FNV-1a 64 digest of `bytes` as 16 hex digits.
std::string DigestText(std::string_view bytes);

}  // namespace search

#endif  // PRODSIM_SEARCH_SUMMARY_H_
