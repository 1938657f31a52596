#!/bin/sh
# e2e_sessions.sh: refresh tokens are rotated, and a user can log out.
#   - rotation: a refresh grant (v1 JSON and v2 form) answers a new
#     refresh token; the one it took is refused after (400, invalid_grant
#     in v2);
#   - reuse: presenting an exchanged refresh token again revokes its whole
#     family, so the newest token of that sign-in stops working too, and
#     so do its access tokens (reuse_revokes_family_access_tokens), while
#     another sign-in of the same user keeps working;
#   - id_token_is_not_a_bearer: idToken (v1) and id_token (v2) are their
#     own tokens, not the access token, and a request bearing one is 401;
#   - logout: a user without any access rule logs themself out with
#     POST /api/v1/users/{their id}/logout; their access token issued
#     before is 401 on the next request and their refresh tokens are
#     refused; they may not log out another user (403); an administrator
#     may (200), with the same effect on that user's tokens.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --simulate-nodes 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
grant() { # STATUS USER PASSWORD: the v1 grant's answer
  expect "$1" POST /api/v1/token "{\"grantType\":\"password\",\"username\":\"$2\",\"password\":\"$3\"}"
}
refresh() { # STATUS REFRESH-TOKEN: the v1 refresh grant's answer
  expect "$1" POST /api/v1/token "{\"grantType\":\"refresh_token\",\"refreshToken\":\"$2\"}"
}
refresh_v2() { # REFRESH-TOKEN: the v2 answer's body and status, on two lines
  out=$(curl -s -X POST "$URL/api/v2/token" -d "grant_type=refresh_token&refresh_token=$1" \
    -w '\n%{http_code}')
  record POST /api/v2/token "${out##*
}" "${out%
*}"
  printf '%s\n' "$out"
}

# ---- id_token_is_not_a_bearer ----
G=$(grant 200 admin "$ALLOT_ADMIN_PASSWORD")
ID=$(printf '%s' "$G" | jq -r .idToken)
[ -n "$ID" ] && [ "$ID" != null ] && [ "$ID" != "$(printf '%s' "$G" | jq -r .accessToken)" ] ||
  fail "idToken is the access token: $G"
expect 401 GET /api/v1/nodes "" "$ID" >/dev/null
expect 401 POST /api/v1/node-pools '{"name":"by-id","labelKey":"k","labelValue":"v"}' "$ID" \
  >/dev/null
OUT=$(curl -s -X POST "$URL/api/v2/token" \
  --data-urlencode grant_type=password --data-urlencode username=admin \
  --data-urlencode "password=$ALLOT_ADMIN_PASSWORD")
ID=$(printf '%s' "$OUT" | jq -r .id_token)
[ "$ID" != "$(printf '%s' "$OUT" | jq -r .access_token)" ] || fail "id_token is the access token"
expect 401 GET /api/v1/nodes "" "$ID" >/dev/null

# ---- rotation ----
G=$(grant 200 admin "$ALLOT_ADMIN_PASSWORD")
R1=$(printf '%s' "$G" | jq -r .refreshToken)
G=$(refresh 200 "$R1")
R2=$(printf '%s' "$G" | jq -r .refreshToken)
[ -n "$R2" ] && [ "$R2" != null ] && [ "$R2" != "$R1" ] || fail "a refresh did not rotate: $G"
expect 200 GET /api/v1/nodes "" "$(printf '%s' "$G" | jq -r .accessToken)" >/dev/null
OUT=$(refresh_v2 "$R2")
[ "$(printf '%s\n' "$OUT" | tail -n 1)" = 200 ] || fail "v2 refresh: $OUT"
R3=$(printf '%s\n' "$OUT" | sed '$d' | jq -r .refresh_token)
A3=$(printf '%s\n' "$OUT" | sed '$d' | jq -r .access_token)
expect 200 GET /api/v1/nodes "" "$A3" >/dev/null
[ "$R3" != "$R2" ] && [ "$R3" != null ] || fail "the v2 refresh did not rotate: $OUT"

# ---- reuse: R2 was exchanged; showing it again revokes the family (R3 too) ----
G=$(grant 200 admin "$ALLOT_ADMIN_PASSWORD")
OTHER=$(printf '%s' "$G" | jq -r .refreshToken)
OTHER_A=$(printf '%s' "$G" | jq -r .accessToken)
OUT=$(refresh_v2 "$R2")
[ "$(printf '%s\n' "$OUT" | tail -n 1)" = 400 ] &&
  [ "$(printf '%s\n' "$OUT" | sed '$d' | jq -r .error)" = invalid_grant ] ||
  fail "a reused refresh token (v2): $OUT"
E=$(refresh 400 "$R3")
printf '%s' "$E" | jq -e '.code == 400 and (.message | length > 0) and (.details | test("refresh"))' \
  >/dev/null || fail "the family's newest token after a reuse: $E"
refresh 400 "$R1" >/dev/null
# reuse_revokes_family_access_tokens: the family's access token is 401 now,
# the other sign-in's still works
expect 401 GET /api/v1/nodes "" "$A3" >/dev/null
expect 200 GET /api/v1/nodes "" "$OTHER_A" >/dev/null
refresh 200 "$OTHER" >/dev/null

# ---- logout: a user logs themself out ----
U=$(expect 201 POST /api/v1/users '{"email":"quinn@example.com"}' "$ADMIN")
PW=$(printf '%s' "$U" | jq -r .tempPassword)
QID=$(printf '%s' "$U" | jq -r .id)
U=$(expect 201 POST /api/v1/users '{"email":"rory@example.com"}' "$ADMIN")
PW2=$(printf '%s' "$U" | jq -r .tempPassword)
RID=$(printf '%s' "$U" | jq -r .id)
G=$(grant 200 quinn@example.com "$PW")
QA=$(printf '%s' "$G" | jq -r .accessToken)
QR=$(printf '%s' "$G" | jq -r .refreshToken)
expect 200 GET /api/v1/authorization/roles "" "$QA" >/dev/null
expect 403 POST "/api/v1/users/$RID/logout" "" "$QA" >/dev/null
expect 200 POST "/api/v1/users/$QID/logout" "" "$QA" >/dev/null
E=$(expect 401 GET /api/v1/authorization/roles "" "$QA")
printf '%s' "$E" | jq -e '.code == 401' >/dev/null || fail "after logout: $E"
refresh 400 "$QR" >/dev/null
# signing in again works
QA=$(login quinn@example.com "$PW")
expect 200 GET /api/v1/authorization/roles "" "$QA" >/dev/null

# ---- an administrator logs another user out ----
G=$(grant 200 rory@example.com "$PW2")
RA=$(printf '%s' "$G" | jq -r .accessToken)
RR=$(printf '%s' "$G" | jq -r .refreshToken)
expect 200 GET /api/v1/authorization/roles "" "$RA" >/dev/null
expect 200 POST "/api/v1/users/$RID/logout" "" "$ADMIN" >/dev/null
expect 401 GET /api/v1/authorization/roles "" "$RA" >/dev/null
refresh 400 "$RR" >/dev/null
expect 200 GET /api/v1/nodes "" "$ADMIN" >/dev/null
stop
echo "e2e_sessions: ok"
