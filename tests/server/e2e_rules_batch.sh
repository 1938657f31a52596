#!/bin/sh
# e2e_rules_batch.sh: access rules in batches, all or nothing, and the
# caller's permitted scopes.
#   - batch-create with one scope that names no project is a 400 and
#     creates no rule; the same batch without it creates one rule per
#     subject and scope (200, succeeded);
#   - batch (action delete) naming one rule that is not there is a 400 and
#     deletes none; validate_delete says which could go; the batch of the
#     real ones (by number and by the UUID form) deletes them all;
#   - permitted-scopes: a Viewer on one project reads projects there and
#     creates nowhere; the System administrator's scope is the system.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/b.db" --simulate-nodes 0
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" | jq -r '.departments[0].id')
project() {
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$DEP\",
    \"resources\":[]}" "$ADMIN" | jq -r .id
}
PA=$(project team-a)
PB=$(project team-b)
PW=$(expect 201 POST /api/v1/users '{"email":"dave@example.com"}' "$ADMIN" | jq -r .tempPassword)
count() {
  expect 200 GET "/api/v1/authorization/access-rules?subjectIds=dave@example.com" "" "$ADMIN" |
    jq .totalRecords
}
batch() { # SCOPES-JSON
  printf '{"payload":{"roleId":6,"subjects":[{"subjectId":"dave@example.com","subjectType":"user"}],"scopes":%s}}' "$1"
}
expect 400 POST /api/v1/authorization/access-rules/batch-create "$(batch "[{\"scopeId\":\"$PA\",
  \"scopeType\":\"project\"},{\"scopeId\":\"no-such-project\",\"scopeType\":\"project\"}]")" \
  "$ADMIN" >/dev/null
[ "$(count)" = 0 ] || fail "a failed batch created rules"
OUT=$(expect 200 POST /api/v1/authorization/access-rules/batch-create "$(batch "[{\"scopeId\":\"$PA\",
  \"scopeType\":\"project\"},{\"scopeId\":\"$PB\",\"scopeType\":\"project\"}]")" "$ADMIN")
printf '%s' "$OUT" | jq -e '(.succeeded | length) == 2 and (.failed | length) == 0' >/dev/null ||
  fail "batch-create: $OUT"
[ "$(count)" = 2 ] || fail "the batch did not create 2 rules"
R1=$(printf '%s' "$OUT" | jq -r '.succeeded[0].id')
R2=$(printf '%s' "$OUT" | jq -r '.succeeded[1].id')
U2=$(printf '00000000-0000-0000-0000-%012d' "$R2")

D=$(login dave@example.com "$PW")
P=$(expect 200 POST /api/v1/authorization/permitted-scopes '{"resourceType":"project"}' "$D")
printf '%s' "$P" | jq -e --arg a "$PA" --arg b "$PB" '.read.system == false and
  (.read.projects | sort) == ([$a, $b] | sort) and .create.projects == [] and
  .create.system == false' >/dev/null || fail "dave's permitted scopes: $P"
expect 200 POST /api/v1/authorization/permitted-scopes '{"resourceType":"project","action":"read"}' \
  "$D" | jq -e '.update.projects == [] and (.read.projects | length) == 2' >/dev/null ||
  fail "one action"
expect 200 POST /api/v1/authorization/permitted-scopes '{"resourceType":"nodes"}' "$ADMIN" |
  jq -e '.create.system == true and .create.clusters != []' >/dev/null || fail "admin's scopes"

expect 400 POST /api/v1/authorization/access-rules/batch "{\"ids\":[\"$R1\",\"999999\"],
  \"action\":\"delete\"}" "$ADMIN" >/dev/null
[ "$(count)" = 2 ] || fail "a failed delete batch deleted rules"
expect 200 POST /api/v1/authorization/access-rules/batch "{\"ids\":[\"$U2\",
  \"00000000-0000-0000-0000-000000999999\"],\"action\":\"validate_delete\"}" "$ADMIN" |
  jq -e --arg u "$U2" '.succeeded == [$u] and (.failed | length) == 1 and .failed[0].code == 404' \
  >/dev/null || fail "validate_delete"
[ "$(count)" = 2 ] || fail "validate_delete deleted rules"
expect 400 POST /api/v1/authorization/access-rules/batch "{\"ids\":[\"$R1\"],\"action\":\"drop\"}" \
  "$ADMIN" >/dev/null
expect 200 POST /api/v1/authorization/access-rules/batch "{\"ids\":[\"$R1\",\"$U2\"],
  \"action\":\"delete\"}" "$ADMIN" | jq -e '(.succeeded | length) == 2' >/dev/null ||
  fail "the delete batch"
[ "$(count)" = 0 ] || fail "the delete batch left rules"
echo "e2e_rules_batch: ok"
