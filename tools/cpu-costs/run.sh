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
# The Sarama first (its import path), then main.go, then the module (tidy
# keeps what main.go imports).
if [[ $1 == --checkout ]]; then
  (($# >= 2)) || usage
  sarama_checkout "$2"; shift 2
  version=checkout
else
  sarama_release "$1"; shift
fi
sed "s#\"github.com/IBM/sarama\"#\"$sarama_module_path\"#" "$here/main.go" >"$pkg/main.go"
if [[ $version == checkout ]]; then
  sarama_module_checkout "$pkg" "$sarama_dir"
else
  sarama_module_for_release "$pkg"
fi
cd "$pkg"
"$go" vet .
"$go" build -trimpath -ldflags "-X main.saramaVersion=$version" -o "$work/cpu-costs" .
echo "$who: built against $sarama_module_path $version ($("$go" env GOVERSION))" >&2
"$work/cpu-costs" "$@"
