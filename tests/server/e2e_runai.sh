#!/bin/sh
# e2e_runai.sh: one pass through every route allot shares with Run:ai's
# OpenAPI document, the way a Run:ai script or a client generated from that
# document calls them: tokens, clusters, node pools, nodes, departments,
# projects, the four workload types (create, typed get, suspend, resume,
# delete), the generic list, count, get, events and pods, batch actions,
# metrics, users, service accounts and applications, roles and access
# rules, workload types, categories and priorities, policies. Every reply is
# validated against the document (lib.sh), and the check fails unless each
# of allot's shared operations answered 2xx at least once.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

# the rate limit off: this script alone sends more than 100 requests a
# second on a quiet machine (e2e_user_rate and e2e_login_guard test the limits)
start --db "$T/runai.db" --simulate-nodes 2x4 --sample-period-ms 100 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
V2=$(curl -s -X POST "$URL/api/v2/token" \
  -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD")
record POST /api/v2/token 200 "$V2"
[ "$(printf '%s' "$V2" | jq -r .token_type)" = Bearer ] || fail "v2 token: $V2"

# ---- clusters, node pools, nodes ----
cluster_ids "$ADMIN"
expect 200 GET /api/v1/node-pools/count "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/node-pools/$POOL" "" "$ADMIN" >/dev/null
NP=$(expect 201 POST /api/v1/node-pools '{"name":"spare","labelKey":"pool","labelValue":"spare"}' \
  "$ADMIN" | jq -r .id)
expect 200 PUT "/api/v1/node-pools/$NP" '{"labelKey":"pool","labelValue":"other"}' "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/node-pools/$NP" '{"placementStrategy":{"gpu":"spread"}}' "$ADMIN" >/dev/null
NT=$(expect 201 POST /api/v1/network-topologies "{\"name\":\"racks\",\"clusterId\":\"$CLUSTER\",
  \"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"]}" "$ADMIN" | jq -r .id)
expect 200 GET /api/v1/network-topologies "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/network-topologies?filterBy=name==racks" "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/network-topologies/count "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/network-topologies/$NT" "" "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/node-pools/$NP" "{\"networkTopologyId\":\"$NT\"}" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/network-topologies/$NT" "" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/node-pools/$NP" "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/nodes "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/nodes/count "" "$ADMIN" >/dev/null

# ---- departments and projects ----
DEP=$(expect 201 POST /api/v1/org-unit/departments "{\"name\":\"research\",\"clusterId\":\"$CLUSTER\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":8}}]}" \
  "$ADMIN" | jq -r .id)
expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/departments/count "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/departments/$DEP" "" "$ADMIN" >/dev/null
expect 200 PUT "/api/v1/org-unit/departments/$DEP" "{\"name\":\"research\",\"description\":\"d\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":8}}]}" "$ADMIN" >/dev/null
expect 200 PUT "/api/v1/org-unit/departments/$DEP/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":8,\"limit\":-1,\"overQuotaWeight\":1}}]" \
  "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/org-unit/departments/$DEP/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":8}}]" "$ADMIN" >/dev/null
project() { # NAME DESERVED
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"clusterId\":\"$CLUSTER\",
    \"parentId\":\"$DEP\",\"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
    \"gpu\":{\"deserved\":$2,\"limit\":-1,\"overQuotaWeight\":1},
    \"cpu\":{\"deserved\":1000},\"memory\":{\"deserved\":1024,\"units\":\"Mib\"}}]}" "$ADMIN" | jq -r .id
}
PA=$(project team-a 4)
PB=$(project team-b 4)
expect 200 GET /api/v1/org-unit/projects "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/projects/count "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/projects/$PA" "" "$ADMIN" >/dev/null
expect 200 PUT "/api/v1/org-unit/projects/$PB" "{\"name\":\"team-b\",\"clusterId\":\"$CLUSTER\",
  \"parentId\":\"$DEP\",\"description\":\"b\",\"resources\":[{\"nodePool\":{\"id\":\"$POOL\"},
  \"gpu\":{\"deserved\":4}}]}" "$ADMIN" >/dev/null
expect 200 PUT "/api/v1/org-unit/projects/$PB/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":4}}]" "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/org-unit/projects/$PB/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":4}}]" "$ADMIN" >/dev/null

# ---- the four workload types ----
submit() { # TYPE NAME PROJECT SPEC [EXTRA TOP-LEVEL FIELDS]
  expect 202 POST "/api/v1/workloads/$1" "{\"name\":\"$2\",\"projectId\":\"$3\",
    \"clusterId\":\"$CLUSTER\",\"spec\":$4${5:+,$5}}" "$ADMIN" | jq -r .workloadId
}
TR=$(submit trainings tr1 "$PA" '{"image":"busybox","compute":{"gpuDevicesRequest":1,
  "cpuCoreRequest":0.5,"cpuMemoryRequest":"512Mi"}}')
WS=$(submit workspaces ws1 "$PA" '{"image":"jupyter","compute":{"gpuPortionRequest":0.5}}')
DI=$(submit distributed di1 "$PB" '{"image":"torch","distributedFramework":"PyTorch",
  "numWorkers":1,"compute":{"gpuDevicesRequest":1}}')
IN=$(submit inferences in1 "$PB" '{"image":"vllm","compute":{"gpuDevicesRequest":1}}')
wait_phase "$ADMIN" tr1 Running
for t in trainings/$TR workspaces/$WS distributed/$DI inferences/$IN; do
  expect 200 GET "/api/v1/workloads/$t" "" "$ADMIN" >/dev/null
done
for t in trainings/$TR workspaces/$WS distributed/$DI; do
  expect 202 POST "/api/v1/workloads/$t/suspend" "" "$ADMIN" >/dev/null
  expect 202 POST "/api/v1/workloads/$t/resume" "" "$ADMIN" >/dev/null
done
expect 200 GET /api/v1/workloads "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/workloads?filterBy=name==tr1&sortBy=name&sortOrder=desc&limit=5" "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/workloads/count "" "$ADMIN" >/dev/null
wait_phase "$ADMIN" tr1 Running
for w in $TR $WS $DI $IN; do
  expect 200 GET "/api/v1/workloads/$w" "" "$ADMIN" >/dev/null
  expect 200 GET "/api/v1/workloads/$w/events" "" "$ADMIN" >/dev/null
  expect 200 GET "/api/v1/workloads/$w/pods" "" "$ADMIN" >/dev/null
done
B1=$(submit trainings batch1 "$PA" '{"compute":{"gpuDevicesRequest":1}}')
expect 200 POST /api/v1/workloads/batch "{\"ids\":[\"$B1\"],\"action\":\"suspend\"}" "$ADMIN" >/dev/null

# ---- pods, history, inference PATCH, priorities ----
N_PODS=$(expect 200 GET /api/v1/workloads/pods/count "" "$ADMIN" | jq .count)
[ "$N_PODS" -ge 4 ] || fail "/workloads/pods/count is $N_PODS"
expect 200 GET "/api/v1/workloads/pods?filterBy=workloadId==$TR&verbosity=full" "" "$ADMIN" |
  jq -e --arg tr "$TR" '[.pods[].workloadId] == [$tr]' >/dev/null || fail "/workloads/pods filter"
expect 200 GET "/api/v1/workloads/pods?sortBy=nodeName&limit=2" "" "$ADMIN" | jq -e '.next == 2' \
  >/dev/null || fail "/workloads/pods paging"
expect 200 GET "/api/v1/workloads/$TR/history?limit=100" "" "$ADMIN" |
  jq -e '.records[0].spec.event.reason == "Submitted" and .records[-1].meta.type == "PhaseUpdate"' \
  >/dev/null || fail "history"
expect 202 PATCH "/api/v1/workloads/inferences/$IN" '{"spec":{"image":"vllm:2",
  "autoscaling":{"minReplicas":2,"maxReplicas":2}}}' "$ADMIN" | jq -e '.spec.image == "vllm:2"' \
  >/dev/null || fail "inference PATCH"
expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN" | jq -e '.requestedPods.number == 2' >/dev/null ||
  fail "the inference does not ask for 2 replicas"
expect 501 PATCH "/api/v1/workloads/inferences/$IN" '{"spec":{"command":"x"}}' "$ADMIN" |
  jq -r .details | grep -q command || fail "an unpatchable field is not named"
# its revisions: the submitted spec and the PATCHed one (tests/server/e2e_reports.sh
# checks them)
REVS=$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions" "" "$ADMIN")
[ "$(printf '%s' "$REVS" | jq -r '[.revisions[].images[0]] | join(" ")')" = "vllm vllm:2" ] ||
  fail "the inference's revisions: $REVS"
[ "$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions/count" "" "$ADMIN" | jq .count)" = 2 ] ||
  fail "the inference's revisions count"
REV=$(printf '%s' "$REVS" | jq -r '.revisions[1].id')
expect 200 GET "/api/v1/workloads/inferences/revisions/$REV" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/workloads/inferences/revisions/$REV/events" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/workloads/inferences/revisions/$REV/history" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/workloads/inferences/revisions/$REV/pods" "" "$ADMIN" >/dev/null
IN_T0=$(date -u -d "@$(($(date -u +%s) - 60))" +%Y-%m-%dT%H:%M:%SZ)
IN_T1=$(date -u +%Y-%m-%dT%H:%M:%SZ)
expect 200 GET "/api/v1/workloads/inferences/$IN/metrics?metricType=GPU_ALLOCATION&start=$IN_T0&end=$IN_T1" \
  "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/workloads/inferences/$IN/metrics?metricType=THROUGHPUT&start=$IN_T0&end=$IN_T1" \
  "" "$ADMIN" >/dev/null
IN_POD=$(expect 200 GET "/api/v1/workloads/$IN/pods" "" "$ADMIN" | jq -r '.pods[0].id')
expect 200 GET "/api/v1/workloads/inferences/$IN/pods/$IN_POD/metrics?metricType=GPU_UTILIZATION&start=$IN_T0&end=$IN_T1" \
  "" "$ADMIN" >/dev/null
# reports (tests/server/e2e_reports.sh checks their rows)
RPT=$(expect 202 POST /api/v1/org-unit/reports "{\"name\":\"gpu\",\"start\":\"$IN_T0\",\"end\":\"$IN_T1\",
  \"groupBy\":\"Project\",\"filterBy\":[\"projectName==team-a\"]}" "$ADMIN" | jq -r .id)
expect 200 GET /api/v1/org-unit/reports "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/reports/count "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/reports/availability "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/reports/$RPT" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/reports/$RPT/file" "" "$ADMIN" | head -n 1 | grep -q '^clusterId,' ||
  fail "the report's file"
expect 204 DELETE "/api/v1/org-unit/reports/$RPT" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/projects/telemetry?telemetryType=GPU_QUOTA&groupBy=ParentId" "" "$ADMIN" \
  >/dev/null
expect 200 GET "/api/v1/org-unit/departments/telemetry?telemetryType=GPU_ALLOCATION" "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/priorities "" "$ADMIN" |
  jq -e '[.priorities[] | select(.isDefault)][0].name == "Normal"' >/dev/null || fail "priorities"

# ---- the cluster, its nodes, metrics ----
[ "$(expect 200 GET "/api/v1/clusters/$CLUSTER" "" "$ADMIN" | jq -r .uuid)" = "$CLUSTER" ] ||
  fail "cluster by uuid"
expect 404 GET /api/v1/clusters/00000000-0000-4000-8000-000000000000 "" "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/clusters/$CLUSTER/nodes?sortBy=name" "" "$ADMIN" | jq '.nodes | length')" = 2 ] ||
  fail "the cluster's nodes"
[ "$(expect 200 GET "/api/v1/clusters/$CLUSTER/nodes/count?filterBy=name==$(expect 200 GET /api/v1/nodes "" \
  "$ADMIN" | jq -r '.nodes[0].name')" "" "$ADMIN" | jq .count)" = 1 ] || fail "the cluster's node count"
START=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ)
END=$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)
# pw waits for a pool without nodes: the cluster's and that pool's
# AVG_WORKLOAD_WAIT_TIME grow, the default pool's has no one waiting
expect 201 POST /api/v1/node-pools '{"name":"empty","labelKey":"pool","labelValue":"empty"}' "$ADMIN" \
  >/dev/null
WAITER=$(submit trainings pw "$PB" '{"compute":{"gpuDevicesRequest":1},"nodePools":["empty"]}')
wait_time() { # PATH JQ-TEST: on the last AVG_WORKLOAD_WAIT_TIME of PATH/metrics, a number
  expect 200 GET "$1/metrics?metricType=AVG_WORKLOAD_WAIT_TIME&start=$START&end=$END&numberOfSamples=500" \
    "" "$ADMIN" | jq -e "(.measurements[0].values[-1].value // \"0\" | tonumber) $2"
}
poll 10 wait_time "/api/v1/clusters/$CLUSTER" "> 0" || fail "the cluster's AVG_WORKLOAD_WAIT_TIME"
wait_time "/api/v1/clusters/$CLUSTER/nodepools/empty" "> 0" >/dev/null ||
  fail "the empty pool's AVG_WORKLOAD_WAIT_TIME"
poll 10 wait_time "/api/v1/clusters/$CLUSTER/nodepools/default" "== 0" ||
  fail "the default pool's AVG_WORKLOAD_WAIT_TIME counts pw"
# the same window written with offsets, raw and URL-encoded
START2=$(date -u -d '-1 minute +2 hours' +%Y-%m-%dT%H:%M:%S+02:00)
END2=$(date -u -d '+1 minute +2 hours' +%Y-%m-%dT%H:%M:%S%%2B02:00)
last() { jq -r --arg t "$1" '[.measurements[] | select(.type == $t)][0].values[-1].value'; }
M=$(expect 200 GET "/api/v1/clusters/$CLUSTER/metrics?metricType=TOTAL_GPU,ALLOCATED_GPU,UNALLOCATED_GPU&start=$START2&end=$END2&numberOfSamples=5" \
  "" "$ADMIN")
[ "$(printf '%s' "$M" | last TOTAL_GPU)" = 8.000 ] || fail "cluster TOTAL_GPU: $M"
A=$(printf '%s' "$M" | last ALLOCATED_GPU)
U=$(printf '%s' "$M" | last UNALLOCATED_GPU)
jq -en --argjson a "$A" --argjson u "$U" '$a + $u == 8 and $a > 0' >/dev/null ||
  fail "allocated $A + unallocated $U"
expect 200 GET "/api/v1/clusters/$CLUSTER/metrics?metricType=TOTAL_GPU_NODES&groupBy=Nodepool&start=$START&end=$END" \
  "" "$ADMIN" | jq -e '.measurements[0].labels.nodepool == "default" and .measurements[0].values[-1].value == "2"' \
  >/dev/null || fail "metrics by node pool"
expect 200 GET "/api/v1/clusters/$CLUSTER/nodepools/default/metrics?metricType=GPU_QUOTA,WORKLOADS_COUNT&start=$START&end=$END" \
  "" "$ADMIN" | jq -e '.measurements[0].values[-1].value == "8.000"' >/dev/null || fail "pool GPU_QUOTA"
E=$(expect 400 GET "/api/v1/clusters/$CLUSTER/metrics?metricType=CPU_UTILIZATION&start=$START&end=$END" \
  "" "$ADMIN" | jq -r .details)
printf '%s' "$E" | grep -q "TOTAL_GPU" || fail "the 400 does not name the supported metric types: $E"
# per device, on every node: the share allocated, and as much of the
# device's 80Gi; the shares add up to the cluster's allocated GPUs (A,
# above). A device's series starts at its first sample allocated, which the
# recorder's thread writes after the sample period that saw it placed.
NODES=$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -r '.nodes[].id')
node_metrics() {
  for n in $NODES; do
    expect 200 GET "/api/v1/nodes/$n/metrics?metricType=GPU_ALLOCATION_PER_GPU,GPU_UTILIZATION,GPU_MEMORY_ALLOCATION_BYTES_PER_GPU&start=$START&end=$END" \
      "" "$ADMIN"
  done
}
per_gpu() {
  node_metrics | jq -e -s --argjson all "$A" 'def last($m; $t): [$m.measurements[] | select(.type == $t) |
      {(.labels.gpu): (.values[-1].value | tonumber)}] | add // {};
    [.[] | last(.; "GPU_ALLOCATION_PER_GPU") as $a | last(.; "GPU_MEMORY_ALLOCATION_BYTES_PER_GPU") as $b |
      {ok: ((($a | keys) - ["0","1","2","3"]) == [] and ($b | keys) == ($a | keys) and
        all($a | keys[]; $b[.] == $a[.] * 85899345920)), sum: ([$a[]] | add // 0)}] |
    all(.ok) and (map(.sum) | add) == $all and $all > 0'
}
poll 10 per_gpu || fail "the nodes' per-GPU allocation (the cluster's: $A): $(node_metrics | jq -c -s \
  '[.[].measurements[] | {type, gpu: .labels.gpu, last: .values[-1].value}]')"
W=$(expect 200 GET "/api/v1/workloads/$TR/metrics?metricType=GPU_ALLOCATION,POD_COUNT,CPU_REQUEST_CORES,GPU_UTILIZATION&start=$START&end=$END&numberOfSamples=100" \
  "" "$ADMIN")
[ "$(printf '%s' "$W" | last GPU_ALLOCATION)" = 1.000 ] && [ "$(printf '%s' "$W" | last POD_COUNT)" = 1 ] &&
  [ "$(printf '%s' "$W" | last CPU_REQUEST_CORES)" = 0.50 ] || fail "workload metrics: $W"
# simulated nodes report no device memory: the measurement has no values
expect 200 GET "/api/v1/org-unit/projects/$PA/metrics?metricType=GPU_ALLOCATION,GPU_MEMORY_UTILIZATION&start=$START&end=$END" \
  "" "$ADMIN" | jq -e '.measurements[1].type == "GPU_MEMORY_UTILIZATION" and .measurements[1].values == []' \
  >/dev/null || fail "a project's GPU_MEMORY_UTILIZATION on simulated nodes"
POD=$(expect 200 GET "/api/v1/workloads/$TR/pods" "" "$ADMIN" | jq -r '.pods[0].id')
expect 200 GET "/api/v1/workloads/$TR/pods/$POD/metrics?metricType=GPU_UTILIZATION&start=$START&end=$END" \
  "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/departments/$DEP/metrics?metricType=GPU_QUOTA&start=$START&end=$END" \
  "" "$ADMIN" >/dev/null

# ---- users, service accounts, roles, permissions, access rules ----
PW=$(expect 201 POST /api/v1/users '{"email":"carol@example.com"}' "$ADMIN" | jq -r .tempPassword)
CAROL=$(expect 200 GET "/api/v1/users?filterBy=username=@carol&sortBy=username" "" "$ADMIN" | jq -r '.[0].id')
[ "$(expect 200 GET /api/v1/users/count "" "$ADMIN" | jq .count)" = 2 ] || fail "user count"
[ "$(expect 200 GET "/api/v1/users/$CAROL" "" "$ADMIN" | jq -r .username)" = carol@example.com ] ||
  fail "user by id"
PW=$(expect 200 POST "/api/v1/users/$CAROL/password" "" "$ADMIN" | jq -r .tempPassword)
SAJ=$(expect 201 POST /api/v1/service-accounts '{"name":"ci"}' "$ADMIN")
SA=$(printf '%s' "$SAJ" | jq -r .id)
SA_CLIENT=$(printf '%s' "$SAJ" | jq -r .clientId)
[ "$(expect 200 GET /api/v1/service-accounts "" "$ADMIN" | jq -r '.[0].enabled')" = true ] || fail "SA list"
expect 200 GET "/api/v1/service-accounts/$SA" "" "$ADMIN" >/dev/null
SECRET=$(expect 200 POST "/api/v1/service-accounts/$SA/secret" "" "$ADMIN" | jq -r .clientSecret)
expect 200 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientID\":\"$SA_CLIENT\",
  \"clientSecret\":\"$SECRET\"}" >/dev/null
expect 200 PATCH "/api/v1/service-accounts/$SA" '{"enabled":false}' "$ADMIN" | jq -e '.enabled == false' \
  >/dev/null || fail "SA disabled"
expect 400 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientID\":\"$SA_CLIENT\",
  \"clientSecret\":\"$SECRET\"}" >/dev/null
expect 200 GET /api/v1/authorization/roles "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/authorization/roles/4 "" "$ADMIN" | jq -e '.permissions | map(.resourceType) |
  index("trainings") != null' >/dev/null || fail "role 4 has no trainings permission"
expect 404 GET /api/v1/authorization/roles/99 "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/authorization/permissions "" "$ADMIN" >/dev/null
RULE=$(expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"carol@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\"}" "$ADMIN" | jq -r .id)
# a rule naming the user by id, on the cluster and on the tenant
R2=$(expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$CAROL\",
  \"subjectType\":\"user\",\"roleId\":6,\"scopeType\":\"cluster\",\"scopeId\":\"$CLUSTER\"}" "$ADMIN" |
  jq -r '[.id, .subjectId] | join(" ")')
[ "${R2#* }" = carol@example.com ] || fail "subjectId by user id: $R2"
R3=$(expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"carol@example.com\",
  \"subjectType\":\"user\",\"roleId\":6,\"scopeType\":\"tenant\",\"scopeId\":\"1\"}" "$ADMIN" | jq -r .id)
expect 200 GET "/api/v1/authorization/access-rules?subjectIds=carol@example.com&sortBy=roleId&limit=2" \
  "" "$ADMIN" | jq -e '.totalRecords == 3 and .displayRecords == 2' >/dev/null || fail "rules page"
[ "$(expect 200 GET "/api/v1/authorization/access-rules/count?filterBy=scopeType==cluster" "" "$ADMIN" |
  jq .count)" = 1 ] || fail "rule count"
expect 200 GET "/api/v1/authorization/access-rules/$RULE" "" "$ADMIN" >/dev/null
C=$(login carol@example.com "$PW")
expect 200 GET /api/v1/authorization/me/access-rules "" "$C" |
  jq -e '.accessRules.totalRecords == 3' >/dev/null || fail "me/access-rules"
[ "$(expect 200 GET /api/v1/authorization/me/access-rules/count "" "$C" | jq .count)" = 3 ] ||
  fail "me/access-rules/count"
expect 200 GET /api/v1/nodes "" "$C" >/dev/null
expect 200 POST /api/v1/me/password "{\"currentPassword\":\"$PW\",\"newPassword\":\"carol-password\"}" \
  "$C" >/dev/null
expect 200 POST "/api/v1/users/$CAROL/logout" "" "$ADMIN" >/dev/null
for r in "$RULE" "${R2% *}" "$R3"; do
  expect 204 DELETE "/api/v1/authorization/access-rules/$r" "" "$ADMIN" >/dev/null
done
# batches of rules (all or none) and the caller's permitted scopes
BATCH=$(expect 200 POST /api/v1/authorization/access-rules/batch-create "{\"payload\":{\"roleId\":6,
  \"clusterId\":\"$CLUSTER\",\"subjects\":[{\"subjectId\":\"carol@example.com\",\"subjectType\":\"user\"}],
  \"scopes\":[{\"scopeId\":\"$PA\",\"scopeType\":\"project\"},{\"scopeId\":\"$PB\",
  \"scopeType\":\"project\"}]}}" "$ADMIN")
IDS=$(printf '%s' "$BATCH" | jq -c '[.succeeded[].id | tostring]')
expect 200 POST /api/v1/authorization/access-rules/batch "{\"ids\":$IDS,\"action\":\"validate_delete\"}" \
  "$ADMIN" | jq -e '(.succeeded | length) == 2' >/dev/null || fail "validate_delete"
expect 200 POST /api/v1/authorization/access-rules/batch "{\"ids\":$IDS,\"action\":\"delete\"}" \
  "$ADMIN" | jq -e '(.succeeded | length) == 2' >/dev/null || fail "batch delete"
expect 200 POST /api/v1/authorization/permitted-scopes '{"resourceType":"project","action":"read"}' \
  "$ADMIN" | jq -e '.read.system == true' >/dev/null || fail "permitted-scopes"
expect 204 DELETE "/api/v1/service-accounts/$SA" "" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/users/$CAROL" "" "$ADMIN" >/dev/null

# ---- applications (Run:ai's earlier name for service accounts): the
# secret shown once, a token that submits, and 401 once it is deleted ----
APJ=$(expect 201 POST /api/v1/apps '{"name":"ci-app"}' "$ADMIN")
APP=$(printf '%s' "$APJ" | jq -r .id)
APP_CLIENT=$(printf '%s' "$APJ" | jq -r .clientId)
expect 400 POST /api/v1/apps '{"name":"Bad-Name"}' "$ADMIN" >/dev/null
expect 200 GET /api/v1/apps "" "$ADMIN" | jq -e --arg c "$APP_CLIENT" 'map(.clientId) | index($c) != null' \
  >/dev/null || fail "the application is not listed"
expect 200 GET "/api/v1/apps/$APP" "" "$ADMIN" | jq -e '.secret == null and .enabled' >/dev/null ||
  fail "an application is answered with its secret"
expect 200 PATCH "/api/v1/apps/$APP" '{"enabled":true}' "$ADMIN" >/dev/null
APP_SECRET=$(expect 200 POST "/api/v1/apps/$APP/secret" "" "$ADMIN" | jq -r .secret)
expect 400 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientId\":\"$APP_CLIENT\",
  \"clientSecret\":\"$(printf '%s' "$APJ" | jq -r .secret)\"}" >/dev/null # the old secret is void
APP_RULE=$(expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$APP_CLIENT\",
  \"subjectType\":\"service-account\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" \
  "$ADMIN" | jq -r .id)
APP_TOKEN=$(expect 200 POST /api/v1/token "{\"grantType\":\"client_credentials\",
  \"clientId\":\"$APP_CLIENT\",\"clientSecret\":\"$APP_SECRET\"}" | jq -r .accessToken)
# Run:ai's older form: the application's id, name and secret
expect 200 POST /v1/k8s/auth/oauth/apptoken "{\"id\":\"$APP\",\"name\":\"ci-app\",
  \"secret\":\"$APP_SECRET\"}" | jq -e '.access_token and .id_token' >/dev/null || fail "apptoken"
expect 400 POST /v1/k8s/auth/oauth/apptoken "{\"id\":\"$APP\",\"name\":\"other\",
  \"secret\":\"$APP_SECRET\"}" >/dev/null
APP_WL=$(expect 202 POST /api/v1/workloads/trainings "{\"name\":\"by-app\",\"projectId\":\"$PA\",
  \"spec\":{\"compute\":{\"gpuDevicesRequest\":0}}}" "$APP_TOKEN" | jq -r .workloadId)
expect 200 GET "/api/v1/workloads/$APP_WL" "" "$APP_TOKEN" | jq -e --arg c "$APP_CLIENT" \
  '.submittedBy == $c' >/dev/null || fail "the application's workload is not its own"
expect 204 DELETE "/api/v1/authorization/access-rules/$APP_RULE" "" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/apps/$APP" "" "$ADMIN" >/dev/null
expect 401 GET "/api/v1/workloads/$APP_WL" "" "$APP_TOKEN" >/dev/null
expect 202 DELETE "/api/v1/workloads/$APP_WL" "" "$ADMIN" >/dev/null

# ---- access keys and user applications (their earlier name): a user's
# own client credentials, in each form's shapes (e2e_keys.sh: the flow) ----
KEY_IDS='(if type == "array" then . else .accessKeys end) | map(.id)' # either form's list
for kind in access-keys user-applications; do
  K=$(expect 201 POST "/api/v1/$kind" '{"name":"admin-key"}' "$ADMIN" | jq -r .id)
  expect 409 POST "/api/v1/$kind" '{"name":"admin-key"}' "$ADMIN" >/dev/null
  expect 200 GET "/api/v1/$kind" "" "$ADMIN" | jq -e --arg k "$K" "$KEY_IDS == [\$k]" >/dev/null ||
    fail "$kind: the admin's own list"
  expect 200 GET "/api/v1/$kind/$K" "" "$ADMIN" | jq -e '.name == "admin-key"' >/dev/null || fail "$kind get"
  expect 200 POST "/api/v1/$kind/$K/secret" "" "$ADMIN" | jq -e '.clientSecret | length > 0' >/dev/null ||
    fail "$kind: no new secret"
  expect 200 GET "/api/v1/administration/$kind?createdBy=admin" "" "$ADMIN" |
    jq -e --arg k "$K" "$KEY_IDS == [\$k]" >/dev/null || fail "$kind: everyone's"
  expect 204 DELETE "/api/v1/$kind/$K" "" "$ADMIN" >/dev/null
  K=$(expect 201 POST "/api/v1/$kind" '{"name":"admin-key"}' "$ADMIN" | jq -r .id) # the name is free again
  expect 204 DELETE "/api/v1/administration/$kind/$K" "" "$ADMIN" >/dev/null
done

# ---- workload properties: allot's fixed types, categories, priorities ----
TYPES=$(expect 200 GET /api/v1/workload-types "" "$ADMIN")
[ "$(printf '%s' "$TYPES" | jq -r '[.types[].name] | join(",")')" = \
  TrainingWorkload,InteractiveWorkload,DistributedWorkload,InferenceWorkload ] || fail "types: $TYPES"
[ "$(expect 200 GET "/api/v1/workload-types?externalTypesOnly=true" "" "$ADMIN" | jq '.types | length')" = 0 ] ||
  fail "allot's types are not external"
T1=$(printf '%s' "$TYPES" | jq -r '.types[] | select(.name == "InteractiveWorkload")')
expect 200 GET "/api/v1/workload-types/$(printf '%s' "$T1" | jq -r .id)" "" "$ADMIN" |
  jq -e '.categoryName == "Build" and .priorityName == "build"' >/dev/null || fail "a workspace's type"
expect 404 GET /api/v1/workload-types/00000000-0000-4000-8000-000000000000 "" "$ADMIN" >/dev/null
CAT=$(printf '%s' "$T1" | jq -r .categoryId)
expect 200 GET /api/v1/workload-categories "" "$ADMIN" | jq -e '[.categories[].name] ==
  ["Build","Train","Deploy"]' >/dev/null || fail "categories"
[ "$(expect 200 GET "/api/v1/workload-categories/$CAT" "" "$ADMIN" | jq -r .name)" = Build ] ||
  fail "category by id"
expect 200 GET "/api/v1/workload-priorities?sortBy=value&sortOrder=desc&filterBy=value>=100" "" \
  "$ADMIN" | jq -e '[.priorities[].name] == ["very-high","inference","high","build"]' >/dev/null ||
  fail "priorities sorted and filtered"

# ---- policies: each type's PUT, PATCH, GET and DELETE, and the list ----
for pt in trainings workspaces distributed inferences; do
  case $pt in
    distributed) pol='{"defaults":{"worker":{"image":"torch"}},"rules":{"worker":{"numWorkers":{"max":4}}}}' ;;
    *) pol='{"defaults":{"image":"busybox"},"rules":{"compute":{"gpuDevicesRequest":{"max":4}}}}' ;;
  esac
  expect 200 PUT "/api/v2/policy/$pt" "{\"meta\":{\"name\":\"$pt\",\"scope\":\"tenant\"},
    \"policy\":$pol}" "$ADMIN" >/dev/null
  rule='{"priorityClass":{"required":true}}' sect=.effective.rules
  [ $pt != distributed ] || rule="{\"worker\":$rule}" sect=.effective.rules.worker
  expect 200 PATCH "/api/v2/policy/$pt" "{\"meta\":{\"name\":\"$pt\",\"scope\":\"project\",
    \"projectId\":\"$PA\"},\"policy\":{\"rules\":$rule}}" "$ADMIN" >/dev/null
  expect 200 GET "/api/v2/policy/$pt?scope=project&projectId=$PA" "" "$ADMIN" |
    jq -e "$sect.priorityClass.sourceOfRule.scope == \"project\"" >/dev/null ||
    fail "the $pt policy's effective rules"
done
[ "$(expect 200 GET /api/v2/policy "" "$ADMIN" | jq '.policies | length')" = 8 ] || fail "the policy list"
expect 400 POST /api/v1/workloads/trainings "{\"name\":\"no-prio\",\"projectId\":\"$PA\",
  \"spec\":{}}" "$ADMIN" | jq -r .details | grep -q "spec.priorityClass breaks the rule required" ||
  fail "a required field left out"
for pt in trainings workspaces distributed inferences; do
  expect 204 DELETE "/api/v2/policy/$pt?scope=project&projectId=$PA" "" "$ADMIN" >/dev/null
  expect 204 DELETE "/api/v2/policy/$pt?scope=tenant" "" "$ADMIN" >/dev/null
done

# ---- routes: a fixed segment is never an {id}; Run:ai's others answer 501 ----
expect 501 GET "/v1/k8s/clusters/$CLUSTER/projects/metrics" "" "$ADMIN" | jq -r .details |
  grep -q getProjectsMetrics || fail "/v1/k8s/clusters/{uuid}/projects/metrics is not named"
expect 501 GET "/v1/k8s/clusters/$CLUSTER/departments/metrics" "" "$ADMIN" >/dev/null
expect 405 DELETE /api/v1/users/count "" "$ADMIN" >/dev/null
expect 404 GET /api/v1/workloads/nothing/here "" "$ADMIN" | jq -r .details | grep -q "no route" ||
  fail "404 does not say there is no route"

# ---- an empty department and project are deleted ----
D2=$(expect 201 POST /api/v1/org-unit/departments '{"name":"scratch","resources":[]}' "$ADMIN" | jq -r .id)
P2=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"scratch-p\",\"parentId\":\"$D2\",
  \"resources\":[]}" "$ADMIN" | jq -r .id)
expect 400 DELETE "/api/v1/org-unit/departments/$D2" "" "$ADMIN" | jq -r .details |
  grep -q "holds projects scratch-p" || fail "the department's delete does not name its project"
expect 204 DELETE "/api/v1/org-unit/projects/$P2" "" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/org-unit/departments/$D2" "" "$ADMIN" >/dev/null

# ---- the dashboard's telemetry and the cluster's series, in Run:ai's shapes ----
expect 200 GET "/api/v1/workloads/telemetry?telemetryType=WORKLOADS_COUNT&groupBy=Type,Phase" "" \
  "$ADMIN" | jq -e '.type == "WORKLOADS_COUNT" and (.values | length) >= 1' >/dev/null ||
  fail "workloads telemetry"
expect 200 GET "/api/v1/nodes/telemetry?telemetryType=READY_GPUS&groupBy=Nodepool" "" "$ADMIN" |
  jq -e '.type == "READY_GPUS" and (.values | length) >= 1' >/dev/null || fail "nodes telemetry"
NOW_S=$(date -u +%s)
expect 200 GET "/api/v1/clusters/$CLUSTER/metrics?metricType=ALLOCATED_GPU&start=$(date -u -d "@$((NOW_S - 600))" \
  +%Y-%m-%dT%H:%M:%SZ)&end=$(date -u -d "@$NOW_S" +%Y-%m-%dT%H:%M:%SZ)&numberOfSamples=4" "" "$ADMIN" |
  jq -e '.measurements[0].type == "ALLOCATED_GPU"' >/dev/null || fail "the cluster's metrics"

# ---- generic secrets: keys answered, never values ----
GS=/api/v1/asset/credentials/generic-secret
SID=$(expect 202 POST $GS "{\"meta\":{\"name\":\"creds\",\"scope\":\"project\",\"projectId\":\"$PA\"},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"PASSWORD\",\"value\":\"e2e-runai-value\"}]}}" "$ADMIN" |
  jq -r .meta.id)
expect 202 POST $GS "{\"meta\":{\"name\":\"shared\",\"scope\":\"department\",\"departmentId\":\"$DEP\",
  \"description\":\"for every project of the department\"},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"K\",\"value\":\"v\"}]}}" "$ADMIN" >/dev/null
expect 200 GET "$GS?scope=project" "" "$ADMIN" | jq -e '.entries | length == 1' >/dev/null ||
  fail "the scope filter"
expect 200 GET "$GS/$SID" "" "$ADMIN" | jq -e '.spec.keyValuePairs == [{"key": "PASSWORD"}]' >/dev/null ||
  fail "a secret is answered with more than its keys"
expect 202 PUT "$GS/$SID" '{"meta":{"description":"the database"}}' "$ADMIN" >/dev/null
expect 204 DELETE "$GS/$SID" "" "$ADMIN" >/dev/null

# ---- assets: every kind's CRUD, a secret never answered, a submission
# from assets with its spec over them, an asset in use kept ----
A=/api/v1/asset
asset() { # STATUS KIND-PATH NAME SPEC: a team-a asset; prints its id
  expect "$1" POST "$A/$2" "{\"meta\":{\"name\":\"$3\",\"scope\":\"project\",\"projectId\":\"$PA\"},
    \"spec\":$4}" "$ADMIN" | jq -r .meta.id
}
ENV=$(asset 202 environment env1 '{"image":"busybox","command":"sleep","args":"60",
  "environmentVariables":[{"name":"FROM_ENV","value":"e"},{"name":"KEEP","value":"k"}]}')
CMP=$(asset 202 compute one-gpu '{"gpuDevicesRequest":1,"cpuCoreRequest":0.5}')
HP=$(asset 202 datasource/host-path data '{"path":"/tmp","mountPath":"/data","readOnly":true}')
GIT=$(asset 202 datasource/git code '{"repository":"https://example.com/r.git","path":"code"}')
PW=$(asset 202 credentials/password db-cred '{"user":"u","password":"e2e-pw-value"}')
AK=$(asset 202 credentials/access-key s3-key '{"accessKeyId":"AKID","secretAccessKey":"e2e-ak-value"}')
DR=$(asset 202 credentials/docker-registry hub '{"url":"https://hub.example.com","user":"u",
  "password":"e2e-dr-value"}')
NGC=$(asset 202 credentials/ngc-api-key ngc '{"ngc_api_key":"e2e-ngc-value"}')
REG=$(asset 201 registries reg1 '{"url":"https://reg.example.com","credentialKind":"password",
  "user":"u","password":"e2e-reg-value"}')
expect 200 GET "$A/datasource" "" "$ADMIN" | jq -e '[.entries[].spec | keys[0]] | sort == ["git", "hostPath"]' \
  >/dev/null || fail "the data sources' list"
CREDS=$(expect 200 GET "$A/credentials?projectId=$PA" "" "$ADMIN")
printf '%s' "$CREDS" | jq -e '.entries | length == 5' >/dev/null || fail "the credentials' list: $CREDS"
for k in environment:$ENV compute:$CMP datasource/host-path:$HP datasource/git:$GIT \
    credentials/password:$PW credentials/access-key:$AK credentials/docker-registry:$DR \
    credentials/ngc-api-key:$NGC registries:$REG; do
  ONE=$(expect 200 GET "$A/${k%%:*}/${k#*:}" "" "$ADMIN")
  LIST=$(expect 200 GET "$A/${k%%:*}?name=$(printf '%s' "$ONE" | jq -r .meta.name)" "" "$ADMIN")
  [ "$(printf '%s' "$LIST" | jq '.entries | length')" = 1 ] || fail "the name filter of ${k%%:*}"
  ! printf '%s %s %s' "$ONE" "$LIST" "$CREDS" | grep -q 'e2e-[a-z]*-value' ||
    fail "a secret value is answered: ${k%%:*}"
done
expect 202 PUT "$A/compute/$CMP" '{"meta":{"name":"one-gpu","description":"one device"},
  "spec":{"gpuDevicesRequest":1,"cpuCoreRequest":0.5}}' "$ADMIN" |
  jq -e '.meta.updateCount == 2 and .meta.description == "one device"' >/dev/null || fail "compute PUT"
expect 202 PUT "$A/environment/$ENV" '{"meta":{"name":"env1"},"spec":{"image":"busybox",
  "command":"sleep","args":"60","environmentVariables":[{"name":"FROM_ENV","value":"e"},
  {"name":"KEEP","value":"k"}]}}' "$ADMIN" >/dev/null
expect 202 PUT "$A/datasource/host-path/$HP" '{"meta":{"name":"data"},"spec":{"path":"/tmp",
  "mountPath":"/data","readOnly":true}}' "$ADMIN" >/dev/null
expect 202 PUT "$A/datasource/git/$GIT" '{"meta":{"name":"code"},"spec":{"repository":
  "https://example.com/r.git","path":"code","branch":"main"}}' "$ADMIN" >/dev/null
for k in password:$PW access-key:$AK docker-registry:$DR ngc-api-key:$NGC; do
  expect 202 PUT "$A/credentials/${k%%:*}/${k#*:}" '{"meta":{"description":"d"}}' "$ADMIN" >/dev/null
done
expect 200 PUT "$A/registries/$REG" '{"meta":{"name":"reg1","description":"r"}}' "$ADMIN" |
  jq -e '.spec.password == "********"' >/dev/null || fail "a registry's password is not masked"
for k in nfs pvc s3 config-map secrets; do
  expect 200 GET "$A/datasource/$k" "" "$ADMIN" | jq -e '.entries == []' >/dev/null || fail "$k list"
  expect 400 POST "$A/datasource/$k" '{"meta":{"name":"x","scope":"tenant"},"spec":{}}' "$ADMIN" |
    jq -r .details | grep -q "is not supported: " || fail "creating a $k data source is not refused"
  expect 404 GET "$A/datasource/$k/$HP" "" "$ADMIN" >/dev/null
  expect 404 PUT "$A/datasource/$k/$HP" '{"meta":{"name":"x"},"spec":{}}' "$ADMIN" >/dev/null
  expect 404 DELETE "$A/datasource/$k/$HP" "" "$ADMIN" >/dev/null
done
# a submission names them (ids or names); its spec wins field by field
FA=$(submit trainings from-assets "$PA" '{"args":"120","environmentVariables":[{"name":"KEEP",
  "value":"mine"}]}' "\"assets\":{\"environment\":\"env1\",\"compute\":\"$CMP\",
  \"datasources\":[{\"id\":\"$HP\",\"kind\":\"hostPath\"}],\"credentials\":[\"db-cred\"]}")
expect 200 GET "/api/v1/workloads/trainings/$FA" "" "$ADMIN" | jq -e --arg env "$ENV" '.spec |
  .image == "busybox" and .command == "sleep" and .args == "120" and .compute.gpuDevicesRequest == 1
  and .storage.hostPath[0].mountPath == "/data" and .assets.environment.id == $env
  and ([.environmentVariables[] | {(.name): (.value // .secret.key)}] | add) ==
      {"FROM_ENV": "e", "KEEP": "mine", "DB_CRED_USER": "user", "DB_CRED_PASSWORD": "password"}' \
  >/dev/null || fail "the spec from assets: $(expect 200 GET "/api/v1/workloads/trainings/$FA" "" "$ADMIN")"
# workload templates of the four types, made of assets, and a submission
# from one with its spec over the template's
W=/api/v1/workload-templates
for t in workspaces trainings distributed inferences; do
  case $t in
    distributed) TS='{"distributedFramework":"PyTorch","numWorkers":1,"args":"t"}' ;;
    *) TS='{"args":"t"}' ;;
  esac
  TID=$(expect 202 POST "$W/$t" "{\"meta\":{\"name\":\"tpl-$t\",\"scopeType\":\"project\",
    \"scopeId\":\"$PA\"},\"spec\":$TS,\"assets\":{\"environment\":\"$ENV\",\"compute\":\"$CMP\"}}" \
    "$ADMIN" | jq -r .meta.id)
  expect 200 GET "$W/$t" "" "$ADMIN" | jq -e --arg id "$TID" '[.entries[].meta.id] == [$id]' \
    >/dev/null || fail "the $t templates' list"
  expect 200 GET "$W/$t/$TID" "" "$ADMIN" | jq -e '.meta.workloadType != null' >/dev/null
  if [ $t != inferences ]; then
    expect 200 PUT "$W/$t/$TID" "{\"meta\":{\"name\":\"tpl-$t\",\"description\":\"d\"},\"spec\":$TS,
      \"assets\":{\"environment\":\"$ENV\",\"compute\":\"$CMP\"}}" "$ADMIN" >/dev/null
    expect 200 PATCH "$W/$t/$TID" '{"meta":{"name":"tpl-'$t'"},"spec":{"args":"patched"}}' "$ADMIN" |
      jq -e '.spec.args == "patched" and .meta.description == "d"' >/dev/null || fail "$t PATCH"
  fi
  eval "TPL_$t=\$TID"
done
# the asset form of a template: its assets by id, answered with their names
AT=$(expect 202 POST "$A/workload-template" "{\"meta\":{\"name\":\"asset-tpl\",\"scope\":\"project\",
  \"projectId\":\"$PA\",\"workloadSupportedTypes\":{\"training\":true,\"workspace\":false}},
  \"spec\":{\"assets\":{\"environment\":\"$ENV\",\"compute\":\"$CMP\"},
  \"specificEnv\":{\"args\":\"specific\"}}}" "$ADMIN" | jq -r .meta.id)
expect 200 GET "$A/workload-template" "" "$ADMIN" |
  jq -e '.entries[0].spec.assets.environment.name == "env1"' >/dev/null || fail "the asset-form list"
expect 200 GET "$A/workload-template/$AT" "" "$ADMIN" >/dev/null
expect 202 PUT "$A/workload-template/$AT" "{\"meta\":{\"name\":\"asset-tpl\"},\"spec\":{\"assets\":
  {\"environment\":\"$ENV\",\"compute\":\"$CMP\"},\"specificEnv\":{\"args\":\"specific\"}}}" "$ADMIN" \
  >/dev/null
FAT=$(submit trainings from-asset-tpl "$PA" '{}' "\"templateId\":\"asset-tpl\"")
expect 200 GET "/api/v1/workloads/trainings/$FAT" "" "$ADMIN" | jq -e '.spec | .image == "busybox"
  and .args == "specific" and .compute.gpuDevicesRequest == 1' >/dev/null || fail "from an asset-form template"
expect 400 POST /api/v1/workloads/workspaces "{\"name\":\"no\",\"projectId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\",\"templateId\":\"$AT\",\"spec\":{}}" "$ADMIN" | jq -r .details |
  grep -q "does not serve workspaces" || fail "an asset-form template serves a type it refuses"
expect 202 DELETE "/api/v1/workloads/trainings/$FAT" "" "$ADMIN" >/dev/null
expect 202 DELETE "$A/workload-template/$AT" "" "$ADMIN" >/dev/null
[ "$(expect 200 GET "$W/count" "" "$ADMIN" | jq .count)" = 4 ] || fail "the templates' count"
expect 200 GET "$W?search=tpl-tr" "" "$ADMIN" | jq -e '.entries | length == 1' >/dev/null ||
  fail "the templates' search"
expect 200 GET "$W/$TPL_trainings" "" "$ADMIN" >/dev/null
expect 204 GET "$W/name-availability?templateName=free&scopeType=project&scopeId=$PA" "" "$ADMIN"
expect 409 GET "$W/name-availability?templateName=tpl-trainings&scopeType=project&scopeId=$PA" "" \
  "$ADMIN" >/dev/null
FT=$(submit trainings from-template "$PA" '{"args":"mine"}' "\"templateId\":\"$TPL_trainings\"")
expect 200 GET "/api/v1/workloads/trainings/$FT" "" "$ADMIN" | jq -e --arg t "$TPL_trainings" '.spec |
  .image == "busybox" and .args == "mine" and .compute.gpuDevicesRequest == 1
  and .assets.template.id == $t' >/dev/null || fail "the spec from a template"
expect 403 DELETE "$W/trainings/$TPL_trainings" "" "$ADMIN" | jq -e '(.details | test("from-template"))
  and .usedBy.trainings[0].name == "from-template"' >/dev/null ||
  fail "deleting a template in use does not name its workload"
expect 202 DELETE "/api/v1/workloads/trainings/$FT" "" "$ADMIN" >/dev/null
for t in workspaces trainings distributed inferences; do
  eval "expect 204 DELETE \"$W/$t/\$TPL_$t\" \"\" \"\$ADMIN\"" >/dev/null
done
UK=$(submit trainings uses-key "$PA" '{"image":"busybox","environmentVariables":[{"name":"K",
  "secret":{"name":"s3-key","key":"secretAccessKey"}}]}')
expect 412 DELETE "$A/credentials/access-key/$AK" "" "$ADMIN" | jq -r .details | grep -q uses-key ||
  fail "deleting a credential an environment variable takes does not name its workload"
expect 202 DELETE "/api/v1/workloads/trainings/$UK" "" "$ADMIN" >/dev/null
expect 412 DELETE "$A/datasource/host-path/$HP" "" "$ADMIN" | jq -r .details | grep -q from-assets ||
  fail "deleting a host path in use does not name its workload"
expect 403 DELETE "$A/environment/$ENV" "" "$ADMIN" | jq -r .details | grep -q from-assets ||
  fail "deleting an environment in use does not name its workload"
expect 202 DELETE "/api/v1/workloads/trainings/$FA" "" "$ADMIN" >/dev/null
for k in environment:$ENV compute:$CMP datasource/host-path:$HP datasource/git:$GIT \
    credentials/password:$PW credentials/access-key:$AK credentials/docker-registry:$DR; do
  expect 202 DELETE "$A/${k%%:*}/${k#*:}" "" "$ADMIN" >/dev/null
done
expect 204 DELETE "$A/credentials/ngc-api-key/$NGC" "" "$ADMIN" >/dev/null
expect 204 DELETE "$A/registries/$REG" "" "$ADMIN" >/dev/null

# ---- the tenant's settings, its logo, the audit log ----
expect 200 GET /api/v1/security/settings "" "$ADMIN" >/dev/null
expect 200 PUT /api/v1/security/settings/browserSessionTimeout '{"idleTimeout":120}' "$ADMIN" >/dev/null
expect 200 GET /api/v1/security/settings/browserSessionTimeout "" "$ADMIN" |
  jq -e '.idleTimeout == 120' >/dev/null || fail "browserSessionTimeout"
expect 200 GET /v1/k8s/setting "" "$ADMIN" >/dev/null
expect 200 PUT /v1/k8s/setting '{"key":"audit.retentionDays","value":30}' "$ADMIN" >/dev/null
[ "$(expect 200 GET /v1/k8s/setting/audit.retentionDays "" "$ADMIN")" = true ] || fail "tenant setting"
LOGO=$(printf '<svg xmlns="http://www.w3.org/2000/svg"/>' | base64 -w0)
expect 200 POST /api/v1/logo "{\"logo\":\"$LOGO\"}" "$ADMIN" >/dev/null
expect 200 GET /api/v1/logo "" "$ADMIN" >/dev/null
AW="start=2020-01-01T00:00:00Z&end=2100-01-01T00:00:00Z"
expect 200 GET "/api/v1/audit/log?$AW&sortBy=timestamp&sortOrder=desc&numberOfSamples=5" "" "$ADMIN" \
  >/dev/null
expect 200 GET "/api/v1/audit/log/file?$AW&file_type=CSV" "" "$ADMIN" >/dev/null

# ---- deletion: it ends, the workloads (by-app's too, deleted above) are
# kept for history, then their projects and department can go ----
expect 400 DELETE "/api/v1/org-unit/projects/$PA" "" "$ADMIN" | jq -r .details |
  grep -q "holds workloads .*tr1" || fail "deleting a busy project does not name its workloads"
for t in trainings/$TR workspaces/$WS distributed/$DI inferences/$IN; do
  expect 202 DELETE "/api/v1/workloads/$t" "" "$ADMIN" >/dev/null
done
for w in $B1 $WAITER; do expect 202 DELETE "/api/v1/workloads/$w" "" "$ADMIN" >/dev/null; done
[ "$(expect 200 GET /api/v1/workloads/count "" "$ADMIN" | jq .count)" = 0 ] || fail "deleted workloads are listed"
expect 200 GET "/api/v1/workloads?deleted=true" "" "$ADMIN" |
  jq -e '[.workloads[] | select(.deletedAt != null and .phase == "Stopped")] | length == 11' >/dev/null ||
  fail "deleted workloads are not kept, Stopped, for history"
expect 200 GET "/api/v1/workloads/$TR/events" "" "$ADMIN" | jq -r '.events[].reason' | grep -qx Deleted ||
  fail "tr1 has no Deleted event"
for p in $PA $PB; do expect 204 DELETE "/api/v1/org-unit/projects/$p" "" "$ADMIN" >/dev/null; done
expect 204 DELETE "/api/v1/org-unit/departments/$DEP" "" "$ADMIN" >/dev/null
expect 404 GET "/api/v1/workloads/$TR" "" "$ADMIN" >/dev/null # purged with its project

stop
schema_check --cover "$ALLOT_OPENAPI"
SCHEMA_CHECKED=1
echo "e2e_runai: ok"
