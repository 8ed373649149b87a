#!/bin/bash
# README.md is the front door: what it shows must work. Checks:
# 1. every relative link in README.md, docs/**/*.md and scenarios/known/README.md
#    names a file that exists; a #anchor into Markdown names a heading there;
# 2. a #LN anchor into a source file names a line that exists, and when the
#    link is followed by a `Name` in backquotes, that line mentions Name's
#    last part (so "producer/broker.cc:431 `ResponseReceiver`" fails once
#    the function moves);
# 3. every `prodsim SUB` in README.md's code blocks parses: `PRODSIM SUB --help`
#    exits 0.
# usage: readme_test.sh PRODSIM SOURCE_DIR
set -euo pipefail
prodsim=$1
cd "$2"
bad=0
fail() { echo "$*" >&2; bad=$((bad + 1)); }

# GitHub's anchor for each heading of a Markdown file, outside code blocks.
anchors() {
  awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ /, ""); print }' "$1" |
    tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

docs=$( (echo README.md; echo scenarios/known/README.md; find docs -name '*.md') | sort -u)
links=0
for md in $docs; do
  dir=$(dirname "$md")
  # Each link, with the backquoted name after it if there is one:
  # TARGET<tab>NAME.
  while IFS=$'\t' read -r target name; do
    links=$((links + 1))
    path=${target%%#*}
    anchor=
    [[ $target == *'#'* ]] && anchor=${target#*#}
    if [ -z "$path" ]; then file=$md; else file=$dir/$path; fi
    if [ ! -e "$file" ]; then fail "$md: link '$target': no such file"; continue; fi
    [ -n "$anchor" ] || continue
    if [[ $file == *.md ]]; then
      anchors "$file" | grep -qxF "$anchor" || fail "$md: link '$target': no heading '#$anchor' in $file"
    elif [[ $anchor =~ ^L([0-9]+)$ ]]; then
      n=${BASH_REMATCH[1]}
      line=$(sed -n "${n}p" "$file")
      if [ "$(wc -l <"$file")" -lt "$n" ]; then
        fail "$md: link '$target': $file has fewer than $n lines"
      elif [ -n "$name" ]; then
        last=${name##*::}; last=${last##*.}; last=${last##*>}
        [[ $line == *"$last"* ]] ||
          fail "$md: link '$target' says \`$name\`, but line $n is: $line"
      fi
    fi
  done < <(grep -oE '\]\([^)[:space:]]+\)( `[^`]+`)?' "$md" |
             sed -E 's/^\]\(([^)]*)\)( `([^`]+)`)?$/\1\t\3/' |
             grep -vE '^(https?|mailto):' || true)
done

# The subcommands README.md's code blocks run.
subs=$(awk '/^```/ { code = !code; next } code' README.md |
         grep -oE '(^|[ /])prodsim [a-z][a-z-]*' | awk '{ print $2 }' | sort -u)
[ -n "$subs" ] || fail "README.md: no prodsim command in a code block"
for sub in $subs; do
  if ! "$prodsim" "$sub" --help >/dev/null 2>&1; then
    fail "README.md shows 'prodsim $sub', but '$prodsim $sub --help' exits $?"
  fi
done

# Not a test that cannot fail: a wrong anchor must be caught.
anchors README.md | grep -qxF 'follow-one-finding' ||
  fail "README.md: the anchor function finds no 'Follow one finding' heading"

[ "$bad" = 0 ] || { echo "$bad problem(s)" >&2; exit 1; }
echo "$links links resolve; prodsim $(echo $subs | tr ' ' '/') --help exit 0"
