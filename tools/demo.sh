#!/usr/bin/env bash
# The main job: installs what is missing, builds the default preset, and runs
# the demo (for now, the deterministic kernel's demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" >/dev/null
./build/default/sim/core/kernel_demo
