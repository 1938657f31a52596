#!/bin/sh
# fencing.sh ALLOTD: two allotd replicas on one PostgreSQL; the leader A is
# paused (SIGSTOP) until B takes the lease, B schedules, then A resumes: A
# steps down, its scheduler makes no cycle and writes no decision (its
# writes are fenced by the epoch it lost), it serves as a follower, and
# no GPU of a node is held by two pods. The replicas run with a lease of
# 2 s renewed every 0.4 s (--leader-lease-ms, --leader-renew-ms,
# --leader-ask-ms): the lease row never reaches further than 2 s ahead of
# the database's clock (the default lease, 3 s renewed every second,
# always does after a renewal).
ALLOTD=$1
ALLOT_TEST_DB=pg
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/ha_lib.sh"
COMMON="$COMMON --leader-lease-ms 2000 --leader-renew-ms 400 --leader-ask-ms 200"

replicas
project
# the lease's reach past the database's clock, in ms, sampled over 1.2 s
lease_ahead() {
  for i in 1 2 3 4 5 6 7 8; do
    pg_psql -c "SELECT expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                FROM leader_lease"
    sleep 0.15
  done | sort -n | tail -n 1
}
AHEAD=$(lease_ahead)
echo "# the lease reached at most $AHEAD ms ahead"
[ "$AHEAD" -gt 0 ] && [ "$AHEAD" -le 2000 ] || fail "the lease reached $AHEAD ms ahead, not 1-2000"
for i in 1 2 3 4; do [ "$(submit_to "$URL" a$i)" = 202 ] || fail "a$i not taken"; done
poll 20 running_at "$URL" a4 || fail "A did not place a4"
EPOCH_A=$(curl -s "$URL/healthz" | jq .epoch)
CYCLES_A=$(metric "$URL" allot_sched_cycles_total)
DECISIONS_A=$(metric "$URL" allot_sched_decisions_total)

kill -STOP "$PID"
poll 30 leads "$URL_B" || fail "B did not take over from the paused A"
EPOCH_B=$(curl -s "$URL_B/healthz" | jq .epoch)
[ "$EPOCH_B" -gt "$EPOCH_A" ] || fail "B leads at epoch $EPOCH_B, not past A's $EPOCH_A"
for i in 1 2 3 4; do [ "$(submit_to "$URL_B" b$i)" = 202 ] || fail "b$i not taken"; done
poll 20 running_at "$URL_B" b4 || fail "B did not place b4"

kill -CONT "$PID"
poll 20 follows "$URL" || fail "A did not step down: $(curl -s "$URL/healthz")"
sees_b() { [ "$(curl -s "$URL/healthz" | jq -r .leaderEpoch)" = "$EPOCH_B" ]; }
poll 20 sees_b || fail "A does not see B's epoch: $(curl -s "$URL/healthz")"
CYCLES_DOWN=$(metric "$URL" allot_sched_cycles_total)
# what A does as a follower, while B keeps scheduling
for i in 5 6; do [ "$(submit_to "$URL" a$i)" = 202 ] || fail "A no longer takes submissions"; done
poll 20 running_at "$URL_B" a6 || fail "B did not place a6, submitted through A"
sleep 1
CYCLES_AFTER=$(metric "$URL" allot_sched_cycles_total)
DECISIONS_AFTER=$(metric "$URL" allot_sched_decisions_total)
FENCED=$(metric "$URL" allot_sched_fenced_total)
echo "# A: cycles $CYCLES_A -> $CYCLES_DOWN (stepped down) -> $CYCLES_AFTER, decisions" \
  "$DECISIONS_A -> $DECISIONS_AFTER, writes refused by the fence $FENCED"
# From the pause on, A decides nothing. Between its resumption and its step
# down it may still end a cycle or two (any write of theirs is fenced): its
# cycles are counted from the step down, and one begun before it may end
# after it; a replica that went on cycling as a follower makes one a period
# for the seconds since, while B placed a5 and a6.
[ "$DECISIONS_AFTER" = "$DECISIONS_A" ] || fail "A decided after it lost the lease"
[ "$CYCLES_AFTER" -le $((CYCLES_DOWN + 1)) ] || fail "A went on cycling after it lost the lease"
grep -q "no longer leads" "$T/log" || fail "A did not say it stepped down"
leads "$URL_B" || fail "B no longer leads"
[ "$(double_booked)" = 0 ] || fail "$(double_booked) pairs of pods share a GPU"
stop_pid "$PID_B" "replica B" "$T/log-b"
PID_B=""
