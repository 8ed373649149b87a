#include "cli/flags.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/assert.h"
#include "scenarios/toml_reader.h"

namespace cli {
namespace {

// The long name of a CLI11 name list ("-o,--out" -> "--out").
std::string LongName(const std::string& names) {
  for (const absl::string_view part : absl::StrSplit(names, ',')) {
    if (absl::StartsWith(part, "--")) return std::string(part);
  }
  return names;
}

}  // namespace

bool ParseCount(std::string_view text, uint64_t lo, uint64_t hi, uint64_t* v) {
  PRODSIM_ASSERT(lo <= hi);
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  uint64_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size()) return false;  // overflow
  if (n < lo || n > hi) return false;
  *v = n;
  return true;
}

bool ParsePositiveDuration(std::string_view text, sim::Duration* d) {
  sim::Duration parsed;
  if (scenarios::internal::ParseDuration(text, &parsed).has_value() || parsed.nanos() <= 0) {
    return false;
  }
  *d = parsed;
  return true;
}

std::string CountTakes(uint64_t lo, uint64_t hi) {
  if (hi == std::numeric_limits<uint64_t>::max() ||
      hi == static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return lo == 0 ? "a number" : absl::StrCat("a count from ", lo, " up");
  }
  return absl::StrCat("a count from ", lo, " to ", hi);
}

Flags::Flags(CLI::App* app, std::string sub) : app_(app), sub_(std::move(sub)) {
  PRODSIM_ASSERT(app_ != nullptr);
  // A flag given twice: the last one counts, as it always has.
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // Unknown flags are left for Check(), which names them in prodsim's words.
  app_->allow_extras();
}

CLI::Option* Flags::AddValue(const std::string& name, const std::string& what,
                             const std::string& shown_default, const std::string& description,
                             const std::string& takes,
                             std::function<bool(const std::string&)> parse) {
  auto value = std::make_unique<Value>();
  value->name = LongName(name);
  value->takes = takes;
  value->parse = std::move(parse);
  value->option = app_->add_option(name, value->text, description)->type_name(what);
  if (!shown_default.empty()) value->option->default_str(shown_default);
  CLI::Option* option = value->option;
  values_.push_back(std::move(value));
  return option;
}

CLI::Option* Flags::Duration(const std::string& name, sim::Duration* d,
                             const std::string& description) {
  return AddValue(name, "DURATION", d->nanos() > 0 ? d->ToString() : "", description,
                  "a positive duration such as 30s, 250ms or 2m",
                  [d](const std::string& text) { return ParsePositiveDuration(text, d); });
}

CLI::Option* Flags::Text(const std::string& name, std::string* s, const std::string& what,
                         const std::string& description) {
  return AddValue(name, what, *s, description, absl::StrCat("a ", what),
                  [s](const std::string& text) {
                    if (text.empty()) return false;
                    *s = text;
                    return true;
                  });
}

CLI::Option* Flags::Checked(const std::string& name, std::string* s, const std::string& what,
                            const std::string& takes, std::function<bool(const std::string&)> valid,
                            const std::string& description) {
  return AddValue(name, what, *s, description, takes,
                  [s, valid = std::move(valid)](const std::string& text) {
                    if (!valid(text)) return false;
                    *s = text;
                    return true;
                  });
}

CLI::Option* Flags::Choice(const std::string& name, std::string* s,
                           const std::vector<std::string>& choices,
                           const std::string& description) {
  CLI::Option* option = Checked(
      name, s, "NAME", absl::StrCat("one of ", absl::StrJoin(choices, ", ")),
      [choices](const std::string& text) {
        return std::find(choices.begin(), choices.end(), text) != choices.end();
      },
      absl::StrCat(description, " (", absl::StrJoin(choices, ", "), ")"));
  values_.back()->unknown = true;
  return option;
}

CLI::Option* Flags::Switch(const std::string& name, bool* b, const std::string& description,
                           bool value) {
  return app_->add_flag_callback(
      name, [b, value] { *b = value; }, description);
}

CLI::Option* Flags::Custom(const std::string& name, const std::string& what,
                           const std::string& takes, std::function<bool(const std::string&)> parse,
                           const std::string& description) {
  return AddValue(name, what, "", description, takes, std::move(parse));
}

CLI::Option* Flags::Files(std::vector<std::string>* files, const std::string& what,
                          const std::string& description) {
  return app_->add_option(what, *files, description)->type_name("");
}

bool Flags::Given(const std::string& name) const {
  const CLI::Option* option = app_->get_option_no_throw(name);
  PRODSIM_ASSERT_MSG(option != nullptr, "Given() of a flag never declared");
  return option->count() > 0;
}

absl::Status Flags::Check() const {
  const std::vector<std::string> extra = app_->remaining();
  if (!extra.empty()) {
    const std::string& first = extra.front();
    return absl::InvalidArgumentError(
        absl::StrCat(absl::StartsWith(first, "-") ? "unknown flag '" : "unexpected argument '",
                     first, "' (prodsim ", sub_, " --help lists its flags)"));
  }
  for (const std::unique_ptr<Value>& v : values_) {
    if (v->option->count() == 0 || v->parse(v->text)) continue;
    return BadValue(*v, v->text);
  }
  return absl::OkStatus();
}

absl::Status Flags::CheckEmptyValues(int argc, const char* const* argv) const {
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "--") || !absl::EndsWith(arg, "=")) continue;
    const std::string name = arg.substr(0, arg.size() - 1);
    for (const std::unique_ptr<Value>& v : values_) {
      if (v->name == name) return BadValue(*v, "");
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag '", arg, "' (prodsim ", sub_, " --help lists its flags)"));
  }
  return absl::OkStatus();
}

absl::Status Flags::BadValue(const Value& v, const std::string& text) const {
  if (v.unknown) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown ", v.name, " '", text, "' (", v.takes, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("bad ", sub_, " flag '", v.name, "=", text, "': ", v.name, " takes ", v.takes));
}

}  // namespace cli
