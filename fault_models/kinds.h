// The fault kinds, described once: each kind's name, the scenario fields it
// reads and which of them it needs, whether it is realistic or a mock (its
// row in fault_models/README.md's tables), when the generators draw it, and
// its one-line documentation.
//
// Everything else is derived from kFaultKindInfo: the scenario schema's
// kind list, field rules and reference table (scenarios/schema.cc), the
// field checks of MakeFault, the generators' kind lists
// (scenarios/fault_fields.h), and a test ties the README's tables to it.
// What a kind does is its Fault class in faults.cc, which MakeFault's
// switch builds (the compiler asks for a case per kind).
//
// Invariants (static_asserts below, faults_test): one row per FaultKind,
// in the enum's order; names unique; `needs` within `reads`; within each
// draw step, the draw orders are 0..n-1, and the mocks come last.
//
// Plain types only: scenarios/ reads this, so it includes nothing of
// scenarios/ (which depends on fault_models/).
#ifndef PRODSIM_FAULT_MODELS_KINDS_H_
#define PRODSIM_FAULT_MODELS_KINDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/kafka/protocol.h"

namespace fault_models {

// In canonical order (a scenario file's, the reference's); the mocks last.
enum class FaultKind : uint8_t {
  kReset,
  kPartition,
  kCrash,
  kMoveLeader,
  kShrinkIsr,
  kInjectError,
  kLoseResponse,
  kStallResponse,
  kDelayProcessing,
  kLatencySpike,
  kPauseFetching,
  kBlackhole,
  kConnectHang,
  kLogDirFailure,
  kIsolate,
  kMockError,
  kMockDropResponse,
};

// The fault fields a kind may read besides `kind` and `at`, in the order of
// the scenario's [[faults]] keys (scenarios/schema.cc kFaultFields); a set
// of them is a bit mask.
enum FaultField : uint16_t {
  kFieldDuration = 1 << 0,
  kFieldBroker = 1 << 1,
  kFieldDirection = 1 << 2,
  kFieldTopic = 1 << 3,
  kFieldPartition = 1 << 4,
  kFieldError = 1 << 5,
  kFieldApi = 1 << 6,
  kFieldCount = 1 << 7,
  kFieldExtra = 1 << 8,
  kFieldHeal = 1 << 9,
};
using FaultFieldSet = uint16_t;
// Each field's key in a scenario file, in bit order.
inline constexpr std::string_view kFaultFieldKeys[] = {"duration",  "broker", "direction", "topic",
                                                       "partition", "error",  "api",       "count",
                                                       "extra",     "heal"};
inline constexpr size_t kFaultFieldCount = std::size(kFaultFieldKeys);

// Which way a network fault acts (partition, latency_spike), and each
// direction's key in a scenario file, in the enum's order.
enum class Direction : uint8_t { kToBroker, kFromBroker, kBoth };
inline constexpr std::string_view kDirectionKeys[] = {"to_broker", "from_broker", "both"};
constexpr std::string_view DirectionKey(Direction d) {
  return kDirectionKeys[static_cast<size_t>(d)];
}
constexpr std::optional<Direction> DirectionFromKey(std::string_view key) {
  for (size_t i = 0; i < std::size(kDirectionKeys); ++i) {
    if (kDirectionKeys[i] == key) return static_cast<Direction>(i);
  }
  return std::nullopt;
}

// The requests a fault's `api` may name, by their key in a scenario file.
struct FaultApi {
  std::string_view key;
  kafka::ApiKey api;
};
inline constexpr FaultApi kFaultApis[] = {{"produce", kafka::ApiKey::kProduce},
                                          {"metadata", kafka::ApiKey::kMetadata},
                                          {"init_producer_id", kafka::ApiKey::kInitProducerId}};
inline constexpr auto kFaultApiKeys = [] {
  std::array<std::string_view, std::size(kFaultApis)> keys{};
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = kFaultApis[i].key;
  return keys;
}();
// The key of `api`; "" for a request no fault names.
constexpr std::string_view FaultApiKey(kafka::ApiKey api) {
  for (const FaultApi& a : kFaultApis) {
    if (a.api == api) return a.key;
  }
  return {};
}
constexpr std::optional<kafka::ApiKey> FaultApiFromKey(std::string_view key) {
  for (const FaultApi& a : kFaultApis) {
    if (a.key == key) return a.api;
  }
  return std::nullopt;
}

// Realistic: an event a real Kafka 2.6 cluster on a real network has, with
// Kafka's side effects (README's first table). Mock: what no real broker
// does, for exact ports of Sarama's MockBroker tests (its second table);
// nothing generates a mock unless asked.
enum class Realism : uint8_t { kRealistic, kMock };

// When the generators (scenarios/explore.cc, scenarios/decode.cc) draw a
// kind. Each step came later than the one before, and drawing it after
// everything earlier kept every seed's and every input's older draws:
// kSwarm with the first faults, kWedge after the producer's settings,
// kLate after the wedges, with the application's drain. kByHand: no
// generator draws the kind (a new kind starts here: drawing it in an
// existing step would change what every seed and input generates).
enum class DrawStep : uint8_t { kSwarm, kWedge, kLate, kByHand };

struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;
  FaultFieldSet reads;  // besides kind and at
  FaultFieldSet needs;  // of those, the ones without a usable default
  Realism realism;
  DrawStep step;
  uint8_t draw_order;  // the kind's index in its step's list
  // Heals at the end of `duration` by itself (the cluster or network was
  // told the end time), so the schedule only records the heal.
  bool self_healing;
  std::string_view doc;  // one line, for the scenario reference
};

// The registry: one row per kind, in FaultKind's order.
inline constexpr FaultKindInfo kFaultKindInfo[] = {
    {
        .kind = FaultKind::kReset,
        .name = "reset",
        .reads = kFieldBroker,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 0,
        .self_healing = false,
        .doc = "closes the producer's connections to `broker` (a TCP reset)",
    },
    {
        .kind = FaultKind::kPartition,
        .name = "partition",
        .reads = kFieldDuration | kFieldBroker | kFieldDirection | kFieldHeal,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 1,
        .self_healing = false,
        .doc = "cuts the network between the producer and `broker`; held bytes arrive on heal",
    },
    {
        .kind = FaultKind::kCrash,
        .name = "crash",
        .reads = kFieldDuration | kFieldBroker | kFieldHeal,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 2,
        .self_healing = false,
        .doc = "stops `broker` (the controller notices after `zookeeper_session_timeout`) and "
               "restarts "
               "it on heal",
    },
    {
        .kind = FaultKind::kMoveLeader,
        .name = "move_leader",
        .reads = kFieldBroker | kFieldTopic | kFieldPartition,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 3,
        .self_healing = false,
        .doc = "makes `broker` the leader (a preferred-replica election or reassignment)",
    },
    {
        .kind = FaultKind::kShrinkIsr,
        .name = "shrink_isr",
        .reads = kFieldDuration | kFieldBroker | kFieldTopic | kFieldPartition,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 9,
        .self_healing = true,
        .doc = "drops follower `broker` from the ISR, stalled for `duration`",
    },
    {
        .kind = FaultKind::kInjectError,
        .name = "inject_error",
        .reads = kFieldDuration | kFieldBroker | kFieldTopic | kFieldPartition | kFieldError |
                 kFieldApi | kFieldCount,
        .needs = kFieldError,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 5,
        .self_healing = false,
        .doc =
            "brings `error` about at `broker`'s next `count` produce requests by its real cause (a "
            "leadership move, an ISR shrink before or after the append, stalled followers)",
    },
    {
        .kind = FaultKind::kLoseResponse,
        .name = "lose_response",
        .reads = kFieldBroker | kFieldApi | kFieldCount,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 4,
        .self_healing = false,
        .doc = "lets `broker` process its next `count` requests of `api`, then breaks each one's "
               "connection before the response arrives",
    },
    {
        .kind = FaultKind::kStallResponse,
        .name = "stall_response",
        .reads = kFieldBroker | kFieldApi | kFieldCount | kFieldExtra,
        .needs = kFieldExtra,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 10,
        .self_healing = false,
        .doc = "holds `broker`'s next `count` responses of `api` for `extra`",
    },
    {
        .kind = FaultKind::kDelayProcessing,
        .name = "delay_processing",
        .reads = kFieldDuration | kFieldBroker | kFieldExtra,
        .needs = kFieldExtra,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 6,
        .self_healing = true,
        .doc = "slows every request on `broker` by `extra`",
    },
    {
        .kind = FaultKind::kLatencySpike,
        .name = "latency_spike",
        .reads = kFieldDuration | kFieldBroker | kFieldDirection | kFieldExtra,
        .needs = kFieldExtra,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 7,
        .self_healing = true,
        .doc = "adds `extra` to the latency of the producer's links to `broker`",
    },
    {
        .kind = FaultKind::kPauseFetching,
        .name = "pause_fetching",
        .reads = kFieldDuration | kFieldBroker,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kSwarm,
        .draw_order = 8,
        .self_healing = true,
        .doc = "stops `broker` fetching as a follower",
    },
    {
        .kind = FaultKind::kBlackhole,
        .name = "blackhole",
        .reads = kFieldBroker,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kWedge,
        .draw_order = 0,
        .self_healing = false,
        .doc =
            "a middlebox between the producer and `broker` loses its state: the connections open "
            "then drop every packet, unannounced, until TCP gives up (924.6 s); new ones work",
    },
    {
        .kind = FaultKind::kConnectHang,
        .name = "connect_hang",
        .reads = kFieldDuration | kFieldBroker,
        .needs = kFieldDuration,
        .realism = Realism::kRealistic,
        .step = DrawStep::kWedge,
        .draw_order = 1,
        .self_healing = true,
        .doc =
            "the producer's SYNs to `broker` go unanswered: a dial waits for a SYN retransmission "
            "(1, 3, 7, 15, 31, 63 s) after the window, or fails at Net.DialTimeout",
    },
    {
        .kind = FaultKind::kLogDirFailure,
        .name = "log_dir_failure",
        .reads = kFieldBroker | kFieldTopic | kFieldPartition,
        .needs = kFieldTopic | kFieldPartition,
        .realism = Realism::kRealistic,
        .step = DrawStep::kLate,
        .draw_order = 0,
        .self_healing = false,
        .doc =
            "the log directory holding `broker`'s replica of `topic`/`partition` fails for good (a "
            "broker whose only directory fails halts: that is `crash`): KAFKA_STORAGE_ERROR for "
            "produce requests to it, and the controller drops it from the ISR and moves the "
            "leadership",
    },
    {
        .kind = FaultKind::kIsolate,
        .name = "isolate",
        .reads = kFieldDuration | kFieldHeal,
        .needs = 0,
        .realism = Realism::kRealistic,
        .step = DrawStep::kByHand,
        .draw_order = 0,
        .self_healing = false,
        .doc = "cuts the network between the producer and every broker (the producer's host "
               "loses its network); held bytes arrive on heal",
    },
    {
        .kind = FaultKind::kMockError,
        .name = "mock.error",
        .reads =
            kFieldBroker | kFieldTopic | kFieldPartition | kFieldError | kFieldApi | kFieldCount,
        .needs = kFieldError,
        .realism = Realism::kMock,
        .step = DrawStep::kSwarm,
        .draw_order = 12,
        .self_healing = false,
        .doc = "mock: answers `count` requests of `api` with any `error`, unprocessed",
    },
    {
        .kind = FaultKind::kMockDropResponse,
        .name = "mock.drop_response",
        .reads = kFieldBroker | kFieldCount,
        .needs = 0,
        .realism = Realism::kMock,
        .step = DrawStep::kSwarm,
        .draw_order = 11,
        .self_healing = false,
        .doc = "mock: skips `count` responses on a connection that stays open",
    },
};
inline constexpr size_t kFaultKindCount = std::size(kFaultKindInfo);

namespace kinds_internal {
constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < kFaultKindCount; ++i) {
    if (static_cast<size_t>(kFaultKindInfo[i].kind) != i) return false;
    if ((kFaultKindInfo[i].needs & ~kFaultKindInfo[i].reads) != 0) return false;
    for (size_t j = 0; j < i; ++j) {
      if (kFaultKindInfo[j].name == kFaultKindInfo[i].name) return false;
    }
  }
  return static_cast<size_t>(FaultKind::kMockDropResponse) + 1 == kFaultKindCount;
}
static_assert(RowsInEnumOrder(), "kFaultKindInfo: one row per FaultKind, in order");
}  // namespace kinds_internal

constexpr const FaultKindInfo& Info(FaultKind kind) {
  return kFaultKindInfo[static_cast<size_t>(kind)];
}
constexpr std::string_view FaultKindName(FaultKind kind) { return Info(kind).name; }
constexpr std::optional<FaultKind> FaultKindFromName(std::string_view name) {
  for (const FaultKindInfo& k : kFaultKindInfo) {
    if (k.name == name) return k.kind;
  }
  return std::nullopt;
}
constexpr bool IsMockKind(FaultKind kind) { return Info(kind).realism == Realism::kMock; }
constexpr bool Needs(FaultKind kind, FaultField field) { return (Info(kind).needs & field) != 0; }

// Every kind's name, in canonical order.
inline constexpr auto kFaultKindNames = [] {
  std::array<std::string_view, kFaultKindCount> names{};
  for (size_t i = 0; i < kFaultKindCount; ++i) names[i] = kFaultKindInfo[i].name;
  return names;
}();

// The kinds drawn in `step`, by draw order (the mocks last).
constexpr size_t KindsDrawnInCount(DrawStep step) {
  size_t n = 0;
  for (const FaultKindInfo& k : kFaultKindInfo) n += k.step == step ? 1 : 0;
  return n;
}
// Within each step the draw orders are 0..n-1, each once, and the mocks
// come after the realistic kinds.
constexpr bool DrawOrdersValid(DrawStep step) {
  const size_t n = KindsDrawnInCount(step);
  for (size_t at = 0; at < n; ++at) {
    size_t holders = 0;
    bool mock = false;
    for (const FaultKindInfo& k : kFaultKindInfo) {
      if (k.step != step || static_cast<size_t>(k.draw_order) != at) continue;
      ++holders;
      mock = k.realism == Realism::kMock;
    }
    if (holders != 1) return false;
    for (const FaultKindInfo& k : kFaultKindInfo) {
      const bool later = static_cast<size_t>(k.draw_order) > at;
      if (k.step == step && mock && later && k.realism != Realism::kMock) return false;
    }
  }
  return true;
}
static_assert(DrawOrdersValid(DrawStep::kSwarm) && DrawOrdersValid(DrawStep::kWedge) &&
                  DrawOrdersValid(DrawStep::kLate) && DrawOrdersValid(DrawStep::kByHand),
              "kFaultKindInfo: draw orders 0..n-1 within each step, the mocks last");

template <DrawStep kStep>
constexpr std::array<FaultKind, KindsDrawnInCount(kStep)> KindsDrawnIn() {
  std::array<FaultKind, KindsDrawnInCount(kStep)> out{};
  for (const FaultKindInfo& k : kFaultKindInfo) {
    if (k.step == kStep) out[static_cast<size_t>(k.draw_order)] = k.kind;
  }
  return out;
}

// How many of `step`'s kinds are realistic (the mocks follow them).
constexpr size_t RealisticKindsDrawnInCount(DrawStep step) {
  size_t n = 0;
  for (const FaultKindInfo& k : kFaultKindInfo) {
    n += k.step == step && k.realism == Realism::kRealistic ? 1 : 0;
  }
  return n;
}

}  // namespace fault_models

#endif  // PRODSIM_FAULT_MODELS_KINDS_H_
