#!/usr/bin/env bash
# The determinism lint must flag the ten planted violations (six rules; the
# include of <unordered_map> counts too) in its
# canary file, and exit 1; a lint that passes it is broken.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(bash "$here/determinism_lint.sh" "$here/testdata/lint_canary")
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || { echo "expected exit 1, got $rc"; exit 1; }
for rule in wall-clock libc-random library-prng std-distribution hash-container coawait-braced-temporary; do
  grep -q ": $rule: " <<<"$out" || { echo "rule $rule not reported"; exit 1; }
done
[[ $(grep -c . <<<"$out") -eq 10 ]] || { echo "expected exactly 10 findings"; exit 1; }
echo "canary: all ten violations reported, the allowed line was not"
