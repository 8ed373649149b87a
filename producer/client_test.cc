// The Client model against MockBrokers, on both profiles: what sarama
// main's client.go changed (single-flight refreshes, per-topic and
// leaderless errors, updateMetadataMs stamped on success only, the broker
// health check).
#include "producer/client.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "producer/mock_broker_testing.h"
#include "sim/core/sync.h"

namespace sarama {

// Reaches into the Client for what no public call makes happen on cue.
class ClientTestPeer {
 public:
  // client.updateMetadata with one response (not all topics).
  static sim::Task<std::pair<bool, Error>> UpdateMetadata(
      Client* c, std::shared_ptr<const kafka::MetadataResponse> data) {
    co_return co_await c->UpdateMetadata(std::move(data), false);
  }
};

namespace {

using kafka::ErrorCode;
using kafka::PartitionId;
using sarama::testing::MetadataResponseBuilder;
using sarama::testing::MockBroker;
using sarama::testing::MockWrapper;
using sim::Duration;
using sim::Task;
using sim::Time;

constexpr Profile kProfiles[] = {Profile::kSarama_1_42_1, Profile::kSaramaMain};

std::string ProfileText(Profile p) { return std::string(ProfileName(p)); }

struct World {
  World()
      : sched(Options()),
        network(sched, sched.prng().Fork("net")),
        client_node(network.AddNode("client")) {}
  ~World() { sched.DestroyTasks(); }

  static sim::SchedulerOptions Options() {
    sim::SchedulerOptions o;
    o.time_limit = Time() + Duration::Seconds(600);
    return o;
  }
  Env env(Profile p) { return Env{&sched, &network, client_node, nullptr, p}; }
  void Run(Task<void> body) {
    sched.Go("test", std::move(body));
    const sim::RunResult r = sched.Run();
    EXPECT_EQ(r.outcome, sim::Outcome::kAllDone) << r.detail;
  }

  sim::Scheduler sched;
  net::Network network;
  net::NodeId client_node;
  std::vector<std::unique_ptr<MockBroker>> brokers;
  // Kept until the tasks are destroyed (the refresher's and the updater's
  // tasks point into it).
  std::vector<std::shared_ptr<Client>> clients;
};

// A config without ApiVersions (the mock brokers are not scripted for it,
// as sarama main's NewTestConfig has it) and without the initial refresh.
Config TestConfig() {
  Config c = NewConfig();
  c.api_versions_request = false;
  c.metadata.full = false;
  c.metadata.retry.backoff = Duration::Millis(100);
  return c;
}

// Broker 1 at the mock's own node leads t/0; t/1 has no leader if asked.
std::shared_ptr<kafka::MetadataResponse> Metadata(const MockBroker& b, bool leaderless) {
  MetadataResponseBuilder m;
  m.AddBroker(b.id(), b.node()).AddTopicPartition("t", PartitionId(0), b.id());
  if (leaderless) {
    m.AddTopicPartition("t", PartitionId(1), kafka::BrokerId::kNone, {}, {},
                        ErrorCode::LEADER_NOT_AVAILABLE);
  }
  return m.Build();
}

MockBroker* NewMock(World* w, bool leaderless, Duration latency) {
  w->brokers.push_back(std::make_unique<MockBroker>(w->sched, w->network, 1));
  MockBroker* b = w->brokers.back().get();
  b->SetHandler(kafka::ApiKey::kMetadata, MockWrapper(Metadata(*b, leaderless)));
  b->SetLatency(latency);
  return b;
}

Task<Client*> NewClient(World* w, MockBroker* seed, Profile p, Config conf) {
  std::vector<net::NodeId> addrs(1, seed->node());
  absl::StatusOr<std::shared_ptr<Client>> c = co_await Client::New(w->env(p), addrs, conf);
  if (!c.ok()) {
    ADD_FAILURE() << c.status();
    co_return nullptr;
  }
  w->clients.push_back(*c);
  co_return c->get();
}

int MetadataRequests(const MockBroker& b) {
  int n = 0;
  for (const auto& h : b.History()) n += h.request->api == kafka::ApiKey::kMetadata ? 1 : 0;
  return n;
}

Task<void> RefreshAfter(World* w, Client* c, Duration delay, Error* out, sim::WaitGroup* wg) {
  if (delay > Duration()) co_await w->sched.Sleep(delay);
  *out = co_await c->RefreshMetadata(std::vector<std::string>(1, "t"));
  wg->Done();
}

// Two RefreshMetadata("t") calls, the second `delay` after the first.
Task<void> TwoRefreshes(World* w, Profile p, Config conf, bool leaderless, Duration delay,
                        int* requests) {
  MockBroker* b = NewMock(w, leaderless, Duration::Millis(10));
  Client* c = co_await NewClient(w, b, p, conf);
  if (c == nullptr) co_return;
  sim::WaitGroup wg(w->sched, "refreshes");
  wg.Add(2);
  Error first, second;
  w->sched.Go("refresh-1", RefreshAfter(w, c, Duration(), &first, &wg));
  w->sched.Go("refresh-2", RefreshAfter(w, c, delay, &second, &wg));
  co_await wg.Wait();
  *requests = MetadataRequests(*b);
  co_await c->Close();
}

// sarama main (e566ac67): with Metadata.SingleFlight, a refresh asked for
// while one for the same topic runs waits for it instead of sending its own
// request; v1.42.1, and main without SingleFlight, send one each.
TEST(ClientMainTest, SingleFlightSharesOneMetadataRequest) {
  for (Profile p : kProfiles) {
    for (const bool single_flight : {true, false}) {
      SCOPED_TRACE(absl::StrCat(ProfileText(p), single_flight ? " single-flight" : ""));
      World w;
      Config conf = TestConfig();
      conf.metadata.single_flight = single_flight;
      int requests = 0;
      w.Run(TwoRefreshes(&w, p, conf, /*leaderless=*/false, Duration::Millis(1), &requests));
      const bool shared = p == Profile::kSaramaMain && single_flight;
      EXPECT_EQ(requests, shared ? 1 : 2);
      EXPECT_EQ(w.clients.at(0)->refresher() != nullptr, shared);
    }
  }
}

// sarama main (1fe27c9d): updateMetadataMs is stamped only by a refresh
// that found every leader. On v1.42.1 every attempt stamps it, so a
// refresh that slept its backoff while another one asked gives up its
// remaining retries ("its result stands"): here the first of two
// concurrent refreshes of a leaderless topic sends 1 request instead of 3.
TEST(ClientMainTest, ConcurrentRefreshesKeepTheirRetriesOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w;
    Config conf = TestConfig();
    conf.metadata.single_flight = false;  // two refreshes at once, as v1.42.1 has them
    conf.metadata.retry.max = 2;
    int requests = 0;
    w.Run(TwoRefreshes(&w, p, conf, /*leaderless=*/true, Duration::Millis(50), &requests));
    EXPECT_EQ(requests, p == Profile::kSaramaMain ? 6 : 4);
  }
}

Task<void> RefreshLeaderless(World* w, Profile p, Error* out, int* requests) {
  MockBroker* b = NewMock(w, /*leaderless=*/true, Duration());
  Config conf = TestConfig();
  conf.metadata.retry.max = 1;
  Client* c = co_await NewClient(w, b, p, conf);
  if (c == nullptr) co_return;
  *out = co_await c->RefreshMetadata(std::vector<std::string>(1, "t"));
  *requests = MetadataRequests(*b);
  auto [leader, err] = co_await c->Leader("t", 0);
  EXPECT_FALSE(err) << "t/0 has a leader: " << err.ToString();
  co_await c->Close();
}

// sarama main (1fe27c9d, fa624c04): a refresh whose retries end with a
// leaderless partition returns LEADER_NOT_AVAILABLE, wrapped with its topic;
// v1.42.1 returns no error (and leaves the caller to find no leader).
TEST(ClientMainTest, LeaderlessPartitionFailsTheRefreshOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w;
    Error err;
    int requests = 0;
    w.Run(RefreshLeaderless(&w, p, &err, &requests));
    EXPECT_EQ(requests, 2) << "one retry";
    if (p == Profile::kSaramaMain) {
      EXPECT_TRUE(err.Is(ErrorCode::LEADER_NOT_AVAILABLE));
      EXPECT_EQ(err.ToString(), "t: " + Error::Kafka(ErrorCode::LEADER_NOT_AVAILABLE).ToString());
    } else {
      EXPECT_FALSE(err) << err.ToString();
    }
  }
}

Task<void> ResetThenUpdate(World* w, Profile p, bool replaced[2]) {
  MockBroker* b = NewMock(w, /*leaderless=*/false, Duration());
  Client* c = co_await NewClient(w, b, p, TestConfig());
  if (c == nullptr) co_return;
  const Error refreshed = co_await c->RefreshMetadata(std::vector<std::string>(1, "t"));
  EXPECT_FALSE(refreshed) << refreshed.ToString();
  auto [before, err] = co_await c->Leader("t", 0);
  if (before == nullptr) {
    ADD_FAILURE() << err.ToString();
    co_return;
  }
  co_await before->Connected();  // dialled
  // Nothing reads from an idle connection: its reset stays pending.
  w->network.ResetBetween(w->client_node, b->node());
  auto data = Metadata(*b, /*leaderless=*/false);
  co_await ClientTestPeer::UpdateMetadata(c, data);
  auto [after, err2] = co_await c->Leader("t", 0);
  replaced[0] = after != nullptr && after->serial() != before->serial();
  co_await w->sched.Sleep(Duration::Millis(10));
  auto [connected, conn_err] = co_await before->Connected();
  replaced[1] = !connected;  // the old one was closed
  co_await c->Close();
}

// sarama main (8eafc465, ea568bd5): updateMetadata closes a registered
// broker whose connection holds a reset nothing has read, and forgets it,
// so the same metadata registers a new Broker for its id; v1.42.1 keeps
// the old one (to fail on its next write).
TEST(ClientMainTest, HealthCheckReplacesABrokerWithAPendingResetOnlyOnMain) {
  for (Profile p : kProfiles) {
    SCOPED_TRACE(ProfileText(p));
    World w;
    bool replaced[2] = {false, false};
    w.Run(ResetThenUpdate(&w, p, replaced));
    EXPECT_EQ(replaced[0], p == Profile::kSaramaMain) << "a new Broker for id 1";
    EXPECT_EQ(replaced[1], p == Profile::kSaramaMain) << "the old Broker closed";
  }
}

}  // namespace
}  // namespace sarama
