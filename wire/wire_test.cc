// The real-time world's pieces: the driver protocol's JSON, the driver
// table, the event loop, the child process (nothing left behind), and the
// bridge with a raw Kafka client on a real socket.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/kafka/wire/codec.h"
#include "wire/bridge.h"
#include "wire/child.h"
#include "wire/drivers.h"
#include "wire/event_loop.h"
#include "wire/json_line.h"

namespace wire {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(JsonLine, ReadsAFlatObject) {
  absl::StatusOr<JsonLine> j = JsonLine::Parse(
      R"({"event":"ack","id":17,"partition":0,"offset":-1,"fatal":false,"x":null,"t":"a\"b\u00e9"})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->String("event"), "ack");
  EXPECT_EQ(j->Int("id"), 17);
  EXPECT_EQ(j->Int("offset"), -1);
  EXPECT_EQ(j->Bool("fatal"), false);
  EXPECT_TRUE(j->Has("x"));
  EXPECT_EQ(j->String("t"), "a\"b\xc3\xa9");
  EXPECT_EQ(j->Int("event"), std::nullopt);  // a string is not an integer
}

TEST(JsonLine, RefusesWhatIsNotTheProtocol) {
  for (const char* bad :
       {"", "hello", "{", R"({"a":1,})", R"({"a":1.5})", R"({"a":[1]})", R"({"a":{"b":1}})",
        R"({"a":1}x)", R"({"a":1,"a":2})", "{\"a\":\"\x01\"}", R"({"a":99999999999999999999})"}) {
    EXPECT_FALSE(JsonLine::Parse(bad).ok()) << bad;
  }
}

TEST(JsonLine, QuoteRoundTrips) {
  const std::string s = "a\"\\\n\t\x01z";
  absl::StatusOr<JsonLine> j = JsonLine::Parse("{\"k\":" + JsonQuote(s) + "}");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->String("k"), s);
}

TEST(Drivers, LibrdkafkaNamesEachMappedSetting) {
  scenarios::ProducerSpec p;
  p.idempotent = true;
  p.net_max_open_requests = 5;
  p.required_acks = -1;
  p.retry_backoff = sim::Duration::Millis(250);
  p.flush_frequency = sim::Duration::Millis(0);
  p.flush_max_messages = 1;
  p.net_read_timeout = sim::Duration::Seconds(1);
  p.return_successes = true;
  const ClientConfig c = LibrdkafkaConfig(p);
  EXPECT_THAT(c.config,
              ElementsAre(Pair("enable.idempotence", "true"),
                          Pair("max.in.flight.requests.per.connection", "5"), Pair("acks", "all"),
                          Pair("retry.backoff.ms", "250"), Pair("linger.ms", "0"),
                          Pair("batch.num.messages", "1"), Pair("socket.timeout.ms", "1000")));
  EXPECT_THAT(c.ignored, ElementsAre("return_successes"));
}

TEST(Drivers, JobLineIsOneObjectTheDriversRead) {
  scenarios::WorkloadSpec w;
  w.messages = 3;
  w.close_at = sim::Duration::Millis(1500);
  const std::string line =
      JobLine(w, {"t"}, "127.0.0.1:1", sim::Duration::Seconds(2), {{"acks", "all"}});
  EXPECT_EQ(line, R"({"bootstrap":"127.0.0.1:1","topics":["t"],"messages":3,"keys":10,"burst":1,)"
                  R"("interval_us":1000,"value_bytes":100,"close_at_us":1500000,)"
                  R"("flush_timeout_ms":2000,"config":[["acks","all"]]})");
}

// The checks read what the client runs with: a [clients."NAME"] setting of
// idempotence, acks or requests in flight wins over the [producer] field.
TEST(Drivers, EffectiveSettingsFollowTheClientsOwnTable) {
  absl::StatusOr<Driver> d = FindDriver("librdkafka");
  if (!d.ok()) GTEST_SKIP() << d.status();
  scenarios::Scenario s;
  s.producer.idempotent = false;
  s.producer.net_max_open_requests = 1;
  EXPECT_EQ(EffectiveSettings(*d, s).max_in_flight, 1);
  s.clients.push_back(
      {"librdkafka", {{"acks", "1"}, {"max.in.flight.requests.per.connection", "2"}}});
  Effective e = EffectiveSettings(*d, s);
  EXPECT_EQ(e.max_in_flight, 2);
  EXPECT_EQ(e.acks, 1);
  EXPECT_FALSE(e.idempotent);
  s.clients[0].settings.push_back({"enable.idempotence", "true"});
  s.clients[0].settings[1].second = "100";
  e = EffectiveSettings(*d, s);
  EXPECT_TRUE(e.idempotent);
  EXPECT_EQ(e.max_in_flight, 5);  // librdkafka's cap with idempotence
}

// The Java client's own rules (ProducerConfig, KAFKA-13673): explicit
// idempotence means acks all; unasked, idempotence is off with acks other
// than all, retries 0 or more than 5 in flight. franz-go's driver follows
// it for acks.
TEST(Drivers, EffectiveSettingsFollowTheJavaClientsRules) {
  Driver java;
  java.name = "java@2.8.2";
  java.family = "java";
  java.idempotent_default = false;  // 2.x
  java.acks_default = 1;
  scenarios::Scenario s;
  s.producer.idempotent = true;
  Effective e = EffectiveSettings(java, s);
  EXPECT_TRUE(e.idempotent);
  EXPECT_EQ(e.acks, -1);  // enable.idempotence sets acks all on 2.x
  s.producer.required_acks = 1;
  EXPECT_EQ(EffectiveSettings(java, s).acks, 1);  // asked for: the client refuses it
  java.idempotent_default = true;                 // 3.x
  java.acks_default = -1;
  s = scenarios::Scenario{};
  EXPECT_TRUE(EffectiveSettings(java, s).idempotent);
  s.producer.required_acks = 1;
  EXPECT_FALSE(EffectiveSettings(java, s).idempotent);
  s.producer.required_acks.reset();
  s.producer.retry_max = 0;
  EXPECT_FALSE(EffectiveSettings(java, s).idempotent);
  s.producer.retry_max.reset();
  s.clients.push_back({"java", {{"max.in.flight.requests.per.connection", "10"}}});
  EXPECT_FALSE(EffectiveSettings(java, s).idempotent);
  s.clients[0].settings.push_back({"enable.idempotence", "true"});
  EXPECT_TRUE(EffectiveSettings(java, s).idempotent);  // asked for: the client refuses it
  Driver kgo;
  kgo.name = "franz-go";
  kgo.family = "franz-go";
  kgo.idempotent_default = true;
  kgo.acks_default = -1;
  s = scenarios::Scenario{};
  s.producer.required_acks = 0;
  EXPECT_FALSE(EffectiveSettings(kgo, s).idempotent);
  s.clients.push_back({"franz-go", {{"RequiredAcks", "all"}}});
  EXPECT_TRUE(EffectiveSettings(kgo, s).idempotent);
}

TEST(Drivers, ACommandIsADriver) {
  absl::StatusOr<Driver> d = FindDriver("/bin/echo -n");
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(d->argv, ElementsAre("/bin/echo", "-n"));
  EXPECT_FALSE(FindDriver("").ok());
}

// An executable file at `path` (its directories made).
void MakeProgram(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// sarama@VERSION: the default program for the built-in version, then
// sarama-V/ beside the drivers, then the versions directory; main with no
// checkout to build it from is an error that says how, and nothing is run.
TEST(Drivers, SaramaVersionsAreFoundBesideTheDriversThenInTheVersionsDir) {
  const std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / "prodsim-drivers-sarama";
  std::filesystem::remove_all(dir);
  MakeProgram(dir / "prodsim-sarama");
  MakeProgram(dir / "sarama-9.9.9" / "prodsim-sarama");
  MakeProgram(dir / "versions" / "sarama-8.8.8" / "prodsim-sarama");
  setenv("PRODSIM_CLIENTS_DIR", dir.c_str(), 1);
  setenv("PRODSIM_VERSIONS_DIR", (dir / "versions").c_str(), 1);
  unsetenv("PRODSIM_SARAMA_MAIN");
  auto argv0 = [](std::string_view client) {
    absl::StatusOr<Driver> d = FindDriver(client);
    return d.ok() ? d->argv.at(0) : std::string(d.status().message());
  };
  EXPECT_EQ(argv0("sarama"), (dir / "prodsim-sarama").string());
  EXPECT_EQ(argv0("sarama@1.42.1"), (dir / "prodsim-sarama").string());
  EXPECT_EQ(argv0("sarama@9.9.9"), (dir / "sarama-9.9.9" / "prodsim-sarama").string());
  EXPECT_EQ(argv0("sarama@8.8.8"), (dir / "versions" / "sarama-8.8.8" / "prodsim-sarama").string());
  EXPECT_THAT(argv0("sarama@main"), HasSubstr("set PRODSIM_SARAMA_MAIN to a checkout"));
  EXPECT_FALSE(std::filesystem::exists(dir / "versions" / "sarama-main"));
  unsetenv("PRODSIM_CLIENTS_DIR");
  unsetenv("PRODSIM_VERSIONS_DIR");
  std::filesystem::remove_all(dir);
}

TEST(EventLoop, WaitsForTheDeadlineWithoutEvents) {
  EventLoop loop;
  ASSERT_TRUE(loop.status().ok());
  const sim::Time start = loop.Now();
  const sim::Time t = loop.Wait(start + sim::Duration::Millis(20), /*block=*/true);
  EXPECT_GE((t - start).nanos(), sim::Duration::Millis(19).nanos());
  EXPECT_LT((t - start).nanos(), sim::Duration::Seconds(2).nanos());
}

// Runs the loop until `done` or two seconds.
template <typename Done>
void RunUntil(EventLoop& loop, Done done) {
  const sim::Time until = loop.Now() + sim::Duration::Seconds(2);
  while (!done() && loop.Now() < until) loop.Wait(loop.Now() + sim::Duration::Millis(10), true);
}

TEST(Child, DeliversLinesAndTheExitCode) {
  signal(SIGPIPE, SIG_IGN);
  EventLoop loop;
  std::vector<std::string> lines;
  absl::StatusOr<std::unique_ptr<Child>> c =
      Child::Start(loop,
                   {{"/bin/sh", "-c", "read x; echo got $x $V; echo second; echo err >&2; exit 3"},
                    "job\n",
                    {{"V", "from-env"}}},
                   [&](std::string l) { lines.push_back(std::move(l)); });
  ASSERT_TRUE(c.ok()) << c.status();
  RunUntil(loop, [&] { return (*c)->Poll() && (*c)->stdout_closed(); });
  EXPECT_THAT(lines, ElementsAre("got job from-env", "second"));
  EXPECT_EQ((*c)->exit_code(), 3);
  RunUntil(loop, [&] { return (*c)->stderr_text() == "err\n"; });
  EXPECT_EQ((*c)->stderr_text(), "err\n");
}

TEST(Child, AProgramThatCannotRunIsAnErrorNotAChild) {
  EventLoop loop;
  absl::StatusOr<std::unique_ptr<Child>> c =
      Child::Start(loop, {{"/nonexistent/prodsim-client"}, "", {}}, [](std::string) {});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cannot execute /nonexistent/prodsim-client"));
}

// Whether a live (not zombie) process has exactly `argv` as its command
// line (/proc/PID/cmdline, NUL-separated).
bool Running(const std::vector<std::string>& argv) {
  std::string want;
  for (const std::string& a : argv) want += a + '\0';
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return false;
  bool found = false;
  while (dirent* d = readdir(dir)) {
    const std::string proc = std::string("/proc/") + d->d_name;
    std::ifstream cmdline(proc + "/cmdline", std::ios::binary);
    const std::string got((std::istreambuf_iterator<char>(cmdline)), {});
    if (got != want) continue;
    std::ifstream stat(proc + "/stat");
    const std::string line((std::istreambuf_iterator<char>(stat)), {});
    if (line.find(") Z") == std::string::npos) found = true;
  }
  closedir(dir);
  return found;
}

// Waits up to 2 s for no process to run `argv`.
bool GoneSoon(const std::vector<std::string>& argv) {
  for (int i = 0; i < 200; ++i) {
    if (!Running(argv)) return true;
    usleep(10000);
  }
  return false;
}

// The client forks a grandchild that would outlive it; both must go when
// the Child is destroyed (its keeper ends the client's tree).
TEST(Child, KillEndsTheWholeProcessGroup) {
  EventLoop loop;
  std::vector<std::string> lines;
  const std::vector<std::string> grandchild = {"sleep", "31.25"};
  absl::StatusOr<std::unique_ptr<Child>> c =
      Child::Start(loop, {{"/bin/sh", "-c", "sleep 31.25 & echo started; wait"}, "", {}},
                   [&](std::string l) { lines.push_back(std::move(l)); });
  ASSERT_TRUE(c.ok()) << c.status();
  RunUntil(loop, [&] { return !lines.empty(); });
  ASSERT_EQ(lines.size(), 1u);
  // `echo` may run before the forked shell has exec'd sleep.
  for (int i = 0; i < 200 && !Running(grandchild); ++i) usleep(10000);
  ASSERT_TRUE(Running(grandchild));
  const pid_t pid = (*c)->pid();
  c->reset();  // the destructor kills and reaps
  EXPECT_NE(kill(pid, 0), 0);
  EXPECT_TRUE(GoneSoon(grandchild)) << "the grandchild still runs";
}

// A grandchild in a session of its own (setsid), holding the client's
// stdout: when the client exits, it is killed too and the stdout ends, so
// the trial is not held open to its bound.
TEST(Child, NothingTheClientStartsOutlivesIt) {
  EventLoop loop;
  std::vector<std::string> lines;
  const std::vector<std::string> grandchild = {"sleep", "32.25"};
  absl::StatusOr<std::unique_ptr<Child>> c =
      Child::Start(loop, {{"/bin/sh", "-c", "setsid sleep 32.25 & echo started; exit 0"}, "", {}},
                   [&](std::string l) { lines.push_back(std::move(l)); });
  ASSERT_TRUE(c.ok()) << c.status();
  RunUntil(loop, [&] { return (*c)->stdout_closed() && (*c)->Poll(); });
  EXPECT_EQ((*c)->exit_code(), 0);
  EXPECT_TRUE(GoneSoon(grandchild)) << "the setsid grandchild outlived the client";
  c->reset();
}

// A trial's keeper holds none of prodsim's other descriptors: a pipe made
// before the fork (as another trial's thread makes its own) ends when
// prodsim closes its write end, not when this trial's client does. Before
// the keeper closed what it inherited, two trials started at once on two
// threads each waited for the other's end (explore --client hung).
TEST(Child, TheKeeperHoldsNoOtherDescriptor) {
  int other[2];
  ASSERT_EQ(pipe2(other, O_CLOEXEC), 0);
  EventLoop loop;
  absl::StatusOr<std::unique_ptr<Child>> c =
      Child::Start(loop, {{"sleep", "5"}, "", {}}, [](std::string) {});
  ASSERT_TRUE(c.ok()) << c.status();
  close(other[1]);
  pollfd p{other[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 2000), 1) << "the keeper still holds the pipe's write end";
  char byte = 0;
  EXPECT_EQ(read(other[0], &byte, 1), 0);  // end of file
  close(other[0]);
  c->reset();
}

}  // namespace
}  // namespace wire
