#!/bin/sh
# bench/api/run.sh: allotd's API load benchmark with wrk on loopback.
#
#   bench/api/run.sh [--db URI] [ALLOTD] [SECONDS] [LAST_STEP]
#
# --db URI runs it all on that PostgreSQL database instead of a SQLite file
# (postgresql://...; its public schema is dropped before each fresh start,
# with psql: give it a database of its own; the tables' statistics are
# taken, ANALYZE, after step 1).
# ALLOTD defaults to build/allotd, SECONDS (per wrk run) to 10, LAST_STEP
# (1: step 1 alone; 3: only steps 1-3, the wrk runs) to 7;
# ALLOT_BENCH_OPTS, if set, is added to allotd's options (e.g.
# --read-max-age-ms 0 on PostgreSQL: every read from the database). It
# starts a real allotd on a free loopback port with a fresh database in a
# temporary directory (synchronous=FULL, rate limit off, 1,000 simulated nodes with
# 8 GPUs, 64 HTTP workers: one per client connection), then measures:
#   1. submissions: POST /api/v1/workloads/trainings with a bearer token,
#      64 keep-alive connections (each 202 is a durable row); allotd's CPU
#      per request, with the scheduler thread's and the writer's parts;
#   1b. the same submissions at a fixed rate, ALLOT_BENCH_RATE a second
#      (default 10,000) over 64 connections, each one's latency counted
#      from when it was due (allot-bench-openloop, built beside allotd:
#      an open loop, so a stall shows in every request due during it);
#   2. GET one workload, 64 connections;
#   3. GET /api/v1/workloads?limit=50, 64 connections;
#      (each with p50, p99, p99.9, the load average and the verdict on its
#      Targets row: met, NOT met, or indicative only when the load average
#      before the run was above 1.5; then how long the
#      scheduler thread held each lock a request can wait on, from
#      allot_sched_lock_hold_* in /metrics, and allotd's RSS);
#   4. restart with 50,000 workloads and 1,000 nodes: SIGTERM, start again,
#      time until /readyz answers 200 (the state is loaded and the first
#      scheduling cycle has completed);
#   5. allotd's RSS after that restart;
#   6. what-if: POST /api/v1/workloads/trainings?dryRun=true on that
#      cluster, then POST /api/v1/whatif deleting a running workload,
#      deleting a pending one, cutting the project's quota and draining
#      the running workload's node (always on a copy): 30 of each
#      in a row the default way (on the scheduler's kept state where it
#      can), then 10 of each after a restart with ALLOT_WHATIF_COPY=1 (a
#      copy of the model, full cycles): p50 and p99 of allotd's own time
#      and CPU time (the Server-Timing header) and of curl's time_total, which ways
#      answered, next to the scheduler's last cycle
#      (allot_sched_last_cycle_seconds);
#   7. one submission at a time on that cluster, 40 of them 0.1 s apart:
#      the scheduler thread's cycles meanwhile (each the core and writing
#      what moved), their count and mean duration from
#      allot_sched_cycle_duration_seconds; and the scheduler thread's CPU
#      per submission (/proc/PID/task/TID/schedstat), its whole turn:
#      the new rows read, the late agents' and the limits' checks, the
#      cycles.
# Steps 4-7 print their Targets rows' verdicts too (rows 6, 7, 11 and 2).
# ALLOT_BENCH_QUIET=SECONDS, if set, waits before each timed step until the
# 1-minute load average is at 1.0 or below (the steps before it load the
# machine), at most SECONDS, and says how long it waited: on a quiet
# machine every step then gives a result, not an indication.
# ALLOT_BENCH_NODES (default 1000) and ALLOT_BENCH_WORKLOADS (default 50000)
# size steps 4-7: the simulated nodes of 8 GPUs and the workloads submitted
# before step 4. Rows 6, 7 and 2 are defined at the defaults and get their
# verdicts only there; row 11's bound is 10 ms at 1,000 nodes and 50 ms at
# 4,000 (no verdict at other sizes).
# Everything runs on this machine; the temporary directory is removed.
set -eu
DB_URI=""
if [ "${1:-}" = --db ]; then
  DB_URI=$2
  shift 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
ALLOTD=$(realpath "${1:-$HERE/../../build/allotd}")
SECS=${2:-10}
LAST_STEP=${3:-7}
RATE=${ALLOT_BENCH_RATE:-10000}
NODES=${ALLOT_BENCH_NODES:-1000}
WORKLOADS=${ALLOT_BENCH_WORKLOADS:-50000}
DEFAULT_SIZE=$([ "$NODES" = 1000 ] && [ "$WORKLOADS" = 50000 ] && echo 1 || echo 0)
case $NODES in
  1000) WHATIF_BOUND=10 ;;
  4000) WHATIF_BOUND=50 ;;
  *) WHATIF_BOUND="" ;;
esac
OPENLOOP=$(dirname "$ALLOTD")/allot-bench-openloop
T=$(mktemp -d /tmp/allot-bench-XXXXXX)
PID=""
export ALLOT_ADMIN_PASSWORD=bench-admin-password

cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; fi
  cp "$T/log" /tmp/allotd-bench.log 2>/dev/null; rm -rf "$T"
}
trap cleanup EXIT INT TERM

command -v wrk >/dev/null || { echo "wrk is missing (apt-get install wrk)" >&2; exit 2; }
[ -x "$OPENLOOP" ] || { echo "$OPENLOOP is missing (it is built beside allotd)" >&2; exit 2; }

DB=${DB_URI:-$T/bench.db}

# fresh: no database (SQLite: no file; PostgreSQL: an empty public schema)
fresh() {
  if [ -n "$DB_URI" ]; then
    psql -d "$DB_URI" -X -q -v ON_ERROR_STOP=1 \
      -c 'DROP SCHEMA public CASCADE' -c 'CREATE SCHEMA public' 2>/dev/null
  fi
  rm -f "$T"/bench.db* "$T/made"
}

start() {
  rm -f "$T/port"
  [ -e "$T/made" ] || (cd "$T" && "$ALLOTD" --init --db "$DB" >>"$T/log" 2>&1) ||
    { cat "$T/log" >&2; exit 1; }
  : >"$T/made"
  (cd "$T" && exec "$ALLOTD" --db "$DB" --listen 127.0.0.1:0 --port-file "$T/port" \
      --rate-limit 0 --max-pending-per-project 0 --max-pending-per-user 0 \
      --simulate-nodes "${NODES}x8" --threads 64 ${ALLOT_BENCH_OPTS:-} >>"$T/log" 2>&1) &
  PID=$!
  while [ ! -s "$T/port" ]; do
    kill -0 "$PID" 2>/dev/null || { cat "$T/log" >&2; exit 1; }
    sleep 0.01
  done
  URL="http://127.0.0.1:$(cat "$T/port")"
}

stop() {
  kill -TERM "$PID"
  wait "$PID" || true
  PID=""
}

rss_mb() {
  awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$PID/status"
}

token() {
  curl -s -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
    -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
    jq -r .accessToken
}

# fresh_start: allotd on a fresh database, with the admin's TOKEN and the
# project bench (ALLOT_PROJECT), both exported for the Lua scripts.
fresh_start() {
  fresh
  start
  TOKEN=$(token)
  export ALLOT_TOKEN="$TOKEN"
  ALLOT_PROJECT=$(curl -s -X POST "$URL/api/v1/org-unit/projects" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    -d '{"name":"bench","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":4000}}]}' |
    jq -r .id)
  export ALLOT_PROJECT
}

count() {
  curl -s "$URL/api/v1/workloads/count" -H "Authorization: Bearer $TOKEN" | jq .count
}

# allotd's CPU time so far (user + system, clock ticks, /proc/PID/stat)
ticks() {
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"
}

# The same for two of its threads (/proc/PID/task/*/stat, by name): the
# scheduler thread's, then the writer's, as "SCHED WRITER"
thread_ticks() {
  for t in /proc/"$PID"/task/*/stat; do cat "$t" 2>/dev/null || true; done |
    awk '{ name = $2; sub(/.*\) /, ""); c[name] += $12 + $13 }
         END { printf "%d %d\n", c["(allot-sched)"], c["(allot-writer)"] }'
}

# The scheduler thread's CPU time so far in nanoseconds (its schedstat's
# first field: finer than the clock ticks, for a step of 40 requests)
sched_ns() {
  for t in /proc/"$PID"/task/*; do
    if [ "$(cat "$t/comm" 2>/dev/null)" = allot-sched ]; then cut -d' ' -f1 "$t/schedstat"; fi
  done
}

# wrk's summary lines: requests/s and the latency percentiles (99.9%
# and the longest from pct.lua or submit.lua), then allotd's CPU per
# request over the run (its CPU ticks since $2 over wrk's request count)
# and, given thread_ticks() from the start as $3, the scheduler thread's
# and the writer's parts of it
summary() {
  grep -E 'Requests/sec|^ +(50|99|99\.9)%|Non-2xx|Socket errors' "$1" | sed 's/^ */  /'
  awk -v t0="$2" -v t1="$(ticks)" -v th0="${3:-}" -v th1="$(thread_ticks)" \
    -v hz="$(getconf CLK_TCK)" \
    '/requests in/ { n = $1 }
     END { if (n == 0) exit
           printf "  allotd CPU %.1f us per request", (t1 - t0) * 1e6 / hz / n
           if (th0 != "") {
             split(th0, a, " "); split(th1, b, " ")
             printf " (the scheduler thread %.1f us, the writer %.1f us)",
               (b[1] - a[1]) * 1e6 / hz / n, (b[2] - a[2]) * 1e6 / hz / n
           }
           printf "\n" }' "$1"
  echo "  load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# verdict FILE ROW WHAT MIN_RPS MAX_P99_MS LOAD: the Targets row's verdict
# (bench/README.md) on wrk's output FILE: met or NOT met, or indicative
# only when the 1-minute load average before the run, LOAD, was above 1.5
# (other work on the machine); MAX_P99_MS empty: no latency bound
verdict() {
  awk -v row="$2" -v what="$3" -v min="$4" -v maxp="$5" -v load="$6" '
    /Requests\/sec/ { rps = $2 }
    /^ +99%/ { v = $2; f = 1000; if (v ~ /us$/) f = 0.001; else if (v ~ /ms$/) f = 1
      sub(/[a-z]+$/, "", v); p99 = v * f }
    END { ok = rps >= min && (maxp == "" || p99 <= maxp + 0)
      if (load + 0 > 1.5) v = "indicative only, load average " load " before the run"
      else v = ok ? "met" : "NOT met"
      p = maxp == "" ? "" : sprintf(", p99 %.2f ms (<= %s)", p99, maxp)
      printf "  target %s: %s %.0f/s (>= %d)%s: %s\n", row, what, rps, min, p, v }' "$1"
}

# the 1-minute load average now
load1() {
  cut -d' ' -f1 /proc/loadavg
}

# quiet_wait: with ALLOT_BENCH_QUIET=SECONDS, until the 1-minute load
# average is 1.0 or below, at most SECONDS; says how long it waited
quiet_wait() {
  [ -n "${ALLOT_BENCH_QUIET:-}" ] || return 0
  QW=0
  while [ "$QW" -lt "$ALLOT_BENCH_QUIET" ] &&
    awk -v l="$(load1)" 'BEGIN { exit !(l > 1.0) }'; do
    sleep 5
    QW=$((QW + 5))
  done
  echo "  waited ${QW} s for the machine to be quiet: load average $(load1)"
}

# target ROW WHAT VALUE OP BOUND UNIT LOAD: the verdict on one Targets row
# (bench/README.md) for a figure that is not a wrk run's: VALUE OP BOUND
# (OP <= or <) met or NOT met, or indicative only when LOAD, the 1-minute
# load average before the step, was above 1.5
target() {
  awk -v row="$1" -v what="$2" -v val="$3" -v op="$4" -v bound="$5" -v unit="$6" -v load="$7" '
    BEGIN { ok = op == "<" ? val + 0 < bound + 0 : val + 0 <= bound + 0
      if (val == "") v = "NOT measured"
      else if (load + 0 > 1.5) v = "indicative only, load average " load " before the run"
      else v = ok ? "met" : "NOT met"
      printf "  target %s: %s %s %s (%s %s %s): %s\n", row, what, val, unit, op, bound, unit, v }'
}

# the Targets rows of steps 1-3: on SQLite rows 4 and 5, on PostgreSQL row 12
if [ -n "$DB_URI" ]; then
  ROW_SUBMIT=12 SUBMIT_P99=10 ROW_READ=12 GET_MIN=30000
else
  ROW_SUBMIT=4 SUBMIT_P99=5 ROW_READ=5 GET_MIN=40000
fi

# the scheduler thread's lock holds so far (allot_sched_lock_hold_*):
# per lock, how many, how many over 1 ms, the longest, and (model, write)
# the most CPU time the holder ran in one hold
holds() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $TOKEN" | awk '
    /^allot_sched_lock_hold_seconds_count/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l); n[l] = $2 }
    /^allot_sched_lock_hold_seconds_bucket/ && /le="0.001"/ { l = $1; sub(/.*lock="/, "", l)
      sub(/".*/, "", l); le1[l] = $2 }
    /^allot_sched_lock_hold_max_seconds/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l); mx[l] = $2 }
    /^allot_sched_lock_hold_cpu_max_seconds/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l)
      cpu[l] = $2 }
    END { for (l in n) printf "  lock %-5s held %d times, %d over 1 ms, longest %.2f ms%s\n", l,
            n[l], n[l] - le1[l], mx[l] * 1000,
            l in cpu ? sprintf("; most CPU in one hold %.2f ms", cpu[l] * 1000) : "" }' | sort
}

fresh_start

echo "== $(sed -n 's/.*database [^(]*(\(.*\))$/\1/p' "$T/log" | head -n 1)"
echo "== 1. submissions, 64 connections, ${SECS}s (synchronous=FULL)"
quiet_wait
C0=$(ticks)
TH0=$(thread_ticks)
L0=$(load1)
ALLOT_BENCH_RUN=s wrk -t2 -c64 -d"${SECS}s" --latency -s "$HERE/submit.lua" "$URL" >"$T/w1"
summary "$T/w1" "$C0" "$TH0"
verdict "$T/w1" "$ROW_SUBMIT" submissions 10000 "$SUBMIT_P99" "$L0"
if [ "$LAST_STEP" -le 1 ]; then
  stop
  exit 0
fi

echo "== 1b. submissions at a fixed rate, ${RATE}/s over 64 connections, ${SECS}s (open loop)"
quiet_wait
C0=$(ticks)
L0=$(load1)
"$OPENLOOP" --port "${URL##*:}" --path /api/v1/workloads/trainings --method POST \
  --header "Authorization: Bearer $TOKEN" --header 'Content-Type: application/json' \
  --body "{\"name\":\"o-{n}\",\"projectId\":\"$ALLOT_PROJECT\",\"spec\":{\"image\":\"bench\",\"compute\":{\"gpuDevicesRequest\":1}}}" \
  --rate "$RATE" --connections 64 --duration "$SECS" --warmup "$([ "$SECS" -gt 2 ] && echo 1 || echo 0)" \
  >"$T/w1b" || true
cat "$T/w1b"
awk -v t0="$C0" -v t1="$(ticks)" -v hz="$(getconf CLK_TCK)" \
  '/answered/ { n = $0; sub(/ answered.*/, "", n); sub(/.*: /, "", n) }
   END { if (n > 0) printf "  allotd CPU %.1f us per request\n", (t1 - t0) * 1e6 / hz / n }' "$T/w1b"
echo "  load average $(cut -d' ' -f1-3 /proc/loadavg)"
target "$ROW_SUBMIT" "submissions at ${RATE}/s, p99 from due" \
  "$(sed -n 's/.* p99 \([0-9.]*\) ms,.*/\1/p' "$T/w1b")" "<=" "$SUBMIT_P99" ms "$L0"
ID=$(curl -s "$URL/api/v1/workloads?limit=1" -H "Authorization: Bearer $TOKEN" | jq -r '.workloads[0].id')
# PostgreSQL plans by the tables' statistics, which autovacuum first takes
# about a minute after the rows came (autovacuum_naptime); the database
# is seconds old here, so take them now, as it would
[ -z "$DB_URI" ] || psql -d "$DB_URI" -X -q -c ANALYZE

echo "== 2. GET one workload, 64 connections, ${SECS}s"
quiet_wait
C0=$(ticks)
L0=$(load1)
wrk -t2 -c64 -d"${SECS}s" --latency -s "$HERE/pct.lua" -H "Authorization: Bearer $TOKEN" \
  "$URL/api/v1/workloads/$ID" >"$T/w2"
summary "$T/w2" "$C0"
verdict "$T/w2" "$ROW_READ" "GET one workload" "$GET_MIN" "" "$L0"

echo "== 3. list of 50, 64 connections, ${SECS}s"
quiet_wait
C0=$(ticks)
L0=$(load1)
wrk -t2 -c64 -d"${SECS}s" --latency -s "$HERE/pct.lua" -H "Authorization: Bearer $TOKEN" \
  "$URL/api/v1/workloads?limit=50" >"$T/w3"
summary "$T/w3" "$C0"
verdict "$T/w3" "$ROW_READ" "list of 50" 10000 "" "$L0"
echo "== the scheduler thread's lock holds during steps 1-3"
holds
echo "== RSS after steps 1-3: $(rss_mb) MB"
if [ "$LAST_STEP" -le 3 ]; then
  stop
  exit 0
fi

stop

# steps 4 and 5 on a database of exactly $WORKLOADS workloads (50,000 unless set)
fresh_start
N=0
ROUND=0
while [ "$N" -lt "$WORKLOADS" ]; do
  ROUND=$((ROUND + 1))
  ALLOT_BENCH_RUN=f$ROUND ALLOT_BENCH_MAX=$(((WORKLOADS - N + 1) / 2)) \
    wrk -t2 -c64 -d3s -s "$HERE/submit.lua" "$URL" >/dev/null
  N=$(count)
done
sleep 2 # the scheduler places and records them
echo "== 4. restart with $N workloads and $NODES nodes"
quiet_wait
L0=$(load1)
stop
T0=$(date +%s%N)
start
until curl -sf -o /dev/null "$URL/readyz"; do sleep 0.005; done
T1=$(date +%s%N)
echo "  ready (state loaded, first cycle done) after $(((T1 - T0) / 1000000)) ms"
grep 'first cycle' "$T/log" | tail -n 1 | sed 's/^/  /' || true
[ "$DEFAULT_SIZE" = 0 ] || target 6 "restart with $N workloads, ready after" "$(((T1 - T0) / 1000000))" "<=" 1000 ms "$L0"
sleep 2
RSS=$(rss_mb)
echo "== 5. RSS with $N workloads and $NODES nodes: $RSS MB"
[ "$DEFAULT_SIZE" = 0 ] || target 7 "allotd's RSS with $N workloads" "$RSS" "<" 100 MB "$L0"
echo "== 6. dry-run submissions with $N workloads and $NODES nodes, 30 in a row, each way"
quiet_wait
L0=$(load1)
DRY="{\"name\":\"dry\",\"projectId\":\"$ALLOT_PROJECT\",\"spec\":{\"image\":\"x\",
  \"compute\":{\"gpuDevicesRequest\":1}}}"
# whatif_runs RUNS PATH BODY: curl's time_total and allotd's own (the
# Server-Timing header) of RUNS what-ifs in a row
whatif_runs() {
  for i in $(seq 1 "$1"); do
    curl -s -o /dev/null -D "$T/h" -w '%{http_code} %{time_total}' -X POST \
      "$URL$2" -H "Authorization: Bearer $TOKEN" \
      -H 'Content-Type: application/json' -d "$3"
    echo " $(tr -d '\r' <"$T/h" |
      sed -n 's/^Server-Timing: whatif;desc="\([a-z]*\)";dur=\([0-9.]*\), cpu;dur=\([0-9.]*\)$/\1 \2 \3/p')"
  done
}
# nearest-rank percentile P of the numbers on stdin
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { r = int((NR * p + 99) / 100); print v[r ? r : 1] }'; }
# "CODE TOTAL WAY MS CPU_MS" lines in $T/dry: p50 and p99 of allotd's times (wall and CPU) and
# curl's
dry_figures() {
  printf '  %s: allotd p50 %s ms, p99 %s ms (CPU p50 %s ms, p99 %s ms); curl p50 %s s, p99 %s s; ways: %s; not 200: %s\n' \
    "$1" "$(awk '{ print $4 }' "$T/dry" | pct 50)" "$(awk '{ print $4 }' "$T/dry" | pct 99)" \
    "$(awk '{ print $5 }' "$T/dry" | pct 50)" "$(awk '{ print $5 }' "$T/dry" | pct 99)" \
    "$(awk '{ print $2 }' "$T/dry" | pct 50)" "$(awk '{ print $2 }' "$T/dry" | pct 99)" \
    "$(awk '{ print $3 }' "$T/dry" | sort | uniq -c | tr -s ' ' | tr '\n' ',')" \
    "$(awk '$1 != 200' "$T/dry" | wc -l)"
}
ready() { until curl -sf -o /dev/null "$URL/readyz"; do sleep 0.01; done; }
# the first workload in PHASE
first_in() {
  curl -s "$URL/api/v1/workloads?filterBy=phase==$1&limit=1" -H "Authorization: Bearer $TOKEN" |
    jq -r '.workloads[0].id'
}
RUNNING=$(first_in Running)
PENDING=$(first_in Pending)
DEL_RUNNING="{\"changes\":[{\"type\":\"deleteWorkload\",\"workloadId\":\"$RUNNING\"}]}"
DEL_PENDING="{\"changes\":[{\"type\":\"deleteWorkload\",\"workloadId\":\"$PENDING\"}]}"
QUOTA="{\"changes\":[{\"type\":\"quota\",\"projectId\":\"$ALLOT_PROJECT\",
  \"resources\":[{\"nodePool\":{\"name\":\"default\"},\"gpu\":{\"deserved\":2000}}]}]}"
DRAIN_NODE=$(curl -s "$URL/api/v1/workloads/$RUNNING/pods" -H "Authorization: Bearer $TOKEN" |
  jq -r '.pods[0].nodeName')
DRAIN="{\"changes\":[{\"type\":\"drainNode\",\"nodeName\":\"$DRAIN_NODE\"}]}"
# whatif_one RUNS WAY WHAT PATH BODY: RUNS what-ifs of one kind, their
# figures, and (kept, at a size row 11 bounds) the row's verdict on the p99
whatif_one() {
  whatif_runs "$1" "$4" "$5" >"$T/dry"
  dry_figures "$2, $3"
  [ "$2" = copy ] || [ -z "$WHATIF_BOUND" ] || target 11 "$3 at $NODES nodes, allotd's p99" \
    "$(awk '{ print $4 }' "$T/dry" | pct 99)" "<=" "$WHATIF_BOUND" ms "$L0"
}
# whatif_all RUNS WAY: each kind of what-if RUNS times, its figures
whatif_all() {
  whatif_one "$1" "$2" "a dry run" "/api/v1/workloads/trainings?dryRun=true" "$DRY"
  whatif_one "$1" "$2" "a running workload deleted" /api/v1/whatif "$DEL_RUNNING"
  whatif_one "$1" "$2" "a pending workload deleted" /api/v1/whatif "$DEL_PENDING"
  whatif_one "$1" "$2" "the project's quota cut" /api/v1/whatif "$QUOTA"
  whatif_one "$1" "$2" "the node of that running workload drained" /api/v1/whatif "$DRAIN"
}
whatif_all 30 kept
curl -s "$URL/metrics" -H "Authorization: Bearer $TOKEN" |
  awk '$1 == "allot_sched_last_cycle_seconds" { printf "  last scheduling cycle: %.0f ms\n", $2 * 1000 }'
stop
export ALLOT_WHATIF_COPY=1
start
ready
whatif_all 10 copy
stop
unset ALLOT_WHATIF_COPY
start
ready
[ "$LAST_STEP" -ge 7 ] || { stop; exit 0; }
# the cycle duration histogram's sum and count, as "SUM COUNT"
cycles() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $TOKEN" | awk '
    $1 == "allot_sched_cycle_duration_seconds_sum" { s = $2 }
    $1 == "allot_sched_cycle_duration_seconds_count" { n = $2 } END { print s, n }'
}
echo "== 7. one submission at a time with $N workloads and $NODES nodes, 40 of them 0.1 s apart"
sleep 2
quiet_wait
L0=$(load1)
C0=$(cycles)
S0=$(sched_ns)
for i in $(seq 1 40); do
  curl -s -o /dev/null -X POST "$URL/api/v1/workloads/trainings" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' \
    -d "{\"name\":\"one-$i\",\"projectId\":\"$ALLOT_PROJECT\",\"spec\":{\"image\":\"x\",
      \"compute\":{\"gpuDevicesRequest\":1}}}"
  sleep 0.1
done
sleep 1
echo "$C0 $(cycles)" | awk '{ n = $4 - $2; if (n > 0) printf "%d %.2f\n", n, ($3 - $1) * 1000 / n }' \
  >"$T/turns"
read -r TURNS TURN_MS <"$T/turns" || TURN_MS=""
[ -z "$TURN_MS" ] || echo "  $TURNS cycles, mean $TURN_MS ms each (the cycle: the core and writing what moved)"
echo "$S0 $(sched_ns)" | awk '{ printf "%.3f\n", ($2 - $1) / 40 / 1e6 }' >"$T/turn_cpu"
echo "  the scheduler thread's CPU $(cat "$T/turn_cpu") ms a submission (its whole turn: the new" \
  "rows read, the late agents' and the limits' checks, the cycles)"

[ "$DEFAULT_SIZE" = 0 ] ||
  target 2 "the scheduler thread's whole turn after one submission, CPU" "$(cat "$T/turn_cpu")" \
    "<=" 1 ms "$L0"
stop
