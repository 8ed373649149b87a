#!/usr/bin/env bash
# The attack suite against prodsim serve: wire/attack.cc's kinds, one after
# another, each followed by a good client that must be served; then SIGINT,
# and serve must pass (what it did not serve is counted, not a failure),
# summarise what it refused, leave no port, and have stayed within RSS_MIB
# of peak resident memory (VmHWM) all along.
#   attack_test.sh PRODSIM ATTACK SCENARIO RSS_MIB
set -uo pipefail
prodsim=$1 attack=$2 scenario=$3 rss_mib=$4
dir=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
# 600 held connections need more than the usual 1,024 descriptors on both sides.
ulimit -n 4096 2>/dev/null || true
"$prodsim" serve "$scenario" --history="$dir/history.txt" >"$dir/serve.out" 2>"$dir/serve.err" &
pid=$!
for _ in $(seq 200); do grep -q '^bootstrap: ' "$dir/serve.out" && break; sleep 0.05; done
bootstrap=$(sed -n 's/^bootstrap: //p' "$dir/serve.out")
if [[ -z $bootstrap ]]; then echo "FAIL: no bootstrap line"; cat "$dir/serve.out" "$dir/serve.err"; exit 1; fi
port=${bootstrap##*:}
fail=0
timeout 240 "$attack" "$port" t
rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL: the attack suite exited $rc"; fail=1; }
hwm_kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
kill -INT $pid
wait $pid
src=$?
pid=
echo "--- serve (exit $src):"
cat "$dir/serve.out"
echo "--- serve's stderr:"
cat "$dir/serve.err"
[[ $src -eq 0 ]] || { echo "FAIL: serve exited $src, expected 0 (pass)"; fail=1; }
for what in "malformed frame" "limit"; do
  grep -qi "note .*$what" "$dir/serve.out" || { echo "FAIL: serve's summary does not count a $what"; fail=1; }
done
echo "serve's peak resident memory: $((hwm_kib / 1024)) MiB (bound ${rss_mib} MiB)"
if [[ -z $hwm_kib ]] || ((hwm_kib > rss_mib * 1024)); then
  echo "FAIL: serve's peak RSS ${hwm_kib:-?} KiB is over ${rss_mib} MiB"
  fail=1
fi
if ss -ltn 2>/dev/null | grep -qF ":$port "; then echo "FAIL: port $port is left listening"; fail=1; fi
exit $fail
