#include "scenarios/toml_reader.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_format.h"

namespace scenarios::internal {

std::string Join(StringList list) {
  std::string out;
  for (const std::string_view s : list) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Small text helpers.

// A TOML basic string literal for `s`: quotes, backslashes and control
// characters escaped; other bytes (UTF-8) as they are.
std::string TomlQuote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += absl::StrFormat("\\u%04X", static_cast<unsigned>(u));
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

// A user's string, quoted and shortened, for an error message.
std::string Shown(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() <= kMax) return TomlQuote(s);
  size_t cut = kMax;  // not inside a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(TomlQuote(s.substr(0, cut)), "...");
}

// Levenshtein distance, capped: both strings are short (callers check).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// The entry of `candidates` closest to `word`, if close enough to be a typo.
std::optional<std::string_view> Closest(std::string_view word, StringList candidates) {
  if (word.size() > kMaxSuggestKeyBytes) return std::nullopt;
  std::optional<std::string_view> best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string_view c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

bool Contains(StringList list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// ---------------------------------------------------------------------------
// Durations: "<digits>[.<digits>]<unit>", exact to the nanosecond.

struct DurationUnit {
  std::string_view name;
  int64_t ns;
};
constexpr DurationUnit kDurationUnits[] = {{"ns", 1},
                                           {"us", 1000},
                                           {"ms", 1000000},
                                           {"s", 1000000000},
                                           {"m", 60 * int64_t{1000000000}},
                                           {"h", 3600 * int64_t{1000000000}}};
constexpr std::string_view kUnitHint =
    "write a number and a unit (ns, us, ms, s, m or h), e.g. \"250ms\"";

// The exact nanoseconds of the decimal fraction 0.`frac` of `unit_ns`, or
// nullopt if that is not a whole number.
std::optional<int64_t> FractionNanos(std::string_view frac, int64_t unit_ns) {
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  if (frac.empty()) return 0;
  // A fraction whose last digit is not 0 needs at least frac.size() factors
  // of 2 or of 5 from the unit, which has at most 13 of each.
  if (frac.size() > 13) return std::nullopt;
  int64_t value = 0, scale = 1;
  for (const char c : frac) {
    value = value * 10 + (c - '0');
    scale *= 10;
  }
  const int64_t g = std::gcd(unit_ns, scale);
  if (value % (scale / g) != 0) return std::nullopt;
  return value / (scale / g) * (unit_ns / g);  // < unit_ns: no overflow
}

std::optional<int64_t> UnitNanos(std::string_view unit) {
  for (const DurationUnit& u : kDurationUnits) {
    if (u.name == unit) return u.ns;
  }
  return std::nullopt;
}

// Splits "1.5ms" into "1", "5", "ms"; a problem if the number is malformed.
std::optional<Problem> SplitDuration(std::string_view text, std::string_view* whole,
                                     std::string_view* frac, std::string_view* unit) {
  if (text.empty()) return Problem{"the duration is empty", std::string(kUnitHint)};
  if (text[0] == '-') {
    return Problem{absl::StrCat("duration ", Shown(text), " is negative"),
                   "durations are >= 0; remove the minus sign"};
  }
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i])) ++i;
  *whole = text.substr(0, i);
  if (i < text.size() && text[i] == '.') {
    const size_t start = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    *frac = text.substr(start, i - start);
    if (frac->empty()) {
      return Problem{absl::StrCat("duration ", Shown(text), " has no digits after the point"),
                     "write e.g. \"1.5s\" or \"1s\""};
    }
  }
  *unit = text.substr(i);
  if (whole->empty()) {
    return Problem{absl::StrCat("duration ", Shown(text), " does not start with a number"),
                   std::string(kUnitHint)};
  }
  return std::nullopt;
}

// Parses a duration; on failure, the problem.
std::optional<Problem> ParseDuration(std::string_view text, Duration* out) {
  std::string_view whole, frac, unit;
  if (auto p = SplitDuration(text, &whole, &frac, &unit)) return p;
  if (unit.empty()) {
    return Problem{
        absl::StrCat("duration ", Shown(text), " has no unit"),
        absl::StrCat("add a unit, e.g. \"", Av(whole), "ms\"; units: ns, us, ms, s, m, h")};
  }
  const std::optional<int64_t> unit_ns = UnitNanos(unit);
  if (!unit_ns) {
    return Problem{absl::StrCat("unknown unit ", Shown(unit), " in duration ", Shown(text)),
                   "use ns, us, ms, s, m or h, right after the number (\"250ms\")"};
  }
  const std::optional<int64_t> frac_ns = FractionNanos(frac, *unit_ns);
  if (!frac_ns) {
    return Problem{absl::StrCat("duration ", Shown(text), " is not a whole number of nanoseconds"),
                   "use fewer decimals or a smaller unit"};
  }
  const int64_t max = std::numeric_limits<int64_t>::max();
  int64_t count = 0;
  bool overflow = false;
  for (const char c : whole) {
    const int64_t digit = c - '0';
    if (count > (max - digit) / 10) overflow = true;
    if (overflow) break;
    count = count * 10 + digit;
  }
  if (overflow || count > (max - *frac_ns) / *unit_ns) {
    return Problem{absl::StrCat("duration ", Shown(text), " is too long"),
                   "durations are at most 9223372036854775807ns (about 292 years)"};
  }
  *out = Duration::Nanos(count * *unit_ns + *frac_ns);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Diagnostics.

Pos PosOf(const toml::source_region& region) {
  if (region.begin.line == 0) return Pos{};  // a table toml++ made implicitly
  return Pos{static_cast<uint32_t>(region.begin.line), static_cast<uint32_t>(region.begin.column)};
}

void Diagnostics::Add(Pos pos, std::string message, std::string hint) {
  ++count_;
  if (count_ > 1 && !(pos < first_pos_)) return;
  first_pos_ = pos;
  first_message_ = std::move(message);
  first_hint_ = std::move(hint);
}

absl::Status Diagnostics::ToStatus() const {
  PRODSIM_ASSERT(count_ > 0);
  std::string line = absl::StrFormat("%s:%d:%d: %s (hint: %s)", Av(origin_), first_pos_.line,
                                     first_pos_.column, first_message_, first_hint_);
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  return absl::InvalidArgumentError(line);
}

namespace {

// ---------------------------------------------------------------------------
// The lexical guard: toml++ nests a table per part of a dotted key, and
// destroys them recursively, so "a.a.a...=1" with 100000 parts overflows the
// stack. A key's parts all sit on one line, and nested arrays and inline
// tables are capped by toml++ (TOML_MAX_NESTED_VALUES), so capping the dots
// outside strings and comments on each line bounds the depth of every tree.

class DotGuard {
 public:
  // The position of the first dot over the limit, if any.
  std::optional<Pos> Scan(std::string_view text);

 private:
  enum class State { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };
  // Consumes the byte(s) at text[i] in the current state; returns how many.
  size_t Step(std::string_view text, size_t i);
  size_t StepCode(std::string_view text, size_t i);
  static size_t QuoteRun(std::string_view text, size_t i, char quote);

  State state_ = State::kCode;
  int dots_ = 0;
  bool over_ = false;
};

size_t DotGuard::QuoteRun(std::string_view text, size_t i, char quote) {
  size_t n = 0;
  while (i + n < text.size() && text[i + n] == quote && n < 5) ++n;
  return n;
}

size_t DotGuard::StepCode(std::string_view text, size_t i) {
  const char c = text[i];
  if (c == '#') state_ = State::kComment;
  if (c == '.') over_ = ++dots_ > kMaxDotsPerLine;
  if (c != '"' && c != '\'') return 1;
  const bool multi = QuoteRun(text, i, c) >= 3;
  if (c == '"') state_ = multi ? State::kMultiBasic : State::kBasic;
  if (c == '\'') state_ = multi ? State::kMultiLiteral : State::kLiteral;
  return multi ? 3 : 1;
}

size_t DotGuard::Step(std::string_view text, size_t i) {
  const char c = text[i];
  const bool escape = c == '\\' && i + 1 < text.size() && text[i + 1] != '\n';
  switch (state_) {
    case State::kCode: return StepCode(text, i);
    case State::kComment: return 1;
    case State::kBasic:
      if (c == '"') state_ = State::kCode;
      return escape ? 2 : 1;
    case State::kLiteral:
      if (c == '\'') state_ = State::kCode;
      return 1;
    case State::kMultiBasic:
    case State::kMultiLiteral: {
      const char quote = state_ == State::kMultiBasic ? '"' : '\'';
      if (state_ == State::kMultiBasic && escape) return 2;
      const size_t run = QuoteRun(text, i, quote);
      if (run < 3) return 1;
      state_ = State::kCode;
      return run;
    }
  }
  PRODSIM_ASSERT_MSG(false, "DotGuard state outside the enum");
  return 1;
}

std::optional<Pos> DotGuard::Scan(std::string_view text) {
  Pos pos;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
      dots_ = 0;
      if (state_ != State::kMultiBasic && state_ != State::kMultiLiteral) state_ = State::kCode;
      ++i;
      continue;
    }
    const size_t n = Step(text, i);
    PRODSIM_ASSERT(n >= 1);
    if (over_) return pos;
    for (size_t k = i; k < i + n && k < text.size(); ++k) {
      // Columns count code points, as toml++ does: skip UTF-8 continuations.
      if ((static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) ++pos.column;
    }
    i += n;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Problem> CheckInputBounds(std::string_view text, Pos* pos) {
  if (text.size() > kMaxInputBytes) {
    *pos = Pos{};
    return Problem{absl::StrCat("the file is too large (", text.size(), " bytes, at most ",
                                kMaxInputBytes, ")"),
                   "split the scenario, or drop faults"};
  }
  if (std::optional<Pos> p = DotGuard().Scan(text)) {
    *pos = *p;
    return Problem{absl::StrCat("more than ", kMaxDotsPerLine, " dots on one line"),
                   "a scenario's keys have at most one dot, e.g. network.latency"};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// TableReader: typed, range-checked reads of one table's keys.

std::string_view TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array:
      return node.is_array_of_tables() ? "an array of tables" : "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: return "nothing";
  }
  return "a value";
}

bool TableReader::TypeProblem(const toml::node& node, std::string_view key,
                              std::string_view expected, std::string hint) {
  diag_->Add(PosOf(node.source()),
             absl::StrCat(Name(key), " must be ", Av(expected), ", not ", Av(TypeName(node))),
             std::move(hint));
  return false;
}

bool TableReader::Int(std::string_view key, int64_t lo, int64_t hi, int64_t* out) {
  PRODSIM_ASSERT(lo <= hi);
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* v = node->as_integer();
  if (v == nullptr) {
    return TypeProblem(*node, key, "an integer",
                       absl::StrCat("write a number without quotes, e.g. ", Av(key), " = ", lo));
  }
  if (v->get() < lo || v->get() > hi) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " must be in ", lo, "..", hi, ", not ", v->get()),
               absl::StrCat("set ", Av(key), " to a value from ", lo, " to ", hi));
    return false;
  }
  *out = v->get();
  return true;
}

bool TableReader::Bool(std::string_view key, bool* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* v = node->as_boolean();
  if (v == nullptr) return TypeProblem(*node, key, "a boolean", "write true or false, unquoted");
  *out = v->get();
  return true;
}

bool TableReader::OptBool(std::string_view key, std::optional<bool>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  bool v = false;
  if (!Bool(key, &v)) return false;
  *out = v;
  return true;
}

bool TableReader::Dur(std::string_view key, Duration lo, Duration* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* s = node->as_string();
  if (s == nullptr) {
    return TypeProblem(*node, key, "a duration string",
                       absl::StrCat("quote it with a unit, e.g. ", Av(key), " = \"250ms\""));
  }
  Duration d;
  if (std::optional<Problem> p = ParseDuration(s->get(), &d)) {
    p->message = absl::StrCat(Name(key), ": ", p->message);
    diag_->Add(PosOf(node->source()), std::move(*p));
    return false;
  }
  if (d < lo) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " must be at least ", lo.ToString(), ", not ", d.ToString()),
               lo == Duration::Nanos(1) ? "use a positive duration, e.g. \"1ms\""
                                        : absl::StrCat("use at least \"", lo.ToString(), "\""));
    return false;
  }
  *out = d;
  return true;
}

bool TableReader::OptDur(std::string_view key, Duration lo, std::optional<Duration>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  Duration d;
  if (!Dur(key, lo, &d)) return false;
  *out = d;
  return true;
}

bool TableReader::Str(std::string_view key, size_t max_bytes, std::string* out) {
  const toml::node* node = Get(key);
  if (node == nullptr) return true;
  const auto* s = node->as_string();
  if (s == nullptr) {
    return TypeProblem(*node, key, "a string", absl::StrCat("quote it: ", Av(key), " = \"...\""));
  }
  if (s->get().size() > max_bytes) {
    diag_->Add(PosOf(node->source()),
               absl::StrCat(Name(key), " is too long (", s->get().size(), " bytes)"),
               absl::StrCat("keep it to ", max_bytes, " bytes"));
    return false;
  }
  *out = s->get();
  return true;
}

bool TableReader::OptStr(std::string_view key, size_t max_bytes, std::optional<std::string>* out) {
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  std::string v;
  if (!Str(key, max_bytes, &v)) return false;
  *out = std::move(v);
  return true;
}

bool TableReader::Enum(std::string_view key, StringList allowed, std::string* out) {
  std::string value;
  if (!Has(key)) {
    MarkKnown(key);
    return true;
  }
  if (!Str(key, std::numeric_limits<size_t>::max(), &value)) return false;
  if (Contains(allowed, value)) {
    *out = value;
    return true;
  }
  // Short values ("3.0" for "2.0") are too close to everything to guess.
  const std::optional<std::string_view> near =
      value.size() >= 4 ? Closest(value, allowed) : std::nullopt;
  diag_->Add(PosOrTable(key), absl::StrCat("unknown ", Name(key), " ", Shown(value)),
             near ? absl::StrCat("did you mean \"", Av(*near), "\"?")
                  : absl::StrCat("use one of: ", Join(allowed)));
  return false;
}

const toml::table* TableReader::Table(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) return nullptr;
  if (const toml::table* t = node->as_table()) return t;
  const std::string header = Name(key);
  TypeProblem(*node, key, "a table",
              node->is_array_of_tables()
                  ? absl::StrCat("write [", header, "], not [[", header, "]]")
                  : absl::StrCat("write a [", header, "] section with its keys"));
  return nullptr;
}

const toml::array* TableReader::TableArray(std::string_view key, size_t max) {
  const toml::node* node = Get(key);
  if (node == nullptr) return nullptr;
  const toml::array* a = node->as_array();
  const std::string header = Name(key);
  if (a == nullptr || (!a->empty() && !a->is_array_of_tables())) {
    TypeProblem(*node, key, "an array of tables",
                absl::StrCat("write each entry as its own [[", header, "]] section"));
    return nullptr;
  }
  if (a->size() > max) {
    diag_->Add(PosOf((*a)[max].source()),
               absl::StrCat("too many ", header, " entries (", a->size(), ", at most ", max, ")"),
               absl::StrCat("keep ", max, " [[", header, "]] entries or fewer"));
    return nullptr;
  }
  return a;
}

void TableReader::Forbid(std::string_view key, std::string message, std::string hint) {
  const toml::node* node = Get(key);
  if (node != nullptr) diag_->Add(PosOf(node->source()), std::move(message), std::move(hint));
}

std::string TableReader::UnknownKeyHint(std::string_view key) const {
  if (std::optional<std::string_view> near = Closest(key, known_)) {
    return absl::StrCat("did you mean \"", Av(*near), "\"?");
  }
  for (const SectionKeys& s : sections_) {
    if (s.section != section_ && Contains(s.keys, key)) {
      return absl::StrCat("\"", Av(key), "\" belongs ", s.section[0] == '[' ? "in " : "at ",
                          Av(s.section));
    }
  }
  for (const SectionKeys& s : sections_) {
    if (s.section == section_) return absl::StrCat("known keys here: ", Join(s.keys));
  }
  return absl::StrCat("known keys here: ", Join(known_));
}

void TableReader::Finish() {
  for (auto&& [key, node] : table_) {
    if (Contains(known_, key.str())) continue;
    const Pos pos = PosOf(key.source());
    const std::string where = path_.empty() ? "at the top level" : absl::StrCat("in [", path_, "]");
    // Every problem counts, but only a reported one needs its hint.
    diag_->Add(pos, absl::StrCat("unknown key ", Shown(key.str()), " ", where),
               diag_->WouldReport(pos) ? UnknownKeyHint(key.str()) : std::string());
  }
}

// A hint for a toml++ syntax error, by the words of its description.
std::string SyntaxHint(std::string_view description) {
  struct Rule {
    std::string_view words;
    std::string_view hint;
  };
  static constexpr Rule kRules[] = {
      {"parsing string", "close the string on the same line, or use \"\"\" for several lines"},
      {"redefine", "each key and table may be defined once; merge the two"},
      {"nested value depth", "nest arrays and inline tables less deeply"},
  };
  for (const Rule& r : kRules) {
    if (description.find(r.words) != std::string_view::npos) return std::string(r.hint);
  }
  return "fix the TOML syntax at this position (see https://toml.io)";
}

// toml++ parsing, with or without exceptions.
std::optional<toml::table> ParseToml(std::string_view text, Diagnostics* diag) {
  const auto report = [&](const toml::parse_error& e) {
    diag->Add(PosOf(e.source()), absl::StrCat("invalid TOML: ", Av(e.description())),
              SyntaxHint(e.description()));
  };
#if TOML_EXCEPTIONS
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    report(e);
  } catch (const std::exception& e) {
    diag->Add(Pos{}, absl::StrCat("cannot parse: ", e.what()), "report this input as a bug");
  }
  return std::nullopt;
#else
  toml::parse_result result = toml::parse(text);
  if (result) return std::move(result).table();
  report(result.error());
  return std::nullopt;
#endif
}
}  // namespace scenarios::internal
