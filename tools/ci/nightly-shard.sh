#!/usr/bin/env bash
# One shard of the nightly exploration (.github/workflows/nightly.yml, job
# `explore`): a copy of BASE with PROFILE (tools/ci/base-for-profile.sh;
# explore runs its base's profile), then
#   prodsim explore --base=DIR/base.toml --runs=RUNS --seed=SEED --shard=I/N
#     --keep-going --known=scenarios/known --out=DIR/found
#     --summary=DIR/summary.json --junit=DIR/junit.xml
# with its output also in DIR/explore.log. Every shard of one night takes
# the same SEED, so the N shards together are the runs of one unsharded
# explore (`prodsim merge` of their summaries prints that one's summary).
#
# Exit 1 from explore (a new signature) is not this shard's failure: the
# shard ends 0 and the merge job, which sees every shard's summary, is red
# for it (tools/ci/nightly-merge.sh). Any other non-zero exit (usage, a bad
# base, a file that cannot be written) is passed on.
#
# usage: tools/ci/nightly-shard.sh BASE PROFILE I/N RUNS SEED DIR
# env: PRODSIM (default build/default/bin/prodsim)
# exit: 0 explored (new signatures or not); 64 usage; otherwise explore's
# or base-for-profile.sh's code.
set -euo pipefail
if (($# != 6)); then
  echo "nightly-shard.sh: usage: tools/ci/nightly-shard.sh BASE PROFILE I/N RUNS SEED DIR" >&2
  exit 64
fi
base=$1 profile=$2 shard=$3 runs=$4 seed=$5 dir=$6
cd "$(dirname "$0")/../.."
prodsim=${PRODSIM:-build/default/bin/prodsim}
export PRODSIM=$prodsim
bash tools/ci/base-for-profile.sh "$base" "$profile" "$dir/base.toml"
cmd=("$prodsim" explore "--base=$dir/base.toml" "--runs=$runs" "--seed=$seed" "--shard=$shard"
     --keep-going --known=scenarios/known "--out=$dir/found" "--summary=$dir/summary.json"
     "--junit=$dir/junit.xml")
echo "+ ${cmd[*]}"
status=0
"${cmd[@]}" 2>&1 | tee "$dir/explore.log" || status=${PIPESTATUS[0]}
case $status in
  0) echo "nightly-shard.sh: shard $shard of $profile: nothing new" ;;
  1) echo "nightly-shard.sh: shard $shard of $profile: new signature(s); the merge job reports them"
     status=0 ;;
  *) echo "nightly-shard.sh: shard $shard of $profile: explore exited $status" >&2 ;;
esac
exit "$status"
