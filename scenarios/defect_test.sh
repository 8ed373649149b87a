#!/usr/bin/env bash
# The checks catch what they exist for: with a defect switched on in the
# model on purpose ([producer] test_defect, not Sarama), `prodsim explore`
# from the report's configuration on sarama-main finds it within 60 s, under
# the expected signature, and says how long it took; without the defect the
# same seeds pass (the defect, not the seed, is what is caught).
#   defect_test.sh PRODSIM SOURCE_DIR
set -euo pipefail
prodsim=$1 src=$2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
base=$src/bench/scenarios/report-config-steady.toml

caught() {  # DEFECT SIGNATURE
  sed -e 's/^profile = "sarama-1.42.1"/profile = "sarama-main"/' \
      -e "s/^version = \"2.6.0\"/version = \"2.6.0\"\ntest_defect = \"$1\"/" "$base" > "$dir/$1.toml"
  grep -q "^test_defect = \"$1\"" "$dir/$1.toml"
  local start end out
  start=$(date +%s.%N)
  out=$("$prodsim" explore --base="$dir/$1.toml" --time=60s --seed=2026 --jobs=2 2>/dev/null ||
        true)
  end=$(date +%s.%N)
  if ! grep -m1 '^found:' <<<"$out" | grep -q " $2\$"; then
    echo "FAIL: test_defect=$1 not caught as $2 within 60 s:"; echo "$out" | tail -n 5
    exit 1
  fi
  echo "test_defect=$1: $(grep -m1 '^found:' <<<"$out") after $(grep -o 'runs=[0-9]*' <<<"$out" | head -n1) in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"
}
# Without a defect, the runs in which they are caught pass.
sed -e 's/^profile = "sarama-1.42.1"/profile = "sarama-main"/' "$base" > "$dir/main.toml"
"$prodsim" explore --base="$dir/main.toml" --runs=2 --seed=2026 --jobs=1 > "$dir/main.out" 2>&1 ||
  { echo "FAIL: without a defect, the first runs do not pass:"; cat "$dir/main.out"; exit 1; }
caught no-retry-backoff 'retry-without-backoff@[A-Za-z.]*'
caught no-read-timeout 'close-hang@Broker.responseReceiver'
# Known is per profile: a 1.42.1 file records retry-without-backoff, so on
# sarama-main the same mechanism is a regression, new and exit 1.
rc=0
out=$("$prodsim" explore --base="$dir/no-retry-backoff.toml" --time=60s --seed=2026 --jobs=2 \
      --known="$src/scenarios/known" 2>/dev/null) || rc=$?
if [[ $rc -ne 1 ]] ||
   ! grep -m1 '^found:' <<<"$out" | grep -q 'retry-without-backoff@[A-Za-z.]* (new on sarama-main (known on sarama-1.42.1))$'; then
  echo "FAIL: with --known, no-retry-backoff on sarama-main is not new there (exit $rc):"
  grep -m1 '^found:' <<<"$out"
  exit 1
fi
echo "with --known: $(grep -m1 '^found:' <<<"$out")"
echo "defect_test: both defects caught"
