// The JUnit writer: escaping, counts, and every document it writes valid
// under tools/junit.xsd (xmllint), with a document that is not as the canary.
#include "cli/junit.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cli::junit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// True when xmllint accepts `xml` under tools/junit.xsd.
bool Validates(const std::string& xml) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/junit-",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".xml");
  std::ofstream(path) << xml;
  const std::string cmd = absl::StrCat("xmllint --noout --schema ", PRODSIM_SOURCE_DIR,
                                       "/tools/junit.xsd ", path, " 2>/dev/null");
  const int rc = std::system(cmd.c_str());
  std::remove(path.c_str());
  return rc == 0;
}

Suite Mixed() {
  Suite s{.name = "prodsim run", .seconds = 1.5};
  s.cases.push_back({.name = "a.toml", .classname = "prodsim.run.sarama-main", .seconds = 0.25});
  s.cases.push_back({.name = "b<&>.toml",
                     .classname = "prodsim.run.sarama-1.42.1",
                     .seconds = 0.5,
                     .outcome = Outcome::kFailure,
                     .message = "safety [x] \"quoted\"",
                     .type = "safety",
                     .text = "witness\x01 \xff é\nreplay: prodsim run b.toml",
                     .out = "digest=1"});
  s.cases.push_back({.name = "c.toml",
                     .classname = "c",
                     .outcome = Outcome::kError,
                     .message = "harness-error",
                     .type = "harness-error"});
  s.cases.push_back(
      {.name = "d.toml", .classname = "c", .outcome = Outcome::kSkipped, .message = "no [expect]"});
  return s;
}

TEST(JunitTest, EscapesMarkupAndWhatXmlCannotHold) {
  EXPECT_EQ(Escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(Escape("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(Escape("\x01"), "\xEF\xBF\xBD");
  EXPECT_EQ(Escape("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(Escape("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong NUL
  EXPECT_EQ(Escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(Escape("é€😀"), "é€😀");
}

TEST(JunitTest, CountsEachOutcome) {
  const std::string xml = Render({Mixed()});
  EXPECT_THAT(xml, HasSubstr(R"(<testsuites name="prodsim" tests="4" failures="1" errors="1" )"
                             R"(skipped="1" time="1.500">)"));
  EXPECT_THAT(xml, HasSubstr(R"(<failure message="safety [x] &quot;quoted&quot;" type="safety">)"));
  EXPECT_THAT(xml, HasSubstr(R"(<skipped message="no [expect]"/>)"));
  EXPECT_THAT(xml, HasSubstr("<system-out>digest=1</system-out>"));
}

TEST(JunitTest, WhatItWritesValidates) {
  EXPECT_TRUE(Validates(Render({Mixed()})));
  EXPECT_TRUE(Validates(Render({})));
  EXPECT_TRUE(Validates(Render({Suite{.name = "empty"}})));
}

// The canary: the validation rejects what the systems would misread.
TEST(JunitTest, TheSchemaRejectsACaseWithoutItsTime) {
  std::string xml = Render({Mixed()});
  const size_t at = xml.find(R"( time="0.250")");
  ASSERT_NE(at, std::string::npos);
  xml.erase(at, std::string(R"( time="0.250")").size());
  EXPECT_THAT(xml, Not(HasSubstr(R"(time="0.250")")));
  EXPECT_FALSE(Validates(xml));
  EXPECT_FALSE(Validates("<testsuites/>"));
}

}  // namespace
}  // namespace cli::junit
