#!/usr/bin/env bash
# The model regression of .github/workflows/pr.yml (job `regression`): every
# scenario file's [expect] on one producer profile, as one
#   prodsim run --check-expect --profile PROFILE --junit JUNIT FILE...
# (one JUnit case per file) over the files that record an outcome on
# PROFILE: their own profile's [expect], or an [expect.profiles."PROFILE"]
# entry. A file that records none for PROFILE is listed and left out
# (--check-expect --profile would fail it for want of an entry, which says
# nothing about the model).
#
# The files: scenarios/corpus/, scenarios/known/ and each folder under it
# but real/, and scenarios/signatures/: the files ctest checks with
# --check-expect (scenarios/CMakeLists.txt). Left out: scenarios/known/real/
# (wire-mode findings about real clients: `prodsim real`, ctest in
# wire/CMakeLists.txt, and .github/actions/prodsim-wire) and
# scenarios/testdata/ (inputs of the shrink tests, not regressions).
#
# usage: tools/ci/regression.sh PROFILE JUNIT_OUT
# env: PRODSIM (default build/default/bin/prodsim, relative to the source
# tree's root, where this runs)
# exit: prodsim run's (0: every expectation holds; 1: one does not; 65, 66:
# a file is bad or missing); 64 usage or no file records PROFILE; 73 the
# JUnit file's folder cannot be made.
set -euo pipefail
if (($# != 2)); then
  echo "regression.sh: usage: tools/ci/regression.sh PROFILE JUNIT_OUT" >&2
  exit 64
fi
profile=$1
junit=$2
cd "$(dirname "$0")/../.."
prodsim=${PRODSIM:-build/default/bin/prodsim}
if [[ ! -x $prodsim ]]; then
  echo "regression.sh: $prodsim is not built (tools/ci/build.sh builds it)" >&2
  exit 66
fi

files=(scenarios/corpus/*.toml scenarios/known/*.toml)
for dir in scenarios/known/*/; do
  [[ $dir == scenarios/known/real/ ]] && continue
  files+=("$dir"*.toml)
done
files+=(scenarios/signatures/*.toml)

# Whether a file records an outcome on $profile, read from its canonical
# form (prodsim print writes every field, the profile included).
records() {
  "$prodsim" print "$1" | awk -v p="$profile" '
    /^\[/ { section = $0 }
    section == "[producer]" && /^profile = / { own = $3; gsub(/"/, "", own) }
    section == "[expect]" && /^verdict = / { verdict = 1 }
    $0 == "[expect.profiles.\"" p "\"]" { other = 1 }
    END { exit !((own == p && verdict) || other) }'
}

selected=()
left_out=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue  # an empty folder's unmatched glob
  if records "$f"; then
    selected+=("$f")
  else
    left_out+=("$f")
  fi
done
if ((${#selected[@]} == 0)); then
  echo "regression.sh: no scenario file records an outcome on profile '$profile'" >&2
  exit 64
fi
echo "regression on $profile: ${#selected[@]} files; ${#left_out[@]} record no outcome on it:"
for f in "${left_out[@]}"; do echo "  left out: $f"; done
if ! mkdir -p "$(dirname "$junit")" 2>/dev/null; then
  echo "regression.sh: cannot make the folder of $junit" >&2
  exit 73
fi
echo "+ $prodsim run --check-expect --profile $profile --junit $junit FILE... (the ${#selected[@]} files)"
exec "$prodsim" run --check-expect --profile "$profile" --junit "$junit" "${selected[@]}"
