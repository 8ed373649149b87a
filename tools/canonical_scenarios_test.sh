#!/bin/bash
# Every committed scenario file that says it is in canonical form (its first
# line is the printer's "# A prodsim scenario, in canonical form") is byte for
# byte what `prodsim print` writes for it, so the claim stays true when the
# format gains a field or a comment changes. A file kept hand-formatted on
# purpose says so in its header instead of claiming the form.
# usage: canonical_scenarios_test.sh PRODSIM SOURCE_DIR
set -euo pipefail
prodsim=$1
cd "$2"
claim='# A prodsim scenario, in canonical form'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{ git ls-files '*.toml' 2>/dev/null ||
  find . -name '*.toml' -not -path './build/*' -not -path '*/node_modules/*'; } >"$tmp/files"
claimed=0
bad=0
first=
while IFS= read -r f; do
  head -n 1 "$f" | grep -qF "$claim" || continue
  claimed=$((claimed + 1))
  [ -n "$first" ] || first=$f
  "$prodsim" print --check "$f" >"$tmp/out" 2>&1 && continue
  cat "$tmp/out" >&2
  "$prodsim" print "$f" 2>/dev/null | diff "$f" - | head -n 10 >&2 || true
  echo "  fix: $prodsim print $f > NEW && mv NEW $f (after checking its digest)" >&2
  bad=$((bad + 1))
done <"$tmp/files"

# The comparison must be able to fail: a canonical file with one line more is
# not canonical.
if [ "$claimed" = 0 ]; then
  echo "no scenario file claims canonical form: the claim's text changed?" >&2
  exit 1
fi
{ cat "$first"; echo "# an extra line"; } >"$tmp/canary.toml"
if "$prodsim" print --check "$tmp/canary.toml" >/dev/null 2>&1; then
  echo "canary: print --check passed a file with an extra comment" >&2
  exit 1
fi

[ "$bad" = 0 ] || { echo "$bad of $claimed files are not canonical" >&2; exit 1; }
echo "$claimed scenario files claim canonical form and are"
