#!/bin/sh
# servers.sh ALLOTD ALLOT: the client with several servers (replicas):
# login --url DEAD,LIVE reaches the live one past a port nobody listens
# on, and so do the commands after it; a server that answers 503 (a
# replica that cannot serve) is passed over the same way; the config's
# url may be a JSON array; with every server dead the message names them
# all; a malformed list is a usage error.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

start --demo --rate-limit 0

dead_url

unavailable_url
test_kill() { kill "$UNAVAIL_PID" 2>/dev/null || true; }

# past a dead server
run_in "$ALLOT_ADMIN_PASSWORD" 0 login --url "$DEAD,$URL/" --user admin --password-stdin
has "$T/out" "logged in to $DEAD,$URL"
[ "$(jq -r .url "$ALLOT_CONFIG")" = "$DEAD,$URL" ] || fail "config url: $(jq -r .url "$ALLOT_CONFIG")"
run 0 project list
has "$T/out" "Project"

# past a server that answers 503; it was asked (and the request went on)
run_in "$ALLOT_ADMIN_PASSWORD" 0 login --server "$UNAVAIL,$URL" --user admin --password-stdin
[ -s "$T/u.count" ] || fail "the 503 server was never asked"
run 0 project list
[ "$(grep -c . "$T/u.count")" -ge 2 ] || fail "the second command did not start at the first server"

# the url as a JSON array in the config
jq --arg d "$DEAD" --arg u "$URL" '.url = [$d, $u]' "$ALLOT_CONFIG" >"$T/c.new"
mv "$T/c.new" "$ALLOT_CONFIG"
chmod 600 "$ALLOT_CONFIG"
run 0 project list
has "$T/out" "Project"

# every server dead or unavailable
run_in x 1 login --url "$DEAD,$DEAD" --user admin --password-stdin
has "$T/err" "allot: cannot connect to $DEAD,$DEAD"
run_in x 1 login --url "$UNAVAIL" --user admin --password-stdin
has "$T/err" "503"

# malformed lists
run_in x 2 login --url "$URL,,$URL" --user admin --password-stdin
has "$T/err" "--url names an empty server"
run_in x 2 login --url "$URL,ftp://x" --user admin --password-stdin
has "$T/err" "--url must start with http:// or https://: 'ftp://x'"
