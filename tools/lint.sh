#!/usr/bin/env bash
# The checked-in style rules, run: clang-format (.clang-format) over every
# C++ file in the repository, and clang-tidy (.clang-tidy, whose header
# filter covers every folder) over every non-test source the BUILD_DIR's
# compile_commands.json names (a clang build: tools/test.sh passes the asan
# preset's). Test sources are left to the compilers' -Werror: they add
# half the time and their headers are the product's, which tidy reads
# through the product's sources anyway. Exits 1 on any finding, naming it.
#
#   tools/lint.sh BUILD_DIR        both
#   tools/lint.sh --format-only    clang-format alone (no build needed)
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# tools/testdata holds code that breaks rules on purpose (the lints' canaries).
mapfile -t sources < <(git ls-files '*.cc' '*.h' ':!tools/testdata')
echo "lint: clang-format over ${#sources[@]} files"
if ! clang-format --dry-run -Werror "${sources[@]}" 2>/tmp/prodsim-format.$$; then
  unformatted=$(sed -nE 's/^([^ :]+):[0-9]+:[0-9]+: (error|warning): .*/\1/p' /tmp/prodsim-format.$$ \
    | sort -u)
  echo "$unformatted" | sed 's/$/: not as clang-format writes it/'
  echo "lint: $(wc -l <<<"$unformatted") file(s); clang-format -i FILE... rewrites them"
  status=1
fi
rm -f /tmp/prodsim-format.$$
[[ ${1:-} == --format-only ]] && exit $status

build=${1:?usage: tools/lint.sh BUILD_DIR | --format-only}
[[ -f $build/compile_commands.json ]] || { echo "lint: no $build/compile_commands.json"; exit 2; }
mapfile -t units < <(python3 - "$build/compile_commands.json" "$PWD" <<'EOF'
import json, sys
root = sys.argv[2] + "/"
for entry in json.load(open(sys.argv[1])):
    f = entry["file"]
    if f.startswith(root) and "/build/" not in f[len(root):] and not f.endswith("_test.cc"):
        print(f)
EOF
)
echo "lint: clang-tidy over ${#units[@]} sources"
out=$(printf '%s\n' "${units[@]}" | sort -u \
  | xargs -P "${PRODSIM_JOBS:-$(nproc)}" -n 4 clang-tidy -p "$build" --quiet 2>/dev/null || true)
findings=$(grep -E ': (warning|error): ' <<<"$out" | sort -u || true)
if [[ -n $findings ]]; then
  echo "$findings" | sed "s#$PWD/##"
  echo "lint: $(wc -l <<<"$findings") clang-tidy finding(s)"
  status=1
fi
exit $status
