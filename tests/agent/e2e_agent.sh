#!/bin/sh
# e2e_agent.sh: allotd on loopback and two agents declaring 2 GPUs each (the
# quick start's 4 GPUs on 2 machines) running real processes: a1 (1 GPU),
# a2 (2) and b1 (1); their processes run with the devices the scheduler
# chose; b2 preempts a1, whose process gets SIGTERM and ends while b2's
# starts; a1 runs again once b2 is deleted. Then exit codes (0 Completed, 3
# Failed with the code in its events), logs, a workload naming an image on
# a node without a container runtime, and an agent killed: its node goes
# NotReady, its workloads back to Pending, its processes stop. Nothing of
# the test is left running at the end.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_admin --rate-limit 0

# tokens: created once, listed without their secret, needed by agent routes
agent_token node-1
agent_token node-2
[ "$(expect 200 GET /api/v1/agent/tokens "" "$ADMIN" | jq '[.tokens[] | select(.token)] | length')" = 0 ] \
  || fail "a token's secret is listed"
expect 401 POST /api/v1/agent/heartbeat '{"pods":[]}' "$ADMIN" >/dev/null
expect 401 POST /api/v1/agent/heartbeat '{"pods":[]}' "$(cat "$T/node-1.token")x" >/dev/null

agent node-1 --gpus 2
agent node-2 --gpus 2
ready node-1 node-2
[ "$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq '[.nodes[].gpuInfo.gpuCount] | add')" = 4 ] \
  || fail "4 GPUs expected"

PA=$(project team-a 2)
PB=$(project team-b 2)
submit a1 "$PA" 1 "$T/trap.sh" "" >/dev/null
submit a2 "$PA" 2 sleep 1000 >/dev/null
submit b1 "$PB" 1 "$T/trap.sh" "" >/dev/null
for w in a1 a2 b1; do wait_phase_long $w Running; done

# each runs as a real process with its devices
for w in a1 a2 b1; do
  until_ok 10 has_process $w || fail "$w has no process"
  P=$(pids_of $w | head -n 1)
  [ "$(env_of "$P" CUDA_VISIBLE_DEVICES)" = "$(devices_of $w)" ] ||
    fail "$w runs with CUDA_VISIBLE_DEVICES=$(env_of "$P" CUDA_VISIBLE_DEVICES), bound to $(devices_of $w)"
  [ "$(env_of "$P" NVIDIA_VISIBLE_DEVICES)" = "$(devices_of $w)" ] || fail "$w: NVIDIA_VISIBLE_DEVICES"
done
[ "$(devices_of a2 | tr ',' '\n' | wc -l)" = 2 ] || fail "a2 should hold 2 devices"
until_ok 5 test -s "$OUT/a1.cuda" || fail "a1 did not write its file"
[ "$(cat "$OUT/a1.cuda")" = "$(devices_of a1)" ] || fail "a1 saw other devices"
A1_PID=$(pids_of a1 | head -n 1)
events_of a1 | grep -q "^Started: .*ran the command directly, without image busybox" \
  || fail "a1's events do not say it ran without its image: $(events_of a1)"

# b2 takes a1's GPU: a1's process gets SIGTERM and ends, b2's starts
submit b2 "$PB" 1 "$T/trap.sh" "" >/dev/null
wait_phase_long b2 Running
wait_phase_long a1 Pending
until_ok 10 test -s "$OUT/a1.term" || fail "a1 did not get SIGTERM"
until_ok 10 no_process a1 || fail "a1's process did not end"
until_ok 5 pid_gone "$A1_PID" || fail "a1's process $A1_PID still runs or was never reaped"
until_ok 10 has_process b2 || fail "b2 has no process"
events_of a1 | grep -q "^Reclaimed: " || fail "a1 has no Reclaimed event"
for w in a2 b1; do is_phase $w Running || fail "$w should still run"; done

# b2 deleted: gone from the list at once; its deletion ends once its agent
# stopped its process (Deleting, then Stopped with a Deleted event); a1
# runs again, as a new process. No cycle meanwhile is a full one: b2's
# departure and a1's placement run on the core's kept session, and the
# heartbeat that starts a1's process changes nothing the core reads
metric() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | awk -v k="$1" '$1 == k { print $2 }'
}
cycles_past() { [ "$(metric allot_sched_cycles_total)" -ge "$1" ]; }
FULL0=$(metric allot_sched_cycles_full_total)
KEPT0=$(metric allot_sched_cycles_kept_session_total)
B2=$(wl_id b2)
expect 202 DELETE "/api/v1/workloads/$B2" "" "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/workloads?filterBy=name==b2" "" "$ADMIN" | jq '.workloads | length')" = 0 ] ||
  fail "b2 is still listed after its deletion"
until_ok 10 no_process b2 || fail "b2's process did not end"
deleted() { expect 200 GET "/api/v1/workloads/$B2" "" "$ADMIN" | jq -e '.phase == "Stopped"'; }
until_ok 10 deleted || fail "b2's deletion did not end: $(expect 200 GET "/api/v1/workloads/$B2" "" "$ADMIN")"
expect 200 GET "/api/v1/workloads/$B2/events" "" "$ADMIN" | jq -r '.events[].reason' | grep -qx Deleted ||
  fail "b2 has no Deleted event"
wait_phase_long a1 Running
C=$(metric allot_sched_cycles_total)
until_ok 20 cycles_past $((C + 2)) || fail "no cycle after a1 started"
FULL1=$(metric allot_sched_cycles_full_total)
KEPT1=$(metric allot_sched_cycles_kept_session_total)
echo "# b2 deleted, a1 started: full cycles $FULL0 -> $FULL1, on the kept session $KEPT0 -> $KEPT1"
[ "$FULL1" = "$FULL0" ] && [ "$KEPT1" -ge $((KEPT0 + 2)) ] ||
  fail "b2's departure and a1's start brought a full cycle"
until_ok 10 has_process a1 || fail "a1 has no process again"
[ "$(pids_of a1 | head -n 1)" != "$A1_PID" ] || fail "a1 runs the old process"

# logs, with tailLines
LOG=$(expect 200 GET "/api/v1/workloads/$(wl_id b1)/logs" "" "$ADMIN")
printf '%s\n' "$LOG" | grep -q "^started b1 on devices $(devices_of b1)$" || fail "b1's log: $LOG"
until_ok 10 sh -c "curl -s '$URL/api/v1/workloads/$(wl_id a1)/logs?tailLines=1' \
  -H 'Authorization: Bearer $ADMIN' | grep -qx 'started a1 on devices [0-9]'" \
  || fail "a1's last log line"

# exit codes: a2 makes room, then c0 exits 0 and c3 exits 3
expect 202 DELETE "/api/v1/workloads/$(wl_id a2)" "" "$ADMIN" >/dev/null
until_ok 10 no_process a2 || fail "a2's process did not end"
submit c0 "$PA" 1 sh "-c 'echo done; exit 0'" >/dev/null
# (no retries: backoffLimit 0; agent/restarts tests the retries)
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"c3\",\"projectId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"sh\",
  \"args\":\"-c 'echo failing >&2; exit 3'\",\"backoffLimit\":0,
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase_long c0 Completed
wait_phase_long c3 Failed
events_of c3 | grep -q "^Failed: pod 0 of c3 exited with code 3 on node-" || fail "c3: $(events_of c3)"
events_of c0 | grep -q "^Completed: " || fail "c0 has no Completed event"
until_ok 10 sh -c "curl -s '$URL/api/v1/workloads/$(wl_id c3)/logs' \
  -H 'Authorization: Bearer $ADMIN' | grep -qx failing" || fail "c3's stderr is not in its log"

# a log followed while it is written: the response ends when the workload does
printf '#!/bin/sh\nfor i in 1 2 3 4 5; do echo "line $i"; sleep 0.3; done\n' >"$T/lines.sh"
chmod +x "$T/lines.sh"
submit f1 "$PA" 1 "$T/lines.sh" "" >/dev/null
F1=$(wl_id f1)
curl -s --max-time 30 "$URL/api/v1/workloads/$F1/logs?follow=true" -H "Authorization: Bearer $ADMIN" \
  >"$T/f1.follow" || fail "following f1's log did not end with f1 (curl: $?)"
is_phase f1 Completed || fail "f1 is $(phase "$ADMIN" f1) after its log ended"
[ "$(grep -c '^line [1-5]$' "$T/f1.follow")" = 5 ] || fail "f1's followed log: $(cat "$T/f1.follow")"

# an agent killed: its processes stop when its lease ends, and only then
# (the lease plus a margin) its node goes NotReady, its workloads back to
# Pending
N=$(node_of b1)
kill -9 "$(cat "$T/$N.pid")"
until_ok 15 is_status "$N" NotReady || fail "$N is not NotReady"
none_on "$N" || fail "processes of $N ran on after allotd called $N lost"
events_of b1 | grep -q "^NodeLost: node $N stopped heartbeating" || fail "b1: $(events_of b1)"
[ "$(node_of b1)" != "$N" ] || fail "b1 is still placed on $N"
[ -s "$OUT/b1.term" ] || fail "b1 was not stopped with SIGTERM"

# the end: agents stop (their pods follow when their lease ends)
poll 10 agent_ended "$N" && [ "$(agent_rc "$N")" = 137 ] ||
  fail "the agent of $N: $(agent_rc "$N" 2>&1), not the status of kill -9"
finish
echo "ok"
