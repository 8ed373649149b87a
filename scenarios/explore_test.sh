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

# --jobs: the same lines, the same files and the same stopping run as one
# thread, with more threads than runs in flight would need (3) and the
# window wrapping (60 runs), and without --keep-going (stops at the first).
for keep in --keep-going ""; do
  for j in 1 3; do
    mkdir -p "$out/j$j$keep"
    "$prodsim" explore --base="$base" --runs=60 --seed=11 $keep --jobs=$j \
      --out="$out/j$j$keep/files" 2>/dev/null |
      sed -e 's/runs\/s=[0-9.]*//' -e "s|$out/j$j$keep||g" > "$out/j$j$keep/stdout"
  done
  diff "$out/j1$keep/stdout" "$out/j3$keep/stdout" ||
    { echo "explore --jobs=3 ${keep:-(stop at first)} printed other lines than --jobs=1"; exit 1; }
  diff -r "$out/j1$keep/files" "$out/j3$keep/files" ||
    { echo "explore --jobs=3 ${keep:-(stop at first)} wrote other files than --jobs=1"; exit 1; }
  grep -q '^summary: ' "$out/j1$keep/stdout" || { echo "no summary"; exit 1; }
done
echo "--jobs=3 printed and wrote what --jobs=1 did"
