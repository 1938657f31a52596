#!/bin/sh
# e2e_distributed.sh: distributed workloads whose pods find each other, on
# allotd and two real agents on loopback (one GPU each, so every pod of a
# two-pod gang lands on its own node).
#   1. PyTorch (Debian's python3-torch, gloo): a master and a worker run
#      init_process_group("gloo") from the variables allot gives them and
#      all-reduce their rank + 1: both ranks see 3, world size 2, and the
#      master port is the workload's rendezvous port, from the range
#      allotd was given (--rendezvous-ports, lib_agent.sh).
#   2. TF, JAX, XGBoost and MPI (CPU-only pods): each pod's environment in
#      its framework's terms (TF_CONFIG's cluster and task, JAX's
#      coordinator, XGBoost's and rabit's tracker, MPI's launcher's host
#      file with slotsPerWorker slots a worker, named by its pod name).
#   3. The document's defaults that Run:ai's client sends with every
#      distributed submission (slotsPerWorker 1, sshAuthMountPath
#      /root/.ssh, empty lists) are accepted; other values are refused
#      with the reason.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

TORCH_PYTHON=/usr/bin/python3   # Debian's, where python3-torch is
# torch must be there; whether it has gloo costs an import of torch (about
# 1.5 s of CPU), so that is asked only when the all-reduce did not happen
NEED_TORCH="python3-torch with gloo is needed (scripts/install-deps.sh installs it)"
"$TORCH_PYTHON" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' ||
  fail "$NEED_TORCH"
no_gloo() {
  "$TORCH_PYTHON" -c 'import torch.distributed as d; assert d.is_gloo_available()' >/dev/null 2>&1 ||
    echo " ($NEED_TORCH)"
}

start_cluster node-1:1 node-2:1
PD=$(project team-d 2)

# distributed NAME FRAMEWORK GPUS COMMAND [EXTRA SPEC FIELDS]: a master and
# one worker running COMMAND.
distributed() {
  expect 202 POST /api/v1/workloads/distributed "{\"name\":\"$1\",\"projectId\":\"$PD\",
    \"clusterId\":\"$CLUSTER\",\"useGivenNameAsPrefix\":false,\"spec\":{\"image\":\"busybox\",
    \"command\":\"$4\",\"distributedFramework\":\"$2\",\"numWorkers\":1,
    \"terminationGracePeriodSeconds\":2,\"compute\":{\"gpuDevicesRequest\":$3}${5:-},
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"}]}}" "$ADMIN" | jq -r .workloadId
}

# 1. PyTorch: a real all-reduce across the two agents
cat >"$T/allreduce.py" <<'PY'
import os
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
with open(os.path.join(os.environ["OUT"], "torch.%d" % rank), "w") as f:
    f.write("%d %d %d %s %s\n" % (rank, world, int(t.item()), os.environ["MASTER_PORT"],
                                  os.environ["ALLOT_NODE"]))
dist.destroy_process_group()
PY
distributed pt PyTorch 1 "$TORCH_PYTHON $T/allreduce.py" \
  ',"slotsPerWorker":1,"sshAuthMountPath":"/root/.ssh","labels":[],"annotations":[]' >/dev/null
until_ok 60 test -s "$OUT/torch.0" || fail "rank 0 wrote nothing: $(events_of pt)$(no_gloo)"
until_ok 30 test -s "$OUT/torch.1" || fail "rank 1 wrote nothing: $(events_of pt)$(no_gloo)"
read -r r0 w0 s0 p0 n0 <"$OUT/torch.0"
read -r r1 w1 s1 p1 n1 <"$OUT/torch.1"
[ "$w0 $s0 $w1 $s1" = "2 3 2 3" ] ||
  fail "all-reduce: rank 0 saw world $w0 sum $s0, rank 1 world $w1 sum $s1 (want 2 3)"
[ "$p0" = "$p1" ] && [ "$p0" -ge "$RDV_FIRST" ] && [ "$p0" -le "$RDV_LAST" ] ||
  fail "master ports $p0 and $p1: one port of the rendezvous range"
[ "$n0" != "$n1" ] || fail "both ranks ran on $n0: the gang should span the two nodes"
wait_phase_long pt Completed

# 2. the other frameworks' variables, from CPU-only pods that print them
cat >"$T/env.sh" <<'SH'
#!/bin/sh
env | grep -E '^(TF_CONFIG|JAX_|MASTER_|WORLD_SIZE|RANK|WORKER_|DMLC_|ALLOT_DIST_|ALLOT_MPI_)' |
  sort >"$OUT/$ALLOT_WORKLOAD_NAME.$ALLOT_POD_INDEX.env"
[ -n "$ALLOT_MPI_HOSTFILE" ] && cp "$ALLOT_MPI_HOSTFILE" "$OUT/$ALLOT_WORKLOAD_NAME.$ALLOT_POD_INDEX.hosts"
while [ ! -e "$OUT/release" ]; do sleep 0.1; done   # live together until the test has looked
exit 0
SH
chmod +x "$T/env.sh"
distributed tf TF 0 "$T/env.sh" >/dev/null
distributed jx JAX 0 "$T/env.sh" >/dev/null
distributed xg XGBoost 0 "$T/env.sh" >/dev/null
distributed mp MPI 0 "$T/env.sh" ',"slotsPerWorker":2' >/dev/null
# (an MPI worker runs the launcher's exec endpoint, not the command: e2e_mpi)
for p in tf.0 tf.1 jx.0 jx.1 xg.0 xg.1 mp.0; do
  until_ok 30 test -s "$OUT/$p.env" || fail "pod $p wrote no environment: $(events_of ${p%.*})"
done
var() { sed -n "s/^$2=//p" "$OUT/$1.env"; }
PORT=$(var tf.0 ALLOT_DIST_MASTER | sed 's/.*://')
[ "$(var tf.0 TF_CONFIG | jq -c .task)" = '{"index":0,"type":"chief"}' ] || fail "tf pod 0: $(var tf.0 TF_CONFIG)"
[ "$(var tf.1 TF_CONFIG | jq -c .task)" = '{"index":0,"type":"worker"}' ] || fail "tf pod 1: $(var tf.1 TF_CONFIG)"
[ "$(var tf.1 TF_CONFIG | jq -c .cluster)" = "{\"chief\":[\"127.0.0.1:$PORT\"],\"worker\":[\"127.0.0.1:$((PORT + 1))\"]}" ] ||
  fail "tf cluster: $(var tf.1 TF_CONFIG)"
[ "$(var jx.1 JAX_NUM_PROCESSES) $(var jx.1 JAX_PROCESS_ID)" = "2 1" ] || fail "jax: $(cat "$OUT/jx.1.env")"
[ "$(var jx.0 JAX_COORDINATOR_ADDRESS)" = "$(var jx.1 JAX_COORDINATOR_ADDRESS)" ] || fail "jax coordinator differs"
[ "$(var xg.1 DMLC_NUM_WORKER) $(var xg.1 DMLC_TASK_ID) $(var xg.1 RANK)" = "2 1 1" ] || fail "xgboost: $(cat "$OUT/xg.1.env")"
[ "$(var xg.0 DMLC_TRACKER_PORT)" = "$(var xg.0 MASTER_PORT)" ] || fail "xgboost tracker port"
[ "$(cat "$OUT/mp.0.hosts")" = "mp-1-0 slots=2" ] || fail "mpi host file: $(cat "$OUT/mp.0.hosts")"
[ "$(var mp.0 ALLOT_MPI_SLOTS_PER_WORKER)" = 2 ] || fail "mpi slots"
# live workloads never share ports: four blocks of two, all different
[ "$(for w in tf jx xg mp; do var $w.0 ALLOT_DIST_MASTER; done | sort -u | wc -l)" = 4 ] ||
  fail "live workloads share rendezvous ports: $(for w in tf jx xg mp; do var $w.0 ALLOT_DIST_MASTER; done)"
touch "$OUT/release"
for w in tf jx xg mp; do wait_phase_long $w Completed; done

# 3. values other than what allot does are refused, naming the field
body() { printf '{"name":"%s","projectId":"%s","clusterId":"%s","spec":{"image":"b","command":"true","distributedFramework":"%s","numWorkers":1,%s}}' \
  "$1" "$PD" "$CLUSTER" "$2" "$3"; }
expect 400 POST /api/v1/workloads/distributed "$(body r1 PyTorch '"slotsPerWorker":2')" "$ADMIN" |
  jq -r .details | grep -q "slotsPerWorker" || fail "slotsPerWorker 2 on PyTorch should be refused"
expect 400 POST /api/v1/workloads/distributed "$(body r2 MPI '"sshAuthMountPath":"/home/u/.ssh"')" "$ADMIN" |
  jq -r .details | grep -q "sshAuthMountPath" || fail "another sshAuthMountPath should be refused"
expect 400 POST /api/v1/workloads/distributed "$(body r3 MPI '"labels":[{"name":"a","value":"b"}]')" "$ADMIN" |
  jq -r .details | grep -q "labels" || fail "a label should be refused"
echo "PASS"
