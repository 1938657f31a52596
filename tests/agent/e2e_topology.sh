#!/bin/sh
# e2e_topology.sh: topology-aware placement through the API, with real
# agents: four agents of 2 GPUs report their rack at registration (a1, a2
# in rack r1; b1, b2 in r2; --labels). A network topology (block, rack,
# host) is created and the default pool names it. Two non-preemptible
# workspaces hold one GPU on a1 and one on b1: 6 GPUs are free, 3 in each
# rack. g, a distributed gang of 2 pods x 2 GPUs that requires one rack,
# waits (Pending, its message naming the level and the largest free room
# in one rack, 3 GPUs) though the cluster could hold it across racks; once
# the holder on a1 is deleted, g lands in rack r1 whole. p1 (2 pods x 1
# GPU, preferring one rack) fits rack r2 and stays there; once g is gone,
# p2 (5 pods x 1 GPU, preferring one rack) finds no rack with 5 free and
# spreads over both. A fifth agent without the rack label puts the pool in
# TopologyMismatch, naming it. Deleting the topology takes it off the pool.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_admin --rate-limit 0
for n in a1 a2 b1 b2; do
  rack=r1
  [ "${n#b}" != "$n" ] && rack=r2
  new_agent "$n" --gpus 2 --labels "example.com/block=b1,example.com/rack=$rack"
done
ready a1 a2 b1 b2

# the topology, and the default pool naming it
TOPO=$(expect 201 POST /api/v1/network-topologies "{\"name\":\"racks\",\"clusterId\":\"$CLUSTER\",
  \"levels\":[\"example.com/block\",\"example.com/rack\",\"kubernetes.io/hostname\"]}" "$ADMIN" |
  jq -r .id)
expect 400 POST /api/v1/network-topologies "{\"name\":\"Bad\",\"clusterId\":\"$CLUSTER\",
  \"levels\":[\"example.com/rack\"]}" "$ADMIN" >/dev/null
expect 400 POST /api/v1/network-topologies "{\"name\":\"twice\",\"clusterId\":\"$CLUSTER\",
  \"levels\":[\"example.com/rack\",\"example.com/rack\"]}" "$ADMIN" >/dev/null
[ "$(expect 200 GET /api/v1/network-topologies/count "" "$ADMIN" | jq .count)" = 1 ] ||
  fail "not one topology"
expect 400 PATCH "/api/v1/node-pools/$POOL" '{"networkTopologyId":"no-such-topology"}' "$ADMIN" \
  >/dev/null
expect 200 PATCH "/api/v1/node-pools/$POOL" "{\"networkTopologyId\":\"$TOPO\"}" "$ADMIN" |
  jq -e --arg t "$TOPO" '.networkTopologyId == $t and .networkTopologyName == "racks" and
    (.status.conditions | length) == 0' >/dev/null || fail "the pool does not name the topology"
expect 200 GET "/api/v1/network-topologies/$TOPO" "" "$ADMIN" |
  jq -e '.nodePools == ["default"] and (.levels | length) == 3' >/dev/null ||
  fail "the topology: $(expect 200 GET "/api/v1/network-topologies/$TOPO" "" "$ADMIN")"

P=$(project p 8)
on_node() { # NAME NODE: a non-preemptible workspace of one GPU on NODE
  expect 202 POST /api/v1/workloads/workspaces "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"sleep\",
    \"args\":\"1000\",\"terminationGracePeriodSeconds\":1,\"compute\":{\"gpuDevicesRequest\":1},
    \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
    \"nodeAffinityRequired\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{
    \"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"$2\"]}]}]}}}" \
    "$ADMIN" >/dev/null
}
gang() { # NAME WORKERS GPUS PLACEMENT-FIELD: a distributed gang of a master and WORKERS
  expect 202 POST /api/v1/workloads/distributed "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"useGivenNameAsPrefix\":false,\"spec\":{\"image\":\"busybox\",
    \"command\":\"sleep 1000\",\"distributedFramework\":\"PyTorch\",\"numWorkers\":$2,
    \"terminationGracePeriodSeconds\":1,\"compute\":{\"gpuDevicesRequest\":$3},
    \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
    \"topology\":{\"name\":\"racks\",\"$4\":\"example.com/rack\"}}}" "$ADMIN" >/dev/null
}
racks_of() { # NAME: the racks its pods run in, "r1 r2"
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$ADMIN" |
    jq -r '[.pods[].nodeName | select(. != null) | if startswith("a") then "r1" else "r2" end]
      | unique | join(" ")'
}
message_of() { expect 200 GET "/api/v1/workloads/$(wl_id "$1")" "" "$ADMIN" | jq -r .phaseMessage; }
says() { message_of "$1" | grep -qF -- "$2"; }

on_node h1 a1
on_node h2 b1
until_ok 30 is_phase h1 Running || fail "h1: $(message_of h1) $(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -c "[.nodes[] | {name, labels, nodePool, status}]")"
wait_phase_long h2 Running

# required: waits for a rack, not for GPUs
gang g 1 2 requiredPlacement
WHY="requires its pods inside one example.com/rack: they need 4 GPUs together, and the"
WHY="$WHY largest free room in one example.com/rack of node pool default is 3 GPUs"
until_ok 20 says g "$WHY" || fail "g's message: $(message_of g)"
is_phase g Pending || fail "g is $(phase "$ADMIN" g)"
expect 200 GET "/api/v1/workloads/$(wl_id g)" "" "$ADMIN" |
  jq -e '.topology == {"name": "racks", "requiredPlacement": "example.com/rack"}' >/dev/null ||
  fail "g's topology: $(expect 200 GET "/api/v1/workloads/$(wl_id g)" "" "$ADMIN" | jq .topology)"
expect 202 DELETE "/api/v1/workloads/$(wl_id h1)" "" "$ADMIN" >/dev/null
wait_phase_long g Running
[ "$(racks_of g)" = r1 ] || fail "g runs in racks $(racks_of g)"

# preferred: one rack while one can hold it, both when none can
gang p1 1 1 preferredPlacement
wait_phase_long p1 Running
[ "$(racks_of p1)" = r2 ] || fail "p1 runs in racks $(racks_of p1)"
expect 202 DELETE "/api/v1/workloads/$(wl_id p1)" "" "$ADMIN" >/dev/null
expect 202 DELETE "/api/v1/workloads/$(wl_id g)" "" "$ADMIN" >/dev/null
until_ok 20 no_process g || fail "g's processes did not stop"
gang p2 4 1 preferredPlacement
wait_phase_long p2 Running
[ "$(racks_of p2)" = "r1 r2" ] || fail "p2 runs in racks $(racks_of p2)"

# a node without the rack label: the pool's TopologyMismatch names it
new_agent c1 --gpus 1 --labels example.com/block=b1
ready c1
mismatch() {
  expect 200 GET "/api/v1/node-pools/$POOL" "" "$ADMIN" | jq -e '.status.conditions ==
    [{"type": "NetworkTopology", "reason": "TopologyMismatch", "message": .status.conditions[0].message,
      "status": "True", "nodes": ["c1"]}]' >/dev/null
}
until_ok 10 mismatch || fail "no mismatch: $(expect 200 GET "/api/v1/node-pools/$POOL" "" "$ADMIN" |
  jq -c .status.conditions)"

# deleting the topology takes it off the pool
expect 204 DELETE "/api/v1/network-topologies/$TOPO" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/node-pools/$POOL" "" "$ADMIN" |
  jq -e '.networkTopologyId == null and (.status.conditions | length) == 0' >/dev/null ||
  fail "the pool still names the deleted topology"
expect 404 GET "/api/v1/network-topologies/$TOPO" "" "$ADMIN" >/dev/null
finish
