#!/usr/bin/env bash
# The main job: installs what is missing, builds the default preset, installs
# prodsim under build/install (cmake --install), and runs the demo with
# `prodsim` by name on scenario files:
# 1. the configuration of IBM/sarama#2803 with no faults: 10,000 messages
#    over 3 brokers and 6 partitions; every property check passes;
# 2. the known findings (scenarios/known/): the same configuration under
#    one realistic fault each ends with Sarama's "message out of sequence"
#    assertion, the broker's OUT_OF_ORDER_SEQUENCE_NUMBER, or an
#    acknowledged message that no log holds; and the findings about Sarama
#    main (the verdict and explanation of each are printed);
# 3. all replayed: the same digest with and without trace recording;
# 4. both producer profiles: each file's [expect] for its own profile and
#    [expect.profiles] for the other (the #2803 reproducers pass on
#    sarama-main);
# 5. a scenario_fuzzer crash file (8 bytes, found from an empty corpus in
#    seconds) decoded into a scenario file, and shrunk;
# 6. wire mode: the real librdkafka 2.0.2 (Debian's) against the same
#    cluster model on 127.0.0.1: 1,000 messages without faults pass every
#    check; the #4438 scenario file ends in librdkafka's fatal error;
# 7. simulated time: the real kafkajs 2.2.4 in lockstep with the simulated
#    cluster (clients/README.md) replays its sequence-reuse finding, the
#    same verdict and digest twice, and the real Java producer
#    (kafka-clients 3.9.1) passes the same file (where node and the Java
#    driver are built).
# A step whose point is a failing verdict checks that verdict. The demo
# exits 0 when every step did what it shows, 1 when one did not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# The same configuration as tools/test.sh, so that one build tree serves both.
export PRODSIM_WERROR=${PRODSIM_WERROR:-ON}
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" >/dev/null
prefix=${PRODSIM_PREFIX:-$PWD/build/install}
cmake --install build/default --prefix "$prefix" >/dev/null
export PATH="$prefix/bin:$PATH"
echo "prodsim installed: $(command -v prodsim)"

failed=0
# expect CODE WHAT COMMAND...: runs COMMAND (its output shown) and says so
# if its exit code is not CODE.
expect() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "demo: $what: exit $rc, expected $want" >&2
    failed=1
  fi
}
# The exit code of a verdict (docs/usage.md's table).
verdict_code() {
  case $1 in
    pass) echo 0 ;; safety) echo 1 ;; liveness) echo 2 ;; deadlock) echo 3 ;;
    producer-assertion) echo 4 ;; *) echo 70 ;;
  esac
}

echo
echo "== 1. the report's configuration, no faults (pass: exit 0)"
expect 0 "the fault-free run" prodsim run scenarios/corpus/report-config-10k-no-faults.toml
echo
echo "== 2. the known findings (each exits with its verdict: 4 producer-assertion, 1 safety)"
for f in scenarios/known/*.toml; do
  v=$(sed -n '/^\[expect\]/,/^\[/{s/^verdict = "\(.*\)"/\1/p}' "$f" | head -n 1)
  expect "$(verdict_code "$v")" "$f ($v)" prodsim run "$f"
done
echo
echo "== 3. replay"
expect 0 "replay" prodsim determinism scenarios/known/*.toml
echo
echo "== 4. both profiles, as ctest checks them"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
expect 0 "an [expect] that does not hold" prodsim run --check-expect scenarios/known/*.toml \
  >"$out/expect.txt"
grep -E '^scenarios|^  on |expect does not hold' "$out/expect.txt" || true
echo
echo "== 5. a fuzzer's crash file becomes a scenario file (prodsim decode), then a small one (shrink)"
expect 0 "decode" prodsim decode fuzz/testdata/scenario_fuzzer-crash-2803 -o "$out/finding.toml"
if ! grep -q '^verdict = "producer-assertion"' "$out/finding.toml"; then
  echo "demo: the decoded crash file is not Sarama's assertion" >&2
  failed=1
fi
expect 0 "shrink" prodsim shrink "$out/finding.toml" -o "$out/min.toml" >"$out/shrink.txt"
tail -n 3 "$out/shrink.txt"
# The shrunk file carries its verdict as [expect]; it must still hold.
expect 0 "the shrunk file's [expect]" prodsim run --check-expect "$out/min.toml" >"$out/min.txt"
head -n 3 "$out/min.txt"
echo
echo "== 6. wire mode: real librdkafka over TCP (a distribution over trials: real timing varies)"
expect 0 "librdkafka without faults" prodsim real wire/testdata/librdkafka-fault-free-1000.toml \
  --client=librdkafka
expect 4 "librdkafka #4438" prodsim real \
  scenarios/known/real/librdkafka-2.0.2-4438-sequence-desync.toml --client=librdkafka \
  --trials=5 --until-failure
echo
echo "== 7. simulated time: a real client's failure replays (one verdict, one digest)"
reuse=scenarios/known/real/kafkajs-2.2.4-lost-response-sequence-reuse.toml
if prodsim run "$reuse" --client=kafkajs >"$out/sim1.txt" 2>&1 ||
   grep -q "client=kafkajs" "$out/sim1.txt"; then
  expect 1 "kafkajs sequence-reuse in simulated time" prodsim run "$reuse" --client=kafkajs
  d1=$(grep -o 'digest=[0-9a-f]*' "$out/sim1.txt" | head -1)
  d2=$( (prodsim run "$reuse" --client=kafkajs 2>&1 || true) | grep -o 'digest=[0-9a-f]*' | head -1)
  if [ "$d1" = "$d2" ]; then
    echo "replayed: $d1 both times"
  else
    echo "DEMO: two runs, two digests ($d1, $d2)" >&2
    failed=1
  fi
  if prodsim run "$reuse" --client=java >"$out/java.txt" 2>&1 || grep -q "client=java" "$out/java.txt"; then
    expect 0 "the Java producer on the same file" prodsim run "$reuse" --client=java
  else
    echo "(the Java driver is not built: $(head -1 "$out/java.txt"))"
  fi
else
  echo "(the kafkajs driver is not built: $(head -1 "$out/sim1.txt"))"
fi
echo
if [ $failed = 0 ]; then
  echo "demo: every step did what it shows"
else
  echo "demo: a step did not do what it shows (above)" >&2
fi
exit $failed
