#!/bin/sh
# authz_bodies.sh: what each role is answered, not only with which status
# (authz_matrix.sh checks those): every list and count holds exactly what
# the role may see, a filter cannot reach past it, and a batch action on
# workloads of several projects reports each item the caller may not
# touch as refused and leaves that workload as it was.
#
# The cast (authz_lib.sh): dept-a/team-a and dept-b/team-b; wa1, wa2 run
# in team-a, wb1 in team-b.
ALLOTD=$1
. "$(dirname "$0")/authz_lib.sh"

tokens_of_roles
submit() { # NAME PROJECT: a 1-GPU training; prints its id
  expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$2\",
    \"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" | jq -r .workloadId
}
WA1=$(submit wa1 "$PA")
WA2=$(submit wa2 "$PA")
WB1=$(submit wb1 "$PB")
for w in wa1 wa2 wb1; do wait_phase "$ADMIN" $w Running; done

# ---- lists and counts ----
# ROLE PATH JQ WANT: the names JQ picks from the answer, sorted and joined
# with commas (or the count), must be WANT; "403" wants that status.
BAD=0
while read -r role path pick want; do
  case $role in '#'*|'') continue ;; esac
  eval "tok=\$TOK_$role"
  if [ "$want" = 403 ]; then
    expect 403 GET "$path" "" "$tok" >/dev/null
    continue
  fi
  got=$(expect 200 GET "$path" "" "$tok" | jq -r "[$pick] | map(tostring) | sort | join(\",\")")
  [ -n "$got" ] || got=-
  if [ "$got" != "$want" ]; then
    echo "MISMATCH: $role GET $path: $got, wanted $want" >&2
    BAD=$((BAD + 1))
  fi
done <<'EOF'
# role      path                                              pick                   want
admin       /api/v1/workloads                                  .workloads[].name      wa1,wa2,wb1
deptadmin   /api/v1/workloads                                  .workloads[].name      wa1,wa2
editor      /api/v1/workloads                                  .workloads[].name      wa1,wa2
researcher  /api/v1/workloads                                  .workloads[].name      wa1,wa2
mleng       /api/v1/workloads                                  .workloads[].name      wa1,wa2
viewer      /api/v1/workloads                                  .workloads[].name      wa1,wa2
norule      /api/v1/workloads                                  -                      403
admin       /api/v1/workloads/count                            .count                 3
deptadmin   /api/v1/workloads/count                            .count                 2
researcher  /api/v1/workloads/count                            .count                 2
viewer      /api/v1/workloads/count                            .count                 2
norule      /api/v1/workloads/count                            -                      403
researcher  /api/v1/workloads?filterBy=projectName==team-b     .workloads[].name      -
researcher  /api/v1/workloads/count?filterBy=projectName==team-b .count               0
deptadmin   /api/v1/workloads?filterBy=name==wb1               .workloads[].name      -
viewer      /api/v1/workloads?filterBy=name=@w                 .workloads[].name      wa1,wa2
admin       /api/v1/org-unit/projects                          .projects[].name       team-a,team-b
deptadmin   /api/v1/org-unit/projects                          .projects[].name       team-a
editor      /api/v1/org-unit/projects                          .projects[].name       team-a
researcher  /api/v1/org-unit/projects                          .projects[].name       team-a
viewer      /api/v1/org-unit/projects                          .projects[].name       team-a
norule      /api/v1/org-unit/projects                          -                      403
admin       /api/v1/org-unit/projects/count                    .count                 2
deptadmin   /api/v1/org-unit/projects/count                    .count                 1
researcher  /api/v1/org-unit/projects/count                    .count                 1
researcher  /api/v1/org-unit/projects?filterBy=name==team-b    .projects[].name       -
admin       /api/v1/org-unit/departments                       .departments[].name    default,dept-a,dept-b
deptadmin   /api/v1/org-unit/departments                       .departments[].name    dept-a
editor      /api/v1/org-unit/departments                       .departments[].name    -
researcher  /api/v1/org-unit/departments                       .departments[].name    -
viewer      /api/v1/org-unit/departments                       .departments[].name    -
admin       /api/v1/org-unit/departments/count                 .count                 3
deptadmin   /api/v1/org-unit/departments/count                 .count                 1
researcher  /api/v1/org-unit/departments/count                 .count                 0
admin       /api/v1/users                                      .[].username           admin,deptadmin@example.com,editor@example.com,mleng@example.com,norule@example.com,researcher@example.com,viewer@example.com
deptadmin   /api/v1/users                                      -                      403
researcher  /api/v1/users                                      -                      403
deptadmin   /api/v1/authorization/access-rules                 .accessRules[].subjectId deptadmin@example.com,editor@example.com,mleng@example.com,researcher@example.com,viewer@example.com
researcher  /api/v1/authorization/access-rules                 -                      403
researcher  /api/v1/authorization/me/access-rules              .accessRules.accessRules[].subjectId researcher@example.com
norule      /api/v1/authorization/me/access-rules              .accessRules.accessRules[].subjectId -
EOF
[ "$BAD" = 0 ] || fail "$BAD lists or counts hold more or less than the role may see"

# ---- batch actions across projects ----
# batch TOKEN ACTION IDS...: prints "succeeded-names | failed-name:code ...",
# the ids replaced by the workloads' names
name_of() {
  case $1 in "$WA1") echo wa1 ;; "$WA2") echo wa2 ;; "$WB1") echo wb1 ;; "$NOID") echo no-such-id ;;
  *) echo "$1" ;; esac
}
batch() {
  tok=$1 action=$2
  shift 2
  ids=$(printf '"%s",' "$@")
  R=$(expect 200 POST /api/v1/workloads/batch "{\"ids\":[${ids%,}],\"action\":\"$action\"}" "$tok")
  ok="" refused=""
  for id in $(printf '%s' "$R" | jq -r '.succeeded[]'); do ok="$ok $(name_of "$id")"; done
  for f in $(printf '%s' "$R" | jq -r '.failed[] | "\(.id):\(.code)"'); do
    refused="$refused $(name_of "${f%:*}"):${f##*:}"
  done
  echo "${ok# } |${refused}"
}

# want_batch WANT TOKEN ACTION IDS...: the batch's answer must be WANT
want_batch() {
  want=$1
  shift
  got=$(batch "$@")
  [ "$got" = "$want" ] || fail "batch $2 as $(role_of "$1"): \"$got\", wanted \"$want\""
}
role_of() {
  for r in admin deptadmin editor researcher mleng viewer norule; do
    eval "[ \"\$TOK_$r\" = \"\$1\" ]" && { echo $r; return; }
  done
  echo unknown
}

# submit_unseen_project_is_403: a researcher of team-a submitting to team-b
# and to a project that does not exist gets the same 403 and the same body,
# so a submission tells no one which projects exist; the admin is told 400
for pid in "$PB" 987654; do
  for route in trainings submissions; do
    body="{\"name\":\"peek\",\"projectId\":\"$pid\",\"spec\":{}}"
    [ $route = submissions ] && body="{\"type\":\"Training\",${body#\{}"
    expect 403 POST "/api/v1/workloads/$route" "$body" "$TOK_researcher" |
      jq -r .details >>"$T/unseen"
  done
done
[ "$(sort -u "$T/unseen" | wc -l)" = 1 ] || fail "submissions to unseen projects differ: $(cat "$T/unseen")"
expect 400 POST /api/v1/workloads/trainings '{"name":"peek","projectId":"987654","spec":{}}' \
  "$ADMIN" >/dev/null

# a viewer may change nothing: the route itself is refused
expect 403 POST /api/v1/workloads/batch "{\"ids\":[\"$WA1\"],\"action\":\"suspend\"}" "$TOK_viewer" \
  >/dev/null
# a researcher of team-a: team-b's workload is refused as not found, and runs on
want_batch "wa1 | wb1:404" "$TOK_researcher" delete "$WA1" "$WB1"
# a department administrator of dept-a: the same across departments
want_batch "wa2 | wb1:404" "$TOK_deptadmin" suspend "$WA2" "$WB1"
# no token, or no rule: no batch either
expect 401 POST /api/v1/workloads/batch "{\"ids\":[\"$WB1\"],\"action\":\"delete\"}" >/dev/null
expect 403 POST /api/v1/workloads/batch "{\"ids\":[\"$WB1\"],\"action\":\"delete\"}" "$TOK_norule" \
  >/dev/null
# an unknown id beside a good one
NOID=00000000-0000-4000-8000-000000000000
want_batch "wa2 | no-such-id:404" "$ADMIN" resume "$WA2" "$NOID"

wait_phase "$ADMIN" wa2 Running
[ "$(expect 200 GET /api/v1/workloads/count "" "$ADMIN" | jq .count)" = 2 ] || fail "wa1 was not deleted"
[ "$(expect 200 GET "/api/v1/workloads/$WA1" "" "$ADMIN" | jq -r '.deletedAt != null')" = true ] ||
  fail "wa1 was not deleted"
# wb1 ran through every refused batch: Running, on its node, with no event
# but its own start
[ "$(phase "$ADMIN" wb1)" = Running ] || fail "wb1 is $(phase "$ADMIN" wb1) after refused batches"
EV=$(expect 200 GET "/api/v1/workloads/$WB1/events" "" "$ADMIN" | jq -r '[.events[].reason] | join(",")')
[ "$EV" = "Submitted,Running" ] || fail "wb1's events after refused batches: $EV"
stop
echo "authz_bodies: ok"
