# lib.sh: helpers for the end-to-end tests: start allotd on a free
# loopback port in a temporary directory, call it with curl, clean up.
# Sourced by e2e.sh and e2e_crash.sh; ALLOTD is the binary.

set -eu
T=$(mktemp -d /tmp/allot-e2e-XXXXXX)
PID=""
export ALLOT_ADMIN_PASSWORD=e2e-admin-password

cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; [ -f "$T/log" ] && tail -n 30 "$T/log" >&2; exit 1; }

# start [allotd options...]: runs allotd in $T and waits for its port.
start() {
  rm -f "$T/port"
  (cd "$T" && exec "$ALLOTD" --listen 127.0.0.1:0 --port-file "$T/port" \
      --schedule-period-ms 100 "$@" >>"$T/log" 2>&1) &
  PID=$!
  i=0
  while [ ! -s "$T/port" ]; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "allotd did not start"
    kill -0 "$PID" 2>/dev/null || fail "allotd exited at start"
    sleep 0.05
  done
  URL="http://127.0.0.1:$(cat "$T/port")"
}

# stop: SIGTERM and wait for a clean exit.
stop() {
  kill -TERM "$PID"
  wait "$PID" || fail "allotd exited with status $? after SIGTERM"
  PID=""
}

# req METHOD PATH [BODY] [TOKEN]: prints the body, then the status on the last line.
req() {
  if [ -n "${3:-}" ]; then
    curl -s -X "$1" "$URL$2" -H 'Content-Type: application/json' \
      ${4:+-H "Authorization: Bearer $4"} --data-binary "$3" -w '\n%{http_code}'
  else
    curl -s -X "$1" "$URL$2" ${4:+-H "Authorization: Bearer $4"} -w '\n%{http_code}'
  fi
}

# expect STATUS METHOD PATH [BODY] [TOKEN]: checks the status, prints the body.
expect() {
  want=$1; shift
  out=$(req "$@")
  got=$(printf '%s\n' "$out" | tail -n 1)
  [ "$got" = "$want" ] || fail "$1 $2: status $got, wanted $want: $(printf '%s\n' "$out" | head -c 400)"
  printf '%s\n' "$out" | sed '$d'
}

# login USER PASSWORD: prints an access token (v1 JSON grant).
login() {
  expect 200 POST /api/v1/token \
    "{\"grantType\":\"password\",\"username\":\"$1\",\"password\":\"$2\"}" | jq -r .accessToken
}

# phase TOKEN NAME: the phase of workload NAME.
phase() {
  expect 200 GET "/api/v1/workloads?filterBy=name==$2" "" "$1" | jq -r '.workloads[0].phase'
}

# wait_phase TOKEN NAME PHASE: polls for up to 5 s.
wait_phase() {
  i=0
  while [ "$(phase "$1" "$2")" != "$3" ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "$2 did not reach $3 (is $(phase "$1" "$2"))"
    sleep 0.05
  done
}
