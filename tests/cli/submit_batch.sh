#!/bin/sh
# submit_batch.sh ALLOTD ALLOT: submissions through POST
# /api/v1/workloads/submissions, against a real allotd --demo on a free
# loopback port.
#   - allot training submit costs one request (allotd's 2xx counter moves
#     by one per call: no list of projects to find the project's id);
#   - --count N makes NAME-0 .. NAME-(N-1), each with ALLOT_BATCH_INDEX and
#     ALLOT_BATCH_COUNT in its spec's environment, in one commit: a batch
#     with one taken name adds none of its workloads;
#   - the flags and the route refuse what they cannot do.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

demo_with team-a team-b

# ---- one request per submission ----
ok_requests() {
  expect 200 GET /metrics "" "$TOKEN" | awk '/^allot_http_requests_total\{code="2xx"\}/ {print $2}'
}
m0=$(ok_requests)
m1=$(ok_requests)
run 0 training submit one -i $QS -g 1 -p team-b
has "$T/out" "submitted training one to project team-b"
m2=$(ok_requests)
[ $((m2 - m1)) -eq $((m1 - m0 + 1)) ] ||
  fail "a submission took $((m2 - m1 - (m1 - m0))) requests, wanted 1"
run 0 workspace submit ws -i $QS -p team-b --json
[ "$(jq -r '.name + " " + .projectId' "$T/out")" = \
  "ws $(expect 200 GET "/api/v1/workloads?filterBy=name==ws" "" "$TOKEN" | jq -r '.workloads[0].projectId')" ] ||
  fail "--json: $(cat "$T/out")"

# ---- --count ----
run 0 training submit sweep -i $QS -p team-a --count 5 -- sh -c 'echo $ALLOT_BATCH_INDEX'
has "$T/out" "submitted 5 trainings sweep-0 .. sweep-4 to project team-a"
names() {
  expect 200 GET "/api/v1/workloads?filterBy=projectName==team-a&sortBy=name&limit=500" "" "$TOKEN" |
    jq -r '[.workloads[].name] | join(" ")'
}
[ "$(names)" = "sweep-0 sweep-1 sweep-2 sweep-3 sweep-4" ] || fail "names: $(names)"
for i in 0 4; do
  id=$(expect 200 GET "/api/v1/workloads?filterBy=name==sweep-$i" "" "$TOKEN" | jq -r '.workloads[0].id')
  env=$(expect 200 GET "/api/v1/workloads/trainings/$id" "" "$TOKEN" |
    jq -r '[.spec.environmentVariables[] | "\(.name)=\(.value)"] | join(" ")')
  [ "$env" = "ALLOT_BATCH_INDEX=$i ALLOT_BATCH_COUNT=5" ] || fail "sweep-$i environment: $env"
done
run 0 training submit grid -i $QS -p team-a --count 2 -e LR=0.1 --json
[ "$(jq -r '[.workloads[] | .name + ":" + ([.spec.environmentVariables[].value] | join(","))]
            | join(" ")' "$T/out")" = "grid-0:0.1,0,2 grid-1:0.1,1,2" ] ||
  fail "--count --json: $(cat "$T/out")"

# all or nothing: sweep-0 .. sweep-4 exist, so sweep-5 and sweep-6 must not appear
run 1 training submit sweep -i $QS -p team-a --count 7
has "$T/err" "exists in the project"
[ "$(names)" = "grid-0 grid-1 sweep-0 sweep-1 sweep-2 sweep-3 sweep-4" ] ||
  fail "a refused batch left workloads: $(names)"

# ---- refused by the client (exit 2, before any request) ----
run 2 training submit sweep -i $QS -p team-a --count 0
has "$T/err" "--count wants a whole number from 1 to 1000"
run 2 training submit sweep -i $QS -p team-a --count 1001
run 2 training submit -i $QS -p team-a --count 3 --name-prefix x
has "$T/err" "give NAME, not --name-prefix"
run 1 training submit t -i $QS -p no-such-project
has "$T/err" "projectName: no project named no-such-project (400 Bad request)"

# ---- refused by the route ----
S=/api/v1/workloads/submissions
expect 400 POST $S '{"type":"Job","name":"x","projectName":"team-a","spec":{"image":"i"}}' "$TOKEN" |
  jq -e '.details | test("type")' >/dev/null || fail "unknown type"
expect 400 POST $S '{"name":"x","projectName":"team-a","spec":{"image":"i"}}' "$TOKEN" >/dev/null
P=$(expect 200 GET "/api/v1/workloads?filterBy=name==one" "" "$TOKEN" | jq -r '.workloads[0].projectId')
expect 400 POST $S "{\"type\":\"Training\",\"name\":\"x\",\"projectName\":\"team-a\",\"projectId\":\"$P\",\"spec\":{\"image\":\"i\"}}" "$TOKEN" |
  jq -e '.details | test("give one")' >/dev/null || fail "projectName and projectId"
expect 400 POST $S '{"type":"Training","name":"x","projectName":"team-a","count":1001,"spec":{"image":"i"}}' "$TOKEN" >/dev/null
expect 400 POST $S '{"type":"Training","name":"x","projectName":"team-a","count":2,"spec":{"image":"i","environmentVariables":[{"name":"ALLOT_BATCH_INDEX","value":"7"}]}}' "$TOKEN" |
  jq -e '.details | test("set by allotd")' >/dev/null || fail "ALLOT_BATCH_INDEX given"
expect 400 POST $S '{"type":"Training","name":"x","projectName":"team-a","count":2,"useGivenNameAsPrefix":true,"spec":{"image":"i"}}' "$TOKEN" >/dev/null
expect 400 POST $S '{"type":"Training","name":"x","projectName":"team-a","spec":{"image":"i","bogus":1}}' "$TOKEN" |
  jq -e '.details | test("bogus")' >/dev/null || fail "an unknown spec field"
# a typed view per workload, in order
expect 202 POST $S "{\"type\":\"Workspace\",\"name\":\"api\",\"projectId\":\"$P\",\"count\":3,\"spec\":{\"image\":\"i\"}}" "$TOKEN" |
  jq -e '[.workloads[].name] == ["api-0","api-1","api-2"]' >/dev/null || fail "POST count 3"

stop
echo "ok: cli submit_batch"
