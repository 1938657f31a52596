#!/bin/sh
# e2e_wide.sh: what a user may see is not limited by the size of a buffer.
# A Viewer of a department with 1,200 projects (the list query's SQL once
# lived in 4,096 bytes and past ~700 projects the list was a 400) lists and
# counts the workloads of the department's last project, and sees none of
# another department's.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start --demo --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
DEP=$(expect 201 POST /api/v1/org-unit/departments '{"name":"wide","resources":[]}' "$ADMIN" | jq -r .id)
OTHER=$(expect 201 POST /api/v1/org-unit/departments '{"name":"other","resources":[]}' "$ADMIN" | jq -r .id)

# 1,200 projects through one curl (one kept-alive connection)
N=1200
i=1
while [ $i -le $N ]; do
  printf 'url = "%s/api/v1/org-unit/projects"\nrequest = "POST"\n' "$URL"
  printf 'header = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\n' "$ADMIN"
  printf 'data = "{\\"name\\":\\"p%d\\",\\"parentId\\":\\"%s\\"}"\n' "$i" "$DEP"
  printf 'output = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
  [ $i -lt $N ] && printf 'next\n'
  i=$((i + 1))
done >"$T/projects.curl"
curl -s -K "$T/projects.curl" >"$T/codes"
[ "$(grep -c '^201$' "$T/codes")" = $N ] || fail "created $(grep -c '^201$' "$T/codes") of $N projects"
LAST=$(expect 200 GET "/api/v1/org-unit/projects?filterBy=name==p$N" "" "$ADMIN" | jq -r '.projects[0].id')
OP=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"o1\",\"parentId\":\"$OTHER\"}" "$ADMIN" | jq -r .id)
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"deep\",\"projectId\":\"$LAST\",
  \"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"elsewhere\",\"projectId\":\"$OP\",
  \"spec\":{\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null

PW=$(expect 201 POST /api/v1/users '{"email":"dv@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"dv@example.com\",
  \"subjectType\":\"user\",\"roleId\":6,\"scopeType\":\"department\",\"scopeId\":\"$DEP\"}" "$ADMIN" >/dev/null
DV=$(login dv@example.com "$PW")
L=$(expect 200 GET /api/v1/workloads "" "$DV")
[ "$(printf '%s' "$L" | jq -r '[.workloads[].name] | join(",")')" = deep ] || fail "department viewer sees: $L"
[ "$(expect 200 GET /api/v1/workloads/count "" "$DV" | jq .count)" = 1 ] || fail "department viewer count"
[ "$(expect 200 GET "/api/v1/workloads?filterBy=projectName==p$N" "" "$DV" | jq '.workloads | length')" = 1 ] \
  || fail "department viewer, filtered"
stop
echo "e2e_wide: ok"
