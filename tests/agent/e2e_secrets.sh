#!/bin/sh
# e2e_secrets.sh: named secrets (Run:ai's generic-secret credentials), on
# allotd and a real agent on loopback:
#   1. an administrator stores a secret in a project; its value reaches a
#      pod's process as an environment variable ({"secret": {name, key}});
#   2. the value is in no API answer (the secret's list and get, the
#      workload as answered), in no log (allotd's, the agent's), and in no
#      column of the SQLite file in clear text (grep the file and its WAL);
#      the pod's spec file on the node is the owner's only (0600);
#   3. a viewer of the project can neither read nor create secrets; a
#      researcher reads keys only and cannot create;
#   4. an unknown secret or key is a 400 naming it; a secret a live
#      workload's environmentVariables use is not deleted (412 naming the
#      workload); a deleted secret's submission is refused;
#   5. allotd refuses to start on a database holding secrets without the
#      secrets key;
#   6. a user credential is a secret its submitter created: its value
#      reaches the creator's pod, another user's submission naming it is
#      refused, a live workload holds it; a configMap entry is refused with
#      the reason.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

S=/api/v1/asset/credentials/generic-secret
VALUE="pw-$$-Xq7zv9-kept-out-of-sight"
OTHER="tok-$$-Lm3pr8-second-value"

start --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
cluster_ids "$ADMIN"
[ "$(stat -c %a "$T/allot.db.secrets.key")" = 600 ] || fail "the secrets key is not 0600"
agent_token node-1
agent node-1 --gpus 1 --address 127.0.0.7
until_ok 20 is_status node-1 Ready || fail "node-1 is not Ready"
P=$(project team-s 1)

as_role() { # NAME ROLE: a token of a new user holding that role on team-s
  pw=$(expect 201 POST /api/v1/users "{\"email\":\"$1@example.com\"}" "$ADMIN" | jq -r .tempPassword)
  expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$1@example.com\",
    \"subjectType\":\"user\",\"roleId\":$2,\"scopeType\":\"project\",\"scopeId\":\"$P\"}" \
    "$ADMIN" >/dev/null
  login "$1@example.com" "$pw"
}
VIEWER=$(as_role viewer 6)
RESEARCHER=$(as_role researcher 4)

# 1: the secret, and a pod that shows what it was given
BODY="{\"meta\":{\"name\":\"db-creds\",\"scope\":\"project\",\"projectId\":\"$P\"},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"PASSWORD\",\"value\":\"$VALUE\"},
  {\"key\":\"TOKEN\",\"value\":\"$OTHER\"}]}}"
expect 403 POST $S "$BODY" "$VIEWER" >/dev/null
expect 403 POST $S "$BODY" "$RESEARCHER" >/dev/null
A=$(expect 202 POST $S "$BODY" "$ADMIN")
ID=$(printf '%s' "$A" | jq -r .meta.id)
[ "$(printf '%s' "$A" | jq -r '[.spec.keyValuePairs[].key] | join(",")')" = PASSWORD,TOKEN ] ||
  fail "the answer's keys: $A"
[ "$(printf '%s' "$A" | jq -r '.meta.kind + " " + .meta.scope + " " + .meta.projectName')" = \
  "genericSecret project team-s" ] || fail "the answer's meta: $A"
PSEQ=$(printf '%s' "$A" | jq -r .meta.projectId)
expect 409 POST $S "$BODY" "$ADMIN" >/dev/null
KEPT=$(expect 202 POST $S "{\"meta\":{\"name\":\"kept\",\"scope\":\"project\",\"projectId\":$PSEQ},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"K\",\"value\":\"$OTHER\"}]}}" "$ADMIN" | jq -r .meta.id)
expect 400 POST $S "{\"meta\":{\"name\":\"bad\",\"scope\":\"project\",\"projectId\":\"$P\"},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"a b\",\"value\":\"x\"}]}}" "$ADMIN" >/dev/null
expect 400 POST $S "{\"meta\":{\"name\":\"bad\",\"scope\":\"project\",\"projectId\":\"$P\"},
  \"spec\":{\"existingSecretName\":\"x\"}}" "$ADMIN" >/dev/null

cat >"$T/show.sh" <<'SH'
#!/bin/sh
printf '%s\n' "$DB_PASSWORD" >"$OUT/$ALLOT_WORKLOAD_NAME.secret"
i=0; while [ ! -e "$OUT/$ALLOT_WORKLOAD_NAME.go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
SH
chmod +x "$T/show.sh"
training() { # NAME SECRET KEY [TOKEN [STATUS]]: submits; prints the answer
  expect "${5:-202}" POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$T/show.sh\",
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"},
    {\"name\":\"DB_PASSWORD\",\"secret\":{\"name\":\"$2\",\"key\":\"$3\"}}]}}" "${4:-$ADMIN}"
}
WID=$(training uses-secret db-creds PASSWORD "$RESEARCHER" | jq -r .workloadId)
until_ok 30 test -s "$OUT/uses-secret.secret" || fail "the pod wrote nothing: $(events_of uses-secret)"
[ "$(cat "$OUT/uses-secret.secret")" = "$VALUE" ] ||
  fail "the pod saw '$(cat "$OUT/uses-secret.secret")'"
SPEC=$(find "$T/node-1" -name spec.json | head -n 1)
[ -n "$SPEC" ] || fail "no pod spec on the node"
[ "$(stat -c %a "$SPEC")" = 600 ] || fail "the pod's spec file has mode $(stat -c %a "$SPEC")"
: >"$OUT/uses-secret.go"
wait_phase_long uses-secret Completed

# 2: in no answer
ANSWERS=$(expect 200 GET $S "" "$ADMIN"; expect 200 GET "$S/$ID" "" "$ADMIN"
          expect 200 GET "$S?projectId=$PSEQ" "" "$RESEARCHER"; expect 200 GET "$S/$ID" "" "$RESEARCHER"
          expect 200 GET "/api/v1/workloads/$WID" "" "$ADMIN"
          expect 200 GET "/api/v1/workloads/trainings/$WID" "" "$ADMIN"
          expect 200 GET "/api/v1/workloads?filterBy=name==uses-secret" "" "$ADMIN")
[ "$(expect 200 GET "$S?projectId=$PSEQ" "" "$RESEARCHER" | jq '.entries | length')" = 2 ] ||
  fail "the researcher does not see the project's two secrets"
printf '%s' "$ANSWERS" | grep -q PASSWORD || fail "the answers do not name the key"
printf '%s' "$ANSWERS" | grep -q -e "$VALUE" -e "$OTHER" && fail "an answer holds a value"
grep -rl -e "$VALUE" -e "$OTHER" "$T"/exchanges* && fail "a recorded exchange holds a value"

# 3: a viewer reads nothing
expect 403 GET $S "" "$VIEWER" >/dev/null
expect 403 GET "$S/$ID" "" "$VIEWER" >/dev/null
expect 403 PUT "$S/$ID" '{"meta":{"description":"x"}}' "$RESEARCHER" >/dev/null
expect 403 DELETE "$S/$ID" "" "$RESEARCHER" >/dev/null
[ "$(expect 202 PUT "$S/$ID" '{"meta":{"description":"the database"}}' "$ADMIN" |
     jq -r '.meta.description + " " + (.meta.updateCount | tostring)')" = "the database 2" ] ||
  fail "the description did not change"

# 4: unknown secrets and keys, and a deleted secret
D=$(training r1 no-such PASSWORD "$ADMIN" 400 | jq -r .details)
printf '%s' "$D" | grep -q "no secret named no-such" || fail "unknown secret: $D"
D=$(training r2 db-creds NOPE "$ADMIN" 400 | jq -r .details)
printf '%s' "$D" | grep -q "secret db-creds has no key NOPE" || fail "unknown key: $D"
# a secret a live workload's environmentVariables use is not deleted: 412 naming it
training holds db-creds TOKEN "$ADMIN" >/dev/null
until_ok 30 test -s "$OUT/holds.secret" || fail "holds wrote nothing: $(events_of holds)"
D=$(expect 412 DELETE "$S/$ID" "" "$ADMIN")
printf '%s' "$D" | jq -r .details | grep -q "used by the environment variables of live workloads: holds (project team-s)" ||
  fail "the 412 does not name holds: $D"
expect 412 DELETE "$S/$ID" "" "$ADMIN" | jq -r .details | grep -q uses-secret &&
  fail "the completed uses-secret holds the secret"
: >"$OUT/holds.go"
wait_phase_long holds Completed
expect 204 DELETE "$S/$ID" "" "$ADMIN" >/dev/null
expect 404 GET "$S/$ID" "" "$ADMIN" >/dev/null
expect 404 DELETE "$S/$ID" "" "$ADMIN" >/dev/null
D=$(training r3 db-creds PASSWORD "$ADMIN" 400 | jq -r .details)
printf '%s' "$D" | grep -q "no secret named db-creds" || fail "deleted secret: $D"

# 6: a user credential ({"userCredential": {name, key}}) is a secret its
# submitter created: it reaches the creator's pod; anyone else's submission
# naming it is a 400 naming its creator; it is held like a secret (412)
MINE=$(expect 202 POST $S "{\"meta\":{\"name\":\"my-cred\",\"scope\":\"project\",\"projectId\":\"$P\"},
  \"spec\":{\"keyValuePairs\":[{\"key\":\"PASSWORD\",\"value\":\"$OTHER\"}]}}" "$ADMIN" | jq -r .meta.id)
credential() { # NAME CREDENTIAL KEY TOKEN STATUS: submits; prints the answer
  expect "$5" POST /api/v1/workloads/trainings "{\"name\":\"$1\",\"projectId\":\"$P\",
    \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"$T/show.sh\",
    \"environmentVariables\":[{\"name\":\"OUT\",\"value\":\"$OUT\"},
    {\"name\":\"TESTRUN\",\"value\":\"$T\"},
    {\"name\":\"DB_PASSWORD\",\"userCredential\":{\"name\":\"$2\",\"key\":\"$3\"}}]}}" "$4"
}
D=$(credential u1 my-cred PASSWORD "$RESEARCHER" 400 | jq -r .details)
printf '%s' "$D" | grep -q "credential my-cred that project team-s sees was created by admin, not by researcher@example.com" ||
  fail "another user's credential: $D"
D=$(credential u2 my-cred NOPE "$ADMIN" 400 | jq -r .details)
printf '%s' "$D" | grep -q "userCredential.key: secret my-cred has no key NOPE" || fail "unknown key: $D"
D=$(credential u3 nobodys PASSWORD "$ADMIN" 400 | jq -r .details)
printf '%s' "$D" | grep -q "userCredential.name: project team-s has no secret named nobodys" ||
  fail "unknown credential: $D"
credential uses-cred my-cred PASSWORD "$ADMIN" 202 >/dev/null
until_ok 30 test -s "$OUT/uses-cred.secret" || fail "uses-cred wrote nothing: $(events_of uses-cred)"
[ "$(cat "$OUT/uses-cred.secret")" = "$OTHER" ] ||
  fail "the pod saw '$(cat "$OUT/uses-cred.secret")' from its user credential"
expect 412 DELETE "$S/$MINE" "" "$ADMIN" | jq -r .details | grep -q "uses-cred (project team-s)" ||
  fail "a credential a live workload uses was not held"
expect 200 GET "/api/v1/workloads?filterBy=name==uses-cred" "" "$ADMIN" | grep -q -e "$OTHER" &&
  fail "the workload's answer holds the credential's value"
: >"$OUT/uses-cred.go"
wait_phase_long uses-cred Completed
# a config map: allot has none, and says why
D=$(expect 400 POST /api/v1/workloads/trainings "{\"name\":\"cm\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"spec\":{\"image\":\"busybox\",\"command\":\"true\",
  \"environmentVariables\":[{\"name\":\"X\",\"configMap\":{\"name\":\"c\",\"key\":\"k\"}}]}}" \
  "$ADMIN" | jq -r .details)
printf '%s' "$D" | grep -q "configMap is not supported: a config map is a Kubernetes ConfigMap" ||
  fail "the config map's refusal: $D"

# 2, the rest: no log, no clear text in the database
stop_agent node-1
stop
for f in "$T/log" "$T/node-1.log"; do
  ! grep -q -a -e "$VALUE" -e "$OTHER" "$f" || fail "$f holds a value"
done
for f in "$T"/allot.db*; do
  ! grep -q -a -e "$VALUE" -e "$OTHER" "$f" || fail "$f holds a value in clear"
done
[ "$(sqlite3 "$T/allot.db" "SELECT count(*) FROM secrets WHERE entries LIKE '%\"K\":\"1:%'")" = 1 ] ||
  fail "the kept secret's value is not sealed: $(sqlite3 "$T/allot.db" 'SELECT entries FROM secrets')"

# 5: no key, no start (the database holds the secrets 'kept' and 'my-cred')
mv "$T/allot.db.secrets.key" "$T/moved.key"
rc=0
(cd "$T" && "$ALLOTD" --db "$T/allot.db" --listen 127.0.0.1:0 >"$T/nokey.log" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "allotd started without the secrets key"
grep -q "holds 2 secrets but the secrets key .* is missing" "$T/nokey.log" ||
  fail "the refusal says: $(cat "$T/nokey.log")"
mv "$T/moved.key" "$T/allot.db.secrets.key"
start --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
expect 200 GET "$S/$KEPT" "" "$ADMIN" >/dev/null
echo "PASS"
