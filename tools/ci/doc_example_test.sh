#!/usr/bin/env bash
# ctest ci_doc_example_driver: the driver docs/ci.md shows for an
# application that uses kafkajs (its first ```js block, ci/prodsim-driver.js
# there) speaks the driver protocol: one trial of a fault-free scenario
# passes with every message acknowledged, run as its workflow runs it
# (--client="node ci/prodsim-driver.js" from the application's root).
# kafkajs is this build's (clients/kafkajs's npm ci), through NODE_PATH.
# usage: doc_example_test.sh PRODSIM SOURCE_DIR KAFKAJS_NODE_MODULES
set -uo pipefail
prodsim=$1 src=$2 modules=$3
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/ci"
awk '/^```js/ && !done { body = 1; next } /^```/ && body { body = 0; done = 1 } body' \
  "$src/docs/ci.md" >"$app/ci/prodsim-driver.js"
if [[ ! -s $app/ci/prodsim-driver.js ]]; then
  echo "FAIL: docs/ci.md has no \`\`\`js block (the example driver)" >&2
  exit 1
fi
cd "$app" || exit 1
out=$(NODE_PATH=$modules "$prodsim" real "$src/wire/testdata/ten-messages.toml" \
  --client="node ci/prodsim-driver.js" --trials=1 2>&1)
rc=$?
echo "$out"
[[ $rc == 0 ]] || { echo "FAIL: the example driver's trial exited $rc, not 0" >&2; exit 1; }
grep -q 'pass client=kafkajs .* acked=10 errors=0' <<<"$out" ||
  { echo "FAIL: the trial did not pass with 10 messages acknowledged by kafkajs" >&2; exit 1; }
echo "ci_doc_example_driver: docs/ci.md's driver passed a trial with every message acknowledged"
