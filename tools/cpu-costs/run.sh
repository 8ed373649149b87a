#!/usr/bin/env bash
# Builds tools/cpu-costs/main.go against a Sarama checkout in a temporary
# GOPATH, exactly as clients/sarama/build.sh builds the driver (GOPATH mode,
# Debian's Go, dependencies from /usr/share/gocode, the lz4/v4 shim), runs
# it, and removes the temporary directory.
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

command -v "$go" >/dev/null || { echo "run.sh: no go (apt-get install golang-go)" >&2; exit 1; }
[[ -f $src/async_producer.go ]] || { echo "run.sh: $src is not a Sarama checkout" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-cpu-costs.XXXXXX")
trap 'rm -rf "$work"' EXIT
gopath=$work/gopath

module=github.com/IBM/sarama
if [[ -f $src/go.mod ]]; then
  module=$(awk '$1 == "module" { print $2; exit }' "$src/go.mod")
fi
mkdir -p "$gopath/src/$module"
tar -C "$src" --exclude=.git -cf - . | tar -C "$gopath/src/$module" -xf -
sarama_dir=$gopath/src/$module
version=${SARAMA_VERSION:-}
if [[ -z $version ]] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  version=$(git -C "$src" describe --tags --always 2>/dev/null | sed 's/^v//')
fi
if [[ -z $version && -f $src/CHANGELOG.md ]]; then
  version=$(sed -n 's/^## Version \([0-9][0-9.]*\).*/\1/p' "$src/CHANGELOG.md" | head -n 1)
fi
version=${version:-unknown}

# The lz4/v4 shim (see clients/sarama/build.sh).
if grep -qs '"github.com/pierrec/lz4/v4"' "$sarama_dir"/*.go && [[ ! -d $gocode/src/github.com/pierrec/lz4/v4 ]]; then
  lz4=$gocode/src/github.com/pierrec/lz4
  [[ -f $lz4/lz4.go ]] || { echo "run.sh: no lz4 (apt-get install golang-github-pierrec-lz4-dev)" >&2; exit 1; }
  mkdir -p "$gopath/src/github.com/pierrec/lz4/v4"
  cp -r "$lz4/internal" "$gopath/src/github.com/pierrec/lz4/"
  find "$lz4" -maxdepth 1 \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' \
    -exec cp {} "$gopath/src/github.com/pierrec/lz4/v4/" \;
fi

pkg=$gopath/src/prodsim/tools/cpu-costs
mkdir -p "$pkg"
sed "s#\"github.com/IBM/sarama\"#\"$module\"#" "$here/main.go" >"$pkg/main.go"

export GO111MODULE=off GOPATH="$gopath:$gocode" GOPROXY=off GOFLAGS= GOTOOLCHAIN=local
if [[ -z ${HOME:-} || ! -w ${HOME:-/nonexistent} ]]; then export GOCACHE=$work/gocache; fi
cd "$pkg"
"$go" vet .
"$go" build -trimpath -ldflags "-X main.saramaVersion=$version" -o "$work/cpu-costs" .
echo "run.sh: built against $module $version ($src)" >&2
"$work/cpu-costs" "$@"
