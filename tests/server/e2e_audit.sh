#!/bin/sh
# e2e_audit.sh: the audit log (GET /api/v1/audit/log and /log/file).
#   - a change that reached its handler is recorded with who made it, the
#     method, path, entity, status and client address: a project created
#     (201, Succeeded), a delete of a project that is not there (404,
#     Failed, its id), a sign-in (action sign-in, the login named); a
#     service account's change is subject_type App; reads are not recorded;
#   - filterBy, sortBy and sortOrder, offset and numberOfSamples (total,
#     next) work as the document says; the window (start, end) is required;
#   - the file is CSV (a header, quoted fields) or JSON;
#   - only a System administrator reads it (a Viewer gets 403);
#   - the rows outlive a restart.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"

start_admin --db "$T/audit.db" --simulate-nodes 1x2
W="start=2020-01-01T00:00:00Z&end=2100-01-01T00:00:00Z"
DEP=$(expect 200 GET /api/v1/org-unit/departments "" "$ADMIN" | jq -r '.departments[0].id')
PA=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"team-a\",\"parentId\":\"$DEP\",
  \"resources\":[]}" "$ADMIN" | jq -r .id)
expect 404 DELETE /api/v1/org-unit/projects/999999 "" "$ADMIN" >/dev/null
expect 200 GET /api/v1/org-unit/projects "" "$ADMIN" >/dev/null
SA=$(expect 201 POST /api/v1/service-accounts '{"name":"robot"}' "$ADMIN")
SA_ID=$(printf '%s' "$SA" | jq -r .id)
SA_SECRET=$(expect 200 POST "/api/v1/service-accounts/$SA_ID/secret" "" "$ADMIN" | jq -r .clientSecret)
SA_TOKEN=$(expect 200 POST /api/v1/token "{\"grantType\":\"client_credentials\",
  \"clientID\":\"$(printf '%s' "$SA" | jq -r .clientId)\",
  \"clientSecret\":\"$SA_SECRET\"}" | jq -r .accessToken)
expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$SA_ID\",
  \"subjectType\":\"service-account\",\"roleId\":2,\"scopeType\":\"department\",
  \"scopeId\":\"$DEP\"}" "$ADMIN" >/dev/null
expect 200 PUT "/api/v1/org-unit/projects/$PA" "{\"name\":\"team-a\",\"parentId\":\"$DEP\",
  \"description\":\"by robot\",\"resources\":[]}" "$SA_TOKEN" >/dev/null

rows() { expect 200 GET "/api/v1/audit/log?$W&$1" "" "$ADMIN"; }
has_update() { rows "filterBy=subject_type==App" | jq -e '.total >= 1' >/dev/null; }
poll 10 has_update || fail "the service account's change was not recorded"

ROW=$(rows "filterBy=entity_type==project,action==create" | jq -c '.logs[0]')
printf '%s' "$ROW" | jq -e --arg id "$PA" '.subject == "admin" and .subject_type == "User" and
  .http_method == "POST" and .url == "/api/v1/org-unit/projects" and .result == "Succeeded" and
  .http_status_code == 201 and .source_ip == "127.0.0.1" and .cluster_name == "allot"' \
  >/dev/null || fail "the project's creation: $ROW"
ROW=$(rows "filterBy=result==Failed,entity_type==project" | jq -c '.logs[0]')
printf '%s' "$ROW" | jq -e '.action == "delete" and .http_status_code == 404 and
  .entity_id == "999999"' >/dev/null || fail "the failed delete: $ROW"
ROW=$(rows "filterBy=subject_type==App" | jq -c '.logs[0]')
printf '%s' "$ROW" | jq -e --arg id "$PA" '.action == "update" and .http_method == "PUT" and
  .entity_id == $id and .subject != "admin"' >/dev/null || fail "the service account's PUT: $ROW"
rows "filterBy=entity_type==access-rule" | jq -e '.total == 1 and .logs[0].http_status_code == 201' \
  >/dev/null || fail "the access rule's creation"
rows "filterBy=action==sign-in,subject==admin" | jq -e '.total >= 1' >/dev/null ||
  fail "the admin's sign-in is not recorded"
rows "numberOfSamples=1000" | jq -e '[.logs[] | select(.http_method == "GET")] | length == 0' \
  >/dev/null || fail "a read was recorded"

# paging and order
TOTAL=$(rows "numberOfSamples=1000" | jq .total)
[ "$TOTAL" -ge 6 ] || fail "only $TOTAL rows"
P=$(rows "numberOfSamples=2&offset=1&sortBy=timestamp&sortOrder=desc")
printf '%s' "$P" | jq -e --argjson t "$TOTAL" '.total == $t and (.logs | length) == 2 and .next == 3
  and .logs == .audit_logs and .logs[0].timestamp >= .logs[1].timestamp' >/dev/null ||
  fail "page: $P"
FIRST=$(rows "numberOfSamples=1&sortOrder=asc" | jq -r '.logs[0].id')
LAST=$(rows "numberOfSamples=1&sortBy=timestamp&sortOrder=desc" | jq -r '.logs[0].id')
[ "$FIRST" != "$LAST" ] || fail "sortOrder changes nothing"
rows "numberOfSamples=1000&filterBy=timestamp<=2021-01-01T00:00:00Z" | jq -e '.total == 0' \
  >/dev/null || fail "a date filter"
# (a request without end breaks the document: asked with curl, not recorded for its check)
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/audit/log?start=2020-01-01T00:00:00Z" \
  -H "Authorization: Bearer $ADMIN")" = 400 ] || fail "no end is not a 400"
expect 400 GET "/api/v1/audit/log?$W&sortBy=password" "" "$ADMIN" >/dev/null

# the file
CSV=$(curl -sf "$URL/api/v1/audit/log/file?$W&numberOfSamples=1000" -H "Authorization: Bearer $ADMIN")
printf '%s\n' "$CSV" | head -n 1 | grep -q '^timestamp,subject,subject_type,source_ip,action' ||
  fail "CSV header: $CSV"
printf '%s\n' "$CSV" | grep -q '"admin","User","127.0.0.1","create","POST","/api/v1/org-unit/projects"' ||
  fail "CSV row: $CSV"
[ "$(printf '%s\n' "$CSV" | wc -l)" = $((TOTAL + 1)) ] || fail "CSV rows: $CSV"
curl -sf "$URL/api/v1/audit/log/file?$W&file_type=JSON&numberOfSamples=2" \
  -H "Authorization: Bearer $ADMIN" | jq -e 'length == 2 and .[0].tenant_id == "1"' >/dev/null ||
  fail "JSON file"

# only a System administrator reads it
VPW=$(expect 201 POST /api/v1/users '{"email":"vic@example.com"}' "$ADMIN" | jq -r .tempPassword)
expect 201 POST /api/v1/authorization/access-rules '{"subjectId":"vic@example.com",
  "subjectType":"user","roleId":6,"scopeType":"system"}' "$ADMIN" >/dev/null
VIC=$(login vic@example.com "$VPW")
expect 403 GET "/api/v1/audit/log?$W" "" "$VIC" >/dev/null
expect 403 GET "/api/v1/audit/log/file?$W" "" "$VIC" >/dev/null

# the rows outlive a restart (the queue is written at the stop)
stop
start --db "$T/audit.db" --simulate-nodes 1x2
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
rows "numberOfSamples=1000" | jq -e --argjson t "$TOTAL" '.total > $t' >/dev/null ||
  fail "rows lost across the restart"
echo "e2e_audit: ok"
