#!/usr/bin/env bash
# Writes fuzz/dict/scenario_fuzzer.dict: one entry per fault kind, the bytes
# that kind's fault takes in scenario_fuzzer's input (scenarios/decode.h),
# so libFuzzer can insert a whole fault in one mutation. Each entry is cut
# from `prodsim encode` of the default base with and without one fault.
#   fuzz/dict/make_scenario_fuzzer_dict.sh PRODSIM > fuzz/dict/scenario_fuzzer.dict
set -euo pipefail
prodsim=${1:?usage: $0 PATH/TO/prodsim}
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$root/bench/scenarios/report-config-steady.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

hex() { od -An -v -tx1 "$1" | tr -s ' \n' '\n' | grep .; }
"$prodsim" encode "$base" -o "$tmp/none" >/dev/null
mapfile -t none < <(hex "$tmp/none")
echo "# libFuzzer dictionary for scenario_fuzzer: one fault of each kind, as"
echo "# scenario_fuzzer's input encodes it. Made by make_scenario_fuzzer_dict.sh."
fault() {  # kind, extra TOML lines
  { cat "$base"; printf '\n[[faults]]\nkind = "%s"\nat = "100ms"\nbroker = 1\n%s\n' "$1" "$2"; } \
      > "$tmp/$1.toml"
  "$prodsim" encode "$tmp/$1.toml" -o "$tmp/$1" >/dev/null
  mapfile -t one < <(hex "$tmp/$1")
  # The fault count is the first byte that differs; the fault follows it.
  local i=0
  while [[ ${none[i]} == "${one[i]}" ]]; do i=$((i + 1)); done
  local n=$(( ${#one[@]} - ${#none[@]} )) entry=""
  for b in "${one[@]:i+1:n}"; do entry+="\\x$b"; done
  printf '%s="%s"\n' "$1" "$entry"
}
fault reset ""
fault partition 'duration = "100ms"'
fault crash 'duration = "100ms"'
fault move_leader ""
fault lose_response $'api = "produce"\ncount = 1'
fault inject_error 'error = "NOT_LEADER_OR_FOLLOWER"'
fault delay_processing $'duration = "100ms"\nextra = "50ms"'
fault latency_spike $'duration = "100ms"\nextra = "50ms"'
fault pause_fetching 'duration = "100ms"'
fault shrink_isr $'duration = "100ms"\ntopic = "t"\npartition = 1'
fault stall_response $'api = "produce"\ncount = 1\nextra = "31s"'
# The wedge kinds: their count and fields come after the producer's
# settings (scenarios/decode.h), and the same cut finds them.
fault blackhole ""
fault connect_hang 'duration = "100ms"'
