# pg_lib.sh: a throwaway PostgreSQL 15 for tests, from Debian's packages
# (postgresql-15, which scripts/install-deps.sh installs). Sourced by the
# tests that need one:
#
#   pg_start   initdb into a new temporary folder, then start the server:
#              run as an unprivileged user (nobody when the test runs as
#              root: PostgreSQL refuses root), listening on a Unix socket in
#              that folder only (listen_addresses is empty: no network),
#              trust authentication on that socket, fsync and
#              synchronous_commit as shipped (on). Sets PG_URI (a libpq
#              connection URI for the database "allot"), PG_DIR, PG_DATA,
#              PG_SOCK.
#   pg_psql    psql on PG_URI, unaligned and quiet, stopping at the first
#              error.
#   pg_crash   stops the server as a power cut would (immediate: no
#              checkpoint, no clean shutdown); pg_restart starts it again
#              on the same folder.
#   pg_stop    stops the server and removes its folder; a trap calls it on
#              the way out, so no server outlives the test.
#
# A test that sources this exits 77 (skipped) when the PostgreSQL
# binaries are not installed; nothing else skips it.
#
# initdb takes 1-2 s and about a second of CPU, and a suite starts a
# server for each of some twenty tests: the first pg_start to run initdb
# keeps a copy of what it made (before any setting is added or the server
# starts) in PG_TEMPLATE, a folder of /tmp owned by the user that runs the
# tests, named after PG_BIN, and every later pg_start copies that instead
# (0.1 s). Remove the folder to have initdb run again.

PG_BIN=${ALLOT_PG_BIN:-/usr/lib/postgresql/15/bin}
PG_TEMPLATE=/tmp/allot-pg-template-$(id -u)-$(printf '%s' "$PG_BIN" | cksum | cut -d' ' -f1)
PG_DIR=""
PG_DATA=""
PG_SOCK=""
PG_URI=""
PG_AS=""

if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ] || [ ! -x "$PG_BIN/psql" ]; then
  echo "SKIP: no PostgreSQL 15 binaries in $PG_BIN (apt-get install postgresql-15)" >&2
  exit 77
fi

pg_fail() {
  echo "FAIL: $*" >&2
  if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/log" ]; then tail -n 20 "$PG_DIR/log" >&2; fi
  exit 1
}

# pg_ctl_run ARGS...: pg_ctl as the server's user.
pg_ctl_run() {
  $PG_AS "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DIR/log" "$@" >/dev/null
}

pg_restart() {
  pg_ctl_run -w -t $((60 * ${ALLOT_TEST_SCALE:-1})) start || pg_fail "PostgreSQL did not start"
}

pg_start() {
  PG_DIR=$(mktemp -d /tmp/allot-pg-XXXXXX)
  chmod 755 "$PG_DIR"
  PG_DATA="$PG_DIR/data"
  PG_SOCK="$PG_DIR/sock"
  mkdir "$PG_SOCK"
  if [ "$(id -u)" = 0 ]; then
    PG_AS="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
    chown nobody:nogroup "$PG_DIR" "$PG_SOCK"
  fi
  trap pg_stop EXIT
  if [ -O "$PG_TEMPLATE" ] && [ -f "$PG_TEMPLATE/data/PG_VERSION" ] &&
     cp -a "$PG_TEMPLATE/data" "$PG_DATA" 2>/dev/null; then
    :
  else
    rm -rf "$PG_DATA"
    pg_initdb
  fi
  cat >>"$PG_DATA/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$PG_SOCK'
unix_socket_permissions = 0777
CONF
  pg_restart
  PG_URI="postgresql:///allot?host=$PG_SOCK&user=allot"
  "$PG_BIN/createdb" -h "$PG_SOCK" -U allot allot || pg_fail "createdb failed"
  export PG_URI
}

# pg_initdb: a new data folder in PG_DATA, and a copy of it kept as
# PG_TEMPLATE unless another test kept one first.
pg_initdb() {
  # --no-sync: only initdb's own files are not flushed; the server fsyncs
  $PG_AS "$PG_BIN/initdb" -D "$PG_DATA" -U allot --auth=trust --encoding=UTF8 --locale=C \
    --no-sync >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; pg_fail "initdb failed"; }
  _new=$(mktemp -d "$PG_TEMPLATE.new-XXXXXX") || return 0
  if cp -a "$PG_DATA" "$_new/data" && mv -T "$_new" "$PG_TEMPLATE" 2>/dev/null; then
    return 0
  fi
  rm -rf "$_new"
}

pg_psql() {
  "$PG_BIN/psql" -d "$PG_URI" -X -q -A -t -v ON_ERROR_STOP=1 "$@"
}

pg_crash() {
  pg_ctl_run -m immediate -w stop || pg_fail "PostgreSQL did not stop"
}

pg_stop() {
  [ -n "$PG_DIR" ] || return 0
  if [ -f "$PG_DATA/postmaster.pid" ]; then
    pg_ctl_run -m fast -w stop || echo "pg_lib: PostgreSQL did not stop cleanly" >&2
  fi
  rm -rf "$PG_DIR"
  PG_DIR=""
}
