#!/bin/bash
# The generated reference in scenarios/README.md must be exactly what
# `prodsim schema --markdown` prints: the schema and its documentation
# cannot drift apart.
# usage: reference_test.sh [--update] PRODSIM README
#   --update: replace the block with what the schema says, then check.
set -euo pipefail
update=0
if [ "${1:-}" = --update ]; then
  update=1
  shift
fi
prodsim=$1
readme=$2
got=$(mktemp)
want=$(mktemp)
trap 'rm -f "$got" "$want"' EXIT
"$prodsim" schema --markdown >"$want"
if [ $update = 1 ]; then
  # Everything before the BEGIN marker, the new block, everything after END.
  new=$(mktemp)
  sed -n '1,/^<!-- BEGIN generated reference/p' "$readme" | sed '$d' >"$new"
  cat "$want" >>"$new"
  sed -n '/^<!-- END generated reference -->$/,$p' "$readme" | sed '1d' >>"$new"
  cat "$new" >"$readme"
  rm -f "$new"
fi
# The block from the BEGIN marker to the END marker, both included.
sed -n '/^<!-- BEGIN generated reference/,/^<!-- END generated reference -->$/p' "$readme" >"$got"
if ! [ -s "$got" ]; then
  echo "$readme: no generated reference block (the BEGIN and END markers)" >&2
  exit 1
fi
if ! diff -u "$got" "$want"; then
  echo "$readme: the generated reference is out of date; run" \
       "scenarios/reference_test.sh --update PRODSIM $readme" >&2
  exit 1
fi
# The complete example (the README's first toml block) is a valid scenario
# and shows every key of the reference.
example=$(mktemp)
trap 'rm -f "$got" "$want" "$example"' EXIT
awk '/^```toml$/ {on = 1; next} on && /^```$/ {exit} on' "$readme" >"$example"
if ! "$prodsim" print "$example" >/dev/null; then
  echo "$readme: the complete example does not parse" >&2
  exit 1
fi
missing=0
for key in $(sed -n '/^#### Fault kinds/q; s/^| `\([a-z_]*\)` |.*/\1/p' "$want" | sort -u); do
  if ! grep -Eq "^(# )?$key = " "$example"; then
    echo "$readme: the complete example does not show '$key'" >&2
    missing=1
  fi
done
[ $missing = 0 ] || exit 1
echo "reference up to date: $(grep -c '^| `' "$want") keys and kinds"
