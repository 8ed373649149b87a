// prodsim real and prodsim serve: the real-time world (wire/) from the
// command line.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"
#include "cli/command_line.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/junit.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "wire/client_lines.h"
#include "wire/drivers.h"
#include "wire/history_text.h"
#include "wire/real_cluster.h"
#include "wire/real_world.h"

namespace cli {
namespace {

using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;

constexpr int kTrialsMax = 10000;
// --cluster=kafka@VERSION: a scenario a real cluster cannot run (sysexits
// EX_CONFIG), and a real cluster that cannot be had, its supervisor neither
// built nor buildable (EX_UNAVAILABLE).
constexpr int kExitNotOnRealCluster = 78;
constexpr int kExitNoRealCluster = 69;

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n", error.c_str());
  return kExitUsage;
}

// Writes the history; false (with a line on stderr) if it cannot.
bool WriteHistory(const std::string& path, const checks::RunRecord& r) {
  if (!WriteText(path, wire::HistoryText(r))) return false;
  std::printf("  broker history written to %s\n", path.c_str());
  return true;
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

struct RealArgs {
  std::vector<std::string> files;  // the one scenario file
  wire::RealOptions options;
  int64_t trials = 1, jobs = 1;
  bool until_failure = false;
  std::string cluster = "sim";  // --cluster: sim, or kafka@VERSION
  std::string trace_out, history_out, events_out, out_dir, junit_out;
};

// Wall time, for the JUnit report only.
using WallClock = std::chrono::steady_clock;  // determinism-lint: allow (reported only)

double SecondsSince(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// What real --junit says of one trial: a case "FILE trial T" (its class, the
// client's, is set once the client has said its name), passing iff the
// verdict is pass; a client failure or a harness error (the client or the
// harness could not run the trial) is an <error>, any other verdict a
// <failure>. Its text is the trial's report as --out keeps it, and the
// command that runs trials until one fails.
junit::Case TrialCase(const std::string& file, int64_t t, const wire::RealOutput& r,
                      const std::string& line, const RealArgs& a) {
  PRODSIM_ASSERT(t >= 1);
  junit::Case c{.name = absl::StrCat(file, " trial ", t),
                .seconds = std::max(0.0, static_cast<double>(r.wall.nanos()) / 1e9),
                .out = line};
  if (r.run.verdict == Verdict::kPass) return c;
  const bool error =
      r.run.verdict == Verdict::kClientFailure || r.run.verdict == Verdict::kHarnessError;
  c.outcome = error ? junit::Outcome::kError : junit::Outcome::kFailure;
  c.message = scenarios::VerdictText(r.run);
  c.type = std::string(scenarios::VerdictName(r.run.verdict));
  c.text = absl::StrCat(wire::TrialReport(r.run, ""),
                        "again (each trial a sample of real timing): ", "prodsim real ",
                        ShellWord(file), " --client=", ShellWord(a.options.client),
                        a.cluster == "sim" ? "" : " --cluster=" + ShellWord(a.cluster),
                        " --trials=", a.trials, " --until-failure");
  return c;
}

std::string Seconds(sim::Duration d) {
  return absl::StrFormat("%.1f", static_cast<double>(d.nanos()) / 1e9);
}

// --cluster: nothing for the simulated cluster; for kafka@VERSION the
// scenario checked against what a real cluster can run and the cluster's
// supervisor found (or built). 0, or the exit code after a one-line error.
int RealClusterOf(const RealArgs& a, const Scenario& s, std::optional<wire::RealCluster>* out) {
  absl::StatusOr<std::optional<std::string>> version = wire::ParseClusterFlag(a.cluster);
  if (!version.ok()) return Usage(std::string(version.status().message()));
  if (!version->has_value()) return 0;
  if (!a.trace_out.empty()) {
    return Usage("--trace is the simulated world's; a real cluster's trial has none");
  }
  if (absl::Status st = wire::CheckRealCluster(s); !st.ok()) {
    std::fprintf(stderr, "prodsim: %s: not on a real cluster: %s\n", a.files[0].c_str(),
                 std::string(st.message()).c_str());
    return kExitNotOnRealCluster;
  }
  absl::StatusOr<std::string> launcher = wire::FindKafkaCluster(**version);
  if (!launcher.ok()) {
    std::fprintf(stderr, "prodsim: --cluster=%s: %s\n", a.cluster.c_str(),
                 std::string(launcher.status().message()).c_str());
    return kExitNoRealCluster;
  }
  *out = wire::RealCluster{**version, *launcher};
  return 0;
}

int RealCommand(RealArgs& a) {
  const std::vector<std::string>& files = a.files;
  wire::RealOptions& options = a.options;
  const int64_t trials = a.trials, jobs = a.jobs;
  const bool until_failure = a.until_failure;
  const std::string &trace_out = a.trace_out, &history_out = a.history_out,
                    &events_out = a.events_out, &out_dir = a.out_dir;
  if (files.size() != 1) return Usage("real takes exactly one scenario file");
  if (options.client.empty()) return Usage("real needs --client=librdkafka or --client=CMD");
  options.record_trace = !trace_out.empty();
  Scenario s;
  int code = 0;
  if (!LoadOrSay(files[0], &s, &code)) return code;
  if (absl::StatusOr<wire::Driver> d = wire::FindDriver(options.client); !d.ok()) {
    std::fprintf(stderr, "prodsim: %s\n", std::string(d.status().message()).c_str());
    return kExitUsage;
  }
  std::optional<wire::RealCluster> cluster;
  if (int code_cluster = RealClusterOf(a, s, &cluster); code_cluster != 0) return code_cluster;
  if (!out_dir.empty() && !MakeDirectory(out_dir)) return kExitCantCreate;
  if (!a.junit_out.empty() && !junit::Claim(a.junit_out)) return kExitCantCreate;
  const std::string& file = files[0];
  const auto started = WallClock::now();
  std::vector<junit::Case> cases;

  // verdict text -> count, and the first trial that had it
  absl::btree_map<std::string, std::pair<int64_t, int64_t>> seen;
  absl::btree_map<Verdict, int64_t> by_verdict;
  int64_t ran = 0;
  std::string client;
  double load_sum = 0, cpu_sum = 0;
  int64_t load_n = 0;
  int exit_now = -1;
  // Trials on --jobs threads, consumed in trial order.
  scenarios::RunInOrder(
      static_cast<unsigned>(jobs), static_cast<uint64_t>(trials),
      [&](uint64_t) {
        return cluster ? wire::RunRealCluster(s, options, *cluster) : wire::RunReal(s, options);
      },
      [&](uint64_t index, wire::RealOutput& r) {
        const int64_t t = static_cast<int64_t>(index) + 1;
        ++ran;
        if (r.load_before >= 0) load_sum += r.load_before, ++load_n;
        cpu_sum += static_cast<double>(r.client_cpu.nanos()) / 1e9;
        if (r.run.record.client && !r.run.record.client->name.empty()) {
          client = r.run.record.client->name;
        }
        if (t == 1 && !r.ignored_settings.empty()) {
          std::string list;
          for (const std::string& n : r.ignored_settings)
            absl::StrAppend(&list, list.empty() ? "" : ", ", n);
          std::printf(
              "%s: note: %s has no equivalent of producer %s (not passed; clients/README.md)\n",
              file.c_str(), r.client.c_str(), list.c_str());
        }
        // How a real cluster's trial differs from the simulation's run.
        for (size_t i = 0; t == 1 && i < r.notes.size(); ++i) {
          std::printf("%s: note: %s\n", file.c_str(), r.notes[i].c_str());
        }
        const std::string v = scenarios::VerdictText(r.run);
        auto [it, inserted] = seen.try_emplace(v, 0, t);
        ++it->second.first;
        ++by_verdict[r.run.verdict];
        const std::string line =
            TrialLine(file, t, trials, r, client.empty() ? options.client : client);
        std::printf("%s\n", line.c_str());
        if (cluster) {
          std::printf("  cluster: Kafka %s, started in %ss, stopped and read in %ss\n",
                      cluster->version.c_str(), Seconds(r.cluster_start).c_str(),
                      Seconds(r.cluster_dump).c_str());
        }
        if (!a.junit_out.empty()) cases.push_back(TrialCase(file, t, r, line, a));
        if (r.run.verdict != Verdict::kPass) {
          if (inserted) PrintViolations(r.run, 4);
          if (!out_dir.empty()) {
            const std::string base = absl::StrCat(out_dir, "/trial-", t);
            if (!WriteText(base + ".txt", wire::TrialReport(r.run, line)) ||
                !WriteText(base + "-history.txt", wire::HistoryText(r.run.record))) {
              exit_now = kExitCantCreate;
              return false;
            }
            std::printf("    kept in %s.txt and %s-history.txt\n", base.c_str(), base.c_str());
          }
        }
        if ((!trace_out.empty() && !WriteText(trace_out, r.run.trace)) ||
            (!history_out.empty() && !WriteText(history_out, wire::HistoryText(r.run.record))) ||
            (!events_out.empty() && r.run.record.client &&
             !WriteText(events_out, wire::EventsText(*r.run.record.client)))) {
          exit_now = kExitCantCreate;
          return false;
        }
        std::fflush(stdout);
        if (r.run.verdict == Verdict::kHarnessError) return false;  // the next would be the same
        return !(until_failure && r.run.verdict != Verdict::kPass);
      });
  if (exit_now >= 0) return exit_now;
  std::string dist;
  for (const auto& [v, n] : seen) {
    absl::StrAppend(&dist, dist.empty() ? "" : ", ", v, " ", n.first, "/", ran);
  }
  std::printf(
      "%s: real %s over %lld trial(s), a distribution (real timing is not "
      "reproducible): %s\n",
      file.c_str(), client.empty() ? options.client.c_str() : client.c_str(),
      static_cast<long long>(ran), dist.c_str());
  std::printf("  %s\n", MachineNote(load_n > 0 ? load_sum / static_cast<double>(load_n) : -1,
                                    cpu_sum / static_cast<double>(ran))
                            .c_str());
  if (!trace_out.empty())
    std::printf("  trace of the last trial written to %s\n", trace_out.c_str());
  if (!history_out.empty()) {
    std::printf("  broker history of the last trial written to %s\n", history_out.c_str());
  }
  if (!events_out.empty()) {
    std::printf("  the client's event lines of the last trial written to %s\n", events_out.c_str());
  }
  Verdict worst = Verdict::kPass;
  int64_t most = 0;
  for (const auto& [v, n] : by_verdict) {
    if (v != Verdict::kPass && n > most) {
      worst = v;
      most = n;
    }
  }
  if (!a.junit_out.empty()) {
    const std::string name = client.empty() ? options.client : client;
    for (junit::Case& c : cases) c.classname = absl::StrCat("prodsim.real.", name);
    if (!junit::WriteFile(a.junit_out, {junit::Suite{.name = absl::StrCat("prodsim real ", name),
                                                     .seconds = SecondsSince(started),
                                                     .cases = std::move(cases)}})) {
      return kExitCantCreate;
    }
  }
  return scenarios::ExitCode(worst);
}

struct ServeArgs {
  std::vector<std::string> files;  // the one scenario file
  std::string history_out = "serve-history.txt";
};

int ServeCommand(const ServeArgs& a) {
  const std::vector<std::string>& files = a.files;
  const std::string& history_out = a.history_out;
  if (files.size() != 1) return Usage("serve takes exactly one scenario file");
  Scenario s;
  int code = 0;
  if (!LoadOrSay(files[0], &s, &code)) return code;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  wire::ServeOptions options;
  options.on_ready = [&](const std::string& bootstrap) {
    std::printf("bootstrap: %s\n", bootstrap.c_str());
    std::printf("serving %s until SIGINT or its limits.time; faults apply from now\n",
                files[0].c_str());
    std::fflush(stdout);
  };
  options.stop = [] { return g_stop != 0; };
  options.say = [](const std::string& note) {
    std::fprintf(stderr, "prodsim serve: %s\n", note.c_str());
  };
  const RunOutput out = wire::Serve(s, options);
  std::printf("%s: %s t=%ss appends=%zu responses=%zu\n", files[0].c_str(),
              scenarios::VerdictText(out).c_str(), out.record.run.end_time.ToString().c_str(),
              out.record.kafka.appends.size(), out.record.kafka.responses.size());
  PrintViolations(out, 4);
  for (const kafka::NoteEvent& n : out.record.kafka.notes) {
    std::printf("  note t=%ss: %s\n", n.at.ToString().c_str(), n.text.c_str());
  }
  if (!WriteHistory(history_out, out.record)) return kExitCantCreate;
  return scenarios::ExitCode(out.verdict);
}

}  // namespace

void DeclareReal(CommandLine* cl) {
  auto a = std::make_shared<RealArgs>();
  a->options.client.clear();
  Flags& f =
      cl->Add("real", "run a scenario against a real client over the wire",
              "Serves the scenario's cluster on 127.0.0.1 (one port per broker), applies its\n"
              "faults at their `at` after the start, runs a real client against it as a child\n"
              "process (a driver: clients/README.md) and runs the checks on what the client\n"
              "reported and the brokers recorded. Real timing is not reproducible: each trial\n"
              "is one sample, and --trials prints the distribution of verdicts. A client\n"
              "still running at the bound is killed (client-hung); the scenario's limits.time\n"
              "and liveness grace bound a trial too. Each trial's line says the load before\n"
              "it and the client's CPU time. With --cluster=kafka@VERSION the cluster is real:\n"
              "each trial starts that Kafka's brokers (wire/kafka) behind a fault proxy per\n"
              "broker, applies the faults there (wire/real_cluster.h says how each kind is\n"
              "done; a file with a kind that has no real form is refused, exit 78), reads\n"
              "every replica's log at the end and runs the same checks. Exit: 0 if every\n"
              "trial passed, else the code of the most frequent failing verdict (5:\n"
              "client-failure); 69 if the real cluster cannot be built.",
              [a](const Flags&) { return RealCommand(*a); });
  f.Files(&a->files, "FILE", "the scenario file");
  f.Text("--client", &a->options.client, "NAME[@VERSION]|CMD",
         "the client: a driver's name (librdkafka, sarama, kafkajs, ...) or a command "
         "(required)");
  f.Text("--cluster", &a->cluster, "sim|kafka@VERSION",
         "the cluster: sim, the simulated one (the default), or kafka@VERSION, real Kafka brokers "
         "of that version (e.g. kafka@2.6.2; built on first use by wire/kafka/build.sh: java and "
         "mvn)");
  f.Count("--trials", &a->trials, 1, kTrialsMax, "run N trials");
  f.Count("--jobs", &a->jobs, 1, 1024,
          "run N trials at once (each its own ports and process group), printed in trial "
          "order: more load on the machine, see prodsim bench --wire-jobs");
  f.Switch("--until-failure", &a->until_failure, "stop at the first trial that does not pass");
  f.Duration("--bound", &a->options.bound, "cap each trial");
  f.Text("--trace", &a->trace_out, "OUT", "write the last trial's trace");
  f.Text("--history", &a->history_out, "OUT",
         "write the last trial's broker history (appends, responses, faults, notes and the "
         "client's event lines, then the final logs, one line each)");
  f.Text("--events", &a->events_out, "OUT", "write the last trial's client event lines alone");
  f.Text("--out", &a->out_dir, "DIR",
         "keep every failing trial: DIR/trial-T.txt (its verdict, every violation with all "
         "witnesses, the signature's chain) and DIR/trial-T-history.txt");
  f.Text("--junit", &a->junit_out, "OUT.xml",
         "write a JUnit XML report for CI systems: a test case per trial, failing as its "
         "verdict does (client failures and harness errors as errors), with its report");

  auto s = std::make_shared<ServeArgs>();
  Flags& serve =
      cl->Add("serve", "serve a scenario's cluster for your own application",
              "Prints the bootstrap address, applies the faults, and on SIGINT/SIGTERM or at\n"
              "the scenario's limits.time (the liveness grace does not end it: your\n"
              "application decides how long it runs) runs the checks that need no client\n"
              "outcomes (log-sequences-contiguous, no-duplicates) over the broker history,\n"
              "prints what it did not serve (malformed frames, records without a prodsim-id\n"
              "header, limits reached: counted, they fail no check), and writes that history.\n"
              "A limit reached is also said on stderr when it first happens.",
              [s](const Flags&) { return ServeCommand(*s); });
  serve.Files(&s->files, "FILE", "the scenario file");
  serve.Text("--history", &s->history_out, "OUT", "where to write the broker history");
}

}  // namespace cli
