// How a generated fault's fields are chosen: one description serves
// explore (each field drawn from a PRNG) and the fuzzer's byte codec
// (decode.h: each field read from, or written to, bytes).
//
// The same holds for the producer's settings (ProducerFields).
//
// An IO type provides, each choosing a value in a range (explore: a draw;
// decoding: read from the bytes; encoding: the current value, clamped, is
// written out and kept):
//   void Index(int32_t* v, int64_t n);                  // [0, n)
//   void Dur(Duration* v, Duration lo, Duration hi);    // [lo, hi]
//   void Int(int32_t* v, int64_t lo, int64_t hi);       // [lo, hi]
//   void Choice(std::string* v, std::span<const std::string_view> options);
// (a typed choice is OneOf below, an Index into its options).
//   void Flag(bool* v);                                 // even odds
#ifndef PRODSIM_SCENARIOS_FAULT_FIELDS_H_
#define PRODSIM_SCENARIOS_FAULT_FIELDS_H_

#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fault_models/kinds.h"
#include "scenarios/scenario.h"

namespace scenarios::internal {

// The kinds generated faults take, in the order both generators index them
// (fault_models/kinds.h: each kind's DrawStep and draw order): the
// realistic kinds, and the mock kinds after them only when asked for
// (GeneratedFaultKinds). The wedge and late kinds are drawn apart.
using fault_models::FaultKind;
inline constexpr auto kFaultKinds = fault_models::KindsDrawnIn<fault_models::DrawStep::kSwarm>();
inline constexpr size_t kRealisticFaultKinds =
    fault_models::RealisticKindsDrawnInCount(fault_models::DrawStep::kSwarm);
// The realistic kinds, or all of them with the mocks.
inline std::span<const FaultKind> GeneratedFaultKinds(bool mock_faults) {
  return std::span<const FaultKind>(kFaultKinds)
      .first(mock_faults ? std::size(kFaultKinds) : kRealisticFaultKinds);
}
// The wedge kinds, realistic but drawn in a step of their own after every
// other field (explore: after the producer's settings; the codec: after
// them, before the schedule's tape), so that adding them shifted no draw
// and no byte of what existed before: a seed or an input without wedges
// gives the scenario it gave.
inline constexpr auto kWedgeFaultKinds =
    fault_models::KindsDrawnIn<fault_models::DrawStep::kWedge>();
// At most this many wedge faults of each kind in explore, and in all in
// the codec (never more than DecodeOptions::max_faults).
inline constexpr int32_t kWedgeFaultsPerKindMax = 2;
inline constexpr int32_t kWedgeFaultsMax = 4;
inline bool IsWedgeKind(FaultKind kind) {
  return std::find(std::begin(kWedgeFaultKinds), std::end(kWedgeFaultKinds), kind) !=
         std::end(kWedgeFaultKinds);
}
// Drawn after the wedge kinds, in a step of their own with the
// application's drain (LateFields): what came later still. LateFields
// draws one kind, so the step holds one.
inline constexpr auto kLateFaultKinds = fault_models::KindsDrawnIn<fault_models::DrawStep::kLate>();
static_assert(std::size(kLateFaultKinds) == 1, "LateFields draws the one late kind");
inline bool IsLateKind(FaultKind kind) { return kind == kLateFaultKinds[0]; }
// The application's drains other than prompt (WorkloadSpec::drain).
inline constexpr std::string_view kLaterDrains[] = {"late", "slow", "close"};
inline constexpr fault_models::Direction kDirections[] = {fault_models::Direction::kBoth,
                                                          fault_models::Direction::kToBroker,
                                                          fault_models::Direction::kFromBroker};
// What a realistic inject_error brings about (fault_models::InjectableErrors).
inline constexpr kafka::ErrorCode kInjectedErrors[] = {
    kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER, kafka::ErrorCode::REQUEST_TIMED_OUT,
    kafka::ErrorCode::NOT_ENOUGH_REPLICAS, kafka::ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND};
// What a mock.error answers with (the MockBroker tests' favourites).
inline constexpr kafka::ErrorCode kMockErrors[] = {
    kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER, kafka::ErrorCode::REQUEST_TIMED_OUT,
    kafka::ErrorCode::NOT_ENOUGH_REPLICAS, kafka::ErrorCode::LEADER_NOT_AVAILABLE,
    kafka::ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND};
// The requests whose responses lose_response and stall_response hit,
// produce three times as often as the others.
inline constexpr kafka::ApiKey kResponseApis[] = {kafka::ApiKey::kProduce, kafka::ApiKey::kProduce,
                                                  kafka::ApiKey::kProduce, kafka::ApiKey::kMetadata,
                                                  kafka::ApiKey::kInitProducerId};

// One of `options` (in place: encoding starts from the current value): an
// Index, the last option equal to the current value (the codec encodes
// that one, as a string Choice does).
template <class IO, class T>
void OneOf(IO& io, T* v, std::span<const T> options) {
  int32_t i = 0;
  for (size_t k = 0; k < options.size(); ++k) {
    if (options[k] == *v) i = static_cast<int32_t>(k);
  }
  io.Index(&i, static_cast<int64_t>(options.size()));
  *v = options[static_cast<size_t>(i)];
}

// Generated faults fall within the workload's span (one burst per
// interval), at least 100 ms and at most `cap`.
inline Duration HealBy(const WorkloadSpec& w, Duration cap) {
  const int64_t bursts = (w.messages + w.burst - 1) / std::max(w.burst, 1);
  const int64_t span = w.interval.nanos() * bursts;
  return Duration::Nanos(std::clamp(span, Duration::Millis(100).nanos(), cap.nanos()));
}

// A topic and one of its partitions.
template <class IO>
void TopicPartition(IO& io, const ClusterSpec& c, FaultSpec* f) {
  int32_t t = 0;
  for (size_t i = 0; i < c.topics.size(); ++i) {
    if (c.topics[i].name == f->topic) t = static_cast<int32_t>(i);
  }
  io.Index(&t, static_cast<int64_t>(c.topics.size()));
  f->topic = c.topics[static_cast<size_t>(t)].name;
  io.Index(&f->partition, c.topics[static_cast<size_t>(t)].partitions);
}

// The fields of a fault of kind f->kind against cluster `c`, healed by
// `heal_by`; `read_timeout` is the producer's Net.ReadTimeout (a stalled
// response is held around it). Fields the kind does not use keep their
// defaults.
template <class IO>
void FaultFields(IO& io, const ClusterSpec& c, Duration heal_by, Duration read_timeout,
                 FaultSpec* f) {
  using K = FaultKind;
  const K kind = f->kind;
  io.Index(&f->broker, c.brokers);
  io.Dur(&f->at, Duration::Nanos(heal_by.nanos() / 100), Duration::Nanos(heal_by.nanos() / 4 * 3));
  const Duration room = heal_by - f->at;
  Duration d = f->duration.value_or(Duration());
  if (kind == K::kPartition || kind == K::kCrash) {
    io.Dur(&d, std::min(Duration::Millis(50), room), room);
    f->duration = d;
    if (kind == K::kPartition)
      OneOf(io, &f->direction, std::span<const fault_models::Direction>(kDirections));
  } else if (kind == K::kDelayProcessing || kind == K::kLatencySpike) {
    io.Dur(&d, std::min(Duration::Millis(10), room), room);
    f->duration = d;
    io.Dur(&f->extra, Duration::Millis(1), Duration::Millis(500));
    if (kind == K::kLatencySpike) f->direction = fault_models::Direction::kBoth;
  } else if (kind == K::kPauseFetching || kind == K::kShrinkIsr) {
    io.Dur(&d, std::min(Duration::Millis(10), room), room);
    f->duration = d;
    if (kind == K::kShrinkIsr) TopicPartition(io, c, f);
  } else if (kind == K::kMoveLeader) {
    bool one_partition = !f->topic.empty();
    io.Flag(&one_partition);
    if (one_partition) TopicPartition(io, c, f);
  } else if (kind == K::kInjectError) {
    OneOf(io, &f->error, std::span<const kafka::ErrorCode>(kInjectedErrors));
    io.Int(&f->count, 1, 3);
    if (f->error == kafka::ErrorCode::NOT_ENOUGH_REPLICAS ||
        f->error == kafka::ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND) {
      io.Dur(&d, Duration::Millis(10), Duration::Seconds(2));
      f->duration = d;
    } else {
      f->duration.reset();
    }
  } else if (kind == K::kLoseResponse) {
    OneOf(io, &f->api, std::span<const kafka::ApiKey>(kResponseApis));
    io.Int(&f->count, 1, 2);
  } else if (kind == K::kStallResponse) {
    OneOf(io, &f->api, std::span<const kafka::ApiKey>(kResponseApis));
    io.Int(&f->count, 1, 2);
    // Around the client's read timeout: shorter is a slow answer, longer
    // one the client gives up on.
    io.Dur(&f->extra, Duration::Nanos(read_timeout.nanos() / 2),
           Duration::Nanos(read_timeout.nanos() / 2 * 3));
  } else if (kind == K::kBlackhole) {
    f->duration.reset();  // instant: the connections open at `at` are lost
  } else if (kind == K::kLogDirFailure) {
    f->duration.reset();  // for good: Kafka needs a restart on a repaired disk
    TopicPartition(io, c, f);
  } else if (kind == K::kConnectHang) {
    // Past 1 s a dial waits for the retransmission at 3 s, past 3 s for
    // the one at 7 s (the explore window holds no more).
    io.Dur(&d, std::min(Duration::Millis(50), room), room);
    f->duration = d;
  } else if (kind == K::kMockError) {
    OneOf(io, &f->error, std::span<const kafka::ErrorCode>(kMockErrors));
    io.Int(&f->count, 1, 3);
  } else if (kind == K::kMockDropResponse) {
    io.Int(&f->count, 1, 2);
  }
}

// The late step (after the wedge faults): one log directory failure or
// none, then how the application drains Successes and Errors (prompt half
// the time; late up to 5 s, slow 0.1-20 ms per read, or close). `*f` is
// the failure to encode, or unset; the result says whether there is one.
// Zeros (a decoded input that ended) give neither: no failure, prompt.
// Without `faults` (a fault-free search) the failure is not even drawn.
template <class IO>
bool LateFields(IO& io, const ClusterSpec& c, Duration heal_by, Duration read_timeout, bool faults,
                FaultSpec* f, WorkloadSpec* w) {
  bool failure = IsLateKind(f->kind);
  int32_t odds = failure ? 3 : 0;  // one in four
  if (faults) io.Index(&odds, 4);
  failure = faults && odds == 3;
  if (failure) {
    f->kind = kLateFaultKinds[0];
    FaultFields(io, c, heal_by, read_timeout, f);
  }
  bool later = w->drain != Drain::kPrompt;
  io.Flag(&later);
  if (!later) {
    w->drain = Drain::kPrompt;
    w->drain_delay = Duration();
    return failure;
  }
  std::string drain =
      std::string(w->drain == Drain::kPrompt ? kLaterDrains[0] : DrainName(w->drain));
  io.Choice(&drain, kLaterDrains);
  w->drain = *FromName<Drain>(kDrainNames, drain);
  if (w->drain == Drain::kLate) {
    io.Dur(&w->drain_delay, Duration::Millis(1), Duration::Seconds(5));
  } else if (w->drain == Drain::kSlow) {
    io.Dur(&w->drain_delay, Duration::Micros(100), Duration::Millis(20));
  } else {
    w->drain_delay = Duration();
  }
  return failure;
}

// The producer's settings: the base's, or (a flag) a draw of the settings
// people use, each within what Sarama's Config.Validate accepts:
// idempotence on or off (on: acks=all, MaxOpenRequests 1, Retry.Max >= 1),
// acks all or local, MaxOpenRequests 1 or 5, Retry.Max small and large,
// Retry.Backoff, Flush.Frequency with or without Flush.Messages, a small
// ChannelBufferSize. The profile, timeouts, Return.* and Version stay the
// base's. `*p` starts as the base's (decoding) or the settings to encode.
template <class IO>
void ProducerFields(IO& io, const ProducerSpec& base, ProducerSpec* p) {
  using OptInt = std::optional<int32_t>;
  using OptDur = std::optional<Duration>;
  bool vary = !(*p == base);
  io.Flag(&vary);
  if (!vary) {
    *p = base;
    return;
  }
  const ProducerSpec keep = *p;
  *p = base;
  p->flush_max_messages.reset();  // never below a drawn Flush.Messages
  bool idempotent = keep.idempotent.value_or(false);
  io.Flag(&idempotent);
  p->idempotent = idempotent;
  p->required_acks = keep.required_acks;
  p->net_max_open_requests = keep.net_max_open_requests;
  p->retry_max = keep.retry_max;
  p->retry_backoff = keep.retry_backoff;
  p->flush_frequency = keep.flush_frequency;
  p->flush_messages = keep.flush_messages;
  p->channel_buffer_size = keep.channel_buffer_size;
  if (idempotent) {
    p->required_acks = -1;
    p->net_max_open_requests = 1;
    static constexpr OptInt kRetries[] = {3, 100000, 1};
    OneOf(io, &p->retry_max, std::span<const OptInt>(kRetries));
  } else {
    static constexpr OptInt kAcks[] = {-1, 1};
    static constexpr OptInt kOpen[] = {1, 5};
    static constexpr OptInt kRetries[] = {3, 100000, 0};
    OneOf(io, &p->required_acks, std::span<const OptInt>(kAcks));
    OneOf(io, &p->net_max_open_requests, std::span<const OptInt>(kOpen));
    OneOf(io, &p->retry_max, std::span<const OptInt>(kRetries));
  }
  static constexpr OptDur kBackoffs[] = {Duration::Millis(100), Duration::Millis(10),
                                         Duration::Millis(500)};
  // Flush.Frequency and Flush.Messages together, as people set them: a
  // Flush.Messages above 1 without a Frequency leaves a partial batch
  // unsent until more messages come (Sarama's readyToFlush), and Close
  // waits for it forever.
  struct Flush {
    OptDur frequency;
    OptInt messages;
    bool operator==(const Flush&) const = default;
  };
  static constexpr Flush kFlushes[] = {
      {std::nullopt, std::nullopt},          {std::nullopt, 1},
      {Duration::Millis(1), std::nullopt},   {Duration::Millis(10), std::nullopt},
      {Duration::Millis(100), std::nullopt}, {Duration::Millis(10), 10},
      {Duration::Millis(100), 100}};
  static constexpr OptInt kBuffers[] = {std::nullopt, 1, 16};
  OneOf(io, &p->retry_backoff, std::span<const OptDur>(kBackoffs));
  Flush flush{p->flush_frequency, p->flush_messages};
  OneOf(io, &flush, std::span<const Flush>(kFlushes));
  p->flush_frequency = flush.frequency;
  p->flush_messages = flush.messages;
  OneOf(io, &p->channel_buffer_size, std::span<const OptInt>(kBuffers));
}

}  // namespace scenarios::internal

#endif  // PRODSIM_SCENARIOS_FAULT_FIELDS_H_
