#!/bin/sh
# runai_forms.sh ALLOTD ALLOT: the commands as Run:ai users type them,
# against a real allotd --demo (2 nodes x 2 GPUs), each effect read back
# through the API:
#   - the GPU columns of workload list: a pending workload holds 0 GPUs
#     (GPU Allocation) and asks for its request (GPU Request);
#   - login USER and runai's login user -u USER;
#   - runai config project NAME (the default project);
#   - submit --name, in the v1 form and the v2 one;
#   - v1 submit --command "python ..." (the command line as the value);
#   - describe NAME without job, --show-events, describe project NAME;
#   - delete --all (v1: no question; v2: -y or a terminal);
#   - version with the server's.
# The usage errors of these forms (--password refused, did you mean ...)
# are in usage.sh.
ALLOTD=$1
ALLOT=$2
. "$(dirname "$0")/../server/lib.sh"
. "$(dirname "$0")/lib.sh"

# api PATH: the API's answer to GET PATH, as the logged-in user.
api() {
  expect 200 GET "$1" "" "$(token)"
}
# wl NAME: the API's workload NAME.
wl() {
  api "/api/v1/workloads?filterBy=name==$1" | jq -c '.workloads[0]'
}
# is JSON FILTER WANT: jq -r FILTER of JSON is WANT.
is() {
  got=$(printf '%s\n' "$1" | jq -r "$2")
  [ "$got" = "$3" ] || fail "$2 is '$got', wanted '$3' in $1"
}

start --demo --rate-limit 0

# ---- login with a user name ----
run_in "$ALLOT_ADMIN_PASSWORD" 0 login admin --url "$URL" --password-stdin
has "$T/out" "logged in to $URL as admin"
run_in "$ALLOT_ADMIN_PASSWORD" 0 login user -u admin --password-stdin
has "$T/out" "logged in to $URL as admin"
run 2 login --user admin --password "$ALLOT_ADMIN_PASSWORD"
has "$T/err" "use --password-stdin"
hasnt "$T/err" "$ALLOT_ADMIN_PASSWORD"

# ---- config project: the default project ----
run 0 project create team-a --gpu-quota 2
run 0 config project team-a
has "$T/err" "allot: 'config' is a runai v1 form; running: allot project set team-a"
has "$T/out" "project team-a configured successfully"
[ "$(jq -r .project "$ALLOT_CONFIG")" = team-a ] || fail "config project kept no default"

# ---- GPU columns: a pending workload holds nothing ----
run 0 training submit big -i $QS -g 8
run 0 training submit --name a1 -i $QS -g 1
has "$T/out" "submitted training a1 to project team-a"
wait_phases a1=Running big=Pending
is "$(wl big)" '.allocatedResources.gpu' 0
run 0 workload list
has "$T/out" "GPU Request   GPU Allocation"
grep -Eq '^big +Training +Pending +team-a +Yes +0/1 +8\.00 +0\.00 *$' "$T/out" ||
  fail "big's GPU columns: $(cat "$T/out")"
grep -Eq '^a1 +Training +Running +team-a +Yes +1/1 +1\.00 +1\.00 *$' "$T/out" ||
  fail "a1's GPU columns: $(cat "$T/out")"
run 0 workload list --csv
has "$T/out" "Workload,Type,Status,Project,Preemptible,Running/Requested Pods,GPU Request,GPU Allocation"
has "$T/out" "big,Training,Pending,team-a,Yes,0/1,8.00,0.00"

# ---- v1 submit: --name, --command with the command line as its value ----
run 0 submit --name v1c -i $QS --command "python train.py --epochs 3 'a b'"
has "$T/err" "running: allot training submit --name v1c -i $QS --command -- python train.py --epochs 3 'a b'"
W=$(wl v1c)
is "$W" '.projectName' team-a
is "$(api "/api/v1/workloads/trainings/$(printf '%s' "$W" | jq -r .id)")" \
  '[.spec.command, .spec.args] | join("|")' "python|train.py --epochs 3 'a b'"
run 0 submit v1d -i $QS --command=sleep -- 100
has "$T/err" "running: allot training submit v1d -i $QS --command -- sleep 100"
run 0 submit v1e -i $QS --command -- sleep 100
has "$T/err" "running: allot training submit v1e -i $QS --command -- sleep 100"
for n in v1d v1e; do
  is "$(api "/api/v1/workloads/trainings/$(wl $n | jq -r .id)")" \
    '[.spec.command, .spec.args] | join("|")' "sleep|100"
done

# ---- describe NAME, --show-events, describe project ----
run 0 describe a1
has "$T/err" "running: allot workload describe a1"
has "$T/out" "Name:"
has "$T/out" "Events"
run 0 describe a1 --show-events --general
has "$T/out" "General"
has "$T/out" "Submitted"
hasnt "$T/out" "Compute Resources"
run 0 workload describe a1 --show-events
has "$T/out" "Compute Resources"
has "$T/out" "Submitted"
run 0 describe project team-a
has "$T/err" "running: allot project describe team-a"
has "$T/out" "Department:           default"
grep -Eq '^  default +2\.00 +none +1 +Normal +[0-9.]+ +1\.00 +9\.00 *$' "$T/out" ||
  fail "describe project: the pool's row: $(cat "$T/out")"
has "$T/out" "Workloads"
has "$T/out" "  5: "
has "$T/out" "1 Pending"
has "$T/out" "4 Running"
run 0 project describe team-a -o json
is "$(cat "$T/out")" '.name' team-a
run 0 department describe default
has "$T/out" "Projects"
has "$T/out" "team-a"

# ---- version ----
run 0 version
has "$T/out" "Client:  allot "
has "$T/out" "Server:  allotd "
has "$T/out" "at $URL"

# ---- delete --all ----
run 0 project create team-b --gpu-quota 1
run 0 training submit b1 -i $QS -g 1 -p team-b
run 2 training delete --all
has "$T/err" "add -y"
run 0 workspace delete --all -y
has "$T/out" "project team-a has no workspace workloads to delete"
run 0 training delete --all -y -p team-b
has "$T/out" "deleted 1 of 1 training workloads of project team-b"
run 0 delete --all
has "$T/err" "running: allot workload delete --all -y"
has "$T/out" "deleted 5 of 5 workloads of project team-a"
poll 20 sh -c "[ \"\$('$ALLOT' workload list -A --json </dev/null | jq length)\" = 0 ]" ||
  fail "delete --all left: $("$ALLOT" workload list -A </dev/null)"

stop
echo "cli/runai_forms: ok"
