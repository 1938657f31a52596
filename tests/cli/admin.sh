#!/bin/sh
# admin.sh ALLOTD ALLOT: the admin verbs of allot against a real allotd
# --demo on a free loopback port, each effect read back through the API:
# node pools created, edited and deleted; projects and departments edited
# (quotas per pool, rank, default node pools, node types, scheduling
# rules) and deleted; access rules created, listed and deleted; --csv on every list
# (RFC 4180 quoting, with a name holding a comma and a quote); and the
# runai v1 forms (submit --gpu, --interactive, list jobs, describe job,
# delete job), each run as its v2 command with a one-line notice.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

start_demo

# api PATH: the API's answer to GET PATH, as the admin.
api() {
  expect 200 GET "$1" "" "$(token)"
}
pool_json() {
  api /api/v1/node-pools | jq -c --arg n "$1" '.nodepools[] | select(.name == $n)'
}
project_json() {
  api /api/v1/org-unit/projects | jq -c --arg n "$1" '.projects[] | select(.name == $n)'
}
# is JSON FILTER WANT: jq -r FILTER of JSON is WANT.
is() {
  got=$(printf '%s\n' "$1" | jq -r "$2")
  [ "$got" = "$3" ] || fail "$2 is '$got', wanted '$3' in $1"
}

# ---- node pools ----
run 0 nodepool create a100 --label node-type=a100 --placement spread --min-runtime 30m \
  --time-based-fairshare on --tbf-window 2d --tbf-half-life 12h --tbf-k 2
has "$T/out" "node pool a100 created: label node-type=a100, placement spread/spread, minimum runtime 30m, time-based fairshare on"
P=$(pool_json a100)
is "$P" '[.labelKey, .labelValue, .placementStrategy.gpu, .placementStrategy.cpu] | join(" ")' \
  "node-type a100 spread spread"
is "$P" '.schedulingConfiguration | [.minGuaranteedRuntime, .timeBasedFairshare.enabled,
         .timeBasedFairshare.windowSeconds, .timeBasedFairshare.halfLifeSeconds,
         .timeBasedFairshare.kValue] | map(tostring) | join(" ")' "30m true 172800 43200 2"
run 0 nodepool create h100 --label node-type=h100
is "$(pool_json h100)" '[(.placementStrategy.gpu | tostring), .placementStrategy.cpu,
  (.schedulingConfiguration.minGuaranteedRuntime | tostring),
  (.schedulingConfiguration.timeBasedFairshare | .enabled, .windowSeconds, .kValue | tostring)]
  | join(" ")' "null spread null false 604800 1"
# edit changes only what it names
run 0 nodepool edit a100 --placement fragmentation --cpu-placement binpack --min-runtime none \
  --label node-type=a100x
has "$T/out" "node pool a100 saved: label node-type=a100x, placement fragmentation/binpack, minimum runtime none, time-based fairshare on"
P=$(pool_json a100)
is "$P" '[.labelValue, (.placementStrategy.gpu | tostring), .placementStrategy.cpu,
  (.schedulingConfiguration.minGuaranteedRuntime | tostring),
  (.schedulingConfiguration.timeBasedFairshare.windowSeconds | tostring)] | join(" ")' \
  "a100x null binpack null 172800"
run 0 nodepool edit a100 --time-based-fairshare off --json
is "$(cat "$T/out")" '.schedulingConfiguration.timeBasedFairshare.enabled' false
is "$(pool_json a100)" '.schedulingConfiguration.timeBasedFairshare.enabled' false
# refused before any request, or by the server with its reason
run 2 nodepool create x1
has "$T/err" "--label KEY=VALUE is required"
run 2 nodepool edit a100
has "$T/err" "nothing to change"
run 2 nodepool edit a100 --placement diagonal
has "$T/err" "--placement is one of: binpack spread fragmentation"
run 2 nodepool edit a100 --tbf-window 5parsecs
has "$T/err" "--tbf-window wants a duration"
run 2 nodepool create x1 --label novalue
has "$T/err" "--label wants KEY=VALUE"
run 1 nodepool edit a100 --min-runtime forever
has "$T/err" "minGuaranteedRuntime"
run 1 nodepool edit no-such-pool --placement spread
has "$T/err" "no node pool named no-such-pool"
run 2 nodepool delete h100
has "$T/err" "add -y"
run 1 nodepool delete default -y
has "$T/err" "the default node pool cannot be deleted"
run 0 nodepool delete h100 -y
has "$T/out" "node pool h100 deleted"
[ -z "$(pool_json h100)" ] || fail "h100 is still there: $(pool_json h100)"

# ---- projects and departments ----
run 0 department create research --gpu-quota 3
run 0 project create team-a --gpu-quota 1 --department research
run 0 project edit team-a --gpu-quota 2 --limit 3 --over-quota-weight 2 \
  --node-pool a100 --gpu-quota 0.5 --over-quota-priority High --rank 7 \
  --description "vision team" --default-node-pools a100,default \
  --training-node-types dgx,a100 --workspace-time-limit 2h --training-idle-limit 90m
has "$T/out" "project team-a saved: default quota 2.00 GPUs, limit 3.00, weight 2, priority Normal; a100 quota 0.50 GPUs, limit none, weight 1, priority High; rank 7"
P=$(project_json team-a)
is "$P" '.resources | map("\(.nodePool.name)=\(.gpu.deserved)/\(.gpu.limit)/\(.gpu.overQuotaWeight)/\(.priority)")
  | join(" ")' "default=2/3/2/Normal a100=0.5/-1/1/High"
is "$P" '[.rank, .description, (.defaultNodePools | join(",")), (.nodeTypes.training | join(","))]
  | map(tostring) | join(" ")' "7 vision team a100,default dgx,a100"
is "$P" '.schedulingRules | [.interactiveJobTimeLimitSeconds, .trainingJobMaxIdleDurationSeconds]
  | map(tostring) | join(" ")' "7200 5400"
# a second edit keeps what it does not name: the pool entry's other
# numbers, the other rules and node types
run 0 project edit team-a --limit 4 --workspace-node-types a100 --training-idle-limit none
P=$(project_json team-a)
is "$P" '.resources | map("\(.nodePool.name)=\(.gpu.deserved)/\(.gpu.limit)/\(.gpu.overQuotaWeight)")
  | join(" ")' "default=2/4/2 a100=0.5/-1/1"
is "$P" '[(.nodeTypes.training | join(",")), (.nodeTypes.workspace | join(",")),
  (.schedulingRules | keys | join(","))] | join(" ")' "dgx,a100 a100 interactiveJobTimeLimitSeconds"
run 0 project edit team-a --default-node-pools none --training-node-types none \
  --workspace-node-types none --workspace-time-limit none --json
is "$(cat "$T/out")" '[(.defaultNodePools | tostring), (.nodeTypes | tostring),
  (.schedulingRules | tostring)] | join(" ")' "null {} null"
# the server's rules, in its words: a limit below the quota, a project
# above its department
run 1 project edit team-a --limit 1
has "$T/err" "limit"
run 1 project edit team-a --gpu-quota 5 --limit -1
has "$T/err" "research"
is "$(project_json team-a)" '.resources[0].gpu.deserved' 2
run 2 project edit team-a
has "$T/err" "nothing to change"
run 2 project edit team-a --node-pool a100 --rank 1
has "$T/err" "--node-pool a100 is followed by no quota flag"
run 2 project edit team-a --workspace-time-limit soon
has "$T/err" "--workspace-time-limit wants a duration"
run 2 project edit team-a --over-quota-priority urgent
has "$T/err" "--over-quota-priority is one of: None Low Normal High"
run 1 project edit no-such --rank 1
has "$T/err" "no project named no-such"
# workload list -p of a project that does not exist says so (exit 1), not an empty table
run 1 workload list -p no-such
has "$T/err" "no project named no-such"
run 0 department edit research --node-pool a100 --gpu-quota 1 --rank 3
D=$(api /api/v1/org-unit/departments | jq -c '.departments[] | select(.name == "research")')
is "$D" '[.rank, (.resources | map("\(.nodePool.name)=\(.gpu.deserved)") | join(","))]
  | map(tostring) | join(" ")' "3 default=3,a100=1"

# ---- access rules ----
PW=$(expect 201 POST /api/v1/users '{"email":"alice@example.com"}' "$(token)" | jq -r .tempPassword)
[ -n "$PW" ] && [ "$PW" != null ] || fail "no user alice"
run 0 access-rule create --subject alice@example.com --role "l1 researcher" -p team-a
has "$T/out" "is L1 researcher on project team-a"
RID=$(api "/api/v1/authorization/access-rules?subjectIdFilter=alice" |
      jq -r '.accessRules[] | select(.scopeType == "project") | .id')
R=$(api "/api/v1/authorization/access-rules/$RID")
is "$R" '[.subjectId, .subjectType, .roleName, .scopeName] | join(" ")' \
  "alice@example.com user L1 researcher team-a"
run 0 access-rule create --subject alice@example.com --role 6 --department research --json
is "$(cat "$T/out")" '[.roleName, .scopeType, .scopeName] | join(" ")' "Viewer department research"
run 0 access-rule list --no-headers
has "$T/out" "alice@example.com   user"
grep -q "^$RID  *alice@example.com  *user  *L1 researcher  *project team-a\$" "$T/out" ||
  fail "access-rule list: $(cat "$T/out")"
run 2 access-rule create --subject alice@example.com --role Viewer
has "$T/err" "a scope is required"
run 2 access-rule create --subject alice@example.com --role Viewer --system -p team-a
has "$T/err" "exclude each other"
run 2 access-rule create --subject a --role Viewer --system --subject-type robot
has "$T/err" "--subject-type is one of: user service-account"
run 1 access-rule create --subject alice@example.com --role Overlord --system
has "$T/err" "no role named Overlord"
run 1 access-rule create --subject nobody@example.com --role Viewer --system
has "$T/err" "subjectId names no such principal"
run 2 access-rule delete "$RID"
has "$T/err" "add -y"
run 0 access-rule delete "$RID" -y
has "$T/out" "access rule $RID deleted: alice@example.com is no longer L1 researcher on project"
expect 404 GET "/api/v1/authorization/access-rules/$RID" "" "$(token)" >/dev/null

# ---- --csv on every list ----
run 0 agent token create 'rack 4, "left"'
run 0 agent token create 'rack 5, right'
run 0 agent token list --csv
has "$T/out" 'ID,Name,Node,Created,Last used,Revoked'
has "$T/out" ',"rack 4, ""left""",-,'
# csv_comma_without_quote_is_quoted: a comma alone is reason enough
has "$T/out" ',"rack 5, right",-,'
# RFC 4180: CRLF line ends; a reader gets the name back whole
[ "$(head -n 1 "$T/out" | tail -c 2 | od -An -tx1 | tr -d ' \n')" = 0d0a ] ||
  fail "--csv lines do not end in CRLF: $(od -c "$T/out" | head -n 2)"
"$PYTHON" -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["ID", "Name", "Node", "Created", "Last used", "Revoked"], rows[0]
assert any(r[1] == "rack 4, \"left\"" for r in rows[1:]), rows' "$T/out" ||
  fail "agent token list --csv does not read back: $(cat "$T/out")"
run 0 agent token list --csv --no-headers
hasnt "$T/out" "ID,Name"
run 0 project list --csv
has "$T/out" "Project,Department,GPU Quota,Allocated GPUs,GPU Allocation Ratio,Quota Backed"
has "$T/out" "team-a,research,2.50,0.00,0.00%,yes"
# the default department follows the cluster where it has no quota: a100
# has no nodes, so it deserves nothing there
run 0 project create too-big --node-pool a100 --gpu-quota 1
run 0 project list --csv
has "$T/out" "too-big,default,1.00,0.00,0.00%,no: a100 1.00>0.00"
run 0 project delete too-big -y
run 0 department list --csv
has "$T/out" "Department,GPU Quota,Allocated GPUs,GPU Allocation Ratio"
run 0 node list --csv
has "$T/out" "Node,Status,Node Pool,GPU Type,GPUs,Allocated GPUs,Free GPUs"
[ "$(grep -c ',Ready,default,' "$T/out")" = 2 ] || fail "node list --csv: $(cat "$T/out")"
run 0 nodepool list --csv
has "$T/out" "Node Pool,Status,Nodes,GPUs,Allocated GPUs,Free GPUs,Placement (GPU/CPU)"
has "$T/out" "a100,Empty,0,0,0.00,0.00,fragmentation/binpack"
run 0 access-rule list --csv
has "$T/out" "ID,Subject,Subject Type,Role,Scope"
has "$T/out" ",alice@example.com,user,Viewer,department research"
run 2 project list --csv --json
has "$T/err" "exclude each other"

# ---- the runai v1 forms ----
run 0 submit v1a -i $QS --gpu 1 -p team-a
has "$T/err" "allot: 'submit' is a runai v1 form; running: allot training submit v1a -i $QS -g 1 -p team-a"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one line of notice: $(cat "$T/err")"
has "$T/out" "submitted training v1a to project team-a"
run 0 submit v1w -i $QS --gpu 0.5 -p team-a --interactive --preemptible -e A=1 -- sleep 1
has "$T/err" "running: allot workspace submit v1w -i $QS --gpu-portion-request 0.5 -p team-a -e A=1 --priority interactive-preemptible -- sleep 1"
W=$(api "/api/v1/workloads?filterBy=name==v1w" | jq -c '.workloads[0]')
is "$W" '[.type, .projectName, .priorityClassName, (.preemptible | tostring),
  (.workloadRequestedResources.gpu.request | tostring)] | join(" ")' \
  "Workspace team-a interactive-preemptible true 0.5"
wait_phases v1a=Running
run 0 list jobs -p team-a --csv
has "$T/err" "running: allot workload list -p team-a --csv"
has "$T/out" "v1a,Training,Running,team-a,Yes,1/1,1.00,1.00"
run 0 list jobs --all-projects --no-headers
has "$T/err" "running: allot workload list -A --no-headers"
has "$T/out" "v1w"
run 0 describe job v1a -p team-a -o json
has "$T/err" "running: allot workload describe v1a -p team-a -o json"
is "$(cat "$T/out")" '.workload.name' v1a
run 0 delete job v1a -p team-a
has "$T/err" "running: allot workload delete v1a -p team-a -y"
poll 20 sh -c "! '$ALLOT' workload list -A --no-headers </dev/null | grep -q '^v1a '" ||
  fail "v1a was not deleted: $("$ALLOT" workload list -A </dev/null)"
run 0 top node
has "$T/err" "running: allot node list"
run 2 bash v1w
has "$T/err" "the runai v1 command 'bash v1w' is not supported"
run 2 describe node gpu-01
has "$T/err" "allot has no node describe"
run 2 submit v1x -i $QS --gpu 1 --jupyter
has "$T/err" "the runai v1 flag --jupyter is not supported"
run 2 submit v1x -i $QS --gpu 1.5
has "$T/err" "--gpu wants whole GPUs"
[ "$(api '/api/v1/workloads?filterBy=name==v1x' | jq '.workloads | length')" = 0 ] ||
  fail "a refused v1 submit submitted"

# ---- project and department delete ----
run 1 department delete research -y
has "$T/err" "department research still holds projects team-a"
run 1 project delete team-a -y
has "$T/err" "project team-a still holds workloads"
has "$T/err" "v1w ("
run 0 project create short-lived --gpu-quota 0
run 2 project delete short-lived
has "$T/err" "add -y"
run 0 project delete short-lived -y
has "$T/out" "project short-lived deleted"
[ -z "$(project_json short-lived)" ] || fail "short-lived is still there"
run 1 project delete short-lived -y
has "$T/err" "no project named short-lived"

stop
echo "cli/admin: ok"
