#!/bin/sh
# e2e_reports.sh: reports, the org-unit telemetry, inference revisions and
# inference metrics against a real allotd with one simulated 4-GPU machine
# sampling every 100 ms:
#   1. a report over a time range: its CSV has a row per project whose
#      mean and peak GPU allocation are what the projects' metrics series
#      say over that range (aggregation=mean|max), likewise per department
#      and for the cluster; filters narrow the rows; a filter the grouping
#      cannot apply, a bad term and a bad range are 400s naming the fault;
#      list, count, search, get, delete, availability;
#   2. projects' and departments' telemetry: quotas and allocation, the
#      non-preemptible part, grouped by department and by pool;
#   3. an inference PATCHed twice has 3 revisions with its 3 specs, each
#      with its own events, history and pods;
#   4. an inference's metrics: the GPU figures allot measures, and
#      THROUGHPUT and LATENCY refused with a 400 that names them.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/reports.db" --simulate-nodes 1x4 --sample-period-ms 100
bad() { # METHOD PATH BODY TEXT: 400 whose details hold TEXT
  d=$(expect 400 "$1" "$2" "$3" "$ADMIN" | jq -r .details)
  printf '%s' "$d" | grep -q "$4" || fail "$1 $2: '$d' does not say '$4'"
}
iso() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
RES=$(expect 201 POST /api/v1/org-unit/departments "{\"name\":\"research\",\"resources\":[{\"nodePool\":
  {\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":4,\"limit\":-1}}]}" "$ADMIN" | jq -r .id)
PA=$(quota_project team-a 2 "$ADMIN" "\"parentId\":\"$RES\"")
PB=$(quota_project team-b 2 "$ADMIN" "\"parentId\":\"$RES\"")
sleep 0.3

# ---- 1. reports ----
T0=$(iso)
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"t1\",\"projectId\":\"$PA\",
  \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase "$ADMIN" t1 Running
sleep 1
T1=$(iso)
report() { # BODY-FIELDS: creates a report over [T0, T1]; prints its id
  R=$(expect 202 POST /api/v1/org-unit/reports "{\"name\":\"r\",\"start\":\"$T0\",\"end\":\"$T1\"$1}" \
    "$ADMIN")
  [ "$(printf '%s' "$R" | jq -r .status)" = Ready ] || fail "report not Ready: $R"
  printf '%s' "$R" | jq -r .id
}
csv() { # ID: the report's file
  expect 200 GET "/api/v1/org-unit/reports/$1/file" "" "$ADMIN" | tr -d '\r'
}
col() { # CSV-TEXT KEY COLUMN: the column of the row whose line holds KEY
  printf '%s\n' "$1" | awk -F, -v key="$2" -v col="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
    index($0, key) { print $(at[col]) }'
}
series() { # PATH AGG: the value at T1 of GPU allocation over [T0, T1] with that aggregation
  expect 200 GET "$1?metricType=GPU_ALLOCATION&start=$T0&end=$T1&numberOfSamples=2&aggregation=$2" \
    "" "$ADMIN" | jq -r '.measurements[0].values[-1].value'
}
ID=$(report ',"groupBy":"Project","description":"by project"')
C=$(csv "$ID")
[ "$(printf '%s\n' "$C" | head -n 1)" = \
  "clusterId,projectId,projectName,departmentName,start,end,gpuAllocationHours,averageGpuAllocation,peakGpuAllocation,averageGpuQuota,cpuAllocationCoreHours,memoryAllocationGbHours" ] ||
  fail "the header: $C"
for p in "$PA" "$PB"; do
  for agg in mean:averageGpuAllocation max:peakGpuAllocation; do
    want=$(series "/api/v1/org-unit/projects/$p/metrics" "${agg%%:*}")
    got=$(col "$C" "$p" "${agg#*:}")
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "project $p ${agg#*:}: $got, the series says $want: $C"
  done
done
[ "$(col "$C" "$PA" peakGpuAllocation)" = 1.000 ] && [ "$(col "$C" "$PB" peakGpuAllocation)" = 0.000 ] ||
  fail "team-a held 1 GPU, team-b none: $C"
[ "$(col "$C" "$PA" averageGpuQuota)" = 2.000 ] || fail "team-a's quota: $C"
awk -F, 'NR > 1 && $3 == "team-a" { exit !($7 > 0 && $7 < 0.001) }' <<EOF || fail "team-a's GPU-hours: $C"
$C
EOF
[ "$(printf '%s\n' "$C" | grep -c team-)" = 2 ] || fail "one row per project: $C"
C=$(csv "$(report ',"groupBy":"Department"')")
got=$(col "$C" "$RES" averageGpuAllocation)
[ "$got" = "$(series "/api/v1/org-unit/departments/$RES/metrics" mean)" ] || fail "department: $C"
C=$(csv "$(report ',"groupBy":"Cluster"')")
got=$(col "$C" "$CLUSTER" averageGpuAllocation)
want=$(expect 200 GET "/api/v1/clusters/$CLUSTER/metrics?metricType=ALLOCATED_GPU&start=$T0&end=$T1&numberOfSamples=2&aggregation=mean" \
  "" "$ADMIN" | jq -r '.measurements[0].values[-1].value')
[ "$got" = "$want" ] || fail "cluster: $got, the series says $want: $C"
C=$(csv "$(report ',"filterBy":["projectName==team-a"]')")
[ "$(printf '%s\n' "$C" | sed 1d | wc -l)" = 1 ] && [ "$(col "$C" "$PA" nodepoolName)" = default ] ||
  fail "team-a's row per pool: $C"
C=$(csv "$(report ",\"groupBy\":\"Nodepool\",\"filterBy\":[\"clusterId==$CLUSTER\"]")")
[ "$(col "$C" default peakGpuAllocation)" = 1.000 ] || fail "the pool: $C"
C=$(csv "$(report ',"groupBy":"Nodepool","filterBy":["clusterId==d73a738f-fab3-430a-8fa3-5241493d7128"]')")
[ "$(printf '%s\n' "$C" | wc -l)" = 1 ] || fail "another cluster's rows: $C"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"start\":\"$T0\",\"end\":\"$T1\",\"groupBy\":\"Nodepool\",
  \"filterBy\":[\"projectName==team-a\"]}" "projectName cannot narrow a report grouped by Nodepool"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"start\":\"$T0\",\"end\":\"$T1\",
  \"filterBy\":[\"nodeName==n\"]}" "projectName==X, departmentName==X or clusterId==X"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"start\":\"$T1\",\"end\":\"$T0\"}" "start must be before end"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"start\":\"$T0\",\"end\":\"$T1\",\"groupBy\":\"Node\"}" "groupBy"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"start\":\"$T0\",\"end\":\"$T1\",\"format\":\"pdf\"}" "format"
bad POST /api/v1/org-unit/reports "{\"name\":\"x\",\"end\":\"$T1\"}" "'start' is required"
expect 202 POST /api/v1/org-unit/reports "{\"name\":\"other\",\"start\":\"$T0\",\"end\":\"$T1\"}" "$ADMIN" >/dev/null
[ "$(expect 200 GET /api/v1/org-unit/reports/count "" "$ADMIN" | jq .count)" = 7 ] || fail "7 reports"
[ "$(expect 200 GET "/api/v1/org-unit/reports/count?filterBy=name==other" "" "$ADMIN" | jq .count)" = 1 ] ||
  fail "filterBy name"
L=$(expect 200 GET "/api/v1/org-unit/reports?search=oth&sortBy=createdAt&sortOrder=desc" "" "$ADMIN")
[ "$(printf '%s' "$L" | jq -r '[.reports[].name] | join(" ")')" = other ] || fail "search: $L"
G=$(expect 200 GET "/api/v1/org-unit/reports/$ID" "" "$ADMIN")
printf '%s' "$G" | jq -e '.groupBy == "Project" and .description == "by project" and
  .createdBy == "admin" and .filterBy == []' >/dev/null || fail "get: $G"
expect 204 DELETE "/api/v1/org-unit/reports/$ID" "" "$ADMIN" >/dev/null
expect 404 GET "/api/v1/org-unit/reports/$ID/file" "" "$ADMIN" >/dev/null
expect 404 DELETE "/api/v1/org-unit/reports/$ID" "" "$ADMIN" >/dev/null
[ "$(expect 200 GET /api/v1/org-unit/reports/availability "" "$ADMIN" | jq .isAvailable)" = true ] ||
  fail "availability"
U=$(expect 201 POST /api/v1/users '{"email":"bob@example.com"}' "$ADMIN")
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"bob@example.com\",\"subjectType\":\"user\",
  \"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PB\"}" "$ADMIN" >/dev/null
BOB=$(login bob@example.com "$(printf '%s' "$U" | jq -r .tempPassword)")
expect 403 GET /api/v1/org-unit/reports "" "$BOB" >/dev/null

# ---- 2. projects' and departments' telemetry ----
IN=$(expect 202 POST /api/v1/workloads/inferences "{\"name\":\"serve\",\"projectId\":\"$PB\",
  \"spec\":{\"image\":\"vllm:1\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" | jq -r .workloadId)
poll 20 has_phase "$ADMIN" serve Running || fail "serve: $(expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN")"
tele() { # PATH QUERY: the values as "group,group=value" words
  expect 200 GET "$1?$2" "" "$ADMIN" |
    jq -r '.values[] | ([.groups[]?.value] | join(",")) + "=" + .value' | tr '\n' ' '
}
P=/api/v1/org-unit/projects/telemetry
D=/api/v1/org-unit/departments/telemetry
[ "$(tele $P telemetryType=GPU_QUOTA)" = "=4.000 " ] || fail "GPU quota: $(tele $P telemetryType=GPU_QUOTA)"
[ "$(tele $P "telemetryType=GPU_ALLOCATION&groupBy=ParentId")" = "$RES=2.000 " ] ||
  fail "GPU allocation by department: $(tele $P "telemetryType=GPU_ALLOCATION&groupBy=ParentId")"
[ "$(tele $P "telemetryType=GPU_ALLOCATION_NON_PREEMPTIBLE&groupBy=ClusterId,NodepoolId")" = \
  "$CLUSTER,$POOL=1.000 " ] || fail "the inference is the non-preemptible GPU"
[ "$(tele $P "telemetryType=GPU_ALLOCATION&nodepoolId=$POOL&departmentId=$RES")" = "=2.000 " ] ||
  fail "filtered by pool and department"
[ "$(tele $D "telemetryType=GPU_ALLOCATION&groupBy=CLUSTER_ID")" = "$CLUSTER=2.000 " ] ||
  fail "departments' allocation: $(tele $D "telemetryType=GPU_ALLOCATION&groupBy=CLUSTER_ID")"
[ "$(tele $D "telemetryType=CPU_QUOTA&departmentId=$PA")" = "=0 " ] || fail "no such department"
bad GET "$P?telemetryType=GPU_QUOTA&groupBy=CLUSTER_ID" "" "ClusterId, NodepoolId, ParentId"
bad GET "$D?telemetryType=GPU_USAGE" "" "telemetryType: one of GPU_QUOTA"
bad GET "$D?telemetryType=GPU_QUOTA&nodepoolName=nowhere" "" "nodepoolName names no node pool"

# ---- 3. inference revisions ----
V=$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions" "" "$ADMIN")
[ "$(printf '%s' "$V" | jq -r '[.revisions[] | .id + " " + .images[0]] | join(",")')" = "$IN vllm:1" ] ||
  fail "before any PATCH, the submission is revision 1: $V"
expect 202 PATCH "/api/v1/workloads/inferences/$IN" '{"spec":{"image":"vllm:2"}}' "$ADMIN" >/dev/null
poll 20 has_phase "$ADMIN" serve Running || fail "serve: $(expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN")"
expect 202 PATCH "/api/v1/workloads/inferences/$IN" \
  '{"spec":{"image":"vllm:3","autoscaling":{"minReplicas":2,"maxReplicas":2}}}' "$ADMIN" >/dev/null
poll 20 has_phase "$ADMIN" serve Running || fail "serve: $(expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN")"
V=$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions" "" "$ADMIN")
[ "$(printf '%s' "$V" | jq -r '[.revisions[] | .images[0] + ":" + (.requestedPods.number | tostring) + ":" +
  .phase] | join(" ")')" = "vllm:1:1:Stopped vllm:2:1:Stopped vllm:3:2:Running" ] || fail "3 revisions: $V"
[ "$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions/count" "" "$ADMIN" | jq .count)" = 3 ] ||
  fail "the count"
[ "$(expect 200 GET "/api/v1/workloads/inferences/$IN/revisions/count?deleted=true" "" "$ADMIN" |
  jq .count)" = 0 ] || fail "a live inference has no deleted revisions"
[ "$(printf '%s' "$V" | jq -r '.revisions[0].id')" = "$IN" ] || fail "revision 1 keeps its id"
R2=$(printf '%s' "$V" | jq -r '.revisions[1].id')
R3=$(printf '%s' "$V" | jq -r '.revisions[2].id')
[ "$(expect 200 GET "/api/v1/workloads/inferences/revisions/$R2" "" "$ADMIN" | jq -r .images[0])" = vllm:2 ] ||
  fail "GET a revision"
reasons() { # REVISION: its events' reasons, oldest first
  expect 200 GET "/api/v1/workloads/inferences/revisions/$1/events?sortOrder=asc" "" "$ADMIN" |
    jq -r '[.events[].reason] | join(" ")'
}
case "$(reasons "$IN")" in Submitted*) ;; *) fail "revision 1's events: $(reasons "$IN")" ;; esac
reasons "$IN" | grep -q Updated && fail "revision 1 has the PATCHes' events"
case "$(reasons "$R2")" in Updated*) ;; *) fail "revision 2's events: $(reasons "$R2")" ;; esac
reasons "$R2" | grep -q Submitted && fail "revision 2 has the submission"
expect 200 GET "/api/v1/workloads/inferences/revisions/$R3/events" "" "$ADMIN" |
  jq -e '.events[] | select(.reason == "Updated") | .message | contains("vllm:3")' >/dev/null ||
  fail "revision 3's Updated event names its image"
H=$(expect 200 GET "/api/v1/workloads/inferences/revisions/$R2/history" "" "$ADMIN")
[ "$(printf '%s' "$H" | jq -r '.records[-1].spec.phaseUpdate.phase')" = Stopped ] || fail "history: $H"
[ "$(expect 200 GET "/api/v1/workloads/inferences/revisions/$R3/pods" "" "$ADMIN" | jq '.pods | length')" = 2 ] ||
  fail "revision 3 runs 2 pods"
[ "$(expect 200 GET "/api/v1/workloads/inferences/revisions/$R2/pods" "" "$ADMIN" | jq '.pods | length')" = 0 ] ||
  fail "a replaced revision has no pods"
expect 404 GET "/api/v1/workloads/inferences/revisions/d73a738f-fab3-430a-8fa3-5241493d7128" "" "$ADMIN" >/dev/null
TR=$(expect 200 GET "/api/v1/workloads?filterBy=name==t1" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 404 GET "/api/v1/workloads/inferences/revisions/$TR" "" "$ADMIN" >/dev/null
expect 404 GET "/api/v1/workloads/inferences/$TR/revisions" "" "$ADMIN" >/dev/null

# ---- 4. inference metrics ----
M="/api/v1/workloads/inferences/$IN/metrics"
NOW=$(iso)
bad GET "$M?metricType=THROUGHPUT&start=$T0&end=$NOW" "" "THROUGHPUT: allot does not measure inference requests"
bad GET "$M?metricType=GPU_ALLOCATION,LATENCY,THROUGHPUT&start=$T0&end=$NOW" "" "^LATENCY, THROUGHPUT:"
# the series are written by the recorder's thread after each sample
# period: the 2 GPUs of revision 3 show once a sample after its start is in
allocation_2() {
  expect 200 GET "$M?metricType=GPU_ALLOCATION&start=$T0&end=$(iso)&numberOfSamples=3" "" "$ADMIN" |
    jq -e '.measurements[0].type == "GPU_ALLOCATION" and
      ((.measurements[0].values[-1].value // "-1") | tonumber) == 2'
}
poll 20 allocation_2 || fail "the inference's GPU allocation: $(expect 200 GET \
  "$M?metricType=GPU_ALLOCATION&start=$T0&end=$(iso)&numberOfSamples=3" "" "$ADMIN")"
POD=$(expect 200 GET "/api/v1/workloads/$IN/pods" "" "$ADMIN" | jq -r '.pods[0].id')
expect 200 GET "/api/v1/workloads/inferences/$IN/pods/$POD/metrics?metricType=GPU_UTILIZATION&start=$T0&end=$NOW" \
  "" "$ADMIN" | jq -e '.measurements[0].type == "GPU_UTILIZATION"' >/dev/null || fail "pod metrics"
bad GET "/api/v1/workloads/inferences/$IN/pods/$POD/metrics?metricType=LATENCY&start=$T0&end=$NOW" "" \
  "LATENCY: allot does not measure"
expect 404 GET "/api/v1/workloads/inferences/$TR/metrics?metricType=GPU_ALLOCATION&start=$T0&end=$NOW" \
  "" "$ADMIN" >/dev/null

stop
echo "e2e_reports: ok"
