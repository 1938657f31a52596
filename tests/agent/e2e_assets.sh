#!/bin/sh
# e2e_assets.sh: a workload submitted from assets and from a template runs,
# on allotd and a real agent on loopback, with what they say (docs/allotd.md,
# "Assets" and "Workload templates"):
#   1. from an environment (command, environment variables, one taken from
#      a credential), a compute resource, a host-path data source and a
#      password credential, named by name and by id, with the submission's
#      spec over them: the process sees the environment's command with the
#      spec's args, the variables (the spec's value where both give one),
#      the host path's data, and the credential's values, which no answer
#      carries;
#   2. from a template of those assets with its own spec, and the
#      submission's over it: the process sees the three layers.
ALLOTD=$1
AGENT=$2
. "$(dirname "$0")/lib_agent.sh"

start_cluster node-1:1
P=$(project team-assets 1)
A=/api/v1/asset

cat >"$T/see.sh" <<'SH'
#!/bin/sh
o="$OUT/$ALLOT_WORKLOAD_NAME"
{
  echo "args=$*"
  echo "FROM_ENV=$FROM_ENV"
  echo "OVER=$OVER"
  echo "FROM_TEMPLATE=$FROM_TEMPLATE"
  echo "ENV_CRED=$ENV_CRED"
  echo "DB_CRED_USER=$DB_CRED_USER"
  echo "DB_CRED_PASSWORD=$DB_CRED_PASSWORD"
  echo "data=$(cat "$ALLOT_HOSTPATH_DATA/hello.txt")"
} >"$o.tmp"
mv "$o.tmp" "$o.seen"
SH
chmod +x "$T/see.sh"
mkdir -p "$T/data"
echo 42 >"$T/data/hello.txt"

asset() { # STATUS KIND-PATH NAME SPEC: a team-assets asset; prints its id
  expect "$1" POST "$A/$2" "{\"meta\":{\"name\":\"$3\",\"scope\":\"project\",\"projectId\":\"$P\"},
    \"spec\":$4}" "$ADMIN" | jq -r .meta.id
}
PW=$(asset 202 credentials/password db-cred '{"user":"alice","password":"s3cret-assets-pw"}')
ENV=$(asset 202 environment runner "{\"image\":\"busybox\",\"command\":\"$T/see.sh\",\"args\":\"env-args\",
  \"environmentVariables\":[{\"name\":\"FROM_ENV\",\"value\":\"env\"},{\"name\":\"OVER\",\"value\":\"env\"},
  {\"name\":\"ENV_CRED\",\"credential\":{\"assetId\":\"$PW\",\"key\":\"password\"}},
  {\"name\":\"OUT\",\"value\":\"$OUT\"}]}")
CMP=$(asset 202 compute cpu-only '{"gpuDevicesRequest":0,"cpuCoreRequest":0.1}')
HP=$(asset 202 datasource/host-path data "{\"path\":\"$T/data\",\"mountPath\":\"/data\"}")

# 1. from assets, the spec over them
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"from-assets\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"assets\":{\"environment\":\"runner\",\"compute\":\"$CMP\",
  \"datasources\":[{\"id\":\"$HP\",\"kind\":\"hostPath\"}],\"credentials\":[\"db-cred\"]},
  \"spec\":{\"args\":\"spec-args\",\"backoffLimit\":0,
  \"environmentVariables\":[{\"name\":\"OVER\",\"value\":\"spec\"}]}}" "$ADMIN" >/dev/null
wait_phase_long from-assets Completed
SEEN=$(cat "$OUT/from-assets.seen")
[ "$SEEN" = "args=spec-args
FROM_ENV=env
OVER=spec
FROM_TEMPLATE=
ENV_CRED=s3cret-assets-pw
DB_CRED_USER=alice
DB_CRED_PASSWORD=s3cret-assets-pw
data=42" ] || fail "the process from assets saw: $SEEN"
! expect 200 GET "/api/v1/workloads/trainings/$(wl_id from-assets)" "" "$ADMIN" | grep -q s3cret ||
  fail "a credential's value is answered"
! grep -q s3cret "$T/log" || fail "a credential's value is in allotd's log"

# 2. from a template made of those assets with its own spec, the
# submission's spec over it
TPL=$(expect 202 POST /api/v1/workload-templates/trainings "{\"meta\":{\"name\":\"see-tpl\",
  \"scopeType\":\"project\",\"scopeId\":\"$P\"},\"spec\":{\"args\":\"template-args\",\"backoffLimit\":0,
  \"environmentVariables\":[{\"name\":\"FROM_TEMPLATE\",\"value\":\"tpl\"},{\"name\":\"OVER\",\"value\":\"tpl\"}]},
  \"assets\":{\"environment\":\"$ENV\",\"compute\":\"$CMP\",\"datasources\":[{\"id\":\"$HP\",\"kind\":\"hostPath\"}]}}" \
  "$ADMIN" | jq -r .meta.id)
expect 202 POST /api/v1/workloads/trainings "{\"name\":\"from-template\",\"projectId\":\"$P\",
  \"clusterId\":\"$CLUSTER\",\"templateId\":\"$TPL\",
  \"spec\":{\"environmentVariables\":[{\"name\":\"OVER\",\"value\":\"spec\"}]}}" "$ADMIN" >/dev/null
wait_phase_long from-template Completed
SEEN=$(cat "$OUT/from-template.seen")
[ "$SEEN" = "args=template-args
FROM_ENV=env
OVER=spec
FROM_TEMPLATE=tpl
ENV_CRED=s3cret-assets-pw
DB_CRED_USER=
DB_CRED_PASSWORD=
data=42" ] || fail "the process from a template saw: $SEEN"
finish node-1
echo "PASS"
