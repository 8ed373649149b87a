#!/usr/bin/env bash
# explore --shard and prodsim merge: shards 0/2 and 1/2 of an exploration
# (--runs counts a shard's runs, so each runs R), merged, print what one
# explore of all 2R runs prints, line for line but for runs/s and the
# directory part of the files' paths, with the same exit code and the same
# JUnit report (which validates under tools/junit.xsd); one shard merged
# alone does not (the canary); and merge refuses what is not one
# exploration's shards.
# With FAKE_CLIENT: over the wire instead (explore --client, trials do not
# replay): two shards' summaries merge into one over-the-wire summary of
# all their trials, with a JUnit report that validates.
# usage: shards_test.sh PRODSIM SOURCE_DIR [FAKE_CLIENT]
set -uo pipefail
prodsim=$(realpath "${1:?}"); src=$(realpath "${2:?}")
base=$src/bench/scenarios/report-config-steady.toml
xsd=$src/tools/junit.xsd
runs=40  # per shard
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0

if [[ -n ${3:-} ]]; then
  client="$(realpath "$3") sequence-reuse"
  for s in 0 1; do
    "$prodsim" explore --base="$src/wire/testdata/fake-client.toml" --client="$client" \
      --runs=2 --shard=$s/2 --keep-going --no-shrink --bound=10s --out=wire$s \
      --summary=wire$s.json --junit=wire$s.xml > wire$s.out 2>&1
    rc=$?; (( rc <= 1 )) || { echo "FAIL: explore --client --shard=$s/2 exits $rc"; cat wire$s.out; exit 1; }
  done
  "$prodsim" merge wire0.json wire1.json --junit=wire.xml > wire.out; rc=$?
  if grep -q '"real": true' wire0.json && grep -q '^summary: \[explore\] runs=4 ' wire.out &&
     grep -q '^  over the wire: .*, 4 trial(s) on ' wire.out && (( rc <= 1 )); then
    echo "ok: two shards over the wire merge into one summary of 4 trials (exit $rc)"
  else
    echo "FAIL: the merge over the wire (exit $rc):"; cat wire.out wire0.json; fail=1
  fi
  for x in wire0.xml wire1.xml wire.xml; do
    xmllint --noout --schema "$xsd" "$x" 2>/dev/null || { echo "FAIL: $x does not validate"; fail=1; }
  done
  exit $fail
fi

# One known file (#2803's two-in-flight): some findings known, others new.
mkdir known && cp "$src/scenarios/known/sarama-2803-assertion.toml" known/
explore() {  # explore NAME ARGS...: relative --out, as a CI job runs it
  local name=$1; shift
  "$prodsim" explore --base="$base" --seed=3 --keep-going --known=known --no-shrink \
    --out="$name" --summary="$name.json" --junit="$name.xml" "$@" > "$name.out" 2>/dev/null
}
explore all --runs=$((2 * runs)); all_rc=$?
for s in 0 1; do
  explore shard$s --runs=$runs --shard=$s/2
  rc=$?; (( rc <= 1 )) || { echo "FAIL: explore --shard=$s/2 exits $rc"; exit 1; }
done
"$prodsim" merge shard1.json shard0.json --junit=merged.xml > merged.out; merged_rc=$?
"$prodsim" merge shard0.json --junit=alone.xml > alone.out 2>/dev/null
for f in all shard0 shard1; do
  [[ -s $f.json && -s $f.xml ]] || { echo "FAIL: explore $f wrote no summary or report"; exit 1; }
done

# The summary lines, runs/s and the files' directories taken out.
normal() { sed -e 's|runs/s=[0-9.]*|runs/s=R|' -e 's#\(all\|shard[01]\)/#DIR/#g' "$@"; }
sed -n '/^summary: /,$p' all.out | normal > all.summary
normal merged.out > merged.summary
normal alone.out > alone.summary
rows=$(grep -c '^ .* \(known\|new\) ' all.summary)
if (( rows < 3 )) || ! grep -q ' known ' all.summary || ! grep -q ' new ' all.summary; then
  echo "FAIL: the unsharded summary has $rows signatures, want known and new ones:"
  cat all.summary; fail=1
fi
if diff all.summary merged.summary; then
  echo "ok: the merge of 2 shards of $runs runs prints the summary of $((2 * runs)) runs ($rows signatures)"
else
  echo "FAIL: the merged summary differs from the unsharded one (above)"; fail=1
fi
[[ $merged_rc -eq $all_rc && $all_rc -eq 1 ]] ||
  { echo "FAIL: merge exits $merged_rc, explore $all_rc (want 1: new signatures)"; fail=1; }
if diff -q all.summary alone.summary > /dev/null; then
  echo "FAIL (canary): one shard merged alone prints the whole exploration's summary"; fail=1
else
  echo "ok: one shard merged alone differs"
fi

for x in all.xml shard0.xml shard1.xml merged.xml alone.xml; do
  xmllint --noout --schema "$xsd" "$x" 2>/dev/null || { echo "FAIL: $x does not validate"; fail=1; }
done
xml() { sed -e 's/time="[0-9.]*"/time="T"/g' -e 's#\(all\|shard[01]\)/#DIR/#g' "$1"; }
if diff <(xml all.xml) <(xml merged.xml); then
  echo "ok: the JUnit reports validate, and the merged one is the unsharded one's"
else
  echo "FAIL: the merged JUnit report differs from the unsharded one (above)"; fail=1
fi
grep -q '<failure message="new signature ' all.xml && grep -q 'replay: prodsim run all/' all.xml ||
  { echo "FAIL: no new signature's <failure> with its replay in all.xml"; fail=1; }

expect() {  # expect CODE PATTERN -- ARGS...
  local want=$1 pattern=$2; shift 3
  local out rc
  out=$("$prodsim" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE "$pattern" <<<"$out" || [[ $(grep -c . <<<"$out") -ne 1 ]]; then
    echo "FAIL: prodsim $* -> exit $rc (want $want, one line matching $pattern): $out"; fail=1
  else
    echo "ok: prodsim $* -> exit $rc: $out"
  fi
}
sed 's/"seed": "3"/"seed": "4"/' shard1.json > other-seed.json
sed '/"base"/s/"fnv1a64": "[0-9a-f]*"/"fnv1a64": "0123456789abcdef"/' shard1.json > other-base.json
head -c 200 shard1.json > cut.json
expect 65 '^shard0.json:[0-9]+:[0-9]+: shard 0 of 2 given twice' -- merge shard0.json shard0.json
expect 65 '^other-seed.json:[0-9]+:[0-9]+: root seed 4, but shard0.json has 3' -- merge shard0.json other-seed.json
expect 65 '^other-base.json:[0-9]+:[0-9]+: base digest' -- merge shard0.json other-base.json
expect 65 '^cut.json:[0-9]+:[0-9]+: not JSON' -- merge shard0.json cut.json
expect 66 '^none.json: cannot read' -- merge shard0.json none.json
expect 73 'cannot write' -- merge shard0.json shard1.json --junit=no/such/dir/m.xml
expect 73 'cannot write' -- explore --base="$base" --runs=1 --summary=no/such/dir/s.json
expect 73 'cannot write' -- explore --base="$base" --runs=1 --junit=no/such/dir/s.xml
exit $fail
