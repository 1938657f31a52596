# lib.sh: helpers for the client's end-to-end tests, sourced after
# tests/server/lib.sh (which starts allotd in $T and cleans up): run the
# client, check its output, compare it with golden files, wait for
# workload phases. ALLOT is the client; its config lives in $T.

export ALLOT_CONFIG="$T/config.json"
export ALLOT_CONNECT_TIMEOUT=2 ALLOT_TIMEOUT=10
# under the sanitizers a report must not pass for an expected exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
GOLDEN=$(cd "$(dirname "$0")" && pwd)/golden
QS=runai.jfrog.io/demo/quickstart  # the quick start's image

# admin_login: allot logs in to $URL as the admin (the password on stdin).
admin_login() {
  run_in "$ALLOT_ADMIN_PASSWORD" 0 login --url "$URL" --user admin --password-stdin
}

# start_demo: allotd --demo without a rate limit, and allot logged in to it
# as the admin.
start_demo() {
  start --demo --rate-limit 0
  admin_login
}

# demo_with PROJECT...: start_demo, each PROJECT created with a quota of 2
# GPUs, and TOKEN the admin's access token for the API.
demo_with() {
  start_demo
  for project in "$@"; do
    run 0 project create "$project" --gpu-quota 2
  done
  TOKEN=$(token)
}

# run STATUS ARGS...: allot ARGS with stdin not a terminal; stdout in
# $T/out, stderr in $T/err; the exit status must be STATUS.
run() {
  want=$1; shift
  rc=0
  "$ALLOT" "$@" </dev/null >"$T/out" 2>"$T/err" || rc=$?
  checked "$want" "$@"
}

# checked STATUS ARGS...: the exit status of the last run, and no
# sanitizer report.
checked() {
  want=$1; shift
  [ "$rc" = "$want" ] || fail "allot $*: exit $rc, wanted $want: $(cat "$T/err" "$T/out")"
  if grep -q 'Sanitizer\|runtime error:' "$T/err"; then fail "allot $*: $(cat "$T/err")"; fi
}

# run_in INPUT STATUS ARGS...: the same with INPUT as stdin.
run_in() {
  input=$1 want=$2; shift 2
  rc=0
  printf '%s\n' "$input" | "$ALLOT" "$@" >"$T/out" 2>"$T/err" || rc=$?
  checked "$want" "$@"
}

# has FILE TEXT: FILE ($T/out or $T/err) contains TEXT.
has() {
  grep -qF -- "$2" "$1" || fail "no '$2' in $(basename "$1"): $(cat "$1")"
}

# hasnt FILE TEXT
hasnt() {
  if grep -qF -- "$2" "$1"; then fail "'$2' in $(basename "$1"): $(cat "$1")"; fi
}

# normalise: ids, times and the server's address, which change every run.
normalise() {
  sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/TIME/g' \
    -e "s#$URL#URL#g"
}

# golden NAME [FILE]: FILE (default $T/out), normalised, equals golden/NAME.
# ALLOT_GOLDEN_UPDATE=1 rewrites the golden file instead (refused under CI).
golden() {
  refuse_under_ci ALLOT_GOLDEN_UPDATE
  normalise <"${2:-$T/out}" >"$T/normalised"
  if [ -n "${ALLOT_GOLDEN_UPDATE:-}" ]; then
    cp "$T/normalised" "$GOLDEN/$1"
  fi
  diff -u "$GOLDEN/$1" "$T/normalised" >&2 ||
    fail "the output differs from golden/$1 (ALLOT_GOLDEN_UPDATE=1 rewrites it)"
}

# phases: "name=Phase ..." of every workload the client sees.
phases() {
  "$ALLOT" workload list -A --json </dev/null | jq -r '[.[] | "\(.name)=\(.phase)"] | join(" ")'
}

# have_phases NAME=PHASE...: the client sees every one of them.
have_phases() {
  got=" $(phases) "
  for want in "$@"; do
    case $got in *" $want "*) ;; *) return 1 ;; esac
  done
}

# wait_phases NAME=PHASE...: polls for up to 20 s.
wait_phases() {
  poll 20 have_phases "$@" || fail "waited for $*; have $(phases)"
}

# token: the access token the client keeps.
token() {
  jq -r .accessToken "$ALLOT_CONFIG"
}
