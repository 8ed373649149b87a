#!/usr/bin/env bash
# Every scenario file of a folder over the wire against one client: for
# each DIR/*.toml, in name order,
#   prodsim real FILE --client=CLIENT --trials=TRIALS --junit=JUNIT_DIR/NAME.xml
# (NAME: the file's name without .toml). The composite action
# .github/actions/prodsim-wire runs this in a client's CI (docs/ci.md); it
# runs the same here. CLIENT is what `prodsim real --client` takes: a
# driver's name (librdkafka, kafkajs, kafkajs-fixes, sarama, NAME@VERSION)
# or a command that speaks the driver protocol (clients/README.md), run
# from the current directory, e.g. "node ci/prodsim-driver.js".
#
# usage: tools/ci/wire-scenarios.sh CLIENT DIR TRIALS JUNIT_DIR
# env: PRODSIM (default: build/default/bin/prodsim of the tree this script
# is in)
# exit: 0 every trial of every file passed; otherwise the exit code of the
# first file that did not pass (prodsim real's: the verdict most of its
# failing trials had, docs/usage.md), after all files ran; 64 usage; 66 no
# scenario file in DIR, or prodsim not built; 73 JUNIT_DIR cannot be made.
set -euo pipefail
if (($# != 4)) || [[ ! $3 =~ ^[1-9][0-9]*$ ]]; then
  echo "wire-scenarios.sh: usage: tools/ci/wire-scenarios.sh CLIENT DIR TRIALS JUNIT_DIR (TRIALS a positive integer)" >&2
  exit 64
fi
client=$1 dir=$2 trials=$3 junit_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
prodsim=${PRODSIM:-$here/../../build/default/bin/prodsim}
if [[ ! -x $prodsim ]]; then
  echo "wire-scenarios.sh: $prodsim is not built (tools/ci/build.sh builds it)" >&2
  exit 66
fi
files=()
for f in "$dir"/*.toml; do
  [[ -f $f ]] && files+=("$f")
done
if ((${#files[@]} == 0)); then
  echo "wire-scenarios.sh: no scenario file (*.toml) in $dir" >&2
  exit 66
fi
if ! mkdir -p "$junit_dir" 2>/dev/null; then
  echo "wire-scenarios.sh: cannot make $junit_dir" >&2
  exit 73
fi
first=0
results=()
for f in "${files[@]}"; do
  name=$(basename "$f" .toml)
  echo "=== $f: $trials trial(s) against $client"
  status=0
  "$prodsim" real "$f" --client="$client" --trials="$trials" --junit="$junit_dir/$name.xml" ||
    status=$?
  results+=("$(printf '%-4s %s' "$status" "$f")")
  if ((status != 0 && first == 0)); then first=$status; fi
done
echo "=== exit per file (0: every trial passed)"
printf '  %s\n' "${results[@]}"
exit "$first"
