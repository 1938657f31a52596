#!/bin/sh
# e2e_user_rate.sh: requests are limited per signed-in user as well as per
# address. allotd runs with a generous per-address bucket (--rate-limit
# 1000) and 1 request a second per user (--user-rate-limit 1, a burst of
# 2):
#   - admin's burst from 127.0.0.1 meets a 429 with Retry-After and a
#     {code, message, details} body naming --user-rate-limit;
#   - admin calling from another address (127.0.0.2) meets it too: the
#     bucket is the user's, not the address's;
#   - another user on 127.0.0.1 meanwhile is served (200): buckets are
#     per user, and the address's own is far from empty;
#   - token grants are not the user's (no token yet): admin signs in again;
#   - without the flag the per-user limit follows --rate-limit (here 0:
#     off), and --user-rate-limit outside 0..10000000 is refused at start.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

for n in -1 10000001 fast; do refused_start user-rate-limit --user-rate-limit "$n"; done

start --db "$T/rate.db" --rate-limit 1000 --user-rate-limit 1
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
U=$(expect 201 POST /api/v1/users '{"email":"sam@example.com"}' "$ADMIN")
SAM=$(login sam@example.com "$(printf '%s' "$U" | jq -r .tempPassword)")

# burst FROM TOKEN: 12 GETs on one connection from address FROM; prints
# the statuses, one a line; all headers in $T/head, the last body in
# $T/body
burst() {
  _from=$1 _tok=$2
  set --
  for _i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    set -- "$@" -o "$T/body" "$URL/api/v1/authorization/roles"
  done
  curl -s --interface "$_from" -H "Authorization: Bearer $_tok" -D "$T/head" \
    -w '%{http_code}\n' "$@"
}
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
burst 127.0.0.1 "$ADMIN" >"$T/codes"
grep -qx 429 "$T/codes" || fail "admin's burst met no 429: $(tr '\n' ' ' <"$T/codes")"
grep -qi '^retry-after: *[1-9]' "$T/head" || fail "a 429 without Retry-After: $(cat "$T/head")"
# the last reply's body: a 429 in the envelope
[ "$(tail -n 1 "$T/codes")" = 429 ] || fail "the burst ended with $(tail -n 1 "$T/codes")"
jq -e '.code == 429 and (.message | length > 0) and (.details | test("user-rate-limit"))' \
  "$T/body" >/dev/null || fail "429 body: $(cat "$T/body")"
record GET /api/v1/authorization/roles 429 "$(cat "$T/body")"

burst 127.0.0.2 "$ADMIN" >"$T/codes"
grep -qx 429 "$T/codes" || fail "admin from another address met no 429: $(tr '\n' ' ' <"$T/codes")"

[ "$(req GET /api/v1/authorization/roles "" "$SAM" | tail -n 1)" = 200 ] ||
  fail "another user was refused on the same address"
login admin "$ALLOT_ADMIN_PASSWORD" >/dev/null
stop

# the default follows --rate-limit: 0 turns both off
start --db "$T/rate.db" --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
burst 127.0.0.1 "$ADMIN" >"$T/codes"
[ "$(sort -u "$T/codes")" = 200 ] || fail "limited with --rate-limit 0: $(tr '\n' ' ' <"$T/codes")"
stop
echo "e2e_user_rate: ok"
