#!/bin/sh
# e2e_login_guard.sh: password guessing is slowed per login name and
# client address (the per-address token bucket is off here):
#   - the first wrong passwords for a name get 400; after 5 in a row the
#     name waits 1 s, then 2, 4 ... (at most 60) for that client: 429 with
#     Retry-After before any hash runs, even for the right password, on
#     the v1 and the v2 (form) grant alike;
#   - wait_is_per_name_and_client: meanwhile the right password from
#     another address (127.0.0.2) signs in: guesses from one client never
#     lock admin out for everyone;
#   - a name that does not exist is slowed the same way, and other names
#     are not slowed meanwhile;
#   - once the wait is over the right password signs in, which clears the
#     name: its next wrong password is a plain 400;
#   - --secret-checks outside 1..1024 is refused at start;
#   - secrets are hashed at the cost allotd (or --init) was given: the
#     admin that --init made at lib.sh's cost, a user made by an allotd
#     without --secret-hash-cost at the default (5), and both sign in;
#     a cost outside 1..11 is refused at start.
# Needs about 10 s: the waits are real time.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

for n in 0 1025 two; do refused_start secret-checks --secret-checks "$n"; done
for n in 0 12 five; do refused_start secret-hash-cost --secret-hash-cost "$n"; done

start --db "$T/guard.db" --rate-limit 0

grant() { printf '{"grantType":"password","username":"%s","password":"%s"}' "$1" "$2"; }
# try USER PASSWORD: prints the status and the Retry-After (0 if none)
try() {
  code=$(curl -s -D "$T/head" -o "$T/body" -w '%{http_code}' -X POST "$URL/api/v1/token" \
    -H 'Content-Type: application/json' --data-binary "$(grant "$1" "$2")")
  ra=$(grep -i '^retry-after:' "$T/head" | tr -dc '0-9')
  echo "$code ${ra:-0}"
}

# free_failures NAME: the wrong passwords a clear name gets 400 for, before any wait
free_failures() {
  i=0
  while [ $i -lt 6 ]; do
    expect 400 POST /api/v1/token "$(grant "$1" guess)" >/dev/null
    i=$((i + 1))
  done
}
# earn_wait MIN: from a clear name, admin's wrong passwords until it is made
# to wait at least MIN s (waiting out the shorter waits); WAIT_END: the time
# (now_ms) before which that wait cannot have ended, taken before the
# request that earned the 429 (Retry-After is rounded up: less one second)
earn_wait() {
  _min=$1
  free_failures admin
  n=0
  while :; do
    t0=$(now_ms)
    # shellcheck disable=SC2046
    set -- $(try admin guess)
    case $1 in
    429) [ "$2" -ge 1 ] || fail "429 without Retry-After: $(cat "$T/head")"
         jq -e '.code == 429 and (.details | test("failed sign-ins"))' "$T/body" >/dev/null ||
           fail "429 body: $(cat "$T/body")"
         if [ "$2" -ge "$_min" ]; then WAIT_END=$((t0 + ($2 - 1) * 1000)); return 0; fi
         sleep "$2" ;;
    400) ;;
    *) fail "a wrong password: $1: $(cat "$T/body")" ;;
    esac
    n=$((n + 1))
    [ $n -lt 30 ] || fail "admin was never made to wait $_min s"
  done
}
# sign_in_after_wait: the wait ends; the right password then signs in
sign_in_after_wait() {
  deadline=$(($(now_ms) + 70000 * SCALE))
  while [ "$(try admin "$ALLOT_ADMIN_PASSWORD" | cut -d' ' -f1)" != 200 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "admin never signed in after the wait"
    sleep 1
  done
}
# During the wait the right password is refused, v1 and v2 grants alike.
# Both are asked within the wait, known by the clock: a machine too slow
# to ask twice within a 4 s wait (the name may have signed in, clearing
# it) starts over with a wait twice as long, up to 32 s; a 200 or a v2
# that is not a 429 within the wait fails at once.
MIN=4
while :; do
  earn_wait "$MIN"
  v1=$(try admin "$ALLOT_ADMIN_PASSWORD" | cut -d' ' -f1)
  v2=$(curl -s -D "$T/head" -o "$T/body" -w '%{http_code}' -X POST "$URL/api/v2/token" \
    -d "grant_type=password&username=admin&password=$ALLOT_ADMIN_PASSWORD")
  other=$(curl -s --interface 127.0.0.2 -o /dev/null -w '%{http_code}' -X POST \
    "$URL/api/v1/token" -H 'Content-Type: application/json' \
    --data-binary "$(grant admin "$ALLOT_ADMIN_PASSWORD")")
  [ "$(now_ms)" -ge "$WAIT_END" ] || break
  echo "the two grants took past the ${MIN} s wait: again with a longer one"
  MIN=$((MIN * 2))
  [ $MIN -le 32 ] || fail "two grants never fit within a wait of up to 32 s"
  sign_in_after_wait
done
[ "$v1" = 429 ] || fail "the right password during the wait: $v1, wanted 429"
[ "$v2" = 429 ] || fail "v2 grant during the wait: $v2"
jq -e '.error == "temporarily_unavailable"' "$T/body" >/dev/null || fail "v2 body: $(cat "$T/body")"
grep -qi '^retry-after: [1-9]' "$T/head" || fail "v2 429 without Retry-After"
[ "$other" = 200 ] || fail "the right password from another client during the wait: $other"
t1=$(now_ms)
again=$(try admin "$ALLOT_ADMIN_PASSWORD" | cut -d' ' -f1)
[ "$again" = 429 ] || [ "$(now_ms)" -ge "$WAIT_END" ] || [ "$t1" -ge "$WAIT_END" ] ||
  fail "another client's sign-in cleared the guessing client's wait: $again"
# other names are not slowed by admin's failures
expect 400 POST /api/v1/token "$(grant nobody guess)" >/dev/null
# a name that does not exist earns the same waits
free_failures ghost
n=0
while [ "$(try ghost guess | cut -d' ' -f1)" != 429 ]; do
  n=$((n + 1))
  [ $n -lt 10 ] || fail "a name that does not exist was never made to wait"
done
# the wait ends; the right password then clears the name
sign_in_after_wait
expect 400 POST /api/v1/token "$(grant admin guess)" >/dev/null
stop

# hash_cost LOGIN: the yescrypt parameters of LOGIN's stored hash ($y$PARAMS$...)
hash_cost() {
  sqlite3 "$T/guard.db" "SELECT secret_hash FROM users WHERE login = '$1'" | cut -d'$' -f3
}
[ "$(hash_cost admin)" = j75 ] || fail "admin made by --init at cost $SECRET_HASH_COST: $(hash_cost admin)"
SECRET_HASH_COST=
start --db "$T/guard.db" --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
PW=$(expect 201 POST /api/v1/users '{"email":"dflt@example.com"}' "$ADMIN" | jq -r .tempPassword)
login dflt@example.com "$PW" >/dev/null
stop
[ "$(hash_cost dflt@example.com)" = j9T ] || fail "a user at the default cost: $(hash_cost dflt@example.com)"
echo "e2e_login_guard: ok"
