#include "checks/signature.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "checks/chain.h"
#include "checks/check_registry.h"
#include "sim/core/prng.h"
#include "sim/kafka/types.h"

namespace checks {

using sarama::ProducerStep;
using sarama::StepKind;

std::string Signature::Text() const {
  if (classified()) return absl::StrCat(mechanism, "@", function);
  return fingerprint.empty() ? mechanism : absl::StrCat(mechanism, "#", fingerprint);
}

std::string_view MechanismOf(std::string_view signature) {
  return signature.substr(0, signature.find_first_of("@#"));
}

namespace {

using internal::At;

std::string Ids(const std::vector<uint64_t>& ids) {
  if (ids.empty()) return "-";
  if (ids.size() <= 4) return absl::StrJoin(ids, ",");
  return absl::StrCat(ids.front(), ",", ids[1], "..", ids.back(), " (", ids.size(), ")");
}

std::string SeqText(int16_t epoch, int32_t first_seq, size_t n) {
  if (first_seq < 0) return "no sequence";
  if (n <= 1) return absl::StrCat("epoch=", epoch, " seq=", first_seq);
  return absl::StrCat("epoch=", epoch, " seq=", first_seq, "..",
                      first_seq + static_cast<int32_t>(n) - 1);
}

double Seconds(sim::Duration d) { return static_cast<double>(d.nanos()) / 1e9; }

std::string Where(const ProducerStep& s) { return absl::StrCat(s.topic, "/", s.partition); }

std::string AnswerText(const ProducerStep& s) {
  if (!s.error.empty()) return s.error;
  return std::string(kafka::ErrorCodeName(s.code));
}

// One line per step, as the chain shows it.
std::string StepText(const ProducerStep& s) {
  const std::string msgs =
      absl::StrCat(Where(s), " ids ", Ids(s.ids), " ", SeqText(s.epoch, s.first_seq, s.ids.size()));
  switch (s.kind) {
    case StepKind::kSend:
      return absl::StrCat(At(s.at), " bridge sends Produce corr=", s.correlation_id, " to broker ",
                          s.broker, ": ", msgs,
                          s.retries > 0 ? absl::StrCat(" (retry ", s.retries, ")") : "");
    case StepKind::kAnswer:
      return absl::StrCat(At(s.at), " answer",
                          s.correlation_id >= 0 ? absl::StrCat(" corr=", s.correlation_id) : "",
                          " from broker ", s.broker, ": ", msgs, ": ", AnswerText(s));
    case StepKind::kRetryBatch:
      if (!s.error.empty()) {
        return absl::StrCat(At(s.at), " retryBatch fails ", msgs, ": ", s.error);
      }
      return absl::StrCat(At(s.at), " retryBatch resends ", msgs, " to broker ", s.broker,
                          " (retry ", s.retries, ")");
    case StepKind::kRetryMessage:
      return absl::StrCat(At(s.at), " retryMessage ", msgs, " (retry ", s.retries, "): ", s.error);
    case StepKind::kEpochBump:
      return absl::StrCat(At(s.at), " epoch bumped to ", s.epoch, " after id ", Ids(s.ids), " (",
                          Where(s), ") failed: ", s.error);
    case StepKind::kAssertion:
      return absl::StrCat(At(s.at), " produceSet.add refuses ", msgs, ": ", s.error);
    case StepKind::kFlushRetryBuffer:
      return absl::StrCat(At(s.at), " flushRetryBuffers sends ", msgs);
  }
  return "?";
}

// ---------------------------------------------------------------------------
// What the rules read: the steps in time order, the subject resolved to its
// messages, and a chain under construction.

struct Context {
  const RunRecord& r;
  const Violation& v;
  std::vector<const ProducerStep*> steps;  // by time, stable
  Subject subject;
  const ProducerStep* subject_send = nullptr;  // an answer's subject: its request
};

bool Contains(const std::vector<uint64_t>& ids, uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool Intersects(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  for (uint64_t id : a) {
    if (Contains(b, id)) return true;
  }
  return false;
}

bool SamePartition(const ProducerStep& s, const Subject& subj) {
  return s.topic == subj.topic && s.partition == subj.partition;
}

bool SamePartition(const ProducerStep& s, const ProducerStep& t) {
  return s.topic == t.topic && s.partition == t.partition;
}

bool Failed(const ProducerStep& answer) {
  return !answer.error.empty() || (answer.code != kafka::ErrorCode::NONE &&
                                   answer.code != kafka::ErrorCode::DUPLICATE_SEQUENCE_NUMBER);
}

// The answer to a send: the same request's (broker, correlation id), or for
// a transport error the first answer for the same messages after it.
const ProducerStep* AnswerTo(const Context& c, const ProducerStep& send) {
  for (const ProducerStep* s : c.steps) {
    if (s->kind != StepKind::kAnswer || s->at < send.at || s->broker != send.broker ||
        s->topic != send.topic || s->partition != send.partition) {
      continue;
    }
    if (s->correlation_id == send.correlation_id || (s->correlation_id < 0 && s->ids == send.ids)) {
      return s;
    }
  }
  return nullptr;
}

Context MakeContext(const RunRecord& r, const Violation& v) {
  PRODSIM_ASSERT(!v.check.empty());
  Context c{r, v, sarama::StepsInTimeOrder(r.producer), v.subject, nullptr};
  // Every rule's walk over the steps stops at the first one past its bound.
  PRODSIM_ASSERT(
      std::is_sorted(c.steps.begin(), c.steps.end(),
                     [](const ProducerStep* x, const ProducerStep* y) { return x->at < y->at; }));
  // A broker's answer names a request: its messages are the subject's.
  if (c.subject.correlation_id >= 0 && c.subject.ids.empty()) {
    for (const ProducerStep* s : c.steps) {
      if (s->at > c.subject.at) break;
      if (s->kind == StepKind::kSend && s->broker == c.subject.broker &&
          s->correlation_id == c.subject.correlation_id && SamePartition(*s, c.subject)) {
        c.subject_send = s;
      }
    }
    if (c.subject_send != nullptr) {
      c.subject.ids = c.subject_send->ids;
      c.subject.epoch = c.subject_send->epoch;
      c.subject.sequence = c.subject_send->first_seq;
    }
  }
  return c;
}

// The causal chain (checks/chain.h), with the producer's steps as lines.
class Chain {
 public:
  explicit Chain(const Context& c) : chain_(c.r, c.v, c.subject) {}
  Chain& Step(const ProducerStep* s) {
    if (s != nullptr) chain_.Timed(s->at, StepText(*s));
    return *this;
  }
  Chain& Line(sim::Time at, std::string text) {
    chain_.Line(at, text);
    return *this;
  }
  Signature Done(std::string_view mechanism, std::string_view function) {
    return chain_.Done(mechanism, function);
  }

 private:
  internal::Chain chain_;
};

// The first send of messages `ids` at or after `from`.
const ProducerStep* SendOf(const Context& c, const std::vector<uint64_t>& ids, sim::Time from,
                           sim::Time until) {
  for (const ProducerStep* s : c.steps) {
    if (s->at > until) break;
    if (s->kind == StepKind::kSend && s->at >= from && Intersects(s->ids, ids)) return s;
  }
  return nullptr;
}

// The last step of `kind` for message `id` before `until`.
const ProducerStep* LastOf(const Context& c, StepKind kind, uint64_t id, sim::Time until) {
  const ProducerStep* found = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at > until) break;
    if (s->kind == kind && Contains(s->ids, id)) found = s;
  }
  return found;
}

// The subject's request: the one its answer names, or else the last that
// carried its first message before the violation.
const ProducerStep* SubjectSend(const Context& c) {
  if (c.subject_send != nullptr) return c.subject_send;
  if (c.subject.ids.empty()) return nullptr;
  return LastOf(c, StepKind::kSend, c.subject.ids.front(), c.subject.at);
}

bool AppendedByLeader(const RunRecord& r, uint64_t id, sim::Time until) {
  for (const kafka::AppendEvent& a : r.kafka.appends) {
    if (a.leader && a.at <= until && Contains(a.record_ids, id)) return true;
  }
  return false;
}

const ProducerStep* BumpAfter(const Context& c, sim::Time from, uint64_t cause) {
  for (const ProducerStep* s : c.steps) {
    if (s->kind == StepKind::kEpochBump && s->at >= from && Contains(s->ids, cause)) return s;
  }
  return nullptr;
}

// A leader's append, as a chain line.
std::string AppendText(const kafka::AppendEvent& a) {
  return absl::StrCat("broker ", a.broker.value, " appends ", a.tp.ToString(), " ids ",
                      Ids(a.record_ids), " ",
                      SeqText(a.epoch.value, a.first_seq.value, a.record_ids.size()));
}

// For a request the broker refused as out of order: the batch a leader
// wrote before the violation on `send`'s partition, under its epoch and
// with none of its messages, whose sequences reach `send`'s first. Its
// first sequence and record count decide its span, so one message in it
// that the partition's numbering did not count stretches it onto the next
// batch's. The last such append, or nullptr.
const kafka::AppendEvent* OverlappedBy(const Context& c, const ProducerStep& send) {
  const ProducerStep* answer = send.first_seq >= 0 ? AnswerTo(c, send) : nullptr;
  if (answer == nullptr || answer->code != kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER) {
    return nullptr;
  }
  const kafka::AppendEvent* found = nullptr;
  for (const kafka::AppendEvent& a : c.r.kafka.appends) {
    if (!a.leader || a.at > c.subject.at || a.tp.topic != send.topic ||
        a.tp.partition.value != send.partition || a.epoch.value != send.epoch) {
      continue;
    }
    const bool reaches = a.first_seq.value <= send.first_seq && send.first_seq <= a.last_seq.value;
    if (reaches && !Intersects(a.record_ids, send.ids)) found = &a;
  }
  return found;
}

// The request that carried message `id` into the append `a`.
const ProducerStep* WrittenBy(const Context& c, uint64_t id, const kafka::AppendEvent& a) {
  const ProducerStep* send = LastOf(c, StepKind::kSend, id, a.at);
  return send != nullptr && send->broker == a.broker.value ? send : nullptr;
}

using Rule = std::optional<Signature> (*)(const Context&);

// mock-dropped-response: a mock fault dropped a response on an open
// connection, so the next response carried another request's correlation
// id (Broker.responseReceiver then fails every promise; what no real broker
// does: fault_models/README.md).
std::optional<Signature> MockDroppedResponse(const Context& c) {
  for (const kafka::ResponseEvent& e : c.r.kafka.responses) {
    if (e.fate != kafka::ResponseFate::kMockDropped || e.at > c.subject.at) continue;
    Chain chain(c);
    chain.Line(e.at, absl::StrCat("broker ", e.broker.value, " drops its answer to corr=",
                                  e.correlation_id, " (mock.drop_response)"));
    for (const ProducerStep* s : c.steps) {
      if (s->kind == StepKind::kAnswer && s->at >= e.at &&
          s->error.find("correlation ID") != std::string::npos) {
        chain.Step(s);
        break;
      }
    }
    return chain.Done("mock-dropped-response", "Broker.responseReceiver");
  }
  return std::nullopt;
}

// close-during-retry: a batch the broker had written is being retried when
// the application closes; sarama-main's retryBatch fails it with
// ErrShuttingDown, returnError bumps the epoch, and what follows on the
// partition is resent under the new epoch with its old sequences.
std::optional<Signature> CloseDuringRetry(const Context& c) {
  for (const ProducerStep* f : c.steps) {
    if (f->at > c.subject.at) break;
    if (f->kind != StepKind::kRetryBatch || f->error.empty()) continue;
    bool written = false;
    for (uint64_t id : f->ids) written = written || AppendedByLeader(c.r, id, f->at);
    if (!written) continue;
    const ProducerStep* bump = f->ids.empty() ? nullptr : BumpAfter(c, f->at, f->ids.front());
    const bool linked =
        SamePartition(*f, c.subject) || (bump != nullptr && c.subject.epoch >= bump->epoch);
    if (!linked) continue;
    Chain chain(c);
    const ProducerStep* send = nullptr;
    for (const ProducerStep* s : c.steps) {
      if (s->at > f->at) break;
      if (s->kind == StepKind::kSend && s->ids == f->ids) send = s;
    }
    if (send != nullptr) chain.Step(send).Step(AnswerTo(c, *send));
    chain.Step(f).Step(bump);
    if (c.subject_send != nullptr) chain.Step(c.subject_send);
    return chain.Done("close-during-retry", "asyncProducer.retryBatch");
  }
  return std::nullopt;
}

// unsequenced-retry-flush: a message parked in a retry buffer before it had
// a sequence number is flushed by partitionProducer.flushRetryBuffers
// without one (v1.42.1): produceSet.add's assertion refuses it, or it goes
// out under sequence 0, which another message of the epoch holds, and the
// broker answers it as that message's duplicate.
// The retry that raised the partition's retry level before `flush`.
const ProducerStep* RetryBefore(const Context& c, const ProducerStep& flush) {
  for (const ProducerStep* s : c.steps) {
    if (s->at > flush.at) break;
    if (s->kind == StepKind::kRetryMessage && SamePartition(*s, flush)) return s;
  }
  return nullptr;
}

// unsequenced-retry-flush, second form: a message flushed without a
// sequence went out inside the batch written just before the subject's
// request. The batch counts it in its span (first sequence plus records)
// though the partition's numbering did not, so its span reaches the
// subject's first sequence and the broker answers OUT_OF_ORDER.
std::optional<Signature> UnsequencedInBatchBefore(const Context& c) {
  const ProducerStep* send = SubjectSend(c);
  const kafka::AppendEvent* a = send != nullptr ? OverlappedBy(c, *send) : nullptr;
  if (a == nullptr) return std::nullopt;
  for (uint64_t id : a->record_ids) {
    const ProducerStep* flush = LastOf(c, StepKind::kFlushRetryBuffer, id, a->at);
    if (flush == nullptr || flush->first_seq >= 0) continue;
    Chain chain(c);
    chain.Step(RetryBefore(c, *flush)).Step(flush).Step(WrittenBy(c, id, *a));
    chain.Line(a->at, AppendText(*a));
    chain.Step(send).Step(AnswerTo(c, *send));
    return chain.Done("unsequenced-retry-flush", "partitionProducer.flushRetryBuffers");
  }
  return std::nullopt;
}

std::optional<Signature> UnsequencedRetryFlush(const Context& c) {
  for (uint64_t id : c.subject.ids) {
    const ProducerStep* flush = LastOf(c, StepKind::kFlushRetryBuffer, id, c.subject.at);
    if (flush == nullptr || flush->first_seq >= 0) continue;
    Chain chain(c);
    chain.Step(RetryBefore(c, *flush)).Step(flush);
    chain.Step(LastOf(c, StepKind::kAssertion, id, c.subject.at));
    const ProducerStep* send = LastOf(c, StepKind::kSend, id, c.subject.at);
    if (send != nullptr && send->at >= flush->at) chain.Step(send).Step(AnswerTo(c, *send));
    return chain.Done("unsequenced-retry-flush", "partitionProducer.flushRetryBuffers");
  }
  return UnsequencedInBatchBefore(c);
}

// Whether an error code is a refusal: nothing written (REQUEST_TIMED_OUT
// and NOT_ENOUGH_REPLICAS_AFTER_APPEND come after the leader's append).
bool Refusal(kafka::ErrorCode code) {
  using kafka::ErrorCode;
  return code != ErrorCode::NONE && code != ErrorCode::DUPLICATE_SEQUENCE_NUMBER &&
         code != ErrorCode::REQUEST_TIMED_OUT &&
         code != ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND;
}

// The broker's record of its response to request `send` (for its
// partition), or nullptr.
const kafka::ResponseEvent* BrokerResponseTo(const Context& c, const ProducerStep& send) {
  for (const kafka::ResponseEvent& e : c.r.kafka.responses) {
    if (e.at >= send.at && e.api == kafka::ApiKey::kProduce && e.broker.value == send.broker &&
        e.correlation_id == send.correlation_id && e.tp.topic == send.topic &&
        e.tp.partition.value == send.partition) {
      return &e;
    }
  }
  return nullptr;
}

// Whether the broker refused request `send`: its answer says so, or (the
// answer lost on the way, the producer saw only its connection fail) the
// broker's own record of the response does.
bool BrokerRefused(const Context& c, const ProducerStep& send, const ProducerStep& answer) {
  if (answer.error.empty()) return Refusal(answer.code);
  const kafka::ResponseEvent* e = BrokerResponseTo(c, send);
  return e != nullptr && Refusal(e->error);
}

// Whether the broker refused `a` (nothing written) and `a`'s sequences come
// just before `b`'s under the same epoch: `b` then arrives with a gap and
// is refused as out of order, because of `a`.
bool RefusedAhead(const Context& c, const ProducerStep& a, const ProducerStep& b,
                  const ProducerStep& answer) {
  return a.first_seq >= 0 && a.epoch == b.epoch &&
         a.first_seq + static_cast<int32_t>(a.ids.size()) == b.first_seq &&
         BrokerRefused(c, a, answer);
}

// Whether the violation is about what the partition sent after the first
// of two requests on the wire together (`a`, then `b`) failed (`answer`):
// `b`'s own answer (the broker refused it because `a`, ahead of it, was not
// written, whenever the producer heard of `a`'s failure), their messages,
// a request that resent them (regrouped behind others by retryMessages),
// or a request of later sequences written while `b` was still unanswered
// (it overtook `b`, which the old leader still held).
bool AfterTheFirstFailed(const Context& c, const ProducerStep& a, const ProducerStep& b,
                         const ProducerStep& answer) {
  if (c.subject_send == &b && RefusedAhead(c, a, b, answer)) return true;
  // The first one's failure comes before the violation (not the failure itself).
  if (answer.at >= c.subject.at) return false;
  if (c.subject_send != nullptr && c.subject_send->at <= answer.at) return false;
  if (Intersects(c.subject.ids, a.ids) || Intersects(c.subject.ids, b.ids)) return true;
  const ProducerStep* sent = SubjectSend(c);
  if (sent == nullptr || sent->at <= answer.at || !SamePartition(*sent, c.subject)) return false;
  if (Intersects(sent->ids, a.ids) || Intersects(sent->ids, b.ids)) return true;
  const ProducerStep* b_answer = AnswerTo(c, b);
  const bool b_pending = b_answer == nullptr || b_answer->at > sent->at;
  return b_pending && b.first_seq >= 0 && sent->epoch == b.epoch && sent->first_seq > b.first_seq;
}

// two-in-flight: with Net.MaxOpenRequests=1 a second request for the
// partition went on the wire while the first was unanswered (Broker.
// AsyncProduce hands the responseReceiver the first promise at once, so
// the second write does not wait); the first failed, and the resends
// reached the broker out of order.
std::optional<Signature> TwoInFlight(const Context& c) {
  if (c.r.max_open_requests != 1 || c.subject.ids.empty()) return std::nullopt;
  for (const ProducerStep* a : c.steps) {
    if (a->at > c.subject.at) break;
    if (a->kind != StepKind::kSend || !SamePartition(*a, c.subject)) continue;
    const ProducerStep* answer = AnswerTo(c, *a);
    if (answer == nullptr || !Failed(*answer)) continue;
    // The steps between the first's send and its answer, in order (a write
    // at the instant the answer came, recorded before it, is on the wire).
    for (const ProducerStep* b : c.steps) {
      if (b == answer) break;
      if (b == a || b->kind != StepKind::kSend || b->at < a->at || b->broker != a->broker ||
          !SamePartition(*b, c.subject)) {
        continue;
      }
      if (!AfterTheFirstFailed(c, *a, *b, *answer)) continue;
      Chain chain(c);
      chain.Step(a).Step(b).Step(answer).Step(AnswerTo(c, *b));
      if (const ProducerStep* sent = SubjectSend(c); sent != nullptr && sent->at > answer->at) {
        chain.Step(sent);
      }
      // The broker's refusal of the first, when the producer never read it.
      if (const kafka::ResponseEvent* e = BrokerResponseTo(c, *a);
          e != nullptr && !answer->error.empty() && Refusal(e->error)) {
        chain.Line(e->at, absl::StrCat("broker ", e->broker.value,
                                       " answers corr=", e->correlation_id, " ", e->tp.ToString(),
                                       " ", std::string(kafka::ErrorCodeName(e->error)), " (",
                                       std::string(kafka::ResponseFateName(e->fate)), ")"));
      }
      // The resends after the failure, up to the subject.
      for (const ProducerStep* s : c.steps) {
        if (s->at > c.subject.at) break;
        if (s->at > answer->at &&
            (s->kind == StepKind::kSend || s->kind == StepKind::kRetryBatch) &&
            SamePartition(*s, c.subject) &&
            (Intersects(s->ids, a->ids) || Intersects(s->ids, b->ids))) {
          chain.Step(s);
        }
      }
      const ProducerStep* refused =
          LastOf(c, StepKind::kAssertion, c.subject.ids.front(), c.subject.at);
      chain.Step(refused);
      return chain.Done("two-in-flight", "Broker.AsyncProduce");
    }
  }
  return std::nullopt;
}

bool ResolvedBefore(const Context& c, uint64_t id, sim::Time t) {
  for (const sarama::AckEvent& a : c.r.producer.acks) {
    if (a.id == id && a.at < t) return true;
  }
  for (const sarama::ErrorEvent& e : c.r.producer.errors) {
    if (e.id == id && e.at < t) return true;
  }
  return false;
}

// What shows the epoch a message's sequence number was given under: a step
// about the message alone (retryMessage, flushRetryBuffers: they carry the
// message's own epoch, where a request carries its batch's), or else its
// acknowledgement (the epoch it was sent with, read before Sarama clears it).
struct Numbering {
  int16_t epoch = -1;
  const ProducerStep* step = nullptr;
  const sarama::AckEvent* ack = nullptr;
};

Numbering NumberedUnder(const Context& c, uint64_t id) {
  for (const ProducerStep* s : c.steps) {
    const bool own = s->kind == StepKind::kRetryMessage || s->kind == StepKind::kFlushRetryBuffer;
    if (own && s->first_seq >= 0 && Contains(s->ids, id)) return {s->epoch, s, nullptr};
  }
  for (const sarama::AckEvent& a : c.r.producer.acks) {
    if (a.id == id && a.has_sequence) return {a.producer_epoch, nullptr, &a};
  }
  return {};
}

// The first epoch bump past `epoch` before `until`: it reset the sequences
// after every message numbered under `epoch` had its number.
const ProducerStep* BumpPast(const Context& c, int16_t epoch, sim::Time until) {
  for (const ProducerStep* s : c.steps) {
    if (s->at > until) break;
    if (s->kind == StepKind::kEpochBump && s->epoch > epoch) return s;
  }
  return nullptr;
}

// epoch-reset-in-flight, second form: a message numbered under an older
// epoch, unresolved at the bump, went out inside the batch written just
// before the subject's request, under the new epoch with its old number.
// The batch's span (its first sequence plus its records) then runs past
// the new epoch's numbering onto the subject's first sequence, and the
// broker answers OUT_OF_ORDER.
std::optional<Signature> OldNumberInBatchBefore(const Context& c) {
  const ProducerStep* send = SubjectSend(c);
  const kafka::AppendEvent* a = send != nullptr ? OverlappedBy(c, *send) : nullptr;
  if (a == nullptr) return std::nullopt;
  for (uint64_t id : a->record_ids) {
    const Numbering numbered = NumberedUnder(c, id);
    const ProducerStep* written = WrittenBy(c, id, *a);
    if (numbered.epoch < 0 || written == nullptr || numbered.epoch >= a->epoch.value) continue;
    const ProducerStep* bump = BumpPast(c, numbered.epoch, written->at);
    if (bump == nullptr || ResolvedBefore(c, id, bump->at)) continue;
    Chain chain(c);
    chain.Step(numbered.step).Step(bump).Step(written).Line(a->at, AppendText(*a));
    if (numbered.ack != nullptr) {
      chain.Line(numbered.ack->at,
                 absl::StrCat("ack id=", id, " reports epoch=", numbered.epoch,
                              " seq=", numbered.ack->sequence, ": its number is from epoch ",
                              numbered.epoch, ", its batch's epoch is ", a->epoch.value));
    }
    chain.Step(send).Step(AnswerTo(c, *send));
    return chain.Done("epoch-reset-in-flight", "asyncProducer.bumpIdempotentProducerEpoch");
  }
  return std::nullopt;
}

// What EpochResetInFlight asks of each message, indexed once per call: its
// walk over (bump, later step, message) then costs O(log n) a question
// instead of a scan of the history (ResolvedBefore and AppendedByLeader each
// scan it, as a lookup of the first batch did), which made the rule O(n^3).
class MessageIndex {
 public:
  explicit MessageIndex(const Context& c) {
    // The first numbered step (not a bump) that holds the message, at the
    // message's first place in it.
    for (const ProducerStep* s : c.steps) {
      if (s->first_seq < 0 || s->kind == StepKind::kEpochBump) continue;
      PRODSIM_ASSERT(s->numbered_under.empty() || s->numbered_under.size() == s->ids.size());
      for (size_t i = 0; i < s->ids.size(); ++i) {
        const int16_t own = s->numbered_under.empty() ? s->epoch : s->numbered_under[i];
        sequenced_.try_emplace(s->ids[i], Numbered{own, own == s->epoch});
      }
    }
    for (const sarama::AckEvent& a : c.r.producer.acks) Earliest(first_outcome_, a.id, a.at);
    for (const sarama::ErrorEvent& e : c.r.producer.errors) Earliest(first_outcome_, e.id, e.at);
    for (const kafka::AppendEvent& a : c.r.kafka.appends) {
      if (!a.leader) continue;
      for (uint64_t id : a.record_ids) Earliest(first_leader_append_, id, a.at);
    }
  }
  // The epoch message `id`'s sequence number was given under, as its first
  // batch shows it (-1 if none); `from_batch` (if given) says whether that is
  // the batch's own epoch, or older (a bump between
  // partitionProducer.dispatch and newProduceSet: ProducerStep::numbered_under).
  int16_t SequencedUnder(uint64_t id, bool* from_batch = nullptr) const {
    const auto it = sequenced_.find(id);
    if (it == sequenced_.end()) return -1;
    if (from_batch != nullptr) *from_batch = it->second.from_batch;
    return it->second.under;
  }
  // Whether an outcome of `id` was reported before `t` (ResolvedBefore).
  bool ResolvedBefore(uint64_t id, sim::Time t) const {
    const auto it = first_outcome_.find(id);
    return it != first_outcome_.end() && it->second < t;
  }
  // Whether a leader appended `id` by `until` (AppendedByLeader).
  bool AppendedByLeader(uint64_t id, sim::Time until) const {
    const auto it = first_leader_append_.find(id);
    return it != first_leader_append_.end() && it->second <= until;
  }

 private:
  struct Numbered {
    int16_t under;
    bool from_batch;
  };
  static void Earliest(absl::btree_map<uint64_t, sim::Time>& first, uint64_t id, sim::Time at) {
    auto [it, inserted] = first.try_emplace(id, at);
    if (!inserted && at < it->second) it->second = at;
  }
  absl::btree_map<uint64_t, Numbered> sequenced_;
  absl::btree_map<uint64_t, sim::Time> first_outcome_;
  absl::btree_map<uint64_t, sim::Time> first_leader_append_;
};

// Whether `bump` came from the failure of a message of `s`'s partition
// numbered under `s`'s epoch before `s`'s first sequence: returnError bumps
// so that no sequence goes on from a message the broker will never see,
// and `s`, numbered before the bump, goes on from it all the same.
// A hole only if no leader wrote the failed message: one written and
// reported failed is written-reported-failed's.
bool BehindTheHole(const Context& c, const MessageIndex& index, const ProducerStep& bump,
                   const ProducerStep& s) {
  if (!SamePartition(bump, s) || bump.ids.empty() || bump.first_seq < 0) return false;
  if (index.AppendedByLeader(bump.ids.front(), c.subject.at)) return false;
  return bump.first_seq < s.first_seq && index.SequencedUnder(bump.ids.front()) == s.epoch;
}

// Whether the violation is the broker refusing the subject's request.
bool SubjectRefused(const Context& c) {
  if (c.v.check == kNoBrokerSequenceError) return true;
  const ProducerStep* answer = c.subject_send != nullptr ? AnswerTo(c, *c.subject_send) : nullptr;
  return answer != nullptr && answer->error.empty() && Failed(*answer);
}

// epoch-reset-in-flight: bumpIdempotentProducerEpoch (after one message's
// failure) resets every partition's sequences while messages numbered
// under the old epoch are still in flight or retrying; they go out again
// with their old sequences (under either epoch) and the broker, or the
// produceSet's assertion, refuses them.
std::optional<Signature> EpochResetInFlight(const Context& c) {
  const bool assertion = c.v.check == kNoProducerAssertion;
  // produceSet.add refuses a sequence below the batch's first: a message
  // refused with sequence 0 of a bumped epoch was the first numbered under
  // it, so the batch it joined began with one numbered under an older epoch.
  if (assertion && !c.subject.ids.empty()) {
    const ProducerStep* refused =
        LastOf(c, StepKind::kAssertion, c.subject.ids.front(), c.subject.at);
    if (refused != nullptr && refused->first_seq == 0 && refused->epoch > 0) {
      const ProducerStep* bump = nullptr;
      for (const ProducerStep* s : c.steps) {
        if (s->at > refused->at) break;
        if (s->kind == StepKind::kEpochBump && s->epoch == refused->epoch) bump = s;
      }
      if (bump != nullptr) {
        Chain chain(c);
        chain.Step(bump).Step(refused);
        return chain.Done("epoch-reset-in-flight", "asyncProducer.bumpIdempotentProducerEpoch");
      }
    }
  }
  // O(B n log n) for B epoch bumps: the steps from each bump on, with the
  // index's lookups.
  const MessageIndex index(c);
  const bool refused = SubjectRefused(c);
  for (const ProducerStep* bump : c.steps) {
    if (bump->at > c.subject.at) break;
    if (bump->kind != StepKind::kEpochBump) continue;
    // A message of the subject's partition numbered before the bump, alive
    // across it, seen again after it: the subject itself, or (a produceSet
    // assertion) one the refused message was batched behind. The steps are
    // in time order (MakeContext), so those from the bump's time on are a
    // suffix.
    const auto from =
        std::lower_bound(c.steps.begin(), c.steps.end(), bump->at,
                         [](const ProducerStep* s, sim::Time at) { return s->at < at; });
    PRODSIM_ASSERT(from != c.steps.end());
    PRODSIM_ASSERT((*from)->at == bump->at);
    for (auto it = from; it != c.steps.end(); ++it) {
      const ProducerStep* s = *it;
      if (s->at > c.subject.at) break;
      if (s == bump || !SamePartition(*s, c.subject)) continue;
      // A move is the producer sending it again: an answer to a request
      // written before the bump is no move (the request's fate was sealed).
      if (s->kind == StepKind::kEpochBump || s->kind == StepKind::kRetryMessage ||
          s->kind == StepKind::kAnswer) {
        continue;
      }
      for (uint64_t id : s->ids) {
        bool from_batch = true;
        const int16_t under = index.SequencedUnder(id, &from_batch);
        if (under < 0 || under >= bump->epoch || index.ResolvedBefore(id, bump->at)) continue;
        if (!Contains(c.subject.ids, id) && !assertion) continue;
        // Numbered before a bump and first batched after it: the chain holds
        // when that very request was refused (its old number under the new
        // epoch); a later failure of another kind has rules of its own.
        if (!from_batch && !assertion && (c.subject_send != s || !refused)) continue;
        // The reset touches it only if it went out under a newer epoch with
        // its old number, was refused (by the broker or produceSet.add), or
        // went out under its old epoch behind the hole the bump was for; a
        // batch resent whole under its own epoch after another partition's
        // failure, and accepted, is untouched by it.
        const bool untouched = s->epoch <= under && !assertion && !refused;
        if (untouched && !BehindTheHole(c, index, *bump, *s)) continue;
        Chain chain(c);
        const ProducerStep* numbered = SendOf(c, {id}, sim::Time(), bump->at);
        if (numbered != s) chain.Step(numbered);
        // Behind the hole: the failed message's own request, which left it.
        if (untouched) chain.Step(LastOf(c, StepKind::kSend, bump->ids.front(), bump->at));
        chain.Step(bump).Step(s);
        if (c.subject_send != nullptr) chain.Step(c.subject_send);
        if (assertion && !c.subject.ids.empty()) {
          chain.Step(LastOf(c, StepKind::kAssertion, c.subject.ids.front(), c.subject.at));
        }
        return chain.Done("epoch-reset-in-flight", "asyncProducer.bumpIdempotentProducerEpoch");
      }
    }
  }
  return OldNumberInBatchBefore(c);
}

// The leader's append that wrote message `id` before `until`, or nullptr.
const kafka::AppendEvent* LeaderAppendOf(const Context& c, uint64_t id, sim::Time until) {
  for (const kafka::AppendEvent& a : c.r.kafka.appends) {
    if (a.leader && a.at <= until && Contains(a.record_ids, id)) return &a;
  }
  return nullptr;
}

bool Acked(const Context& c, uint64_t id) {
  for (const sarama::AckEvent& a : c.r.producer.acks) {
    if (a.id == id) return true;
  }
  return false;
}

// written-reported-failed: the producer reported a message failed (its
// answers lost or refused until Retry.Max was spent, or it shut down) that a
// leader had written, and acknowledged a later message of its partition and
// epoch: the acknowledgements skip the written message's sequence.
// asyncProducer.returnError reports what the producer gave up on, whatever
// the broker holds.
std::optional<Signature> WrittenReportedFailed(const Context& c) {
  if (c.v.check != kAckedBatchesInOrder || c.subject.sequence < 0) return std::nullopt;
  for (const sarama::ErrorEvent& e : c.r.producer.errors) {
    if (e.at > c.subject.at || e.topic != c.subject.topic || e.partition != c.subject.partition ||
        Acked(c, e.id)) {
      continue;
    }
    const kafka::AppendEvent* a = LeaderAppendOf(c, e.id, c.subject.at);
    if (a == nullptr || a->epoch.value != c.subject.epoch) continue;
    const auto at = std::find(a->record_ids.begin(), a->record_ids.end(), e.id);
    const int32_t seq = a->first_seq.value + static_cast<int32_t>(at - a->record_ids.begin());
    if (seq >= c.subject.sequence) continue;
    Chain chain(c);
    const ProducerStep* send = LastOf(c, StepKind::kSend, e.id, a->at);
    if (send != nullptr) chain.Step(send);
    chain.Line(a->at, AppendText(*a));
    chain.Step(LastOf(c, StepKind::kAnswer, e.id, e.at));
    chain.Line(e.at, absl::StrCat("the producer reports id ", e.id, " (seq ", seq,
                                  ") failed after ", e.retries, " retries: ", e.err.ToString()));
    chain.Step(SubjectSend(c));
    return chain.Done("written-reported-failed", "asyncProducer.returnError");
  }
  return std::nullopt;
}

// regrouped-retry, seen from the acknowledgement: a message that came back
// through retryMessages was regrouped into a batch whose first sequence is
// another message's, so a leader wrote it at a sequence other than its
// own number (produceSet.add keeps the batch's base sequence and Kafka
// numbers the records from it), and the acknowledgement reports its own
// number: the acknowledgements skip the sequence it was written at, whose
// own message failed before it was ever written.
std::optional<Signature> RegroupedAck(const Context& c) {
  if (c.v.check != kAckedBatchesInOrder || c.subject.sequence < 0 || c.subject.ids.empty()) {
    return std::nullopt;
  }
  const uint64_t id = c.subject.ids.front();
  const kafka::AppendEvent* a = LeaderAppendOf(c, id, c.subject.at);
  if (a == nullptr || a->epoch.value != c.subject.epoch) return std::nullopt;
  const auto at = std::find(a->record_ids.begin(), a->record_ids.end(), id);
  const int32_t written = a->first_seq.value + static_cast<int32_t>(at - a->record_ids.begin());
  if (written == c.subject.sequence) return std::nullopt;
  const ProducerStep* retry = LastOf(c, StepKind::kRetryMessage, id, a->at);
  if (retry == nullptr) return std::nullopt;
  // The message numbered with the sequence `id` was written at: its attempt
  // failed before it was written (a transport error, no correlation id),
  // so it came back through retryMessages and the regrouping left it out.
  // Had it been written beside the batch before it, the pair was two in
  // flight, which two-in-flight names.
  const ProducerStep* holder = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at > a->at) break;
    if (s->kind != StepKind::kAnswer || !SamePartition(*s, c.subject) ||
        s->epoch != a->epoch.value || s->first_seq < 0 || Contains(s->ids, id) ||
        written < s->first_seq || written >= s->first_seq + static_cast<int32_t>(s->ids.size())) {
      continue;
    }
    holder = s;
  }
  if (holder == nullptr || holder->error.empty() ||
      LastOf(c, StepKind::kSend, holder->ids.front(), holder->at) != nullptr) {
    return std::nullopt;
  }
  Chain chain(c);
  chain.Step(holder).Step(retry);
  const ProducerStep* send = SendOf(c, a->record_ids, retry->at, a->at);
  if (send != nullptr) chain.Step(send);
  chain.Line(a->at, absl::StrCat("broker ", a->broker.value, " appends ", a->tp.ToString(), " ids ",
                                 Ids(a->record_ids), " ",
                                 SeqText(a->epoch.value, a->first_seq.value, a->record_ids.size()),
                                 ": id ", id, " at seq ", written, ", its own number ",
                                 c.subject.sequence));
  return chain.Done("regrouped-retry", "asyncProducer.retryMessages");
}

// regrouped-retry: messages of a batch the broker wrote (its answer lost)
// come back one by one through retryMessages and the partitionProducer
// regroups them; the resent batch's sequences overlap the written one's
// without matching it, so Kafka answers OUT_OF_ORDER_SEQUENCE_NUMBER where
// an exact resend would be a duplicate.
std::optional<Signature> RegroupedRetry(const Context& c) {
  if (std::optional<Signature> sig = RegroupedAck(c)) return sig;
  if (c.subject_send == nullptr || c.subject.sequence < 0) return std::nullopt;
  const int32_t first = c.subject.sequence;
  const int32_t last = first + static_cast<int32_t>(c.subject.ids.size()) - 1;
  for (const kafka::AppendEvent& a : c.r.kafka.appends) {
    if (!a.leader || a.at > c.subject.at || a.tp.topic != c.subject.topic ||
        a.tp.partition.value != c.subject.partition || a.epoch.value != c.subject.epoch) {
      continue;
    }
    const bool overlaps = a.first_seq.value <= last && first <= a.last_seq.value;
    const bool same = a.first_seq.value == first && a.last_seq.value == last;
    if (!overlaps || same || !Intersects(a.record_ids, c.subject.ids)) continue;
    const ProducerStep* retry =
        LastOf(c, StepKind::kRetryMessage, c.subject.ids.front(), c.subject.at);
    if (retry == nullptr) continue;
    Chain chain(c);
    const ProducerStep* written = SendOf(c, a.record_ids, sim::Time(), a.at);
    if (written != nullptr) chain.Step(written).Step(AnswerTo(c, *written));
    chain.Line(a.at, absl::StrCat("broker ", a.broker.value, " has appended ", a.tp.ToString(),
                                  " ids ", Ids(a.record_ids), " ",
                                  SeqText(a.epoch.value, a.first_seq.value, a.record_ids.size())));
    chain.Step(retry);
    if (c.subject_send != nullptr) chain.Step(c.subject_send);
    return chain.Done("regrouped-retry", "asyncProducer.retryMessages");
  }
  return std::nullopt;
}

// duplicate-of-other-acked: the broker answered DUPLICATE_SEQUENCE_NUMBER
// for a batch whose (epoch, sequence) another message had been written
// under, and handleSuccess reports the duplicate as written: the message is
// acknowledged and lost.
std::optional<Signature> DuplicateOfOtherAcked(const Context& c) {
  if (c.v.check != kAckedAreDurable || c.subject.ids.size() < 2 || c.subject.sequence < 0) {
    return std::nullopt;
  }
  const uint64_t id = c.subject.ids[0], held = c.subject.ids[1];
  // The acknowledged message's last request, and the other message's
  // append under the same epoch and sequence.
  const ProducerStep* send = LastOf(c, StepKind::kSend, id, c.subject.at);
  if (send == nullptr) return std::nullopt;
  for (const kafka::AppendEvent& a : c.r.kafka.appends) {
    if (!a.leader || a.at > c.subject.at || !Contains(a.record_ids, held) ||
        a.epoch.value != send->epoch || a.first_seq.value > send->first_seq ||
        send->first_seq > a.last_seq.value) {
      continue;
    }
    Chain chain(c);
    chain.Line(a.at, absl::StrCat("broker ", a.broker.value, " appends ", a.tp.ToString(), " ids ",
                                  Ids(a.record_ids), " ",
                                  SeqText(a.epoch.value, a.first_seq.value, a.record_ids.size())));
    chain.Step(send).Step(AnswerTo(c, *send));
    return chain.Done("duplicate-of-other-acked", "brokerProducer.handleSuccess");
  }
  return std::nullopt;
}

// The last failed attempt of `resend`'s batch before it: a send of the
// same partition, epoch and first sequence, with messages in common, whose
// answer failed before the resend.
const ProducerStep* FailedAttemptOf(const Context& c, const ProducerStep& resend) {
  const ProducerStep* found = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at >= resend.at) break;
    if (s->kind != StepKind::kSend || !SamePartition(*s, resend) || s->epoch != resend.epoch ||
        s->first_seq != resend.first_seq || !Intersects(s->ids, resend.ids)) {
      continue;
    }
    const ProducerStep* answer = AnswerTo(c, *s);
    if (answer != nullptr && Failed(*answer) && answer->at <= resend.at) found = s;
  }
  return found;
}

// retry-overtaken (idempotent), seen from the earlier batch: the subject is
// the resend of a batch whose attempt failed, and a later batch of the
// partition (higher sequences, same epoch) was written after that failure
// and before the resend, so the broker acknowledged (or refused) them out
// of order. The later batch's write on the wire together with the failed
// attempt is two-in-flight, which that rule names.
std::optional<Signature> OvertakenWhileWaiting(const Context& c) {
  const ProducerStep* resend = SubjectSend(c);
  if (resend == nullptr || resend->first_seq < 0) return std::nullopt;
  const ProducerStep* failed = FailedAttemptOf(c, *resend);
  if (failed == nullptr) return std::nullopt;
  const ProducerStep* answer = AnswerTo(c, *failed);
  const int32_t last = resend->first_seq + static_cast<int32_t>(resend->ids.size()) - 1;
  for (const ProducerStep* b : c.steps) {
    if (b->at >= resend->at) break;
    if (b->kind != StepKind::kSend || b->at <= answer->at || !SamePartition(*b, *resend) ||
        b->epoch != resend->epoch || b->first_seq <= last || Intersects(b->ids, resend->ids)) {
      continue;
    }
    const ProducerStep* via = LastOf(c, StepKind::kRetryBatch, resend->ids.front(), resend->at);
    if (via != nullptr && via->at < answer->at) via = nullptr;
    Chain chain(c);
    chain.Step(failed).Step(answer).Step(b).Step(AnswerTo(c, *b)).Step(via).Step(resend);
    return chain.Done("retry-overtaken",
                      via != nullptr ? "asyncProducer.retryBatch" : "asyncProducer.retryMessages");
  }
  return std::nullopt;
}

// retry-overtaken (idempotent): a later batch of the partition is written
// while an earlier one, whose attempt failed, waits for its resend (1.42.1's
// retryBatch resends each batch from its own goroutine, so they race; a
// transport error sends them through retryMessages): the broker sees the
// sequences out of order, or acknowledges them out of order. When the
// earlier attempt and one of the later batch's were on the wire together
// (MaxOpenRequests=1 notwithstanding), it is two-in-flight. The earlier
// attempt may have failed before it was written (its answer step then has
// no correlation id), and the later batch went out on a new connection.
std::optional<Signature> ResendOvertaken(const Context& c) {
  const ProducerStep* b = c.subject_send;
  if (b == nullptr && !c.subject.ids.empty()) {
    b = LastOf(c, StepKind::kSend, c.subject.ids.front(), c.subject.at);
  }
  if (b == nullptr || b->first_seq < 0) return std::nullopt;
  const auto index = [&](const ProducerStep* s) {
    return std::find(c.steps.begin(), c.steps.end(), s) - c.steps.begin();
  };
  const auto b_at = index(b);
  for (auto i = decltype(b_at){0}; i < b_at; ++i) {
    const ProducerStep* a = c.steps[static_cast<size_t>(i)];
    // An attempt that never reached the wire (Broker.AsyncProduce failed:
    // not connected) has only its failure, which stands for its send.
    const bool unsent = a->kind == StepKind::kAnswer && a->correlation_id < 0 && Failed(*a);
    if ((a->kind != StepKind::kSend && !unsent) || a->topic != b->topic ||
        a->partition != b->partition || a->epoch != b->epoch || a->first_seq < 0 ||
        a->first_seq + static_cast<int32_t>(a->ids.size()) - 1 >= b->first_seq) {
      continue;
    }
    const ProducerStep* answer = unsent ? a : AnswerTo(c, *a);
    if (answer == nullptr || !Failed(*answer) || index(answer) > b_at) continue;
    if (ResolvedBefore(c, a->ids.front(), b->at)) continue;
    // Was an attempt of the later batch on the wire with the failed one?
    const ProducerStep* together = nullptr;
    for (auto j = i + 1; j < index(answer); ++j) {
      const ProducerStep* s = c.steps[static_cast<size_t>(j)];
      if (s->kind == StepKind::kSend && s->broker == a->broker && Intersects(s->ids, b->ids)) {
        together = s;
        break;
      }
    }
    Chain chain(c);
    chain.Step(a).Step(together).Step(answer);
    const ProducerStep* via = LastOf(c, StepKind::kRetryBatch, b->ids.front(), b->at);
    if (via != nullptr && via->at < answer->at) via = nullptr;
    chain.Step(via).Step(b);
    if (together != nullptr) return chain.Done("two-in-flight", "Broker.AsyncProduce");
    return chain.Done("retry-overtaken",
                      via != nullptr ? "asyncProducer.retryBatch" : "asyncProducer.retryMessages");
  }
  return OvertakenWhileWaiting(c);
}

// retry-overtaken: without idempotence, a message whose request failed is
// retried (retryMessages, through the partitionProducer) after a message
// produced later was written: the log's order is not the produce order.
std::optional<Signature> RetryOvertaken(const Context& c) {
  if (c.v.check != kPerPartitionOrder || c.subject.ids.size() < 2) return std::nullopt;
  const uint64_t early = c.subject.ids[0], late = c.subject.ids[1];
  const ProducerStep* retry = LastOf(c, StepKind::kRetryMessage, early, c.subject.at);
  const ProducerStep* late_send = LastOf(c, StepKind::kSend, late, c.subject.at);
  if (retry == nullptr || late_send == nullptr) return std::nullopt;
  const ProducerStep* first = SendOf(c, {early}, sim::Time(), retry->at);
  Chain chain(c);
  if (first != nullptr) chain.Step(first).Step(AnswerTo(c, *first));
  chain.Step(retry).Step(late_send).Step(LastOf(c, StepKind::kSend, early, c.subject.at));
  return chain.Done("retry-overtaken", "asyncProducer.retryMessages");
}

// abandoned-buffer-overtaken: without idempotence and with Retry.Max <= 0,
// a failed answer makes brokerProducer.handleSuccess (an error block) or
// handleError (a transport error) call asyncProducer.abandonBrokerConnection,
// which closes the broker's brokerProducer's `abandoned` channel and drops
// it from the map. Each partitionProducer leaves it at its next message for
// a new brokerProducer of the leader, but nothing empties the abandoned
// one's buffer: it flushes its messages when its run loop next gets to it
// (handling an answer blocks on every success and error handed to the
// application), after the successor has written messages produced later.
// (In v1.42.1 and main the map is keyed by *Broker, so a replaced
// brokerProducer's second failed answer abandons its successor, and closes
// the Broker they share; v1.61.1 abandons only the caller.) One
// brokerProducer sends a partition's messages in order, so a message sent
// once, never retried, after a later one of its partition was sent, went
// through a brokerProducer the partition had left.
std::optional<Signature> AbandonedBufferOvertaken(const Context& c) {
  if (c.v.check != kPerPartitionOrder || c.r.idempotent || c.subject.ids.size() < 2) {
    return std::nullopt;
  }
  const uint64_t early = c.subject.ids[0], late = c.subject.ids[1];
  for (const StepKind k :
       {StepKind::kRetryMessage, StepKind::kRetryBatch, StepKind::kFlushRetryBuffer}) {
    if (LastOf(c, k, early, c.subject.at) != nullptr) return std::nullopt;
  }
  const ProducerStep* early_send = SendOf(c, {early}, sim::Time(), c.subject.at);
  const ProducerStep* late_send = SendOf(c, {late}, sim::Time(), c.subject.at);
  if (early_send == nullptr || late_send == nullptr) return std::nullopt;
  if (!(late_send->at < early_send->at)) return std::nullopt;
  // Sent once: a second send would be a resend some other rule names.
  if (LastOf(c, StepKind::kSend, early, c.subject.at) != early_send) return std::nullopt;
  // The failure that abandoned a brokerProducer of the early message's
  // broker: the last failed answer from that broker before the later send.
  const ProducerStep* failed = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at >= late_send->at) break;
    if (s->kind == StepKind::kAnswer && s->broker == early_send->broker && Failed(*s)) failed = s;
  }
  if (failed == nullptr) return std::nullopt;
  Chain chain(c);
  chain.Step(failed)
      .Line(failed->at,
            absl::StrCat("a brokerProducer handling it calls abandonBrokerConnection(", "broker ",
                         failed->broker, "): the partition moves to a new brokerProducer; id ",
                         early, " stays in the abandoned one's buffer"))
      .Step(late_send)
      .Step(AnswerTo(c, *late_send))
      .Step(early_send);
  return chain.Done("abandoned-buffer-overtaken", "asyncProducer.abandonBrokerConnection");
}

// The request an answer step answers: the last send before it with the
// same broker, partition and correlation id.
const ProducerStep* RequestOf(const Context& c, const ProducerStep& answer) {
  const ProducerStep* found = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at > answer.at) break;
    if (s->kind == StepKind::kSend && s->broker == answer.broker &&
        s->correlation_id == answer.correlation_id && s->topic == answer.topic &&
        s->partition == answer.partition) {
      found = s;
    }
  }
  return found;
}

// Whether the producer heard from `send`'s broker after writing it: an
// answer to it or to a request written after it, or a failure (a read that
// timed out or a connection that broke fails every pending request, so its
// answer steps carry an error). Answers to requests written before it do
// not count: with MaxOpenRequests=1 they come back ahead of it.
bool HeardAfter(const Context& c, const ProducerStep& send) {
  for (const ProducerStep* s : c.steps) {
    if (s->kind != StepKind::kAnswer || s->broker != send.broker || s->at < send.at) continue;
    if (!s->error.empty()) return true;
    const ProducerStep* request = RequestOf(c, *s);
    if (request == nullptr || request->at >= send.at) return true;
  }
  return false;
}

// close-hang: Close did not return because a request the producer wrote
// was never answered and nothing gave up on it: from its write to the end
// of the run, much longer than Net.ReadTimeout, no answer and no failure
// came from its broker (Broker.responseReceiver fails every pending request
// when a read times out or the connection breaks). A deadlock is another
// failure: the scheduler found nothing pending, so no read was waiting.
std::optional<Signature> CloseHang(const Context& c) {
  const RunRecord& r = c.r;
  if (c.v.check != kLiveness || !r.close_called_at || r.close_returned_at ||
      !r.read_timeout.has_value() || r.run.outcome == sim::Outcome::kDeadlock) {
    return std::nullopt;
  }
  // Well past the deadline: a read that had one would have failed twice over.
  const sim::Duration well_past = *r.read_timeout * 2;
  for (const ProducerStep* s : c.steps) {
    if (s->kind != StepKind::kSend || s->at + well_past > r.run.end_time) continue;
    if (HeardAfter(c, *s)) continue;
    Chain chain(c);
    chain.Step(s).Line(*r.close_called_at, "the application calls Close");
    chain.Line(r.run.end_time,
               absl::StrFormat("nothing came back from broker %d for %.1fs after corr=%d was "
                               "written (Net.ReadTimeout %.1fs): no answer, no read timeout, no "
                               "broken connection",
                               s->broker, Seconds(r.run.end_time - s->at), s->correlation_id,
                               Seconds(*r.read_timeout)));
    return chain.Done("close-hang", "Broker.responseReceiver");
  }
  return std::nullopt;
}

// retry-without-backoff: the retry-pacing check's subject, the message's
// two attempts too close together; the function that resent it.
std::optional<Signature> RetryWithoutBackoff(const Context& c) {
  if (c.v.check != kRetryPacing || c.subject.ids.empty()) return std::nullopt;
  const uint64_t id = c.subject.ids.front();
  const ProducerStep* resend = LastOf(c, StepKind::kSend, id, c.subject.at);
  if (resend == nullptr) return std::nullopt;
  const ProducerStep* before = nullptr;
  for (const ProducerStep* s : c.steps) {
    if (s->at >= resend->at) break;
    if (s->kind == StepKind::kSend && Contains(s->ids, id)) before = s;
  }
  // The retry that came too soon: the resend's, or (retries exhausted) one
  // after the last send whose own attempt never got on the wire.
  const ProducerStep* batch = LastOf(c, StepKind::kRetryBatch, id, c.subject.at);
  const bool by_batch = batch != nullptr && (before == nullptr || batch->at >= before->at);
  Chain chain(c);
  if (before != nullptr) chain.Step(before).Step(AnswerTo(c, *before));
  chain.Step(by_batch ? batch : LastOf(c, StepKind::kRetryMessage, id, c.subject.at));
  chain.Step(resend).Step(AnswerTo(c, *resend));
  return chain.Done("retry-without-backoff",
                    by_batch ? "asyncProducer.retryBatch" : "partitionProducer.dispatch");
}

// sequence-desync-fatal (a real client, wire mode): the broker answered
// OUT_OF_ORDER_SEQUENCE_NUMBER, and the client then declared itself
// unusable with librdkafka's idempotence desynchronisation error
// (rd_kafka_handle_idempotent_Produce_error: "rewound sequence number" or
// "sequence desynchronization"), where recovering (an epoch bump) was open
// to it: confluentinc/librdkafka#4438 before 2.3.0.
std::optional<Signature> SequenceDesyncFatal(const Context& c) {
  if (c.v.check != kNoFatalError || !c.r.client.has_value()) return std::nullopt;
  const std::string& fatal =
      c.r.client->fatal_errors.empty() ? std::string() : c.r.client->fatal_errors.front();
  if (fatal.find("rewound sequence") == std::string::npos &&
      fatal.find("desynchroniz") == std::string::npos) {
    return std::nullopt;
  }
  for (const kafka::ResponseEvent& e : c.r.kafka.responses) {
    if (e.error != kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER || e.at > c.subject.at) continue;
    Chain chain(c);
    chain.Line(e.at, absl::StrCat("broker ", e.broker.value, " answers corr=", e.correlation_id,
                                  " ", e.tp.ToString(), " OUT_OF_ORDER_SEQUENCE_NUMBER"));
    return chain.Done("sequence-desync-fatal", "rd_kafka_handle_idempotent_Produce_error");
  }
  return std::nullopt;
}

}  // namespace

std::string GoroutineFunction(std::string_view name) {
  struct Row {
    std::string_view prefix, suffix, function;
  };
  static constexpr Row kRows[] = {
      {"bp#", ".run", "brokerProducer.run"},
      // newBrokerProducer's two anonymous goroutines.
      {"bp#", ".bridge", "newBrokerProducer.bridge"},
      {"bp#", ".forwarder", "newBrokerProducer.forwarder"},
      {"partition/", ".timer", "breaker.timer"},
      {"partition/", "", "partitionProducer.dispatch"},
      {"topic/", ".timer", "breaker.timer"},
      {"topic/", "", "topicProducer.dispatch"},
      {"retryBatch/", "", "asyncProducer.retryBatch"},
      {"dispatcher", "", "asyncProducer.dispatcher"},
      {"retryHandler", "", "asyncProducer.retryHandler"},
      {"shutdown", "", "asyncProducer.shutdown"},
      {"close.", "", "asyncProducer.Close"},
      {"broker#", ".responseReceiver", "Broker.responseReceiver"},
      {"broker#", ".open", "Broker.Open"},
      {"client.backgroundMetadataUpdater", "", "client.backgroundMetadataUpdater"},
      {"metadataRefresh#", "", "client.tryRefreshMetadata"},
  };
  for (const Row& row : kRows) {
    if (name.starts_with(row.prefix) && name.ends_with(row.suffix)) {
      return std::string(row.function);
    }
  }
  // A real Go client's function as its stack names it (the Sarama driver's
  // goroutine report): "(*Broker).responseReceiver" is the model's
  // "Broker.responseReceiver", so a real run's signature and a model run's
  // of the same mechanism are one signature.
  if (name.starts_with("(")) {
    const size_t close = name.find(").");
    if (close != std::string_view::npos) {
      std::string_view receiver = name.substr(1, close - 1);
      if (receiver.starts_with("*")) receiver.remove_prefix(1);
      std::string function(receiver);
      function += name.substr(close + 1);
      return function;
    }
  }
  return std::string(name);
}

namespace {

// panic: the modelled program crashed (no-panic's violation); the function
// is the goroutine's. The chain is Go's report: message, goroutine, line.
std::optional<Signature> Panic(const Context& c) {
  if (c.v.check != kNoPanic) return std::nullopt;
  const sim::PanicReport p = c.r.run.panic.value_or(sim::PanicReport{});
  Chain chain(c);
  chain.Line(c.r.run.end_time, c.v.explanation);
  return chain.Done("panic",
                    p.goroutine == 0 ? std::string("timer") : GoroutineFunction(p.goroutine_name));
}

// goroutine-leak: no-leaked-goroutines' violation; the function is the
// first survivor's, and the chain names each with what it waits on.
std::optional<Signature> GoroutineLeak(const Context& c) {
  if (c.v.check != kNoLeakedGoroutines) return std::nullopt;
  const sim::LiveGoroutine* first = nullptr;
  Chain chain(c);
  if (c.r.close_returned_at.has_value()) {
    chain.Line(*c.r.close_returned_at, "Close returns (Successes and Errors closed)");
  }
  for (const sim::LiveGoroutine& g : c.r.producer_goroutines_at_end) {
    if (g.sleeping || g.runnable) continue;
    if (first == nullptr) first = &g;
    chain.Line(c.r.run.end_time,
               absl::StrCat("goroutine ", g.id, " '", g.name, "' (", GoroutineFunction(g.name),
                            ") still waits: ", g.waits_on));
  }
  if (first == nullptr) return std::nullopt;
  return chain.Done("goroutine-leak", GoroutineFunction(first->name));
}

// Every mechanism with its function and what it means, and the rule that
// names it, in the order Classify tries the rules (the first that explains a
// failure wins): kRules and Mechanisms() derive from it. A rule may name
// another row's mechanism too (ResendOvertaken finds two-in-flight when the
// resends went out together); a row without a doc is a second rule of the
// mechanism above it. A real client's rows have no rule here.
struct MechanismRow {
  Rule rule;  // nullptr: a real client's (client_signature.cc)
  MechanismInfo info;
};

constexpr MechanismRow kMechanismTable[] = {
    {&SequenceDesyncFatal,
     {"sequence-desync-fatal", "rd_kafka_handle_idempotent_Produce_error",
      "a real client's fatal idempotence error after an OUT_OF_ORDER answer (librdkafka #4438)",
      true}},
    {&Panic,
     {"panic", "GOROUTINE",
      "the modelled program crashed as Go panics (send on a closed channel, a nil "
      "dereference, an unlock of an unlocked mutex); the function is the goroutine's"}},
    {&GoroutineLeak,
     {"goroutine-leak", "GOROUTINE",
      "a goroutine the producer started still blocked after Close returned (goleak's "
      "finding); the function is the first survivor's"}},
    {&MockDroppedResponse,
     {"mock-dropped-response", "Broker.responseReceiver",
      "a mock fault dropped a response on an open connection; the next answer's correlation id "
      "did not match"}},
    {&CloseHang,
     {"close-hang", "Broker.responseReceiver",
      "Close did not return: a request the producer wrote was never answered, and nothing came "
      "back from its broker for well past Net.ReadTimeout"}},
    {&RetryWithoutBackoff,
     {"retry-without-backoff", "asyncProducer.retryBatch | partitionProducer.dispatch",
      "a message resent sooner than Retry.Backoff after its previous attempt"}},
    {&CloseDuringRetry,
     {"close-during-retry", "asyncProducer.retryBatch",
      "shutdown fails a written batch that was being retried; the epoch bump then resets the "
      "partition's sequences under messages still retrying"}},
    {&UnsequencedRetryFlush,
     {"unsequenced-retry-flush", "partitionProducer.flushRetryBuffers",
      "a message parked during a retry is flushed without a sequence number; produceSet.add's "
      "assertion refuses it, or its batch claims a sequence the next batch also has"}},
    {&RetryOvertaken,
     {"retry-overtaken", "asyncProducer.retryMessages | asyncProducer.retryBatch",
      "a failed message or batch is resent after a later one of its partition was written"}},
    {&TwoInFlight,
     {"two-in-flight", "Broker.AsyncProduce",
      "with MaxOpenRequests=1 two requests of a partition were on the wire; the first failed and "
      "the resends went out of order"}},
    {&RegroupedRetry,
     {"regrouped-retry", "asyncProducer.retryMessages",
      "retried messages regrouped into a batch that overlaps the written one without matching "
      "it: OUT_OF_ORDER instead of a duplicate"}},
    {&WrittenReportedFailed,
     {"written-reported-failed", "asyncProducer.returnError",
      "a message a leader had written was reported failed (its answers lost until the retries "
      "ran out, or shutdown); a later one was acknowledged past its sequence"}},
    {&EpochResetInFlight,
     {"epoch-reset-in-flight", "asyncProducer.bumpIdempotentProducerEpoch",
      "an epoch bump resets the sequences while messages numbered under the old epoch are in "
      "flight or retrying"}},
    {&DuplicateOfOtherAcked,
     {"duplicate-of-other-acked", "brokerProducer.handleSuccess",
      "DUPLICATE_SEQUENCE_NUMBER for sequences another message was written under, reported as "
      "written: acknowledged and lost"}},
    {&AbandonedBufferOvertaken,
     {"abandoned-buffer-overtaken", "asyncProducer.abandonBrokerConnection",
      "without retries, a failed answer abandons a brokerProducer; the partition moves on to a "
      "new one, and a message left in the abandoned one's buffer is written after a later one"}},
    // retry-overtaken's second rule, tried after every other (described above).
    {&ResendOvertaken, {"retry-overtaken", {}, {}}},
    // A real client's (checks/client_signature.cc's ClassifyRealClient tries
    // them); the function is the client.
    {nullptr,
     {"sequence-reuse", "CLIENT",
      "the broker answered a batch as the duplicate of another it holds under the same epoch "
      "and sequence: the client reused a sequence number (acknowledged at another message's "
      "offset)",
      true}},
    {nullptr,
     {"rewritten-under-new-sequence", "CLIENT",
      "a message written twice, the second time under another sequence, after its first "
      "write's answer failed or was lost",
      true}},
    {nullptr,
     {"rewritten-under-new-epoch", "CLIENT",
      "a message written twice, the second time under another epoch, after its first write's "
      "answer failed or was lost",
      true}},
    {nullptr,
     {"not-persisted-but-written", "CLIENT",
      "the client reported a message failed and not persisted, and a leader had written it", true}},
    {nullptr,
     {"ack-without-write", "CLIENT",
      "an acknowledged message no broker answered success for (never written, or never "
      "confirmed)",
      true}},
    {nullptr,
     {"acked-then-truncated", "CLIENT",
      "an acknowledged message a broker confirmed, whose write was truncated away afterwards",
      true}},
    {nullptr,
     {"retry-overtaken", "CLIENT",
      "a message refused (or whose answer was lost) written after a later one of its partition",
      true}},
    {nullptr,
     {"regrouped-retry", "CLIENT",
      "a written batch's answer lost, its messages resent regrouped with others as a batch that "
      "overlaps the written one without matching it: OUT_OF_ORDER instead of a duplicate",
      true}},
    {nullptr,
     {"out-of-order-first-write", "CLIENT",
      "the partition's first write under an epoch starts past sequence 0 after the batches "
      "before it were refused: a leader with no state for the producer took a later batch "
      "first (Kafka before KAFKA-15591)",
      true}},
    {nullptr,
     {"retry-acked-after-successor", "CLIENT",
      "a written batch answered an error was resent and acknowledged as a duplicate after a "
      "later batch of its partition was acknowledged: acknowledgements out of partition order",
      true}},
    {nullptr,
     {"null-record-set", "CLIENT",
      "a Produce request with a null record set for a partition (a batch failed while the "
      "request was built); Kafka before 2.8 closes the connection on it",
      true}},
    {nullptr,
     {"kept-dead-connection", "CLIENT",
      "a blackhole took a connection's state; the client kept using it and opened no other to "
      "that broker while its messages failed or waited",
      true}},
    {nullptr,
     {"stalled-after-heal", "CLIENT",
      "messages unresolved, or the client not closed, long after the last fault healed", true}},
};

constexpr size_t kRuleCount = [] {
  size_t n = 0;
  for (const MechanismRow& row : kMechanismTable) n += row.rule != nullptr ? 1 : 0;
  return n;
}();

constexpr std::array<Rule, kRuleCount> kRules = [] {
  std::array<Rule, kRuleCount> rules{};
  size_t n = 0;
  for (const MechanismRow& row : kMechanismTable) {
    if (row.rule != nullptr) rules[n++] = row.rule;
  }
  return rules;
}();

// ---------------------------------------------------------------------------
// The fingerprint of an unexplained failure: its shape without ids, times,
// sequences or broker numbers, so a family of runs that fail the same way
// for the same unknown reason shares one, whatever the seed.

// An answer's or a failure's error, without the numbers in it (addresses,
// ids, counts).
std::string ErrorShape(const ProducerStep& s) {
  if (s.error.empty()) return std::string(kafka::ErrorCodeName(s.code));
  std::string out;
  for (char ch : s.error.substr(0, 48)) out.push_back(ch >= '0' && ch <= '9' ? '#' : ch);
  return out;
}

std::string StepShape(const ProducerStep& s) {
  switch (s.kind) {
    case StepKind::kSend: return s.first_seq < 0 ? "send(unsequenced)" : "send";
    case StepKind::kAnswer: return absl::StrCat("answer(", ErrorShape(s), ")");
    case StepKind::kRetryBatch: return s.error.empty() ? "retryBatch" : "retryBatch(failed)";
    case StepKind::kRetryMessage: return "retryMessage";
    case StepKind::kEpochBump: return "epochBump";
    case StepKind::kAssertion: return "produceSet.refuses";
    case StepKind::kFlushRetryBuffer: return "flushRetryBuffers";
  }
  return "?";
}

std::string FingerprintText(const Context& c) {
  const Subject& subj = c.subject;
  std::string text = absl::StrCat(c.v.check, "|ids=", std::min<size_t>(subj.ids.size(), 3),
                                  subj.correlation_id >= 0 ? "|answer" : "",
                                  subj.sequence >= 0 ? "|sequenced" : "");
  // What happened to the subject's first message, repeats collapsed (a
  // retry loop of any length is one shape).
  std::string last;
  if (!subj.ids.empty()) {
    for (const ProducerStep* s : c.steps) {
      if (s->at > subj.at) break;
      if (!Contains(s->ids, subj.ids.front())) continue;
      std::string shape = StepShape(*s);
      if (shape == last) continue;
      absl::StrAppend(&text, "|", shape);
      last = std::move(shape);
    }
  }
  // The faults stay out: shrinking removes the ones that do not matter,
  // and a file must keep its fingerprint as it shrinks.
  return text;
}

}  // namespace

std::string UnclassifiedFingerprint(const RunRecord& r, const Violation& decisive) {
  const std::string text = FingerprintText(MakeContext(r, decisive));
  // 24 bits of FNV-1a: short enough to read aloud, and families are few.
  const uint64_t h = sim::Fnv1a64(text);
  return absl::StrFormat("%06x", static_cast<uint32_t>((h ^ (h >> 24) ^ (h >> 48)) & 0xffffff));
}

std::string UnclassifiedShape(const RunRecord& r, const Violation& decisive) {
  return FingerprintText(MakeContext(r, decisive));
}

Signature Classify(const RunRecord& r, const Violation& decisive) {
  const Context c = MakeContext(r, decisive);
  // SequenceDesyncFatal first: a real client's fatal error names itself.
  if (std::optional<Signature> sig = SequenceDesyncFatal(c)) return *std::move(sig);
  if (std::optional<Signature> sig = internal::ClassifyRealClient(r, decisive)) {
    return *std::move(sig);
  }
  for (Rule rule : kRules) {
    if (std::optional<Signature> sig = rule(c)) return *std::move(sig);
  }
  Signature none;
  none.fingerprint = UnclassifiedFingerprint(r, decisive);
  none.chain.push_back(
      absl::StrCat(At(c.subject.at), " ", decisive.check, ": ",
                   decisive.witnesses.empty() ? decisive.explanation : decisive.witnesses[0]));
  return none;
}

std::vector<Signature> EveryRuleMatch(const RunRecord& r, const Violation& v) {
  const Context c = MakeContext(r, v);
  std::vector<Signature> out;
  for (Rule rule : kRules) {
    if (std::optional<Signature> sig = rule(c)) out.push_back(*std::move(sig));
  }
  return out;
}

std::vector<MechanismInfo> Mechanisms() {
  std::vector<MechanismInfo> out;
  for (const MechanismRow& row : kMechanismTable) {
    if (row.info.what.empty()) continue;  // a second rule of a mechanism listed
    PRODSIM_ASSERT(!row.info.mechanism.empty());
    PRODSIM_ASSERT(!row.info.function.empty());
    out.push_back(row.info);
  }
  return out;
}

namespace internal {

std::string At(sim::Time t) {
  const int64_t ns = t.nanos();
  if (ns < 0) return absl::StrCat("t=", t.ToString(), "s");
  const int64_t whole = ns / 1000000000;
  const int64_t frac = ns % 1000000000;
  if (frac % 1000000 == 0) return absl::StrFormat("t=%d.%03ds", whole, frac / 1000000);
  if (frac % 1000 == 0) return absl::StrFormat("t=%d.%06ds", whole, frac / 1000);
  return absl::StrFormat("t=%d.%09ds", whole, frac);
}

Chain& Chain::Line(sim::Time at, std::string_view text) {
  lines_.emplace_back(at, absl::StrCat(At(at), " ", absl::string_view(text.data(), text.size())));
  return *this;
}

Chain& Chain::Timed(sim::Time at, std::string text) {
  lines_.emplace_back(at, std::move(text));
  return *this;
}

Signature Chain::Done(std::string_view mechanism, std::string_view function) {
  // Every mechanism a rule names is described in kMechanismTable.
  PRODSIM_ASSERT(
      std::any_of(std::begin(kMechanismTable), std::end(kMechanismTable),
                  [&](const MechanismRow& row) { return row.info.mechanism == mechanism; }));
  PRODSIM_ASSERT(!function.empty());
  Signature sig;
  sig.mechanism = std::string(mechanism);
  sig.function = std::string(function);
  // The last fault applied before the chain's first event (or, if none
  // was, before its last: a chain that begins with the application's own
  // call), in its place in time.
  if (!lines_.empty()) {
    sim::Time first = lines_.front().first, last = first;
    for (const auto& [at, text] : lines_) {
      first = std::min(first, at);
      last = std::max(last, at);
    }
    const kafka::FaultEvent* fault = nullptr;
    for (const sim::Time until : {first, last}) {
      for (const kafka::FaultEvent& f : r_.kafka.faults) {
        if (!f.healed && f.at <= until) fault = &f;
      }
      if (fault != nullptr) break;
    }
    if (fault != nullptr) {
      lines_.emplace_back(fault->at, absl::StrCat(At(fault->at), " fault: ", fault->description));
    }
  }
  std::stable_sort(lines_.begin(), lines_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, text] : lines_) {
    if (sig.chain.empty() || sig.chain.back() != text) sig.chain.push_back(std::move(text));
  }
  const sim::Time at = subject_.at == sim::Time() ? r_.run.end_time : subject_.at;
  sig.chain.push_back(absl::StrCat(At(at), " ", v_.check, ": ",
                                   v_.witnesses.empty() ? v_.explanation : v_.witnesses[0]));
  return sig;
}

}  // namespace internal

std::string DebugSteps(const RunRecord& r) {
  std::string out;
  for (const ProducerStep* s : sarama::StepsInTimeOrder(r.producer)) {
    absl::StrAppend(&out, StepText(*s), "\n");
  }
  return out;
}

}  // namespace checks
