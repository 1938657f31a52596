#!/bin/sh
# examples.sh ALLOTD SOURCE-DIR: the command examples of README.md and
# docs/*.md run, as written, against a real allotd --demo, so that they
# stay true.
#
# Every fenced block tagged sh (```sh) is an example, so a new one is
# covered without anyone listing it. A block that cannot run here (it
# needs root, Docker, a GPU machine, or builds the project) says so on the
# line just before its fence, and is counted, not run:
#     <!-- not run: needs root -->
# Each file's blocks run in order in one bash (set -e, pipefail), so
# variables carry from block to block, in a fresh directory with build/,
# tests/, web/ and scripts/ of this tree, a HOME of its own (whose .curlrc
# makes curl fail on an HTTP error), build/ on PATH, and a fresh
# allotd --demo of this test's own: a line that starts ./build/allotd
# --demo stands for it, and 127.0.0.1:8080 means its port. PASSWORD is
# admin's password, NEW_PASSWORD a new one. The test fails when a block
# fails (naming the file and line), when a marker stands before no
# block, or when no block ran.
#
# docs_flags_exist: every option written in backquotes in docs/allotd.md
# and docs/ha.md (`--logs-dir`) is one that allotd --help, allot-agent
# --help or allot login --help names, so the server's docs promise no
# flag that does not exist.
ALLOTD=$1
SRC=$(cd "$2" && pwd)
BUILD=$(cd "$(dirname "$ALLOTD")" && pwd)
. "$(dirname "$0")/../server/lib.sh"

export PASSWORD=$ALLOT_ADMIN_PASSWORD NEW_PASSWORD=docs-new-password-1

# docs_flags_exist
{ "$ALLOTD" --help; "$BUILD/allot-agent" --help; "$BUILD/allot" login --help; } >"$T/help" 2>&1
for f in "$SRC/docs/allotd.md" "$SRC/docs/ha.md"; do
  for fl in $(grep -o '`[^`]*`' "$f" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -qF -- "$fl" "$T/help" || fail "${f#"$SRC"/} names $fl, which no allot program takes"
  done
done
RAN=0 SKIPPED=0

# extract FILE PORT: prints the bash script of FILE's examples; counts in
# $T/counts ("ran skipped"); a stray marker is an error line on stderr.
extract() {
  awk -v F="${1#"$SRC"/}" -v PORT="$2" -v COUNTS="$T/counts" '
    function flush_marker() { if (marker != "") { print F ":" mline ": a not-run marker before no sh block" > "/dev/stderr"; bad = 1 } marker = "" }
    BEGIN {
      ran = 0; skipped = 0; inb = 0; marker = ""
      print "set -e -o pipefail"
      print "trap '"'"'rc=$?; [ $rc = 0 ] || echo \"FAIL: the example at $AT exited $rc\" >&2'"'"' EXIT"
    }
    inb && /^```/ { inb = 0; next }
    inb {
      line = $0
      if (!skip) {
        if (line ~ /^\.\/build\/allotd --demo( |&|$)/) line = "# this test'"'"'s allotd --demo stands for: " line
        gsub(/127\.0\.0\.1:8080/, "127.0.0.1:" PORT, line)
        print line
      }
      next
    }
    /^<!-- not run: .* -->$/ { flush_marker(); marker = $0; mline = NR; next }
    /^```(sh|bash|shell)[ \t]*$/ {
      inb = 1
      skip = marker != ""
      if (skip) { skipped++; print "# " F ":" NR ": " marker } else {
        ran++
        print "AT=" F ":" NR
      }
      marker = ""
      next
    }
    /^[ \t]*$/ { next }
    { flush_marker() }
    END { flush_marker(); print ran " " skipped > COUNTS; exit bad }
  ' "$1"
}

for f in "$SRC/README.md" "$SRC"/docs/*.md; do
  start --demo
  D="$T/run"
  rm -rf "$D"
  mkdir -p "$D/home"
  for x in build tests web scripts; do ln -s "$SRC/$x" "$D/$x"; done
  rm "$D/build"
  ln -s "$BUILD" "$D/build"
  echo "fail-with-body" >"$D/home/.curlrc"
  extract "$f" "$(cat "$T/port")" >"$T/script.sh" || fail "$f: a marker stands before no block"
  read -r r s <"$T/counts"
  RAN=$((RAN + r)) SKIPPED=$((SKIPPED + s))
  rc=0
  (cd "$D" && env -u ALLOT_CONFIG HOME="$D/home" PATH="$BUILD:$PATH" \
    timeout $((120 * SCALE)) bash "$T/script.sh" </dev/null >"$T/example.log" 2>&1) || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 40 "$T/example.log" >&2
    fail "an example of ${f#"$SRC"/} failed: $(grep '^FAIL: ' "$T/example.log" || echo "exit $rc")"
  fi
  echo "# ${f#"$SRC"/}: $r run, $s not run"
  stop
done
[ "$RAN" -gt 0 ] || fail "no example ran"
echo "ok: $RAN examples ran, $SKIPPED marked not run"
