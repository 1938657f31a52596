#!/bin/sh
# expect_failure.sh ALLOT DIR: a scenario whose expectations are wrong on
# purpose (DIR/failing.json) must exit 1 and print exactly DIR/failing.out
# (one line per failed check, then the summary), or DIR/failing.jsonl
# with --json.
set -u
allot=$1 dir=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$allot" simulate "$dir/failing.json" >"$out"
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, expected 1"; cat "$out"; exit 1; }
diff -u "$dir/failing.out" "$out" || { echo "FAIL: text output differs"; exit 1; }

"$allot" simulate --json "$dir/failing.json" >"$out"
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: --json exit status $rc, expected 1"; exit 1; }
diff -u "$dir/failing.jsonl" "$out" || { echo "FAIL: --json output differs"; exit 1; }
echo ok
