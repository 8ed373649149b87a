#!/usr/bin/env bash
# The driver built from nothing in module mode (build.sh VERSION: the
# pinned go.mod and go.sum, every module from the module proxy, go.sum
# verified), then one trial over the wire with it: the fault-free file must
# pass with every message acked, and the driver must report VERSION (franz-go).
#
#   module_mode_test.sh PRODSIM VERSION SCENARIO
#
# Nothing is written into the source tree.
set -uo pipefail
prodsim=${1:?} version=${2:?} scenario=${3:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-franz-go-modules-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

start=$SECONDS
if ! bash "$here/build.sh" "$dir/prodsim-franz-go" "$version" 2>"$dir/build.log"; then
  cat "$dir/build.log"
  echo "FAIL: build.sh $version"
  exit 1
fi
tail -n 2 "$dir/build.log"
grep -q "pinned by clients/franz-go/versions/$version" "$dir/build.log" ||
  { echo "FAIL: not built from the pinned go.mod and go.sum"; exit 1; }
echo "built in $((SECONDS - start)) s"

out=$(timeout 240 "$prodsim" real "$scenario" --client="$dir/prodsim-franz-go" --trials=1 --bound=60s 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || { echo "FAIL: prodsim real exit $rc, expected 0"; exit 1; }
grep -q "acked=1000 errors=0" <<<"$out" || { echo "FAIL: not every message acked"; exit 1; }
grep -q "client=franz-go $version " <<<"$out" || { echo "FAIL: the driver does not report franz-go $version"; exit 1; }
echo "ok: module mode, franz-go $version, $((SECONDS - start)) s in all"
