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

# fixture KIND PROJECT DEPARTMENT WANT: sets FX (the id) and UN (a user
# name). A call the table expects to be refused (401, 403) leaves the
# object as it was, so it reuses the last fixture of its kind and project.
LAST=""
fixture() {
  N=$((N + 1))
  if [ "$1" != - ] && [ "$4" -ge 400 ] && [ "$LAST" = "$1$2" ]; then return; fi
  LAST="$1$2"
  FX=""
  UN="u$N@example.com"
  case $1 in
  W) FX=$(workload "$2") ;;
  Q) FX=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"q$N\",\"parentId\":\"$3\",
       \"resources\":[]}" "$ADMIN" | jq -r .id) ;;
  U) user "$UN" >/dev/null
     FX=$(expect 200 GET /api/v1/users "" "$ADMIN" | jq -r ".[] | select(.username == \"$UN\") | .id") ;;
  R) user "$UN" >/dev/null; FX=$(rule "$UN" 6 project "$2") ;;
  esac
}

subst() { # TEXT PROJECT DEPARTMENT STANDING-WORKLOAD [ITS-POD]
  printf '%s' "$1" | sed -e "s|{WSPOD}|${5:-}|g" -e "s|{P}|$2|g" -e "s|{D}|$3|g" -e "s|{WS}|$4|g" -e "s|{W}|$FX|g" \
    -e "s|{Q}|$FX|g" -e "s|{U}|$FX|g" -e "s|{R}|$FX|g" -e "s|{UN}|$UN|g" -e "s|{N}|$N|g" \
    -e "s|{POOL}|$POOL|g"
}

call() { # METHOD PATH TOKEN [BODY]: prints the status, records the exchange
  if [ "$3" = - ]; then auth=""; else auth="Authorization: Bearer $3"; fi
  if [ -n "${4:-}" ]; then
    c_out=$(http_send "$1" "$URL$2" ${auth:+-H "$auth"} -H 'Content-Type: application/json' -d "$4")
  else
    c_out=$(http_send "$1" "$URL$2" ${auth:+-H "$auth"})
  fi
  record "$1" "$2" "${c_out##*
}" "${c_out%
*}"
  printf '%s' "${c_out##*
}"
}

CELLS=0
BAD=0
check() { # FX METHOD PATH BODY SIDE WANT x 9: one side (own/other) of a row
  fx=$1 method=$2 path=$3 body=$4 side=$5
  shift 5
  if [ "$side" = own ]; then p=$PA d=$DA ws=$WSA wp=$PODA; else p=$PB d=$DB ws=$WSB wp=$PODB; fi
  if [ "$fx" = - ]; then check_batch "$@"; return; fi
  for role in $ROLES; do
    want=$1
    shift
    eval "tok=\$TOK_$role"
    fixture "$fx" "$p" "$d" "$want"
    data=""
    [ "$body" = - ] || data=$(subst "$body" "$p" "$d" "$ws")
    case $path in
    *'{'*) url=$(subst "$path" "$p" "$d" "$ws" "$wp") ;;
    *) url=$path ;;
    esac
    got=$(call "$method" "$url" "$tok" "$data")
    CELLS=$((CELLS + 1))
    [ "$want" -ge 400 ] || LAST="" # it may have used the fixture up
    if [ "$got" != "$want" ]; then
      echo "MISMATCH: $role $method $path ($side project): got $got, want $want" >&2
      BAD=$((BAD + 1))
    fi
  done
}

# check_batch WANT x 9: check's cells of a row without a fixture, the nine
# calls made in order by one curl (--next: one request each, each with its
# own method, token and body, on one connection), each answer recorded as
# call records it: a curl process a call cost more CPU than the rest of
# the test together.
check_batch() {
  wants="$*"
  set --
  i=0
  for role in $ROLES; do
    i=$((i + 1))
    eval "tok=\$TOK_$role"
    fixture - "$p" "$d" 0
    data=""
    [ "$body" = - ] || data=$(subst "$body" "$p" "$d" "$ws")
    case $path in
    *'{'*) url=$(subst "$path" "$p" "$d" "$ws" "$wp") ;;
    *) url=$path ;;
    esac
    eval "url_$i=\$url"
    rm -f "$T/b.$JOB.$i"
    [ $i = 1 ] || set -- "$@" --next
    set -- "$@" -s -o "$T/b.$JOB.$i" -w '%{http_code}\n' -X "$method" "$URL$url"
    [ "$tok" = - ] || set -- "$@" -H "Authorization: Bearer $tok"
    [ -z "$data" ] || set -- "$@" -H 'Content-Type: application/json' --data-binary "$data"
  done
  gots=$(curl "$@")
  set -- $gots
  [ $# = $i ] || { echo "MISMATCH: $method $path ($side project): $# answers to $i calls" >&2; BAD=$((BAD + 1)); }
  i=0 parts=""
  for want in $wants; do
    i=$((i + 1))
    got=${1:-000}
    [ $# = 0 ] || shift
    eval "url=\$url_$i"
    if [ "$got" != 000 ]; then
      printf '\036%s %s %s\n' "$method" "$url" "$got" >"$T/h.$JOB.$i"
      parts="$parts $T/h.$JOB.$i"
      [ ! -e "$T/b.$JOB.$i" ] || parts="$parts $T/b.$JOB.$i"
      parts="$parts $T/nl"
    fi
    CELLS=$((CELLS + 1))
    [ "$want" -ge 400 ] || LAST=""
    if [ "$got" != "$want" ]; then
      role=$(echo $ROLES | cut -d' ' -f$i)
      echo "MISMATCH: $role $method $path ($side project): got $got, want $want" >&2
      BAD=$((BAD + 1))
    fi
  done
  [ -z "$parts" ] || cat $parts >>"$EXCHANGES"
}
echo >"$T/nl"

# rows in four parallel jobs (their fixture names never collide)
grep -v '^#' "$TABLE" | grep -v '^ *$' >"$T/rows"
run_rows() { # JOB: every fourth row from JOB, counts into $T/count.JOB
  N=$(($1 * 100000))
  JOB=$1
  EXCHANGES="$T/exchanges.$1"
  j=0
  while read -r fx method path body a1 a2 a3 a4 a5 a6 a7 a8 a9 bar b1 b2 b3 b4 b5 b6 b7 b8 b9; do
    j=$((j + 1))
    [ $((j % 4)) = "$1" ] || continue
    [ "$bar" = "|" ] || { echo "MISMATCH: bad row: $fx $method $path" >&2; BAD=$((BAD + 1)); }
    check "$fx" "$method" "$path" "$body" own $a1 $a2 $a3 $a4 $a5 $a6 $a7 $a8 $a9
    check "$fx" "$method" "$path" "$body" other $b1 $b2 $b3 $b4 $b5 $b6 $b7 $b8 $b9
  done <"$T/rows"
  echo "$CELLS $BAD" >"$T/count.$1"
}
JOBS=""
for job in 0 1 2 3; do
  run_rows $job &
  JOBS="$JOBS $!"
done
for job in $JOBS; do wait "$job"; done
# mixed's batch on team-b is a 200 (it may write on team-a): each id fails
N=900000
W=$(workload "$PB")
expect 200 POST /api/v1/workloads/batch "{\"ids\":[\"$W\"],\"action\":\"delete\"}" "$TOK_mixed" |
  jq -e --arg w "$W" '.succeeded == [] and .failed[0].id == $w' >/dev/null ||
  fail "mixed (viewer on team-b) deleted a workload of team-b through the batch route"
expect 200 GET "/api/v1/workloads/$W" "" "$ADMIN" | jq -e '.deletedAt == null' >/dev/null ||
  fail "a workload of team-b was deleted by its viewer"
stop
CELLS=$(cat "$T"/count.* | awk '{ s += $1 } END { print s }')
BAD=$(cat "$T"/count.* | awk '{ s += $2 } END { print s }')
[ "$BAD" = 0 ] || fail "$BAD of $CELLS cells differ from the table"
echo "authz_matrix: ok ($CELLS cells)"
