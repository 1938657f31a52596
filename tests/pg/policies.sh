#!/bin/sh
# policies.sh ALLOTD: two allotd replicas on one PostgreSQL; each keeps the
# policy chains its submissions read in memory (api/polcache.c). A policy
# written through one replica holds on the other's next submissions once
# that replica has read the change log (a turn of its scheduler thread,
# 100 ms here), and holds at once on the replica that wrote it; removed,
# it stops holding on both.
ALLOTD=$1
ALLOT_TEST_DB=pg
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/ha_lib.sh"

replicas
project
TP=/api/v2/policy/trainings

# gpus_to URL GPUS: a training of GPUS GPUs, named by the clock, through
# the replica at URL; prints the status (the answer in $T/last).
gpus_to() {
  curl -s -o "$T/last" -w '%{http_code}' -X POST "$1/api/v1/workloads/trainings" \
    -H 'Content-Type: application/json' -H "Authorization: Bearer $ADMIN" \
    --data-binary "{\"name\":\"p$(date +%s%N)\",\"projectId\":\"$PROJ\",\"clusterId\":\"$CLUSTER\",
      \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":$2}}}" || true
}
refused_at() { [ "$(gpus_to "$1" 2)" = 400 ]; }
taken_at() { [ "$(gpus_to "$1" 2)" = 202 ]; }

# both replicas read the chain (no policy) into their caches
taken_at "$URL" || fail "A refuses 2 GPUs with no policy"
taken_at "$URL_B" || fail "B refuses 2 GPUs with no policy: $(cat "$T/last")"
taken_at "$URL_B" || fail "B refuses 2 GPUs with no policy, the second time"

# a tenant policy of at most 1 GPU, written through A
expect 200 PUT $TP '{"meta":{"name":"tenant","scope":"tenant"},"policy":{
  "rules":{"compute":{"gpuDevicesRequest":{"max":1}}}}}' "$ADMIN" >/dev/null
refused_at "$URL" || fail "A, which wrote the policy, still takes 2 GPUs"
poll 5 refused_at "$URL_B" || fail "B still takes 2 GPUs 5 s after A wrote the policy"
[ "$(gpus_to "$URL_B" 1)" = 202 ] || fail "B refuses 1 GPU under the policy"

# the same policy removed through B: both take 2 GPUs again
URL_A=$URL
URL=$URL_B
expect 204 DELETE "$TP?scope=tenant" "" "$ADMIN" >/dev/null
URL=$URL_A
taken_at "$URL_B" || fail "B, which removed the policy, still refuses 2 GPUs"
poll 5 taken_at "$URL" || fail "A still refuses 2 GPUs 5 s after B removed the policy"
stop_pid "$PID_B" "replica B" "$T/log-b"
PID_B=""
