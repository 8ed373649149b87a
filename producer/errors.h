// The errors the producer model passes around, as values.
//
// Go's producer returns `error` values of several kinds: Kafka error codes
// from responses (KError), its own sentinel errors (ErrShuttingDown,
// ErrOutOfBrokers, ...), network errors from the connection, configuration
// errors, and the produceSet assertion ("assertion failed: message out of
// sequence added to a batch"). Here each is an Error with a kind, a Kafka
// code for kKafka, and the message text Sarama would print. Errors are data
// (docs/DESIGN.md: Kafka outcomes and network errors are recorded, never thrown).
#ifndef PRODSIM_PRODUCER_ERRORS_H_
#define PRODSIM_PRODUCER_ERRORS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/kafka/types.h"

namespace sarama {

enum class ErrorKind : uint8_t {
  kNone,
  kKafka,                // a KError: `code` holds it
  kNetwork,              // dial, write or read failure; `message` says which
  kShuttingDown,         // ErrShuttingDown
  kOutOfBrokers,         // ErrOutOfBrokers
  kNotConnected,         // ErrNotConnected
  kAlreadyConnected,     // ErrAlreadyConnected
  kClosedClient,         // ErrClosedClient
  kIncompleteResponse,   // ErrIncompleteResponse
  kBreakerOpen,          // breaker.ErrBreakerOpen
  kInvalidPartition,     // ErrInvalidPartition
  kConfiguration,        // ConfigurationError
  kProduceSetAssertion,  // produceSet.add's "assertion failed"
  kDecoding,             // PacketDecodingError (e.g. correlation id mismatch)
  // Wire mode: a real client's report of a failed message, in its own words
  // (the message is the client's error name and text), and one that came
  // after the client's fatal error (librdkafka's RD_KAFKA_RESP_ERR__FATAL:
  // the producer is unusable).
  kClient,
  kClientFatal,
};

class Error {
 public:
  Error() = default;
  static Error Kafka(kafka::ErrorCode code);
  static Error Network(std::string message);
  static Error Of(ErrorKind kind, std::string message = {});
  // Go's errors.Join(fmt.Errorf("%s: %w", topic, KError)...), the error
  // sarama main's metadata refresh returns (metadata.go: refreshError,
  // fa624c04): none for an empty list; else a Kafka error whose code() is
  // the first one's, which Is() every code of the list, and whose text is
  // one "<topic>: <KError text>" per line. REQUIRES: no code is NONE.
  static Error JoinTopicErrors(std::vector<std::pair<std::string, kafka::ErrorCode>> topic_errors);

  bool ok() const { return kind_ == ErrorKind::kNone; }
  explicit operator bool() const { return !ok(); }  // true if an error, like Go's err != nil
  ErrorKind kind() const { return kind_; }
  kafka::ErrorCode code() const { return code_; }
  // Sarama's text for it ("kafka server: Not leader for partition...").
  std::string ToString() const;
  bool Is(kafka::ErrorCode c) const;
  bool Is(ErrorKind k) const { return kind_ == k; }
  // The list a JoinTopicErrors value was made of, in order (else empty).
  const std::vector<std::pair<std::string, kafka::ErrorCode>>& topic_errors() const {
    return topic_errors_;
  }
  bool operator==(const Error& o) const {
    return kind_ == o.kind_ && code_ == o.code_ && message_ == o.message_ &&
           topic_errors_ == o.topic_errors_;
  }

 private:
  ErrorKind kind_ = ErrorKind::kNone;
  kafka::ErrorCode code_ = kafka::ErrorCode::NONE;
  std::string message_;
  std::vector<std::pair<std::string, kafka::ErrorCode>> topic_errors_;
};

inline const Error kNoError{};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ERRORS_H_
