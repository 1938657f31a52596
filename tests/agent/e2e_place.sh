#!/bin/sh
# e2e_place.sh: what agents' nodes tell the scheduler, and what it gives
# back, with real agents and real processes: node-m reads a fake
# nvidia-smi (two idle 40 GiB devices) and labels rack=r1; node-p declares
# 2 GPUs, labels rack=r2 and its address. The nodes carry their labels,
# device memory and address; a pool created by a label takes node-p at
# once; a GPU-memory request lands on node-m and is charged its share; a
# workload's port is reachable at the address its urls give; a
# preemptible workspace is stopped by the idle-GPU rule for preemptible
# workspaces, a training (with no rule of its own) is not. The web pod is
# a node.js one-liner (node comes with the browser tests' dependencies).
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

mkdir -p "$T/bin"
cat >"$T/bin/nvidia-smi" <<'EOF'
#!/bin/sh
# a fake nvidia-smi: two idle 40 GiB devices
case "$*" in
*--query-gpu=*)
  echo "0, GPU-11111111-2222-3333-4444-555555555555, Fake GPU 40GB, 40960, 0, 0"
  echo "1, GPU-66666666-7777-8888-9999-000000000000, Fake GPU 40GB, 40960, 0, 0" ;;
*) echo "fake nvidia-smi" ;;
esac
EOF
chmod +x "$T/bin/nvidia-smi"

start_admin --rate-limit 0
(PATH="$T/bin:$PATH"; export PATH; new_agent node-m --gpus auto --labels rack=r1)
new_agent node-p --gpus 2 --labels rack=r2 --address 127.0.0.1
ready node-m node-p

node_json() { expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -c ".nodes[] | select(.name == \"$1\")"; }
node_json node-m | jq -e '.labels.rack == "r1" and .gpuInfo.gpuMemoryMib == 40960' >/dev/null ||
  fail "node-m: $(node_json node-m)"
node_json node-p | jq -e '.labels.rack == "r2" and .address == "127.0.0.1" and
  .gpuInfo.gpuMemoryMib == 0' >/dev/null || fail "node-p: $(node_json node-p)"

# a pool created by a label takes the node that carries it, at once
expect 201 POST /api/v1/node-pools '{"name":"r2","labelKey":"rack","labelValue":"r2"}' "$ADMIN" \
  >/dev/null
[ "$(node_json node-p | jq -r .nodePool)" = r2 ] || fail "node-p is not in r2: $(node_json node-p)"
[ "$(node_json node-m | jq -r .nodePool)" = default ] || fail "node-m left default"

P=$(project p 2)

# a GPU-memory request: only node-m reports device memory; 20 GiB of 40
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"mem\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"sleep\",\"args\":\"1000\",
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],\"nodePools\":[\"default\",\"r2\"],
  \"compute\":{\"gpuRequestType\":\"memory\",\"gpuMemoryRequest\":\"20Gi\"}}}" "$ADMIN" >/dev/null
wait_phase_long mem Running
[ "$(node_of mem)" = node-m ] || fail "mem runs on $(node_of mem)"
[ "$(expect 200 GET "/api/v1/workloads/$(wl_id mem)" "" "$ADMIN" | jq .allocatedResources.gpu)" = 0.5 ] ||
  fail "mem holds $(expect 200 GET "/api/v1/workloads/$(wl_id mem)" "" "$ADMIN" | jq .allocatedResources)"

# a port: the pod listens where the workload's urls say; the test's own
# port (lib_agent.sh), free now (curl: 7, nothing listens)
WEB=$TEST_PORT
taken() { curl -s --max-time 1 -o /dev/null "http://127.0.0.1:$1"; [ $? -ne 7 ]; }
! taken "$WEB" || fail "the test's own port $WEB is taken"
cat >"$T/web.sh" <<EOF
#!/bin/sh
# answers one line on \$PORT (the node port allot gave the container port)
exec node -e "require('http').createServer((q, s) => s.end('port ' + process.env.ALLOT_PORT_8080)).listen(process.env.PORT)"
EOF
chmod +x "$T/web.sh"
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"web\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"$T/web.sh\",\"nodePools\":[\"r2\"],
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"ports\":[{\"container\":8080,\"external\":$WEB}],\"compute\":{\"gpuDevicesRequest\":1}}}" \
  "$ADMIN" >/dev/null
wait_phase_long web Running
URLS=$(expect 200 GET "/api/v1/workloads/$(wl_id web)" "" "$ADMIN" | jq -r '.urls | join(" ")')
[ "$URLS" = "http://127.0.0.1:$WEB" ] || fail "web's urls: $URLS"
answers() { [ "$(curl -s --max-time 2 "$URLS")" = "port $WEB" ]; }
until_ok 20 answers || fail "nothing answers at $URLS: $(cat "$T"/node-p/pods/*/log 2>/dev/null)"

# idle-GPU rules: preemptible and non-preemptible workspaces have their own
PL=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"idle\",\"clusterId\":\"$CLUSTER\",
  \"schedulingRules\":{\"interactiveJobPreemptIdleDurationSeconds\":1},
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
  \"gpu\":{\"deserved\":1,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$ADMIN" | jq -r .id)
expect 202 DELETE "/api/v1/workloads/$(wl_id mem)" "" "$ADMIN" >/dev/null
expect 202 POST /api/v1/workloads/workspaces "{\"name\":\"pre\",\"projectId\":\"$PL\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"sleep\",\"args\":\"1000\",
  \"priorityClass\":\"interactive-preemptible\",\"nodePools\":[\"default\"],
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase_long pre Stopped
events_of pre | grep -q "^Suspended: .*interactiveJobPreemptIdleDurationSeconds: the GPUs of pre were idle" ||
  fail "pre: $(events_of pre)"
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"keep\",\"projectId\":\"$PL\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"sleep\",\"args\":\"1000\",
  \"nodePools\":[\"default\"],\"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase_long keep Running
sleep 2 # past the preemptible workspaces' idle limit
[ "$(node_of keep)" = node-m ] || fail "keep is not on node-m's idle GPUs"
[ "$(phase "$ADMIN" keep)" = Running ] || fail "keep, a training, was stopped: $(events_of keep)"
sanitizers_quiet
echo "agent e2e_place: ok"
