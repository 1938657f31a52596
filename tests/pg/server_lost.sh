#!/bin/sh
# server_lost.sh: allotd on PostgreSQL while the server is lost and back.
# While PostgreSQL is down (stopped as a power cut would), a request that
# needs the database is a 503 naming it (a fresh token is not called
# invalid: 503, not 401) and /readyz is 503; allotd does not exit; once
# the server is back, the same requests and /readyz work again within
# 20 s, without a restart.
ALLOTD=$1
ALLOT_TEST_DB=pg
. "$(dirname "$0")/../server/lib.sh"

start --simulate-nodes 1x4
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
ready() { [ "$(req GET /readyz | tail -n 1)" = 200 ]; }
poll 20 ready || fail "/readyz is not 200 at start"

pg_crash
down_503() {
  out=$(req GET /api/v1/workloads "" "$ADMIN")
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 503 ] &&
    printf '%s\n' "$out" | grep -q "cannot be reached"
}
poll 20 down_503 || fail "no 503 naming the lost database: $(req GET /api/v1/workloads "" "$ADMIN")"
[ "$(req GET /readyz | tail -n 1)" = 503 ] || fail "/readyz is not 503 while the database is lost"
kill -0 "$PID" || fail "allotd exited while the database was lost"

pg_restart
up() { [ "$(req GET /api/v1/workloads "" "$ADMIN" | tail -n 1)" = 200 ]; }
poll 20 up || fail "requests did not work again once the database was back"
poll 20 ready || fail "/readyz did not come back"
echo "PASS: pg/server_lost"
