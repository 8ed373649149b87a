#!/bin/bash
# cmake --install into a temporary prefix, then use the installed prodsim
# by name from outside the source tree, as a user would.
# usage: install_test.sh CMAKE BUILD_DIR fuzz|nofuzz
set -euo pipefail
cmake=$1
build=$2
fuzz=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
export PATH="$prefix/bin:$PATH"
share="$prefix/share/prodsim"
cd "$prefix"  # no source tree here

fail() {
  echo "install_test: $*" >&2
  exit 1
}
[ "$(command -v prodsim)" = "$prefix/bin/prodsim" ] || fail "prodsim is not on PATH from the prefix"
prodsim help >/dev/null || fail "prodsim help failed"
# A known finding replays with its verdict (4: producer-assertion) ...
rc=0
prodsim run "$share/scenarios/known/sarama-2803-assertion.toml" >/dev/null || rc=$?
[ $rc = 4 ] || fail "the installed #2803 file gave exit $rc, not 4"
# ... and every installed file reaches its [expect] on both profiles.
prodsim run --check-expect "$share"/scenarios/known/*.toml "$share"/scenarios/known/mock/*.toml \
  "$share"/scenarios/corpus/*.toml >/dev/null || fail "an installed file does not reach its [expect]"
# The defaults that name source-tree files are compiled in.
prodsim bench --runs=3 --seeds=1 >/dev/null || fail "prodsim bench (compiled-in files) failed"
prodsim decode "$share/fuzz/testdata/scenario_fuzzer-crash-2803" -o "$prefix/finding.toml" \
  >/dev/null || [ -s "$prefix/finding.toml" ] || fail "prodsim decode wrote nothing"
grep -q '^\[expect\]' "$prefix/finding.toml" || fail "the decoded finding has no [expect]"
# The installed kafkajs driver runs in simulated time (its lockstep.js and
# node_modules installed beside it), where the build has it.
kafkajs="$prefix/libexec/prodsim/kafkajs/prodsim-kafkajs"
if [ -x "$kafkajs" ]; then
  out=$(prodsim run "$share/scenarios/known/sarama-2803-assertion.toml" --client="$kafkajs" 2>&1) || true
  grep -q "client=kafkajs 2.2.4 digest=" <<<"$out" ||
    fail "the installed kafkajs driver did not run in simulated time: $(head -3 <<<"$out")"
fi
for doc in README.md docs/DESIGN.md docs/usage.md docs/real-clients.md docs/fidelity.md \
           docs/testing.md docs/measurements.md docs/explorations.md docs/speed.md docs/ci.md \
           scenarios/README.md scenarios/known/README.md fault_models/README.md fuzz/README.md; do
  [ -s "$prefix/share/doc/prodsim/$doc" ] || fail "share/doc/prodsim/$doc is missing"
done
if [ "$fuzz" = fuzz ]; then
  for t in scenario_fuzzer scenario_parser_fuzzer broker_state_fuzzer; do
    [ -x "$prefix/bin/$t" ] || fail "bin/$t is missing"
  done
  "$prefix/bin/scenario_fuzzer" -runs=0 "$share/fuzz/testdata/scenario_fuzzer-crash-2803" \
    >/dev/null 2>&1 && fail "the installed scenario_fuzzer does not find #2803 in its crash file"
  [ -s "$share/fuzz/scenario_fuzzer.dict" ] || fail "the fuzzer's dictionary is missing"
fi
echo "installed and used from $prefix: $(cd "$prefix" && find . -type f | wc -l) files"
