#!/bin/sh
# auth.sh ALLOTD ALLOT: the client's login against a real allotd: the
# config file and its mode; a wrong password; a server that refuses
# connections, and one that accepts them but never answers (stopped
# with SIGSTOP), each failing within its timeout with a message; an
# https:// URL through libcurl (opened only then); tokens
# refreshed when they expire and when the server refuses them; a lost
# session; a service account; logout; a broken or open config file.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

start --demo --rate-limit 0

# elapsed COMMAND...: runs it, sets $rc and $took (whole seconds).
elapsed() {
  t0=$(date +%s)
  rc=0
  "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
  took=$(($(date +%s) - t0))
}

# ---- failures ----
run_in wrong 1 login --url "$URL" --user admin --password-stdin
has "$T/err" "allot: login failed: invalid username or password"
[ ! -e "$ALLOT_CONFIG" ] || [ "$(jq -r '.accessToken // "none"' "$ALLOT_CONFIG")" = none ] ||
  fail "a failed login kept a token"
run_in x 1 login --url "$URL" --user nobody --password-stdin
has "$T/err" "invalid username or password"

# a port nobody listens on: refused at once
dead_url
elapsed sh -c "printf 'x\n' | \"$ALLOT\" login --url $DEAD --user admin --password-stdin"
[ "$rc" = 1 ] || fail "login to a closed port: exit $rc"
has "$T/err" "allot: cannot connect to $DEAD"
has "$T/err" "is allotd running there?"
# the connect's own failure, not the EINPROGRESS of a non-blocking connect()
has "$T/err" "Connection refused"
! grep -q "Operation now in progress" "$T/err" || fail "a refused connection: $(cat "$T/err")"
# (refused at once; the bound leaves room for a loaded machine's process
# start and stays well under the 10 s of ALLOT_TIMEOUT set by lib.sh)
[ "$took" -le $((6 * SCALE)) ] || fail "a refused connection took ${took}s"

# an https:// server goes through libcurl, opened only then: TLS to a
# plain HTTP port fails in the handshake, with libcurl's reason
TLS="https://127.0.0.1:${URL##*:}"
elapsed sh -c "printf 'x\n' | \"$ALLOT\" login --url $TLS --user admin --password-stdin"
[ "$rc" = 1 ] || fail "login over TLS to a plain port: exit $rc"
has "$T/err" "allot: cannot talk to $TLS: "
grep -qi 'ssl\|tls\|handshake' "$T/err" || fail "no TLS reason from libcurl: $(cat "$T/err")"
# with a proxy in the environment, libcurl takes http:// too (and says
# why it cannot reach the proxy: nothing listens on DEAD)
elapsed sh -c "printf 'x\n' | http_proxy=$DEAD \"$ALLOT\" login --url $URL --user admin --password-stdin"
[ "$rc" = 1 ] || fail "login through a dead proxy: exit $rc"
has "$T/err" "allot: cannot connect to $URL"
# an http:// server needs no libcurl: the client does not link it (loading
# it and what it links costs more than the rest of a command)
if command -v readelf >/dev/null; then
  readelf -d "$ALLOT" | grep -q 'NEEDED.*libcurl' && fail "allot links libcurl"
fi

# ---- a good login ----
run_in "$ALLOT_ADMIN_PASSWORD" 0 login --url "$URL/" --user admin --password-stdin
has "$T/out" "logged in to $URL as admin"
[ "$(stat -c %a "$ALLOT_CONFIG")" = 600 ] || fail "config mode $(stat -c %a "$ALLOT_CONFIG")"
[ "$(jq -r '[.url, .user, (.accessToken | length > 20), (.expiresAt > now)] | join(" ")' \
     "$ALLOT_CONFIG")" = "$URL admin true true" ] || fail "config: $(cat "$ALLOT_CONFIG")"
grep -q "$ALLOT_ADMIN_PASSWORD" "$ALLOT_CONFIG" && fail "the password is in the config"
run 0 whoami
has "$T/out" "User:      admin"
has "$T/out" "Server:    $URL"
has "$T/out" "System administrator on system"

# ---- a server that accepts connections and never answers ----
kill -STOP "$PID"
# the stop reaches each thread when it next leaves the kernel: a thread
# busy at the kill could still answer, so wait until every one is stopped
_i=0
while [ $_i -lt 200 ] && for _t in /proc/"$PID"/task/*/stat; do sed 's/.*) //' "$_t" |
    cut -d' ' -f1; done | grep -qv '^[Tt]$'; do
  sleep 0.01
  _i=$((_i + 1))
done
export ALLOT_TIMEOUT=1
elapsed "$ALLOT" whoami
# its threads' states (T: stopped), for the message should it have answered
_states=$(for _t in /proc/"$PID"/task/*/stat; do sed 's/.*) //' "$_t" | cut -d' ' -f1; done |
  sort | uniq -c | tr -s ' \n' ' ')
kill -CONT "$PID"
export ALLOT_TIMEOUT=10
[ "$rc" = 1 ] || fail "a stopped server: exit $rc after ${took}s (threads:$_states): $(cat "$T/out")"
has "$T/err" "did not answer within 1.0 s"
[ "$took" -le $((4 * SCALE)) ] || fail "a stopped server held the client ${took}s"
run 0 whoami

# ---- tokens: refreshed when they expire, and when refused ----
old=$(token)
jq '.expiresAt = 1' "$ALLOT_CONFIG" >"$T/c" && cat "$T/c" >"$ALLOT_CONFIG"
run 0 project list
[ "$(token)" != "$old" ] || fail "an expired token was not refreshed"
[ "$(jq '.expiresAt > now' "$ALLOT_CONFIG")" = true ] || fail "expiresAt not renewed"
[ "$(stat -c %a "$ALLOT_CONFIG")" = 600 ] || fail "config mode after refresh"
old=$(token)
jq '.accessToken = "not.a.token"' "$ALLOT_CONFIG" >"$T/c" && cat "$T/c" >"$ALLOT_CONFIG"
run 0 node list
[ "$(token)" != "not.a.token" ] || fail "a refused token was not refreshed"
jq '.accessToken = "not.a.token" | .refreshToken = "nor.this.one"' "$ALLOT_CONFIG" >"$T/c" &&
  cat "$T/c" >"$ALLOT_CONFIG"
run 1 workload list -A
has "$T/err" "your session has expired: run allot login --url $URL --user admin"

# ---- a service account ----
run_in "$ALLOT_ADMIN_PASSWORD" 0 login --user admin --password-stdin
SA=$(expect 201 POST /api/v1/service-accounts '{"name":"ci-bot"}' "$(token)")
CID=$(printf '%s' "$SA" | jq -r .clientId)
SECRET=$(printf '%s' "$SA" | jq -r .clientSecret)
run_in "$SECRET" 0 login --client-id "$CID" --client-secret-stdin
has "$T/out" "as $CID"
run 0 whoami
has "$T/out" "Roles:     none"
[ "$(jq -r .serviceAccount "$ALLOT_CONFIG")" = true ] || fail "serviceAccount not kept"
jq '.accessToken = "not.a.token" | .refreshToken = "nor.this.one"' "$ALLOT_CONFIG" >"$T/c" &&
  cat "$T/c" >"$ALLOT_CONFIG"
run 1 whoami
has "$T/err" "your session has expired: run allot login --url $URL --client-id $CID"
run_in wrong 1 login --client-id "$CID" --client-secret-stdin
has "$T/err" "login failed: invalid client id or secret"

# ---- logout ----
run_in "$ALLOT_ADMIN_PASSWORD" 0 login --user admin --password-stdin
jq '.project = "team-x"' "$ALLOT_CONFIG" >"$T/c" && cat "$T/c" >"$ALLOT_CONFIG"
run 0 logout
has "$T/out" "logged out of $URL"
[ "$(jq -r '[.url, .accessToken, .refreshToken, .project] | join(",")' "$ALLOT_CONFIG")" = \
  "$URL,,,team-x" ] || fail "logout left: $(cat "$ALLOT_CONFIG")"
run 1 whoami
has "$T/err" "not logged in: run allot login --url $URL"
run 0 logout
has "$T/out" "not logged in"

# ---- the default path, a broken file, an open file ----
mkdir "$T/home"
rc=0
printf '%s\n' "$ALLOT_ADMIN_PASSWORD" | env -u ALLOT_CONFIG HOME="$T/home" \
  "$ALLOT" login --url "$URL" --user admin --password-stdin >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || fail "login with HOME: $(cat "$T/err")"
[ "$(stat -c %a "$T/home/.allot")" = 700 ] || fail "~/.allot mode $(stat -c %a "$T/home/.allot")"
[ "$(stat -c %a "$T/home/.allot/config.json")" = 600 ] || fail "~/.allot/config.json mode"
chmod 644 "$T/home/.allot/config.json"
rc=0
env -u ALLOT_CONFIG HOME="$T/home" "$ALLOT" whoami </dev/null >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || fail "whoami with an open config: exit $rc"
has "$T/err" "may be read by others (it holds your tokens): run chmod 600"
printf '{"url": ' >"$ALLOT_CONFIG"
run 1 whoami
has "$T/err" "fix or remove it, then run allot login"
printf '{"url": 7}' >"$ALLOT_CONFIG"
run 1 whoami
has "$T/err" "not an allot configuration"

stop
echo "ok: cli auth"
