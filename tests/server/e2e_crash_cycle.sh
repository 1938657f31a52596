#!/bin/sh
# e2e_crash_cycle.sh: kill -9 while the scheduler places and writes a large
# cycle. 2,000 one-GPU workloads are acknowledged while the cluster has no
# node; then every start brings 100 x 8 simulated nodes, so its first cycle
# binds 800 pods, written in turns (db/snapshot.c). Three starts die inside
# that write at a test-only fault point (ALLOT_FAULT=cycle-pod:K, after
# the K-th placement written: 1, 400, 799); a fourth is killed a few
# milliseconds after its start. After each: PRAGMA integrity_check is ok,
# every acknowledged workload is there, no node holds more GPUs than it
# has, no pod is bound twice to one device, and single-pod workloads are
# Running exactly when placed (turns that committed before the kill, if
# another write made the writer commit between them, land whole). After a
# last start scheduling completes: 800 Running, the rest Pending.
#
# Nothing here waits on a guess of how fast the machine is: each start is
# given up to 60 s (times the sanitizer scale) to reach its fault point. A
# lone allotd on SQLite leads for as long as it runs (control/leader.c), so
# a process starved for seconds does not step down, drop its model and load
# all 2,000 workloads again mid-cycle.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"
N=2000
OPTS="--db $T/cycle.db --simulate-nodes 100x8 --rate-limit 0"
DB="$T/cycle.db"

start --db "$DB" --simulate-nodes 0 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":400}}]}' "$ADMIN" | jq -r .id)
# one curl, many requests: one config block per submission
i=0
while [ $i -lt $N ]; do
  i=$((i + 1))
  [ $i -gt 1 ] && echo next
  printf 'url = "%s/api/v1/workloads/trainings"\nheader = "Authorization: Bearer %s"\n' "$URL" "$ADMIN"
  printf 'header = "Content-Type: application/json"\nwrite-out = "%%{http_code}\\n"\noutput = "/dev/null"\n'
  printf 'data = "{\\"name\\":\\"w%d\\",\\"projectId\\":\\"%s\\",\\"spec\\":{\\"compute\\":{\\"gpuDevicesRequest\\":1}}}"\n' $i "$P"
done >"$T/requests"
curl -s --no-progress-meter --parallel --parallel-max 32 -K "$T/requests" >"$T/codes" 2>"$T/curl.err" || true
[ "$(grep -c '^202$' "$T/codes")" = $N ] || fail "not every submission was acknowledged: $(sort "$T/codes" | uniq -c)"
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
PID=""

[ "$(sqlite3 "$DB" 'SELECT count(*) FROM pods')" = 0 ] || fail "pods bound without nodes"
# what any kill must leave: $1 says which
consistent() {
  [ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "$1: integrity_check failed"
  [ "$(sqlite3 "$DB" 'SELECT count(*) FROM workloads WHERE deleted_at = 0')" = $N ] ||
    fail "$1: workloads lost"
  BAD=$(sqlite3 "$DB" "SELECT n.name FROM nodes n JOIN pods d ON d.node_seq = n.seq
    JOIN workloads w ON w.seq = d.workload_seq GROUP BY n.seq
    HAVING sum(w.gpu_devices * 1000 + w.gpu_portion) > n.n_gpus * 1000")
  [ -z "$BAD" ] || fail "$1: nodes over capacity: $BAD"
  BAD=$(sqlite3 "$DB" "SELECT a.node_seq FROM pods a JOIN pods b ON a.node_seq = b.node_seq
    AND (a.workload_seq < b.workload_seq OR (a.workload_seq = b.workload_seq AND a.idx < b.idx))
    AND (a.devices & b.devices) != 0 LIMIT 1")
  [ -z "$BAD" ] || fail "$1: a device is bound twice on node $BAD"
  BAD=$(sqlite3 "$DB" "SELECT count(*) FROM workloads w WHERE w.deleted_at = 0 AND w.n_pods = 1 AND
    (w.phase = 'Running') != EXISTS (SELECT 1 FROM pods WHERE workload_seq = w.seq)")
  [ "$BAD" = 0 ] || fail "$1: $BAD workloads whose phase disagrees with their pods"
}
for k in 1 400 799; do
  start_fault "cycle-pod:$k" $OPTS --schedule-period-ms 10
  killed_at cycle-pod 60
  consistent "killed after $k placements"
done
start $OPTS --schedule-period-ms 10
sleep 0.05
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
PID=""
consistent "killed after its start"

start $OPTS --schedule-period-ms 50
running() { [ "$(expect 200 GET "/api/v1/workloads/count?filterBy=phase==Running" "" "$ADMIN" |
  jq .count)" = "$1" ]; }
poll 120 running 800 || fail "after the kills $(expect 200 GET \
  "/api/v1/workloads/count?filterBy=phase==Running" "" "$ADMIN" | jq .count) workloads run on 800 GPUs"
[ "$(expect 200 GET "/api/v1/workloads/count?filterBy=phase==Pending" "" "$ADMIN" | jq .count)" = 1200 ] ||
  fail "1200 should be Pending"
stop
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check failed after the restart"
echo "e2e_crash_cycle: ok"
