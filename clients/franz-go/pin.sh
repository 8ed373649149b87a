#!/usr/bin/env bash
# Pins a franz-go release for build.sh: resolves
# github.com/twmb/franz-go@vVERSION through the module proxy (each
# dependency at the version franz-go's go.mod pins, checked against the
# checksum database) and writes the driver module's go.mod and go.sum into
# clients/franz-go/versions/VERSION/, to be committed. build.sh then builds
# that release with -mod=readonly.
#
#   pin.sh VERSION
set -euo pipefail
(($# == 1)) || { echo "usage: $0 VERSION (e.g. 1.22.3)" >&2; exit 64; }
go=${GO:-go}
who=pin.sh
# shellcheck source=clients/franz-go/gomod.sh
. "$(dirname "${BASH_SOURCE[0]}")/gomod.sh"
franz_release "$1"
work=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-franz-go-pin.XXXXXX")
trap 'rm -rf "$work"' EXIT
franz_env
franz_copy_driver "$work"
franz_module_release "$work" "$version"
mkdir -p "$gomod_dir/versions/$version"
cp "$work/go.mod" "$work/go.sum" "$gomod_dir/versions/$version/"
echo "$who: pinned $franz_module_path v$version in clients/franz-go/versions/$version" >&2
