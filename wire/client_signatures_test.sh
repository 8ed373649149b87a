#!/usr/bin/env bash
# Each real client's failure signature (checks/client_signature.cc) fires
# on a trial of prodsim-fake-client, a driver that misbehaves on purpose one
# way per mode, and the wire verdict is the one a real client doing so
# would get; a well-behaved mode of the same world would pass (canary:
# every mode but one fails, and the one that does not is checked to pass
# in client_lines_test). Also: --out keeps the failing trial's report and
# history with the client's lines.
set -uo pipefail
prodsim=${1:?}; fake=${2:?}; testdata=${3:?}
file=$testdata/fake-client.toml
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
status=0
expect() {  # MODE VERDICT-TEXT [SCENARIO]
  local mode=$1 want=$2 scenario=${3:-$file}
  "$prodsim" real "$scenario" --client="$fake $mode" --bound=10s --out="$out/$mode" >"$out/$mode.log" 2>&1
  if ! grep -qF -- "$want" "$out/$mode.log"; then
    echo "FAIL $mode: want '$want', got:"; sed -n 1,20p "$out/$mode.log"; status=1
  else
    echo "ok   $mode: $want"
  fi
}
expect sequence-reuse "safety [acked-are-durable] sequence-reuse@fake"
expect rewrite "safety [no-duplicates] rewritten-under-new-sequence@fake"
expect not-persisted "safety [not-persisted-absent] not-persisted-but-written@fake"
expect ack-without-write "safety [acked-are-durable] ack-without-write@fake"
expect overtake "safety [per-partition-order] retry-overtaken@fake"
expect stall "client-failure [client-hung] stalled-after-heal@fake"
expect assertion "producer-assertion [no-producer-assertion]"
expect dead-connection "client-failure [client-hung] kept-dead-connection@fake" \
  "$testdata/fake-client-blackhole.toml"
# The Sarama driver's goroutine report: a leak where the scenario opts in,
# nothing where it does not (the same trial passes).
expect goroutine-leak "safety [no-leaked-goroutines] goroutine-leak@Broker.responseReceiver" \
  "$testdata/fake-client-goroutines.toml"
expect goroutine-leak "trial 1/1: pass client=sarama goroutine-leak"
# The kept report of a failing trial names its signature's chain and the
# history holds the client's lines beside the broker's.
grep -q "signature: sequence-reuse@fake; how it came about:" "$out/sequence-reuse/trial-1.txt" ||
  { echo "FAIL: no chain in the kept report"; status=1; }
grep -q 'client {"event":"ack","id":2' "$out/sequence-reuse/trial-1-history.txt" ||
  { echo "FAIL: the kept history has no client lines"; status=1; }
grep -q "answered as a duplicate (request ids=2)" "$out/sequence-reuse/trial-1-history.txt" ||
  { echo "FAIL: the history does not say what the duplicate carried"; status=1; }
# explore --client and shrink over the wire, end to end on the fake client:
# a generated scenario fails with sequence-reuse, the new signature's file
# is shrunk over the wire (kept while 2 of 2 trials fail the same way), and
# prodsim shrink --client does the same for one file.
"$prodsim" explore --base="$file" --client="$fake sequence-reuse" --runs=6 --keep-going \
  --out="$out/explore" --shrink-trials=2 --shrink-needed=2 --shrink-time=15s >"$out/explore.log" 2>&1
if grep -q "found: seed [0-9]*: safety \[acked-are-durable\] sequence-reuse@fake client=fake" "$out/explore.log" &&
   grep -q 'signature = "sequence-reuse@fake"' "$out/explore/new-sequence-reuse.toml" &&
   ls "$out"/explore/*-history.txt >/dev/null 2>&1; then
  echo "ok   explore --client: found, kept the trials' histories, shrank new-sequence-reuse.toml"
else
  echo "FAIL explore --client:"; cat "$out/explore.log"; status=1
fi
"$prodsim" shrink "$file" -o "$out/min.toml" --client="$fake rewrite" --trials=2 --needed=2 \
  --time=60s >"$out/shrink.log" 2>&1
if grep -q "the result failed the same way in 2 of 2 trials" "$out/shrink.log" &&
   grep -q 'signature = "rewritten-under-new-sequence@fake"' "$out/min.toml"; then
  echo "ok   shrink --client: $(grep 'final size' "$out/shrink.log")"
else
  echo "FAIL shrink --client:"; cat "$out/shrink.log"; status=1
fi
exit $status
