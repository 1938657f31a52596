#!/bin/sh
# e2e_restarts.sh: restartPolicy and backoffLimit on allotd and two real
# agents on loopback (docs/agent.md, "Restarts"):
#   1. a training that always fails runs 1 + backoffLimit times, each
#      restart an event, then Fails naming the limit;
#   2. with no backoffLimit (the document's default, 6), a training that
#      fails once is restarted and Completes;
#   3. a gang (a distributed workload) whose worker fails restarts every
#      pod together;
#   4. an inference replica that crashes is restarted alone while the
#      workload stays Running on the other.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_cluster node-1:1 node-2:1
P=$(project team-r 2)

# run KIND NAME EXTRA-SPEC: a CPU-only workload running $T/pod.sh
run() {
  expect 202 POST "/api/v1/workloads/$1" "{\"name\":\"$2\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$T/pod.sh\",
    \"terminationGracePeriodSeconds\":2,\"compute\":{\"gpuDevicesRequest\":0}$3,
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"}]}}" "$ADMIN" >/dev/null
}
# pod.sh: notes each start; what it does then is the workload's name's rule
cat >"$T/pod.sh" <<'SH'
#!/bin/sh
me="$OUT/$ALLOT_WORKLOAD_NAME.$ALLOT_POD_INDEX"
echo start >>"$me.starts"
case $ALLOT_WORKLOAD_NAME in
always) exit 3 ;;
once) [ -e "$me.failed" ] && exit 0; : >"$me.failed"; exit 4 ;;
gang)
  if [ "$ALLOT_POD_INDEX" = 1 ] && [ ! -e "$me.failed" ]; then sleep 0.5; : >"$me.failed"; exit 5; fi
  while [ ! -e "$OUT/gang.release" ]; do sleep 0.1; done; exit 0 ;;
infer)
  if [ "$ALLOT_POD_INDEX" = 1 ] && [ ! -e "$me.failed" ]; then sleep 1; : >"$me.failed"; exit 6; fi
  while :; do sleep 0.1; done ;;
esac
SH
chmod +x "$T/pod.sh"
starts() { cat "$OUT/$1.starts" 2>/dev/null | wc -l; }
restart_events() { events_of "$1" | grep -c '^Restarting: '; }
started() { [ "$(starts "$1")" = "$2" ]; }

# 1. always fails, backoffLimit 2: three runs, two restart events, Failed
run trainings always ',"backoffLimit":2'
wait_phase_long always Failed
[ "$(starts always.0)" = 3 ] || fail "always ran $(starts always.0) times, want 3"
[ "$(restart_events always)" = 2 ] || fail "always: $(events_of always)"
events_of always | grep -q '^Restarting: pod 0 of always exited with code 3 on node-.*: restarting the pod (restart 2 of 2)$' ||
  fail "always's second restart event: $(events_of always)"
events_of always | grep -q '^Failed: pod 0 of always exited with code 3 on .*; backoffLimit 2 reached$' ||
  fail "always's failure does not name the limit: $(events_of always)"

# 2. no backoffLimit: the default retries; one failure, then Completed
run trainings once ''
wait_phase_long once Completed
[ "$(starts once.0)" = 2 ] || fail "once ran $(starts once.0) times, want 2"
events_of once | grep -q '^Restarting: .*(restart 1 of 6)$' || fail "once: $(events_of once)"

# 3. a gang: the worker fails once, both pods start again
run distributed gang ',"numWorkers":1,"distributedFramework":"PyTorch"'
until_ok 30 started gang.1 2 || fail "the worker started $(starts gang.1) times"
until_ok 10 started gang.0 2 || fail "the master started $(starts gang.0) times: not with its gang"
events_of gang | grep -q '^Restarting: pod 1 of gang exited with code 5 .*: restarting every pod of the gang (restart 1 of 6)$' ||
  fail "gang: $(events_of gang)"
touch "$OUT/gang.release"
wait_phase_long gang Completed

# 4. an inference replica crashes: restarted alone, the workload stays Running
run inferences infer ',"servingPort":{"container":8000},"autoscaling":{"minReplicas":2,"maxReplicas":2}'
wait_phase_long infer Running
until_ok 30 test -e "$OUT/infer.1.failed" || fail "replica 1 did not crash"
i=0
while [ $i -lt 20 ]; do
  [ "$(phase "$ADMIN" infer)" = Running ] || fail "infer left Running while a replica restarted: $(phase "$ADMIN" infer)"
  i=$((i + 1)); sleep 0.1
done
until_ok 30 started infer.1 2 || fail "replica 1 started $(starts infer.1) times"
[ "$(starts infer.0)" = 1 ] || fail "replica 0 was restarted too ($(starts infer.0) starts)"
events_of infer | grep -q '^Restarting: pod 1 of infer exited with code 6 .*: restarting the pod (restart 1)$' ||
  fail "infer: $(events_of infer)"
[ "$(phase "$ADMIN" infer)" = Running ] || fail "infer is $(phase "$ADMIN" infer)"
expect 202 DELETE "/api/v1/workloads/$(wl_id infer)" "" "$ADMIN" >/dev/null
echo "PASS"
