#!/bin/sh
# e2e_crash.sh: submissions acknowledged with 202 survive kill -9: four
# clients submit in parallel, allotd is killed mid-burst (once the clients
# hold at least KILL_AFTER acknowledgements between them: awaited, not
# guessed with a fixed sleep, so a starved machine only makes it slower),
# restarted on the same database, and every acknowledged id must be there;
# scheduling resumes from the database alone (one 1-GPU node: exactly one
# runs).
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --db "$T/crash.db" --simulate-nodes 1x1 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
PID_FIRST=$PID
P=$(expect 201 POST /api/v1/org-unit/projects '{"name":"p","resources":[{"nodePool":{"name":"default"},
  "gpu":{"deserved":1}}]}' "$ADMIN" | jq -r .id)

client() { # N: submits until the server dies, logging acknowledged ids
  i=0
  while :; do
    i=$((i + 1))
    out=$(curl -s -X POST "$URL/api/v1/workloads/trainings" -H "Authorization: Bearer $ADMIN" \
      -H 'Content-Type: application/json' -w '\n%{http_code}' \
      -d "{\"name\":\"c$1-$i\",\"projectId\":\"$P\",\"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}") || break
    [ "$(printf '%s\n' "$out" | tail -n 1)" = 202 ] || break
    printf '%s\n' "$out" | sed '$d' | jq -r .workloadId >>"$T/acked.$1"
  done
}
KILL_AFTER=40
acked() { [ "$(cat "$T"/acked.* 2>/dev/null | wc -l)" -ge "$1" ]; }
for c in 1 2 3 4; do client $c & done
poll 60 acked $KILL_AFTER || { kill -9 "$PID_FIRST"; wait; fail "fewer than $KILL_AFTER submissions \
were acknowledged within $((60 * SCALE)) s"; }
kill -9 "$PID_FIRST"
wait "$PID_FIRST" 2>/dev/null || true
wait
PID=""
cat "$T"/acked.* >"$T/acked"
N=$(wc -l <"$T/acked")
[ "$N" -ge $KILL_AFTER ] || fail "only $N acknowledged before the kill"

start --db "$T/crash.db" --simulate-nodes 1x1 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
while read -r id; do
  expect 200 GET "/api/v1/workloads/$id" "" "$ADMIN" >/dev/null
done <"$T/acked"
running() { [ "$(expect 200 GET "/api/v1/workloads/count?filterBy=phase==Running" "" "$ADMIN" |
  jq .count)" = "$1" ]; }
poll 20 running 1 || fail "after restart $(expect 200 GET "/api/v1/workloads/count?filterBy=phase==Running" \
  "" "$ADMIN" | jq .count) workloads run on one GPU"
stop
echo "e2e_crash: ok ($N acknowledged submissions survived kill -9)"
