#!/bin/sh
# e2e_place.sh: what a submission says about placement takes effect, over
# HTTP against a real allotd: required node affinity by node name and by
# label, a project's node types in order, several node pools in order, a
# pool created by label taking its nodes at once, GPU-memory requests and
# portions of several devices; every spec field allot does not act on is
# a 400 that says so; the scheduling rules a workload runs under are its
# project's when it was submitted, and its running time adds up over its
# runs; an elastic workload that loses pods
# above its minimum is told it was shrunk and keeps running.
#
# Simulated nodes: node-1 (2 GPUs of 80 GB, type dgx), node-2 and node-3
# (2 GPUs of 40 GB each, type pcie).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/place.db" --simulate-nodes 1x2:default:dgx:80G \
  --simulate-nodes 2x2:default:pcie:40G
TOKEN=$(login admin "$ALLOT_ADMIN_PASSWORD")
cluster_ids "$TOKEN"

# project NAME GPUS [EXTRA-JSON-FIELDS]: prints its id
project() { quota_project "$1" "$2" "$TOKEN" "${3:-}"; }
# submit KIND NAME PROJECT-ID SPEC-FIELDS [STATUS]: prints the answer
submit() {
  expect "${5:-202}" POST "/api/v1/workloads/$1" "{\"name\":\"$2\",\"projectId\":\"$3\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",$4}}" "$TOKEN"
}
wl_id() { workload_id "$TOKEN" "$1"; }
nodes_of() { # NAME: the nodes of its pods, sorted, space-separated
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")/pods" "" "$TOKEN" |
    jq -r '[.pods[].nodeName] | sort | join(" ")'
}
gpu_of() { # NAME: its allocated GPUs, to two decimals
  expect 200 GET "/api/v1/workloads/$(wl_id "$1")" "" "$TOKEN" |
    jq -r '.allocatedResources.gpu * 100 | round / 100'
}
refused() { # KIND SPEC-FIELDS WORDS: a 400 whose details hold WORDS
  out=$(submit "$1" refused "$P" "$2" 400)
  printf '%s' "$out" | jq -r .details | grep -q -- "$3" || fail "$2: $out"
}
delete() { expect 202 DELETE "/api/v1/workloads/$(wl_id "$1")" "" "$TOKEN" >/dev/null; }
gone() { [ "$(expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$TOKEN" |
              jq '.workloads | length')" = 0 ]; }
wait_gone() { poll 20 gone "$1" || fail "$1 is not gone"; }
reason_is() { [ "$(expect 200 GET "/api/v1/workloads/$(wl_id "$1")" "" "$TOKEN" |
  jq -r '.conditions[0].reason')" = "$2" ]; }
running_pods() { [ "$(expect 200 GET "/api/v1/workloads/$(wl_id "$1")" "" "$TOKEN" | jq .runningPods)" = "$2" ]; }

P=$(project team-a 6)

# ---- every field is taken or refused ----
refused trainings '"labels":{"a":"b"}' "spec.labels is not supported"
refused trainings '"tolerations":[{"key":"k"}]' "spec.tolerations is not supported"
refused inferences '"backoffLimit":3' "spec.backoffLimit applies to trainings workspaces distributed workloads only"
refused trainings '"storage":{"pvc":[{"claimName":"data"}]}' "spec.storage.pvc is not supported"
refused trainings '"podAffinity":{"type":"Required","key":"zone"}' "spec.podAffinity is not supported"
refused trainings '"terminateAfterPreemption":true' "not supported"
refused workspaces '"parallelism":2' "spec.parallelism applies to trainings only"
refused trainings '"numWorkers":2' "applies to distributed workloads only"
refused trainings '"servingPort":{"container":80}' "applies to inferences only"
refused trainings '"restartPolicy":"Always"' "restartPolicy Always applies to workspaces and inferences"
refused trainings '"restartPolicy":"Sometimes"' "restartPolicy: Always, Never or OnFailure"
refused trainings '"backoffLimit":-1' "backoffLimit"
refused trainings '"category":"Deploy"' "spec.category follows"
refused trainings '"completions":3' "spec.completions must equal parallelism"
refused trainings '"imagePullPolicy":"Sometimes"' "imagePullPolicy"
refused trainings '"compute":{"cpuCoreLimit":2}' "cpuCoreLimit is not supported"
refused trainings '"compute":{"gpuPortionRequest":0.5,"gpuPortionLimit":1}' "does not enforce"
refused trainings '"compute":{"gpuRequestType":"migProfile"}' "MIG"
refused trainings '"compute":{"gpuMemoryRequest":"lots"}' "gpuMemoryRequest is a quantity"
refused trainings '"compute":{"gpuDevicesRequest":2,"gpuMemoryRequest":"10G"}' "one device"
refused trainings '"ports":[{"container":80,"serviceType":"LoadBalancer"}]' "NodePort only"
refused trainings '"ports":[{"container":80},{"container":81,"external":80}]' "one node port"
refused inferences '"autoscaling":{"minReplicas":1,"metric":"throughput"}' "metrics"
refused trainings '"nodeAffinityRequired":{"nodeSelectorTerms":[{"matchExpressions":
  [{"key":"rack","operator":"Near","values":["a"]}]}]}' "an operator"
refused trainings '"nodeAffinityRequired":{"nodeSelectorTerms":[{"matchExpressions":
  [{"key":"gen","operator":"Gt","values":["four"]}]}]}' "integers for Gt"
refused trainings '"nodeAffinityRequired":{"nodeSelectorTerms":[]}' "1 to 16 terms"
out=$(expect 400 POST /api/v1/workloads/distributed "{\"name\":\"m\",\"projectId\":\"$P\",
  \"masterSpec\":{},\"spec\":{\"image\":\"busybox\"}}" "$TOKEN")
printf '%s' "$out" | jq -r .details | grep -q "masterSpec is not supported" || fail "masterSpec: $out"
out=$(expect 400 POST /api/v1/workloads/trainings "{\"name\":\"t\",\"projectId\":\"$P\",
  \"templateId\":\"x\",\"spec\":{\"image\":\"busybox\"}}" "$TOKEN")
printf '%s' "$out" | jq -r .details | grep -q "sees no workload template 'x'" || fail "templateId: $out"
# what is taken is echoed back
submit trainings echoed "$P" '"restartPolicy":"Never","category":"Train","imagePullPolicy":"Never",
  "terminationGracePeriodSeconds":5,"ports":[{"container":8888,"external":30888,"toolName":"jupyter"}],
  "compute":{"gpuDevicesRequest":0,"cpuCoreRequest":0.1}' | jq -e '.spec.ports[0].external == 30888' \
  >/dev/null || fail "the accepted spec is not echoed"
delete echoed

# ---- required node affinity: by name, by label, several terms ----
submit trainings by-name "$P" '"compute":{"gpuDevicesRequest":1},"nodeAffinityRequired":
  {"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname",
  "operator":"In","values":["node-2"]}]}]}' >/dev/null
wait_phase "$TOKEN" by-name Running
[ "$(nodes_of by-name)" = node-2 ] || fail "by-name runs on $(nodes_of by-name), not node-2"
submit trainings by-label "$P" '"compute":{"gpuDevicesRequest":2},"nodeAffinityRequired":
  {"nodeSelectorTerms":[{"matchExpressions":[{"key":"node-type","operator":"In",
  "values":["pcie"]},{"key":"kubernetes.io/hostname","operator":"NotIn","values":["node-2"]}]}]}' \
  >/dev/null
wait_phase "$TOKEN" by-label Running
[ "$(nodes_of by-label)" = node-3 ] || fail "by-label runs on $(nodes_of by-label), not node-3"
submit trainings nowhere "$P" '"compute":{"gpuDevicesRequest":1},"nodeAffinityRequired":
  {"nodeSelectorTerms":[{"matchExpressions":[{"key":"node-type","operator":"In",
  "values":["h200"]}]}]}' >/dev/null
poll 20 reason_is nowhere NoMatchingNodePool || fail "nowhere has no NoMatchingNodePool reason"
expect 200 GET "/api/v1/workloads/$(wl_id nowhere)" "" "$TOKEN" | jq -r .phaseMessage |
  grep -q "required node affinity" || fail "the reason does not name the affinity"
for w in by-name by-label nowhere; do delete $w; wait_gone $w; done

# ---- a project's node types: any of them, the first preferred ----
PT=$(project team-t 6 '"nodeTypes":{"training":["dgx","pcie"]}')
submit trainings t1 "$PT" '"compute":{"gpuDevicesRequest":2}' >/dev/null
wait_phase "$TOKEN" t1 Running
[ "$(nodes_of t1)" = node-1 ] || fail "t1 (dgx first) runs on $(nodes_of t1)"
submit trainings t2 "$PT" '"compute":{"gpuDevicesRequest":1}' >/dev/null
wait_phase "$TOKEN" t2 Running
case "$(nodes_of t2)" in node-2|node-3) ;; *) fail "t2 (dgx full, then pcie) runs on $(nodes_of t2)" ;; esac
# naming one type keeps it there (t1, which may use pcie too, may be moved for it)
submit trainings t3 "$PT" '"compute":{"gpuDevicesRequest":1},"nodeType":"dgx"' >/dev/null
wait_phase "$TOKEN" t3 Running
[ "$(nodes_of t3)" = node-1 ] || fail "t3 (dgx only) runs on $(nodes_of t3)"
[ "$(phase "$TOKEN" t1)" = Running ] || fail "t1 stopped for t3"
submit trainings t4 "$PT" '"nodeType":"v100"' 400 >/dev/null
# node types are taken at submission: the answered spec says which (the
# project's, in its order, when none was named), in both views
spec_of() { expect 200 GET "/api/v1/workloads/trainings/$(wl_id "$1")" "" "$TOKEN" | jq -c .spec; }
[ "$(spec_of t1 | jq -r .nodeType)" = dgx,pcie ] || fail "t1's answered spec: $(spec_of t1)"
[ "$(expect 200 GET "/api/v1/workloads/$(wl_id t1)" "" "$TOKEN" | jq -r .spec.nodeType)" = dgx,pcie ] ||
  fail "t1's generic view does not say its node types"
[ "$(spec_of t3 | jq -r .nodeType)" = dgx ] || fail "t3's answered spec: $(spec_of t3)"
# that spec submits again as it is; a list names node types in the order
# preferred, each one of the project's
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"t5\",\"projectId\":\"$PT\",
  \"clusterId\":\"$CLUSTER\",\"spec\":$(spec_of t1)}" "$TOKEN" >/dev/null
[ "$(spec_of t5 | jq -r .nodeType)" = dgx,pcie ] || fail "t5's answered spec: $(spec_of t5)"
submit trainings t6 "$PT" '"nodeType":"pcie,dgx"' >/dev/null
[ "$(spec_of t6 | jq -r .nodeType)" = pcie,dgx ] || fail "t6's answered spec: $(spec_of t6)"
submit trainings t7 "$PT" '"nodeType":"dgx,v100"' 400 | jq -r .details |
  grep -q "v100 is not one of the project's node types" || fail "t7's v100 was not refused by name"
submit trainings t8 "$PT" '"nodeType":","' 400 >/dev/null
for w in t1 t2 t3 t5 t6; do delete $w; wait_gone $w; done

# ---- nodeTypes.training holds ids, nodeTypes.names maps them to node types ----
PN=$(project team-n 2 '"nodeTypes":{"training":["7","8"],"names":{"7":"pcie","8":"dgx"}}')
submit trainings n1 "$PN" '"compute":{"gpuDevicesRequest":1}' >/dev/null
wait_phase "$TOKEN" n1 Running
case "$(nodes_of n1)" in node-2|node-3) ;; *) fail "n1 (id 7, pcie, first) runs on $(nodes_of n1)" ;; esac
submit trainings n2 "$PN" '"compute":{"gpuDevicesRequest":1},"nodeType":"dgx"' >/dev/null
wait_phase "$TOKEN" n2 Running
[ "$(nodes_of n2)" = node-1 ] || fail "n2 (dgx by name, id 8) runs on $(nodes_of n2)"
submit trainings n3 "$PN" '"nodeType":"v100"' 400 >/dev/null
[ "$(spec_of n1 | jq -r .nodeType)" = pcie,dgx ] || fail "n1's answered spec (ids 7, 8): $(spec_of n1)"
out=$(expect 400 POST /api/v1/org-unit/projects "{\"name\":\"team-bad\",\"clusterId\":\"$CLUSTER\",
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":1}}],
  \"nodeTypes\":{\"names\":{\"7\":\"\"}}}" "$TOKEN")
printf '%s' "$out" | jq -r .details | grep -q "maps node type ids to names" || fail "empty name: $out"
for w in n1 n2; do delete $w; wait_gone $w; done

# ---- GPU memory, portions of several devices ----
submit trainings mem60 "$P" '"compute":{"gpuRequestType":"memory","gpuMemoryRequest":"60G"}' >/dev/null
wait_phase "$TOKEN" mem60 Running
[ "$(nodes_of mem60)" = node-1 ] || fail "60 GB fits only node-1's devices, not $(nodes_of mem60)"
# 60e9 bytes of an 80e9-byte device: 0.75 of it
[ "$(gpu_of mem60)" = 0.75 ] || fail "mem60 holds $(gpu_of mem60) GPUs, not 0.75"
expect 200 GET "/api/v1/workloads/$(wl_id mem60)" "" "$TOKEN" |
  jq -e '.workloadRequestedResources.gpuRequestType == "memory"' >/dev/null || fail "memory type"
submit trainings mem100 "$P" '"compute":{"gpuMemoryRequest":"100G"}' >/dev/null
wait_phase "$TOKEN" mem100 Pending
submit trainings halves "$P" '"compute":{"gpuDevicesRequest":2,"gpuPortionRequest":0.5}' >/dev/null
wait_phase "$TOKEN" halves Running
expect 200 GET "/api/v1/workloads/$(wl_id halves)/pods" "" "$TOKEN" |
  jq -e '.pods[0].gpuDevices | length == 2' >/dev/null || fail "halves holds not 2 devices"
[ "$(gpu_of halves)" = 1 ] || fail "halves holds $(gpu_of halves) GPUs, not 1"
for w in mem60 mem100 halves; do delete $w; wait_gone $w; done

# ---- a pool created by label takes its nodes at once; pools in order ----
expect 201 POST /api/v1/node-pools "{\"name\":\"pcie-pool\",\"labelKey\":\"node-type\",
  \"labelValue\":\"pcie\"}" "$TOKEN" >/dev/null
[ "$(expect 200 GET /api/v1/nodes "" "$TOKEN" |
     jq -r '[.nodes[] | select(.nodePool == "pcie-pool") | .name] | sort | join(" ")')" = \
  "node-2 node-3" ] || fail "the pool did not take node-2 and node-3"
submit trainings p1 "$P" '"compute":{"gpuDevicesRequest":2},"nodePools":["default","pcie-pool"]' \
  >/dev/null
submit trainings p2 "$P" '"compute":{"gpuDevicesRequest":2},"nodePools":["default","pcie-pool"]' \
  >/dev/null
wait_phase "$TOKEN" p1 Running
wait_phase "$TOKEN" p2 Running
[ "$(nodes_of p1) $(nodes_of p2)" = "node-1 node-2" ] ||
  fail "p1, p2 run on $(nodes_of p1), $(nodes_of p2): the second pool is not used"
for w in p1 p2; do delete $w; wait_gone $w; done

# ---- scheduling rules: those of the project when the workload was submitted ----
PR=$(project team-r 2)
submit trainings before-rule "$PR" '"compute":{"gpuDevicesRequest":1}' >/dev/null
wait_phase "$TOKEN" before-rule Running
expect 200 PUT "/api/v1/org-unit/projects/$PR" "{\"name\":\"team-r\",\"clusterId\":\"$CLUSTER\",
  \"schedulingRules\":{\"trainingJobTimeLimitSeconds\":1},
  \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
  \"gpu\":{\"deserved\":2,\"limit\":-1,\"overQuotaWeight\":1}}]}" "$TOKEN" >/dev/null
submit trainings after-rule "$PR" '"compute":{"gpuDevicesRequest":1}' >/dev/null
wait_phase "$TOKEN" after-rule Running
wait_phase "$TOKEN" after-rule Stopped
[ "$(phase "$TOKEN" before-rule)" = Running ] || fail "a rule set later stopped before-rule"
for w in before-rule after-rule; do delete $w; wait_gone $w; done

# ---- a workload's running time adds up over its runs (what time limits count) ----
submit trainings twice "$P" '"compute":{"gpuDevicesRequest":1}' >/dev/null
wait_phase "$TOKEN" twice Running
sleep 1.2
ran() { expect 200 GET "/api/v1/workloads/$(wl_id twice)" "" "$TOKEN" | jq .totalRunningTimeSeconds; }
expect 202 POST "/api/v1/workloads/$(wl_id twice)/suspend" "" "$TOKEN" >/dev/null
wait_phase "$TOKEN" twice Stopped
[ "$(ran)" -ge 1 ] || fail "twice ran 1.2 s, it says $(ran)"
expect 202 POST "/api/v1/workloads/$(wl_id twice)/resume" "" "$TOKEN" >/dev/null
wait_phase "$TOKEN" twice Running
[ "$(ran)" -ge 1 ] || fail "resumed, twice forgot its first run: $(ran)"
delete twice
stop

# ---- an elastic workload that loses pods above its minimum ----
start --db "$T/elastic.db" --simulate-nodes 1x4
TOKEN=$(login admin "$ALLOT_ADMIN_PASSWORD")
cluster_ids "$TOKEN"
PE=$(project team-e 2)
PF=$(project team-f 2)
expect 202 POST /api/v1/workloads/distributed "{\"name\":\"elastic\",\"projectId\":\"$PE\",
  \"masterSpecSameAsWorker\":false,\"spec\":{\"image\":\"busybox\",\"numWorkers\":4,
  \"minReplicas\":2,\"compute\":{\"gpuDevicesRequest\":1}}}" "$TOKEN" >/dev/null
poll 20 running_pods elastic 4 || fail "elastic did not grow to 4 pods"
submit trainings reclaimer "$PF" '"compute":{"gpuDevicesRequest":2}' >/dev/null
wait_phase "$TOKEN" reclaimer Running
[ "$(phase "$TOKEN" elastic)" = Running ] || fail "the shrunk workload is not Running"
EV=$(expect 200 GET "/api/v1/workloads/$(wl_id elastic)/events" "" "$TOKEN")
printf '%s' "$EV" | jq -r '.events[] | select(.reason == "Shrunk") | .message' |
  grep -q "elastic was shrunk by reclaim to make room for reclaimer of team-f: 2 pods and 2.00 GPUs taken; it keeps running with 2 of its 4 pods" ||
  fail "no Shrunk event: $(printf '%s' "$EV" | jq -c '[.events[] | .message]')"
printf '%s' "$EV" | jq -r '.events[].message' | grep -q "goes back to Pending" &&
  fail "the shrunk workload is said to go back to Pending"
stop
echo "e2e_place: ok"
