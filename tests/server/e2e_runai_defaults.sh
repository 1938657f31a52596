#!/bin/sh
# e2e_runai_defaults.sh: on a fresh install (lib.sh starts allotd on a
# database made by allotd --init, and no department is edited), the four
# workload submissions as a client generated
# from Run:ai's document sends them, every default of the document filled
# in (runai_defaults.py walks the request schemas of
# ../shared/reference/runai-openapi.json), are accepted (202) and run: a
# default names what allot does anyway, never a reason to refuse a body;
# the workspace and the inference (non-preemptible) run because the
# `default` department follows the cluster.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"
DOC="$LIB_DIR/../../../shared/reference/runai-openapi.json"
[ -s "$DOC" ] || fail "Run:ai's document is missing at $DOC"

start --simulate-nodes 2x4
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
CLUSTER=$(expect 200 GET /api/v1/clusters "" "$ADMIN" | jq -r '.[0].uuid')
POOL=$(expect 200 GET /api/v1/node-pools "" "$ADMIN" | jq -r '.nodepools[0].id')
PROJECT=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"defaults\",\"clusterId\":\"$CLUSTER\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":8}}]}" \
  "$ADMIN" | jq -r .id)

n=0
for kind in trainings workspaces distributed inferences; do
  spec='{"image":"busybox","command":"sleep 60","compute":{"gpuDevicesRequest":1}}'
  [ "$kind" = distributed ] && spec='{"image":"busybox","command":"sleep 60","numWorkers":1,"distributedFramework":"PyTorch","compute":{"gpuDevicesRequest":1}}'
  [ "$kind" = inferences ] && spec='{"image":"busybox","command":"sleep 60","servingPort":{"container":8000},"compute":{"gpuDevicesRequest":1}}'
  body=$("$PYTHON" "$LIB_DIR/runai_defaults.py" "$DOC" "/api/v1/workloads/$kind" \
    "{\"name\":\"d-$kind\",\"projectId\":\"$PROJECT\",\"clusterId\":\"$CLUSTER\",\"spec\":$spec}") ||
    fail "runai_defaults.py failed for $kind"
  printf '%s' "$body" | jq -e '.useGivenNameAsPrefix == false' >/dev/null ||
    fail "the document's defaults were not filled in: $body"
  expect 202 POST "/api/v1/workloads/$kind" "$body" "$ADMIN" >/dev/null
  poll 20 has_phase "$ADMIN" "d-$kind" Running || fail "d-$kind did not reach Running: $(expect 200 GET "/api/v1/workloads?filterBy=name==d-$kind" "" "$ADMIN" | jq -c ".workloads[0] | [.phase, .phaseMessage]")"
  n=$((n + 1))
done
# the distributed body carries the defaults Run:ai's client always sends
"$PYTHON" "$LIB_DIR/runai_defaults.py" "$DOC" /api/v1/workloads/distributed '{"spec":{}}' |
  jq -e '.spec.slotsPerWorker == 1 and .spec.sshAuthMountPath == "/root/.ssh"' >/dev/null ||
  fail "the distributed defaults of the document were not found"
echo "PASS: $n submissions with the document's defaults accepted and running"
