#!/usr/bin/env bash
# A client driver that misbehaves on purpose, for wire/misbehaving_clients_test.sh:
#   fake_client.sh MODE    (the job line arrives on stdin)
# MODE: hang | crash | exit-early | escape | garbage | malformed-frame | produce-nothing
set -u
read -r job
bootstrap=$(printf '%s' "$job" | sed -E 's/.*"bootstrap":"([^",]*).*/\1/')
start='{"event":"start","t_us":1,"client":"fake","version":"0"}'
# The ports prodsim listens on, for the test's check that none outlives it.
if [[ -n ${FAKE_PORTS_FILE:-} ]]; then printf '%s\n' "$bootstrap" >>"$FAKE_PORTS_FILE"; fi
case ${1:-} in
  hang)
    echo "$start"
    sleep 1000 &   # a grandchild: it must die with the group
    wait ;;
  crash)
    echo "$start"
    kill -SEGV $$ ;;
  exit-early)
    echo "$start"
    echo '{"event":"produce","id":1,"topic":"t","key":"key-0","t_us":2}'
    exit 0 ;;
  escape)
    # A grandchild in a session of its own, holding the client's stdout:
    # it must neither outlive the trial nor keep it open to its bound.
    setsid sleep 1001 &
    echo "$start"
    echo '{"event":"produce","id":1,"topic":"t","key":"key-0","t_us":2}'
    exit 0 ;;
  garbage)
    echo "$start"
    echo 'this is not the driver protocol'
    echo '{"event":"closing","outstanding":0,"t_us":3}'
    echo '{"event":"closed","outstanding":0,"flush":"ok","t_us":4}' ;;
  produce-nothing)
    # Starts, closes and exits 0 without offering one of its job's messages.
    echo "$start"
    echo '{"event":"closing","outstanding":0,"t_us":3}'
    echo '{"event":"closed","outstanding":0,"flush":"ok","t_us":4}' ;;
  malformed-frame)
    echo "$start"
    port=${bootstrap##*:}
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    # A frame whose size is negative: Kafka closes the connection.
    printf '\xff\xff\xff\xf0hello' >&3
    # Wait for the close (read returns at EOF).
    read -r -t 5 -u 3 _ || true
    exec 3>&-
    echo '{"event":"closing","outstanding":0,"t_us":3}'
    echo '{"event":"closed","outstanding":0,"flush":"ok","t_us":4}' ;;
  *)
    echo "fake_client.sh: unknown mode '${1:-}'" >&2
    exit 64 ;;
esac
