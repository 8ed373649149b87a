// prodsim explore, in either world: scenarios generated from a base
// (scenarios/explore.h Generate), each run once in a World (the model, or a
// real client over the wire: one trial), findings printed and written as
// they come, grouped by signature at the end, and the smallest file of each
// new signature shrunk (over the wire: kept while it fails in r of K
// trials).
//
// What a person sees does not depend on --jobs in the model (runs are
// consumed in index order, scenarios/parallel.h); over the wire each trial
// is a sample, so two explorations of the same seeds differ, and every
// line says which client and version ran it, and under what load.
#ifndef PRODSIM_SEARCH_EXPLORE_H_
#define PRODSIM_SEARCH_EXPLORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "scenarios/explore.h"
#include "scenarios/known_on.h"
#include "scenarios/scenario.h"
#include "search/summary.h"
#include "search/world.h"
#include "sim/core/time.h"

namespace search {

// The signatures counted as known, each for the worlds whose files record
// it. A model signature is known on the producer profiles that give it: a
// file's [expect] on the file's own profile, each [expect.profiles."NAME"]
// on NAME. A regression that brings a sarama-1.42.1 mechanism back on
// sarama-main is new there. A real client's signature is known on the
// client and versions its file's [expect] known_on names
// (scenarios/known_on.h), and new on any other version: the world of a
// real client is "NAME@VERSION" (WorldProfile: "kafkajs-fixes@2.3.1"). A real client's signature
// in a file without known_on is known wherever it shows.
class KnownSignatures {
 public:
  // `profile`: the producer profile the signature was recorded on.
  void Add(const std::string& signature, const std::string& profile);
  // A real client's finding, known on `on`'s client and versions.
  void Add(const std::string& signature, const scenarios::KnownOn& on, const std::string& text);
  bool empty() const { return by_signature_.empty() && by_client_.empty(); }
  // Whether `signature` is known in a world of `profile` (a model profile,
  // or a real client's "NAME@VERSION").
  bool Known(const std::string& signature, const std::string& profile) const;
  // The profiles and client versions `signature` is known on, "" if none
  // ("sarama-1.42.1", "librdkafka@2.0.2..2.15.1").
  std::string ProfilesOf(const std::string& signature) const;
  size_t size() const;
  // One line per signature, "SIGNATURE PROFILE, PROFILE", in order: what a
  // summary's digest of the known signatures is taken over.
  std::string Listing() const;

 private:
  static constexpr std::string_view kAnyWorld = "*";
  std::map<std::string, std::set<std::string>> by_signature_;
  // Real clients' findings with known_on: the parsed ranges by their text.
  std::map<std::string, std::map<std::string, scenarios::KnownOn>> by_client_;
};

struct ExploreOptions {
  std::string out;    // "": write nothing
  int64_t runs = -1;  // or, with time > 0, until then
  sim::Duration time;
  uint64_t seed = 1, shard = 0, shards = 1;
  bool keep_going = false;
  bool shrink = true;
  scenarios::GenerateOptions generate;
  KnownSignatures known;
  unsigned jobs = 1;
  // Over the wire: how a new signature's smallest file is shrunk (K trials
  // per candidate, kept when `shrink_needed` fail; at most shrink_time).
  int shrink_trials = 5;
  int shrink_needed = 2;
  sim::Duration shrink_time = sim::Duration::Seconds(600);
  // For the summary only: the base file as given, the digest of its bytes
  // (DigestText), and the --known directory.
  std::string base_path, base_digest, known_dir;
  // Called once the summary is printed and before anything is shrunk (over
  // the wire that can take long): writes it (explore --summary, --junit).
  // Nonzero: Explore returns it and shrinks nothing.
  std::function<int(const ExploreSummary&)> on_summary;
};

// Prints as it goes (stdout: findings and the summary, SummaryText;
// stderr: progress). Returns the exit code: 0 nothing (new) found, 1 found
// (SummaryExitCode), 73 a file could not be written, or on_summary's.
int Explore(const scenarios::Scenario& base, const World& world, const ExploreOptions& o);

// The signatures of the scenario files under `dir` (recursively): each
// file's [expect] signature on its profile and its [expect.profiles]
// entries' on theirs; a file that names none is run in the model, and its
// run's signature counts on its profile. False, with *code set (66, 65)
// and a line on stderr, if the directory or a file cannot be read.
bool LoadKnownSignatures(const std::string& dir, KnownSignatures* known, int* code);

// The profile explore's findings are known or new on: the model's base
// profile, or the real client's "NAME@VERSION" (a --client=CMD driver:
// its command).
std::string WorldProfile(const scenarios::Scenario& base, const World& world);

}  // namespace search

#endif  // PRODSIM_SEARCH_EXPLORE_H_
