#!/bin/sh
# e2e_overview.sh: what the dashboard's Overview and Projects pages read,
# against a real allotd with one simulated 4-GPU machine:
#   1. quota rules: a limit below its quota is refused (create, PUT, PATCH,
#      resources); a department that sets a quota caps its projects'
#      quotas in that pool, and cannot go below one of them; the default
#      department (no quota) caps nothing;
#   2. evictions by time across workloads: the count of a window, newest
#      first, pages, an empty window before them, narrowed to a department
#      and to a node pool, and a researcher who sees only their own
#      project's;
#   3. nodes list each device with what the pods placed on it hold;
#   4. the workload list by GPU request, then allocation; telemetry: workloads by type and phase, pending-time buckets, GPUs
#      per pool, idle allocated GPUs (none measured on simulated nodes);
#   5. the cluster's allocation over time with max and mean per slot, and
#      per project and department (groupBy=Project|Department).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/overview.db" --simulate-nodes 1x4 --sample-period-ms 100
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
bad() { # METHOD PATH BODY TEXT: 400 whose details hold TEXT
  d=$(expect 400 "$1" "$2" "$3" "$ADMIN" | jq -r .details)
  printf '%s' "$d" | grep -q "$4" || fail "$1 $2: '$d' does not say '$4'"
}
res() { # DESERVED LIMIT: one resources entry of the default pool
  echo "[{\"nodePool\":{\"name\":\"default\"},\"gpu\":{\"deserved\":$1,\"limit\":$2}}]"
}

# ---- 1. quota rules ----
bad POST /api/v1/org-unit/projects "{\"name\":\"low\",\"resources\":$(res 2 1)}" \
  "GPU limit of low in node pool default (1) is below its quota (2)"
RES=$(expect 201 POST /api/v1/org-unit/departments "{\"name\":\"research\",\"resources\":$(res 2 -1)}" \
  "$ADMIN" | jq -r .id)
bad POST /api/v1/org-unit/projects "{\"name\":\"big\",\"parentId\":\"$RES\",\"resources\":$(res 3 -1)}" \
  "GPU quota of project big in node pool default (3) is above that of its department research (2)"
bad POST /api/v1/org-unit/projects "{\"name\":\"big\",\"parentId\":\"$RES\",\"resources\":$(res -1 -1)}" \
  "(unlimited) is above that of its department research (2)"
PA=$(expect 201 POST /api/v1/org-unit/projects \
  "{\"name\":\"team-a\",\"parentId\":\"$RES\",\"resources\":$(res 2 2)}" "$ADMIN" | jq -r .id)
bad PUT "/api/v1/org-unit/projects/$PA/resources" "$(res 2 1)" "below its quota (2)"
bad PATCH "/api/v1/org-unit/projects/$PA/resources" "$(res 3 -1)" "above that of its department"
bad PATCH "/api/v1/org-unit/projects/$PA" "{\"resources\":$(res 2 0)}" "below its quota"
bad PATCH "/api/v1/org-unit/departments/$RES/resources" "$(res 1 -1)" \
  "department research in node pool default (1) would be below that of its project team-a (2)"
bad PUT "/api/v1/org-unit/departments/$RES/resources" "$(res 4 3)" "below its quota (4)"
expect 200 PATCH "/api/v1/org-unit/departments/$RES/resources" "$(res 4 -1)" "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/org-unit/projects/$PA/resources" "$(res 0 -1)" "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/org-unit/projects/$PA" "" "$ADMIN" | jq '.resources[0].gpu.deserved')" = 0 ] \
  || fail "a refused change was saved, or the accepted one was not"
# the default department sets no quota: it caps nothing; sums may exceed a department's
expect 201 POST /api/v1/org-unit/projects "{\"name\":\"team-d\",\"resources\":$(res 8 -1)}" \
  "$ADMIN" >/dev/null
PB=$(expect 201 POST /api/v1/org-unit/projects \
  "{\"name\":\"team-b\",\"parentId\":\"$RES\",\"resources\":$(res 4 -1)}" "$ADMIN" | jq -r .id)

# ---- 2. evictions by time ----
T0=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
train() { # NAME PROJECT-ID
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" | jq -r .workloadId
}
for n in 1 2 3 4; do train "a$n" "$PA" >/dev/null; done
for n in 1 2 3 4; do wait_phase "$ADMIN" "a$n" Running; done
for round in 1; do
  for n in 1 2 3 4; do eval "B$n=\$(train b$round$n \"\$PB\")"; done
  for n in 1 2 3 4; do wait_phase "$ADMIN" "b$round$n" Running; done
  for n in 1 2 3 4; do eval "expect 202 DELETE /api/v1/workloads/\$B$n '' \"\$ADMIN\" >/dev/null"; done
  for n in 1 2 3 4; do wait_phase "$ADMIN" "a$n" Running; done
done
EV=$(expect 200 GET "/api/v1/evictions?start=$T0" "" "$ADMIN")
[ "$(expect 200 GET "/api/v1/evictions/count?start=$T0" "" "$ADMIN" | jq .count)" = 4 ] ||
  fail "4 evictions since $T0: $EV"
printf '%s' "$EV" | jq -e '[.evictions[] | select(.reason == "Reclaimed" and .projectName == "team-a"
  and (.workloadName | startswith("a")) and .workloadType == "Training")] | length == 4' >/dev/null ||
  fail "evictions: $EV"
printf '%s' "$EV" | jq -e '[.evictions[].createdAt] as $t | $t == ($t | sort | reverse)' >/dev/null ||
  fail "evictions are not newest first"
P2=$(expect 200 GET "/api/v1/evictions?start=$T0&limit=3&offset=3" "" "$ADMIN")
[ "$(printf '%s' "$P2" | jq '.evictions | length')" = 1 ] && [ "$(printf '%s' "$P2" | jq .next)" = null ] ||
  fail "the second page: $P2"
[ "$(expect 200 GET "/api/v1/evictions?start=$T0&limit=3" "" "$ADMIN" | jq .next)" = 3 ] ||
  fail "the first page has no next"
[ "$(expect 200 GET "/api/v1/evictions/count?end=$T0" "" "$ADMIN" | jq .count)" = 0 ] ||
  fail "evictions before any happened"
# narrowed to a department (team-a's, or one without them) and to a node pool (theirs, or an empty one)
OTHER=$(expect 201 POST /api/v1/org-unit/departments '{"name":"other","resources":[]}' "$ADMIN" | jq -r .id)
expect 201 POST /api/v1/node-pools '{"name":"empty","labelKey":"pool","labelValue":"empty"}' "$ADMIN" >/dev/null
for q in "departmentId=$RES:4" "departmentId=$OTHER:0" "nodepoolName=default:4" "nodepoolName=empty:0" \
         "departmentId=$RES&nodepoolName=default:4" "departmentId=$OTHER&nodepoolName=default:0"; do
  GOT=$(expect 200 GET "/api/v1/evictions/count?start=$T0&${q%:*}" "" "$ADMIN" | jq .count)
  [ "$GOT" = "${q##*:}" ] || fail "evictions where ${q%:*}: $GOT, not ${q##*:}"
  GOT=$(expect 200 GET "/api/v1/evictions?start=$T0&${q%:*}" "" "$ADMIN" | jq '.evictions | length')
  [ "$GOT" = "${q##*:}" ] || fail "the list where ${q%:*}: $GOT, not ${q##*:}"
done
expect 404 GET "/api/v1/evictions?departmentId=$PA" "" "$ADMIN" >/dev/null   # a project, not a department
expect 404 GET "/api/v1/evictions/count?nodepoolName=nowhere" "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/evictions?start=yesterday" "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/evictions?start=$T0&end=2000-01-01T00:00:00Z" "" "$ADMIN" >/dev/null
U=$(expect 201 POST /api/v1/users '{"email":"bob@example.com"}' "$ADMIN")
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"bob@example.com\",\"subjectType\":\"user\",
  \"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PB\"}" "$ADMIN" >/dev/null
BOB=$(login bob@example.com "$(printf '%s' "$U" | jq -r .tempPassword)")
[ "$(expect 200 GET "/api/v1/evictions/count?start=$T0" "" "$BOB" | jq .count)" = 0 ] ||
  fail "bob sees team-a's evictions"

# ---- 3. devices per node from the pods ----
N=$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq '.nodes[0]')
[ "$(printf '%s' "$N" | jq '[.gpuDevices[].index] == [0,1,2,3]')" = true ] || fail "devices: $N"
[ "$(printf '%s' "$N" | jq '([.gpuDevices[].allocated] | add) == .allocatedGpus')" = true ] ||
  fail "the devices do not add up to the node's allocation: $N"
HELD=$(for n in 1 2 3 4; do
  W=$(expect 200 GET "/api/v1/workloads?filterBy=name==a$n" "" "$ADMIN" | jq -r '.workloads[0].id')
  expect 200 GET "/api/v1/workloads/$W/pods" "" "$ADMIN" | jq '.pods[0].gpuDevices[0]'
done | sort -n | tr '\n' ' ')
[ "$(printf '%s' "$N" | jq -r '[.gpuDevices[] | select(.allocated == 1) | .index] | map(tostring) | join(" ")') " = \
  "$HELD" ] || fail "the devices held ($HELD) are not the node's: $N"

# ---- 4. telemetry ----
tele() { # PATH QUERY: the values as "group/group=value" lines
  expect 200 GET "/api/v1/$1/telemetry?$2" "" "${3:-$ADMIN}" |
    jq -r '.values[] | ([.groups[]?.value] | join("/")) + "=" + .value'
}
expect 200 PATCH "/api/v1/org-unit/projects/$PB/resources" "$(res 0 0)" "$ADMIN" >/dev/null
train p1 "$PB" >/dev/null
expect 202 POST /api/v1/workloads/workspaces "{\"name\":\"w1\",\"projectId\":\"$PB\",
  \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":4}}}" "$ADMIN" >/dev/null
wait_phase "$ADMIN" p1 Pending
wait_phase "$ADMIN" w1 Pending
# the list sorted by request, then allocation: w1 asks 4; p1 asks 1 and holds none; a1-a4 1 and 1
names() { expect 200 GET "/api/v1/workloads?$1" "" "$ADMIN" | jq -r '[.workloads[].name] | join(" ")'; }
[ "$(names "sortBy=requestedGPU&sortOrder=desc")" = "w1 a4 a3 a2 a1 p1" ] ||
  fail "by request, descending: $(names "sortBy=requestedGPU&sortOrder=desc")"
[ "$(names "sortBy=requestedGPU&sortOrder=asc")" = "p1 a1 a2 a3 a4 w1" ] ||
  fail "by request, ascending: $(names "sortBy=requestedGPU&sortOrder=asc")"
[ "$(names "filterBy=requestedGPU>=2")" = w1 ] || fail "requestedGPU>=2: $(names "filterBy=requestedGPU>=2")"
GOT=$(tele workloads "telemetryType=WORKLOADS_COUNT&groupBy=Type,Phase" | tr '\n' ' ')
case "$GOT" in "Training/Pending=1 Training/Running=4 Workspace/Pending=1 ") ;;
  *) fail "workloads by type and phase: $GOT" ;; esac
[ "$(tele workloads "telemetryType=WORKLOADS_COUNT&filterByPhases=Pending")" = "=2" ] ||
  fail "pending count: $(tele workloads "telemetryType=WORKLOADS_COUNT&filterByPhases=Pending")"
[ "$(tele workloads "telemetryType=PENDING_TIME_DISTRIBUTION")" = "0=2" ] ||
  fail "pending time: $(tele workloads telemetryType=PENDING_TIME_DISTRIBUTION)"
GOT=$(tele workloads "telemetryType=GPU_ALLOCATION&groupBy=ProjectId" | sort | tr '\n' ' ')
[ "$GOT" = "$(printf '%s\n' "$PA=4.000" "$PB=0.000" | sort | tr '\n' ' ')" ] || fail "GPUs per project: $GOT"
[ "$(tele workloads "telemetryType=WORKLOADS_COUNT&groupBy=ProjectId" "$BOB")" = "$PB=2" ] ||
  fail "bob counts workloads outside team-b"
[ "$(tele nodes "telemetryType=READY_GPUS&groupBy=Nodepool")" = "default=4" ] || fail "ready GPUs"
[ "$(tele nodes "telemetryType=ALLOCATED_GPUS")" = "=4.000" ] || fail "allocated GPUs"
[ "$(tele nodes "telemetryType=IDLE_ALLOCATED_GPUS")" = "=0" ] || fail "idle GPUs on simulated nodes"
[ "$(tele nodes "telemetryType=MEASURED_ALLOCATED_GPUS")" = "=0" ] || fail "measured GPUs"
expect 400 GET "/api/v1/workloads/telemetry?telemetryType=COLOURS" "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/workloads/telemetry?telemetryType=WORKLOADS_COUNT&groupBy=Colour" "" "$ADMIN" \
  >/dev/null

# ---- 5. the cluster's allocation over time ----
START=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S.000Z)
END=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%S.000Z)
CL=$(expect 200 GET /api/v1/clusters "" "$ADMIN" | jq -r '.[0].uuid')
M=$(expect 200 GET "/api/v1/clusters/$CL/metrics?metricType=ALLOCATED_GPU&start=$START&end=$END&numberOfSamples=4&aggregation=max,mean" \
  "" "$ADMIN")
[ "$(printf '%s' "$M" | jq -r '[.measurements[] | .labels.aggregation] | join(",")')" = max,mean ] ||
  fail "aggregations: $M"
[ "$(printf '%s' "$M" | jq -r '.measurements[0].values[-1].value')" = 4.000 ] || fail "max: $M"
printf '%s' "$M" | jq -e '.measurements[1].values[-1].value | tonumber | . > 0 and . <= 4' >/dev/null ||
  fail "mean: $M"
# per project and department: allocation, quota and what agents measure (nothing on simulated nodes)
# (the samples are written after each sample period: polled until the one
# after the last quota change is in)
last() { printf '%s' "$M" | jq -r --arg t "$1" --arg p "$2" \
  '[.measurements[] | select(.type == $t and .labels.project == $p)][0].values[-1].value'; }
by_project() {
  END=$(date -u -d '+1 second' +%Y-%m-%dT%H:%M:%S.000Z)
  Q="metricType=ALLOCATED_GPU,GPU_QUOTA,GPU_UTILIZATION,IDLE_ALLOCATED_GPUS&start=$START&end=$END&numberOfSamples=4"
  M=$(expect 200 GET "/api/v1/clusters/$CL/metrics?$Q&groupBy=Project" "" "$ADMIN")
  [ "$(last ALLOCATED_GPU team-a)" = 4.000 ] && [ "$(last ALLOCATED_GPU team-b)" = 0.000 ] &&
    [ "$(last GPU_QUOTA team-b)" = 0.000 ] && [ "$(last GPU_QUOTA team-d)" = 8.000 ]
}
poll 10 by_project || fail "by project: $M"
printf '%s' "$M" | jq -e --arg a "$PA" '[.measurements[] | select(.labels.project == "team-a")] |
  length == 4 and all(.labels.projectId == $a) and
  ([.[] | select(.type == "GPU_UTILIZATION" or .type == "IDLE_ALLOCATED_GPUS") | .values | length] == [0, 0])' \
  >/dev/null || fail "team-a's measurements: $M"
M=$(expect 200 GET "/api/v1/clusters/$CL/metrics?$Q&groupBy=Department&nodepoolName=default" "" "$ADMIN")
[ "$(printf '%s' "$M" | jq -r '[.measurements[] | select(.type == "ALLOCATED_GPU" and .labels.department == "research")][0].values[-1].value')" = 4.000 ] ||
  fail "by department: $M"
[ "$(expect 200 GET "/api/v1/clusters/$CL/metrics?$Q&groupBy=Project" "" "$BOB" |
  jq -r '[.measurements[].labels.project] | unique | join(",")')" = team-b ] || fail "bob sees other projects"
expect 400 GET "/api/v1/clusters/$CL/metrics?metricType=TOTAL_GPU&start=$START&end=$END&groupBy=Project" "" "$ADMIN" \
  >/dev/null
expect 400 GET "/api/v1/clusters/$CL/metrics?metricType=ALLOCATED_GPU&start=$START&end=$END&groupBy=Colour" "" "$ADMIN" \
  >/dev/null
expect 400 GET "/api/v1/clusters/$CL/metrics?metricType=ALLOCATED_GPU&start=$START&end=$END&aggregation=median" \
  "" "$ADMIN" >/dev/null
expect 404 GET "/api/v1/clusters/nope/metrics?metricType=ALLOCATED_GPU&start=$START&end=$END" "" "$ADMIN" \
  >/dev/null
stop
echo "e2e_overview: ok"
