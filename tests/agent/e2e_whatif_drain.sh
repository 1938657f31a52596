#!/bin/sh
# e2e_whatif_drain.sh: POST /api/v1/whatif's drainNode against a node that
# really leaves. Two agents (node-1: 2 GPUs, node-2: 4 GPUs) run three
# 1-GPU trainings; the answer to draining the node of w1 names its
# workloads (reason drain) and where they would run; then that node's
# agent is killed (kill -9): allotd calls the node lost after the lease,
# and the cluster must reach the state the answer foresaw (the same
# workloads on the same nodes and devices; tests/server/whatif_lib.sh).
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"
. "$(dirname "$0")/../server/whatif_lib.sh"

start_cluster node-1:2 node-2:4
P=$(project team-a 6)
for w in w1 w2 w3; do submit "$w" "$P" 1 sleep 600 >/dev/null; done
for w in w1 w2 w3; do wait_phase_long "$w" Running; done
settled

NODE=$(expect 200 GET "/api/v1/workloads/$(wl_id w1)/pods" "" "$ADMIN" | jq -r '.pods[0].nodeName')
S0=$(state)
A=$(expect 200 POST /api/v1/whatif "{\"changes\":[{\"type\":\"drainNode\",\"nodeName\":\"$NODE\"}]}" "$ADMIN")
printf '%s' "$A" | jq -e '[.stopped[], .moved[] | select(.reason == "drain") | .name] | index("w1")' \
  >/dev/null || fail "draining $NODE does not name w1: $A"
printf '%s' "$A" | jq -e --arg n "$NODE" '[.moved[], .started[] | .pods[].nodeName] | all(. != $n)' \
  >/dev/null || fail "the answer places something on the drained $NODE: $A"
is_state "$S0" || fail "a what-if changed the cluster: $(state)"

kill -9 "$(cat "$T/$NODE.pid")"
until_ok 30 is_status "$NODE" NotReady || fail "$NODE is not NotReady"
reaches "$(predict "$S0" "$A")" "the answer to draining $NODE"
stop_agents
stop
