#!/usr/bin/env bash
# A driver that breaks the lockstep protocol gets a clear verdict naming
# what it did (a harness error quoting its line, client-hung, client-crashed),
# prodsim does not crash, and no process is left behind.
#   lockstep_misbehaving_test.sh PRODSIM SOURCE_DIR
set -uo pipefail
prodsim=$1 src=$2
scenario=$src/wire/testdata/ten-messages.toml
fake=$src/wire/testdata/lockstep_driver.sh
fail=0
while IFS='|' read -r mode want; do
  [[ -n $mode ]] || continue
  out=$(timeout 60 "$prodsim" run "$scenario" --client="bash $fake $mode" --step-bound=2s 2>&1)
  rc=$?
  if ((rc == 0 || rc >= 124)) || ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $mode: exit $rc, want '$want' in:"
    echo "$out" | head -8
    fail=1
  else
    echo "ok   $mode: $want"
  fi
  if pgrep -f "$fake $mode" >/dev/null; then
    echo "FAIL $mode: a driver process is left behind:"
    pgrep -af "$fake"
    fail=1
  fi
done <<'CASES'
wrong-step|want {"idle":0,"now_ns":T,"next_ns":N} or {"exit":0,"now_ns":T} last
next-not-after|next_ns is not after now_ns
past-until|now_ns is not in [the step's now_ns, its until_ns)
unknown-conn|a connection that was never dialled
bad-base64|want {"write":C,"bytes":BASE64} of at most 262144 bytes
garbage-dial|not a lockstep line
silent|client-failure [client-hung]
crash|client-failure [client-crashed]
idle-forever|client-failure [client-hung]
CASES
exit $fail
