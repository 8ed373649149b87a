#!/usr/bin/env bash
# Writes a copy of an explore base with another producer profile. explore
# has no --profile: it runs the base file's [producer] profile. The copy is
# the base as `prodsim print` writes it (every field, so the profile line
# is there) with that one line changed, and is checked by printing it again.
#
# usage: tools/ci/base-for-profile.sh BASE PROFILE OUT
# env: PRODSIM (default build/default/bin/prodsim)
# exit: 0 written; 64 usage; 65 BASE or the copy does not load (e.g. an
# unknown PROFILE: prodsim's one-line error says why); 66 BASE is missing or
# prodsim is not built; 73 OUT cannot be written.
set -euo pipefail
if (($# != 3)); then
  echo "base-for-profile.sh: usage: tools/ci/base-for-profile.sh BASE PROFILE OUT" >&2
  exit 64
fi
base=$1
profile=$2
out=$3
prodsim=${PRODSIM:-build/default/bin/prodsim}
if [[ ! -x $prodsim ]]; then
  echo "base-for-profile.sh: $prodsim is not built (tools/ci/build.sh builds it)" >&2
  exit 66
fi
printed=$("$prodsim" print "$base") || exit $?
if ! mkdir -p "$(dirname "$out")" 2>/dev/null || ! awk -v p="$profile" '
    /^\[/ { section = $0 }
    section == "[producer]" && /^profile = / { print "profile = \"" p "\""; next }
    { print }' <<<"$printed" >"$out"; then
  echo "base-for-profile.sh: cannot write $out" >&2
  exit 73
fi
check=$("$prodsim" print "$out") || exit $?
if ! grep -qxF "profile = \"$profile\"" <<<"$check"; then
  echo "base-for-profile.sh: $out does not have profile $profile after printing" >&2
  exit 65
fi
echo "base-for-profile.sh: $out is $base with profile $profile"
