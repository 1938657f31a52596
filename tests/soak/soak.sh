#!/bin/sh
# soak.sh: one allotd under mixed load for a long time, and whether its
# resources stay flat. The full run takes 30 minutes and is no part of the
# default test command; run it by hand before a release:
#
#   tests/soak/soak.sh BUILD_DIR [SECONDS] [WARMUP_SECONDS]
#
# BUILD_DIR holds allotd and allot-agent (they are copied, so rebuilding
# meanwhile changes nothing); SECONDS defaults to 1800, the warm-up to 700
# (on a busy 2-core machine allotd's memory still grew 16 % between 300 s
# and the end of a 30-minute run, then 1.7 % from 659 s: it settles in the
# first ten minutes).
# The test suite runs it for 40 s (soak/short, tests/soak/CMakeLists.txt):
# the same load and checks, too short to show a slow leak, long enough to
# show one per request and to keep the script working.
#
# The load, all at once for the whole run:
#   - submissions: team-a submits preemptible trainings (priority class
#     train, 50) as fast as one client goes (it runs over its quota on idle
#     GPUs), team-b submits a training every second (reclaim takes team-a's
#     borrowed GPUs back), and every tenth team-a submission is a
#     higher-priority preemptible training (build-preemptible, 75): on a
#     full cluster, and team-a being over its fair share (so it cannot
#     reclaim), it preempts one of team-a's own trainings. (A
#     non-preemptible one would never run here: the default department
#     deserves no GPUs, and non-preemptible work runs only within deserved
#     quota at every level.)
#   - deletions: the oldest workloads are deleted in batches, so about 200
#     (SOAK_LIVE) stay live;
#   - reads: lists of 50 workloads, counts, nodes, metrics, one workload
#     and its events;
#   - agents: three allot-agent processes (2 GPUs each, commands run
#     directly) join and leave in turn, each staying one to two
#     thirtieths of the run (one to two minutes in 30; at least 3 s),
#     their pods running real processes; plus 8 simulated machines of 8
#     GPUs (SOAK_NODES=NxG), each project deserving half of them;
# Every 10 s (a twentieth of a shorter run, at least 1 s) it samples
# allotd's resident memory (VmRSS), its open file
# descriptors, the database's size on disk, its -wal file's size and the
# rows kept, into soak.csv. At the end it compares the first sample after the
# warm-up with the last: memory and descriptors are "flat" when they grew
# by less than 10 % (memory; SOAK_RSS_PCT sets another figure, "off"
# reports memory without judging it) or 8
# descriptors; the database keeps every
# workload and event as history (deleted workloads included), so it
# grows with the work done: reported as bytes per workload row, flat when
# that figure does not grow by more than 25 % (SOAK_DB_PCT sets another
# figure, "off" reports it without judging it). The -wal file is counted
# apart: its size is the most the log held since its last reset, which
# moves with readers and checkpoints and not with the rows kept, so it is
# held to a bound instead (SOAK_WAL_MB, default 128: twice the size at
# which allotd's checkpointer waits for readers to reset it). Exit status
# 0 when all four hold, 1 otherwise.
#
# It prints what the load did: submissions, deletions, preemptions and
# reclaims (allotd's allot_evictions_total), agents joined and left. With
# SOAK_NEED_EVICTIONS=1 (the default; soak/short sets 0: 30 s on a busy
# machine may see neither) a run without a preemption or without a
# reclaim fails: that part of the load was not exercised.
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_RUN=${2:-1800}
WARMUP=${3:-700}
RSS_PCT=${SOAK_RSS_PCT:-10}
DB_PCT=${SOAK_DB_PCT:-25}
WAL_MB=${SOAK_WAL_MB:-128}
LIVE=${SOAK_LIVE:-200}
NODES=${SOAK_NODES:-8x8}
NEED_EVICTIONS=${SOAK_NEED_EVICTIONS:-1}
HALF=$(( ${NODES%x*} * ${NODES#*x} / 2 ))
STAY=$((SECONDS_RUN / 30 > 3 ? SECONDS_RUN / 30 : 3))
EVERY=$((SECONDS_RUN / 20 < 10 ? (SECONDS_RUN / 20 > 1 ? SECONDS_RUN / 20 : 1) : 10))
T=$(mktemp -d /tmp/allot-soak-XXXXXX)
OUT=${SOAK_OUT:-$T/out}
mkdir -p "$T/bin" "$OUT"
cp "$BUILD/allotd" "$BUILD/allot-agent" "$T/bin/"
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null || true; done
  for p in $PIDS; do wait "$p" 2>/dev/null || true; done
  if [ -n "${SERVER:-}" ]; then kill -TERM "$SERVER" 2>/dev/null || true; wait "$SERVER" || true; fi
  # an agent that stops leaves its pods running (agent/main.c): their
  # supervisors (allot-agent --shim DIR, DIR under $T; pkill and pgrep are
  # procps's, in scripts/install-deps.sh) stop them on SIGTERM
  pkill -TERM -f -- "--shim $T/" 2>/dev/null || true
  for i in $(seq 100); do pgrep -f -- "--shim $T/" >/dev/null || break; sleep 0.1; done
  pkill -KILL -f -- "--shim $T/" 2>/dev/null || true
  # with SOAK_OUT the samples are elsewhere: the run's directory goes
  if [ -n "${SOAK_OUT:-}" ]; then cd / && rm -rf "$T"; fi
}
trap cleanup EXIT INT TERM
export ALLOT_ADMIN_PASSWORD=soak-admin-password

cd "$T"
bin/allotd --init --db soak.db --simulate-nodes "$NODES" >>log 2>&1
bin/allotd --db soak.db --simulate-nodes "$NODES" --listen 127.0.0.1:0 --port-file port \
  --rate-limit 0 >>log 2>&1 &
SERVER=$!
until [ -s port ]; do kill -0 "$SERVER" || { cat log; exit 1; }; sleep 0.1; done
URL="http://127.0.0.1:$(cat port)"
TOKEN=$(curl -s -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
  -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
  jq -r .accessToken)
api() { curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $TOKEN" "$@"; }
apij() { curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$@"; }
project() {
  apij -X POST "$URL/api/v1/org-unit/projects" -d "{\"name\":\"$1\",\"resources\":[{\"nodePool\":
    {\"name\":\"default\"},\"gpu\":{\"deserved\":$2}}]}" | jq -r .id
}
A=$(project team-a "$HALF")
B=$(project team-b "$HALF")
cat >"$T/pod.sh" <<'EOF'
#!/bin/sh
sleep 600
EOF
chmod +x "$T/pod.sh"
END=$(($(date +%s) + SECONDS_RUN))
alive() { [ "$(date +%s)" -lt "$END" ]; }

submit() { # PROJECT NAME PRIORITY
  apij -o /dev/null -X POST "$URL/api/v1/workloads/trainings" -d "{\"name\":\"$2\",\"projectId\":\"$1\",
    \"spec\":{\"command\":\"$T/pod.sh\",\"priorityClass\":\"$3\",
    \"compute\":{\"gpuDevicesRequest\":1}}}"
}
loop_a() {
  i=0
  while alive; do
    i=$((i + 1))
    if [ $((i % 10)) = 0 ]; then
      submit "$A" "a-$i" build-preemptible
    else
      submit "$A" "a-$i" train
    fi
    sleep 0.05
  done
}
loop_b() {
  i=0
  while alive; do i=$((i + 1)); submit "$B" "b-$i" train; sleep 1; done
}
loop_delete() {
  while alive; do
    live=$(apij "$URL/api/v1/workloads/count" | jq .count)
    if [ "${live:-0}" -gt "$LIVE" ]; then
      ids=$(apij "$URL/api/v1/workloads?sortBy=createdAt&sortOrder=asc&limit=50" |
        jq -c '[.workloads[].id]')
      apij -o /dev/null -X POST "$URL/api/v1/workloads/batch" -d "{\"ids\":$ids,\"action\":\"delete\"}"
    fi
    sleep 1
  done
}
loop_read() {
  while alive; do
    api "$URL/api/v1/workloads?limit=50" >/dev/null
    api "$URL/api/v1/workloads/count?filterBy=phase==Running" >/dev/null
    api "$URL/api/v1/nodes" >/dev/null
    api "$URL/metrics" >/dev/null
    id=$(apij "$URL/api/v1/workloads?limit=1&sortBy=createdAt&sortOrder=desc" | jq -r '.workloads[0].id')
    [ "$id" = null ] || api "$URL/api/v1/workloads/$id/events" >/dev/null
    sleep 0.2
  done
}
loop_agents() {
  n=0
  for k in 1 2 3; do
    apij -X POST "$URL/api/v1/agent/tokens" -d "{\"name\":\"soak-$k\"}" | jq -r .token >"$T/soak-$k.token"
    chmod 600 "$T/soak-$k.token"
  done
  while alive; do
    n=$((n % 3 + 1))
    bin/allot-agent --server "$URL" --token-file "$T/soak-$n.token" --name "soak-$n" --gpus 2 \
      --runtime none --work-dir "$T/agent-$n" >>"$T/agent-$n.log" 2>&1 &
    agent=$!
    echo "join soak-$n" >>"$T/agents"
    stay=$((STAY + $(od -An -N1 -tu1 /dev/urandom) % STAY))
    while alive && [ "$stay" -gt 0 ]; do sleep 1; stay=$((stay - 1)); done
    kill -TERM "$agent"
    wait "$agent" || true
    echo "leave soak-$n" >>"$T/agents"
  done
}
sample() { # one CSV line: seconds, rss_kib, fds, db_bytes, wal_bytes, workloads, events, live
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER/status")
  fds=$(ls "/proc/$SERVER/fd" | wc -l)
  db=$(stat -c %s soak.db),$(stat -c %s soak.db-wal 2>/dev/null || echo 0)
  rows=$(sqlite3 -readonly soak.db 'SELECT count(*) FROM workloads; SELECT count(*) FROM events' |
    paste -sd, -)
  live=$(apij "$URL/api/v1/workloads/count" | jq .count)
  echo "$(($(date +%s) - START)),$rss,$fds,$db,$rows,$live"
}

loop_a & PIDS="$PIDS $!"
loop_b & PIDS="$PIDS $!"
loop_delete & PIDS="$PIDS $!"
loop_read & PIDS="$PIDS $!"
loop_agents & PIDS="$PIDS $!"
START=$(date +%s)
echo "seconds,rss_kib,fds,db_bytes,wal_bytes,workloads,events,live" >"$OUT/soak.csv"
while alive; do
  sample >>"$OUT/soak.csv"
  sleep "$EVERY"
done
wait_all() { for p in $PIDS; do wait "$p" 2>/dev/null || true; done; PIDS=""; }
wait_all
sample >>"$OUT/soak.csv"
evictions=$(curl -s "$URL/metrics" -H "Authorization: Bearer $TOKEN" |
  sed -n 's/^allot_evictions_total{reason="\([A-Za-z]*\)"} \([0-9]*\)/\1=\2/p' | paste -sd' ' -)
evicted() { # REASON: how many evictions allotd counted for it
  printf '%s\n' $evictions | sed -n "s/^$1=//p" | grep . || echo 0
}
preempted=$(evicted Preempted)
reclaimed=$(evicted Reclaimed)
submitted=$(sqlite3 -readonly soak.db 'SELECT count(*) FROM workloads')
deleted=$(sqlite3 -readonly soak.db 'SELECT count(*) FROM workloads WHERE deleted_at > 0')
joins=$(grep -c '^join' "$T/agents" 2>/dev/null || true)
leaves=$(grep -c '^leave' "$T/agents" 2>/dev/null || true)

# the first sample after the warm-up, and the last
first=$(awk -F, -v w="$WARMUP" 'NR > 1 && $1 >= w { print; exit }' "$OUT/soak.csv")
last=$(tail -n 1 "$OUT/soak.csv")
[ -n "$first" ] || first=$(sed -n 2p "$OUT/soak.csv")
wal_max=$(awk -F, 'NR > 1 && $5 > m { m = $5 } END { print m + 0 }' "$OUT/soak.csv")
verdict=$(printf '%s\n%s\n' "$first" "$last" | awk -F, -v pct="$RSS_PCT" -v dbpct="$DB_PCT" \
  -v walmb="$WAL_MB" -v walmax="$wal_max" '
  NR == 1 { r0 = $2; f0 = $3; d0 = $4; w0 = $6; t0 = $1 }
  NR == 2 { r1 = $2; f1 = $3; d1 = $4; w1 = $6; t1 = $1 }
  END {
    rss_ok = pct == "off" || r1 <= r0 * (1 + pct / 100); fd_ok = f1 <= f0 + 8
    b0 = w0 ? d0 / w0 : d0; b1 = w1 ? d1 / w1 : d1; db_ok = dbpct == "off" || b1 <= b0 * (1 + dbpct / 100)
    wal_ok = walmax <= walmb * 1048576
    printf "from %d s to %d s after the start\n", t0, t1
    printf "  rss:  %d KiB -> %d KiB (%+.1f %%): %s\n", r0, r1, (r1 - r0) * 100 / r0,
      pct == "off" ? "not judged" : rss_ok ? "flat" : "GROWS"
    printf "  fds:  %d -> %d: %s\n", f0, f1, fd_ok ? "flat" : "GROWS"
    printf "  db:   %d -> %d bytes for %d -> %d workload rows (%.0f -> %.0f bytes a row): %s\n",
      d0, d1, w0, w1, b0, b1, dbpct == "off" ? "not judged" : db_ok ? "flat per row" : "GROWS"
    printf "  wal:  at most %d bytes (bound %d MiB): %s\n", walmax, walmb, wal_ok ? "bounded" : "PAST ITS BOUND"
    work_ok = w1 > w0
    if (!work_ok) printf "  no workload was submitted after the warm-up\n"
    exit !(rss_ok && fd_ok && db_ok && wal_ok && work_ok)
  }') && rc=0 || rc=1
echo "soak: $SECONDS_RUN s, evictions: ${evictions:-none}; samples in $OUT/soak.csv"
echo "  load: ${submitted:-0} submissions, ${deleted:-0} deletions, $preempted preemptions," \
  "$reclaimed reclaims, agents joined ${joins:-0} and left ${leaves:-0} times"
printf '%s\n' "$verdict"
if [ "$NEED_EVICTIONS" = 1 ] && { [ "$preempted" = 0 ] || [ "$reclaimed" = 0 ]; }; then
  echo "soak: no preemption or no reclaim happened: that part of the load was not exercised"
  rc=1
fi
kill -TERM "$SERVER"
wait "$SERVER" || { echo "soak: allotd exited with $? after SIGTERM"; rc=1; }
SERVER=""
# after the exit, so that a leak report written at exit counts too
grep -E "ERROR|runtime error|Sanitizer" log >/dev/null && { echo "soak: allotd's log has errors"; rc=1; }
exit $rc
