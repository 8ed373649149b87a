#!/usr/bin/env bash
# prodsim real against real Kafka brokers (wire/real_cluster.h), end to end:
#   real_cluster_test.sh PRODSIM FILE [VERSION]
# FILE (the librdkafka fault-free file) passes one trial against Kafka
# VERSION (2.6.2 unless given) behind the fault proxy, every message acked;
# and nothing is left behind: no cluster directory under the trial's
# TMPDIR, no process started for it (the brokers' ports go with them; the
# proxy's with prodsim).
# Then a file the real cluster cannot run is refused with exit 78, and a
# bad --cluster with 64.
set -uo pipefail
prodsim=$1 file=$2 version=${3:-2.6.2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# Building the supervisor on first use can take minutes (Maven); the trial
# itself under a minute.
out=$(TMPDIR=$tmp timeout 840 "$prodsim" real "$file" --client=librdkafka --cluster="kafka@$version" \
  --trials=1 --bound=60s --history="$tmp/history.txt" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "exit $rc, expected 0"
grep -q "trial 1/1: pass .*acked=1000 errors=0" <<<"$out" || fail "not a pass with every message acked"
grep -q "cluster: Kafka $version, started in" <<<"$out" || fail "no cluster line"
grep -q "^final t/" "$tmp/history.txt" || fail "the history has no final logs"
grep -q "Produce response corr=" "$tmp/history.txt" || fail "the history has no Produce responses"

# Nothing left: the cluster's directory was under $tmp (TMPDIR), and every
# process of the trial named it on its command line.
leftover=$(find "$tmp" -mindepth 1 -maxdepth 1 -name 'prodsim-kafka-*')
[[ -z $leftover ]] || fail "left behind: $leftover"
if pgrep -f "$tmp" >/dev/null; then
  pgrep -af "$tmp"
  fail "processes of the trial still running"
fi

# A fault kind with no real form: refused before anything starts.
cat >"$tmp/inject.toml" <<'EOF'
[cluster]
brokers = 3
min_insync_replicas = 2

[[cluster.topics]]
name = "t"
partitions = 1
replication_factor = 3

[[faults]]
kind = "inject_error"
at = "1s"
error = "NOT_LEADER_OR_FOLLOWER"
topic = "t"
partition = 0
EOF
out=$("$prodsim" real "$tmp/inject.toml" --client=librdkafka --cluster="kafka@$version" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 78 ]] || fail "inject_error: exit $rc, expected 78"
grep -q "no real form" <<<"$out" || fail "inject_error: not said why"
out=$("$prodsim" real "$file" --client=librdkafka --cluster=kafka 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 64 ]] || fail "--cluster=kafka: exit $rc, expected 64"
echo PASS
