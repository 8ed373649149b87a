// Sarama's Broker connection model: request pipelining under
// Net.MaxOpenRequests=1 (IBM/sarama#2619).
#include "producer/broker.h"

#include <vector>

#include "gtest/gtest.h"
#include "sim/core/chan.h"

namespace sarama {
namespace {

using sim::Duration;

struct World {
  World()
      : sched(sim::SchedulerOptions{}),
        network(sched, sched.prng().Fork("net")),
        client(network.AddNode("client")),
        server(network.AddNode("server")) {
    network.SetDefaultLatency(net::LatencyModel::Constant(Duration::Millis(1)));
    conf = NewConfig();
    conf.net.max_open_requests = 1;
    conf.producer.required_acks = kWaitForAll;
  }
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
  auto b = std::make_shared<Broker>(Env{&w.sched, &w.network, w.client}, 7, w.server);
  w.sched.Go("server", ReadTwoThenAnswer(&w));
  w.sched.Go("client", Client(&w, b.get()));
  const sim::RunResult r = w.sched.Run();
  EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  const std::vector<std::string> want = {
      "client AsyncProduce 1 returned",       "server got request corr=0",
      "server got request corr=1",            "server answers corr=0",
      "server answers corr=1",                "client read response 1",
      "client AsyncProduce 2 returned",       "client read response 2"};
  EXPECT_EQ(w.log, want);
}

}  // namespace
}  // namespace sarama
