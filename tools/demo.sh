#!/usr/bin/env bash
# The main job: installs what is missing, builds the default preset, and runs
# the demo: the Sarama v1.42.1 model with the configuration of
# IBM/sarama#2803, first without faults (10,000 messages, every one
# acknowledged once and in order), then under faults until the #2803
# assertion shows, replayed to the same digest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" >/dev/null
./build/default/producer/sarama_demo
echo
echo "== the known-bug scenario files, replayed with prodsim run"
./build/default/scenarios/prodsim run scenarios/known/*.toml || true
