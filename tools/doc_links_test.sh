#!/bin/bash
# Every relative link in the repository's Markdown files resolves to a file
# or folder inside the repository (links to the web are not followed).
# usage: doc_links_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
root=$(pwd -P)
bad=0
checked=0
while IFS= read -r md; do
  dir=$(dirname "$md")
  # [text](target) with a target that is not a URL or an in-page anchor.
  while IFS= read -r target; do
    path=${target%%#*}
    [ -n "$path" ] || continue
    checked=$((checked + 1))
    resolved=$(realpath -m "$dir/$path")
    case "$resolved" in
      "$root"/*) ;;
      *) echo "$md: link '$target' leaves the repository" >&2; bad=1; continue ;;
    esac
    if [ ! -e "$resolved" ]; then
      echo "$md: link '$target' does not resolve" >&2
      bad=1
    fi
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$md" | sed -E 's/^\]\((.*)\)$/\1/' |
             grep -vE '^(https?|mailto):|^#' || true)
done < <(git ls-files '*.md' 2>/dev/null || find . -name '*.md' -not -path './build/*')
[ $bad = 0 ] || exit 1
echo "$checked relative links resolve"
