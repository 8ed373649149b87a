#!/usr/bin/env bash
# determinism_lint.sh ROOT: fails when the simulation's code could make a run
# depend on something other than its scenario (DESIGN.md, determinism rules):
# a wall clock, an unseeded or library-defined random source, or a hash
# container (whose iteration order is seeded per process in Abseil). It also
# rejects the two co_await forms that g++ 12 miscompiles (sim/core/task.h):
# a braced temporary as an argument inside a co_await expression, a lambda
# with captures written inside a co_await expression, a ?: between two
# co_awaits, and a co_await that is itself an if or while condition.
#
# Scans ROOT/{sim,producer,fault_models,checks,scenarios}. A line may be
# exempted with a trailing comment "determinism-lint: allow (<why>)", for a
# hash container used for lookups only, say. Prints one line per finding,
# file:line: rule: text, and exits 1 if there is any, 2 on bad usage.
set -uo pipefail
root=${1:?usage: determinism_lint.sh ROOT}
[[ -d $root ]] || { echo "determinism_lint: no such directory: $root" >&2; exit 2; }

rules=(
  'wall-clock|std::chrono::[a-z_]*clock|absl::Now\(|absl::GetCurrentTimeNanos|gettimeofday|clock_gettime|[^a-z_]time\((nullptr|NULL|0)\)'
  'libc-random|(^|[^a-zA-Z_:.])s?rand\(|random_device'
  'library-prng|absl::(Insecure)?BitGen|std::mt19937|std::minstd_rand|default_random_engine|std::ranlux'
  'std-distribution|std::[a-z_]+_distribution'
  'hash-container|unordered_(map|set|multimap|multiset)|(flat|node)_hash_(map|set)'
  'coawait-braced-temporary|co_await[^;]*[(,][[:space:]]*[A-Za-z_][A-Za-z0-9_:]*\{|\?[[:space:]]*co_await|co_await[^;]*\[[^]=&][^]]*\][[:space:]]*\(|(if|while)[[:space:]]*\(!?[[:space:]]*co_await'
)

found=0
dirs=()
for d in sim producer fault_models checks scenarios; do
  [[ -d $root/$d ]] && dirs+=("$root/$d")
done
((${#dirs[@]} > 0)) || { echo "determinism_lint: nothing to scan under $root" >&2; exit 2; }

for rule in "${rules[@]}"; do
  name=${rule%%|*}
  pattern=${rule#*|}
  while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    [[ $hit == *"determinism-lint: allow"* ]] && continue
    text=$(cut -d: -f3- <<<"$hit")
    [[ $text =~ ^[[:space:]]*// ]] && continue  # a comment, not code
    echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): $name: $(cut -d: -f3- <<<"$hit" | sed 's/^[[:space:]]*//')"
    found=1
  done < <(grep -rnE --include='*.h' --include='*.cc' --include='*.cpp' "$pattern" "${dirs[@]}")
done
exit $found
