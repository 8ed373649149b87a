// End to end: the Sarama model over the network against the cluster model.
#include <map>
#include <memory>

#include "gtest/gtest.h"
#include "producer/async_producer.h"
#include "producer/report_config.h"
#include "sim/kafka/cluster.h"

namespace sarama {
namespace {

using sim::Duration;
using sim::Time;

struct World {
  explicit World(int partitions, sim::Policy policy = sim::Policy::kFifo, uint64_t seed = 1)
      : sched(Options(policy, seed)),
        network(sched, sched.prng().Fork("net")),
        client_node(network.AddNode("client")),
        cluster(sched, network, ClusterConfigFor(partitions), &kafka_history) {}

  static sim::SchedulerOptions Options(sim::Policy policy, uint64_t seed) {
    sim::SchedulerOptions o;
    o.policy = policy;
    o.seed = seed;
    o.time_limit = Time() + Duration::Seconds(3600);
    return o;
  }
  static kafka::ClusterConfig ClusterConfigFor(int partitions) {
    kafka::ClusterConfig c;
    c.brokers = 3;
    c.topics = {kafka::TopicConfig{"t", partitions, 3}};
    c.min_insync_replicas = 2;
    c.version = kafka::KafkaVersion::k2_6;
    return c;
  }
  Env env() { return Env{&sched, &network, client_node, &producer_history}; }

  sim::Scheduler sched;
  net::Network network;
  net::NodeId client_node;
  kafka::History kafka_history;
  kafka::Cluster cluster;
  ProducerHistory producer_history;
};

struct Outcomes {
  std::vector<MessagePtr> successes;
  std::vector<ProducerError> errors;
};

sim::Task<void> ReadOutcomes(AsyncProducer* p, Outcomes* out) {
  std::optional<MessagePtr> s;
  std::optional<ProducerError> e;
  sim::Chan<MessagePtr>* successes = p->Successes();
  sim::Chan<ProducerError>* errors = p->Errors();
  while (successes != nullptr || errors != nullptr) {
    sim::Scheduler& sched = successes != nullptr ? successes->sched() : errors->sched();
    const int which =
        co_await sim::Select(sched, sim::RecvCase(successes, &s), sim::RecvCase(errors, &e));
    if (which == 0) {
      if (s.has_value())
        out->successes.push_back(*s);
      else
        successes = nullptr;
    } else {
      if (e.has_value())
        out->errors.push_back(*e);
      else
        errors = nullptr;
    }
  }
}

sim::Task<void> Produce(World* w, int n, Outcomes* out, std::unique_ptr<AsyncProducer>* keep) {
  absl::StatusOr<std::unique_ptr<AsyncProducer>> p =
      co_await AsyncProducer::New(w->env(), w->cluster.BootstrapNodes(), ReportConfig());
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) co_return;
  *keep = std::move(*p);
  AsyncProducer* producer = keep->get();
  w->sched.Go("reader", ReadOutcomes(producer, out));
  for (int i = 0; i < n; ++i) {
    auto msg = std::make_shared<ProducerMessage>();
    msg->topic = "t";
    msg->key = absl::StrCat("key-", i % 60);
    msg->value_bytes = 100;
    msg->id = static_cast<uint64_t>(i + 1);
    co_await producer->Input()->Send(msg);
  }
  producer->AsyncClose();
}

// The report's configuration, no faults: 10,000 messages over 3 brokers and
// 6 partitions each succeed exactly once, in order per partition, and the
// broker logs hold consecutive sequences from 0 for one producer epoch.
TEST(EndToEnd, TenThousandMessagesNoFaults) {
  World w(6);
  Outcomes out;
  std::unique_ptr<AsyncProducer> keep;
  const int n = 10000;
  w.sched.Go("app", Produce(&w, n, &out, &keep));
  const sim::RunResult r = w.sched.Run();
  ASSERT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  EXPECT_TRUE(out.errors.empty()) << out.errors.front().err.ToString();
  ASSERT_EQ(static_cast<int>(out.successes.size()), n);
  std::map<uint64_t, int> seen;
  std::map<int32_t, uint64_t> last_id_in_partition;
  for (const MessagePtr& m : out.successes) {
    EXPECT_EQ(++seen[m->id], 1) << "id " << m->id << " succeeded twice";
    uint64_t& last = last_id_in_partition[m->partition];
    EXPECT_LT(last, m->id) << "partition " << m->partition << " out of order";
    last = m->id;
  }
  EXPECT_EQ(static_cast<int>(seen.size()), n);
  w.cluster.SnapshotLogs();
  int in_logs = 0;
  for (const auto& [tp, log] : w.kafka_history.final_logs) {
    int32_t next_seq = 0;
    for (const kafka::LogEntry& e : log) {
      EXPECT_EQ(e.epoch, kafka::Epoch(0));
      EXPECT_EQ(e.first_seq.value, next_seq) << tp.ToString();
      next_seq += static_cast<int32_t>(e.record_ids.size());
      in_logs += static_cast<int>(e.record_ids.size());
    }
  }
  EXPECT_EQ(in_logs, n);
  EXPECT_EQ(static_cast<int>(w.producer_history.acks.size()), n);
  std::printf("10000 messages: simulated %s s, %llu steps, digest %016llx\n",
              r.end_time.ToString().c_str(), static_cast<unsigned long long>(r.steps),
              static_cast<unsigned long long>(r.digest));
}

}  // namespace
}  // namespace sarama
