#include "fault_models/faults.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace fault_models {
namespace {

std::string BrokerName(kafka::BrokerId b) { return absl::StrCat("broker-", b.value); }

// Applies `fn(from, to)` to the link directions a fault names.
template <typename Fn>
void ForDirections(World& w, kafka::BrokerId b, Direction d, Fn fn) {
  const net::NodeId node = w.cluster->broker(b).node();
  if (d != Direction::kFromBroker) fn(w.client, node);
  if (d != Direction::kToBroker) fn(node, w.client);
}

std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kToBroker: return "client->broker";
    case Direction::kFromBroker: return "broker->client";
    case Direction::kBoth: return "both ways";
  }
  return "?";
}

class Reset final : public Fault {
 public:
  explicit Reset(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.network->ResetBetween(w.client, w.cluster->broker(p_.broker).node());
  }
  std::string Describe() const override {
    return absl::StrCat("reset connections client<->", BrokerName(p_.broker));
  }

 private:
  FaultParams p_;
};

class Partition final : public Fault {
 public:
  explicit Partition(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    ForDirections(w, p_.broker, p_.direction,
                  [&](net::NodeId a, net::NodeId b) { w.network->Partition(a, b); });
  }
  void Heal(World& w) override {
    ForDirections(w, p_.broker, p_.direction,
                  [&](net::NodeId a, net::NodeId b) { w.network->Heal(a, b); });
  }
  bool Lasting() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("partition client/", BrokerName(p_.broker), " ",
                        std::string(DirectionName(p_.direction)));
  }

 private:
  FaultParams p_;
};

// The producer's host loses its network: a partition from every broker,
// both ways (TCP holds the bytes; they arrive on heal, in order).
class Isolate final : public Fault {
 public:
  explicit Isolate(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    ForEveryBroker(w, [&](net::NodeId a, net::NodeId b) { w.network->Partition(a, b); });
  }
  void Heal(World& w) override {
    ForEveryBroker(w, [&](net::NodeId a, net::NodeId b) { w.network->Heal(a, b); });
  }
  bool Lasting() const override { return true; }
  std::string Describe() const override { return "isolate the client from every broker"; }

 private:
  template <class Fn>
  static void ForEveryBroker(World& w, Fn fn) {
    PRODSIM_ASSERT(w.cluster->broker_count() > 0);
    for (int32_t b = 0; b < w.cluster->broker_count(); ++b) {
      ForDirections(w, kafka::BrokerId{b}, Direction::kBoth, fn);
    }
  }
  FaultParams p_;
};

class Crash final : public Fault {
 public:
  explicit Crash(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override { w.cluster->CrashBroker(p_.broker); }
  void Heal(World& w) override { w.cluster->RestartBroker(p_.broker); }
  bool Lasting() const override { return true; }
  std::string Describe() const override { return absl::StrCat("crash ", BrokerName(p_.broker)); }

 private:
  FaultParams p_;
};

class MoveLeader final : public Fault {
 public:
  explicit MoveLeader(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    // Every partition the broker replicates, or the one named. A refused
    // move (not a live ISR member) changes nothing, as a refused
    // reassignment would.
    for (const kafka::TopicPartition& tp : w.cluster->AllPartitions()) {
      if (p_.tp.has_value() && tp != *p_.tp) continue;
      (void)w.cluster->MoveLeader(tp, p_.broker);
    }
  }
  std::string Describe() const override {
    return absl::StrCat("move leader of ",
                        p_.tp ? p_.tp->ToString() : std::string("all partitions"), " to ",
                        BrokerName(p_.broker));
  }

 private:
  FaultParams p_;
};

class ShrinkIsr final : public Fault {
 public:
  explicit ShrinkIsr(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    const Time until = w.sched->now() + p_.duration.value_or(Duration::Seconds(5));
    for (const kafka::TopicPartition& tp : w.cluster->AllPartitions()) {
      if (p_.tp.has_value() && tp != *p_.tp) continue;
      (void)w.cluster->ShrinkIsr(tp, p_.broker, until);
    }
  }
  std::string Describe() const override {
    return absl::StrCat("shrink ISR: drop ", BrokerName(p_.broker), " from ",
                        p_.tp ? p_.tp->ToString() : std::string("all partitions"));
  }

 private:
  FaultParams p_;
};

class InjectError final : public Fault {
 public:
  explicit InjectError(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.cluster->CauseError(p_.broker, p_.tp, p_.error, p_.count,
                          p_.duration.value_or(kInjectErrorLastingDefault));
  }
  bool CountBased() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("bring about ", kafka::ErrorCodeName(p_.error), " x", p_.count, " on ",
                        BrokerName(p_.broker));
  }

 private:
  FaultParams p_;
};

class LoseResponse final : public Fault {
 public:
  explicit LoseResponse(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override { w.cluster->LoseResponses(p_.broker, p_.api, p_.count); }
  bool CountBased() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("lose ", p_.count, " ", std::string(kafka::ApiKeyName(p_.api)),
                        " response(s) of ", BrokerName(p_.broker), " (the connection breaks)");
  }

 private:
  FaultParams p_;
};

class StallResponse final : public Fault {
 public:
  explicit StallResponse(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.cluster->StallResponses(p_.broker, p_.api, p_.count, p_.extra);
  }
  bool CountBased() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("stall ", p_.count, " ", std::string(kafka::ApiKeyName(p_.api)),
                        " response(s) of ", BrokerName(p_.broker), " by ", p_.extra.ToString());
  }

 private:
  FaultParams p_;
};

class MockError final : public Fault {
 public:
  explicit MockError(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.cluster->MockError(p_.broker, p_.api, p_.tp, p_.error, p_.count);
  }
  bool CountBased() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("mock: answer ", kafka::ErrorCodeName(p_.error), " x", p_.count, " on ",
                        BrokerName(p_.broker), ", unprocessed");
  }

 private:
  FaultParams p_;
};

class MockDropResponse final : public Fault {
 public:
  explicit MockDropResponse(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override { w.cluster->MockDropResponses(p_.broker, p_.count); }
  bool CountBased() const override { return true; }
  std::string Describe() const override {
    return absl::StrCat("mock: drop ", p_.count, " responses of ", BrokerName(p_.broker),
                        " on a live connection");
  }

 private:
  FaultParams p_;
};

class DelayProcessing final : public Fault {
 public:
  explicit DelayProcessing(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.cluster->DelayProcessing(p_.broker, p_.extra,
                               w.sched->now() + p_.duration.value_or(Duration::Seconds(1)));
  }
  std::string Describe() const override {
    return absl::StrCat("delay processing on ", BrokerName(p_.broker), " by ", p_.extra.ToString());
  }

 private:
  FaultParams p_;
};

class LatencySpike final : public Fault {
 public:
  explicit LatencySpike(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    const Time until = w.sched->now() + p_.duration.value_or(Duration::Seconds(1));
    ForDirections(w, p_.broker, p_.direction, [&](net::NodeId a, net::NodeId b) {
      w.network->AddLatencySpike(a, b, p_.extra, until);
    });
  }
  std::string Describe() const override {
    return absl::StrCat("latency spike +", p_.extra.ToString(), " client/", BrokerName(p_.broker));
  }

 private:
  FaultParams p_;
};

class PauseFetching final : public Fault {
 public:
  explicit PauseFetching(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.cluster->PauseFetching(p_.broker,
                             w.sched->now() + p_.duration.value_or(Duration::Seconds(1)));
  }
  std::string Describe() const override {
    return absl::StrCat("pause replica fetching on ", BrokerName(p_.broker));
  }

 private:
  FaultParams p_;
};

// A stateful middlebox between the producer and the broker (a NAT gateway,
// conntrack, a stateful firewall) loses its state: the connections open
// now are dropped silently both ways, and fail with ETIMEDOUT only after
// tcp_retries2 (net::Network::Blackhole); the producer learns sooner only
// through its own Net.ReadTimeout. The broker still processes what it
// read before; its responses are lost. Instant: new connections work.
class Blackhole final : public Fault {
 public:
  explicit Blackhole(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    w.network->Blackhole(w.client, w.cluster->broker(p_.broker).node());
  }
  std::string Describe() const override {
    return absl::StrCat("blackhole client<->", BrokerName(p_.broker),
                        ": a middlebox lost the open connections' state");
  }

 private:
  FaultParams p_;
};

// SYNs from the producer to the broker go unanswered for `duration` (a
// firewall dropping them, a SYN flood, a full listen backlog); a dial
// waits for Linux's SYN retransmissions or its own timeout
// (net::Network::Dial). Open connections are not affected.
class ConnectHang final : public Fault {
 public:
  explicit ConnectHang(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override {
    PRODSIM_ASSERT(p_.duration.has_value());
    w.network->HangConnects(w.client, w.cluster->broker(p_.broker).node(),
                            w.sched->now() + *p_.duration);
  }
  std::string Describe() const override {
    return absl::StrCat("connects client->", BrokerName(p_.broker), " hang (SYNs unanswered)");
  }

 private:
  FaultParams p_;
};

// A log directory of the broker fails (an I/O error, a dead disk): its
// replicas there go offline, produce requests for them get
// KAFKA_STORAGE_ERROR, and the controller moves their leadership
// (kafka::Cluster::FailLogDir). Instant and for good: Kafka brings the
// directory back only with a restart on a repaired disk.
class LogDirFailure final : public Fault {
 public:
  explicit LogDirFailure(FaultParams p) : p_(std::move(p)) {}
  void Apply(World& w) override { w.cluster->FailLogDir(p_.broker, p_.tp); }
  std::string Describe() const override {
    return absl::StrCat("log directory of ", BrokerName(p_.broker), " holding ",
                        p_.tp ? p_.tp->ToString() : std::string("all its replicas"),
                        " fails (KAFKA_STORAGE_ERROR)");
  }

 private:
  FaultParams p_;
};

sim::Task<void> ApplyAt(World w, FaultParams p, std::shared_ptr<Fault> f) {
  if (p.at > w.sched->now()) co_await w.sched->Sleep(p.at - w.sched->now());
  w.cluster->RecordFault(f->Describe());
  f->Apply(w);
  if (f->CountBased() || !p.duration.has_value() || !p.heal) co_return;
  co_await w.sched->Sleep(*p.duration);
  if (f->Lasting()) f->Heal(w);
  w.cluster->RecordFault(f->Describe(), /*healed=*/true);
}

constexpr InjectableError kInjectable[] = {
    {kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER, false, 2, 1, false,
     "the leadership moves to another in-sync replica, and the broker learns it first"},
    {kafka::ErrorCode::NOT_ENOUGH_REPLICAS, true, 2, 2, true,
     "followers drop out of the ISR, below min.insync.replicas, before the append"},
    {kafka::ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, true, 2, 2, true,
     "followers drop out of the ISR, below min.insync.replicas, right after the append"},
    {kafka::ErrorCode::REQUEST_TIMED_OUT, true, 2, 1, false,
     "the followers stop fetching until the request times out; the batch stays in the log"},
};

}  // namespace

std::span<const InjectableError> InjectableErrors() { return kInjectable; }

const InjectableError* FindInjectableError(kafka::ErrorCode code) {
  for (const InjectableError& e : kInjectable) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

namespace {

// The fields kind p.kind needs (kinds.h) that `p` leaves unset. The error a
// kind needs has no unset value here (the scenario loader checks it).
absl::Status CheckNeeds(const FaultParams& p) {
  const std::string name(FaultKindName(p.kind));
  if (Needs(p.kind, kFieldDuration) && !p.duration.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " needs a duration"));
  }
  if (Needs(p.kind, kFieldExtra) && p.extra.nanos() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, " needs extra > 0"));
  }
  if ((Needs(p.kind, kFieldTopic) || Needs(p.kind, kFieldPartition)) && !p.tp.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " needs a topic and partition"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Fault>> MakeInjectError(const FaultParams& p) {
  if (FindInjectableError(p.error) == nullptr || p.api != kafka::ApiKey::kProduce) {
    return absl::InvalidArgumentError(
        absl::StrCat("inject_error cannot bring about ", kafka::ErrorCodeName(p.error), " on ",
                     std::string(kafka::ApiKeyName(p.api)),
                     " (no real cause is modelled; mock.error answers with any error)"));
  }
  return std::make_unique<InjectError>(p);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Fault>> MakeFault(const FaultParams& p) {
  if (absl::Status st = CheckNeeds(p); !st.ok()) return st;
  // One case per kind: the compiler (-Wswitch) asks for a new kind's.
  switch (p.kind) {
    case FaultKind::kReset: return std::make_unique<Reset>(p);
    case FaultKind::kPartition: return std::make_unique<Partition>(p);
    case FaultKind::kCrash: return std::make_unique<Crash>(p);
    case FaultKind::kMoveLeader: return std::make_unique<MoveLeader>(p);
    case FaultKind::kShrinkIsr: return std::make_unique<ShrinkIsr>(p);
    case FaultKind::kInjectError: return MakeInjectError(p);
    case FaultKind::kLoseResponse: return std::make_unique<LoseResponse>(p);
    case FaultKind::kStallResponse: return std::make_unique<StallResponse>(p);
    case FaultKind::kDelayProcessing: return std::make_unique<DelayProcessing>(p);
    case FaultKind::kLatencySpike: return std::make_unique<LatencySpike>(p);
    case FaultKind::kPauseFetching: return std::make_unique<PauseFetching>(p);
    case FaultKind::kBlackhole: return std::make_unique<Blackhole>(p);
    case FaultKind::kConnectHang: return std::make_unique<ConnectHang>(p);
    case FaultKind::kLogDirFailure: return std::make_unique<LogDirFailure>(p);
    case FaultKind::kIsolate: return std::make_unique<Isolate>(p);
    case FaultKind::kMockError: return std::make_unique<MockError>(p);
    case FaultKind::kMockDropResponse: return std::make_unique<MockDropResponse>(p);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown fault kind ", static_cast<int>(p.kind)));
}

void FaultSchedule::Add(const FaultParams& p, std::unique_ptr<Fault> fault) {
  PRODSIM_ASSERT(fault != nullptr);
  entries_.push_back(Entry{p, std::shared_ptr<Fault>(std::move(fault))});
}

void FaultSchedule::Start(World w) {
  PRODSIM_ASSERT(w.sched != nullptr);
  PRODSIM_ASSERT(w.cluster != nullptr);
  for (size_t i = 0; i < entries_.size(); ++i) {
    w.sched->Go(absl::StrCat("fault#", i, ".", std::string(FaultKindName(entries_[i].params.kind))),
                ApplyAt(w, entries_[i].params, entries_[i].fault), {.daemon = true, .world = true});
  }
}

Time FaultSchedule::healed_at(Duration crash_detection) const {
  Time last;
  for (const Entry& e : entries_) {
    Time end = e.params.at;
    if (e.fault->CountBased()) {
      // Healed at its last use (the cluster reports it); at the latest by
      // then, as planned.
    } else if (e.params.duration.has_value() &&
               (e.params.heal || Info(e.params.kind).self_healing)) {
      Duration d = *e.params.duration;
      if (e.params.kind == FaultKind::kCrash) d = std::max(d, crash_detection);
      end = end + d;
    } else if (e.fault->Lasting()) {
      return Time::Max();  // a lasting fault that never heals
    }
    last = std::max(last, end);
  }
  return last;
}

}  // namespace fault_models
