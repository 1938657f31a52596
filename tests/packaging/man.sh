#!/bin/sh
# man.sh SOURCE_DIR BUILD_DIR: the man pages format without a warning from
# groff, and document what the programs accept: every long option of
# `allotd --help` and `allot-agent --help` is in allotd(8) and
# allot-agent(8), every command of `allot --help` in allot(1).
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
temp_dir man
command -v groff >/dev/null 2>&1 || fail "groff not found (scripts/install-deps.sh installs groff-base)"

for page in allotd.8 allot-agent.8 allot.1; do
  out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$SRC/man/$page" 2>&1) || fail "groff $page: $out"
  [ -z "$out" ] || fail "groff warns about $page: $out"
done
# words PAGE: the page as plain text, one word per line ("\-" as "-").
words() { sed 's/\\-/-/g; s/\\f[BIRP]//g' "$SRC/man/$1" | tr -s ' \t|[](),' '[\n*]'; }
for prog in allotd allot-agent; do
  words "$prog.8" >"$T/$prog.words"
  for opt in $("$BUILD/$prog" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    grep -qxF -- "$opt" "$T/$prog.words" || fail "$prog(8) does not document $opt"
  done
done
words allot.1 >"$T/allot.words"
for cmd in $("$BUILD/allot" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
  grep -qxF -- "$cmd" "$T/allot.words" || fail "allot(1) does not document allot $cmd"
done
echo "ok: man pages"
