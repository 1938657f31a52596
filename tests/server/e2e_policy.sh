#!/bin/sh
# e2e_policy.sh: the policy matrix through a real allotd. Training policies
# at the tenant, the department research and its project team-a merge: a
# field's rule comes from the highest scope that has one, its default from
# the lowest; defaults fill what a submission leaves out; each refusal is a
# 400 naming the field, the rule and its scope. Also: policies that cannot
# be kept (unknown fields, min above max, a default that breaks a higher
# scope's rule), PATCH with reset and validateOnly, DELETE, the list, who
# may read and change a policy, and a distributed policy's worker section.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/policy.db" --simulate-nodes 2x4
RES=$(org_department research 8)
OPS=$(org_department ops 8)
PA=$(dept_project team-a "$RES")
PB=$(dept_project team-b "$RES")
PC=$(dept_project team-c "$OPS")
TP=/api/v2/policy/trainings

# ---- the three scopes' training policies ----
expect 200 PUT $TP '{"meta":{"name":"tenant","scope":"tenant"},"policy":{
  "defaults":{"image":"busybox","compute":{"gpuDevicesRequest":1}},
  "rules":{"compute":{"gpuDevicesRequest":{"max":4}},"nodePools":{"options":[{"value":"default"}]}}}}' \
  "$ADMIN" | jq -e '.meta.scope == "tenant" and .policy.defaults.image == "busybox"' >/dev/null ||
  fail "the tenant policy"
expect 200 PUT $TP "{\"meta\":{\"name\":\"research\",\"scope\":\"department\",\"departmentId\":\"$RES\"},
  \"policy\":{\"defaults\":{\"compute\":{\"gpuDevicesRequest\":2}},
  \"rules\":{\"compute\":{\"gpuDevicesRequest\":{\"max\":8},\"cpuMemoryRequest\":{\"max\":\"1Gi\"}},
  \"imagePullPolicy\":{\"options\":[{\"value\":\"IfNotPresent\"},{\"value\":\"Never\"}]}}}}" \
  "$ADMIN" >/dev/null
expect 200 PUT $TP "{\"meta\":{\"name\":\"team-a\",\"scope\":\"project\",\"projectId\":\"$PA\"},
  \"policy\":{\"defaults\":{\"compute\":{\"gpuDevicesRequest\":1},\"priorityClass\":\"train\"},
  \"rules\":{\"priorityClass\":{\"canEdit\":false},
  \"compute\":{\"cpuCoreRequest\":{\"min\":0.5,\"step\":0.5},\"cpuMemoryRequest\":{\"max\":\"4Gi\"}}}}}" \
  "$ADMIN" >/dev/null

# ---- the effective policy of team-a ----
E=$(expect 200 GET "$TP?scope=project&projectId=$PA" "" "$ADMIN")
printf '%s' "$E" | jq -e '.effective.rules.compute.gpuDevicesRequest == {"max":4,
  "sourceOfRule":{"scope":"tenant"}}' >/dev/null || fail "gpu rule is not the tenant's: $E"
printf '%s' "$E" | jq -e --arg d "$RES" '.effective.rules.compute.cpuMemoryRequest.sourceOfRule ==
  {"scope":"department","departmentId":$d}' >/dev/null || fail "memory rule is not the department's"
printf '%s' "$E" | jq -e '.effective.defaults == {"image":"busybox","priorityClass":"train",
  "compute":{"gpuDevicesRequest":1}} and .meta.name == "team-a"' >/dev/null ||
  fail "team-a's effective defaults: $E"
expect 200 GET "$TP?scope=project&projectId=$PB" "" "$ADMIN" |
  jq -e '.effective.defaults.compute.gpuDevicesRequest == 2 and (has("meta") | not)' >/dev/null ||
  fail "team-b does not take its department's default"

# ---- submissions: defaults filled, each refusal names its rule ----
submit() { # PROJECT-ID NAME SPEC
  req POST /api/v1/workloads/trainings "{\"name\":\"$2\",\"projectId\":\"$1\",\"spec\":$3}" "$ADMIN"
}
accepted() { # PROJECT-ID NAME SPEC JQ-TEST-OF-STORED-SPEC
  out=$(submit "$1" "$2" "$3")
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 202 ] || fail "$2 refused: $out"
  id=$(printf '%s\n' "$out" | sed '$d' | jq -r .workloadId)
  expect 200 GET "/api/v1/workloads/trainings/$id" "" "$ADMIN" | jq -e ".spec | $4" >/dev/null ||
    fail "$2's spec: $(expect 200 GET "/api/v1/workloads/trainings/$id" "" "$ADMIN" | jq -c .spec)"
}
refused() { # PROJECT-ID NAME SPEC TEXT
  out=$(submit "$1" "$2" "$3")
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 400 ] || fail "$2 not refused: $out"
  printf '%s\n' "$out" | sed '$d' | jq -r .details | grep -qF -- "$4" ||
    fail "$2: wanted '$4' in $out"
}
accepted "$PA" a-defaults '{}' \
  '.image == "busybox" and .compute.gpuDevicesRequest == 1 and .priorityClass == "train"'
accepted "$PB" b-defaults '{}' '.compute.gpuDevicesRequest == 2 and (has("priorityClass") | not)'
accepted "$PC" c-defaults '{}' '.compute.gpuDevicesRequest == 1 and .image == "busybox"'
accepted "$PA" a-given '{"image":"alpine","compute":{"gpuDevicesRequest":4,"cpuCoreRequest":1.5}}' \
  '.image == "alpine" and .compute.gpuDevicesRequest == 4'
refused "$PA" a-max '{"compute":{"gpuDevicesRequest":5}}' \
  "spec.compute.gpuDevicesRequest 5 breaks the rule max 4 of the tenant policy"
refused "$PB" b-max '{"compute":{"gpuDevicesRequest":6}}' "max 4 of the tenant policy"
refused "$PA" a-options '{"imagePullPolicy":"Always"}' \
  "spec.imagePullPolicy \"Always\" breaks the rule options"
refused "$PA" a-options2 '{"imagePullPolicy":"Always"}' "of the department policy (research)"
accepted "$PC" c-pull '{"imagePullPolicy":"Always"}' '.imagePullPolicy == "Always"'
refused "$PA" a-canedit '{"priorityClass":"build"}' \
  "spec.priorityClass \"build\" breaks the rule canEdit false of the project policy (team-a)"
accepted "$PA" a-same '{"priorityClass":"train"}' '.priorityClass == "train"'
refused "$PA" a-step '{"compute":{"cpuCoreRequest":0.7}}' \
  "spec.compute.cpuCoreRequest 0.7 breaks the rule step 0.5 of the project policy (team-a)"
refused "$PA" a-min '{"compute":{"cpuCoreRequest":0.25}}' "breaks the rule min 0.5"
refused "$PA" a-qty '{"compute":{"cpuMemoryRequest":"2Gi"}}' \
  "spec.compute.cpuMemoryRequest \"2Gi\" breaks the rule max \"1Gi\" of the department policy (research)"
refused "$PC" c-pools '{"nodePools":["other"]}' "spec.nodePools [\"other\"] breaks the rule options"

# ---- policies that cannot be kept ----
bad_policy() { # BODY TEXT
  expect 400 PUT $TP "$1" "$ADMIN" | jq -r .details | grep -qF -- "$2" || fail "policy not refused for '$2'"
}
bad_policy "{\"meta\":{\"name\":\"x\",\"scope\":\"department\",\"departmentId\":\"$OPS\"},
  \"policy\":{\"defaults\":{\"compute\":{\"gpuDevicesRequest\":6}}}}" \
  "spec.compute.gpuDevicesRequest 6 (its default) breaks the rule max 4 of the tenant policy"
bad_policy "{\"meta\":{\"name\":\"x\",\"scope\":\"department\",\"departmentId\":\"$OPS\"},
  \"policy\":{\"rules\":{\"tolerations\":{\"canAdd\":false}}}}" "rules.tolerations is not a field"
bad_policy "{\"meta\":{\"name\":\"x\",\"scope\":\"department\",\"departmentId\":\"$OPS\"},
  \"policy\":{\"rules\":{\"compute\":{\"gpuDevicesRequest\":{\"min\":3,\"max\":2}}}}}" "min is above max"
bad_policy "{\"meta\":{\"name\":\"x\",\"scope\":\"department\",\"departmentId\":\"$OPS\"},
  \"policy\":{\"defaults\":{\"compute\":{\"gpuDevicesRequest\":\"two\"}}}}" "must be an integer"
bad_policy '{"meta":{"name":"x","scope":"cluster"},"policy":{}}' "one cluster"
expect 400 PUT $TP '{"meta":{"name":"x","scope":"project","projectId":"nope"},"policy":{}}' "$ADMIN" |
  jq -r .details | grep -q "no such project" || fail "a policy of no project"
expect 404 GET "$TP?scope=department&departmentId=nope" "" "$ADMIN" >/dev/null

# ---- PATCH (with reset), validateOnly, DELETE ----
expect 200 PATCH "$TP?validateOnly=true" "{\"meta\":{\"name\":\"team-a\",\"scope\":\"project\",
  \"projectId\":\"$PA\"},\"policy\":{\"defaults\":{\"image\":\"python\"}}}" "$ADMIN" |
  jq -e '.effective.defaults.image == "python"' >/dev/null || fail "validateOnly answer"
expect 200 GET "$TP?scope=project&projectId=$PA" "" "$ADMIN" |
  jq -e '.effective.defaults.image == "busybox"' >/dev/null || fail "validateOnly stored"
expect 200 PATCH $TP "{\"meta\":{\"name\":\"team-a\",\"scope\":\"project\",\"projectId\":\"$PA\"},
  \"policy\":{\"defaults\":{\"image\":\"python\"}},\"reset\":[\"priorityClass\"]}" "$ADMIN" |
  jq -e '.policy.defaults.image == "python" and (.policy.rules | has("priorityClass") | not)
    and .policy.rules.compute.cpuCoreRequest.step == 0.5' >/dev/null || fail "PATCH"
accepted "$PA" a-patched '{"priorityClass":"build"}' '.image == "python" and .priorityClass == "build"'
[ "$(expect 200 GET "/api/v2/policy?workloadType=Training" "" "$ADMIN" | jq '.policies | length')" = 3 ] ||
  fail "the list holds 3 training policies"
expect 200 GET "/api/v2/policy?scope=project&departmentId=$RES" "" "$ADMIN" |
  jq -e --arg p "$PA" '[.policies[].meta.projectId | tostring] | length == 1' >/dev/null ||
  fail "list filters"
expect 204 DELETE "$TP?scope=project&projectId=$PA" "" "$ADMIN" >/dev/null
expect 404 DELETE "$TP?scope=project&projectId=$PA" "" "$ADMIN" >/dev/null
accepted "$PA" a-after '{}' '.compute.gpuDevicesRequest == 2 and .image == "busybox"'

# ---- who may read and change ----
PW=$(expect 201 POST /api/v1/users '{"email":"res@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"res@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" "$ADMIN" >/dev/null
R=$(login res@example.com "$PW")
expect 200 GET "$TP?scope=project&projectId=$PA" "" "$R" >/dev/null
expect 403 GET "$TP?scope=project&projectId=$PC" "" "$R" >/dev/null
expect 403 PUT $TP "{\"meta\":{\"name\":\"x\",\"scope\":\"project\",\"projectId\":\"$PA\"},
  \"policy\":{}}" "$R" >/dev/null
[ "$(expect 200 GET /api/v2/policy "" "$R" | jq -r '[.policies[].meta.scope] | join(",")')" = tenant ] ||
  fail "a researcher of team-a lists the tenant's policy only (research's is the department's)"

# ---- a distributed policy speaks of its workers ----
DP=/api/v2/policy/distributed
expect 200 PUT $DP '{"meta":{"name":"d","scope":"tenant"},"policy":{"rules":{"worker":
  {"numWorkers":{"max":2}}},"defaults":{"worker":{"image":"torch"}}}}' "$ADMIN" >/dev/null
expect 400 PUT $DP '{"meta":{"name":"d","scope":"tenant"},"policy":{"rules":{"master":
  {"image":{"required":true}}}}}' "$ADMIN" | jq -r .details | grep -q "master runs the workers" ||
  fail "a master section is not refused"
out=$(req POST /api/v1/workloads/distributed "{\"name\":\"d3\",\"projectId\":\"$PC\",\"spec\":
  {\"distributedFramework\":\"PyTorch\",\"numWorkers\":3}}" "$ADMIN")
printf '%s' "$out" | grep -q "spec.numWorkers 3 breaks the rule max 2 of the tenant policy" ||
  fail "numWorkers 3: $out"
id=$(expect 202 POST /api/v1/workloads/distributed "{\"name\":\"d2\",\"projectId\":\"$PC\",\"spec\":
  {\"distributedFramework\":\"PyTorch\",\"numWorkers\":2}}" "$ADMIN" | jq -r .workloadId)
expect 200 GET "/api/v1/workloads/distributed/$id" "" "$ADMIN" | jq -e '.spec.image == "torch"' \
  >/dev/null || fail "the worker default image"

# ---- a deleted project's policies go with it ----
PD=$(dept_project team-d "$OPS")
expect 200 PUT $TP "{\"meta\":{\"name\":\"d\",\"scope\":\"project\",\"projectId\":\"$PD\"},
  \"policy\":{\"defaults\":{\"image\":\"x\"}}}" "$ADMIN" >/dev/null
expect 204 DELETE "/api/v1/org-unit/projects/$PD" "" "$ADMIN" >/dev/null
[ "$(sqlite3 "$T/policy.db" "SELECT count(*) FROM policies WHERE scope_id = '$PD'")" = 0 ] ||
  fail "a deleted project's policy is kept"

stop
echo "e2e_policy: ok"
