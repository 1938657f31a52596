#!/bin/sh
# bench/replay/run.sh [ALLOT [OUT]]: the trace replay benchmark. Replays the
# Alibaba GPU 2023 default trace (../shared/traces/alibaba-gpu-v2023) with
# `allot replay` and every policy, and writes each report under OUT
# (default build/replay-report):
#   default/   the trace as it is (node pools per GPU model, a cycle every
#              10 s of trace time), and inflation up to the cluster's GPUs
#   x300/      arrivals 300 times faster: the 149 days in 12 hours
#   single/    as default/, with one node pool (the model as node type)
# Wall times go to OUT/timing.txt: every run alone on one thread, then the
# default time replay as a whole on two threads.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
allot=${1:-$root/build/allot}
out=${2:-$root/build/replay-report}
trace=${ALLOT_TRACE_DIR:-$root/../shared/traces/alibaba-gpu-v2023}
trace_args="--nodes $trace/openb_node_list_gpu_node.csv --pods $trace/openb_pod_list_default.csv"
mkdir -p "$out"
: >"$out/timing.txt"

# replay NAME ARGS...: one report, its headline tables on stdout, its times kept.
replay() {
    name=$1
    shift
    echo "## $name: allot replay $*"
    # shellcheck disable=SC2086
    "$allot" replay $trace_args "$@" --report "$out/$name" --timing 2>"$out/$name.timing"
    sed "s/^timing: /$name: /" "$out/$name.timing" >>"$out/timing.txt"
    echo
}

replay default --inflate 1 --jobs 1
replay x300 --speedup 300 --jobs 1
replay single --inflate 1 --pools single --jobs 1
# shellcheck disable=SC2086
"$allot" replay $trace_args --jobs 2 --timing 2>&1 >/dev/null |
    sed -n 's/^timing: total /default time replay, every policy, 2 threads: /p' |
    tee -a "$out/timing.txt"
