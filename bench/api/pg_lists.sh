#!/bin/bash
# pg_lists.sh SECONDS ALLOTD...: lists of 50 workloads on a throwaway
# PostgreSQL 15 (tests/pg/pg_lib.sh), read by a researcher who may read one
# project of ten and by the administrator, 64 keep-alive connections (wrk),
# once per ALLOTD given, in that order, each on a fresh schema: give the same
# binaries alternated (A B A B) to compare builds under the same load. Per
# run and reader, one line: requests/s, p50, p99, p99.9, the CPU of allotd
# and of the PostgreSQL server's processes (/proc ticks) per list, and the
# 1-minute load average before it. Each list is answered from what allotd
# keeps in memory (the default --read-max-age-ms); a researcher's list also
# needs the projects she may read.
set -eu
SECS=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../tests/pg/pg_lib.sh"
pg_start
export ALLOT_ADMIN_PASSWORD=bench-admin-password
. "$HERE/pg_bench.sh"
call() { # METHOD PATH BODY TOKEN
  curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $4" -H 'Content-Type: application/json' \
    ${3:+-d "$3"}
}
token() { # USER PASSWORD
  curl -sf -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
    -d "{\"grantType\":\"password\",\"username\":\"$1\",\"password\":\"$2\"}" | jq -r .accessToken
}
# READER TOKEN: one wrk run of lists of 50, its line
lists() {
  local a0 p0 l0 n
  a0=$(own_ticks) p0=$(pg_ticks) l0=$(cut -d' ' -f1 /proc/loadavg)
  wrk -t2 -c64 -d"${SECS}s" --latency -s "$HERE/pct.lua" -H "Authorization: Bearer $2" \
    "$URL/api/v1/workloads?limit=50" >"$T/w"
  n=$(awk '/requests in/ { print $1 }' "$T/w")
  awk -v bin="$BIN" -v who="$1" -v n="$n" -v a="$(($(own_ticks) - a0))" \
    -v p="$(($(pg_ticks) - p0))" -v hz="$HZ" -v load="$l0" '
    /Requests\/sec/ { rps = $2 }
    /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } /99\.9%:/ { p999 = $2 }
    /Non-2xx|Socket errors/ { bad = bad " " $0 }
    END { printf "%s, %s: %.0f/s p50 %s p99 %s p99.9 %s; CPU per list allotd %.1f us," \
            " PostgreSQL %.1f us; load %s%s\n", bin, who, rps, p50, p99, p999,
            a * 1e6 / hz / n, p * 1e6 / hz / n, load, bad }' "$T/w"
}

for BIN in "$@"; do
  BIN=$(realpath "$BIN")
  allotd_start "$BIN" 100x8
  ADMIN=$(token admin "$ALLOT_ADMIN_PASSWORD")
  for i in 0 1 2 3 4 5 6 7 8 9; do
    P=$(call POST /api/v1/org-unit/projects "{\"name\":\"p$i\",
      \"resources\":[{\"nodePool\":{\"name\":\"default\"},\"gpu\":{\"deserved\":8}}]}" "$ADMIN" |
      jq -r .id)
    [ "$i" = 0 ] && P0=$P
    for k in $(seq 1 60); do
      call POST /api/v1/workloads/trainings "{\"name\":\"w$i-$k\",\"projectId\":\"$P\",
        \"spec\":{\"image\":\"x\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
    done
  done
  PW=$(call POST /api/v1/users '{"email":"reader@example.com"}' "$ADMIN" | jq -r .tempPassword)
  call POST /api/v1/authorization/access-rules "{\"subjectId\":\"reader@example.com\",
    \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$P0\"}" \
    "$ADMIN" >/dev/null
  READER=$(token reader@example.com "$PW")
  sleep 1
  lists researcher "$READER"
  lists admin "$ADMIN"
  kill -9 "$PID"
  wait "$PID" 2>/dev/null || true
  PID=""
  rm -rf "$T"
done
