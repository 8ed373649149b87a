// Profile: which Sarama's behaviour the producer model follows.
//
// The profiles share one model; they differ only where Sarama's code
// differs, and each such place dispatches on the State's `profile` (the
// producer) or on Env::profile (its Client and Brokers). The differences of
// sarama-main from sarama-1.42.1 are listed, with the commit that made
// each, at the top of producer/async_producer_main.cc.
#ifndef PRODSIM_PRODUCER_PROFILE_H_
#define PRODSIM_PRODUCER_PROFILE_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace sarama {

enum class Profile {
  kSarama_1_42_1,  // "sarama-1.42.1": the release of IBM/sarama#2803
  // "sarama-main": IBM/sarama main at 282cd488 (#3692), with partition
  // muting, plus the change of the open PR #3693.
  kSaramaMain,
};

// "sarama-1.42.1" or "sarama-main".
std::string_view ProfileName(Profile p);
// The inverse of ProfileName; INVALID_ARGUMENT naming the accepted spellings.
absl::StatusOr<Profile> ParseProfile(std::string_view name);

}  // namespace sarama

#endif  // PRODSIM_PRODUCER_PROFILE_H_
