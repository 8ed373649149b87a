#!/usr/bin/env bash
# A driver that breaks the lockstep protocol (clients/README.md, "Simulated
# time") in one way, for wire/lockstep_misbehaving_test.sh. It dials nothing
# and produces nothing: each mode is about prodsim's side of the pipe.
#   lockstep_driver.sh MODE
mode=${1:?}
read -r job || exit 1
echo '{"event":"start","t_us":0,"client":"lockstep-fake","version":"0"}'
n=0
while read -r line; do
  [[ $line == '{"step":'* ]] || continue
  now=${line#*\"now_ns\":}; now=${now%%,*}
  case $mode in
    wrong-step) echo "{\"idle\":$((n + 7)),\"now_ns\":$now,\"next_ns\":-1}" ;;
    next-not-after) echo "{\"idle\":$n,\"now_ns\":$now,\"next_ns\":$now}" ;;
    past-until) echo "{\"idle\":$n,\"now_ns\":99000000000000,\"next_ns\":-1}" ;;
    unknown-conn) echo '{"write":9,"bytes":"AAAAAA=="}'; echo "{\"idle\":$n,\"now_ns\":$now,\"next_ns\":-1}" ;;
    bad-base64) echo '{"dial":1,"host":"127.0.0.1","port":1}'; echo '{"write":1,"bytes":"%%%"}'
                echo "{\"idle\":$n,\"now_ns\":$now,\"next_ns\":-1}" ;;
    garbage-dial) echo '{"dial":"one"}'; echo "{\"idle\":$n,\"now_ns\":$now,\"next_ns\":-1}" ;;
    silent) sleep 997 ;;  # not 1000 or 1001: wire_misbehaving_clients looks for those
    crash) echo '{"dial":1,"host":"127.0.0.1","port":1}'; exit 1 ;;
    # Answers every step and never closes: the trial runs to its time limit.
    idle-forever) echo "{\"idle\":$n,\"now_ns\":$now,\"next_ns\":$((now + 1000000000))}" ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
  n=$((n + 1))
done
