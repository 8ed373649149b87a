#!/usr/bin/env bash
# The --junit reports of run, real and fidelity: every report validates
# under tools/junit.xsd (xmllint), its counts say what the run did, and a
# failing case is reported as one (canaries: a copy of a known file with a
# wrong [expect] verdict, a client that breaks what it acknowledges).
#   junit_reports_test.sh PRODSIM FAKE_CLIENT SOURCE_DIR
set -uo pipefail
prodsim=${1:?}; fake=${2:?}; src=${3:?}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail=0
pass_file=$src/scenarios/corpus/report-config-no-faults.toml  # passes on both profiles
fail_file=$src/scenarios/known/sarama-2803-assertion.toml     # producer-assertion; safety on main
fake_file=$src/wire/testdata/fake-client.toml

# report NAME WANT_RC "TESTS FAILURES ERRORS SKIPPED" -- ARGS...: runs prodsim
# with ARGS --junit=DIR/NAME.xml, checks its exit code, that the report
# validates and that its counts are these.
report() {
  local name=$1 want_rc=$2 want=$3; shift 4
  local xml=$dir/$name.xml rc
  "$prodsim" "$@" --junit="$xml" >"$dir/$name.log" 2>&1; rc=$?
  if [[ $rc -ne $want_rc ]]; then
    echo "FAIL $name: exit $rc, want $want_rc:"; sed -n 1,20p "$dir/$name.log"; fail=1; return
  fi
  if ! xmllint --noout --schema "$src/tools/junit.xsd" "$xml" 2>"$dir/$name.xmllint"; then
    echo "FAIL $name: the report does not validate:"; cat "$dir/$name.xmllint"; fail=1; return
  fi
  local t f e s
  read -r t f e s <<<"$want"
  local counts="tests=\"$t\" failures=\"$f\" errors=\"$e\" skipped=\"$s\""
  if ! grep -q "^<testsuites name=\"prodsim\" $counts" "$xml"; then
    echo "FAIL $name: want $counts, got:"; grep '<testsuites' "$xml"; fail=1; return
  fi
  echo "ok   $name: exit $rc, $counts"
}
# has NAME PATTERN: the report NAME holds PATTERN (grep -E).
has() {
  if grep -qE -- "$2" "$dir/$1.xml"; then
    echo "ok   $1 has $2"
  else
    echo "FAIL $1 lacks $2"; fail=1
  fi
}

# run: a case per file, failing as the verdict (exit code) does.
report run 4 "2 1 0 0" -- run "$pass_file" "$fail_file"
has run '<testsuite name="prodsim run" '
has run "<testcase name=\"$pass_file\" classname=\"prodsim.run.sarama-1.42.1\" time=\"[0-9.]+\">"
has run '<failure message="producer-assertion \[no-producer-assertion\] two-in-flight@Broker.AsyncProduce" type="producer-assertion">no-producer-assertion: '
has run '^  t=0.107300s error id=2 t/0: assertion failed'
has run '^signature: two-in-flight@Broker.AsyncProduce; how it came about:'
has run "^replay: prodsim run $fail_file --profile sarama-1.42.1</failure>"
has run '<system-out>.*sarama-2803-assertion.toml: producer-assertion .* digest=a3ad3ea5dd354051 t=[0-9.]+s steps=[0-9]+ wall='
# --check-expect: a case per [expect] entry (each file has a sarama-main
# entry), passing as each holds.
report run-expect 0 "4 0 0 0" -- run --check-expect "$pass_file" "$fail_file"
has run-expect "<testcase name=\"$fail_file\" classname=\"prodsim.run.sarama-main\" "
# --profile: the suite says so, the cases are classed by it.
report run-profile 1 "2 1 0 0" -- run --profile=sarama-main "$pass_file" "$fail_file"
has run-profile '<testsuite name="prodsim run --profile sarama-main" '
has run-profile '<failure message="safety \[no-broker-sequence-error\] close-during-retry@asyncProducer.retryBatch" type="safety">'
has run-profile "^replay: prodsim run $fail_file --profile sarama-main</failure>"
report run-profile-expect 0 "2 0 0 0" -- run --profile=sarama-main --check-expect "$pass_file" "$fail_file"
# The canary: the known file with a wrong [expect] verdict fails, and the
# message is why the expectation does not hold.
sed '/^\[expect\]/,/^verdict/s/^verdict = "producer-assertion"/verdict = "safety"/' "$fail_file" >"$dir/wrong.toml"
report run-wrong-expect 1 "2 1 0 0" -- run --check-expect "$dir/wrong.toml"
has run-wrong-expect '<failure message="expected verdict safety on sarama-1.42.1, got producer-assertion" type="producer-assertion">producer-assertion \[no-producer-assertion\]'
has run-wrong-expect "^replay: prodsim run $dir/wrong.toml --profile sarama-1.42.1 --check-expect</failure>"
# A harness error (the model refuses the fake client's world: idempotence
# with five requests in flight) and a file that does not load are errors;
# the exit code is the first file's that did not pass, as without --junit.
report run-errors 70 "3 0 2 0" -- run "$pass_file" "$fake_file" "$dir/missing.toml"
has run-errors '<error message="harness-error" type="harness-error">harness error: Idempotent producer requires'
has run-errors '<error message="[^"]*missing.toml: cannot read file[^"]*" type="missing-file"/>'

# real over the wire, with the fake client (wire/fake_client.cc): a case per
# trial. A well-behaved mode passes; sequence-reuse breaks what it
# acknowledges in every trial (the canary: failures, not passes); a crashing
# client and a world the wire cannot serve (mock faults) are errors, and a
# harness error stops the trials (the next would say the same).
report real-pass 0 "2 0 0 0" -- real "$fake_file" --client="$fake goroutine-leak" --trials=2 --bound=10s
has real-pass "<testsuite name=\"prodsim real sarama goroutine-leak\" "
has real-pass "<testcase name=\"$fake_file trial 2\" classname=\"prodsim.real.sarama goroutine-leak\" "
report real-fail 1 "2 2 0 0" -- real "$fake_file" --client="$fake sequence-reuse" --trials=2 --bound=10s
has real-fail '<failure message="safety \[acked-are-durable\] sequence-reuse@fake" type="safety">verdict: '
has real-fail '^signature: sequence-reuse@fake; how it came about:'
has real-fail "^again \(each trial a sample of real timing\): prodsim real $fake_file --client=&apos;$fake sequence-reuse&apos; --trials=2 --until-failure</failure>"
has real-fail '<system-out>.* trial 1/2: safety \[acked-are-durable\] sequence-reuse@fake client=fake sequence-reuse '
report real-crash 5 "2 0 2 0" -- real "$src/wire/testdata/ten-messages.toml" \
  --client="bash $src/wire/testdata/fake_client.sh crash" --trials=2 --bound=5s
has real-crash '<error message="client-failure \[client-crashed\][^"]*" type="client-failure">'
mock_file=$src/scenarios/known/mock/sarama-2803-correlation-mismatch.toml
report real-harness 70 "1 0 1 0" -- real "$mock_file" --client="$fake goroutine-leak" --trials=2 --bound=10s
has real-harness '<error message="harness-error" type="harness-error">'

# fidelity: a case per file, failing when the model's failure rate and the
# real client's differ by more than 0.25. The fake client's world with one
# request in flight, which the model runs (it passes every seed): the
# well-behaved mode agrees, sequence-reuse (failing every trial) does not.
# A side that cannot run a file is an error: the wire on mock faults, the
# model on the fake client's own world (idempotence with five in flight).
sed 's/^idempotent = true/&\nnet_max_open_requests = 1/' "$fake_file" >"$dir/one-in-flight.toml"
report fidelity-pass 0 "1 0 0 0" -- fidelity "$dir/one-in-flight.toml" \
  --client="$fake goroutine-leak" --seeds=2 --trials=2 --bound=10s
has fidelity-pass "<testcase name=\"$dir/one-in-flight.toml\" classname=\"prodsim.fidelity.sarama goroutine-leak\" "
report fidelity-mixed 0 "3 1 2 0" -- fidelity "$dir/one-in-flight.toml" "$mock_file" "$fake_file" \
  --client="$fake sequence-reuse" --seeds=2 --trials=2 --bound=10s
has fidelity-mixed '<testsuite name="prodsim fidelity fake sequence-reuse" '
has fidelity-mixed '<failure message="\|diff\| 1.00 &gt; 0.25: model 0/2 \(pass 2\), real 2/2 \(safety \[acked-are-durable\] sequence-reuse@fake 2\)" type="fidelity">'
has fidelity-mixed '<error message="the real client could not run it: mock faults'
has fidelity-mixed '<error message="the model could not run it: Idempotent producer requires'
# No real column: --trials=0 is skipped; a client that cannot run (a
# version not built) beside a --real-from CSV without the file, an error.
# A --real-from column is judged as a run one: #2803's file fails 1 of 2
# seeds in the model, 0 of 20 trials in this CSV.
report fidelity-skipped 0 "1 0 0 1" -- fidelity "$dir/one-in-flight.toml" --client="$fake x" --seeds=2 --trials=0
printf 'file,profile,policy,seeds,model_failures,model_runs_ran,model_harness_errors,model_verdicts,client,trials,real_failures,real_trials_ran,real_harness_errors,real_verdicts,difference\n%s,sarama-1.42.1,random,1,0,1,0,pass 1,sarama 1.42.1,20,0,20,0,pass 20,\n' "$fail_file" >"$dir/real.csv"
report fidelity-no-client 0 "2 1 1 0" -- fidelity "$fail_file" "$dir/one-in-flight.toml" \
  --client=librdkafka@0.0.0-not-built --real-from="$dir/real.csv" --seeds=2
has fidelity-no-client "<testcase name=\"$fail_file\" classname=\"prodsim.fidelity.sarama 1.42.1\" "
has fidelity-no-client '<error message="no real trials: [^"]+" type="no-client">'
has fidelity-no-client '<failure message="\|diff\| 0.50 &gt; 0.25: model 1/2 \(pass 1; safety \[no-broker-sequence-error\] two-in-flight@Broker.AsyncProduce 1\), real 0/20 \(pass 20\)" type="fidelity">'

exit $fail
