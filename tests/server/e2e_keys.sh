#!/bin/sh
# e2e_keys.sh: a user's access keys (Run:ai's access keys, and its user
# applications, their earlier name), end to end:
#   - a user with no system right creates a key of their own: its secret is
#     shown once, never listed; a second key of the same name is a 409, a
#     name outside Run:ai's pattern or a field Run:ai's body lacks a 400;
#   - the key's client credentials get a token that acts as the user: a
#     workload submitted with it in the user's project is the user's, and
#     a project the user may not use refuses it (403);
#   - a new secret voids the old one (the token grant refuses it) and the
#     tokens of the old one (401);
#   - deleting the key ends its tokens (401);
#   - a user sees, renews and deletes only their own keys (another's is a
#     404) and may not use the administration routes (403); a service
#     account has no access keys (403);
#   - the admin lists everyone's keys (with createdBy, filtered by clientId
#     and createdBy) and deletes another user's, whose token then gets 401;
#   - deleting a user deletes their keys and ends their tokens.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --demo
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
PA=$(expect 201 POST /api/v1/org-unit/projects '{"name":"ka","resources":[]}' "$ADMIN" | jq -r .id)
PB=$(expect 201 POST /api/v1/org-unit/projects '{"name":"kb","resources":[]}' "$ADMIN" | jq -r .id)
for u in kim lee; do
  PW=$(expect 201 POST /api/v1/users "{\"email\":\"$u@example.com\"}" "$ADMIN" | jq -r .tempPassword)
  expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$u@example.com\",
    \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" "$ADMIN" >/dev/null
  eval "PW_$u=\$PW"
done
KIM=$(login kim@example.com "$PW_kim")
LEE=$(login lee@example.com "$PW_lee")

# client_token CLIENT SECRET: an access token from client credentials.
client_token() {
  expect 200 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientId\":\"$1\",
    \"clientSecret\":\"$2\"}" | jq -r .accessToken
}
# train NAME PROJECT TOKEN STATUS: submits a CPU training, prints the reply.
train() {
  expect "$4" POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":0}}}" "$3"
}

# ---- kim's key: the secret once, the name's rules ----
KJ=$(expect 201 POST /api/v1/access-keys '{"name":"kim-ci"}' "$KIM")
K=$(printf '%s' "$KJ" | jq -r .id)
K_CLIENT=$(printf '%s' "$KJ" | jq -r .clientId)
K_SECRET=$(printf '%s' "$KJ" | jq -r .clientSecret)
[ -n "$K_SECRET" ] && [ "$K_SECRET" != null ] || fail "no secret in $KJ"
expect 409 POST /api/v1/access-keys '{"name":"kim-ci"}' "$KIM" >/dev/null
expect 400 POST /api/v1/access-keys '{"name":"Kim-CI"}' "$KIM" | jq -r .details | grep -q name ||
  fail "an upper-case name is not refused for its name"
expect 400 POST /api/v1/access-keys '{"name":"kim-x","expiresAt":"2030-01-01T00:00:00Z"}' "$KIM" |
  jq -r .details | grep -q expiresAt || fail "a field Run:ai's body lacks is not refused by name"
expect 400 POST /api/v1/access-keys '{}' "$KIM" >/dev/null
expect 200 GET /api/v1/access-keys "" "$KIM" | jq -e --arg k "$K" \
  '.accessKeys | length == 1 and .[0].id == $k and .[0].name == "kim-ci" and
   (.[0] | has("clientSecret") | not)' >/dev/null || fail "kim's list"
expect 200 GET "/api/v1/access-keys/$K" "" "$KIM" | jq -e '.lastLogin == null' >/dev/null ||
  fail "a key never used has a lastLogin"

# ---- its token acts as kim, with kim's rules ----
KT=$(client_token "$K_CLIENT" "$K_SECRET")
WL=$(train by-key "$PA" "$KT" 202 | jq -r .workloadId)
expect 200 GET "/api/v1/workloads/$WL" "" "$ADMIN" | jq -e '.submittedBy == "kim@example.com"' \
  >/dev/null || fail "the key's workload is not kim's"
train by-key-b "$PB" "$KT" 403 >/dev/null
expect 403 GET /api/v1/administration/access-keys "" "$KT" >/dev/null
expect 200 GET "/api/v1/access-keys/$K" "" "$KIM" | jq -e '.lastLogin != null' >/dev/null ||
  fail "the key's sign-in is not its lastLogin"

# ---- a new secret voids the old one and its tokens ----
K_SECRET2=$(expect 200 POST "/api/v1/access-keys/$K/secret" "" "$KIM" | jq -r .clientSecret)
[ "$K_SECRET2" != "$K_SECRET" ] || fail "the secret did not change"
expect 400 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientId\":\"$K_CLIENT\",
  \"clientSecret\":\"$K_SECRET\"}" >/dev/null
expect 401 GET "/api/v1/workloads/$WL" "" "$KT" >/dev/null
KT=$(client_token "$K_CLIENT" "$K_SECRET2")
expect 200 GET "/api/v1/workloads/$WL" "" "$KT" >/dev/null

# ---- only one's own: lee sees none of kim's and no administration ----
expect 200 GET /api/v1/access-keys "" "$LEE" | jq -e '.accessKeys == []' >/dev/null ||
  fail "lee sees kim's key"
expect 404 GET "/api/v1/access-keys/$K" "" "$LEE" >/dev/null
expect 404 POST "/api/v1/access-keys/$K/secret" "" "$LEE" >/dev/null
expect 404 DELETE "/api/v1/access-keys/$K" "" "$LEE" >/dev/null
expect 404 DELETE "/api/v1/user-applications/$K" "" "$LEE" >/dev/null
expect 403 GET /api/v1/administration/access-keys "" "$LEE" >/dev/null
expect 403 DELETE "/api/v1/administration/access-keys/$K" "" "$LEE" >/dev/null
expect 200 GET "/api/v1/workloads/$WL" "" "$KT" >/dev/null # kim's key survived all that

# ---- deleting the key ends its tokens ----
expect 204 DELETE "/api/v1/access-keys/$K" "" "$KIM" >/dev/null
expect 401 GET "/api/v1/workloads/$WL" "" "$KT" >/dev/null
expect 400 POST /api/v1/token "{\"grantType\":\"client_credentials\",\"clientId\":\"$K_CLIENT\",
  \"clientSecret\":\"$K_SECRET2\"}" >/dev/null
expect 404 GET "/api/v1/access-keys/$K" "" "$KIM" >/dev/null
expect 200 GET "/api/v1/workloads/$WL" "" "$KIM" >/dev/null # kim's own sign-in is untouched

# ---- user applications: the same keys in Run:ai's earlier shapes ----
AJ=$(expect 201 POST /api/v1/user-applications '{"name":"lee-app"}' "$LEE")
A=$(printf '%s' "$AJ" | jq -r .id)
A_CLIENT=$(printf '%s' "$AJ" | jq -r .clientId)
AT=$(client_token "$A_CLIENT" "$(printf '%s' "$AJ" | jq -r .secret)")
expect 200 GET /api/v1/user-applications "" "$LEE" | jq -e --arg a "$A" 'map(.id) == [$a]' >/dev/null ||
  fail "lee's applications"
expect 200 GET /api/v1/access-keys "" "$LEE" | jq -e --arg a "$A" '.accessKeys | map(.id) == [$a]' \
  >/dev/null || fail "a user application is not one of the user's access keys"
expect 200 GET "/api/v1/user-applications/$A" "" "$LEE" >/dev/null
train by-app "$PA" "$AT" 202 >/dev/null
K2=$(expect 201 POST /api/v1/access-keys '{"name":"kim-two"}' "$KIM" | jq -r .id)

# ---- the administration routes: everyone's, and another user's deleted ----
ALL=$(expect 200 GET /api/v1/administration/access-keys "" "$ADMIN")
printf '%s' "$ALL" | jq -e --arg a "$A" --arg k "$K2" \
  '.accessKeys | map({(.id): .createdBy}) | add == {($a): "lee@example.com", ($k): "kim@example.com"}' \
  >/dev/null || fail "the administration list: $ALL"
expect 200 GET "/api/v1/administration/user-applications?createdBy=lee@example.com" "" "$ADMIN" |
  jq -e --arg a "$A" 'map(.id) == [$a]' >/dev/null || fail "createdBy filter"
expect 200 GET "/api/v1/administration/access-keys?clientId=$A_CLIENT" "" "$ADMIN" |
  jq -e --arg a "$A" '.accessKeys | map(.id) == [$a]' >/dev/null || fail "clientId filter"
expect 204 DELETE "/api/v1/administration/user-applications/$A" "" "$ADMIN" >/dev/null
expect 401 GET /api/v1/access-keys "" "$AT" >/dev/null
expect 404 DELETE "/api/v1/administration/access-keys/$A" "" "$ADMIN" >/dev/null
# a user or a service account is no access key
expect 404 DELETE "/api/v1/administration/access-keys/$(expect 200 GET /api/v1/users "" "$ADMIN" |
  jq -r '.[] | select(.username == "lee@example.com") | .id')" "" "$ADMIN" >/dev/null

# ---- a service account has no access keys; keys are not service accounts ----
SAJ=$(expect 201 POST /api/v1/service-accounts '{"name":"bot"}' "$ADMIN")
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$(printf '%s' "$SAJ" | jq -r .clientId)\",
  \"subjectType\":\"service-account\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" \
  "$ADMIN" >/dev/null
SAT=$(client_token "$(printf '%s' "$SAJ" | jq -r .clientId)" "$(printf '%s' "$SAJ" | jq -r .clientSecret)")
expect 403 POST /api/v1/access-keys '{"name":"bot-key"}' "$SAT" >/dev/null
expect 403 GET /api/v1/access-keys "" "$SAT" >/dev/null
expect 200 GET /api/v1/service-accounts "" "$ADMIN" | jq -e 'map(.name) == ["bot"]' >/dev/null ||
  fail "an access key is listed as a service account"
expect 404 GET "/api/v1/service-accounts/$K2" "" "$ADMIN" >/dev/null

# ---- deleting a user deletes their keys and ends their tokens ----
K2_J=$(expect 201 POST /api/v1/access-keys '{"name":"kim-three"}' "$KIM")
K2T=$(client_token "$(printf '%s' "$K2_J" | jq -r .clientId)" "$(printf '%s' "$K2_J" | jq -r .clientSecret)")
expect 200 GET /api/v1/access-keys "" "$K2T" | jq -e '.accessKeys | length == 2' >/dev/null ||
  fail "a key's token does not list its owner's keys"
KIM_ID=$(expect 200 GET /api/v1/users "" "$ADMIN" | jq -r '.[] | select(.username == "kim@example.com") | .id')
expect 204 DELETE "/api/v1/users/$KIM_ID" "" "$ADMIN" >/dev/null
expect 401 GET /api/v1/access-keys "" "$K2T" >/dev/null
expect 200 GET /api/v1/administration/access-keys "" "$ADMIN" | jq -e '.accessKeys == []' >/dev/null ||
  fail "a deleted user's keys are left"

echo "e2e_keys: ok"
