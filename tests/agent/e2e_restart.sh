#!/bin/sh
# e2e_restart.sh: an agent with --gpus auto whose NVML library does not
# open, so that it reads a fake nvidia-smi on PATH (two devices, one busy,
# and the compute processes this test writes), and what an agent survives:
# its own
# restart (it finds its pod again: same process, still Running) and the
# server's (it retries; the pod runs on). Then the limits of a token: a
# researcher cannot create one, an agent token opens no user route, another
# node's agent cannot end or log this node's pod, and a revoked token's
# node goes NotReady and its agent stops its pods. Projects' time and
# idle-GPU limits (from the fake's utilisation) stop workloads.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"
# a server restart shorter than the lease (lib_agent.sh's, long enough for a
# restart on a loaded machine) must not disturb running work

mkdir -p "$T/bin"
cat >"$T/bin/nvidia-smi" <<'EOF'
#!/bin/sh
# a fake nvidia-smi: two 80 GB devices, the first one busy
case "$*" in
*--query-gpu=*)
  echo "0, GPU-11111111-2222-3333-4444-555555555555, Fake GPU 80GB, 81559, 1234, 37"
  echo "1, GPU-66666666-7777-8888-9999-000000000000, Fake GPU 80GB, 81559, 0, 0" ;;
*--query-compute-apps=*) cat "$(dirname "$0")/../apps" 2>/dev/null ;;
*) echo "fake nvidia-smi" ;;
esac
EOF
chmod +x "$T/bin/nvidia-smi"
gpu_agent() {
  (PATH="$T/bin:$PATH"; export PATH; agent node-g --gpus auto --nvml "$T/no-libnvidia-ml.so.1")
}

start_admin --rate-limit 0
PORT=$(cat "$T/port")

# --gpus auto: model, count and metrics from nvidia-smi
agent_token node-g
gpu_agent
ready node-g
NODE=$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -c '.nodes[] | select(.name == "node-g")')
[ "$(printf '%s' "$NODE" | jq -r '.gpuInfo | "\(.gpuCount) \(.gpuType)"')" = "2 Fake GPU 80GB" ] \
  || fail "node-g: $NODE"
has_metrics() {
  expect 200 GET /api/v1/agent/nodes "" "$ADMIN" |
    jq -e '.nodes[0].gpus[0] | .utilization == 37 and .memoryUsedMiB == 1234' >/dev/null
}
until_ok 10 has_metrics || fail "no GPU metrics: $(expect 200 GET /api/v1/agent/nodes "" "$ADMIN")"
grep -q "NVML: .*no-libnvidia-ml.so.1.*; asking nvidia-smi instead" "$T/node-g.log" \
  || fail "the agent did not say why it does not use NVML: $(cat "$T/node-g.log")"

P=$(project p 2)
submit r1 "$P" 1 "$T/trap.sh" "" >/dev/null
wait_phase_long r1 Running
until_ok 10 has_process r1 || fail "r1 has no process"
R1=$(pids_of r1)

# nvidia-smi's compute processes: r1's memory on its device, and the
# device's utilisation (37% on device 0, 0% on device 1)
if [ "$(devices_of r1)" = 0 ]; then
  UUID=GPU-11111111-2222-3333-4444-555555555555 UTIL=37
else
  UUID=GPU-66666666-7777-8888-9999-000000000000 UTIL=0
fi
echo "$UUID, $R1, 3500" >"$T/apps"
R1ID=$(wl_id r1)
r1_usage() {
  expect 200 GET "/api/v1/workloads/$R1ID/pods" "" "$ADMIN" |
    jq -e ".pods[0].gpuUsage | .utilization == $UTIL and .memoryUsedBytes == 3670016000" >/dev/null
}
until_ok 10 r1_usage || fail "r1's usage: $(expect 200 GET "/api/v1/workloads/$R1ID/pods" "" "$ADMIN")"

# the agent restarts (kill -9, at once again): it finds r1, which ran on
expect 200 GET /api/v1/agent/tokens "" "$ADMIN" | jq -e '.tokens[0].nodeName == "node-g"' \
  >/dev/null || fail "the token is not bound to node-g"
kill -9 "$(cat "$T/node-g.pid")"
gpu_agent
until_ok 10 grep -q "found 1 pod from before" "$T/node-g.log" || fail "r1 was not found again"
sleep $((LEASE / 1000 + 1)) # longer than the lease: the new agent renewed it
[ "$(pids_of r1)" = "$R1" ] || fail "r1's process changed: $(pids_of r1), was $R1"
is_phase r1 Running || fail "r1 is not Running after the agent's restart"
is_status node-g Ready || fail "node-g is not Ready after the agent's restart"

# the server restarts on the same port: the agent retries, r1 runs on
stop
until_ok 10 grep -q "heartbeat: the server does not answer" "$T/node-g.log" ||
  fail "the agent did not notice the server was gone: $(tail -n 5 "$T/node-g.log")"
start --rate-limit 0 --listen "127.0.0.1:$PORT"
until_ok 20 grep -q "connected to .* again" "$T/node-g.log" || fail "the agent did not reconnect"
is_phase r1 Running || fail "r1 is not Running after the server's restart"
[ "$(pids_of r1)" = "$R1" ] || fail "r1's process changed across the server's restart"
events_of r1 | grep -q "^NodeLost" && fail "r1 was lost across the server's restart"

# a project's limits: a workspace on the idle device (the fake's device 1)
# is stopped after its idle limit, a training after its time limit (in a
# department whose quota holds the workspace: workspaces do not go over)
DL=$(expect 201 POST /api/v1/org-unit/departments "{\"name\":\"dept-limits\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":1}}]}" \
  "$ADMIN" | jq -r .id)
PL=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"limits\",\"parentId\":\"$DL\",\"clusterId\":\"$CLUSTER\",
  \"schedulingRules\":{\"interactiveJobMaxIdleDurationSeconds\":1,\"trainingJobTimeLimitSeconds\":2},
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
  \"gpu\":{\"deserved\":1,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$ADMIN" | jq -r .id)
expect 202 POST /api/v1/workloads/workspaces "{\"name\":\"ws1\",\"projectId\":\"$PL\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"sleep\",\"args\":\"1000\",
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase_long ws1 Stopped
events_of ws1 | grep -q "^Running: " || fail "ws1 never ran: $(events_of ws1)"
events_of ws1 | grep -q "^Suspended: .*interactiveJobMaxIdleDurationSeconds: the GPUs of ws1 were idle" \
  || fail "ws1: $(events_of ws1)"
until_ok 10 no_process ws1 || fail "ws1 still runs"
submit t1 "$PL" 1 sleep 1000 >/dev/null
wait_phase_long t1 Stopped
events_of t1 | grep -q "^Running: " || fail "t1 never ran: $(events_of t1)"
events_of t1 | grep -q "^Suspended: .*trainingJobTimeLimitSeconds: t1 ran [0-9]* s, the limit is 2 s" \
  || fail "t1: $(events_of t1)"
until_ok 10 no_process t1 || fail "t1 still runs"

# a researcher cannot create agent tokens; an agent token opens no user route
PW=$(expect 201 POST /api/v1/users '{"email":"res@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"res@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$P\"}" "$ADMIN" >/dev/null
RES=$(login res@example.com "$PW")
expect 403 POST /api/v1/agent/tokens '{"name":"x"}' "$RES" >/dev/null
expect 403 GET /api/v1/agent/tokens "" "$RES" >/dev/null
expect 401 GET /api/v1/workloads "" "$(cat "$T/node-g.token")" >/dev/null

# another node's agent cannot end r1 nor write its log
agent_token intruder
INTR=$(cat "$T/intruder.token")
expect 200 POST /api/v1/agent/register '{"name":"intruder","gpus":[]}' "$INTR" >/dev/null
expect 409 POST /api/v1/agent/register '{"name":"node-g","gpus":[]}' "$INTR" >/dev/null
# r1's pod: t1's may still be in the folder, being cleaned up
UID1=$(for d in "$T/node-g/pods"/*; do
  if jq -e '.workloadName == "r1"' "$d/spec.json" >/dev/null 2>&1; then basename "$d"; fi
done)
[ -n "$UID1" ] && [ "$(printf '%s\n' "$UID1" | wc -l)" = 1 ] || fail "r1's pod folder: '$UID1'"
expect 200 POST /api/v1/agent/heartbeat "{\"pods\":[{\"uid\":\"$UID1\",\"state\":\"Exited\",
  \"exitCode\":3}]}" "$INTR" >/dev/null
expect 404 POST "/api/v1/agent/pods/$UID1/logs?offset=0" "forged" "$INTR" >/dev/null
is_phase r1 Running || fail "another node's agent ended r1"

# a revoked token: its node goes NotReady, r1 back to Pending, its agent stops it
TID=$(expect 200 GET /api/v1/agent/tokens "" "$ADMIN" | jq -r '.tokens[] | select(.name == "node-g") | .id')
expect 200 DELETE "/api/v1/agent/tokens/$TID" "" "$ADMIN" | jq -e .revoked >/dev/null \
  || fail "the token is not revoked"
until_ok 15 is_status node-g NotReady || fail "node-g is not NotReady"
wait_phase_long r1 Pending
until_ok 10 no_process r1 || fail "r1 still runs on a node whose token was revoked"
[ -s "$OUT/r1.term" ] || fail "r1 was not stopped with SIGTERM"

finish node-g
echo "ok"
