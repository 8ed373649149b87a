#!/usr/bin/env bash
# prodsim's handling of bad input from a person: each case must exit with
# its sysexits code and print one line naming the problem (for a bad file:
# FILE:LINE:COLUMN), never crash; and its help.
set -uo pipefail
prodsim=${1:?}; src=${2:?}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail=0
expect() {  # expect CODE PATTERN -- ARGS...
  local want=$1 pattern=$2; shift 3
  local out rc
  out=$("$prodsim" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE "$pattern" <<<"$out"; then
    echo "FAIL: prodsim $* -> exit $rc (want $want), stderr: $out"; fail=1
  else
    echo "ok: prodsim $* -> exit $rc: $(head -1 <<<"$out")"
  fi
}
printf 'seed = 1\n[cluster]\nbrokers = 3\nbrokerz = 2\n[[cluster.topics]]\nname = "t"\n' > "$dir/unknown_key.toml"
printf 'seed = "one"\n' > "$dir/wrong_type.toml"
printf 'seed = 1\n[schedule]\npolicy = "lifo"\n' > "$dir/bad_policy.toml"
printf 'seed = 1\n[[cluster.topics]]\nname = "t\n' > "$dir/syntax.toml"
printf 'seed = 1\n[limits]\ntime = "5parsecs"\n' > "$dir/bad_duration.toml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- run "$dir/unknown_key.toml"
expect 65 "wrong_type.toml:1:[0-9]+:" -- run "$dir/wrong_type.toml"
expect 65 "bad_policy.toml:3:[0-9]+:" -- run "$dir/bad_policy.toml"
expect 65 "syntax.toml:[0-9]+:[0-9]+:" -- run "$dir/syntax.toml"
expect 65 "bad_duration.toml:3:[0-9]+:" -- run "$dir/bad_duration.toml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- print "$dir/unknown_key.toml"
expect 66 "cannot read" -- run "$dir/does_not_exist.toml"
expect 64 "unknown flag" -- run --frobnicate "$src/known/sarama-2803-assertion.toml"
expect 64 "unknown subcommand" -- frobnicate x.toml
expect 64 "no scenario file" -- run
expect 64 "bad explore flag '--jobs=0'" -- explore --base="$src/known/sarama-2803-assertion.toml" --runs=1 --jobs=0
expect 64 "bad explore flag '--jobs=two'" -- explore --base="$src/known/sarama-2803-assertion.toml" --runs=1 --jobs=two
expect 64 "bad bench flag '--max-messages=0'" -- bench --scaling --max-messages=0
expect 66 "none: not a directory" -- explore --base="$src/known/sarama-2803-assertion.toml" --runs=1 --known="$dir/none"
expect 64 "bad explore flag '--known='" -- explore --base="$src/known/sarama-2803-assertion.toml" --runs=1 --known=
printf 'seed = 1\n[producer]\ntest_defect = "no-backoff"\n' > "$dir/defect.toml"
expect 65 "defect.toml:3:15:" -- run "$dir/defect.toml"
printf 'seed = 1\n[checks]\nretry_pacing = 1\n' > "$dir/pacing.toml"
expect 65 "pacing.toml:3:16:" -- run "$dir/pacing.toml"
printf 'seed = 1\n[schedule]\npolicy = "pct"\ntape = "00ff"\n' > "$dir/tape_pct.toml"
printf 'seed = 1\n[schedule]\ntape = "0g"\n' > "$dir/tape_hex.toml"
printf 'seed = 1\n[schedule]\ntape = "abc"\n' > "$dir/tape_odd.toml"
expect 65 "tape_pct.toml:4:[0-9]+: .*only read by polic" -- run "$dir/tape_pct.toml"
printf 'seed = 1\n[schedule]\npolicy = "random"\ngomaxprocs = 4\n' > "$dir/procs_random.toml"
expect 65 "procs_random.toml:4:[0-9]+: .*only read by policy \"go\"" -- run "$dir/procs_random.toml"
expect 65 "tape_hex.toml:3:[0-9]+: .*not a hex digit" -- run "$dir/tape_hex.toml"
expect 65 "tape_odd.toml:3:[0-9]+: .*odd number" -- run "$dir/tape_odd.toml"
# decode / encode (the fuzzer's codec).
printf '\x01\x02' > "$dir/crash.bin"
expect 64 "needs -o" -- decode "$dir/crash.bin"
expect 64 "needs an input file" -- decode -o "$dir/out.toml"
expect 66 "cannot read" -- decode "$dir/nope.bin" -o "$dir/out.toml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- decode "$dir/crash.bin" -o "$dir/out.toml" --base="$dir/unknown_key.toml"
expect 66 "cannot read" -- decode "$dir/crash.bin" -o "$dir/out.toml" --base="$dir/nope.toml"
expect 64 "unknown --profile" -- decode "$dir/crash.bin" -o "$dir/out.toml" --profile=kafka-go
expect 64 "bad decode flag '--max-faults=lots'" -- decode "$dir/crash.bin" -o "$dir/out.toml" --max-faults=lots
expect 73 "cannot write" -- decode "$dir/crash.bin" -o "$dir/no/such/dir/out.toml"
expect 73 "cannot write" -- run "$src/known/sarama-2803-assertion.toml" --junit="$dir/no/such/dir/out.xml"
expect 65 "unknown_key.toml:4:[0-9]+:" -- encode "$dir/unknown_key.toml" -o "$dir/out.bin"
mkdir "$dir/ok"
"$prodsim" decode "$dir/crash.bin" -o "$dir/ok/decoded.toml" >/dev/null &&
  "$prodsim" run --check-expect "$dir/ok/decoded.toml" >/dev/null &&
  "$prodsim" encode "$dir/ok/decoded.toml" -o "$dir/ok/again.bin" >/dev/null &&
  "$prodsim" decode "$dir/ok/again.bin" -o "$dir/ok/again.toml" >/dev/null &&
  diff <(grep -v '^description' "$dir/ok/decoded.toml") <(grep -v '^description' "$dir/ok/again.toml") &&
  echo "ok: decode -> run --check-expect -> encode -> decode gives the same scenario" ||
  { echo "FAIL: decode/encode round trip"; fail=1; }
# A real crash file of scenario_fuzzer (fuzz/testdata/): decoded, it fails
# with #2803's assertion; shrunk, it still does.
crash=$src/../fuzz/testdata/scenario_fuzzer-crash-2803
"$prodsim" decode "$crash" -o "$dir/ok/crash.toml" | grep -q 'producer-assertion' &&
  "$prodsim" shrink "$dir/ok/crash.toml" -o "$dir/ok/crash-min.toml" >/dev/null &&
  "$prodsim" run --check-expect "$dir/ok/crash-min.toml" >/dev/null &&
  grep -q '^verdict = "producer-assertion"' "$dir/ok/crash-min.toml" &&
  echo "ok: the committed crash file decodes to #2803's assertion and shrinks" ||
  { echo "FAIL: decode and shrink of $crash"; fail=1; }
for f in "$dir"/*.toml; do
  lines=$("$prodsim" run "$f" 2>&1 >/dev/null | grep -c .)
  [[ $lines -eq 1 ]] || { echo "FAIL: $f gave $lines error lines, want 1"; fail=1; }
done
# real, serve, fidelity (wire mode): bad flags and files before any socket.
expect 64 "needs --client" -- real "$src/known/sarama-2803-assertion.toml"
expect 64 "trials takes" -- real "$src/known/sarama-2803-assertion.toml" --client=librdkafka --trials=-3
expect 64 "bound takes" -- real "$src/known/sarama-2803-assertion.toml" --client=librdkafka --bound=5parsecs
expect 64 "exactly one scenario file" -- real --client=librdkafka
expect 65 "unknown_key.toml:4:[0-9]+:" -- real "$dir/unknown_key.toml" --client=librdkafka
expect 73 "cannot write" -- real "$src/known/sarama-2803-assertion.toml" --client=/nonexistent --junit="$dir/no/such/dir/out.xml"
expect 66 "cannot read" -- serve "$dir/does_not_exist.toml"
expect 64 "unknown flag" -- serve --frobnicate "$src/known/sarama-2803-assertion.toml"
# fidelity judges both sides by the same checks: retry-pacing reads the
# model's producer steps, which a real client's run has none of, so the
# model side does not count it (this file fails only retry-pacing).
out=$("$prodsim" fidelity "$src/known/sarama-1.42.1-retry-batch-no-backoff.toml" --client=sarama \
  --seeds=3 --trials=0 2>&1)
if grep -qE "sarama-1.42.1 +0/3 " <<<"$out"; then
  echo "ok: fidelity leaves retry-pacing out of the model side"
else
  echo "FAIL: fidelity counted a check the real side cannot fail: $out"; fail=1
fi
expect 64 "needs --client" -- fidelity "$src/known/sarama-2803-assertion.toml"
expect 64 "unknown --policy" -- fidelity "$src/known/sarama-2803-assertion.toml" --client=x --policy=lifo
expect 64 "seeds takes" -- fidelity "$src/known/sarama-2803-assertion.toml" --client=x --seeds=0
expect 65 "unknown_key.toml:4:[0-9]+:" -- fidelity "$dir/unknown_key.toml" --client=librdkafka
expect 66 "cannot read" -- fidelity "$src/known/sarama-2803-assertion.toml" --client=x --real-from="$dir/none.csv"
expect 73 "cannot write" -- fidelity "$src/known/sarama-2803-assertion.toml" --client=/nonexistent --junit="$dir/no/such/dir/out.xml"
printf 'file,header\nnot,a,fidelity,line\n' > "$dir/bad.csv"
expect 65 "bad.csv:2:1: not a line" -- fidelity "$src/known/sarama-2803-assertion.toml" --client=x --real-from="$dir/bad.csv"
# --real-from: the real column comes from the CSV, no trial runs (the client
# named here does not exist).
printf 'file,profile,policy,seeds,model_failures,model_runs_ran,model_harness_errors,model_verdicts,client,trials,real_failures,real_trials_ran,real_harness_errors,real_verdicts,difference\n%s,sarama-1.42.1,random,1,0,1,0,pass 1,sarama 1.42.1,20,13,20,0,"pass 7; safety [no-broker-sequence-error] 13",0.650\n' "$src/known/sarama-2803-assertion.toml" > "$dir/real.csv"
out=$("$prodsim" fidelity "$src/known/sarama-2803-assertion.toml" --client=/nonexistent --seeds=2 \
      --policy=go --real-from="$dir/real.csv" 2>&1); rc=$?
if [[ $rc -ne 0 ]] || ! grep -qE " 13/20 " <<<"$out"; then
  echo "FAIL: fidelity --real-from -> exit $rc: $out"; fail=1
else
  echo "ok: fidelity --real-from takes the real column from the CSV"
fi
# Help, from the binary: `prodsim help` names every subcommand, and each
# one's --help exits 0 with its usage line (cli/command_line_test.cc checks
# that every declared flag is listed).
subs=$("$prodsim" help | sed -n '/^Subcommands:/,/^Exit codes:/p' | grep -E '^[a-z]+$')
if (( $(wc -w <<<"$subs") < 13 )); then
  echo "FAIL: prodsim help lists too few subcommands: $subs"; fail=1
fi
for s in $subs; do
  # The help is read whole first: grep -q stops early, and under pipefail
  # the writer's SIGPIPE would fail a long help at random.
  help=$("$prodsim" "$s" --help) || { echo "FAIL: prodsim $s --help exits $?"; fail=1; }
  if ! grep -q "^Usage: prodsim $s " <<<"$help"; then
    echo "FAIL: prodsim $s --help"; fail=1
  fi
done
echo "ok: prodsim help and each of $(wc -w <<<"$subs") subcommands' --help"
exit $fail
