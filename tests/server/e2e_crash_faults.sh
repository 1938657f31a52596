#!/bin/sh
# e2e_crash_faults.sh: allotd killed at exact points of its writes (the
# test-only fault points of ALLOT_FAULT, db/fault.c) and at random times.
#
# Part 1, deterministic:
#   - a 202 means on disk: allotd dies right after the commit that holds
#     the third submission, before answering it (submit:3). The client of
#     the third gets no 202, and after a restart all three are there;
#   - a turn of a cycle's write is all or nothing: three pending workloads
#     (one turn: db/snapshot.c), one node; allotd dies in the first cycle's
#     transaction after it wrote the second placement (cycle-pod:2). No pod
#     is bound afterwards (the first placement went with the turn), all
#     three are Pending, and a restart runs them.
# Part 2, 50 rounds on one database: each round starts allotd, sends a
#   burst of 20 submissions from 4 parallel clients while the scheduler
#   places them (every 10 ms), and kills allotd at a fault point chosen at
#   random (cycle-pod:K mid-cycle, submit:K, commit:K) or with kill -9 after
#   a random delay. After each kill: PRAGMA integrity_check is ok, every
#   submission acknowledged so far (any round) is there, no device is bound
#   twice, no node holds more GPUs than it has, a one-pod workload is
#   Running exactly when its pod is bound. Every cycle-pod round must die
#   at its fault point, mid-cycle. A burst not answered within 60 s fails
#   the test with allotd's threads' stacks. ALLOT_CRASH_SEED replays a run
#   (the seed is printed).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

unset ALLOT_FAULT
SEED=${ALLOT_CRASH_SEED:-$(($(date +%s) % 100000))}
echo "e2e_crash_faults: seed $SEED (ALLOT_CRASH_SEED=$SEED replays it)"

sql() { sqlite3 "$DB" "$1"; }

# --- part 1 ---------------------------------------------------------------
DB="$T/ack.db"
start --db "$DB" --simulate-nodes 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":8}}]}' "$ADMIN" | jq -r .id)
stop
submit() { # NAME: prints the reply and its status (000: no reply)
  req POST /api/v1/workloads/trainings \
    "{\"name\":\"$1\",\"projectId\":\"$P\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" ||
    true
}
start_fault submit:3 --db "$DB" --simulate-nodes 0
for w in w1 w2; do
  out=$(submit $w)
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 202 ] || fail "submit $w: $out"
done
out=$(submit w3)
[ "$(printf '%s\n' "$out" | tail -n 1)" = 000 ] || fail "w3 got an answer before its commit was known: $out"
killed_at submit
[ "$(sql "SELECT group_concat(name) FROM (SELECT name FROM workloads ORDER BY seq)")" = w1,w2,w3 ] ||
  fail "the submission committed before the kill is not on disk"

start_fault cycle-pod:2 --db "$DB" --simulate-nodes 1x8
killed_at cycle-pod
[ "$(sql 'SELECT count(*) FROM pods')" = 0 ] || fail "a cycle killed mid-transaction left pods bound"
[ "$(sql "SELECT count(*) FROM workloads WHERE phase = 'Pending'")" = 3 ] ||
  fail "a cycle killed mid-transaction changed phases"
start --db "$DB" --simulate-nodes 1x8
wait_phase "$ADMIN" w3 Running
stop

# --- part 2 ---------------------------------------------------------------
DB="$T/crash.db"
OPTS="--db $DB --simulate-nodes 250x8 --rate-limit 0 --schedule-period-ms 10"
start $OPTS
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":2000}}]}' "$ADMIN" | jq -r .id)
stop
ROUNDS=50 BURST=20
# one plan line per round: KIND N (a fault point and its pass, or kill and
# a delay in ms)
awk -v seed="$SEED" -v rounds=$ROUNDS 'BEGIN {
  srand(seed)
  for (r = 1; r <= rounds; r++) {
    k = int(rand() * 4)
    if (k == 0) print "cycle-pod", 1 + int(rand() * 15)
    else if (k == 1) print "submit", 1 + int(rand() * 18)
    else if (k == 2) print "commit", 1 + int(rand() * 8)
    else print "kill", int(rand() * 300)
  }
}' >"$T/plan"
: >"$T/acked"
CHECKS="SELECT 'integrity', (SELECT group_concat(integrity_check) FROM pragma_integrity_check);
SELECT 'twice', count(*) FROM pods a JOIN pods b ON a.node_seq = b.node_seq
  AND (a.workload_seq < b.workload_seq OR (a.workload_seq = b.workload_seq AND a.idx < b.idx))
  AND (a.devices & b.devices) != 0;
SELECT 'over', count(*) FROM (SELECT n.seq FROM nodes n JOIN pods d ON d.node_seq = n.seq
  JOIN workloads w ON w.seq = d.workload_seq GROUP BY n.seq
  HAVING sum(w.gpu_devices * 1000 + w.gpu_portion) > n.n_gpus * 1000);
SELECT 'phase', count(*) FROM workloads w WHERE w.deleted_at = 0 AND w.n_pods = 1 AND
  (w.phase = 'Running') != EXISTS (SELECT 1 FROM pods WHERE workload_seq = w.seq);"
# burst_done: curl's burst ends within 60 s (every request answered, or
# refused once allotd died); else allotd is stuck, and the failure carries
# its threads' stacks (gdb, where installed) instead of the test hanging
burst_done() {
  if poll 60 exited "$CURL"; then
    wait "$CURL" || true
    return 0
  fi
  _state=alive
  exited "$PID" && _state=exited
  _stacks=""
  if [ "$_state" = alive ] && command -v gdb >/dev/null 2>&1; then
    _stacks=$(timeout 30 gdb -p "$PID" -batch -ex 'thread apply all bt 12' 2>/dev/null |
      grep -E '^(Thread|#)' | head -n 200)
  fi
  kill "$CURL" 2>/dev/null || true
  fail "round $round ($kind $n): the burst was not answered within $((60 * SCALE)) s; allotd (pid $PID) $_state; its threads:
$_stacks"
}
round=0 midcycle=0 planned_midcycle=0
while read -r kind n; do
  round=$((round + 1))
  if [ "$kind" = kill ]; then start_fault "" $OPTS; else start_fault "$kind:$n" $OPTS; fi
  i=0
  while [ $i -lt $BURST ]; do
    i=$((i + 1))
    [ $i -gt 1 ] && echo next
    printf 'url = "%s/api/v1/workloads/trainings"\nheader = "Authorization: Bearer %s"\n' "$URL" "$ADMIN"
    printf 'header = "Content-Type: application/json"\nwrite-out = "r%d-%d %%{http_code}\\n"\n' $round $i
    printf 'output = "/dev/null"\n'
    printf 'data = "{\\"name\\":\\"r%d-%d\\",\\"projectId\\":\\"%s\\",\\"spec\\":{\\"compute\\":{\\"gpuDevicesRequest\\":1}}}"\n' \
      $round $i "$P"
  done >"$T/requests"
  curl -s --parallel --parallel-max 4 -K "$T/requests" >"$T/codes" 2>/dev/null &
  CURL=$!
  if [ "$kind" = kill ]; then
    sleep "$(awk -v ms="$n" 'BEGIN { printf "%.3f", ms / 1000 }')"
    kill -9 "$PID"
    wait "$PID" 2>/dev/null || true
    burst_done
    PID=""
  else
    burst_done
    if [ "$kind" = cycle-pod ]; then
      planned_midcycle=$((planned_midcycle + 1))
      killed_at cycle-pod
      midcycle=$((midcycle + 1))
    elif poll 2 exited "$PID"; then
      killed_at "$kind"
    else # the round made fewer passes than the fault wanted
      kill -9 "$PID"
      wait "$PID" 2>/dev/null || true
      PID=""
    fi
  fi
  grep ' 202$' "$T/codes" | cut -d' ' -f1 >>"$T/acked" || true
  # the acked names as a JSON array: a round killed early acks none
  out=$(sqlite3 "$DB" "$CHECKS
SELECT 'missing', count(*) FROM json_each('[$(sed 's/.*/"&"/' "$T/acked" | paste -sd, -)]') a
  WHERE a.value NOT IN (SELECT name FROM workloads WHERE deleted_at = 0);") ||
    fail "round $round: sqlite3 failed"
  [ "$out" = "$(printf 'integrity|ok\ntwice|0\nover|0\nphase|0\nmissing|0')" ] ||
    fail "round $round ($kind $n): $out"
done <"$T/plan"
[ "$planned_midcycle" -ge 1 ] || fail "seed $SEED planned no kill mid-cycle"
[ "$midcycle" = "$planned_midcycle" ] || fail "$midcycle of $planned_midcycle mid-cycle kills landed"
N=$(wc -l <"$T/acked")
[ "$N" -gt 0 ] || fail "nothing was acknowledged in $ROUNDS rounds"

# after all that, scheduling resumes from the database alone
start $OPTS
R=$(sql "SELECT count(*) FROM workloads WHERE deleted_at = 0")
placed() {
  [ "$(expect 200 GET "/api/v1/workloads/count?filterBy=phase==Running" "" "$ADMIN" | jq .count)" = "$R" ]
}
poll 30 placed || fail "after the kills not every workload runs (2000 GPUs for $R)"
stop
[ "$(sql 'PRAGMA integrity_check')" = ok ] || fail "integrity_check failed after the restart"
echo "e2e_crash_faults: ok ($ROUNDS kills, $midcycle mid-cycle; $N acknowledged submissions kept)"
