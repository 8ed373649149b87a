// The recorded history of a run, for the property checks.
//
// The cluster appends to it as things happen: every batch appended to a
// partition log (by a leader, or copied by a follower), every truncation,
// every produce response sent (or dropped), every fault applied and healed.
// At the end, the final committed log of every partition is snapshotted.
// Checks read only this (docs/DESIGN.md: no back references to live objects).
#ifndef PRODSIM_SIM_KAFKA_HISTORY_H_
#define PRODSIM_SIM_KAFKA_HISTORY_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "sim/core/time.h"
#include "sim/kafka/protocol.h"
#include "sim/kafka/types.h"

namespace kafka {

struct AppendEvent {
  sim::Time at;
  BrokerId broker;
  bool leader = true;  // false: a follower's copy
  TopicPartition tp;
  Offset base_offset;
  ProducerId producer_id;
  Epoch epoch;
  Sequence first_seq;
  Sequence last_seq;
  std::vector<uint64_t> record_ids;
};

struct TruncateEvent {
  sim::Time at;
  BrokerId broker;
  TopicPartition tp;
  Offset new_end;  // the first offset removed
};

// What became of a response the broker made.
enum class ResponseFate : uint8_t {
  kSent,
  kMockDropped,  // mock.drop_response: never sent; the connection stays open
  kLost,         // lose_response: the connection broke before it arrived
  kLate,         // stalled past the client's patience; its connection closed
};
inline std::string_view ResponseFateName(ResponseFate f) {
  switch (f) {
    case ResponseFate::kSent: return "sent";
    case ResponseFate::kMockDropped: return "dropped by a mock fault";
    case ResponseFate::kLost: return "lost: the connection broke";
    case ResponseFate::kLate: return "late: its connection closed first";
  }
  return "?";
}

struct ResponseEvent {
  sim::Time at;
  BrokerId broker;
  ApiKey api = ApiKey::kProduce;
  int32_t correlation_id = 0;
  TopicPartition tp;  // Produce only
  ErrorCode error = ErrorCode::NONE;
  Offset base_offset;
  ResponseFate fate = ResponseFate::kSent;  // not kSent: processed, never received
  // Produce only: what the request's batch for `tp` carried (its producer
  // epoch and first sequence), and whether the broker answered it as a
  // duplicate of a batch it holds (ProducerStateEntry.findDuplicateBatch:
  // nothing written, `base_offset` is the held batch's). A duplicate or an
  // error keeps the request's record ids too, so a rule can tell a true
  // resend from a different batch that reused a sequence, and which
  // messages an error was about; a success keeps none (its append has them).
  Epoch epoch = Epoch::kNone;
  Sequence first_seq = Sequence::kNone;
  bool duplicate = false;
  std::vector<uint64_t> record_ids;
};

struct FaultEvent {
  sim::Time at;
  std::string description;
  bool healed = false;
};

// Wire mode: a TCP connection of the real client to a broker's port, opened
// (accepted by the bridge) or closed (by either side: `why`), so that a
// reader sees which connection a client kept using after a fault.
struct ConnectionEvent {
  sim::Time at;
  BrokerId broker;
  uint64_t connection = 0;  // the bridge's number for it, from 0
  bool opened = false;
  std::string why;  // closed: "reset" or "closed"
};

// Something the harness must say about a run that is neither a fault nor a
// response: in wire mode, what a real client sent that the model refused or
// does not serve (a compressed batch, a bad CRC, an API it does not
// implement, a malformed frame).
struct NoteEvent {
  sim::Time at;
  std::string text;
  ErrorCode refused = ErrorCode::NONE;  // a batch refused with this error, if any
};

// One batch of a final partition log.
struct LogEntry {
  Offset base_offset;
  ProducerId producer_id;
  Epoch epoch;
  Sequence first_seq;
  std::vector<uint64_t> record_ids;
};

struct History {
  std::vector<AppendEvent> appends;
  std::vector<TruncateEvent> truncations;
  std::vector<ResponseEvent> responses;
  std::vector<FaultEvent> faults;
  std::vector<NoteEvent> notes;
  std::vector<ConnectionEvent> connections;  // wire mode only
  // Wire mode: the record batches a leader was asked to append, by the
  // codec the client compressed them with (0 none .. 4 zstd), valid or not.
  std::array<int64_t, 5> batches_by_compression{};
  // Final committed log per partition (up to the leader's high watermark),
  // filled by Cluster::SnapshotLogs at the end of a run.
  ByPartition<std::vector<LogEntry>> final_logs;
};

}  // namespace kafka

#endif  // PRODSIM_SIM_KAFKA_HISTORY_H_
