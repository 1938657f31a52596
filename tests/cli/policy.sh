#!/bin/sh
# policy.sh ALLOTD ALLOT: `allot policy list|describe` against a real
# allotd --demo: the list of what the caller may read, a project's own
# policy and its effective one merged with the tenant's, and the usage
# errors of describe.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

demo_with team-a
PA=$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name==team-a" "" "$TOKEN" | jq -r '.projects[0].id')
expect 200 PUT /api/v2/policy/trainings '{"meta":{"name":"everyone","scope":"tenant"},"policy":{
  "rules":{"compute":{"gpuDevicesRequest":{"max":2}}}}}' "$TOKEN" >/dev/null
expect 200 PUT /api/v2/policy/trainings "{\"meta\":{\"name\":\"team-a-defaults\",\"scope\":\"project\",
  \"projectId\":\"$PA\"},\"policy\":{\"defaults\":{\"image\":\"busybox\"}}}" "$TOKEN" >/dev/null

run 0 policy list --csv
[ "$(sed 1d "$T/out" | wc -l)" = 2 ] || fail "policy list: $(cat "$T/out")"
grep -q "^training,tenant,everyone,admin," "$T/out" || fail "policy list: $(cat "$T/out")"
grep -q "^training,project [0-9]*,team-a-defaults," "$T/out" || fail "policy list: $(cat "$T/out")"
run 0 policy describe training -p team-a --json
jq -e '.policy.defaults.image == "busybox" and .effective.defaults.image == "busybox"
  and .effective.rules.compute.gpuDevicesRequest.max == 2
  and .effective.rules.compute.gpuDevicesRequest.sourceOfRule.scope == "tenant"' "$T/out" >/dev/null ||
  fail "describe -p team-a: $(cat "$T/out")"
run 0 policy describe training
has "$T/out" "name: everyone"
run 2 policy describe gpu
has "$T/err" "TYPE is training, workspace, distributed or inference"
run 2 policy describe training -p team-a -d x
has "$T/err" "-p and -d exclude each other"
run 1 policy describe training -p nobody
has "$T/err" "no project named nobody"

stop
echo "cli/policy: ok"
