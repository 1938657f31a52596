#!/bin/sh
# e2e_servers.sh ALLOTD AGENT: allot-agent with several servers
# (replicas): --server DEAD,UNAVAILABLE,LIVE gets past a port nobody
# listens on and a server that answers 503 to the live allotd, registers
# and heartbeats there (its node Ready), and keeps to it: the 503 server
# is not asked again. A malformed list is refused
# at start.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start --rate-limit 0 $START_OPTS
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")

dead_url

unavailable_url
test_kill() { # lib_agent.sh's, and the 503 server
  kill "$UNAVAIL_PID" 2>/dev/null || true
  for p in $(test_pids); do kill -9 "$p" 2>/dev/null || true; done
}

agent_token node-1
agent node-1 --gpus 1 --server "$DEAD,$UNAVAIL/,$URL"
until_ok 20 is_status node-1 Ready || fail "node-1 is not Ready: $(tail -n 5 "$T/node-1.log")"
[ -s "$T/u.count" ] || fail "the 503 server was never asked"
ASKED=$(grep -c . "$T/u.count")
sleep 1 # five heartbeats more
until_ok 20 is_status node-1 Ready || fail "node-1 is no longer Ready"
[ "$(grep -c . "$T/u.count")" = "$ASKED" ] || fail "the agent went back to the 503 server"
stop_agent node-1

# a malformed list: refused at start, with the reason
rc=0
"$AGENT" --server "$URL,ftp://x" --token-file "$T/node-1.token" >"$T/bad.out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a malformed --server list was taken"
grep -q -- "--server must start with http:// or https://: 'ftp://x'" "$T/bad.out" ||
  fail "no reason for the malformed list: $(cat "$T/bad.out")"
