// Broker: Sarama's connection to one Kafka broker (sarama broker.go).
//
// What matters for ordering, kept as Sarama has it:
// - Open returns at once; a task dials while holding the broker's lock, so
//   every later call waits for the dial to finish (Open, and with Version
//   >= 2.4 an ApiVersions exchange after the lock is released).
// - AsyncProduce writes the request, then hands the response promise to
//   the responseReceiver task over `responses`, a channel of capacity
//   Net.MaxOpenRequests-1, all under the lock. With MaxOpenRequests=1 the
//   channel is unbuffered: the hand-off waits until the receiver has taken
//   the previous promise, which it does before reading that response. So a
//   second request can be on the wire while the first response is awaited
//   (IBM/sarama#2619's pipelining).
// - responseReceiver reads responses in order, each with Net.ReadTimeout;
//   after a failed read, every pending and later promise fails with the
//   same error until Close.
// - sendAndReceive (Metadata, InitProducerId, ApiVersions) holds the lock
//   for the whole round trip.
// - Close waits for the lock, closes `responses`, waits for the receiver,
//   and closes the connection; the next Open dials again.
//
// Profile sarama-main (Env::profile; Sarama main at 282cd488) differs where
// main's broker.go does, each place marked in broker.cc:
// - Open's task sends ApiVersions (v3, v4 from Version 3.9) whenever
//   ApiVersionsRequest is set, under the lock and before the
//   responseReceiver starts, so it is the first request on every
//   connection, and reads the answer itself, whatever its correlation id.
//   After an error it asks again at the version the broker named (v0 from
//   a broker without KIP-511); a transport error closes the connection
//   instead, and Connected reports it (0dd02e17, 58355b5a, 26dc2e7c,
//   a10b087c).
// - sendAndReceive closes the connection on a transport error (EOF, a
//   reset, a failed write; not a read timeout) and keeps the error for the
//   calls that follow (a10b087c).
// - Close closes the socket before it waits for the receiver, so a read in
//   progress fails at once instead of waiting for its response or its
//   timeout (ea568bd5).
// - GetSockError reports a reset that no read or write has seen yet, as
//   SO_ERROR does (8eafc465, ea568bd5); the client's health check uses it.
// The simulated network has no FIN: a reset or a crashed peer is an RST
// here, which leaves ECONNRESET pending on an idle socket.
#ifndef PRODSIM_PRODUCER_BROKER_H_
#define PRODSIM_PRODUCER_BROKER_H_

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "producer/config.h"
#include "producer/env.h"
#include "producer/errors.h"
#include "sim/core/chan.h"
#include "sim/core/sync.h"
#include "sim/kafka/protocol.h"
#include "sim/net/network.h"

namespace sarama {

// sarama: ProduceCallback. Called from the responseReceiver task; it may
// block (Sarama's bridge callback sends on an unbuffered channel).
using ProduceCallback =
    std::function<sim::Task<void>(std::shared_ptr<const kafka::ProduceResponse>, Error)>;

// sarama: responsePromise.
struct ResponsePromise {
  sim::Time request_time;
  int32_t correlation_id = 0;
  kafka::ApiKey api = kafka::ApiKey::kProduce;
  ProduceCallback handler;  // AsyncProduce; else the two channels
  sim::ChanPtr<net::PayloadPtr> packets;
  sim::ChanPtr<Error> errors;
};
using PromisePtr = std::shared_ptr<ResponsePromise>;

// Always owned by a BrokerPtr (std::make_shared): the goroutines Open
// starts keep their Broker alive, as Go's garbage collector does.
class Broker : public std::enable_shared_from_this<Broker> {
 public:
  // sarama: NewBroker(addr) has id -1; brokers from metadata have their id.
  Broker(const Env& env, int32_t id, net::NodeId addr);

  int32_t ID() const { return id_; }
  net::NodeId Addr() const { return addr_; }
  // A serial number, unique per Broker object: Go compares *Broker
  // pointers; the model compares these (pointers are not deterministic).
  uint64_t serial() const { return serial_; }

  // sarama: Broker.Open. ErrAlreadyConnected if already open or opening.
  sim::Task<Error> Open(const Config* conf);
  // sarama: Broker.Close. ErrNotConnected if not connected.
  sim::Task<Error> Close();
  // sarama: Broker.Connected.
  sim::Task<std::pair<bool, Error>> Connected();
  // sarama: Broker.ResponseSize (promises queued for the receiver).
  sim::Task<int> ResponseSize();
  // sarama main: Broker.getSockError. The reset that no read or write on
  // the connection has reported yet (reporting it clears it, as reading
  // SO_ERROR does); none when not connected or while another call holds
  // the lock (TryLock). Not a synchronization point.
  Error GetSockError();
  // sarama main: the ranges Open's ApiVersions exchange got (for tests).
  const std::vector<kafka::ApiVersionRange>& api_versions() const { return api_versions_; }

  // sarama: Broker.AsyncProduce. With acks=0 no promise is made and `cb` is
  // never called.
  sim::Task<Error> AsyncProduce(std::shared_ptr<kafka::ProduceRequest> request, ProduceCallback cb);
  // sarama: Broker.GetMetadata / InitProducerID / ApiVersions.
  sim::Task<std::pair<std::shared_ptr<const kafka::MetadataResponse>, Error>> GetMetadata(
      std::shared_ptr<kafka::MetadataRequest> request);
  sim::Task<std::pair<std::shared_ptr<const kafka::InitProducerIdResponse>, Error>> InitProducerID(
      std::shared_ptr<kafka::InitProducerIdRequest> request);
  sim::Task<Error> ApiVersions(std::shared_ptr<kafka::ApiVersionsRequest> request);

 private:
  bool IsMain() const { return profile_ == Profile::kSaramaMain; }
  sim::Task<absl::StatusOr<net::Endpoint>> DialBroker(const Config* conf);
  // `self` keeps this Broker alive while the goroutine runs.
  sim::Task<void> DialAndServe(std::shared_ptr<Broker> self, const Config* conf);
  // --- sarama main's versions and new pieces. REQUIRES: lock_ held.
  sim::Task<void> DialAndServeMain(std::shared_ptr<Broker> self, const Config* conf);
  // Open's ApiVersions exchange; true if it closed the connection.
  sim::Task<bool> OpenApiVersions(const Config& conf);
  sim::Task<std::pair<std::shared_ptr<const kafka::ApiVersionsResponse>, Error>>
  SendAndReceiveApiVersions(int16_t version);
  sim::Task<bool> MaybeCloseLocked(Error err);  // true if it closed
  sim::Task<Error> CloseLocked();
  sim::Task<Error> CloseMain();
  sim::Task<void> ResponseReceiver(std::shared_ptr<Broker> self, sim::ChanPtr<PromisePtr> responses,
                                   sim::ChanPtr<bool> done, net::Endpoint conn);
  sim::Task<std::pair<net::PayloadPtr, Error>> ReadResponse(net::Endpoint conn,
                                                            std::optional<sim::Duration> timeout);
  // REQUIRES: lock_ held (as Sarama's b.lock "must be held by caller").
  sim::Task<Error> SendWithPromise(std::shared_ptr<kafka::Message> rb, PromisePtr promise);
  sim::Task<std::pair<net::PayloadPtr, Error>> SendAndReceive(std::shared_ptr<kafka::Message> req);
  static sim::Task<void> Handle(PromisePtr promise, net::PayloadPtr packets, Error err);
  void Note(std::string_view what, uint64_t word) const;

  sim::Scheduler* sched_;
  net::Network* network_;
  net::NodeId self_;
  Profile profile_;
  int32_t id_;
  net::NodeId addr_;
  uint64_t serial_;
  const Config* conf_ = nullptr;
  sim::Mutex lock_;
  bool opened_ = false;  // Go: atomic int32 opened
  std::optional<net::Endpoint> conn_;
  Error conn_err_;
  sim::ChanPtr<PromisePtr> responses_;
  sim::ChanPtr<bool> done_;
  int32_t correlation_id_ = 0;
  // Whether a read or write on conn_ has reported its reset (what clears a
  // socket's pending SO_ERROR).
  bool sock_error_reported_ = false;
  // sarama main: closeLocked has closed conn_ under the receiver's read.
  bool closing_conn_ = false;
  // sarama main: brokerAPIVersions, from Open's ApiVersions exchange. The
  // model's requests carry no version, so nothing is clamped to it.
  std::vector<kafka::ApiVersionRange> api_versions_;
};

using BrokerPtr = std::shared_ptr<Broker>;

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_BROKER_H_
