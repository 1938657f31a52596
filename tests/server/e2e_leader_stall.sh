#!/bin/sh
# e2e_leader_stall.sh: a lone allotd on SQLite leads for as long as it runs
# (control/leader.c), whatever stalls it.
#   1. Stopped (SIGSTOP) for 4 s, longer than the 3 s lease replicas on
#      PostgreSQL use, then let go: it still leads at epoch 1 (/metrics),
#      its log never says it stopped leading nor that it leads at another
#      epoch, and the scheduler ran no full cycle for it (a new leadership
#      loads the model whole and runs one).
#   2. It goes on scheduling: a training submitted after the stall runs.
#   3. Killed (SIGKILL, so the lease is not given back), a new process on
#      the same database leads at once, at epoch 2: the lease the first one
#      held for good is taken over at start.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --simulate-nodes 1x2
metric() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | awk -v k="$1" '$1 == k { print $2 }'
}
P=$(quota_project p 2 "$ADMIN")
submit() {
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
}
submit before
wait_phase "$ADMIN" before Running
sleep 1   # settled
FULL=$(metric allot_sched_cycles_full_total)
[ "$(metric allot_leader_epoch)" = 1 ] || fail "epoch before the stall: $(metric allot_leader_epoch)"

# 1. the stall
kill -STOP "$PID"
sleep 4
kill -CONT "$PID"
sleep 1
[ "$(metric allot_leader)" = 1 ] && [ "$(metric allot_leader_epoch)" = 1 ] ||
  fail "after the stall: leader $(metric allot_leader), epoch $(metric allot_leader_epoch)"
! grep -q "no longer leads" "$T/log" || fail "allotd stepped down during the stall"
[ "$(grep -c "leads at epoch" "$T/log")" = 1 ] || fail "leaderships: $(grep "leads at epoch" "$T/log")"
[ "$(metric allot_sched_cycles_full_total)" = "$FULL" ] ||
  fail "full cycles went from $FULL to $(metric allot_sched_cycles_full_total) across the stall"

# 2. still scheduling
submit after
wait_phase "$ADMIN" after Running

# 3. a new process takes the lease over at once
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
start_admin --simulate-nodes 1x2
[ "$(metric allot_leader)" = 1 ] && [ "$(metric allot_leader_epoch)" = 2 ] ||
  fail "after a restart: leader $(metric allot_leader), epoch $(metric allot_leader_epoch)"
echo "PASS"
