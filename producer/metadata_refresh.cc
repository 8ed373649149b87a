#include "producer/metadata_refresh.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sarama {

// sarama main (fa624c04) metadata.go: errorForTopics and refreshError.forTopics
Error ErrorForTopics(const std::vector<std::string>& topics, const Error& err) {
  if (err.topic_errors().empty() || topics.empty()) return err;
  std::vector<std::pair<std::string, kafka::ErrorCode>> picked;
  for (const std::string& topic : topics) {
    for (const auto& [t, code] : err.topic_errors()) {
      if (t == topic) picked.emplace_back(t, code);
    }
  }
  return Error::JoinTopicErrors(std::move(picked));
}

SingleFlightRefresher::SingleFlightRefresher(sim::Scheduler& sched, RefreshFunc refresh)
    : sched_(&sched),
      refresh_(std::move(refresh)),
      mu_(sched, "metadataRefresh.current.mu"),
      next_mu_(sched, "metadataRefresh.next.mu") {
  PRODSIM_ASSERT(refresh_ != nullptr);
}

// sarama main (e566ac67, fa624c04) metadata.go: singleFlightMetadataRefresher.Refresh
sim::Task<Error> SingleFlightRefresher::Refresh(std::vector<std::string> topics) {
  for (;;) {
    std::pair<sim::ChanPtr<Error>, bool> r = co_await RefreshOrQueue(topics);
    std::optional<Error> err = co_await r.first->Recv();
    PRODSIM_ASSERT_MSG(err.has_value(), "a refresh closed a waiter's channel without a result");
    if (!r.second) co_return ErrorForTopics(topics, *err);
  }
}

// sarama main (e566ac67) metadata.go: singleFlightMetadataRefresher.refreshOrQueue
sim::Task<std::pair<sim::ChanPtr<Error>, bool>> SingleFlightRefresher::RefreshOrQueue(
    std::vector<std::string> topics) {
  using Result = std::pair<sim::ChanPtr<Error>, bool>;
  co_await mu_.Lock();
  if (!ongoing_) {
    // What was queued for the next refresh goes into this one.
    co_await next_mu_.Lock();
    if (next_all_topics_) {
      all_topics_ = true;
    } else if (!next_topics_.empty()) {
      AddTopics(next_topics_);
    }
    next_topics_.clear();
    next_all_topics_ = false;
    next_mu_.Unlock();
    AddTopics(topics);
    sim::ChanPtr<Error> ch = Start();
    mu_.Unlock();
    co_return Result{std::move(ch), false};
  }
  if (HasTopics(topics)) {
    sim::ChanPtr<Error> ch = Wait();
    mu_.Unlock();
    co_return Result{std::move(ch), false};
  }
  sim::ChanPtr<Error> ch = Wait();
  co_await next_mu_.Lock();
  if (topics.empty()) {
    next_all_topics_ = true;
    next_topics_.clear();
  } else {
    next_topics_.insert(next_topics_.end(), topics.begin(), topics.end());
  }
  next_mu_.Unlock();
  mu_.Unlock();
  co_return Result{std::move(ch), true};
}

// sarama main metadata.go: currentRefresh.addTopics
void SingleFlightRefresher::AddTopics(const std::vector<std::string>& topics) {
  PRODSIM_ASSERT(mu_.locked());
  if (topics.empty()) {
    all_topics_ = true;
    return;
  }
  for (const std::string& t : topics) {
    if (topics_set_.insert(t).second) topics_.push_back(t);
  }
}

// sarama main metadata.go: currentRefresh.hasTopics
bool SingleFlightRefresher::HasTopics(const std::vector<std::string>& topics) const {
  PRODSIM_ASSERT(mu_.locked());
  if (topics.empty()) return all_topics_;
  if (all_topics_) return true;
  for (const std::string& t : topics) {
    if (!topics_set_.contains(t)) return false;
  }
  return true;
}

// sarama main metadata.go: currentRefresh.wait
sim::ChanPtr<Error> SingleFlightRefresher::Wait() {
  PRODSIM_ASSERT(mu_.locked());
  PRODSIM_ASSERT_MSG(ongoing_, "waiting for a refresh that is not ongoing");
  sim::ChanPtr<Error> ch =
      sim::MakeChan<Error>(*sched_, absl::StrCat("metadataRefresh.wait#", ++waiters_made_), 1);
  waiters_.push_back(ch);
  return ch;
}

// sarama main metadata.go: currentRefresh.start
sim::ChanPtr<Error> SingleFlightRefresher::Start() {
  PRODSIM_ASSERT(mu_.locked());
  PRODSIM_ASSERT(!ongoing_);
  ongoing_ = true;
  ++refreshes_started_;
  sim::ChanPtr<Error> ch = Wait();
  std::vector<std::string> topics;
  if (!all_topics_) topics = topics_;
  sched_->Go(absl::StrCat("metadataRefresh#", refreshes_started_), Run(std::move(topics)));
  return ch;
}

// sarama main metadata.go: the goroutine of currentRefresh.start
sim::Task<void> SingleFlightRefresher::Run(std::vector<std::string> topics) {
  Error err = co_await refresh_(std::move(topics));
  co_await mu_.Lock();
  ongoing_ = false;
  for (const sim::ChanPtr<Error>& ch : waiters_) {
    // Capacity 1 and one value each: never blocks.
    co_await ch->Send(err);
    ch->Close();
  }
  Clear();
  mu_.Unlock();
}

// sarama main metadata.go: currentRefresh.clear
void SingleFlightRefresher::Clear() {
  PRODSIM_ASSERT(mu_.locked());
  topics_.clear();
  topics_set_.clear();
  all_topics_ = false;
  waiters_.clear();
}

}  // namespace sarama
