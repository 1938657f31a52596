#!/bin/sh
# bench/agent/start.sh: from a submission to its process started by a real
# allot-agent, on an idle cluster on loopback.
#
#   bench/agent/start.sh [BUILD_DIR [RUNS [HEARTBEAT_MS ...]]]
#
# BUILD_DIR defaults to build, RUNS to 20, the heartbeat periods to 2000
# (allot-agent's default) and 200. For each period: a fresh allotd
# (--init, a SQLite file in a temporary directory, the default scheduling
# period) and one allot-agent (`--runtime none --gpus 8`, that period),
# then RUNS one-GPU trainings submitted one at a time, each a process that
# writes the time it started and exits; the next is submitted once the
# last has written. Per submission, from allotd's millisecond timestamps
# (the workload's createdAt, its Scheduled event) and the process's clock:
#   allotd  createdAt -> Scheduled: the row written, the scheduler's turn,
#           the binding written (allotd's own time, submit -> bind);
#   agent   Scheduled -> the process running: the agent's next heartbeat
#           brings the pod, its supervisor starts the process;
#   total   the client's clock before the POST -> the process running.
# Prints the median, p90 and the longest of each (ms), and the 1-minute
# load average before each run: above 1.5 the figures are indicative.
# Everything runs on this machine; the temporary directory is removed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" && pwd)
RUNS=${2:-20}
[ $# -ge 2 ] && shift 2 || shift $#
PERIODS=${*:-2000 200}
ALLOTD=$BUILD/allotd
AGENT=$BUILD/allot-agent
T=$(mktemp -d /tmp/allot-bench-start-XXXXXX)
SERVER="" AGENT_PID=""
export ALLOT_ADMIN_PASSWORD=bench-admin-password

for c in curl jq; do command -v $c >/dev/null || { echo "$c is missing" >&2; exit 2; }; done
[ -x "$ALLOTD" ] && [ -x "$AGENT" ] || { echo "build $ALLOTD and $AGENT first" >&2; exit 2; }

stop_all() {
  for p in $AGENT_PID $SERVER; do kill -TERM "$p" 2>/dev/null || true; done
  for p in $AGENT_PID $SERVER; do wait "$p" 2>/dev/null || true; done
  AGENT_PID="" SERVER=""
}
cleanup() { stop_all; rm -rf "$T"; }
trap cleanup EXIT INT TERM

call() { # METHOD PATH [BODY]
  curl -sf -X "$1" "$URL$2" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    ${3:+-d "$3"}
}

# start PERIOD: a fresh allotd and one agent heartbeating every PERIOD ms,
# its node Ready, a project with 8 GPUs of quota
start() {
  D=$T/run-$1
  mkdir -p "$D/out"
  (cd "$D" && "$ALLOTD" --init --db "$D/allot.db" >"$D/allotd.log" 2>&1)
  (cd "$D" && exec "$ALLOTD" --db "$D/allot.db" --listen 127.0.0.1:0 --port-file "$D/port" \
      >>"$D/allotd.log" 2>&1) &
  SERVER=$!
  until [ -s "$D/port" ]; do kill -0 "$SERVER" || { cat "$D/allotd.log" >&2; exit 1; }; sleep 0.01; done
  URL=http://127.0.0.1:$(cat "$D/port")
  TOKEN=$(curl -sf -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
    -d "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" |
    jq -r .accessToken)
  call POST /api/v1/agent/tokens '{"name":"n1"}' | jq -r .token >"$D/token"
  chmod 600 "$D/token"
  "$AGENT" --server "$URL" --token-file "$D/token" --name n1 --work-dir "$D/work" \
    --heartbeat-ms "$1" --runtime none --gpus 8 >"$D/agent.log" 2>&1 &
  AGENT_PID=$!
  until call GET /api/v1/nodes | jq -e '.nodes[] | select(.name == "n1" and .status == "Ready")' \
      >/dev/null; do sleep 0.05; done
  CLUSTER=$(call GET /api/v1/clusters | jq -r '.[0].uuid')
  PROJECT=$(call POST /api/v1/org-unit/projects \
    '{"name":"bench","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":8}}]}' | jq -r .id)
}

# ms_of ISO: milliseconds since the epoch of allotd's 2026-11-26T16:51:10.123Z
ms_of() {
  s=$(date -u -d "$(echo "$1" | sed 's/\.[0-9]*Z$/Z/')" +%s)
  echo "$s$(echo "$1" | sed 's/.*\.\([0-9][0-9][0-9]\)Z$/\1/')"
}

# one N: submits training sN, waits for its process's mark, prints
# "allotd agent total" in ms
one() {
  t0=$(date +%s%N)
  id=$(call POST /api/v1/workloads/trainings "{\"name\":\"s$1\",\"projectId\":\"$PROJECT\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"sh -c 'date +%s%N >$D/out/s$1.new; mv $D/out/s$1.new $D/out/s$1'\",
    \"compute\":{\"gpuDevicesRequest\":1}}}" | jq -r .workloadId)
  until [ -s "$D/out/s$1" ]; do sleep 0.002; done
  ran=$(cat "$D/out/s$1")
  created=$(call GET "/api/v1/workloads/$id" | jq -r .createdAt)
  bound=""
  until [ -n "$bound" ]; do
    bound=$(call GET "/api/v1/workloads/$id/events" |
      jq -r '[.events[] | select(.reason == "Scheduled" or .type == "Scheduled")][0].createdAt // empty')
  done
  c=$(ms_of "$created") b=$(ms_of "$bound")
  echo "$((b - c)) $((ran / 1000000 - b)) $(((ran - t0) / 1000000))"
}

# stats COLUMN < lines: median, p90 and max of that column
stats() {
  sort -n -k"$1" | awk -v k="$1" '{ v[NR] = $k } END {
    printf "median %d, p90 %d, longest %d ms", v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR] }'
}

for P in $PERIODS; do
  LOAD=$(cut -d' ' -f1 /proc/loadavg)
  start "$P"
  : >"$T/times"
  i=1
  while [ "$i" -le "$RUNS" ]; do one "$i" >>"$T/times"; i=$((i + 1)); done
  stop_all
  echo "== heartbeat $P ms, $RUNS submissions one at a time (load average $LOAD before the run$(
    awk -v l="$LOAD" 'BEGIN { if (l > 1.5) printf ": indicative only" }'))"
  echo "  allotd, submit -> bind:         $(stats 1 <"$T/times")"
  echo "  agent, bind -> process running: $(stats 2 <"$T/times")"
  echo "  total, client -> process:       $(stats 3 <"$T/times")"
done
