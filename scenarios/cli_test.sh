#!/usr/bin/env bash
# prodsim's handling of bad input from a person: each case must exit with
# its sysexits code and print one line naming the problem (for a bad file:
# FILE:LINE:COLUMN), never crash.
set -uo pipefail
prodsim=${1:?}; src=${2:?}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail=0
expect() {  # expect CODE PATTERN -- ARGS...
  local want=$1 pattern=$2; shift 3
  local out rc
  out=$("$prodsim" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE "$pattern" <<<"$out"; then
    echo "FAIL: prodsim $* -> exit $rc (want $want), stderr: $out"; fail=1
  else
    echo "ok: prodsim $* -> exit $rc: $(head -1 <<<"$out")"
  fi
}
printf 'seed = 1\n[cluster]\nbrokers = 3\nbrokerz = 2\n[[cluster.topics]]\nname = "t"\n' > "$dir/unknown_key.toml"
printf 'seed = "one"\n' > "$dir/wrong_type.toml"
printf 'seed = 1\n[schedule]\npolicy = "lifo"\n' > "$dir/bad_policy.toml"
printf 'seed = 1\n[[cluster.topics]]\nname = "t\n' > "$dir/syntax.toml"
printf 'seed = 1\n[limits]\ntime = "5parsecs"\n' > "$dir/bad_duration.toml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- run "$dir/unknown_key.toml"
expect 65 "wrong_type.toml:1:[0-9]+:" -- run "$dir/wrong_type.toml"
expect 65 "bad_policy.toml:3:[0-9]+:" -- run "$dir/bad_policy.toml"
expect 65 "syntax.toml:[0-9]+:[0-9]+:" -- run "$dir/syntax.toml"
expect 65 "bad_duration.toml:3:[0-9]+:" -- run "$dir/bad_duration.toml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- print "$dir/unknown_key.toml"
expect 66 "cannot read" -- run "$dir/does_not_exist.toml"
expect 64 "unknown flag" -- run --frobnicate "$src/known/sarama-2803-assertion.toml"
expect 64 "unknown subcommand" -- frobnicate x.toml
expect 64 "no scenario file" -- run
for f in "$dir"/*.toml; do
  lines=$("$prodsim" run "$f" 2>&1 >/dev/null | grep -c .)
  [[ $lines -eq 1 ]] || { echo "FAIL: $f gave $lines error lines, want 1"; fail=1; }
done
exit $fail
