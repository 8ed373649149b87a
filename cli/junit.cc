#include "cli/junit.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/assert.h"
#include "cli/common.h"

namespace cli::junit {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// The length of the UTF-8 sequence at text[i] that XML 1.0 can hold, or 0.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates, U+FFFE/U+FFFF and past U+10FFFF are not
  // characters XML 1.0 allows.
  static constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kLeast[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF ||
      cp > 0x10FFFF) {
    return 0;
  }
  return n;
}

struct Counts {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
};

Counts CountsOf(const Suite& s) {
  Counts c;
  c.tests = s.cases.size();
  c.seconds = s.seconds;
  for (const Case& k : s.cases) {
    switch (k.outcome) {
      case Outcome::kPass: break;
      case Outcome::kFailure: ++c.failures; break;
      case Outcome::kError: ++c.errors; break;
      case Outcome::kSkipped: ++c.skipped; break;
    }
  }
  return c;
}

std::string CountAttributes(const Counts& c) {
  return absl::StrFormat(R"(tests="%d" failures="%d" errors="%d" skipped="%d" time="%.3f")",
                         c.tests, c.failures, c.errors, c.skipped, c.seconds);
}

const char* ElementOf(Outcome o) {
  switch (o) {
    case Outcome::kFailure: return "failure";
    case Outcome::kError: return "error";
    case Outcome::kSkipped: return "skipped";
    case Outcome::kPass: break;
  }
  PRODSIM_ASSERT_MSG(false, "ElementOf: a passing case has no element");
  return "";
}

void RenderCase(const Case& k, std::string* out) {
  PRODSIM_ASSERT(k.seconds >= 0);
  absl::StrAppend(out, R"(    <testcase name=")", Escape(k.name), R"(" classname=")",
                  Escape(k.classname), R"(" time=")", absl::StrFormat("%.3f", k.seconds), "\"");
  if (k.outcome == Outcome::kPass && k.out.empty()) {
    absl::StrAppend(out, "/>\n");
    return;
  }
  absl::StrAppend(out, ">\n");
  if (k.outcome != Outcome::kPass) {
    const char* element = ElementOf(k.outcome);
    absl::StrAppend(out, "      <", element, R"( message=")", Escape(k.message), "\"");
    if (k.outcome != Outcome::kSkipped) absl::StrAppend(out, R"( type=")", Escape(k.type), "\"");
    if (k.text.empty()) {
      absl::StrAppend(out, "/>\n");
    } else {
      absl::StrAppend(out, ">", Escape(k.text), "</", element, ">\n");
    }
  }
  if (!k.out.empty()) absl::StrAppend(out, "      <system-out>", Escape(k.out), "</system-out>\n");
  absl::StrAppend(out, "    </testcase>\n");
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&apos;";
        ++i;
        continue;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        ++i;
        continue;
      default: break;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      out += kReplacement;
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string Render(const std::vector<Suite>& suites) {
  Counts all;
  for (const Suite& s : suites) {
    const Counts c = CountsOf(s);
    all.tests += c.tests;
    all.failures += c.failures;
    all.errors += c.errors;
    all.skipped += c.skipped;
    all.seconds += c.seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, R"(<testsuites name="prodsim" )", CountAttributes(all), ">\n");
  for (const Suite& s : suites) {
    absl::StrAppend(&out, R"(  <testsuite name=")", Escape(s.name), "\" ",
                    CountAttributes(CountsOf(s)), ">\n");
    for (const Case& k : s.cases) RenderCase(k, &out);
    absl::StrAppend(&out, "  </testsuite>\n");
  }
  absl::StrAppend(&out, "</testsuites>\n");
  return out;
}

bool WriteFile(const std::string& path, const std::vector<Suite>& suites) {
  return WriteText(path, Render(suites));
}

bool Claim(const std::string& path) { return WriteText(path, ""); }

}  // namespace cli::junit
