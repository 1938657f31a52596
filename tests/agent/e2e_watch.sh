#!/bin/sh
# e2e_watch.sh: heartbeats that wait for work (control/assign_watch.c),
# with allotd on loopback (a 30 s agent lease) and one agent of 2 GPUs
# heartbeating every 10 s:
#   1. a heartbeat's waitMs and generation go together, waitMs at most a
#      third of the lease; a heartbeat that asks to wait is answered once
#      the wait has passed with nothing new for its node, with the same
#      generation and "waited": true;
#   2. three trainings submitted one after the other, each once the last
#      one's process started (just after the agent's heartbeat answered):
#      each process starts within 4 s of its submission, well inside the
#      10 s period a heartbeat that did not wait would leave it;
#   3. a running training deleted: its process is gone within 4 s, well
#      inside the period (allotd freed its pod, and the scheduler, told of
#      the deletion, marks its node);
#   4. SIGTERM stops the agent within 3 s although its heartbeat waits
#      up to 10 s.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

HB=10000
start_admin --rate-limit 0 --agent-lease-ms 30000
PA=$(project team-a 2)

# ---- 1. the fields, and a wait that ends with nothing new ----
# node-x: a node with no GPUs that the test itself heartbeats
agent_token node-x
X=$(cat "$T/node-x.token")
expect 200 POST /api/v1/agent/register '{"name":"node-x","gpus":[],"heartbeatMs":1000}' "$X" \
  >/dev/null
G=$(expect 200 POST /api/v1/agent/heartbeat '{"pods":[]}' "$X" | jq -r .generation)
case $G in ''|null|*[!0-9]*) fail "a heartbeat's answer has no generation: '$G'" ;; esac
expect 400 POST /api/v1/agent/heartbeat '{"pods":[],"waitMs":500}' "$X" | grep -q "go together" ||
  fail "waitMs without a generation is not refused for that"
expect 400 POST /api/v1/agent/heartbeat "{\"pods\":[],\"generation\":$G}" "$X" >/dev/null
expect 400 POST /api/v1/agent/heartbeat "{\"pods\":[],\"waitMs\":10001,\"generation\":$G}" "$X" |
  grep -q "waitMs" || fail "a wait over a third of the lease is not refused"
T0=$(now_ms)
A=$(expect 200 POST /api/v1/agent/heartbeat "{\"pods\":[],\"waitMs\":1000,\"generation\":$G}" "$X")
TOOK=$(($(now_ms) - T0))
[ "$TOOK" -ge 950 ] || fail "a heartbeat asked to wait 1000 ms answered after $TOOK ms"
[ "$(printf '%s' "$A" | jq -r '.waited, .generation' | tr '\n' ' ')" = "true $G " ] ||
  fail "the answer after a wait with nothing new: $A"

# ---- 2. pods start within milliseconds of their binding, not a period ----
new_agent node-1 --gpus 2
ready node-1
cat >"$T/started.sh" <<'SCRIPT'
#!/bin/sh
date +%s%3N >"$OUT/$ALLOT_WORKLOAD_NAME.start"
SCRIPT
chmod +x "$T/started.sh"
for w in w1 w2 w3; do
  AT=$(now_ms)
  submit $w "$PA" 1 "$T/started.sh" "" >/dev/null
  until_ok 30 test -s "$OUT/$w.start" || fail "$w did not start"
  TOOK=$(($(cat "$OUT/$w.start") - AT))
  echo "# $w: submitted to its process started in $TOOK ms (heartbeat period $HB ms)"
  [ "$TOOK" -lt 4000 ] || fail "$w started $TOOK ms after its submission: its agent did not wait for it"
done

# ---- 3. a deletion reaches the agent at once ----
submit d1 "$PA" 1 sleep 1000 >/dev/null
until_ok 30 has_process d1 || fail "d1 has no process"
sleep 1   # the heartbeats that reported d1 started are answered; the agent waits again
T0=$(now_ms)
expect 202 DELETE "/api/v1/workloads/$(wl_id d1)" "" "$ADMIN" >/dev/null
until_ok 30 no_process d1 || fail "d1 still runs after its deletion"
TOOK=$(($(now_ms) - T0))
echo "# d1's process was gone $TOOK ms after its deletion (heartbeat period $HB ms)"
[ "$TOOK" -lt 4000 ] || fail "d1's process ran on $TOOK ms after its deletion: its agent was not told"

# ---- 4. a stop does not wait for the heartbeat's wait ----
T0=$(now_ms)
stop_agent node-1
TOOK=$(($(now_ms) - T0))
[ "$TOOK" -lt 3000 ] || fail "the agent took $TOOK ms to stop while its heartbeat waited"
echo "# the agent stopped $TOOK ms after SIGTERM"
finish
echo "ok"
