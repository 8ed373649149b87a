#!/usr/bin/env bash
# ctest workflow_steps: the workflows' run lines, run here by
# tools/ci/workflow_steps.py in clean copies of the repository, against the
# prodsim of the build under test (--prebuilt: the one substitution):
# 1. pr.yml: job `test` (its line must be README's test command, and is
#    not run) and job `regression`; both JUnit reports validate under
#    tools/junit.xsd;
# 2. nightly.yml: the first shard (sarama-1.42.1, shard 0) scaled down to
#    one shard of 20 runs with seed 1, then `merge` (nothing new: exit 0);
#    the shard's summary, its JUnit report and the merged one are there and
#    the JUnit ones validate;
# 3. canaries of the runner (tools/testdata/workflows/): a failing step
#    fails the run (exit 1), skips the success() step after it and runs the
#    always() one, with --matrix and --set substituted; a tools/test.sh line
#    that is not README's test command is refused (exit 65).
# usage: workflow_steps_test.sh PYTHON3 PRODSIM SOURCE_DIR SCRATCH_DIR
set -uo pipefail
python=$1 prodsim=$2 src=$3 scratch=$4
runner=$src/tools/ci/workflow_steps.py
rm -rf "$scratch"
mkdir -p "$scratch"
bad=0
fail() {
  echo "FAIL: $*" >&2
  bad=$((bad + 1))
}
valid_junit() {
  if [[ ! -s $1 ]]; then
    fail "$1 was not written"
  elif ! xmllint --noout --schema "$src/tools/junit.xsd" "$1" 2>"$scratch/xmllint.err"; then
    fail "$1 does not validate under tools/junit.xsd: $(head -3 "$scratch/xmllint.err")"
  fi
}
run() {  # run NAME EXPECTED_EXIT ARGS...: the runner's output goes to SCRATCH/NAME.log
  local name=$1 want=$2
  shift 2
  local started=$SECONDS
  "$python" "$runner" --source "$src" --workdir "$scratch/$name" "$@" >"$scratch/$name.log" 2>&1
  local rc=$?
  echo "--- $name: exit $rc (want $want), $((SECONDS - started)) s; the end of its log:"
  tail -n 15 "$scratch/$name.log" | sed 's/^/    /'
  [[ $rc == "$want" ]] || fail "$name: workflow_steps.py exited $rc, not $want (log: $scratch/$name.log)"
}

# 1. The PR workflow.
run pr 0 .github/workflows/pr.yml --job test --job regression --prebuilt "$prodsim"
grep -q "checked, not run: it is README's test command" "$scratch/pr.log" ||
  fail "pr: the test job's line was not checked against README's test command"
grep -q 'skipped (uses: mikepenz/action-junit-report' "$scratch/pr.log" ||
  fail "pr: the JUnit reporter step was not reported as skipped"
for p in sarama-1.42.1 sarama-main; do
  valid_junit "$scratch/pr/out/junit/regression-$p.xml"
done

# 2. The nightly exploration: one shard, then the merge.
run nightly 0 .github/workflows/nightly.yml --job explore --job merge \
  --set NIGHTLY_RUNS=20 --set NIGHTLY_SHARDS=1 --set NIGHTLY_SEED=1 --prebuilt "$prodsim"
grep -q 'matrix entry profile=sarama-1.42.1, shard=0' "$scratch/nightly.log" ||
  fail "nightly: not the first matrix entry"
shard=$scratch/nightly/out/nightly/nightly-sarama-1.42.1-0
[[ -s $shard/summary.json ]] || fail "nightly: $shard/summary.json was not written"
valid_junit "$shard/junit.xml"
valid_junit "$scratch/nightly/out/nightly/junit/merge-sarama-1.42.1.xml"

# 3. The runner's canaries.
run canary 1 tools/testdata/workflows/steps_canary.yml --job canary --matrix word=second \
  --set SIZE=3
c=$scratch/canary/out
[[ $(cat "$c/substituted.txt" 2>/dev/null) == "second 3 3 step" ]] ||
  fail "canary: matrix/env substitution gave '$(cat "$c/substituted.txt" 2>/dev/null)', not 'second 3 3 step'"
[[ -f $c/always.txt ]] || fail "canary: the always() step after the failure did not run"
[[ ! -e $c/never.txt ]] || fail "canary: the success() step after the failure ran"
grep -q 'skipped (uses: actions/checkout@v4' "$scratch/canary.log" ||
  fail "canary: the uses: step was not reported as skipped"
run test_line 65 tools/testdata/workflows/test_line_canary.yml --job test
grep -q "not README's test command" "$scratch/test_line.log" ||
  fail "test_line: the refusal does not say why"

if ((bad)); then
  echo "workflow_steps: $bad failure(s)"
  exit 1
fi
echo "workflow_steps: pr.yml's test and regression jobs, a nightly shard and its merge, and the canaries: as expected"
rm -rf "$scratch"
