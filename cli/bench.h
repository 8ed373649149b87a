// `prodsim bench`: whole-run figures, side by side in one run (declared,
// with its flags, by DeclareBench in cli/bench.cc).
//
// 1. Runs per second and simulated seconds per wall second for a small
//    scenario (bench/scenarios/small-5-faults.toml: 100 messages, 3 brokers,
//    3 partitions, 5 faults) over seeds 1..N.
// 2. Time to the first IBM/sarama#2803-kind failure (the produceSet
//    assertion, or the broker answering OUT_OF_ORDER_SEQUENCE_NUMBER /
//    INVALID_PRODUCER_EPOCH) when exploring from the report's configuration
//    (bench/scenarios/report-config-steady.toml), per exploration seed: the
//    median, minimum and maximum over K seeds, in wall seconds and in runs.
//
// Wall time is measured here and only printed; it never enters a run.
#ifndef PRODSIM_CLI_BENCH_H_
#define PRODSIM_CLI_BENCH_H_

#include <cstdint>
#include <string>

#include "scenarios/scenario.h"

namespace cli {

// 3. (prodsim bench --wire, cli/bench_wire.cc) Time to the first failure
//    when exploring from a base, the model in the simulated world beside a
//    real client over the wire, on the same generated scenarios.
struct WireBenchArgs {
  std::string client = "librdkafka";
  uint64_t seeds = 3;
  uint64_t model_runs = 2000;
  uint64_t real_trials = 5;
};
int WireBench(const scenarios::Scenario& base, const std::string& base_path,
              const WireBenchArgs& a);

// 4. (prodsim bench --wire-jobs) explore --client's trials one at a time
//    beside `jobs` at once: the throughput over the same generated
//    scenarios, and one file's failure rate both ways (Fisher's exact test),
//    so that the default --jobs is one at which timing does not change
//    outcomes.
struct WireJobsArgs {
  std::string client = "librdkafka";
  unsigned jobs = 0;  // 0: search::kRealJobsDefault
  uint64_t generated = 32;
  uint64_t trials = 40;
};
int WireJobsBench(const scenarios::Scenario& file, const std::string& file_path,
                  const scenarios::Scenario& base, const std::string& base_path,
                  const WireJobsArgs& a);

// 5. (prodsim bench --simulated) one file's trials of a real client in
//    simulated time beside the same number on the wall clock, in one run:
//    trials per second each way (wall-clock trials `wall_jobs` at once, as
//    explore --client runs them; simulated ones on the cores), the ratio, and
//    the verdicts and digests of each side.
struct SimulatedBenchArgs {
  std::string client = "kafkajs";
  uint64_t trials = 10;
  unsigned wall_jobs = 0;  // 0: search::kRealJobsDefault
};
int SimulatedBench(const scenarios::Scenario& file, const std::string& file_path,
                   const SimulatedBenchArgs& a);

}  // namespace cli

#endif  // PRODSIM_CLI_BENCH_H_
