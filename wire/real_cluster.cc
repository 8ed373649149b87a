#include "wire/real_cluster.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/assert.h"
#include "fault_models/faults.h"
#include "scenarios/runner.h"
#include "wire/child.h"
#include "wire/client_lines.h"
#include "wire/drivers.h"
#include "wire/event_loop.h"
#include "wire/real_trial.h"

namespace wire {

using fault_models::FaultKind;
using fault_models::FaultParams;
using kafka::BrokerId;
using scenarios::Scenario;
using sim::Duration;
using sim::Time;
namespace fs = std::filesystem;

namespace {

// How long building a kafka-cluster may take (Maven with a cold repository).
constexpr Duration kBuildBound = Duration::Seconds(1800);
// The most brokers the supervisor starts (its --brokers bound).
constexpr int32_t kBrokersMax = 64;
// The defaults the simulation's faults use when `duration` is unset
// (fault_models/faults.cc: ShrinkIsr, PauseFetching, DelayProcessing,
// LatencySpike).
constexpr Duration kShrinkIsrDefault = Duration::Seconds(5);
constexpr Duration kLastingDefault = Duration::Seconds(1);

bool IsKafkaVersion(absl::string_view v) {
  const std::vector<absl::string_view> parts = absl::StrSplit(v, '.');
  if (parts.size() != 3) return false;
  return std::all_of(parts.begin(), parts.end(), [](absl::string_view p) {
    return !p.empty() && p.size() <= 4 &&
           std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
  });
}

// A Kafka topic name (Topic.validate: [a-zA-Z0-9._-], at most 249 bytes),
// which the supervisor's --topic takes as it is.
bool IsTopicName(absl::string_view name) {
  return !name.empty() && name.size() <= 249 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// The executable's directory's parent (the build tree, or the install
// prefix), or empty.
fs::path ExeParent() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path().parent_path();
}

// --- The supervisor ----------------------------------------------------------------

// The kafka-cluster process and its line protocol (wire/kafka/README.md):
// the start's answer ("ready", a "broker ID 127.0.0.1:PORT" line each,
// "end"; or "error REASON"), then one answer per command in the order sent:
// one line ("ok ..." or "error ..."), or for leaders and dump "ok", lines,
// "end".
class Supervisor {
 public:
  using Answer = std::function<void(std::vector<std::string> lines)>;

  explicit Supervisor(EventLoop& loop) : loop_(loop) {}

  absl::Status Start(std::vector<std::string> argv) {
    Child::Spec spec;
    spec.argv = std::move(argv);
    spec.keep_stdin_open = true;
    absl::StatusOr<std::unique_ptr<Child>> c =
        Child::Start(loop_, spec, [this](std::string&& line) { OnLine(std::move(line)); });
    if (!c.ok()) return c.status();
    child_ = *std::move(c);
    return absl::OkStatus();
  }

  // Each broker's real client port by id, once the cluster is ready.
  absl::StatusOr<absl::btree_map<int32_t, int>> AwaitReady(Time until) {
    while (!ready_ && start_error_.empty() && !Gone() && loop_.Now() < until) {
      loop_.Wait(std::min(until, loop_.Now() + Duration::Millis(100)), /*block=*/true);
    }
    if (ready_) return brokers_;
    std::string why = start_error_;
    if (why.empty()) {
      why = Gone() ? "the supervisor exited before it was ready"
                   : absl::StrCat("not ready within ", kStartBound.ToString(), "s");
    }
    return absl::UnavailableError(absl::StrCat("the real cluster did not start: ", why, Tail()));
  }

  // Sends `command`; `done` gets its answer's lines (never, if the
  // supervisor dies first).
  void Send(const std::string& command, Answer done) {
    child_->Write(command + "\n");
    waiting_.push_back(Waiting{command, std::move(done), {}});
  }

  // Sends `command` and runs the loop until its answer ("ok" first), or an
  // error: the answer's, or none by `until`.
  absl::StatusOr<std::vector<std::string>> Call(const std::string& command, Time until) {
    auto got = std::make_shared<std::optional<std::vector<std::string>>>();
    Send(command, [got](std::vector<std::string> lines) { *got = std::move(lines); });
    while (!got->has_value() && !Gone() && loop_.Now() < until) {
      loop_.Wait(std::min(until, loop_.Now() + Duration::Millis(100)), /*block=*/true);
    }
    if (!got->has_value()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "`", command, "`: ", Gone() ? "the supervisor exited" : "no answer in time", Tail()));
    }
    if (!absl::StartsWith((*got)->front(), "ok")) {
      return absl::InternalError(absl::StrCat("`", command, "`: ", (*got)->front()));
    }
    return **got;
  }

  bool Gone() { return child_ == nullptr || (child_->Poll() && child_->stdout_closed()); }
  void Kill() { child_.reset(); }

 private:
  struct Waiting {
    std::string command;
    Answer done;
    std::vector<std::string> lines;
  };

  void OnLine(std::string line) {
    if (!ready_) {
      OnStartLine(std::move(line));
      return;
    }
    if (waiting_.empty()) return;  // nothing asked: not the protocol, ignored
    Waiting& w = waiting_.front();
    w.lines.push_back(std::move(line));
    const bool multi =
        absl::StartsWith(w.command, "leaders") || absl::StartsWith(w.command, "dump");
    if (multi && w.lines.front() == "ok" && w.lines.back() != "end") return;
    Waiting done = std::move(w);
    waiting_.pop_front();
    if (done.done) done.done(std::move(done.lines));
  }

  void OnStartLine(std::string line) {
    if (!start_error_.empty()) return;
    if (line == "ready") {
      in_ready_ = true;
    } else if (in_ready_ && line == "end") {
      ready_ = true;
    } else if (absl::StartsWith(line, "error")) {
      start_error_ = line;
    } else if (in_ready_ && absl::StartsWith(line, "broker ")) {
      // "broker ID 127.0.0.1:PORT"
      const std::vector<std::string> f = absl::StrSplit(line, absl::ByAnyChar(" :"));
      int32_t id = -1;
      int port = 0;
      if (f.size() != 4 || !absl::SimpleAtoi(f[1], &id) || !absl::SimpleAtoi(f[3], &port) ||
          f[2] != "127.0.0.1" || id < 0 || port <= 0 || port > 65535) {
        start_error_ = absl::StrCat("a broker line that does not parse: ", line);
        return;
      }
      brokers_[id] = port;
    } else {
      start_error_ = absl::StrCat("a line that is not the protocol: ", line.substr(0, 200));
    }
  }

  // The supervisor's last stderr lines, for an error.
  std::string Tail() const {
    if (child_ == nullptr) return "";
    std::vector<absl::string_view> lines =
        absl::StrSplit(child_->stderr_text(), '\n', absl::SkipWhitespace());
    if (lines.empty()) return "";
    const size_t from = lines.size() > 3 ? lines.size() - 3 : 0;
    std::vector<absl::string_view> tail(lines.begin() + static_cast<ptrdiff_t>(from), lines.end());
    return absl::StrCat(" (its stderr ends: ", absl::StrJoin(tail, " | "), ")");
  }

  EventLoop& loop_;
  std::unique_ptr<Child> child_;
  bool in_ready_ = false;
  bool ready_ = false;
  std::string start_error_;
  absl::btree_map<int32_t, int> brokers_;
  std::deque<Waiting> waiting_;
};

// --- Finding and building the launcher ------------------------------------------------

// Where a kafka-cluster for `version` may be, in the order looked at.
std::vector<fs::path> LauncherDirs(const std::string& version) {
  const std::string sub = absl::StrCat("kafka-cluster-", version);
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("PRODSIM_KAFKA_CLUSTER_DIR"); env != nullptr && *env != '\0') {
    dirs.push_back(fs::path(env) / sub);
  }
  if (const fs::path up = ExeParent(); !up.empty()) {
    dirs.push_back(up / sub);  // a build tree: bin/../kafka-cluster-VERSION
    dirs.push_back(up / "libexec" / "prodsim" / sub);
  }
  dirs.push_back(fs::path(VersionsDir()) / sub);
  return dirs;
}

std::optional<fs::path> BuildScript() {
  std::vector<fs::path> candidates;
  if (const fs::path up = ExeParent(); !up.empty()) {
    candidates.push_back(up / "share" / "prodsim" / "wire" / "kafka" / "build.sh");
  }
#ifdef PRODSIM_SOURCE_WIRE_DIR
  candidates.push_back(fs::path(PRODSIM_SOURCE_WIRE_DIR) / "kafka" / "build.sh");
#endif
  for (const fs::path& p : candidates) {
    if (access(p.c_str(), R_OK) == 0) return p;
  }
  return std::nullopt;
}

// Runs wire/kafka/build.sh OUT VERSION as a Child (bounded, its whole tree
// killed past the bound), its lines on prodsim's stderr.
absl::Status Build(const fs::path& script, const fs::path& out, const std::string& version) {
  std::fprintf(stderr, "prodsim: building kafka-cluster for Kafka %s into %s (%s)\n",
               version.c_str(), out.c_str(), script.c_str());
  EventLoop loop;
  Child::Spec spec;
  // Its stderr joins its stdout, so that every line is said as it comes.
  spec.argv = {"bash",          "-c",         "exec bash \"$0\" \"$@\" 2>&1",
               script.string(), out.string(), version};
  absl::StatusOr<std::unique_ptr<Child>> child = Child::Start(
      loop, spec, [](std::string&& line) { std::fprintf(stderr, "  %s\n", line.c_str()); });
  if (!child.ok()) return child.status();
  const Time until = loop.Now() + kBuildBound;
  while (!((*child)->Poll() && (*child)->stdout_closed()) && loop.Now() < until) {
    loop.Wait(std::min(until, loop.Now() + Duration::Millis(200)), /*block=*/true);
  }
  if (!(*child)->exited() || (*child)->exit_code() != 0) {
    return absl::UnavailableError(absl::StrCat(
        "kafka-cluster for Kafka ", version, " could not be built (", script.string(),
        (*child)->exited() ? ": see its lines above)"
                           : absl::StrCat(": not done within ", kBuildBound.ToString(), "s)")));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ParseClusterFlag(std::string_view flag) {
  const absl::string_view value(flag.data(), flag.size());
  if (value.empty() || value == "sim") return std::optional<std::string>();
  constexpr absl::string_view kPrefix = "kafka@";
  if (absl::StartsWith(value, kPrefix) && IsKafkaVersion(value.substr(kPrefix.size()))) {
    return std::optional<std::string>(std::string(value.substr(kPrefix.size())));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--cluster=", value,
                   ": takes sim (the simulated cluster) or kafka@VERSION (real brokers, "
                   "e.g. kafka@2.6.2)"));
}

absl::StatusOr<std::string> FindKafkaCluster(const std::string& version) {
  if (!IsKafkaVersion(version)) {
    return absl::InvalidArgumentError(absl::StrCat("not a Kafka version: ", version));
  }
  const std::vector<fs::path> dirs = LauncherDirs(version);
  for (const fs::path& d : dirs) {
    if (access((d / "kafka-cluster").c_str(), X_OK) == 0) return (d / "kafka-cluster").string();
  }
  std::optional<fs::path> script = BuildScript();
  if (!script) {
    return absl::NotFoundError(absl::StrCat("no kafka-cluster for Kafka ", version, " (looked in ",
                                            dirs.front().string(),
                                            " ...) and no wire/kafka/build.sh to build one"));
  }
  // Into the build tree when prodsim runs from one, else the versions
  // directory (an install's prefix is not prodsim's to write).
  const fs::path up = ExeParent();
  const bool build_tree = !up.empty() && fs::exists(up / "CMakeCache.txt");
  const fs::path out = build_tree
                           ? up / absl::StrCat("kafka-cluster-", version)
                           : fs::path(VersionsDir()) / absl::StrCat("kafka-cluster-", version);
  const bool existed = fs::exists(out);
  if (absl::Status st = Build(*script, out, version); !st.ok()) {
    // What a failed build left (no launcher) is not kept to be found later.
    std::error_code ec;
    if (!existed) fs::remove_all(out, ec);
    return st;
  }
  if (access((out / "kafka-cluster").c_str(), X_OK) != 0) {
    return absl::UnavailableError(
        absl::StrCat("wire/kafka/build.sh made no ", (out / "kafka-cluster").string()));
  }
  return (out / "kafka-cluster").string();
}

absl::Status CheckRealCluster(const Scenario& s) {
  if (absl::StatusOr<scenarios::WorldPlan> plan = PlanRealWorld(s); !plan.ok()) {
    return plan.status();
  }
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const FaultKind kind = s.faults[i].kind;
    const char* why = nullptr;
    if (kind == FaultKind::kInjectError) {
      why =
          "a real broker's errors come from their causes, which the real cluster does not stage "
          "on demand";
    } else if (kind == FaultKind::kLogDirFailure) {
      why = "the supervisor cannot fail one log directory of a broker";
    } else if (fault_models::IsMockKind(kind)) {
      why = "a mock answers what no real broker does";
    }
    if (why == nullptr) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "fault ", i + 1, " (", std::string(fault_models::FaultKindName(kind)), " at ",
        s.faults[i].at.ToString(), ") has no real form: ", why, "; run it with --cluster=sim"));
  }
  if (s.cluster.brokers > kBrokersMax) {
    return absl::InvalidArgumentError(absl::StrCat("cluster.brokers = ", s.cluster.brokers,
                                                   ": the real cluster starts at most ",
                                                   kBrokersMax));
  }
  for (const scenarios::TopicSpec& t : s.cluster.topics) {
    if (!IsTopicName(t.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "topic \"", t.name, "\" is not a name Kafka takes ([a-zA-Z0-9._-], at most 249)"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> RealClusterNotes(const Scenario& s, const std::string& version) {
  std::vector<std::string> notes;
  if (!(s.network.latency == scenarios::LatencySpec{})) {
    notes.push_back("network.latency is not applied: the bytes cross real loopback");
  }
  // Buggify sites perturb the simulation's timing at random (slow requests,
  // fetches, metadata); a real cluster's timing varies by itself, so they
  // are left out rather than the file refused.
  if (!s.buggify.sites.empty()) {
    notes.push_back(
        "buggify sites are not applied: they perturb the simulated brokers' timing, and real "
        "brokers' timing varies by itself");
  }
  const scenarios::ClusterSpec defaults;
  std::vector<std::string> model_only;
  if (s.cluster.request_processing != defaults.request_processing) {
    model_only.push_back("request_processing");
  }
  if (s.cluster.metadata_delay_max != defaults.metadata_delay_max) {
    model_only.push_back("metadata_delay_max");
  }
  if (s.cluster.replica_fetch_interval != defaults.replica_fetch_interval) {
    model_only.push_back("replica_fetch_interval");
  }
  if (!model_only.empty()) {
    notes.push_back(absl::StrCat("cluster.", absl::StrJoin(model_only, ", cluster."),
                                 ": the model's; Kafka ", version, " brokers keep their own"));
  }
  absl::btree_set<FaultKind> kinds;
  for (const scenarios::FaultSpec& f : s.faults) kinds.insert(f.kind);
  if (kinds.contains(FaultKind::kShrinkIsr)) {
    notes.push_back(
        "shrink_isr pauses the broker (SIGSTOP) until its leader drops it from the ISR, after "
        "cluster.replica_lag_time_max, and resumes it at the end of duration or then: the broker "
        "stops leading too");
  }
  if (kinds.contains(FaultKind::kPauseFetching)) {
    notes.push_back("pause_fetching pauses the whole broker (SIGSTOP): it stops leading too");
  }
  if (kinds.contains(FaultKind::kDelayProcessing)) {
    notes.push_back(
        "delay_processing holds each request to the broker in the proxy; the broker is not slowed");
  }
  if (kinds.contains(FaultKind::kCrash)) {
    notes.push_back(
        "crash is kill -9; the restart at its heal waits until the cluster has dropped the broker");
  }
  return notes;
}

// --- The dump ---------------------------------------------------------------------------

namespace {

// "ID,ID,..." of the dump: digits, "-" (no header) or "x..." (not digits),
// both of the last read as 0.
std::vector<uint64_t> ParseIds(absl::string_view text) {
  std::vector<uint64_t> ids;
  for (absl::string_view id : absl::StrSplit(text, ',')) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(id, &v)) v = 0;
    ids.push_back(v);
  }
  return ids;
}

absl::StatusOr<DumpBatch> ParseBatch(const std::vector<absl::string_view>& f) {
  DumpBatch b;
  int32_t partition = 0, epoch = 0, txn = 0, control = 0;
  if (f.size() != 13 || !absl::SimpleAtoi(f[1], &b.broker) || !absl::SimpleAtoi(f[3], &partition) ||
      !absl::SimpleAtoi(f[4], &b.base_offset) || !absl::SimpleAtoi(f[5], &b.last_offset) ||
      !absl::SimpleAtoi(f[6], &b.producer_id) || !absl::SimpleAtoi(f[7], &epoch) ||
      !absl::SimpleAtoi(f[8], &b.base_seq) || !absl::SimpleAtoi(f[9], &b.last_seq) ||
      !absl::SimpleAtoi(f[10], &txn) || !absl::SimpleAtoi(f[11], &control) || epoch < INT16_MIN ||
      epoch > INT16_MAX || b.last_offset < b.base_offset) {
    return absl::InvalidArgumentError("a batch line that does not parse");
  }
  b.tp = kafka::TopicPartition{std::string(f[2]), kafka::PartitionId(partition)};
  b.epoch = static_cast<int16_t>(epoch);
  b.transactional = txn != 0;
  b.control = control != 0;
  b.record_ids = ParseIds(f[12]);
  return b;
}

}  // namespace

absl::StatusOr<ClusterDump> ParseDump(const std::vector<std::string>& lines) {
  ClusterDump dump;
  for (const std::string& line : lines) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!f.empty() && f[0] == "batch") {
      absl::StatusOr<DumpBatch> b = ParseBatch(f);
      if (!b.ok())
        return absl::InvalidArgumentError(absl::StrCat(b.status().message(), ": ", line));
      dump.batches.push_back(*std::move(b));
      continue;
    }
    int32_t broker = 0, partition = 0;
    int64_t hw = 0;
    if (f.size() == 5 && f[0] == "hw" && absl::SimpleAtoi(f[1], &broker) &&
        absl::SimpleAtoi(f[3], &partition) && absl::SimpleAtoi(f[4], &hw)) {
      dump.hw[kafka::TopicPartition{std::string(f[2]), kafka::PartitionId(partition)}][broker] = hw;
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat("a dump line that does not parse: ", line));
  }
  return dump;
}

namespace {

using Acked = absl::btree_map<std::pair<kafka::TopicPartition, int64_t>, std::pair<Time, BrokerId>>;

// Where each successful Produce response put its batch: (partition, base
// offset) -> when, and which broker answered (the first such answer).
Acked AckedAt(const kafka::History& h) {
  Acked acked;
  for (const kafka::ResponseEvent& r : h.responses) {
    if (r.api == kafka::ApiKey::kProduce && r.error == kafka::ErrorCode::NONE) {
      acked.try_emplace({r.tp, r.base_offset.value}, r.at, r.broker);
    }
  }
  return acked;
}

// When and where a batch of a final log was appended: the response that
// acknowledged its offset, else the request that carried it, else `end`
// on `replica`.
std::pair<Time, BrokerId> AppendedAt(const Acked& acked,
                                     const std::vector<FaultProxy::SentBatch>& sent,
                                     const kafka::TopicPartition& tp, const kafka::LogEntry& e,
                                     Time end, BrokerId replica) {
  if (const auto it = acked.find({tp, e.base_offset.value}); it != acked.end()) return it->second;
  for (const FaultProxy::SentBatch& b : sent) {
    if (b.tp == tp && b.producer_id == e.producer_id && b.epoch == e.epoch &&
        b.first_seq == e.first_seq && !b.record_ids.empty() && !e.record_ids.empty() &&
        b.record_ids.front() == e.record_ids.front()) {
      return {b.at, b.broker};
    }
  }
  return {end, replica};
}

}  // namespace

void MarkDuplicates(kafka::History& history) {
  // The final log's batches by partition and base offset.
  absl::btree_map<std::pair<kafka::TopicPartition, int64_t>, const kafka::LogEntry*> at;
  for (const auto& [tp, log] : history.final_logs) {
    for (const kafka::LogEntry& e : log) at[{tp, e.base_offset.value}] = &e;
  }
  // The first success answered at each offset, with its epoch and sequence.
  absl::btree_map<std::pair<kafka::TopicPartition, int64_t>, const kafka::ResponseEvent*> first;
  for (kafka::ResponseEvent& r : history.responses) {
    if (r.api != kafka::ApiKey::kProduce || r.error != kafka::ErrorCode::NONE) continue;
    const std::pair<kafka::TopicPartition, int64_t> key{r.tp, r.base_offset.value};
    const auto log = at.find(key);
    bool duplicate = false;
    if (log != at.end() && !r.record_ids.empty()) {
      const std::vector<uint64_t>& held = log->second->record_ids;
      // Cut at the high watermark: a prefix of what was sent is no sign.
      const bool cut = held.size() < r.record_ids.size() &&
                       std::equal(held.begin(), held.end(), r.record_ids.begin());
      // The offset of a batch holding other records, or a resend answered
      // with the offset it got before.
      const bool other_records = held != r.record_ids && !cut;
      const auto f = first.find(key);
      const bool answered_before =
          f != first.end() && f->second->epoch == r.epoch && f->second->first_seq == r.first_seq;
      duplicate = other_records || answered_before;
    }
    first.try_emplace(key, &r);
    r.duplicate = duplicate;
    if (!duplicate) r.record_ids.clear();  // a success keeps none (history.h)
  }
}

void AddDump(const ClusterDump& dump, const std::vector<FaultProxy::SentBatch>& sent, Time end,
             kafka::History& history) {
  const Acked acked = AckedAt(history);
  for (const auto& [tp, by_broker] : dump.hw) {
    PRODSIM_ASSERT(!by_broker.empty());
    // The replica with the highest high watermark (the lowest id of a tie):
    // its log up to there is what the cluster committed.
    auto best = by_broker.begin();
    for (auto it = by_broker.begin(); it != by_broker.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    const int64_t hw = best->second;
    std::vector<kafka::LogEntry>& log = history.final_logs[tp];
    std::vector<const DumpBatch*> batches;
    for (const DumpBatch& b : dump.batches) {
      if (b.broker == best->first && b.tp == tp && !b.control && b.base_offset < hw) {
        batches.push_back(&b);
      }
    }
    std::stable_sort(batches.begin(), batches.end(), [](const DumpBatch* x, const DumpBatch* y) {
      return x->base_offset < y->base_offset;
    });
    for (const DumpBatch* b : batches) {
      kafka::LogEntry e{kafka::Offset(b->base_offset), kafka::ProducerId(b->producer_id),
                        kafka::Epoch(b->epoch), kafka::Sequence(b->base_seq), b->record_ids};
      kafka::Sequence last(b->last_seq);
      if (b->last_offset >= hw && e.record_ids.size() > static_cast<size_t>(hw - b->base_offset)) {
        e.record_ids.resize(static_cast<size_t>(hw - b->base_offset));
        if (!e.first_seq.IsNone()) {
          last = kafka::LastSequence(e.first_seq, static_cast<int32_t>(e.record_ids.size()));
        }
      }
      const auto [at, broker] = AppendedAt(acked, sent, tp, e, end, BrokerId(best->first));
      history.appends.push_back(kafka::AppendEvent{at, broker, /*leader=*/true, tp, e.base_offset,
                                                   e.producer_id, e.epoch, e.first_seq, last,
                                                   e.record_ids});
      log.push_back(std::move(e));
    }
  }
  std::stable_sort(
      history.appends.begin(), history.appends.end(),
      [](const kafka::AppendEvent& x, const kafka::AppendEvent& y) { return x.at < y.at; });
  MarkDuplicates(history);
}

// --- One trial ---------------------------------------------------------------------------

namespace {

// A trial's directory: TMPDIR/prodsim-kafka-PID-XXXXXX, PID prodsim's.
constexpr absl::string_view kDirPrefix = "prodsim-kafka-";

// Removes the directories of trials whose prodsim is gone: a prodsim killed
// outright (SIGKILL) takes its cluster's processes with it (Child's
// keeper), but not the directory, which the next trial here removes.
void SweepAbandoned(const fs::path& tmp) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, kDirPrefix)) continue;
    const std::vector<absl::string_view> parts =
        absl::StrSplit(absl::string_view(name).substr(kDirPrefix.size()), '-');
    pid_t pid = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &pid) || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    fs::remove_all(e.path(), ignored);
  }
}

// Everything one trial owns; the destructor ends the client and the
// cluster (their process trees) and removes the cluster's directory.
class ClusterTrial {
 public:
  ClusterTrial(const Scenario& s, const scenarios::WorldPlan& plan, const RealCluster& cluster,
               RealOutput& result)
      : s_(s),
        cluster_(cluster),
        result_(result),
        proxy_(loop_, s.cluster.brokers, &record_.kafka),
        supervisor_(loop_),
        limit_(plan.scheduler.time_limit),
        cap_(Time() + s.limits.time) {
    record_.faults_healed_at = plan.healed;
    record_.liveness_grace = s.limits.liveness_grace;
    if (plan.healed != Time::Max()) {
      proxy_.set_count_fault_hook([this](Time until) { ExtendHealed(until); });
    }
  }
  ~ClusterTrial() {
    client_.reset();
    supervisor_.Kill();
    proxy_.CloseAll();
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
    result_.wall = loop_.Now() - Time();
  }
  ClusterTrial(const ClusterTrial&) = delete;
  ClusterTrial& operator=(const ClusterTrial&) = delete;

  void Run(const Driver& driver, const ConfigList& config);

 private:
  absl::Status StartCluster();
  void Schedule();
  void At(Time at, std::function<void()> run) { actions_.push_back(Action{at, std::move(run)}); }
  void Apply(const FaultParams& p);
  void Undo(const FaultParams& p);
  std::optional<Time> UndoAt(const FaultParams& p) const;
  std::vector<kafka::TopicPartition> PartitionsOf(const FaultParams& p) const;
  // A supervisor command for a fault; its failure is noted, and if `must`
  // the trial's harness error. `on_ok` runs when it succeeded.
  void Command(const std::string& command, bool must, std::function<void()> on_ok = {});
  void ExtendHealed(Time until);
  sim::RunResult Loop(Child& client);
  void Finish(Time end);
  std::string Harness(const ClientLines& lines) const;

  struct Action {
    Time at;
    std::function<void()> run;
  };

  const Scenario& s_;
  const RealCluster& cluster_;
  RealOutput& result_;
  EventLoop loop_;
  checks::RunRecord record_;
  FaultProxy proxy_;
  Supervisor supervisor_;
  std::unique_ptr<Child> client_;
  std::string dir_;
  std::vector<Action> actions_;
  absl::btree_set<int32_t> paused_;
  // Brokers crashed and not yet restarted: a pause of one is a no-op.
  absl::btree_set<int32_t> down_;
  std::string harness_;
  Time limit_;  // history time
  Time cap_;
};

absl::Status ClusterTrial::StartCluster() {
  const char* env = std::getenv("TMPDIR");
  const fs::path tmp = env != nullptr && *env != '\0' ? env : "/tmp";
  SweepAbandoned(tmp);
  std::string dir = (tmp / absl::StrCat(kDirPrefix, getpid(), "-XXXXXX")).string();
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", dir, ": ", std::strerror(errno)));
  }
  dir_ = dir;
  if (absl::Status st = proxy_.Listen(); !st.ok()) return st;
  std::vector<std::string> ports, topics;
  for (int32_t i = 0; i < s_.cluster.brokers; ++i)
    ports.push_back(absl::StrCat(proxy_.port(BrokerId(i))));
  for (const scenarios::TopicSpec& t : s_.cluster.topics) {
    topics.push_back(absl::StrCat(t.name, ":", t.partitions, ":", t.replication_factor));
  }
  const Time began = loop_.Now();
  // The supervisor gives up a little before prodsim does, and says why.
  const Duration its_bound = kStartBound - Duration::Seconds(10);
  if (absl::Status st = supervisor_.Start(
          {cluster_.launcher, "--dir", dir_ + "/cluster", "--brokers",
           absl::StrCat(s_.cluster.brokers), "--advertise", absl::StrJoin(ports, ","), "--topic",
           absl::StrJoin(topics, ","), "--min-insync", absl::StrCat(s_.cluster.min_insync_replicas),
           "--replica-lag-ms",
           absl::StrCat(std::max<int64_t>(1, s_.cluster.replica_lag_time_max.millis())),
           "--zk-session-ms",
           absl::StrCat(std::max<int64_t>(1, s_.cluster.zookeeper_session_timeout.millis())),
           "--start-timeout-ms", absl::StrCat(its_bound.millis())});
      !st.ok()) {
    return st;
  }
  absl::StatusOr<absl::btree_map<int32_t, int>> ready = supervisor_.AwaitReady(began + kStartBound);
  result_.cluster_start = loop_.Now() - began;
  if (!ready.ok()) return ready.status();
  for (int32_t i = 0; i < s_.cluster.brokers; ++i) {
    const auto it = ready->find(i);
    if (it == ready->end()) {
      return absl::UnavailableError(absl::StrCat("the real cluster named no broker ", i));
    }
    proxy_.SetUpstream(BrokerId(i), it->second);
  }
  return absl::OkStatus();
}

void ClusterTrial::Command(const std::string& command, bool must, std::function<void()> on_ok) {
  supervisor_.Send(command, [this, command, must, on_ok](std::vector<std::string> lines) {
    if (absl::StartsWith(lines.front(), "ok")) {
      if (on_ok) on_ok();
      return;
    }
    const std::string text = absl::StrCat("the real cluster: `", command, "`: ", lines.front());
    record_.kafka.notes.push_back(kafka::NoteEvent{proxy_.Now(), text});
    if (must && harness_.empty()) harness_ = text;
  });
}

void ClusterTrial::ExtendHealed(Time until) {
  // As scenarios::FollowCountFaults: the world is fault-free once the last
  // effect ended, and the grace, and the trial's bound, start from there.
  if (record_.faults_healed_at == Time::Max() || until <= record_.faults_healed_at) return;
  record_.faults_healed_at = until;
  limit_ = std::min(cap_, until + s_.limits.liveness_grace);
}

std::vector<kafka::TopicPartition> ClusterTrial::PartitionsOf(const FaultParams& p) const {
  if (p.tp.has_value()) return {*p.tp};
  std::vector<kafka::TopicPartition> all;
  for (const scenarios::TopicSpec& t : s_.cluster.topics) {
    for (int32_t i = 0; i < t.partitions; ++i) all.push_back({t.name, kafka::PartitionId(i)});
  }
  return all;
}

void ClusterTrial::Apply(const FaultParams& p) {
  const std::string b = absl::StrCat(p.broker.value);
  switch (p.kind) {
    case FaultKind::kReset: proxy_.Reset(p.broker); return;
    case FaultKind::kPartition: proxy_.Cut(p.broker, p.direction); return;
    case FaultKind::kIsolate:
      for (int32_t i = 0; i < s_.cluster.brokers; ++i) {
        proxy_.Cut(BrokerId(i), fault_models::Direction::kBoth);
      }
      return;
    case FaultKind::kCrash:
      // kill -9 ends a pause too: nothing to resume after it.
      down_.insert(p.broker.value);
      paused_.erase(p.broker.value);
      Command("crash " + b, /*must=*/true);
      return;
    case FaultKind::kMoveLeader:
      // A refused move changes nothing, as in the simulation: noted only.
      for (const kafka::TopicPartition& tp : PartitionsOf(p)) {
        Command(absl::StrCat("move-leader ", tp.topic, " ", tp.partition.value, " ", b), false);
      }
      return;
    case FaultKind::kShrinkIsr:
      if (down_.contains(p.broker.value)) return;  // out of the ISR already
      paused_.insert(p.broker.value);
      for (const kafka::TopicPartition& tp : PartitionsOf(p)) {
        Command(absl::StrCat("shrink-isr ", tp.topic, " ", tp.partition.value, " ", b), false);
      }
      return;
    case FaultKind::kPauseFetching:
      // A broker that is down fetches nothing already (the simulation's
      // pause of a crashed broker changes nothing either).
      if (down_.contains(p.broker.value)) return;
      paused_.insert(p.broker.value);
      Command("pause " + b, /*must=*/true);
      return;
    case FaultKind::kDelayProcessing:
      proxy_.DelayRequests(p.broker, p.extra, p.duration.value_or(kLastingDefault));
      return;
    case FaultKind::kLatencySpike:
      proxy_.AddLatency(p.broker, p.direction, p.extra, p.duration.value_or(kLastingDefault));
      return;
    case FaultKind::kBlackhole: proxy_.Blackhole(p.broker); return;
    case FaultKind::kConnectHang: proxy_.HangConnects(p.broker, true); return;
    case FaultKind::kLoseResponse: proxy_.LoseResponses(p.broker, p.api, p.count); return;
    case FaultKind::kStallResponse:
      proxy_.StallResponses(p.broker, p.api, p.count, p.extra);
      return;
    case FaultKind::kInjectError:
    case FaultKind::kLogDirFailure:
    case FaultKind::kMockError:
    case FaultKind::kMockDropResponse: break;
  }
  PRODSIM_ASSERT_MSG(false, "a fault kind CheckRealCluster refuses");
}

// When the real cluster's form of `p` is undone: a lasting fault at its
// heal, a self-healing one at the end of its duration (or the simulation's
// default), whatever `heal` says (the simulation's end too).
std::optional<Time> ClusterTrial::UndoAt(const FaultParams& p) const {
  switch (p.kind) {
    case FaultKind::kPartition:
    case FaultKind::kIsolate:
    case FaultKind::kCrash:
      if (p.duration.has_value() && p.heal) return p.at + *p.duration;
      return std::nullopt;
    case FaultKind::kShrinkIsr: return p.at + p.duration.value_or(kShrinkIsrDefault);
    case FaultKind::kPauseFetching: return p.at + p.duration.value_or(kLastingDefault);
    case FaultKind::kConnectHang: return p.at + p.duration.value_or(Duration());
    default: return std::nullopt;
  }
}

void ClusterTrial::Undo(const FaultParams& p) {
  const std::string b = absl::StrCat(p.broker.value);
  const auto healed = [this] { ExtendHealed(proxy_.Now()); };
  switch (p.kind) {
    case FaultKind::kPartition: proxy_.Heal(p.broker, p.direction); return;
    case FaultKind::kIsolate:
      for (int32_t i = 0; i < s_.cluster.brokers; ++i) {
        proxy_.Heal(BrokerId(i), fault_models::Direction::kBoth);
      }
      return;
    case FaultKind::kCrash:
      Command("restart " + b, /*must=*/true, [this, broker = p.broker.value, healed] {
        down_.erase(broker);
        healed();
      });
      return;
    case FaultKind::kShrinkIsr:
    case FaultKind::kPauseFetching:
      // Not paused (it was down when the pause came, or a crash ended the
      // pause): nothing to resume.
      if (!paused_.contains(p.broker.value)) {
        healed();
        return;
      }
      paused_.erase(p.broker.value);
      Command("resume " + b, /*must=*/true, healed);
      return;
    case FaultKind::kConnectHang: proxy_.HangConnects(p.broker, false); return;
    default: PRODSIM_ASSERT_MSG(false, "Undo of a fault UndoAt gives no time");
  }
}

void ClusterTrial::Schedule() {
  for (const scenarios::FaultSpec& spec : s_.faults) {
    const FaultParams p = scenarios::FaultParamsOf(spec);
    absl::StatusOr<std::unique_ptr<fault_models::Fault>> fault = fault_models::MakeFault(p);
    PRODSIM_ASSERT(fault.ok());  // PlanRealWorld made it once already
    const std::string what = (*fault)->Describe();
    At(p.at, [this, p, what] {
      record_.kafka.faults.push_back(kafka::FaultEvent{proxy_.Now(), what, false});
      Apply(p);
    });
    if (std::optional<Time> undo = UndoAt(p)) At(*undo, [this, p] { Undo(p); });
    // The history's heal, where the simulation records one (ApplyAt).
    if (!(*fault)->CountBased() && p.duration.has_value() && p.heal) {
      At(p.at + *p.duration, [this, what] {
        record_.kafka.faults.push_back(kafka::FaultEvent{proxy_.Now(), what, true});
      });
    }
  }
  std::stable_sort(actions_.begin(), actions_.end(),
                   [](const Action& x, const Action& y) { return x.at < y.at; });
}

// Runs the trial until the client has exited (and its output is read), the
// time limit, or a fault the cluster could not apply.
sim::RunResult ClusterTrial::Loop(Child& client) {
  sim::RunResult r;
  size_t next = 0;
  for (;;) {
    const Time now = proxy_.Now();
    while (next < actions_.size() && actions_[next].at <= now) actions_[next++].run();
    client.Poll();
    if (client.exited() && client.stdout_closed()) {
      r.outcome = sim::Outcome::kStopped;
      r.detail = "the client exited";
      break;
    }
    if (!harness_.empty()) {
      r.outcome = sim::Outcome::kStopped;
      r.detail = harness_;
      break;
    }
    if (now >= limit_) {
      r.outcome = sim::Outcome::kTimeLimit;
      r.detail = "the trial's time limit";
      break;
    }
    Time wake = limit_;
    if (next < actions_.size()) wake = std::min(wake, actions_[next].at);
    const Time wake_loop = loop_.Now() + (wake - now);
    loop_.Wait(std::min(wake_loop, loop_.Now() + Duration::Millis(100)), /*block=*/true);
  }
  r.end_time = proxy_.Now();
  return r;
}

// Stops the cluster and reads its logs into the history.
void ClusterTrial::Finish(Time end) {
  const Time began = loop_.Now();
  // A paused broker would stop only when killed at the supervisor's bound.
  for (int32_t b : paused_) supervisor_.Send(absl::StrCat("resume ", b), nullptr);
  absl::StatusOr<std::vector<std::string>> dump =
      supervisor_.Call("dump", loop_.Now() + kDumpBound);
  if (dump.ok()) {
    std::vector<std::string> lines(dump->begin() + 1, dump->end() - 1);  // between ok and end
    absl::StatusOr<ClusterDump> parsed = ParseDump(lines);
    if (parsed.ok()) {
      AddDump(*parsed, proxy_.sent_batches(), end, record_.kafka);
    } else if (harness_.empty()) {
      harness_ = absl::StrCat("the real cluster's dump: ", parsed.status().message());
    }
  } else if (harness_.empty()) {
    harness_ = absl::StrCat("the real cluster's logs could not be read: ", dump.status().message());
  }
  supervisor_.Call("quit", loop_.Now() + kQuitBound).IgnoreError();
  supervisor_.Kill();
  result_.cluster_dump = loop_.Now() - began;
}

std::string ClusterTrial::Harness(const ClientLines& lines) const {
  if (!lines.job_error().empty())
    return absl::StrCat("the client refused its job: ", lines.job_error());
  if (!harness_.empty()) return harness_;
  const FaultProxy::Problems& problems = proxy_.problems();
  if (!problems.records_without_id.empty()) return problems.records_without_id.front();
  return "";
}

void ClusterTrial::Run(const Driver& driver, const ConfigList& config) {
  SetClientRecord(driver, s_, record_);
  for (const std::string& note : result_.notes) {
    record_.kafka.notes.push_back(kafka::NoteEvent{Time(), "real cluster: " + note});
  }
  if (absl::Status st = StartCluster(); !st.ok()) {
    Judge(s_, std::string(st.message()), std::move(record_), result_.run);
    return;
  }
  ClientLines lines(record_, s_.workload, TopicsOf(s_));
  const Child::Spec spec = ClientSpec(driver, s_, proxy_.bootstrap(), limit_ - Time(), config);
  proxy_.set_origin(loop_.Now());
  absl::StatusOr<std::unique_ptr<Child>> child = Child::Start(
      loop_, spec,
      [this, &lines](std::string&& line) { lines.OnLine(proxy_.Now(), std::move(line)); });
  if (!child.ok()) {
    Judge(s_, std::string(child.status().message()), std::move(record_), result_.run);
    return;
  }
  client_ = *std::move(child);
  Schedule();
  record_.run = Loop(*client_);
  EndClient(loop_, *client_, /*exiting=*/false, proxy_.Now(), *record_.client, result_);
  client_.reset();  // its lines go to `lines`, which ends with this call
  result_.connections = proxy_.connections_accepted();
  proxy_.CloseAll();
  Finish(record_.run.end_time);
  const FaultProxy::Problems& problems = proxy_.problems();
  record_.client->malformed_frames = problems.malformed_frames;
  for (const std::string& u : problems.undecoded) {
    record_.kafka.notes.push_back(kafka::NoteEvent{record_.run.end_time, "proxy: " + u});
  }
  Judge(s_, Harness(lines), std::move(record_), result_.run);
}

}  // namespace

RealOutput RunRealCluster(const Scenario& scenario, const RealOptions& options,
                          const RealCluster& cluster) {
  RealOutput result;
  result.load_before = LoadAverage();
  signal(SIGPIPE, SIG_IGN);
  const Scenario s = Bounded(scenario, options.bound);
  absl::StatusOr<scenarios::WorldPlan> plan = PlanRealWorld(s);
  absl::StatusOr<Driver> driver = FindDriver(options.client);
  for (const absl::Status& st :
       {plan.status(), CheckRealCluster(s), ClosesBeforeBound(s), driver.status()}) {
    if (!st.ok()) {
      HarnessError(result.run, std::string(st.message()));
      return result;
    }
  }
  const ConfigList config = ClientConfigFor(*driver, s, result);
  result.notes = RealClusterNotes(s, cluster.version);
  ClusterTrial trial(s, *plan, cluster, result);
  trial.Run(*driver, config);
  return result;
}

}  // namespace wire
