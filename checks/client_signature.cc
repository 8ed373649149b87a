// The failure signatures of a real client (wire mode). A real client's run
// has no producer steps: what it did is seen only in what the brokers
// received and answered (kafka::History: appends with their epoch and
// sequence, each answer with the request's epoch and sequence, and for a
// duplicate or an error the request's record ids) and in what the client
// reported (acks, errors, its event lines). So these rules name mechanisms
// a maintainer recognises from the outside, each only when the history
// holds the whole chain, and the function is the client's name: where in
// the client it happens is for its source, which the finding's report
// cites (docs/findings/).
//
// The rules, in the order they are tried:
//   sequence-reuse: the broker answered a batch as the duplicate of one it
//     holds under the same epoch and sequence, but the two carry other
//     messages: the client gave a sequence number to a second batch (after
//     taking it back when the first one's answer failed), so the second is
//     acknowledged at the first's offset and is in no log, and what is
//     retried later may be written twice.
//   rewritten-under-new-sequence / rewritten-under-new-epoch: a message
//     appended twice, the second time under another sequence (or epoch),
//     after its first write's answer failed or was lost: the broker cannot
//     know it for a resend.
//   not-persisted-but-written: the client reported a message failed and
//     not persisted (librdkafka's NOT_PERSISTED), and a leader had written
//     it.
//   ack-without-write / acked-then-truncated: an acknowledged message no
//     broker answered success for (never written, or written and never
//     confirmed before a truncation), or one a broker confirmed whose
//     write was truncated away afterwards.
//   retry-overtaken: a message whose attempt the broker refused (or whose
//     answer was lost) was written after a later message of its partition.
//   regrouped-retry: a leader wrote a batch and its answer was lost; the
//     client resent its messages regrouped with others, as a batch whose
//     sequences overlap the written one's without matching them, and the
//     broker answered OUT_OF_ORDER_SEQUENCE_NUMBER (Kafka takes only an
//     exact resend, the same first and last sequence, for a duplicate).
//   kept-dead-connection: a blackhole took a connection's state, and the
//     client kept using it, never opening another to that broker, while
//     its messages failed or waited.
//   out-of-order-first-write: the partition's first write under an epoch
//     starts past sequence 0, after the batches before it were refused: a
//     leader with no state for the producer took a later batch first
//     (Kafka before KAFKA-15591 accepts any first sequence), so the
//     refused ones can never be written in order.
//   retry-acked-after-successor: a written batch answered with an error
//     (REQUEST_TIMED_OUT, ...) was retried and acknowledged as a duplicate
//     after a later batch of its partition had been acknowledged: the
//     client's acknowledgements (the Java client's callbacks) out of the
//     partition's order.
//   null-record-set: a Produce request carrying a null record set for a
//     partition (franz-go writes one for a batch failed while the request
//     was being built, sink.go); Kafka before 2.8 validates every
//     partition's records as it parses the request and closes the
//     connection, so the request's other batches fail with it.
//   stalled-after-heal: messages unresolved (or the client not closed)
//     long after the last fault healed.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/assert.h"
#include "checks/chain.h"
#include "checks/check_registry.h"
#include "checks/check_support.h"

namespace checks::internal {
namespace {

using kafka::AppendEvent;
using kafka::ResponseEvent;

bool Contains(const std::vector<uint64_t>& ids, uint64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool Intersects(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  return std::any_of(a.begin(), a.end(), [&](uint64_t id) { return Contains(b, id); });
}

bool SameSet(std::vector<uint64_t> a, std::vector<uint64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::string Ids(const std::vector<uint64_t>& ids) { return absl::StrJoin(ids, ","); }

// The client's name without its version ("kafkajs 2.2.4" -> "kafkajs").
std::string Family(const RunRecord& r) {
  const std::string& name = r.client->name;
  const std::string family = name.substr(0, name.find(' '));
  return family.empty() ? "client" : family;
}

std::string AppendText(const AppendEvent& a) {
  return absl::StrCat("broker ", a.broker.value, " appends ", a.tp.ToString(), " offset ",
                      a.base_offset.value, " ids ", Ids(a.record_ids), " (epoch ", a.epoch.value,
                      " seq ", a.first_seq.value, "..", a.last_seq.value, ")");
}

std::string AnswerText(const ResponseEvent& e) {
  std::string out = absl::StrCat("broker ", e.broker.value, " answers corr=", e.correlation_id, " ",
                                 e.tp.ToString());
  if (e.first_seq.value >= 0) {
    absl::StrAppend(&out, " (epoch ", e.epoch.value, " seq ", e.first_seq.value, ")");
  }
  if (!e.record_ids.empty()) absl::StrAppend(&out, " ids ", Ids(e.record_ids));
  absl::StrAppend(&out, " ", std::string(kafka::ErrorCodeName(e.error)));
  if (e.duplicate) {
    absl::StrAppend(&out, " as a duplicate of offset ", e.base_offset.value);
  } else if (e.error == kafka::ErrorCode::NONE) {
    absl::StrAppend(&out, " offset ", e.base_offset.value);
  }
  if (e.fate != kafka::ResponseFate::kSent) {
    absl::StrAppend(&out, " (", std::string(kafka::ResponseFateName(e.fate)), ")");
  }
  return out;
}

// The answer to the request that appended `a`: the first produce answer on
// its partition at or after it, at its offset and not as a duplicate.
const ResponseEvent* AnswerOf(const RunRecord& r, const AppendEvent& a) {
  for (const ResponseEvent& e : r.kafka.responses) {
    if (e.api == kafka::ApiKey::kProduce && e.tp == a.tp && e.at >= a.at && !e.duplicate &&
        (e.base_offset == a.base_offset || e.error != kafka::ErrorCode::NONE)) {
      return &e;
    }
  }
  return nullptr;
}

// A failed answer: an error, or one the client never received.
bool Failed(const ResponseEvent* e) {
  return e != nullptr &&
         (e->error != kafka::ErrorCode::NONE || e->fate != kafka::ResponseFate::kSent);
}

void AckLines(Chain& chain, const RunRecord& r, const std::vector<uint64_t>& ids) {
  for (const sarama::AckEvent& a : r.producer.acks) {
    if (!Contains(ids, a.id)) continue;
    chain.Line(a.at, absl::StrCat("the client reports id=", a.id, " written at ", a.topic, "/",
                                  a.partition, " offset ",
                                  a.offset_known ? absl::StrCat(a.offset) : "unknown"));
  }
}

std::optional<Signature> SequenceReuse(const RunRecord& r, const Violation& v) {
  if (v.check != kAckedAreDurable && v.check != kNoDuplicates && v.check != kAckedBatchesInOrder &&
      v.check != kEveryMessageOneOutcome) {
    return std::nullopt;
  }
  const Subject& s = v.subject;
  for (const ResponseEvent& d : r.kafka.responses) {
    if (!d.duplicate || d.at > std::max(s.at, r.run.end_time)) continue;
    if (!s.topic.empty() && (d.tp.topic != s.topic || d.tp.partition.value != s.partition)) {
      continue;
    }
    // The batch the broker holds at the answered offset.
    for (const AppendEvent& held : r.kafka.appends) {
      if (!held.leader || held.tp != d.tp || held.base_offset != d.base_offset || held.at > d.at ||
          SameSet(held.record_ids, d.record_ids)) {
        continue;
      }
      if (!s.ids.empty() && !Intersects(s.ids, d.record_ids) &&
          !Intersects(s.ids, held.record_ids)) {
        continue;
      }
      Chain chain(r, v, s);
      chain.Line(held.at, AppendText(held));
      if (const ResponseEvent* first = AnswerOf(r, held); Failed(first)) {
        chain.Line(first->at, AnswerText(*first));
      }
      chain.Line(d.at, absl::StrCat(AnswerText(d), ", which holds ids ", Ids(held.record_ids),
                                    ": the client gave epoch ", d.epoch.value, " seq ",
                                    d.first_seq.value, " to a second batch"));
      AckLines(chain, r, d.record_ids);
      // The first batch's messages written again, under a later sequence.
      for (const AppendEvent& again : r.kafka.appends) {
        if (again.leader && again.at > held.at && again.tp == held.tp &&
            Intersects(again.record_ids, held.record_ids)) {
          chain.Line(again.at, absl::StrCat(AppendText(again), ": written again"));
          break;
        }
      }
      return chain.Done("sequence-reuse", Family(r));
    }
  }
  return std::nullopt;
}

std::optional<Signature> Rewritten(const RunRecord& r, const Violation& v) {
  if (v.check != kNoDuplicates || v.subject.ids.empty()) return std::nullopt;
  const uint64_t id = v.subject.ids.front();
  const AppendEvent* first = nullptr;
  for (const AppendEvent& a : r.kafka.appends) {
    if (!a.leader || !Contains(a.record_ids, id)) continue;
    if (first == nullptr) {
      first = &a;
      continue;
    }
    const bool new_epoch = a.epoch != first->epoch;
    const bool new_seq = a.first_seq != first->first_seq;
    if (!new_epoch && !new_seq) continue;
    Chain chain(r, v, v.subject);
    chain.Line(first->at, AppendText(*first));
    if (const ResponseEvent* answer = AnswerOf(r, *first); Failed(answer)) {
      chain.Line(answer->at, AnswerText(*answer));
    }
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (e.id == id && e.at >= first->at && e.at <= a.at) {
        chain.Line(e.at, absl::StrCat("the client reports id=", id, " failed: ", e.err.ToString()));
        break;
      }
    }
    chain.Line(a.at, absl::StrCat(AppendText(a), ": the same message under another ",
                                  new_epoch ? "epoch" : "sequence"));
    return chain.Done(new_epoch ? "rewritten-under-new-epoch" : "rewritten-under-new-sequence",
                      Family(r));
  }
  return std::nullopt;
}

std::optional<Signature> NotPersistedButWritten(const RunRecord& r, const Violation& v) {
  if (v.check != kNotPersistedAbsent || v.subject.ids.empty()) return std::nullopt;
  const uint64_t id = v.subject.ids.front();
  Chain chain(r, v, v.subject);
  bool written = false;
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader && Contains(a.record_ids, id)) {
      chain.Line(a.at, AppendText(a));
      if (const ResponseEvent* answer = AnswerOf(r, a); answer != nullptr) {
        chain.Line(answer->at, AnswerText(*answer));
      }
      written = true;
      break;
    }
  }
  if (!written) return std::nullopt;
  return chain.Done("not-persisted-but-written", Family(r));
}

// Whether a broker answered success for a request carrying `id`: the
// answer to its append, or a duplicate answer naming it.
const ResponseEvent* SuccessFor(const RunRecord& r, uint64_t id) {
  for (const ResponseEvent& e : r.kafka.responses) {
    if (e.error == kafka::ErrorCode::NONE && e.duplicate && Contains(e.record_ids, id)) return &e;
  }
  for (const AppendEvent& a : r.kafka.appends) {
    if (!a.leader || !Contains(a.record_ids, id)) continue;
    const ResponseEvent* answer = AnswerOf(r, a);
    if (answer != nullptr && answer->error == kafka::ErrorCode::NONE) return answer;
  }
  return nullptr;
}

// An acknowledged message in no log: ack-without-write when no broker
// answered success for it (nothing the client read said it was written:
// it was never sent, or its append was never confirmed and then
// truncated); acked-then-truncated when a broker did and the write was
// lost afterwards.
std::optional<Signature> AckedLost(const RunRecord& r, const Violation& v) {
  if (v.check != kAckedAreDurable || v.subject.ids.size() != 1) return std::nullopt;
  const uint64_t id = v.subject.ids.front();
  Chain chain(r, v, v.subject);
  const AppendEvent* written = nullptr;
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader && Contains(a.record_ids, id)) {
      written = &a;
      chain.Line(a.at, AppendText(a));
    }
  }
  const kafka::TruncateEvent* truncated = nullptr;
  for (const kafka::TruncateEvent& t : r.kafka.truncations) {
    if (written != nullptr && t.tp == written->tp && t.at > written->at &&
        t.new_end <= written->base_offset) {
      truncated = &t;
      chain.Line(t.at, absl::StrCat("broker ", t.broker.value, " truncates ", t.tp.ToString(),
                                    " to offset ", t.new_end.value));
      break;
    }
  }
  AckLines(chain, r, {id});
  const ResponseEvent* success = SuccessFor(r, id);
  if (success == nullptr) {
    chain.Line(r.run.end_time,
               absl::StrCat("no broker answered success for a request carrying id=", id));
    return chain.Done("ack-without-write", Family(r));
  }
  if (truncated != nullptr) {
    chain.Line(success->at, AnswerText(*success));
    return chain.Done("acked-then-truncated", Family(r));
  }
  return std::nullopt;
}

std::optional<Signature> RetryOvertaken(const RunRecord& r, const Violation& v) {
  if (v.check != kPerPartitionOrder || v.subject.ids.size() < 2) return std::nullopt;
  const uint64_t late = v.subject.ids[0], overtaker = v.subject.ids[1];
  const ResponseEvent* refused = nullptr;
  for (const ResponseEvent& e : r.kafka.responses) {
    if (e.at <= v.subject.at && Failed(&e) && Contains(e.record_ids, late)) refused = &e;
  }
  // A lost answer to a written batch of it.
  const AppendEvent* lost = nullptr;
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader && a.at <= v.subject.at && Contains(a.record_ids, late) &&
        Failed(AnswerOf(r, a))) {
      lost = &a;
    }
  }
  if (refused == nullptr && lost == nullptr) return std::nullopt;
  Chain chain(r, v, v.subject);
  if (refused != nullptr) chain.Line(refused->at, AnswerText(*refused));
  if (lost != nullptr) {
    chain.Line(lost->at, AppendText(*lost));
    chain.Line(AnswerOf(r, *lost)->at, AnswerText(*AnswerOf(r, *lost)));
  }
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader && a.at <= v.subject.at && Contains(a.record_ids, overtaker)) {
      chain.Line(a.at, absl::StrCat(AppendText(a), ": a later message first"));
      break;
    }
  }
  return chain.Done("retry-overtaken", Family(r));
}

// out-of-order-first-write: the violation's batch is the first in the
// final log under its epoch and starts at sequence N > 0; before it was
// appended, the broker refused a batch of that partition and epoch with a
// lower sequence, none of whose messages the client acknowledged.
std::optional<Signature> OutOfOrderFirstWrite(const RunRecord& r, const Violation& v) {
  if (v.check != kLogSequencesContiguous || v.subject.sequence <= 0 || v.subject.ids.empty()) {
    return std::nullopt;
  }
  const AppendEvent* first = nullptr;
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader && a.tp.topic == v.subject.topic && a.tp.partition.value == v.subject.partition &&
        a.epoch.value == v.subject.epoch && a.first_seq.value == v.subject.sequence &&
        Contains(a.record_ids, v.subject.ids[0])) {
      first = &a;
      break;
    }
  }
  if (first == nullptr) return std::nullopt;
  const ResponseEvent* refused = nullptr;
  for (const ResponseEvent& e : r.kafka.responses) {
    if (e.api == kafka::ApiKey::kProduce && e.tp == first->tp && e.at <= first->at &&
        e.error != kafka::ErrorCode::NONE && e.epoch == first->epoch && e.first_seq.value >= 0 &&
        e.first_seq.value < first->first_seq.value) {
      refused = &e;
    }
  }
  if (refused == nullptr) return std::nullopt;
  // A refused message the client then acknowledged is its own mistake
  // (librdkafka's implicit ack: ack-without-write, on acked-are-durable).
  for (const sarama::AckEvent& a : r.producer.acks) {
    if (Contains(refused->record_ids, a.id)) return std::nullopt;
  }
  Chain chain(r, v, v.subject);
  chain.Line(refused->at, absl::StrCat(AnswerText(*refused), ": an earlier batch refused"));
  chain.Line(first->at,
             absl::StrCat(AppendText(*first), ": the first write of epoch ", first->epoch.value,
                          ", past sequence 0 (a leader with no state for the producer takes any "
                          "first sequence: Kafka before KAFKA-15591)"));
  return chain.Done("out-of-order-first-write", Family(r));
}

// retry-acked-after-successor: two acks of one partition and epoch in the
// wrong order, the late one for a batch a leader wrote whose first answer
// was an error, acknowledged when its resend was answered as a duplicate.
std::optional<Signature> RetryAckedAfterSuccessor(const RunRecord& r, const Violation& v) {
  if (v.check != kAckedBatchesInOrder) return std::nullopt;
  for (size_t i = 0; i < r.producer.acks.size(); ++i) {
    const sarama::AckEvent& late = r.producer.acks[i];
    if (!late.has_sequence) continue;
    for (size_t j = 0; j < i; ++j) {
      const sarama::AckEvent& early = r.producer.acks[j];
      if (!early.has_sequence || early.topic != late.topic || early.partition != late.partition ||
          early.producer_epoch != late.producer_epoch || early.sequence <= late.sequence) {
        continue;
      }
      const AppendEvent* written = nullptr;
      for (const AppendEvent& a : r.kafka.appends) {
        if (a.leader && a.at <= early.at && Contains(a.record_ids, late.id) &&
            a.epoch.value == late.producer_epoch) {
          written = &a;
          break;
        }
      }
      if (written == nullptr) continue;
      const ResponseEvent* failed = AnswerOf(r, *written);
      if (!Failed(failed) || failed->at > early.at) continue;
      const ResponseEvent* duplicate = nullptr;
      for (const ResponseEvent& e : r.kafka.responses) {
        if (e.duplicate && e.at >= early.at && e.at <= late.at && Contains(e.record_ids, late.id)) {
          duplicate = &e;
          break;
        }
      }
      if (duplicate == nullptr) continue;
      const Subject subject = families::AckSubject(late);  // Chain keeps a reference
      Chain chain(r, v, subject);
      chain.Line(written->at, AppendText(*written));
      chain.Line(failed->at, absl::StrCat(AnswerText(*failed), ": written, answered an error"));
      chain.Line(early.at, absl::StrCat("the client reports id=", early.id, " (seq ",
                                        early.sequence, ") written: the later batch first"));
      chain.Line(duplicate->at, absl::StrCat(AnswerText(*duplicate), ": the resend"));
      chain.Line(late.at, absl::StrCat("the client reports id=", late.id, " (seq ", late.sequence,
                                       ") written, after seq ", early.sequence));
      return chain.Done("retry-acked-after-successor", Family(r));
    }
  }
  return std::nullopt;
}

// null-record-set: the client's malformed frame is a Produce request with
// a null record set, and a message of the partition failed before it.
std::optional<Signature> NullRecordSet(const RunRecord& r, const Violation& v) {
  if (v.check != kClientMalformedFrame || !r.client.has_value()) return std::nullopt;
  const std::string* frame = nullptr;
  for (const std::string& m : r.client->malformed_frames) {
    if (m.find("Produce") != std::string::npos && m.find("null record set") != std::string::npos) {
      frame = &m;
      break;
    }
  }
  if (frame == nullptr) return std::nullopt;
  Chain chain(r, v, v.subject);
  for (const sarama::ErrorEvent& e : r.producer.errors) {
    chain.Line(e.at, absl::StrCat("the client reports id=", e.id,
                                  " failed: a batch it had "
                                  "built, failed before the request was written"));
    break;
  }
  chain.Line(r.run.end_time, absl::StrCat(frame->substr(0, 160),
                                          ": Kafka before 2.8 parses every partition's records "
                                          "and closes the connection"));
  return chain.Done("null-record-set", Family(r));
}

// regrouped-retry: the violation's answer is the broker's
// OUT_OF_ORDER_SEQUENCE_NUMBER to a batch that carries a message a leader
// had already written under the same epoch, in a batch whose answer the
// client never got (or got as an error), and whose sequences the resend
// overlaps without matching them.
std::optional<Signature> RegroupedRetry(const RunRecord& r, const Violation& v) {
  if (v.check != kNoBrokerSequenceError || v.subject.correlation_id < 0) return std::nullopt;
  const ResponseEvent* refused = nullptr;
  for (const ResponseEvent& e : r.kafka.responses) {
    if (e.at == v.subject.at && e.broker.value == v.subject.broker &&
        e.correlation_id == v.subject.correlation_id &&
        e.error == kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER) {
      refused = &e;
      break;
    }
  }
  if (refused == nullptr || refused->first_seq.value < 0 || refused->record_ids.empty()) {
    return std::nullopt;
  }
  const int32_t first = refused->first_seq.value;
  const int32_t last = first + static_cast<int32_t>(refused->record_ids.size()) - 1;
  for (const AppendEvent& a : r.kafka.appends) {
    if (!a.leader || a.at > refused->at || a.tp != refused->tp || a.epoch != refused->epoch ||
        !Intersects(a.record_ids, refused->record_ids)) {
      continue;
    }
    const bool overlaps = a.first_seq.value <= last && first <= a.last_seq.value;
    const bool same = a.first_seq.value == first && a.last_seq.value == last;
    const ResponseEvent* answer = AnswerOf(r, a);
    if (!overlaps || same || !Failed(answer)) continue;
    Chain chain(r, v, v.subject);
    chain.Line(a.at, AppendText(a));
    chain.Line(answer->at, AnswerText(*answer));
    chain.Line(refused->at, absl::StrCat(AnswerText(*refused), ": the client resent ids ",
                                         Ids(refused->record_ids), " as seq ", first, "..", last,
                                         ", overlapping the written seq ", a.first_seq.value, "..",
                                         a.last_seq.value, " without matching it"));
    return chain.Done("regrouped-retry", Family(r));
  }
  return std::nullopt;
}

// The broker a blackhole fault was on ("blackhole client<->broker-2: ..."),
// or -1 (fault_models/faults.cc Blackhole::Describe).
int32_t BlackholedBroker(const kafka::FaultEvent& f) {
  constexpr std::string_view kPrefix = "blackhole client<->broker-";
  if (f.healed || f.description.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  int32_t b = 0;
  size_t i = kPrefix.size();
  if (i >= f.description.size() || f.description[i] < '0' || f.description[i] > '9') return -1;
  for (; i < f.description.size() && f.description[i] >= '0' && f.description[i] <= '9'; ++i) {
    b = b * 10 + (f.description[i] - '0');
  }
  return b;
}

// kept-dead-connection: a middlebox lost a connection's state (blackhole:
// every packet of the connections open then is dropped; new ones work),
// and the client went on using that connection, never opening another to
// the broker, while its messages failed or waited: it gives up on requests
// (its request timeout) without giving up on the connection.
std::optional<Signature> KeptDeadConnection(const RunRecord& r, const Violation& v) {
  if (v.check != kLiveness && v.check != kClientHung) return std::nullopt;
  for (const kafka::FaultEvent& f : r.kafka.faults) {
    const int32_t broker = BlackholedBroker(f);
    if (broker < 0) continue;
    const kafka::ConnectionEvent* held = nullptr;  // open at the fault
    bool reopened = false;
    for (const kafka::ConnectionEvent& c : r.kafka.connections) {
      if (c.broker.value != broker) continue;
      if (c.opened && c.at <= f.at) held = &c;
      if (!c.opened && held != nullptr && c.connection == held->connection && c.at <= f.at) {
        held = nullptr;
      }
      if (c.opened && c.at > f.at) reopened = true;
    }
    if (held == nullptr || reopened) continue;
    // Messages produced after the fault that never reached a log.
    std::vector<uint64_t> lost_after;
    for (const ProducedMessage& m : r.produced) {
      if (m.at <= f.at) continue;
      bool written = false;
      for (const AppendEvent& a : r.kafka.appends) {
        if (a.leader && a.broker.value == broker && Contains(a.record_ids, m.id)) written = true;
      }
      if (!written) lost_after.push_back(m.id);
    }
    if (lost_after.empty()) continue;
    Chain chain(r, v, v.subject);
    chain.Line(held->at, absl::StrCat("the client opens connection #", held->connection,
                                      " to broker ", broker));
    chain.Line(f.at, absl::StrCat("fault: ", f.description));
    for (const sarama::ErrorEvent& e : r.producer.errors) {
      if (e.at > f.at) {
        chain.Line(e.at, absl::StrCat("the client reports id=", e.id, " failed: ", e.err.ToString(),
                                      "; no connection to broker ", broker,
                                      " was opened after the fault"));
        break;
      }
    }
    if (!r.client->events.empty()) {
      const auto& [at, line] = r.client->events.back();
      chain.Line(at, absl::StrCat("the client's last line: ", line.substr(0, 160)));
    }
    return chain.Done("kept-dead-connection", Family(r));
  }
  return std::nullopt;
}

std::optional<Signature> StalledAfterHeal(const RunRecord& r, const Violation& v) {
  if (v.check != kLiveness) return std::nullopt;
  Chain chain(r, v, v.subject);
  const kafka::FaultEvent* heal = nullptr;
  for (const kafka::FaultEvent& f : r.kafka.faults) {
    if (f.healed) heal = &f;
  }
  if (heal == nullptr) return std::nullopt;
  chain.Line(heal->at, absl::StrCat("healed: ", heal->description));
  const AppendEvent* last = nullptr;
  for (const AppendEvent& a : r.kafka.appends) {
    if (a.leader) last = &a;
  }
  if (last != nullptr) chain.Line(last->at, absl::StrCat("the last write: ", AppendText(*last)));
  if (!r.client->events.empty()) {
    const auto& [at, line] = r.client->events.back();
    chain.Line(at, absl::StrCat("the client's last line: ", line.substr(0, 160)));
  }
  return chain.Done("stalled-after-heal", Family(r));
}

}  // namespace

std::optional<Signature> ClassifyRealClient(const RunRecord& r, const Violation& v) {
  if (!r.client.has_value()) return std::nullopt;
  PRODSIM_ASSERT(!v.check.empty());
  using Rule = std::optional<Signature> (*)(const RunRecord&, const Violation&);
  constexpr Rule kRealRules[] = {
      &SequenceReuse,  &Rewritten,          &NotPersistedButWritten, &AckedLost,
      &RetryOvertaken, &RegroupedRetry,     &OutOfOrderFirstWrite,   &RetryAckedAfterSuccessor,
      &NullRecordSet,  &KeptDeadConnection, &StalledAfterHeal};
  for (Rule rule : kRealRules) {
    if (std::optional<Signature> sig = rule(r, v)) {
      // A real client's signature names its client, not a Sarama function.
      PRODSIM_ASSERT(!sig->mechanism.empty());
      PRODSIM_ASSERT(!sig->function.empty());
      return sig;
    }
  }
  return std::nullopt;
}

}  // namespace checks::internal
