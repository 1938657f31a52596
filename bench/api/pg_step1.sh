#!/bin/bash
# pg_step1.sh SECONDS ALLOTD...: step 1 of run.sh alone (submissions, 64
# keep-alive connections, wrk) on a throwaway PostgreSQL 15
# (tests/pg/pg_lib.sh: a Unix socket, synchronous_commit and fsync on, with
# pg_stat_statements), once per ALLOTD given, in that order, each on a
# fresh schema: give the same binaries alternated (A B A B) to compare
# builds under the same load. Per run, one line: requests/s, p50, p99,
# p99.9, the CPU of allotd and of the PostgreSQL server's processes
# (/proc ticks, reaped backends included) per submission, the writer's
# commits and writes before and after (/metrics), and the 1-minute load
# average before the run. TOP=N adds the N statements that took the
# server the most time (pg_stat_statements over the run: calls, rows,
# milliseconds executing, milliseconds planning, the statement).
set -eu
SECS=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../tests/pg/pg_lib.sh"
pg_start
cat >>"$PG_DATA/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track_planning = on
CONF
pg_ctl_run -w restart
pg_psql -c 'CREATE SCHEMA ext' -c 'CREATE EXTENSION pg_stat_statements SCHEMA ext' >/dev/null
export ALLOT_ADMIN_PASSWORD=bench-admin-password
. "$HERE/pg_bench.sh"
writer() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $ALLOT_TOKEN" |
    awk '/^allot_db_(commits|writes)_total/ { printf "%s ", $2 }'
}

for BIN in "$@"; do
  BIN=$(realpath "$BIN")
  allotd_start "$BIN" 1000x8
  ALLOT_TOKEN=$(curl -s -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
    -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
    jq -r .accessToken)
  ALLOT_PROJECT=$(curl -s -X POST "$URL/api/v1/org-unit/projects" \
    -H "Authorization: Bearer $ALLOT_TOKEN" -H 'Content-Type: application/json' \
    -d '{"name":"bench","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4000}}]}' |
    jq -r .id)
  export ALLOT_TOKEN ALLOT_PROJECT
  sleep 1
  pg_psql -c 'SELECT ext.pg_stat_statements_reset()' >/dev/null
  M0=$(writer) A0=$(own_ticks) P0=$(pg_ticks) L0=$(cut -d' ' -f1 /proc/loadavg)
  ALLOT_BENCH_RUN=s wrk -t2 -c64 -d"${SECS}s" --latency -s "$HERE/submit.lua" "$URL" >"$T/w1"
  A1=$(own_ticks) P1=$(pg_ticks) M1=$(writer)
  N=$(awk '/requests in/ { print $1 }' "$T/w1")
  awk -v bin="$BIN" -v n="$N" -v a="$((A1 - A0))" -v p="$((P1 - P0))" -v hz="$HZ" \
    -v w="$M0-> $M1" -v load="$L0" '
    /Requests\/sec/ { rps = $2 }
    /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } /^ +99\.9%/ { p999 = $2 }
    /Non-2xx|Socket errors/ { bad = bad " " $0 }
    END { printf "%s: %.0f/s p50 %s p99 %s p99.9 %s; CPU per submission allotd %.1f us," \
            " PostgreSQL %.1f us; writer commits, writes %s; load %s%s\n", bin, rps, p50, p99,
            p999, a * 1e6 / hz / n, p * 1e6 / hz / n, w, load, bad }' "$T/w1"
  [ "${TOP:-0}" = 0 ] || pg_psql -F ' | ' -c "SELECT calls, rows, round(total_exec_time::numeric, 1), round(total_plan_time::numeric, 1),
    left(regexp_replace(query, '\s+', ' ', 'g'), 100) FROM ext.pg_stat_statements
    ORDER BY total_exec_time DESC LIMIT $TOP"
  kill -9 "$PID"
  wait "$PID" 2>/dev/null || true
  PID=""
  rm -rf "$T"
done
