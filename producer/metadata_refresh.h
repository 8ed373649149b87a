// SingleFlightRefresher: sarama main's single-flight metadata refresh
// (metadata.go: singleFlightMetadataRefresher, currentRefresh and
// nextRefresh; e566ac67, fa624c04). The Client of profile sarama-main
// refreshes through it when Metadata.SingleFlight is set (main's default).
//
// At most one refresh runs at a time, in a task of its own. A caller whose
// topics the running refresh covers (every caller, if it refreshes all
// topics) waits for it and takes its result. Any other caller queues its
// topics for the next refresh, waits for the running one to end, and tries
// again; the first to try after it ends starts the next refresh, with every
// topic queued meanwhile. A caller gets only the errors of the topics it
// asked for (ErrorForTopics); an error that is not per topic, such as
// ErrOutOfBrokers, goes to every caller of that refresh.
//
// As in Go, the two structures have a mutex each (sim::Mutex: each Lock is
// a synchronization point), and each waiter a channel of capacity 1 that
// the refresh task fills and closes.
//
// Invariants: waiters_ is empty unless a refresh is ongoing; topics_ holds
// each topic once, in the order first asked.
#ifndef PRODSIM_PRODUCER_METADATA_REFRESH_H_
#define PRODSIM_PRODUCER_METADATA_REFRESH_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "producer/errors.h"
#include "sim/core/chan.h"
#include "sim/core/sync.h"

namespace sarama {

// sarama main metadata.go: errorForTopics. A refresh's per-topic errors
// (Error::JoinTopicErrors), cut down to `topics` in the caller's order (all
// of them for an empty list); any other error as it is.
Error ErrorForTopics(const std::vector<std::string>& topics, const Error& err);

class SingleFlightRefresher {
 public:
  // Go: the refresh func the client hands to newSingleFlightRefresher
  // (tryRefreshMetadata with the retry budget and deadline). Empty topics:
  // all topics.
  using RefreshFunc = std::function<sim::Task<Error>(std::vector<std::string>)>;

  SingleFlightRefresher(sim::Scheduler& sched, RefreshFunc refresh);

  // sarama main metadata.go: singleFlightMetadataRefresher.Refresh. Returns
  // the result of a refresh that covered `topics` and started no earlier
  // than this call (or that was running when it came, if it covers them).
  sim::Task<Error> Refresh(std::vector<std::string> topics);

  // For tests and trace notes.
  bool ongoing() const { return ongoing_; }
  int refreshes_started() const { return refreshes_started_; }

 private:
  // sarama main: refreshOrQueue. The channel to wait on, and true if the
  // caller was only queued (it must wait, then try again).
  sim::Task<std::pair<sim::ChanPtr<Error>, bool>> RefreshOrQueue(std::vector<std::string> topics);
  // The rest are REQUIRES: mu_ held.
  // currentRefresh.addTopics (empty: all topics).
  void AddTopics(const std::vector<std::string>& topics);
  // currentRefresh.hasTopics.
  bool HasTopics(const std::vector<std::string>& topics) const;
  // currentRefresh.wait: a new waiter's channel. REQUIRES: ongoing_.
  sim::ChanPtr<Error> Wait();
  // currentRefresh.start: the refresh task, and the starter's channel.
  sim::ChanPtr<Error> Start();
  // currentRefresh.clear.
  void Clear();
  // The goroutine currentRefresh.start runs.
  sim::Task<void> Run(std::vector<std::string> topics);

  sim::Scheduler* sched_;
  RefreshFunc refresh_;
  // Go: currentRefresh.
  sim::Mutex mu_;
  bool ongoing_ = false;
  absl::btree_set<std::string> topics_set_;  // Go: topicsMap
  std::vector<std::string> topics_;
  bool all_topics_ = false;
  std::vector<sim::ChanPtr<Error>> waiters_;  // Go: chans
  // Go: nextRefresh.
  sim::Mutex next_mu_;
  std::vector<std::string> next_topics_;
  bool next_all_topics_ = false;
  int refreshes_started_ = 0;
  uint64_t waiters_made_ = 0;
};

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_METADATA_REFRESH_H_
