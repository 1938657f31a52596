#!/bin/sh
# e2e_partition.sh: fencing. allotd grants agents a lease of LEASE ms and
# calls a silent node lost only after the lease and a MARGIN; a pod must
# stop before its node is called lost, so that a workload runs in one
# place only. The workload w appends "NODE TIME" to one file every 50 ms.
#   1. node-a's agent reaches allotd through partition_proxy; w runs there.
#      The proxy stops forwarding (a partition: no answer, no reset). The
#      agent, alive, gets no answer: its lease ends and w stops on node-a
#      (its log says so); then allotd calls node-a lost and w runs on
#      node-b. The partition heals: node-a is Ready again, w stays on
#      node-b and nothing of it runs on node-a.
#   2. node-b's agent is killed (kill -9): nobody renews its lease, and
#      w's supervisor stops w by itself when the lease ends; then w runs
#      on node-a.
# The file then holds one run on node-a, one on node-b, one on node-a, in
# that order, never two at once. (And a registration whose heartbeat does
# not fit three times in the lease is refused.)
ALLOTD=$1
AGENT=$2
PROXY=$3
. "$(dirname "$0")/lib_agent.sh"

PROXY_PID=""
test_kill() { # lib.sh calls it last
  [ -z "$PROXY_PID" ] || kill "$PROXY_PID" 2>/dev/null || true
  for p in $(test_pids); do kill -9 "$p" 2>/dev/null || true; done
}

start_admin --rate-limit 0
"$PROXY" "$T/proxy.port" "$(cat "$T/port")" "$T/cut" >"$T/proxy.log" 2>&1 &
PROXY_PID=$!
poll 10 test -s "$T/proxy.port" || fail "the proxy did not start: $(cat "$T/proxy.log")"

cat >"$T/mark.sh" <<'EOF'
#!/bin/sh
while :; do echo "$ALLOT_NODE $(date +%s%N)" >>"$OUT/runs"; sleep 0.05; done
EOF
chmod +x "$T/mark.sh"
runs() { [ -f "$OUT/runs" ] && cut -d' ' -f1 "$OUT/runs" | uniq | paste -sd' ' -; }
runs_now() { [ "$(runs)" = "$1" ]; }
lines_on() { grep -c "^$1 " "$OUT/runs" || true; }
grows() { [ "$(lines_on "$1")" -gt "$2" ]; }

agent_token node-a
agent_token node-b
# a heartbeat period that does not fit three times in the lease is refused
agent_token node-x
out=$(curl -s -X POST "$URL/api/v1/agent/register" -H "Authorization: Bearer $(cat "$T/node-x.token")" \
  -H 'Content-Type: application/json' -d "{\"name\":\"node-x\",\"gpus\":[],\"heartbeatMs\":$LEASE}" -w '\n%{http_code}')
[ "$(printf '%s\n' "$out" | tail -n 1)" = 400 ] && printf '%s\n' "$out" | grep -q "lease of $LEASE ms" ||
  fail "a heartbeat as long as the lease was taken: $out"
DIRECT=$URL
URL="http://127.0.0.1:$(cat "$T/proxy.port")"
agent node-a --gpus 1
URL=$DIRECT
ready node-a
P=$(project p 1)
submit w "$P" 1 "$T/mark.sh" "" >/dev/null
wait_phase_long w Running
until_ok 10 runs_now node-a || fail "w does not run on node-a: $(runs)"
agent node-b --gpus 1
ready node-b

# --- 1: a partition between node-a and allotd ---------------------------------
touch "$T/cut"
until_ok 20 is_status node-a NotReady || fail "node-a is not NotReady"
none_on node-a || fail "w ran on node-a after allotd called node-a lost"
# the agent's own word for it: its loop notices the lease's end after its
# heartbeat gives up (a quarter of the lease), so possibly after allotd
# called the node lost; the pod's supervisor stopped the pod at the lease's
# end regardless (none_on above)
until_ok 5 grep -q "no answer from allotd within the lease ($LEASE ms): stopping 1 pod" \
  "$T/node-a.log" || fail "node-a's agent did not stop its pod: $(tail -n 5 "$T/node-a.log")"
until_ok 30 runs_now "node-a node-b" || fail "w does not run on node-b: $(runs)"
rm -f "$T/cut"
until_ok 20 is_status node-a Ready || fail "node-a is not Ready once the partition healed"
B=$(lines_on node-b)
until_ok 10 grows node-b $((B + 10)) || fail "w stopped on node-b"
none_on node-a || fail "w runs on node-a again after the partition healed"
[ "$(runs)" = "node-a node-b" ] || fail "w ran in two places: $(runs)"
[ "$(node_of w)" = node-b ] || fail "w is placed on $(node_of w), not node-b"

# --- 2: node-b's agent killed: the supervisor alone fences -----------------
kill -9 "$(cat "$T/node-b.pid")"
until_ok 20 is_status node-b NotReady || fail "node-b is not NotReady"
none_on node-b || fail "w ran on node-b after allotd called node-b lost"
until_ok 30 runs_now "node-a node-b node-a" || fail "w does not run on node-a again: $(runs)"
grep -q "the node's lease with allotd ended" "$T"/node-b/pods/*/log ||
  fail "w's supervisor on node-b did not stop it for the lease"
A=$(lines_on node-a)
until_ok 10 grows node-a $((A + 10)) || fail "w stopped on node-a"
[ "$(runs)" = "node-a node-b node-a" ] || fail "w ran in two places: $(runs)"

poll 10 agent_ended node-b || fail "node-b's agent is still running"
kill "$PROXY_PID"
wait "$PROXY_PID" || fail "the proxy exited with $?"
PROXY_PID=""
echo "e2e_partition: ok ($(runs))"
