#!/bin/sh
# e2e_pod_env.sh: what a pod's process is given besides its command, on
# allotd and a real agent on loopback:
#   1. environmentVariables from a pod field (podFieldRef): the pod's name,
#      its node's name and address, resolved by allotd when the pod is
#      handed out;
#   2. workingDir: the process starts there; a workingDir that does not
#      exist on the node fails the pod with an event that names it, and
#      is not retried (its command could not run);
#   3. entries allotd cannot honour are refused with a 400 naming them,
#      never accepted and dropped: a secret, a config map, a user
#      credential, an unknown pod field, two sources, no name.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_admin --rate-limit 0
new_agent node-1 --gpus 1 --address 127.0.0.7
ready node-1
P=$(project team-e 1)

# training NAME EXTRA-SPEC-FIELDS ENV-ENTRIES: one pod running $T/show.sh
training() {
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$T/show.sh\"$2,
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"}$3]}}" "$ADMIN" | jq -r .workloadId
}
cat >"$T/show.sh" <<'SH'
#!/bin/sh
{ echo "POD_NAME=$POD_NAME"; echo "NODE_NAME=$NODE_NAME"; echo "POD_IP=$POD_IP"
  echo "PWD=$(pwd)"; } >"$OUT/$ALLOT_WORKLOAD_NAME.part" &&
  mv "$OUT/$ALLOT_WORKLOAD_NAME.part" "$OUT/$ALLOT_WORKLOAD_NAME.env"
SH
chmod +x "$T/show.sh"

# 1 and 2: pod fields and a working directory
mkdir -p "$T/wd"
training fields ",\"workingDir\":\"$T/wd\"" ',{"name":"POD_NAME","podFieldRef":{"path":"metadata.name"}},
  {"name":"NODE_NAME","podFieldRef":{"path":"spec.nodeName"}},
  {"name":"POD_IP","podFieldRef":{"path":"status.podIP"}}' >/dev/null
until_ok 30 test -s "$OUT/fields.env" || fail "the pod wrote nothing: $(events_of fields)"
[ "$(cat "$OUT/fields.env")" = "POD_NAME=fields-0-0
NODE_NAME=node-1
POD_IP=127.0.0.7
PWD=$T/wd" ] || fail "the pod saw: $(cat "$OUT/fields.env")"
[ "$(expect 200 GET "/api/v1/workloads/$(wl_id fields)/pods" "" "$ADMIN" | jq -r '.pods[0].name')" = fields-0-0 ] ||
  fail "metadata.name is not the pod's name in the API"
wait_phase_long fields Completed

training nowhere ",\"workingDir\":\"$T/no-such-dir\"" "" >/dev/null
wait_phase_long nowhere Failed
events_of nowhere | grep -q "cannot enter workingDir $T/no-such-dir: No such file or directory" ||
  fail "the failure does not name the working directory: $(events_of nowhere)"
# a command that could not run is not retried, whatever backoffLimit allows
events_of nowhere | grep -q "; not restarted: its command could not run" ||
  fail "the failure does not say it was not restarted: $(events_of nowhere)"
! events_of nowhere | grep -q '^Restarting:' || fail "nowhere was restarted: $(events_of nowhere)"

# 3: what allotd cannot honour is refused, naming the entry
refused() { # ENTRY WORDS
  D=$(expect 400 POST /api/v1/workloads/trainings "{\"name\":\"r\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"b\",\"command\":\"true\",
    \"environmentVariables\":[$1]}}" "$ADMIN" | jq -r .details)
  printf '%s' "$D" | grep -q -F "$2" || fail "$1: the refusal says '$D', not '$2'"
}
refused '{"name":"A","secret":{"name":"s","key":"k"}}' "environmentVariables[0].secret.name: project team-e has no secret named s"
refused '{"name":"A","configMap":{"name":"c","key":"k"}}' "configMap is not supported"
refused '{"name":"A","userCredential":{"name":"u","key":"k"}}' "environmentVariables[0].userCredential.name: project team-e has no secret named u"
refused '{"name":"A","podFieldRef":{"path":"metadata.uid"}}' "podFieldRef.path"
refused '{"name":"A","value":"1","podFieldRef":{"path":"metadata.name"}}' "exactly one of"
refused '{"value":"1"}' "environmentVariables[0].name"
refused '{"name":"A","value":1}' ".value: a string"
refused '{"name":"A","value":"1","color":"red"}' "color"
echo "PASS"
