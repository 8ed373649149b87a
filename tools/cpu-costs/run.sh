#!/usr/bin/env bash
# Builds tools/cpu-costs/main.go against a Sarama checkout in a temporary
# GOPATH, as clients/sarama/build.sh builds the driver and with the same
# helpers (clients/sarama/gopath.sh: GOPATH mode, Debian's Go, dependencies
# from /usr/share/gocode, the lz4/v4 shim), runs it, and removes the
# temporary directory.
#
#   run.sh SARAMA_SOURCE_DIR [-t DURATION]
#
# e.g. d=$(mktemp -d); git --git-dir=/work/.mirror/IBM+sarama/repo archive v1.42.1 | tar -x -C "$d"
#      tools/cpu-costs/run.sh "$d"
# Extra arguments go to the program (-t: time per repetition, default 300ms).
set -euo pipefail

(($# >= 1)) || { echo "usage: $0 SARAMA_SOURCE_DIR [-t DURATION]" >&2; exit 64; }
src=$1; shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
go=${GO:-go}
gocode=/usr/share/gocode

who=run.sh
# shellcheck source=clients/sarama/gopath.sh
. "$here/../../clients/sarama/gopath.sh"

command -v "$go" >/dev/null || { echo "run.sh: no go (apt-get install golang-go)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-cpu-costs.XXXXXX")
trap 'rm -rf "$work"' EXIT
gopath=$work/gopath
sarama_place_checkout "$src" "$gopath"
version=${version:-unknown}
sarama_lz4_shim "$gopath"

pkg=$gopath/src/prodsim/tools/cpu-costs
mkdir -p "$pkg"
sed "s#\"github.com/IBM/sarama\"#\"$module\"#" "$here/main.go" >"$pkg/main.go"

sarama_go_env "$gopath"
cd "$pkg"
"$go" vet .
"$go" build -trimpath -ldflags "-X main.saramaVersion=$version" -o "$work/cpu-costs" .
echo "run.sh: built against $module $version ($src)" >&2
"$work/cpu-costs" "$@"
