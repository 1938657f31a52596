#!/bin/sh
# e2e_token_ttl.sh: access tokens expire on the server. allotd runs with
# --token-ttl 2 --token-leeway 1: the grants say so (expiresIn,
# expires_in), a token works at first and is refused with 401 once its
# lifetime and the leeway for clock differences have passed, never before
# its lifetime; the refresh token then gets a new access token that works.
# The principal cache (a token seen before is not verified again) must not
# outlive the token. The leeway itself, to the side of a few seconds: a
# token signed again with the server's key, its exp 25 s ago, is refused
# with --token-leeway 1 and good with the default leeway (30 s), and one
# whose exp is 35 s ago is refused there too; likewise for nbf.
# --token-ttl outside 1..86400 and --token-leeway outside 0..300 are
# refused at start.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

for ttl in 0 86401 soon; do refused_start token-ttl --token-ttl "$ttl"; done
for leeway in -1 301 soon; do refused_start token-leeway --token-leeway "$leeway"; done

# b64url: standard input in unpadded base64url.
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
# unb64url TEXT: TEXT (unpadded base64url) decoded.
unb64url() {
  _s=$(printf '%s' "$1" | tr -- '-_' '+/')
  case $(( ${#_s} % 4 )) in 2) _s="$_s==" ;; 3) _s="$_s=" ;; esac
  printf '%s' "$_s" | base64 -d
}
# resign TOKEN EXP NBF: TOKEN with its exp and nbf claims set to EXP and
# NBF seconds from now, signed again (HS256) with allotd's key file.
resign() {
  _payload=$(unb64url "$(printf '%s' "$1" | cut -d. -f2)" |
    jq -c --argjson e "$(( $(date +%s) + $2 ))" --argjson n "$(( $(date +%s) + $3 ))" \
      '.exp = $e | .nbf = $n' | b64url)
  _signed="$(printf '%s' "$1" | cut -d. -f1).$_payload"
  printf '%s.%s' "$_signed" "$(printf '%s' "$_signed" | openssl dgst -sha256 -binary -mac HMAC \
    -macopt "hexkey:$(od -An -v -tx1 "$T/ttl.key" | tr -d ' \n')" | b64url)"
}
# status_with TOKEN: the status GET /api/v1/nodes answers with TOKEN.
status_with() { req GET /api/v1/nodes "" "$1" | tail -n 1; }

start --db "$T/ttl.db" --key-file "$T/ttl.key" --token-ttl 2 --token-leeway 1
G=$(expect 200 POST /api/v1/token \
  "{\"grantType\":\"password\",\"username\":\"admin\",\"password\":\"$ALLOT_ADMIN_PASSWORD\"}")
T0=$(now_ms)
[ "$(printf '%s' "$G" | jq .expiresIn)" = 2 ] || fail "v1 grant: $G"
ACCESS=$(printf '%s' "$G" | jq -r .accessToken)
REFRESH=$(printf '%s' "$G" | jq -r .refreshToken)
[ "$(curl -s -X POST "$URL/api/v2/token" \
  -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD" | jq .expires_in)" = 2 ] ||
  fail "the v2 grant does not say expires_in 2"

# used at once (and so cached), then refused once expired: after its 2 s
# and before its 2 s, the 1 s leeway and a second of rounding have passed
# (give or take the machine's load)
expect 200 GET /api/v1/nodes "" "$ACCESS" >/dev/null
refused() { [ "$(status_with "$ACCESS")" = 401 ]; }
poll 20 refused || fail "the access token still works $(( ($(now_ms) - T0) / 1000 )) s after it was issued"
AGE=$(( $(now_ms) - T0 ))
[ "$AGE" -ge 2000 ] || fail "the access token was refused after $AGE ms, before its lifetime of 2 s"
[ "$AGE" -le $((8000 * SCALE)) ] ||
  fail "the access token was refused only after $AGE ms: the leeway of 1 s is not honoured"
E=$(expect 401 GET /api/v1/nodes "" "$ACCESS")
[ "$(printf '%s' "$E" | jq -r '[.code, (.message | length > 0), (.details | length > 0)] | join(",")')" = \
  "401,true,true" ] || fail "401 body: $E"
echo "# the 2 s token was refused $AGE ms after it was issued (leeway 1 s)"

# the refresh token (a day's lifetime) gets a new access token, which works
G=$(expect 200 POST /api/v1/token "{\"grantType\":\"refresh_token\",\"refreshToken\":\"$REFRESH\"}")
[ "$(printf '%s' "$G" | jq .expiresIn)" = 2 ] || fail "refresh grant: $G"
ACCESS=$(printf '%s' "$G" | jq -r .accessToken)
expect 200 GET /api/v1/nodes "" "$ACCESS" >/dev/null
# signed again with the key and a lifetime of an hour, it works: resign is sound
[ "$(status_with "$(resign "$ACCESS" 3600 -5)")" = 200 ] || fail "a token signed again is refused"
[ "$(status_with "$(resign "$ACCESS" -25 -100)")" = 401 ] ||
  fail "a token expired 25 s ago works with --token-leeway 1"
[ "$(status_with "$(resign "$ACCESS" 3600 25)")" = 401 ] ||
  fail "a token good only in 25 s works with --token-leeway 1"
stop

# the default leeway: 30 s
start --db "$T/ttl.db" --key-file "$T/ttl.key" --token-ttl 3600
G=$(expect 200 POST /api/v1/token "{\"grantType\":\"refresh_token\",\"refreshToken\":\"$(
  printf '%s' "$G" | jq -r .refreshToken)\"}")
ACCESS=$(printf '%s' "$G" | jq -r .accessToken)
[ "$(status_with "$(resign "$ACCESS" -25 -100)")" = 200 ] ||
  fail "a token expired 25 s ago is refused with the default leeway of 30 s"
[ "$(status_with "$(resign "$ACCESS" 3600 25)")" = 200 ] ||
  fail "a token good in 25 s is refused with the default leeway of 30 s"
[ "$(status_with "$(resign "$ACCESS" -35 -100)")" = 401 ] ||
  fail "a token expired 35 s ago works with the default leeway of 30 s"
[ "$(status_with "$(resign "$ACCESS" 3600 35)")" = 401 ] ||
  fail "a token good only in 35 s works with the default leeway of 30 s"
stop
echo "e2e_token_ttl: ok"
