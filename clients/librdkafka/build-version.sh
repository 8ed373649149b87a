#!/usr/bin/env bash
# build-version.sh: builds one version of librdkafka's C library from source,
# so that prodsim-librdkafka (unchanged, built against any librdkafka) can run
# on it with LD_LIBRARY_PATH:
#
#   clients/librdkafka/build-version.sh SOURCE OUT_DIR
#   LD_LIBRARY_PATH=OUT_DIR/lib prodsim real FILE --client=librdkafka
#
# SOURCE is one of
#   DIR                    a librdkafka source tree: a checkout of any tag,
#                          commit or PR head, an extracted archive
#                          (git archive v2.3.0 | tar -x -C DIR), a patched tree
#   npm:PACKAGE@VERSION    an npm package that bundles librdkafka's sources
#                          under deps/librdkafka, fetched with `npm pack`:
#                          npm:@confluentinc/kafka-javascript@1.10.1 (2.15.1),
#                          npm:node-rdkafka@3.6.1 (2.12.0)
#   pypi:PACKAGE==VERSION  a Python wheel that carries a built librdkafka
#                          (confluent_kafka.libs/librdkafka-*.so.1), fetched
#                          with `pip download` for this machine's Python:
#                          pypi:confluent-kafka==2.16.1 (librdkafka 2.16.0,
#                          built by Confluent, every dependency linked in).
#                          Nothing is compiled: the library is taken as it
#                          is, the newest line with no source build.
#
# OUT_DIR gets lib/librdkafka.so.1 (with the static library, the headers and
# pkg-config files: PKG_CONFIG_PATH=OUT_DIR/lib/pkgconfig builds against it)
# and OUT_DIR/VERSION: the version rd_kafka_version_str() reports at run
# time, where the sources came from, the features and configure flags, and a
# fingerprint of the sources and flags.
#
# What it does: copies the sources into a temporary directory (SOURCE is
# never written; build products already in it are left out), runs
# librdkafka's ./configure with --prefix=OUT_DIR, builds only the C library
# (src/: no C++ library, examples or tests) with make -j2, installs it into
# a staging directory, asks the built library for its version, and then
# replaces OUT_DIR as a whole. Dependencies are only what the machine has:
# each optional library (OpenSSL, Cyrus SASL, libcurl, zlib, zstd, lz4) is
# enabled if pkg-config finds it and disabled otherwise (lz4 then uses
# librdkafka's built-in copy); nothing is downloaded at build time (no
# --install-deps). Extra ./configure flags: BUILD_VERSION_CONFIGURE_ARGS.
#
# Idempotent: if OUT_DIR/VERSION already has the same fingerprint (same
# sources, same flags, same compiler) nothing is rebuilt (FORCE=1 rebuilds).
# An OUT_DIR that exists, is not empty and was not written by this script is
# refused. Bounded: npm pack 300 s, configure 600 s, make 3600 s. Every
# temporary file is removed on exit, on failure and on SIGINT/SIGTERM.
#
# Exit codes: 0 built (or already up to date); 64 usage; 66 the source is
# missing (no such directory, not a librdkafka tree, npm pack failed, or the
# package has no deps/librdkafka); 73 OUT_DIR exists and is not this
# script's; 1 the build failed (the failing step's last log lines precede
# the error line on stderr).
set -euo pipefail

readonly PROG=build-version.sh
readonly JOBS=2
readonly NPM_TIMEOUT_S=300
readonly PIP_TIMEOUT_S=300
readonly CONFIGURE_TIMEOUT_S=600
readonly MAKE_TIMEOUT_S=3600
readonly LOG_TAIL_LINES=40

work=""
step_pid=""
new_dir=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [[ -n "$step_pid" ]]; then
    kill -TERM "$step_pid" 2>/dev/null || true
    wait "$step_pid" 2>/dev/null || true
  fi
  [[ -n "$new_dir" ]] && rm -rf -- "$new_dir"
  [[ -n "$work" ]] && rm -rf -- "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

die() {  # die CODE MESSAGE: the one error line, then exit CODE.
  local code=$1
  shift
  echo "$PROG: error: $*" >&2
  exit "$code"
}
note() { echo "$PROG: $*" >&2; }

usage() {
  echo "usage: $PROG SOURCE OUT_DIR   (SOURCE: a librdkafka source directory, npm:PACKAGE@VERSION or pypi:PACKAGE==VERSION)" >&2
  exit 64
}

# run_step NAME TIMEOUT_S LOG CMD...: runs CMD bounded, its output in LOG;
# on failure prints LOG's tail and the error line, exit 1. Run in the
# background and waited for, so that the traps can stop it.
run_step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local rc=0
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 </dev/null &
  step_pid=$!
  wait "$step_pid" || rc=$?
  step_pid=""
  if ((rc != 0)); then
    tail -n "$LOG_TAIL_LINES" "$log" | sed 's/^/| /' >&2
    if ((rc == 124)); then
      die 1 "$name timed out after ${limit} s"
    fi
    die 1 "$name failed (exit $rc)"
  fi
}

[[ $# -eq 2 ]] || usage
source_arg=$1
out_arg=$2
[[ -n "$source_arg" && -n "$out_arg" ]] || usage
case "$out_arg" in
  -*) usage ;;
esac
for tool in make cc timeout tar sha256sum pkg-config; do
  command -v "$tool" >/dev/null || die 1 "$tool is not installed"
done

# OUT_DIR as an absolute path (configure's --prefix must be absolute).
out_parent=$(dirname -- "$out_arg")
mkdir -p -- "$out_parent" || die 73 "cannot create $out_parent"
out_dir="$(cd -- "$out_parent" && pwd -P)/$(basename -- "$out_arg")"
readonly marker="built_by=clients/librdkafka/build-version.sh"
if [[ -e "$out_dir" ]]; then
  [[ -d "$out_dir" ]] || die 73 "OUT_DIR $out_dir exists and is not a directory"
  if [[ -n "$(ls -A -- "$out_dir")" ]] && ! grep -qxF "$marker" "$out_dir/VERSION" 2>/dev/null; then
    die 73 "OUT_DIR $out_dir is not empty and has no VERSION written by $PROG; refusing to replace it"
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/build-version.XXXXXX")
src="$work/src"
mkdir "$src"
log="$work/log"
: >"$log"

# --- the sources, copied into $src -----------------------------------------
copy_tree() {  # copy_tree FROM: the tree without VCS data or build products
  tar -C "$1" -cf - \
    --exclude=.git --exclude='*.o' --exclude='*.d' --exclude='*.so' --exclude='*.so.*' \
    --exclude='*.a' --exclude='*.dylib' --exclude=Makefile.config --exclude=config.h \
    --exclude=config.cache --exclude=config.log --exclude='*.pc' --exclude='*.lds' \
    --exclude=./mklove/deps --exclude=./dest . |
    tar -C "$src" -xf -
}

# fetch_wheel PACKAGE==VERSION: the wheel's librdkafka as $work/wheel.so
# (its name in the wheel is auditwheel's, librdkafka-HASH.so.1: taken under
# the name the driver links, librdkafka.so.1, which is all the loader reads).
fetch_wheel() {
  local spec=$1
  [[ "$spec" == ?*==?* ]] || die 64 "pypi source must be pypi:PACKAGE==VERSION, got $source_arg"
  command -v python3 >/dev/null || die 66 "python3 is not installed (needed for $source_arg)"
  command -v unzip >/dev/null || die 1 "unzip is not installed (needed for $source_arg)"
  mkdir "$work/pip"
  note "pip download $spec"
  local rc=0
  timeout --kill-after=10 "$PIP_TIMEOUT_S" python3 -m pip download --no-deps --only-binary=:all: \
    --no-cache-dir --disable-pip-version-check -d "$work/pip" "$spec" </dev/null >>"$log" 2>&1 &
  step_pid=$!
  wait "$step_pid" || rc=$?
  step_pid=""
  if ((rc != 0)); then
    tail -n 5 "$log" | sed 's/^/| /' >&2
    die 66 "pip download $spec failed (exit $rc)"
  fi
  local whl
  whl=$(find "$work/pip" -maxdepth 1 -name '*.whl' | head -n 1)
  [[ -n "$whl" ]] || die 66 "pip download $spec produced no wheel"
  local member
  member=$(unzip -Z1 "$whl" | grep -E '(^|/)librdkafka[^/]*\.so\.1$' | head -n 1) || true
  [[ -n "$member" ]] || die 66 "wheel $(basename -- "$whl") carries no librdkafka*.so.1"
  unzip -p "$whl" "$member" >"$work/wheel.so" || die 66 "cannot extract $member from $(basename -- "$whl")"
  wheel_sha=$(sha256sum "$whl" | cut -d' ' -f1)
  source_desc="$source_arg"
  source_detail="$member of $(basename -- "$whl"), sha256 $wheel_sha"
}

case "$source_arg" in
  npm:*)
    spec=${source_arg#npm:}
    [[ "$spec" == ?*@?* ]] || die 64 "npm source must be npm:PACKAGE@VERSION, got $source_arg"
    command -v npm >/dev/null || die 66 "npm is not installed (needed for $source_arg)"
    mkdir "$work/npm" "$work/npm-cache"
    note "npm pack $spec"
    rc=0
    (cd "$work/npm" &&
      timeout --kill-after=10 "$NPM_TIMEOUT_S" npm pack "$spec" --ignore-scripts \
        --cache "$work/npm-cache" --json </dev/null >"$work/npm.json" 2>>"$log") &
    step_pid=$!
    wait "$step_pid" || rc=$?
    step_pid=""
    if ((rc != 0)); then
      tail -n 5 "$log" | sed 's/^/| /' >&2
      die 66 "npm pack $spec failed (exit $rc)"
    fi
    tgz=$(find "$work/npm" -maxdepth 1 -name '*.tgz' | head -n 1)
    [[ -n "$tgz" ]] || die 66 "npm pack $spec produced no tarball"
    integrity=$(sed -n 's/^ *"integrity": *"\([^"]*\)".*/\1/p' "$work/npm.json" | head -n 1)
    mkdir "$work/pkg"
    tar -C "$work/pkg" -xzf "$tgz" package/deps/librdkafka 2>>"$log" ||
      die 66 "npm package $spec has no deps/librdkafka (it does not bundle librdkafka's sources)"
    copy_tree "$work/pkg/package/deps/librdkafka"
    rm -rf -- "$work/pkg" "$work/npm" "$work/npm-cache"
    source_desc="$source_arg"
    source_detail="package/deps/librdkafka of $(basename -- "$tgz")${integrity:+, $integrity}"
    ;;
  pypi:*)
    fetch_wheel "${source_arg#pypi:}"
    ;;
  *)
    [[ -d "$source_arg" ]] || die 66 "source directory $source_arg does not exist"
    source_abs=$(cd -- "$source_arg" && pwd -P)
    for f in configure src/rdkafka.h src/Makefile mklove/Makefile.base; do
      [[ -f "$source_abs/$f" ]] || die 66 "$source_abs is not a librdkafka source tree (no $f)"
    done
    copy_tree "$source_abs" || die 66 "cannot read source directory $source_abs"
    source_desc="$source_abs"
    source_detail="directory"
    if git -C "$source_abs" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
      commit=$(git -C "$source_abs" rev-parse HEAD 2>/dev/null || echo unknown)
      describe=$(git -C "$source_abs" describe --tags --always --dirty 2>/dev/null || echo unknown)
      source_detail="git checkout at $commit ($describe)"
    fi
    ;;
esac
stage="$work/stage"
staged="$stage$out_dir"
if [[ "$source_arg" == pypi:* ]]; then
  # A built library: nothing to configure or compile. The probe below
  # compiles against the machine's librdkafka headers (librdkafka-dev): it
  # calls only functions every 2.x has.
  [[ -f /usr/include/librdkafka/rdkafka.h ]] ||
    die 1 "the probe needs librdkafka's headers (Debian: librdkafka-dev)"
  fingerprint=$wheel_sha
  configure_args=("(none: taken from the wheel)")
  source_hash=$wheel_sha
  if [[ "${FORCE:-0}" != 1 && -f "$out_dir/lib/librdkafka.so.1" ]] &&
    grep -qxF "fingerprint=$fingerprint" "$out_dir/VERSION" 2>/dev/null; then
    note "up to date: $out_dir ($(sed -n 's/^version=//p' "$out_dir/VERSION"), fingerprint ${fingerprint:0:12})"
    exit 0
  fi
  started=$SECONDS
  mkdir -p "$staged/lib" "$staged/include"
  install -m 0755 "$work/wheel.so" "$staged/lib/librdkafka.so.1"
  ln -s librdkafka.so.1 "$staged/lib/librdkafka.so"
  cp -r /usr/include/librdkafka "$staged/include/"
else
for f in configure src/rdkafka.h src/Makefile mklove/Makefile.base; do
  [[ -f "$src/$f" ]] || die 66 "$source_desc is not a librdkafka source tree (no $f)"
done

# The sources' hash, before anything runs in the copy.
source_hash=$(cd "$src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum |
  sha256sum | cut -d' ' -f1)

# --- configure flags: only what this machine has ---------------------------
configure_help=$(cd "$src" && timeout 60 ./configure --help 2>&1) || true
rm -f -- "$src/config.log" "$src/config.cache"
flag_if_known() {  # flag_if_known --enable-x|--disable-x: if configure has x
  local name=${1#--enable-}
  name=${name#--disable-}
  if grep -qE -- "--(enable|disable)-$name([^a-z-]|$)" <<<"$configure_help"; then
    configure_args+=("$1")
  fi
}
configure_args=("--prefix=$out_dir")
for pair in ssl:openssl gssapi:libsasl2 curl:libcurl zlib:zlib zstd:libzstd; do
  feature=${pair%%:*}
  module=${pair#*:}
  if pkg-config --exists "$module"; then
    flag_if_known "--enable-$feature"
  else
    flag_if_known "--disable-$feature"
  fi
done
# lz4 has no failing "enable": without the system's, the built-in copy.
pkg-config --exists liblz4 || flag_if_known "--disable-lz4-ext"
if [[ -n "${BUILD_VERSION_CONFIGURE_ARGS:-}" ]]; then
  read -r -a extra <<<"$BUILD_VERSION_CONFIGURE_ARGS"
  configure_args+=("${extra[@]}")
fi

# --- fingerprint: sources, flags, compiler ---------------------------------
fingerprint=$({
  echo "$source_hash"
  printf '%s\n' "${configure_args[@]}"
  cc --version | head -n 1
} | sha256sum | cut -d' ' -f1)
if [[ "${FORCE:-0}" != 1 && -f "$out_dir/lib/librdkafka.so.1" ]] &&
  grep -qxF "fingerprint=$fingerprint" "$out_dir/VERSION" 2>/dev/null; then
  note "up to date: $out_dir ($(sed -n 's/^version=//p' "$out_dir/VERSION"), fingerprint ${fingerprint:0:12})"
  exit 0
fi

# --- build ------------------------------------------------------------------
started=$SECONDS
note "configure ${configure_args[*]}"
# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
run_step configure "$CONFIGURE_TIMEOUT_S" "$log" bash -c 'cd "$1" && shift && exec ./configure "$@"' \
  configure "$src" "${configure_args[@]}"
note "make -C src -j$JOBS"
run_step make "$MAKE_TIMEOUT_S" "$log" make -C "$src/src" -j"$JOBS" lib
run_step install "$CONFIGURE_TIMEOUT_S" "$log" env DESTDIR="$stage" make -C "$src/src" install
[[ -f "$staged/lib/librdkafka.so.1" ]] || die 1 "install produced no lib/librdkafka.so.1"
fi

# The version and features as the built library reports them at run time.
cat >"$work/probe.c" <<'EOF'
#include <stdio.h>
#include <librdkafka/rdkafka.h>
int main(void) {
  char features[512] = "";
  size_t size = sizeof features;
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_get(conf, "builtin.features", features, &size) != RD_KAFKA_CONF_OK)
    features[0] = '\0';
  rd_kafka_conf_destroy(conf);
  printf("%s\n0x%08x\n%s\n", rd_kafka_version_str(), rd_kafka_version(), features);
  return 0;
}
EOF
# Linked as the driver is (to librdkafka.so.1) and run on the staged one. A
# wheel's library has auditwheel's soname, so the probe links the machine's.
probe_lib=(-L"$staged/lib")
[[ "$source_arg" == pypi:* ]] && probe_lib=()
run_step probe-compile 120 "$log" cc -o "$work/probe" "$work/probe.c" -I"$staged/include" \
  "${probe_lib[@]}" -lrdkafka
probe_out=$(LD_LIBRARY_PATH="$staged/lib" timeout 30 "$work/probe" 2>>"$log") ||
  die 1 "the built library does not run (probe failed)"
{
  read -r version_str
  read -r version_hex
  read -r features
} <<<"$probe_out"
[[ -n "$version_str" ]] || die 1 "the built library reports no version"

cat >"$staged/VERSION" <<EOF
version=$version_str
version_hex=$version_hex
source=$source_desc
source_detail=$source_detail
features=$features
configure=${configure_args[*]}
source_sha256=$source_hash
fingerprint=$fingerprint
$marker
EOF

# Replace OUT_DIR as a whole: the new tree next to it, then swap.
new_dir="$out_dir.new.$$"
rm -rf -- "$new_dir"
cp -a -- "$staged" "$new_dir" || die 1 "cannot write $new_dir"
rm -rf -- "$out_dir"
mv -- "$new_dir" "$out_dir" || die 1 "cannot move the build into $out_dir"
new_dir=""
note "built librdkafka $version_str from $source_desc into $out_dir in $((SECONDS - started)) s"
