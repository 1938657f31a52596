# lib.sh: helpers for the end-to-end tests: start allotd on a free
# loopback port in a temporary directory, call it over HTTP, wait with
# wall-clock deadlines, stop it cleanly, clean up. Sourced by the server,
# client, agent and browser shell tests; ALLOTD is the binary.
#
# Every allotd a test starts is stopped with SIGTERM and must exit 0 with
# no sanitizer report in its log: `stop` checks it, and a test that ends
# with its server still running gets the same stop on its way out (the
# test fails if that stop is not clean). A test that fails leaves with
# kill -9.
#
# Waits are deadlines in seconds of wall-clock time, multiplied by SCALE
# (ALLOT_TEST_SCALE, which ctest sets in a sanitizer build), never counts
# of retries.
#
# Every reply req (and so expect) gets is recorded in $EXCHANGES; when the
# script ends well, schema_check validates them all against Run:ai's
# OpenAPI document (runai_schema.py), and a reply that breaks it fails the
# test. Scripts that call in parallel give each job its own EXCHANGES.
# With ALLOT_EXCHANGES_KEEP set to a folder, the recorded exchanges are
# copied there on the way out (runai_schema.py can be run on them by hand).
#
# With ALLOT_TEST_DB=pg the test's allotd stores everything in a throwaway
# PostgreSQL (tests/pg/pg_lib.sh: started here, stopped on the way out):
# start and start_fault give allotd a PostgreSQL database for each file the
# test names with --db (one database per file name, so two files stay two
# databases), and the default one (PG_URI) where it names none, --demo
# included. ctest runs the suites that pass there as pg/server/<name>.

set -eu
T=$(mktemp -d /tmp/allot-e2e-XXXXXX)
PID=""
SCALE=${ALLOT_TEST_SCALE:-1}
CLEANING=""
export ALLOT_ADMIN_PASSWORD=e2e-admin-password
LIB_DIR=$(cd "$(dirname "$0")/../server" && pwd)
# Run:ai's OpenAPI document is NVIDIA's, under NVIDIA's licence: it is not
# part of allot; the tests read it from the shared reference folder beside
# the checkout (or ALLOT_RUNAI_OPENAPI).
RUNAI_OPENAPI="${ALLOT_RUNAI_OPENAPI:-$LIB_DIR/../../../shared/reference/runai-openapi.json}"
ALLOT_OPENAPI="$LIB_DIR/../../openapi/openapi.json"
EXCHANGES="$T/exchanges"
SCHEMA_CHECKED=""   # set once a script ran schema_check itself
# the python3 to run: ctest's ALLOT_TEST_PYTHON (cmake/testing.cmake says which)
PYTHON=${ALLOT_TEST_PYTHON:-python3}
# jq is ctest's ALLOT_TEST_JQ when that is gojq (cmake/testing.cmake): the
# same language at less than half the CPU a start. gojq always writes an
# object's keys sorted and has no -S, which is dropped from the options
# (-S alone, or after one other letter: -cS; gojq refuses any other -S).
case ${ALLOT_TEST_JQ:-} in
*gojq)
  jq() {
    _jq_n=$#
    while [ "$_jq_n" -gt 0 ]; do
      _jq_a=$1
      shift
      _jq_n=$((_jq_n - 1))
      case $_jq_a in
      -S) continue ;;
      -[a-zA-Z]S) _jq_a=${_jq_a%S} ;;
      esac
      set -- "$@" "$_jq_a"
    done
    "$ALLOT_TEST_JQ" "$@"
  } ;;
esac
# The yescrypt cost of the secrets every allotd and --init of a test hash
# (before the test's own options, which may set another): the cheapest, 3 ms
# of CPU a hash or sign-in where the default (5) takes 58 ms. Empty: the
# option is not given (the default). e2e_login_guard checks both.
SECRET_HASH_COST=1

# fail MESSAGE: the test fails (while cleaning up: says so and returns 1).
fail() {
  echo "FAIL: $*" >&2
  if [ -f "$T/log" ]; then tail -n 30 "$T/log" >&2; fi
  [ -z "$CLEANING" ] || return 1
  exit 1
}

# refuse_under_ci VAR: a switch that weakens a test is refused when CI is set.
refuse_under_ci() {
  eval "v=\${$1:-}"
  [ -z "$v" ] || [ -z "${CI:-}" ] || fail "$1 weakens this test and is refused when CI is set"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# uptime_cs: UPTIME_CS, the time since boot in hundredths of a second, read
# by the shell itself (no date, no subshell: the loops below ask for it
# every 50 ms). "1" before the hundredths keeps a leading 0 from reading
# as octal.
uptime_cs() {
  read -r _up _ </proc/uptime
  UPTIME_CS=$((${_up%.*} * 100 + 1${_up#*.} - 100))
}

# poll SECONDS CMD...: runs CMD (its output discarded, not its errors)
# until it succeeds, for at most SECONDS x SCALE of wall-clock time;
# returns 1 when the time is up.
poll() {
  uptime_cs
  _poll_end=$((UPTIME_CS + $1 * 100 * SCALE))
  shift
  while ! "$@" >/dev/null; do
    uptime_cs
    [ "$UPTIME_CS" -lt "$_poll_end" ] || return 1
    sleep 0.05
  done
}

# sanitizer_free FILE...: no AddressSanitizer, LeakSanitizer or UBSan
# report in the files (missing files are fine).
sanitizer_free() {
  for _f in "$@"; do
    [ -f "$_f" ] || continue
    if grep -qE 'ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:|SUMMARY: [A-Za-z]*Sanitizer' \
        "$_f"; then
      grep -E -A 20 'Sanitizer|runtime error:' "$_f" | head -n 60 >&2
      fail "a sanitizer reported in $_f" || return 1
    fi
  done
}

# exited PID: the process has ended (gone, or a zombie waiting for wait).
exited() {
  [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]
}

# stop_pid PID WHAT [LOG...]: SIGTERM to a child of this shell, then within
# 30 s it must exit with status 0, and no sanitizer may report in LOG.
stop_pid() {
  _pid=$1 _what=$2
  shift 2
  kill -TERM "$_pid" 2>/dev/null || { fail "$_what was not running when it was to stop"; return 1; }
  if ! poll 30 exited "$_pid"; then
    kill -9 "$_pid" 2>/dev/null || true
    fail "$_what did not stop within $((30 * SCALE)) s of SIGTERM"
    return 1
  fi
  _rc=0
  wait "$_pid" || _rc=$?
  [ "$_rc" = 0 ] || { fail "$_what exited with status $_rc after SIGTERM"; return 1; }
  sanitizer_free "$@"
}

# schema_check [runai_schema.py options...]: validates the recorded replies;
# returns 1 (after printing why) if one breaks Run:ai's document.
schema_check() {
  set -- "$RUNAI_OPENAPI" "$T"/exchanges* "$@"
  [ -e "$2" ] || return 0
  [ -s "$1" ] || { echo "FAIL: Run:ai's document is missing at $1 (ALLOT_RUNAI_OPENAPI)" >&2
                   return 1; }
  "$PYTHON" "$LIB_DIR/runai_schema.py" "$@" >"$T/schema.out" 2>&1 || {
    cat "$T/schema.out" >&2; echo "FAIL: replies above break Run:ai's OpenAPI document" >&2
    return 1; }
}

cleanup() {
  status=$?
  CLEANING=1
  set +e
  if [ "$status" = 0 ] && command -v test_cleanup >/dev/null 2>&1; then
    test_cleanup || status=1
  fi
  if [ "$status" = 0 ] && [ -n "$PID" ]; then
    stop || status=1
  fi
  if [ "$status" = 0 ]; then sanitizer_free "$T/log" || status=1; fi
  if [ -n "${ALLOT_EXCHANGES_KEEP:-}" ]; then
    for _f in "$T"/exchanges*; do
      [ ! -e "$_f" ] || cp "$_f" "$ALLOT_EXCHANGES_KEEP/$(basename "$0" .sh).$(basename "$_f")"
    done
  fi
  if [ "$status" = 0 ] && [ -z "$SCHEMA_CHECKED" ]; then schema_check || status=1; fi
  if command -v test_kill >/dev/null 2>&1; then test_kill; fi
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null; fi
  if [ -n "${PG_DIR:-}" ]; then pg_stop; fi
  rm -rf "$T"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if [ "${ALLOT_TEST_DB:-}" = pg ]; then
  . "$LIB_DIR/../pg/pg_lib.sh"
  pg_start
  trap cleanup EXIT # pg_start's own trap would skip the test's clean-up
fi

# pg_db_uri FILE: the URI of the PostgreSQL database standing for FILE
# (named after it, created on first use).
pg_db_uri() {
  _name=$(basename "$1" .db | tr -c 'a-z0-9_\n' _)
  if [ "$_name" != allot ] && [ ! -e "$T/pg-db-$_name" ]; then
    "$PG_BIN/createdb" -h "$PG_SOCK" -U allot "$_name" || fail "createdb $_name failed"
    : >"$T/pg-db-$_name"
  fi
  echo "postgresql:///$_name?host=$PG_SOCK&user=allot"
}

# pg_args [allotd options...]: PG_ARGS, the options quoted for eval, with
# every --db FILE mapped by pg_db_uri and --db "$PG_URI" first when they
# name none.
pg_args() {
  PG_ARGS="" _prev="" _has=""
  for _a in "$@"; do
    if [ "$_prev" = --db ]; then
      _a=$(pg_db_uri "$_a")
      _has=1
    fi
    _prev=$_a
    PG_ARGS="$PG_ARGS '$(printf %s "$_a" | sed "s/'/'\\\\''/g")'"
  done
  [ -n "$_has" ] || PG_ARGS="--db '$PG_URI'$PG_ARGS"
}

# init_db [allotd options...]: allotd creates a database only when asked
# (--init); without --demo, creates the one the options name (--db, or
# allot.db in $T) unless it is there already.
init_db() {
  case " $* " in *" --demo "*) return 0 ;; esac
  db=allot.db prev=""
  for a in "$@"; do
    [ "$prev" = --db ] && db=$a
    prev=$a
  done
  case $db in
    postgresql://*) # made once per database (a marker in $T says so)
      db="$T/pg-init-$(printf %s "$db" | sed 's|^postgresql:///||; s|?.*||')" ;;
    /*) ;;
    *) db="$T/$db" ;;
  esac
  [ -e "$db" ] && return 0
  (cd "$T" && ${RUN_AS:-} "$ALLOTD" --init \
     ${SECRET_HASH_COST:+--secret-hash-cost $SECRET_HASH_COST} "$@" >>"$T/log" 2>&1) ||
    fail "allotd --init $* failed"
  case $db in "$T"/pg-init-*) : >"$db" ;; esac
}

# start [allotd options...]: runs allotd in $T and waits for its port
# (creating its database first when there is none: init_db). RUN_AS, if
# set, is a command prefix (e.g. setpriv ...) allotd runs under;
# START_OPTS, options every start of the test gets (before its own).
start() {
  rm -f "$T/port"
  [ -z "${PG_URI:-}" ] || { pg_args "$@"; eval "set -- $PG_ARGS"; }
  init_db "$@"
  (cd "$T" && exec ${RUN_AS:-} "$ALLOTD" --listen 127.0.0.1:0 --port-file "$T/port" \
      --schedule-period-ms 100 ${SECRET_HASH_COST:+--secret-hash-cost $SECRET_HASH_COST} \
      ${START_OPTS:-} "$@" >>"$T/log" 2>&1) &
  PID=$!
  uptime_cs
  _poll_end=$((UPTIME_CS + 2000 * SCALE))
  while [ ! -s "$T/port" ]; do
    uptime_cs
    [ "$UPTIME_CS" -lt "$_poll_end" ] || fail "allotd did not start within $((20 * SCALE)) s"
    kill -0 "$PID" 2>/dev/null || fail "allotd exited at start"
    sleep 0.05
  done
  URL="http://127.0.0.1:$(cat "$T/port")"
}

# start_fault SPEC [allotd options...]: start with ALLOT_FAULT=SPEC (a
# test-only fault point of allotd, "" for none), where allotd may die at
# its fault point before it listens: waits until it listens or is gone.
start_fault() {
  _spec=$1
  shift
  rm -f "$T/port"
  [ -z "${PG_URI:-}" ] || { pg_args "$@"; eval "set -- $PG_ARGS"; }
  init_db "$@"
  (cd "$T" && ALLOT_FAULT=$_spec exec "$ALLOTD" --listen 127.0.0.1:0 --port-file "$T/port" \
    --schedule-period-ms 100 ${SECRET_HASH_COST:+--secret-hash-cost $SECRET_HASH_COST} "$@" \
    >>"$T/log" 2>&1) &
  PID=$!
  poll 20 _up_or_gone || fail "allotd did not start within $((20 * SCALE)) s"
  URL="http://127.0.0.1:$(cat "$T/port" 2>/dev/null || echo 1)"
}
_up_or_gone() { [ -s "$T/port" ] || exited "$PID"; }

# killed_at POINT [SECONDS]: allotd died of SIGKILL at its fault point POINT
# (within SECONDS, default 20).
killed_at() {
  poll "${2:-20}" exited "$PID" || fail "allotd did not reach the fault point $1 within $((${2:-20} * SCALE)) s"
  _rc=0
  wait "$PID" || _rc=$?
  PID=""
  [ "$_rc" = 137 ] || fail "allotd exited with $_rc, not by SIGKILL at $1"
  grep -q "fault point $1 reached" "$T/log" || fail "allotd died, but not at the fault point $1"
}

# refused_start PATTERN OPTION...: allotd run with the options refuses to
# start: it exits 2 and what it says matches PATTERN (grep; "" for anything).
refused_start() {
  _pattern=$1
  shift
  _rc=0
  (cd "$T" && "$ALLOTD" --db "$T/refused.db" "$@" >"$T/refused.log" 2>&1) || _rc=$?
  [ "$_rc" = 2 ] || fail "$*: exit $_rc, wanted 2"
  [ -z "$_pattern" ] || grep -q -- "$_pattern" "$T/refused.log" || fail "$*: $(cat "$T/refused.log")"
}

# dead_url: DEAD, the URL of a loopback port nobody listens on (a second
# allotd's, stopped cleanly).
dead_url() {
  init_db --db "$T/other.db"
  (cd "$T" && exec "$ALLOTD" --db "$T/other.db" --listen 127.0.0.1:0 --port-file "$T/closed" \
     >"$T/other.log" 2>&1) &
  _other=$!
  poll 20 test -s "$T/closed" || fail "the second allotd did not start"
  stop_pid "$_other" "the second allotd" "$T/other.log"
  DEAD="http://127.0.0.1:$(cat "$T/closed")"
}

# unavailable_url: UNAVAIL, the URL of a server that answers 503 to every
# request (unavailable.py: a replica that cannot serve), which appends a
# line per request to $T/u.count; UNAVAIL_PID is its pid (the test's
# test_kill stops it).
unavailable_url() {
  "$PYTHON" "$LIB_DIR/unavailable.py" "$T/u.port" "$T/u.count" &
  UNAVAIL_PID=$!
  poll 20 test -s "$T/u.port" || fail "the 503 server did not start"
  UNAVAIL="http://127.0.0.1:$(cat "$T/u.port")"
}

# stop: SIGTERM and wait for a clean exit (status 0, no sanitizer report).
stop() {
  stop_pid "$PID" allotd "$T/log" || return 1
  PID=""
}

# http_send METHOD URL [-H HEADER]... [--data-binary BODY]: prints the
# reply's body, then its status (000: no reply) on the last line, and fails
# as curl does when no reply came. ctest gives the tests http_req
# (ALLOT_TEST_HTTP), which takes the same arguments and whose start costs a
# tenth of curl's; by hand, curl sends.
http_send() {
  if [ -n "${ALLOT_TEST_HTTP:-}" ]; then
    "$ALLOT_TEST_HTTP" "$@"
  else
    curl -s -X "$@" -w '\n%{http_code}'
  fi
}

# req METHOD PATH [BODY] [TOKEN]: prints the body, then the status on the
# last line; records the exchange.
req() {
  if [ -n "${3:-}" ]; then
    r_out=$(http_send "$1" "$URL$2" -H 'Content-Type: application/json' \
      ${4:+-H "Authorization: Bearer $4"} --data-binary "$3")
  else
    r_out=$(http_send "$1" "$URL$2" ${4:+-H "Authorization: Bearer $4"})
  fi
  record "$1" "$2" "${r_out##*
}" "${r_out%
*}"
  printf '%s\n' "$r_out"
}

# record METHOD PATH STATUS BODY: appends an exchange to $EXCHANGES. A
# status of 000 (no reply: the server died or closed the connection) has
# nothing to check against the document; the caller's own check judges it.
record() {
  [ "$3" != 000 ] || return 0
  printf '\036%s %s %s\n%s\n' "$1" "$2" "$3" "$4" >>"$EXCHANGES"
}

# expect STATUS METHOD PATH [BODY] [TOKEN]: checks the status, prints the body.
# (The status and the body are cut out of req's output by the shell itself:
# a tail and a sed a call, thousands of calls a suite, cost seconds of CPU.)
expect() {
  want=$1; shift
  out=$(req "$@")
  got=${out##*
}
  [ "$got" = "$want" ] || fail "$1 $2: status $got, wanted $want: $(printf '%s\n' "$out" | head -c 400)"
  printf '%s\n' "${out%
*}"
}

# lead JSON PREFIX FILTER: where JSON starts with PREFIX (which ends with
# a string's opening quote), that string, cut out by the shell; otherwise
# what jq -r FILTER makes of JSON. allotd writes compact JSON in a fixed
# key order, so the helpers below read an id or a token this way rather
# than start a jq (20 ms of CPU) for it, and any other shape still goes
# through jq.
lead() {
  case $1 in
  "$2"*) _ld=${1#"$2"}; printf '%s\n' "${_ld%%\"*}" ;;
  *) printf '%s\n' "$1" | jq -r "$3" ;;
  esac
}

# login USER PASSWORD: prints an access token (v1 JSON grant).
login() {
  _tk=$(expect 200 POST /api/v1/token \
    "{\"grantType\":\"password\",\"username\":\"$1\",\"password\":\"$2\"}")
  lead "$_tk" '{"accessToken":"' .accessToken
}

# cluster_ids TOKEN: CLUSTER, the cluster's uuid, and POOL, the id of its
# first node pool, as TOKEN reads them.
cluster_ids() {
  CLUSTER=$(expect 200 GET /api/v1/clusters "" "$1")
  CLUSTER=$(lead "$CLUSTER" '[{"uuid":"' '.[0].uuid')
  POOL=$(expect 200 GET /api/v1/node-pools "" "$1")
  POOL=$(lead "$POOL" '{"nodepools":[{"id":"' '.nodepools[0].id')
}

# start_admin [allotd options...]: start, then ADMIN (the admin's access
# token), CLUSTER and POOL.
start_admin() {
  start "$@"
  ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
  cluster_ids "$ADMIN"
}

# quota_project NAME GPUS TOKEN [EXTRA-JSON-FIELDS]: a project of CLUSTER
# with GPUS deserved in POOL (no limit, over-quota weight 1); prints its id.
quota_project() {
  _qp=$(expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"clusterId\":\"$CLUSTER\",
    \"resources\":[{\"nodePool\":{\"id\":\"$POOL\",\"name\":\"default\"},
    \"gpu\":{\"deserved\":$2,\"limit\":-1,\"overQuotaWeight\":1}}]${4:+,$4}}" "$3")
  lead "$_qp" '{"id":"' .id
}

# org_department NAME GPUS: a department with GPUS deserved in POOL, made as
# ADMIN; prints its id.
org_department() {
  expect 201 POST /api/v1/org-unit/departments "{\"name\":\"$1\",\"resources\":[{\"nodePool\":
    {\"id\":\"$POOL\"},\"gpu\":{\"deserved\":$2}}]}" "$ADMIN" | jq -r .id
}

# dept_project NAME DEPARTMENT-ID: a project of that department with 4 GPUs
# deserved in POOL and no limit, made as ADMIN; prints its id.
dept_project() {
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$2\",\"resources\":
    [{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":4,\"limit\":-1}}]}" "$ADMIN" | jq -r .id
}

# workload_field TOKEN NAME KEY: KEY of workload NAME as the list answers
# it ("null" when there is none), for a string key written before any
# nested object: id, name, phase. Polls ask for phases every 50 ms, so the
# shell reads it, not jq (20 ms of CPU a start): allotd's list is
# {"workloads":[{"id":...}]} written without spaces, and a workload's first
# such key is its own (a name holding the words has its quotes escaped).
# Any other shape goes through jq.
workload_field() {
  _wf=$(expect 200 GET "/api/v1/workloads?filterBy=name==$2" "" "$1")
  case $_wf in
  '{"workloads":[{'*"\"$3\":\""*) _wf=${_wf#*\"$3\":\"}; printf '%s\n' "${_wf%%\"*}" ;;
  '{"workloads":[]'*) echo null ;;
  *) printf '%s\n' "$_wf" | jq -r ".workloads[0].$3" ;;
  esac
}

# phase TOKEN NAME: the phase of workload NAME; workload_id TOKEN NAME: its id.
phase() { workload_field "$1" "$2" phase; }
workload_id() { workload_field "$1" "$2" id; }

has_phase() { [ "$(phase "$1" "$2")" = "$3" ]; }

# run_trainings PROJECT-ID NAME...: one-GPU trainings of that project,
# submitted as ADMIN, each Running before it returns.
run_trainings() {
  _rt_p=$1
  shift
  for _rt in "$@"; do
    expect 202 POST /api/v1/workloads/trainings "{\"name\":\"$_rt\",\"projectId\":\"$_rt_p\",
      \"spec\":{\"image\":\"busybox\",\"compute\":{\"gpuDevicesRequest\":1}}}" "$ADMIN" >/dev/null
  done
  for _rt in "$@"; do wait_phase "$ADMIN" "$_rt" Running; done
}

# wait_phase TOKEN NAME PHASE: polls for up to 20 s.
wait_phase() {
  poll 20 has_phase "$1" "$2" "$3" || fail "$2 did not reach $3 (is $(phase "$1" "$2"))"
}
