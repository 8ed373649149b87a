// A blocking Kafka wire client for tests (the bridge's tests and the attack
// suite, wire/attack.cc): one TCP connection to 127.0.0.1, requests framed
// by the codec's own client side (EncodeRequest, DecodeResponse), and raw
// bytes for what no client should send. Every call is bounded by the
// socket's timeouts; nothing here blocks for ever.
//
// Not a producer: it sends what it is told, in the order told.
#ifndef PRODSIM_WIRE_KAFKA_CLIENT_TESTING_H_
#define PRODSIM_WIRE_KAFKA_CLIENT_TESTING_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sim/core/time.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/wire/codec.h"

namespace wire {

class TestClient {
 public:
  // Connects to 127.0.0.1:`port`; reads and writes give up after `timeout`.
  static absl::StatusOr<TestClient> Connect(int port,
                                            sim::Duration timeout = sim::Duration::Seconds(5));
  TestClient(TestClient&& other) noexcept;
  TestClient& operator=(TestClient&& other) noexcept;
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;
  ~TestClient();

  int fd() const { return fd_; }
  // Writes every byte (or fails: timeout, reset).
  absl::Status Write(std::string_view bytes);
  // Writes what the socket takes now without blocking; how many bytes.
  size_t WriteSome(std::string_view bytes);
  // The next response frame's bytes (no size prefix).
  absl::StatusOr<std::string> ReadFrame();
  // Sends `request` with the next correlation id and `version`, and decodes
  // the response.
  absl::StatusOr<std::shared_ptr<kafka::Message>> Call(int16_t version,
                                                       const kafka::Message& request);
  // The header the next Call would use, taking its correlation id.
  kafka::wire::RequestHeader NextHeader(kafka::ApiKey api, int16_t version);
  // True once the server closed the connection: a read returns end of file
  // or a reset within `wait`.
  bool ClosedByPeer(sim::Duration wait);
  // Closes with an RST (SO_LINGER 0) instead of a FIN.
  void Reset();
  void Close();

 private:
  explicit TestClient(int fd) : fd_(fd) {}
  absl::Status ReadAll(char* p, size_t n);

  int fd_ = -1;
  int32_t correlation_ = 0;
};

// A Produce request (acks as given) of one record with prodsim-id `id` to
// partition 0 of `topic`, uncompressed unless `codec` says.
kafka::ProduceRequest OneRecord(const std::string& topic, uint64_t id, int16_t acks = 1,
                                int8_t codec = 0);

}  // namespace wire

#endif  // PRODSIM_WIRE_KAFKA_CLIENT_TESTING_H_
