#!/bin/sh
# e2e_mpi.sh: an MPI job (Debian's openmpi-bin and python3-mpi4py) across
# two real agents on loopback, started as Run:ai's MPI jobs are: a
# launcher pod runs mpirun, which starts its daemons in the two worker pods
# through allot's remote shell (allot-agent --mpi-rsh) and the workers'
# exec endpoints (allot-agent --mpi-serve), with no ssh.
#   1. mpi4py's allreduce of rank + 1 over two ranks, one in each worker
#      pod: both ranks see 3, each rank runs in its own worker pod (its
#      ALLOT_POD_INDEX and CUDA_VISIBLE_DEVICES), the pods span both nodes,
#      and the workload Completes when its launcher exits 0 (its workers'
#      endpoints are stopped).
#   2. Nobody without the workload's key runs anything at a worker's
#      endpoint: a remote shell with another key is denied, and so is one
#      with none, and neither command ran.
#   3. A remote shell whose worker's port is held by something that does
#      not greet (another program on the node) fails with the reason within
#      the greeting's 10 s, not waiting for ever.
#   4. An MPI workload with no launcher (masterSpecSameAsWorker false) is
#      refused.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

MPI_PYTHON=/usr/bin/python3   # Debian's, where python3-mpi4py is
command -v mpirun >/dev/null && "$MPI_PYTHON" -c 'import mpi4py' ||
  fail "openmpi-bin and python3-mpi4py are needed (scripts/install-deps.sh installs them)"

# three pods of one GPU: two on node-1, one on node-2
start_cluster node-1:2 node-2:1
PD=$(project team-m 3)

cat >"$T/allreduce.py" <<'PY'
import os
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
with open(os.path.join(os.environ["OUT"], "mpi.%d" % rank), "w") as f:
    f.write("%d %d %d %s %s %s\n" % (rank, size, total, os.environ["ALLOT_POD_INDEX"],
                                     os.environ["ALLOT_NODE"], os.environ["CUDA_VISIBLE_DEVICES"]))
PY
# the launcher: mpirun with the host file allot wrote (two workers, one
# slot each); Open MPI's own transport over loopback, as root in CI
cat >"$T/launch.sh" <<SH
#!/bin/sh
cp "\$ALLOT_MPI_HOSTFILE" "$OUT/hostfile"
echo "\$OMPI_MCA_plm_rsh_agent" >"$OUT/rsh_agent"
echo "\$OMPI_MCA_if_base_do_not_resolve" >"$OUT/do_not_resolve"
echo "\$ALLOT_NODE" >"$OUT/launcher_node"
cp "\$ALLOT_MPI_EXEC" "$OUT/exec.json"   # the test's own forgeries start from it
exec mpirun --allow-run-as-root -np 2 $MPI_PYTHON $T/allreduce.py
SH
chmod +x "$T/launch.sh"
expect 202 POST /api/v1/workloads/distributed "{\"name\":\"mp\",\"projectId\":\"$PD\",
  \"clusterId\":\"$CLUSTER\",\"useGivenNameAsPrefix\":false,\"spec\":{\"image\":\"busybox\",
  \"command\":\"$T/launch.sh\",\"distributedFramework\":\"MPI\",\"numWorkers\":2,
  \"slotsPerWorker\":1,\"terminationGracePeriodSeconds\":2,\"compute\":{\"gpuDevicesRequest\":1},
  \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
  {\"name\":\"TESTRUN\",\"value\":\"$T\"},
  {\"name\":\"OMPI_MCA_btl\",\"value\":\"self,tcp\"},
  {\"name\":\"OMPI_MCA_btl_tcp_if_include\",\"value\":\"lo\"},
  {\"name\":\"OMPI_MCA_oob_tcp_if_include\",\"value\":\"lo\"}]}}" "$ADMIN" >/dev/null

# 1. the allreduce, a rank in each worker pod
# 75 s: past the remote shell's 60 s of connection retries, so that the
# launcher's log holds its reason when a worker was never reached
mpi_state() {
  echo "$(events_of mp | tail -n 3)
the launcher's log: $(expect 200 GET "/api/v1/workloads/$(wl_id mp)/logs?pod=0&tailLines=30" "" "$ADMIN")
worker 1's: $(expect 200 GET "/api/v1/workloads/$(wl_id mp)/logs?pod=1&tailLines=10" "" "$ADMIN")
worker 2's: $(expect 200 GET "/api/v1/workloads/$(wl_id mp)/logs?pod=2&tailLines=10" "" "$ADMIN")
its processes: $(ps -eo pid,ppid,etimes,args | grep -E 'mpirun|orted|mpi-(rsh|serve)|allreduce' | grep -v grep)"
}
# Open MPI's start, three pods on one loaded host, now and then loses a
# worker's daemon once it has detached from the remote shell: no word from
# it, and mpirun waits for ever (seen in CI, 2 runs of 9; the state below
# shows one daemon of two). Then the launcher's mpirun is ended: the
# launcher fails, the gang restarts (its backoffLimit), and the allreduce
# must succeed on that second start.
if ! until_ok 75 test -s "$OUT/mpi.0"; then
  echo "agent/mpi: no rank after 75 s; the gang is restarted once: $(mpi_state)" >&2
  pkill -TERM -f -- "mpirun --allow-run-as-root -np 2 $MPI_PYTHON $T/allreduce.py" || true
  until_ok 90 test -s "$OUT/mpi.0" || fail "rank 0 wrote nothing, after a restart too: $(mpi_state)"
fi
until_ok 30 test -s "$OUT/mpi.1" || fail "rank 1 wrote nothing: $(events_of mp)"
read -r r0 s0 t0 i0 n0 d0 <"$OUT/mpi.0"
read -r r1 s1 t1 i1 n1 d1 <"$OUT/mpi.1"
[ "$s0 $t0 $s1 $t1" = "2 3 2 3" ] ||
  fail "allreduce: rank 0 saw size $s0 sum $t0, rank 1 size $s1 sum $t1 (want 2 3)"
[ "$(printf '%s\n' "$i0" "$i1" | sort | tr '\n' ' ')" = "1 2 " ] ||
  fail "ranks ran in pods $i0 and $i1: one in each worker pod (1, 2), none in the launcher (0)"
[ -n "$d0" ] && [ -n "$d1" ] || fail "ranks without their worker pod's devices: '$d0' '$d1'"
[ "$(cat "$OUT/hostfile")" = "$(printf 'mp-1-0 slots=1\nmp-2-0 slots=1')" ] ||
  fail "host file: $(cat "$OUT/hostfile")"
grep -q -- '--mpi-rsh$' "$OUT/rsh_agent" || fail "the launcher's rsh agent: $(cat "$OUT/rsh_agent")"
[ "$(cat "$OUT/do_not_resolve")" = 1 ] ||
  fail "Open MPI should not look the pods' names up: OMPI_MCA_if_base_do_not_resolve='$(cat "$OUT/do_not_resolve")'"
NODES=$(printf '%s\n' "$(cat "$OUT/launcher_node")" "$n0" "$n1" | sort -u | wc -l)
[ "$NODES" = 2 ] || fail "the launcher and ranks ran on $NODES node(s), want both"
wait_phase_long mp Completed
events_of mp | grep -q 'its MPI launcher exited with code 0' ||
  fail "the completion should say the launcher ended it: $(events_of mp)"
until_ok 15 no_process mp || fail "the workers' endpoints outlived the workload"

# 2. a worker's endpoint runs nothing without the workload's key; a second
# job holds a worker endpoint open while the forgeries try it
expect 202 POST /api/v1/workloads/distributed "{\"name\":\"mq\",\"projectId\":\"$PD\",
  \"clusterId\":\"$CLUSTER\",\"useGivenNameAsPrefix\":false,\"spec\":{\"image\":\"busybox\",
  \"command\":\"sh -c 'cp \$ALLOT_MPI_EXEC $OUT/mq.json; while [ ! -e $OUT/release ]; do sleep 0.1; done'\",
  \"distributedFramework\":\"MPI\",\"numWorkers\":1,\"terminationGracePeriodSeconds\":2,
  \"compute\":{\"gpuDevicesRequest\":1},
  \"environmentVariables\":[{\"name\":\"TESTRUN\",\"value\":\"$T\"}]}}" "$ADMIN" >/dev/null
until_ok 30 test -s "$OUT/mq.json" || fail "the launcher of mq did not start: $(events_of mq)"
until_ok 30 has_process mq || fail "mq has no process"
HOST=$(jq -r '.workers[0].host' "$OUT/mq.json")
# the right key runs a command (the endpoint listens)
ALLOT_MPI_EXEC=$OUT/mq.json "$AGENT" --mpi-rsh "$HOST" "touch $OUT/keyed" ||
  fail "the launcher's own key was refused"
[ -e "$OUT/keyed" ] || fail "the keyed command did not run"
jq '.key = "0000000000000000000000000000000000000000000000000000000000000000"' \
  "$OUT/mq.json" >"$T/forged.json"
if ALLOT_MPI_EXEC=$T/forged.json "$AGENT" --mpi-rsh "$HOST" "touch $OUT/forged" 2>"$T/forged.err"; then
  fail "a forged key was accepted"
fi
grep -q denied "$T/forged.err" || fail "the forged key's refusal: $(cat "$T/forged.err")"
# the key of another MPI workload (mp's) is not mq's
jq --slurpfile q "$OUT/mq.json" '.workers = $q[0].workers' "$OUT/exec.json" >"$T/other.json"
if ALLOT_MPI_EXEC=$T/other.json "$AGENT" --mpi-rsh "$HOST" "touch $OUT/other" 2>/dev/null; then
  fail "another workload's key was accepted"
fi
# no key at all, and a raw request with a made-up MAC
if env -u ALLOT_MPI_EXEC "$AGENT" --mpi-rsh "$HOST" "touch $OUT/nokey" 2>/dev/null; then
  fail "a remote shell with no key ran"
fi
PORT=$(jq -r '.workers[0].port' "$OUT/mq.json")
ANSWER=$("$MPI_PYTHON" - "$PORT" "$OUT/raw" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
f.readline()
cmd = ("touch " + sys.argv[2]).encode()
s.sendall(b"%s %d\n%s" % (b"ab" * 32, len(cmd), cmd))
print(f.read().decode(errors="replace").strip())
PY
)
[ "$ANSWER" = "ALLOT-MPI-EXEC denied" ] || fail "a made-up MAC was answered: $ANSWER"
sleep 1
for f in forged other nokey raw; do
  [ ! -e "$OUT/$f" ] || fail "the $f request ran its command"
done
touch "$OUT/release"
wait_phase_long mq Completed

# 3. a port held by a program that does not greet: mq's worker moved there
cat >"$T/silent.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
conn = s.accept()
time.sleep(120)
PY
"$MPI_PYTHON" "$T/silent.py" "$T/silent.port" &
SILENT=$!
until_ok 10 test -s "$T/silent.port" || fail "the silent listener did not start"
jq --argjson p "$(cat "$T/silent.port")" '.workers[0].port = $p' "$OUT/mq.json" >"$T/silent.json"
t0=$(now_ms)
if ALLOT_MPI_EXEC=$T/silent.json "$AGENT" --mpi-rsh "$HOST" "touch $OUT/silent" 2>"$T/silent.err"; then
  fail "a remote shell to a port that does not greet succeeded"
fi
waited=$(($(now_ms) - t0))
grep -q "is not an MPI exec endpoint" "$T/silent.err" ||
  fail "the silent port's refusal: $(cat "$T/silent.err")"
[ "$waited" -ge 9000 ] && [ "$waited" -lt $((20000 * SCALE)) ] ||
  fail "the remote shell gave up on the silent port after $waited ms, want about 10 s"
kill "$SILENT"

# 4. an MPI workload needs its launcher
expect 400 POST /api/v1/workloads/distributed "{\"name\":\"m3\",\"projectId\":\"$PD\",
  \"clusterId\":\"$CLUSTER\",\"masterSpecSameAsWorker\":false,\"spec\":{\"image\":\"b\",
  \"command\":\"true\",\"distributedFramework\":\"MPI\",\"numWorkers\":2}}" "$ADMIN" |
  jq -r .details | grep -q "no launcher" || fail "an MPI workload without a launcher should be refused"
echo "PASS"
