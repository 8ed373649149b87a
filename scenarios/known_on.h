// Where a real client's finding is known: [expect] known_on, the clients
// and the versions of each the finding was seen on, as "CLIENT@RANGES"
// ("librdkafka@2.0.2..2.15.1,2.16.0"), several separated by ';'
// ("kafkajs@2.2.4; kafkajs-fixes@2.3.1"). CLIENT is a driver's name as
// --client takes it. A range is one version ("2.16.0"),
// both ends inclusive ("2.0.2..2.15.1") or open above ("3.0.0.."). Versions
// compare by their dot-separated numbers; one that is not all numbers
// ("main") matches only itself.
//
// explore --known keys a real client's signature by it (search/explore.h):
// the finding is known on those versions of that client and new on any
// other, as a model signature is known per producer profile.
#ifndef PRODSIM_SCENARIOS_KNOWN_ON_H_
#define PRODSIM_SCENARIOS_KNOWN_ON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace scenarios {

struct VersionRange {
  std::string low, high;  // high "" and open: no upper end
  bool open = false;
  bool operator==(const VersionRange&) const = default;
};

struct KnownOn {
  struct Client {
    std::string name;  // a driver's name: "librdkafka", "kafkajs-fixes", "java"
    std::vector<VersionRange> ranges;
    bool operator==(const Client&) const = default;
  };
  std::vector<Client> clients;
  bool operator==(const KnownOn&) const = default;

  bool Covers(std::string_view client, std::string_view version) const;
};

// An error says what is wrong in one sentence (the caller adds the place).
absl::StatusOr<KnownOn> ParseKnownOn(std::string_view text);

// <0, 0, >0 as a is below, equal to, above b, by dot-separated numbers;
// a version with a part that is not a number compares equal only to itself
// and is below every numeric one.
int CompareVersions(std::string_view a, std::string_view b);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_KNOWN_ON_H_
