#!/bin/sh
# paper.sh ALLOT DIR: `allot replay --protocol paper` on one-task.csv (one
# 1-GPU task) and nodes-2x2.csv (two 2-GPU nodes, 4 GPUs). Worked by hand:
# arrivals are copies of the task up to 1.3 x 4 GPUs, so 5 of them; the
# first 4 fill the cluster whatever the policy, the 4th brings the arrived
# demand to 100%, so every policy leaves 0.0 GPUs unallocated there; the
# 5th (125%) is dropped, and the run stops there, the first arrival past
# 101.5%, so each counts 1 drop by the run's end. allot-moves has nothing to
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

# fgd-moves on nodes-trap.csv (a: 1 GPU, 1 CPU; b: 1 GPU, 8 CPUs) and
# trap.csv (y1-y3: half a GPU and 1 CPU each; x: a whole GPU and 4 CPUs,
# so x fits b alone). Worked by hand: 2.5 GPUs of tasks, within 1.3 x 2,
# and any draw passes it, so the arrivals are the four tasks shuffled; the
# window is the arrival that brings the demand to 2 GPUs (the third), the
# run stops at the fourth (2.5). FGD's typical shapes are y (3/4) and x
# (1/4): a y on a leaves a half GPU no y or x can use (fragmentation
# 1/2 x 3/4 + 1/2 x 1/4, up from 1/4 for x alone), on b a half GPU that
# only x cannot use (1/8, up from 0): every y goes to b while b has room.
# Seed 2 draws y y x y: both y on b, x fits nowhere and no move makes a
# whole GPU with 4 CPUs (a holds one y), dropped; 1 GPU unallocated at
# the window, whether or not moves are on, 0 moves. Seed 3 draws y x y y:
# y on b, then x fits nowhere; fgd drops it (the next y fills b: 1 GPU
# unallocated); fgd-moves' consolidation moves y from b to a and FGD puts
# x on b: 1 move, 0.5 unallocated (the third arrival, a y, fits nowhere),
# and 2 drops by the end (that y, and the fourth).
"$allot" replay --protocol paper --nodes "$dir/nodes-trap.csv" --pods "$dir/trap.csv" \
    --policy fgd,fgd-moves --seeds 2-3 --jobs 1 >"$out" 2>"$err" || fail "exit status $?"
grep -qF "| fgd | paper | 1.0 | 1.0-1.0 | - | - | 1.0 | 0 |" "$out" || fail "fgd on trap.csv"
grep -qF "| fgd-moves | paper+moves | 0.8 | 0.5-1.0 | - | - | 1.5 | 1 |" "$out" ||
    fail "fgd-moves on trap.csv: not 1 move, 1.5 drops"
grep -qF "| fgd-moves | 1.0 | 0.5 |" "$out" || fail "fgd-moves per seed on trap.csv"
grep -qF "fgd-moves leaves 0.8 GPUs unallocated (0.5-1.0) at the cost of 0.5 moves a run (0-1), each a restart of a running pod, and 0 evictions in all; against fgd placing alone -0.2 (-0.5 to +0.0)" "$out" ||
    fail "fgd-moves' consolidation figure"

"$allot" replay --protocol paper --nodes "$dir/nodes-2x2.csv" --pods "$dir/one-task.csv" \
    --policy allot,moves >"$out" 2>"$err"
[ $? = 2 ] || fail "--policy allot,moves: not refused with status 2"
grep -qF "fgd, allot, allot-moves or fgd-moves" "$err" || fail "--policy allot,moves: the choices not said"
echo ok
