#include "wire/client_lines.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "wire/json_line.h"

namespace wire {
namespace {

// How many lines of garbage a ClientRecord keeps (all are counted).
constexpr size_t kGarbageKept = 5;
// How many functions of a goroutine report are kept: a client stuck in
// more places than this has said enough.
constexpr size_t kGoroutineFunctionsKept = 100;

std::string At(sim::Time at) { return absl::StrCat("t=", at.ToString(), "s "); }

}  // namespace

std::string_view ErrorClassName(ErrorClass c) {
  switch (c) {
    case ErrorClass::kFailed: return "failed";
    case ErrorClass::kNotPersisted: return "not-persisted";
    case ErrorClass::kAssertion: return "assertion";
    case ErrorClass::kAfterFatal: return "after-fatal";
  }
  return "?";
}

ErrorClass ErrorClassOf(std::string_view client, std::string_view name, std::string_view status,
                        bool fatal) {
  // sarama produce_set.go produceSet.add: a fresh errors.New, named by the
  // driver (clients/sarama/errname.go) from its text.
  if (client == "sarama" && name == "ErrProduceSetAssertion") return ErrorClass::kAssertion;
  if (fatal) return ErrorClass::kAfterFatal;
  // The protocol's status is the client's own word on the log
  // (clients/README.md); only librdkafka gives one, from
  // rd_kafka_message_status.
  if (status == "not_persisted") return ErrorClass::kNotPersisted;
  return ErrorClass::kFailed;
}

ClientLines::ClientLines(checks::RunRecord& record, const scenarios::WorkloadSpec& workload,
                         std::vector<std::string> topics)
    : r_(record), c_(*record.client), workload_(workload), job_topics_(std::move(topics)) {
  PRODSIM_ASSERT(record.client.has_value());
}

void ClientLines::Keep(sim::Time at, const std::string& line) {
  ++c_.event_lines;
  if (c_.events.size() < kEventLinesKept) c_.events.emplace_back(at, line);
}

void ClientLines::OnLine(sim::Time at, std::string line) {
  Keep(at, line);
  absl::StatusOr<JsonLine> j = JsonLine::Parse(line);
  const std::optional<std::string> event = j.ok() ? j->String("event") : std::nullopt;
  if (!event) {
    Garbage(at, line, j.ok() ? "no \"event\"" : j.status().message());
    return;
  }
  if (*event == "start") {
    c_.started = true;
    const std::optional<std::string> client = j->String("client");
    const std::optional<std::string> version = j->String("version");
    if (client) client_ = *client;
    r_.order_within_call = j->String("order").value_or("") == "per_call";
    if (client) c_.name = *client;
    if (version) c_.name = absl::StrCat(c_.name, " ", *version);
  } else if (*event == "produce") {
    const std::optional<int64_t> id = j->Int("id");
    const std::optional<std::string> topic = j->String("topic");
    if (!id || *id <= 0 || !topic) return Garbage(at, line, "a produce line needs id and topic");
    const std::optional<std::string> key = j->String("key");
    topics_[static_cast<uint64_t>(*id)] = *topic;
    r_.produced.push_back(
        {static_cast<uint64_t>(*id), *topic, key.value_or(""), at, j->Int("call").value_or(-1)});
  } else if (*event == "ack") {
    const std::optional<int64_t> id = j->Int("id");
    const std::optional<int64_t> partition = j->Int("partition");
    const std::optional<int64_t> offset = j->Int("offset");
    if (!id || !partition || !offset || !topics_.contains(static_cast<uint64_t>(*id))) {
      return Garbage(at, line, "an ack line needs a produced id, partition and offset");
    }
    sarama::AckEvent a;
    a.at = at;
    a.id = static_cast<uint64_t>(*id);
    a.topic = topics_[a.id];
    a.partition = static_cast<int32_t>(*partition);
    a.offset = *offset;
    a.offset_known = *offset >= 0;
    r_.producer.acks.push_back(std::move(a));
  } else if (*event == "error") {
    const std::optional<int64_t> id = j->Int("id");
    if (!id || *id < 0 || job_topics_.empty()) {
      return Garbage(at, line, "an error line needs an id of the job, or 0");
    }
    // An id outside the job (0: the driver could not tell which message)
    // is the client reporting an outcome for a message the application
    // never produced: kept as it is, for every-message-one-outcome.
    const bool of_the_job = *id >= 1 && *id <= workload_.messages;
    if (of_the_job && !topics_.contains(static_cast<uint64_t>(*id))) {
      // The produce call itself refused the message (clients/README.md):
      // it was offered, with the job's topic and key for its id.
      const uint64_t i = static_cast<uint64_t>(*id) - 1;
      const std::string& topic = job_topics_[i % job_topics_.size()];
      topics_[i + 1] = topic;
      r_.produced.push_back({i + 1, topic,
                             workload_.keys > 0
                                 ? absl::StrCat("key-", i % static_cast<uint64_t>(workload_.keys))
                                 : "",
                             at});
    }
    sarama::ErrorEvent e;
    e.at = at;
    e.id = static_cast<uint64_t>(*id);
    e.topic = of_the_job ? topics_[e.id] : "";
    e.partition = static_cast<int32_t>(j->Int("partition").value_or(-1));
    const std::string name = j->String("name").value_or("?");
    const std::string status = j->String("status").value_or("");
    std::string text = absl::StrCat(name, ": ", j->String("text").value_or(""));
    if (!status.empty()) absl::StrAppend(&text, " (", status, ")");
    const ErrorClass cls = ErrorClassOf(client_, name, status, j->Bool("fatal").value_or(false));
    sarama::ErrorKind kind = sarama::ErrorKind::kClient;
    if (cls == ErrorClass::kAssertion) kind = sarama::ErrorKind::kProduceSetAssertion;
    if (cls == ErrorClass::kAfterFatal) kind = sarama::ErrorKind::kClientFatal;
    e.not_persisted = cls == ErrorClass::kNotPersisted;
    e.err = sarama::Error::Of(kind, std::move(text));
    r_.producer.errors.push_back(std::move(e));
  } else if (*event == "fatal") {
    if (!c_.first_fatal_at) c_.first_fatal_at = at;
    c_.fatal_errors.push_back(absl::StrCat(At(at), j->String("name").value_or("?"), ": ",
                                           j->String("text").value_or("")));
  } else if (*event == "client_error") {
    // A known event that no check reads: the line stays in the kept client
    // log (Keep, above) and nothing more is recorded.
  } else if (*event == "closing") {
    r_.close_called_at = at;
    c_.unoffered = std::max<int64_t>(0, j->Int("unoffered").value_or(0));
  } else if (*event == "closed") {
    r_.close_returned_at = at;
    c_.closed = true;
    c_.closed_at = at;
    c_.flush_ok = j->String("flush").value_or("") == "ok";
  } else if (*event == "goroutine") {
    Goroutine(at, line, *j);
  } else if (*event == "goroutines") {
    const std::optional<int64_t> alive = j->Int("alive");
    const std::optional<int64_t> waited = j->Int("waited_us");
    if (!alive || *alive < 0 || !waited || *waited < 0 || c_.goroutines_reported) {
      return Garbage(at, line, "a goroutines line needs alive and waited_us (>= 0), once per run");
    }
    c_.goroutines_reported = true;
    c_.goroutines_alive = *alive;
    c_.goroutines_waited = sim::Duration::Micros(*waited);
  } else if (*event == "job_error") {
    job_error_ = j->String("text").value_or("(no text)");
  } else {
    Garbage(at, line, absl::StrCat("unknown event \"", *event, "\""));
  }
}

// One function the client's goroutines are still in after Close, as the
// model's survivors are recorded (scenarios/runner.cc), so that
// no-leaked-goroutines and the goroutine-leak signature read both worlds
// alike. The runtime's state decides what the model's flags say: a
// sleeper wakes by itself and a runnable one is on its way (not leaks);
// any other state ("chan receive", "select", "semacquire", "IO wait") is
// a goroutine waiting for something, still there after the driver's wait.
void ClientLines::Goroutine(sim::Time at, absl::string_view line, const JsonLine& j) {
  const std::optional<std::string> function = j.String("function");
  const std::optional<std::string> state = j.String("state");
  const std::optional<int64_t> count = j.Int("count");
  const std::optional<int64_t> id = j.Int("goroutine_id");
  if (!function || function->empty() || !state || !count || *count < 1 || !id || *id < 0 ||
      *id > UINT32_MAX || c_.goroutines_reported) {
    return Garbage(at, line,
                   "a goroutine line needs function, state, count >= 1 and goroutine_id, "
                   "before the goroutines line");
  }
  if (r_.producer_goroutines_at_end.size() >= kGoroutineFunctionsKept) return;
  sim::LiveGoroutine g;
  g.id = static_cast<uint32_t>(*id);
  g.name = *function;
  g.sleeping = *state == "sleep";
  g.runnable = *state == "runnable" || *state == "running" || *state == "syscall";
  g.waits_on = *state;
  if (*count > 1) absl::StrAppend(&g.waits_on, " (", *count, " goroutines in this function)");
  r_.producer_goroutines_at_end.push_back(std::move(g));
}

void ClientLines::Garbage(sim::Time at, absl::string_view line, absl::string_view why) {
  ++c_.garbage_lines;
  if (c_.garbage.size() >= kGarbageKept) return;
  c_.garbage.push_back(absl::StrCat(At(at), why, ": ", line.substr(0, 200)));
}

std::string EventsText(const checks::ClientRecord& c) {
  std::string out;
  for (const auto& [at, line] : c.events) absl::StrAppend(&out, At(at), line, "\n");
  if (c.event_lines > static_cast<int64_t>(c.events.size())) {
    absl::StrAppend(&out, "(", c.event_lines - static_cast<int64_t>(c.events.size()),
                    " more line(s) not kept)\n");
  }
  return out;
}

}  // namespace wire
