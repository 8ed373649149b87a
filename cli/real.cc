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
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "cli/common.h"
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

std::string Sv(std::string_view v) { return std::string(v); }

// The brokers' history, one line per event in time order (faults, appends,
// truncations, responses, notes), then the final committed logs.
std::string HistoryText(const kafka::History& h) {
  std::vector<std::pair<sim::Time, std::string>> lines;
  for (const kafka::FaultEvent& f : h.faults) {
    lines.emplace_back(f.at, absl::StrCat(f.healed ? "heal " : "fault ", f.description));
  }
  for (const kafka::AppendEvent& a : h.appends) {
    std::string ids;
    for (uint64_t id : a.record_ids) absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
    lines.emplace_back(a.at, absl::StrCat("broker-", a.broker.value, a.leader ? " append " : " copy ",
                                          a.tp.ToString(), " offset=", a.base_offset.value,
                                          " pid=", a.producer_id.value, " epoch=", a.epoch.value,
                                          " seq=", a.first_seq.value, "..", a.last_seq.value,
                                          " ids=", ids));
  }
  for (const kafka::TruncateEvent& t : h.truncations) {
    lines.emplace_back(t.at, absl::StrCat("broker-", t.broker.value, " truncate ", t.tp.ToString(),
                                          " to offset ", t.new_end.value));
  }
  for (const kafka::ResponseEvent& r : h.responses) {
    lines.emplace_back(
        r.at, absl::StrCat("broker-", r.broker.value, " ", Sv(kafka::ApiKeyName(r.api)),
                           " response corr=", r.correlation_id, " ", r.tp.ToString(), " ",
                           kafka::ErrorCodeName(r.error), " offset=", r.base_offset.value,
                           r.fate == kafka::ResponseFate::kSent
                               ? std::string()
                               : absl::StrCat(" (", Sv(kafka::ResponseFateName(r.fate)), ")")));
  }
  for (const kafka::NoteEvent& n : h.notes) lines.emplace_back(n.at, absl::StrCat("note ", n.text));
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [at, text] : lines) absl::StrAppend(&out, "t=", at.ToString(), "s ", text, "\n");
  for (const auto& [tp, entries] : h.final_logs) {
    for (const kafka::LogEntry& e : entries) {
      std::string ids;
      for (uint64_t id : e.record_ids) absl::StrAppend(&ids, ids.empty() ? "" : ",", id);
      absl::StrAppend(&out, "final ", tp.ToString(), " offset=", e.base_offset.value,
                      " pid=", e.producer_id.value, " epoch=", e.epoch.value,
                      " seq=", e.first_seq.value, " ids=", ids, "\n");
    }
  }
  return out;
}

// Writes the history; false (with a line on stderr) if it cannot.
bool WriteHistory(const std::string& path, const kafka::History& h) {
  std::ofstream f(path);
  f << HistoryText(h);
  if (!f) {
    std::fprintf(stderr, "prodsim: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("  broker history written to %s\n", path.c_str());
  return true;
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

}  // namespace

const char* const kRealUsage =
    "usage: prodsim real FILE --client=librdkafka|CMD [--trials=N] [--until-failure]\n"
    "                    [--bound=DURATION] [--trace=OUT] [--history=OUT]\n"
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
    "  frequent failing verdict (5: client-failure). --trace and --history write\n"
    "  the last trial's trace and broker history (appends, responses, faults,\n"
    "  notes, final logs, one line each).\n"
    "serve: only serves the scenario's cluster, for your own application: prints\n"
    "  the bootstrap address, applies the faults, and on SIGINT/SIGTERM (or at the\n"
    "  scenario's limits.time) runs the checks that need no client outcomes\n"
    "  (log-sequences-contiguous, no-duplicates) over the broker history, and\n"
    "  writes that history to --history=OUT (default: serve-history.txt).\n";

int RealCommand(int argc, char** argv) {
  std::vector<std::string> files;
  wire::RealOptions options;
  options.client.clear();
  int64_t trials = 1;
  bool until_failure = false;
  std::string trace_out, history_out;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (absl::StartsWith(a, "--history=")) {
      history_out = a.substr(10);
      if (history_out.empty()) return Usage("--history needs a file name: --history=OUT");
    } else if (absl::StartsWith(a, "--client=")) {
      options.client = a.substr(9);
      if (options.client.empty()) return Usage("--client needs librdkafka or a command");
    } else if (absl::StartsWith(a, "--trials=")) {
      if (!absl::SimpleAtoi(a.substr(9), &trials) || trials < 1 || trials > kTrialsMax) {
        return Usage(absl::StrCat("--trials takes a count from 1 to ", kTrialsMax, ": '", a, "'"));
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

  // verdict text -> count, and the first trial that had it
  absl::btree_map<std::string, std::pair<int64_t, int64_t>> seen;
  absl::btree_map<Verdict, int64_t> by_verdict;
  int64_t ran = 0;
  std::string client;
  kafka::History last_history;
  for (int64_t t = 1; t <= trials; ++t) {
    const wire::RealOutput r = wire::RunReal(s, options);
    ++ran;
    if (client.empty() && r.run.record.client) client = r.run.record.client->name;
    if (t == 1 && !r.ignored_settings.empty()) {
      std::string list;
      for (const std::string& n : r.ignored_settings) absl::StrAppend(&list, list.empty() ? "" : ", ", n);
      std::printf("%s: note: %s has no equivalent of producer %s (not passed; clients/README.md)\n",
                  files[0].c_str(), r.client.c_str(), list.c_str());
    }
    const std::string v = scenarios::VerdictText(r.run);
    auto [it, inserted] = seen.try_emplace(v, 0, t);
    ++it->second.first;
    ++by_verdict[r.run.verdict];
    const sim::RunResult& rr = r.run.record.run;
    std::printf("%s: trial %lld/%lld: %s client=%s t=%ss wall=%.2fs connections=%llu acked=%zu "
                "errors=%zu\n",
                files[0].c_str(), static_cast<long long>(t), static_cast<long long>(trials),
                v.c_str(), client.empty() ? options.client.c_str() : client.c_str(),
                rr.end_time.ToString().c_str(), static_cast<double>(r.wall.nanos()) / 1e9,
                static_cast<unsigned long long>(r.connections), r.run.record.producer.acks.size(),
                r.run.record.producer.errors.size());
    if (inserted && r.run.verdict != Verdict::kPass) PrintViolations(r.run, 4);
    if (!trace_out.empty()) {
      std::ofstream f(trace_out);
      f << r.run.trace;
    }
    if (!history_out.empty()) last_history = r.run.record.kafka;
    std::fflush(stdout);
    if (r.run.verdict == Verdict::kHarnessError) break;  // the next trial would be the same
    if (until_failure && r.run.verdict != Verdict::kPass) break;
  }
  std::string dist;
  for (const auto& [v, n] : seen) {
    absl::StrAppend(&dist, dist.empty() ? "" : ", ", v, " ", n.first, "/", ran);
  }
  std::printf("%s: real %s over %lld trial(s), a distribution (real timing is not "
              "reproducible): %s\n",
              files[0].c_str(), client.empty() ? options.client.c_str() : client.c_str(),
              static_cast<long long>(ran), dist.c_str());
  if (!trace_out.empty()) std::printf("  trace of the last trial written to %s\n", trace_out.c_str());
  if (!history_out.empty() && !WriteHistory(history_out, last_history)) return kExitCantCreate;
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
  const RunOutput out = wire::Serve(s, options);
  std::printf("%s: %s t=%ss appends=%zu responses=%zu\n", files[0].c_str(),
              scenarios::VerdictText(out).c_str(), out.record.run.end_time.ToString().c_str(),
              out.record.kafka.appends.size(), out.record.kafka.responses.size());
  PrintViolations(out, 4);
  for (const kafka::NoteEvent& n : out.record.kafka.notes) {
    std::printf("  note t=%ss: %s\n", n.at.ToString().c_str(), n.text.c_str());
  }
  if (!WriteHistory(history_out, out.record.kafka)) return kExitCantCreate;
  return scenarios::ExitCode(out.verdict);
}

}  // namespace cli
