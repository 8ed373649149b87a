#!/usr/bin/env bash
# The merge of the nightly exploration (.github/workflows/nightly.yml, job
# `merge`). ROOT holds one folder per shard, ROOT/nightly-PROFILE-I (as
# tools/ci/nightly-shard.sh wrote it, and as actions/download-artifact puts
# back the artifact of that name). For each PROFILE found there, every shard
# 0..SHARDS-1 must be present; then
#   prodsim merge ROOT/nightly-PROFILE-*/summary.json --junit ROOT/junit/merge-PROFILE.xml
# prints the summary one unsharded explore would have printed, and exits 1
# iff a signature is new. Each shard's shrunk files of new signatures
# (found/new-MECHANISM.toml) are copied to
# ROOT/new-signatures/PROFILE/shardI-new-MECHANISM.toml for upload; merge's
# output is also in ROOT/merge-PROFILE.txt (and on GitHub the job summary).
#
# usage: tools/ci/nightly-merge.sh ROOT SHARDS
# env: PRODSIM (default build/default/bin/prodsim)
# exit: 0 nothing new on any profile; 1 a new signature (and no other
# failure); 64 usage; 65 a shard's folder or summary is missing, or no
# shard at all; otherwise the first other code prodsim merge gave.
set -euo pipefail
if (($# != 2)) || [[ ! $2 =~ ^[1-9][0-9]*$ ]]; then
  echo "nightly-merge.sh: usage: tools/ci/nightly-merge.sh ROOT SHARDS (SHARDS a positive integer)" >&2
  exit 64
fi
root=$1 shards=$2
cd "$(dirname "$0")/../.."
prodsim=${PRODSIM:-build/default/bin/prodsim}

# The profiles: the folders' names without "nightly-" and "-I".
profiles=()
for d in "$root"/nightly-*-*/; do
  [[ -d $d ]] || continue
  name=$(basename "$d")
  p=${name#nightly-}
  p=${p%-*}
  [[ " ${profiles[*]} " == *" $p "* ]] || profiles+=("$p")
done
if ((${#profiles[@]} == 0)); then
  echo "nightly-merge.sh: no shard folder $root/nightly-PROFILE-I" >&2
  exit 65
fi

new=0
other=0
for p in "${profiles[@]}"; do
  summaries=()
  for ((i = 0; i < shards; i++)); do
    s=$root/nightly-$p-$i/summary.json
    if [[ ! -f $s ]]; then
      echo "nightly-merge.sh: $s is missing (shard $i of $shards on $p)" >&2
      exit 65
    fi
    summaries+=("$s")
  done
  if [[ -d $root/nightly-$p-$shards ]]; then
    echo "nightly-merge.sh: $root/nightly-$p-$shards is a shard past SHARDS=$shards" >&2
    exit 65
  fi
  echo "=== $p: prodsim merge of ${#summaries[@]} shard(s)"
  mkdir -p "$root/junit"
  status=0
  "$prodsim" merge "${summaries[@]}" --junit "$root/junit/merge-$p.xml" 2>&1 |
    tee "$root/merge-$p.txt" || status=${PIPESTATUS[0]}
  # On GitHub, the merged summary is also the job's summary page.
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    # shellcheck disable=SC2016 # the backquotes are Markdown's
    printf '### %s (exit %s)\n```\n%s\n```\n' "$p" "$status" "$(cat "$root/merge-$p.txt")" \
      >>"$GITHUB_STEP_SUMMARY"
  fi
  case $status in
    0) ;;
    1) new=1 ;;
    *) ((other != 0)) || other=$status ;;
  esac
  for ((i = 0; i < shards; i++)); do
    for f in "$root/nightly-$p-$i"/found/new-*.toml; do
      [[ -f $f ]] || continue
      mkdir -p "$root/new-signatures/$p"
      cp "$f" "$root/new-signatures/$p/shard$i-$(basename "$f")"
    done
  done
done
if [[ -d $root/new-signatures ]]; then
  echo "new signatures' shrunk files (uploaded as the artifact new-signatures):"
  find "$root/new-signatures" -name '*.toml' | sort | sed 's/^/  /'
fi
((other == 0)) || exit "$other"
exit "$new"
