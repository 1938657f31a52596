#!/bin/sh
# shared_folder.sh DIR: the shared folder (ALLOT_SHARED_DIR) is there and
# holds scenarios and the Alibaba trace, so that neither the shared
# scenarios nor the trace replay can drop out of the suite unnoticed.
set -u
dir=$1
n=$(ls "$dir"/scenarios/*.json 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: no scenarios in $dir/scenarios (set ALLOT_SHARED_DIR)"; exit 1; }
[ -r "$dir/traces/alibaba-gpu-v2023/openb_pod_list_default.csv" ] ||
  { echo "FAIL: no trace in $dir/traces/alibaba-gpu-v2023"; exit 1; }
echo "ok: $n shared scenarios and the trace in $dir"
