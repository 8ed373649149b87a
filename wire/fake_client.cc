// prodsim-fake-client: a driver (clients/README.md) that misbehaves on
// purpose, for the tests of a real client's failure signatures
// (checks/client_signature.cc) and of the wire verdicts. It speaks Kafka
// through prodsim's own codec to the first bootstrap broker (the tests use
// a one-broker cluster: the codec's Metadata decoder keeps no addresses),
// produces the job's first messages to partition 0 of the first topic in a
// way chosen by its argument (`prodsim-fake-client MODE`), reports what a real
// client doing that would report, and closes:
//   sequence-reuse   id 1 under seq 0, then id 2 under seq 0 again; the
//                    broker answers id 2 as a duplicate; both acked.
//   rewrite          id 1 under seq 0, then id 1 again under seq 1.
//   not-persisted    id 1 written, reported failed "not_persisted".
//   ack-without-write  id 1 acknowledged without being sent.
//   overtake         not idempotent: id 1 sent with acks=2 (refused,
//                    INVALID_REQUIRED_ACKS), id 2 written, then id 1.
//   stall            id 1 handed over, then nothing until killed.
//   assertion        as the Sarama driver reports produceSet.add's
//                    assertion (the start line says "sarama").
//   goroutine-leak   ids 1 and 2 written and acked, closed, then the Sarama
//                    driver's goroutine report of a receiver still blocked
//                    (the start line says "sarama").
//   dead-connection  id 1 written; 400 ms later (after the test scenario's
//                    blackhole) id 2 on the same connection, given up
//                    after 1 s and reported failed; then nothing, on no
//                    new connection, until killed.
// Not installed; built for ctest only.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/kafka/wire/codec.h"
#include "wire/json.h"

namespace {

namespace json = wire::json;
using kafka::wire::RequestHeader;

const auto kStart = std::chrono::steady_clock::now();  // determinism-lint: allow (a driver)

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now() - kStart)  // determinism-lint: allow (a driver)
      .count();
}

void Emit(const std::string& body) {
  const std::string line = absl::StrCat("{", body, ",\"t_us\":", NowUs(), "}\n");
  [[maybe_unused]] const ssize_t n = write(1, line.data(), line.size());
}

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "prodsim-fake-client: %s\n", why.c_str());
  std::exit(1);
}

struct Job {
  std::string host;
  int port = 0;
  std::string topic;
  std::string mode;
  int64_t messages = 0;
};

Job ReadJob() {
  std::string line;
  std::getline(std::cin, line);
  absl::StatusOr<json::Value> v = json::Parse(line);
  if (!v.ok() || v->kind != json::Value::Kind::kObject) Fail("bad job");
  Job job;
  for (size_t i = 0; i < v->keys.size(); ++i) {
    const json::Value& item = v->items[i];
    if (v->keys[i] == "bootstrap") {
      const std::string first = item.string.substr(0, item.string.find(','));
      job.host = first.substr(0, first.find(':'));
      if (!absl::SimpleAtoi(first.substr(first.find(':') + 1), &job.port)) Fail("bad bootstrap");
    } else if (v->keys[i] == "topics" && !item.items.empty()) {
      job.topic = item.items[0].string;
    } else if (v->keys[i] == "messages") {
      job.messages = item.integer;
    }
  }
  return job;
}

// One connection to the broker. A connection that breaks (a write or a
// read fails: the scenario's faults reset or close connections) is opened
// again and the request sent again, as a real client retries a request it
// got no answer to; only a read timeout is handed back (nullptr). Before,
// the driver exited on a broken connection, so a generated scenario with a
// connection fault made the fake client crash instead of misbehaving as
// its mode says (wire_client_signatures failed now and then).
class Conn {
 public:
  Conn(std::string host, int port) : host_(std::move(host)), port_(port) { Open(); }
  ~Conn() { close(fd_); }

  std::shared_ptr<kafka::Message> Call(int16_t api, int16_t version, const kafka::Message& m) {
    for (int attempt = 0;; ++attempt) {
      RequestHeader h{api, version, ++correlation_, std::string("prodsim-fake-client")};
      const std::string frame = kafka::wire::EncodeRequest(h, m);
      std::string body;
      const Read got = write(fd_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size())
                           ? ReadFrame(&body)
                           : Read::kBroken;
      if (got == Read::kTimedOut) return nullptr;
      if (got == Read::kOk) {
        absl::StatusOr<std::shared_ptr<kafka::Message>> r = kafka::wire::DecodeResponse(h, body);
        if (!r.ok()) Fail(std::string(r.status().message()));
        return *r;
      }
      if (attempt == kAttempts) Fail("the connection broke on every attempt");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      close(fd_);
      Open();
    }
  }

  void SetReadTimeout(int seconds) {
    read_timeout_s_ = seconds;
    timeval tv{seconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

 private:
  static constexpr int kAttempts = 50;  // 100 ms apart: longer than the tests' faults
  enum class Read { kOk, kTimedOut, kBroken };

  // Connects, trying again while the broker refuses (a fault may hold the
  // port closed for a while).
  void Open() {
    for (int attempt = 0;; ++attempt) {
      fd_ = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port_));
      inet_pton(AF_INET, host_.c_str(), &a.sin_addr);
      if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) break;
      close(fd_);
      if (attempt == kAttempts) Fail("connect");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    SetReadTimeout(read_timeout_s_);
  }

  Read ReadFrame(std::string* body) {
    char size[4];
    if (const Read r = ReadAll(size, 4, /*first=*/true); r != Read::kOk) return r;
    const uint32_t n = ntohl(*reinterpret_cast<uint32_t*>(size));
    body->assign(n, '\0');
    return ReadAll(body->data(), n, /*first=*/false);
  }

  // kTimedOut when the read timed out before anything of a response came;
  // kBroken when the connection ended or failed (or timed out mid-frame).
  Read ReadAll(char* p, size_t n, bool first) {
    while (n > 0) {
      const ssize_t got = read(fd_, p, n);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return first ? Read::kTimedOut : Read::kBroken;
      }
      if (got <= 0) return Read::kBroken;
      p += got;
      n -= static_cast<size_t>(got);
      first = false;
    }
    return Read::kOk;
  }

  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  int read_timeout_s_ = 5;
  int32_t correlation_ = 0;
};

struct Producer {
  Conn& conn;
  std::string topic;
  kafka::ProducerId pid = kafka::ProducerId::kNone;
  kafka::Epoch epoch = kafka::Epoch::kNone;

  void Init() {
    kafka::InitProducerIdRequest req;
    req.api = kafka::ApiKey::kInitProducerId;
    auto r = std::static_pointer_cast<kafka::InitProducerIdResponse>(
        conn.Call(static_cast<int16_t>(kafka::ApiKey::kInitProducerId), 1, req));
    pid = r->producer_id;
    epoch = r->producer_epoch;
  }

  // Sends message `id` under `seq` (-1: no sequence) with `acks`; the
  // partition's answer.
  kafka::ProducePartitionResponse Send(uint64_t id, int32_t seq, int16_t acks = -1) {
    kafka::ProduceRequest req;
    req.api = kafka::ApiKey::kProduce;
    req.acks = acks;
    req.timeout = sim::Duration::Seconds(5);
    kafka::RecordBatch batch;
    batch.producer_id = seq >= 0 ? pid : kafka::ProducerId::kNone;
    batch.producer_epoch = seq >= 0 ? epoch : kafka::Epoch::kNone;
    batch.base_sequence = kafka::Sequence(seq);
    kafka::Record rec;
    rec.key = absl::StrCat("key-", id);
    rec.value_bytes = 10;
    rec.record_id = id;
    batch.records.push_back(rec);
    const kafka::TopicPartition tp{topic, kafka::PartitionId(0)};
    req.batches[tp] = batch;
    auto r = std::static_pointer_cast<kafka::ProduceResponse>(
        conn.Call(static_cast<int16_t>(kafka::ApiKey::kProduce), 7, req));
    if (r == nullptr) {
      kafka::ProducePartitionResponse timed_out;
      timed_out.error = kafka::ErrorCode::REQUEST_TIMED_OUT;  // the client's own timeout
      return timed_out;
    }
    return r->partitions[tp];
  }
};

absl::flat_hash_set<uint64_t> g_produced;  // ids with a produce line

void Produced(uint64_t id, const std::string& topic) {
  g_produced.insert(id);
  Emit(absl::StrCat("\"event\":\"produce\",\"id\":", id, ",\"topic\":", json::Quote(topic),
                    ",\"key\":null"));
}
void Acked(uint64_t id, int64_t offset) {
  Emit(absl::StrCat("\"event\":\"ack\",\"id\":", id, ",\"partition\":0,\"offset\":", offset));
}
void Failed(uint64_t id, const char* name, const char* status, int partition = 0) {
  Emit(absl::StrCat("\"event\":\"error\",\"id\":", id, ",\"partition\":", partition,
                    ",\"code\":-1,\"name\":\"", name, "\",\"text\":\"fake\",\"status\":\"", status,
                    "\",\"fatal\":false"));
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Job job = ReadJob();
  if (argc != 2) Fail("usage: prodsim-fake-client MODE");
  job.mode = argv[1];
  const bool sarama = job.mode == "assertion" || job.mode == "goroutine-leak";
  Emit(absl::StrCat("\"event\":\"start\",\"client\":\"", sarama ? "sarama" : "fake",
                    "\",\"version\":\"", job.mode, "\""));
  Conn conn(job.host, job.port);
  Producer p{conn, job.topic};
  if (job.mode != "overtake" && job.mode != "ack-without-write") p.Init();
  if (job.mode == "sequence-reuse") {
    Produced(1, job.topic);
    Produced(2, job.topic);
    Acked(1, p.Send(1, 0).base_offset.value);
    Acked(2, p.Send(2, 0).base_offset.value);  // a duplicate: id 1's offset
  } else if (job.mode == "rewrite") {
    Produced(1, job.topic);
    p.Send(1, 0);
    Acked(1, p.Send(1, 1).base_offset.value);
  } else if (job.mode == "not-persisted") {
    Produced(1, job.topic);
    p.Send(1, 0);
    Failed(1, "_MSG_TIMED_OUT", "not_persisted");
  } else if (job.mode == "ack-without-write") {
    Produced(1, job.topic);
    Acked(1, 0);
  } else if (job.mode == "overtake") {
    Produced(1, job.topic);
    Produced(2, job.topic);
    p.Send(1, -1, /*acks=*/2);  // INVALID_REQUIRED_ACKS: refused, nothing written
    Acked(2, p.Send(2, -1).base_offset.value);
    Acked(1, p.Send(1, -1).base_offset.value);
  } else if (job.mode == "stall") {
    Produced(1, job.topic);
    std::this_thread::sleep_for(std::chrono::seconds(600));
  } else if (job.mode == "dead-connection") {
    Produced(1, job.topic);
    Acked(1, p.Send(1, 0).base_offset.value);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    Produced(2, job.topic);
    conn.SetReadTimeout(1);
    p.Send(2, 1);
    Failed(2, "REQUEST_TIMEOUT", "unknown");
    std::this_thread::sleep_for(std::chrono::seconds(600));
  } else if (job.mode == "assertion") {
    Produced(1, job.topic);
    Emit(
        "\"event\":\"error\",\"id\":1,\"partition\":0,\"code\":-1,\"name\":"
        "\"ErrProduceSetAssertion\",\"text\":\"assertion failed: message out of sequence added "
        "to a batch\",\"status\":\"unknown\",\"fatal\":false");
  } else if (job.mode == "goroutine-leak") {
    Produced(1, job.topic);
    Produced(2, job.topic);
    Acked(1, p.Send(1, 0).base_offset.value);
    Acked(2, p.Send(2, 1).base_offset.value);
  } else {
    Fail(absl::StrCat("unknown fake.mode '", job.mode, "'"));
  }
  // The job's messages a mode leaves alone are refused by the produce call
  // (clients/README.md: an error without a produce line), so that the
  // driver has offered every one (client-lost-messages).
  for (int64_t id = 1; id <= job.messages; ++id) {
    if (!g_produced.contains(static_cast<uint64_t>(id))) {
      Failed(static_cast<uint64_t>(id), "_STATE", "not_persisted", /*partition=*/-1);
    }
  }
  Emit("\"event\":\"closing\",\"outstanding\":0");
  Emit("\"event\":\"closed\",\"outstanding\":0,\"flush\":\"ok\"");
  if (job.mode == "goroutine-leak") {
    // As clients/sarama/goroutines.go prints it after its wait.
    Emit(
        "\"event\":\"goroutine\",\"function\":\"(*Broker).responseReceiver\",\"count\":1,"
        "\"state\":\"chan receive\",\"goroutine_id\":43,\"stack\":\"goroutine 43 [chan "
        "receive]:\\ngithub.com/IBM/sarama.(*Broker).responseReceiver(0xc00003d400)\"");
    Emit("\"event\":\"goroutines\",\"alive\":1,\"waited_us\":2000000");
  }
  return 0;
}
