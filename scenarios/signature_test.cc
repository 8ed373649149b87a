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
  for (const char* dir : {"scenarios/known", "scenarios/known/mock", "scenarios/known/unclassified",
                          "scenarios/signatures"}) {
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
    // known/unclassified/ records the fingerprints of families no rule
    // explains yet (unclassified#XXXXXX), so that explore --known counts
    // them known: the fingerprint must hold, and there is no chain.
    if (f.parent_path().filename() == "unclassified") {
      EXPECT_TRUE(expected.starts_with("unclassified#")) << expected;
      continue;
    }
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
    r.kafka.faults.push_back(
        {sim::Time() + sim::Duration::Millis(1), absl::StrCat(fault, " broker ", broker), false});
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
  EXPECT_NE(
      a, checks::UnclassifiedFingerprint(no_answer, violation("log-sequences-contiguous", 7, 50)));
}

// A scenario of one mechanism that another rule must not claim, on the
// profile where it fails.
struct Canary {
  std::string_view mechanism;  // the rule that must stay silent
  std::string_view file;       // under the source directory
  std::string_view profile;
};

// Each one is a failure another rule explains and this one could be taken
// in by: a lost response for the mock's dropped one, an epoch bump for a
// shutdown, an old number for an unsequenced flush and back, a regrouped
// resend for two requests in flight (a looser two-in-flight claimed it), a
// bump on another partition or one that followed a written message's
// reported failure for an epoch reset (a looser epoch-reset-in-flight
// claimed both), a hole never written for a written message reported failed.
constexpr Canary kCanaries[] = {
    {"panic", "scenarios/signatures/close-hang-no-read-timeout.toml", "sarama-main"},
    // Goroutines blocked at the end, but Close never returned: a hang, not
    // a leak past Close.
    {"goroutine-leak", "scenarios/signatures/close-hang-no-read-timeout.toml", "sarama-main"},
    {"mock-dropped-response", "scenarios/known/sarama-2803-out-of-order.toml", "sarama-1.42.1"},
    {"close-hang", "scenarios/signatures/panic-close-twice.toml", "sarama-main"},
    {"retry-without-backoff",
     "scenarios/signatures/retry-overtaken-resent-after-a-later-batch.toml", "sarama-1.42.1"},
    {"close-during-retry", "scenarios/known/sarama-main-epoch-bump-assertion.toml", "sarama-main"},
    {"unsequenced-retry-flush",
     "scenarios/signatures/epoch-reset-in-flight-old-number-in-the-batch-before.toml",
     "sarama-main"},
    {"retry-overtaken", "scenarios/signatures/two-in-flight-second-refused-after-the-first.toml",
     "sarama-1.42.1"},
    {"retry-overtaken", "scenarios/known/sarama-2803-out-of-order.toml", "sarama-1.42.1"},
    {"two-in-flight", "scenarios/known/sarama-2803-out-of-order.toml", "sarama-1.42.1"},
    {"regrouped-retry", "scenarios/signatures/two-in-flight-resent-behind-the-buffer.toml",
     "sarama-1.42.1"},
    {"epoch-reset-in-flight",
     "scenarios/signatures/unsequenced-retry-flush-stretches-the-batch-before.toml",
     "sarama-1.42.1"},
    {"epoch-reset-in-flight", "scenarios/signatures/retry-overtaken-despite-a-bump-elsewhere.toml",
     "sarama-1.42.1"},
    {"epoch-reset-in-flight", "scenarios/signatures/written-reported-failed-ack-gap.toml",
     "sarama-main"},
    {"written-reported-failed", "scenarios/signatures/two-in-flight-resent-behind-the-buffer.toml",
     "sarama-1.42.1"},
    {"written-reported-failed", "scenarios/signatures/epoch-reset-in-flight-behind-the-hole.toml",
     "sarama-main"},
    {"duplicate-of-other-acked", "scenarios/known/sarama-1.42.1-acked-but-lost.toml",
     "sarama-1.42.1"},
    // Without idempotence, a message retried after a later one was written:
    // sent twice, through retryMessages, not left in an abandoned buffer.
    {"abandoned-buffer-overtaken", "scenarios/known/sarama-2860-non-idempotent-reorder.toml",
     "sarama-1.42.1"},
};

RunOutput RunFile(std::string_view file, std::string_view profile) {
  absl::StatusOr<Scenario> s =
      LoadScenario((std::filesystem::path(PRODSIM_SOURCE_DIR) / std::string(file)).string());
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return RunOutput{};
  return RunScenario(WithProfile(*s, profile));
}

// The mechanisms the rules find for `v`, each tried alone.
std::set<std::string> Claims(const checks::RunRecord& r, const checks::Violation& v) {
  std::set<std::string> out;
  for (const checks::Signature& sig : checks::EveryRuleMatch(r, v)) out.insert(sig.mechanism);
  return out;
}

// Every rule fires only on its own chain: tried alone on the deciding
// violation of each of its canaries it does not claim it, and every rule of
// the model has a canary. (The other violations of a run may be another
// mechanism's doing, even this rule's.)
TEST(Signatures, NoRuleClaimsItsCanaries) {
  std::set<std::string> covered;
  for (const Canary& k : kCanaries) {
    SCOPED_TRACE(std::string(k.mechanism) + " on " + std::string(k.file) + " [" +
                 std::string(k.profile) + "]");
    const RunOutput out = RunFile(k.file, k.profile);
    ASSERT_FALSE(out.violations.empty());
    // The canary is another mechanism's failure, classified as such.
    EXPECT_TRUE(out.signature.classified());
    EXPECT_NE(out.signature.mechanism, k.mechanism);
    const auto deciding =
        std::find_if(out.violations.begin(), out.violations.end(),
                     [&](const checks::Violation& v) { return v.check == out.failing_check; });
    ASSERT_NE(deciding, out.violations.end());
    EXPECT_FALSE(Claims(out.record, *deciding).contains(std::string(k.mechanism)))
        << deciding->check;
    covered.insert(std::string(k.mechanism));
  }
  for (const checks::MechanismInfo& m : checks::Mechanisms()) {
    if (m.real_client) continue;
    EXPECT_TRUE(covered.contains(std::string(m.mechanism))) << "no canary for " << m.mechanism;
  }
}

// close-hang needs its whole chain: on its own scenario's record, a
// deadlock, a failure heard from the broker after the write (a read that
// timed out), a run that ended within twice Net.ReadTimeout of the write,
// or an unknown Net.ReadTimeout each take the claim away.
TEST(Signatures, CloseHangNeedsItsWholeChain) {
  const RunOutput out =
      RunFile("scenarios/signatures/close-hang-no-read-timeout.toml", "sarama-main");
  const checks::Violation* liveness = nullptr;
  for (const checks::Violation& v : out.violations) {
    if (v.check == "liveness") liveness = &v;
  }
  ASSERT_NE(liveness, nullptr);
  ASSERT_TRUE(Claims(out.record, *liveness).contains("close-hang"));
  const auto send =
      std::find_if(out.record.producer.steps.begin(), out.record.producer.steps.end(),
                   [](const sarama::ProducerStep& s) { return s.kind == sarama::StepKind::kSend; });
  ASSERT_NE(send, out.record.producer.steps.end());
  ASSERT_TRUE(out.record.read_timeout.has_value());
  const sim::Duration read_timeout = *out.record.read_timeout;

  checks::RunRecord deadlock = out.record;
  deadlock.run.outcome = sim::Outcome::kDeadlock;
  EXPECT_FALSE(Claims(deadlock, *liveness).contains("close-hang"));

  checks::RunRecord gave_up = out.record;
  sarama::ProducerStep timed_out = *send;
  timed_out.kind = sarama::StepKind::kAnswer;
  timed_out.correlation_id = -1;
  timed_out.at = send->at + read_timeout;
  timed_out.error = "read tcp: i/o timeout";
  gave_up.producer.steps.push_back(timed_out);
  EXPECT_FALSE(Claims(gave_up, *liveness).contains("close-hang"));

  checks::RunRecord short_run = out.record;
  short_run.run.end_time = send->at + read_timeout;
  EXPECT_FALSE(Claims(short_run, *liveness).contains("close-hang"));

  checks::RunRecord unknown = out.record;
  unknown.read_timeout.reset();
  EXPECT_FALSE(Claims(unknown, *liveness).contains("close-hang"));
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
