// `prodsim bench`: whole-run figures, side by side in one run.
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

namespace scenarios {

// argv[1] is "bench". Returns the process exit code.
int BenchCommand(int argc, char** argv);

}  // namespace scenarios

#endif  // PRODSIM_CLI_BENCH_H_
