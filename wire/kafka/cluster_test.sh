#!/bin/bash
# Tests a kafka-cluster built by build.sh (cluster_test.py says what):
#   wire/kafka/cluster_test.sh OUT_DIR        e.g. cluster_test.sh /tmp/kc-2.6.2
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
exec python3 "$(cd "$(dirname "$0")" && pwd)/cluster_test.py" "$1"
