#!/bin/sh
# e2e_idempotency.sh: taken workload names and the Idempotency-Key header,
# against a real allotd. The rules, each a section below:
#   1. a taken name is a 400 on the typed create routes (Run:ai's document
#      lists no 409 for them) whose message says the name is taken;
#   2. a retry with the same Idempotency-Key and the same body gets the
#      first answer, status and body, and makes no second workload (the
#      four typed routes, /workloads/submissions, /workloads/batch);
#   3. the same key with another body is a 400 saying so; a malformed key
#      is a 400; keys belong to one principal;
#   4. a retry after a restart of allotd gets the first answer (the keys
#      are in the database);
#   5. a retry after allotd died between the workload's commit and its
#      answer (the fault point submit) gets a 202 with that workload, and
#      no second one is made;
#   6. a batch whose second name is taken stores nothing.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

DB="$T/idem.db"
start --db "$DB" --simulate-nodes 1x4
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":4}}]}' "$ADMIN" | jq -r .id)

# ireq KEY METHOD PATH BODY TOKEN: req with an Idempotency-Key header;
# prints the body, then the status; the reply's headers go to $T/headers.
ireq() {
  r_out=$(curl -s -X "$2" "$URL$3" -H 'Content-Type: application/json' -H "Idempotency-Key: $1" \
    -H "Authorization: Bearer $5" --data-binary "$4" -D "$T/headers" -w '\n%{http_code}') || true
  record "$2" "$3" "${r_out##*
}" "${r_out%
*}"
  printf '%s\n' "$r_out"
}
# iexpect STATUS KEY METHOD PATH BODY TOKEN: ireq, checks the status, prints the body.
iexpect() {
  _want=$1; shift
  _out=$(ireq "$@")
  [ "$(printf '%s\n' "$_out" | tail -n 1)" = "$_want" ] ||
    fail "$2 $3 (key $1): $(printf '%s\n' "$_out" | tail -n 1), wanted $_want: $(printf '%s' "$_out" | head -c 400)"
  printf '%s\n' "$_out" | sed '$d'
}
train() { # NAME [GPUS]
  printf '{"name":"%s","projectId":"%s","spec":{"image":"busybox","compute":{"gpuDevicesRequest":%s}}}' \
    "$1" "$P" "${2:-1}"
}
named() { # NAME: how many live workloads have that name
  expect 200 GET "/api/v1/workloads?filterBy=name==$1" "" "$ADMIN" | jq '.workloads | length'
}

# ---- 1. a taken name is a 400 that says the name is taken ----
expect 202 POST /api/v1/workloads/trainings "$(train t1)" "$ADMIN" >/dev/null
for route in trainings workspaces distributed inferences; do
  out=$(expect 400 POST "/api/v1/workloads/$route" "$(train t1)" "$ADMIN")
  printf '%s' "$out" | jq -r .details | grep -q "the name t1 is taken" || fail "$route: $out"
done

# ---- 2. a retry with the same key and body gets the first answer ----
for route in trainings workspaces; do
  first=$(iexpect 202 "k-$route" POST "/api/v1/workloads/$route" "$(train "r-$route")" "$ADMIN")
  again=$(iexpect 202 "k-$route" POST "/api/v1/workloads/$route" "$(train "r-$route")" "$ADMIN")
  [ "$first" = "$again" ] || fail "$route: the retry's answer differs: $first / $again"
  grep -qi '^Idempotent-Replayed: true' "$T/headers" || fail "$route: the replay does not say so"
  [ "$(named "r-$route")" = 1 ] || fail "$route: the retry made a second workload"
done
SUB='{"type":"Training","projectName":"p","name":"b","count":2,"spec":{"image":"busybox","compute":{"gpuDevicesRequest":0}}}'
first=$(iexpect 202 k-sub POST /api/v1/workloads/submissions "$SUB" "$ADMIN")
again=$(iexpect 202 k-sub POST /api/v1/workloads/submissions "$SUB" "$ADMIN")
[ "$first" = "$again" ] || fail "submissions: the retry's answer differs"
[ "$(named b-0)$(named b-1)" = 11 ] || fail "submissions: the retry made more workloads"
IDS=$(printf '%s' "$first" | jq -c '[.workloads[].workloadId]')
BATCH="{\"ids\":$IDS,\"action\":\"suspend\"}"
first=$(iexpect 200 k-batch POST /api/v1/workloads/batch "$BATCH" "$ADMIN")
again=$(iexpect 200 k-batch POST /api/v1/workloads/batch "$BATCH" "$ADMIN")
[ "$first" = "$again" ] || fail "batch: the retry's answer differs: $first / $again"
printf '%s' "$first" | jq -e '.succeeded | length == 2' >/dev/null || fail "batch: $first"

# ---- 3. the same key with another body, a bad key, another principal ----
out=$(iexpect 400 k-trainings POST /api/v1/workloads/trainings "$(train other)" "$ADMIN")
printf '%s' "$out" | jq -r .details | grep -q "used with another request" || fail "key reuse: $out"
[ "$(named other)" = 0 ] || fail "a reused key stored its other request"
iexpect 400 "bad key" POST /api/v1/workloads/trainings "$(train sp)" "$ADMIN" >/dev/null
iexpect 400 "$(head -c 256 /dev/zero | tr '\0' k)" POST /api/v1/workloads/trainings "$(train long)" \
  "$ADMIN" >/dev/null
PW=$(expect 201 POST /api/v1/users '{"email":"r@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"r@example.com\",
  \"subjectType\":\"user\",\"roleId\":3,\"scopeType\":\"project\",\"scopeId\":\"$P\"}" "$ADMIN" >/dev/null
R=$(login r@example.com "$PW")
out=$(iexpect 400 k-trainings POST /api/v1/workloads/trainings "$(train r-trainings)" "$R")
printf '%s' "$out" | jq -r .details | grep -q "is taken" || fail "another principal's key replayed: $out"

# ---- 4. a retry after a restart gets the first answer ----
first=$(iexpect 202 k-restart POST /api/v1/workloads/trainings "$(train restart)" "$ADMIN")
stop
start --db "$DB" --simulate-nodes 1x4
again=$(iexpect 202 k-restart POST /api/v1/workloads/trainings "$(train restart)" "$ADMIN")
[ "$first" = "$again" ] || fail "after a restart the retry's answer differs: $first / $again"
[ "$(named restart)" = 1 ] || fail "after a restart the retry made a second workload"

# ---- 5. a retry after allotd died between the commit and the answer ----
stop
start_fault submit:1 --db "$DB" --simulate-nodes 1x4
out=$(ireq k-crash POST /api/v1/workloads/trainings "$(train crash)" "$ADMIN")
[ "$(printf '%s\n' "$out" | tail -n 1)" = 000 ] || fail "crash got an answer before the kill: $out"
killed_at submit
start --db "$DB" --simulate-nodes 1x4
again=$(iexpect 202 k-crash POST /api/v1/workloads/trainings "$(train crash)" "$ADMIN")
[ "$(named crash)" = 1 ] || fail "the retry after the crash made a second workload"
ID=$(expect 200 GET "/api/v1/workloads?filterBy=name==crash" "" "$ADMIN" | jq -r '.workloads[0].id')
[ "$(printf '%s' "$again" | jq -r .workloadId)" = "$ID" ] || fail "the retry answered another workload: $again"
third=$(iexpect 202 k-crash POST /api/v1/workloads/trainings "$(train crash)" "$ADMIN")
[ "$third" = "$again" ] || fail "the answer after the crash was not kept"
expect 400 POST /api/v1/workloads/trainings "$(train crash)" "$ADMIN" >/dev/null

# ---- 6. a batch whose second name is taken stores nothing ----
expect 202 POST /api/v1/workloads/trainings "$(train s-1)" "$ADMIN" >/dev/null
out=$(expect 400 POST /api/v1/workloads/submissions \
  '{"type":"Training","projectName":"p","name":"s","count":3,"spec":{"image":"busybox"}}' "$ADMIN")
printf '%s' "$out" | jq -r .details | grep -q "taken" || fail "batch with a taken name: $out"
[ "$(named s-0)$(named s-1)$(named s-2)" = 010 ] || fail "a refused batch stored some of its workloads"
stop
echo "e2e_idempotency: ok"
