#!/bin/sh
# e2e.sh: a real allotd --demo on a free loopback port, driven with curl
# the way the Run:ai quick start's API tab does: token, projects team-a
# and team-b with 2 GPUs each, a1 (1 GPU), a2 (2), b1 (1), then b2: a1 is
# preempted; b2 deleted: a1 runs again. Then the authorization, body-cap
# and malformed-input cases, and a graceful stop.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --demo
grep -q "created user 'admin'" "$T/log" || fail "no bootstrap admin"
[ -n "${PG_URI:-}" ] || [ -f "$T/allot-demo.db" ] ||
  fail "the demo database is not in the working directory"

# tokens: v1 JSON and v2 form
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
V2=$(curl -s -X POST "$URL/api/v2/token" \
  -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD" | jq -r .access_token)
[ -n "$V2" ] && [ "$V2" != null ] || fail "v2 token"
expect 400 POST /api/v1/token '{"grantType":"password","username":"admin","password":"nope"}' >/dev/null
curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/api/v2/token" \
  -d 'grant_type=password&username=admin&password=nope' | grep -q 400 || fail "v2 bad password"

cluster_ids "$ADMIN"
[ "$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq '.nodes | length')" = 2 ] || fail "2 nodes"

PA=$(quota_project team-a 2 "$ADMIN")
PB=$(quota_project team-b 2 "$ADMIN")

submit() { # NAME PROJECT GPUS TOKEN [STATUS]
  expect "${5:-202}" POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"runai.jfrog.io/demo/quickstart\",
    \"compute\":{\"gpuDevicesRequest\":$3}}}" "$4"
}
A1=$(submit a1 "$PA" 1 "$ADMIN" | jq -r .workloadId)
submit a2 "$PA" 2 "$ADMIN" >/dev/null
B1=$(submit b1 "$PB" 1 "$ADMIN" | jq -r .workloadId)
for w in a1 a2 b1; do wait_phase "$ADMIN" $w Running; done
submit b1 "$PB" 1 "$ADMIN" 400 | jq -r .details | grep -q "name exists" || fail "duplicate name"

# a list keeps its rows' views (api/viewcache.c): the list after it, from
# them, is the same but for the clock's field, and each row is its GET one
# (rendered afresh), before and after the rows change (suspend, below)
rows() {
  expect 200 GET "/api/v1/workloads?sortBy=name" "" "$ADMIN" |
    jq -cS '[.workloads[] | del(.totalRunningTimeSeconds)]'
}
list_is_get() { # polled: the scheduler may change a row between the reads
  L1=$(rows)
  [ "$(rows)" = "$L1" ] || return 1
  for id in $(printf '%s' "$L1" | jq -r '.[].id'); do
    [ "$(expect 200 GET "/api/v1/workloads/$id" "" "$ADMIN" |
      jq -cS 'del(.totalRunningTimeSeconds, .urls)')" = "$(printf '%s' "$L1" |
      jq -cS --arg id "$id" '.[] | select(.id == $id)')" ] || return 1
  done
}
poll 20 list_is_get || fail "a list from its kept views is not the rows' GETs: $L1"
B2=$(submit b2 "$PB" 1 "$ADMIN" | jq -r .workloadId)
wait_phase "$ADMIN" b2 Running
wait_phase "$ADMIN" a1 Pending
for w in a2 b1; do [ "$(phase "$ADMIN" $w)" = Running ] || fail "$w should still run"; done
expect 200 GET "/api/v1/workloads/$A1/events" "" "$ADMIN" | jq -r '.events[].reason' | grep -q Reclaimed \
  || fail "a1 has no Reclaimed event"
ALLOC=$(expect 200 GET "/api/v1/org-unit/projects/$PB" "" "$ADMIN" | jq '.status.quotaStatus.allocated.gpu')
[ "$ALLOC" = 2 ] || [ "$ALLOC" = 2.0 ] || fail "team-b allocated $ALLOC"
expect 202 DELETE "/api/v1/workloads/$B2" "" "$ADMIN" >/dev/null
wait_phase "$ADMIN" a1 Running
[ "$(expect 200 GET "/api/v1/workloads/$A1/pods" "" "$ADMIN" | jq -r '.pods[0].nodeName')" != null ] \
  || fail "a1 has no node"

# a researcher of team-a
PW=$(expect 201 POST /api/v1/users '{"email":"alice@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"alice@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" "$ADMIN" >/dev/null
ALICE=$(login alice@example.com "$PW")
submit a3 "$PA" 1 "$ALICE" >/dev/null
submit x1 "$PB" 1 "$ALICE" 403 >/dev/null
[ "$(expect 200 GET /api/v1/workloads "" "$ALICE" | jq -r '[.workloads[].projectName] | unique | join(",")')" = team-a ] \
  || fail "alice sees other projects"
# a project made after alice's first list, where she is given access: her next list has it
# (the projects a list's scope reads are kept until the organization changes)
PC=$(quota_project team-c 1 "$ADMIN")
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"alice@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PC\"}" "$ADMIN" >/dev/null
submit c1 "$PC" 0 "$ADMIN" >/dev/null
[ "$(expect 200 GET /api/v1/workloads "" "$ALICE" | jq -r '[.workloads[].projectName] | unique | join(",")')" = \
  team-a,team-c ] || fail "alice's list has not the project made since her last list"
expect 404 GET "/api/v1/workloads/$B1" "" "$ALICE" >/dev/null
expect 404 DELETE "/api/v1/workloads/$B1" "" "$ALICE" >/dev/null
expect 404 GET "/api/v1/org-unit/projects/$PB" "" "$ALICE" >/dev/null
expect 403 POST /api/v1/org-unit/projects '{"name":"mine","resources":[]}' "$ALICE" >/dev/null
expect 403 GET /api/v1/users "" "$ALICE" >/dev/null

# authentication failures
expect 401 GET /api/v1/workloads >/dev/null
expect 401 GET /api/v1/workloads "" "not.a.token" >/dev/null
expect 401 GET /api/v1/workloads "" "${ADMIN}x" >/dev/null
E=$(expect 401 GET /api/v1/nodes)
[ "$(printf '%s' "$E" | jq -r '[.code, .message != null, .details != null] | join(",")')" = "401,true,true" ] \
  || fail "401 body: $E"

# body cap, malformed and unknown fields
head -c 1100000 /dev/zero | tr '\0' ' ' >"$T/big"
S=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/api/v1/workloads/trainings" \
  -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-binary @"$T/big")
[ "$S" = 413 ] || fail "1.1 MB body: $S"
E=$(expect 400 POST /api/v1/workloads/trainings '{"name":"bad",' "$ADMIN")
[ "$(printf '%s' "$E" | jq -r '[.code, (.message | length > 0), (.details | length > 0)] | join(",")')" = "400,true,true" ] \
  || fail "malformed body answer: $E"
expect 400 POST /api/v1/workloads/trainings "{\"name\":\"u1\",\"projectId\":\"$PA\",\"spec\":{},\"gpus\":64}" \
  "$ADMIN" | jq -r .details | grep -q gpus || fail "unknown field not named"
expect 400 POST /api/v1/workloads/trainings '{"name":"d","name":"e"}' "$ADMIN" >/dev/null
expect 400 GET "/api/v1/workloads?limit=100000" "" "$ADMIN" >/dev/null
expect 404 GET /api/v1/nothing-here "" "$ADMIN" >/dev/null

# suspend and resume
A2=$(expect 200 GET "/api/v1/workloads?filterBy=name==a2" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 202 POST "/api/v1/workloads/trainings/$A2/suspend" "" "$ADMIN" >/dev/null
wait_phase "$ADMIN" a2 Stopped
wait_phase "$ADMIN" a3 Running # on a GPU a2 let go
poll 20 list_is_get || fail "after a suspend, a list is not the rows' GETs: $L1"
rows | jq -e '.[] | select(.name == "a2") | .phase == "Stopped"' >/dev/null || fail "a2 listed: $(rows)"
expect 202 POST "/api/v1/workloads/$A2/resume" "" "$ADMIN" >/dev/null
# resumed, a2 queues again: 1 GPU is free and team-a holds its 2 deserved
wait_phase "$ADMIN" a2 Pending
# the scheduler's next turn gives the reason (a turn after the resume's commit)
a2_why() {
  R=$(expect 200 GET "/api/v1/workloads/$A2" "" "$ADMIN" | jq -r '"\(.conditions[0].reason): \(.phaseMessage)"')
  case $R in ": " | "null: "*) return 1 ;; esac
}
poll 20 a2_why || true
echo "# a2 after resume: $R"
case $R in QueueFairShareReached:\ ?*) ;; *) fail "a2 pending after resume: $R" ;; esac
expect 202 DELETE "/api/v1/workloads/$(expect 200 GET "/api/v1/workloads?filterBy=name==a3" "" "$ADMIN" |
  jq -r '.workloads[0].id')" "" "$ADMIN" >/dev/null
wait_phase "$ADMIN" a2 Running

# a pending workload that leaves holding nothing (suspended, then deleted)
# is a departure the core answers from its memo: no full cycle
metric() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | awk -v k="$1" '$1 == k { print $2 }'
}
P1=$(submit p1 "$PA" 1 "$ADMIN" | jq -r .workloadId)
p1_why() {
  [ -n "$(expect 200 GET "/api/v1/workloads/$P1" "" "$ADMIN" | jq -r '.conditions[0].reason // empty')" ]
}
poll 20 p1_why || fail "p1 has no pending reason"
cycles_past() { [ "$(metric allot_sched_cycles_total)" -ge "$1" ]; }
departure() { # WHAT COUNTER ACTION...: the cycles after ACTION ran none in full, COUNTER rose
  WHAT=$1
  K=$2
  shift 2
  F0=$(metric allot_sched_cycles_full_total)
  R0=$(metric "$K")
  "$@" >/dev/null
  C1=$(metric allot_sched_cycles_total)
  poll 20 cycles_past $((C1 + 2)) || fail "no cycle after $*"
  F1=$(metric allot_sched_cycles_full_total)
  R1=$(metric "$K")
  echo "# $WHAT: full cycles $F0 -> $F1, $K $R0 -> $R1"
  [ "$F1" = "$F0" ] && [ "$R1" -gt "$R0" ] || fail "$WHAT: a full cycle"
}
REUSED=allot_sched_cycles_reused_total
departure "p1 suspended" $REUSED expect 202 POST "/api/v1/workloads/trainings/$P1/suspend" "" "$ADMIN"
wait_phase "$ADMIN" p1 Stopped
departure "p1 deleted" $REUSED expect 202 DELETE "/api/v1/workloads/$P1" "" "$ADMIN"
P2=$(submit p2 "$PA" 1 "$ADMIN" | jq -r .workloadId)
p2_why() {
  [ -n "$(expect 200 GET "/api/v1/workloads/$P2" "" "$ADMIN" | jq -r '.conditions[0].reason // empty')" ]
}
poll 20 p2_why || fail "p2 has no pending reason"
departure "p2 deleted" $REUSED expect 202 DELETE "/api/v1/workloads/$P2" "" "$ADMIN"
# a running workload that leaves holding pods (suspended, deleted) runs the
# cycle on the core's kept session, not a full one; its GPU is free after
KEPT=allot_sched_cycles_kept_session_total
departure "b1 suspended" $KEPT expect 202 POST "/api/v1/workloads/trainings/$B1/suspend" "" "$ADMIN"
wait_phase "$ADMIN" b1 Stopped
[ "$(expect 200 GET "/api/v1/workloads/$B1/pods" "" "$ADMIN" | jq '[.pods[] | select(.nodeName != null)] | length')" = 0 ] \
  || fail "b1 holds a node after its suspension"
departure "a1 deleted" $KEPT expect 202 DELETE "/api/v1/workloads/$A1" "" "$ADMIN"
submit c1 "$PB" 2 "$ADMIN" >/dev/null
wait_phase "$ADMIN" c1 Running # on the GPUs b1 and a1 let go
expect 200 GET /healthz >/dev/null
expect 401 GET /metrics >/dev/null
curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" | grep -q "^allot_sched_cycles_total" || fail "metrics"
# the dashboard: the web root's index.html, as HTML, with the app's script
WEB=$(cd "$(dirname "$0")/../../web" && pwd)
curl -s -D "$T/headers" -o "$T/index.html" "$URL/"
cmp -s "$T/index.html" "$WEB/index.html" || fail "GET / is not web/index.html: $(head -c 300 "$T/index.html")"
grep -qi '^Content-Type: text/html' "$T/headers" || fail "GET / is not text/html: $(cat "$T/headers")"
curl -s "$URL/app.js" | cmp -s - "$WEB/app.js" || fail "GET /app.js is not web/app.js"
stop
echo "e2e: ok"
