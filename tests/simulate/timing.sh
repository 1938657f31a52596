#!/bin/sh
# timing.sh ALLOT DIR: --timing adds one line per schedule step,
# "timing: SCENARIO step N: P passes, first pass X ms, total Y ms", in step
# order, before the summary; with --json the reports carry a "timing" list.
set -u
allot=$1 dir=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
ms='[0-9]+\.[0-9]{3} ms'

"$allot" simulate --timing "$dir/scenarios/schedule.json" >"$out"
rc=$?
[ "$rc" = 0 ] || fail "exit status $rc"
[ "$(wc -l <"$out")" = 3 ] || fail "expected two timing lines and the summary"
line="first pass $ms, total $ms"
sed -n 1p "$out" | grep -Eq "^timing: driver-schedule step 1: [0-9]+ passes, $line\$" ||
    fail "first timing line"
sed -n 2p "$out" | grep -Eq "^timing: driver-schedule step 2: 3 passes, $line\$" ||
    fail "second timing line (exactly 3 cycles)"
sed -n 3p "$out" | grep -qx '1 passed, 0 failed' || fail "summary line"

"$allot" simulate --json --timing "$dir/scenarios/schedule.json" >"$out"
rc=$?
[ "$rc" = 0 ] || fail "--json --timing exit status $rc"
[ "$(wc -l <"$out")" = 1 ] || fail "--json --timing: expected one line"
num='[0-9.e+-]+'
entry="\\{\"index\":1,\"passes\":[0-9]+,\"firstPassMs\":$num,\"totalMs\":$num\\}"
grep -Eq "\"timing\":\\[$entry,\\{\"index\":2,\"passes\":3," "$out" ||
    fail "--json --timing: no timing list"
echo ok
