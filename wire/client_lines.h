// The driver protocol's event lines (clients/README.md), read into the
// RunRecord the checks judge: what the client produced, acknowledged and
// failed, its fatal errors, its closing, and every line as it came (kept
// for a person to read beside the broker history).
//
// What a client's report means for the checks is decided here, once, per
// client (the start line's "client" names it):
//   - An error is a plain failure (the message may or may not be in the
//     log: Sarama and kafkajs do not say) unless the client says more:
//       * Sarama's ErrProduceSetAssertion is the producer's own assertion
//         (sarama.produceSet.add), as in the model: no-producer-assertion.
//       * "fatal":true: reported after the client's fatal error.
//       * "status":"not_persisted": the client promises the message is not
//         in the log (librdkafka's RD_KAFKA_MSG_STATUS_NOT_PERSISTED, its
//         documented meaning); not-persisted-absent holds it to that.
//         "possibly_persisted", "persisted" and "unknown" promise nothing.
//   - The goroutine report (a "goroutine" line per function the client's
//     goroutines are still in after Close, then one "goroutines" line) is
//     read as the model's survivors are: no-leaked-goroutines judges it
//     when the scenario opts in ([checks] no_leaked_goroutines). A
//     goroutine the runtime calls sleeping or runnable is not a leak, as
//     in the model.
//   - An ack whose offset is negative (librdkafka's -1001, RD_KAFKA_OFFSET_
//     INVALID, after e.g. NOT_ENOUGH_REPLICAS_AFTER_APPEND then a
//     successful retry; kafkajs with acks=0) says "written, offset
//     unknown": AckEvent::offset_known is false, and the checks look for
//     the message in its partition's log instead of at an offset.
// ErrorClassOf is the table; client_lines_test holds one case per class
// per driver.
#ifndef PRODSIM_WIRE_CLIENT_LINES_H_
#define PRODSIM_WIRE_CLIENT_LINES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/string_view.h"
#include "checks/run_record.h"
#include "scenarios/spec.h"
#include "sim/core/time.h"
#include "wire/json_line.h"

namespace wire {

// At most this many event lines are kept per trial (all are counted): a
// run of 10^5 messages keeps every line, a runaway client cannot fill
// memory.
inline constexpr size_t kEventLinesKept = 400000;

// What one error line means for the checks.
enum class ErrorClass : uint8_t {
  kFailed,        // failed; may or may not be in the log
  kNotPersisted,  // failed, and the client says it is not in the log
  kAssertion,     // the producer's own assertion (Sarama's produceSet.add)
  kAfterFatal,    // refused or failed after the client's fatal error
};
std::string_view ErrorClassName(ErrorClass c);

// The class of an error line of `client` (the start line's "client":
// "sarama", "librdkafka", "kafkajs", or another driver's name).
ErrorClass ErrorClassOf(std::string_view client, std::string_view name, std::string_view status,
                        bool fatal);

class ClientLines {
 public:
  // `record` is the trial's record (record.client must be set); `topics`
  // the job's topics, for errors of messages the produce call refused.
  // REQUIRES: record.client.has_value(); `record` and `workload` outlive
  // this.
  ClientLines(checks::RunRecord& record, const scenarios::WorkloadSpec& workload,
              std::vector<std::string> topics);

  // One line of the driver's stdout, seen at `at`.
  void OnLine(sim::Time at, std::string line);

  const std::string& job_error() const { return job_error_; }
  // The client name of the start line ("librdkafka"), empty before it.
  const std::string& client() const { return client_; }

 private:
  void Garbage(sim::Time at, absl::string_view line, absl::string_view why);
  void Goroutine(sim::Time at, absl::string_view line, const JsonLine& j);
  void Keep(sim::Time at, const std::string& line);

  checks::RunRecord& r_;
  checks::ClientRecord& c_;
  const scenarios::WorkloadSpec& workload_;
  std::vector<std::string> job_topics_;
  absl::btree_map<uint64_t, std::string> topics_;
  std::string job_error_;
  std::string client_;
};

// "t=1.234s LINE" for each kept event line, one per line.
std::string EventsText(const checks::ClientRecord& c);

}  // namespace wire

#endif  // PRODSIM_WIRE_CLIENT_LINES_H_
