#!/usr/bin/env bash
# Pins a Sarama release for build.sh: resolves github.com/IBM/sarama@vVERSION
# through the module proxy (each dependency at the version Sarama's go.mod
# pins, checked against the checksum database) and writes the driver
# module's go.mod and go.sum into clients/sarama/versions/VERSION/, to be
# committed. build.sh then builds that release with -mod=readonly.
#
#   pin.sh VERSION
set -euo pipefail
(($# == 1)) || { echo "usage: $0 VERSION (e.g. 1.61.1)" >&2; exit 64; }
go=${GO:-go}
who=pin.sh
# shellcheck source=clients/sarama/gomod.sh
. "$(dirname "${BASH_SOURCE[0]}")/gomod.sh"
sarama_release "$1"
work=$(mktemp -d "${TMPDIR:-/tmp}/prodsim-sarama-pin.XXXXXX")
trap 'rm -rf "$work"' EXIT
sarama_env
sarama_copy_driver "$work"
sarama_module_release "$work" "$version"
mkdir -p "$gomod_dir/versions/$version"
cp "$work/go.mod" "$work/go.sum" "$gomod_dir/versions/$version/"
echo "$who: pinned $sarama_module_path v$version in clients/sarama/versions/$version" >&2
