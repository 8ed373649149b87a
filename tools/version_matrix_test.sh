#!/usr/bin/env bash
# tools/version_matrix.py makes its table: one known kafkajs file against
# kafkajs and kafkajs-fixes in simulated time (exact: one run each), written
# between the markers of a scratch Markdown file, the rest of the file kept;
# and its refusals: a file without the markers (66), bad usage (64).
#   version_matrix_test.sh PRODSIM SOURCE_DIR
set -euo pipefail
prodsim=${1:?}; src=${2:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'before\n<!-- version-matrix:begin -->\nold\n<!-- version-matrix:end -->\nafter\n' >"$tmp/doc.md"
file=scenarios/known/real/kafkajs-2.2.4-lost-response-sequence-reuse.toml
python3 "$src/tools/version_matrix.py" --prodsim "$prodsim" --clients kafkajs,kafkajs-fixes \
  --no-others --json "$tmp/m.json" --update "$tmp/doc.md" "$file" 2>"$tmp/err"
fail() { echo "FAIL: $*"; cat "$tmp/doc.md" "$tmp/err"; exit 1; }
grep -q '^before$' "$tmp/doc.md" && grep -q '^after$' "$tmp/doc.md" || fail "text outside the markers lost"
grep -q '^old$' "$tmp/doc.md" && fail "the old table was kept"
grep -qF 'kafkajs 2.2.4: 1/1 (`sequence-reuse@kafkajs`)' "$tmp/doc.md" || fail "no kafkajs cell"
grep -qF 'kafkajs-fixes 2.3.1: 1/1' "$tmp/doc.md" || fail "no kafkajs-fixes cell"
grep -q '"clock": "simulated"' "$tmp/m.json" || fail "the JSON has no clock"
grep -qF "$(cd "$src" && pwd)/" "$tmp/m.json" && fail "the JSON names this machine's path"
printf 'no markers\n' >"$tmp/plain.md"
rc=0
python3 "$src/tools/version_matrix.py" --prodsim "$prodsim" --update "$tmp/plain.md" "$file" \
  2>"$tmp/err" || rc=$?
((rc == 66)) || fail "no markers: exit $rc, want 66"
rc=0
python3 "$src/tools/version_matrix.py" --prodsim "$prodsim" --trials 0 "$file" 2>"$tmp/err" || rc=$?
((rc == 64)) || fail "--trials 0: exit $rc, want 64"
echo "ok: the matrix's table, its JSON and its refusals"
