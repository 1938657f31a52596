# lib_agent.sh: helpers for the agent's end-to-end tests, on top of
# ../server/lib.sh: agent tokens, agents started in $T, the processes of
# workloads (found by their environment), and a cleanup that leaves no
# process of the test behind. ALLOTD and AGENT are the binaries.
#
# Each agent runs under a small sh that records its exit status in
# $T/NAME.PID.rc. `stop_agent` sends SIGTERM and wants status 0 and no
# sanitizer report; a test that ends with agents still running gets the
# same stop for each on its way out, and then its workloads must have
# ended (they follow their agent when its lease ends).

. "$(dirname "$0")/../server/lib.sh"

OUT=$T/pods-out  # what workloads write (not $T/out, the client tests' output file)
mkdir -p "$OUT"
HB=200          # agents' heartbeat, ms
# pods stop when no heartbeat was answered this long, ms: room for allotd
# stalled a few seconds on a loaded machine (at 3 s, a stall under the whole
# suite's load let the agents stop the pods of a test that expects them to run)
LEASE=$((6000 * SCALE))
# allotd calls a silent node lost after the lease and this, ms; a pod gets
# SIGKILL half of it after SIGTERM (1 s: under the sanitizers' load a pod's
# SIGTERM trap missed the 0.5 s of a 1 s margin)
MARGIN=$((2000 * SCALE))
# Ports of this test's own: tests run at once share the machine's ports.
# 100 slots of RDV_WIDTH ports from 10000 (below Linux's ephemeral ports,
# 32768 and up); a test holds its slot with flock on fd 8 while it or a
# process it started lives. The slot's first 90 ports are the range its
# distributed workloads meet on (allotd's --rendezvous-ports: each allotd,
# with a database of its own, would hand out the same first block), the
# last 10, from TEST_PORT, the ports its workloads' servers listen on.
RDV_WIDTH=100
RDV_DIR=${TMPDIR:-/tmp}/allot-test-rendezvous
mkdir -p "$RDV_DIR"
rdv_slot=0
until exec 8>"$RDV_DIR/slot.$rdv_slot" && flock -n 8; do
  rdv_slot=$((rdv_slot + 1))
  [ "$rdv_slot" -lt 100 ] || fail "no free slot of rendezvous ports in $RDV_DIR"
done
RDV_FIRST=$((10000 + rdv_slot * RDV_WIDTH))
RDV_LAST=$((RDV_FIRST + RDV_WIDTH - 11))
TEST_PORT=$((RDV_LAST + 1))
START_OPTS="--agent-lease-ms $LEASE --agent-lease-margin-ms $MARGIN --rendezvous-ports $RDV_FIRST-$RDV_LAST"
# with ALLOT_TEST_DB=pg (by hand), allotd's leader lease long enough to ride
# out a loaded machine's stalls: a new leadership loads the model again and
# runs a full cycle, which agent/e2e counts (on SQLite allotd leads for as
# long as it runs, and the option is refused)
[ "${ALLOT_TEST_DB:-}" != pg ] || START_OPTS="$START_OPTS --leader-lease-ms $((15000 * SCALE))"

# Every process of this test: its agents, their supervisors (their command
# lines name $T) and the workloads (their environment holds TESTRUN=$T).
test_pids() {
  { grep -l -F -- "$T/" /proc/[0-9]*/cmdline; grep -l -z -x "TESTRUN=$T" /proc/[0-9]*/environ; } \
    2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | grep -vx "$$" | sort -u
}

# test_cleanup (lib.sh calls it when the test passed): the agents still
# running stop cleanly, and no workload process outlives them.
test_cleanup() {
  stop_agents || return 1
  poll 15 no_workloads || { fail "workload processes were left behind: $(workload_pids)"; return 1; }
  sanitizers_quiet
}

# test_kill (lib.sh calls it last): whatever of the test still runs is killed.
test_kill() {
  for p in $(test_pids); do kill -9 "$p" 2>/dev/null || true; done
}

# until_ok SECONDS CMD...: polls CMD until it succeeds (a deadline, scaled).
until_ok() { poll "$@" 2>/dev/null; }

# agent_token NAME: creates an agent token, writes it to $T/NAME.token (0600).
agent_token() {
  expect 201 POST /api/v1/agent/tokens "{\"name\":\"$1\"}" "$ADMIN" | jq -r .token >"$T/$1.token"
  chmod 600 "$T/$1.token"
}

# agent NAME [options...]: starts allot-agent for node NAME (token $T/NAME.token,
# work directory $T/NAME); its pid goes to $T/NAME.pid, its exit status to
# $T/NAME.PID.rc when it ends.
agent() {
  name=$1; shift
  rm -f "$T/$name.pid"
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/sanitizer" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/sanitizer" \
  sh -c '"$@" & p=$!; echo $p >"$0.pid.new"; mv "$0.pid.new" "$0.pid"
         wait $p; rc=$?; echo $rc >"$0.$p.rc.new"; mv "$0.$p.rc.new" "$0.$p.rc"' "$T/$name" \
    "$AGENT" --server "$URL" --token-file "$T/$name.token" --name "$name" \
    --work-dir "$T/$name" --heartbeat-ms $HB --runtime none \
    "$@" >>"$T/$name.log" 2>&1 &
  poll 10 test -s "$T/$name.pid" || fail "agent $name did not start"
}

# new_agent NAME [options...]: a token for node NAME (agent_token) and its
# agent started with the options (agent).
new_agent() {
  agent_token "$1"
  agent "$@"
}

# ready NODE...: each node is Ready within 20 s.
ready() {
  for _n in "$@"; do until_ok 20 is_status "$_n" Ready || fail "$_n is not Ready"; done
}

# start_cluster NODE:GPUS...: allotd as admin with no rate limits, and an
# agent of that many GPUs on each node, all Ready.
start_cluster() {
  start_admin --rate-limit 0
  for _a in "$@"; do new_agent "${_a%%:*}" --gpus "${_a#*:}"; done
  ready $(for _a in "$@"; do printf '%s\n' "${_a%%:*}"; done)
}

# agent_running NAME: its last start has not ended.
agent_running() {
  [ -s "$T/$1.pid" ] && [ ! -e "$T/$1.$(cat "$T/$1.pid").rc" ]
}

# agent_rc NAME: the exit status of its last start, once it has ended.
agent_rc() { cat "$T/$1.$(cat "$T/$1.pid").rc"; }

# stop_agent NAME: SIGTERM; it must exit 0 within 30 s, with no sanitizer report.
stop_agent() {
  agent_running "$1" || { fail "agent $1 was not running when it was to stop"; return 1; }
  kill -TERM "$(cat "$T/$1.pid")"
  poll 30 agent_ended "$1" || { fail "agent $1 did not stop within $((30 * SCALE)) s of SIGTERM"; return 1; }
  [ "$(agent_rc "$1")" = 0 ] ||
    { fail "agent $1 exited with status $(agent_rc "$1") after SIGTERM: $(tail -n 5 "$T/$1.log")"; return 1; }
  sanitizers_quiet
}
agent_ended() { ! agent_running "$1"; }

# stop_agents: every agent still running stops cleanly.
stop_agents() {
  for f in "$T"/*.pid; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .pid)
    if agent_running "$n"; then stop_agent "$n" || return 1; fi
  done
}

# finish [NODE...]: a test's end: the named agents stop cleanly (they must
# be running), then every other one; no workload process outlives them;
# allotd stops cleanly; no sanitizer reported.
finish() {
  for _n in "$@"; do stop_agent "$_n"; done
  stop_agents
  until_ok 15 no_workloads || fail "workload processes were left behind: $(workload_pids)"
  stop
  sanitizers_quiet
}

# sanitizers_quiet: agents and their supervisors (built with sanitizers or
# not) reported nothing.
sanitizers_quiet() {
  for f in "$T"/sanitizer*; do
    [ -e "$f" ] || continue
    cat "$f" >&2
    fail "a sanitizer reported on an agent or a supervisor ($f)" || return 1
  done
}

# node_status NODE: its status, nothing while allotd has no such node.
# ready() polls it every 50 ms while agents register, so the shell reads
# allotd's compact list ({"nodes":[{"id":...,"name":...,"clusterUuid":...,
# "nodePool":...,"status":...}]}) as workload_field does; a node written
# otherwise goes through jq.
node_status() {
  _ns=$(expect 200 GET /api/v1/nodes "" "$ADMIN")
  case $_ns in
  '{"nodes":['*"\"name\":\"$1\",\"clusterUuid\":\""*)
    _ns=${_ns#*\"name\":\"$1\",\"clusterUuid\":\"}; _ns=${_ns#*\"status\":\"}
    printf '%s\n' "${_ns%%\"*}" ;;
  '{"nodes":['*) case $_ns in *"\"name\":\"$1\""*) ;; *) return 0 ;; esac
    printf '%s\n' "$_ns" | jq -r ".nodes[] | select(.name == \"$1\") | .status" ;;
  *) printf '%s\n' "$_ns" | jq -r ".nodes[] | select(.name == \"$1\") | .status" ;;
  esac
}

is_status() { [ "$(node_status "$1")" = "$2" ]; }
is_phase() { [ "$(phase "$ADMIN" "$1")" = "$2" ]; }

# wait_phase_long NAME PHASE: like wait_phase, with 30 s for agents' round trips.
wait_phase_long() {
  poll 30 is_phase "$1" "$2" || fail "$1 did not reach $2 (is $(phase "$ADMIN" "$1"))"
}

wl_id() { workload_id "$ADMIN" "$1"; }

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

# pid_gone PID: the process is gone and reaped. pids_of stops listing a
# killed process before its parent (the agent) reaps it, as its environ
# reads empty; kill -0 answers until the reaping.
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

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
project() { quota_project "$1" "$2" "$ADMIN"; }

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
