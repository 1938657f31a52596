#!/bin/sh
# e2e_access.sh: what a token, or its absence, lets a caller see and do.
#   - /metrics names every project with its quota: without a token it is a
#     401, with a project-scoped role a 403, with a system-wide role a 200;
#     --metrics-listen serves it without a token on a listener of its own,
#     which serves nothing else;
#   - logins and names: control characters and look-alike (non-ASCII)
#     characters are a 400 naming the field (a Cyrillic "а" in "аdmin"
#     made a second "admin"); free text refuses invisible and
#     bidirectional control characters but keeps other Unicode;
#   - logins are unique without regard to case: `ADMIN` beside `admin`
#     (a user, or a service account's client id) is a 409, and sign-in
#     is exact (`ADMIN` with admin's password does not sign in);
#   - a Department administrator cannot make anyone System administrator,
#     and creating an access rule does not tell it which logins exist (the
#     same answer for a login or an id that exists or not).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --demo --metrics-listen 127.0.0.1:0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
MPORT=$(sed -n 's/^allotd: metrics without a token on port \([0-9]*\).*/\1/p' "$T/log")
[ -n "$MPORT" ] || fail "no metrics listener in the log"
MURL="http://127.0.0.1:$MPORT"

# /metrics on the API listener
expect 401 GET /metrics >/dev/null
expect 200 GET /metrics "" "$ADMIN" | grep -q '^allot_sched_cycles_total' || fail "admin's /metrics"
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"pa","resources":[]}' "$ADMIN" | jq -r .id)
PW=$(expect 201 POST /api/v1/users '{"email":"v@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"v@example.com\",
  \"subjectType\":\"user\",\"roleId\":6,\"scopeType\":\"project\",\"scopeId\":\"$P\"}" "$ADMIN" >/dev/null
V=$(login v@example.com "$PW")
expect 403 GET /metrics "" "$V" >/dev/null
# the metrics listener: /metrics to anyone, nothing else
out=$(curl -s "$MURL/metrics" -w '\n%{http_code}')
[ "$(printf '%s\n' "$out" | tail -n 1)" = 200 ] || fail "metrics listener: $(printf '%s' "$out" | tail -c 200)"
printf '%s\n' "$out" | grep -q '^kai_queue_deserved_gpus' || fail "metrics listener: no queue gauges"
for path in /api/v1/clusters /healthz /api/v1/token /; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$MURL$path")" = 404 ] || fail "metrics listener serves $path"
done

# logins and names
for e in '"eve\n@example.com"' '"\u0430dmin"' '"admin\u200b"' '"e ve@example.com"' '"x\u0007"'; do
  out=$(expect 400 POST /api/v1/users "{\"email\":$e}" "$ADMIN")
  printf '%s' "$out" | jq -r .details | grep -q "email" || fail "email $e: $out"
done
expect 201 POST /api/v1/users '{"email":"eve@example.com"}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/service-accounts '{"name":"ci\u000abot"}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/service-accounts '{"name":"\u0441i"}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/agent/tokens '{"name":"rack\u0007"}' "$ADMIN" >/dev/null
expect 400 POST /api/v1/node-pools '{"name":"np","labelKey":"k","labelValue":"v\u0430"}' "$ADMIN" >/dev/null
expect 400 PATCH "/api/v1/org-unit/projects/$P" '{"description":"evil\u202etxt.exe"}' "$ADMIN" >/dev/null
expect 200 PATCH "/api/v1/org-unit/projects/$P" '{"description":"caf\u00e9 team"}' "$ADMIN" >/dev/null

# ---- logins are unique without regard to case; sign-in is exact ----
for e in ADMIN Admin EVE@example.com eve@EXAMPLE.COM; do
  expect 409 POST /api/v1/users "{\"email\":\"$e\"}" "$ADMIN" | jq -r .details |
    grep -q "taken" || fail "$e beside an existing login: no 'taken' in the answer"
done
expect 400 POST /api/v1/token \
  "{\"grantType\":\"password\",\"username\":\"ADMIN\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}" >/dev/null
expect 200 GET "/api/v1/users?filterBy=username==ADMIN" "" "$ADMIN" | jq -e 'length == 0' >/dev/null ||
  fail "a refused ADMIN was stored"

# a Department administrator grants no System administrator
DEP=$(expect 201 POST /api/v1/org-unit/departments '{"name":"d1","resources":[]}' "$ADMIN" | jq -r .id)
PW=$(expect 201 POST /api/v1/users '{"email":"da@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"da@example.com\",
  \"subjectType\":\"user\",\"roleId\":2,\"scopeType\":\"department\",\"scopeId\":\"$DEP\"}" "$ADMIN" >/dev/null
DA=$(login da@example.com "$PW")
expect 400 POST /api/v1/authorization/access-rules "{\"subjectId\":\"da@example.com\",
  \"subjectType\":\"user\",\"roleId\":1,\"scopeType\":\"department\",\"scopeId\":\"$DEP\"}" "$DA" >/dev/null
expect 403 POST /api/v1/authorization/access-rules "{\"subjectId\":\"da@example.com\",
  \"subjectType\":\"user\",\"roleId\":1,\"scopeType\":\"system\"}" "$DA" >/dev/null
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"eve@example.com\",
  \"subjectType\":\"user\",\"roleId\":3,\"scopeType\":\"department\",\"scopeId\":\"$DEP\"}" "$DA" >/dev/null
expect 403 POST /api/v1/node-pools '{"name":"np2","labelKey":"k","labelValue":"v2"}' "$DA" >/dev/null

# ---- a Department administrator creating an access rule learns not which logins exist ----
rule_by_da() { # SUBJECT: the answer to DA's rule for SUBJECT, its id and times left out
  expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$1\",
    \"subjectType\":\"user\",\"roleId\":5,\"scopeType\":\"department\",\"scopeId\":\"$DEP\"}" "$DA" |
    jq -c "del(.id, .createdAt, .updatedAt) | .subjectId |= sub(\"$1\"; \"S\")"
}
known=$(rule_by_da v@example.com)
unknown=$(rule_by_da nobody@example.com)
[ "$known" = "$unknown" ] || fail "a rule for a login that exists answers otherwise: $known / $unknown"
V_ID=$(expect 200 GET "/api/v1/users?filterBy=username==v@example.com" "" "$ADMIN" | jq -r '.[0].id')
[ "$(rule_by_da "$V_ID")" = "$known" ] || fail "a rule naming a user's id answers otherwise"
[ "$(rule_by_da 999999)" = "$known" ] || fail "a rule naming no user's id answers otherwise"
stop
echo "e2e_access: ok"
