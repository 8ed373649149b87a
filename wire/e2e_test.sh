#!/usr/bin/env bash
# prodsim real with the librdkafka driver, end to end:
#   e2e_test.sh PRODSIM fault-free FILE [CLIENT]  every check passes, every message acked
#   e2e_test.sh PRODSIM 4438 FILE                 fails with librdkafka's fatal error within 5 trials
#   e2e_test.sh PRODSIM passes FILE [CLIENT]      passes 3 of 3 trials (a past false positive)
set -uo pipefail
prodsim=$1 mode=$2 file=$3 client=${4:-librdkafka}
case $mode in
  fault-free)
    out=$(timeout 240 "$prodsim" real "$file" --client="$client" --bound=60s 2>&1)
    rc=$?
    echo "$out"
    [[ $rc -eq 0 ]] || { echo "FAIL: exit $rc, expected 0"; exit 1; }
    grep -q "acked=1000 errors=0" <<<"$out" || { echo "FAIL: not every message acked"; exit 1; }
    ;;
  4438)
    out=$(timeout 240 "$prodsim" real "$file" --client=librdkafka --trials=5 --until-failure \
          --bound=30s 2>&1)
    rc=$?
    echo "$out"
    [[ $rc -eq 4 ]] || { echo "FAIL: exit $rc, expected 4 (producer-assertion)"; exit 1; }
    grep -q "producer-assertion \[no-fatal-error\]" <<<"$out" || { echo "FAIL: no fatal error"; exit 1; }
    grep -Eq "rewound sequence number|sequence desynchronization" <<<"$out" ||
      { echo "FAIL: the fatal error is not #4438's"; exit 1; }
    grep -q "sequence-desync-fatal@rd_kafka_handle_idempotent_Produce_error" <<<"$out" ||
      { echo "FAIL: not classified as sequence-desync-fatal"; exit 1; }
    ;;
  passes)
    out=$(timeout 240 "$prodsim" real "$file" --client="$client" --trials=3 --jobs=3 --bound=60s 2>&1)
    rc=$?
    echo "$out"
    [[ $rc -eq 0 ]] || { echo "FAIL: exit $rc, expected 0 (every trial passes)"; exit 1; }
    ;;
  *) echo "usage: e2e_test.sh PRODSIM fault-free|4438|passes FILE" >&2; exit 64 ;;
esac
