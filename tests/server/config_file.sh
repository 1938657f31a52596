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
#   an empty listen address is refused (from the file and the command line);
#   db-statement-timeout-ms (PostgreSQL's) with a SQLite db is refused;
#   leader timings (a PostgreSQL --db's): refused with a SQLite --db, before
#     any database is made; with a PostgreSQL URI a renewal period not below
#     9/10 of the lease is refused, from the file and from the command line,
#     and one below it is accepted (allotd goes on to connect);
#   rendezvous-ports: FIRST-LAST, unprivileged, FIRST at most LAST; the
#     rest is refused (the range taking effect: tests/agent/e2e_distributed.sh).
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

printf 'threads = 4\nlisten =\n' >"$T/empty-listen.conf"
refused empty-listen.conf 'empty-listen.conf:2: bad option'
rc=0
"$allotd" --listen "" --version >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad option --listen" "$T/err" || fail "--listen '': exit $rc, $(cat "$T/err")"

printf 'db = %s/x.db\ndb-statement-timeout-ms = 5\n' "$T" >"$T/sqlite-timeout.conf"
rc=0
"$allotd" --config "$T/sqlite-timeout.conf" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "sqlite-timeout.conf: exit $rc, expected 2 ($(cat "$T/err"))"
grep -q 'applies to a PostgreSQL --db only' "$T/err" || fail "sqlite-timeout.conf: $(cat "$T/err")"
[ ! -e "$T/x.db" ] || fail "sqlite-timeout.conf: a database was made"

# leader_refused RENEW ARGS...: allotd --init with a PostgreSQL --db and
# ARGS exits 2 naming the renewal period RENEW, before it connects
PGDB=postgresql://127.0.0.1:1/none   # nothing listens: a start gets as far as connecting
leader_refused() {
  renew=$1
  shift
  rc=0
  "$allotd" --db "$PGDB" --init "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "$*: exit $rc, expected 2 ($(cat "$T/err"))"
  grep -q "leader-renew-ms $renew must be less than 9/10 of --leader-lease-ms" "$T/err" ||
    fail "leader timings $*: $(cat "$T/err")"
}
printf 'leader-lease-ms = 1000\nleader-renew-ms = 900\n' >"$T/leader.conf"
leader_refused 900 --config "$T/leader.conf"
leader_refused 1000 --leader-lease-ms 1000 --leader-renew-ms 1000
leader_refused 2700 --leader-renew-ms 2700          # the default lease, 3000
leader_refused 1000 --leader-lease-ms 1000          # the default renewal, 1000
printf 'leader-lease-ms = 1000\nleader-renew-ms = 899\nleader-ask-ms = 50\n' >"$T/leader-ok.conf"
rc=0
"$allotd" --db "$PGDB" --init --config "$T/leader-ok.conf" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] && ! grep -q "leader-\|bad option" "$T/err" && grep -qi "connect" "$T/err" ||
  fail "leader-ok.conf should pass the options and fail connecting: exit $rc, $(cat "$T/err")"
# on SQLite, each of the three is refused, from the file and the command line
for opt in "leader-lease-ms 5000" "leader-renew-ms 500" "leader-ask-ms 100"; do
  set -- $opt
  rc=0
  "$allotd" --db "$T/l.db" --init "--$1" "$2" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--$1 applies to a PostgreSQL --db only" "$T/err" ||
    fail "--$1 with SQLite: exit $rc, $(cat "$T/err")"
  printf '%s = %s\n' "$1" "$2" >"$T/leader-sqlite.conf"
  rc=0
  "$allotd" --db "$T/l.db" --init --config "$T/leader-sqlite.conf" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--$1 applies to a PostgreSQL --db only" "$T/err" ||
    fail "$1 in a file with SQLite: exit $rc, $(cat "$T/err")"
  [ ! -e "$T/l.db" ] || fail "--$1 with SQLite: a database was made"
done

for range in 30000-30000 1024-65535 20000-29999; do
  printf 'rendezvous-ports = %s\n' "$range" >"$T/rdv-ok.conf"
  accepted rdv-ok.conf
done
for range in 30000 30000- -30000 30001-30000 1023-2000 60000-65536 3x-40000 30000-4x \
             '30000 - 40000' 30000-+40000; do
  printf 'rendezvous-ports = %s\n' "$range" >"$T/rdv-bad.conf"
  refused rdv-bad.conf 'rdv-bad.conf:1: bad option'
done
rc=0
"$allotd" --rendezvous-ports 40000-30000 --version >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad option --rendezvous-ports" "$T/err" ||
  fail "--rendezvous-ports 40000-30000: exit $rc, $(cat "$T/err")"

printf 'threads = 1\n' >"$T/bad.conf"
refused bad.conf 'bad.conf:1: bad option'
echo "config_file: passed"
