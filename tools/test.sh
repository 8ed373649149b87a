#!/usr/bin/env bash
# The whole test suite, from nothing: installs what is missing, builds the
# default (gcc) and asan (clang, ASan+UBSan) presets with -Werror, runs ctest
# in both (the asan run also compares digests with the gcc build), runs
# tools/lint.sh (clang-format, clang-tidy) on the clang build, and prints
# ctest's summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export PRODSIM_WERROR=ON
jobs=${PRODSIM_JOBS:-$(nproc)}
status=0
for preset in default asan; do
  echo "=== preset $preset: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  if [[ $preset == asan ]]; then
    # The style rules, on the clang build's compile commands (tools/lint.sh).
    echo "=== lint: clang-format, clang-tidy"
    bash tools/lint.sh build/asan || status=1
  fi
  echo "=== preset $preset: ctest"
  ctest --preset "$preset" -j "$jobs" 2>&1 | tee "build/$preset/ctest.log" \
    | grep -vE '^ +Start|^[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true
  grep -q "tests passed, 0 tests failed" "build/$preset/ctest.log" || status=1
done
echo "=== summary"
for preset in default asan; do
  printf '%-8s %s\n' "$preset" "$(grep -E 'tests passed' "build/$preset/ctest.log" || echo 'no ctest summary')"
done
[[ $status == 0 ]] || echo "failed: see the lint lines or the ctest summaries above"
exit $status
