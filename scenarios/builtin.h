// Scenario files compiled into prodsim: the bases of the scenario fuzzer,
// `prodsim decode` and `prodsim bench`, by their paths in the source tree
// (bench/scenarios/...). An installed prodsim runs these defaults from any
// directory; a flag that names a file reads that file instead.
#ifndef PRODSIM_SCENARIOS_BUILTIN_H_
#define PRODSIM_SCENARIOS_BUILTIN_H_

#include <optional>
#include <string_view>

namespace scenarios {

// The compiled-in text of the source tree's file `path`, or nullopt if
// prodsim does not carry it (scenarios/CMakeLists.txt lists those it does).
std::optional<std::string_view> BuiltinScenarioText(std::string_view path);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_BUILTIN_H_
