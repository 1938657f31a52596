#!/bin/sh
# e2e_org.sh: node pools (get/put/patch/delete, placement, min guaranteed
# runtime, time-based fairshare), project defaults, node types, rank and
# PATCH, time limits, list filterBy/sortBy and /count, /readyz, /metrics families, the
# per-project time series, batch actions, revoked tokens, and the bad-input
# answers (400 naming the field, 404, 409, 413, 429) against a real allotd.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/org.db" --simulate-nodes 2x4 --simulate-nodes 1x8:a100:dgx \
  --sample-period-ms 100
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
poll 20 curl -sf -o /dev/null "$URL/readyz" || fail "/readyz never answered 200"

# ---- node pools ----
A100=$(expect 200 GET "/api/v1/node-pools?filterBy=name==a100" "" "$ADMIN" | jq -r '.nodepools[0].id')
[ "$A100" != null ] || fail "no a100 pool"
[ "$(expect 200 GET /api/v1/node-pools/count "" "$ADMIN" | jq .count)" = 2 ] || fail "pool count"
# pools that name no GPU placement (default, a100) place by fragmentation,
# the default, answered null (Run:ai's enum has no fragmentation)
[ "$(expect 200 GET /api/v1/node-pools "" "$ADMIN" |
  jq -r '[.nodepools[] | .placementStrategy, .schedulingConfiguration.placementStrategy |
    (.gpu | tostring) + "/" + .cpu] | unique | join(",")')" = \
  null/spread ] || fail "the default placements are not null (fragmentation)/spread"
[ "$(expect 200 GET /api/v1/nodes/count "" "$ADMIN" | jq .count)" = 3 ] || fail "node count"
[ "$(expect 200 GET "/api/v1/nodes?filterBy=nodeType==dgx" "" "$ADMIN" | jq '.nodes | length')" = 1 ] \
  || fail "node type filter"
P=$(expect 201 POST /api/v1/node-pools '{"name":"spare","labelKey":"pool","labelValue":"spare",
  "schedulingConfiguration":{"placementStrategy":{"gpu":"spread"},"minGuaranteedRuntime":"1d2h",
  "timeBasedFairshare":{"enabled":true,"windowSeconds":3600,"kValue":0.5}}}' "$ADMIN")
PID_SPARE=$(printf '%s' "$P" | jq -r .id)
[ "$(printf '%s' "$P" | jq -r '[.placementStrategy.gpu, .schedulingConfiguration.minGuaranteedRuntime,
  .schedulingConfiguration.timeBasedFairshare.enabled, .schedulingConfiguration.timeBasedFairshare.kValue]
  | join(",")')" = "spread,1d2h,true,0.5" ] || fail "pool settings: $P"
expect 200 PATCH "/api/v1/node-pools/$PID_SPARE" \
  '{"schedulingConfiguration":{"minGuaranteedRuntime":"90s"}}' "$ADMIN" |
  jq -e '.schedulingConfiguration.minGuaranteedRuntime == "1m30s" and .placementStrategy.gpu == "spread"' \
  >/dev/null || fail "pool PATCH"
expect 200 PATCH "/api/v1/node-pools/$PID_SPARE" '{"placementStrategy":{"gpu":"fragmentation"}}' \
  "$ADMIN" | jq -e '.placementStrategy.gpu == null
    and .schedulingConfiguration.placementStrategy.gpu == null' >/dev/null ||
  fail "pool PATCH to fragmentation (the default: null)"
expect 400 PATCH "/api/v1/node-pools/$PID_SPARE" '{"placementStrategy":{"gpu":"tetris"}}' "$ADMIN" |
  jq -r '.message + " " + .details' | grep -q fragmentation || fail "bad placement word not refused"
expect 200 PATCH "/api/v1/node-pools/$PID_SPARE" '{"placementStrategy":{"gpu":"binpack"}}' \
  "$ADMIN" | jq -e '.placementStrategy.gpu == "binpack"' >/dev/null || fail "pool PATCH to binpack"
expect 200 PATCH "/api/v1/node-pools/$PID_SPARE" '{"placementStrategy":{"gpu":null}}' "$ADMIN" |
  jq -e '.placementStrategy.gpu == null and .placementStrategy.cpu == "spread"' >/dev/null ||
  fail "pool PATCH of a null GPU placement (the default)"
expect 200 PATCH "/api/v1/node-pools/$PID_SPARE" '{"placementStrategy":{"gpu":"binpack"}}' \
  "$ADMIN" | jq -e '.placementStrategy.gpu == "binpack"' >/dev/null || fail "pool PATCH to binpack"
expect 200 PUT "/api/v1/node-pools/$PID_SPARE" '{"labelKey":"pool","labelValue":"other"}' "$ADMIN" |
  jq -e '.labelValue == "other" and .placementStrategy.gpu == null
    and .schedulingConfiguration.minGuaranteedRuntime == null' >/dev/null || fail "pool PUT"
expect 400 PATCH "/api/v1/node-pools/$PID_SPARE" '{"schedulingConfiguration":{"minGuaranteedRuntime":"soon"}}' \
  "$ADMIN" | jq -r .details | grep -q minGuaranteedRuntime || fail "bad duration not named"
expect 400 PATCH "/api/v1/node-pools/$PID_SPARE" '{"name":"renamed"}' "$ADMIN" >/dev/null
expect 400 DELETE "/api/v1/node-pools/$A100" "" "$ADMIN" | jq -r .details | grep -q "holds nodes" ||
  fail "deleting a pool with nodes"
DEFAULT=$(expect 200 GET "/api/v1/node-pools?filterBy=name==default" "" "$ADMIN" | jq -r '.nodepools[0].id')
expect 400 DELETE "/api/v1/node-pools/$DEFAULT" "" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/node-pools/$PID_SPARE" "" "$ADMIN" >/dev/null
expect 404 GET "/api/v1/node-pools/$PID_SPARE" "" "$ADMIN" >/dev/null

# ---- projects: defaults, node types, rank, PATCH, lists ----
project() { # NAME DESERVED [EXTRA JSON FIELDS]
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"resources\":[{\"nodePool\":{\"name\":\"default\"},
    \"gpu\":{\"deserved\":$2}}]${3:+,$3}}" "$ADMIN" | jq -r .id
}
PA=$(project team-a 2 '"defaultNodePools":["a100","default"],"rank":2,
  "nodeTypes":{"training":["dgx"]},"schedulingRules":{"trainingJobTimeLimitSeconds":3600}')
PB=$(project team-b 4)
PC=$(project team-c 1)
A=$(expect 200 GET "/api/v1/org-unit/projects/$PA" "" "$ADMIN")
[ "$(printf '%s' "$A" | jq -r '[.rank, (.defaultNodePools | join("+")), .nodeTypes.training[0],
  .schedulingRules.trainingJobTimeLimitSeconds, .effective.defaultNodePools[0]] | join(",")')" = \
  "2,a100+default,dgx,3600,a100" ] || fail "project settings: $A"
expect 200 PATCH "/api/v1/org-unit/projects/$PC" '{"description":"patched","rank":5,
  "resources":[{"nodePool":{"id":"'"$A100"'"},"gpu":{"deserved":1}}]}' "$ADMIN" |
  jq -e '.description == "patched" and .rank == 5 and (.resources | length) == 2' >/dev/null ||
  fail "project PATCH merges resources"
expect 200 PATCH "/api/v1/org-unit/projects/$PC/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":3}}]' "$ADMIN" |
  jq -e 'map(select(.nodePool.name == "default"))[0].gpu.deserved == 3 and length == 2' >/dev/null ||
  fail "resources PATCH"
expect 400 PATCH "/api/v1/org-unit/projects/$PC" '{"rank":"high"}' "$ADMIN" | jq -r .details |
  grep -q rank || fail "wrong type not named"
expect 400 PATCH "/api/v1/org-unit/projects/$PC" '{"defaultNodePools":["nope"]}' "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/org-unit/projects?filterBy=totalGpuQuota>=2&sortBy=totalGpuQuota&sortOrder=desc" \
  "" "$ADMIN" | jq -r '[.projects[].name] | join(",")')" = "team-b,team-c,team-a" ] || fail "project filter/sort"
[ "$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name=^team-&limit=2" "" "$ADMIN" | jq .next)" = 2 ] \
  || fail "projects next"
[ "$(expect 200 GET "/api/v1/org-unit/projects/count?filterBy=name!=team-a" "" "$ADMIN" | jq .count)" = 2 ] \
  || fail "project count"
[ "$(expect 200 GET /api/v1/org-unit/departments/count "" "$ADMIN" | jq .count)" = 1 ] || fail "department count"
expect 400 GET "/api/v1/org-unit/projects?sortBy=colour" "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/org-unit/projects?filterBy=colour==red" "" "$ADMIN" >/dev/null
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" | jq -r '.departments[0].id')
expect 200 PATCH "/api/v1/org-unit/departments/$DEP" '{"defaultNodePools":["default"]}' "$ADMIN" >/dev/null
[ "$(expect 200 GET "/api/v1/org-unit/projects/$PB" "" "$ADMIN" | jq -r '.effective.defaultNodePools[0]')" = default ] \
  || fail "project inherits the department's default pools"

# ---- a project quota its department cannot back is said, in create, PUT and the list ----
# the default department follows the cluster: 8 GPUs in the default pool
[ "$(expect 200 GET "/api/v1/org-unit/projects/$PB" "" "$ADMIN" |
  jq -c '[.status.phaseMessage, .status.additionalStatusData]')" = '["",null]' ] ||
  fail "team-b's 4 GPUs are backed"
BIG=$(expect 201 POST /api/v1/org-unit/projects '{"name":"team-big","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":12}}]}' "$ADMIN")
printf '%s' "$BIG" | jq -e '.status.additionalStatusData.quotaNotBacked[0] |
  .nodePoolName == "default" and .deserved == 12 and .departmentDeserved == 8' >/dev/null ||
  fail "team-big's 12 GPUs in default are not flagged: $BIG"
printf '%s' "$BIG" | jq -r .status.phaseMessage | grep -q "exceed the 8 its department default deserves" ||
  fail "team-big's phaseMessage: $BIG"
PBIG=$(printf '%s' "$BIG" | jq -r .id)
[ "$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name==team-big" "" "$ADMIN" |
  jq -r '.projects[0].status.additionalStatusData.quotaNotBacked[0].departmentDeserved')" = 8 ] ||
  fail "the project list does not flag team-big"
expect 200 PUT "/api/v1/org-unit/projects/$PBIG" '{"name":"team-big","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":8}}]}' "$ADMIN" | jq -e '.status.additionalStatusData == null and
  .status.phaseMessage == ""' >/dev/null || fail "team-big's 8 GPUs are backed"
expect 200 PUT "/api/v1/org-unit/projects/$PBIG" '{"name":"team-big","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":8}},{"nodePool":{"name":"a100"},"gpu":{"deserved":1}}]}' "$ADMIN" |
  jq -e '.status.additionalStatusData == null' >/dev/null ||
  fail "the default department follows the cluster in a100 too"
# a department with no entry in a pool deserves 0 there
D2=$(expect 201 POST /api/v1/org-unit/departments '{"name":"research","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":1}}]}' "$ADMIN" | jq -r .id)
expect 201 POST /api/v1/org-unit/projects '{"name":"team-r2","parentId":"'"$D2"'","resources":[
  {"nodePool":{"name":"default"},"gpu":{"deserved":1}},{"nodePool":{"name":"a100"},"gpu":{"deserved":2}}]}' \
  "$ADMIN" | jq -e '.status.additionalStatusData.quotaNotBacked | length == 1 and
  .[0].nodePoolName == "a100" and .[0].departmentDeserved == 0' >/dev/null ||
  fail "team-r2's a100 quota under research (nothing in a100) is not flagged"
PR2=$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name==team-r2" "" "$ADMIN" | jq -r '.projects[0].id')
for p in "$PBIG" "$PR2"; do expect 204 DELETE "/api/v1/org-unit/projects/$p" "" "$ADMIN" >/dev/null; done
expect 204 DELETE "/api/v1/org-unit/departments/$D2" "" "$ADMIN" >/dev/null

# ---- workloads: node type affinity through the default pools, batch ----
submit() { # NAME PROJECT GPUS [STATUS]
  expect "${4:-202}" POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"spec\":{\"image\":\"x\",\"compute\":{\"gpuDevicesRequest\":$3}}}" "$ADMIN"
}
submit big "$PA" 8 | jq -e '.actualPhase == "Pending"' >/dev/null
wait_phase "$ADMIN" big Running
[ "$(expect 200 GET "/api/v1/workloads?filterBy=name==big" "" "$ADMIN" | jq -r '.workloads[0].id' |
  xargs -I{} sh -c "curl -s $URL/api/v1/workloads/{}/pods -H 'Authorization: Bearer $ADMIN'" |
  jq -r '.pods[0].currentNodePool')" = a100 ] || fail "team-a's default pool is a100"
for n in 1 2 3; do submit "q$n" "$PB" 1 >/dev/null; done
IDS=$(expect 200 GET "/api/v1/workloads?filterBy=name=^q&sortBy=name" "" "$ADMIN" | jq -c '[.workloads[].id]')
R=$(expect 200 POST /api/v1/workloads/batch "{\"ids\":$IDS,\"action\":\"suspend\"}" "$ADMIN")
[ "$(printf '%s' "$R" | jq '.succeeded | length')" = 3 ] || fail "batch suspend: $R"
wait_phase "$ADMIN" q3 Stopped
R=$(expect 200 POST /api/v1/workloads/batch \
  "{\"ids\":[$(printf '%s' "$IDS" | jq '.[0]'),\"00000000-0000-0000-0000-000000000000\"],\"action\":\"delete\"}" "$ADMIN")
[ "$(printf '%s' "$R" | jq -r '[(.succeeded | length), .failed[0].code] | join(",")')" = "1,404" ] \
  || fail "batch delete: $R"
expect 400 POST /api/v1/workloads/batch '{"ids":[],"action":"delete"}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/workloads/batch '{"ids":["x"],"action":"explode"}' "$ADMIN" >/dev/null

# ---- time limits: a training past its project's limit is suspended ----
PT=$(project team-t 1 '"schedulingRules":{"trainingJobTimeLimitSeconds":1}')
submit timed "$PT" 1 >/dev/null
wait_phase "$ADMIN" timed Running
wait_phase "$ADMIN" timed Stopped
TID=$(expect 200 GET "/api/v1/workloads?filterBy=name==timed" "" "$ADMIN" | jq -r '.workloads[0].id')
EV=$(expect 200 GET "/api/v1/workloads/$TID/events" "" "$ADMIN" | jq -c '[.events[].message]')
printf '%s' "$EV" | grep -q "the limit is 1 s" || fail "no event names the time limit: $EV"
expect 400 GET "/api/v1/workloads/$TID/events?filterBy=reason==Running" "" "$ADMIN" |
  jq -e '.details | test("offset, limit and sortOrder only")' >/dev/null ||
  fail "a filter on events was not refused"

# ---- metrics: Prometheus families and the time series ----
M=$(curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN")
for fam in kai_queue_deserved_gpus kai_queue_fair_share_gpu kai_queue_allocated_gpus \
    'allot_workloads{phase="Running"}' allot_sched_cycle_duration_seconds_bucket \
    'allot_evictions_total{reason="Reclaimed"}'; do
  printf '%s\n' "$M" | grep -qF "$fam" || fail "/metrics lacks $fam"
done
# the scheduler thread's lock holds: every lock has a histogram whose
# buckets grow to its count, a longest hold within the sum, and a longest
# time on the holder's CPU within the longest hold (model and write; the
# state mutex's is not read; the CPU counted includes taking and giving back
# the lock, system calls that on a loaded machine under a sanitizer took
# 0.5 ms past the hold: 5 ms of room, where a wrong unit would be 1,000x
# off); this server has run
# cycles (model, state) and written their decisions (write)
printf '%s\n' "$M" | awk '
  /^allot_sched_lock_hold_seconds_bucket/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l)
    if ($2 < last[l]) bad = bad " " l ":buckets-decrease"; last[l] = $2; inf[l] = $2 }
  /^allot_sched_lock_hold_seconds_count/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l); n[l] = $2 }
  /^allot_sched_lock_hold_seconds_sum/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l); sum[l] = $2 }
  /^allot_sched_lock_hold_max_seconds/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l); mx[l] = $2 }
  /^allot_sched_lock_hold_cpu_max_seconds/ { l = $1; sub(/.*lock="/, "", l); sub(/".*/, "", l)
    cpu[l] = $2 }
  END { split("state model write", want, " ")
        for (i = 1; i <= 3; i++) { l = want[i]
          if (!(l in n) || n[l] < 1) bad = bad " " l ":no-holds"
          else if (inf[l] != n[l]) bad = bad " " l ":inf-not-count"
          else if (mx[l] < 0 || mx[l] > sum[l] + 0.000001) bad = bad " " l ":max-not-within-sum"
          else if (l == "state" && (l in cpu)) bad = bad " state:cpu-not-read"
          else if (l != "state" && (!(l in cpu) || cpu[l] < 0 || cpu[l] > mx[l] + 0.005))
            bad = bad " " l ":cpu-not-within-max" }
        if (bad) { print bad; exit 1 } }' ||
  fail "allot_sched_lock_hold_*: $(printf '%s\n' "$M" | grep allot_sched_lock_hold)"
printf '%s\n' "$M" | grep -q '^kai_queue_allocated_gpus{queue_name="team-a",nodepool="a100",kind="project"} 8' \
  || fail "team-a holds 8 GPUs in a100: $(printf '%s\n' "$M" | grep team-a)"
NOW=$(date -u -d "+1 minute" +%Y-%m-%dT%H:%M:%SZ)
START=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ)
series() {
  expect 200 GET "/api/v1/org-unit/projects/$PA/metrics?metricType=GPU_ALLOCATION,GPU_QUOTA&start=$START&end=$NOW&numberOfSamples=5" \
    "" "$ADMIN"
}
sampled() { [ "$(series | jq -r '.measurements[0].values[-1].value')" = 8.000 ]; }
poll 10 sampled || fail "no sample of team-a's 8 GPUs: $(series)"
S=$(series)
[ "$(printf '%s' "$S" | jq -r '[.measurements[].type] | join(",")')" = "GPU_ALLOCATION,GPU_QUOTA" ] \
  || fail "series types: $S"
[ "$(printf '%s' "$S" | jq -r '.measurements[0].values[-1].value')" = "8.000" ] || fail "allocation series: $S"
[ "$(printf '%s' "$S" | jq -r '.measurements[1].values[-1].value')" = "2.000" ] || fail "quota series: $S"
expect 400 GET "/api/v1/org-unit/projects/$PA/metrics?metricType=NOPE&start=$START&end=$NOW" "" "$ADMIN" >/dev/null
expect 400 GET "/api/v1/org-unit/projects/$PA/metrics?metricType=GPU_QUOTA" "" "$ADMIN" >/dev/null
expect 200 GET "/api/v1/org-unit/departments/$DEP/metrics?metricType=GPU_ALLOCATION&start=$START&end=$NOW" \
  "" "$ADMIN" >/dev/null

# ---- bad input ----
bad() { # FIELD BODY: a training submission answered 400 whose details name FIELD
  D=$(expect 400 POST /api/v1/workloads/trainings "$2" "$ADMIN" | jq -r .details)
  printf '%s' "$D" | grep -q "$1" || fail "400 for $1 does not name it: $D"
}
bad gpuDevicesRequest "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":-1}}}"
bad gpuDevicesRequest "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":100000}}}"
bad gpuDevicesRequest "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":\"2\"}}}"
bad gpuPortionRequest "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"compute\":{\"gpuPortionRequest\":1.5}}}"
bad parallelism "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"parallelism\":0}}"
bad name "{\"name\":\"Bad Name\",\"projectId\":\"$PB\",\"spec\":{}}"
bad projectId "{\"name\":\"b1\",\"projectId\":7,\"spec\":{}}"
bad image "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"image\":[]}}"
bad colour "{\"name\":\"b1\",\"projectId\":\"$PB\",\"spec\":{\"colour\":\"red\"}}"
expect 400 POST /api/v1/workloads/trainings '{"name":"b1","projectId":"no-such-project","spec":{}}' "$ADMIN" |
  jq -r .details | grep -q projectId || fail "unknown project not named"
expect 400 POST /api/v1/workloads/trainings '[1,2]' "$ADMIN" >/dev/null
expect 400 POST /api/v1/org-unit/projects '{"name":"x","resources":[{"nodePool":{"name":"default"},"gpu":{"deserved":-5}}]}' \
  "$ADMIN" >/dev/null
expect 409 POST /api/v1/org-unit/projects '{"name":"team-a","resources":[]}' "$ADMIN" >/dev/null
expect 404 GET /api/v1/workloads/00000000-0000-0000-0000-000000000000 "" "$ADMIN" >/dev/null
expect 405 PUT /api/v1/workloads "" "$ADMIN" >/dev/null
head -c 1100000 /dev/zero | tr '\0' ' ' >"$T/big"
S=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$URL/api/v1/org-unit/projects/$PA" \
  -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-binary @"$T/big")
[ "$S" = 413 ] || fail "1.1 MB PATCH: $S"
printf '{"name":"%s"}' "$(head -c 3000 /dev/zero | tr '\0' 'a')" >"$T/long"
expect 400 POST /api/v1/workloads/trainings "$(cat "$T/long")" "$ADMIN" >/dev/null
curl -s -o /dev/null "$URL/healthz" || fail "the server died on bad input"

# ---- revoked tokens: logout and password change ----
PW=$(expect 201 POST /api/v1/users '{"email":"bob@example.com"}' "$ADMIN" | jq -r .tempPassword)
BOB_ID=$(expect 200 GET /api/v1/users "" "$ADMIN" | jq -r '.[] | select(.username == "bob@example.com") | .id')
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"bob@example.com\",
  \"subjectType\":\"user\",\"roleId\":6,\"scopeType\":\"project\",\"scopeId\":\"$PB\"}" "$ADMIN" >/dev/null
BOB=$(login bob@example.com "$PW")
expect 200 GET /api/v1/workloads "" "$BOB" >/dev/null
expect 200 GET /api/v1/workloads "" "$BOB" >/dev/null # now from the principal cache
expect 200 POST "/api/v1/users/$BOB_ID/logout" "" "$ADMIN" >/dev/null
expect 401 GET /api/v1/workloads "" "$BOB" >/dev/null
BOB=$(login bob@example.com "$PW")
expect 200 POST /api/v1/me/password "{\"currentPassword\":\"$PW\",\"newPassword\":\"bob-new-password\"}" \
  "$BOB" >/dev/null
expect 401 GET /api/v1/workloads "" "$BOB" >/dev/null
BOB=$(login bob@example.com bob-new-password)
RULE=$(expect 200 GET /api/v1/authorization/access-rules "" "$ADMIN" |
  jq -r '.accessRules[] | select(.subjectId == "bob@example.com") | .id')
expect 200 GET "/api/v1/org-unit/projects/$PB" "" "$BOB" >/dev/null
expect 204 DELETE "/api/v1/authorization/access-rules/$RULE" "" "$ADMIN" >/dev/null
expect 403 GET /api/v1/workloads "" "$BOB" >/dev/null # the revoked rule counts at once

stop

# ---- 429 from the token bucket ----
start --db "$T/org.db" --simulate-nodes 0 --rate-limit 5
# 30 requests from one curl at once, so that a slow machine cannot space them out
curl -s --parallel --parallel-max 30 -o "$T/r#1" \
  -w '%{http_code} %{filename_effective} retry-after=%header{retry-after}\n' "$URL/healthz?n=[1-30]" \
  >"$T/codes" || true
N429=$(grep -c '^429 ' "$T/codes" || true)
[ "$N429" -gt 0 ] || fail "no 429 after 30 requests at once with 5/s: $(sort "$T/codes" | uniq -c)"
set -- $(grep '^429 ' "$T/codes" | head -n 1)
[ "${3#retry-after=}" -ge 1 ] 2>/dev/null || fail "429 without Retry-After: $*"
jq -e '.code == 429 and (.message | length > 0)' "$2" >/dev/null || fail "429 body: $(cat "$2")"
stop
echo "e2e_org: ok"
