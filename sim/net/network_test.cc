// Tests of the simulated network against what TCP between two processes
// would show: FIFO per direction, latency by seed, resets, partitions, dials,
// nodes going down, latency spikes, and the determinism of it all.
//
// Goroutine bodies are free functions taking their arguments by value
// (task.h's lifetime rule); the network, logs and endpoints they touch live
// on the test's stack, which outlives the run. With the default constant
// latency of 1ms a dial takes 2ms, so most scenarios start at t = 2ms.
#include "sim/net/network.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/core/buggify.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"
#include "sim/core/sync.h"

namespace net {
namespace {

using sim::Outcome;
using sim::Scheduler;
using sim::Task;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Log = std::vector<std::string>;

Duration Ms(int64_t n) { return Duration::Millis(n); }
Duration Us(int64_t n) { return Duration::Micros(n); }
int64_t MicrosOf(Time t) { return (t - Time()).nanos() / 1000; }

struct Msg final : Payload {
  explicit Msg(int value) : n(value) {}
  std::string Describe() const override { return absl::StrCat("msg ", n); }
  int n;
};

PayloadPtr M(int n) { return std::make_shared<Msg>(n); }
int N(const PayloadPtr& p) { return static_cast<const Msg&>(*p).n; }

void Record(Scheduler* s, Log* log, std::string_view what) {
  log->push_back(absl::StrCat(std::string(what), "@", MicrosOf(s->now()), "us"));
}

struct Arrival {
  int n;
  Time at;
  bool operator==(const Arrival&) const = default;
};

// A client and a listening broker, with a fixed latency unless told.
struct World {
  explicit World(uint64_t seed = 1, LatencyModel latency = LatencyModel::Constant(Ms(1)),
                 sim::Policy policy = sim::Policy::kFifo)
      : sched(Options(seed, policy)), net(sched, sim::Prng(seed)) {
    net.SetDefaultLatency(latency);
    client = net.AddNode("client");
    broker = net.AddNode("broker");
    net.Listen(broker);
  }
  static sim::SchedulerOptions Options(uint64_t seed, sim::Policy policy) {
    sim::SchedulerOptions o;
    o.seed = seed;
    o.policy = policy;
    return o;
  }
  Scheduler sched;
  Network net;
  NodeId client = 0;
  NodeId broker = 0;
};

// Dials and takes the server side from the accept channel.
Task<void> Connect(Network* net, NodeId from, NodeId to, Endpoint* client, Endpoint* server) {
  absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to);
  EXPECT_TRUE(ep.ok()) << ep.status();
  if (!ep.ok()) co_return;
  *client = *ep;
  std::optional<Endpoint> accepted;
  EXPECT_TRUE(net->Listen(to)->TryRecv(&accepted));
  if (accepted.has_value()) *server = *accepted;
}

Task<void> RecvN(Scheduler* s, Endpoint ep, int count, std::vector<Arrival>* out) {
  for (int i = 0; i < count; ++i) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) co_return;
    out->push_back(Arrival{N(*m), s->now()});
  }
}

// Receives until the connection is reset, logging each message.
Task<void> RecvLog(Scheduler* s, Endpoint ep, std::string who, Log* log) {
  for (;;) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) {
      Record(s, log, absl::StrCat(who, " closed"));
      co_return;
    }
    Record(s, log, absl::StrCat(who, " got ", N(*m)));
  }
}

// ---------------------------------------------------------------------------
// FIFO and latency.

// Sends `count` messages `gap` apart, then lets a receiver collect them.
Task<void> Stream(Scheduler* s, Network* net, NodeId from, NodeId to, int count, Duration gap,
                  std::vector<Arrival>* out) {
  Endpoint client, server;
  co_await Connect(net, from, to, &client, &server);
  s->Go("receiver", RecvN(s, server, count, out));
  for (int i = 0; i < count; ++i) {
    EXPECT_TRUE(client.Send(M(i)));
    co_await s->Sleep(gap);
  }
}

std::vector<Arrival> RunStream(uint64_t seed, LatencyModel latency, int count, Duration gap) {
  World w(seed, latency);
  std::vector<Arrival> out;
  w.sched.Go("stream", Stream(&w.sched, &w.net, w.client, w.broker, count, gap, &out));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  return out;
}

// Sends three messages, records Queued() on the wire, after delivery and
// after the peer takes one, then after a reset.
Task<void> QueuedCounts(Scheduler* s, Network* net, NodeId from, NodeId to,
                        std::vector<size_t>* out) {
  Endpoint client, server;
  co_await Connect(net, from, to, &client, &server);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(client.Send(M(i)));
  out->push_back(client.Queued());  // on the wire
  co_await s->Sleep(Ms(5));
  out->push_back(client.Queued());  // in the peer's inbox
  co_await server.Recv();
  out->push_back(client.Queued());
  out->push_back(server.Queued());  // nothing sent the other way
  client.Close();
  out->push_back(client.Queued());
}

// Goal: Queued counts what one side sent and the peer has not taken, on the
// wire or in the peer's inbox (the wire bridge's measure of what a broker
// has not yet taken), and nothing once the connection is closed.
TEST(NetworkTest, QueuedCountsWhatThePeerHasNotTaken) {
  World w;
  std::vector<size_t> counts;
  w.sched.Go("queued", QueuedCounts(&w.sched, &w.net, w.client, w.broker, &counts));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(counts, ElementsAre(3u, 3u, 2u, 0u, 0u));
}

// Each direction is FIFO even when per-message latency draws would reorder.
TEST(NetworkTest, FifoPerDirectionUnderExponentialLatency) {
  constexpr int kCount = 2000;
  const std::vector<Arrival> got =
      RunStream(3, LatencyModel::Exponential(Us(100), Ms(2), Ms(50)), kCount, Us(10));
  ASSERT_EQ(got.size(), size_t{kCount});
  int clamped = 0;  // later messages held back behind a slower earlier one
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(got[static_cast<size_t>(i)].n, i);
    if (i > 0) {
      const Time prev = got[static_cast<size_t>(i) - 1].at;
      EXPECT_GE(got[static_cast<size_t>(i)].at, prev);
      if (got[static_cast<size_t>(i)].at == prev) ++clamped;
    }
  }
  // Canary: the draws really would have reordered (sends 10us apart, mean
  // 2ms), so FIFO is doing the work.
  EXPECT_GT(clamped, kCount / 4);
}

// Latency draws are a pure function of the seed and within the model.
TEST(NetworkTest, LatencyModelDrawsAreFixedBySeedAndBounded) {
  const LatencyModel exp = LatencyModel::Exponential(Us(100), Ms(1), Ms(5));
  const LatencyModel uni = LatencyModel::Uniform(Ms(1), Ms(3));
  const LatencyModel con = LatencyModel::Constant(Us(700));
  sim::Prng a(42), b(42);
  int64_t exp_sum_ns = 0;
  Duration uni_lo = Ms(3), uni_hi = Ms(1);
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const Duration e = exp.Draw(a);
    EXPECT_EQ(e, exp.Draw(b));
    EXPECT_GE(e, Us(100));
    EXPECT_LE(e, Ms(5));
    exp_sum_ns += e.nanos();
    const Duration u = uni.Draw(a);
    EXPECT_EQ(u, uni.Draw(b));
    uni_lo = std::min(uni_lo, u);
    uni_hi = std::max(uni_hi, u);
    EXPECT_EQ(con.Draw(a), Us(700));
    EXPECT_EQ(con.Draw(b), Us(700));
  }
  // Mean of min + Exp(1ms) (barely cut at 5ms): about 1.1ms.
  const int64_t mean_us = exp_sum_ns / kDraws / 1000;
  EXPECT_GT(mean_us, 1000);
  EXPECT_LT(mean_us, 1200);
  EXPECT_GE(uni_lo, Ms(1));
  EXPECT_LT(uni_lo, Us(1010));
  EXPECT_LE(uni_hi, Ms(3));
  EXPECT_GT(uni_hi, Us(2990));
}

// The same seed gives the same delivery times; another seed does not.
TEST(NetworkTest, DeliveryTimesAreFixedBySeed) {
  const LatencyModel exp = LatencyModel::Exponential(Us(100), Ms(1), Ms(20));
  const std::vector<Arrival> first = RunStream(9, exp, 200, Us(300));
  const std::vector<Arrival> again = RunStream(9, exp, 200, Us(300));
  const std::vector<Arrival> other = RunStream(10, exp, 200, Us(300));
  ASSERT_EQ(first.size(), 200u);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
}

// Constant latency is exact; uniform latency stays within its bounds.
TEST(NetworkTest, ConstantLatencyExactUniformWithinBounds) {
  // Dial: 2 x 3ms; message i is sent at 6ms + i ms.
  const std::vector<Arrival> con = RunStream(1, LatencyModel::Constant(Ms(3)), 50, Ms(1));
  ASSERT_EQ(con.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(con[static_cast<size_t>(i)].at, Time() + Ms(6) + Ms(i) + Ms(3));
  }
  // Sends 5ms apart, wider than the spread: FIFO never clamps. The dial's
  // own round trip is drawn too, so measure from the first send.
  const std::vector<Arrival> uni = RunStream(1, LatencyModel::Uniform(Ms(1), Ms(2)), 200, Ms(5));
  ASSERT_EQ(uni.size(), 200u);
  std::vector<int64_t> latencies_us;
  const Arrival& first = uni.front();
  for (int i = 1; i < 200; ++i) {
    // latency(i) - latency(0) = (arrival(i) - arrival(0)) - 5ms * i
    const Duration rel = (uni[static_cast<size_t>(i)].at - first.at) - Ms(5) * i;
    EXPECT_GE(rel, Ms(1) - Ms(2));
    EXPECT_LE(rel, Ms(2) - Ms(1));
    latencies_us.push_back(rel.nanos() / 1000);
  }
  EXPECT_NE(*std::min_element(latencies_us.begin(), latencies_us.end()),
            *std::max_element(latencies_us.begin(), latencies_us.end()));
}

// ---------------------------------------------------------------------------
// Resets.

// Answers each request n with 100 + n, logging, until the connection resets.
Task<void> Responder(Scheduler* s, Endpoint ep, Log* log) {
  for (;;) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) {
      Record(s, log, "server closed");
      co_return;
    }
    Record(s, log, absl::StrCat("server got ", N(*m)));
    const bool sent = ep.Send(M(100 + N(*m)));
    Record(s, log, absl::StrCat("server sent ", 100 + N(*m), sent ? " ok" : " failed"));
  }
}

// The server answers each request; the client resets while its second
// request and the first response are in transit.
Task<void> ResetClient(Scheduler* s, Network* net, NodeId from, NodeId to, Log* log) {
  Endpoint client, server;
  co_await Connect(net, from, to, &client, &server);
  s->Go("server", Responder(s, server, log));
  EXPECT_TRUE(client.Send(M(1)));  // arrives at 3ms; response due 4ms
  co_await s->Sleep(Us(1500));
  EXPECT_TRUE(client.Send(M(2)));  // due at 4.5ms
  net->Reset(client.id());         // at 3.5ms
  Record(s, log, "reset");
  EXPECT_FALSE(client.Send(M(3)));
  EXPECT_TRUE(client.closed());
  std::optional<PayloadPtr> m = co_await client.Recv();
  Record(s, log, m.has_value() ? "client got a response" : "client closed");
}

// A reset loses what is in transit, tells both sides, and refuses later
// sends; a request delivered before it was processed, its response lost.
TEST(NetworkTest, ResetLosesInTransitAndTellsBothSides) {
  World w;
  Log log;
  w.sched.Go("client", ResetClient(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("server got 1@3000us", "server sent 101 ok@3000us", "reset@3500us",
                               "client closed@3500us", "server closed@3500us"));
  EXPECT_EQ(w.net.messages_delivered(), 1u);
  EXPECT_EQ(w.net.messages_lost(), 2u);  // request 2 and response 101
  EXPECT_EQ(w.net.open_connections(), 0u);
}

Task<void> DrainThenClosed(Scheduler* s, Network* net, NodeId from, NodeId to, Log* log) {
  Endpoint client, server;
  co_await Connect(net, from, to, &client, &server);
  EXPECT_TRUE(server.Send(M(7)));  // delivered at 3ms, not read yet
  EXPECT_TRUE(server.Send(M(8)));
  co_await s->Sleep(Ms(5));
  EXPECT_TRUE(server.Send(M(9)));  // in transit when the server closes
  server.Close();
  EXPECT_TRUE(client.closed());
  EXPECT_FALSE(client.Send(M(10)));
  co_await RecvLog(s, client, "client", log);
}

// Messages delivered before a reset are still received, then nullopt;
// Endpoint::Close is a reset seen from both sides.
TEST(NetworkTest, DeliveredBeforeResetIsStillReceived) {
  World w;
  Log log;
  w.sched.Go("client", DrainThenClosed(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log,
              ElementsAre("client got 7@7000us", "client got 8@7000us", "client closed@7000us"));
  EXPECT_EQ(w.net.messages_delivered(), 2u);
  EXPECT_EQ(w.net.messages_lost(), 1u);
}

// ---------------------------------------------------------------------------
// Partitions.

Task<void> OneWay(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("server", RecvLog(s, server, "server", log), {.daemon = true});
  s->Go("client-reader", RecvLog(s, client, "client", log), {.daemon = true});
  net->Partition(c, b);
  EXPECT_TRUE(net->Partitioned(c, b));
  EXPECT_FALSE(net->Partitioned(b, c));
  for (int i = 1; i <= 3; ++i) EXPECT_TRUE(client.Send(M(i)));  // held
  EXPECT_TRUE(server.Send(M(10)));                              // flows
  co_await s->Sleep(Ms(100));
  Record(s, log, "heal");
  net->Heal(c, b);
  co_await s->Sleep(Ms(10));
}

// A one-way partition holds client->broker and lets broker->client through;
// held messages arrive in order, one latency after the heal.
TEST(NetworkTest, OneWayPartitionHoldsOneDirectionUntilHeal) {
  World w;
  Log log;
  w.sched.Go("main", OneWay(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("client got 10@3000us", "heal@102000us", "server got 1@103000us",
                               "server got 2@103000us", "server got 3@103000us"));
  EXPECT_EQ(w.net.messages_lost(), 0u);
}

Task<void> InFlightHeld(Scheduler* s, Network* net, NodeId c, NodeId b, bool reset, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("server", RecvLog(s, server, "server", log), {.daemon = true});
  EXPECT_TRUE(client.Send(M(1)));  // on the wire, due at 3ms
  co_await s->Sleep(Us(500));
  net->Partition(c, b);
  EXPECT_TRUE(client.Send(M(2)));
  co_await s->Sleep(Ms(10));
  EXPECT_TRUE(client.Send(M(3)));
  co_await s->Sleep(Ms(10));
  if (reset) {
    net->ResetBetween(c, b);
  } else {
    Record(s, log, "heal");
    net->Heal(c, b);
  }
  co_await s->Sleep(Ms(10));
}

// A message on the wire when the partition starts is held too; after Heal
// everything held arrives in order; a reset instead loses all of it.
TEST(NetworkTest, HeldMessagesArriveInOrderAfterHealOrAreLostOnReset) {
  {
    World w;
    Log log;
    w.sched.Go("main", InFlightHeld(&w.sched, &w.net, w.client, w.broker, false, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("heal@22500us", "server got 1@23500us", "server got 2@23500us",
                                 "server got 3@23500us"));
    EXPECT_EQ(w.net.messages_delivered(), 3u);
  }
  {
    World w;
    Log log;
    w.sched.Go("main", InFlightHeld(&w.sched, &w.net, w.client, w.broker, true, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("server closed@22500us"));
    EXPECT_EQ(w.net.messages_delivered(), 0u);
    EXPECT_EQ(w.net.messages_lost(), 3u);
  }
}

Task<void> Echo(Endpoint ep) {
  for (;;) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) co_return;
    if (!ep.Send(*m)) co_return;
  }
}

// A request with a read timeout: select on the inbox against a timer.
Task<void> TimedRequest(Scheduler* s, Network* net, NodeId c, NodeId b, int partition, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("echo", Echo(server), {.daemon = true});
  if (partition == 1) net->Partition(c, b);
  if (partition == 2) net->Partition(b, c);
  EXPECT_TRUE(client.Send(M(1)));
  sim::Timer timeout(*s, "read timeout", Ms(100));
  std::optional<PayloadPtr> response;
  std::optional<Time> fired;
  const int chosen = co_await sim::Select(*s, sim::RecvCase(client.inbox(), &response),
                                          sim::RecvCase(timeout.C(), &fired));
  if (chosen == 0) {
    Record(s, log, response.has_value() ? "response" : "closed");
  } else {
    Record(s, log, client.closed() ? "timeout, closed" : "timeout, still open");
  }
}

// A client learns of a partition (either way) only through its read timeout.
TEST(NetworkTest, ClientNoticesPartitionOnlyByTimeout) {
  const char* want[] = {"response@4000us", "timeout, still open@102000us",
                        "timeout, still open@102000us"};
  for (int partition = 0; partition <= 2; ++partition) {
    SCOPED_TRACE(absl::StrCat("partition=", partition));
    World w;
    Log log;
    w.sched.Go("main", TimedRequest(&w.sched, &w.net, w.client, w.broker, partition, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre(want[partition]));
    // Request (and, one way, the response) are held, not lost.
    EXPECT_EQ(w.net.messages_lost(), 0u);
    EXPECT_EQ(w.net.open_connections(), 1u);
  }
}

// ---------------------------------------------------------------------------
// Dials and nodes.

Task<void> DialLog(Scheduler* s, Network* net, NodeId from, NodeId to, DialOptions opts, Log* log) {
  absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to, opts);
  if (ep.ok()) {
    Record(s, log, absl::StrCat("connected c", ep->id()));
  } else {
    Record(s, log, std::string(absl::StatusCodeToString(ep.status().code())));
  }
}

Task<void> TakeDown(Network* net, NodeId n, Scheduler* s, Duration after) {
  co_await s->Sleep(after);
  net->SetNodeUp(n, false);
}

// A dial to a node that is down, that goes down during the handshake, or
// that does not listen is refused after one round trip.
TEST(NetworkTest, DialRefusedAfterOneRoundTrip) {
  {
    World w;
    Log log;
    w.net.SetNodeUp(w.broker, false);
    w.sched.Go("dial", DialLog(&w.sched, &w.net, w.client, w.broker, {}, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("UNAVAILABLE@2000us"));
  }
  {
    World w;
    Log log;
    w.sched.Go("down", TakeDown(&w.net, w.broker, &w.sched, Ms(1)));
    w.sched.Go("dial", DialLog(&w.sched, &w.net, w.client, w.broker, {}, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("UNAVAILABLE@2000us"));
  }
  {
    World w;
    Log log;
    const NodeId mute = w.net.AddNode("mute");
    w.sched.Go("dial", DialLog(&w.sched, &w.net, w.client, mute, {}, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("UNAVAILABLE@2000us"));
    EXPECT_EQ(w.net.open_connections(), 0u);
  }
}

Task<void> PartitionAt(Network* net, NodeId from, NodeId to, Scheduler* s, Duration after) {
  co_await s->Sleep(after);
  net->Partition(from, to);
}

// A dial across a partition (either direction, or one starting during the
// handshake) fails with DEADLINE_EXCEEDED when its timeout has passed.
TEST(NetworkTest, DialTimesOutWhenPartitioned) {
  const DialOptions opts{.dial_timeout = Ms(500)};
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(absl::StrCat("variant=", variant));
    World w;
    Log log;
    if (variant == 0) w.net.Partition(w.client, w.broker);
    if (variant == 1) w.net.Partition(w.broker, w.client);
    if (variant == 2) {
      w.sched.Go("cut", PartitionAt(&w.net, w.broker, w.client, &w.sched, Ms(1)));
    }
    w.sched.Go("dial", DialLog(&w.sched, &w.net, w.client, w.broker, opts, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre("DEADLINE_EXCEEDED@500000us"));
    EXPECT_EQ(w.net.open_connections(), 0u);
  }
}

Task<void> Acceptor(Scheduler* s, Network* net, NodeId node, Log* log) {
  for (;;) {
    std::optional<Endpoint> ep = co_await net->Listen(node)->Recv();
    if (!ep.has_value()) co_return;
    Record(s, log,
           absl::StrCat("accepted c", ep->id(), " from ", net->NodeName(ep->peer()), " at ",
                        net->NodeName(ep->local())));
  }
}

Task<void> DialTwice(Scheduler* s, Network* net, NodeId from, NodeId to, Log* log) {
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to);
    EXPECT_TRUE(ep.ok());
    if (!ep.ok()) co_return;
    EXPECT_EQ(ep->local(), from);
    EXPECT_EQ(ep->peer(), to);
    Record(s, log, absl::StrCat("connected c", ep->id()));
  }
  co_await s->Sleep(Ms(1));  // lets the daemon acceptor log the last accept
}

// A dial succeeds after one round trip and the server accepts the other end
// of the same connection; connection ids increase from 1.
TEST(NetworkTest, DialSucceedsAndServerAccepts) {
  World w;
  Log log;
  w.sched.Go("acceptor", Acceptor(&w.sched, &w.net, w.broker, &log), {.daemon = true});
  w.sched.Go("dial", DialTwice(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("connected c1@2000us", "accepted c1 from client at broker@2000us",
                               "connected c2@4000us", "accepted c2 from client at broker@4000us"));
  EXPECT_EQ(w.net.open_connections(), 2u);
}

Task<void> NodeDown(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint c1, s1, c2, s2;
  co_await Connect(net, c, b, &c1, &s1);
  co_await Connect(net, c, b, &c2, &s2);
  s->Go("s1", RecvLog(s, s1, "s1", log));
  s->Go("c2", RecvLog(s, c2, "c2", log));
  EXPECT_TRUE(c1.Send(M(1)));
  EXPECT_TRUE(s2.Send(M(2)));
  co_await s->Sleep(Us(500));
  net->SetNodeUp(b, false);
  EXPECT_FALSE(net->NodeUp(b));
  EXPECT_EQ(net->open_connections(), 0u);
  EXPECT_FALSE(c1.Send(M(3)));
  EXPECT_TRUE(s1.closed());
  co_await DialLog(s, net, c, b, {}, log);
  net->SetNodeUp(b, true);
  co_await DialLog(s, net, c, b, {}, log);
}

// Taking a node down resets all its connections, and it refuses dials until
// it comes back up.
TEST(NetworkTest, NodeDownResetsItsConnections) {
  World w;
  Log log;
  w.sched.Go("main", NodeDown(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("s1 closed@4500us", "c2 closed@4500us", "UNAVAILABLE@6500us",
                               "connected c3@8500us"));
  EXPECT_EQ(w.net.messages_lost(), 2u);
  EXPECT_EQ(w.net.open_connections(), 1u);
}

Task<void> Spike(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("server", RecvLog(s, server, "server", log), {.daemon = true});
  s->Go("client-reader", RecvLog(s, client, "client", log), {.daemon = true});
  net->AddLatencySpike(c, b, Ms(5), s->now() + Ms(10));
  EXPECT_TRUE(client.Send(M(1)));  // 1ms + 5ms
  EXPECT_TRUE(server.Send(M(2)));  // the other direction: 1ms
  co_await s->Sleep(Ms(9));
  EXPECT_TRUE(client.Send(M(3)));  // still inside the window
  co_await s->Sleep(Ms(1));
  EXPECT_TRUE(client.Send(M(4)));  // the window has closed
  co_await s->Sleep(Ms(10));
}

// A latency spike delays one direction, and only for messages sent within
// its window.
TEST(NetworkTest, LatencySpikeOnlyWithinItsWindow) {
  World w;
  Log log;
  w.sched.Go("main", Spike(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("client got 2@3000us", "server got 1@8000us", "server got 3@17000us",
                               "server got 4@17000us"));
}

// ---------------------------------------------------------------------------
// Blackholes (a middlebox lost its state) and connect hangs (SYNs dropped).

Duration Sec(int64_t n) { return Duration::Seconds(n); }

Task<void> Blackholed(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("server", RecvLog(s, server, "server", log), {.daemon = true});
  s->Go("client-reader", RecvLog(s, client, "client", log), {.daemon = true});
  EXPECT_TRUE(client.Send(M(1)));  // delivered at 3ms
  co_await s->Sleep(Ms(2));
  EXPECT_TRUE(client.Send(M(2)));  // on the wire when the state is lost
  co_await s->Sleep(Us(500));
  Record(s, log, "blackhole");
  net->Blackhole(c, b);
  EXPECT_TRUE(server.Send(M(101)));  // the write succeeds; the bytes go nowhere
  EXPECT_TRUE(client.Send(M(3)));
  EXPECT_FALSE(client.closed());
  EXPECT_FALSE(server.closed());
  // A connection dialled now gets fresh state in the middlebox.
  Endpoint client2, server2;
  co_await Connect(net, c, b, &client2, &server2);
  EXPECT_TRUE(client2.Send(M(4)));
  std::optional<PayloadPtr> got = co_await server2.Recv();
  EXPECT_TRUE(got.has_value());
  if (got.has_value()) Record(s, log, absl::StrCat("server2 got ", N(*got)));
  co_await s->Sleep(Sec(1000));
}

// After a blackhole nothing of an open connection gets through either way
// and neither side is told, until the first lost message is tcp_retries2
// old (924.6 s): then both sides see it reset. A new connection works.
TEST(NetworkBlackholeTest, DropsBothWaysSilentlyUntilTcpGivesUp) {
  World w;
  Log log;
  w.sched.Go("main", Blackholed(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  // 4.5ms + 924.6s: the reset; the second connection is open still.
  EXPECT_THAT(log, ElementsAre("server got 1@3000us", "blackhole@4500us", "server2 got 4@7500us",
                               "client closed@924604500us", "server closed@924604500us"));
  EXPECT_EQ(w.net.messages_delivered(), 2u);  // 1 and 4
  EXPECT_EQ(w.net.messages_lost(), 3u);       // 2 (on the wire), 101 and 3
  EXPECT_EQ(w.net.open_connections(), 1u);
}

Task<void> IdleBlackholed(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("client-reader", RecvLog(s, client, "client", log), {.daemon = true});
  net->Blackhole(c, b);
  co_await s->Sleep(Sec(2000));
  EXPECT_FALSE(client.closed());  // nothing unacknowledged: nothing times out
  Record(s, log, "write");
  EXPECT_TRUE(server.Send(M(7)));
  co_await s->Sleep(Sec(1000));
}

// A blackholed connection nothing is written to stays open (keepalive is
// not modelled); the first write starts TCP's retransmission clock.
TEST(NetworkBlackholeTest, IdleConnectionStaysOpenUntilAWrite) {
  World w;
  Log log;
  w.sched.Go("main", IdleBlackholed(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("write@2000002000us", "client closed@2924602000us"));
  EXPECT_EQ(w.net.messages_lost(), 1u);
}

Task<void> DialText(Scheduler* s, Network* net, NodeId from, NodeId to, DialOptions opts,
                    Log* log) {
  absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to, opts);
  if (ep.ok()) {
    Record(s, log, "connected");
  } else {
    Record(s, log, std::string(ep.status().message()));
  }
}

Task<void> DialLater(Scheduler* s, Network* net, NodeId from, NodeId to, Duration after, Log* log) {
  co_await s->Sleep(after);
  const DialOptions opts;
  co_await DialText(s, net, from, to, opts, log);
}

Task<void> HangAt(Network* net, NodeId from, NodeId to, Scheduler* s, Duration after,
                  Duration length) {
  co_await s->Sleep(after);
  net->HangConnects(from, to, s->now() + length);
}

// A dial that starts while SYNs go unanswered completes one round trip
// after the first SYN retransmission (1, 3, 7, 15, 31, 63 s) past the
// window, or fails at its dial timeout, or with ETIMEDOUT at 127 s,
// whichever comes first; a dial after the window is a plain one.
TEST(NetworkConnectHangTest, DialWaitsForTheSynRetransmissionAfterTheWindow) {
  struct Case {
    Duration hang;
    Duration dial_timeout;
    const char* want;
  };
  const Case cases[] = {
      {Ms(500), Sec(30), "connected@1002000us"},
      {Sec(1), Sec(30), "connected@1002000us"},  // the window ends as the SYN goes again
      {Ms(2500), Sec(30), "connected@3002000us"},
      {Sec(20), Sec(60), "connected@31002000us"},
      // Sarama's default Net.DialTimeout, 30 s, comes before the SYN at 31 s.
      {Sec(20), Sec(30), "dial client->broker: i/o timeout@30000000us"},
      {Sec(100), Sec(300), "dial client->broker: connect: connection timed out@127000000us"},
      {Sec(50), Sec(300), "connected@63002000us"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    World w;
    Log log;
    w.net.HangConnects(w.client, w.broker, Time() + c.hang);
    EXPECT_TRUE(w.net.ConnectsHang(w.client, w.broker));
    EXPECT_FALSE(w.net.ConnectsHang(w.broker, w.client));
    w.sched.Go("dial", DialText(&w.sched, &w.net, w.client, w.broker,
                                {.dial_timeout = c.dial_timeout}, &log));
    EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
    EXPECT_THAT(log, ElementsAre(c.want));
  }
  World w;
  Log log;
  w.net.HangConnects(w.client, w.broker, Time() + Ms(1));
  w.sched.Go("dial",
             DialText(&w.sched, &w.net, w.client, w.broker, {.dial_timeout = Sec(30)}, &log));
  w.sched.Go("late", DialLater(&w.sched, &w.net, w.client, w.broker, Ms(5), &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("connected@7000us", "connected@1002000us"));
}

Task<void> OpenThroughHang(Scheduler* s, Network* net, NodeId c, NodeId b, Log* log) {
  Endpoint client, server;
  co_await Connect(net, c, b, &client, &server);
  s->Go("server", RecvLog(s, server, "server", log), {.daemon = true});
  s->Go("hang", HangAt(net, c, b, s, Duration(), Sec(60)));
  co_await s->Sleep(Ms(1));
  EXPECT_TRUE(client.Send(M(1)));
  co_await s->Sleep(Ms(5));
}

// Connections open when the SYNs start going unanswered carry on.
TEST(NetworkConnectHangTest, OpenConnectionsAreNotAffected) {
  World w;
  Log log;
  w.sched.Go("main", OpenThroughHang(&w.sched, &w.net, w.client, w.broker, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("server got 1@4000us"));
}

// A hang applied while a dial waits for its SYN retransmission keeps it
// waiting: each retransmission looks at the link as it is then.
TEST(NetworkConnectHangTest, ALaterWindowKeepsTheDialWaiting) {
  World w;
  Log log;
  w.net.HangConnects(w.client, w.broker, Time() + Ms(500));
  w.sched.Go("hang", HangAt(&w.net, w.client, w.broker, &w.sched, Ms(900), Sec(5)));
  w.sched.Go("dial",
             DialText(&w.sched, &w.net, w.client, w.broker, {.dial_timeout = Sec(30)}, &log));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_THAT(log, ElementsAre("connected@7002000us"));  // 0.9 s + 5 s ends before 7 s
}

// ---------------------------------------------------------------------------
// Determinism, under faults and a random schedule.

struct Counters {
  uint64_t sent = 0;
  std::vector<std::vector<int>> echoes;
};

Task<void> CountingEcho(Endpoint ep, Counters* counters) {
  for (;;) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) co_return;
    if (!ep.Send(*m)) co_return;
    ++counters->sent;
  }
}

Task<void> EchoServer(Scheduler* s, Network* net, NodeId node, Counters* counters) {
  for (;;) {
    std::optional<Endpoint> ep = co_await net->Listen(node)->Recv();
    if (!ep.has_value()) co_return;
    s->Go("echo", CountingEcho(*ep, counters), {.daemon = true});
  }
}

Task<void> Reader(Endpoint ep, int count, std::vector<int>* out) {
  while (out->size() < static_cast<size_t>(count)) {
    std::optional<PayloadPtr> m = co_await ep.Recv();
    if (!m.has_value()) co_return;
    out->push_back(N(*m));
  }
}

Task<void> ChaosClient(Scheduler* s, Network* net, NodeId from, NodeId to, int count, uint64_t seed,
                       Counters* counters, size_t slot) {
  sim::Prng prng(seed);
  absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to, {.dial_timeout = Ms(50)});
  if (!ep.ok()) co_return;
  s->Go("reader", Reader(*ep, count, &counters->echoes[slot]));
  for (int i = 0; i < count; ++i) {
    if (!ep->Send(M(i))) co_return;
    ++counters->sent;
    co_await s->Sleep(Us(prng.UniformInt(0, 400)));
  }
}

Task<void> Chaos(Scheduler* s, Network* net, NodeId a, NodeId b, uint64_t seed) {
  sim::Prng prng(seed);
  for (int step = 0; step < 30; ++step) {
    co_await s->Sleep(Us(prng.UniformInt(0, 2000)));
    switch (prng.Below(10)) {
      case 0: net->Partition(a, b); break;
      case 1: net->Partition(b, a); break;
      case 2:
      case 3:
        net->Heal(a, b);
        net->Heal(b, a);
        break;
      case 4: net->ResetBetween(a, b); break;
      case 5: net->AddLatencySpike(a, b, Ms(3), s->now() + Ms(2)); break;
      default: break;  // quiet
    }
  }
  net->Heal(a, b);
  net->Heal(b, a);
}

struct ChaosResult {
  uint64_t digest = 0;
  uint64_t delivered = 0;
  uint64_t lost = 0;
  std::string trace;
};

// `buggify`: null for none, else the sites to switch on (perhaps none).
ChaosResult RunChaos(uint64_t seed, bool record,
                     const std::vector<std::string>* buggify = nullptr) {
  sim::SchedulerOptions o;
  o.seed = seed;
  o.policy = sim::Policy::kRandom;
  o.record_trace = record;
  Scheduler sched(o);
  Network net(sched, sim::Prng(seed).Fork("net"));
  sim::Buggify bug;
  if (buggify != nullptr) {
    bug = sim::Buggify(sim::Prng(seed).Fork("buggify"), *buggify);
    net.SetBuggify(&bug);
  }
  net.SetDefaultLatency(LatencyModel::Exponential(Us(50), Us(500), Ms(10)));
  const NodeId broker = net.AddNode("broker");
  net.Listen(broker);
  constexpr int kClients = 4;
  constexpr int kCount = 40;
  Counters counters;
  counters.echoes.resize(kClients);
  sched.Go("server", EchoServer(&sched, &net, broker, &counters), {.daemon = true});
  const sim::Prng root = sim::Prng(seed).Fork("test");
  for (size_t i = 0; i < kClients; ++i) {
    const NodeId c = net.AddNode(absl::StrCat("client", i));
    sched.Go("client", ChaosClient(&sched, &net, c, broker, kCount,
                                   root.Fork(absl::StrCat("client", i)).seed(), &counters, i));
    sched.Go("chaos", Chaos(&sched, &net, c, broker, root.Fork(absl::StrCat("chaos", i)).seed()));
  }
  const sim::RunResult r = sched.Run();
  EXPECT_EQ(r.outcome, Outcome::kAllDone) << r.detail;
  // Each client's echoes are a prefix of what it sent, in order.
  for (const std::vector<int>& echoes : counters.echoes) {
    for (size_t i = 0; i < echoes.size(); ++i) EXPECT_EQ(echoes[i], static_cast<int>(i));
  }
  // Every accepted send was delivered or lost; nothing is left held.
  EXPECT_EQ(net.messages_delivered() + net.messages_lost(), counters.sent);
  return ChaosResult{r.digest, net.messages_delivered(), net.messages_lost(),
                     record ? sched.RenderTrace() : std::string()};
}

// The same seed gives the same trace digest twice (recording or not);
// another seed gives another digest.
TEST(NetworkTest, SameSeedSameTraceDigest) {
  uint64_t delivered = 0, lost = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    const ChaosResult first = RunChaos(seed, false);
    const ChaosResult again = RunChaos(seed, false);
    const ChaosResult recorded = RunChaos(seed, true);
    EXPECT_EQ(first.digest, again.digest);
    EXPECT_EQ(first.digest, recorded.digest);
    EXPECT_NE(first.digest, RunChaos(seed + 100, false).digest);
    EXPECT_THAT(recorded.trace, HasSubstr("net connect c1"));
    EXPECT_THAT(recorded.trace, HasSubstr("net deliver c"));
    delivered += first.delivered;
    lost += first.lost;
  }
  // Canary: the faults really happened, and traffic got through too.
  EXPECT_GT(lost, 0u);
  EXPECT_GT(delivered, 200u);
}

// ---------------------------------------------------------------------------
// Buggify.

const std::vector<std::string> kNetSites = {"net.delay", "net.slow_connect"};

// A stream over one connection with the given buggify sites on; `bug` is
// the Buggify the network used (for its counts).
std::vector<Arrival> RunBuggifiedStream(uint64_t seed, const std::vector<std::string>& sites,
                                        int count, Duration gap, sim::Buggify* bug) {
  World w(seed);
  *bug = sim::Buggify(sim::Prng(seed).Fork("buggify"), sites);
  w.net.SetBuggify(bug);
  std::vector<Arrival> out;
  w.sched.Go("stream", Stream(&w.sched, &w.net, w.client, w.broker, count, gap, &out));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  return out;
}

// net.delay slows single messages, yet each direction stays FIFO: a later
// message on the link is never delivered before a delayed one.
TEST(NetworkBuggifyTest, DelayKeepsEachDirectionFifo) {
  constexpr int kCount = 1000;
  sim::Buggify bug;
  // Constant 1ms latency, sends 20us apart: without buggify, message i
  // arrives exactly 1ms after it was sent.
  const std::vector<Arrival> got = RunBuggifiedStream(5, {"net.delay"}, kCount, Us(20), &bug);
  ASSERT_EQ(got.size(), size_t{kCount});
  int late = 0;
  for (int i = 0; i < kCount; ++i) {
    const Arrival& a = got[static_cast<size_t>(i)];
    EXPECT_EQ(a.n, i);
    const Time sent = Time() + Ms(2) + Us(20) * i;
    EXPECT_GE(a.at, sent + Ms(1));
    if (a.at > sent + Ms(1)) ++late;
    if (i > 0) {
      EXPECT_GE(a.at, got[static_cast<size_t>(i) - 1].at);
    }
  }
  // Canary: the site fired at its rate, and the messages behind a delayed
  // one waited for it (more late messages than fired sites).
  EXPECT_EQ(bug.opportunities("net.delay"), uint64_t{kCount});
  EXPECT_GT(bug.fired("net.delay"), uint64_t{kCount / 20});
  EXPECT_LT(bug.fired("net.delay"), uint64_t{kCount / 5});
  EXPECT_GT(late, static_cast<int>(bug.fired("net.delay")));
}

// Sends message k on connection 1, then 100us later message k on
// connection 2, for `rounds` rounds 10ms apart.
Task<void> TwoConnections(Scheduler* s, Network* net, NodeId c1, NodeId c2, NodeId to, int rounds,
                          std::vector<Arrival>* out1, std::vector<Arrival>* out2) {
  Endpoint a, a_server, b, b_server;
  co_await Connect(net, c1, to, &a, &a_server);
  co_await Connect(net, c2, to, &b, &b_server);
  s->Go("receiver1", RecvN(s, a_server, rounds, out1));
  s->Go("receiver2", RecvN(s, b_server, rounds, out2));
  for (int k = 0; k < rounds; ++k) {
    EXPECT_TRUE(a.Send(M(k)));
    co_await s->Sleep(Us(100));
    EXPECT_TRUE(b.Send(M(k)));
    co_await s->Sleep(Ms(10));
  }
}

// How many rounds the message on connection 2 overtook the one sent 100us
// earlier on connection 1 (0 without buggify: latency is constant).
int Overtakes(uint64_t seed, bool buggify) {
  World w(seed);
  const NodeId other = w.net.AddNode("client2");
  sim::Buggify bug(sim::Prng(seed).Fork("buggify"),
                   buggify ? std::vector<std::string>{"net.delay"} : std::vector<std::string>{});
  w.net.SetBuggify(&bug);
  constexpr int kRounds = 40;
  std::vector<Arrival> one, two;
  w.sched.Go("main",
             TwoConnections(&w.sched, &w.net, w.client, other, w.broker, kRounds, &one, &two));
  EXPECT_EQ(w.sched.Run().outcome, Outcome::kAllDone);
  EXPECT_EQ(one.size(), size_t{kRounds});
  EXPECT_EQ(two.size(), size_t{kRounds});
  int overtakes = 0;
  for (size_t k = 0; k < one.size() && k < two.size(); ++k) {
    EXPECT_EQ(one[k].n, static_cast<int>(k));  // FIFO on each connection
    EXPECT_EQ(two[k].n, static_cast<int>(k));
    if (two[k].at < one[k].at) ++overtakes;
  }
  return overtakes;
}

// net.delay reorders across connections: a message sent later on another
// connection can arrive first, which constant latency alone never allows.
TEST(NetworkBuggifyTest, DelayLetsOtherConnectionsOvertake) {
  int seeds_with_overtakes = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    EXPECT_EQ(Overtakes(seed, false), 0);  // canary: no reordering without it
    if (Overtakes(seed, true) > 0) ++seeds_with_overtakes;
  }
  EXPECT_GE(seeds_with_overtakes, 5);
}

Task<void> Dials(Scheduler* s, Network* net, NodeId from, NodeId to, int count,
                 std::vector<Duration>* took) {
  for (int i = 0; i < count; ++i) {
    const Time start = s->now();
    absl::StatusOr<Endpoint> ep = co_await net->Dial(from, to);
    EXPECT_TRUE(ep.ok()) << ep.status();
    took->push_back(s->now() - start);
    if (ep.ok()) ep->Close();
  }
}

// net.slow_connect makes some dials slower than one round trip, by at most
// its maximum, and says so in the trace.
TEST(NetworkBuggifyTest, SlowConnectSlowsSomeDials) {
  sim::SchedulerOptions o;
  o.seed = 3;
  o.record_trace = true;
  Scheduler sched(o);
  Network net(sched, sim::Prng(3));
  net.SetDefaultLatency(LatencyModel::Constant(Ms(1)));
  const NodeId client = net.AddNode("client");
  const NodeId broker = net.AddNode("broker");
  net.Listen(broker);
  sim::Buggify bug(sim::Prng(3).Fork("buggify"), {"net.slow_connect"});
  net.SetBuggify(&bug);
  std::vector<Duration> took;
  sched.Go("dials", Dials(&sched, &net, client, broker, 40, &took));
  EXPECT_EQ(sched.Run().outcome, Outcome::kAllDone);
  ASSERT_EQ(took.size(), 40u);
  int slow = 0;
  for (const Duration d : took) {
    EXPECT_GE(d, Ms(2));
    EXPECT_LE(d, Ms(2) + kBuggifySlowConnectMax);
    if (d > Ms(2)) ++slow;
  }
  EXPECT_EQ(static_cast<uint64_t>(slow), bug.fired("net.slow_connect"));
  EXPECT_GT(slow, 0);
  EXPECT_LT(slow, 40);
  EXPECT_THAT(sched.RenderTrace(), HasSubstr("buggify net.slow_connect client->broker: +"));
}

// A network with no Buggify, a Buggify with nothing on, and one with the
// sites of another layer on all give the same run, digest for digest.
TEST(NetworkBuggifyTest, BuggifyOffChangesNothing) {
  const std::vector<std::string> none;
  const std::vector<std::string> other_layer = {"broker.slow_request"};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    const uint64_t without = RunChaos(seed, false).digest;
    EXPECT_EQ(RunChaos(seed, false, &none).digest, without);
    EXPECT_EQ(RunChaos(seed, false, &other_layer).digest, without);
    // Canary: switching the network's sites on does change the run.
    EXPECT_NE(RunChaos(seed, false, &kNetSites).digest, without);
  }
}

// With the sites on, the same seed still gives the same digest (recording
// or not), and the trace shows where they fired.
TEST(NetworkBuggifyTest, BuggifiedRunsAreDeterministic) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    const ChaosResult first = RunChaos(seed, false, &kNetSites);
    const ChaosResult recorded = RunChaos(seed, true, &kNetSites);
    EXPECT_EQ(RunChaos(seed, false, &kNetSites).digest, first.digest);
    EXPECT_EQ(recorded.digest, first.digest);
    EXPECT_THAT(recorded.trace, HasSubstr("buggify net.delay c"));
  }
}

}  // namespace
}  // namespace net
