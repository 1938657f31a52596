#!/bin/sh
# failover.sh ALLOTD: two allotd replicas on one PostgreSQL; 16 clients
# submit through them (to A first, to B when A does not answer); the
# leader A is killed with SIGKILL in the middle of the burst. Then: every
# submission answered 202 is in the database; B leads and places a
# workload submitted after the kill within 5 s of it (the figure is
# printed); no GPU of a node is held by two pods.
ALLOTD=$1
ALLOT_TEST_DB=pg
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/ha_lib.sh"

CLIENTS=16
EACH=6 # 96 one-GPU workloads: all fit on the 128 GPUs

replicas
project

# client N: EACH submissions, each to A, else to B; the acknowledged
# names in $T/acked.N
client() {
  i=0
  while [ $i -lt $EACH ]; do
    name=c$1-$i
    s=$(submit_to "$URL" "$name")
    case $s in 202) ;; *) s=$(submit_to "$URL_B" "$name") ;; esac
    [ "$s" != 202 ] || echo "$name" >>"$T/acked.$1"
    i=$((i + 1))
  done
}
n=0 CLIENT_PIDS=""
while [ $n -lt $CLIENTS ]; do
  client $n &
  CLIENT_PIDS="$CLIENT_PIDS $!"
  n=$((n + 1))
done
poll 60 sh -c "[ \$(cat $T/acked.* 2>/dev/null | wc -l) -ge $((CLIENTS * EACH / 3)) ]" ||
  fail "the burst did not start"
kill -9 "$PID"
KILLED=$(now_ms)
wait_pid_gone() { exited "$PID"; }
poll 10 wait_pid_gone || fail "replica A did not die"
wait "$PID" 2>/dev/null || true
PID=""
[ "$(submit_to "$URL_B" probe)" = 202 ] || fail "B did not take the probe"
poll 30 running_at "$URL_B" probe || fail "B never placed the probe: $(tail -n 5 "$T/log-b")"
TOOK=$(($(now_ms) - KILLED))
echo "# kill to the new leader's first placement: $TOOK ms"
[ "$TOOK" -le $((5000 * SCALE)) ] || fail "scheduling resumed $TOOK ms after the kill (> 5 s)"
leads "$URL_B" || fail "B does not lead"
for p in $CLIENT_PIDS; do wait "$p"; done

URL=$URL_B
ACKED=$(cat "$T"/acked.* | wc -l)
echo "# $ACKED of $((CLIENTS * EACH)) submissions acknowledged"
cat "$T"/acked.* | sort >"$T/acked"
expect 200 GET "/api/v1/workloads?limit=500" "" "$ADMIN" | jq -r '.workloads[].name' | sort >"$T/stored"
MISSING=$(comm -23 "$T/acked" "$T/stored")
[ -z "$MISSING" ] || fail "acknowledged but not stored: $MISSING"
[ "$(double_booked)" = 0 ] || fail "$(double_booked) pairs of pods share a GPU"
poll 30 sh -c "[ \"\$(curl -s '$URL_B/api/v1/workloads?filterBy=phase==Pending' \
  -H 'Authorization: Bearer $ADMIN' | jq '.workloads | length')\" = 0 ]" ||
  fail "B left workloads Pending"
[ "$(double_booked)" = 0 ] || fail "$(double_booked) pairs of pods share a GPU"
stop_pid "$PID_B" "replica B" "$T/log-b"
PID_B=""
