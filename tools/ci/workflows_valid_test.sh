#!/usr/bin/env bash
# ctest workflows_valid: @action-validator/cli (tools/ci/package.json, its
# lockfile) validates against GitHub's schemas
# - every workflow under .github/workflows/ and docs/ci/ (the ones meant
#   for other repositories, e.g. Sarama's) and every
#   .github/actions/*/action.yml,
# - each ```yaml block of docs/ci.md that is a workflow (has `jobs:`),
# - the runner canaries tools/testdata/workflows/*_canary.yml;
# and must reject tools/testdata/workflows/broken.yml, the canary: a
# validator that passes it checks nothing.
# usage: workflows_valid_test.sh NODE CLI_MJS SOURCE_DIR
set -uo pipefail
node=$1 cli=$2 src=$3
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
checked=0
validate() {  # validate FILE [LABEL]
  checked=$((checked + 1))
  if ! "$node" "$cli" "$1" >"$tmp/out" 2>&1; then
    echo "FAIL: ${2:-$1} is not valid:" >&2
    grep -v '^WARNING: Glob validation' "$tmp/out" | head -40 >&2
    bad=$((bad + 1))
  fi
}

shopt -s nullglob
files=(.github/workflows/*.yml .github/workflows/*.yaml .github/actions/*/action.yml docs/ci/*.yml
       tools/testdata/workflows/*_canary.yml)
if ((${#files[@]} < 4)); then
  echo "FAIL: found only ${#files[@]} workflow and action files" >&2
  exit 1
fi
for f in "${files[@]}"; do validate "$f"; done

# docs/ci.md's workflow snippets, each in a file of its own.
awk -v dir="$tmp" '
  /^```yaml/ { n++; file = dir "/ci-md-snippet-" n ".yml"; body = 1; next }
  /^```/ && body { body = 0; close(file); next }
  body { print > file }' docs/ci.md
snippets=0
for s in "$tmp"/ci-md-snippet-*.yml; do
  grep -q '^jobs:' "$s" || continue
  snippets=$((snippets + 1))
  validate "$s" "docs/ci.md's workflow snippet $(basename "$s" .yml | sed 's/ci-md-snippet-/#/')"
done
((snippets > 0)) || { echo "FAIL: docs/ci.md has no workflow snippet" >&2; bad=$((bad + 1)); }

# The canary.
if "$node" "$cli" tools/testdata/workflows/broken.yml >"$tmp/out" 2>&1; then
  echo "FAIL: the canary tools/testdata/workflows/broken.yml passed the validator" >&2
  bad=$((bad + 1))
fi

if ((bad)); then
  echo "workflows_valid: $bad of $((checked + 1)) checks failed"
  exit 1
fi
echo "workflows_valid: $checked files valid (${#files[@]} workflow, action and canary files," \
  "$snippets docs/ci.md snippets); the broken canary refused"
