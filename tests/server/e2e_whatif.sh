#!/bin/sh
# e2e_whatif.sh: what-if answers against what the scheduler then does, on a
# real allotd --demo (2 simulated nodes with 2 GPUs). Each answer is
# turned into the state it foresees (whatif_lib.sh); the same change is
# then made for real, and the cluster must reach that state (the same
# placements, the same victims) and stay there, with the same reasons:
#   1. the Run:ai quick start: a1 (1 GPU), a2 (2), b1 (1) run; b2's dry
#      run names a1 as the workload it reclaims, and a researcher of
#      team-b sees only "1 GPU of another project";
#   2. a pending case: a3's dry run gives the reason and message the cycle
#      then writes;
#   3. a quota change: team-b's quota cut to 1 GPU makes team-a reclaim;
#      fair shares after are what the projects then show; the default
#      department given a quota of its own (below a project's: refused);
#   4. a workload deleted, one suspended (and in 2, a pending one deleted);
#   5. nothing is stored by any of it, and the refusals a real change
#      would get (400, 403, 404).
# On the settled cluster a dry run, a deletion's, a suspension's and a
# quota's what-if are answered on the scheduler's kept state
# (Server-Timing says "kept"), and so is a drained node's (the answer
# the copy gives to the drain with a quota that changes nothing); an
# added node's on a copy ("copy").
ALLOTD=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/whatif_lib.sh"

start --demo
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
POOL=$(expect 200 GET /api/v1/node-pools "" "$ADMIN" | jq -r '.nodepools[0].id')
project() { # NAME GPUS
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"resources\":[{\"nodePool\":
    {\"id\":\"$POOL\"},\"gpu\":{\"deserved\":$2}}]}" "$ADMIN" | jq -r .id
}
PA=$(project team-a 2)
PB=$(project team-b 2)
body() { # NAME PROJECT GPUS
  printf '{"name":"%s","projectId":"%s","spec":{"image":"runai.jfrog.io/demo/quickstart",
    "compute":{"gpuDevicesRequest":%s}}}' "$1" "$2" "$3"
}
submit() { expect 202 POST /api/v1/workloads/trainings "$(body "$@")" "$ADMIN" | jq -r .workloadId; }
dry_run() { # TOKEN NAME PROJECT GPUS
  _tok=$1
  shift
  expect 200 POST "/api/v1/workloads/trainings?dryRun=true" "$(body "$@")" "$_tok"
}
whatif() { expect 200 POST /api/v1/whatif "$1" "$ADMIN"; }
count() { expect 200 GET /api/v1/workloads/count "" "$ADMIN" | jq .count; }
events() { expect 200 GET "/api/v1/workloads/$1/events" "" "$ADMIN" | jq '.events | length'; }
id_of() { workload_id "$ADMIN" "$1"; }

PW=$(expect 201 POST /api/v1/users '{"email":"bob@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"bob@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PB\"}" "$ADMIN" >/dev/null
BOB=$(login bob@example.com "$PW")

# ---- 1. the quick start: b2 reclaims a1 ----
A1=$(submit a1 "$PA" 1)
submit a2 "$PA" 2 >/dev/null
submit b1 "$PB" 1 >/dev/null
for w in a1 a2 b1; do wait_phase "$ADMIN" $w Running; done
settled
S0=$(state)
N0=$(count)
E0=$(events "$A1")
D=$(dry_run "$ADMIN" b2 "$PB" 1)
[ "$(printf '%s' "$D" | jq -c '[.dryRun, .wouldRun, .phase, .nodePool, .gpu]')" = \
  '[true,true,"Running","default",1]' ] || fail "b2's dry run: $D"
[ "$(printf '%s' "$D" | jq -c '[.evictions[] | [.name, .projectName, .gpu, .reason,
    .forWorkload.name, .visible]]')" = '[["a1","team-a",1,"reclaim","b2",true]]' ] ||
  fail "b2's dry run does not name a1 as its victim: $D"
[ "$(printf '%s' "$D" | jq -r '.evictions[0].workloadId')" = "$A1" ] || fail "a1's id: $D"
# a settled cluster, every row read: the dry run runs on the scheduler's kept state
[ "$(way "/api/v1/workloads/trainings?dryRun=true" "$(body b2 "$PB" 1)")" = kept ] ||
  fail "b2's dry run on a settled cluster was not answered on the kept state"
DB=$(dry_run "$BOB" b2 "$PB" 1)
[ "$(printf '%s' "$DB" | jq -c '.pods')" = "$(printf '%s' "$D" | jq -c '.pods')" ] ||
  fail "the researcher's dry run places b2 elsewhere: $DB"
[ "$(printf '%s' "$DB" | jq -c '[.evictions[] | [.name, .projectName, .workloadId, .visible,
    .description, .gpu, .reason]]')" = '[[null,null,null,false,"1 GPU of another project",1,"reclaim"]]' ] ||
  fail "a researcher of team-b sees more of team-a's victim than its GPUs: $DB"
[ "$(count)" = "$N0" ] && [ "$(events "$A1")" = "$E0" ] && is_state "$S0" ||
  fail "a dry run changed something"
B2=$(submit b2 "$PB" 1)
reaches "$(predict "$S0" "$D")" "b2's dry run"
expect 200 GET "/api/v1/workloads/$A1/events" "" "$ADMIN" | jq -r '.events[].reason' |
  grep -qx Reclaimed || fail "a1 was not reclaimed"

# ---- 2. pending: a3 waits, with the cycle's words ----
S1=$(state)
D=$(dry_run "$ADMIN" a3 "$PA" 1)
[ "$(printf '%s' "$D" | jq -c '[.wouldRun, .phase, .pods, .evictions]')" = '[false,"Pending",[],[]]' ] ||
  fail "a3's dry run: $D"
REASON=$(printf '%s' "$D" | jq -r .pendingReason)
MSG=$(printf '%s' "$D" | jq -r .pendingMessage)
[ -n "$REASON" ] && [ -n "$MSG" ] || fail "a3's dry run gives no reason: $D"
submit a3 "$PA" 1 >/dev/null
reaches "$(predict "$S1" "$D")" "a3's dry run"
READY=$(expect 200 GET "/api/v1/workloads?filterBy=name==a3" "" "$ADMIN" |
  jq -c '.workloads[0].conditions[] | select(.type == "Ready") | [.reason, .message]')
[ "$READY" = "$(jq -cn --arg r "$REASON" --arg m "$MSG" '[$r, $m]')" ] ||
  fail "a3 is pending with $READY, its dry run said $REASON: $MSG"
# a3 deleted: a pending workload's entry goes, nothing starts or stops
DEL_A3="{\"changes\":[{\"type\":\"deleteWorkload\",\"workloadId\":\"$(id_of a3)\"}]}"
A=$(whatif "$DEL_A3")
[ "$(printf '%s' "$A" | jq -c '[.started, .stopped, .moved] | map(length)')" = '[0,0,0]' ] ||
  fail "deleting the pending a3 would change something: $A"
[ "$(way /api/v1/whatif "$DEL_A3")" = kept ] || fail "a3's deletion was not answered on the kept state"

# ---- 3. a quota change: team-b's quota cut to 1 GPU ----
S2=$(state)
N2=$(count)
QUOTA="[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":1}}]"
A=$(whatif "{\"changes\":[{\"type\":\"quota\",\"projectId\":\"$PB\",\"resources\":$QUOTA}]}")
[ "$(way /api/v1/whatif "{\"changes\":[{\"type\":\"quota\",\"projectId\":\"$PB\",
  \"resources\":$QUOTA}]}")" = kept ] || fail "a quota's what-if was not answered on the kept state"
[ "$(printf '%s' "$A" | jq '.stopped | length')" -ge 1 ] && [ "$(printf '%s' "$A" | jq '.started | length')" -ge 1 ] ||
  fail "cutting team-b's quota should make team-a reclaim: $A"
[ "$(printf '%s' "$A" | jq -c '[.stopped[] | [.projectName, .reason]] | unique')" = '[["team-b","reclaim"]]' ] ||
  fail "the quota change's victims: $A"
share() { # ANSWER PROJECT: its GPU fair share after
  printf '%s' "$1" | jq -r ".fairShares[] | select(.kind == \"project\" and .name == \"$2\") |
    [.before.deserved, .after.deserved, .after.fairShare] | map(tostring) | join(\" \")"
}
[ "$(share "$A" team-b | cut -d' ' -f1-2)" = "2 1" ] || fail "team-b's quota before and after: $A"
[ "$(count)" = "$N2" ] && is_state "$S2" || fail "a what-if changed something"
expect 200 PATCH "/api/v1/org-unit/projects/$PB/resources" "$QUOTA" "$ADMIN" >/dev/null
reaches "$(predict "$S2" "$A")" "the quota change's answer"
for p in team-a:$PA team-b:$PB; do
  got=$(expect 200 GET "/api/v1/org-unit/projects/${p#*:}" "" "$ADMIN" |
    jq -r '.status.nodePoolQuotaStatuses[0].fairShare.gpu')
  [ "$got" = "$(share "$A" "${p%%:*}" | cut -d' ' -f3)" ] ||
    fail "${p%%:*}'s fair share is $got, the answer said $(share "$A" "${p%%:*}")"
done
# a drain alone: on the kept state, the answer the copy gives
DRAIN='{"changes":[{"type":"drainNode","nodeName":"node-1"}]}'
[ "$(way /api/v1/whatif "$DRAIN")" = kept ] || fail "a drain's what-if was not answered on the kept state"
K=$(whatif "$DRAIN" | jq -S .)
printf '%s' "$K" | jq -e '[.stopped[], .moved[] | select(.reason == "drain")] | length > 0' >/dev/null ||
  fail "draining node-1 alone stops or moves none of its workloads: $K"
# with team-b's quota set to what it is ($QUOTA: a change that changes
# nothing), the copy
DRAIN_SAME="{\"changes\":[{\"type\":\"drainNode\",\"nodeName\":\"node-1\"},
  {\"type\":\"quota\",\"projectId\":\"$PB\",\"resources\":$QUOTA}]}"
[ "$(way /api/v1/whatif "$DRAIN_SAME")" = copy ] || fail "a drain and a quota were not answered on a copy"
C=$(whatif "$DRAIN_SAME" | jq -S .)
[ "$K" = "$C" ] || fail "a drain's answer on the kept state differs from the copy's: $K
against $C"
# the default department, which deserves the pool's GPUs while it has no quota, given one:
# below team-a's 2 GPUs it is refused as the change itself would be; 2 GPUs is answered on
# the kept state too, and is what the next turn then does
S2=$(state)
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" |
  jq -r '.departments[] | select(.name == "default") | .id')
dept_quota() { # GPUS: the what-if's body
  printf '{"changes":[{"type":"quota","departmentId":"%s","resources":[{"nodePool":{"id":"%s"},
    "gpu":{"deserved":%s}}]}]}' "$DEP" "$POOL" "$1"
}
expect 400 POST /api/v1/whatif "$(dept_quota 1)" "$ADMIN" | grep -q "below that of its project team-a" ||
  fail "a department's quota below its project's was not refused as the change would be"
A=$(whatif "$(dept_quota 2)")
[ "$(way /api/v1/whatif "$(dept_quota 2)")" = kept ] ||
  fail "a department's quota what-if was not answered on the kept state"
[ "$(printf '%s' "$A" | jq -r '.fairShares[] | select(.kind == "department" and .name == "default") |
    .after.deserved')" = 2 ] || fail "the default department's quota after: $A"
[ "$(count)" = "$N2" ] && is_state "$S2" || fail "a department's what-if changed something"
expect 200 PATCH "/api/v1/org-unit/departments/$DEP/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":2}}]" "$ADMIN" >/dev/null
reaches "$(predict "$S2" "$A")" "the department's quota change's answer"

# ---- 4. a workload deleted, one suspended ----
for act in delete:deleteWorkload:DELETE: suspend:suspendWorkload:POST:/suspend; do
  S3=$(state)
  V=$(printf '%s' "$S3" | jq -r 'to_entries | map(select(.value.phase == "Running")) | .[0].key')
  VID=$(id_of "$V")
  A=$(whatif "{\"changes\":[{\"type\":\"$(echo $act | cut -d: -f2)\",\"workloadId\":\"$VID\"}]}")
  [ "$(way /api/v1/whatif "{\"changes\":[{\"type\":\"$(echo $act | cut -d: -f2)\",
    \"workloadId\":\"$VID\"}]}")" = kept ] || fail "$V's $(echo $act | cut -d: -f1) was not answered on the kept state"
  [ "$(printf '%s' "$A" | jq -c "[.stopped[] | select(.name == \"$V\") | .reason]")" = \
    "[\"$(echo $act | cut -d: -f1)\"]" ] || fail "$V's $(echo $act | cut -d: -f1): $A"
  expect 202 "$(echo $act | cut -d: -f3)" "/api/v1/workloads/$VID$(echo $act | cut -d: -f4)" "" "$ADMIN" >/dev/null
  reaches "$(predict "$S3" "$A")" "the answer to $(echo $act | cut -d: -f1) $V"
done

# ---- 5. refusals, and nothing stored ----
S4=$(state)
N4=$(count)
expect 400 POST "/api/v1/workloads/trainings?dryRun=true" "$(body b2 "$PB" 1)" "$ADMIN" >/dev/null
expect 400 POST "/api/v1/workloads/trainings?dryRun=maybe" "$(body z1 "$PB" 1)" "$ADMIN" >/dev/null
expect 400 POST "/api/v1/workloads/trainings?dryRun=true" '{"name":"z1","projectId":"'"$PB"'","spec":{"tty":true}}' \
  "$ADMIN" >/dev/null
expect 403 POST "/api/v1/workloads/trainings?dryRun=true" "$(body z1 "$PA" 1)" "$BOB" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[{"type":"cordon"}]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[{"type":"drainNode","nodeName":"node-9"}]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[{"type":"drainNode","nodeName":"node-1","gpus":2}]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[{"type":"addNode","gpus":2,"name":"node-1"}]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif '{"changes":[{"type":"addNode","gpus":2,"nodePool":"nope"}]}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/whatif "{\"changes\":[{\"type\":\"quota\",\"projectId\":\"$PA\",\"departmentId\":\"x\",\"resources\":[]}]}" \
  "$ADMIN" >/dev/null
expect 404 POST /api/v1/whatif '{"changes":[{"type":"deleteWorkload","workloadId":"nope"}]}' "$ADMIN" >/dev/null
expect 403 POST /api/v1/whatif '{"changes":[{"type":"drainNode","nodeName":"node-1"}]}' "$BOB" >/dev/null
expect 403 POST /api/v1/whatif "{\"changes\":[{\"type\":\"quota\",\"projectId\":\"$PB\",\"resources\":$QUOTA}]}" \
  "$BOB" >/dev/null
expect 404 POST /api/v1/whatif "{\"changes\":[{\"type\":\"deleteWorkload\",\"workloadId\":\"$A1\"}]}" "$BOB" >/dev/null
# a drained node and an added one: the answer names the node's workloads
A=$(whatif '{"changes":[{"type":"drainNode","nodeName":"node-1"},{"type":"addNode","gpus":2,"name":"spare"}]}')
[ "$(way /api/v1/whatif '{"changes":[{"type":"drainNode","nodeName":"node-1"},{"type":"addNode",
  "gpus":2,"name":"spare"}]}')" = copy ] || fail "a drained and an added node's what-if was not answered on a copy"
printf '%s' "$A" | jq -e '[.stopped[], .moved[] | select(.reason == "drain")] | length > 0' >/dev/null ||
  fail "draining node-1 stops or moves none of its workloads: $A"
printf '%s' "$A" | jq -e '[.started[], .moved[] | .pods[].nodeName] | index("spare") and
    all(. != "node-1")' >/dev/null || fail "with node-1 drained and spare added: $A"
[ "$(count)" = "$N4" ] && is_state "$S4" || fail "a refused or answered what-if changed something"
[ "$(expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -c '[.nodes[] | [.name, .status]]')" = \
  '[["node-1","Ready"],["node-2","Ready"]]' ] || fail "a what-if changed the nodes"
stop
