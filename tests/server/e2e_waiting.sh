#!/bin/sh
# e2e_waiting.sh: a running workload's pods that are not placed have a
# reason, over HTTP against a real allotd. On one simulated node of 3
# GPUs, a workspace holds 1 (non-preemptible: the inference cannot take
# it); an inference of 1 GPU a replica with autoscaling minReplicas 1,
# maxReplicas 3 runs 2 replicas. It is Running with no phaseReason, and
# its phaseMessage says why the third waits, with true figures: the
# department (deserving the cluster's 3 GPUs) would use 4 with it, and a
# non-preemptible inference must fit the quota. Once the workspace is
# deleted the third replica is placed and the message is cleared.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/waiting.db" --simulate-nodes 1x3
P=$(quota_project team-a 4 "$ADMIN")
submit() { # KIND NAME SPEC-FIELDS
  expect 202 POST "/api/v1/workloads/$1" "{\"name\":\"$2\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",$3}}" "$ADMIN" >/dev/null
}
wl() { # NAME: the workload as GET /workloads/{id} answers
  id=$(expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$ADMIN" | jq -r '.workloads[0].id')
  expect 200 GET "/api/v1/workloads/$id" "" "$ADMIN"
}
running_pods() { [ "$(wl "$1" | jq .runningPods)" = "$2" ]; }
message_has() { wl "$1" | jq -r .phaseMessage | grep -qF -- "$2"; }
message_empty() { [ "$(wl "$1" | jq -r .phaseMessage)" = "" ]; }

submit workspaces hold '"compute":{"gpuDevicesRequest":1}'
wait_phase "$ADMIN" hold Running
submit inferences serve '"compute":{"gpuDevicesRequest":1},
  "autoscaling":{"minReplicas":1,"maxReplicas":3}'
wait_phase "$ADMIN" serve Running
poll 20 running_pods serve 2 || fail "serve does not run 2 replicas: $(wl serve)"
WHY="2 of 3 replicas placed; the other 1 waits: default would use 4 of its 3 deserved GPUs;"
WHY="$WHY this inference is non-preemptible (priority 125) and must fit the quota"
poll 20 message_has serve "$WHY" ||
  fail "serve's third replica has no reason: $(wl serve | jq -c '{phase, phaseMessage}')"
[ "$(phase "$ADMIN" serve)" = Running ] || fail "serve is $(phase "$ADMIN" serve), not Running"
[ "$(wl serve | jq -r '.phaseReason // ""')" = "" ] ||
  fail "a Running workload has a pending reason: $(wl serve | jq -r .phaseReason)"

# room for the third: placed, and the message goes
expect 202 DELETE "/api/v1/workloads/$(wl hold | jq -r .id)" "" "$ADMIN" >/dev/null
poll 20 running_pods serve 3 || fail "serve did not grow to 3 replicas: $(wl serve)"
poll 20 message_empty serve || fail "serve keeps a message: $(wl serve | jq -r .phaseMessage)"
stop
