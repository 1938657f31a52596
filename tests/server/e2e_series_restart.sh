#!/bin/sh
# e2e_series_restart.sh: the metrics series across restarts of allotd (a
# real file, or a PostgreSQL database with ALLOT_TEST_DB=pg), sampling every
# 100 ms on simulated machines:
#   1. two trainings run, one on each of two machines; allotd stops with
#      their series written;
#   2. a restart writes only what changed: the series in force are not
#      written again (they were, every one, at each start);
#   3. a workload deleted after the last sample before a stop: the next
#      start ends its series (its allocation, its device's) with a 0,
#      where they kept their last value for good.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

DB="$T/series.db"
sql() { # SQL: its one value, from the test's database
  if [ -n "${PG_URI:-}" ]; then
    "$PG_BIN/psql" -d "$(pg_db_uri "$DB")" -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"
  else
    sqlite3 "$DB" "$1"
  fi
}
# latest KIND ENTITY METRIC [LABEL]: the value of the series' latest point,
# in thousandths (an integer whichever store prints it)
latest() {
  sql "SELECT CAST(round(value * 1000) AS INTEGER) FROM series WHERE kind = $1 AND entity LIKE '$2' AND metric = '$3'
    AND label = '${4:-}' ORDER BY ts DESC LIMIT 1"
}
# is KIND ENTITY METRIC LABEL VALUE: that series' latest point is VALUE
# (thousandths)
is() { [ "$(latest "$1" "$2" "$3" "$4")" = "$5" ]; }

# ---- 1. two trainings, one on each machine ----
start_admin --db "$DB" --sample-period-ms 100 --simulate-nodes 2x1
P=$(quota_project team-a 2 "$ADMIN")
run_trainings "$P" t1 t2
both() { [ "$(sql "SELECT count(DISTINCT entity) FROM series WHERE kind = 2
  AND metric = 'GPU_ALLOCATION_PER_GPU' AND value > 0")" = 2 ]; }
poll 20 both || fail "the two machines' devices were not both written allocated"
stop
SECOND=$(sql "SELECT max(entity) FROM series WHERE kind = 2")
is 2 "$SECOND" GPU_ALLOCATION_PER_GPU 0 1000 || fail "$SECOND's device not written allocated"

# ---- 2. a restart writes what changed, not every series again ----
# A third training that cannot be placed changes the workloads' count,
# which the first sample after the start that saw it writes: once it is
# there, the samples of the start have been written.
LAST=$(sql "SELECT max(ts) FROM series")
SERIES=$(sql "SELECT count(*) FROM (SELECT DISTINCT kind, entity, metric, label FROM series
  WHERE metric <> 'SAMPLE_WRITTEN') AS s")
[ "$SERIES" -ge 12 ] || fail "only $SERIES series written"
start_admin --db "$DB" --sample-period-ms 100 --simulate-nodes 2x1
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"t3\",\"projectId\":\"$P\",
  \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":2}}}" "$ADMIN" >/dev/null
poll 20 is 0 % WORKLOADS_COUNT "" 3000 || fail "no sample with the third training written"
stop
# the points since: the count and how long pending work waits, nothing else
SINCE=$(sql "SELECT kind || ' ' || entity || ' ' || metric || ' ' || label FROM series
  WHERE ts > $LAST AND metric NOT IN ('SAMPLE_WRITTEN', 'WORKLOADS_COUNT', 'AVG_WORKLOAD_WAIT_TIME')")
[ -z "$SINCE" ] || fail "a restart wrote series in force again ($SERIES in all): $SINCE"
is 2 "$SECOND" GPU_ALLOCATION_PER_GPU 0 1000 || fail "$SECOND's device not allocated after a restart"

# ---- 3. a workload deleted after the last sample before a stop ----
# A start with a sample period of an hour takes its one sample at its
# first cycle: t2 deleted after it leaves its series in force as stored
# (its allocation, its device's), and the next start must end them.
# in_force KIND METRIC: the latest values of those series, in thousandths, sorted
in_force() {
  sql "SELECT CAST(round(s.value * 1000) AS INTEGER) FROM series s WHERE s.kind = $1
    AND s.metric = '$2' AND s.ts = (SELECT max(p.ts) FROM series p WHERE p.kind = s.kind
    AND p.entity = s.entity AND p.metric = s.metric AND p.label = s.label) ORDER BY 1" | tr '\n' ' '
}
[ "$(in_force 3 GPU_ALLOCATION)" = "1000 1000 " ] || fail "allocations: $(in_force 3 GPU_ALLOCATION)"
start_admin --db "$DB" --sample-period-ms 3600000 --simulate-nodes 2x1
T2=$(workload_id "$ADMIN" t2)
expect 202 DELETE "/api/v1/workloads/trainings/$T2" "" "$ADMIN" >/dev/null
poll 20 has_phase "$ADMIN" t2 null || fail "t2 was not deleted (is $(phase "$ADMIN" t2))"
stop
[ "$(in_force 3 GPU_ALLOCATION)" = "1000 1000 " ] || fail "t2's end written before the restart"
start --db "$DB" --sample-period-ms 100 --simulate-nodes 2x1
ended() {
  [ "$(in_force 3 GPU_ALLOCATION)" = "0 1000 " ] && [ "$(in_force 2 GPU_ALLOCATION_PER_GPU)" = "0 1000 " ]
}
poll 20 ended || fail "t2's series did not end after the restart: allocations $(in_force 3 \
  GPU_ALLOCATION), devices $(in_force 2 GPU_ALLOCATION_PER_GPU)"
stop
