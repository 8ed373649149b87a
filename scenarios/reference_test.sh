#!/bin/bash
# The generated reference in scenarios/README.md must be exactly what
# `prodsim schema --markdown` prints: the schema and its documentation
# cannot drift apart. usage: reference_test.sh PRODSIM README
set -euo pipefail
prodsim=$1
readme=$2
got=$(mktemp)
want=$(mktemp)
trap 'rm -f "$got" "$want"' EXIT
"$prodsim" schema --markdown >"$want"
# The block from the BEGIN marker to the END marker, both included.
sed -n '/^<!-- BEGIN generated reference/,/^<!-- END generated reference -->$/p' "$readme" >"$got"
if ! [ -s "$got" ]; then
  echo "$readme: no generated reference block (the BEGIN and END markers)" >&2
  exit 1
fi
if ! diff -u "$got" "$want"; then
  echo "$readme: the generated reference is out of date; replace the block with" \
       "the output of 'prodsim schema --markdown'" >&2
  exit 1
fi
echo "reference up to date: $(grep -c '^| `' "$want") keys and kinds"
