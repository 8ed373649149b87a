// The public face of the Sarama AsyncProducer model (sarama
// async_producer.go: AsyncProducer, NewAsyncProducer,
// NewAsyncProducerFromClient), as an application sees it.
//
// Every message written to Input() gets exactly one outcome: a success on
// Successes() (when Producer.Return.Successes) or an error on Errors() (when
// Producer.Return.Errors). AsyncClose() starts the shutdown; both output
// channels are closed when it completes. Close() is AsyncClose() plus
// draining, and returns the errors it drained.
//
// Everything runs as tasks on the simulation's scheduler; the calls that
// block in Go (New, Close) are coroutines here.
#ifndef PRODSIM_PRODUCER_ASYNC_PRODUCER_H_
#define PRODSIM_PRODUCER_ASYNC_PRODUCER_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "producer/config.h"
#include "producer/env.h"
#include "producer/message.h"
#include "producer/profile.h"
#include "sim/core/chan.h"
#include "sim/core/scheduler.h"
#include "sim/net/network.h"

namespace sarama {

class Client;

class AsyncProducer {
 public:
  // sarama: NewAsyncProducer(addrs, conf). Validates the config, creates a
  // client (which fetches metadata when Metadata.Full), and with
  // Idempotent, obtains a producer id. An error is returned as a status:
  // INVALID_ARGUMENT for a configuration error, UNAVAILABLE otherwise.
  static sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> New(
      Env env, std::vector<net::NodeId> addrs, Config conf,
      Profile profile = Profile::kSarama_1_42_1);
  // sarama: NewAsyncProducerFromClient. REQUIRES: the client's
  // env().profile is `profile`.
  static sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> FromClient(
      std::shared_ptr<Client> client, Profile profile = Profile::kSarama_1_42_1);

  ~AsyncProducer();
  AsyncProducer(const AsyncProducer&) = delete;
  AsyncProducer& operator=(const AsyncProducer&) = delete;

  sim::Chan<MessagePtr>* Input();
  sim::Chan<MessagePtr>* Successes();
  sim::Chan<ProducerError>* Errors();

  // sarama: AsyncProducer.AsyncClose.
  void AsyncClose();
  // sarama: AsyncProducer.Close: the errors drained (empty: nil).
  sim::Task<std::vector<ProducerError>> Close();

  struct State;  // the model's internals (async_producer_internal.h)
  // For the model's own tests, which reach into its internals.
  State& internals() { return *state_; }

 private:
  explicit AsyncProducer(std::shared_ptr<State> state);
  // sarama: newAsyncProducer.
  static sim::Task<absl::StatusOr<std::unique_ptr<AsyncProducer>>> Start(
      std::shared_ptr<Client> client, bool owns_client, Profile profile);
  std::shared_ptr<State> state_;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_ASYNC_PRODUCER_H_
