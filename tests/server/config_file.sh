#!/bin/sh
# config_file.sh ALLOTD: allotd's --config file, read as a whole line at a
# time. `allotd --config FILE --version` reads the file, then prints the
# version: exit 0 when the file is accepted, 2 when it is refused.
#
#   a comment longer than any line buffer stays a comment (its tail,
#     "threads = 1", an out-of-range value, is not read as an option);
#   a long option line is read whole (a db path past 1023 bytes is
#     refused as too long, not cut);
#   a NUL byte in a line is refused, not read up to the NUL;
#   db-statement-timeout-ms (PostgreSQL's) with a SQLite db is refused.
set -eu
allotd=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/allot-config-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
x1100=$(printf '%01100d' 0 | tr 0 x)

# accepted FILE: the file is accepted
accepted() {
  "$allotd" --config "$T/$1" --version >"$T/out" 2>"$T/err" || fail "$1 refused: $(cat "$T/err")"
  grep -q '^allotd ' "$T/out" || fail "$1: no version: $(cat "$T/out")"
}
# refused FILE PATTERN: exit 2 and an error matching PATTERN
refused() {
  rc=0
  "$allotd" --config "$T/$1" --version >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2 ($(cat "$T/err"))"
  grep -q "$2" "$T/err" || fail "$1: expected '$2', got: $(cat "$T/err")"
}

printf 'listen = 127.0.0.1:0\n# %s threads = 1\nthreads = 4\n' "$x1100" >"$T/long-comment.conf"
accepted long-comment.conf

printf 'threads = 4\ndb = /%s\n' "$x1100" >"$T/long-value.conf"
refused long-value.conf 'long-value.conf:2: bad option'

printf 'threads = 4\nlisten = 127.0.0.1:0\0 threads = 1\n' >"$T/nul.conf"
refused nul.conf 'nul.conf:2: a NUL byte'

printf 'db = %s/x.db\ndb-statement-timeout-ms = 5\n' "$T" >"$T/sqlite-timeout.conf"
rc=0
"$allotd" --config "$T/sqlite-timeout.conf" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "sqlite-timeout.conf: exit $rc, expected 2 ($(cat "$T/err"))"
grep -q 'applies to a PostgreSQL --db only' "$T/err" || fail "sqlite-timeout.conf: $(cat "$T/err")"
[ ! -e "$T/x.db" ] || fail "sqlite-timeout.conf: a database was made"

printf 'threads = 1\n' >"$T/bad.conf"
refused bad.conf 'bad.conf:1: bad option'
echo "config_file: passed"
