#include "cli/real.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scenarios/parallel.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "cli/common.h"
#include "wire/client_lines.h"
#include "wire/drivers.h"
#include "wire/history_text.h"
#include "wire/real_world.h"

namespace cli {
namespace {

using scenarios::RunOutput;
using scenarios::Scenario;
using scenarios::Verdict;

constexpr int kTrialsMax = 10000;

int Usage(const std::string& error) {
  std::fprintf(stderr, "prodsim: %s\n%s", error.c_str(), kRealUsage);
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

}  // namespace

const char* const kRealUsage =
    "usage: prodsim real FILE --client=librdkafka|CMD [--trials=N] [--until-failure]\n"
    "                    [--bound=DURATION] [--trace=OUT] [--history=OUT] [--events=OUT]\n"
    "                    [--out=DIR] [--jobs=N]\n"
    "       prodsim serve FILE [--history=OUT]\n"
    "real: serves the scenario's cluster on 127.0.0.1 (one port per broker), applies\n"
    "  its faults at their `at` after the start, runs a real client against it as a\n"
    "  child process (a driver: clients/README.md) and runs the checks on what the\n"
    "  client reported and the brokers recorded. Real timing is not reproducible:\n"
    "  each trial is one sample, and --trials=N (default 1) prints the distribution\n"
    "  of verdicts over N trials. --until-failure stops at the first trial that does\n"
    "  not pass. --bound caps each trial (default 120s; the scenario's limits.time\n"
    "  and liveness grace bound it too); a client still running then is killed\n"
    "  (client-hung). Exit: 0 if every trial passed, else the code of the most\n"
    "  frequent failing verdict (5: client-failure). --trace, --history and\n"
    "  --events write the last trial's trace, its broker history (appends,\n"
    "  responses, faults, notes and the client's event lines, then the final\n"
    "  logs, one line each) and the client's event lines alone. --out=DIR keeps\n"
    "  every failing trial: DIR/trial-T.txt (its verdict, every violation with\n"
    "  all witnesses, the signature's chain) and DIR/trial-T-history.txt. Each\n"
    "  trial's line says the load before it and the client's CPU time. --jobs=N\n"
    "  runs N trials at once (each its own ports and process group; default 1),\n"
    "  printed in trial order: more load on the machine, see prodsim bench\n"
    "  --wire-jobs.\n"
    "serve: only serves the scenario's cluster, for your own application: prints\n"
    "  the bootstrap address, applies the faults, and on SIGINT/SIGTERM or at the\n"
    "  scenario's limits.time (the liveness grace does not end it: your\n"
    "  application decides how long it runs) runs the checks that need no client\n"
    "  outcomes (log-sequences-contiguous, no-duplicates) over the broker history,\n"
    "  prints what it did not serve (malformed frames, records without a\n"
    "  prodsim-id header, limits reached: counted, they fail no check), and\n"
    "  writes that history to --history=OUT (default: serve-history.txt). A limit\n"
    "  reached is also said on stderr when it first happens.\n";

int RealCommand(int argc, char** argv) {
  std::vector<std::string> files;
  wire::RealOptions options;
  options.client.clear();
  int64_t trials = 1, jobs = 1;
  bool until_failure = false;
  std::string trace_out, history_out, events_out, out_dir;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--history=")) {
      history_out = a.substr(10);
      if (history_out.empty()) return Usage("--history needs a file name: --history=OUT");
    } else if (absl::StartsWith(a, "--events=")) {
      events_out = a.substr(9);
      if (events_out.empty()) return Usage("--events needs a file name: --events=OUT");
    } else if (absl::StartsWith(a, "--out=")) {
      out_dir = a.substr(6);
      if (out_dir.empty()) return Usage("--out needs a directory: --out=DIR");
    } else if (absl::StartsWith(a, "--client=")) {
      options.client = a.substr(9);
      if (options.client.empty()) return Usage("--client needs librdkafka or a command");
    } else if (absl::StartsWith(a, "--trials=")) {
      if (!absl::SimpleAtoi(a.substr(9), &trials) || trials < 1 || trials > kTrialsMax) {
        return Usage(absl::StrCat("--trials takes a count from 1 to ", kTrialsMax, ": '", a, "'"));
      }
    } else if (absl::StartsWith(a, "--jobs=")) {
      if (!absl::SimpleAtoi(a.substr(7), &jobs) || jobs < 1 || jobs > 1024) {
        return Usage(absl::StrCat("--jobs takes a count from 1 to 1024: '", a, "'"));
      }
    } else if (a == "--until-failure") {
      until_failure = true;
    } else if (absl::StartsWith(a, "--bound=")) {
      if (!ParsePositiveDuration(a.substr(8), &options.bound)) {
        return Usage(absl::StrCat("--bound takes a positive duration such as 30s: '", a, "'"));
      }
    } else if (absl::StartsWith(a, "--trace=")) {
      trace_out = a.substr(8);
      if (trace_out.empty()) return Usage("--trace needs a file name: --trace=OUT");
    } else if (a == "--help" || a == "-h") {
      std::fputs(kRealUsage, stdout);
      return 0;
    } else if (absl::StartsWith(a, "-")) {
      return Usage(absl::StrCat("unknown flag '", a, "'"));
    } else {
      files.push_back(a);
    }
  }
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
  if (!out_dir.empty() && !MakeDirectory(out_dir)) return kExitCantCreate;
  const std::string& file = files[0];

  // verdict text -> count, and the first trial that had it
  absl::btree_map<std::string, std::pair<int64_t, int64_t>> seen;
  absl::btree_map<Verdict, int64_t> by_verdict;
  int64_t ran = 0;
  std::string client;
  double load_sum = 0, cpu_sum = 0;
  int64_t load_n = 0;
  int exit_now = -1;
  // Trials on --jobs threads, consumed in trial order.
  scenarios::RunInOrder(static_cast<unsigned>(jobs), static_cast<uint64_t>(trials),
                        [&](uint64_t) { return wire::RunReal(s, options); },
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
      for (const std::string& n : r.ignored_settings) absl::StrAppend(&list, list.empty() ? "" : ", ", n);
      std::printf("%s: note: %s has no equivalent of producer %s (not passed; clients/README.md)\n",
                  file.c_str(), r.client.c_str(), list.c_str());
    }
    const std::string v = scenarios::VerdictText(r.run);
    auto [it, inserted] = seen.try_emplace(v, 0, t);
    ++it->second.first;
    ++by_verdict[r.run.verdict];
    const std::string line = TrialLine(file, t, trials, r, client.empty() ? options.client : client);
    std::printf("%s\n", line.c_str());
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
  std::printf("%s: real %s over %lld trial(s), a distribution (real timing is not "
              "reproducible): %s\n",
              file.c_str(), client.empty() ? options.client.c_str() : client.c_str(),
              static_cast<long long>(ran), dist.c_str());
  std::printf("  %s\n", MachineNote(load_n > 0 ? load_sum / static_cast<double>(load_n) : -1,
                                    cpu_sum / static_cast<double>(ran))
                            .c_str());
  if (!trace_out.empty()) std::printf("  trace of the last trial written to %s\n", trace_out.c_str());
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
  return scenarios::ExitCode(worst);
}

int ServeCommand(int argc, char** argv) {
  std::vector<std::string> files;
  std::string history_out = "serve-history.txt";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--history=")) {
      history_out = a.substr(10);
      if (history_out.empty()) return Usage("--history needs a file name: --history=OUT");
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(kRealUsage, stdout);
      return 0;
    }
    if (absl::StartsWith(a, "-")) return Usage(absl::StrCat("unknown flag '", a, "'"));
    files.push_back(a);
  }
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

}  // namespace cli
