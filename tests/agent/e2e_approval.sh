#!/bin/sh
# e2e_approval.sh: an agent node's pool and GPU count are an admin's, not
# its agent's. Registrations go straight to the API with agent tokens (as
# allot-agent sends them); the admin's side through allot.
#   - the first registration sets them (2 GPUs in default);
#   - a registration asking for 8 GPUs in pool other changes nothing (the
#     node keeps default and 2; pendingApproval; requested shows 8/other);
#   - allot agent approve takes what it asked for; allot agent set sets
#     4 GPUs, and the next registration asking for 8 does not undo it;
#   - a token made with --node-pool and --gpus puts its node there with
#     that many GPUs at most from its first registration;
#   - only a System administrator may approve or set (403), an unknown
#     node is a 404, and allot says so with a non-zero exit;
#   - revoked_node_needs_new_approval: once node-a's token is revoked, an
#     unused token made without a node name registers as node-a with no
#     GPUs (pending) until an admin approves again: it does not take the
#     revoked node's pool and GPUs.
ALLOTD=$1
ALLOT=$3
. "$(dirname "$0")/lib_agent.sh"
export ALLOT_CONFIG="$T/cli.json"

start
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
expect 201 POST /api/v1/node-pools '{"name":"other","labelKey":"k","labelValue":"other"}' "$ADMIN" \
  >/dev/null
printf '%s\n' "$ALLOT_ADMIN_PASSWORD" | "$ALLOT" login --url "$URL" --user admin --password-stdin \
  >/dev/null || fail "allot login"

devices() { # N: a gpus array of N devices
  i=0 sep="" out=""
  while [ $i -lt "$1" ]; do out="$out$sep{\"index\":$i}"; sep=,; i=$((i + 1)); done
  printf '[%s]' "$out"
}
# register NODE POOL GPUS: as the node's agent; prints the answer
register() {
  curl -s -X POST "$URL/api/v1/agent/register" -H "Authorization: Bearer $(cat "$T/$1.token")" \
    -H 'Content-Type: application/json' \
    -d "{\"name\":\"$1\",\"nodePool\":\"$2\",\"heartbeatMs\":$HB,\"gpus\":$(devices "$3")}"
}
# has NODE POOL GPUS: what the scheduler's node list shows
has() {
  got=$(expect 200 GET /api/v1/nodes "" "$ADMIN" |
    jq -r ".nodes[] | select(.name == \"$1\") | \"\(.nodePool) \(.gpuInfo.gpuCount)\"")
  [ "$got" = "$2 $3" ] || fail "$1 is '$got', not '$2 $3'"
}
answer_is() { # ANSWER POOL GPUS PENDING
  [ "$(printf '%s' "$1" | jq -r '"\(.nodePool) \(.gpuCount) \(.pendingApproval)"')" = "$2 $3 $4" ] ||
    fail "registration answered $1, not $2 $3 pending $4"
}

agent_token node-a
answer_is "$(register node-a default 2)" default 2 false
has node-a default 2
answer_is "$(register node-a other 8)" default 2 true
has node-a default 2
expect 200 GET /api/v1/agent/nodes "" "$ADMIN" | jq -e '.nodes[] | select(.name == "node-a") |
  .pendingApproval and .requested.nodePool == "other" and .requested.gpus == 8 and
  .approved.nodePool == "default" and .approved.gpus == 2' >/dev/null || fail "node-a's figures"

# only a System administrator decides
PW=$(expect 201 POST /api/v1/users '{"email":"res@example.com"}' "$ADMIN" | jq -r .tempPassword)
RES=$(login res@example.com "$PW")
expect 403 POST /api/v1/agent/nodes/node-a/approve "" "$RES" >/dev/null
expect 403 PATCH /api/v1/agent/nodes/node-a '{"gpus":8}' "$RES" >/dev/null
has node-a default 2

"$ALLOT" agent approve node-a >"$T/out.txt" 2>&1 || fail "allot agent approve: $(cat "$T/out.txt")"
grep -q "node node-a: pool other, 8 GPUs at most" "$T/out.txt" || fail "approve said $(cat "$T/out.txt")"
has node-a other 8
"$ALLOT" agent set node-a --gpus 4 >"$T/out.txt" 2>&1 || fail "allot agent set: $(cat "$T/out.txt")"
has node-a other 4
answer_is "$(register node-a other 8)" other 4 true
has node-a other 4
expect 400 PATCH /api/v1/agent/nodes/node-a '{"nodePool":"nowhere"}' "$ADMIN" >/dev/null
expect 400 PATCH /api/v1/agent/nodes/node-a '{"gpus":65}' "$ADMIN" >/dev/null
if "$ALLOT" agent set node-zz --gpus 1 >"$T/out.txt" 2>&1; then fail "set on an unknown node"; fi
grep -q "no node node-zz" "$T/out.txt" || fail "unknown node: $(cat "$T/out.txt")"

# figures set on the token, from the first registration
"$ALLOT" agent token create node-b --node node-b --node-pool other --gpus 1 >"$T/node-b.token" ||
  fail "allot agent token create --node-pool --gpus"
chmod 600 "$T/node-b.token"
answer_is "$(register node-b default 2)" other 1 true
has node-b other 1
expect 200 GET /api/v1/agent/tokens "" "$ADMIN" | jq -e '.tokens[] | select(.name == "node-b") |
  .nodePool == "other" and .gpus == 1' >/dev/null || fail "the token does not show its figures"

# revoked_node_needs_new_approval (db/agent.c, invariant 6)
TID=$(expect 200 GET /api/v1/agent/tokens "" "$ADMIN" |
  jq -r '.tokens[] | select(.name == "node-a") | .id')
expect 200 DELETE "/api/v1/agent/tokens/$TID" "" "$ADMIN" >/dev/null
agent_token stray
cp "$T/stray.token" "$T/node-a.token"
answer_is "$(register node-a other 4)" other 0 true
has node-a other 0
"$ALLOT" agent approve node-a >"$T/out.txt" 2>&1 || fail "approve after takeover: $(cat "$T/out.txt")"
has node-a other 4
echo "e2e_approval: ok"
