#!/bin/sh
# assets.sh ALLOTD ALLOT: `allot environment|compute|datasource|credential|
# template list|describe|create|delete`, and a submission from assets and a
# template by name (--environment, --compute, --data-source, --credential,
# --template), against a real allotd --demo on a free loopback port.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

demo_with team-a team-b

# ---- create, in a project and in the tenant ----
run 0 environment create py -p team-a --description "python" \
  --spec '{"image":"python:3.12","command":"python","environmentVariables":[{"name":"E","value":"1"}]}'
has "$T/out" "environment py created"
run 0 environment create py --tenant --spec '{"image":"python:3.11"}'
run 0 compute create one-gpu --tenant --spec '{"gpuDevicesRequest":1,"cpuCoreRequest":0.5}'
run 0 datasource create data --kind host-path -p team-a --spec '{"path":"/srv/data","mountPath":"/data"}'
run 0 credential create db --kind password -p team-a --spec '{"user":"u","password":"cli-secret-pw"}'
run 0 template create tpl --kind training -p team-a --spec '{"args":"from-template"}' \
  --assets "{\"environment\":\"$(expect 200 GET "/api/v1/asset/environment?scope=tenant" "" "$TOKEN" |
    jq -r '.entries[0].meta.id')\"}"
run 2 datasource create x -p team-a --spec '{}'
has "$T/err" "--kind is required"
run 2 environment create x --spec '{}'
has "$T/err" "give one scope"
run 2 datasource create x --kind nfs -p team-a --spec '{}'
has "$T/err" "not a kind of datasource"
run 1 compute create bad --tenant --spec '{"cpuMemoryRequest":"lots"}'
has "$T/err" "cpuMemoryRequest"

# ---- list, describe ----
run 0 environment list
[ "$(grep -c '^py ' "$T/out")" = 2 ] || fail "environment list: $(cat "$T/out")"
run 0 environment list -p team-b --csv
[ "$(sed 1d "$T/out" | tr -d "\r")" = "py,environment,tenant,-,-,admin" ] || fail "team-b sees: $(cat "$T/out")"
run 1 environment describe py
has "$T/err" "several environments are named py"
run 0 environment describe py -p team-a --json
[ "$(jq -r .spec.image "$T/out")" = python:3.12 ] || fail "the project's own comes first"
run 0 environment describe py -p team-b
has "$T/out" "python:3.11"
run 0 credential list -p team-a
has "$T/out" "password"
run 0 credential describe db -p team-a
hasnt "$T/out" "cli-secret-pw"
run 0 template list --json
[ "$(jq -r '.[0].meta.workloadType' "$T/out")" = Training ] || fail "template list: $(cat "$T/out")"

# ---- submit by name ----
run 0 training submit from-assets -p team-a --environment py --compute one-gpu --data-source data \
  --credential db -e X=1 -- script.py
ID=$(expect 200 GET "/api/v1/workloads?filterBy=name==from-assets" "" "$TOKEN" | jq -r '.workloads[0].id')
expect 200 GET "/api/v1/workloads/trainings/$ID" "" "$TOKEN" | jq -e '.spec | .image == "python:3.12"
  and .args == "script.py" and .compute.gpuDevicesRequest == 1 and .storage.hostPath[0].path == "/srv/data"
  and ([.environmentVariables[].name] | sort) == ["DB_PASSWORD", "DB_USER", "E", "X"]' >/dev/null ||
  fail "the submission from assets: $(expect 200 GET "/api/v1/workloads/trainings/$ID" "" "$TOKEN")"
run 0 training submit from-tpl -p team-a --template tpl
ID=$(expect 200 GET "/api/v1/workloads?filterBy=name==from-tpl" "" "$TOKEN" | jq -r '.workloads[0].id')
expect 200 GET "/api/v1/workloads/trainings/$ID" "" "$TOKEN" | jq -e '.spec | .image == "python:3.11"
  and .args == "from-template" and .assets.template.name == "tpl"' >/dev/null || fail "from a template"
run 1 workspace submit w -p team-a --template tpl
has "$T/err" "is for trainings"
run 2 training submit none -p team-a
has "$T/err" "-i IMAGE is required"

# ---- delete: in use, then free ----
run 1 datasource delete data -p team-a -y
has "$T/err" "from-assets"
run 0 training delete from-assets -p team-a -y
run 0 training delete from-tpl -p team-a -y
run 0 datasource delete data -p team-a -y
has "$T/out" "datasource data deleted"
run 0 template delete tpl -y
run 0 credential delete db -p team-a -y
run 0 environment delete py -p team-a -y
run 0 environment list --csv --no-headers
[ "$(tr -d "\r" <"$T/out")" = "py,environment,tenant,-,-,admin" ] || fail "after the deletes: $(cat "$T/out")"
stop
echo "assets: ok"
