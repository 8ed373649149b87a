#!/usr/bin/env bash
# The driver built in module mode (build.sh --modules, offline: Debian's
# sources replace the modules Sarama's go.mod names), then one trial over
# the wire with it: the fault-free file must pass with every message acked.
#
#   module_mode_test.sh PRODSIM SARAMA_SOURCE_DIR SCENARIO
#
# SARAMA_SOURCE_DIR is what CMake builds prodsim-sarama against
# (PRODSIM_SARAMA_SOURCE_DIR, e.g. `git archive v1.42.1`, else Debian's
# packaged Sarama 1.22.1). Nothing is written into the source tree.
set -uo pipefail
prodsim=${1:?} src=${2:?} scenario=${3:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ! -f $src/async_producer.go ]]; then
  echo "SKIP: no Sarama source at $src (configure with -DPRODSIM_SARAMA_SOURCE_DIR=DIR, a checkout)"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-sarama-modules-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

start=$SECONDS
if ! PRODSIM_GO_OFFLINE=1 bash "$here/build.sh" --modules "$dir/prodsim-sarama" "$src" 2>"$dir/build.log"; then
  cat "$dir/build.log"
  echo "FAIL: build.sh --modules against $src"
  exit 1
fi
tail -n 2 "$dir/build.log"
grep -q "module mode, offline=1)" "$dir/build.log" || { echo "FAIL: not built in module mode"; exit 1; }
echo "built in $((SECONDS - start)) s"

out=$(timeout 240 "$prodsim" real "$scenario" --client="$dir/prodsim-sarama" --trials=1 --bound=60s 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || { echo "FAIL: prodsim real exit $rc, expected 0"; exit 1; }
grep -q "acked=1000 errors=0" <<<"$out" || { echo "FAIL: not every message acked"; exit 1; }
# The version the driver reports is the one build.sh read from the checkout.
version=$(sed -nE 's/.* against [^ ]+ ([^ ]+) \(.*/\1/p' "$dir/build.log" | tail -n 1)
grep -q "client=sarama $version " <<<"$out" || { echo "FAIL: the driver does not report sarama $version"; exit 1; }
echo "ok: module mode against $src (sarama $version), $((SECONDS - start)) s in all"
