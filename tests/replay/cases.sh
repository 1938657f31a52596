#!/bin/sh
# cases.sh ALLOT DIR: small traces whose answers were worked out by hand,
# checked against report.json (numbers rounded to 3 decimals).
#
# hol.csv, one 4-GPU node, a cycle at every event, one project:
#   t1 3 GPUs [0,100); t2 2 GPUs arrives 10; t3 1 GPU arrives 20, runs 60;
#   t4 1 GPU arrives 200, runs 10. Window [0,200].
#   fifo: t2 blocks t3 until 100 -> waits 0,90,80,0; GPU-s 300+150+10.
#   allot: t3 passes t2 at 20 -> waits 0,90,0,0; busy [10,100) holds
#   3, 4, 3 GPUs -> 91.667%. Core calls: one per cycle (0, 10, 20, 80,
#   100, 200), and a second pass at 20 (t2 still pending after a BIND).
# period.csv, one 1-GPU node, period 10 s: a arrives 15 (cycle at 20),
#   runs 30; b arrives 16, starts at 50 when a ends -> waits 5 and 34.
# reclaim.csv, one 4-GPU node, quotas team-a 2, team-b 2: team-a runs 4
#   one-GPU tasks [0,1000); team-b asks 2 at 100 for 100 s; z0 at 1500.
#   fifo: team-b waits 900 s; busy [100,1000) with fair shares 2/2 and
#   x = (2, 0) -> Jain 0.5. allot: reclaim evicts 2 of team-a's at 100
#   (2 x 100 GPU-s lost), they rerun [200,1200); Jain 1.
# spread.csv, two 2-GPU nodes: x, y 1 GPU at 0; z 2 GPUs at 10. Bin-pack
#   and first fit put x and y on n1, so z starts at once; spread puts y
#   on n2, so z waits until y ends at 50.
# withdraw.csv, one 1-GPU node: q (never scheduled in the trace) is
#   withdrawn at 40, still pending; r starts at 100 and runs 130 s.
# gang.csv, two 1-GPU nodes: g asks 2 GPUs: no node has them (rejected)
#   unless --gangs makes it two one-GPU pods.
# spec.csv, nodes n1 (model A) and n2 (model B): u asks B, v any, w asks B
#   at 10: w waits for n2 until u ends at 100, whether models are pools or
#   node types (--pools single) -> waits 0, 0, 90.
# spec-any.csv, the same nodes: y asks B [0,100); x asks "B|A" at 10: B
#   is taken, A is free, so x starts at once in both layouts -> waits 0.
# one-task.csv, inflation x1.5 on one 2-GPU node: the third copy fails.
# racks.csv, four 2-GPU nodes n1-n4, --racks 2 (rack-0 n1 n2, rack-1 n3
#   n4): a and b (1 GPU) fill n1; the gang g (4 one-GPU pods at 10) then
#   takes n2 and n3 by bin-packing or first fit (two racks, one block of
#   8 racks), or rack-1 (n3, n4) when the pools have the topology
#   (bestfit). With --blocks 1 a block is a rack.
set -u
allot=$1 dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# run NAME ARGS...: the replay into $out/NAME, and its report flattened
# into $out/NAME.flat: one "POLICY PATH VALUE" line per number (inflation
# runs as "inflation-POLICY"), numbers rounded to 3 decimals.
run() {
    name=$1
    shift
    "$allot" replay --check --report "$out/$name" "$@" >"$out/$name.txt" 2>&1 ||
        { cat "$out/$name.txt"; fail "$name: exit status $?"; }
    jq -r '
        def flat($who): . as $r | paths(scalars) as $p
            | "\($who) \($p | map(tostring) | join(".")) \($r | getpath($p)
              | if type == "number" then (. * 1000 | round) / 1000 else . end)";
        (.policies[] | flat(.policy)), (.inflation[] | flat("inflation-" + .policy))' \
        "$out/$name/report.json" >"$out/$name.flat" || fail "$name: report.json is not JSON"
}

# expect NAME POLICY FIELD VALUE: a number of policy POLICY's report.
expect() {
    grep -qxF "$2 $3 $4" "$out/$1.flat" ||
        fail "$1: $2 .$3 is $(grep -F "$2 $3 " "$out/$1.flat" | cut -d' ' -f3), expected $4"
}

# expect_inflation NAME POLICY FIELD VALUE
expect_inflation() {
    expect "$1" "inflation-$2" "$3" "$4"
}

run hol --nodes "$dir/nodes-1x4.csv" --pods "$dir/hol.csv" --period-s 0 --projects 1
for p in fifo allot; do
    expect hol $p gpuAllocationPct 57.5
    expect hol $p busyPct 45
    expect hol $p jctSeconds.p95 140
    expect hol $p waitSeconds.p95 90
    expect hol $p preemptions 0
done
expect hol fifo waitSeconds.avg 42.5
expect hol fifo jctSeconds.avg 97.5
expect hol fifo busyAllocationPct 75
expect hol fifo busyUnallocatedGpus 1
expect hol allot waitSeconds.avg 22.5
expect hol allot jctSeconds.avg 77.5
expect hol allot busyAllocationPct 91.667
expect hol allot busyUnallocatedGpus 0.333
expect hol allot coreCalls 7
expect hol fifo coreCalls 0

run period --nodes "$dir/nodes-1x1.csv" --pods "$dir/period.csv" --policy fifo,allot
for p in fifo allot; do
    expect period $p waitSeconds.avg 19.5
    expect period $p waitSeconds.p95 34
    expect period $p jctSeconds.avg 39.5
    expect period $p jctSeconds.p95 44
done

run reclaim --nodes "$dir/nodes-1x4.csv" --pods "$dir/reclaim.csv" --period-s 0 \
    --quota-file "$dir/quota-ab.csv" --policy allot,fifo
expect reclaim fifo gpuAllocationPct 70
expect reclaim fifo busyPct 60
expect reclaim fifo jainWhenBusy.avg 0.5
expect reclaim fifo waitSeconds.avg 257.143
expect reclaim fifo waitSeconds.p95 900
expect reclaim fifo jctSeconds.avg 857.286
expect reclaim fifo projects.1.belowFairSharePct 100
expect reclaim fifo projects.1.fairShareGpusWhenBusy 2
expect reclaim fifo preemptions 0
expect reclaim allot gpuAllocationPct 73.333
expect reclaim allot busyPct 6.667
expect reclaim allot jainWhenBusy.avg 1
expect reclaim allot waitSeconds.avg 0
expect reclaim allot jctSeconds.avg 657.286
expect reclaim allot jctSeconds.p95 1200
expect reclaim allot preemptions 2
expect reclaim allot gpuHoursLost 0.056
expect reclaim allot projects.0.belowFairSharePct 0
jq -r '.setup.projects[].name' "$out/reclaim/report.json" | tr '\n' ' ' |
    grep -qx 'team-a team-b ' || fail "reclaim: projects are not named after the quota file"

run spread --nodes "$dir/nodes-2x2.csv" --pods "$dir/spread.csv" --period-s 0 --projects 1
for p in fifo allot allot-spread; do
    expect spread $p gpuAllocationPct 21.25
done
expect spread allot waitSeconds.avg 0
expect spread allot busyPct 0
expect spread fifo waitSeconds.avg 0
expect spread allot-spread waitSeconds.avg 10
expect spread allot-spread waitSeconds.p95 40
expect spread allot-spread busyPct 20
expect spread allot-spread busyUnallocatedGpus 2

run withdraw --nodes "$dir/nodes-1x1.csv" --pods "$dir/withdraw.csv" --period-s 0 --projects 1
for p in fifo allot; do
    expect withdraw $p tasks.completed 2
    expect withdraw $p tasks.withdrawn 1
    expect withdraw $p waitSeconds.avg 40
    expect withdraw $p jctSeconds.avg 155
done

run nogang --nodes "$dir/nodes-2x1.csv" --pods "$dir/gang.csv" --period-s 0
run gang --nodes "$dir/nodes-2x1.csv" --pods "$dir/gang.csv" --period-s 0 --gangs
for p in fifo allot; do
    expect nogang $p tasks.rejected 1
    expect nogang $p tasks.completed 1
    expect gang $p tasks.rejected 0
    expect gang $p waitSeconds.avg 15
    expect gang $p jctSeconds.avg 50
done

for layout in model single; do
    run spec-$layout --nodes "$dir/nodes-2models.csv" --pods "$dir/spec.csv" --period-s 0 \
        --projects 1 --pools $layout
    for p in fifo allot allot-spread; do
        expect spec-$layout $p waitSeconds.avg 30
        expect spec-$layout $p waitSeconds.p95 90
    done
    run spec-any-$layout --nodes "$dir/nodes-2models.csv" --pods "$dir/spec-any.csv" \
        --period-s 0 --projects 1 --pools $layout
    for p in fifo allot allot-spread; do
        expect spec-any-$layout $p waitSeconds.p95 0
        expect spec-any-$layout $p tasks.completed 2
    done
done

for topo in aware blind; do
    run racks-$topo --nodes "$dir/nodes-4x2.csv" --pods "$dir/racks.csv" --period-s 0 \
        --projects 1 --gangs --racks 2 --blocks 1 --topology $topo --policy fifo,bestfit
    for p in fifo bestfit; do
        expect racks-$topo $p gangs.started 1
    done
    expect racks-$topo fifo gangs.oneRack 0
    expect racks-$topo fifo gangs.oneBlock 0
done
expect racks-aware bestfit gangs.oneRack 1
expect racks-aware bestfit gangs.oneBlock 1
expect racks-blind bestfit gangs.oneRack 0
grep -q '^| bestfit | 1 | 100.0% | 100.0% |' "$out/racks-aware.txt" ||
    fail "racks-aware: the headline has no gang row for bestfit"
run racks-inflate --nodes "$dir/nodes-4x2.csv" --pods "$dir/racks.csv" --gangs --racks 2 \
    --inflate 1 --policy bestfit --projects 1
jq -e '.inflation[0].gangs.started >= 1' "$out/racks-inflate/report.json" >/dev/null ||
    fail "racks-inflate: no gang counted under inflation"
[ "$(jq '.policies[0] | has("gangs")' "$out/hol/report.json")" = false ] ||
    fail "hol: gangs reported without --racks"

run inflate --nodes "$dir/nodes-1x2.csv" --pods "$dir/one-task.csv" --inflate 1.5
for p in fifo allot allot-spread; do
    expect_inflation inflate $p placedBeforeFirstFailure 2
    expect_inflation inflate $p arrivals 3
    expect_inflation inflate $p failures 1
    expect_inflation inflate $p firstFailureArrivedPct 150
    expect_inflation inflate $p firstFailureUnallocatedGpus 0
    expect_inflation inflate $p endUnallocatedGpus 0
done
[ "$(jq '.policies | length' "$out/inflate/report.json")" = 0 ] ||
    fail "inflate: a task list without times has no time replay"
echo ok
