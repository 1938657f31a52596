#!/bin/sh
# paper.sh ALLOT DIR: `allot replay --protocol paper` on one-task.csv (one
# 1-GPU task) and nodes-2x2.csv (two 2-GPU nodes, 4 GPUs). Worked by hand:
# arrivals are copies of the task up to 1.3 x 4 GPUs, so 5 of them; the
# first 4 fill the cluster whatever the policy, the 4th brings the arrived
# demand to 100%, so every policy leaves 0.0 GPUs unallocated there; the
# 5th (125%) is dropped, and the run stops there, the first arrival past
# 101.5%, so each counts 1 drop. allot-moves has nothing to
# consolidate (no GPU is free when the 5th comes): 0 moves, and its rows
# say protocol paper+moves, apart from placement's.
set -u
allot=$1 dir=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; cat "$out" "$err"; exit 1; }

"$allot" replay --protocol paper --nodes "$dir/nodes-2x2.csv" --pods "$dir/one-task.csv" \
    --policy random,bestfit,fgd,allot,allot-moves --seeds 1-2 --jobs 1 >"$out" 2>"$err" ||
    fail "exit status $?"
grep -q '^Protocol paper: ' "$out" || fail "the protocol is not said"
for p in random bestfit fgd allot; do
    grep -qF "| $p | paper | 0.0 | 0.0-0.0 |" "$out" || fail "$p: not 0.0 under protocol paper"
done
grep -qF "| allot | paper | 0.0 | 0.0-0.0 | - | - | 1.0 | 0 |" "$out" ||
    fail "allot placing alone: a move or an eviction, or not the one drop"
grep -qF "| allot-moves | paper+moves | 0.0 | 0.0-0.0 |" "$out" ||
    fail "allot-moves is not reported as protocol paper+moves"
grep -qF "Consolidation, apart from placement (protocol paper+moves, seeds 1-2): allot-moves leaves 0.0 GPUs unallocated (0.0-0.0) at the cost of 0.0 moves a run (0-0)" "$out" ||
    fail "consolidation's figure"
grep -qF "allot - fgd = +0.0 GPUs on average" "$out" || fail "allot paired with fgd"

"$allot" replay --protocol paper --nodes "$dir/nodes-2x2.csv" --pods "$dir/one-task.csv" \
    --policy allot,moves >"$out" 2>"$err"
[ $? = 2 ] || fail "--policy allot,moves: not refused with status 2"
grep -qF "fgd, allot or allot-moves" "$err" || fail "--policy allot,moves: the choices not said"
echo ok
