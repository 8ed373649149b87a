#!/usr/bin/env bash
# A real client in simulated time replays: each FILE run K times with
# `prodsim digest --client=CLIENT` (each run a new driver process) gives one
# digest, K of K. The digest covers every line between prodsim and the
# driver (wire/real_world.cc, Lockstep), so one digest means one run: the
# same bytes on every connection at the same simulated instants, the same
# outcomes. docs/real-clients.md has the 100-run figures.
#   simulated_replay_test.sh PRODSIM CLIENT K FILE...
set -uo pipefail
prodsim=${1:?}; client=${2:?}; k=${3:?}; shift 3
status=0
for file in "$@"; do
  digests=$(for ((i = 0; i < k; i++)); do
    "$prodsim" digest "$file" --client="$client" 2>&1 | grep -o 'digest=[0-9a-f]*' || echo "no digest"
  done | sort | uniq -c)
  if grep -q "no digest" <<<"$digests"; then
    echo "FAIL $(basename "$file") on $client: a run printed no digest:"
    "$prodsim" digest "$file" --client="$client" 2>&1 | head -5
    status=1
  elif (($(wc -l <<<"$digests") != 1)); then
    echo "FAIL $(basename "$file") on $client: $k runs, $(wc -l <<<"$digests") digests:"
    echo "$digests"
    status=1
  else
    echo "ok   $(basename "$file") on $client: $k of $k runs give $(awk '{print $2}' <<<"$digests")"
  fi
done
exit $status
