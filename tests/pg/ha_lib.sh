# ha_lib.sh: two allotd replicas on one throwaway PostgreSQL, for the
# failover and fencing tests; sourced after ../server/lib.sh run with
# ALLOT_TEST_DB=pg (which starts the server and stops it on the way out).
#
#   replicas       starts A (lib.sh's start: PID, URL) and then B on the same
#                  database (PID_B, URL_B), and waits until A leads and B
#                  follows; both share $T's key file, so a token works on both;
#                  OPTS_A and OPTS_B, if set, are options of A or B alone
#   follower U P NAME [OPTS...]  starts a follower NAME (URL in U, pid in P,
#                  log $T/log-NAME) and waits until it follows
#   leads URL      the replica at URL says it leads (/healthz)
#   metric URL M   the value of metric M on the replica at URL (--metrics-listen
#                  is not used: the admin token reads /metrics)
#   project        makes project team (PROJ) with GPU quota for every node
#
# The test's test_kill (lib.sh calls it last) kills B (and C) whatever happened;
# A is lib.sh's own. ALLOT_HA_OPTS, if set, is added to both replicas'
# options (bench/ha/failover.sh: the leader lease's timings).

SIM="--simulate-nodes 16x8"
COMMON="--rate-limit 0 --user-rate-limit 0 --max-pending-per-project 0 --max-pending-per-user 0"
COMMON="$COMMON ${ALLOT_HA_OPTS:-}"
PID_B=""
PID_C=""

test_kill() {
  [ -z "$PID_B" ] || kill -CONT "$PID_B" 2>/dev/null || true
  [ -z "$PID_B" ] || kill -9 "$PID_B" 2>/dev/null || true
  [ -z "$PID_C" ] || kill -9 "$PID_C" 2>/dev/null || true
  [ -z "$PID" ] || kill -CONT "$PID" 2>/dev/null || true
}

leads() {
  [ "$(curl -s "$1/healthz" | jq -r .leader)" = true ]
}

follows() {
  [ "$(curl -s "$1/healthz" | jq -r .leader)" = false ]
}

metric() {
  curl -s "$1/metrics" -H "Authorization: Bearer $ADMIN" | awk -v m="$2" '$1 == m { print $2 }'
}

# follower URL_VAR PID_VAR NAME [OPTS...]: starts replica NAME on the
# database (its log $T/log-NAME) and waits until it follows.
follower() {
  _uvar=$1 _pvar=$2 _name=$3
  shift 3
  rm -f "$T/port-$_name"
  (cd "$T" && exec "$ALLOTD" --db "$PG_URI" --listen 127.0.0.1:0 --port-file "$T/port-$_name" \
     --schedule-period-ms 100 $SIM $COMMON "$@" >>"$T/log-$_name" 2>&1) &
  eval "$_pvar=\$!"
  poll 20 test -s "$T/port-$_name" || fail "replica $_name did not start: $(tail -n 5 "$T/log-$_name")"
  _url="http://127.0.0.1:$(cat "$T/port-$_name")"
  eval "$_uvar=\$_url"
  poll 20 follows "$_url" || fail "replica $_name does not follow: $(curl -s "$_url/healthz")"
}

replicas() {
  start $SIM $COMMON ${OPTS_A:-}
  poll 20 leads "$URL" || fail "replica A does not lead"
  follower URL_B PID_B b ${OPTS_B:-}
  ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
}

project() {
  cluster_ids "$ADMIN"
  PROJ=$(quota_project team 128 "$ADMIN")
}

# submit_to URL NAME: one 1-GPU training through the replica at URL;
# prints the status (000: no answer).
submit_to() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "$1/api/v1/workloads/trainings" \
    -H 'Content-Type: application/json' -H "Authorization: Bearer $ADMIN" \
    --data-binary "{\"name\":\"$2\",\"projectId\":\"$PROJ\",\"clusterId\":\"$CLUSTER\",
      \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":1}}}" || true
}

# phase_at URL NAME: the phase of workload NAME as the replica at URL reads it.
phase_at() {
  curl -s "$1/api/v1/workloads?filterBy=name==$2" -H "Authorization: Bearer $ADMIN" |
    jq -r '.workloads[0].phase'
}
running_at() { [ "$(phase_at "$1" "$2")" = Running ]; }

# double_booked: pods sharing a GPU of a node (none may), from the database.
double_booked() {
  pg_psql -c "SELECT count(*) FROM pods a JOIN pods b ON a.node_seq = b.node_seq
    AND (a.workload_seq < b.workload_seq OR (a.workload_seq = b.workload_seq AND a.idx < b.idx))
    AND (a.devices & b.devices) != 0"
}
