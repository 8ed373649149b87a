#include "producer/broker.h"

#include "absl/strings/str_cat.h"

namespace sarama {

using kafka::ApiKey;
using sim::Duration;

namespace {

// The texts of the connection errors the model gives (Go's net errors as
// Sarama prints them).
constexpr std::string_view kReadTimeoutText = "read tcp: i/o timeout";
constexpr std::string_view kBrokenPipeText = "write: broken pipe";
constexpr std::string_view kEofText = "EOF";
constexpr std::string_view kClosedConnText = "read tcp: use of closed network connection";
constexpr std::string_view kConnResetText = "connection reset by peer";

// sarama main (a10b087c) broker.go: shouldCloseBrokerConn. Every network
// error but a timeout (EOF, a reset, a broken pipe, a closed connection);
// not Kafka errors, decoding errors or Sarama's own (ErrNotConnected).
bool ShouldCloseBrokerConn(const Error& err) {
  return err.Is(ErrorKind::kNetwork) && err.ToString() != kReadTimeoutText;
}

}  // namespace

Broker::Broker(const Env& env, int32_t id, net::NodeId addr)
    : sched_(env.sched),
      network_(env.network),
      self_(env.self),
      profile_(env.profile),
      id_(id),
      addr_(addr),
      serial_(env.sched->RegisterObject("broker", absl::StrCat("#", id, "@", addr))),
      lock_(*env.sched, absl::StrCat("broker#", id, ".lock")) {}

void Broker::Note(std::string_view what, uint64_t word) const {
  sched_->trace().Note(sched_->now(), sched_->current_id(), 0x62726b72 /*brkr*/ ^ serial_, word,
                       [&] { return absl::StrCat("broker#", id_, " ", std::string(what)); });
}

// sarama v1.42.1 broker.go: Broker.Open
sim::Task<Error> Broker::Open(const Config* conf) {
  if (opened_) co_return Error::Of(ErrorKind::kAlreadyConnected);
  opened_ = true;
  co_await lock_.Lock();
  // The lock is released by the dialling task, as Go's deferred Unlock.
  std::shared_ptr<Broker> self = weak_from_this().lock();
  PRODSIM_ASSERT_MSG(self != nullptr, "a Broker must be owned by a BrokerPtr (std::make_shared)");
  sched_->Go(absl::StrCat("broker#", id_, ".open"), DialAndServe(std::move(self), conf));
  co_return kNoError;
}

// sarama broker.go: the dial of the goroutine Broker.Open starts (both
// versions); a failed dial leaves the error for Connected and the next call.
sim::Task<absl::StatusOr<net::Endpoint>> Broker::DialBroker(const Config* conf) {
  conf_ = conf;
  net::DialOptions options;
  options.dial_timeout = conf->net.dial_timeout;
  absl::StatusOr<net::Endpoint> ep = co_await network_->Dial(self_, addr_, options);
  if (!ep.ok()) {
    conn_err_ = Error::Network(absl::StrCat("dial tcp: ", std::string(ep.status().message())));
    conn_.reset();
    opened_ = false;
    Note("dial failed", 0);
  }
  co_return ep;
}

// sarama v1.42.1 broker.go: the goroutine started by Broker.Open
sim::Task<void> Broker::DialAndServe(std::shared_ptr<Broker> self, const Config* conf) {
  if (IsMain()) {
    co_await DialAndServeMain(std::move(self), conf);
    co_return;
  }
  PRODSIM_ASSERT(self.get() == this);
  absl::StatusOr<net::Endpoint> ep = co_await DialBroker(conf);
  if (ep.ok()) {
    conn_ = *ep;
    conn_err_ = kNoError;
    sock_error_reported_ = false;
    done_ = sim::MakeChan<bool>(*sched_, absl::StrCat("broker#", id_, ".done"));
    responses_ = sim::MakeChan<PromisePtr>(*sched_, absl::StrCat("broker#", id_, ".responses"),
                                           static_cast<size_t>(conf->net.max_open_requests - 1));
    sched_->Go(absl::StrCat("broker#", id_, ".responseReceiver"),
               ResponseReceiver(self, responses_, done_, *conn_));
    Note("connected", ep->id());
  }
  lock_.Unlock();
  // KIP-511: fire-and-forget ApiVersions, after the lock is released.
  if (conf->version.IsAtLeast(V2_4_0_0) && conf->api_versions_request) {
    auto request = kafka::NewRequest<kafka::ApiVersionsRequest>(0);
    request->version = 3;
    co_await ApiVersions(std::move(request));
  }
}

// sarama main (0dd02e17, 58355b5a, 26dc2e7c, a10b087c) broker.go: the
// goroutine started by Broker.Open. ApiVersions goes first, under the lock,
// and the responseReceiver starts only after it.
sim::Task<void> Broker::DialAndServeMain(std::shared_ptr<Broker> self, const Config* conf) {
  PRODSIM_ASSERT(self.get() == this);
  PRODSIM_ASSERT(lock_.locked());
  absl::StatusOr<net::Endpoint> ep = co_await DialBroker(conf);
  if (!ep.ok()) {
    lock_.Unlock();
    co_return;
  }
  conn_ = *ep;
  conn_err_ = kNoError;
  sock_error_reported_ = false;
  Note("connected", ep->id());
  if (conf->api_versions_request) {
    const bool closed = co_await OpenApiVersions(*conf);
    if (closed) {
      lock_.Unlock();
      co_return;
    }
  }
  done_ = sim::MakeChan<bool>(*sched_, absl::StrCat("broker#", id_, ".done"));
  responses_ = sim::MakeChan<PromisePtr>(*sched_, absl::StrCat("broker#", id_, ".responses"),
                                         static_cast<size_t>(conf->net.max_open_requests - 1));
  sched_->Go(absl::StrCat("broker#", id_, ".responseReceiver"),
             ResponseReceiver(std::move(self), responses_, done_, *conn_));
  lock_.Unlock();
}

// sarama main (0dd02e17, 58355b5a, 26dc2e7c) broker.go: Broker.Open's
// ApiVersions exchange (KIP-511). After an error the broker's answer names
// the newest ApiVersions it knows (none, so v0, from a broker without
// KIP-511) and the request goes again at that version. An error in either
// attempt that is not a transport error leaves the connection open, with
// no version ranges when there was no answer at all.
sim::Task<bool> Broker::OpenApiVersions(const Config& conf) {
  const int16_t first_version = conf.version.IsAtLeast(V3_9_0_0) ? 4 : 3;
  std::pair<std::shared_ptr<const kafka::ApiVersionsResponse>, Error> r =
      co_await SendAndReceiveApiVersions(first_version);
  if (r.second) {
    const bool closed = co_await MaybeCloseLocked(r.second);
    if (closed) co_return true;
    int16_t max_version = 0;
    if (r.first != nullptr) {
      for (const kafka::ApiVersionRange& range : r.first->api_keys) {
        if (range.api == ApiKey::kApiVersions) {
          max_version = range.max_version;
          break;
        }
      }
    }
    Note(absl::StrCat("ApiVersions v", first_version, " failed (", r.second.ToString(),
                      "); again at v", max_version),
         static_cast<uint64_t>(max_version));
    r = co_await SendAndReceiveApiVersions(max_version);
    if (r.second) {
      const bool closed_again = co_await MaybeCloseLocked(r.second);
      if (closed_again) co_return true;
    }
  }
  if (r.first != nullptr) api_versions_ = r.first->api_keys;
  co_return false;
}

// sarama main (26dc2e7c) broker.go: Broker.sendAndReceiveApiVersions. It
// reads the next response itself, before the responseReceiver runs, and
// does not look at its correlation id: a late answer to an earlier attempt
// is taken for this one's.
sim::Task<std::pair<std::shared_ptr<const kafka::ApiVersionsResponse>, Error>>
Broker::SendAndReceiveApiVersions(int16_t version) {
  using Result = std::pair<std::shared_ptr<const kafka::ApiVersionsResponse>, Error>;
  PRODSIM_ASSERT(lock_.locked());
  PRODSIM_ASSERT(conn_.has_value());
  auto request = kafka::NewRequest<kafka::ApiVersionsRequest>(correlation_id_);
  request->version = version;
  if (!conn_->Send(std::move(request))) {
    sock_error_reported_ = true;
    co_return Result{nullptr, Error::Network(std::string(kBrokenPipeText))};
  }
  ++correlation_id_;
  auto [msg, err] = co_await ReadResponse(*conn_, conf_->net.read_timeout);
  if (err) co_return Result{nullptr, err};
  auto res = std::dynamic_pointer_cast<const kafka::ApiVersionsResponse>(msg);
  if (res == nullptr) {
    Error undecodable =
        Error::Of(ErrorKind::kDecoding, "kafka: error decoding packet: not an ApiVersionsResponse");
    co_return Result{nullptr, std::move(undecodable)};
  }
  // Go wraps it ("Error in ApiVersionsResponse V%d from %s: %w"); only logged.
  if (res->error != kafka::ErrorCode::NONE) co_return Result{res, Error::Kafka(res->error)};
  co_return Result{res, kNoError};
}

// sarama main (a10b087c) broker.go: Broker.maybeCloseLocked
sim::Task<bool> Broker::MaybeCloseLocked(Error err) {
  PRODSIM_ASSERT(lock_.locked());
  if (!ShouldCloseBrokerConn(err)) co_return false;
  // (A dial error, kept from Open, qualifies too; there is nothing to close.)
  if (conn_) Note(absl::StrCat("closing on a transport error: ", err.ToString()), 0);
  conn_err_ = std::move(err);
  co_await CloseLocked();
  co_return true;
}

// sarama main (a10b087c, ea568bd5) broker.go: Broker.closeLocked. The
// socket is closed before the wait for the receiver, so that a read in
// progress ends at once.
sim::Task<Error> Broker::CloseLocked() {
  PRODSIM_ASSERT(lock_.locked());
  if (!conn_) co_return Error::Of(ErrorKind::kNotConnected);
  if (responses_ != nullptr) responses_->Close();
  closing_conn_ = true;
  conn_->Close();
  if (done_ != nullptr) co_await done_->Recv();
  closing_conn_ = false;
  conn_.reset();
  done_ = nullptr;
  responses_ = nullptr;
  opened_ = false;
  Note("closed", 0);
  co_return kNoError;
}

// sarama main broker.go: Broker.Close
sim::Task<Error> Broker::CloseMain() {
  co_await lock_.Lock();
  conn_err_ = kNoError;
  Error err = co_await CloseLocked();
  lock_.Unlock();
  co_return err;
}

// sarama main (8eafc465, ea568bd5) broker.go: Broker.getSockError
Error Broker::GetSockError() {
  if (!lock_.TryLock()) return kNoError;
  Error err;
  if (conn_.has_value() && conn_->closed() && !sock_error_reported_) {
    sock_error_reported_ = true;  // getsockopt(SO_ERROR) clears it
    err = Error::Network(std::string(kConnResetText));
  }
  lock_.Unlock();
  return err;
}

// sarama v1.42.1 broker.go: Broker.Close
sim::Task<Error> Broker::Close() {
  if (IsMain()) co_return co_await CloseMain();
  co_await lock_.Lock();
  if (!conn_) {
    lock_.Unlock();
    co_return Error::Of(ErrorKind::kNotConnected);
  }
  // A connection comes with its receiver's channels (DialAndServe).
  PRODSIM_ASSERT(responses_ != nullptr);
  PRODSIM_ASSERT(done_ != nullptr);
  responses_->Close();
  co_await done_->Recv();
  conn_->Close();
  conn_.reset();
  conn_err_ = kNoError;
  done_ = nullptr;
  responses_ = nullptr;
  opened_ = false;
  Note("closed", 0);
  lock_.Unlock();
  co_return kNoError;
}

// sarama v1.42.1 broker.go: Broker.Connected
sim::Task<std::pair<bool, Error>> Broker::Connected() {
  co_await lock_.Lock();
  std::pair<bool, Error> out{conn_.has_value(), conn_err_};
  lock_.Unlock();
  co_return out;
}

// sarama v1.42.1 broker.go: Broker.ResponseSize
sim::Task<int> Broker::ResponseSize() {
  co_await lock_.Lock();
  const int n = responses_ != nullptr ? static_cast<int>(responses_->size()) : 0;
  lock_.Unlock();
  co_return n;
}

// sarama v1.42.1 broker.go: Broker.sendWithPromise and Broker.sendInternal
sim::Task<Error> Broker::SendWithPromise(std::shared_ptr<kafka::Message> rb, PromisePtr promise) {
  PRODSIM_ASSERT(lock_.locked());
  if (!conn_) co_return conn_err_ ? conn_err_ : Error::Of(ErrorKind::kNotConnected);
  rb->correlation_id = correlation_id_;
  const int32_t corr = correlation_id_;
  if (!conn_->Send(rb)) {
    sock_error_reported_ = true;
    co_return Error::Network(std::string(kBrokenPipeText));
  }
  ++correlation_id_;
  rb->written_at = sched_->now();
  if (promise == nullptr) co_return kNoError;
  promise->request_time = sched_->now();
  promise->correlation_id = corr;
  promise->api = rb->api;
  // Blocks while the receiver still owes earlier responses: with
  // MaxOpenRequests=1 the channel is unbuffered.
  co_await responses_->Send(std::move(promise));
  co_return kNoError;
}

// sarama v1.42.1 broker.go: Broker.AsyncProduce
sim::Task<Error> Broker::AsyncProduce(std::shared_ptr<kafka::ProduceRequest> request,
                                      ProduceCallback cb) {
  co_await lock_.Lock();
  PromisePtr promise;
  if (request->acks != kNoResponse) {
    promise = std::make_shared<ResponsePromise>();
    promise->handler = std::move(cb);
  }
  Error err = co_await SendWithPromise(std::move(request), std::move(promise));
  lock_.Unlock();
  co_return err;
}

// sarama v1.42.1 broker.go: Broker.sendAndReceive and handleResponsePromise
sim::Task<std::pair<net::PayloadPtr, Error>> Broker::SendAndReceive(
    std::shared_ptr<kafka::Message> req) {
  co_await lock_.Lock();
  auto promise = std::make_shared<ResponsePromise>();
  promise->packets = sim::MakeChan<net::PayloadPtr>(*sched_, "promise.packets");
  promise->errors = sim::MakeChan<Error>(*sched_, "promise.errors");
  Error err = co_await SendWithPromise(std::move(req), promise);
  if (err) {
    // sarama-main only (a10b087c): a transport error closes the connection.
    if (IsMain()) co_await MaybeCloseLocked(err);
    lock_.Unlock();
    co_return std::pair<net::PayloadPtr, Error>{nullptr, err};
  }
  std::optional<net::PayloadPtr> packets;
  std::optional<Error> error;
  const int which = co_await sim::Select(*sched_, sim::RecvCase(promise->packets, &packets),
                                         sim::RecvCase(promise->errors, &error));
  if (which == 1 && IsMain()) co_await MaybeCloseLocked(*error);  // sarama-main only (a10b087c)
  lock_.Unlock();
  if (which == 1) co_return std::pair<net::PayloadPtr, Error>{nullptr, *error};
  co_return std::pair<net::PayloadPtr, Error>{*packets, kNoError};
}

namespace {

template <typename T>
std::pair<std::shared_ptr<const T>, Error> Decode(std::pair<net::PayloadPtr, Error> r) {
  if (r.second) return {nullptr, r.second};
  auto typed = std::dynamic_pointer_cast<const T>(r.first);
  if (typed == nullptr)
    return {nullptr, Error::Of(ErrorKind::kDecoding, "unexpected response type")};
  return {typed, kNoError};
}

}  // namespace

// sarama v1.42.1 broker.go: Broker.GetMetadata
sim::Task<std::pair<std::shared_ptr<const kafka::MetadataResponse>, Error>> Broker::GetMetadata(
    std::shared_ptr<kafka::MetadataRequest> request) {
  co_return Decode<kafka::MetadataResponse>(co_await SendAndReceive(std::move(request)));
}

// sarama v1.42.1 broker.go: Broker.InitProducerID
sim::Task<std::pair<std::shared_ptr<const kafka::InitProducerIdResponse>, Error>>
Broker::InitProducerID(std::shared_ptr<kafka::InitProducerIdRequest> request) {
  co_return Decode<kafka::InitProducerIdResponse>(co_await SendAndReceive(std::move(request)));
}

// sarama v1.42.1 broker.go: Broker.ApiVersions
sim::Task<Error> Broker::ApiVersions(std::shared_ptr<kafka::ApiVersionsRequest> request) {
  auto r = Decode<kafka::ApiVersionsResponse>(co_await SendAndReceive(std::move(request)));
  co_return r.second;
}

// sarama v1.42.1 broker.go: responsePromise.handle
sim::Task<void> Broker::Handle(PromisePtr promise, net::PayloadPtr packets, Error err) {
  if (promise->handler) {
    // AsyncProduce's handler: decode, then the producer's callback.
    if (err) {
      co_await promise->handler(nullptr, err);
      co_return;
    }
    auto res = std::dynamic_pointer_cast<const kafka::ProduceResponse>(packets);
    if (res == nullptr) {
      co_await promise->handler(nullptr, Error::Of(ErrorKind::kDecoding, "malformed response"));
      co_return;
    }
    co_await promise->handler(std::move(res), kNoError);
    co_return;
  }
  if (err) {
    co_await promise->errors->Send(err);
    co_return;
  }
  co_await promise->packets->Send(std::move(packets));
}

// sarama v1.42.1 broker.go: Broker.readFull, for one whole response: the
// read fails at the deadline (Net.ReadTimeout from the start of the read),
// or with EOF once the connection is reset or closed. No timeout: no
// deadline (Config::TestDefects::no_read_timeout, not Sarama).
sim::Task<std::pair<net::PayloadPtr, Error>> Broker::ReadResponse(net::Endpoint conn,
                                                                  std::optional<Duration> timeout) {
  if (!timeout.has_value()) {
    std::optional<net::PayloadPtr> msg = co_await conn.Recv();
    if (!msg.has_value()) {
      sock_error_reported_ = true;
      const std::string_view text = closing_conn_ ? kClosedConnText : kEofText;
      co_return std::pair<net::PayloadPtr, Error>{nullptr, Error::Network(std::string(text))};
    }
    co_return std::pair<net::PayloadPtr, Error>{*msg, kNoError};
  }
  sim::Timer deadline(*sched_, "read-deadline", *timeout);
  std::optional<net::PayloadPtr> msg;
  std::optional<sim::Time> fired;
  const int which = co_await sim::Select(*sched_, sim::RecvCase(conn.inbox(), &msg),
                                         sim::RecvCase(deadline.C(), &fired));
  if (which == 1) {
    co_return std::pair<net::PayloadPtr, Error>{nullptr,
                                                Error::Network(std::string(kReadTimeoutText))};
  }
  if (!msg.has_value()) {
    sock_error_reported_ = true;
    // sarama main's closeLocked closes the socket under the read (ea568bd5).
    const std::string_view text = closing_conn_ ? kClosedConnText : kEofText;
    co_return std::pair<net::PayloadPtr, Error>{nullptr, Error::Network(std::string(text))};
  }
  deadline.Stop();
  co_return std::pair<net::PayloadPtr, Error>{*msg, kNoError};
}

// sarama v1.42.1 broker.go: Broker.responseReceiver
sim::Task<void> Broker::ResponseReceiver(std::shared_ptr<Broker> self,
                                         sim::ChanPtr<PromisePtr> responses,
                                         sim::ChanPtr<bool> done, net::Endpoint conn) {
  PRODSIM_ASSERT(self.get() == this);
  Error dead;
  const Duration read_timeout = conf_->net.read_timeout;
  for (;;) {
    std::optional<PromisePtr> next = co_await responses->Recv();
    if (!next.has_value()) break;
    PromisePtr promise = std::move(*next);
    if (dead) {
      co_await Handle(promise, nullptr, dead);
      continue;
    }
    // The test-only defect departs from Sarama's responseReceiver here: its
    // readFull always sets the Net.ReadTimeout deadline.
    std::optional<Duration> timeout = read_timeout;
    if (conf_->test_defects.no_read_timeout && promise->api == ApiKey::kProduce) timeout.reset();
    auto [msg, err] = co_await ReadResponse(conn, timeout);
    if (err) {
      dead = err;
      co_await Handle(promise, nullptr, err);
      continue;
    }
    // CPU (go policy): the read and the decoding of the response.
    sched_->Spend(sched_->cpu().response);
    const auto* m = dynamic_cast<const kafka::Message*>(msg.get());
    if (m == nullptr || m->correlation_id != promise->correlation_id) {
      dead = Error::Of(
          ErrorKind::kDecoding,
          absl::StrCat("kafka: error decoding packet: correlation ID didn't match, "
                       "wanted ",
                       promise->correlation_id, ", got ", m != nullptr ? m->correlation_id : -1));
      co_await Handle(promise, nullptr, dead);
      continue;
    }
    co_await Handle(promise, std::move(msg), kNoError);
  }
  done->Close();
}

}  // namespace sarama
