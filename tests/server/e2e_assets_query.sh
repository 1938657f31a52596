#!/bin/sh
# e2e_assets_query.sh: the query parameters of the asset lists and GETs,
# each by its effect, through a real allotd: the type filters (isTraining,
# ..., distributedFramework), usageInfo (the workloads, templates and
# assets that use an asset; an asset's own GET names them, and so does the
# refusal to delete one in use), complyToProject with complyToWorkloadType
# (scope, supported types, the project's policy; usageTimes), statusInfo,
# the scope filters (departmentId with includeDescendants, clusterId,
# scope=cluster), assetIds; and every sortBy of GET /api/v1/workloads.
# Every reply is checked against Run:ai's document (lib.sh).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/aq.db" --simulate-nodes 1x4
RES=$(org_department research 4)
OPS=$(org_department ops 4)
PA=$(dept_project team-a "$RES")
PB=$(dept_project team-b "$OPS")
A=/api/v1/asset
asset() { # STATUS KIND-PATH NAME META-SCOPE SPEC: prints its id
  expect "$1" POST "$A/$2" "{\"meta\":{\"name\":\"$3\",$4},\"spec\":$5}" "$ADMIN" | jq -r .meta.id
}
only() { # TYPES...: meta.workloadSupportedTypes serving those types only
  printf '"workloadSupportedTypes":{'
  for t in training workspace inference distributed; do
    case " $* " in *" $t "*) printf '"%s":true,' $t ;; *) printf '"%s":false,' $t ;; esac
  done
  printf '"distFramework":"TF"}'
}
IN_A="\"scope\":\"project\",\"projectId\":\"$PA\""
ANY=$(asset 202 environment any-env "$IN_A" '{"image":"busybox","command":"sleep","args":"600"}')
INF=$(asset 202 environment inf-env "$IN_A,$(only inference)" '{"image":"vllm"}')
TFE=$(asset 202 environment tf-env "\"scope\":\"tenant\",$(only distributed)" '{"image":"tf"}')
BIG=$(asset 202 compute four-gpus "\"scope\":\"department\",\"departmentId\":\"$RES\"" \
  '{"gpuDevicesRequest":4}')
HPB=$(asset 202 datasource/host-path b-data "\"scope\":\"project\",\"projectId\":\"$PB\"" \
  '{"path":"/tmp","mountPath":"/data"}')
PW=$(asset 202 credentials/password db-cred "$IN_A" '{"user":"u","password":"aq-pw"}')
CRE=$(asset 202 environment cred-env "$IN_A" "{\"image\":\"busybox\",\"environmentVariables\":
  [{\"name\":\"DB_PASSWORD\",\"credential\":{\"assetId\":\"$PW\",\"key\":\"password\"}}]}")
SEQ_A=$(expect 200 GET "$A/environment/$ANY" "" "$ADMIN" | jq .meta.projectId)
names() { # PATH?QUERY: the sorted names of the list's entries, on one line
  expect 200 GET "$A/$1" "" "$ADMIN" | jq -c '[.entries[].meta.name] | sort'
}
is() { # WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1: $2, wanted $3"
}

# ---- the type filters: what a submission of that type may take ----
is isTraining "$(names 'environment?isTraining=true')" '["any-env","cred-env"]'
is isInference "$(names 'environment?isInference=true')" '["any-env","cred-env","inf-env"]'
is isDistributed "$(names 'environment?isDistributed=true')" '["any-env","cred-env","tf-env"]'
is "isTraining=false" "$(names 'environment?isTraining=false')" \
  '["any-env","cred-env","inf-env","tf-env"]'
is "distributedFramework=TF" "$(names 'environment?distributedFramework=TF')" \
  '["any-env","cred-env","tf-env"]'
is "distributedFramework=PyTorch" "$(names 'environment?distributedFramework=PyTorch')" \
  '["any-env","cred-env"]'
AT=$(asset 202 workload-template inf-tpl "$IN_A,$(only inference)" \
  "{\"assets\":{\"environment\":\"$INF\"}}")
is "templates isWorkspace" "$(names 'workload-template?isWorkspace=true')" '[]'
is "templates isInference" "$(names 'workload-template?isInference=true')" '["inf-tpl"]'

# ---- usage: a workload from assets, a template, an environment's credential ----
U1=$(expect 202 POST /api/v1/workloads/trainings "{\"name\":\"u1\",\"projectId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\",\"assets\":{\"environment\":\"any-env\",\"compute\":\"$BIG\"},
  \"spec\":{}}" "$ADMIN" | jq -r .workloadId)
wait_phase "$ADMIN" u1 Running
L=$(expect 200 GET "$A/environment?usageInfo=true" "" "$ADMIN")
printf '%s' "$L" | jq -e --arg u "$U1" '[.entries[] | select(.meta.name == "any-env")][0].usedBy
  | .trainings == [{"id":$u,"name":"u1","status":"Running"}] and .workspaces == []' >/dev/null ||
  fail "usageInfo does not name u1: $L"
printf '%s' "$L" | jq -e '[.entries[] | select(.meta.name == "inf-env")][0].usedBy |
  .templates[0].name == "inf-tpl" and .trainings == []' >/dev/null ||
  fail "usageInfo does not name the template of inf-env: $L"
expect 200 GET "$A/environment" "" "$ADMIN" | jq -e '[.entries[] | has("usedBy")] | any | not' \
  >/dev/null || fail "usedBy without usageInfo"
expect 200 GET "$A/compute?usageInfo=true" "" "$ADMIN" |
  jq -e '.entries[0].usedBy.trainings[0].name == "u1"' >/dev/null || fail "compute's usedBy"
expect 200 GET "$A/credentials/password/$PW" "" "$ADMIN" |
  jq -e '.usedBy.assets.environments == [{"id":"'"$CRE"'","name":"cred-env"}]' >/dev/null ||
  fail "a credential's GET does not name the environment that takes it"
expect 200 GET "$A/environment/$ANY?usageInfo=false" "" "$ADMIN" | jq -e 'has("usedBy") | not' \
  >/dev/null || fail "usageInfo=false on a GET"
D=$(expect 403 DELETE "$A/environment/$ANY" "" "$ADMIN")
printf '%s' "$D" | jq -e '.usedBy.trainings[0].name == "u1" and (.details | test("u1"))' \
  >/dev/null || fail "deleting an environment in use does not name u1: $D"
expect 412 DELETE "$A/credentials/password/$PW" "" "$ADMIN" |
  jq -e '.usedBy.assets.environments[0].name == "cred-env"' >/dev/null ||
  fail "deleting a credential in use does not name its environment"

# ---- compliance with a project's policy, and usageTimes ----
expect 200 PUT /api/v2/policy/trainings "{\"meta\":{\"name\":\"team-a\",\"scope\":\"project\",
  \"projectId\":\"$PA\"},\"policy\":{\"rules\":{\"compute\":{\"gpuDevicesRequest\":{\"max\":2}},
  \"image\":{\"required\":true}}}}" "$ADMIN" >/dev/null
C=$(expect 200 GET "$A/compute?complyToProject=$SEQ_A&complyToWorkloadType=Training" "" "$ADMIN")
printf '%s' "$C" | jq -e '.entries[0] | .compliance.compliance == false and .compliance.imposed ==
  false and .compliance.reason[0].field == "compute.gpuDevicesRequest" and
  .compliance.reason[0].rule == "max" and .usageTimes.lastUsedByWorkload != null' >/dev/null ||
  fail "a compute resource over the project's policy complies: $C"
C=$(expect 200 GET "$A/compute/$BIG?complyToProject=$SEQ_A&complyToWorkloadType=Workspace" "" "$ADMIN")
printf '%s' "$C" | jq -e '.compliance.compliance == true and .compliance.reason == [] and
  .usageTimes.lastUsedByWorkload == null' >/dev/null ||
  fail "no workspace policy, no workspace used it: $C"
C=$(expect 200 GET "$A/environment?complyToProject=$SEQ_A&complyToWorkloadType=Training" "" "$ADMIN")
printf '%s' "$C" | jq -e '[.entries[] | {key: .meta.name, value: .compliance.compliance}] |
  from_entries == {"any-env":true,"cred-env":true,"inf-env":false,"tf-env":false}' >/dev/null ||
  fail "the environments' compliance for trainings: $C"
C=$(expect 200 GET "$A/datasource/host-path?complyToProject=$SEQ_A&complyToWorkloadType=Training&complyToReplicaType=Worker" "" "$ADMIN")
printf '%s' "$C" | jq -e '.entries[0].compliance.compliance == false and
  (.entries[0].compliance.reason[0].details | test("does not see"))' >/dev/null ||
  fail "team-b's data source complies for team-a: $C"

# ---- status ----
expect 200 GET "$A/environment?statusInfo=true" "" "$ADMIN" |
  jq -e '[.entries[].status.status] | unique == ["No issues found"]' >/dev/null ||
  fail "statusInfo of the environments"
expect 200 GET "$A/credentials/password?statusInfo=true" "" "$ADMIN" |
  jq -e '.entries[0].status.status == "No issues found"' >/dev/null || fail "a credential's status"

# ---- scopes: descendants, the cluster, assetIds ----
is "departmentId" "$(names "environment?departmentId=$RES")" '["tf-env"]'
is "departmentId with descendants" "$(names "environment?departmentId=$RES&includeDescendants=true")" \
  '["any-env","cred-env","inf-env","tf-env"]'
is "departmentId ops with descendants" "$(names "datasource?departmentId=$OPS&includeDescendants=true")" \
  '["b-data"]'
is "clusterId" "$(names "environment?clusterId=$CLUSTER")" '["tf-env"]'
is "clusterId with descendants" "$(names "environment?clusterId=$CLUSTER&includeDescendants=true")" \
  '["any-env","cred-env","inf-env","tf-env"]'
is "scope=cluster" "$(names 'environment?scope=cluster')" '["tf-env"]'
is "another cluster" "$(names 'environment?clusterId=00000000-0000-4000-8000-000000000000')" '[]'
is "assetIds" "$(names "datasource?assetIds=$HPB")" '["b-data"]'
is "assetIds of another" "$(names "datasource/host-path?assetIds=$ANY")" '[]'

# ---- GET /api/v1/workloads: every sortBy of the document ----
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"u2\",\"projectId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":2}}}" \
  "$ADMIN" >/dev/null   # waits: u1 holds the four GPUs
sleep 1.2
order() { # SORTBY ORDER: the workloads' names in that order, on one line
  expect 200 GET "/api/v1/workloads?sortBy=$1&sortOrder=$2" "" "$ADMIN" |
    jq -r '[.workloads[].name] | join(",")'
}
is "totalRunningTimeSeconds asc" "$(order totalRunningTimeSeconds asc)" "u2,u1"
is "totalRunningTimeSeconds desc" "$(order totalRunningTimeSeconds desc)" "u1,u2"
for f in type name clusterId projectId projectName departmentId departmentName createdAt deletedAt \
    submittedBy phase completedAt nodepool distributedFramework allocatedGPU idleGpus \
    idleAllocatedGpus phaseUpdatedAt category priority totalPendingTimeSeconds \
    totalRunningTimeSeconds priorityClassName guaranteedRuntimeEndsAt aiApplicationId \
    aiApplicationName; do
  order "$f" asc >/dev/null
done
# a field every workload has alike sorts as the default order, createdAt
for f in clusterId distributedFramework idleGpus idleAllocatedGpus totalPendingTimeSeconds \
    guaranteedRuntimeEndsAt aiApplicationId aiApplicationName; do
  is "$f asc" "$(order "$f" asc)" "u1,u2"
  is "$f desc" "$(order "$f" desc)" "u2,u1"
done
is "filterBy clusterId" "$(expect 200 GET "/api/v1/workloads/count?filterBy=clusterId==$CLUSTER" \
  "" "$ADMIN" | jq .count)" 2
is "filterBy another clusterId" "$(expect 200 GET \
  "/api/v1/workloads/count?filterBy=clusterId==00000000-0000-4000-8000-000000000000" "" "$ADMIN" |
  jq .count)" 0

# ---- generic secrets: usedBy and status, and a delete refused naming the user ----
GS=$A/credentials/generic-secret
GID=$(expect 202 POST $GS "{\"meta\":{\"name\":\"gs1\",$IN_A},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"K\",\"value\":\"aq-gs\"}]}}" "$ADMIN" | jq -r .meta.id)
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"u3\",\"projectId\":\"$PA\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"environmentVariables\":
  [{\"name\":\"K\",\"secret\":{\"name\":\"gs1\",\"key\":\"K\"}}]}}" "$ADMIN" >/dev/null
G=$(expect 200 GET "$GS?usageInfo=true&statusInfo=true" "" "$ADMIN")
printf '%s' "$G" | jq -e '.entries[0] | .usedBy.trainings[0].name == "u3" and
  .status.status == "No issues found"' >/dev/null || fail "a generic secret's usedBy and status: $G"
expect 200 GET "$A/credentials?usageInfo=true" "" "$ADMIN" |
  jq -e '[.entries[] | select(.meta.name == "gs1")][0].usedBy.trainings[0].name == "u3"' >/dev/null ||
  fail "the credentials' list leaves out a generic secret's usedBy"
expect 200 GET "$GS/$GID?usageInfo=false" "" "$ADMIN" | jq -e 'has("usedBy") | not' >/dev/null ||
  fail "usageInfo=false on a generic secret"
expect 412 DELETE "$GS/$GID" "" "$ADMIN" | jq -e '.usedBy.trainings[0].name == "u3"' >/dev/null ||
  fail "deleting a generic secret in use does not name u3"

stop
schema_check
SCHEMA_CHECKED=1
echo "e2e_assets_query: ok"
