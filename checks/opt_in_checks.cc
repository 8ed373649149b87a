// The checks a scenario opts into ([checks]): retry-pacing and
// no-leaked-goroutines. Each holds for Sarama's intent rather than for
// every version's behaviour, so a scenario asks for it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::families {
namespace {

// ---------------------------------------------------------------------------
// retry-pacing (opt-in: RunRecord::retry_backoff)
//
// Sarama waits Retry.Backoff before every retry: partitionProducer.backoff
// when a partition's retry level rises (before the level's first message
// goes out, so after each message's previous attempt), and on main
// retryBatch before it resends (4009ac0b). So a message's consecutive
// attempts are at least Retry.Backoff apart, and a message that fails with
// its retries exhausted has waited Retry.Max backoffs since its first
// attempt. Attempts are the model's request steps (producer/history.h).

class RetryPacing final : public Check {
 public:
  std::string_view name() const override { return kRetryPacing; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.retry_backoff.has_value()) return std::nullopt;
    const sim::Duration backoff = *r.retry_backoff;
    // Each message's attempts, in the order they were written.
    absl::btree_map<uint64_t, std::vector<const sarama::ProducerStep*>> attempts;
    for (const sarama::ProducerStep* s : sarama::StepsInTimeOrder(r.producer)) {
      if (s->kind != sarama::StepKind::kSend) continue;
      for (uint64_t id : s->ids) attempts[id].push_back(s);
    }
    Witnesses w;
    Subject subject;
    sim::Time first_at = sim::Time::Max();
    auto offend = [&](uint64_t id, const sarama::ProducerStep& s, sim::Time at) {
      if (at >= first_at) return;
      first_at = at;
      subject = Subject{};
      subject.at = at;
      subject.topic = s.topic;
      subject.partition = s.partition;
      subject.ids = {id};
    };
    for (const auto& [key, list] : attempts) {
      const uint64_t id = key;  // (clang 14 cannot capture a structured binding)
      for (size_t i = 1; i < list.size(); ++i) {
        const sarama::ProducerStep& prev = *list[i - 1];
        const sarama::ProducerStep& next = *list[i];
        if (next.retries <= prev.retries) continue;  // not a retry of it
        const sim::Duration gap = next.at - prev.at;
        if (gap >= backoff) continue;
        offend(id, next, next.at);
        w.Add([&] {
          return absl::StrCat(At(next.at), " id=", id, " ", Tp(next.topic, next.partition),
                              " attempt ", next.retries + 1, " to broker ", next.broker, " ",
                              gap.ToString(), " after attempt ", prev.retries + 1, " (",
                              At(prev.at), "), Retry.Backoff ", backoff.ToString());
        });
      }
    }
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (r.retry_max <= 0 || e.retries < r.retry_max) continue;
      if (e.err.Is(sarama::ErrorKind::kProduceSetAssertion) ||
          e.err.Is(sarama::ErrorKind::kShuttingDown)) {
        continue;
      }
      auto it = attempts.find(e.id);
      if (it == attempts.end()) continue;
      // The retries since its first attempt each waited a backoff (a
      // message dropped from a buffer counts a retry it never attempted).
      const sarama::ProducerStep& first = *it->second.front();
      const sim::Duration waited = e.at - first.at;
      const sim::Duration owed = backoff * (e.retries - first.retries);
      if (waited >= owed) continue;
      offend(e.id, *it->second.front(), e.at);
      w.Add([&] {
        return absl::StrCat(ErrorText(e), ": retries exhausted ", waited.ToString(),
                            " after its first attempt (retry ", first.retries, "), sooner than ",
                            e.retries - first.retries, " x ", backoff.ToString());
      });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat(w.total(),
                                      " retry(ies) sooner than Retry.Backoff allows (attempts "
                                      "closer than ",
                                      backoff.ToString(), ", or retries exhausted too soon)"),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// no-leaked-goroutines (opt-in: RunRecord::check_leaked_goroutines)
//
// Once Close has returned, every goroutine the producer started has
// returned too: Sarama's own tests check it with goleak, and a program that
// makes and closes producers for its lifetime runs out of memory otherwise.
// A survivor that sleeps wakes by itself (a breaker's timer), and one that
// is runnable is on its way; one blocked on a channel, a lock or a
// WaitGroup with nothing left to wake it is a leak. A real client's
// survivors are those its driver's goroutine report names, still there
// after the driver waited for them (clients/README.md).

class NoLeakedGoroutines final : public Check {
 public:
  std::string_view name() const override { return kNoLeakedGoroutines; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.check_leaked_goroutines || !r.close_returned_at.has_value()) return std::nullopt;
    const bool reported = r.client.has_value() && r.client->goroutines_reported;
    Witnesses w;
    for (const sim::LiveGoroutine& g : r.producer_goroutines_at_end) {
      if (g.sleeping || g.runnable) continue;
      w.Add([&] {
        const std::string when =
            reported ? absl::StrCat("the driver waited ",
                                    At(sim::Time() + r.client->goroutines_waited).substr(2),
                                    " for it to return")
                     : absl::StrCat("run ended ", At(r.run.end_time));
        return absl::StrCat("goroutine ", g.id, " '", Sv(g.name), "' still waits: ", Sv(g.waits_on),
                            " (Close returned ", At(*r.close_returned_at), ", ", when, ")");
      });
    }
    if (w.empty()) return std::nullopt;
    Subject subject;
    subject.at = *r.close_returned_at;
    return MakeViolation(
        name(), absl::StrCat(w.total(), " goroutine(s) the producer started outlived Close"), w,
        std::move(subject));
  }
};

}  // namespace

std::unique_ptr<Check> MakeRetryPacing() { return std::make_unique<RetryPacing>(); }
std::unique_ptr<Check> MakeNoLeakedGoroutines() { return std::make_unique<NoLeakedGoroutines>(); }

}  // namespace checks::families
