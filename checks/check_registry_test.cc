#include "checks/check_registry.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checks/check.h"
#include "gtest/gtest.h"

namespace checks {
namespace {

// Each entry's factory makes the check its entry names, and AllChecks keeps
// the table's order (the check order verdicts are decided in).
TEST(CheckRegistry, FactoriesMakeTheirEntriesInTableOrder) {
  const std::vector<std::unique_ptr<Check>> all = AllChecks();
  ASSERT_EQ(all.size(), kCheckCount);
  for (size_t i = 0; i < kCheckCount; ++i) {
    SCOPED_TRACE(kCheckTable[i].name);
    EXPECT_EQ(all[i]->name(), kCheckTable[i].name);
    EXPECT_EQ(kCheckTable[i].make()->name(), kCheckTable[i].name);
    EXPECT_FALSE(kCheckTable[i].doc.empty());
  }
}

// FindCheck and FindCheckInfo know every entry by its name, and no other.
TEST(CheckRegistry, FindByName) {
  for (const CheckInfo& c : CheckInfos()) {
    ASSERT_NE(FindCheck(c.name), nullptr) << c.name;
    EXPECT_EQ(FindCheck(c.name)->name(), c.name);
    EXPECT_EQ(FindCheckInfo(c.name), &c);
  }
  EXPECT_EQ(FindCheck("no-such-check"), nullptr);
  EXPECT_EQ(FindCheckInfo("no-such-check"), nullptr);
}

// The format's list holds every check once: the simulated ones first, then
// those only a real client's run can fail.
TEST(CheckRegistry, SimulatedFirstListsEveryCheckOnce) {
  const std::set<std::string_view> listed(kCheckNamesSimulatedFirst.begin(),
                                          kCheckNamesSimulatedFirst.end());
  EXPECT_EQ(listed.size(), kCheckCount);
  bool seen_wire_only = false;
  for (std::string_view name : kCheckNamesSimulatedFirst) {
    const CheckInfo* info = FindCheckInfo(name);
    ASSERT_NE(info, nullptr) << name;
    if (seen_wire_only) {
      EXPECT_TRUE(info->wire_only) << name;
    }
    seen_wire_only = seen_wire_only || info->wire_only;
  }
}

// What the verdict classes say of the checks as the docs describe them: the
// client-* checks are client failures, the two assertions yield
// producer-assertion, liveness is the only liveness check, and only
// retry-pacing and no-leaked-goroutines are opted into.
TEST(CheckRegistry, VerdictClassesAndOptIns) {
  for (const CheckInfo& c : CheckInfos()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.verdict == Verdict::kClientFailure, c.name.starts_with("client-"));
    EXPECT_EQ(c.verdict == Verdict::kProducerAssertion,
              c.name == kNoProducerAssertion || c.name == kNoFatalError);
    EXPECT_EQ(c.verdict == Verdict::kLiveness, c.name == kLiveness);
    EXPECT_EQ(c.verdict == Verdict::kPanic, c.name == kNoPanic);
    EXPECT_EQ(c.opt_in, c.name == kRetryPacing || c.name == kNoLeakedGoroutines);
    if (c.verdict == Verdict::kClientFailure) {
      EXPECT_TRUE(c.wire_only);
    }
  }
}

}  // namespace
}  // namespace checks
