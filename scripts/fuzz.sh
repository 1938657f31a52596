#!/bin/sh
# Runs the libFuzzer targets of tests/fuzz for longer than the test suite
# does (a fixed number of inputs from a fixed seed there), one after the
# other, each from a random seed, and prints each one's executions and
# executions per second.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   default 600 s, every target
#
# Builds BUILD_DIR (default build/) first; the targets are built there only
# when clang and its libFuzzer runtime are installed (scripts/install-deps.sh).
# The inputs each run adds to its corpus are kept in BUILD_DIR/fuzz/corpus/
# TARGET, so a later run goes on from them. An input that crashes is left as
# ./crash-TARGET-* and the run stops with status 1: add it to
# tests/fuzz/corpus/TARGET/ as regress-WHAT together with the fix.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
seconds=${1:-600}
[ $# -gt 0 ] && shift
targets=${*:-fuzz_workload_body fuzz_quantity fuzz_query fuzz_token fuzz_scenario fuzz_agent
  fuzz_trace fuzz_allotd_config fuzz_cli_config fuzz_http_reply}
./scripts/build.sh
for t in $targets; do
  seeds="tests/fuzz/corpus/$t"
  [ "$t" = fuzz_scenario ] && seeds="$seeds tests/scenarios ../shared/scenarios"
  echo "== $t, $seconds s"
  # shellcheck disable=SC2086
  FUZZ_CORPUS="$BUILD_DIR/fuzz/corpus/$t" \
    sh tests/fuzz/run.sh "$BUILD_DIR/fuzz/$t" "$seconds" $seeds
done
