#!/bin/sh
# e2e_conns.sh: clients that hold connections without finishing a request
# do not keep others from being answered. A real allotd with its default
# options; connflood attacks from 127.0.0.2 (reopening every connection the
# server closes) while probing GET /healthz from 127.0.0.1, and fails if a
# probe is not answered 200 within 10 s:
#   - 16 and 40 silent connections (each closed within the 2 s request
#     timeout: some are closed during a 6 s attack);
#   - 40 slowloris connections (a request head trickled a byte at a time);
#   - 2,000 kept-alive connections sitting idle after one request (a
#     probe waits 1-4 s behind their reconnections in the accept queue);
#   - 40 slow bodies (a POST head, then a byte every 500 ms);
# then a request head past 16 KiB (a huge header, a huge query string) is
# a 400 in the error envelope and the server keeps answering; and, on a
# server with a 400 ms request timeout, a body trickled for longer than
# 5 timeouts is a 408.
ALLOTD=$1
FLOOD=$2
. "$(dirname "$0")/lib.sh"

start --demo
PORT=$(cat "$T/port")

# flood MODE N SECONDS: runs connflood, prints its report, fails on a missed probe
# (each probe has 10 s, scaled in sanitizer builds). A probe waits behind
# the attack's connections in the accept queue, each served in turn: on a
# machine starved of CPU that alone can take past 10 s. A server that
# keeps workers for idle connections instead of letting them go needs
# 2,000 / 128 workers x the 2 s keep-alive timeout (20 s measured with no
# load, more with it) whatever the machine's speed, and misses every
# probe: so an attack whose probe missed is run again, three times in all,
# and the test fails when each missed.
flood() {
  _try=1
  while ! line=$("$FLOOD" "$PORT" "$1" "$2" "$3" $((10000 * SCALE))); do
    kill -0 "$PID" 2>/dev/null || fail "allotd died under $1 x$2"
    [ $_try -lt 3 ] || fail "$1 x$2: a probe was not answered in 3 attacks: $line"
    echo "$1 x$2: a probe was not answered, attack $_try of 3: $line" >&2
    _try=$((_try + 1))
  done
  echo "$line"
  kill -0 "$PID" 2>/dev/null || fail "allotd died under $1 x$2"
}
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

out=$(flood silent 16 6)
[ "$(field "$out" closed)" -gt 0 ] || fail "silent connections were not closed within 6 s: $out"
flood silent 40 3
flood slowloris 40 3
flood keepalive 2000 3
flood slowbody 40 3
# the connections let go for others are counted (allotd's accept() is the one civetweb calls)
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
M=$(expect 200 GET /metrics "" "$ADMIN")
N=$(printf '%s\n' "$M" | sed -n 's/^allot_http_connections_closed_idle_total //p')
[ "${N:-0}" -gt 0 ] || fail "no idle connection was closed for others: $(printf '%s\n' "$M" | grep connections)"

# a request head past 16 KiB: 400, in the envelope, and the server answers on
big=$(head -c 20000 /dev/zero | tr '\0' 'a')
out=$(curl -s -H "X-Big: $big" "$URL/healthz" -w '\n%{http_code}')
[ "$(printf '%s\n' "$out" | tail -n 1)" = 400 ] || fail "huge header: $(printf '%s' "$out" | tail -c 200)"
printf '%s\n' "$out" | sed '$d' | jq -r .details | grep -q 'longer than 16384 bytes' \
  || fail "huge header: no envelope: $out"
out=$(curl -s "$URL/api/v1/workloads?filterBy=$big" -w '\n%{http_code}')
[ "$(printf '%s\n' "$out" | tail -n 1)" = 400 ] || fail "huge query: $(printf '%s' "$out" | tail -c 200)"
expect 200 GET /healthz >/dev/null
stop

# a body that takes longer than 5 request timeouts: 408
start --demo --request-timeout-ms 400
head -c 1000 /dev/zero | tr '\0' 'a' >"$T/body"
out=$(curl -s --limit-rate 100 -X POST "$URL/api/v1/token" -H 'Content-Type: application/json' \
  --data-binary "@$T/body" -w '\n%{http_code}') || true
[ "$(printf '%s\n' "$out" | tail -n 1)" = 408 ] || fail "slow body: $(printf '%s' "$out" | tail -c 200)"
expect 200 GET /healthz >/dev/null
stop
echo "e2e_conns: ok"
