#!/bin/sh
# e2e_preempt.sh: the Run:ai preemption quick start over HTTP, as its API
# tab shows it: one 8-GPU node; project-a and project-b have 4 GPUs each.
# An 8-GPU training of project-a runs over quota while project-b is idle;
# a 4-GPU preemptible workspace of project-b arrives and takes its quota
# back (the training returns to Pending with a Reclaimed event); once the
# workspace is deleted the training runs again on all 8 GPUs.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/preempt.db" --simulate-nodes 1x8
TOKEN=$(curl -s -X POST "$URL/api/v2/token" \
  -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD" | jq -r .access_token)
[ -n "$TOKEN" ] && [ "$TOKEN" != null ] || fail "no token"
cluster_ids "$TOKEN"
PA=$(quota_project project-a 4 "$TOKEN")
PB=$(quota_project project-b 4 "$TOKEN")
allocated() { # PROJECT-ID: its allocated GPUs as an integer
  expect 200 GET "/api/v1/org-unit/projects/$1" "" "$TOKEN" | jq '.status.quotaStatus.allocated.gpu | floor'
}

TRAIN=$(expect 202 POST /api/v1/workloads/trainings "{\"name\":\"large-training-job\",
  \"projectId\":\"$PA\",\"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"runai.jfrog.io/demo/quickstart\",
  \"compute\":{\"gpuDevicesRequest\":8}}}" "$TOKEN" | jq -r .workloadId)
wait_phase "$TOKEN" large-training-job Running
[ "$(allocated "$PA")" = 8 ] || fail "project-a should hold 8 GPUs"

WS=$(expect 202 POST /api/v1/workloads/workspaces "{\"name\":\"jupyter-workspace\",
  \"projectId\":\"$PB\",\"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"jupyter/scipy-notebook\",
  \"compute\":{\"gpuDevicesRequest\":4},\"priorityClass\":\"interactive-preemptible\"}}" "$TOKEN" |
  jq -r .workloadId)
wait_phase "$TOKEN" jupyter-workspace Running
wait_phase "$TOKEN" large-training-job Pending
[ "$(allocated "$PA")" = 0 ] || fail "project-a should hold nothing"
[ "$(allocated "$PB")" = 4 ] || fail "project-b should hold 4 GPUs"
expect 200 GET "/api/v1/workloads/$TRAIN/events" "" "$TOKEN" | jq -r '.events[].reason' |
  grep -q Reclaimed || fail "the training has no Reclaimed event"
R=$(expect 200 GET "/api/v1/workloads/$TRAIN" "" "$TOKEN" | jq -r '.conditions[0].reason')
[ "$R" = QueueFairShareReached ] || fail "the pending training's reason is $R"
curl -s "$URL/metrics" -H "Authorization: Bearer $TOKEN" | grep -q '^allot_evictions_total{reason="Reclaimed"} 1' ||
  fail "the eviction is not counted"

expect 202 DELETE "/api/v1/workloads/workspaces/$WS" "" "$TOKEN" >/dev/null
wait_phase "$TOKEN" large-training-job Running
[ "$(allocated "$PA")" = 8 ] || fail "project-a should hold 8 GPUs again"
[ "$(allocated "$PB")" = 0 ] || fail "project-b should hold nothing"
stop
echo "e2e_preempt: ok"
