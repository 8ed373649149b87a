// The producer's own alarms: the modelled program panicked
// (no-panic), Sarama returned its own assertion error
// (no-producer-assertion), a broker refused a sequence or an epoch
// (no-broker-sequence-error).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/assert.h"
#include "checks/check.h"
#include "checks/check_families.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::families {
namespace {

// ---------------------------------------------------------------------------
// no-panic: the modelled program crashed (a Go panic: send on a closed
// channel, a nil dereference, an unlock of an unlocked mutex). Go prints
// the message, then the goroutine and where it was; so do the witnesses.

class NoPanic final : public Check {
 public:
  std::string_view name() const override { return kNoPanic; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (r.run.outcome != sim::Outcome::kProgramCrash) return std::nullopt;
    sim::PanicReport p;
    if (r.run.panic.has_value()) {
      p = *r.run.panic;
    } else {
      p.message = r.run.detail;
    }
    const std::string where = p.file.empty() ? std::string("(the model's line is not known)")
                                             : absl::StrCat(ModelPath(p.file), ":", p.line);
    const std::string goroutine =
        p.goroutine == 0 ? std::string("outside any goroutine (a timer)")
                         : absl::StrCat("goroutine ", p.goroutine, " ", p.goroutine_name);
    Witnesses w;
    w.Add([&] { return absl::StrCat("panic: ", p.message); });
    w.Add([&] { return absl::StrCat(goroutine, " [running], at ", At(r.run.end_time)); });
    w.Add([&] { return absl::StrCat("    ", where); });
    Subject subject;
    subject.at = r.run.end_time;
    return MakeViolation(
        name(), absl::StrCat("the model panicked: ", p.message, ", in ", goroutine, ", at ", where),
        w, std::move(subject));
  }

  // A path as the compiler named it, from the repository's root (the
  // first of the model's top-level folders in it), so the text is the
  // same wherever the tree was built.
  static std::string ModelPath(std::string_view file) {
    for (std::string_view root : {"/producer/", "/sim/", "/scenarios/", "/checks/",
                                  "/fault_models/", "/wire/", "/search/", "/cli/"}) {
      const size_t at = file.rfind(root);
      if (at != std::string_view::npos) return std::string(file.substr(at + 1));
    }
    return std::string(file);
  }
};

// ---------------------------------------------------------------------------
// no-producer-assertion

class NoProducerAssertion final : public Check {
 public:
  std::string_view name() const override { return kNoProducerAssertion; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    Witnesses w;
    Subject subject;
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (!e.err.Is(sarama::ErrorKind::kProduceSetAssertion)) continue;
      if (w.empty()) {
        subject.at = e.at;
        subject.topic = e.topic;
        subject.partition = e.partition;
        subject.ids = {e.id};
      }
      w.Add([&] { return ErrorText(e); });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat("the producer failed its produceSet assertion (message out "
                                      "of sequence added to a batch) for ",
                                      w.total(), " message(s)"),
                         w, std::move(subject));
  }
};

// ---------------------------------------------------------------------------
// no-broker-sequence-error

class NoBrokerSequenceError final : public Check {
 public:
  std::string_view name() const override { return kNoBrokerSequenceError; }
  std::optional<Violation> Evaluate(const RunRecord& r) const override {
    if (!r.sequence_error_is_violation) return std::nullopt;
    Witnesses w;
    Subject subject;
    for (const kafka::ResponseEvent& resp : r.kafka.responses) {
      if (resp.error != kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER &&
          resp.error != kafka::ErrorCode::INVALID_PRODUCER_EPOCH) {
        continue;
      }
      if (w.empty()) {
        subject.at = resp.at;
        subject.topic = resp.tp.topic;
        subject.partition = resp.tp.partition.value;
        subject.broker = resp.broker.value;
        subject.correlation_id = resp.correlation_id;
      }
      w.Add([&] {
        return absl::StrCat(At(resp.at), " broker=", resp.broker.value, " ",
                            Sv(kafka::ApiKeyName(resp.api)), " response corr=", resp.correlation_id,
                            " ", resp.tp.ToString(), " ", Sv(kafka::ErrorCodeName(resp.error)),
                            resp.fate != kafka::ResponseFate::kSent
                                ? absl::StrCat(" (", Sv(kafka::ResponseFateName(resp.fate)), ")")
                                : std::string());
      });
    }
    if (w.empty()) return std::nullopt;
    return MakeViolation(name(),
                         absl::StrCat("brokers answered ", w.total(),
                                      " request(s) with OUT_OF_ORDER_SEQUENCE_NUMBER or "
                                      "INVALID_PRODUCER_EPOCH"),
                         w, std::move(subject));
  }
};

}  // namespace

std::unique_ptr<Check> MakeNoPanic() { return std::make_unique<NoPanic>(); }
std::unique_ptr<Check> MakeNoProducerAssertion() { return std::make_unique<NoProducerAssertion>(); }
std::unique_ptr<Check> MakeNoBrokerSequenceError() {
  return std::make_unique<NoBrokerSequenceError>();
}

}  // namespace checks::families
