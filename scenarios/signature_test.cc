// The failure signatures end to end: every scenario file of a known finding
// and every rule's own scenario (scenarios/signatures/) reaches the
// signature its [expect] names, which is never "unclassified"; every rule
// that checks/signature.cc has is exercised by at least one such file.
#include "checks/signature.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "scenarios/shrink.h"

namespace scenarios {
namespace {

// Model scenario files: known findings (not known/real, which are for a
// real client) and the rules' own scenarios.
std::vector<std::filesystem::path> SignatureFiles() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root(PRODSIM_SOURCE_DIR);
  for (const char* dir : {"scenarios/known", "scenarios/known/mock", "scenarios/signatures"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Signatures, EveryKnownFindingAndRuleScenarioHasItsSignature) {
  const std::vector<std::filesystem::path> files = SignatureFiles();
  ASSERT_GE(files.size(), 10u);
  std::set<std::string> seen;
  for (const std::filesystem::path& f : files) {
    SCOPED_TRACE(f.string());
    absl::StatusOr<Scenario> s = LoadScenario(f.string());
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE(s->expect.has_value());
    const std::string& expected = s->expect->signature;
    ASSERT_FALSE(expected.empty()) << "no [expect] signature";
    EXPECT_NE(expected, checks::kUnclassified);
    const RunOutput out = RunScenario(*s);
    EXPECT_EQ(SignatureName(out), expected);
    EXPECT_TRUE(out.signature.classified());
    // The causal chain ends at the violation and has what led to it.
    EXPECT_GE(out.signature.chain.size(), 2u);
    seen.insert(expected.substr(0, expected.find('@')));
    // The other profiles' entries too, where they fail.
    for (const ProfileExpectSpec& p : s->expect->profiles) {
      if (p.signature.empty()) continue;
      const RunOutput other = RunScenario(WithProfile(*s, p.profile));
      EXPECT_EQ(SignatureName(other), p.signature) << p.profile;
      seen.insert(p.signature.substr(0, p.signature.find('@')));
    }
  }
  for (const checks::MechanismInfo& m : checks::Mechanisms()) {
    if (m.real_client) continue;  // shown by its wire test (wire/e2e_test.sh)
    EXPECT_TRUE(seen.contains(std::string(m.mechanism)))
        << "no scenario file expects a signature of mechanism " << m.mechanism;
  }
}

// A failure no rule explains is reported as unclassified, with the
// violation as its chain: never a guess.
TEST(Signatures, UnexplainedFailureIsUnclassified) {
  checks::RunRecord r;
  r.idempotent = true;
  checks::Violation v;
  v.check = "log-sequences-contiguous";
  v.explanation = "made up";
  v.witnesses = {"t/0 offset=0 seq=3"};
  v.subject.topic = "t";
  v.subject.partition = 0;
  v.subject.ids = {7};
  const checks::Signature sig = checks::Classify(r, v);
  EXPECT_FALSE(sig.classified());
  EXPECT_EQ(sig.Text(), "unclassified#" + sig.fingerprint);
  EXPECT_EQ(sig.fingerprint.size(), 6u);
  EXPECT_EQ(checks::MechanismOf(sig.Text()), "unclassified");
  ASSERT_EQ(sig.chain.size(), 1u);
  EXPECT_NE(sig.chain[0].find("t/0 offset=0 seq=3"), std::string::npos);
}

// An unexplained failure's fingerprint is its shape: the same whatever the
// ids, times, sequences, brokers and faults, and another for another check
// or other steps of the subject's message.
TEST(Signatures, FingerprintIsTheShapeNotTheNumbers) {
  const auto record = [](uint64_t id, int64_t ms, int32_t broker, const std::string& fault) {
    checks::RunRecord r;
    r.idempotent = true;
    sarama::ProducerStep send;
    send.at = sim::Time() + sim::Duration::Millis(ms);
    send.kind = sarama::StepKind::kSend;
    send.broker = broker;
    send.topic = "t";
    send.partition = 0;
    send.first_seq = 3;
    send.epoch = 0;
    send.ids = {id};
    r.producer.steps.push_back(send);
    sarama::ProducerStep answer = send;
    answer.kind = sarama::StepKind::kAnswer;
    answer.at = send.at + sim::Duration::Millis(2);
    answer.code = kafka::ErrorCode::NOT_LEADER_OR_FOLLOWER;
    r.producer.steps.push_back(answer);
    r.producer.steps.push_back(answer);  // a repeat: collapsed
    r.kafka.faults.push_back({sim::Time() + sim::Duration::Millis(1),
                              absl::StrCat(fault, " broker ", broker), false});
    return r;
  };
  const auto violation = [](const std::string& check, uint64_t id, int64_t ms) {
    checks::Violation v;
    v.check = check;
    v.subject.topic = "t";
    v.subject.partition = 0;
    v.subject.ids = {id};
    v.subject.at = sim::Time() + sim::Duration::Millis(ms);
    return v;
  };
  const std::string a = checks::UnclassifiedFingerprint(
      record(7, 10, 0, "move_leader"), violation("log-sequences-contiguous", 7, 50));
  const std::string b = checks::UnclassifiedFingerprint(
      record(91, 300, 2, "move_leader"), violation("log-sequences-contiguous", 91, 900));
  EXPECT_EQ(a, b) << checks::UnclassifiedShape(record(7, 10, 0, "move_leader"),
                                               violation("log-sequences-contiguous", 7, 50));
  EXPECT_NE(a, checks::UnclassifiedFingerprint(record(7, 10, 0, "move_leader"),
                                               violation("acked-are-durable", 7, 50)));
  EXPECT_EQ(a, checks::UnclassifiedFingerprint(record(7, 10, 0, "crash_broker"),
                                               violation("log-sequences-contiguous", 7, 50)));
  checks::RunRecord no_answer = record(7, 10, 0, "move_leader");
  no_answer.producer.steps.resize(1);
  EXPECT_NE(a, checks::UnclassifiedFingerprint(no_answer,
                                               violation("log-sequences-contiguous", 7, 50)));
}

// Shrinking keeps the signature, not only the verdict and check.
TEST(Signatures, ShrinkKeepsTheSignature) {
  absl::StatusOr<Scenario> s = LoadScenario(
      (std::filesystem::path(PRODSIM_SOURCE_DIR) / "scenarios/known/sarama-2803-out-of-order.toml")
          .string());
  ASSERT_TRUE(s.ok()) << s.status();
  ShrinkOptions options;
  options.max_runs = 200;
  const ShrinkResult r = Shrink(*s, options);
  ASSERT_TRUE(r.reproduced);
  EXPECT_EQ(r.signature, s->expect->signature);
  ASSERT_TRUE(r.scenario.expect.has_value());
  EXPECT_EQ(r.scenario.expect->signature, s->expect->signature);
}

}  // namespace
}  // namespace scenarios
