#!/bin/sh
# run.sh TARGET SECONDS SEED-DIR...
#
# Runs one libFuzzer target: first every file of the SEED-DIRs (the
# committed seed corpus, regression inputs included), then mutations for
# SECONDS. New inputs go to a scratch directory, never into a SEED-DIR;
# FUZZ_CORPUS names a directory to keep them in instead (scripts/fuzz.sh).
# FUZZ_SEED fixes libFuzzer's random seed and FUZZ_RUNS stops it after
# that many inputs (SECONDS then only caps a slow machine): the test
# suite's runs, the same inputs every time. Without them the seed is
# random and the run lasts SECONDS (scripts/fuzz.sh).
# FUZZ_OPTIONS adds libFuzzer options. A crash, a sanitizer
# report, a leak, a timeout (10 s for one input) or running out of memory
# fails it; the input that did it is kept as ./crash-<target>-* (the
# current directory) and its path printed.
set -eu
target=$1 seconds=$2
shift 2
name=$(basename "$target")
if [ ! -x "$target" ]; then
  echo "$name: $target is not built" >&2
  exit 1
fi
for seeds in "$@"; do
  if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
    echo "$name: no seeds in $seeds" >&2
    exit 1
  fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/allot-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
corpus=${FUZZ_CORPUS:-$work/new}
mkdir -p "$corpus"
fixed=
[ -n "${FUZZ_SEED:-}" ] && fixed="-seed=$FUZZ_SEED"
[ -n "${FUZZ_RUNS:-}" ] && fixed="$fixed -runs=$FUZZ_RUNS"
rc=0
# shellcheck disable=SC2086
"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$(pwd)/crash-$name-" $fixed ${FUZZ_OPTIONS:-} \
  "$corpus" "$@" >"$work/log" 2>&1 || rc=$?
grep -E '^(INFO: Seed:|INFO: seed corpus|#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added)' \
  "$work/log" || true
if [ "$rc" != 0 ]; then
  tail -n 60 "$work/log"
  echo "$name: FAILED (exit $rc); the input is in $(pwd)/crash-$name-*" >&2
  exit 1
fi
echo "$name: passed"
