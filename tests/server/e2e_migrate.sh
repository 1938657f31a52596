#!/bin/sh
# e2e_migrate.sh: migration 90 (CHECK constraints) on a database written
# before it (data/before-checks.sql: schema version 3 with migrations 50
# and 51, a project, four workloads, one of them with the memory request
# "nan" stored as the smallest int64). allotd starts on it and migrates
# (70 adds columns, then 90 rebuilds the tables with them, and 390 again
# with each CHECK's list of three values or more as comparisons):
# every row is kept (same ids, same AUTOINCREMENT counters), the bad
# quantity is clamped to 0, integrity and foreign keys hold, the server
# serves the rows; then out-of-range rows are refused by the schema itself,
# and every value a list allowed is still taken.
ALLOTD=$1
. "$(dirname "$0")/lib.sh"
DB="$T/old.db"
sqlite3 "$DB" <"$(dirname "$0")/data/before-checks.sql" || fail "cannot load the fixture"
chmod 600 "$DB"
q() { sqlite3 "$DB" "$1"; }
[ "$(q 'SELECT group_concat(number) FROM schema_migrations')" = 50,51 ] || fail "the fixture is not before 70 and 90"
BEFORE=$(q "SELECT group_concat(id || ':' || name, ' ') FROM (SELECT id, name FROM workloads ORDER BY seq)")
EVENTS=$(q 'SELECT count(*) FROM events')
SEQS=$(q "SELECT group_concat(name || '=' || seq, ' ') FROM (SELECT * FROM sqlite_sequence ORDER BY name)")

start --db "$DB" --simulate-nodes 2x2
ADMIN=$(login admin fixture-password)
N=$(expect 200 GET "/api/v1/workloads/count" "" "$ADMIN" | jq .count)
[ "$N" = 4 ] || fail "the migrated server lists $N workloads, not 4"
expect 200 GET "/api/v1/workloads?filterBy=name==nan" "" "$ADMIN" | jq -e '.workloads[0].phase' >/dev/null ||
  fail "the workload with the bad quantity is not served"
stop

[ "$(q 'SELECT count(*) FROM schema_migrations WHERE number IN (70, 90, 390, 400)')" = 4 ] ||
  fail "migrations 70, 90, 390 and 400 not recorded: $(q 'SELECT group_concat(number) FROM schema_migrations')"
# 390: no CHECK keeps a list of three constants or more (SQLite would build
# a temporary index of it at each write)
LISTS=$(q "SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'table'" |
  grep -E "[A-Za-z_.]+ IN \\(([^,()]+, ){2,}[^,()]+\\)" || true)
[ -z "$LISTS" ] || fail "a CHECK still lists its values: $LISTS"
# 400: the workloads with limits (db_agent_limited(), each scheduler turn)
# are found through their index, not by reading every Running workload
PLAN=$(q "EXPLAIN QUERY PLAN SELECT w.seq FROM workloads w WHERE w.deleted_at = 0
  AND w.phase = 'Running' AND w.rules > '' ORDER BY w.seq")
case $PLAN in *"USING INDEX workloads_ruled"*) ;; *) fail "the limits' read: $PLAN" ;; esac
[ "$(q "SELECT group_concat(id || ':' || name, ' ') FROM (SELECT id, name FROM workloads ORDER BY seq)")" = \
  "$BEFORE" ] || fail "the workloads changed in the migration"
[ "$(q 'SELECT count(*) FROM events')" -ge "$EVENTS" ] || fail "events were lost"
for pair in $SEQS; do
  name=${pair%%=*} seq=${pair#*=}
  [ "$(q "SELECT seq FROM sqlite_sequence WHERE name = '$name'")" -ge "$seq" ] ||
    fail "the AUTOINCREMENT counter of $name went back"
done
[ "$(q "SELECT mem_mib FROM workloads WHERE name = 'nan'")" = 0 ] || fail "the bad quantity was not clamped"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity_check failed"
[ -z "$(q 'PRAGMA foreign_key_check')" ] || fail "foreign keys broken: $(q 'PRAGMA foreign_key_check')"
q "SELECT sql FROM sqlite_master WHERE name = 'pods_new_uid'" | grep -q "randomblob" ||
  fail "the pods trigger is gone"

# what the schema refuses now: one statement per line, each must fail
COLS="id, name, project_seq, type, priority_class, priority, preemptible, desired_phase, phase"
COLS="$COLS, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli, mem_mib, queued_seq"
COLS="$COLS, created_at, updated_at, phase_updated_at"
while IFS='|' read -r what stmt; do
  [ -n "$what" ] || continue
  if err=$(q "$stmt" 2>&1); then fail "the schema took $what"; fi
  case $err in *"CHECK constraint failed"*) ;; *) fail "$what: $err" ;; esac
done <<EOF
negative memory|UPDATE workloads SET mem_mib = -1 WHERE name = 'nan'
memory past the bound|UPDATE workloads SET mem_mib = 1099511627777 WHERE name = 'nan'
negative CPU|UPDATE workloads SET cpu_milli = -9223372036854775808 WHERE name = 'nan'
an unknown phase|UPDATE workloads SET phase = 'Sleeping' WHERE name = 'nan'
an unknown desired phase|UPDATE workloads SET desired_phase = 'Gone' WHERE name = 'nan'
65 GPUs a pod|UPDATE workloads SET gpu_devices = 65 WHERE name = 'nan'
no pod|UPDATE workloads SET n_pods = 0, min_pods = 0 WHERE name = 'nan'
preemptible 2|UPDATE workloads SET preemptible = 2 WHERE name = 'nan'
version 0|UPDATE workloads SET version = 0 WHERE name = 'nan'
a new bad workload|INSERT INTO workloads ($COLS) SELECT id || 'x', name || 'x', project_seq, type, priority_class, priority, preemptible, desired_phase, phase, n_pods, min_pods, gpu_devices, gpu_portion, cpu_milli, -5, queued_seq, created_at, updated_at, phase_updated_at FROM workloads LIMIT 1
a deserved quota below -1|UPDATE queue_quotas SET gpu_deserved = -2
a negative weight|UPDATE queue_quotas SET gpu_weight = -1
a memory limit below -1|UPDATE queue_quotas SET mem_limit = -7
an unknown over-quota priority|UPDATE queue_quotas SET priority = 9
a node with -2 CPUs|UPDATE nodes SET cpu_milli = -2
a node ready 3|UPDATE nodes SET ready = 3
rank 5000|UPDATE queues SET rank = 5000
a pool placement 7|UPDATE node_pools SET gpu_placement = 7
a time window of 0|UPDATE node_pools SET tbf_window_ms = 0
an unknown event type|UPDATE events SET type = 'Loud'
a token version 0|UPDATE users SET token_version = 0
an unknown rule subject|UPDATE access_rules SET subject_type = 'robot'
a negative pod index|UPDATE pods SET idx = -1
a negative allocation sample|UPDATE samples SET gpu_alloc = -1
negative device memory|UPDATE nodes SET gpu_memory_mib = -1
a pinned flag of 2|UPDATE nodes SET pool_pinned = 2
an unknown change kind|INSERT INTO changes (kind, workload_seq, origin, at) VALUES (4, 0, 1, 1)
an unknown policy type|INSERT INTO policies (id, type, scope, created_at, updated_at) VALUES ('p1', 'batch', 'tenant', 1, 1)
an unknown run outcome|INSERT INTO pod_runs (uid, workload_seq, idx, node_seq, started_at, outcome) SELECT 'u1', seq, 0, 1, 1, 'Exploded' FROM workloads LIMIT 1
an unknown access scope|UPDATE access_rules SET scope_type = 'galaxy'
EOF
# and what it takes: each listed value
while IFS='|' read -r what stmt; do
  [ -n "$what" ] || continue
  err=$(q "$stmt" 2>&1) || fail "the schema refused $what: $err"
done <<EOF
every phase|UPDATE workloads SET phase = 'Creating' WHERE name = 'nan'; UPDATE workloads SET phase = 'Unknown' WHERE name = 'nan'; UPDATE workloads SET phase = 'Pending' WHERE name = 'nan'
every desired phase|UPDATE workloads SET desired_phase = 'Deleted' WHERE name = 'nan'; UPDATE workloads SET desired_phase = 'Running' WHERE name = 'nan'
change kind 3|INSERT INTO changes (kind, workload_seq, origin, at) VALUES (3, 0, 1, 1)
EOF
echo "e2e_migrate: ok"
