// sarama main's single-flight metadata refresh (metadata.go), with a fake
// refresh function in place of the client's tryRefreshMetadata; the ports
// follow metadata_test.go's cases.
#include "producer/metadata_refresh.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/core/scheduler.h"

namespace sarama {
namespace {

using kafka::ErrorCode;
using sim::Duration;
using sim::Task;
using sim::Time;
using Topics = std::vector<std::string>;

// The fake refresh: records what it was asked for, takes 10 ms, and
// returns `result`.
struct Fake {
  sim::Scheduler* sched = nullptr;
  std::vector<Topics> calls;
  Error result;
};

Task<Error> FakeRefresh(Fake* f, Topics topics) {
  f->calls.push_back(std::move(topics));
  co_await f->sched->Sleep(Duration::Millis(10));
  co_return f->result;
}

struct World {
  World() : sched(sim::SchedulerOptions{}) {
    fake.sched = &sched;
    refresher = std::make_unique<SingleFlightRefresher>(
        sched, [f = &fake](Topics topics) { return FakeRefresh(f, std::move(topics)); });
  }
  ~World() { sched.DestroyTasks(); }

  sim::Scheduler sched;
  Fake fake;
  std::unique_ptr<SingleFlightRefresher> refresher;
};

Task<void> RefreshAt(World* w, Duration at, Topics topics, Error* out) {
  co_await w->sched.Sleep(at);
  *out = co_await w->refresher->Refresh(std::move(topics));
}

// Starts one caller per entry, each `i` ms after the start, and runs them.
std::vector<Error> RunCallers(World& w, const std::vector<Topics>& callers) {
  std::vector<Error> out(callers.size());
  for (size_t i = 0; i < callers.size(); ++i) {
    w.sched.Go("caller",
               RefreshAt(&w, Duration::Millis(static_cast<int64_t>(i)), callers[i], &out[i]));
  }
  EXPECT_EQ(w.sched.Run().outcome, sim::Outcome::kAllDone);
  EXPECT_FALSE(w.refresher->ongoing());
  return out;
}

Error TwoTopicErrors() {
  return Error::JoinTopicErrors(
      {{"a", ErrorCode::UNKNOWN_TOPIC_OR_PARTITION}, {"b", ErrorCode::LEADER_NOT_AVAILABLE}});
}

// A caller whose topics the running refresh covers waits for it, and gets
// only its own topics' errors from the shared result (fa624c04).
TEST(SingleFlightRefresherTest, CoveredCallersShareTheRunningRefresh) {
  World w;
  w.fake.result = TwoTopicErrors();
  const std::vector<Error> got = RunCallers(w, {{"a", "b"}, {"b"}});
  EXPECT_EQ(w.fake.calls, std::vector<Topics>({{"a", "b"}}));
  EXPECT_EQ(got[0], TwoTopicErrors());
  EXPECT_TRUE(got[1].Is(ErrorCode::LEADER_NOT_AVAILABLE));
  EXPECT_FALSE(got[1].Is(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
  EXPECT_EQ(got[1].ToString(), "b: " + Error::Kafka(ErrorCode::LEADER_NOT_AVAILABLE).ToString());
}

// Callers with other topics wait for the running refresh and then share
// one more, with all their topics; a later caller covered by the first
// refresh still shares that one.
TEST(SingleFlightRefresherTest, UncoveredCallersShareTheNextRefresh) {
  World w;
  const std::vector<Error> got = RunCallers(w, {{"a"}, {"b"}, {"c", "b"}, {"a"}});
  EXPECT_EQ(w.fake.calls, std::vector<Topics>({{"a"}, {"b", "c"}}));
  EXPECT_EQ(w.refresher->refreshes_started(), 2);
  for (const Error& e : got) EXPECT_FALSE(e) << e.ToString();
}

// A refresh of all topics covers every caller; a caller for all topics
// while a narrower one runs is queued, and the next refresh is of all.
TEST(SingleFlightRefresherTest, AllTopicsCoverEveryCaller) {
  {
    World w;
    RunCallers(w, {{}, {"x"}});
    EXPECT_EQ(w.fake.calls, std::vector<Topics>({{}}));
  }
  {
    World w;
    RunCallers(w, {{"x"}, {}, {"y"}});
    EXPECT_EQ(w.fake.calls, std::vector<Topics>({{"x"}, {}}));
  }
}

// An error that is not per topic reaches every caller as it is; per-topic
// errors are cut to the caller's topics, in the caller's order.
TEST(SingleFlightRefresherTest, ErrorForTopics) {
  const Error out_of_brokers = Error::Of(ErrorKind::kOutOfBrokers, "EOF");
  EXPECT_EQ(ErrorForTopics({"a"}, out_of_brokers), out_of_brokers);
  EXPECT_EQ(ErrorForTopics({}, TwoTopicErrors()), TwoTopicErrors());
  EXPECT_EQ(ErrorForTopics({"c"}, TwoTopicErrors()), kNoError);
  const Error reordered = ErrorForTopics({"b", "a"}, TwoTopicErrors());
  EXPECT_EQ(reordered.code(), ErrorCode::LEADER_NOT_AVAILABLE);
  EXPECT_EQ(reordered.ToString(),
            "b: " + Error::Kafka(ErrorCode::LEADER_NOT_AVAILABLE).ToString() +
                "\na: " + Error::Kafka(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION).ToString());
}

// An error that is not per topic (ErrOutOfBrokers) reaches every caller of
// the refresh unchanged.
TEST(SingleFlightRefresherTest, NonTopicErrorsReachEveryCaller) {
  World w;
  w.fake.result = Error::Of(ErrorKind::kOutOfBrokers);
  const std::vector<Error> got = RunCallers(w, {{"a"}, {"a"}});
  EXPECT_EQ(w.fake.calls.size(), 1u);
  EXPECT_EQ(got[0], w.fake.result);
  EXPECT_EQ(got[1], w.fake.result);
}

}  // namespace
}  // namespace sarama
