# whatif_lib.sh: helpers of the what-if end-to-end tests, on top of
# lib.sh: the cluster's state as the API shows it, what an answer of
# POST .../workloads/...?dryRun=true or POST /api/v1/whatif says the state
# will be, and a wait until the real cluster is in that state and stays
# there. ADMIN must hold a token that reads every workload.
#
# A state is a JSON object: workload name -> {phase, pods}, pods the sorted
# "NODE:DEVICE,DEVICE" of its placed pods; Initializing counts as Running
# (placed, an agent has yet to start it).

# state: the cluster's state now: the list, then every workload's pods in
# one curl (few processes: a loaded machine pays for each one).
state() {
  _list=$(expect 200 GET "/api/v1/workloads?limit=500" "" "$ADMIN")
  _urls=$(printf '%s' "$_list" | jq -r --arg u "$URL" '.workloads[] | "\($u)/api/v1/workloads/\(.id)/pods"')
  # shellcheck disable=SC2086
  { [ -z "$_urls" ] || curl -sf -H "Authorization: Bearer $ADMIN" $_urls; } |
    jq -cS -n --argjson l "$_list" '[inputs | .pods[] | select(.nodeName != null)] as $pods |
      $l.workloads | map(. as $w | {(.name): {
        phase: (if .phase == "Initializing" then "Running" else .phase end),
        pods: ([$pods[] | select(.workloadId == $w.id) |
                "\(.nodeName):\(.gpuDevices | map(tostring) | join(","))"] | sort)}}) | add // {}'
}

# predict STATE ANSWER: the state ANSWER says the next turn leaves.
PREDICT='
def pods: [.[] | "\(.nodeName):\(.gpuDevices | map(tostring) | join(","))"] | sort;
def submitted($a):
  if $a.dryRun then
    .[$a.name] = {phase: (if $a.wouldRun then "Running" else "Pending" end), pods: ($a.pods | pods)}
  else . end;
def changed($a):
  (reduce (($a.started // []) + ($a.moved // []))[] as $e (.;
     .[$e.name] = {phase: "Running", pods: ($e.pods | pods)}))
  | reduce (($a.stopped // []) + ($a.evictions // []))[] as $e (.;
     if $e.reason == "delete" then del(.[$e.name])
     elif $e.reason == "suspend" then .[$e.name] = {phase: "Stopped", pods: []}
     else .[$e.name] = {phase: "Pending", pods: ($e.pods | pods)} end);
$s | submitted($a) | changed($a)'
predict() { jq -cS -n --argjson s "$1" --argjson a "$2" "$PREDICT"; }

is_state() { [ "$(state)" = "$1" ]; }

# way PATH BODY: how the admin's what-if was answered, Server-Timing's desc:
# kept (on the scheduler's own state, forked) or copy (on a copy of it)
way() {
  curl -s -o /dev/null -D - -X POST "$URL$1" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $ADMIN" --data-binary "$2" | tr -d '\r' |
    sed -n 's/^Server-Timing: whatif;desc="\([a-z]*\)";dur=[0-9.]*, cpu;dur=[0-9.]*$/\1/p'
}

cycles() {
  curl -s "$URL/metrics" -H "Authorization: Bearer $ADMIN" |
    awk '$1 == "allot_sched_cycles_total" { print $2 }'
}
cycles_past() { [ "$(cycles)" -gt "$1" ]; }

# settled: three more scheduling passes have run (the last turn's are done).
settled() {
  _c=$(($(cycles) + 2))
  poll 20 cycles_past "$_c" || fail "the scheduler ran no pass for $((20 * SCALE)) s"
}

# reaches WANT WHAT: the cluster gets to state WANT and is still there
# three passes later.
reaches() {
  poll 20 is_state "$1" || fail "$2: the cluster is $(state), the answer said $1"
  settled
  is_state "$1" || fail "$2: the cluster left the state the answer said: $(state), not $1"
}
