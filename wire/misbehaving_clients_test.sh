#!/usr/bin/env bash
# A client that hangs, crashes, exits early, prints garbage, sends a
# malformed frame or closes without producing its job's messages gets its named verdict (exit 5, client-failure), prodsim
# does not crash, and nothing is left behind: no child or grandchild
# process, no listening port of prodsim's.
#   misbehaving_clients_test.sh PRODSIM SOURCE_DIR
set -uo pipefail
prodsim=$1 src=$2
scenario=$src/wire/testdata/ten-messages.toml
fake=$src/wire/testdata/fake_client.sh
fail=0
export FAKE_PORTS_FILE=$(mktemp)
trap 'rm -f "$FAKE_PORTS_FILE"' EXIT
for pair in hang:client-hung crash:client-crashed exit-early:client-exited-early \
            escape:client-exited-early garbage:client-output-garbage \
            malformed-frame:client-malformed-frame produce-nothing:client-lost-messages; do
  mode=${pair%%:*} check=${pair#*:}
  started=$(date +%s%N)
  out=$(timeout 60 "$prodsim" real "$scenario" --client="bash $fake $mode" --bound=5s 2>&1)
  rc=$?
  took_ms=$(( ($(date +%s%N) - started) / 1000000 ))
  # A grandchild that kept the client's stdout open must not keep the
  # trial to its bound.
  if [[ $mode == escape ]] && ((took_ms >= 4000)); then
    echo "FAIL escape: the trial took ${took_ms} ms, to its bound"
    fail=1
  fi
  if [[ $rc -ne 5 ]] || ! grep -q "client-failure \[$check\]" <<<"$out"; then
    echo "FAIL $mode: exit $rc, expected 5 and client-failure [$check]:"
    echo "$out"
    fail=1
  else
    echo "ok   $mode: client-failure [$check]"
  fi
  if pgrep -f "$fake $mode" >/dev/null || pgrep -f "sleep 100[01]" >/dev/null; then
    echo "FAIL $mode: a client process is left behind:"
    pgrep -af "$fake|sleep 100[01]"
    fail=1
  fi
done
# The client's own command cannot run: a harness error (70), not a client verdict.
out=$(timeout 30 "$prodsim" real "$scenario" --client=/nonexistent/driver 2>&1)
rc=$?
if [[ $rc -ne 70 ]] || ! grep -q "cannot execute /nonexistent/driver" <<<"$out"; then
  echo "FAIL missing driver: exit $rc: $out"
  fail=1
else
  echo "ok   missing driver: harness-error"
fi
# A bound no later than the scenario's close_at: refused before the client
# starts (a harness error, 70), not a client killed as hung while it waits
# to be told to close.
closing=$(mktemp --suffix=.toml)
sed 's/^interval = "1ms"$/interval = "1ms"\nclose_at = "2s"/' "$scenario" >"$closing"
out=$(timeout 30 "$prodsim" real "$closing" --client="bash $fake hang" --bound=2s 2>&1)
rc=$?
rm -f "$closing"
if [[ $rc -ne 70 ]] || ! grep -q "workload.close_at (2s) is not before the trial's bound (2s" <<<"$out"; then
  echo "FAIL close_at at the bound: exit $rc: $out"
  fail=1
else
  echo "ok   close_at at the bound: harness-error"
fi
# Bad flags: usage errors.
for bad in "--trials=0" "--bound=soon" "--client=" "--frobnicate"; do
  "$prodsim" real "$scenario" "$bad" >/dev/null 2>&1
  rc=$?
  if [[ $rc -ne 64 ]]; then
    echo "FAIL $bad: exit $rc, expected 64"
    fail=1
  fi
done
# Every port a trial listened on is closed once prodsim has exited.
listening=$(ss -Hltn 2>/dev/null | awk '{print $4}')
while IFS=, read -ra addrs; do
  for a in "${addrs[@]}"; do
    [[ -n $a ]] || continue
    if grep -qxF "$a" <<<"$listening"; then
      echo "FAIL a listening port is left: $a"
      fail=1
    fi
  done
done <"$FAKE_PORTS_FILE"
[[ -s $FAKE_PORTS_FILE ]] || { echo "FAIL the fake client saw no bootstrap"; fail=1; }
exit $fail
