// A fault proxy in front of each broker of a real Kafka cluster: one
// listening socket per broker on 127.0.0.1 (a port the kernel picks, which
// the cluster advertises to clients as that broker's address), each accepted
// connection paired with a TCP connection to the broker's real client port,
// and the bytes forwarded both ways on the EventLoop. The proxy splits both
// streams into Kafka frames (kafka::wire::Framer): it reads each request's
// header (api key, version, correlation id) and matches each response to
// its request (a broker answers a connection's requests in order, Kafka's
// one in-flight-request-per-channel rule in SocketServer), so that a fault
// can act on "the next Produce response" and the history can say what the
// broker answered.
//
// The faults, each the nearest real thing to its kind in the simulation
// (fault_models/kinds.h):
//   - Reset: every connection to the broker is closed with an RST (SO_LINGER
//     0) on both sides: the client sees ECONNRESET, the broker the channel
//     closed.
//   - LoseResponses: the broker's next `count` requests of an API go
//     through and are processed; when the response to one arrives it is
//     dropped and both sides are reset, as in the simulation's lose_response
//     (the request's side effect happened; the answer never arrives).
//   - StallResponses: the next `count` responses of an API are held for
//     `extra`; the responses behind them on the connection wait too (TCP
//     delivers in order).
//   - Cut (partition, isolate): nothing moves in the cut direction: the
//     proxy stops reading the source socket and writing what it holds, so
//     the bytes wait in the kernels' buffers as TCP holds them across a
//     partition, and arrive in order on heal. A connection the client
//     opens meanwhile hangs in connect (see HangConnects).
//   - HangConnects (connect_hang, and every cut): SYNs to the broker's port
//     go unanswered. The proxy shrinks the listener's backlog to 0 and fills
//     its accept queue with one connection of its own; Linux drops a SYN
//     whose listener's accept queue is full (tcp_conn_request), so the
//     client's connect waits for its SYN retransmissions (1, 3, 7 s ...) and
//     succeeds at the first one after the heal, as the simulation's
//     connect_hang says. Open connections are not affected.
//   - Blackhole: the connections open now drop every byte both ways from
//     now on, and nobody is told; the proxy stops reading them, so the
//     client's writes fill its send buffer as unacknowledged data would.
//     After tcp_retries2 (924.6 s, net::kTcpRetries2Timeout) both sides are
//     reset, as TCP gives up. New connections work.
//   - AddLatency (latency_spike) and DelayRequests (delay_processing): each
//     frame in the direction is held `extra` longer while the fault lasts
//     (delay_processing: requests toward the broker, standing for the
//     broker working longer on each).
// A crashed broker (the supervisor's kill -9) closes its connections: the
// proxy mirrors an end of stream from the broker as one to the client
// (after what it holds for the client), and a reset as a reset; a client
// connecting while the broker is down is accepted and reset (the broker's
// port refuses the proxy's connect), as wire/bridge.h does for a crashed
// simulated broker.
//
// The proxy's one rewrite: an ApiVersions response has Produce's maximum
// version capped at 8 (kProduceVersionMax), in place (the response is never
// compressed; each entry is three int16s). The codec (sim/kafka/wire/codec.h)
// decodes Produce v3-v8; a Kafka 4.x broker offers v3-v12 or more, and a
// client that used v9+ would give the history nothing to read. Every client
// picks the highest version both sides support (librdkafka's
// rd_kafka_broker_ApiVersion_supported, the Java client's
// ApiVersions.latestUsableVersion), so it then speaks Produce v8 to the
// broker, which the broker still serves (KIP-896 removed v0-v2 only). A 2.6
// broker's maximum is 8 already: nothing changes there.
//
// What it records (the trial's kafka::History, times from set_origin):
// every connection opened and closed (ConnectionEvent), a ResponseEvent per
// partition of every Produce response it decodes (error, base offset, the
// request's epoch and first sequence; the record ids when it is an error;
// `duplicate` is always false: a real broker does not say), one per
// InitProducerId response, per Produce request the batches it carried
// (sent_batches()) and their codecs (batches_by_compression). Faults are
// recorded by the caller.
//
// Bounds: what the proxy holds for one direction of one connection is at
// most kHeldBytesMax beyond one frame (it stops reading the source until
// it drains); connections are at most kConnectionsMax (more are reset).
//
// Single-threaded: everything runs on the EventLoop's thread.
#ifndef PRODSIM_WIRE_FAULT_PROXY_H_
#define PRODSIM_WIRE_FAULT_PROXY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "fault_models/kinds.h"
#include "sim/core/time.h"
#include "sim/kafka/history.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"
#include "wire/event_loop.h"

namespace wire {

// The highest Produce version the proxy lets a client and a broker agree
// on: the codec's highest (sim/kafka/wire/codec.h's ServedApiVersions).
inline constexpr int16_t kProduceVersionMax = 8;

// Caps Produce's maximum version in the ApiVersions response `frame` (its
// bytes after the size prefix) to a request of `request_version`, in place;
// true if it changed a byte. A response with an error, or one that does not
// parse, is left as it is.
bool CapProduceVersion(std::string& frame, int16_t request_version);

class FaultProxy {
 public:
  static constexpr size_t kHeldBytesMax = size_t{8} << 20;
  static constexpr size_t kConnectionsMax = 512;
  // Texts kept per kind of problem (every one is counted).
  static constexpr size_t kProblemsKept = 20;

  // One partition's batch of a Produce request, as the proxy forwarded it.
  struct SentBatch {
    sim::Time at;
    kafka::BrokerId broker;
    kafka::TopicPartition tp;
    kafka::ProducerId producer_id;
    kafka::Epoch epoch;
    kafka::Sequence first_seq;
    std::vector<uint64_t> record_ids;
  };
  // What the proxy saw that is the client's fault or the harness's: the
  // first texts of each and the counts.
  struct Problems {
    std::vector<std::string> malformed_frames;  // the client's: the connection closed
    std::vector<std::string> records_without_id;
    std::vector<std::string> undecoded;  // a Produce message the codec could not read
    uint64_t malformed_total = 0, without_id_total = 0, undecoded_total = 0;
  };

  // REQUIRES: `loop` and `history` outlive the proxy; brokers >= 1.
  FaultProxy(EventLoop& loop, int32_t brokers, kafka::History* history);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Opens one listening socket per broker on 127.0.0.1, port 0.
  absl::Status Listen();
  // The port clients dial for broker `b` (its advertised port).
  int port(kafka::BrokerId b) const;
  // "127.0.0.1:P0,127.0.0.1:P1,...", in broker id order.
  std::string bootstrap() const;
  // Where broker `b` really listens; connections accepted from now on go
  // there. Accepted before it is known: reset.
  void SetUpstream(kafka::BrokerId b, int port);
  // The history's time zero, on the loop's clock (the client's start).
  void set_origin(sim::Time origin) { origin_ = origin; }
  // The history's time now.
  sim::Time Now() const;
  // Told, at each use of a count-based fault (a lost or stalled response),
  // when its effect ends (history time).
  void set_count_fault_hook(std::function<void(sim::Time until)> hook) {
    count_fault_hook_ = std::move(hook);
  }

  // The faults (see above). REQUIRES: `b` is a broker; count >= 1; extra > 0.
  void Reset(kafka::BrokerId b);
  void LoseResponses(kafka::BrokerId b, kafka::ApiKey api, int32_t count);
  void StallResponses(kafka::BrokerId b, kafka::ApiKey api, int32_t count, sim::Duration extra);
  // Cuts (or heals) `direction` between the client and `b`; cuts nest.
  void Cut(kafka::BrokerId b, fault_models::Direction direction);
  void Heal(kafka::BrokerId b, fault_models::Direction direction);
  void Blackhole(kafka::BrokerId b);
  // Starts or ends a connect hang; hangs nest (a cut holds one too).
  void HangConnects(kafka::BrokerId b, bool hang);
  void AddLatency(kafka::BrokerId b, fault_models::Direction direction, sim::Duration extra,
                  sim::Duration lasting);
  void DelayRequests(kafka::BrokerId b, sim::Duration extra, sim::Duration lasting);

  // Closes every connection (RST) and listening socket. Idempotent.
  void CloseAll();
  size_t open_connections() const { return pairs_.size(); }
  uint64_t connections_accepted() const { return accepted_; }
  const std::vector<SentBatch>& sent_batches() const { return sent_; }
  const Problems& problems() const { return problems_; }

 private:
  struct Pair;
  struct Pending;
  using PairPtr = std::shared_ptr<Pair>;
  enum class Side : uint8_t { kClient, kBroker };
  // A fault armed for the broker's next requests of an API.
  struct Armed {
    kafka::ApiKey api;
    int32_t count;
    sim::Duration stall;  // zero: lose the response
  };
  // An extra delay on one direction until a time (loop time).
  struct Slow {
    bool to_broker;
    sim::Duration extra;
    sim::Time until;
  };
  struct BrokerState {
    int listen_fd = -1;
    int port = 0;            // advertised
    int upstream_port = 0;   // real; 0: unknown
    int cuts_to_broker = 0;  // nested cuts per direction
    int cuts_from_broker = 0;
    int hangs = 0;       // nested connect hangs
    int filler_fd = -1;  // the proxy's own connection filling the accept queue
    std::deque<Armed> armed;
    std::vector<Slow> slow;
  };

  void OnAccept(kafka::BrokerId b);
  void Admit(kafka::BrokerId b, int fd);
  void OnEvents(const PairPtr& p, Side side, uint32_t events);
  void OnConnected(const PairPtr& p);
  void ReadFrom(const PairPtr& p, Side side);
  // One whole frame read from `side`, with its size prefix.
  void OnRequest(const PairPtr& p, std::string frame);
  void OnResponse(const PairPtr& p, std::string frame);
  // Records a Produce request's batches; whether it owes a response (acks
  // other than 0), and the request as decoded (null if it was not).
  bool RecordProduceRequest(const PairPtr& p, std::string_view body, Pending& pending);
  // Records the response to `pending` in the history; the indexes of the
  // ResponseEvents it added, [first, end).
  std::pair<size_t, size_t> RecordResponse(const PairPtr& p, const Pending& pending,
                                           std::string_view body, bool lost);
  // Moves what is due toward `to` into its output and writes it.
  void Pump(const PairPtr& p, Side to);
  void Flush(const PairPtr& p, Side to);
  void UpdateEvents(Pair& p);
  bool Reading(const Pair& p, Side from) const;
  bool CutToward(const Pair& p, Side to) const;
  sim::Duration ExtraToward(kafka::BrokerId b, Side to);
  // Closes both sides, each with an RST if asked; `why` ("reset" or
  // "closed") goes to the history.
  void Close(const PairPtr& p, bool reset_client, bool reset_broker, std::string_view why);
  void SetHang(kafka::BrokerId b, bool hang);
  void OnTimer();
  void Rearm();
  void Keep(std::vector<std::string>& kept, uint64_t& total, std::string text);
  BrokerState& broker(kafka::BrokerId b);

  EventLoop& loop_;
  kafka::History* history_;
  std::vector<BrokerState> brokers_;
  absl::btree_map<uint64_t, PairPtr> pairs_;
  int timer_fd_ = -1;
  sim::Time armed_at_ = sim::Time::Max();  // the timerfd's deadline (loop time)
  sim::Time origin_;
  uint64_t next_id_ = 1;
  uint64_t accepted_ = 0;
  std::function<void(sim::Time)> count_fault_hook_;
  std::vector<SentBatch> sent_;
  Problems problems_;
};

}  // namespace wire

#endif  // PRODSIM_WIRE_FAULT_PROXY_H_
