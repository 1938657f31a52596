#!/bin/sh
# checks.sh ALLOTD: on PostgreSQL each table's CHECK constraints are one
# call of a function of the columns they read (migration 153, db/checks.c:
# PostgreSQL plans a table's CHECKs again at every statement that writes
# it), and that one refuses what they refused: a workloads row good but
# for one column is refused as a check violation, for each column of the
# table below, while the good row is taken.
set -eu
ALLOTD=$1
. "$(dirname "$0")/pg_lib.sh"

pg_start
D=$(mktemp -d /tmp/allot-checks-XXXXXX)
trap 'rm -rf "$D"; pg_stop' EXIT
(cd "$D" && ALLOT_ADMIN_PASSWORD=checks-admin-password "$ALLOTD" --init --db "$PG_URI") \
  >"$D/log" 2>&1 || { cat "$D/log" >&2; pg_fail "allotd --init failed"; }

many=$(pg_psql -c "SELECT count(*) FROM (SELECT conrelid FROM pg_constraint
  WHERE contype = 'c' AND conrelid <> 0 GROUP BY conrelid HAVING count(*) > 1) AS t")
[ "$many" = 0 ] || pg_fail "$many tables still have more than one CHECK"
pg_psql -c "SELECT pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid = 'workloads'::regclass AND contype = 'c'" | grep -q 'allot_workloads_ok(' ||
  pg_fail "workloads' CHECK is not the folded one"

GOOD="name='ok' type=0 priority=50 preemptible=1 desired_phase='Running' phase='Pending'
 n_pods=2 min_pods=1 gpu_devices=1 gpu_portion=0 cpu_milli=0 mem_mib=0 gpu_memory_mib=0
 queued_seq=1 started_ms=0 stale_since_ms=0 created_at=1 updated_at=1 phase_updated_at=1
 deleted_at=0 completed_at=0 version=1 run_ms=0"

# insert ID [COLUMN VALUE]: the good row, COLUMN set to VALUE; psql's
# error on stderr
insert() {
  cols="id, project_seq, priority_class"
  vals="'$1', (SELECT min(seq) FROM queues), 'train'"
  for pair in $GOOD; do
    col=${pair%%=*}
    val=${pair#*=}
    [ "$col" != "${2:-}" ] || val=$3
    cols="$cols, $col"
    vals="$vals, $val"
  done
  pg_psql -c "INSERT INTO workloads ($cols) VALUES ($vals)"
}

insert good || pg_fail "the good row was refused"
n=0
while read -r col val; do
  n=$((n + 1))
  if insert "bad$n" "$col" "$val" 2>"$D/err"; then
    pg_fail "workloads took $col = $val"
  fi
  grep -q 'violates check constraint "workloads_ok"' "$D/err" ||
    pg_fail "$col = $val: $(cat "$D/err")"
done <<'CASES'
name ''
type 4
type -1
priority 1001
preemptible 2
desired_phase 'Gone'
phase 'Bogus'
n_pods 0
min_pods 3
min_pods 0
gpu_devices 65
gpu_portion 1000
cpu_milli -1
mem_mib 1099511627777
gpu_memory_mib -1
queued_seq -1
started_ms -1
stale_since_ms -1
created_at -1
updated_at -1
phase_updated_at -1
deleted_at -1
completed_at -1
version 0
run_ms -1
CASES
[ "$n" = 25 ] || pg_fail "ran $n cases, not 25"
[ "$(pg_psql -c 'SELECT count(*) FROM workloads')" = 1 ] || pg_fail "a bad row was kept"
echo "pg/checks: passed ($n rows refused)"
