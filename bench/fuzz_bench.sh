#!/usr/bin/env bash
# The scenario fuzzer's two targets (issue 7), measured side by side:
#  1. speed: executions per second of scenario_fuzzer on one core for
#     SECONDS s, on each profile, with every check ignored (nothing stops
#     the run, so the figure is the fuzzing distribution's, faults included);
#  2. search: wall seconds from an EMPTY corpus to the first #2803-kind
#     failure (Sarama's produceSet assertion, or a broker's
#     OUT_OF_ORDER_SEQUENCE_NUMBER / INVALID_PRODUCER_EPOCH) on
#     sarama-1.42.1 with the report's configuration as the base (the
#     compiled-in default), over RUNS libFuzzer seeds: median and spread.
# Both parts run on the default base and on the fast-rejoin base
# (fuzz/bases/, at most 32 messages: fuzz/README.md, "Speed").
# Run it on the fuzz preset's binary (clang, UBSan, no ASan):
#   cmake --preset fuzz && ninja -C build/fuzz fuzz/scenario_fuzzer
#   bench/fuzz_bench.sh build/fuzz/fuzz/scenario_fuzzer [SECONDS=60] [RUNS=10]
set -euo pipefail
fuzzer=${1:?usage: $0 PATH/TO/scenario_fuzzer [SECONDS] [RUNS]}
seconds=${2:-60}
runs=${3:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
dict=$root/fuzz/dict/scenario_fuzzer.dict
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every check and every failure mechanism the fuzzer knows, from the fuzzer
# itself (an unknown name makes it list them): a list written here went
# stale when checks were added, and the speed run then stopped at the first
# finding of a new check and printed a short run's rate.
all_checks=$( (PRODSIM_FUZZ_IGNORE=- "$fuzzer" -runs=0 2>&1 || true) | sed -nE 's/.*\(known: (.*)\)$/\1/p' | tr -d ' ')
[[ -n $all_checks ]] || { echo "fuzz_bench: $fuzzer did not list its checks" >&2; exit 1; }
# The fast-rejoin base: the report's configuration with Kafka's
# zookeeper.session.timeout.ms of 6 s (its default before 2.5) instead of
# 18 s, fuzzed with at most 32 messages (fuzz/README.md, "Speed").
fast_env=(PRODSIM_FUZZ_BASE="$root/fuzz/bases/report-config-fast-rejoin.toml"
          PRODSIM_FUZZ_MAX_MESSAGES=32)

echo "1. scenario_fuzzer speed, one core, ${seconds} s each, every check ignored"
echo "   (-entropic=0 is what fuzz/scenario_fuzzer.options sets; the default is shown beside it;"
echo "    fast-rejoin: the base with a 6 s ZooKeeper session and at most 32 messages)"
for profile in sarama-1.42.1 sarama-main; do
  for setting in entropic=0 entropic=1 fast-rejoin; do
    entropic=0
    env=()
    case $setting in
      entropic=1) entropic=1 ;;
      fast-rejoin) env=("${fast_env[@]}") ;;
    esac
    out=$tmp/speed-$profile-$setting
    mkdir -p "$out"
    env "${env[@]}" PRODSIM_FUZZ_PROFILE=$profile PRODSIM_FUZZ_IGNORE=$all_checks \
      "$fuzzer" -seed=1 -entropic="$entropic" -max_total_time="$seconds" -dict="$dict" \
      -artifact_prefix="$out-" "$out" > "$out.log" 2>&1 || true
    line=$(grep -E '^#[0-9]+' "$out.log" | tail -1)
    execs=$(sed -E 's/^#([0-9]+).*/\1/' <<< "$line")
    rate=$(sed -nE 's/.*exec\/s: ([0-9]+).*/\1/p' <<< "$line")
    cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<< "$line")
    printf '  %-14s %-11s %9s execs  %6s exec/s  cov %s  corpus %s files\n' "$profile" \
      "$setting" "$execs" "$rate" "$cov" "$(ls "$out" | wc -l)"
    if grep -q 'deadly signal\|==prodsim==' "$out.log"; then
      echo "    (stopped early: $(grep -m1 '^==prodsim== ' "$out.log" || echo 'a crash'))"
    fi
  done
done

for setting in report fast-rejoin; do
  env=()
  [[ $setting == fast-rejoin ]] && env=("${fast_env[@]}")
  echo "2. empty corpus -> first #2803-kind failure, sarama-1.42.1, base: $setting, ${runs} seeds"
  times=()
  for seed in $(seq 1 "$runs"); do
    dir=$tmp/search-$setting-$seed
    mkdir -p "$dir"
    start=$(date +%s.%N)
    env "${env[@]}" PRODSIM_FUZZ_CHECKS=no-producer-assertion,no-broker-sequence-error \
      "$fuzzer" -seed="$seed" -entropic=0 -max_total_time=300 -dict="$dict" -artifact_prefix="$dir/" "$dir" \
      > "$dir.log" 2>&1 && found=no || found=yes
    end=$(date +%s.%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
    what=$(grep -m1 '^==prodsim== ' "$dir.log" | sed 's/^==prodsim== //' || true)
    execs=$(grep -E '^#[0-9]+' "$dir.log" | tail -1 | sed -E 's/^#([0-9]+).*/\1/' || true)
    printf '  seed %2d: %7.2f s  %8s execs  %s\n' "$seed" "$t" "${execs:-?}" \
      "$([[ $found == yes ]] && echo "$what" || echo 'not found in 300 s')"
    times+=("$t")
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -g)
  n=${#times[@]}
  if (( n % 2 == 1 )); then
    median=$(sed -n "$(( n / 2 + 1 ))p" <<< "$sorted")
  else
    a=$(sed -n "$(( n / 2 ))p" <<< "$sorted"); b=$(sed -n "$(( n / 2 + 1 ))p" <<< "$sorted")
    median=$(awk -v a="$a" -v b="$b" 'BEGIN { print (a + b) / 2 }')
  fi
  printf '  median %.2f s, min %.2f s, max %.2f s (target: median < 60 s)\n' "$median" \
    "$(head -1 <<< "$sorted")" "$(tail -1 <<< "$sorted")"
done
