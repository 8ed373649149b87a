#!/usr/bin/env bash
# prodsim serve for a user's own application: prints the bootstrap address,
# serves a real client (the librdkafka driver stands in for the
# application), and on SIGINT writes what the brokers recorded and runs the
# log checks; nothing is left listening.
#   serve_test.sh PRODSIM DRIVER SCENARIO
set -uo pipefail
prodsim=$1 driver=$2 scenario=$3
dir=$(mktemp -d)
trap 'kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
"$prodsim" serve "$scenario" --history="$dir/history.txt" >"$dir/serve.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^bootstrap: ' "$dir/serve.out" && break; sleep 0.05; done
bootstrap=$(sed -n 's/^bootstrap: //p' "$dir/serve.out")
if [[ -z $bootstrap ]]; then echo "FAIL: no bootstrap line"; cat "$dir/serve.out"; exit 1; fi
printf '%s\n' "{\"bootstrap\":\"$bootstrap\",\"topics\":[\"t\"],\"messages\":50,\"keys\":5,\"burst\":1,\"interval_us\":1000,\"value_bytes\":10,\"close_at_us\":-1,\"flush_timeout_ms\":10000,\"config\":[[\"enable.idempotence\",\"true\"]]}" |
  timeout 60 "$driver" >"$dir/driver.out" 2>"$dir/driver.err"
acked=$(grep -c '"event":"ack"' "$dir/driver.out")
kill -INT $pid
wait $pid
rc=$?
cat "$dir/serve.out"
fail=0
[[ $acked -eq 50 ]] || { echo "FAIL: the application got $acked of 50 acks"; fail=1; }
[[ $rc -eq 0 ]] || { echo "FAIL: serve exited $rc"; fail=1; }
grep -q 'pass t=.* appends=[1-9]' "$dir/serve.out" || { echo "FAIL: no appends, or not pass"; fail=1; }
grep -q ' append t/0 offset=0 ' "$dir/history.txt" ||
  { echo "FAIL: the history has no append:"; head "$dir/history.txt"; fail=1; }
grep -q '^final t/0 offset=0 ' "$dir/history.txt" || { echo "FAIL: the history has no final log"; fail=1; }
if ss -ltn 2>/dev/null | grep -qF "${bootstrap%%,*}"; then echo "FAIL: a port is left"; fail=1; fi
exit $fail
