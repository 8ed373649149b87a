#include "wire/kafka_client_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wire {

namespace {

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

timeval ToTimeval(sim::Duration d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.nanos() / 1000000000);
  tv.tv_usec = static_cast<suseconds_t>((d.nanos() % 1000000000) / 1000);
  return tv;
}

}  // namespace

absl::StatusOr<TestClient> TestClient::Connect(int port, sim::Duration timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  TestClient c(fd);
  const timeval tv = ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return Errno("connect");
  return c;
}

TestClient::TestClient(TestClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), correlation_(other.correlation_) {}

TestClient& TestClient::operator=(TestClient&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    correlation_ = other.correlation_;
  }
  return *this;
}

TestClient::~TestClient() { Close(); }

void TestClient::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void TestClient::Reset() {
  if (fd_ < 0) return;
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  Close();
}

absl::Status TestClient::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Errno("send");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

size_t TestClient::WriteSome(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

absl::Status TestClient::ReadAll(char* p, size_t n) {
  while (n > 0) {
    const ssize_t got = recv(fd_, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return absl::UnavailableError("connection closed by the server");
    if (got < 0) return Errno("recv");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TestClient::ReadFrame() {
  char size[4];
  if (absl::Status st = ReadAll(size, 4); !st.ok()) return st;
  uint32_t n = 0;
  std::memcpy(&n, size, 4);
  n = ntohl(n);
  if (n > static_cast<uint32_t>(kafka::wire::kMaxFrameBytes)) {
    return absl::DataLossError(absl::StrCat("response frame of ", n, " bytes"));
  }
  std::string body(n, '\0');
  if (absl::Status st = ReadAll(body.data(), n); !st.ok()) return st;
  return body;
}

kafka::wire::RequestHeader TestClient::NextHeader(kafka::ApiKey api, int16_t version) {
  return kafka::wire::RequestHeader{static_cast<int16_t>(api), version, ++correlation_,
                                    std::string("prodsim-test-client")};
}

absl::StatusOr<std::shared_ptr<kafka::Message>> TestClient::Call(int16_t version,
                                                                 const kafka::Message& request) {
  const kafka::wire::RequestHeader h = NextHeader(request.api, version);
  if (absl::Status st = Write(kafka::wire::EncodeRequest(h, request)); !st.ok()) return st;
  absl::StatusOr<std::string> frame = ReadFrame();
  if (!frame.ok()) return frame.status();
  return kafka::wire::DecodeResponse(h, *frame);
}

bool TestClient::ClosedByPeer(sim::Duration wait) {
  pollfd p{fd_, POLLIN, 0};
  const int ms = static_cast<int>(wait.nanos() / 1000000);
  char buf[4096];
  for (;;) {
    const int ready = poll(&p, 1, ms);
    if (ready <= 0) return false;
    const ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    // A response that was on its way: read past it.
  }
}

kafka::ProduceRequest OneRecord(const std::string& topic, uint64_t id, int16_t acks, int8_t codec) {
  kafka::ProduceRequest req;
  req.api = kafka::ApiKey::kProduce;
  req.acks = acks;
  req.timeout = sim::Duration::Seconds(5);
  kafka::RecordBatch batch;
  batch.compression = codec;
  batch.records.push_back(kafka::Record{absl::StrCat("key-", id), 10, sim::Time(), id});
  req.batches[kafka::TopicPartition{topic, kafka::PartitionId(0)}] = std::move(batch);
  return req;
}

}  // namespace wire
