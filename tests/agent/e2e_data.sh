#!/bin/sh
# e2e_data.sh: a pod's data (spec.storage), on allotd and a real agent on
# loopback, process runtime (docs/agent.md, "Data"):
#   1. a host path is checked on the node and named to the process
#      (ALLOT_HOSTPATH_<i>, ALLOT_HOSTPATH_<NAME>); a missing one fails the
#      pod with an event that names it;
#   2. a local git repository is cloned into the pod's working directory
#      before it starts, at the revision asked (ALLOT_GIT_<NAME>);
#   3. the kinds allot cannot serve without Kubernetes (NFS, PVC, S3, ...)
#      and private repositories' credentials are refused with a 400 naming
#      them.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_cluster node-1:1
P=$(project team-data 1)

# training NAME STORAGE: one CPU-only pod running $T/read.sh, no retries
training() {
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$T/read.sh\",
    \"backoffLimit\":0,\"storage\":$2,\"compute\":{\"gpuDevicesRequest\":0},
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"}]}}" "$ADMIN" >/dev/null
}
cat >"$T/read.sh" <<'SH'
#!/bin/sh
o="$OUT/$ALLOT_WORKLOAD_NAME"
[ -n "$ALLOT_HOSTPATH_DATA" ] && cat "$ALLOT_HOSTPATH_DATA/hello.txt" >"$o.hostpath"
[ -n "$ALLOT_HOSTPATH_0" ] && echo "$ALLOT_HOSTPATH_0" >"$o.hostpath0"
if [ -n "$ALLOT_GIT_CODE" ]; then
  cat "$ALLOT_GIT_CODE/readme" >"$o.git"
  cat "$PWD/src/readme" >"$o.gitwd"
fi
exit 0
SH
chmod +x "$T/read.sh"

# 1. a host path
mkdir -p "$T/data"
echo 42 >"$T/data/hello.txt"
training hp "{\"hostPath\":[{\"name\":\"data\",\"path\":\"$T/data\",\"mountPath\":\"/data\"}]}"
wait_phase_long hp Completed
[ "$(cat "$OUT/hp.hostpath")" = 42 ] || fail "the process did not read the host path: $(events_of hp)"
[ "$(cat "$OUT/hp.hostpath0")" = "$T/data" ] || fail "ALLOT_HOSTPATH_0 is $(cat "$OUT/hp.hostpath0")"
training hpmissing "{\"hostPath\":[{\"path\":\"$T/no-such-data\",\"mountPath\":\"/data\"}]}"
wait_phase_long hpmissing Failed
events_of hpmissing | grep -q "hostPath $T/no-such-data: No such file or directory on this node" ||
  fail "the failure does not name the missing host path: $(events_of hpmissing)"

# 2. a local git repository at a revision
g() { git -C "$T/repo" -c user.name=allot -c user.email=allot@localhost "$@" >/dev/null; }
mkdir -p "$T/repo"
git init -q "$T/repo"
echo v1 >"$T/repo/readme"; g add readme; g commit -q -m one
REV=$(git -C "$T/repo" rev-parse HEAD)
echo v2 >"$T/repo/readme"; g commit -q -am two
training gitrev "{\"git\":[{\"name\":\"code\",\"repository\":\"file://$T/repo\",\"path\":\"src\",
  \"revision\":\"$REV\"}]}"
wait_phase_long gitrev Completed
[ "$(cat "$OUT/gitrev.git")" = v1 ] || fail "the clone is not at the revision asked: $(cat "$OUT/gitrev.git"; events_of gitrev)"
[ "$(cat "$OUT/gitrev.gitwd")" = v1 ] || fail "the clone is not in the pod's working directory"
training githead "{\"git\":[{\"name\":\"code\",\"repository\":\"file://$T/repo\",\"path\":\"src\"}]}"
wait_phase_long githead Completed
[ "$(cat "$OUT/githead.git")" = v2 ] || fail "the clone is not at the default branch's head"
training gitbad "{\"git\":[{\"repository\":\"file://$T/no-such-repo\",\"path\":\"src\"}]}"
wait_phase_long gitbad Failed
events_of gitbad | grep -q "git clone file://$T/no-such-repo failed" || fail "gitbad: $(events_of gitbad)"

# 3. refused, naming the kind
refused() { # STORAGE WORDS
  D=$(expect 400 POST /api/v1/workloads/trainings "{\"name\":\"r\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"b\",\"command\":\"true\",\"storage\":$1}}" \
    "$ADMIN" | jq -r .details)
  printf '%s' "$D" | grep -q -F "$2" || fail "$1: the refusal says '$D', not '$2'"
}
refused '{"nfs":[{"server":"n","path":"/e","mountPath":"/m"}]}' "spec.storage.nfs is not supported"
refused '{"pvc":[{"claimName":"c","path":"/m"}]}' "spec.storage.pvc is not supported"
refused '{"s3":[{"bucket":"b","path":"/m"}]}' "spec.storage.s3 is not supported"
refused '{"git":[{"repository":"r","path":"p","secretRef":{"name":"s"}}]}' "private repository"
refused '{"hostPath":[{"path":"data","mountPath":"/m"}]}' "hostPath[0].path: an absolute path"
refused '{"git":[{"repository":"r","path":"../x"}]}' "git[0].path"
refused '{"tape":[]}' "unknown field 'spec.storage.tape'"
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"empty\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"b\",\"command\":\"true\",
  \"storage\":{\"nfs\":[],\"pvc\":[]}}}" "$ADMIN" >/dev/null
echo "PASS"
