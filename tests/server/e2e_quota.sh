#!/bin/sh
# e2e_quota.sh: quotas and over-quota priority through the API, against a
# real allotd on one simulated 4-GPU machine.
#   1. Two departments and their projects created without any quota have
#      deserved 0, no limit and weight 1 in the pool, like any other (the
#      `default` department is not special): research's team-a fills the 4
#      GPUs while ops is idle; once ops's team-b asks for 2, it takes back
#      its share and the pool ends 2 / 2.
#   2. resources[].priority (None, Low, Normal, High) is stored, shown, and
#      orders the departments for spare GPUs in that pool: research at High
#      is served first, so its fair share becomes the whole pool and it
#      takes team-b's GPUs back.
#   3. Fields allot does not support are refused with 400, never dropped.
#   4. phaseReason NonPreemptibleOverQuota: a non-preemptible workload
#      beyond its project's deserved quota waits, saying so.
#   5. phaseReason OverLimit: a workload that would take its project past
#      its GPU limit waits, saying so.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/quota.db" --simulate-nodes 1x4
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")

department() { # NAME: a department without resources
  expect 201 POST /api/v1/org-unit/departments "{\"name\":\"$1\"}" "$ADMIN" | jq -r .id
}
project() { # NAME DEPARTMENT-ID: a project without resources
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$2\"}" "$ADMIN" | jq -r .id
}
train() { # NAME PROJECT-ID
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
}
gpus() { # KIND ID FIELD: allocated or fairShare GPUs of a department or project in the pool
  expect 200 GET "/api/v1/org-unit/$1/$2" "" "$ADMIN" |
    jq ".status.nodePoolQuotaStatuses[0].$3.gpu // 0 | floor"
}
# wait_gpus KIND ID FIELD WANT: polls for up to 20 s.
has_gpus() { [ "$(gpus "$1" "$2" "$3")" = "$4" ]; }
wait_gpus() {
  poll 20 has_gpus "$@" || fail "$1 $2: $3 is $(gpus "$1" "$2" "$3"), wanted $4"
}

# ---- 1. no quota means deserved 0, weight 1: two departments end 2 / 2 ----
RESEARCH=$(department research)
OPS=$(department ops)
PA=$(project team-a "$RESEARCH")
PB=$(project team-b "$OPS")
for n in 1 2 3 4; do train "a$n" "$PA"; done
wait_gpus projects "$PA" allocated 4
train b1 "$PB"
train b2 "$PB"
wait_gpus projects "$PB" allocated 2
wait_gpus projects "$PA" allocated 2
wait_gpus departments "$RESEARCH" fairShare 2
wait_gpus departments "$OPS" fairShare 2
[ "$(gpus departments "$RESEARCH" allocated)" = 2 ] || fail "research should hold 2 GPUs"
[ "$(gpus departments "$OPS" allocated)" = 2 ] || fail "ops should hold 2 GPUs"
D=$(expect 200 GET "/api/v1/org-unit/departments?filterBy=name==default" "" "$ADMIN" |
  jq -r '.departments[0] | [(.resources | length), .totalResources.gpuQuota] | join(",")')
[ "$D" = "0,0" ] || fail "the default department has no quota of its own: $D"

# ---- 2. over-quota priority per pool ----
expect 200 PATCH "/api/v1/org-unit/departments/$RESEARCH/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":0},"priority":"High"}]' "$ADMIN" |
  jq -e '.[0].priority == "High"' >/dev/null || fail "priority High is not kept"
expect 200 GET "/api/v1/org-unit/departments/$RESEARCH" "" "$ADMIN" |
  jq -e '.resources[0].priority == "High"' >/dev/null || fail "priority High does not read back"
wait_gpus departments "$RESEARCH" fairShare 4
wait_gpus projects "$PA" allocated 4
[ "$(gpus projects "$PB" allocated)" = 0 ] || fail "team-b should have given its GPUs back"
expect 200 GET "/api/v1/org-unit/projects/$PB" "" "$ADMIN" |
  jq -e '.resources == []' >/dev/null || fail "team-b has no resources entry"

# ---- 3. unsupported fields are refused ----
bad() { # METHOD PATH BODY WORD: 400 whose details name WORD
  expect 400 "$1" "$2" "$3" "$ADMIN" | jq -r .details | grep -q "$4" || fail "$2 $3: no $4 in the answer"
}
bad PATCH "/api/v1/org-unit/projects/$PA/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":1},"priority":"Urgent"}]' priority
bad PATCH "/api/v1/org-unit/projects/$PA/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":1},"rank":"High"}]' rank
bad PATCH "/api/v1/org-unit/projects/$PA/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":1,"units":"GB"}}]' units
bad POST /api/v1/org-unit/projects '{"name":"team-c","requestedNamespace":"ml"}' requestedNamespace
bad POST /api/v1/org-unit/projects '{"name":"team-c","enforceRunaiScheduler":false}' enforceRunaiScheduler
bad POST /api/v1/org-unit/departments '{"name":"lab","requestedNamespace":"runai-lab"}' requestedNamespace
expect 201 POST /api/v1/org-unit/projects '{"name":"team-c","requestedNamespace":"runai-team-c",
  "enforceRunaiScheduler":true}' "$ADMIN" >/dev/null

# phase_reason ID: the workload's phaseReason ("null" when none)
phase_reason() { expect 200 GET "/api/v1/workloads/$1" "" "$ADMIN" | jq -r .phaseReason; }
has_reason() { [ "$(phase_reason "$1")" = "$2" ]; }
wait_reason() { # ID REASON
  poll 20 has_reason "$1" "$2" || fail "workload $1: phaseReason $(phase_reason "$1"), wanted $2"
}
RULES=$(department rules)

# ---- 4. NonPreemptibleOverQuota ----
PN=$(project team-n "$RULES")
W=$(expect 202 POST /api/v1/workloads/trainings "{\"name\":\"np1\",\"projectId\":\"$PN\",
  \"spec\":{\"image\":\"busybox\",\"preemptibility\":\"non-preemptible\",
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" | jq -r .workloadId)
wait_reason "$W" NonPreemptibleOverQuota
expect 200 GET "/api/v1/workloads/$W" "" "$ADMIN" | jq -e '.phase == "Pending"' >/dev/null ||
  fail "np1 runs beyond its project's quota"

# ---- 5. OverLimit ----
PL=$(project team-l "$RULES")
expect 200 PUT "/api/v1/org-unit/projects/$PL/resources" \
  '[{"nodePool":{"name":"default"},"gpu":{"deserved":0,"limit":1}}]' "$ADMIN" >/dev/null
W=$(expect 202 POST /api/v1/workloads/trainings "{\"name\":\"ol1\",\"projectId\":\"$PL\",
  \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":2}}}" "$ADMIN" | jq -r .workloadId)
wait_reason "$W" OverLimit
stop
echo "e2e_quota: ok"
