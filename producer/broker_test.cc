// Sarama's Broker connection model: request pipelining under
// Net.MaxOpenRequests=1 (IBM/sarama#2619), and what sarama main's broker.go
// changed (ApiVersions first, closing on transport errors, Close before the
// reader, the socket health check), on both profiles.
#include "producer/broker.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/core/chan.h"

namespace sarama {
namespace {

using sim::Duration;

struct World {
  explicit World(Profile p = Profile::kSarama_1_42_1)
      : profile(p),
        sched(sim::SchedulerOptions{}),
        network(sched, sched.prng().Fork("net")),
        client(network.AddNode("client")),
        server(network.AddNode("server")) {
    network.SetDefaultLatency(net::LatencyModel::Constant(Duration::Millis(1)));
    conf = NewConfig();
    conf.net.max_open_requests = 1;
    conf.producer.required_acks = kWaitForAll;
  }
  ~World() { sched.DestroyTasks(); }
  Env env() { return Env{&sched, &network, client, nullptr, profile}; }

  Profile profile;
  sim::Scheduler sched;
  net::Network network;
  net::NodeId client, server;
  Config conf;
  std::vector<std::string> log;
};

// A server that reads two requests before it answers either.
sim::Task<void> ReadTwoThenAnswer(World* w) {
  std::optional<net::Endpoint> ep = co_await w->network.Listen(w->server)->Recv();
  std::vector<int32_t> corr;
  for (int i = 0; i < 2; ++i) {
    std::optional<net::PayloadPtr> m = co_await ep->Recv();
    if (!m.has_value()) co_return;
    const auto* req = dynamic_cast<const kafka::Message*>(m->get());
    corr.push_back(req->correlation_id);
    w->log.push_back(absl::StrCat("server got request corr=", req->correlation_id));
  }
  for (int32_t c : corr) {
    auto resp = std::make_shared<kafka::ProduceResponse>();
    resp->api = kafka::ApiKey::kProduce;
    resp->is_response = true;
    resp->correlation_id = c;
    w->log.push_back(absl::StrCat("server answers corr=", c));
    ep->Send(std::move(resp));
  }
}

sim::Task<void> Produce(World* w, Broker* b, int n) {
  auto req = kafka::NewRequest<kafka::ProduceRequest>(0);
  req->acks = kWaitForAll;
  ProduceCallback cb = [w, n](std::shared_ptr<const kafka::ProduceResponse> res, Error err) {
    return [](World* wp, int i, bool ok) -> sim::Task<void> {
      wp->log.push_back(absl::StrCat("client read response ", i, ok ? "" : " (error)"));
      co_return;
    }(w, n, res != nullptr && !err);
  };
  Error err = co_await b->AsyncProduce(req, std::move(cb));
  EXPECT_FALSE(err) << err.ToString();
  w->log.push_back(absl::StrCat("client AsyncProduce ", n, " returned"));
}

sim::Task<void> Client(World* w, Broker* b) {
  co_await b->Open(&w->conf);
  w->sched.Go("produce-1", Produce(w, b, 1));
  w->sched.Go("produce-2", Produce(w, b, 2));
  co_await w->sched.Sleep(Duration::Seconds(1));
  co_await b->Close();
}

// With Net.MaxOpenRequests=1 the responses channel is unbuffered, but the
// request is written before the promise is handed over: the server holds
// two requests before it has answered the first, so two requests were in
// flight at once. The second AsyncProduce returns only once the receiver
// has taken the first promise, and both responses are read in order.
TEST(BrokerTest, MaxOpenRequestsOneStillPipelinesTwoRequests) {
  World w;
  // Owned by a BrokerPtr, as every Broker is (its goroutines keep it alive).
  auto b = std::make_shared<Broker>(w.env(), 7, w.server);
  w.sched.Go("server", ReadTwoThenAnswer(&w));
  w.sched.Go("client", Client(&w, b.get()));
  const sim::RunResult r = w.sched.Run();
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  const std::vector<std::string> want = {
      "client AsyncProduce 1 returned", "server got request corr=0", "server got request corr=1",
      "server answers corr=0",          "server answers corr=1",     "client read response 1",
      "client AsyncProduce 2 returned", "client read response 2"};
  EXPECT_EQ(w.log, want);
}

// ---------------------------------------------------------------------------
// sarama main's broker.go, against a scripted server.

constexpr Profile kProfiles[] = {Profile::kSarama_1_42_1, Profile::kSaramaMain};

std::string ProfileText(Profile p) { return std::string(ProfileName(p)); }

// How the scripted server treats one request: the response to send (null:
// none), or a reset of the connection.
struct Reply {
  net::PayloadPtr response;
  bool reset = false;
};
using Script = std::function<Reply(const kafka::Message&)>;

std::shared_ptr<kafka::ApiVersionsResponse> ApiVersionsAnswer(
    const kafka::Message& req, kafka::ErrorCode error, std::vector<kafka::ApiVersionRange> keys) {
  auto r = kafka::NewResponse<kafka::ApiVersionsResponse>(req);
  r->error = error;
  r->api_keys = std::move(keys);
  return r;
}

// A 2.6 broker's answer (every key at its newest, ApiVersions up to 3).
Reply KnowsApiVersionsUpTo3(const kafka::Message& req) {
  const auto& av = static_cast<const kafka::ApiVersionsRequest&>(req);
  if (av.version > 3) {
    return {ApiVersionsAnswer(req, kafka::ErrorCode::UNSUPPORTED_VERSION,
                              {{kafka::ApiKey::kApiVersions, 0, 3}})};
  }
  return {
      ApiVersionsAnswer(req, kafka::ErrorCode::NONE,
                        {{kafka::ApiKey::kProduce, 0, 8}, {kafka::ApiKey::kApiVersions, 0, 3}})};
}

// Answers ApiVersions as a 2.6 broker and Produce with success; logs each
// request as "<api> v<version>" (the version for ApiVersions only).
Reply AnswerEverything(const kafka::Message& req) {
  if (req.api == kafka::ApiKey::kApiVersions) return KnowsApiVersionsUpTo3(req);
  if (req.api == kafka::ApiKey::kProduce) return {kafka::NewResponse<kafka::ProduceResponse>(req)};
  return {};
}

std::string Describe(const kafka::Message& m) {
  std::string out(kafka::ApiKeyName(m.api));
  if (const auto* av = dynamic_cast<const kafka::ApiVersionsRequest*>(&m)) {
    absl::StrAppend(&out, " v", av->version);
  }
  return out;
}

// Serves every connection to w->server with `script`, logging requests.
sim::Task<void> ServeConnection(World* w, net::Endpoint ep, Script script) {
  for (;;) {
    std::optional<net::PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) co_return;
    const auto* req = dynamic_cast<const kafka::Message*>(m->get());
    w->log.push_back(Describe(*req));
    Reply reply = script(*req);
    if (reply.reset) {
      ep.Close();
      co_return;
    }
    if (reply.response != nullptr) ep.Send(std::move(reply.response));
  }
}

sim::Task<void> Serve(World* w, Script script) {
  for (;;) {
    std::optional<net::Endpoint> ep = co_await w->network.Listen(w->server)->Recv();
    if (!ep.has_value()) co_return;
    w->sched.Go("server.conn", ServeConnection(w, *ep, script), {.daemon = true});
  }
}

BrokerPtr StartServing(World& w, Script script) {
  w.sched.Go("server", Serve(&w, std::move(script)), {.daemon = true});
  return std::make_shared<Broker>(w.env(), 7, w.server);
}

std::shared_ptr<kafka::ProduceRequest> NewProduce() {
  auto req = kafka::NewRequest<kafka::ProduceRequest>(0);
  req->acks = kWaitForAll;
  return req;
}

// What a produce callback saw, and when.
struct Answered {
  std::optional<sim::Time> at;
  Error err;
};
ProduceCallback Record(World* w, Answered* out) {
  return [w, out](std::shared_ptr<const kafka::ProduceResponse> res, Error err) {
    return [](World* wp, Answered* o, Error e) -> sim::Task<void> {
      o->at = wp->sched.now();
      o->err = std::move(e);
      co_return;
    }(w, out, err);
  };
}

sim::Task<void> OpenThenProduce(World* w, BrokerPtr b, Answered* out) {
  co_await b->Open(&w->conf);
  // Waits for the broker's lock, which the dialling task holds.
  Error err = co_await b->AsyncProduce(NewProduce(), Record(w, out));
  EXPECT_FALSE(err) << err.ToString();
  co_await w->sched.Sleep(Duration::Millis(100));
  co_await b->Close();
}

// sarama main (0dd02e17) sends ApiVersions in the dialling task, under the
// broker's lock: it is the first request on the connection even when a
// Produce is already waiting for the lock. v1.42.1 sends it after the lock
// is released, so the waiting Produce goes first.
TEST(BrokerMainTest, ApiVersionsIsTheFirstRequestOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w(p);
    w.conf.version = V2_6_0_0;  // v1.42.1 sends ApiVersions from 2.4 on
    BrokerPtr b = StartServing(w, AnswerEverything);
    Answered produced;
    w.sched.Go("client", OpenThenProduce(&w, b, &produced));
    EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
    const std::vector<std::string> want_main = {"ApiVersions v3", "Produce"};
    const std::vector<std::string> want_1_42_1 = {"Produce", "ApiVersions v3"};
    EXPECT_EQ(w.log, p == Profile::kSaramaMain ? want_main : want_1_42_1);
    EXPECT_TRUE(produced.at.has_value());
    EXPECT_FALSE(produced.err) << produced.err.ToString();
    // Main keeps the ranges (brokerAPIVersions); v1.42.1 has none.
    EXPECT_EQ(b->api_versions().size(), p == Profile::kSaramaMain ? 2u : 0u);
  }
}

sim::Task<void> OpenAndWait(World* w, BrokerPtr b, std::pair<bool, Error>* connected) {
  co_await b->Open(&w->conf);
  co_await w->sched.Sleep(Duration::Millis(100));
  *connected = co_await b->Connected();
  Answered produced;
  Error err = co_await b->AsyncProduce(NewProduce(), Record(w, &produced));
  if (!connected->first) {
    EXPECT_EQ(err, connected->second) << "the stored connection error";
  }
  co_await w->sched.Sleep(Duration::Millis(100));
  co_await b->Close();
}

// sarama main (58355b5a, 26dc2e7c): after an error, ApiVersions is asked
// again at the version the broker's answer names for ApiVersions (v0 when
// it names none, as a broker without KIP-511 answers), and from Version 3.9
// the first ask is v4. The connection then serves requests.
TEST(BrokerMainTest, ApiVersionsFallsBackToTheVersionTheBrokerNames) {
  struct Case {
    std::string name;
    KafkaVersion version;
    Script script;
    std::vector<std::string> want;
  };
  auto pre_kip511 = [](const kafka::Message& req) -> Reply {
    if (req.api == kafka::ApiKey::kApiVersions &&
        static_cast<const kafka::ApiVersionsRequest&>(req).version > 2) {
      return {ApiVersionsAnswer(req, kafka::ErrorCode::UNSUPPORTED_VERSION, {})};
    }
    return AnswerEverything(req);
  };
  auto names_v2 = [](const kafka::Message& req) -> Reply {
    if (req.api == kafka::ApiKey::kApiVersions &&
        static_cast<const kafka::ApiVersionsRequest&>(req).version > 2) {
      return {ApiVersionsAnswer(req, kafka::ErrorCode::UNSUPPORTED_VERSION,
                                {{kafka::ApiKey::kApiVersions, 0, 2}})};
    }
    return AnswerEverything(req);
  };
  const Case cases[] = {
      {"pre-KIP-511 broker", V2_6_0_0, pre_kip511, {"ApiVersions v3", "ApiVersions v0", "Produce"}},
      {"broker naming v2", V2_6_0_0, names_v2, {"ApiVersions v3", "ApiVersions v2", "Produce"}},
      {"Version 3.9", V3_9_0_0, AnswerEverything, {"ApiVersions v4", "ApiVersions v3", "Produce"}},
      {"Version 0.11", V0_11_0_0, AnswerEverything, {"ApiVersions v3", "Produce"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    World w(Profile::kSaramaMain);
    w.conf.version = c.version;
    BrokerPtr b = StartServing(w, c.script);
    std::pair<bool, Error> connected;
    w.sched.Go("client", OpenAndWait(&w, b, &connected));
    EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
    EXPECT_EQ(w.log, c.want);
    EXPECT_TRUE(connected.first);
  }
}

Reply ResetOnApiVersions(const kafka::Message& req) {
  if (req.api == kafka::ApiKey::kApiVersions) return {nullptr, /*reset=*/true};
  return AnswerEverything(req);
}

// sarama main (a10b087c): a transport error during Open's ApiVersions
// closes the connection, and Connected and the next request report it.
// v1.42.1's ApiVersions failure leaves the broker connected.
TEST(BrokerMainTest, TransportErrorDuringApiVersionsClosesOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w(p);
    w.conf.version = V2_6_0_0;
    BrokerPtr b = StartServing(w, ResetOnApiVersions);
    std::pair<bool, Error> connected;
    w.sched.Go("client", OpenAndWait(&w, b, &connected));
    EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
    if (p == Profile::kSaramaMain) {
      EXPECT_FALSE(connected.first);
      EXPECT_EQ(connected.second.ToString(), "EOF");
    } else {
      EXPECT_TRUE(connected.first);
      EXPECT_FALSE(connected.second);
    }
  }
}

sim::Task<void> MetadataThenConnected(World* w, BrokerPtr b, Error* got,
                                      std::pair<bool, Error>* connected) {
  co_await b->Open(&w->conf);
  auto [res, err] = co_await b->GetMetadata(kafka::NewRequest<kafka::MetadataRequest>(0));
  *got = err;
  *connected = co_await b->Connected();
  co_await b->Close();
}

// sarama main (a10b087c): sendAndReceive closes the connection on a
// transport error (here the server resets it) but not on a read timeout;
// v1.42.1 leaves both to the caller's Close.
TEST(BrokerMainTest, SendAndReceiveClosesOnTransportErrorsOnlyOnMain) {
  auto reset_metadata = [](const kafka::Message& req) -> Reply {
    return {nullptr, req.api == kafka::ApiKey::kMetadata};
  };
  auto ignore_metadata = [](const kafka::Message&) -> Reply { return {}; };
  for (Profile p : kProfiles) {
    for (const bool reset : {true, false}) {
      SCOPED_TRACE(absl::StrCat(ProfileText(p), reset ? " reset" : " timeout"));
      World w(p);
      w.conf.api_versions_request = false;
      w.conf.net.read_timeout = Duration::Millis(100);
      BrokerPtr b = StartServing(w, reset ? Script(reset_metadata) : Script(ignore_metadata));
      Error got;
      std::pair<bool, Error> connected;
      w.sched.Go("client", MetadataThenConnected(&w, b, &got, &connected));
      EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
      EXPECT_EQ(got.ToString(), reset ? "EOF" : "read tcp: i/o timeout");
      const bool closed = reset && p == Profile::kSaramaMain;
      EXPECT_EQ(connected.first, !closed);
      EXPECT_EQ(connected.second, closed ? got : kNoError);
    }
  }
}

sim::Task<void> CloseUnderARead(World* w, BrokerPtr b, Answered* out, sim::Time* close_returned) {
  co_await b->Open(&w->conf);
  Error err = co_await b->AsyncProduce(NewProduce(), Record(w, out));
  EXPECT_FALSE(err);
  co_await w->sched.Sleep(Duration::Millis(50));
  co_await b->Close();
  *close_returned = w->sched.now();
}

// sarama main (ea568bd5): Close closes the socket before it waits for the
// responseReceiver, so a read in progress fails at once; v1.42.1's Close
// waits for the read to end (here at the 10 s read timeout).
TEST(BrokerMainTest, CloseEndsAReadInProgressOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w(p);
    w.conf.api_versions_request = false;
    w.conf.net.read_timeout = Duration::Seconds(10);
    BrokerPtr b = StartServing(w, [](const kafka::Message&) { return Reply{}; });
    Answered produced;
    sim::Time close_returned;
    w.sched.Go("client", CloseUnderARead(&w, b, &produced, &close_returned));
    EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
    ASSERT_TRUE(produced.at.has_value());
    if (p == Profile::kSaramaMain) {
      EXPECT_EQ(produced.err.ToString(), "read tcp: use of closed network connection");
      EXPECT_LT(close_returned, sim::Time() + Duration::Seconds(1));
    } else {
      EXPECT_EQ(produced.err.ToString(), "read tcp: i/o timeout");
      EXPECT_GT(close_returned, sim::Time() + Duration::Seconds(10));
    }
    EXPECT_EQ(*produced.at, close_returned);
  }
}

sim::Task<void> SockErrors(World* w, BrokerPtr b, std::vector<std::string>* seen) {
  auto look = [&](const char* when) {
    const Error e = b->GetSockError();
    seen->push_back(absl::StrCat(when, ": ", e ? e.ToString() : "none"));
  };
  co_await b->Open(&w->conf);
  co_await b->Connected();
  look("idle");
  w->network.ResetBetween(w->client, w->server);
  look("reset");
  look("again");
  co_await b->Close();
  // A reset that a write has reported is not pending any more.
  co_await b->Open(&w->conf);
  co_await b->Connected();
  w->network.ResetBetween(w->client, w->server);
  Answered produced;
  Error err = co_await b->AsyncProduce(NewProduce(), Record(w, &produced));
  seen->push_back(absl::StrCat("write: ", err.ToString()));
  look("after the write");
  co_await b->Close();
}

// sarama main (8eafc465): getSockError reports a reset that nothing has
// read or written since, once, as SO_ERROR does.
TEST(BrokerMainTest, GetSockErrorReportsAnUnreportedResetOnce) {
  World w(Profile::kSaramaMain);
  w.conf.api_versions_request = false;
  BrokerPtr b = StartServing(w, AnswerEverything);
  std::vector<std::string> seen;
  w.sched.Go("client", SockErrors(&w, b, &seen));
  EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
  const std::vector<std::string> want = {"idle: none", "reset: connection reset by peer",
                                         "again: none", "write: write: broken pipe",
                                         "after the write: none"};
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace sarama
