# lib.sh: what the packaging tests share: failing with the tail of the log
# they name, the tools they need, and waiting for an allotd they started
# to write its port. Sourced first; FAIL_LOG, if set, is the log a failure
# shows the end of.

set -eu

# fail MESSAGE: the test fails (with the last 20 lines of $FAIL_LOG).
fail() {
  echo "FAIL: $*" >&2
  if [ -n "${FAIL_LOG:-}" ] && [ -f "$FAIL_LOG" ]; then tail -n 20 "$FAIL_LOG" >&2; fi
  exit 1
}

# needs TOOL...: each is on PATH (scripts/install-deps.sh installs them).
needs() {
  for _tool in "$@"; do
    command -v "$_tool" >/dev/null 2>&1 ||
      fail "$_tool not found (scripts/install-deps.sh installs it)"
  done
}

# temp_dir NAME: T, a new folder /tmp/allot-NAME-XXXXXX, removed on the way
# out after the test's own test_cleanup, where it has one.
temp_dir() {
  T=$(mktemp -d "/tmp/allot-$1-XXXXXX")
  trap remove_temp_dir EXIT INT TERM
}
remove_temp_dir() {
  if command -v test_cleanup >/dev/null 2>&1; then test_cleanup; fi
  rm -rf "$T"
}

# wait_port FILE PID WHAT: the allotd PID writes its port to FILE within
# 10 s (WHAT names it in failures); PORT is that port.
wait_port() {
  _tries=0
  while [ ! -s "$1" ]; do
    _tries=$((_tries + 1)); [ $_tries -lt 200 ] || fail "$3 did not start"
    kill -0 "$2" 2>/dev/null || fail "$3 exited at start"
    sleep 0.05
  done
  PORT=$(cat "$1")
}
