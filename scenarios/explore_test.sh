#!/usr/bin/env bash
# prodsim explore end to end: from the known #2803 base, 12 generated runs
# (a fixed root seed, so the same ones every time) must find at least one
# failure, write it as a scenario file, and each written file must replay
# to the verdict and check it was written with.
set -uo pipefail
prodsim=${1:?}; base=${2:?}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"$prodsim" explore --base="$base" --runs=12 --seed=7 --keep-going --out="$out" 2>/dev/null
rc=$?
[[ $rc -eq 1 ]] || { echo "explore found nothing (exit $rc), expected findings"; exit 1; }
files=("$out"/*.toml)
[[ -e ${files[0]} ]] || { echo "no scenario file written"; exit 1; }
"$prodsim" run --check-expect "${files[@]}" || { echo "a written file does not replay"; exit 1; }
echo "replayed ${#files[@]} written file(s)"
