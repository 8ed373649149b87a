// The flags of a prodsim subcommand, declared once: each flag's name, type,
// default, bounds and description are one call on a Flags, and from that
// one declaration come the parsing, the bad-input error and the `--help`
// text. Parsing and help are CLI11's (libcli11-dev); the values are read by
// this file's one integer parser and one duration parser, so that every
// subcommand takes a count or a duration the same way.
//
// Why CLI11 and not Abseil's flags: Abseil's flags are process-global
// (one set for the binary, not one per subcommand) and its usage output
// is not per subcommand; prodsim has fourteen subcommands, each with its
// own flags, its own `--help` and its own errors (exit 64, not Abseil's 1).
//
// Adding a flag: one call here (e.g. `f.Count("--max-widgets", &a.widgets,
// 1, 100, "what it bounds")`) in the subcommand's declaration, plus the code
// that reads the field. The help text and the help test follow from it.
//
// Errors: a bad value says, on one line, "bad SUB flag '--name=value':
// --name takes WHAT"; the caller exits with kExitUsage (64).
#ifndef PRODSIM_CLI_FLAGS_H_
#define PRODSIM_CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "sim/core/time.h"

namespace cli {

// The one integer parser: decimal digits only (no sign, no spaces), a value
// in [lo, hi]. False for anything else, overflow included.
bool ParseCount(std::string_view text, uint64_t lo, uint64_t hi, uint64_t* v);
// The one duration parser: the scenario file's durations ("250ms", "5s",
// "2m", "1h", ...), positive. False for anything else.
bool ParsePositiveDuration(std::string_view text, sim::Duration* d);

// "a count from LO to HI" (HI: "any" when it is the type's maximum).
std::string CountTakes(uint64_t lo, uint64_t hi);

// The declarations of one subcommand's flags on its CLI::App. Values land in
// the fields given (they keep their initial value as the default when the
// flag is absent); every declaration returns its CLI::Option, for a
// default shown otherwise (->default_str("the cores")). Check() validates the values given after
// CLI11 has parsed the command line.
class Flags {
 public:
  // REQUIRES: app outlives this; `sub` is the subcommand's name, for errors.
  Flags(CLI::App* app, std::string sub);

  // --name: a count in [lo, hi].
  template <typename Int>
  CLI::Option* Count(const std::string& name, Int* v, uint64_t lo, uint64_t hi,
                     const std::string& description) {
    return AddValue(name, "N", std::to_string(*v), description, CountTakes(lo, hi),
                    [v, lo, hi](const std::string& text) {
                      uint64_t n = 0;
                      if (!ParseCount(text, lo, hi, &n)) return false;
                      *v = static_cast<Int>(n);
                      return true;
                    });
  }
  // --name: a positive duration.
  CLI::Option* Duration(const std::string& name, sim::Duration* d, const std::string& description);
  // --name: a non-empty text (a file, a directory, a client); `what` is the
  // type name shown in the help ("FILE", "DIR", ...).
  CLI::Option* Text(const std::string& name, std::string* s, const std::string& what,
                    const std::string& description);
  // --name: a text that `valid` accepts; `takes` says what it takes.
  CLI::Option* Checked(const std::string& name, std::string* s, const std::string& what,
                       const std::string& takes, std::function<bool(const std::string&)> valid,
                       const std::string& description);
  // --name: one of `choices`.
  CLI::Option* Choice(const std::string& name, std::string* s,
                      const std::vector<std::string>& choices, const std::string& description);
  // --name, no value: sets *b to `value`.
  CLI::Option* Switch(const std::string& name, bool* b, const std::string& description,
                      bool value = true);
  // --name: any text given with parse(text) (false: bad), for a value with a
  // shape of its own (e.g. --shard=I/N); `takes` names the shape.
  CLI::Option* Custom(const std::string& name, const std::string& what, const std::string& takes,
                      std::function<bool(const std::string&)> parse,
                      const std::string& description);
  // The positional arguments (scenario files).
  CLI::Option* Files(std::vector<std::string>* files, const std::string& what,
                     const std::string& description);

  // Whether --name was given.
  bool Given(const std::string& name) const;

  // Before CLI11 parses: `--name=` with nothing after the '=' is a bad value
  // here (CLI11 would take the next argument as the value instead).
  absl::Status CheckEmptyValues(int argc, const char* const* argv) const;
  // After CLI11 parsed: the first argument the app did not know (an unknown
  // flag) or the first bad value, as a one-line error; OK if none.
  absl::Status Check() const;

  CLI::App* app() const { return app_; }
  const std::string& name() const { return sub_; }

 private:
  struct Value {
    CLI::Option* option;
    std::string name, takes, text;
    std::function<bool(const std::string&)> parse;
    bool unknown = false;  // a name out of a list: "unknown --NAME 'VALUE'"
  };
  absl::Status BadValue(const Value& v, const std::string& text) const;
  CLI::Option* AddValue(const std::string& name, const std::string& what,
                        const std::string& shown_default, const std::string& description,
                        const std::string& takes, std::function<bool(const std::string&)> parse);

  CLI::App* app_;
  std::string sub_;
  // Stable addresses: CLI11 writes the text of each flag into its Value.
  std::vector<std::unique_ptr<Value>> values_;
};

}  // namespace cli

#endif  // PRODSIM_CLI_FLAGS_H_
