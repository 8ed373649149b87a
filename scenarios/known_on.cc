#include "scenarios/known_on.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace scenarios {
namespace {

bool Numeric(std::string_view v, std::vector<uint64_t>* parts) {
  for (absl::string_view p : absl::StrSplit(absl::string_view(v.data(), v.size()), '.')) {
    uint64_t n = 0;
    if (p.empty() || !absl::SimpleAtoi(p, &n) || p.find_first_not_of("0123456789") != p.npos) {
      return false;
    }
    parts->push_back(n);
  }
  return !parts->empty();
}

bool VersionText(std::string_view v) {
  if (v.empty() || v.size() > 64) return false;
  for (char c : v) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return v.find("..") == std::string_view::npos;
}

}  // namespace

int CompareVersions(std::string_view a, std::string_view b) {
  std::vector<uint64_t> x, y;
  const bool xn = Numeric(a, &x), yn = Numeric(b, &y);
  if (!xn || !yn) {
    if (a == b) return 0;
    return xn ? 1 : yn ? -1 : (a < b ? -1 : 1);
  }
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const uint64_t p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

bool KnownOn::Covers(std::string_view c, std::string_view version) const {
  std::vector<uint64_t> ignored;
  const bool numeric = Numeric(version, &ignored);
  for (const Client& client : clients) {
    if (client.name != c) continue;
    for (const VersionRange& r : client.ranges) {
      if (version == r.low && !r.open && r.high.empty()) return true;
      if (!numeric) continue;
      if (CompareVersions(version, r.low) < 0) continue;
      if (r.open) return true;
      if (CompareVersions(version, r.high.empty() ? r.low : r.high) <= 0) return true;
    }
  }
  return false;
}

namespace {

absl::StatusOr<KnownOn::Client> ParseClient(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const size_t at = text.find('@');
  if (at == absl::string_view::npos || at == 0 || at + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text, "\": want CLIENT@VERSIONS, e.g. \"librdkafka@2.0.2..2.15.1,2.16.0\""));
  }
  KnownOn::Client k;
  k.name = std::string(text.substr(0, at));
  if (!VersionText(k.name)) {
    return absl::InvalidArgumentError(absl::StrCat("bad client name \"", k.name, "\""));
  }
  for (absl::string_view part : absl::StrSplit(text.substr(at + 1), ',')) {
    part = absl::StripAsciiWhitespace(part);
    VersionRange r;
    const size_t dots = part.find("..");
    if (dots == absl::string_view::npos) {
      r.low = std::string(part);
    } else {
      r.low = std::string(part.substr(0, dots));
      r.high = std::string(part.substr(dots + 2));
      r.open = r.high.empty();
    }
    std::vector<uint64_t> lo, hi;
    if (!VersionText(r.low) || (!r.high.empty() && !VersionText(r.high))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad version range \"", part, "\": a version is letters, digits, '.', '-' and '_'"));
    }
    if (dots != absl::string_view::npos &&
        (!Numeric(r.low, &lo) || (!r.high.empty() && !Numeric(r.high, &hi)))) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad version range \"", part, "\": a range's ends are numbers (1.2.3)"));
    }
    if (!r.high.empty() && CompareVersions(r.low, r.high) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad version range \"", part, "\": its low end is above its high end"));
    }
    k.ranges.push_back(std::move(r));
  }
  return k;
}

}  // namespace

absl::StatusOr<KnownOn> ParseKnownOn(std::string_view text) {
  KnownOn k;
  for (absl::string_view part : absl::StrSplit(absl::string_view(text.data(), text.size()), ';')) {
    absl::StatusOr<KnownOn::Client> c = ParseClient(part);
    if (!c.ok()) return c.status();
    k.clients.push_back(*std::move(c));
  }
  return k;
}

}  // namespace scenarios
