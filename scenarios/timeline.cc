#include "scenarios/timeline.h"

#include <cstdio>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scenarios {
namespace {

// Process ids of the track groups.
constexpr int kTasksPid = 1, kBrokersPid = 2, kConnectionsPid = 3, kEventsPid = 4;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// Trace-event time: microseconds, with the nanoseconds as decimals.
std::string Us(sim::Time t) {
  return absl::StrCat(t.nanos() / 1000, ".", absl::StrFormat("%03d", t.nanos() % 1000));
}

class Writer {
 public:
  void Event(const std::string& name, char ph, sim::Time at, int pid, uint64_t tid) {
    Add(absl::StrCat("{\"name\":\"", Escape(name), "\",\"ph\":\"", std::string(1, ph),
                     "\",\"ts\":", Us(at), ",\"pid\":", pid, ",\"tid\":", tid,
                     ph == 'i' ? ",\"s\":\"t\"" : "", "}"));
  }
  void Name(int pid, uint64_t tid, const std::string& name) {
    Add(absl::StrCat("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid,
                     ",\"args\":{\"name\":\"", Escape(name), "\"}}"));
  }
  void Process(int pid, const std::string& name) {
    Add(absl::StrCat("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":", pid,
                     ",\"args\":{\"name\":\"", Escape(name), "\"}}"));
  }
  std::string Done() { return out_ + "\n]}\n"; }

 private:
  void Add(const std::string& e) {
    out_ += first_ ? "\n" : ",\n";
    out_ += e;
    first_ = false;
  }
  std::string out_ = "{\"traceEvents\":[";
  bool first_ = true;
};

// Tasks: a slice from each resume to the next block, switch or exit.
void Tasks(const sim::Scheduler& sched, Writer& w) {
  absl::btree_map<uint32_t, bool> running;
  for (const sim::TraceEvent& e : sched.trace().events()) {
    switch (e.kind) {
      case sim::EventKind::kSpawn:
        w.Name(kTasksPid, e.a, sched.TaskName(static_cast<uint32_t>(e.a)));
        break;
      case sim::EventKind::kRun:
        running[static_cast<uint32_t>(e.a)] = true;
        w.Event("run", 'B', e.at, kTasksPid, e.a);
        break;
      case sim::EventKind::kBlock:
      case sim::EventKind::kPreempt:
      case sim::EventKind::kExit: {
        const uint32_t task = e.kind == sim::EventKind::kExit ? static_cast<uint32_t>(e.a) : e.task;
        if (running[task]) w.Event("run", 'E', e.at, kTasksPid, task);
        running[task] = false;
        break;
      }
      case sim::EventKind::kNote:
        // Network notes read "net <what> c<id> ...": one track per connection.
        if (e.text.rfind("net ", 0) == 0) {
          const size_t c = e.text.find(" c");
          const uint64_t conn =
              c == std::string::npos ? 0 : std::strtoull(e.text.c_str() + c + 2, nullptr, 10);
          w.Event(e.text.substr(4), 'i', e.at, kConnectionsPid, conn);
        }
        break;
      default: break;
    }
  }
}

}  // namespace

std::string TimelineJson(const sim::Scheduler& sched, const checks::RunRecord& r) {
  Writer w;
  w.Process(kTasksPid, "tasks");
  w.Process(kBrokersPid, "brokers");
  w.Process(kConnectionsPid, "connections");
  w.Process(kEventsPid, "faults and outcomes");
  w.Name(kEventsPid, 1, "faults");
  w.Name(kEventsPid, 2, "acks");
  w.Name(kEventsPid, 3, "errors");
  Tasks(sched, w);
  for (const kafka::AppendEvent& a : r.kafka.appends) {
    w.Event(absl::StrCat(a.leader ? "append " : "replicate ", a.tp.ToString(), " @",
                         a.base_offset.value, " seq ", a.first_seq.value, "..", a.last_seq.value),
            'i', a.at, kBrokersPid, static_cast<uint64_t>(a.broker.value));
  }
  for (const kafka::ResponseEvent& x : r.kafka.responses) {
    w.Event(
        absl::StrCat("response ", x.tp.ToString(), " ", std::string(kafka::ErrorCodeName(x.error)),
                     x.fate != kafka::ResponseFate::kSent
                         ? absl::StrCat(" (", std::string(kafka::ResponseFateName(x.fate)), ")")
                         : std::string()),
        'i', x.at, kBrokersPid, static_cast<uint64_t>(x.broker.value));
  }
  for (const kafka::FaultEvent& f : r.kafka.faults) {
    w.Event(absl::StrCat(f.healed ? "heal: " : "fault: ", f.description), 'i', f.at, kEventsPid, 1);
  }
  for (const sarama::AckEvent& a : r.producer.acks) {
    w.Event(absl::StrCat("ack id=", a.id, " ", a.topic, "/", a.partition, " seq ", a.sequence), 'i',
            a.at, kEventsPid, 2);
  }
  for (const sarama::ErrorEvent& e : r.producer.errors) {
    w.Event(absl::StrCat("error id=", e.id, " ", e.err.ToString()), 'i', e.at, kEventsPid, 3);
  }
  return w.Done();
}

}  // namespace scenarios
