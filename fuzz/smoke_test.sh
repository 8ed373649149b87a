#!/usr/bin/env bash
# ctest fuzz_smoke (builds with PRODSIM_FUZZ): the CI fuzz job, fuzz/run-ci,
# on this build's libFuzzer targets, with a scratch corpus root and output
# directory (the source tree is never written).
#   1. a few seconds each of the parser, the broker state and fault-free
#      scenarios: nothing to find, so run-ci exits 0;
#   2. the planted failure: scenario_fuzzer on the default base with
#      sarama-1.42.1, which has IBM/sarama#2803; run-ci must exit 1 with a
#      crash file, decode it to CRASH.toml and shrink it to CRASH.min.toml,
#      and `prodsim run --check-expect CRASH.min.toml` must hold.
#   fuzz/smoke_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=${1:?usage: smoke_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: smoke_test.sh SOURCE_DIR BUILD_DIR}
runci=$src/fuzz/run-ci
prodsim=$build/bin/prodsim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Only what each step sets reaches the fuzzers.
unset PRODSIM_FUZZ_BASE PRODSIM_FUZZ_PROFILE PRODSIM_FUZZ_MAX_MESSAGES PRODSIM_FUZZ_MAX_FAULTS \
      PRODSIM_FUZZ_CHECKS PRODSIM_FUZZ_IGNORE FUZZ_ARGS FUZZ_SHRINK_MAX_RUNS
# Each step fuzzes from its own copy of the committed corpora (step 1's
# merged finds would be seeds of step 2, and some hold faults).
cp -r "$src/fuzz/corpus" "$tmp/corpus1"
cp -r "$src/fuzz/corpus" "$tmp/corpus2"
source_corpus() { find "$src/fuzz/corpus" -type f -printf '%P %s %T@\n' | sort; }
source_corpus > "$tmp/source-before"

# 0. Bad usage: one line, exit 64.
"$runci" --no-build --bogus > "$tmp/usage.out" 2>&1
rc=$?
((rc == 64)) || fail "run-ci --bogus exited $rc, not 64"
(($(wc -l < "$tmp/usage.out") == 1)) || fail "run-ci --bogus printed more than one line"

# 1. Nothing to find.
echo "=== 1. three targets, 3 s each, fault-free scenarios"
FUZZ_SECONDS=3 PRODSIM_FUZZ_MAX_FAULTS=0 "$runci" --no-build "--build-dir=$build" \
  "--corpus-root=$tmp/corpus1" "--out=$tmp/out1" \
  scenario_parser_fuzzer broker_state_fuzzer scenario_fuzzer 2>&1 | tee "$tmp/run1.log"
rc=${PIPESTATUS[0]}
((rc == 0)) || fail "step 1: run-ci exited $rc, not 0"
for t in scenario_parser_fuzzer broker_state_fuzzer scenario_fuzzer; do
  grep -qE "^$t +[0-9]+ +[0-9-]+ +[0-9]+  -\$" "$tmp/run1.log" \
    || fail "step 1: no summary row without a finding for $t"
done

# 2. The planted failure.
echo "=== 2. scenario_fuzzer on sarama-1.42.1 (IBM/sarama#2803), at most 30 s"
FUZZ_SECONDS=30 PRODSIM_FUZZ_PROFILE=sarama-1.42.1 "$runci" --no-build "--build-dir=$build" \
  "--corpus-root=$tmp/corpus2" "--out=$tmp/out2" scenario_fuzzer 2>&1 | tee "$tmp/run2.log"
rc=${PIPESTATUS[0]}
((rc == 1)) || fail "step 2: run-ci exited $rc, not 1 (a finding)"
crash=$(find "$tmp/out2/scenario_fuzzer" -maxdepth 1 -type f -name 'crash-*' ! -name '*.toml' | head -n 1)
if [[ -z $crash ]]; then
  fail "step 2: no crash file in $tmp/out2/scenario_fuzzer"
else
  [[ -s $crash.toml ]] || fail "step 2: no $crash.toml (prodsim decode)"
  [[ -s $crash.min.toml ]] || fail "step 2: no $crash.min.toml (prodsim shrink)"
  if [[ -s $crash.min.toml ]]; then
    "$prodsim" run --check-expect "$crash.min.toml"
    rc=$?
    ((rc == 0)) || fail "step 2: prodsim run --check-expect CRASH.min.toml exited $rc"
  fi
fi

source_corpus > "$tmp/source-after"
cmp -s "$tmp/source-before" "$tmp/source-after" || fail "fuzz/corpus in the source tree changed"

if ((fails)); then
  echo "fuzz smoke: $fails failure(s)"
  exit 1
fi
echo "fuzz smoke: passed"
