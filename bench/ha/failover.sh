#!/bin/sh
# failover.sh ALLOTD [RUNS]: the failover time of allotd replicas on
# PostgreSQL: RUNS times (default 10) the scenario of tests/pg/failover.sh
# (two replicas on a throwaway PostgreSQL, 16 clients submitting, the
# leader killed with SIGKILL mid-burst), each reporting the time from the
# kill to the new leader's first placement (a workload submitted through
# it right after the kill, Running); prints every run's figure and the
# p50 and the worst. Needs PostgreSQL 15's binaries (tests/pg/pg_lib.sh).
# ALLOT_HA_OPTS (say "--leader-lease-ms 1000 --leader-renew-ms 300
# --leader-ask-ms 100") is given to both replicas.
set -eu
ALLOTD=$1
RUNS=${2:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp /tmp/allot-bench-failover-XXXXXX)
trap 'rm -f "$OUT" "$OUT.all"' EXIT
i=0
: >"$OUT.all"
while [ "$i" -lt "$RUNS" ]; do
  sh "$HERE/../../tests/pg/failover.sh" "$ALLOTD" >"$OUT" 2>&1 || { cat "$OUT" >&2; exit 1; }
  ms=$(sed -n 's/^# kill to the new leader.s first placement: \([0-9]*\) ms$/\1/p' "$OUT")
  echo "run $((i + 1)): $ms ms"
  echo "$ms" >>"$OUT.all"
  i=$((i + 1))
done
sort -n "$OUT.all" | awk '{ v[NR] = $1 } END {
  printf "failover (kill to first placement), %d runs: p50 %d ms, worst %d ms\n",
         NR, v[int((NR + 1) / 2)], v[NR] }'
