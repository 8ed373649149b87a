#!/bin/bash
# The differential test's canary: with a deliberate mistake on prodsim's
# side (kafka_differential --mutant), the comparison with Kafka's Log must
# find a difference (exit 1) and shrink it to a few operations.
#
#   canary_test.sh KAFKA_DIFFERENTIAL KAFKA_REFERENCE MUTANT
set -uo pipefail
bin=$1 ref=$2 mutant=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" "--reference=$ref" "--mutant=$mutant" --sequences=300 "--out=$out" >/dev/null
rc=$?
if [[ $rc -ne 1 ]]; then
  echo "FAIL: --mutant=$mutant: exit $rc, want 1 (a difference)"
  exit 1
fi
ops=$(grep -cv '^#' "$out")
cat "$out"
if (( ops > 8 )); then
  echo "FAIL: --mutant=$mutant: the difference shrank to $ops operations, want 8 at most"
  exit 1
fi
echo "ok: --mutant=$mutant differs from Kafka in $ops operation(s)"
