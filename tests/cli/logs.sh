#!/bin/sh
# logs.sh ALLOTD ALLOT AGENT: `allot ... logs` against a real allotd and an
# agent running real processes: what a pod wrote, exactly, with --tail and
# --pod; a workload read the moment it completed has every line; -f
# follows a workload that writes as it runs and ends when it ends, with
# every line and nothing said on stderr; while allotd already follows 4
# logs, -f prints what there is and says on stderr that it stopped
# following.
ALLOTD=$1
ALLOT=$2
AGENT=$3
. "$(dirname "$0")/../agent/lib_agent.sh"
. "$(dirname "$0")/lib.sh"

start_cluster node-1:4
P=$(project team-a 4)
admin_login

# counter.sh N PAUSE [forever]: writes "pod I line K" for K = 1..N, PAUSE s
# apart, then exits 0 (or, with forever, runs until stopped).
cat >"$T/counter.sh" <<'EOF'
#!/bin/sh
k=1
while [ $k -le "$1" ]; do echo "pod $ALLOT_POD_INDEX line $k"; k=$((k + 1)); sleep "$2"; done
[ "$3" = forever ] && while :; do sleep 0.1; done
exit 0
EOF
chmod +x "$T/counter.sh"

# ---- what a pod wrote, --tail, --pod ----
submit c1 "$P" 1 "$T/counter.sh" "5 0" >/dev/null
wait_phase_long c1 Completed
run 0 training logs c1 -p team-a
printf 'pod 0 line %s\n' 1 2 3 4 5 | diff -u - "$T/out" >&2 || fail "logs c1: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "logs c1 said: $(cat "$T/err")"
run 0 training logs c1 -p team-a --tail 2
printf 'pod 0 line %s\n' 4 5 | diff -u - "$T/out" >&2 || fail "logs --tail 2: $(cat "$T/out")"
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"c2\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"$T/counter.sh\",\"args\":\"3 0\",\"parallelism\":2,
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
wait_phase_long c2 Completed
run 0 training logs c2 -p team-a --pod 1
printf 'pod 1 line %s\n' 1 2 3 | diff -u - "$T/out" >&2 || fail "logs --pod 1: $(cat "$T/out")"

# ---- a workload that ended has every line: the agent uploads a pod's log
# (here 3.8 MB written at once, 15 uploads) before it reports the pod's
# end, so a client that reads the logs the moment it sees Completed misses
# none ----
printf '#!/bin/sh\nseq 1 540000 >"$TESTRUN/b1.out"\nexec cat "$TESTRUN/b1.out"\n' >"$T/burst.sh"
chmod +x "$T/burst.sh"
submit b1 "$P" 1 "$T/burst.sh" "" >/dev/null
B1=$(wl_id b1)
n=0
until curl -s "$URL/api/v1/workloads/$B1" -H "Authorization: Bearer $ADMIN" |
  grep -q '"phase": *"Completed"'; do
  n=$((n + 1))
  [ "$n" -lt 3000 ] || fail "b1 did not complete (is $(phase "$ADMIN" b1))"
done
curl -s "$URL/api/v1/workloads/$B1/logs" -H "Authorization: Bearer $ADMIN" >"$T/b1.log"
[ "$(wc -l <"$T/b1.log")" = 540000 ] && [ "$(tail -n 1 "$T/b1.log")" = 540000 ] ||
  fail "b1's logs read as it completed: $(wc -l <"$T/b1.log") lines, the last $(tail -n 1 "$T/b1.log")"

# ---- -f: follows until the workload ends ----
submit f1 "$P" 1 "$T/counter.sh" "6 0.3" >/dev/null
wait_phase_long f1 Running
run 0 training logs f1 -p team-a -f
is_phase f1 Completed || fail "logs -f ended while f1 is $(phase "$ADMIN" f1)"
printf 'pod 0 line %s\n' 1 2 3 4 5 6 | diff -u - "$T/out" >&2 || fail "logs -f f1: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "logs -f f1 said: $(cat "$T/err")"

# ---- -f while allotd follows 4 logs already: said, not hidden ----
submit r1 "$P" 1 "$T/counter.sh" "2 0 forever" >/dev/null
wait_phase_long r1 Running
R1=$(wl_id r1)
has_lines() { [ "$(curl -s "$URL/api/v1/workloads/$R1/logs" -H "Authorization: Bearer $ADMIN" | wc -l)" = 2 ]; }
until_ok 10 has_lines || fail "r1 did not write its 2 lines"
for i in 1 2 3 4; do
  curl -s -N "$URL/api/v1/workloads/$R1/logs?follow=true" -H "Authorization: Bearer $ADMIN" \
    >"$T/follower.$i" &
  echo $! >>"$T/followers"
done
following() { [ "$(cat "$T"/follower.* | wc -l)" = 8 ]; }
until_ok 10 following || fail "the 4 followers did not get r1's lines"
run 0 training logs r1 -p team-a -f
printf 'pod 0 line %s\n' 1 2 | diff -u - "$T/out" >&2 || fail "logs -f r1: $(cat "$T/out")"
has "$T/err" "allot: stopped following: r1 is still Running, but allotd ended the stream"
for p in $(cat "$T/followers"); do kill "$p"; wait "$p" 2>/dev/null || true; done

expect 202 DELETE "/api/v1/workloads/$R1" "" "$ADMIN" >/dev/null
until_ok 20 no_process r1 || fail "r1 still runs"
stop_agents
stop
echo "ok: cli logs"
