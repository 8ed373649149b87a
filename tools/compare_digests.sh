#!/usr/bin/env bash
# compare_digests.sh THIS_BINARY PEER_BINARY [ARGS...]: runs a digest printer
# from two builds (gcc and clang) and fails unless their outputs are equal,
# line for line. Exits 77 (skipped) only when the peer build is missing.
set -uo pipefail
this=${1:?}; peer=${2:?}; shift 2
if [[ ! -x $peer ]]; then
  echo "peer build missing: $peer (build the default preset first)"
  exit 77
fi
a=$("$this" "$@") || { echo "this build failed"; exit 1; }
b=$("$peer" "$@") || { echo "peer build failed"; exit 1; }
[[ -n $a ]] || { echo "no output"; exit 1; }
if [[ "$a" != "$b" ]]; then
  diff <(echo "$a") <(echo "$b") | head -20
  echo "digests differ between builds"
  exit 1
fi
echo "$(wc -l <<<"$a") digest lines identical across the two builds"
