#!/usr/bin/env bash
# The main job: installs what is missing, builds the default preset, and runs
# the demo with prodsim on scenario files:
# 1. the configuration of IBM/sarama#2803 with no faults: 10,000 messages
#    over 3 brokers and 6 partitions; every property check passes;
# 2. the known findings (scenarios/known/): the same configuration under
#    one fault each ends with Sarama's "message out of sequence" assertion,
#    the broker's OUT_OF_ORDER_SEQUENCE_NUMBER, or an acknowledged message
#    that no log holds; and the findings about Sarama main (the verdict and
#    explanation of each are printed);
# 3. all replayed: the same digest with and without trace recording;
# 4. both producer profiles: each file's [expect] for its own profile and
#    [expect.profiles] for the other (the #2803 reproducers pass on
#    sarama-main);
# 5. a scenario_fuzzer crash file (8 bytes, found from an empty corpus in
#    seconds) decoded into a scenario file, and shrunk.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" >/dev/null
prodsim=./build/default/scenarios/prodsim
echo "== 1. the report's configuration, no faults"
$prodsim run scenarios/corpus/report-config-10k-no-faults.toml
echo
echo "== 2. the known findings (exit code 4: producer-assertion, 1: safety)"
$prodsim run scenarios/known/*.toml || true
echo
echo "== 3. replay"
$prodsim determinism scenarios/known/*.toml
echo
echo "== 4. both profiles, as ctest checks them"
$prodsim run --check-expect scenarios/known/*.toml | grep -E '^scenarios|^  on |expect does not hold'
echo
echo "== 5. a fuzzer's crash file becomes a scenario file (prodsim decode), then a small one (shrink)"
out=$(mktemp -d)
$prodsim decode fuzz/testdata/scenario_fuzzer-crash-2803 -o "$out/finding.toml"
$prodsim shrink "$out/finding.toml" -o "$out/min.toml" | tail -n 3
$prodsim run "$out/min.toml" | head -n 2
rm -rf "$out"
