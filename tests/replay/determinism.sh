#!/bin/sh
# determinism.sh ALLOT SHARED: a sample of the Alibaba trace (every twentieth
# node, the first 600 tasks), replayed with every policy, gangs, a faster
# clock and inflation, gives the same report files byte for byte twice,
# and with one thread as with several; the files are what they should be.
set -u
allot=$1 shared=$2
trace=$shared/traces/alibaba-gpu-v2023
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

[ -r "$trace/openb_pod_list_default.csv" ] || fail "no trace in $trace"
awk 'NR == 1 || NR % 20 == 2' "$trace/openb_node_list_gpu_node.csv" >"$tmp/nodes.csv"
head -n 601 "$trace/openb_pod_list_default.csv" >"$tmp/pods.csv"
args="--nodes $tmp/nodes.csv --pods $tmp/pods.csv --speedup 20 --gangs --inflate 1.0 --seed 7"

# shellcheck disable=SC2086
"$allot" replay $args --check --report "$tmp/a" >"$tmp/a.txt" 2>&1 || fail "run a: exit $?"
# shellcheck disable=SC2086
"$allot" replay $args --report "$tmp/b" --jobs 1 >"$tmp/b.txt" 2>&1 || fail "run b: exit $?"
# shellcheck disable=SC2086
"$allot" replay $args --report "$tmp/c" --jobs 4 >"$tmp/c.txt" 2>&1 || fail "run c: exit $?"
for x in b c; do
    cmp "$tmp/a.txt" "$tmp/$x.txt" || fail "the headline tables differ (a, $x)"
    diff -r "$tmp/a" "$tmp/$x" || fail "the report files differ (a, $x)"
done
for f in report.md report.json alloc.svg inflation.svg shares-fifo.svg shares-bestfit.svg \
    shares-allot.svg shares-allot-spread.svg; do
    [ -s "$tmp/a/$f" ] || fail "no $f"
done
for f in "$tmp"/a/*.svg; do
    head -n 1 "$f" | grep -q '^<?xml' || fail "$f is not an SVG file"
    tail -n 1 "$f" | grep -qx '</svg>' || fail "$f is not complete"
done
jq -e '.policies | length == 4' "$tmp/a/report.json" >/dev/null || fail "report.json: 4 runs"
jq -e '.inflation | length == 4' "$tmp/a/report.json" >/dev/null ||
    fail "report.json: 4 inflation runs"
jq -e '[.policies[].tasks | .arrived == .completed + .withdrawn + .rejected + .leftPending]
    | all' "$tmp/a/report.json" >/dev/null || fail "report.json: tasks do not add up"
jq -e '[.policies[].gpuAllocationPctSeries | length == 200] | all' "$tmp/a/report.json" \
    >/dev/null || fail "report.json: series of 200 points"
grep -q '^## Inflation' "$tmp/a/report.md" || fail "report.md has no inflation section"
# --seeds 7-8: one inflation per policy and seed; seed 7's are run a's, seed
# 8's differ, and each policy's summary is the mean of its two seeds
# shellcheck disable=SC2086
"$allot" replay $args --seeds 7-8 --report "$tmp/d" >/dev/null 2>&1 || fail "run d: exit $?"
jq -e '.inflation | length == 8' "$tmp/d/report.json" >/dev/null || fail "--seeds 7-8: 8 runs"
for p in fifo bestfit allot allot-spread; do
    run() { # FILE SEED: the inflation of policy $p and that seed
        jq -c --arg p "$p" --argjson s "$2" '.inflation[] | select(.policy == $p and .seed == $s)' "$1"
    }
    a7=$(run "$tmp/a/report.json" 7) d7=$(run "$tmp/d/report.json" 7) d8=$(run "$tmp/d/report.json" 8)
    [ -n "$a7" ] && [ "$a7" = "$d7" ] || fail "--seeds 7-8: $p seed 7 differs from --seed 7"
    [ -n "$d8" ] && [ "$d8" != "$d7" ] || fail "--seeds 7-8: $p seed 8 is seed 7's run"
    jq -e --arg p "$p" '([.inflation[] | select(.policy == $p) | .unallocatedGpusAt100] | add / 2)
        as $m | .inflationSummary[] | select(.policy == $p) | .seeds == 2 and
        ((.unallocatedGpusAt100.mean - $m) | fabs) < 1e-3' "$tmp/d/report.json" >/dev/null ||
        fail "--seeds 7-8: $p summary is not the mean of its seeds"
done
echo "ok: $(wc -l <"$tmp/pods.csv") task lines, same bytes three times; --seeds adds up"
