#!/bin/sh
# e2e_token_ttl.sh: access tokens expire on the server. allotd runs with
# --token-ttl 2: the grants say so (expiresIn, expires_in), a token works
# at first and is refused with 401 once its lifetime and the 30 s leeway
# for clock differences have passed, never before its lifetime; the
# refresh token then gets a new access token that works. The principal
# cache (a token seen before is not verified again) must not outlive the
# token. --token-ttl outside 1..86400 is refused at start.
# Needs about 35 s: the leeway is real time.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

for ttl in 0 86401 soon; do refused_start token-ttl --token-ttl "$ttl"; done

start --db "$T/ttl.db" --token-ttl 2
G=$(expect 200 POST /api/v1/token \
  "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}")
T0=$(now_ms)
[ "$(printf '%s' "$G" | jq .expiresIn)" = 2 ] || fail "v1 grant: $G"
ACCESS=$(printf '%s' "$G" | jq -r .accessToken)
REFRESH=$(printf '%s' "$G" | jq -r .refreshToken)
[ "$(curl -s -X POST "$URL/api/v2/token" \
  -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD" | jq .expires_in)" = 2 ] ||
  fail "the v2 grant does not say expires_in 2"

# used at once (and so cached), then refused once expired
expect 200 GET /api/v1/nodes "" "$ACCESS" >/dev/null
refused() { [ "$(req GET /api/v1/nodes "" "$ACCESS" | tail -n 1)" = 401 ]; }
poll 60 refused || fail "the access token still works $(( ($(now_ms) - T0) / 1000 )) s after it was issued"
AGE=$(( $(now_ms) - T0 ))
[ "$AGE" -ge 2000 ] || fail "the access token was refused after $AGE ms, before its lifetime of 2 s"
E=$(expect 401 GET /api/v1/nodes "" "$ACCESS")
[ "$(printf '%s' "$E" | jq -r '[.code, (.message | length > 0), (.details | length > 0)] | join(",")')" = \
  "401,true,true" ] || fail "401 body: $E"
echo "# the 2 s token was refused $AGE ms after it was issued"

# the refresh token (a day's lifetime) gets a new access token, which works
G=$(expect 200 POST /api/v1/token "{\"grantType\":\"refresh_token\",\"refreshToken\":\"$REFRESH\"}")
[ "$(printf '%s' "$G" | jq .expiresIn)" = 2 ] || fail "refresh grant: $G"
expect 200 GET /api/v1/nodes "" "$(printf '%s' "$G" | jq -r .accessToken)" >/dev/null
stop
echo "e2e_token_ttl: ok"
