#!/bin/sh
# e2e_pending_caps.sh: pending work is bounded. Without nodes every
# submission stays Pending; allotd runs with at most 3 Pending workloads
# per project and 4 per user (--max-pending-per-user from the config file).
#   - the project's cap: admin's fourth submission to team-a is a 429
#     whose message names the project and the option, and it is not stored;
#   - the user's cap: admin's second submission to team-b makes 4 of
#     admin's, the third is a 429 naming admin, while another user's
#     submission to team-b (its third) is accepted;
#   - room comes back: once one of team-a's is deleted, admin's next
#     submission to team-a is accepted;
#   - a batch (POST /workloads/submissions, count N) that would pass a
#     cap is refused whole with the 429 and stores none; one that fits is
#     stored;
#   - a resume makes a workload Pending again: it is a 429 while its
#     project is full (single and through /workloads/batch), the workload
#     stays suspended, and it goes through once there is room;
#   - caps of 0 (a restart with both at 0) take everything;
#   - an inference's PATCH places it anew, Pending again, so it counts as
#     a submission does: on a new database with one 2-GPU machine (team-c
#     deserves both) and 1 Pending workload per project, the inference
#     runs and a 4-GPU
#     training waits; the PATCH is a 429 and the inference keeps running
#     its old image; once the training is deleted the PATCH goes through.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

printf 'max-pending-per-user = 4\n' >"$T/allotd.conf"
start --simulate-nodes 0 --config "$T/allotd.conf" --max-pending-per-project 3
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" | jq -r '.departments[0].id')
project() { # NAME: a new project's id
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$DEP\",\"resources\":[]}" \
    "$ADMIN" | jq -r .id
}
PA=$(project team-a)
PB=$(project team-b)
submit() { # STATUS TOKEN PROJECT-ID NAME: prints the answer
  expect "$1" POST /api/v1/workloads/trainings "{\"name\":\"$4\",\"projectId\":\"$3\",
    \"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$2"
}
stored() { # NAME: how many live workloads have that name
  expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$ADMIN" | jq '.workloads | length'
}

for n in a1 a2 a3; do submit 202 "$ADMIN" "$PA" $n >/dev/null; done
out=$(submit 429 "$ADMIN" "$PA" a4)
printf '%s' "$out" | jq -e '.code == 429 and (.details | test("project team-a has 3 pending workloads.*--max-pending-per-project"))' \
  >/dev/null || fail "the project's cap: $out"
[ "$(stored a4)" = 0 ] || fail "a refused submission was stored"

PW=$(expect 201 POST /api/v1/users '{"email":"res@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"res@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PB\"}" "$ADMIN" >/dev/null
RES=$(login res@example.com "$PW")
submit 202 "$ADMIN" "$PB" b1 >/dev/null
out=$(submit 429 "$ADMIN" "$PB" b2)
printf '%s' "$out" | jq -e '.details | test("admin has 4 pending workloads.*--max-pending-per-user")' \
  >/dev/null || fail "the user's cap: $out"
submit 202 "$RES" "$PB" r1 >/dev/null

A1=$(expect 200 GET "/api/v1/workloads?filterBy=name==a1" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 202 DELETE "/api/v1/workloads/$A1" "" "$ADMIN" >/dev/null
submit 202 "$ADMIN" "$PA" a4 >/dev/null
submit 429 "$ADMIN" "$PA" a5 >/dev/null

# batches: team-b holds admin's b1 and res's r1; res may add 1 more to
# team-b (project cap 3), not 2
batch() { # STATUS TOKEN NAME COUNT: prints the answer
  expect "$1" POST /api/v1/workloads/submissions "{\"type\":\"Training\",\"projectName\":\"team-b\",
    \"name\":\"$3\",\"count\":$4,\"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$2"
}
out=$(batch 429 "$RES" rb 2)
printf '%s' "$out" | jq -e '.code == 429 and (.details | test("project team-b has 2 pending workloads.*--max-pending-per-project.*2 more"))' \
  >/dev/null || fail "a batch past the project's cap: $out"
[ "$(stored rb-0)" = 0 ] && [ "$(stored rb-1)" = 0 ] || fail "a refused batch was stored in part"
batch 202 "$RES" rb 1 | jq -e '.workloads | length == 1' >/dev/null || fail "a batch that fits"

# resume: suspend r1 (team-b: 2 Pending), fill team-b with res's r2, then
# resuming r1 would make 4
R1=$(expect 200 GET "/api/v1/workloads?filterBy=name==r1" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 202 POST "/api/v1/workloads/trainings/$R1/suspend" "" "$RES" >/dev/null
submit 202 "$RES" "$PB" r2 >/dev/null
out=$(expect 429 POST "/api/v1/workloads/trainings/$R1/resume" "" "$RES")
printf '%s' "$out" | jq -e '.code == 429 and (.details | test("project team-b has 3 pending workloads"))' \
  >/dev/null || fail "a resume past the project's cap: $out"
out=$(expect 200 POST /api/v1/workloads/batch "{\"action\":\"resume\",\"ids\":[\"$R1\"]}" "$RES")
printf '%s' "$out" | jq -e '(.succeeded | length) == 0 and .failed[0].code == 429' >/dev/null ||
  fail "a batch resume past the project's cap: $out"
[ "$(expect 200 GET "/api/v1/workloads/$R1" "" "$RES" | jq -r .phase)" = Stopped ] ||
  fail "a refused resume changed the workload"
R2=$(expect 200 GET "/api/v1/workloads?filterBy=name==r2" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 202 DELETE "/api/v1/workloads/$R2" "" "$RES" >/dev/null
expect 202 POST "/api/v1/workloads/trainings/$R1/resume" "" "$RES" >/dev/null

stop
start --simulate-nodes 0 --max-pending-per-project 0 --max-pending-per-user 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
for n in a5 a6 a7; do submit 202 "$ADMIN" "$PA" $n >/dev/null; done
[ "$(expect 200 GET "/api/v1/workloads/count?filterBy=projectName==team-a" "" "$ADMIN" | jq .count)" = 6 ] ||
  fail "team-a does not hold 6 workloads without caps"

stop
start_admin --db respec.db --simulate-nodes 1x2 --max-pending-per-project 1
GPUS="{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},\"gpu\":{\"deserved\":2}}"
# an inference is not preemptible: it runs within quota deserved at every level
DEP=$(expect 201 POST /api/v1/org-unit/departments "{\"name\":\"serving\",\"clusterId\":\"$CLUSTER\",
  \"resources\":[$GPUS]}" "$ADMIN" | jq -r .id)
PC=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"team-c\",\"clusterId\":\"$CLUSTER\",
  \"parentId\":\"$DEP\",\"resources\":[$GPUS]}" "$ADMIN" | jq -r .id)
IN=$(expect 202 POST /api/v1/workloads/inferences "{\"name\":\"serve\",\"projectId\":\"$PC\",
  \"spec\":{\"image\":\"vllm:1\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" | jq -r .workloadId)
wait_phase "$ADMIN" serve Running
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"big\",\"projectId\":\"$PC\",
  \"spec\":{\"compute\":{\"gpuDevicesRequest\":4}}}" "$ADMIN" >/dev/null
out=$(expect 429 PATCH "/api/v1/workloads/inferences/$IN" '{"spec":{"image":"vllm:2"}}' "$ADMIN")
printf '%s' "$out" | jq -e '.code == 429 and (.details | test("project team-c has 1 pending workloads.*--max-pending-per-project"))' \
  >/dev/null || fail "a PATCH past the project's cap: $out"
expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN" | jq -e '.phase == "Running" and .images[0] == "vllm:1"' \
  >/dev/null || fail "a refused PATCH changed the inference: $(expect 200 GET "/api/v1/workloads/$IN" "" "$ADMIN")"
BIG=$(expect 200 GET "/api/v1/workloads?filterBy=name==big" "" "$ADMIN" | jq -r '.workloads[0].id')
expect 202 DELETE "/api/v1/workloads/$BIG" "" "$ADMIN" >/dev/null
expect 202 PATCH "/api/v1/workloads/inferences/$IN" '{"spec":{"image":"vllm:2"}}' "$ADMIN" |
  jq -e '.spec.image == "vllm:2"' >/dev/null || fail "the PATCH with room"
echo "e2e_pending_caps: ok"
