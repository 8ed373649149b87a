// Sarama's error texts (sarama v1.42.1 errors.go; go-resiliency v1.4.0
// breaker.go for ErrBreakerOpen), so that an error in a trace or a history
// reads exactly as Sarama would print it.
#include "producer/errors.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace sarama {
namespace {

// sarama v1.42.1 errors.go: KError.Error, for the codes the model knows.
std::string KafkaErrorText(kafka::ErrorCode code) {
  using kafka::ErrorCode;
  switch (code) {
    case ErrorCode::UNKNOWN_SERVER_ERROR: return "kafka server: Unexpected (unknown?) server error";
    case ErrorCode::NONE: return "kafka server: Not an error, why are you printing me?";
    case ErrorCode::OFFSET_OUT_OF_RANGE:
      return "kafka server: The requested offset is outside the range of offsets "
             "maintained by the server for the given topic/partition";
    case ErrorCode::CORRUPT_MESSAGE: return "kafka server: Message contents does not match its CRC";
    case ErrorCode::UNKNOWN_TOPIC_OR_PARTITION:
      return "kafka server: Request was for a topic or partition that does not exist "
             "on this broker";
    case ErrorCode::LEADER_NOT_AVAILABLE:
      return "kafka server: In the middle of a leadership election, there is currently "
             "no leader for this partition and hence it is unavailable for writes";
    case ErrorCode::NOT_LEADER_OR_FOLLOWER:
      return "kafka server: Tried to send a message to a replica that is not the leader "
             "for some partition. Your metadata is out of date";
    case ErrorCode::REQUEST_TIMED_OUT:
      return "kafka server: Request exceeded the user-specified time limit in the request";
    case ErrorCode::BROKER_NOT_AVAILABLE:
      return "kafka server: Broker not available. Not a client facing error, we should "
             "never receive this!!!";
    case ErrorCode::REPLICA_NOT_AVAILABLE:
      return "kafka server: Replica information not available, one or more brokers are down";
    case ErrorCode::MESSAGE_TOO_LARGE:
      return "kafka server: Message was too large, server rejected it to avoid allocation "
             "error";
    case ErrorCode::NETWORK_EXCEPTION:
      return "kafka server: The server disconnected before a response was received";
    case ErrorCode::NOT_ENOUGH_REPLICAS:
      return "kafka server: Messages are rejected since there are fewer in-sync replicas "
             "than required";
    case ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND:
      return "kafka server: Messages are written to the log, but to fewer in-sync replicas "
             "than required";
    case ErrorCode::INVALID_REQUIRED_ACKS:
      return "kafka server: The number of required acks is invalid (should be either -1, "
             "0, or 1)";
    case ErrorCode::UNSUPPORTED_VERSION: return "kafka server: The version of API is not supported";
    case ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER:
      return "kafka server: The broker received an out of order sequence number";
    case ErrorCode::DUPLICATE_SEQUENCE_NUMBER:
      return "kafka server: The broker received a duplicate sequence number";
    case ErrorCode::INVALID_PRODUCER_EPOCH:
      return "kafka server: Producer attempted an operation with an old epoch";
    case ErrorCode::KAFKA_STORAGE_ERROR:
      return "kafka server: Disk error when trying to access log file on the disk";
    case ErrorCode::LISTENER_NOT_FOUND:
      return "kafka server: There is no listener on the leader broker that matches the "
             "listener on which metadata request was processed";
    case ErrorCode::UNKNOWN_PRODUCER_ID:
      return "kafka server: The broker could not locate the producer metadata associated "
             "with the Producer ID";
    case ErrorCode::INVALID_RECORD:
      return "kafka server: This record has failed the validation on broker and hence "
             "will be rejected";
  }
  // Sarama's fallback for a code its switch does not name.
  return absl::StrCat("Unknown error, how did this happen? Error code = ", static_cast<int>(code));
}

// The fixed text of a sentinel error kind (sarama v1.42.1 errors.go: the
// ErrXxx variables), or nullptr for a kind whose text is its message.
const char* SentinelText(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kShuttingDown:
      return "kafka: message received by producer in process of shutting down";
    case ErrorKind::kOutOfBrokers:
      return "kafka: client has run out of available brokers to talk to";
    case ErrorKind::kNotConnected: return "kafka: broker not connected";
    case ErrorKind::kAlreadyConnected: return "kafka: broker connection already initiated";
    case ErrorKind::kClosedClient: return "kafka: tried to use a client that was closed";
    case ErrorKind::kIncompleteResponse:
      return "kafka: response did not contain all the expected topic/partition blocks";
    case ErrorKind::kBreakerOpen: return "circuit breaker is open";
    case ErrorKind::kInvalidPartition:
      return "kafka: partitioner returned an invalid partition index";
    case ErrorKind::kNone:
    case ErrorKind::kKafka:
    case ErrorKind::kNetwork:
    case ErrorKind::kConfiguration:
    case ErrorKind::kProduceSetAssertion:
    case ErrorKind::kDecoding:
    case ErrorKind::kClient:
    case ErrorKind::kClientFatal: return nullptr;
  }
  return nullptr;
}

}  // namespace

// sarama v1.42.1 errors.go: KError as an error value. A response carries
// ErrNoError (0) for success, and Sarama tests `block.Err == ErrNoError`
// before it ever returns a KError as an error; so code NONE gives the
// no-error value here, never an error that is "set" with code NONE.
Error Error::Kafka(kafka::ErrorCode code) {
  if (code == kafka::ErrorCode::NONE) return Error();
  Error e;
  e.kind_ = ErrorKind::kKafka;
  e.code_ = code;
  return e;
}

// A failure of the connection (Go's net.OpError, io.EOF, a deadline): the
// message is the whole text, as Go's error would print it.
Error Error::Network(std::string message) { return Of(ErrorKind::kNetwork, std::move(message)); }

// REQUIRES: kind is not kKafka (use Kafka), and kNone has no message.
// For a sentinel kind, a non-empty message is what Sarama wraps in it
// (errors.go: Wrap, e.g. Wrap(ErrOutOfBrokers, brokerErrors...) in client.go).
Error Error::Of(ErrorKind kind, std::string message) {
  PRODSIM_ASSERT_MSG(kind != ErrorKind::kKafka, "use Error::Kafka for a Kafka error code");
  PRODSIM_ASSERT_MSG(kind != ErrorKind::kNone || message.empty(),
                     "the no-error value carries no message");
  Error e;
  e.kind_ = kind;
  e.message_ = std::move(message);
  return e;
}

// sarama main metadata.go: refreshError.Error (errors.Join of the topics'
// wrapped KErrors).
Error Error::JoinTopicErrors(std::vector<std::pair<std::string, kafka::ErrorCode>> topic_errors) {
  if (topic_errors.empty()) return Error();
  for (const auto& [topic, code] : topic_errors) {
    PRODSIM_ASSERT_MSG(code != kafka::ErrorCode::NONE, "a topic error with code NONE");
  }
  Error e = Kafka(topic_errors.front().second);
  e.topic_errors_ = std::move(topic_errors);
  return e;
}

// Go's errors.Is through a join: any of its codes.
bool Error::Is(kafka::ErrorCode c) const {
  if (kind_ != ErrorKind::kKafka) return false;
  if (code_ == c) return true;
  for (const auto& [topic, code] : topic_errors_) {
    if (code == c) return true;
  }
  return false;
}

// The text Go's err.Error() gives for the error this value models:
//   kNone                  "<nil>", as fmt prints a nil error;
//   kKafka                 KError.Error(), or a join's lines (JoinTopicErrors);
//   a sentinel kind        its errors.New text, or with a message,
//                          sentinelError.Error(): "<text>: <message>";
//   kNetwork, kConfiguration, kDecoding, kProduceSetAssertion: the message,
//                          which is the whole text. Sarama prints a
//                          ConfigurationError as "kafka: invalid
//                          configuration (<what>)" and a PacketDecodingError
//                          as "kafka: error decoding packet: <info>", so
//                          that is what the message should hold.
std::string Error::ToString() const {
  switch (kind_) {
    case ErrorKind::kNone: return "<nil>";
    case ErrorKind::kKafka: {
      if (topic_errors_.empty()) return KafkaErrorText(code_);
      std::string out;
      for (const auto& [topic, code] : topic_errors_) {
        absl::StrAppend(&out, out.empty() ? "" : "\n", topic, ": ", KafkaErrorText(code));
      }
      return out;
    }
    case ErrorKind::kNetwork:
    case ErrorKind::kConfiguration:
    case ErrorKind::kDecoding:
    case ErrorKind::kProduceSetAssertion:
    case ErrorKind::kClient:
    case ErrorKind::kClientFatal: return message_;
    case ErrorKind::kShuttingDown:
    case ErrorKind::kOutOfBrokers:
    case ErrorKind::kNotConnected:
    case ErrorKind::kAlreadyConnected:
    case ErrorKind::kClosedClient:
    case ErrorKind::kIncompleteResponse:
    case ErrorKind::kBreakerOpen:
    case ErrorKind::kInvalidPartition: break;
  }
  const char* text = SentinelText(kind_);
  PRODSIM_ASSERT_MSG(text != nullptr, "ErrorKind value outside the enum");
  if (message_.empty()) return text;
  return absl::StrCat(text, ": ", message_);
}

}  // namespace sarama
