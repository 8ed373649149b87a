// A fault sweep over the sarama-1.42.1 model with the report's
// configuration: random and PCT schedules, connection resets, two-way
// partitions (the reporter's VPN toggle), leader moves and lost responses.
// It pins that the model reaches both symptoms of IBM/sarama#2803, the
// produceSet assertion and the broker's OUT_OF_ORDER_SEQUENCE_NUMBER, and that
// every run still ends (no hang, no deadlock). Exploration proper, with
// checks and shrinking, is prodsim explore's job; this is its canary.
#include <map>

#include "gtest/gtest.h"
#include "producer/async_producer.h"
#include "producer/report_config.h"
#include "sim/kafka/cluster.h"
namespace sarama {
namespace {
using sim::Duration;
using sim::Time;
struct World {
  World(uint64_t seed, sim::Policy pol)
      : sched(Opt(seed, pol)),
        network(sched, sched.prng().Fork("net")),
        client_node(network.AddNode("client")),
        cluster(sched, network, CC(), &kh) {}
  static sim::SchedulerOptions Opt(uint64_t seed, sim::Policy pol) {
    sim::SchedulerOptions o;
    o.seed = seed;
    o.policy = pol;
    o.pct_steps = 200000;
    o.time_limit = Time() + Duration::Seconds(600);
    o.step_limit = 20000000;
    return o;
  }
  static kafka::ClusterConfig CC() {
    kafka::ClusterConfig c;
    c.brokers = 3;
    c.topics = {kafka::TopicConfig{"t", 3, 3}};
    c.min_insync_replicas = 2;
    return c;
  }
  sim::Scheduler sched;
  net::Network network;
  net::NodeId client_node;
  kafka::History kh;
  kafka::Cluster cluster;
  ProducerHistory ph;
};
sim::Task<void> Reader(AsyncProducer* p, int* ok, int* err) {
  std::optional<MessagePtr> s;
  std::optional<ProducerError> e;
  sim::Chan<MessagePtr>* sc = p->Successes();
  sim::Chan<ProducerError>* ec = p->Errors();
  sim::Scheduler& sched = sc->sched();
  while (sc || ec) {
    int w = co_await sim::Select(sched, sim::RecvCase(sc, &s), sim::RecvCase(ec, &e));
    if (w == 0) {
      if (s)
        ++*ok;
      else
        sc = nullptr;
    } else {
      if (e)
        ++*err;
      else
        ec = nullptr;
    }
  }
}
sim::Task<void> Faults(World* w) {
  sim::Prng prng = w->sched.prng().Fork("faults");
  for (int i = 0; i < 12; ++i) {
    co_await w->sched.Sleep(Duration::Millis(prng.UniformInt(50, 800)));
    int kind = static_cast<int>(prng.UniformInt(0, 3));
    kafka::BrokerId b(static_cast<int32_t>(prng.UniformInt(0, 2)));
    net::NodeId bn = w->cluster.broker(b).node();
    if (kind == 0) {
      w->network.ResetBetween(w->client_node, bn);
    } else if (kind == 1) {
      w->network.Partition(w->client_node, bn);
      w->network.Partition(bn, w->client_node);
      co_await w->sched.Sleep(Duration::Millis(prng.UniformInt(100, 3000)));
      w->network.Heal(w->client_node, bn);
      w->network.Heal(bn, w->client_node);
    } else if (kind == 2) {
      auto tps = w->cluster.AllPartitions();
      auto tp = tps[prng.Below(tps.size())];
      (void)w->cluster.MoveLeader(tp, b);
    } else {
      w->cluster.LoseResponses(b, kafka::ApiKey::kProduce, 1);
    }
  }
}
sim::Task<void> App(World* w, std::unique_ptr<AsyncProducer>* keep, int* ok, int* err, int n) {
  Env env{&w->sched, &w->network, w->client_node, &w->ph};
  auto p = co_await AsyncProducer::New(env, w->cluster.BootstrapNodes(), ReportConfig());
  if (!p.ok()) co_return;
  *keep = std::move(*p);
  w->sched.Go("reader", Reader(keep->get(), ok, err));
  w->sched.Go("faults", Faults(w), {.daemon = true});
  for (int i = 0; i < n; ++i) {
    auto m = std::make_shared<ProducerMessage>();
    m->topic = "t";
    m->key = absl::StrCat("k", i % 30);
    m->value_bytes = 50;
    m->id = static_cast<uint64_t>(i + 1);
    co_await (*keep)->Input()->Send(m);
    co_await w->sched.Sleep(Duration::Millis(5));
  }
  (*keep)->AsyncClose();
}
// Both #2803 symptoms appear within 150 random and 150 PCT seeds.
TEST(FaultSweep, ReachesBothSymptomsOf2803) {
  std::map<std::string, int> counts;
  for (sim::Policy pol : {sim::Policy::kRandom, sim::Policy::kPct}) {
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      World w(seed, pol);
      std::unique_ptr<AsyncProducer> keep;
      int ok = 0, err = 0;
      w.sched.Go("app", App(&w, &keep, &ok, &err, 400));
      sim::RunResult r = w.sched.Run();
      counts[std::string(sim::OutcomeName(r.outcome))]++;
      bool assertion = false, ooo = false;
      for (auto& e : w.ph.errors)
        if (e.err.Is(ErrorKind::kProduceSetAssertion)) assertion = true;
      for (auto& e : w.kh.responses)
        if (e.error == kafka::ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER) ooo = true;
      if (assertion) counts["assertion"]++;
      if (ooo) counts["out_of_order"]++;
      EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
      if (r.outcome != sim::Outcome::kAllDone)
        std::printf("%s seed %llu: %s ok=%d err=%d assertion=%d ooo=%d t=%s %s\n",
                    std::string(sim::PolicyName(pol)).c_str(), (unsigned long long)seed,
                    std::string(sim::OutcomeName(r.outcome)).c_str(), ok, err, assertion, ooo,
                    r.end_time.ToString().c_str(), r.detail.substr(0, 300).c_str());
    }
  }
  for (auto& [k, v] : counts) std::printf("%s: %d of 300\n", k.c_str(), v);
  EXPECT_GT(counts["assertion"], 0);
  EXPECT_GT(counts["out_of_order"], 0);
}
}  // namespace
}  // namespace sarama
