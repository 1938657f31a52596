#!/bin/sh
# whatif.sh ALLOTD ALLOT: `allot ... submit --dry-run` and `allot whatif`
# against a real allotd --demo (2 nodes x 2 GPUs); each answer (its --json
# form) is turned into the state it foresees (tests/server/whatif_lib.sh),
# the same change is then made for real, and the cluster must reach that
# state; the short table says the same:
#   1. the quick start: b2's dry run prints that it would start and that
#      a1 of team-a (1 GPU) would stop for a reclaim; nothing is submitted;
#   2. a pending case: a3's dry run prints that it would wait, and why;
#   3. `allot whatif quota team-b --gpu-quota 1`: team-a reclaims, and the
#      fair shares before -> after;
#   4. `allot whatif drain node-1` names node-1's workloads; a researcher's
#      drain is refused as the API refuses it; usage errors;
#   5. `allot whatif suspend` and `allot whatif delete` of a running
#      workload: it stops (reason suspend, delete), and the cluster reaches
#      what the deletion's answer foresaw.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../server/whatif_lib.sh"

start_demo
ADMIN=$(token)
run 0 project create team-a --gpu-quota 2
run 0 project create team-b --gpu-quota 2
run 0 training submit a1 -i $QS -g 1 -p team-a
run 0 training submit a2 -i $QS -g 2 -p team-a
run 0 training submit b1 -i $QS -g 1 -p team-b
wait_phases a1=Running a2=Running b1=Running
settled

# ---- 1. the quick start: b2's dry run names a1 ----
S0=$(state)
run 0 training submit b2 -i $QS -g 1 -p team-b --dry-run
has "$T/out" "training b2 would start now in node pool default on node-"
grep -Eq '^stop +a1 +team-a +1 +reclaim +node-[12]:[0-9]$' "$T/out" ||
  fail "b2's dry run does not print a1's reclaim: $(cat "$T/out")"
run 0 training submit b2 -i $QS -g 1 -p team-b --dry-run --json
cp "$T/out" "$T/b2.json"
is_state "$S0" || fail "a dry run changed the cluster: $(state)"
run 0 training submit b2 -i $QS -g 1 -p team-b
has "$T/out" "submitted training b2 to project team-b"
reaches "$(predict "$S0" "$(cat "$T/b2.json")")" "b2's dry run"

# ---- 2. pending: a3 would wait ----
S1=$(state)
run 0 training submit a3 -i $QS -g 1 -p team-a --dry-run --json
cp "$T/out" "$T/a3.json"
WHY=$(jq -r '"\(.pendingReason): \(.pendingMessage)"' "$T/a3.json")
run 0 training submit a3 -i $QS -g 1 -p team-a --dry-run
has "$T/out" "training a3 would wait (Pending): $WHY"
run 0 training submit a3 -i $QS -g 1 -p team-a
reaches "$(predict "$S1" "$(cat "$T/a3.json")")" "a3's dry run"
run 0 training describe a3 -p team-a -o json
[ "$(jq -r '.workload.conditions[0] | "\(.reason): \(.message)"' "$T/out")" = "$WHY" ] ||
  fail "a3 waits with $(jq -c '.workload.conditions[0]' "$T/out"), its dry run said $WHY"

# ---- 3. a quota change ----
S2=$(state)
run 0 whatif quota team-b --gpu-quota 1 --json
cp "$T/out" "$T/quota.json"
jq -e '[.stopped[] | .projectName] | length > 0 and all(. == "team-b")' "$T/quota.json" \
  >/dev/null || fail "cutting team-b's quota should stop team-b's workloads: $(cat "$T/quota.json")"
run 0 whatif quota team-b --gpu-quota 1
grep -Eq '^stop +b[12] +team-b +1 +reclaim ' "$T/out" || fail "quota table: $(cat "$T/out")"
grep -Eq '^project team-b +default +2 -> 1 ' "$T/out" || fail "team-b's quota: $(cat "$T/out")"
is_state "$S2" || fail "allot whatif changed the cluster: $(state)"
PB=$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name==team-b" "" "$ADMIN" |
  jq -r '.projects[0].id')
POOL=$(expect 200 GET /api/v1/node-pools "" "$ADMIN" | jq -r '.nodepools[0].id')
expect 200 PATCH "/api/v1/org-unit/projects/$PB/resources" \
  "[{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":1}}]" "$ADMIN" >/dev/null
reaches "$(predict "$S2" "$(cat "$T/quota.json")")" "the quota answer"

# ---- 4. drain, refusals, usage ----
run 0 whatif drain node-1 --json
jq -e '[.stopped[], .moved[] | select(.reason == "drain")] | length > 0' "$T/out" >/dev/null ||
  fail "draining node-1 touches none of its workloads: $(cat "$T/out")"
run 0 whatif drain node-1
grep -Eq ' drain ' "$T/out" || fail "drain table: $(cat "$T/out")"
run 1 whatif drain node-9
has "$T/err" "nodeName names no node"
run 2 whatif quota team-b
has "$T/err" "--gpu-quota N is required"
run 2 whatif drain
has "$T/err" "NODE is missing"
run 1 whatif quota nope --gpu-quota 1
run 2 whatif delete
has "$T/err" "NAME is missing"
run 1 whatif suspend nope -p team-a

# ---- 5. a running workload suspended, then deleted ----
settled
S5=$(state)
V=$(printf '%s' "$S5" | jq -r 'to_entries | map(select(.value.phase == "Running")) | .[0].key')
case $V in a*) VP=team-a ;; *) VP=team-b ;; esac
run 0 whatif suspend "$V" -p $VP
grep -Eq "^stop +$V +$VP +[0-9.]+ +suspend " "$T/out" || fail "suspend table: $(cat "$T/out")"
run 0 whatif delete "$V" -p $VP --json
cp "$T/out" "$T/delete.json"
[ "$(jq -c "[.stopped[] | select(.name == \"$V\") | .reason]" "$T/delete.json")" = '["delete"]' ] ||
  fail "deleting $V: $(cat "$T/delete.json")"
is_state "$S5" || fail "allot whatif changed the cluster: $(state)"
run 0 workload delete "$V" -p $VP -y
reaches "$(predict "$S5" "$(cat "$T/delete.json")")" "the answer to deleting $V"
stop
