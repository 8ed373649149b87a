// The wire-mode checks of a real client's process (RunRecord::client): its
// fatal error (no-fatal-error), and each way it can fail to be a client at
// all (client-crashed, client-exited-early, client-hung,
// client-output-garbage, client-malformed-frame, client-lost-messages).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::families {
namespace {

// ---------------------------------------------------------------------------
// Wire mode: the real client (RunRecord::client).

// no-fatal-error: the client declared itself unusable (librdkafka's fatal
// error). Over a cluster that keeps every acknowledged write (clean
// elections only, as in every realistic fault here), an idempotent
// producer has no reason to: the fatal error is the client's own assertion,
// as Sarama's produceSet assertion is.
class NoFatalError final : public Check {
 public:
  std::string_view name() const override { return kNoFatalError; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.client || r.client->fatal_errors.empty()) return std::nullopt;
    Witnesses w;
    for (const std::string& f : r.client->fatal_errors) w.Add([&] { return f; });
    Subject subject;
    subject.at = r.client->first_fatal_at.value_or(r.run.end_time);
    return MakeViolation(
        name(), absl::StrCat("the client raised a fatal error: ", r.client->fatal_errors.front()),
        w, std::move(subject));
  }
};

// The process itself: each check names one way a client fails to be a
// client, so that a verdict about ordering is never drawn from a run whose
// client did not finish its job.
class ClientCheck final : public Check {
 public:
  enum class Kind { kCrashed, kExitedEarly, kHung, kGarbage, kMalformedFrame, kLostMessages };
  explicit ClientCheck(Kind kind) : kind_(kind) {}
  std::string_view name() const override {
    switch (kind_) {
      case Kind::kCrashed: return kClientCrashed;
      case Kind::kExitedEarly: return kClientExitedEarly;
      case Kind::kHung: return kClientHung;
      case Kind::kGarbage: return kClientOutputGarbage;
      case Kind::kMalformedFrame: return kClientMalformedFrame;
      case Kind::kLostMessages: return kClientLostMessages;
    }
    return "?";
  }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.client) return std::nullopt;
    const ClientRecord& c = *r.client;
    Witnesses w;
    std::string what;
    switch (kind_) {
      case Kind::kCrashed:
        if (c.hung) return std::nullopt;
        if (c.signal) {
          what = absl::StrCat("the client was killed by signal ", *c.signal);
        } else if (c.exit_code && *c.exit_code != 0) {
          what = absl::StrCat("the client exited with status ", *c.exit_code);
        } else {
          return std::nullopt;
        }
        break;
      case Kind::kExitedEarly:
        if (c.hung || c.signal || !c.exit_code || *c.exit_code != 0 || c.closed) {
          return std::nullopt;
        }
        what = c.started ? "the client exited (status 0) before its closed line: it did not "
                           "finish its job"
                         : "the client exited (status 0) without starting its job";
        break;
      case Kind::kHung:
        if (!c.hung) return std::nullopt;
        what = absl::StrCat("the client was still running at the trial's bound (", At(c.bound),
                            "), ", c.closed ? "after" : "before", " its closed line; killed");
        break;
      case Kind::kGarbage:
        if (c.garbage_lines == 0) return std::nullopt;
        what = absl::StrCat("the client printed ", c.garbage_lines,
                            " line(s) that are not the driver protocol");
        for (const std::string& g : c.garbage) w.Add([&] { return g; });
        break;
      case Kind::kMalformedFrame:
        if (c.malformed_frames.empty()) return std::nullopt;
        what = absl::StrCat("the client sent ", c.malformed_frames.size(),
                            " malformed frame(s); each connection was closed, as Kafka does");
        for (const std::string& m : c.malformed_frames) w.Add([&] { return m; });
        break;
      case Kind::kLostMessages: {
        // A driver that says it finished its job (closed) and never offered
        // some of the job's messages to its client did not run the job: no
        // verdict about the client may be drawn from it. (A produced message
        // without an outcome is the client's: every-message-one-outcome.)
        // A flush that timed out may have left the driver blocked in a
        // produce call before its job's end (kafkajs awaiting a send() on a
        // dead connection): the client's doing, which other checks judge.
        if (!c.closed || !c.flush_ok || !c.job_messages.has_value()) return std::nullopt;
        std::vector<bool> offered(static_cast<size_t>(*c.job_messages) + 1, false);
        for (const ProducedMessage& m : r.produced) {
          if (m.id >= 1 && m.id < offered.size()) offered[m.id] = true;
        }
        int64_t lost = 0;
        for (size_t id = 1; id < offered.size(); ++id) {
          if (offered[id]) continue;
          ++lost;
          w.Add([&] {
            return absl::StrCat("message ", id, ": neither a produce line nor an error line");
          });
        }
        if (lost <= c.unoffered) return std::nullopt;
        what = absl::StrCat("the client closed having offered ", *c.job_messages - lost, " of the ",
                            *c.job_messages, " messages its job handed it; ", lost,
                            " never produced nor refused",
                            c.unoffered > 0 ? absl::StrCat(" (it said ", c.unoffered, ")") : "");
        break;
      }
    }
    if (w.empty() && !c.stderr_tail.empty()) {
      w.Add([&] { return absl::StrCat("stderr: ", c.stderr_tail); });
    }
    if (w.empty()) w.Add([&] { return what; });
    return MakeViolation(name(), std::move(what), w);
  }

 private:
  Kind kind_;
};

}  // namespace

std::unique_ptr<Check> MakeNoFatalError() { return std::make_unique<NoFatalError>(); }
std::unique_ptr<Check> MakeClientCrashed() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kCrashed);
}
std::unique_ptr<Check> MakeClientExitedEarly() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kExitedEarly);
}
std::unique_ptr<Check> MakeClientHung() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kHung);
}
std::unique_ptr<Check> MakeClientOutputGarbage() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kGarbage);
}
std::unique_ptr<Check> MakeClientMalformedFrame() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kMalformedFrame);
}
std::unique_ptr<Check> MakeClientLostMessages() {
  return std::make_unique<ClientCheck>(ClientCheck::Kind::kLostMessages);
}

}  // namespace checks::families
