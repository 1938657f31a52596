#!/bin/sh
# e2e.sh ALLOTD ALLOT: the Run:ai quick start typed into allot as the
# runai docs type it, against a real allotd --demo (2 nodes x 2 GPUs) on
# a free loopback port: projects team-a and team-b with 2 GPUs each; a1
# (1 GPU), a2 (2) and b1 (1) run; b2 arrives and takes a1's GPU back.
# The tables (workload list, describe, projects, nodes, pools) are
# compared with golden files, --json with the API's own objects. Then
# the other verbs: default project, filters, delete on and off a
# terminal, suspend/resume, the other workload types, logs, errors from
# the server, a researcher's view, departments.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

# ---- the quick start ----
start_demo
has "$T/out" "logged in to $URL as admin"
run 0 project create team-a --gpu-quota 2
has "$T/out" "project team-a created with a quota of 2.00 GPUs in node pool default"
run 0 project create team-b --gpu-quota 2
run 0 training submit a1 -i $QS -g 1 -p team-a
has "$T/out" "submitted training a1 to project team-a"
run 0 training submit a2 -i $QS -g 2 -p team-a
run 0 training submit b1 -i $QS -g 1 -p team-b
wait_phases a1=Running a2=Running b1=Running
run 0 training submit b2 -i $QS -g 1 -p team-b
wait_phases b2=Running a1=Pending

run 0 workload list -A
golden workload-list-A.txt
run 0 workload list -A --no-headers
hasnt "$T/out" Workload
[ "$(head -n 1 "$T/out" | awk '{print $1, $3}')" = "a1 Pending" ] || fail "--no-headers: $(cat "$T/out")"
run 0 training describe a1 -p team-a
golden describe-a1.txt
run 0 project list
golden project-list.txt
run 0 node list
golden node-list.txt
run 0 nodepool list
golden nodepool-list.txt

# --json: the API's objects, unchanged, as an array
run 0 workload list -p team-b --json
cp "$T/out" "$T/cli.json"
expect 200 GET "/api/v1/workloads?filterBy=projectName==team-b" "" "$(token)" |
  jq -S '.workloads | map(del(.totalRunningTimeSeconds))' >"$T/api.json" # it grows by the second
jq -S 'map(del(.totalRunningTimeSeconds))' "$T/cli.json" | diff -u "$T/api.json" - >&2 ||
  fail "--json is not the API's workloads"
jq -S '[.[] | {name, type, phase, projectName, preemptible, runningPods, requestedPods,
             allocatedGpu: .allocatedResources.gpu, priorityClassName, id, createdAt}]' \
  "$T/cli.json" >"$T/projected.json"
golden workload-list-team-b.json "$T/projected.json"
run 0 training describe a1 -p team-a -o json
[ "$(jq -r '[.workload.name, .workload.phase, .workload.conditions[0].reason, .pods[0].k8sPhase,
             .events[0].reason, .events[-1].reason] | join(" ")' "$T/out")" = \
  "a1 Pending QueueFairShareReached Pending Submitted Reclaimed" ] ||
  fail "describe -o json: $(cat "$T/out")"
run 0 workload list -p team-b --yaml
has "$T/out" "- id: "
has "$T/out" "  name: b2"
has "$T/out" "  phase: Running"
has "$T/out" "    number: 1"

# ---- the default project and filters ----
run 0 project set team-a
has "$T/out" "project team-a configured successfully"
run 0 training list --no-headers
[ "$(awk '{print $1}' "$T/out" | tr '\n' ' ')" = "a1 a2 " ] || fail "default project: $(cat "$T/out")"
run 0 workload list -A --status pending --no-headers
[ "$(awk '{print $1}' "$T/out" | tr '\n' ' ')" = "a1 " ] || fail "--status: $(cat "$T/out")"
run 0 workload list -A --type Workspace --no-headers
[ ! -s "$T/out" ] || fail "--type Workspace: $(cat "$T/out")"

# ---- errors from the server and from lookups ----
run 1 training submit a1 -i $QS -g 1 -p team-a
has "$T/err" "a workload of that name exists in the project (400 Bad request)"
run 1 training submit x1 -i $QS -g 1 -p team-x
has "$T/err" "projectName: no project named team-x (400 Bad request)"
run 1 training submit x1 -i $QS -g 1 -p team-a --priority urgent
has "$T/err" "priorityClass"
has "$T/err" "(400 Bad request)"
run 1 training describe nope
has "$T/err" "no training named nope in project team-a"
run 1 workspace describe a1
has "$T/err" "no workspace named a1 in project team-a"
run 1 project create team-a --gpu-quota 1
has "$T/err" "(409 Conflict)"
run 1 project create team-c --gpu-quota 1 --department nowhere
has "$T/err" "no department named nowhere"

# ---- delete: asks on a terminal, refuses without one ----
run 2 training delete b2 -p team-b
has "$T/err" "add -y to delete without asking"
if command -v script >/dev/null; then
  printf 'n\n' | script -qec "$ALLOT training delete b2 -p team-b" /dev/null >"$T/out" 2>&1 ||
    fail "delete on a terminal: $(cat "$T/out")"
  has "$T/out" "Delete training b2 of project team-b? [y/N]"
  has "$T/out" "b2 was not deleted"
fi
run 0 training delete b2 -p team-b -y
has "$T/out" "workload b2 is being deleted"
wait_phases a1=Running
case " $(phases) " in *" b2="*) fail "b2 is still listed" ;; esac

# ---- suspend and resume ----
run 0 training suspend a2
has "$T/out" "workload a2 suspended"
wait_phases a2=Stopped
run 0 training resume a2
has "$T/out" "workload a2 resumed"
wait_phases a2=Running

# ---- the other types ----
run 0 workspace submit ws1 -i jupyter/base -p team-b
has "$T/out" "submitted workspace ws1 to project team-b"
run 0 distributed submit d1 -i $QS -g 1 --workers 2 -p team-b
run 0 training pytorch submit p1 -i $QS --workers 2 --no-master -p team-b --json
[ "$(jq -r '[.spec.distributedFramework, .spec.numWorkers] | join(" ")' "$T/out")" = "PyTorch 2" ] ||
  fail "training pytorch submit: $(cat "$T/out")"
run 0 inference submit i1 -i $QS --min-replicas 2 -p team-b --cpu-core-request 0.5 \
  --cpu-memory-request 1G -e MODEL=small --command -- serve --port 8000
run 0 workload list -p team-b --no-headers
[ "$(awk '{sub(/.*\//, "", $6); print $1, $2, $5, $6}' "$T/out" | tr '\n' ',')" = \
  "b1 Training Yes 1,ws1 Workspace No 1,d1 Distributed Yes 3,p1 Distributed Yes 2,i1 Inference No 2," ] ||
  fail "types: $(cat "$T/out")"
run 0 inference describe i1 -p team-b -o json
[ "$(jq -r '[.workload.spec.command, .workload.spec.args, .workload.spec.environmentVariables[0].value,
             .workload.requestedPods.number] | join(" ")' "$T/out")" = "serve --port 8000 small 2" ] ||
  fail "inference submit: $(cat "$T/out")"
run 0 training submit --name-prefix job -i $QS -p team-b --json
jq -r .name "$T/out" | grep -Eq '^job-[a-z]{5}$' || fail "--name-prefix: $(cat "$T/out")"
# ports and GPU memory: describe shows where the pods listen
run 0 training submit web1 -i $QS -p team-b --port 8888:30888 --port 6006 --gpu-memory-request 20G
run 0 training describe web1 -p team-b --general
has "$T/out" "Ports:          8888 on node port 30888, 6006 on node port 6006"
run 0 training describe web1 -p team-b -o json
[ "$(jq -r '.workload.spec.compute | "\(.gpuRequestType) \(.gpuMemoryRequest)"' "$T/out")" = \
  "memory 20G" ] || fail "--gpu-memory-request: $(cat "$T/out")"
run 0 training delete web1 -p team-b -y

# two projects with a workload of one name: -p chooses
run 0 training submit dup -i $QS -p team-b
run 0 training submit dup -i $QS -p team-a
jq 'del(.project)' "$ALLOT_CONFIG" >"$T/noproject.json"
rc=0
ALLOT_CONFIG="$T/noproject.json" "$ALLOT" workload describe dup </dev/null >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "ambiguous name: exit $rc"
has "$T/err" "2 workloads are named dup, in projects team-b, team-a: choose one with -p PROJECT"

# ---- logs: a simulated pod writes nothing (tests/cli/logs.sh has real ones) ----
run 0 training logs a1 --tail 10
[ ! -s "$T/out" ] || fail "a simulated pod has a log: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "logs said: $(cat "$T/err")"

# ---- a researcher of team-a sees team-a, and every pool's free GPUs ----
run 0 project list --json
PA=$(jq -r '.[] | select(.name == "team-a") | .id' "$T/out")
PW=$(expect 201 POST /api/v1/users '{"email":"alice@example.com"}' "$(token)" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"alice@example.com\",
  \"subjectType\":\"user\",\"roleId\":4,\"scopeType\":\"project\",\"scopeId\":\"$PA\"}" \
  "$(token)" >/dev/null
ADMIN_CONFIG=$ALLOT_CONFIG
ALLOT_CONFIG="$T/alice.json"
run_in "$PW" 0 login --url "$URL" --user alice@example.com --password-stdin
run 0 whoami
has "$T/out" "L1 researcher on project team-a"
run 0 workload list -A --no-headers
[ "$(awk '{print $4}' "$T/out" | sort -u)" = team-a ] || fail "alice sees: $(cat "$T/out")"
run 1 training submit x1 -i $QS -g 1 -p team-b
has "$T/err" "no project named team-b"
run 0 nodepool list --no-headers
has "$T/out" "default"
run 1 project create mine --gpu-quota 1
has "$T/err" "(403 Forbidden)"
has "$T/err" "an access rule is missing"
ALLOT_CONFIG=$ADMIN_CONFIG

# ---- agent tokens ----
run 0 agent token create gpu-01 --node gpu-01
TOK=$(cat "$T/out")
case "$TOK" in *.*) ;; *) fail "agent token create printed: $TOK" ;; esac
run 0 agent token list --no-headers
has "$T/out" "gpu-01"
TID=$(awk '$2 == "gpu-01" {print $1}' "$T/out")
[ -n "$TID" ] || fail "no id for gpu-01 in: $(cat "$T/out")"
hasnt "$T/out" "${TOK#*.}"
run 0 agent token list --json
[ "$(jq -r '.[] | select(.name == "gpu-01") | .nodeName' "$T/out")" = gpu-01 ] ||
  fail "token list --json: $(cat "$T/out")"
run 0 agent token revoke "$TID"
has "$T/out" "agent token $TID revoked"
run 0 agent token list --no-headers
[ "$(awk '$2 == "gpu-01" {print $NF}' "$T/out")" = yes ] || fail "not revoked: $(cat "$T/out")"
run 1 agent token revoke no-such-token

# ---- departments ----
run 0 department create research --gpu-quota 4
run 0 project create team-c --gpu-quota 1 --department research --limit 2 --over-quota-weight 2
run 0 department list --no-headers
has "$T/out" "research"
# --demo: the default department deserves the demo's 4 simulated GPUs, so
# its projects' non-preemptible work runs within their quotas
[ "$(awk '$1 == "default" {print $2}' "$T/out")" = 4.00 ] ||
  fail "the demo's default department: $(cat "$T/out")"
run 0 project list --json
[ "$(jq -r '.[] | select(.name == "team-c") |
      [.parent.name, .resources[0].gpu.deserved, .resources[0].gpu.limit,
       .resources[0].gpu.overQuotaWeight] | join(" ")' "$T/out")" = "research 1 2 2" ] ||
  fail "team-c: $(cat "$T/out")"

stop
echo "ok: cli e2e"
