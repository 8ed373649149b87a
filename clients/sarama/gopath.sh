# Sourced (not run) by clients/sarama/build.sh and tools/cpu-costs/run.sh:
# the temporary GOPATH in which Debian's Go builds a program against a
# Sarama checkout with no module proxy and no network. The caller sets
# `who` (its name, for messages), `gocode` (/usr/share/gocode) and `work`
# (a scratch directory it removes).
#
# Shim: Sarama >= 1.38 imports github.com/pierrec/lz4/v4; Debian 12 has
# only lz4 2.5.2 (github.com/pierrec/lz4). The subset Sarama uses
# (NewReader, NewWriter, Reset, Read, Write, Close) has the same signatures
# in both, so when no lz4/v4 is installed the temporary GOPATH gets a copy
# of lz4 2.5.2 under the v4 path. prodsim's cluster refuses compressed
# batches anyway, so nothing here compresses.

# sarama_read_checkout SRC: checks that SRC is a Sarama checkout and sets
# `module` (the path its go.mod names: github.com/IBM/sarama or
# github.com/Shopify/sarama), `sarama_dir` (SRC) and `version`
# (SARAMA_VERSION, else git describe, else the newest CHANGELOG.md entry,
# else empty). Module mode (gomod.sh) builds against SRC in place.
sarama_read_checkout() {
  local src=$1
  [[ -f $src/async_producer.go ]] || { echo "$who: $src is not a Sarama checkout" >&2; exit 1; }
  module=github.com/IBM/sarama
  if [[ -f $src/go.mod ]]; then
    module=$(awk '$1 == "module" { gsub(/"/, "", $2); print $2; exit }' "$src/go.mod")
  fi
  sarama_dir=$(cd "$src" && pwd -P)
  version=${SARAMA_VERSION:-}
  if [[ -z $version ]] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    version=$(git -C "$src" describe --tags --always 2>/dev/null | sed 's/^v//')
  fi
  if [[ -z $version && -f $src/CHANGELOG.md ]]; then
    version=$(sed -n 's/^## Version \([0-9][0-9.]*\).*/\1/p' "$src/CHANGELOG.md" | head -n 1)
  fi
}

# sarama_place_checkout SRC GOPATH: sarama_read_checkout, then copies the
# checkout into GOPATH under the import path its go.mod names and points
# `sarama_dir` there.
sarama_place_checkout() {
  local src=$1 gopath=$2
  sarama_read_checkout "$src"
  mkdir -p "$gopath/src/$module"
  # The whole tree but .git: the root package imports its own internal/.
  tar -C "$src" --exclude=.git -cf - . | tar -C "$gopath/src/$module" -xf -
  sarama_dir=$gopath/src/$module
}

# sarama_lz4_shim GOPATH: the shim above, if this Sarama needs it.
sarama_lz4_shim() {
  local gopath=$1
  if grep -qs '"github.com/pierrec/lz4/v4"' "$sarama_dir"/*.go &&
     [[ ! -d $gocode/src/github.com/pierrec/lz4/v4 ]]; then
    local lz4=$gocode/src/github.com/pierrec/lz4
    [[ -f $lz4/lz4.go ]] || { echo "$who: no lz4 (apt-get install golang-github-pierrec-lz4-dev)" >&2; exit 1; }
    mkdir -p "$gopath/src/github.com/pierrec/lz4/v4"
    # internal/ too: Go allows an internal package only below its parent dir.
    cp -r "$lz4/internal" "$gopath/src/github.com/pierrec/lz4/"
    find "$lz4" -maxdepth 1 \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' \
      -exec cp {} "$gopath/src/github.com/pierrec/lz4/v4/" \;
  fi
}

# sarama_go_env GOPATH: GOPATH mode, Debian's packages behind the
# temporary tree, no proxy, no toolchain download; Go's cache out of $HOME
# when there is none (CMake, containers).
sarama_go_env() {
  export GO111MODULE=off GOPATH="$1:$gocode" GOPROXY=off GOFLAGS= GOTOOLCHAIN=local
  if [[ -z ${HOME:-} || ! -w ${HOME:-/nonexistent} ]]; then export GOCACHE=$work/gocache; fi
}
