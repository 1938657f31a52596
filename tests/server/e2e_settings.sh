#!/bin/sh
# e2e_settings.sh: the tenant's settings allotd honours, and its logo.
#   - security settings: browserSessionTimeout is listed (idleTimeout 1440
#     minutes by default); set to 2, a sign-in's refresh token lives 120 s
#     (its exp); a key allotd does not honour is a 404, a bad value a 400,
#     a principal who is not System administrator a 403;
#   - tenant settings: workloads.maxPendingPerProject set to 1 refuses a
#     project's second Pending workload at once (429); the value outlives
#     a restart (source Tenant); an unknown key is a 404;
#   - the logo: a PNG is stored and answered as sent; not base64 is a
#     400, not a PNG or SVG a 415, over 128 KiB a 413; none set is a 204.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/s.db" --simulate-nodes 0
expect 200 GET /api/v1/security/settings "" "$ADMIN" |
  jq -e '.browserSessionTimeout.idleTimeout == 1440 and (keys | length) == 1' >/dev/null ||
  fail "security settings"
expect 200 PUT /api/v1/security/settings/browserSessionTimeout '{"idleTimeout":2}' "$ADMIN" >/dev/null
expect 200 GET /api/v1/security/settings/browserSessionTimeout "" "$ADMIN" |
  jq -e '.idleTimeout == 2' >/dev/null || fail "idleTimeout not stored"
REFRESH=$(expect 200 POST /api/v1/token "{\"grantType\":\"password\",\"username\":\"admin\",
  \"password\":\"$ALLOT_ADMIN_PASSWORD\"}" | jq -r .refreshToken)
LIFE=$(printf '%s' "$REFRESH" | "$PYTHON" -c 'import sys, json, base64
p = sys.stdin.read().split(".")[1]
c = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
print(c["exp"] - c["iat"])')
[ "$LIFE" = 120 ] || fail "the refresh token lives $LIFE s, not 120"
expect 404 PUT /api/v1/security/settings/autoRedirectSSO '{"enabled":true}' "$ADMIN" >/dev/null
expect 404 GET /api/v1/security/settings/logoutRedirectUri "" "$ADMIN" >/dev/null
expect 400 PUT /api/v1/security/settings/browserSessionTimeout '{"idleTimeout":0}' "$ADMIN" >/dev/null
expect 400 PUT /api/v1/security/settings/browserSessionTimeout '{"idle":5}' "$ADMIN" >/dev/null
PW=$(expect 201 POST /api/v1/users '{"email":"dee@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules '{"subjectId":"dee@example.com",
  "subjectType":"user","roleId":2,"scopeType":"system"}' "$ADMIN" >/dev/null
DEE=$(login dee@example.com "$PW")
expect 403 PUT /api/v1/security/settings/browserSessionTimeout '{"idleTimeout":5}' "$DEE" >/dev/null
expect 200 PUT /api/v1/security/settings/browserSessionTimeout '{"idleTimeout":null}' "$ADMIN" \
  >/dev/null

# tenant settings
expect 200 GET /v1/k8s/setting "" "$ADMIN" | jq -e 'map(.key) | index("workloads.maxPendingPerProject")
  != null and index("audit.retentionDays") != null' >/dev/null || fail "tenant settings"
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" | jq -r '.departments[0].id')
PA=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"team-a\",\"parentId\":\"$DEP\",
  \"resources\":[]}" "$ADMIN" | jq -r .id)
submit() { # STATUS NAME
  expect "$1" POST /api/v1/workloads/trainings "{\"name\":\"$2\",\"projectId\":\"$PA\",
    \"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
}
submit 202 w1
expect 200 PUT /v1/k8s/setting '{"key":"workloads.maxPendingPerProject","value":1}' "$ADMIN" |
  jq -e '.msg == "done"' >/dev/null || fail "PUT tenant setting"
submit 429 w2
expect 404 PUT /v1/k8s/setting '{"key":"department.use","value":true}' "$ADMIN" >/dev/null
expect 400 PUT /v1/k8s/setting '{"key":"workloads.maxPendingPerProject","value":-1}' "$ADMIN" \
  >/dev/null
expect 403 PUT /v1/k8s/setting '{"key":"workloads.maxPendingPerProject","value":5}' "$DEE" >/dev/null
stop
start --db "$T/s.db" --simulate-nodes 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
expect 200 GET /v1/k8s/setting "" "$ADMIN" | jq -e '.[] | select(.key == "workloads.maxPendingPerProject")
  | .value == "1" and .source == "Tenant"' >/dev/null || fail "the setting did not outlive a restart"
[ "$(expect 200 GET /v1/k8s/setting/workloads.maxPendingPerProject "" "$ADMIN")" = true ] ||
  fail "GET by key"
submit 429 w3
expect 200 PUT /v1/k8s/setting '{"key":"workloads.maxPendingPerProject","value":"0"}' "$ADMIN" \
  >/dev/null
[ "$(expect 200 GET /v1/k8s/setting/workloads.maxPendingPerProject "" "$ADMIN")" = false ] ||
  fail "GET by key after 0"
submit 202 w4

# the logo
expect 204 GET /api/v1/logo "" "$ADMIN" >/dev/null
PNG=$(printf '\211PNG\r\n\032\nIHDR-made-up' | base64 -w0)
expect 200 POST /api/v1/logo "{\"logo\":\"$PNG\"}" "$ADMIN" >/dev/null
expect 200 GET /api/v1/logo "" "$ADMIN" | jq -e --arg p "$PNG" '.logo == $p' >/dev/null ||
  fail "the logo is not answered as sent"
SVG=$(printf '<svg xmlns="http://www.w3.org/2000/svg"/>' | base64 -w0)
expect 200 POST /api/v1/logo "{\"logo\":\"$SVG\"}" "$ADMIN" >/dev/null
expect 400 POST /api/v1/logo '{"logo":"not base64!"}' "$ADMIN" >/dev/null
expect 415 POST /api/v1/logo "{\"logo\":\"$(printf 'GIF89a....' | base64 -w0)\"}" "$ADMIN" >/dev/null
BIG=$( (printf '\211PNG\r\n\032\n'; head -c 140000 /dev/zero) | base64 -w0)
printf '{"logo":"%s"}' "$BIG" >"$T/big.json"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/api/v1/logo" -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/json' --data-binary "@$T/big.json")" = 413 ] || fail "a big logo"
expect 200 GET /api/v1/logo "" "$DEE" | jq -e --arg p "$SVG" '.logo == $p' >/dev/null ||
  fail "the SVG logo"
expect 403 POST /api/v1/logo "{\"logo\":\"$PNG\"}" "$DEE" >/dev/null
echo "e2e_settings: ok"
