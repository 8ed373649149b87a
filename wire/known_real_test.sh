#!/usr/bin/env bash
# The real clients' findings as a regression run: each file under
# scenarios/known/real/ (CLIENT-VERSION-what.toml) replayed with its client.
#   - A client with simulated time (kafkajs, kafkajs-fixes, java, sarama: the
#     lockstep protocol, clients/README.md) replays the file once with
#     prodsim run --client: its [expect] verdict, check and signature (the
#     finding's mechanism, its @client replaced by the client run) must come
#     out exactly, and a second run must give the same digest where the
#     client's replay is exact (kafkajs, Java; Sarama's is near: docs/real-clients.md).
#   - A client without it (librdkafka) runs K wall-clock trials at once; the
#     signature must come out in at least R of them, with a failing verdict.
#     The verdict and check are printed, not asserted: on a loaded machine the
#     same mechanism can end under another verdict, and a wall-clock trial
#     says what holds under load, not a replay.
# A file whose client is not built is skipped, and says so. Then the same
# files on another version where one is given: CLIENT=ALSO pairs in
# PRODSIM_KNOWN_REAL_ALSO ("kafkajs=kafkajs-fixes").
set -uo pipefail
prodsim=${1:?}; dir=${2:?}; trials=${3:-3}; needed=${4:-2}
status=0
simulated() {  # FILE CLIENT WANT EXACT: one replay in simulated time, [expect] exactly
  local file=$1 client=$2 want=$3 exact=$4 out again d1 d2
  out=$("$prodsim" run "$file" --client="$client" 2>&1)
  if grep -q "is not built\|was not found" <<<"$out"; then
    echo "skip $(basename "$file") on $client: $(grep -m1 'not' <<<"$out")"
    return
  fi
  if ! grep -qF -- ": $want client=" <<<"$out"; then
    echo "FAIL $(basename "$file") on $client in simulated time: want '$want', got:"
    head -3 <<<"$out"
    status=1
    return
  fi
  d1=$(grep -o 'digest=[0-9a-f]*' <<<"$out" | head -1)
  if [[ $exact == exact ]]; then
    again=$("$prodsim" run "$file" --client="$client" 2>&1)
    d2=$(grep -o 'digest=[0-9a-f]*' <<<"$again" | head -1)
    if [[ $d1 != "$d2" ]]; then
      echo "FAIL $(basename "$file") on $client: two replays, two digests ($d1, $d2)"
      status=1
      return
    fi
  fi
  echo "ok   $(basename "$file") on $client in simulated time: $want ($d1${exact:+, again})"
}
run() {  # FILE FAMILY CLIENT
  local file=$1 family=$2 client=$3 verdict check signature want got
  verdict=$(sed -n '/^\[expect\]/,/^\[/{s/^verdict = "\(.*\)"/\1/p}' "$file")
  check=$(sed -n '/^\[expect\]/,/^\[/{s/^check = "\(.*\)"/\1/p}' "$file")
  signature=$(sed -n '/^\[expect\]/,/^\[/{s/^signature = "\(.*\)"/\1/p}' "$file")
  # A signature named after the client (@kafkajs) is the client run's.
  [[ ${signature#*@} == "$family" ]] && signature=${signature%@*}@${client%%@*}
  want="$verdict [$check] $signature"
  case $family in
    kafkajs | java) simulated "$file" "$client" "$want" exact; return ;;
    sarama) simulated "$file" "$client" "$want" ""; return ;;
  esac
  # franz-go's null-record-set needs a batch to fail while a request is
  # being built: about half the trials on a loaded 2-core machine, so its
  # files take 6 trials and need the signature in one.
  local k=$trials n=$needed
  if [[ $family == franz-go ]]; then k=6; n=1; fi
  out=$("$prodsim" real "$file" --client="$client" --trials="$k" --jobs="$k" --bound=60s 2>&1)
  if grep -q "is not built\|was not found" <<<"$out"; then
    echo "skip $(basename "$file") on $client: $(grep -m1 'not' <<<"$out")"
    return
  fi
  got=$(grep -E -- "trial [0-9]+/[0-9]+: [a-z-]+ \[[a-z-]+\] " <<<"$out" | grep -cF -- "] $signature client=")
  exact=$(grep -cF -- ": $want client=" <<<"$out")
  if ((got >= n)); then
    echo "ok   $(basename "$file") on $client: $signature in $got of $k trials ($exact as '$want')"
  else
    echo "FAIL $(basename "$file") on $client: want $signature in $n of $k trials, got $got:"
    grep -E "trial [0-9]+/|distribution" <<<"$out"
    status=1
  fi
}
for file in "$dir"/*.toml; do
  name=$(basename "$file")
  client=${name%%-[0-9]*}
  # A Java or franz-go file runs on its own version (the default preset
  # builds the Java client's 2.6.3, 2.8.2, 3.9.1 and 4.4.0 and franz-go's
  # pinned 1.14.0 and 1.22.3): its finding may be fixed in the default one.
  if [[ $client == java || $client == franz-go ]]; then
    version=${name#"$client"-}
    run "$file" "$client" "$client@${version%%-[a-z]*}"
  else
    run "$file" "$client" "$client"
  fi
  for pair in ${PRODSIM_KNOWN_REAL_ALSO:-}; do
    [[ ${pair%%=*} == "$client" ]] && run "$file" "$client" "${pair#*=}"
  done
done
exit $status
