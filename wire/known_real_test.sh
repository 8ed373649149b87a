#!/usr/bin/env bash
# The real clients' findings as a regression run: each file under
# scenarios/known/real/ (CLIENT-VERSION-what.toml) replayed over the wire
# with its client, K trials at once; its [expect] signature (the finding's
# mechanism, its @client replaced by the client run) must come out in at
# least R of them, with a failing verdict. The verdict and check are not
# asserted, only printed: on a loaded machine the same mechanism can end
# under another verdict (the blackholed-connection file: liveness when the
# client's own close returns before the trial's bound, client-hung when load
# delays it past; both kept-dead-connection), and a wall-clock trial says
# what holds under load, not a replay. A file whose client is not built is skipped,
# and says so. Then the same files on another version where one is given:
# CLIENT=ALSO pairs in PRODSIM_KNOWN_REAL_ALSO ("kafkajs=kafkajs-fixes").
set -uo pipefail
prodsim=${1:?}; dir=${2:?}; trials=${3:-3}; needed=${4:-2}
status=0
run() {  # FILE FAMILY CLIENT
  local file=$1 family=$2 client=$3 verdict check signature want got
  verdict=$(sed -n '/^\[expect\]/,/^\[/{s/^verdict = "\(.*\)"/\1/p}' "$file")
  check=$(sed -n '/^\[expect\]/,/^\[/{s/^check = "\(.*\)"/\1/p}' "$file")
  signature=$(sed -n '/^\[expect\]/,/^\[/{s/^signature = "\(.*\)"/\1/p}' "$file")
  # A signature named after the client (@kafkajs) is the client run's.
  [[ ${signature#*@} == "$family" ]] && signature=${signature%@*}@${client%%@*}
  want="$verdict [$check] $signature"
  out=$("$prodsim" real "$file" --client="$client" --trials="$trials" --jobs="$trials" --bound=60s 2>&1)
  if grep -q "is not built\|was not found" <<<"$out"; then
    echo "skip $(basename "$file") on $client: $(grep -m1 'not' <<<"$out")"
    return
  fi
  got=$(grep -E -- "trial [0-9]+/[0-9]+: [a-z-]+ \[[a-z-]+\] " <<<"$out" | grep -cF -- "] $signature client=")
  exact=$(grep -cF -- ": $want client=" <<<"$out")
  if ((got >= needed)); then
    echo "ok   $(basename "$file") on $client: $signature in $got of $trials trials ($exact as '$want')"
  else
    echo "FAIL $(basename "$file") on $client: want $signature in $needed of $trials trials, got $got:"
    grep -E "trial [0-9]+/|distribution" <<<"$out"
    status=1
  fi
}
for file in "$dir"/*.toml; do
  name=$(basename "$file")
  client=${name%%-[0-9]*}
  run "$file" "$client" "$client"
  for pair in ${PRODSIM_KNOWN_REAL_ALSO:-}; do
    [[ ${pair%%=*} == "$client" ]] && run "$file" "$client" "${pair#*=}"
  done
done
exit $status
