// scenario_parser_fuzzer: TOML text in. The parser must never crash or
// hang, an error must be one line that starts with the origin and a
// position ("fuzz:LINE:COLUMN: "), and whatever parses must print and
// parse back to the same scenario (the round trip a shrunk or decoded
// scenario file relies on).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "scenarios/scenario.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "scenario_parser_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > size_t{64} * 1024) return 0;  // the format's files are small
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<scenarios::Scenario> s = scenarios::ParseScenario(text, "fuzz");
  if (!s.ok()) {
    const std::string message(s.status().message());
    if (message.find('\n') != std::string::npos) Fail("an error spans lines", message);
    if (!absl::StartsWith(message, "fuzz:")) Fail("an error without its origin", message);
    return 0;
  }
  const std::string printed = scenarios::PrintScenario(*s);
  absl::StatusOr<scenarios::Scenario> again = scenarios::ParseScenario(printed, "printed");
  if (!again.ok())
    Fail("the printed scenario does not parse",
         std::string(again.status().message()) + "\n" + printed);
  if (!(*again == *s)) Fail("print then parse changed the scenario", printed);
  return 0;
}
