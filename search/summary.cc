#include "search/summary.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "checks/verdict.h"
#include "sim/core/prng.h"
#include "wire/json.h"

namespace search {
namespace {

namespace json = wire::json;
using json::Av;
using Kind = json::Value::Kind;

constexpr int64_t kFormat = 1;  // "prodsim_explore_summary": the shape below
constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The over-the-wire line's figures, from the trials.
std::string WireLine(const ExploreSummary& s) {
  std::vector<double> walls, cpus;
  double load = 0;
  int64_t loads = 0;
  for (const TrialFigures& t : s.trials) {
    walls.push_back(static_cast<double>(t.wall_ns) / 1e9);
    cpus.push_back(static_cast<double>(t.cpu_ns) / 1e9);
    if (t.load_centi >= 0) {
      load += static_cast<double>(t.load_centi) / 100.0;
      ++loads;
    }
  }
  if (s.simulated) {
    // The load decided nothing; the wall time is the search's speed.
    return absl::StrFormat(
        "  in simulated time: %s, %d run(s) on %u at once, median run %.2f s of wall time, "
        "harness errors %d; machine: %u cores; the client spent %.2f s of CPU per run "
        "(median)\n",
        s.client.empty() ? s.profile : s.client, s.runs, s.jobs, Median(walls), s.harness_errors,
        s.cores, Median(cpus));
  }
  return absl::StrFormat(
      "  over the wire: %s, %d trial(s) on %u at once, median trial %.2f s of wall "
      "time, harness errors %d; machine: %u cores, 1-minute load %.2f on average "
      "before the trials; the client spent %.2f s of CPU per trial (median)\n",
      s.client.empty() ? s.profile : s.client, s.runs, s.jobs, Median(walls), s.harness_errors,
      s.cores, loads == 0 ? -1.0 : load / static_cast<double>(loads), Median(cpus));
}

void AppendRun(std::string* out, const FailedRun& r) {
  absl::StrAppend(out, R"({"index": )", r.index, R"(, "seed": )", r.seed, R"(, "verdict": )",
                  json::Quote(r.verdict), R"(, "check": )", json::Quote(r.check), "}");
}

void AppendFinding(std::string* out, const Finding& f) {
  absl::StrAppend(out, "    {\"signature\": ", json::Quote(f.signature),
                  ", \"known\": ", f.known ? "true" : "false",
                  ", \"known_on\": ", json::Quote(f.known_on), ", \"count\": ", f.count,
                  ",\n     \"first\": ");
  AppendRun(out, f.first);
  absl::StrAppend(out, ",\n     \"smallest\": ");
  if (f.smallest_path.empty()) {
    absl::StrAppend(out, "null}");
    return;
  }
  absl::StrAppend(out, R"({"path": )", json::Quote(f.smallest_path), R"(, "bytes": )",
                  f.smallest_bytes, R"(, "run": )");
  AppendRun(out, f.smallest);
  absl::StrAppend(out, "}}");
}

// The reader's side: a parsed document and where its values stand.
class Reader {
 public:
  Reader(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  // "FILE:LINE:COLUMN" of a byte of the text (lines and columns from 1).
  std::string At(size_t offset) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::StrCat(path_, ":", line, ":", column);
  }
  absl::Status Bad(const json::Value& v, std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(At(v.offset), ": ", Av(what)));
  }

  // `object` is an object with exactly these members.
  absl::Status Keys(const json::Value& object, std::initializer_list<std::string_view> keys) const {
    if (object.kind != Kind::kObject) {
      return Bad(object, absl::StrCat("expected an object, not ", Av(json::KindName(object.kind))));
    }
    for (size_t i = 0; i < object.keys.size(); ++i) {
      if (std::find(keys.begin(), keys.end(), object.keys[i]) == keys.end()) {
        return Bad(object.items[i], absl::StrCat("unknown member \"", object.keys[i], "\""));
      }
    }
    for (std::string_view k : keys) {
      if (Find(object, k) == nullptr) {
        return Bad(object, absl::StrCat("no member \"", Av(k), "\""));
      }
    }
    return absl::OkStatus();
  }
  // REQUIRES: Keys(object, ...) named `key`.
  const json::Value& Member(const json::Value& object, std::string_view key) const {
    const json::Value* v = Find(object, key);
    PRODSIM_ASSERT(v != nullptr);
    return *v;
  }
  absl::StatusOr<const json::Value*> Typed(const json::Value& object, std::string_view key,
                                           Kind kind) const {
    const json::Value& v = Member(object, key);
    if (v.kind != kind) {
      return Bad(v, absl::StrCat("\"", Av(key), "\" is ", Av(json::KindName(v.kind)), ", expected ",
                                 Av(json::KindName(kind))));
    }
    return &v;
  }
  absl::StatusOr<int64_t> Int(const json::Value& object, std::string_view key, int64_t lo,
                              int64_t hi = kIntMax) const {
    ASSIGN_OR_RETURN(const json::Value* v, Typed(object, key, Kind::kInt));
    if (v->integer < lo || v->integer > hi) {
      return Bad(*v, absl::StrCat("\"", Av(key), "\" is ", v->integer, ", outside ", lo, "..", hi));
    }
    return v->integer;
  }
  absl::StatusOr<std::string> String(const json::Value& object, std::string_view key) const {
    ASSIGN_OR_RETURN(const json::Value* v, Typed(object, key, Kind::kString));
    return v->string;
  }
  absl::StatusOr<bool> Bool(const json::Value& object, std::string_view key) const {
    ASSIGN_OR_RETURN(const json::Value* v, Typed(object, key, Kind::kBool));
    return v->boolean;
  }
  absl::StatusOr<std::string> Digest(const json::Value& object, std::string_view key) const {
    ASSIGN_OR_RETURN(std::string d, String(object, key));
    if (d.size() != 16 || d.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Bad(Member(object, key), absl::StrCat("\"", Av(key), "\" is not 16 hex digits"));
    }
    return d;
  }

 private:
  static const json::Value* Find(const json::Value& object, std::string_view key) {
    for (size_t i = 0; i < object.keys.size(); ++i) {
      if (object.keys[i] == key) return &object.items[i];
    }
    return nullptr;
  }

  std::string_view text_;
  std::string path_;
};

absl::StatusOr<FailedRun> ReadRun(const Reader& r, const json::Value& v) {
  RETURN_IF_ERROR(r.Keys(v, {"index", "seed", "verdict", "check"}));
  FailedRun run;
  ASSIGN_OR_RETURN(const int64_t index, r.Int(v, "index", 0));
  ASSIGN_OR_RETURN(const int64_t seed, r.Int(v, "seed", 0));
  run.index = static_cast<uint64_t>(index);
  run.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(run.verdict, r.String(v, "verdict"));
  const absl::StatusOr<checks::Verdict> verdict = checks::ParseVerdict(run.verdict);
  if (!verdict.ok() || *verdict == checks::Verdict::kPass) {
    return r.Bad(r.Member(v, "verdict"), absl::StrCat("not a failing verdict: ", run.verdict));
  }
  ASSIGN_OR_RETURN(run.check, r.String(v, "check"));
  return run;
}

absl::StatusOr<Finding> ReadFinding(const Reader& r, const json::Value& v) {
  RETURN_IF_ERROR(r.Keys(v, {"signature", "known", "known_on", "count", "first", "smallest"}));
  Finding f;
  ASSIGN_OR_RETURN(f.signature, r.String(v, "signature"));
  if (f.signature.empty()) return r.Bad(r.Member(v, "signature"), "an empty signature");
  ASSIGN_OR_RETURN(f.known, r.Bool(v, "known"));
  ASSIGN_OR_RETURN(f.known_on, r.String(v, "known_on"));
  ASSIGN_OR_RETURN(f.count, r.Int(v, "count", 1));
  ASSIGN_OR_RETURN(f.first, ReadRun(r, r.Member(v, "first")));
  const json::Value& smallest = r.Member(v, "smallest");
  if (smallest.kind == Kind::kNull) return f;
  RETURN_IF_ERROR(r.Keys(smallest, {"path", "bytes", "run"}));
  ASSIGN_OR_RETURN(f.smallest_path, r.String(smallest, "path"));
  if (f.smallest_path.empty()) return r.Bad(r.Member(smallest, "path"), "an empty path");
  ASSIGN_OR_RETURN(f.smallest_bytes, r.Int(smallest, "bytes", 1));
  ASSIGN_OR_RETURN(f.smallest, ReadRun(r, r.Member(smallest, "run")));
  if (f.smallest.index < f.first.index) {
    return r.Bad(r.Member(smallest, "run"), "the smallest file's run comes before the first");
  }
  return f;
}

absl::Status ReadWire(const Reader& r, const json::Value& v, ExploreSummary* s) {
  RETURN_IF_ERROR(r.Keys(v, {"client", "jobs", "cores", "trials"}));
  ASSIGN_OR_RETURN(s->client, r.String(v, "client"));
  ASSIGN_OR_RETURN(const int64_t jobs, r.Int(v, "jobs", 1, 1 << 20));
  ASSIGN_OR_RETURN(const int64_t cores, r.Int(v, "cores", 1, 1 << 20));
  s->jobs = static_cast<unsigned>(jobs);
  s->cores = static_cast<unsigned>(cores);
  ASSIGN_OR_RETURN(const json::Value* trials, r.Typed(v, "trials", Kind::kArray));
  if (static_cast<int64_t>(trials->items.size()) != s->runs) {
    return r.Bad(*trials, absl::StrCat(trials->items.size(), " trials for ", s->runs, " runs"));
  }
  for (const json::Value& t : trials->items) {
    if (t.kind != Kind::kArray || t.items.size() != 3 || t.items[0].kind != Kind::kInt ||
        t.items[1].kind != Kind::kInt || t.items[2].kind != Kind::kInt || t.items[0].integer < 0 ||
        t.items[1].integer < 0 || t.items[2].integer < -1) {
      return r.Bad(t, "a trial is [wall_ns, cpu_ns, load_centi or -1]");
    }
    s->trials.push_back({.wall_ns = t.items[0].integer,
                         .cpu_ns = t.items[1].integer,
                         .load_centi = t.items[2].integer});
  }
  return absl::OkStatus();
}

// What the exploration was: base, world, known signatures, seeds, shards.
absl::Status ReadIdentity(const Reader& r, const json::Value& root, ExploreSummary* s) {
  const json::Value& base = r.Member(root, "base");
  RETURN_IF_ERROR(r.Keys(base, {"path", "fnv1a64"}));
  ASSIGN_OR_RETURN(s->base_path, r.String(base, "path"));
  ASSIGN_OR_RETURN(s->base_digest, r.Digest(base, "fnv1a64"));
  s->located["base"] = r.At(r.Member(base, "fnv1a64").offset);
  ASSIGN_OR_RETURN(s->profile, r.String(root, "profile"));
  ASSIGN_OR_RETURN(s->real, r.Bool(root, "real"));
  // "clock": a real client's, "simulated" or "wall"; null for the model.
  if (const json::Value& clock = r.Member(root, "clock"); clock.kind != Kind::kNull) {
    ASSIGN_OR_RETURN(const std::string text, r.String(root, "clock"));
    if (!s->real || (text != "simulated" && text != "wall")) {
      return r.Bad(clock,
                   "\"clock\" is \"simulated\" or \"wall\", and only where \"real\" is true");
    }
    s->simulated = text == "simulated";
  }
  ASSIGN_OR_RETURN(s->mock_faults, r.Bool(root, "mock_faults"));
  const json::Value& known = r.Member(root, "known");
  s->located["known"] = r.At(known.offset);
  if (known.kind != Kind::kNull) {
    RETURN_IF_ERROR(r.Keys(known, {"dir", "fnv1a64"}));
    s->known_given = true;
    ASSIGN_OR_RETURN(s->known_dir, r.String(known, "dir"));
    ASSIGN_OR_RETURN(s->known_digest, r.Digest(known, "fnv1a64"));
  }
  ASSIGN_OR_RETURN(const std::string seed, r.String(root, "seed"));
  if (!absl::SimpleAtoi(seed, &s->seed) || seed.empty() || seed[0] < '0' || seed[0] > '9') {
    return r.Bad(r.Member(root, "seed"), "\"seed\" is not a decimal count");
  }
  ASSIGN_OR_RETURN(const int64_t shards, r.Int(root, "shards", 1));
  ASSIGN_OR_RETURN(const int64_t shard, r.Int(root, "shard", 0, shards - 1));
  s->shards = static_cast<uint64_t>(shards);
  s->shards_in = {static_cast<uint64_t>(shard)};
  for (const char* key : {"profile", "real", "mock_faults", "seed", "shards", "shard"}) {
    s->located[key] = r.At(r.Member(root, key).offset);
  }
  return absl::OkStatus();
}

// Which runs: shard + i*shards for i < runs.
absl::Status ReadRuns(const Reader& r, const json::Value& root, ExploreSummary* s) {
  ASSIGN_OR_RETURN(s->runs, r.Int(root, "runs", 0));
  const json::Value& indexes = r.Member(root, "indexes");
  RETURN_IF_ERROR(r.Keys(indexes, {"first", "last", "stride"}));
  const int64_t shard = static_cast<int64_t>(s->shards_in[0]);
  const int64_t stride = static_cast<int64_t>(s->shards);
  RETURN_IF_ERROR(r.Int(indexes, "first", shard, shard).status());
  RETURN_IF_ERROR(r.Int(indexes, "stride", stride, stride).status());
  if (s->runs > (kIntMax - shard) / stride) return r.Bad(r.Member(root, "runs"), "too many runs");
  const json::Value& last = r.Member(indexes, "last");
  if (s->runs == 0) {
    if (last.kind != Kind::kNull) return r.Bad(last, "\"last\" of no runs is null");
  } else {
    const int64_t want = shard + (s->runs - 1) * stride;
    RETURN_IF_ERROR(r.Int(indexes, "last", want, want).status());
  }
  ASSIGN_OR_RETURN(s->wall_ns, r.Int(root, "wall_ns", 0));
  ASSIGN_OR_RETURN(s->failures, r.Int(root, "failures", 0, s->runs));
  ASSIGN_OR_RETURN(s->found_new, r.Int(root, "new", 0, s->failures));
  ASSIGN_OR_RETURN(s->harness_errors, r.Int(root, "harness_errors", 0, s->failures));
  return absl::OkStatus();
}

// The failures by check and by signature, which must add up.
absl::Status ReadFindings(const Reader& r, const json::Value& root, ExploreSummary* s) {
  ASSIGN_OR_RETURN(const json::Value* by_check, r.Typed(root, "by_check", Kind::kObject));
  int64_t sum = 0;
  for (size_t i = 0; i < by_check->keys.size(); ++i) {
    const json::Value& n = by_check->items[i];
    if (n.kind != Kind::kInt || n.integer < 1 || n.integer > s->failures) {
      return r.Bad(n, "a check's count is a count from 1 to the failures");
    }
    s->by_check[by_check->keys[i]] = n.integer;
    sum += n.integer;
  }
  if (sum != s->failures) {
    return r.Bad(*by_check, absl::StrCat("by check ", sum, " failures, not ", s->failures));
  }
  ASSIGN_OR_RETURN(const json::Value* signatures, r.Typed(root, "signatures", Kind::kArray));
  const uint64_t shard = s->shards_in[0];
  const auto runs = static_cast<uint64_t>(s->runs);
  int64_t counted = 0, not_known = 0;
  for (const json::Value& v : signatures->items) {
    ASSIGN_OR_RETURN(Finding f, ReadFinding(r, v));
    for (const FailedRun* run : {&f.first, &f.smallest}) {
      if (run == &f.smallest && f.smallest_path.empty()) continue;
      if (run->index % s->shards != shard || run->index / s->shards >= runs) {
        return r.Bad(v, absl::StrCat("run ", run->index, " is not one of this shard's"));
      }
    }
    counted += f.count;
    if (!f.known) not_known += f.count;
    const std::string signature = f.signature;
    if (!s->findings.emplace(signature, std::move(f)).second) {
      return r.Bad(v, absl::StrCat("signature ", signature, " twice"));
    }
  }
  if (counted != s->failures || not_known != s->found_new) {
    return r.Bad(*signatures, absl::StrCat("by signature ", counted, " failures and ", not_known,
                                           " new, not ", s->failures, " and ", s->found_new));
  }
  return absl::OkStatus();
}

// Refuses `b` beside `a` when they are not shards of one exploration.
absl::Status SameExploration(const ExploreSummary& a, const ExploreSummary& b) {
  auto where = [&](const char* key) {
    const auto it = b.located.find(key);
    return it == b.located.end() ? b.source : it->second;
  };
  auto refuse = [&](const char* key, const std::string& what, const std::string& mine,
                    const std::string& theirs) {
    return absl::InvalidArgumentError(absl::StrCat(where(key), ": ", what, " ", mine, ", but ",
                                                   a.source, " has ", theirs,
                                                   ": not a shard of the same exploration"));
  };
  if (a.base_digest != b.base_digest) {
    return refuse("base", "base digest", b.base_digest, a.base_digest);
  }
  if (a.seed != b.seed) {
    return refuse("seed", "root seed", absl::StrCat(b.seed), absl::StrCat(a.seed));
  }
  if (a.shards != b.shards) {
    return refuse("shards", "shards", absl::StrCat(b.shards), absl::StrCat(a.shards));
  }
  if (a.profile != b.profile || a.real != b.real || a.simulated != b.simulated) {
    return refuse("profile", "profile", b.profile, a.profile);
  }
  if (a.mock_faults != b.mock_faults) {
    return refuse("mock_faults", "mock faults", b.mock_faults ? "on" : "off",
                  a.mock_faults ? "on" : "off");
  }
  if (a.known_digest != b.known_digest) {
    auto known = [](const ExploreSummary& s) {
      return s.known_given ? absl::StrCat(s.known_dir, " (", s.known_digest, ")")
                           : std::string("none");
    };
    return refuse("known", "known signatures", known(b), known(a));
  }
  return absl::OkStatus();
}

// Adds `from`'s finding of a signature into `into`'s.
void MergeFinding(const Finding& from, Finding* into) {
  into->count += from.count;
  if (from.first.index < into->first.index) into->first = from.first;
  if (from.smallest_path.empty()) return;
  if (into->smallest_path.empty() || from.smallest_bytes < into->smallest_bytes ||
      (from.smallest_bytes == into->smallest_bytes && from.smallest.index < into->smallest.index)) {
    into->smallest_path = from.smallest_path;
    into->smallest_bytes = from.smallest_bytes;
    into->smallest = from.smallest;
  }
}

}  // namespace

std::string DigestText(std::string_view bytes) {
  return absl::StrFormat("%016x", sim::Fnv1a64(bytes));
}

std::string ProgressLine(const ExploreSummary& s) {
  const double seconds = static_cast<double>(s.wall_ns) / 1e9;
  std::string line =
      absl::StrFormat("[explore] runs=%d runs/s=%.1f failures=%d", s.runs,
                      static_cast<double>(s.runs) / std::max(seconds, 1e-9), s.failures);
  for (const auto& [name, n] : s.by_check) absl::StrAppend(&line, " ", name, "=", n);
  if (s.known_given) absl::StrAppend(&line, " new=", s.found_new);
  return line;
}

std::vector<const Finding*> TableOrder(const ExploreSummary& s) {
  std::vector<const Finding*> rows;
  for (const auto& [signature, f] : s.findings) rows.push_back(&f);
  // The map gives signature order; the stable sort keeps it within a count.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Finding* x, const Finding* y) { return x->count > y->count; });
  return rows;
}

std::string SummaryText(const ExploreSummary& s) {
  std::string out = absl::StrCat("summary: ", ProgressLine(s), "\n");
  if (s.real) absl::StrAppend(&out, WireLine(s));
  if (s.findings.empty()) return out;
  PRODSIM_ASSERT(s.failures > 0);
  absl::StrAppend(&out, "by signature (", s.findings.size(), "):\n");
  for (const Finding* f : TableOrder(s)) {
    absl::StrAppend(
        &out, absl::StrFormat(
                  "  %6d %5.1f%% %-5s %s%s first seed %d%s%s\n", f->count,
                  100.0 * static_cast<double>(f->count) / static_cast<double>(s.failures),
                  !s.known_given ? ""
                  : f->known     ? "known"
                                 : "new",
                  f->signature,
                  f->known_on.empty() ? "" : absl::StrCat(" (known on ", f->known_on, " only)"),
                  f->first.seed, f->smallest_path.empty() ? "" : ", smallest ", f->smallest_path));
  }
  return out;
}

int SummaryExitCode(const ExploreSummary& s) {
  if (s.known_given) return s.found_new > 0 ? 1 : 0;
  return s.failures > 0 ? 1 : 0;
}

std::string SummaryJson(const ExploreSummary& s) {
  PRODSIM_ASSERT(s.shards_in.size() == 1);
  const uint64_t shard = s.shards_in[0];
  PRODSIM_ASSERT(shard < s.shards);
  std::string out = absl::StrCat("{\n  \"prodsim_explore_summary\": ", kFormat, ",\n");
  absl::StrAppend(&out, "  \"base\": {\"path\": ", json::Quote(s.base_path),
                  ", \"fnv1a64\": ", json::Quote(s.base_digest), "},\n");
  absl::StrAppend(&out, "  \"profile\": ", json::Quote(s.profile), ",\n");
  absl::StrAppend(&out, "  \"real\": ", s.real ? "true" : "false", ",\n");
  absl::StrAppend(&out, "  \"clock\": ",
                  !s.real       ? "null"
                  : s.simulated ? "\"simulated\""
                                : "\"wall\"",
                  ",\n");
  absl::StrAppend(&out, "  \"mock_faults\": ", s.mock_faults ? "true" : "false", ",\n");
  absl::StrAppend(&out, "  \"known\": ",
                  s.known_given ? absl::StrCat("{\"dir\": ", json::Quote(s.known_dir),
                                               ", \"fnv1a64\": ", json::Quote(s.known_digest), "}")
                                : "null",
                  ",\n");
  // The root seed is any uint64 (--seed), past JSON's safe integers: a string.
  absl::StrAppend(&out, "  \"seed\": \"", s.seed, "\",\n");
  absl::StrAppend(&out, "  \"shards\": ", s.shards, ",\n  \"shard\": ", shard, ",\n");
  absl::StrAppend(&out, "  \"runs\": ", s.runs, ",\n");
  absl::StrAppend(&out, "  \"indexes\": {\"first\": ", shard, ", \"last\": ",
                  s.runs == 0 ? std::string("null")
                              : absl::StrCat(shard + static_cast<uint64_t>(s.runs - 1) * s.shards),
                  ", \"stride\": ", s.shards, "},\n");
  absl::StrAppend(&out, "  \"wall_ns\": ", s.wall_ns, ",\n  \"failures\": ", s.failures,
                  ",\n  \"new\": ", s.found_new, ",\n  \"harness_errors\": ", s.harness_errors,
                  ",\n");
  absl::StrAppend(&out, "  \"by_check\": {");
  const char* sep = "";
  for (const auto& [name, n] : s.by_check) {
    absl::StrAppend(&out, sep, json::Quote(name), ": ", n);
    sep = ", ";
  }
  absl::StrAppend(&out, "},\n  \"signatures\": [");
  sep = "\n";
  for (const Finding* f : TableOrder(s)) {
    absl::StrAppend(&out, sep);
    AppendFinding(&out, *f);
    sep = ",\n";
  }
  absl::StrAppend(&out, s.findings.empty() ? "],\n" : "\n  ],\n");
  if (!s.real) {
    absl::StrAppend(&out, "  \"wire\": null\n}\n");
    return out;
  }
  absl::StrAppend(&out, "  \"wire\": {\"client\": ", json::Quote(s.client), ", \"jobs\": ", s.jobs,
                  ", \"cores\": ", s.cores, ",\n           \"trials\": [");
  sep = "";
  for (const TrialFigures& t : s.trials) {
    absl::StrAppend(&out, sep, "[", t.wall_ns, ", ", t.cpu_ns, ", ", t.load_centi, "]");
    sep = ", ";
  }
  absl::StrAppend(&out, "]}\n}\n");
  return out;
}

absl::StatusOr<ExploreSummary> ParseSummary(const std::string& text, const std::string& path) {
  const Reader r(text, path);
  size_t error_at = 0;
  absl::StatusOr<json::Value> root = json::Parse(text, &error_at);
  if (!root.ok()) {
    // "JSON at byte N: what": the position is said as a line and column.
    std::string what(root.status().message());
    if (const size_t colon = what.find(": "); what.starts_with("JSON at byte ")) {
      what = absl::StrCat("not JSON: ", what.substr(colon + 2));
    }
    return absl::InvalidArgumentError(absl::StrCat(r.At(error_at), ": ", what));
  }
  RETURN_IF_ERROR(
      r.Keys(*root, {"prodsim_explore_summary", "base", "profile", "real", "clock", "mock_faults",
                     "known", "seed", "shards", "shard", "runs", "indexes", "wall_ns", "failures",
                     "new", "harness_errors", "by_check", "signatures", "wire"}));
  RETURN_IF_ERROR(r.Int(*root, "prodsim_explore_summary", kFormat, kFormat).status());
  ExploreSummary s;
  s.source = path;
  RETURN_IF_ERROR(ReadIdentity(r, *root, &s));
  RETURN_IF_ERROR(ReadRuns(r, *root, &s));
  RETURN_IF_ERROR(ReadFindings(r, *root, &s));
  const json::Value& wire = r.Member(*root, "wire");
  if (s.real != (wire.kind != Kind::kNull)) {
    return r.Bad(wire, s.real ? "a summary over the wire has its \"wire\" figures"
                              : "a model summary has no \"wire\" figures");
  }
  if (s.real) RETURN_IF_ERROR(ReadWire(r, wire, &s));
  return s;
}

absl::StatusOr<ExploreSummary> ReadSummary(const std::string& path) {
  // One byte past the reader's limit, so that the error says the size.
  std::string text;
  RETURN_IF_ERROR(base::ReadFileUpTo(path, json::kTextBytesMax, &text));
  if (text.size() > json::kTextBytesMax) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": more than ", json::kTextBytesMax, " bytes, not a summary"));
  }
  return ParseSummary(text, path);
}

absl::StatusOr<ExploreSummary> MergeSummaries(const std::vector<ExploreSummary>& shards,
                                              std::vector<std::string>* notes) {
  PRODSIM_ASSERT(!shards.empty());
  ExploreSummary out = shards[0];
  out.shards_in.clear();
  out.runs = out.wall_ns = out.failures = out.found_new = out.harness_errors = 0;
  out.by_check.clear();
  out.findings.clear();
  out.trials.clear();
  out.client.clear();
  std::map<uint64_t, const ExploreSummary*> by_shard;
  std::vector<std::pair<uint64_t, TrialFigures>> trials;  // by global index
  for (const ExploreSummary& s : shards) {
    PRODSIM_ASSERT(s.shards_in.size() == 1);
    RETURN_IF_ERROR(SameExploration(shards[0], s));
    const uint64_t shard = s.shards_in[0];
    if (const auto [it, added] = by_shard.emplace(shard, &s); !added) {
      const auto at = s.located.find("shard");
      return absl::InvalidArgumentError(
          absl::StrCat(at == s.located.end() ? s.source : at->second, ": shard ", shard, " of ",
                       s.shards, " given twice (", it->second->source, " is that shard too)"));
    }
    out.runs += s.runs;
    out.wall_ns += s.wall_ns;
    out.failures += s.failures;
    out.found_new += s.found_new;
    out.harness_errors += s.harness_errors;
    for (const auto& [name, n] : s.by_check) out.by_check[name] += n;
    for (const auto& [signature, f] : s.findings) {
      const auto [it, added] = out.findings.emplace(signature, f);
      if (!added) MergeFinding(f, &it->second);
    }
    for (size_t i = 0; i < s.trials.size(); ++i)
      trials.emplace_back(shard + i * s.shards, s.trials[i]);
    if (s.real && (s.jobs != out.jobs || s.cores != out.cores)) {
      notes->push_back(absl::StrCat(s.source, " ran ", s.jobs, " at once on ", s.cores, " cores, ",
                                    shards[0].source, " ", out.jobs, " on ", out.cores,
                                    ": the over-the-wire line says the latter's"));
    }
  }
  for (const auto& [shard, s] : by_shard) {
    out.shards_in.push_back(shard);
    if (out.client.empty()) out.client = s->client;  // the lowest shard's, as run 0's
  }
  std::sort(trials.begin(), trials.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [index, t] : trials) out.trials.push_back(t);
  return out;
}

}  // namespace search
