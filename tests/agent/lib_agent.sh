# lib_agent.sh: helpers for the agent's end-to-end tests, on top of
# ../server/lib.sh: agent tokens, agents started in $T, the processes of
# workloads (found by their environment), and a cleanup that leaves no
# process of the test behind. ALLOTD and AGENT are the binaries.

. "$(dirname "$0")/../server/lib.sh"

OUT=$T/out
mkdir -p "$OUT"
HB=200          # agents' heartbeat, ms
ORPHAN=1500     # pods stop this long after their agent is gone, ms

# Every process of this test: its agents, their supervisors (their command
# lines name $T) and the workloads (their environment holds TESTRUN=$T).
test_pids() {
  { grep -l -F -- "$T/" /proc/[0-9]*/cmdline; grep -l -z -x "TESTRUN=$T" /proc/[0-9]*/environ; } \
    2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | grep -vx "$$" | sort -u
}

cleanup() {
  for p in $(test_pids); do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; fi
  rm -rf "$T"
}

# until SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
until_ok() {
  n=$(($1 * 10)); shift
  while ! "$@" >/dev/null 2>&1; do
    n=$((n - 1)); [ $n -gt 0 ] || return 1
    sleep 0.1
  done
}

# agent_token NAME: creates an agent token, writes it to $T/NAME.token (0600).
agent_token() {
  expect 201 POST /api/v1/agent/tokens "{\"name\":\"$1\"}" "$ADMIN" | jq -r .token >"$T/$1.token"
  chmod 600 "$T/$1.token"
}

# agent NAME [options...]: starts allot-agent for node NAME (token $T/NAME.token,
# work directory $T/NAME); its pid goes to $T/NAME.pid.
agent() {
  name=$1; shift
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/sanitizer" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/sanitizer" \
  "$AGENT" --server "$URL" --token-file "$T/$name.token" --name "$name" \
    --work-dir "$T/$name" --heartbeat-ms $HB --orphan-timeout-ms $ORPHAN --runtime none \
    "$@" >>"$T/$name.log" 2>&1 &
  echo $! >"$T/$name.pid"
}

# sanitizers_quiet: agents and their supervisors (built with sanitizers or
# not) reported nothing.
sanitizers_quiet() {
  for f in "$T"/sanitizer*; do
    [ -e "$f" ] || continue
    cat "$f" >&2
    fail "a sanitizer reported on an agent or a supervisor ($f)"
  done
}

node_status() {
  expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -r ".nodes[] | select(.name == \"$1\") | .status"
}

is_status() { [ "$(node_status "$1")" = "$2" ]; }
is_phase() { [ "$(phase "$ADMIN" "$1")" = "$2" ]; }

# wait_phase_long NAME PHASE: like wait_phase, with 20 s for slow builds.
wait_phase_long() {
  until_ok 20 is_phase "$1" "$2" || fail "$1 did not reach $2 (is $(phase "$ADMIN" "$1"))"
}

wl_id() {
  expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$ADMIN" | jq -r '.workloads[0].id'
}

# submit NAME PROJECT GPUS COMMAND ARGS [GRACE]: a training whose pod runs
# COMMAND ARGS with OUT and TESTRUN in its environment.
submit() {
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$4\",
    \"args\":\"$5\",\"terminationGracePeriodSeconds\":${6:-2},
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"}],\"compute\":{\"gpuDevicesRequest\":$3}}}" \
    "$ADMIN" | jq -r .workloadId
}

# workload_pids: every workload process of this test.
workload_pids() {
  grep -l -z -x "TESTRUN=$T" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||'
  return 0
}

# pids_of NAME: the processes of workload NAME that lead their process
# group (the workload's own process, not what it started).
pids_of() {
  for p in $(grep -l -z -x "ALLOT_WORKLOAD_NAME=$1" \
      $(workload_pids | sed 's|.*|/proc/&/environ|') /dev/null 2>/dev/null |
      sed 's|^/proc/||; s|/environ$||'); do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    [ "$(printf '%s\n' "$s" | sed 's/.*) //' | cut -d' ' -f3)" = "$p" ] && echo "$p"
  done
  return 0
}

# none_on NODE: no workload process of this test runs on NODE.
none_on() {
  [ -z "$(grep -l -z -x "ALLOT_NODE=$1" $(workload_pids | sed 's|.*|/proc/&/environ|') \
      /dev/null 2>/dev/null)" ]
}

no_workloads() { [ -z "$(workload_pids)" ]; }
has_process() { [ -n "$(pids_of "$1")" ]; }
no_process() { [ -z "$(pids_of "$1")" ]; }

# env_of PID VAR: a variable of a process's environment.
env_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p"; }

# devices_of NAME: the devices the scheduler gave pod 0 of NAME, "0,1".
devices_of() {
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$ADMIN" |
    jq -r '.pods[0].gpuDevices | map(tostring) | join(",")'
}

node_of() {
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$ADMIN" | jq -r '.pods[0].nodeName'
}

# events_of NAME: "Reason: message" lines.
events_of() {
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/events" "" "$ADMIN" |
    jq -r '.events[] | "\(.reason): \(.message)"'
}

# project NAME GPUS: a project with GPUS deserved in the default pool; prints its id.
project() {
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"clusterId\":\"$CLUSTER\",
    \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
    \"gpu\":{\"deserved\":$2,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$ADMIN" | jq -r .id
}

# A script that notes its devices, says it started, and on SIGTERM notes it
# got it and exits 0.
cat >"$T/trap.sh" <<'EOF'
#!/bin/sh
echo "$CUDA_VISIBLE_DEVICES" >"$OUT/$ALLOT_WORKLOAD_NAME.cuda"
trap 'echo term >>"$OUT/$ALLOT_WORKLOAD_NAME.term"; exit 0' TERM
echo "started $ALLOT_WORKLOAD_NAME on devices $CUDA_VISIBLE_DEVICES"
while :; do sleep 0.1; done
EOF
chmod +x "$T/trap.sh"
