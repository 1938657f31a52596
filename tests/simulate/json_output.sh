#!/bin/sh
# json_output.sh ALLOT DIR: --json prints one JSON object per scenario, one
# per line, shaped {"scenario","steps":[{"index","ok","failures":[]}],
# "passed","failed"}, and no summary line; the exit status still says
# whether every check held.
set -u
allot=$1 dir=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

"$allot" simulate --json "$dir/scenarios/running-on.json" "$dir/failing.json" \
    "$dir/scenarios/schedule.json" >"$out"
rc=$?
[ "$rc" = 1 ] || fail "exit status $rc, expected 1"
[ "$(wc -l <"$out")" = 3 ] || fail "expected 3 lines"
step='\{"index":[0-9]+,"ok":(true|false),"failures":\[("[^"]*"(,"[^"]*")*)?\]\}'
counts='"passed":[0-9]+,"failed":[0-9]+'
shape="^\\{\"scenario\":\"[^\"]+\",\"steps\":\\[($step(,$step)*)?\\],$counts\\}\$"
[ "$(grep -Ec "$shape" "$out")" = 3 ] || fail "a line is not shaped as a scenario report"
passing='{"scenario":"driver-running-on","steps":[{"index":6,"ok":true,"failures":[]}],'
passing="$passing\"passed\":1,\"failed\":0}"
grep -qxF "$passing" "$out" || fail "the passing report is not as expected"
failing='{"index":4,"ok":false,"failures":["phases.a1: expected Completed, got Running",'
grep '^{"scenario":"deliberately-failing",' "$out" | grep -qF "$failing" ||
    fail "the failing report does not list its failures"
grep -q '"passed":1,"failed":1}$' "$out" || fail "the failing report does not count its steps"
grep -q 'passed, .* failed' "$out" && fail "--json printed a summary line"

"$allot" simulate --json "$dir/scenarios/schedule.json" >"$out"
rc=$?
[ "$rc" = 0 ] || fail "exit status $rc for a passing scenario"
echo ok
