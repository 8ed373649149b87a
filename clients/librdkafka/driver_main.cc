// prodsim-librdkafka: the driver that runs a real librdkafka producer (the
// C API of Debian's librdkafka 2.0.2) against prodsim's cluster, speaking the
// driver protocol of clients/README.md: one job line on stdin, one JSON
// event per line on stdout, librdkafka's own log on stderr.
//
// Everything the driver prints comes from the main thread: librdkafka runs
// the delivery-report and error callbacks only inside rd_kafka_poll and
// rd_kafka_flush, which only the main thread calls. So the output needs no
// lock, and a message's "produce" line always comes before its outcome.
//
// Every id that was offered to produce() ends in exactly one of: a
// "produce" line followed by one "ack" or "error" line from its delivery
// report, or (when produce() itself refused it) an "error" line with
// partition -1 and no "produce" line. Ids not reached before close_at_us
// print nothing. Anything else (a second report, a missing one) is
// librdkafka's doing and is printed as it happens, for prodsim to judge.
//
// Choices the protocol leaves open, made here:
//   - The job's `bootstrap` is set after the config pairs, so it wins.
//   - The value is `value_bytes` bytes of 'a'..'z' repeated (empty, not
//     null, for 0), copied into librdkafka (RD_KAFKA_MSG_F_COPY).
//   - "text" of a delivery error is rd_kafka_err2str: rd_kafka.h says
//     rd_kafka_message_errstr must not be used with the producer.
//   - "fatal" is whether the instance has a fatal error raised at the time
//     of the report (rd_kafka_fatal_error), or the produce() error says so.
//   - A message that meets QUEUE_FULL is retried after a 10 ms poll for at
//     most kQueueFullWaitUsMax, then reported as an error with that code.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/assert.h"
#include "clients/librdkafka/job.h"
#include "wire/json.h"

namespace clients {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitJobError = 2;
constexpr int kExitCreateError = 3;

constexpr int64_t kQueueFullWaitUsMax = 60'000'000;
constexpr int kQueueFullPollMs = 10;
constexpr int64_t kPollSliceMsMax = 100;
// After a purge, how long the driver serves the purged messages' reports.
constexpr int kPurgeDrainMs = 5000;
// A text field longer than this (librdkafka's error strings) is cut.
constexpr size_t kTextBytesMax = 4096;
constexpr size_t kErrstrBytes = 512;
constexpr char kHeaderName[] = "prodsim-id";

using Clock = std::chrono::steady_clock;

// Cuts `text` to kTextBytesMax bytes, not inside a UTF-8 sequence.
std::string_view Cut(std::string_view text) {
  if (text.size() <= kTextBytesMax) return text;
  size_t end = kTextBytesMax;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

// One event line, built member by member: {"event":NAME,...}.
class Event {
 public:
  explicit Event(std::string_view name) {
    line_ = "{\"event\":";
    json::AppendQuoted(&line_, name);
  }
  Event& Int(std::string_view key, int64_t value) {
    Key(key);
    absl::StrAppend(&line_, value);
    return *this;
  }
  Event& Str(std::string_view key, std::string_view value) {
    Key(key);
    json::AppendQuoted(&line_, Cut(value));
    return *this;
  }
  Event& Bool(std::string_view key, bool value) {
    Key(key);
    line_.append(value ? "true" : "false");
    return *this;
  }
  Event& Null(std::string_view key) {
    Key(key);
    line_.append("null");
    return *this;
  }
  // The finished line, with its newline.
  std::string Line() const { return line_ + "}\n"; }

 private:
  void Key(std::string_view key) {
    line_.push_back(',');
    json::AppendQuoted(&line_, key);
    line_.push_back(':');
  }
  std::string line_;
};

// Writes a whole line and flushes it, so prodsim sees each event when it
// happens. A failed write (prodsim gone; SIGPIPE is ignored) is dropped:
// the run is bounded anyway and ends on its own.
void Write(std::FILE* stream, const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stream);
  std::fflush(stream);
}

void PrintJobError(std::string_view text) {
  Write(stdout, Event("job_error").Str("text", text).Line());
}

std::string_view StatusName(rd_kafka_msg_status_t status) {
  switch (status) {
    case RD_KAFKA_MSG_STATUS_NOT_PERSISTED: return "not_persisted";
    case RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED: return "possibly_persisted";
    case RD_KAFKA_MSG_STATUS_PERSISTED: return "persisted";
  }
  return "unknown";  // a status newer than 2.0.2's three
}

class Driver {
 public:
  Driver(const Job& job, Clock::time_point start) : job_(job), start_(start) {
    value_.resize(static_cast<size_t>(job.value_bytes));
    for (size_t i = 0; i < value_.size(); ++i) value_[i] = static_cast<char>('a' + i % 26);
  }
  ~Driver() {
    if (rk_ != nullptr) rd_kafka_destroy(rk_);
  }
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Configures and creates the producer. On failure prints a job_error
  // line and returns the exit code (2: a property librdkafka refuses, 3:
  // rd_kafka_new fails); kExitOk on success.
  int Create();
  // REQUIRES: Create() returned kExitOk. Produces, closes; the exit code.
  int Run();

 private:
  int64_t NowUs() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start_).count();
  }
  bool CloseDue() const { return job_.close_at_us >= 0 && NowUs() >= job_.close_at_us; }
  bool FatalRaised() const {
    char errstr[kErrstrBytes];
    return rd_kafka_fatal_error(rk_, errstr, sizeof errstr) != RD_KAFKA_RESP_ERR_NO_ERROR;
  }
  void Emit(Event& event);
  absl::Status Set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value);
  absl::Status Configure(rd_kafka_conf_t* conf);
  bool WaitUntil(int64_t due_us);
  bool Produce(int64_t id);
  void EmitProduceError(int64_t id, const rd_kafka_error_t* error);
  void Close();
  void OnDelivery(const rd_kafka_message_t& message);
  void OnError(int err, const char* reason);

  static void DeliveryThunk(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
    static_cast<Driver*>(opaque)->OnDelivery(*message);
  }
  static void ErrorThunk(rd_kafka_t*, int err, const char* reason, void* opaque) {
    static_cast<Driver*>(opaque)->OnError(err, reason);
  }

  const Job& job_;
  const Clock::time_point start_;
  std::string value_;
  rd_kafka_t* rk_ = nullptr;
  bool closed_ = false;
};

void Driver::Emit(Event& event) {
  event.Int("t_us", NowUs());
  if (closed_) {
    // The protocol ends with "closed"; a callback after it would be
    // librdkafka's surprise, so it goes to stderr where a person sees it.
    Write(stderr, "prodsim-librdkafka: after closed: " + event.Line());
    return;
  }
  Write(stdout, event.Line());
}

absl::Status Driver::Set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char errstr[kErrstrBytes];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof errstr) ==
      RD_KAFKA_CONF_OK) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("config ", json::Quote(name), "=", json::Quote(value), ": ", errstr));
}

// The driver's defaults first, so that the job's pairs override them; the
// job's bootstrap last, so that it cannot be overridden.
absl::Status Driver::Configure(rd_kafka_conf_t* conf) {
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"client.id", "prodsim-librdkafka"},
        // LOG_ERR: librdkafka's errors on stderr, not its notices.
        {"log_level", "3"}}) {
    if (absl::Status s = Set(conf, name, value); !s.ok()) return s;
  }
  for (const auto& [name, value] : job_.config) {
    if (absl::Status s = Set(conf, name, value); !s.ok()) return s;
  }
  if (absl::Status s = Set(conf, "bootstrap.servers", job_.bootstrap); !s.ok()) return s;
  rd_kafka_conf_set_dr_msg_cb(conf, &DeliveryThunk);
  rd_kafka_conf_set_error_cb(conf, &ErrorThunk);
  rd_kafka_conf_set_opaque(conf, this);
  return absl::OkStatus();
}

int Driver::Create() {
  PRODSIM_ASSERT(rk_ == nullptr);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  PRODSIM_ASSERT(conf != nullptr);
  if (absl::Status s = Configure(conf); !s.ok()) {
    rd_kafka_conf_destroy(conf);
    PrintJobError(json::Sv(s.message()));
    return kExitJobError;
  }
  char errstr[kErrstrBytes];
  // On success rd_kafka_new owns `conf`; on failure the caller still does.
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    PrintJobError(absl::StrCat("rd_kafka_new: ", errstr));
    return kExitCreateError;
  }
  return kExitOk;
}

// Serves delivery reports until `due_us`; false if close_at_us comes first.
bool Driver::WaitUntil(int64_t due_us) {
  PRODSIM_ASSERT(rk_ != nullptr);
  while (true) {
    const int64_t now = NowUs();
    if (job_.close_at_us >= 0 && now >= job_.close_at_us) return false;
    if (now >= due_us) return true;
    const int64_t until = job_.close_at_us >= 0 ? std::min(due_us, job_.close_at_us) : due_us;
    const int64_t remaining_us = until - now;
    PRODSIM_ASSERT(remaining_us > 0);
    if (remaining_us >= 1000) {
      rd_kafka_poll(rk_, static_cast<int>(std::min(remaining_us / 1000, kPollSliceMsMax)));
    } else {
      // rd_kafka_poll counts in milliseconds; the last one is slept.
      rd_kafka_poll(rk_, 0);
      std::this_thread::sleep_for(std::chrono::microseconds(remaining_us));
    }
  }
}

// Hands message `id` to librdkafka and prints "produce", or prints its
// "error". False if close_at_us came while QUEUE_FULL held it back.
bool Driver::Produce(int64_t id) {
  PRODSIM_ASSERT(id >= 1);
  PRODSIM_ASSERT(id <= job_.messages);
  const auto index = static_cast<uint64_t>(id - 1);
  const std::string& topic = job_.topics[index % job_.topics.size()];
  const bool keyed = job_.keys > 0;
  const std::string key =
      keyed ? absl::StrCat("key-", index % static_cast<uint64_t>(job_.keys)) : std::string();
  const std::string id_text = absl::StrCat(id);

  rd_kafka_vu_t vus[7] = {};
  size_t n = 0;
  vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[n++].u.cstr = topic.c_str();
  vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[n++].u.i32 = RD_KAFKA_PARTITION_UA;
  vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[n++].u.mem = {value_.data(), value_.size()};
  if (keyed) {
    vus[n].vtype = RD_KAFKA_VTYPE_KEY;
    vus[n++].u.mem = {const_cast<char*>(key.data()), key.size()};  // librdkafka copies keys
  }
  vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
  vus[n].vtype = RD_KAFKA_VTYPE_HEADER;
  vus[n++].u.header = {kHeaderName, id_text.data(), static_cast<ssize_t>(id_text.size())};
  vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
  vus[n++].u.ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(id));
  PRODSIM_ASSERT(n <= std::size(vus));

  const int64_t first_try_us = NowUs();
  while (true) {
    rd_kafka_error_t* error = rd_kafka_produceva(rk_, vus, n);
    if (error == nullptr) {
      Event event("produce");
      event.Int("id", id).Str("topic", topic);
      if (keyed) {
        event.Str("key", key);
      } else {
        event.Null("key");
      }
      Emit(event);
      return true;
    }
    const bool queue_full = rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__QUEUE_FULL;
    if (!queue_full || NowUs() - first_try_us >= kQueueFullWaitUsMax) {
      EmitProduceError(id, error);
      rd_kafka_error_destroy(error);
      return true;
    }
    rd_kafka_error_destroy(error);
    if (CloseDue()) return false;
    rd_kafka_poll(rk_, kQueueFullPollMs);
  }
}

void Driver::EmitProduceError(int64_t id, const rd_kafka_error_t* error) {
  PRODSIM_ASSERT(error != nullptr);
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  PRODSIM_ASSERT(code != RD_KAFKA_RESP_ERR_NO_ERROR);
  Event event("error");
  event.Int("id", id)
      .Int("partition", RD_KAFKA_PARTITION_UA)
      .Int("code", code)
      .Str("name", rd_kafka_err2name(code))
      .Str("text", rd_kafka_error_string(error))
      .Str("status", StatusName(RD_KAFKA_MSG_STATUS_NOT_PERSISTED))
      .Bool("fatal", rd_kafka_error_is_fatal(error) != 0 || FatalRaised());
  Emit(event);
}

void Driver::OnDelivery(const rd_kafka_message_t& message) {
  const auto id = static_cast<int64_t>(reinterpret_cast<uintptr_t>(message._private));
  PRODSIM_ASSERT_MSG(id >= 1, "a delivery report without the driver's opaque");
  PRODSIM_ASSERT_MSG(id <= job_.messages, "a delivery report without the driver's opaque");
  if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    Event event("ack");
    event.Int("id", id).Int("partition", message.partition).Int("offset", message.offset);
    Emit(event);
    return;
  }
  Event event("error");
  event.Int("id", id)
      .Int("partition", message.partition)
      .Int("code", message.err)
      .Str("name", rd_kafka_err2name(message.err))
      .Str("text", rd_kafka_err2str(message.err))
      .Str("status", StatusName(rd_kafka_message_status(&message)))
      .Bool("fatal", FatalRaised());
  Emit(event);
}

void Driver::OnError(int err, const char* reason) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    // The callback carries only __FATAL; the cause is kept on the instance.
    char errstr[kErrstrBytes] = "";
    const rd_kafka_resp_err_t cause = rd_kafka_fatal_error(rk_, errstr, sizeof errstr);
    Event event("fatal");
    event.Int("code", cause).Str("name", rd_kafka_err2name(cause)).Str("text", errstr);
    Emit(event);
    return;
  }
  Event event("client_error");
  event.Int("code", code)
      .Str("name", rd_kafka_err2name(code))
      .Str("text", reason != nullptr ? reason : "");
  Emit(event);
}

// closing, a bounded flush, a purge if anything is left (its reports
// served for at most kPurgeDrainMs), closed, destroy.
void Driver::Close() {
  PRODSIM_ASSERT(rk_ != nullptr);
  PRODSIM_ASSERT(!closed_);
  Event closing("closing");
  closing.Int("outstanding", rd_kafka_outq_len(rk_));
  Emit(closing);
  const bool flushed =
      rd_kafka_flush(rk_, static_cast<int>(job_.flush_timeout_ms)) == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (rd_kafka_outq_len(rk_) > 0) {
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk_, kPurgeDrainMs);  // serves the purged messages' reports
  }
  Event closed("closed");
  closed.Int("outstanding", rd_kafka_outq_len(rk_)).Str("flush", flushed ? "ok" : "timed_out");
  Emit(closed);
  closed_ = true;
  rd_kafka_destroy(rk_);
  rk_ = nullptr;
}

int Driver::Run() {
  PRODSIM_ASSERT(rk_ != nullptr);
  Event start("start");
  start.Int("t_us", NowUs()).Str("client", "librdkafka").Str("version", rd_kafka_version_str());
  Write(stdout, start.Line());
  int64_t id = 1;
  bool close_due = false;
  // As the model's application (scenarios/runner.cc Application): the
  // first burst once the producer exists, each next one interval_us after
  // the previous one was handed over.
  for (int64_t burst = 0; id <= job_.messages && !close_due; ++burst) {
    if (burst > 0 && !WaitUntil(NowUs() + job_.interval_us)) break;
    for (int64_t k = 0; k < job_.burst && id <= job_.messages; ++k, ++id) {
      if (CloseDue() || !Produce(id)) {
        close_due = true;
        break;
      }
      rd_kafka_poll(rk_, 0);
    }
  }
  if (job_.close_at_us >= 0) WaitUntil(job_.close_at_us);
  Close();
  return kExitOk;
}

// The first line of stdin, at most json::kTextBytesMax bytes; false if
// there is none or it is longer.
bool ReadJobLine(std::string* line) {
  while (true) {
    const int c = std::getchar();
    if (c == EOF) return !line->empty();
    if (c == '\n') return true;
    if (line->size() >= json::kTextBytesMax) return false;
    line->push_back(static_cast<char>(c));
  }
}

int Main() {
  const Clock::time_point start = Clock::now();
  std::signal(SIGPIPE, SIG_IGN);
  std::string line;
  if (!ReadJobLine(&line)) {
    PrintJobError(line.empty()
                      ? "no job line on stdin"
                      : absl::StrCat("a job line longer than ", json::kTextBytesMax, " bytes"));
    return kExitJobError;
  }
  absl::StatusOr<Job> job = ParseJob(line);
  if (!job.ok()) {
    PrintJobError(json::Sv(job.status().message()));
    return kExitJobError;
  }
  Driver driver(*job, start);
  if (const int rc = driver.Create(); rc != kExitOk) return rc;
  return driver.Run();
}

}  // namespace
}  // namespace clients

int main() { return clients::Main(); }
