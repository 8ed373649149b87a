// Bytes <-> scenario: the scenario fuzzer's decoder, shared with
// `prodsim decode` (a libFuzzer crash file into a scenario file) and
// `prodsim encode` (a scenario file into fuzzer input, for seed corpora).
//
// Decode(base, bytes) keeps the base's producer config, topics and close
// time, and reads from the bytes, in this order: the workload within the
// base's (messages, keys, burst at most the base's; the interval between
// 1/64 of the base's and the base's), the cluster shape within the base's
// (brokers, partitions, replication, min.insync at most the base's), the
// faults (a count, then each fault's kind and its fields, as explore draws
// them, realistic kinds only unless DecodeOptions::mock_faults), then the
// seed, the schedule policy, the latency, the buggify sites, the
// producer's settings (the base's, or a draw of the settings people use:
// internal::ProducerFields), and the wedge faults (a count, then each one's
// kind, blackhole or connect_hang, and fields; last so that they moved no
// byte of the fields before them). An inject_error the decoded world cannot get
// from Kafka is dropped (realism.h). What the bytes leave over is the random
// schedule's tape (ScheduleSpec::tape): the first scheduling decisions, one
// byte each.
//
// Stability, so that libFuzzer's small mutations are small changes of the
// run: every field has a fixed width (1 or 2 bytes, big-endian, the first
// byte the coarsest; none for a field with one possible value) and maps
// monotonically onto its range; a value changed in place changes that
// field only. The fields before the faults take 8 bytes for a one-topic
// base, a fault 4 to 8, so the short inputs libFuzzer starts with (it grows
// its length limit slowly from an empty corpus) already hold faults.
// Missing bytes read as zero, and zero is the simplest choice of every
// field (one broker, one message, no faults, no buggify): the empty input
// is the smallest scenario, and a shorter input a simpler one. A different
// fault count or kind shifts what follows (as in any such encoding).
#ifndef PRODSIM_SCENARIOS_DECODE_H_
#define PRODSIM_SCENARIOS_DECODE_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "scenarios/scenario.h"

namespace scenarios {

struct DecodeOptions {
  // Caps on top of the base's: short runs make many more executions per
  // second, and every #2803 reproducer we have needs fewer than 30 messages.
  int32_t max_messages = 64;
  int32_t max_faults = 8;  // 0: fault-free scenarios (schedules only)
  // Decode fault kinds from the mock kinds too (what no real cluster does).
  bool mock_faults = false;
  // Read the wedge faults after the producer's settings (at most
  // min(internal::kWedgeFaultsMax, max_faults), beside the max_faults
  // above). Off: the codec as it was before they existed, byte for byte.
  bool wedge_faults = true;
  // Read the late step after the wedge faults: a log directory failure or
  // none, and the application's drain (internal::LateFields). Off: the
  // codec as it was before, byte for byte.
  bool late_draws = true;
};

// The scenario `bytes` stand for, from `base`. A pure function of its
// arguments; always a valid scenario (ParseScenario(PrintScenario(..))
// gives it back). REQUIRES: base is valid, with at least one topic.
Scenario Decode(const Scenario& base, std::span<const uint8_t> bytes,
                const DecodeOptions& options = {});

// Bytes whose Decode(base, ..., options) is `s` as nearly as the encoding
// can say it: each field clamped to what Decode can give from this base
// (an unknown fault kind or error name becomes the first; the seed keeps
// its low 16 bits; durations are rounded to their field's resolution). Decode(Encode(Decode(b))) ==
// Decode(b) for every b.
std::string Encode(const Scenario& base, const Scenario& s, const DecodeOptions& options = {});

// The base the scenario fuzzer and `prodsim decode` use unless told
// otherwise: the report's configuration, bench/scenarios/
// report-config-steady.toml, compiled in (builtin.h; so a fuzzer binary
// runs alone).
inline constexpr std::string_view kDefaultBaseName = "bench/scenarios/report-config-steady.toml";
std::string_view DefaultBaseText();

// The base from `path` (empty: the compiled-in default), its producer
// profile replaced by `profile` unless empty. Errors are one line:
// "FILE:LINE:COLUMN: ..." for a bad file, or about the profile.
absl::StatusOr<Scenario> LoadBase(const std::string& path, const std::string& profile);

}  // namespace scenarios

#endif  // PRODSIM_SCENARIOS_DECODE_H_
