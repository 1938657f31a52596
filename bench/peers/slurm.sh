#!/bin/bash
# bench/peers/slurm.sh: the same work on allot and on Slurm, one after the
# other, on this machine's loopback.
#
#   bench/peers/slurm.sh [--small] [--nodes N] [--clients N] [--cli-jobs N]
#                        [--queue N] [--allotd PATH] [--allot PATH]
#                        [--only allot|slurm] [--steps 1,2,3]
#
# Slurm (Debian 12's 22.05: slurmctld, slurmd, slurm-client, munge,
# slurmrestd, slurm-wlm-jwt-plugin; optional, see bench/README.md) runs as a
# fake cluster of N nodes x 8 GPUs (default 1,000; --small: 100), one slurmd
# per node on its own loopback port, each with 8 fake GPU device files, munge
# on a private socket, everything under a temporary directory. allot runs as
# allotd with --simulate-nodes Nx8 on a fresh database (synchronous=FULL).
#
# Steps, each on allot and then on Slurm:
#   1. 512 one-GPU jobs that fit, released at once on an empty cluster, until
#      all 512 run: allot: one POST /api/v1/workloads/submissions with count
#      512; Slurm: an array of 512 held one-GPU tasks, then scontrol release.
#   2. CLI submissions from --clients parallel clients (default 8),
#      --cli-jobs in all (default 800): `allot training submit` against
#      `sbatch --hold` (a held job is never scheduled; allot places its
#      workloads, so its figure includes that work).
#   3. REST submissions, 64 keep-alive connections, --queue jobs (default
#      10,000; --small: 2,000) of one GPU each onto a cluster that whole-node
#      jobs fill: allotd's POST /api/v1/workloads/trainings (each 202 is
#      committed with fsync) against slurmrestd's POST /slurm/v0.0.38/job/submit
#      (slurmctld saves its state without an fsync per job).
#   4. Scheduling passes with that queue pending on the full cluster, over
#      a window of 25 s: allot's cycle histogram (allot_sched_cycle_duration_
#      seconds, its mean and its largest bucket over the window) against
#      sdiag's main scheduler and backfill cycles (reset at the window's start;
#      sched_interval and bf_interval are 10 s so that both run in it).
# Each figure is printed with the ratio allot / Slurm. --steps runs only
# the steps named (3 includes 4); --only runs one system.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NODES=1000
CLIENTS=8
CLI_JOBS=800
QUEUE=10000
ALLOTD=$ROOT/build/allotd
ALLOT=$ROOT/build/allot
WINDOW=25
ONLY=both
STEPS=,1,2,3,
while [ $# -gt 0 ]; do
  case "$1" in
  --small) NODES=100; QUEUE=2000; CLI_JOBS=400; shift ;;
  --nodes) NODES=$2; shift 2 ;;
  --clients) CLIENTS=$2; shift 2 ;;
  --cli-jobs) CLI_JOBS=$2; shift 2 ;;
  --queue) QUEUE=$2; shift 2 ;;
  --allotd) ALLOTD=$(realpath "$2"); shift 2 ;;
  --allot) ALLOT=$(realpath "$2"); shift 2 ;;
  --only) ONLY=$2; shift 2 ;;
  --steps) STEPS=,$2,; shift 2 ;;
  -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "unknown argument: $1 (--help)" >&2; exit 2 ;;
  esac
done
[ "$NODES" -ge 64 ] || { echo "--nodes: at least 64 (512 GPUs must fit)" >&2; exit 2; }
for t in slurmctld slurmd sbatch squeue scontrol sdiag munged slurmrestd wrk jq curl; do
  command -v "$t" >/dev/null ||
    { echo "$t is missing: apt-get install slurmctld slurmd slurm-client munge slurmrestd slurm-wlm-jwt-plugin wrk jq curl" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "run as root: slurmd runs its jobs as their users" >&2; exit 2; }

T=$(mktemp -d /tmp/allot-peer-XXXXXX)
chmod 755 "$T"
PIDS="$T/pids"
: >"$PIDS"
ALLOTD_PID=""
# Every process of the Slurm cluster and of its jobs has SLURM_CONF naming
# this directory in its environment: those are the ones to end.
ours() { grep -l "SLURM_CONF=$T/slurm/slurm.conf" /proc/[0-9]*/environ 2>/dev/null |
  sed 's|/proc/\([0-9]*\)/environ|\1|' | grep -vx "$$" || true; }
cleanup() {
  set +e
  trap - EXIT INT TERM
  [ -n "$ALLOTD_PID" ] && kill -9 "$ALLOTD_PID" 2>/dev/null
  [ -s "$PIDS" ] && while read -r p; do kill -TERM "$p" 2>/dev/null; done <"$PIDS"
  sleep 1
  for p in $(ours); do [ "$(cat /proc/"$p"/comm 2>/dev/null)" = bash ] || kill -9 "$p" 2>/dev/null; done
  [ -s "$PIDS" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done <"$PIDS"
  rm -rf "$T"
}
trap cleanup EXIT INT TERM

now_ms() { date +%s%3N; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.2f", a / b; else print "-" }'; }
# row LABEL ALLOT SLURM UNIT
row() {
  printf '  %-46s allot %10s %-4s Slurm %10s %-4s allot/Slurm %s\n' "$1" "$2" "$4" "$3" "$4" "$(ratio "$2" "$3")"
}
wrk_pct() { # wrk_pct FILE PCT: milliseconds
  awk -v p="$2%" '$1 == p { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 }
    else if (v ~ /ms$/) sub(/ms/, "", v); else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 }
    printf "%.1f", v }' "$1"
}
wrk_lua() { # a wrk script that posts BODY_FILE to PATH, stopping each thread after MAX requests
  cat >"$1" <<'EOF'
local body = io.open(os.getenv("PEER_BODY")):read("*a")
local max = tonumber(os.getenv("PEER_MAX"))
local run = os.getenv("PEER_RUN")
local path = os.getenv("PEER_PATH")
local next_id = 0
function setup(thread) thread:set("tid", next_id); next_id = next_id + 1 end
function init(args)
  n = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  for h in string.gmatch(os.getenv("PEER_HEADERS"), "[^\n]+") do
    local k, v = string.match(h, "^([^:]+): (.*)$")
    wrk.headers[k] = v
  end
end
function request()
  n = n + 1
  if n > max then wrk.thread:stop() end
  return wrk.format(nil, path, nil, (string.gsub(body, "NAME", run .. "-" .. tid .. "-" .. n)))
end
EOF
}
wrk_lua "$T/post.lua"

# ---- allot ----

allot_start() {
  rm -rf "$T/allot" && mkdir -p "$T/allot"
  export ALLOT_ADMIN_PASSWORD=bench-admin-password
  (cd "$T/allot" && "$ALLOTD" --init --db "$T/allot/a.db" >>"$T/allot/log" 2>&1)
  (cd "$T/allot" && exec "$ALLOTD" --db "$T/allot/a.db" --listen 127.0.0.1:0 \
      --port-file "$T/allot/port" --rate-limit 0 --max-pending-per-project 0 \
      --max-pending-per-user 0 --simulate-nodes "${NODES}x8" \
      --threads 64 >>"$T/allot/log" 2>&1) &
  ALLOTD_PID=$!
  while [ ! -s "$T/allot/port" ]; do
    kill -0 "$ALLOTD_PID" 2>/dev/null || { cat "$T/allot/log" >&2; exit 1; }
    sleep 0.01
  done
  AURL="http://127.0.0.1:$(cat "$T/allot/port")"
  export ALLOT_CONFIG="$T/allot/config.json"
  echo "$ALLOT_ADMIN_PASSWORD" | "$ALLOT" login --url "$AURL" --user admin --password-stdin >/dev/null
  ATOKEN=$(jq -r '.. | .accessToken? // empty' "$ALLOT_CONFIG" | head -n 1)
  [ -n "$ATOKEN" ] || ATOKEN=$(curl -s -X POST "$AURL/api/v1/token" -H 'Content-Type: application/json' \
    -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
    jq -r .accessToken)
  APROJECT=$(curl -s -X POST "$AURL/api/v1/org-unit/projects" -H "Authorization: Bearer $ATOKEN" \
    -H 'Content-Type: application/json' \
    -d "{\"name\":\"bench\",\"resources\":[{\"nodePool\":{\"name\":\"default\"},\"gpu\":{\"deserved\":$((NODES * 8))}}]}" |
    jq -r .id)
}
allot_stop() {
  kill -TERM "$ALLOTD_PID"
  wait "$ALLOTD_PID" || true
  ALLOTD_PID=""
}
acurl() { curl -s -H "Authorization: Bearer $ATOKEN" -H 'Content-Type: application/json' "$@"; }
allot_running() {
  acurl "$AURL/api/v1/workloads/count?filterBy=phase==Running" | jq .count
}
# allot_batch NAME COUNT GPUS: one request, COUNT workloads
allot_batch() {
  acurl -o /dev/null -w '%{http_code}' -X POST "$AURL/api/v1/workloads/submissions" \
    -d "{\"type\":\"Training\",\"name\":\"$1\",\"projectName\":\"bench\",\"count\":$2,
         \"spec\":{\"image\":\"x\",\"compute\":{\"gpuDevicesRequest\":$3}}}"
}
metric() { acurl "$AURL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

# ---- Slurm ----

slurm_start() {
  local i port
  mkdir -p "$T/slurm/state" "$T/slurm/spool" "$T/slurm/log" "$T/slurm/dev" "$T/slurm/munge"
  chmod 700 "$T/slurm/munge"
  dd if=/dev/urandom of="$T/slurm/munge/munge.key" bs=1024 count=1 2>/dev/null
  chmod 400 "$T/slurm/munge/munge.key"
  munged -F -f --socket="$T/slurm/munge/sock" --key-file="$T/slurm/munge/munge.key" \
    --pid-file="$T/slurm/munge/pid" --seed-file="$T/slurm/munge/seed" \
    --log-file="$T/slurm/munge/log" --num-threads=4 >>"$T/slurm/munge/out" 2>&1 &
  echo $! >>"$PIDS"
  dd if=/dev/urandom of="$T/slurm/jwt.key" bs=32 count=1 2>/dev/null
  chmod 600 "$T/slurm/jwt.key"
  for i in 0 1 2 3 4 5 6 7; do mknod "$T/slurm/dev/nvidia$i" c 1 3; done
  port=$((20000 + RANDOM % 2000))
  CTLD_PORT=$port
  NODE_LIST="n[0001-$(printf %04d "$NODES")]"
  cat >"$T/slurm/slurm.conf" <<EOF
ClusterName=peer
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/slurm/munge/sock
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$T/slurm/jwt.key
CredType=cred/munge
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool/%n
SlurmctldPidFile=$T/slurm/slurmctld.pid
SlurmdPidFile=$T/slurm/slurmd.%n.pid
SlurmctldLogFile=$T/slurm/log/slurmctld.log
SlurmdLogFile=$T/slurm/log/slurmd.%n.log
SlurmdDebug=error
SlurmctldDebug=error
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=10,bf_interval=10
PriorityType=priority/basic
GresTypes=gpu
MaxJobCount=200000
MaxArraySize=100001
ReturnToService=2
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmdParameters=config_overrides
MpiDefault=none
NodeName=$NODE_LIST NodeAddr=127.0.0.1 Port=[27001-$((27000 + NODES))] CPUs=64 RealMemory=512000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  cat >"$T/slurm/gres.conf" <<EOF
AutoDetect=off
NodeName=$NODE_LIST Name=gpu File=$T/slurm/dev/nvidia[0-7]
EOF
  export SLURM_CONF="$T/slurm/slurm.conf"
  while [ ! -S "$T/slurm/munge/sock" ]; do sleep 0.05; done
  slurmctld -D -i >>"$T/slurm/log/slurmctld.out" 2>&1 &
  echo $! >>"$PIDS"
  until scontrol ping 2>/dev/null | grep -q UP; do sleep 0.2; done
  for i in $(seq 1 "$NODES"); do
    mkdir -p "$T/slurm/spool/n$(printf %04d "$i")"
    slurmd -D -N "n$(printf %04d "$i")" >>"$T/slurm/log/slurmd.out" 2>&1 &
    echo $! >>"$PIDS"
  done
  until [ "$(sinfo -h -t idle -o %D 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')" -ge "$NODES" ]; do
    sleep 0.5
  done
  # slurmrestd runs as an unprivileged user with tokens (no accounting: v0.0.38)
  RPORT=$((port + 1))
  SLURM_JWT=daemon slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 -u nobody -g nogroup \
    "127.0.0.1:$RPORT" >>"$T/slurm/log/slurmrestd.out" 2>&1 &
  echo $! >>"$PIDS"
  STOKEN=$(scontrol token username=nobody lifespan=7200 | sed 's/^SLURM_JWT=//')
  until curl -s -o /dev/null "http://127.0.0.1:$RPORT/openapi"; do sleep 0.2; done
  SURL="http://127.0.0.1:$RPORT"
}
slurm_running() { squeue -h -t R -o %i | wc -l; }
slurm_pending() { squeue -h -t PD -o %i | wc -l; }
slurm_clear() {
  scancel --quiet --user=root 2>/dev/null || true
  scancel --quiet --user=nobody 2>/dev/null || true
  while [ "$(squeue -h -o %i | wc -l)" -gt 0 ]; do sleep 0.5; done
}

allot_submitted() { metric allot_workloads_submitted_total; }
slurm_submitted() { sdiag | awk '/Jobs submitted:/ { print $NF; exit }'; }

# rest_run URL OUT COUNTER: wrk posts $T/post.lua's bodies until COUNTER
# has grown by QUEUE (each wrk thread stops at QUEUE / 2; wrk itself only
# stops at its duration, so it is interrupted then, and prints its summary);
# REST_RATE is QUEUE over that time
rest_run() {
  local c0 t0 wpid
  c0=$($3)
  t0=$(now_ms)
  wrk -t2 -c64 -d600s --latency -s "$T/post.lua" "$1" >"$2" &
  wpid=$!
  poll_until_n "$3" $((c0 + QUEUE))
  REST_RATE=$(awk -v n="$QUEUE" -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.0f", n * 1000 / ms }')
  kill -INT "$wpid" 2>/dev/null || true
  wait "$wpid" || true
}
poll_until_n() { # like poll_until, polling every 50 ms
  local t0=$(now_ms) n
  while n=$($1) && [ "${n:-0}" -lt "$2" ]; do
    [ $(($(now_ms) - t0)) -lt 600000 ] || { echo "  gave up: $n of $2 after 600 s" >&2; break; }
    sleep 0.05
  done
}

# poll_until CMD N: seconds until CMD prints at least N (deadline 300 s)
poll_until() {
  local t0 n
  t0=$(now_ms)
  while :; do
    n=$($1)
    [ "$n" -ge "$2" ] && break
    [ $(($(now_ms) - t0)) -lt 300000 ] || { echo "  gave up: $n of $2 after 300 s" >&2; break; }
    sleep 0.02
  done
}

# ---- the measurements ----

step() { case "$STEPS" in *,$1,*) return 0 ;; esac; return 1; }

echo "== shape: $NODES nodes x 8 GPUs; $CLIENTS CLI clients, $CLI_JOBS CLI jobs; queue $QUEUE;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

allot_steps() {
echo "== allot: starting allotd ($NODES x 8 simulated)"
allot_start
if step 1; then
  T0=$(now_ms)
  code=$(allot_batch fit 512 1)
  [ "$code" = 202 ] || { echo "batch of 512: HTTP $code" >&2; exit 1; }
  poll_until allot_running 512
  A_FIT=$(($(now_ms) - T0))
fi
if step 2; then
  T0=$(now_ms)
  seq 1 "$CLI_JOBS" | xargs -P "$CLIENTS" -I{} "$ALLOT" training submit "cli-{}" -i x -g 1 -p bench >/dev/null
  A_CLI=$(awk -v n="$CLI_JOBS" -v ms=$(($(now_ms) - T0)) 'BEGIN { printf "%.0f", n * 1000 / ms }')
fi
allot_stop
step 3 || return 0
allot_start
# 3. fill, then REST onto the full cluster
left=$NODES
while [ "$left" -gt 0 ]; do # one 8-GPU workload per node, at most 1,000 a request
  n=$((left > 1000 ? 1000 : left))
  code=$(allot_batch "full$left" "$n" 8)
  [ "$code" = 202 ] || { echo "fill: HTTP $code" >&2; exit 1; }
  left=$((left - n))
done
poll_until allot_running "$NODES"
printf '{"name":"NAME","projectId":"%s","spec":{"image":"x","compute":{"gpuDevicesRequest":1}}}' \
  "$APROJECT" >"$T/abody"
sed 's/NAME/probe/' "$T/abody" | acurl -o "$T/aprobe" -w '%{http_code}' -X POST --data-binary @- \
  "$AURL/api/v1/workloads/trainings" >"$T/acode"
[ "$(cat "$T/acode")" = 202 ] || { echo "allotd refused a submission: HTTP $(cat "$T/acode")" >&2
  cat "$T/aprobe" >&2; exit 1; }
PEER_BODY="$T/abody" PEER_MAX=$((QUEUE / 2)) PEER_RUN=q PEER_PATH=/api/v1/workloads/trainings \
  PEER_HEADERS="Authorization: Bearer $ATOKEN" \
  rest_run "$AURL" "$T/aw" allot_submitted
A_REST=$REST_RATE; A_REST_P50=$(wrk_pct "$T/aw" 50); A_REST_P99=$(wrk_pct "$T/aw" 99)
# 4. cycles over the window
sleep 3
acurl "$AURL/metrics" | grep '^allot_sched_cycle_duration_seconds' >"$T/ah0"
sleep "$WINDOW"
acurl "$AURL/metrics" | grep '^allot_sched_cycle_duration_seconds' >"$T/ah1"
c0=$(awk '$1 ~ /_count$/ { print $2 }' "$T/ah0"); s0=$(awk '$1 ~ /_sum$/ { print $2 }' "$T/ah0")
c1=$(awk '$1 ~ /_count$/ { print $2 }' "$T/ah1"); s1=$(awk '$1 ~ /_sum$/ { print $2 }' "$T/ah1")
grep _bucket "$T/ah0" >"$T/ab0"
grep _bucket "$T/ah1" >"$T/ab1"
A_CYC_N=$((c1 - c0))
A_CYC_MEAN=$(awk -v s="$s1" -v t="$s0" -v n="$A_CYC_N" 'BEGIN { printf "%.1f", n ? (s - t) * 1000 / n : 0 }')
# the largest bucket a cycle of the window fell in (its upper bound)
A_CYC_MAX=$(paste "$T/ab0" "$T/ab1" | awk -v n="$A_CYC_N" '{ le = $1; sub(/.*le="/, "", le)
  sub(/".*/, "", le); if (n > 0 && $4 - $2 == n && !done) { done = 1; print le * 1000 } }
  END { if (!done) print "-" }')
A_PENDING=$(acurl "$AURL/api/v1/workloads/count?filterBy=phase==Pending" | jq .count)
allot_stop
}

slurm_steps() {
echo "== Slurm: starting slurmctld, $NODES slurmd, munged, slurmrestd"
T0=$(now_ms)
slurm_start
echo "  cluster up in $(($(now_ms) - T0)) ms"
if step 1; then
  JID=$(sbatch --parsable --hold --array=0-511 --gres=gpu:1 -n1 -o /dev/null --wrap 'sleep 3600')
  until [ "$(squeue -h -r -j "$JID" -o %i | wc -l)" -ge 512 ] 2>/dev/null; do sleep 0.1; done
  T0=$(now_ms)
  scontrol release "$JID"
  poll_until slurm_running 512
  S_FIT=$(($(now_ms) - T0))
  slurm_clear
fi
if step 2; then
  T0=$(now_ms)
  seq 1 "$CLI_JOBS" | xargs -P "$CLIENTS" -I{} sbatch --hold -J "cli-{}" --gres=gpu:1 -n1 -o /dev/null \
    --wrap true >/dev/null
  S_CLI=$(awk -v n="$CLI_JOBS" -v ms=$(($(now_ms) - T0)) 'BEGIN { printf "%.0f", n * 1000 / ms }')
  slurm_clear
fi
step 3 || return 0
# 3. fill, then REST onto the full cluster
sbatch --array=0-$((NODES - 1)) --gres=gpu:8 -n1 -o /dev/null --wrap 'sleep 3600' >/dev/null
poll_until slurm_running "$NODES"
cat >"$T/sbody" <<'EOF'
{"script":"#!/bin/sh\ntrue\n","job":{"name":"NAME","gres":"gpu:1","tasks":1,"current_working_directory":"/tmp","environment":{"PATH":"/usr/bin:/bin"}}}
EOF
# one by hand first: a refused body would make wrk measure errors
sed 's/NAME/probe/' "$T/sbody" | curl -s -o "$T/sprobe" -w '%{http_code}' -X POST \
  -H 'Content-Type: application/json' -H "X-SLURM-USER-NAME: nobody" -H "X-SLURM-USER-TOKEN: $STOKEN" \
  --data-binary @- "$SURL/slurm/v0.0.38/job/submit" >"$T/scode"
[ "$(cat "$T/scode")" = 200 ] && jq -e '.errors | length == 0' "$T/sprobe" >/dev/null ||
  { echo "slurmrestd refused a submission: HTTP $(cat "$T/scode")" >&2; cat "$T/sprobe" >&2; exit 1; }
PEER_BODY="$T/sbody" PEER_MAX=$((QUEUE / 2)) PEER_RUN=q PEER_PATH=/slurm/v0.0.38/job/submit \
  PEER_HEADERS="X-SLURM-USER-NAME: nobody
X-SLURM-USER-TOKEN: $STOKEN" \
  rest_run "$SURL" "$T/sw" slurm_submitted
S_REST=$REST_RATE; S_REST_P50=$(wrk_pct "$T/sw" 50); S_REST_P99=$(wrk_pct "$T/sw" 99)
# 4. cycles over the window
sleep 3
sdiag -r >/dev/null
sleep "$WINDOW"
sdiag >"$T/sdiag"
S_PENDING=$(slurm_pending)
sd() { # sd SECTION FIELD: the field's number in that section of sdiag's report
  awk -v sec="$1" -v f="$2" 'index($0, sec) == 1 { on = 1; next } /^[A-Z]/ { on = 0 }
    on { l = $0; sub(/^[ \t]+/, "", l)
         if (index(l, f ":") == 1) { sub(/^[^:]*: */, "", l); split(l, w, " "); print w[1]; exit } }' "$T/sdiag"
}
us_ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }
S_MAIN_MEAN=$(us_ms "$(sd "Main schedule statistics" "Mean cycle")")
S_MAIN_MAX=$(us_ms "$(sd "Main schedule statistics" "Max cycle")")
S_MAIN_N=$(sd "Main schedule statistics" "Total cycles")
S_BF_MEAN=$(us_ms "$(sd "Backfilling stats" "Mean cycle")")
S_BF_MAX=$(us_ms "$(sd "Backfilling stats" "Max cycle")")
S_BF_N=$(sd "Backfilling stats" "Total cycles")
[ "${REPORT_SDIAG:-}" = "" ] || cat "$T/sdiag"
}

for v in A_FIT A_CLI A_REST A_REST_P50 A_REST_P99 A_CYC_MEAN A_CYC_MAX A_CYC_N A_PENDING \
  S_FIT S_CLI S_REST S_REST_P50 S_REST_P99 S_MAIN_MEAN S_MAIN_MAX S_MAIN_N S_BF_MEAN S_BF_MAX S_BF_N \
  S_PENDING; do eval "$v=-"; done
[ "$ONLY" = slurm ] || allot_steps
[ "$ONLY" = allot ] || slurm_steps

echo "== results ($NODES x 8 GPUs; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
row "512 one-GPU jobs, release to all running" "$A_FIT" "$S_FIT" ms
row "CLI submissions, $CLIENTS clients" "$A_CLI" "$S_CLI" /s
row "REST submissions, 64 connections" "$A_REST" "$S_REST" /s
row "  REST p50" "$A_REST_P50" "$S_REST_P50" ms
row "  REST p99" "$A_REST_P99" "$S_REST_P99" ms
echo "  queue on the full cluster: allot $A_PENDING pending, Slurm $S_PENDING pending"
row "scheduling pass, mean over ${WINDOW} s (allot cycles / Slurm main)" "$A_CYC_MEAN" "$S_MAIN_MEAN" ms
row "scheduling pass, max (allot: its bucket's bound)" "$A_CYC_MAX" "$S_MAIN_MAX" ms
row "allot cycle mean / Slurm backfill cycle mean" "$A_CYC_MEAN" "$S_BF_MEAN" ms
row "allot cycle max bucket / Slurm backfill max" "$A_CYC_MAX" "$S_BF_MAX" ms
echo "  passes in the window: allot $A_CYC_N cycles; Slurm $S_MAIN_N main, $S_BF_N backfill"
