#!/bin/sh
# run.sh [BUILD_DIR] [nvml|nvidia-smi]: allot-agent on a real NVIDIA GPU
# machine, reading its GPUs through NVML (the default) or through
# nvidia-smi alone (the agent's --nvml none: its fallback). Without an
# NVIDIA GPU it says "skipped: no NVIDIA GPU" and exits 77 (ctest's skip).
#
# It starts allotd (BUILD_DIR, default build/) on loopback in a temporary
# directory and allot-agent --gpus auto beside it, then checks:
#   1. the node registers through the chosen source with the model, count
#      and memory nvidia-smi reports;
#   2. a training submitted with `allot training submit` runs a GPU program
#      (burn.cu built with nvcc if there is one, else burn.py with PyTorch
#      or CuPy) that allocates 1024 MiB and keeps its GPU busy for a
#      minute: CUDA_VISIBLE_DEVICES is the device the scheduler chose, the
#      process shows on that device in nvidia-smi, and its utilisation and
#      memory show in its pods' gpuUsage, `allot training describe`, the
#      workload's metrics series and /metrics; it completes, and its
#      device is free again;
#   3. a preemption: a project over its quota fills every GPU, a project
#      within its quota takes one back: the filler gets SIGTERM (the
#      program prints "term"), ends, and its device is freed before the
#      other's process starts on it;
#   4. the idle-GPU rule: a training that holds 1024 MiB without running a
#      kernel is suspended after its project's
#      trainingJobMaxIdleDurationSeconds (IDLE_S, default 20);
#   5. a training given no GPU whose program uses GPU 0 anyway (it sets
#      CUDA_VISIBLE_DEVICES itself) gets a GpuOutsideAllocation event, and
#      its pod's usage shows the device as not allocated.
# It prints the figures it saw (FIGURE lines) and exits 0 only when every
# check passed. Takes about 2 minutes; needs curl and jq. With
# ALLOT_GPU_LOGS=DIR it copies allotd's and the agent's logs into DIR when
# it ends, whatever the outcome.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" 2>/dev/null && pwd) || { echo "no build directory ${1:-build}" >&2; exit 2; }
IDLE_S=${IDLE_S:-20}
SOURCE=${2:-nvml}
case $SOURCE in
  nvml) SOURCE_OPT="" SOURCE_LOG="(NVML)" ;;
  nvidia-smi) SOURCE_OPT="--nvml none" SOURCE_LOG="(nvidia-smi)" ;;
  *) echo "run.sh: the source is nvml or nvidia-smi, not '$SOURCE'" >&2; exit 2 ;;
esac

# ---- is there a GPU? ----
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "skipped: no NVIDIA GPU (nvidia-smi lists none)"
  exit 77
fi
for p in allotd allot-agent allot; do
  [ -x "$BUILD/$p" ] || { echo "FAIL: $BUILD/$p is not built" >&2; exit 1; }
done
for p in curl jq; do
  command -v $p >/dev/null 2>&1 || { echo "FAIL: $p is needed" >&2; exit 1; }
done
if nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | grep -q Enabled; then
  echo "FAIL: MIG is enabled: allot gives pods whole devices (CUDA_VISIBLE_DEVICES=N), and NVML" \
       "gives no utilisation under MIG; run this with MIG off" >&2
  exit 1
fi

T=$(mktemp -d /tmp/allot-gpu-XXXXXX)
PID="" AGENT_PID=""
export ALLOT_ADMIN_PASSWORD=gpu-test-admin-password ALLOT_CONFIG="$T/config.json"
cleanup() {
  [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null || true
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  for p in $(grep -l -z -x "ALLOT_TEST=$T" /proc/[0-9]*/environ 2>/dev/null |
             sed 's|^/proc/||; s|/environ$||'); do
    kill -9 "$p" 2>/dev/null || true
  done
  sleep 1
  if [ -n "${ALLOT_GPU_LOGS:-}" ]; then
    cp "$T/allotd.log" "$T/agent.log" "$ALLOT_GPU_LOGS/" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() {
  echo "FAIL: $*" >&2
  for f in "$T/allotd.log" "$T/agent.log"; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}
figure() { echo "FIGURE: $*"; }
now() { date +%s.%N | cut -c1-14; }
since() { awk "BEGIN { printf \"%.1f\", $(now) - $1 }"; }

# until_ok SECONDS CMD...: polls CMD every 0.5 s until it succeeds.
until_ok() {
  n=$(($1 * 2)); shift
  while ! "$@" >/dev/null 2>&1; do
    n=$((n - 1)); [ $n -gt 0 ] || return 1
    sleep 0.5
  done
}

# ---- the GPU program ----
if command -v nvcc >/dev/null 2>&1; then
  nvcc -O2 -o "$T/burn" "$HERE/burn.cu" >"$T/nvcc.log" 2>&1 || { cat "$T/nvcc.log"; fail "nvcc failed"; }
  BURN="$T/burn"
  figure "workload: burn.cu built with $(nvcc --version | tail -n 1)"
elif python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
     python3 -c 'import cupy; cupy.cuda.runtime.getDeviceCount()' 2>/dev/null; then
  BURN="python3 $HERE/burn.py"
  figure "workload: burn.py ($(python3 -c 'import torch; print("torch", torch.__version__)' 2>/dev/null || echo cupy))"
else
  BURN=""
fi

# ---- allotd, the agent ----
(cd "$T" && "$BUILD/allotd" --init --db "$T/allot.db" >"$T/allotd.log" 2>&1) || fail "allotd --init"
(cd "$T" && exec "$BUILD/allotd" --db "$T/allot.db" --listen 127.0.0.1:0 --port-file "$T/port" \
   --schedule-period-ms 200 --sample-period-ms 1000 --rate-limit 0 >>"$T/allotd.log" 2>&1) &
PID=$!
until_ok 20 test -s "$T/port" || fail "allotd did not start"
URL="http://127.0.0.1:$(cat "$T/port")"
api() { # METHOD PATH [BODY]
  curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    ${3:+--data-binary "$3"}
}
ADMIN=$(curl -sf "$URL/api/v1/token" -H 'Content-Type: application/json' \
  -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
  jq -r .accessToken)
printf '%s\n' "$ALLOT_ADMIN_PASSWORD" | "$BUILD/allot" login --url "$URL" --user admin \
  --password-stdin >/dev/null || fail "allot login"
POOL=$(api GET /api/v1/node-pools | jq -r '.nodepools[0].id')
api POST /api/v1/agent/tokens '{"name":"gpu-node","nodeName":"gpu-node"}' | jq -r .token >"$T/token"
chmod 600 "$T/token"
ALLOT_TEST=$T "$BUILD/allot-agent" --server "$URL" --token-file "$T/token" --name gpu-node \
  --work-dir "$T/agent" --gpus auto $SOURCE_OPT --runtime none --heartbeat-ms 1000 >"$T/agent.log" 2>&1 &
AGENT_PID=$!

# ---- 1. registration ----
ready() { api GET /api/v1/nodes | jq -e '.nodes[] | select(.name == "gpu-node" and .status == "Ready")'; }
until_ok 30 ready || fail "the node is not Ready"
grep -qF "$SOURCE_LOG" "$T/agent.log" || fail "the agent does not use $SOURCE: $(cat "$T/agent.log")"
N_SMI=$(nvidia-smi -L | grep -c '^GPU ')
MODEL_SMI=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
MEM_SMI=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | tr -d ' ')
NODE=$(api GET /api/v1/nodes | jq -c '.nodes[] | select(.name == "gpu-node")')
[ "$(printf '%s' "$NODE" | jq -r .gpuInfo.gpuCount)" = "$N_SMI" ] || fail "GPU count: $NODE, nvidia-smi: $N_SMI"
[ "$(printf '%s' "$NODE" | jq -r .gpuInfo.gpuType)" = "$MODEL_SMI" ] || fail "model: $NODE, nvidia-smi: $MODEL_SMI"
MEM_API=$(api GET /api/v1/agent/nodes | jq -r '.nodes[0].gpus[0].memoryTotalMiB')
[ "$MEM_API" = "$MEM_SMI" ] || fail "memory: $MEM_API MiB, nvidia-smi: $MEM_SMI MiB"
figure "registered through $SOURCE: $N_SMI x $MODEL_SMI, $MEM_SMI MiB each"
[ -n "$BURN" ] || { echo "skipped: the workload checks (no nvcc, PyTorch or CuPy here); registration passed"; exit 77; }

# the projects' department, with a quota that holds every project's
DEPT=$(api POST /api/v1/org-unit/departments "{\"name\":\"gpu-test\",\"resources\":[{\"nodePool\":
  {\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":$((N_SMI * 4))}}]}" | jq -r .id)
[ -n "$DEPT" ] && [ "$DEPT" != null ] || fail "cannot create the department"
project() { # NAME DESERVED [RULES]
  api POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$DEPT\",
    ${3:+\"schedulingRules\":$3,}
    \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
    \"gpu\":{\"deserved\":$2,\"limit\":-1,\"overQuotaWeight\":1}}]}" | jq -r .id
}
submit() { # NAME PROJECT GPUS MODE SECONDS
  # shellcheck disable=SC2086
  "$BUILD/allot" training submit "$1" -p "$2" -i local -g "$3" -e "ALLOT_TEST=$T" \
    --command -- $BURN "$4" "$5" 1024 >/dev/null || fail "allot training submit $1"
}
wl_id() { api GET "/api/v1/workloads?filterBy=name==$1" | jq -r '.workloads[0].id'; }
phase() { api GET "/api/v1/workloads?filterBy=name==$1" | jq -r '.workloads[0].phase'; }
is_phase() { [ "$(phase "$1")" = "$2" ]; }
events() { api GET "/api/v1/workloads/$(wl_id "$1")/events" | jq -r '.events[] | "\(.reason): \(.message)"'; }
pid_of() { # NAME: the workload's own process (its environment names it)
  for p in $(grep -l -z -x "ALLOT_WORKLOAD_NAME=$1" /proc/[0-9]*/environ 2>/dev/null |
             sed 's|^/proc/||; s|/environ$||'); do
    [ "$(sed 's/.*) //' "/proc/$p/stat" | cut -d' ' -f3)" = "$p" ] && echo "$p" && return 0
  done
  return 1
}
devices_of() { api GET "/api/v1/workloads/$(wl_id "$1")/pods" | jq -r '.pods[0].gpuDevices | map(tostring) | join(",")'; }
# on_gpu PID INDEX: nvidia-smi lists PID among the compute processes of device INDEX
on_gpu() {
  uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$2")
  nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader | tr -d ' ' | grep -qx "$uuid,$1"
}
off_gpu() { ! nvidia-smi --query-compute-apps=pid --format=csv,noheader | tr -d ' ' | grep -qx "$1"; }

# ---- 2. a busy training ----
PA=$(project gpu-a 1)
submit burn1 gpu-a 1 busy 60
until_ok 60 is_phase burn1 Running || fail "burn1 is $(phase burn1): $(events burn1)"
until_ok 20 pid_of burn1 || fail "burn1 has no process"
P1=$(pid_of burn1)
D1=$(devices_of burn1)
CVD=$(tr '\0' '\n' <"/proc/$P1/environ" | sed -n 's/^CUDA_VISIBLE_DEVICES=//p')
[ "$CVD" = "$D1" ] || fail "burn1: CUDA_VISIBLE_DEVICES=$CVD, bound to $D1"
until_ok 30 on_gpu "$P1" "$D1" || fail "nvidia-smi does not show burn1's process $P1 on GPU $D1"
B1=$(wl_id burn1)
busy() {
  api GET "/api/v1/workloads/$B1/pods" |
    jq -e '.pods[0].gpuUsage | .utilization >= 50 and .memoryUsedBytes >= 1073741824'
}
until_ok 30 busy || fail "burn1's usage: $(api GET "/api/v1/workloads/$B1/pods" | jq -c '.pods[0].gpuUsage')"
figure "burn1 on GPU $D1: $(api GET "/api/v1/workloads/$B1/pods" | jq -c '.pods[0].gpuUsage')"
figure "nvidia-smi: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -i "$D1")," \
  "process: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | grep "^$P1,")"
"$BUILD/allot" training describe burn1 -p gpu-a >"$T/describe" || fail "describe"
grep -q "burn1-0-0 .*[0-9]%  *[0-9][0-9]* MiB" "$T/describe" || fail "describe: $(cat "$T/describe")"
grep "burn1-0-0" "$T/describe" | sed 's/^/FIGURE: describe: /'
curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | grep -q "^runai_job_gpu_utilization{job_name=\"burn1\"" || fail "/metrics has no burn1"
sleep 3 # a few samples
START=$(date -u -d '-30 seconds' +%Y-%m-%dT%H:%M:%SZ) END=$(date -u +%Y-%m-%dT%H:%M:%SZ)
SERIES=$(api GET "/api/v1/workloads/$B1/metrics?metricType=GPU_UTILIZATION,GPU_MEMORY_USAGE_BYTES&start=$START&end=$END&numberOfSamples=10")
printf '%s' "$SERIES" | jq -e '.measurements[0].values | length > 0' >/dev/null || fail "no series: $SERIES"
figure "series: $(printf '%s' "$SERIES" | jq -c '[.measurements[] | {type, last: .values[-1].value}]')"
until_ok 90 is_phase burn1 Completed || fail "burn1 did not complete: $(phase burn1)"
until_ok 20 off_gpu "$P1" || fail "burn1's process still holds GPU $D1"

# ---- 3. preemption: SIGTERM, and the device freed ----
project gpu-low 0 >/dev/null
project gpu-high "$N_SMI" >/dev/null
submit fill gpu-low "$N_SMI" busy 600
until_ok 60 is_phase fill Running || fail "fill is $(phase fill)"
until_ok 20 pid_of fill || fail "fill has no process"
PF=$(pid_of fill)
DF=$(devices_of fill)
until_ok 30 on_gpu "$PF" "${DF%%,*}" || fail "fill's process is not on GPU ${DF%%,*}"
T0=$(now)
submit take gpu-high 1 busy 30
until_ok 60 is_phase take Running || fail "take is $(phase take): $(events take)"
events fill | grep -q "^Reclaimed: " || fail "fill has no Reclaimed event: $(events fill)"
got_term() { api GET "/api/v1/workloads/$(wl_id fill)/logs" | grep -qx term; }
until_ok 30 got_term || fail "fill did not get SIGTERM (no 'term' in its log)"
kill -0 "$PF" 2>/dev/null && fail "fill's process $PF still runs while take runs"
until_ok 10 off_gpu "$PF" || fail "fill's process $PF still holds a GPU while take runs"
until_ok 20 pid_of take || fail "take has no process"
PT=$(pid_of take)
until_ok 30 on_gpu "$PT" "$(devices_of take)" || fail "take's process is not on its GPU"
figure "preemption: take Running $(since "$T0") s after its submission; fill got SIGTERM and freed GPU(s) $DF"
api DELETE "/api/v1/workloads/$(wl_id take)" >/dev/null
api DELETE "/api/v1/workloads/$(wl_id fill)" >/dev/null
until_ok 60 off_gpu "$PT" || fail "take's process still holds its GPU after its deletion"

# ---- 4. the idle-GPU rule ----
project gpu-idle 1 "{\"trainingJobMaxIdleDurationSeconds\":$IDLE_S}" >/dev/null
submit hold1 gpu-idle 1 hold 600
until_ok 60 is_phase hold1 Running || fail "hold1 is $(phase hold1)"
until_ok 20 pid_of hold1 || fail "hold1 has no process"
PH=$(pid_of hold1)
T0=$(now)
until_ok $((IDLE_S + 60)) is_phase hold1 Stopped || fail "hold1 was not suspended: $(events hold1)"
events hold1 | grep -q "^Suspended: .*trainingJobMaxIdleDurationSeconds: the GPUs of hold1 were idle" \
  || fail "hold1: $(events hold1)"
until_ok 30 off_gpu "$PH" || fail "hold1's process still holds its GPU"
figure "idle rule: hold1 suspended $(since "$T0") s after it ran (limit $IDLE_S s): $(events hold1 | grep '^Suspended')"

# ---- 5. a device the pod was not given ----
# a training given no GPU whose program sets CUDA_VISIBLE_DEVICES itself
# and runs on GPU 0: one GpuOutsideAllocation event, and its pod's usage
# shows the device as not allocated
# shellcheck disable=SC2086
"$BUILD/allot" training submit rogue -p gpu-a -i local -g 0 -e "ALLOT_TEST=$T" \
  --command -- env CUDA_VISIBLE_DEVICES=0 $BURN busy 30 1024 >/dev/null || fail "allot training submit rogue"
until_ok 60 is_phase rogue Running || fail "rogue is $(phase rogue): $(events rogue)"
until_ok 20 pid_of rogue || fail "rogue has no process"
PR=$(pid_of rogue)
until_ok 30 on_gpu "$PR" 0 || fail "rogue's process $PR is not on GPU 0"
outside() {
  events rogue | grep -q "^GpuOutsideAllocation: pod 0 of rogue uses GPU 0 on gpu-node (process $PR, [0-9]* MiB), which it was not given: its devices are none (CUDA_VISIBLE_DEVICES=)$"
}
until_ok 30 outside || fail "no GpuOutsideAllocation event for rogue: $(events rogue)"
RU=$(api GET "/api/v1/workloads/$(wl_id rogue)/pods" | jq -c '.pods[0].gpuUsage')
printf '%s' "$RU" | jq -e '.devices[0] | .index == 0 and .allocated == false and .memoryUsedBytes >= 1073741824' \
  >/dev/null || fail "rogue's usage: $RU"
figure "outside: $(events rogue | grep '^GpuOutsideAllocation'); usage $RU"
api DELETE "/api/v1/workloads/$(wl_id rogue)" >/dev/null
until_ok 60 off_gpu "$PR" || fail "rogue's process still holds GPU 0 after its deletion"

echo "ok: allot-agent on $N_SMI x $MODEL_SMI, through $SOURCE"
