#include "sim/kafka/reference/differential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/assert.h"
#include "sim/core/time.h"

namespace kafka::reference {
namespace {

// Debian's Abseil has its own string_view; the interface speaks std's.
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

struct KindName {
  Op::Kind kind;
  absl::string_view word;
};
constexpr KindName kKindNames[] = {
    {Op::Kind::kAppend, "append"},        {Op::Kind::kAppendPlain, "append-plain"},
    {Op::Kind::kReplicate, "replicate"},  {Op::Kind::kTruncate, "truncate"},
    {Op::Kind::kRestartClean, "restart"}, {Op::Kind::kRestartCrash, "restart"},
    {Op::Kind::kAdvance, "advance"},      {Op::Kind::kExpire, "expire"},
};

absl::string_view Word(Op::Kind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.word;
  }
  return "?";
}

template <typename Int>
absl::StatusOr<Int> Number(absl::string_view text, absl::string_view what, int64_t min,
                           int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < min || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an integer in [", min, ", ", max, "], got \"", text, "\""));
  }
  return static_cast<Int>(v);
}

// A batch's four numbers: PID EPOCH SEQ COUNT.
absl::Status ReadBatch(const std::vector<absl::string_view>& w, Op* op) {
  if (w.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(w[0], " takes PID EPOCH SEQ COUNT, got ", w.size() - 1, " word(s)"));
  }
  absl::StatusOr<int64_t> pid = Number<int64_t>(w[1], "PID", -1, INT64_MAX);
  absl::StatusOr<int16_t> epoch = Number<int16_t>(w[2], "EPOCH", -1, INT16_MAX);
  absl::StatusOr<int32_t> seq = Number<int32_t>(w[3], "SEQ", INT32_MIN, INT32_MAX);
  absl::StatusOr<int32_t> count = Number<int32_t>(w[4], "COUNT", 1, 1000);
  for (const absl::Status& s : {pid.status(), epoch.status(), seq.status(), count.status()}) {
    if (!s.ok()) return s;
  }
  if (op->kind == Op::Kind::kAppend && *pid < 0) {
    return absl::InvalidArgumentError("append needs a producer id >= 0 (append-plain has none)");
  }
  // An idempotent batch always has an epoch; a replicated one was accepted
  // by a leader, so its sequence is not negative.
  if (*pid >= 0 && *epoch < 0) {
    return absl::InvalidArgumentError("a batch with a producer id needs an EPOCH >= 0");
  }
  if (op->kind == Op::Kind::kReplicate && *pid >= 0 && *seq < 0) {
    return absl::InvalidArgumentError("a replicated batch has a SEQ >= 0 (a leader took it)");
  }
  op->pid = *pid;
  op->epoch = *epoch;
  op->seq = *seq;
  op->count = *count;
  return absl::OkStatus();
}

}  // namespace

std::string OpLine(const Op& op) {
  switch (op.kind) {
    case Op::Kind::kAppend:
    case Op::Kind::kReplicate:
      return absl::StrCat(Word(op.kind), " ", op.pid, " ", op.epoch, " ", op.seq, " ", op.count);
    case Op::Kind::kAppendPlain: return absl::StrCat("append-plain ", op.count);
    case Op::Kind::kTruncate: return absl::StrCat("truncate ", op.arg);
    case Op::Kind::kRestartClean: return "restart clean";
    case Op::Kind::kRestartCrash: return "restart crash";
    case Op::Kind::kAdvance: return absl::StrCat("advance ", op.arg);
    case Op::Kind::kExpire: return "expire";
  }
  return "?";
}

absl::StatusOr<Op> ParseOpLine(std::string_view line) {
  const std::vector<absl::string_view> w = absl::StrSplit(A(line), ' ', absl::SkipEmpty());
  if (w.empty()) return absl::InvalidArgumentError("an empty operation");
  Op op;
  if (w[0] == "append" || w[0] == "replicate") {
    op.kind = w[0] == "append" ? Op::Kind::kAppend : Op::Kind::kReplicate;
    if (absl::Status s = ReadBatch(w, &op); !s.ok()) return s;
    return op;
  }
  if (w[0] == "append-plain") {
    op.kind = Op::Kind::kAppendPlain;
    if (w.size() != 2) return absl::InvalidArgumentError("append-plain takes COUNT");
    absl::StatusOr<int32_t> count = Number<int32_t>(w[1], "COUNT", 1, 1000);
    if (!count.ok()) return count.status();
    op.count = *count;
    return op;
  }
  if (w[0] == "truncate" || w[0] == "advance") {
    op.kind = w[0] == "truncate" ? Op::Kind::kTruncate : Op::Kind::kAdvance;
    if (w.size() != 2) return absl::InvalidArgumentError(absl::StrCat(w[0], " takes one number"));
    absl::StatusOr<int64_t> arg =
        Number<int64_t>(w[1], w[0] == "truncate" ? "OFFSET" : "MS", 0, int64_t{1} << 40);
    if (!arg.ok()) return arg.status();
    op.arg = *arg;
    return op;
  }
  if (w[0] == "restart") {
    if (w.size() == 2 && (w[1] == "clean" || w[1] == "crash")) {
      op.kind = w[1] == "clean" ? Op::Kind::kRestartClean : Op::Kind::kRestartCrash;
      return op;
    }
    return absl::InvalidArgumentError("restart takes \"clean\" or \"crash\"");
  }
  if (w[0] == "expire" && w.size() == 1) {
    op.kind = Op::Kind::kExpire;
    return op;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown operation \"", w[0],
                   "\" (append, append-plain, replicate, truncate, restart, advance, expire)"));
}

absl::StatusOr<KafkaVersion> ModelVersionFor(std::string_view kafka_release) {
  const std::vector<absl::string_view> parts = absl::StrSplit(A(kafka_release), '.');
  int major = 0, minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a Kafka release: \"", A(kafka_release), "\" (want e.g. 2.6.2)"));
  }
  if (major == 0 && minor == 11) return KafkaVersion::k0_11;
  if (major == 2 && minor <= 4) return KafkaVersion::k2_0;
  if (major >= 2) return KafkaVersion::k2_6;
  return absl::InvalidArgumentError(
      absl::StrCat("Kafka ", A(kafka_release), " is older than any version the model has"));
}

absl::StatusOr<Mutant> ParseMutant(std::string_view name) {
  if (name == "none") return Mutant::kNone;
  if (name == "no-duplicates") return Mutant::kNoDuplicates;
  if (name == "state-survives-restart") return Mutant::kStateSurvivesRestart;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown mutant \"", A(name), "\" (none, no-duplicates, state-survives-restart)"));
}

bool RemovesStraySnapshots(std::string_view kafka_release) {
  int major = 0, minor = 0;
  const std::vector<absl::string_view> parts = absl::StrSplit(A(kafka_release), '.');
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return false;
  }
  return major > 2 || (major == 2 && minor >= 8);
}

std::string KnownDeparture(std::string_view kafka_release, KafkaVersion version, const Op& op,
                           std::string_view model_answer, std::string_view kafka_answer) {
  // LogValidator's InvalidRecordException stopped extending
  // CorruptRecordException in 2.4, so a negative base sequence is
  // INVALID_RECORD there; k2_0 keeps 2.0-2.3's CORRUPT_MESSAGE.
  if (version == KafkaVersion::k2_0 && kafka_release.starts_with("2.4.") &&
      op.kind == Op::Kind::kAppend && op.seq < 0 && model_answer == "error CORRUPT_MESSAGE" &&
      kafka_answer == "error INVALID_RECORD") {
    return "2.4-invalid-record";
  }
  return "";
}

ModelPartition::ModelPartition(KafkaVersion version, Mutant mutant, bool removes_stray_snapshots)
    : mutant_(mutant), removes_stray_snapshots_(removes_stray_snapshots), state_(version) {}

std::string ModelPartition::Apply(const Op& op) {
  switch (op.kind) {
    case Op::Kind::kAppend: return Append(op);
    case Op::Kind::kAppendPlain:
      Write(-1, -1, -1, op.count);
      return absl::StrCat("append ", log_.back().first_offset, " ", log_.back().last_offset);
    case Op::Kind::kReplicate:
      // Cluster::FetchFrom: the follower copies the batch and records it in
      // its producer state without a check (Kafka's ProducerAppendInfo
      // skips the sequence check for AppendOrigin.Replication).
      Write(op.pid, op.epoch, op.seq, op.count);
      return absl::StrCat("ok ", log_.back().first_offset, " ", log_.back().last_offset);
    case Op::Kind::kTruncate: {
      // Cluster::Truncate: whole batches go (the batch holding the offset
      // goes with everything after it), then ProducerStateManager::Reload.
      size_t keep = 0;
      while (keep < log_.size() && log_[keep].last_offset < op.arg) ++keep;
      if (keep < log_.size()) {
        log_.resize(keep);
        state_.Reload(snapshots_, Offset(LogEnd()), Now(), sim::Duration::Millis(kExpirationMs),
                      [&](Offset from) { Replay(from.value); });
      }
      return absl::StrCat("ok ", LogEnd());
    }
    case Op::Kind::kRestartClean:
    case Op::Kind::kRestartCrash:
      // Cluster::CrashBroker clears the state, Cluster::Rejoin recovers it
      // (ProducerStateManager::Recover). The cluster only crashes brokers;
      // a clean stop differs in the snapshots it keeps.
      if (mutant_ == Mutant::kStateSurvivesRestart) return absl::StrCat("ok ", LogEnd());
      if (op.kind == Op::Kind::kRestartCrash) state_.Clear();
      state_.Recover(snapshots_, Offset(LogEnd()), op.kind == Op::Kind::kRestartClean, Now(),
                     sim::Duration::Millis(kExpirationMs),
                     [&](Offset from) { Replay(from.value); });
      if (removes_stray_snapshots_) {
        std::erase_if(snapshots_, [&](const ProducerStateManager::Snapshot& s) {
          return s.end.value != LogEnd();
        });
      }
      return absl::StrCat("ok ", LogEnd());
    case Op::Kind::kAdvance: now_ms_ += op.arg; return absl::StrCat("ok ", now_ms_);
    case Op::Kind::kExpire:
      state_.ExpireProducers(Now(), sim::Duration::Millis(kExpirationMs));
      return "ok";
  }
  return "?";
}

// Cluster::Append (cluster_serving.cc) for an idempotent batch: Check, then
// write and Update, or answer the duplicate's offsets, or the error.
std::string ModelPartition::Append(const Op& op) {
  PRODSIM_ASSERT(op.pid >= 0 && op.count >= 1);
  const ProducerStateManager::AppendCheck check =
      state_.Check(ProducerId(op.pid), Epoch(op.epoch), Sequence(op.seq), op.count);
  switch (check.kind) {
    case ProducerStateManager::AppendCheck::Kind::kError:
      return absl::StrCat("error ", ErrorCodeName(check.error));
    case ProducerStateManager::AppendCheck::Kind::kDuplicate: {
      if (mutant_ == Mutant::kNoDuplicates) return "error OUT_OF_ORDER_SEQUENCE_NUMBER";
      const ProducerStateEntry* entry = state_.Find(ProducerId(op.pid));
      PRODSIM_ASSERT(entry != nullptr);
      for (const BatchMetadata& b : entry->batches) {
        if (b.first_offset == check.duplicate_base_offset) {
          return absl::StrCat("duplicate ", b.first_offset.value, " ", b.last_offset.value);
        }
      }
      PRODSIM_ASSERT_MSG(false, "a duplicate of a batch the cache does not hold");
      return "?";
    }
    case ProducerStateManager::AppendCheck::Kind::kAppend:
      Write(op.pid, op.epoch, op.seq, op.count);
      return absl::StrCat("append ", log_.back().first_offset, " ", log_.back().last_offset);
  }
  return "?";
}

void ModelPartition::Write(int64_t pid, int16_t epoch, int32_t first_seq, int32_t count) {
  const int64_t first = LogEnd();
  const int32_t last_seq = pid < 0 ? -1 : LastSequence(Sequence(first_seq), count).value;
  log_.push_back(Stored{pid, epoch, first_seq, last_seq, first, first + count - 1, now_ms_});
  if (pid < 0) return;
  const Stored& s = log_.back();
  state_.Update(ProducerId(pid), Epoch(epoch), Sequence(first_seq), Sequence(last_seq),
                Offset(s.first_offset), Offset(s.last_offset),
                sim::Time::FromNanos(s.time_ms * 1000000));
}

// Cluster::ReplayProducerState: the log from `from` on into the state.
void ModelPartition::Replay(int64_t from) {
  for (const Stored& s : log_) {
    if (s.pid < 0 || s.first_offset < from) continue;
    state_.Update(ProducerId(s.pid), Epoch(s.epoch), Sequence(s.first_seq), Sequence(s.last_seq),
                  Offset(s.first_offset), Offset(s.last_offset),
                  sim::Time::FromNanos(s.time_ms * 1000000));
  }
}

std::string ModelPartition::State() const {
  std::string out = "state";
  for (const auto& [pid, entry] : state_.producers()) {
    absl::StrAppend(&out, " ", pid.value, ":", entry.epoch.value, ":");
    const char* sep = "";
    for (const BatchMetadata& b : entry.batches) {
      absl::StrAppend(&out, sep, b.first_seq.value, "-", b.last_seq.value, "@",
                      b.first_offset.value, "-", b.last_offset.value);
      sep = ",";
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ReferenceProcess>> ReferenceProcess::Start(
    const std::string& launcher, int answer_bound_ms) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError("pipe2 failed");
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // The JVM dies with us, whatever becomes of us.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    execl("/bin/sh", "sh", launcher.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  std::unique_ptr<ReferenceProcess> p(new ReferenceProcess());
  p->pid_ = pid;
  p->to_child_ = in[1];
  p->from_child_ = out[0];
  p->answer_bound_ms_ = answer_bound_ms;
  absl::StatusOr<std::string> v = p->Ask("version");
  if (!v.ok()) return v.status();
  absl::string_view rest = *v;
  if (!absl::ConsumePrefix(&rest, "ok ")) {
    return absl::FailedPreconditionError(
        absl::StrCat(launcher, " answered \"version\" with \"", *v, "\""));
  }
  p->release_ = std::string(rest.data(), rest.size());
  return p;
}

ReferenceProcess::~ReferenceProcess() {
  if (to_child_ >= 0) close(to_child_);  // EOF: the harness quits
  if (from_child_ >= 0) close(from_child_);
  if (pid_ > 0) {
    // A short grace for the harness to delete its directory, then the kill.
    for (int i = 0; i < 40; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      usleep(50 * 1000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

absl::StatusOr<std::string> ReferenceProcess::Ask(std::string_view line) {
  std::string request = absl::StrCat(A(line), "\n");
  for (size_t done = 0; done < request.size();) {
    const ssize_t n = write(to_child_, request.data() + done, request.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the Kafka harness stopped reading (it exited?)");
    done += static_cast<size_t>(n);
  }
  using Clock = std::chrono::steady_clock;  // determinism-lint: allow (a bound on the JVM)
  const auto deadline = Clock::now() + std::chrono::milliseconds(answer_bound_ms_);
  for (;;) {
    if (const size_t nl = pending_.find('\n'); nl != std::string::npos) {
      std::string answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return answer;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the Kafka harness did not answer \"", A(line), "\" within ", answer_bound_ms_, " ms"));
    }
    pollfd pfd{from_child_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left)) < 0 && errno != EINTR) {
      return absl::InternalError("poll failed");
    }
    if ((pfd.revents & (POLLIN | POLLHUP)) == 0) continue;
    char buf[4096];
    const ssize_t n = read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("the Kafka harness exited before answering \"", A(line), "\""));
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
}

Pair::Pair(ReferenceProcess& kafka, KafkaVersion version, Mutant mutant)
    : kafka_(kafka), version_(version), mutant_(mutant) {}

absl::Status Pair::Reset() {
  model_ =
      std::make_unique<ModelPartition>(version_, mutant_, RemovesStraySnapshots(kafka_.release()));
  steps_.clear();
  absl::StatusOr<std::string> a = kafka_.Ask("reset");
  if (!a.ok()) return a.status();
  if (*a != "ok") return absl::InternalError(absl::StrCat("reset answered \"", *a, "\""));
  return absl::OkStatus();
}

absl::StatusOr<bool> Pair::Do(const Op& op) {
  PRODSIM_ASSERT_MSG(model_ != nullptr, "Reset first");
  // A follower truncates to a leader epoch's end offset, which is where a
  // batch starts; inside a batch, Kafka's Log is inconsistent (2.4 moves
  // its end offset to the target, though the whole batch went).
  if (op.kind == Op::Kind::kTruncate && op.arg < model_->LogEnd()) {
    bool boundary = false;
    for (const ModelPartition::Stored& s : model_->log()) boundary |= s.first_offset == op.arg;
    if (!boundary) {
      return absl::FailedPreconditionError(
          absl::StrCat("truncate ", op.arg, ": not where a batch starts"));
    }
  }
  Step step{op, model_->Apply(op), "", model_->State(), "", ""};
  for (auto [line, into] :
       {std::pair{OpLine(op), &step.kafka}, std::pair{std::string("state"), &step.kafka_state}}) {
    absl::StatusOr<std::string> a = kafka_.Ask(line);
    if (!a.ok()) return a.status();
    if (a->starts_with("bad ") || a->starts_with("crash ")) {
      return absl::InternalError(
          absl::StrCat("the Kafka harness answered \"", line, "\" with \"", *a, "\""));
    }
    *into = std::move(*a);
  }
  step.departure = KnownDeparture(kafka_.release(), version_, op, step.model, step.kafka);
  if (!step.departure.empty()) ++departures_[step.departure];
  steps_.push_back(std::move(step));
  return steps_.back().Same();
}

absl::StatusOr<bool> RunUntilDifferent(Pair& pair, const std::vector<Op>& ops) {
  if (absl::Status s = pair.Reset(); !s.ok()) return s;
  for (const Op& op : ops) {
    absl::StatusOr<bool> same = pair.Do(op);
    if (!same.ok()) return same.status();
    if (!*same) return true;
  }
  return false;
}

absl::StatusOr<std::vector<Op>> Minimize(Pair& pair, std::vector<Op> ops) {
  for (bool smaller = true; smaller;) {
    smaller = false;
    for (size_t i = 0; i < ops.size();) {
      std::vector<Op> without = ops;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      absl::StatusOr<bool> differs = RunUntilDifferent(pair, without);
      // A truncation left inside a batch: not a sequence a broker sees.
      if (!differs.ok() && !absl::IsFailedPrecondition(differs.status())) {
        return differs.status();
      }
      if (differs.ok() && *differs) {
        // Everything after the first difference is dropped too.
        without.resize(pair.steps().size());
        ops = std::move(without);
        smaller = true;
      } else {
        ++i;
      }
    }
  }
  absl::StatusOr<bool> differs = RunUntilDifferent(pair, ops);
  if (!differs.ok()) return differs.status();
  PRODSIM_ASSERT_MSG(*differs, "Minimize needs a sequence that differs");
  return ops;
}

std::string StepsText(const std::vector<Step>& steps, std::string_view kafka_release,
                      KafkaVersion version) {
  std::string out =
      absl::StrCat("# ", steps.size(), " operation(s): prodsim's producer state (",
                   A(KafkaVersionName(version)), " rules) beside Kafka ", A(kafka_release),
                   "'s Log; replay with kafka_differential --replay=FILE\n");
  for (const Step& s : steps) {
    absl::StrAppend(&out, OpLine(s.op), "\n");
    if (s.Same() && s.model == s.kafka) {
      absl::StrAppend(&out, "#   both: ", s.model, "  | ", s.model_state, "\n");
      continue;
    }
    if (s.Same()) {
      absl::StrAppend(&out, "#   known departure ", s.departure, ": prodsim ", s.model, ", kafka ",
                      s.kafka, "  | ", s.model_state, "\n");
      continue;
    }
    absl::StrAppend(&out, "#   DIFFERENCE\n#   prodsim: ", s.model, "  | ", s.model_state,
                    "\n#   kafka:   ", s.kafka, "  | ", s.kafka_state, "\n");
  }
  return out;
}

absl::StatusOr<std::vector<Op>> ParseReplay(std::string_view path, std::string_view text) {
  std::vector<Op> ops;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(A(text), '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    absl::StatusOr<Op> op = ParseOpLine(std::string_view(line.data(), line.size()));
    if (!op.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(A(path), ":", line_no, ":1: ", op.status().message()));
    }
    ops.push_back(*op);
  }
  return ops;
}

}  // namespace kafka::reference
