#!/usr/bin/env bash
# Each CLIENT passes FILE in simulated time with every one of its N messages
# acknowledged (prodsim run --client's client line).
#   simulated_acks_test.sh PRODSIM FILE N CLIENT...
set -uo pipefail
prodsim=${1:?}; file=${2:?}; n=${3:?}; shift 3
status=0
for client in "$@"; do
  out=$("$prodsim" run "$file" --client="$client" 2>&1)
  if grep -q ": pass client=" <<<"$out" && grep -q "acked=$n errors=0" <<<"$out"; then
    echo "ok   $client: $(head -1 <<<"$out" | grep -o 'pass client=.* digest=[0-9a-f]*')"
  else
    echo "FAIL $client: want pass with acked=$n errors=0, got:"
    head -5 <<<"$out"
    status=1
  fi
done
exit $status
