#!/usr/bin/env bash
# The one build step of every CI job but the PR's `test` (which runs
# tools/test.sh, the whole suite): installs the Debian 12 packages
# (tools/setup.sh), configures the default preset and builds prodsim, so
# that the job's next lines find it at build/default/bin/prodsim, as they
# would after `cmake --preset default && cmake --build --preset default`
# (README.md). With --with-drivers it also builds the wire-mode drivers
# (prodsim-librdkafka, prodsim-kafkajs with kafkajs from its lockfile, and
# prodsim-sarama on Sarama 1.42.1, built in module mode by a Go 1.25 or
# newer on PATH) for `prodsim real` and `prodsim explore --client`.
#
# PRODSIM_CI_PREBUILT=PATH: use that prodsim binary instead of building
# (build/default/bin/prodsim becomes a symbolic link to it; nothing is
# installed or built, and the drivers are the ones beside that binary's
# build). This is the one substitution tools/ci/workflow_steps.py makes
# when it runs a workflow's steps here (ctest workflow_steps): a clean copy
# of the repository has no build, and a full build inside ctest takes too
# long; every other line of a workflow runs as written.
#
# usage: tools/ci/build.sh [--with-drivers]
# exit: 0 built; 64 usage; 66 PRODSIM_CI_PREBUILT is not an executable
# file; otherwise the failing command's (setup, configure, build).
set -euo pipefail
cd "$(dirname "$0")/../.."

with_drivers=0
for arg in "$@"; do
  case $arg in
    --with-drivers) with_drivers=1 ;;
    *) echo "build.sh: unknown argument '$arg' (usage: tools/ci/build.sh [--with-drivers])" >&2
       exit 64 ;;
  esac
done

out=build/default/bin/prodsim
if [[ -n ${PRODSIM_CI_PREBUILT:-} ]]; then
  if [[ ! -f $PRODSIM_CI_PREBUILT || ! -x $PRODSIM_CI_PREBUILT ]]; then
    echo "build.sh: PRODSIM_CI_PREBUILT=$PRODSIM_CI_PREBUILT is not an executable file" >&2
    exit 66
  fi
  mkdir -p "$(dirname "$out")"
  ln -sfn "$(readlink -f "$PRODSIM_CI_PREBUILT")" "$out"
  echo "build.sh: using the prebuilt $PRODSIM_CI_PREBUILT as $out (PRODSIM_CI_PREBUILT)"
  exit 0
fi

bash tools/setup.sh
# Warnings are errors in CI, as in tools/test.sh.
export PRODSIM_WERROR=${PRODSIM_WERROR:-ON}
targets=(prodsim)
if ((with_drivers)); then
  targets+=(prodsim-librdkafka prodsim_kafkajs_driver prodsim_sarama)
fi
cmake --preset default >/dev/null
cmake --build --preset default -j "${PRODSIM_JOBS:-$(nproc)}" --target "${targets[@]}"
echo "build.sh: built ${targets[*]}; prodsim is $out"
