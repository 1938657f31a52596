#!/bin/sh
# e2e_lifecycle.sh: what the agent promises about stopping and starting
# pods, with allotd on loopback and two agents of 2 GPUs each running real
# processes (and a third, asked to join a pool that does not exist, which
# exits 2):
#   1. a workload that ignores SIGTERM gets SIGKILL once its
#      terminationGracePeriodSeconds has passed, and not before;
#   2. a pod placed on the GPU of a preempted one starts only after the
#      preempted process has exited (here it takes 1.5 s to let go);
#   3. a gang (a distributed training of 3 pods) starts all its pods
#      together or none: with 2 GPUs free none of them runs; once 3 are
#      free all 3 run at once, on 3 different devices; deleted, all stop.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_cluster node-1:2 node-2:2
# an agent asked to join a pool that does not exist exits 2 and says why
new_agent stray --gpus 1 --node-pool no-such-pool
until_ok 20 agent_ended stray || fail "an agent with an unknown --node-pool still runs: $(cat "$T/stray.log")"
[ "$(agent_rc stray)" = 2 ] || fail "an agent with an unknown --node-pool exited $(agent_rc stray), not 2"
grep -q "allotd refuses to register node stray: .*no-such-pool" "$T/stray.log" ||
  fail "the agent does not say why: $(cat "$T/stray.log")"
PA=$(project team-a 0)
PB=$(project team-b 2)

# stubborn.sh: notes when SIGTERM came (ms) and carries on regardless.
cat >"$T/stubborn.sh" <<'EOF'
#!/bin/sh
trap 'date +%s%3N >>"$OUT/$ALLOT_WORKLOAD_NAME.term"' TERM
echo "started $ALLOT_WORKLOAD_NAME"
while :; do sleep 0.1; done
EOF
# slow.sh: notes when it started and on which devices; on SIGTERM takes
# 1.5 s to let its GPU go, then notes when it exits.
cat >"$T/slow.sh" <<'EOF'
#!/bin/sh
W=$ALLOT_WORKLOAD_NAME.$ALLOT_POD_INDEX
echo "$(date +%s%3N) $ALLOT_NODE $CUDA_VISIBLE_DEVICES" >"$OUT/$W.start"
trap 'sleep 1.5; echo "$(date +%s%3N) $ALLOT_NODE $CUDA_VISIBLE_DEVICES" >"$OUT/$W.exit"; exit 0' TERM
while :; do sleep 0.1; done
EOF
chmod +x "$T/stubborn.sh" "$T/slow.sh"

# ---- 1. SIGKILL after the grace period ----
submit s1 "$PB" 1 "$T/stubborn.sh" "" 2 >/dev/null
wait_phase_long s1 Running
until_ok 10 has_process s1 || fail "s1 has no process"
S1=$(pids_of s1)
expect 202 POST "/api/v1/workloads/trainings/$(wl_id s1)/suspend" "" "$ADMIN" >/dev/null
until_ok 10 test -s "$OUT/s1.term" || fail "s1 did not get SIGTERM"
TERM_AT=$(head -n 1 "$OUT/s1.term")
until_ok 20 no_process s1 || fail "s1 still runs $(( $(now_ms) - TERM_AT )) ms after SIGTERM"
GONE_AT=$(now_ms)
until_ok 5 pid_gone "$S1" || fail "s1's process $S1 still runs or was never reaped"
[ $((GONE_AT - TERM_AT)) -ge 1500 ] ||
  fail "s1 was killed $((GONE_AT - TERM_AT)) ms after SIGTERM, before its grace period of 2 s"
wait_phase_long s1 Stopped
echo "# s1 ignored SIGTERM and was gone $((GONE_AT - TERM_AT)) ms later (grace 2 s)"

# ---- 2. a preempted pod lets go of its GPU before the next one starts ----
for w in a1 a2 a3 a4; do submit $w "$PA" 1 "$T/slow.sh" "" 10 >/dev/null; done
for w in a1 a2 a3 a4; do wait_phase_long $w Running; done
for w in a1 a2 a3 a4; do until_ok 10 test -s "$OUT/$w.0.start" || fail "$w did not start"; done
submit b1 "$PB" 1 "$T/slow.sh" "" 10 >/dev/null
wait_phase_long b1 Running
until_ok 20 test -s "$OUT/b1.0.start" || fail "b1 did not start"
VICTIM=""
for w in a1 a2 a3 a4; do is_phase $w Pending && VICTIM="$VICTIM$w"; done
case $VICTIM in a[1-4]) ;; *) fail "one of a1..a4 should have been reclaimed, not '$VICTIM'" ;; esac
events_of $VICTIM | grep -q "^Reclaimed: " || fail "$VICTIM has no Reclaimed event: $(events_of $VICTIM)"
until_ok 10 test -s "$OUT/$VICTIM.0.exit" || fail "$VICTIM did not exit"
read -r EXIT_AT EXIT_NODE EXIT_DEV <"$OUT/$VICTIM.0.exit"
read -r START_AT START_NODE START_DEV <"$OUT/b1.0.start"
[ "$START_NODE $START_DEV" = "$EXIT_NODE $EXIT_DEV" ] ||
  fail "b1 runs on $START_NODE device $START_DEV, not on $VICTIM's $EXIT_NODE device $EXIT_DEV"
[ "$START_AT" -ge "$EXIT_AT" ] ||
  fail "b1 started $((EXIT_AT - START_AT)) ms before $VICTIM let go of device $EXIT_DEV"
echo "# b1 started $((START_AT - EXIT_AT)) ms after $VICTIM let go of $EXIT_NODE device $EXIT_DEV"

# ---- 3. a gang through the running allotd ----
for w in a1 a2 a3 a4 b1; do expect 202 DELETE "/api/v1/workloads/$(wl_id $w)" "" "$ADMIN" >/dev/null; done
until_ok 20 no_workloads || fail "workload processes were left behind: $(workload_pids)"
submit x1 "$PB" 2 "$T/slow.sh" "" 10 >/dev/null
wait_phase_long x1 Running
expect 202 POST /api/v1/workloads/distributed "{\"name\":\"g1\",\"projectId\":\"$PB\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"command\":\"$T/slow.sh\",\"numWorkers\":2,
  \"terminationGracePeriodSeconds\":10,
  \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},{\"name\":\"TESTRUN\",\"value\":\"$T\"}],
  \"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
G1=$(wl_id g1)
[ "$(expect 200 GET "/api/v1/workloads/$G1" "" "$ADMIN" | jq -r '.requestedPods | "\(.number) \(.min)"')" = \
  "3 3" ] || fail "g1 is not a gang of 3"
# with 2 GPUs free, none of the 3 pods may start: watch 20 scheduling periods
sleep 2
is_phase g1 Pending || fail "g1 is $(phase "$ADMIN" g1) with 2 GPUs free"
no_process g1 || fail "a pod of g1 started with 2 GPUs free: $(pids_of g1)"
ls "$OUT"/g1.* >/dev/null 2>&1 && fail "a pod of g1 ran: $(ls "$OUT"/g1.*)"
[ -n "$(expect 200 GET "/api/v1/workloads/$G1" "" "$ADMIN" | jq -r .phaseMessage)" ] ||
  fail "pending g1 gives no reason"

expect 202 DELETE "/api/v1/workloads/$(wl_id x1)" "" "$ADMIN" >/dev/null
wait_phase_long g1 Running
for i in 0 1 2; do until_ok 10 test -s "$OUT/g1.$i.start" || fail "pod $i of g1 did not start"; done
[ "$(pids_of g1 | wc -l)" = 3 ] || fail "g1 runs $(pids_of g1 | wc -l) processes, not 3"
DEVICES=$(cat "$OUT"/g1.[012].start | awk '{print $2 "/" $3}' | sort -u | wc -l)
[ "$DEVICES" = 3 ] || fail "g1's pods share devices: $(cat "$OUT"/g1.*.start)"
[ "$(expect 200 GET "/api/v1/workloads/$G1" "" "$ADMIN" | jq .runningPods)" = 3 ] ||
  fail "g1 does not count 3 running pods"
expect 202 DELETE "/api/v1/workloads/$G1" "" "$ADMIN" >/dev/null
until_ok 20 no_process g1 || fail "g1's pods outlived its deletion: $(pids_of g1)"
for i in 0 1 2; do [ -s "$OUT/g1.$i.exit" ] || fail "pod $i of g1 was not stopped with SIGTERM"; done

finish
echo "ok"
