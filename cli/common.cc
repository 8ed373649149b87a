#include "cli/common.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/assert.h"
#include "checks/check.h"
#include "producer/profile.h"
#include "scenarios/parallel.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/wire/compression.h"

namespace cli {

bool LoadOrSay(const std::string& path, scenarios::Scenario* s, int* code, std::string* said) {
  absl::StatusOr<scenarios::Scenario> parsed = scenarios::LoadScenario(path);
  if (parsed.ok()) {
    *s = std::move(*parsed);
    return true;
  }
  const std::string line(parsed.status().message());
  std::fprintf(stderr, "%s\n", line.c_str());
  if (said != nullptr) *said = line;
  *code = absl::IsNotFound(parsed.status()) ? kExitNoFile : kExitBadFile;
  return false;
}

std::string ViolationsText(const scenarios::RunOutput& out, int indent) {
  PRODSIM_ASSERT(indent >= 0);
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (out.verdict == scenarios::Verdict::kHarnessError) {
    return absl::StrCat(pad, "harness error: ", out.harness_error, "\n");
  }
  std::string text;
  for (const checks::Violation& v : out.violations) {
    absl::StrAppend(&text, pad, v.check, ": ", v.explanation, "\n");
    for (size_t i = 0; i < v.witnesses.size() && i < 3; ++i) {
      absl::StrAppend(&text, pad, "  ", v.witnesses[i], "\n");
    }
  }
  return text;
}

std::string SignatureText(const scenarios::RunOutput& out, int indent) {
  PRODSIM_ASSERT(indent >= 0);
  if (out.verdict == scenarios::Verdict::kPass || out.violations.empty()) return "";
  const std::string pad(static_cast<size_t>(indent), ' ');
  const checks::Signature& sig = out.signature;
  std::string text = absl::StrCat(
      pad, "signature: ", sig.Text(),
      sig.classified() ? "; how it came about:" : " (no rule explains it; the violation:)", "\n");
  for (const std::string& line : sig.chain) absl::StrAppend(&text, pad, "  ", line, "\n");
  return text;
}

void PrintViolations(const scenarios::RunOutput& out, int indent) {
  std::fputs(ViolationsText(out, indent).c_str(), stdout);
}

void PrintSignature(const scenarios::RunOutput& out, int indent) {
  std::fputs(SignatureText(out, indent).c_str(), stdout);
}

std::vector<std::string> ProfileNames() {
  std::vector<std::string> out;
  for (sarama::Profile p : {sarama::Profile::kSarama_1_42_1, sarama::Profile::kSaramaMain}) {
    out.emplace_back(sarama::ProfileName(p));
  }
  return out;
}

std::vector<std::string> PolicyNames() {
  std::vector<std::string> out;
  for (sim::Policy p :
       {sim::Policy::kFifo, sim::Policy::kRandom, sim::Policy::kPct, sim::Policy::kGo}) {
    out.emplace_back(sim::PolicyName(p));
  }
  return out;
}

std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_@%+=:,./-") == std::string::npos;
  if (plain) return word;
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "prodsim: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

bool MakeDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "prodsim: cannot create directory %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return false;
  }
  return true;
}

std::string TrialLine(const std::string& file, int64_t t, int64_t trials, const wire::RealOutput& r,
                      const std::string& client) {
  const sim::RunResult& rr = r.run.record.run;
  std::string line = absl::StrFormat(
      "%s: trial %d/%d: %s client=%s t=%ss wall=%.2fs cpu=%.2fs load=%.2f connections=%d "
      "acked=%d errors=%d",
      file, t, trials, scenarios::VerdictText(r.run), client, rr.end_time.ToString(),
      static_cast<double>(r.wall.nanos()) / 1e9, static_cast<double>(r.client_cpu.nanos()) / 1e9,
      r.load_before, r.connections, r.run.record.producer.acks.size(),
      r.run.record.producer.errors.size());
  // The batches the client compressed, by codec (none when it compressed
  // nothing).
  const auto& by = r.run.record.kafka.batches_by_compression;
  for (size_t c = 1; c < by.size(); ++c) {
    if (by[c] > 0) {
      absl::StrAppend(&line, " ", std::string(kafka::wire::CompressionName(static_cast<int>(c))),
                      "-batches=", by[c]);
    }
  }
  return line;
}

bool Loaded(double mean_load) {
  return mean_load >= static_cast<double>(scenarios::MachineCores());
}

std::string MachineNote(double mean_load, double mean_client_cpu_s) {
  return absl::StrFormat(
      "machine: %d cores, 1-minute load %.2f on average before the trials (%s); the client "
      "spent %.2f s of CPU per trial",
      scenarios::MachineCores(), mean_load,
      mean_load < 0       ? "unknown"
      : Loaded(mean_load) ? "loaded: real results move with load"
                          : "not loaded",
      mean_client_cpu_s);
}

}  // namespace cli
