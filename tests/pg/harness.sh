#!/bin/sh
# harness.sh: the throwaway PostgreSQL of pg_lib.sh is what the tests need
# it to be: reachable through PG_URI on its Unix socket, run by an
# unprivileged user, not on the network, durable (a committed row survives
# a crash of the server), and gone after pg_stop.
set -eu
. "$(dirname "$0")/pg_lib.sh"

# alive PID: the process runs (a zombie left for a parent to reap does not).
alive() {
  st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  case $st in Z*) return 1 ;; esac
}

pg_start

[ "$(pg_psql -c 'SELECT 1')" = 1 ] || pg_fail "no answer on $PG_URI"

pid=$(head -n 1 "$PG_DATA/postmaster.pid")
user=$(ps -o user= -p "$pid")
[ "$user" != root ] || pg_fail "the server runs as root"
[ "$(id -u)" != 0 ] || [ "$user" = nobody ] || pg_fail "the server runs as $user, not nobody"

[ -z "$(pg_psql -c 'SHOW listen_addresses')" ] || pg_fail "the server listens on the network"
[ "$(pg_psql -c 'SHOW fsync')" = on ] || pg_fail "fsync is off"
[ "$(pg_psql -c 'SHOW synchronous_commit')" = on ] || pg_fail "synchronous_commit is off"
[ "$(pg_psql -c 'SHOW server_version_num' | cut -c1-2)" = 15 ] || pg_fail "not PostgreSQL 15"

pg_psql -c 'CREATE TABLE t (id bigint PRIMARY KEY, v text NOT NULL)'
pg_psql -c "INSERT INTO t VALUES (1, 'committed')"
pg_crash
! alive "$pid" || pg_fail "the postmaster outlived the crash"
pg_restart
[ "$(pg_psql -c 'SELECT v FROM t WHERE id = 1')" = committed ] ||
  pg_fail "a committed row was lost in a crash"

dir=$PG_DIR
pid=$(head -n 1 "$PG_DATA/postmaster.pid")
pg_stop
[ ! -e "$dir" ] || pg_fail "pg_stop left $dir"
! alive "$pid" || pg_fail "pg_stop left the server running"
echo "PASS: pg/harness"
