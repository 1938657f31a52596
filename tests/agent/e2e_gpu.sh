#!/bin/sh
# e2e_gpu.sh: what an agent measures of its GPUs, end to end, without a
# GPU: allot-agent --gpus auto loads the test suite's fake NVML library
# (fake_nvml.c), whose devices and processes this test writes to a file.
#   1. the node registers the fake's model, count and memory;
#   2. a training's process shows on its device with memory and
#      utilisation: in its pods, `allot training describe`, /metrics and
#      the workload's and pod's metrics series;
#   3. the same process on a device it was not given: a
#      GpuOutsideAllocation event naming device, process and memory;
#   4. a training that holds its GPU at 0% is suspended by its project's
#      idle limit; a busy one beside it is not.
# (e2e_restart.sh runs the agent on nvidia-smi instead.)
ALLOTD=$1
AGENT=$2
ALLOT=$3
FAKE_NVML=$4
. "$(dirname "$0")/lib_agent.sh"

export ALLOT_FAKE_NVML="$T/nvml"
# nvml_file LINES...: the fake's devices and processes, replaced at once
nvml_file() { printf '%s\n' "$@" >"$T/nvml.new" && mv "$T/nvml.new" "$T/nvml"; }
# dev INDEX USED_MIB UTIL: the fake's line for a device
dev() { echo "gpu $1 GPU-$1 81559 $2 $3 Fake H100 80GB"; }
nvml_file "gpu 0 GPU-aaaaaaaa-0000 81559 1 0 Fake H100 80GB" \
          "gpu 1 GPU-bbbbbbbb-1111 81559 1 0 Fake H100 80GB"

start_admin --rate-limit 0 --sample-period-ms 200
export ALLOT_CONFIG="$T/config.json"
printf '%s\n' "$ALLOT_ADMIN_PASSWORD" |
  "$ALLOT" login --url "$URL" --user admin --password-stdin >/dev/null || fail "allot login"

# 1. the node as NVML describes it
agent_token node-n
agent node-n --gpus auto --nvml "$FAKE_NVML"
until_ok 20 is_status node-n Ready || fail "node-n is not Ready: $(cat "$T/node-n.log")"
grep -q "2 GPUs: Fake H100 80GB (NVML)" "$T/node-n.log" || fail "the agent did not use NVML"
NODE=$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -c '.nodes[] | select(.name == "node-n")')
[ "$(printf '%s' "$NODE" | jq -r '.gpuInfo | "\(.gpuCount) \(.gpuType)"')" = "2 Fake H100 80GB" ] \
  || fail "node-n: $NODE"
# the devices as the agent's heartbeats measure them (its registration
# lists them without the figures: the first heartbeat may come after Ready)
measured() {
  expect 200 GET /api/v1/agent/nodes "" "$ADMIN" |
    jq -e '.nodes[0].gpus | length == 2 and .[1].memoryTotalMiB == 81559 and .[1].uuid == "GPU-bbbbbbbb-1111"' \
    >/dev/null
}
until_ok 10 measured || fail "node-n's devices: $(expect 200 GET /api/v1/agent/nodes "" "$ADMIN")"

# 2. g1's process on its device, with memory and utilisation
P=$(project p 2)
submit g1 "$P" 1 "$T/trap.sh" "" >/dev/null
wait_phase_long g1 Running
until_ok 10 has_process g1 || fail "g1 has no process"
G1=$(pids_of g1 | head -n 1)
D=$(devices_of g1)
O=$((1 - D))
[ "$(env_of "$G1" CUDA_VISIBLE_DEVICES)" = "$D" ] || fail "g1's CUDA_VISIBLE_DEVICES"
# both USED UTIL USED UTIL: g1's device (D), then the other (O), in index order
both() {
  if [ "$D" = 0 ]; then dev 0 "$1" "$2"; dev 1 "$3" "$4"; else dev 0 "$3" "$4"; dev 1 "$1" "$2"; fi
}
nvml_file "$(both 5000 63 1 0)" "proc $D $G1 4096 63"
G1ID=$(wl_id g1)
# epoch TIME: an API time in seconds since the epoch
epoch() { printf '%s' "$1" | jq -R 'sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601'; }
# event_time NAME REASON: when NAME's first REASON event was written
event_time() {
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/events" "" "$ADMIN" |
    jq -r "[.events[] | select(.reason == \"$2\")][0].createdAt"
}
# measured_after NAME SECONDS: pod 0 of NAME was measured at that time or later
measured_after() {
  at=$(expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$ADMIN" |
       jq -r '.pods[0].gpuUsage.updatedAt // empty')
  [ -n "$at" ] && [ "$(epoch "$at")" -ge "$2" ]
}
usage_is() { # JQ-TEST: on g1's pod 0's gpuUsage
  expect 200 GET "/api/v1/workloads/$G1ID/pods" "" "$ADMIN" | jq -e ".pods[0].gpuUsage | $1" >/dev/null
}
until_ok 10 usage_is ".utilization == 63 and .memoryUsedBytes == 4294967296" \
  || fail "g1's usage: $(expect 200 GET "/api/v1/workloads/$G1ID/pods" "" "$ADMIN")"
usage_is ".devices == [{\"index\":$D,\"allocated\":true,\"utilization\":63,\"memoryUsedBytes\":4294967296}]" \
  || fail "g1's devices: $(expect 200 GET "/api/v1/workloads/$G1ID/pods" "" "$ADMIN")"
"$ALLOT" training describe g1 -p p >"$T/describe" 2>&1 || fail "describe: $(cat "$T/describe")"
grep -q "g1-0-0 .* $D  *63%  *4096 MiB" "$T/describe" || fail "describe: $(cat "$T/describe")"
METRICS=$(curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN")
printf '%s\n' "$METRICS" | grep -qx "runai_job_gpu_utilization{job_name=\"g1\",job_uuid=\"$G1ID\",project=\"p\"} 63.00" \
  || fail "/metrics: $(printf '%s\n' "$METRICS" | grep gpu)"
printf '%s\n' "$METRICS" | grep -qx "allot_pod_gpu_memory_used_bytes{job_name=\"g1\",project=\"p\",pod=\"0\",node=\"node-n\",gpu=\"$D\",allocated=\"true\"} 4294967296" \
  || fail "/metrics: $(printf '%s\n' "$METRICS" | grep gpu)"
printf '%s\n' "$METRICS" | grep -qx "allot_node_gpu_utilization{node=\"node-n\",gpu=\"$D\",model=\"Fake H100 80GB\"} 63" \
  || fail "/metrics: $(printf '%s\n' "$METRICS" | grep gpu)"
# the series: samples every 200 ms; the last 2 s hold the figures
series() { # PATH-AND-TYPES JQ-TEST
  NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  START=$(date -u -d '-3 seconds' +%Y-%m-%dT%H:%M:%SZ)
  curl -s "$URL$1&start=$START&end=$NOW&numberOfSamples=4" -H "Authorization: Bearer $ADMIN" |
    jq -e "$2" >/dev/null
}
until_ok 10 series "/api/v1/workloads/$G1ID/metrics?metricType=GPU_UTILIZATION,GPU_MEMORY_USAGE_BYTES" \
  '.measurements[0].type == "GPU_UTILIZATION" and .measurements[0].values[-1].value == "63" and
   .measurements[1].values[-1].value == "4294967296"' \
  || fail "g1's series: $(curl -s "$URL/api/v1/workloads/$G1ID/metrics?metricType=GPU_UTILIZATION&start=$START&end=$NOW" -H "Authorization: Bearer $ADMIN")"
G1POD=$(expect 200 GET "/api/v1/workloads/$G1ID/pods" "" "$ADMIN" | jq -r '.pods[0].id')
series "/api/v1/workloads/$G1ID/pods/$G1POD/metrics?metricType=GPU_UTILIZATION_PER_GPU" \
  ".measurements[0].labels.gpu == \"$D\" and .measurements[0].values[-1].value == \"63\"" \
  || fail "g1's pod series"
# device memory in use, in percent: of g1's device for its project and
# department (every pool, or the default one), of both devices for the node
DEP=$(expect 200 GET "/api/v1/org-unit/projects/$P" "" "$ADMIN" | jq -r .parentId)
NODEID=$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -r '.nodes[] | select(.name == "node-n") | .id')
for q in "org-unit/projects/$P" "org-unit/departments/$DEP"; do
  until_ok 10 series "/api/v1/$q/metrics?metricType=GPU_ALLOCATION,GPU_MEMORY_UTILIZATION" \
    '.measurements[1].type == "GPU_MEMORY_UTILIZATION" and .measurements[1].values[-1].value == "6.13"' \
    || fail "$q's GPU_MEMORY_UTILIZATION"
done
series "/api/v1/org-unit/projects/$P/metrics?metricType=GPU_MEMORY_UTILIZATION&nodepoolName=default" \
  '.measurements[0].values[-1].value == "6.13"' || fail "p's GPU_MEMORY_UTILIZATION in the default pool"
until_ok 10 series "/api/v1/nodes/$NODEID/metrics?metricType=GPU_MEMORY_UTILIZATION" \
  '.measurements[0].values[-1].value == "3.07"' || fail "node-n's GPU_MEMORY_UTILIZATION"
expect 400 GET "/api/v1/workloads/$G1ID/metrics?metricType=CPU_LIMIT_CORES&start=2026-01-01&end=2026-01-02" \
  "" "$ADMIN" | jq -e '.details | contains("GPU_UTILIZATION, GPU_MEMORY_USAGE_BYTES")' >/dev/null \
  || fail "an unsupported metricType is not refused by name"
expect 404 GET "/api/v1/workloads/$G1ID/pods/00000000-0000-4000-8000-000000000007/metrics?metricType=GPU_UTILIZATION&start=2026-01-01&end=2026-01-02" \
  "" "$ADMIN" >/dev/null

# 3. g1's process on the device it was not given: one event
nvml_file "$(both 5000 63 512 10)" "proc $D $G1 4096 63" "proc $O $G1 512 10"
outside() { events_of g1 | grep -q "^GpuOutsideAllocation: pod 0 of g1 uses GPU $O on node-n (process $G1, 512 MiB), which it was not given: its devices are $D (CUDA_VISIBLE_DEVICES=$D)"; }
until_ok 10 outside || fail "no GpuOutsideAllocation event: $(events_of g1)"
usage_is ".devices | map(select(.allocated == false)) | .[0].index == $O" || fail "g1's devices"
# heartbeats for a second after the event: still one event
AT=$(epoch "$(event_time g1 GpuOutsideAllocation)")
until_ok 10 measured_after g1 $((AT + 1)) || fail "g1 is no longer measured"
[ "$(events_of g1 | grep -c '^GpuOutsideAllocation')" = 1 ] || fail "repeated events: $(events_of g1)"
expect 202 DELETE "/api/v1/workloads/$G1ID" "" "$ADMIN" >/dev/null
until_ok 10 no_process g1 || fail "g1's process did not end"

# 4. the idle limit acts on the measured figures: i1 holds its GPU at 0%,
# b1 beside it is busy
nvml_file "$(dev 0 1 50)" "$(dev 1 1 50)"
PL=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"limits\",\"clusterId\":\"$CLUSTER\",
  \"schedulingRules\":{\"trainingJobMaxIdleDurationSeconds\":1},
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
  \"gpu\":{\"deserved\":2,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$ADMIN" | jq -r .id)
submit i1 "$PL" 1 "$T/trap.sh" "" >/dev/null
submit b1 "$PL" 1 "$T/trap.sh" "" >/dev/null
wait_phase_long i1 Running
wait_phase_long b1 Running
until_ok 10 has_process i1 || fail "i1 has no process"
until_ok 10 has_process b1 || fail "b1 has no process"
DI=$(devices_of i1)
DB=$(devices_of b1)
line() { # DEVICE: i1's holds 1000 MiB at 0%, b1's is busy
  if [ "$1" = "$DI" ]; then dev "$1" 1000 0; else dev "$1" 3000 80; fi
}
nvml_file "$(line 0)" "$(line 1)" "proc $DI $(pids_of i1 | head -n 1) 1000 0" \
          "proc $DB $(pids_of b1 | head -n 1) 3000 80"
wait_phase_long i1 Stopped
events_of i1 | grep -q "^Suspended: .*trainingJobMaxIdleDurationSeconds: the GPUs of i1 were idle" \
  || fail "i1: $(events_of i1)"
until_ok 10 no_process i1 || fail "i1 still runs"
# b1, measured busy for longer than the limit after i1 was suspended, runs on
AT=$(epoch "$(event_time i1 Suspended)")
until_ok 10 measured_after b1 $((AT + 2)) || fail "b1 is no longer measured"
is_phase b1 Running || fail "b1 was stopped: $(events_of b1)"
expect 202 DELETE "/api/v1/workloads/$(wl_id b1)" "" "$ADMIN" >/dev/null
until_ok 10 no_process b1 || fail "b1's process did not end"
finish node-n
echo "ok"
