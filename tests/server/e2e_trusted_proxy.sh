#!/bin/sh
# e2e_trusted_proxy.sh: a proxy's client-address header counts only from a
# peer in --trusted-proxy. What allotd takes as the client's address shows
# in the address a node registers from (an agent that names none), and
# keys the per-address rate limit:
#   - without --trusted-proxy, X-Forwarded-For is ignored, from any peer;
#   - with --trusted-proxy 127.0.0.2: a spoofed header from 127.0.0.1 (not
#     trusted) changes nothing; from 127.0.0.2 the header names the client;
#     of "spoof, client, 127.0.0.2" the right-most untrusted hop (client)
#     counts, and a second header line is read after the first;
#   - --client-address-header Forwarded reads RFC 7239 for= values
#     (quoted, [IPv6]:port) and ignores X-Forwarded-For;
#   - the rate limit keys on that address: behind the trusted proxy, one
#     client draining its bucket leaves another's full;
#   - a bad range or header name is refused at start.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

refused_start "" --trusted-proxy 10.0.0.0/33
refused_start "" --trusted-proxy nowhere
refused_start "" --client-address-header X:Y

# register FROM NODE HEADER...: node NODE's agent registers from address
# FROM with the given extra headers; prints the address the node got
register() {
  _from=$1 _node=$2
  shift 2
  _tok=$(expect 201 POST /api/v1/agent/tokens "{\"name\":\"$_node\"}" "$ADMIN" | jq -r .token)
  set -- "$@" -H "Authorization: Bearer $_tok" -H 'Content-Type: application/json'
  _code=$(curl -s --interface "$_from" -o "$T/reg" -w '%{http_code}' -X POST \
    "$URL/api/v1/agent/register" "$@" -d "{\"name\":\"$_node\",\"gpus\":[]}")
  [ "$_code" = 200 ] || fail "$_node registered: $_code $(cat "$T/reg")"
  expect 200 GET /api/v1/nodes "" "$ADMIN" | jq -r ".nodes[] | select(.name == \"$_node\") | .address"
}
is() { [ "$1" = "$2" ] || fail "$3: address '$1', wanted '$2'"; }

start --db "$T/p.db" --simulate-nodes 0 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
is "$(register 127.0.0.2 n0 -H 'X-Forwarded-For: 10.0.0.7')" 127.0.0.2 "no proxy trusted"
stop

start --db "$T/p.db" --simulate-nodes 0 --rate-limit 0 --trusted-proxy 127.0.0.2,192.0.2.0/24
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
is "$(register 127.0.0.1 n1 -H 'X-Forwarded-For: 10.0.0.7')" 127.0.0.1 "a spoof from an untrusted peer"
is "$(register 127.0.0.2 n2 -H 'X-Forwarded-For: 10.0.0.7')" 10.0.0.7 "from the trusted proxy"
is "$(register 127.0.0.2 n3 -H 'X-Forwarded-For: 10.0.0.66, 10.0.0.8, 192.0.2.9')" 10.0.0.8 \
  "the right-most untrusted hop"
is "$(register 127.0.0.2 n4 -H 'X-Forwarded-For: 10.0.0.66' -H 'X-Forwarded-For: 10.0.0.9')" \
  10.0.0.9 "two header lines"
is "$(register 127.0.0.2 n5 -H 'X-Forwarded-For: 10.0.0.66, not-an-address, 192.0.2.9')" \
  192.0.2.9 "a hop that is no address ends the walk"
stop

start --db "$T/p.db" --simulate-nodes 0 --rate-limit 0 --trusted-proxy 127.0.0.2 \
  --client-address-header Forwarded
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
is "$(register 127.0.0.2 n6 -H 'Forwarded: for=10.0.0.66;proto=http, for="[2001:db8::1]:4711"')" \
  2001:db8::1 "Forwarded"
is "$(register 127.0.0.2 n7 -H 'X-Forwarded-For: 10.0.0.7')" 127.0.0.2 \
  "X-Forwarded-For when Forwarded is the header"
stop

# the rate limit (1 a second, bursts of 2) keys on the client behind the proxy
start --db "$T/p.db" --simulate-nodes 0 --rate-limit 1 --trusted-proxy 127.0.0.2
codes() { # XFF: 6 token-less GETs from the proxy for client XFF; the statuses
  _xff=$1
  set --
  for _i in 1 2 3 4 5 6; do set -- "$@" -o /dev/null "$URL/api/v1/nodes"; done
  curl -s --interface 127.0.0.2 -H "X-Forwarded-For: $_xff" -w '%{http_code}\n' "$@"
}
codes 10.0.0.1 >"$T/codes"
grep -qx 429 "$T/codes" || fail "10.0.0.1 met no 429: $(tr '\n' ' ' <"$T/codes")"
codes 10.0.0.2 | head -n 1 >"$T/codes"
[ "$(cat "$T/codes")" = 401 ] || fail "10.0.0.2's first request: $(cat "$T/codes"), wanted 401"
stop
echo "e2e_trusted_proxy: ok"
