#include "cli/common.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checks/check.h"
#include "producer/profile.h"
#include "scenarios/parallel.h"
#include "sim/core/scheduler.h"
#include "sim/kafka/wire/compression.h"

namespace cli {

bool LoadOrSay(const std::string& path, scenarios::Scenario* s, int* code) {
  absl::StatusOr<scenarios::Scenario> parsed = scenarios::LoadScenario(path);
  if (parsed.ok()) {
    *s = std::move(*parsed);
    return true;
  }
  std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
  *code = absl::IsNotFound(parsed.status()) ? kExitNoFile : kExitBadFile;
  return false;
}

void PrintViolations(const scenarios::RunOutput& out, int indent) {
  if (out.verdict == scenarios::Verdict::kHarnessError) {
    std::printf("%*sharness error: %s\n", indent, "", out.harness_error.c_str());
    return;
  }
  for (const checks::Violation& v : out.violations) {
    std::printf("%*s%s: %s\n", indent, "", v.check.c_str(), v.explanation.c_str());
    for (size_t i = 0; i < v.witnesses.size() && i < 3; ++i) {
      std::printf("%*s%s\n", indent + 2, "", v.witnesses[i].c_str());
    }
  }
}

void PrintSignature(const scenarios::RunOutput& out, int indent) {
  if (out.verdict == scenarios::Verdict::kPass || out.violations.empty()) return;
  const checks::Signature& sig = out.signature;
  std::printf("%*ssignature: %s%s\n", indent, "", sig.Text().c_str(),
              sig.classified() ? "; how it came about:" : " (no rule explains it; the violation:)");
  for (const std::string& line : sig.chain) std::printf("%*s%s\n", indent + 2, "", line.c_str());
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
