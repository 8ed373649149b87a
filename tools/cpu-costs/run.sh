#!/usr/bin/env bash
# Builds tools/cpu-costs/main.go against one Sarama in module mode, as
# clients/sarama/build.sh builds the driver and with the same helpers
# (clients/sarama/gomod.sh: the machine's Go, every module from the module
# proxy, go.sum verified), runs it, and removes the temporary directory.
#
#   run.sh VERSION [-t DURATION]          a release (1.42.1: pinned by clients/sarama/versions)
#   run.sh --checkout DIR [-t DURATION]   a Sarama checkout (its main branch)
#
# Extra arguments go to the program (-t: time per repetition, default 300ms).
set -euo pipefail

usage() { echo "usage: $0 VERSION | --checkout DIR [-t DURATION]" >&2; exit 64; }
(($# >= 1)) || usage
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
go=${GO:-go}
who=run.sh
# shellcheck source=clients/sarama/gomod.sh
. "$here/../../clients/sarama/gomod.sh"
command -v "$go" >/dev/null || { echo "$who: no go on PATH (1.25 or newer)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-cpu-costs.XXXXXX")
trap 'rm -rf "$work"' EXIT
pkg=$work/module
mkdir -p "$pkg"
sarama_env
if [[ $1 == --checkout ]]; then
  (($# >= 2)) || usage
  src=$(cd "$2" && pwd -P); shift 2
  version=checkout
  sarama_module_checkout "$pkg" "$src"
else
  version=${1#v}; shift
  if [[ -f $here/../../clients/sarama/versions/$version/go.mod ]]; then
    cp "$here/../../clients/sarama/versions/$version/"go.{mod,sum} "$pkg/"
  else
    sarama_module_release "$pkg" "$version"
  fi
fi
cp "$here/main.go" "$pkg/main.go"
cd "$pkg"
"$go" vet .
"$go" build -trimpath -ldflags "-X main.saramaVersion=$version" -o "$work/cpu-costs" .
echo "$who: built against $sarama_module_path $version ($("$go" env GOVERSION))" >&2
"$work/cpu-costs" "$@"
