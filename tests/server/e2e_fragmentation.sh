#!/bin/sh
# e2e_fragmentation.sh: a pool set to fragmentation placement puts a pod
# somewhere else than bin-packing does, over HTTP against a real allotd
# (real SQLite file, simulated nodes).
#
# Two simulated nodes of 4 GPUs. A training of 2 GPUs is held on node-1
# and one of 1 GPU on node-2 (required affinity by host name; everything
# fits, so nothing is moved). The recent requests (the workload mix) are
# then 2-GPU and 1-GPU pods.
#   binpack:       a 1-GPU pod goes to node-1, the fullest (2 free left);
#   fragmentation: it goes to node-2: on node-1 it would leave one GPU
#                  that no 2-GPU pod can use, on node-2 it leaves 2 free.
# The same request is made in each mode, the pool switched by PATCH.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/frag.db" --simulate-nodes 2x4:default
TOKEN=$(login admin "$ALLOT_ADMIN_PASSWORD")
cluster_ids "$TOKEN"
P=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"team-a\",\"clusterId\":\"$CLUSTER\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
  \"gpu\":{\"deserved\":8,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$TOKEN" | jq -r .id)

# training NAME GPUS [HOST]: submitted, on HOST when given, and Running
training() {
  affinity=
  [ -n "${3:-}" ] && affinity=",\"nodeAffinityRequired\":{\"nodeSelectorTerms\":[{
    \"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",
    \"values\":[\"$3\"]}]}]}"
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",
    \"compute\":{\"gpuDevicesRequest\":$2}$affinity}}" "$TOKEN" >/dev/null
  poll 20 has_phase "$TOKEN" "$1" Running || fail "$1 is not Running: $(expect 200 GET \
    "/api/v1/workloads?filterBy=name==$1" "" "$TOKEN" | jq -c '.workloads[0] | [.phase, .phaseMessage]')"
}
wl_id() { workload_id "$TOKEN" "$1"; }
node_of() {
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$TOKEN" | jq -r '.pods[0].nodeName'
}
gone() { [ "$(expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$TOKEN" |
              jq '.workloads | length')" = 0 ]; }
# sets the pool's GPU placement; $2: the word answered (fragmentation, the
# default, is answered null)
placement() {
  expect 200 PATCH "/api/v1/node-pools/$POOL" "{\"placementStrategy\":{\"gpu\":\"$1\"}}" \
    "$TOKEN" | jq -e ".placementStrategy.gpu == ${2:-\"$1\"}" >/dev/null || fail "pool not set to $1"
}

training pair 2 node-1
training single 1 node-2

placement binpack
training packed 1
[ "$(node_of packed)" = node-1 ] || fail "binpack put the 1-GPU pod on $(node_of packed), not node-1"
expect 202 DELETE "/api/v1/workloads/$(wl_id packed)" "" "$TOKEN" >/dev/null
poll 20 gone packed || fail "packed is not gone"

placement fragmentation null
training measured 1
[ "$(node_of measured)" = node-2 ] ||
  fail "fragmentation put the 1-GPU pod on $(node_of measured), not node-2"
# and the hole it kept takes a 2-GPU pod at once
training pair-2 2
[ "$(node_of pair-2)" = node-1 ] || fail "pair-2 runs on $(node_of pair-2), not node-1"
stop
echo "e2e_fragmentation: ok"
