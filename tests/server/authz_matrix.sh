#!/bin/sh
# authz_matrix.sh: the authorization matrix: every role x every endpoint
# in authz_matrix.txt x own/other project against a real allotd; each cell
# must answer exactly the status the table says. The roles include a user
# whose roles differ by project (mixed: researcher on team-a, viewer on
# team-b), so a right held on one project cannot leak to another.
ALLOTD=$1
TABLE=$2
. "$(dirname "$0")/authz_lib.sh"

N=0
workload() { # PROJECT: a fresh training's id
  N=$((N + 1))
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"f$N\",\"projectId\":\"$1\",\"spec\":{}}" \
    "$ADMIN" | jq -r .workloadId
}
WSA=$(workload "$PA")
WSB=$(workload "$PB")
pod_of() { # WORKLOAD: the id of its first pod
  expect 200 GET "/api/v1/workloads/$1/pods" "" "$ADMIN" | jq -r '.pods[0].id'
}
PODA=$(pod_of "$WSA")
PODB=$(pod_of "$WSB")
tokens_of_roles
# mixed: roles that differ by project, researcher on team-a and viewer on
# team-b: on team-b it reads, and may not suspend or delete
pw=$(user mixed@example.com)
rule mixed@example.com 4 project "$PA" >/dev/null
rule mixed@example.com 6 project "$PB" >/dev/null
TOK_mixed=$(login mixed@example.com "$pw")
ROLES="admin deptadmin editor researcher mleng viewer norule anon mixed"

# the cells, each made and checked by authz_matrix.py (one process: the
# shell spent 25 ms of CPU on each of thousands of curl, sed and jq)
export URL ADMIN PA PB DA DB WSA WSB PODA PODB POOL
for role in $ROLES; do eval "export TOK_$role"; done
COUNTS=$("$PYTHON" "$(dirname "$0")/authz_matrix.py" "$TABLE" "$T") ||
  fail "authz_matrix.py could not check the table"
# mixed's batch on team-b is a 200 (it may write on team-a): each id fails
N=900000
W=$(workload "$PB")
expect 200 POST /api/v1/workloads/batch "{\"ids\":[\"$W\"],\"action\":\"delete\"}" "$TOK_mixed" |
  jq -e --arg w "$W" '.succeeded == [] and .failed[0].id == $w' >/dev/null ||
  fail "mixed (viewer on team-b) deleted a workload of team-b through the batch route"
expect 200 GET "/api/v1/workloads/$W" "" "$ADMIN" | jq -e '.deletedAt == null' >/dev/null ||
  fail "a workload of team-b was deleted by its viewer"
stop
CELLS=${COUNTS% *} BAD=${COUNTS#* }
[ "$BAD" = 0 ] || fail "$BAD of $CELLS cells differ from the table"
echo "authz_matrix: ok ($CELLS cells)"
