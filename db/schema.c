/*
 * schema.c: the numbered migrations that build allot's schema.
 *
 * Invariants:
 *   1. PRAGMA user_version is the number of migrations applied. Migration
 *      i (1-based) takes the schema from version i-1 to i, in one
 *      transaction together with the version bump.
 *   2. Migrations are append-only: a released one is never edited; a
 *      change is a new migration at the end.
 *   3. A database newer than this build (user_version > the count) is
 *      refused rather than guessed at.
 *   4. Migrations numbered 50 and up (later[], the nodes run by
 *      allot-agent) are a second series, applied after the first: each is
 *      recorded by number in schema_migrations, in the same transaction,
 *      so the two series grow independently. A database recording a
 *      number this build lacks is refused too.
 *   5. Migrations run with foreign keys off (a table rebuild drops a table
 *      others refer to), and each checks them before its commit.
 *
 * Both engines: the same migrations, by the same numbers, build the
 * schema on SQLite and on PostgreSQL. A migration's SQL is SQLite's; on
 * PostgreSQL, pq.c's dialect table rewrites it as it runs (types,
 * AUTOINCREMENT, PRAGMA user_version, which lives in the table
 * allot_schema_version there). A migration the rewrite cannot say
 * (triggers, SQLite's table rebuilds) carries a PostgreSQL variant (pg_variants[],
 * or its fn asks db__is_pq()). A new migration at the end applies to both
 * with no more work as long as its SQL is of the portable kind; one that
 * is not fails the pg/ tests with "migration N failed" and the server's
 * error, and needs a pg variant.
 *   6. On PostgreSQL, several servers may start on one database at once:
 *      each migration's transaction takes the writers' lock (BEGIN
 *      IMMEDIATE) and checks again, inside it, that it is still due.
 *
 * Units in the columns: GPU milli-GPU, CPU millicores, memory MiB, times
 * ms since the epoch, 0 meaning "not set" for optional times.
 */
#include "db_int.h"

#include <stdio.h>

static const char *const migrations[] = {
    /* 1: principals, access rules, pools, nodes, queues, workloads, pods, events */
    "CREATE TABLE users ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " kind INTEGER NOT NULL CHECK (kind IN (0, 1)),"
    " login TEXT NOT NULL UNIQUE,"
    " name TEXT NOT NULL,"
    " secret_hash TEXT NOT NULL,"
    " token_version INTEGER NOT NULL DEFAULT 1,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    " last_login INTEGER NOT NULL DEFAULT 0,"
    " created_by TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE access_rules ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " subject_type TEXT NOT NULL, subject_id TEXT NOT NULL,"
    " role_id INTEGER NOT NULL,"
    " scope_type TEXT NOT NULL CHECK (scope_type IN ('system', 'department', 'project')),"
    " scope_id TEXT NOT NULL,"
    " created_at INTEGER NOT NULL, created_by TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX access_rules_subject ON access_rules (subject_id);"
    "CREATE TABLE node_pools ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL UNIQUE,"
    " label_key TEXT NOT NULL, label_value TEXT NOT NULL,"
    " gpu_placement INTEGER NOT NULL DEFAULT 0, cpu_placement INTEGER NOT NULL DEFAULT 1,"
    " min_runtime_ms INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    " created_by TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE nodes ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE,"
    " pool_seq INTEGER NOT NULL REFERENCES node_pools (seq),"
    " n_gpus INTEGER NOT NULL CHECK (n_gpus BETWEEN 0 AND 64),"
    " gpu_type TEXT NOT NULL DEFAULT '',"
    " cpu_milli INTEGER NOT NULL DEFAULT -1, mem_mib INTEGER NOT NULL DEFAULT -1,"
    " ready INTEGER NOT NULL DEFAULT 1, simulated INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
    "CREATE TABLE queues ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE,"
    " kind INTEGER NOT NULL CHECK (kind IN (0, 1)),"
    " name TEXT NOT NULL,"
    " parent_seq INTEGER REFERENCES queues (seq),"
    " description TEXT NOT NULL DEFAULT '',"
    " rank INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    " created_by TEXT NOT NULL DEFAULT '',"
    " UNIQUE (kind, name));"
    "CREATE TABLE queue_quotas ("
    " queue_seq INTEGER NOT NULL REFERENCES queues (seq) ON DELETE CASCADE,"
    " pool_seq INTEGER NOT NULL REFERENCES node_pools (seq),"
    " gpu_deserved INTEGER NOT NULL, gpu_limit INTEGER NOT NULL, gpu_weight INTEGER NOT NULL,"
    " cpu_deserved INTEGER, cpu_limit INTEGER, cpu_weight INTEGER,"
    " mem_deserved INTEGER, mem_limit INTEGER, mem_weight INTEGER,"
    " PRIMARY KEY (queue_seq, pool_seq));"
    "CREATE TABLE workloads ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE,"
    " name TEXT NOT NULL,"
    " project_seq INTEGER NOT NULL REFERENCES queues (seq),"
    " type INTEGER NOT NULL CHECK (type BETWEEN 0 AND 3),"
    " priority_class TEXT NOT NULL, priority INTEGER NOT NULL,"
    " preemptible INTEGER NOT NULL,"
    " desired_phase TEXT NOT NULL, phase TEXT NOT NULL,"
    " phase_reason TEXT NOT NULL DEFAULT '', phase_message TEXT NOT NULL DEFAULT '',"
    " n_pods INTEGER NOT NULL CHECK (n_pods >= 1),"
    " min_pods INTEGER NOT NULL CHECK (min_pods BETWEEN 1 AND n_pods),"
    " gpu_devices INTEGER NOT NULL CHECK (gpu_devices >= 0),"
    " gpu_portion INTEGER NOT NULL CHECK (gpu_portion BETWEEN 0 AND 999),"
    " cpu_milli INTEGER NOT NULL DEFAULT 0, mem_mib INTEGER NOT NULL DEFAULT 0,"
    " pools TEXT NOT NULL DEFAULT '', node_type TEXT NOT NULL DEFAULT '',"
    " image TEXT NOT NULL DEFAULT '',"
    " created_by TEXT NOT NULL DEFAULT '',"
    " queued_seq INTEGER NOT NULL,"
    " started_ms INTEGER NOT NULL DEFAULT 0, stale_since_ms INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    " phase_updated_at INTEGER NOT NULL,"
    " deleted_at INTEGER NOT NULL DEFAULT 0, completed_at INTEGER NOT NULL DEFAULT 0,"
    " version INTEGER NOT NULL DEFAULT 1,"
    " spec TEXT);"
    "CREATE UNIQUE INDEX workloads_live_name ON workloads (project_seq, name)"
    " WHERE deleted_at = 0;"
    "CREATE INDEX workloads_active ON workloads (phase) WHERE deleted_at = 0;"
    "CREATE INDEX workloads_created ON workloads (created_at);"
    "CREATE TABLE pods ("
    " workload_seq INTEGER NOT NULL REFERENCES workloads (seq),"
    " idx INTEGER NOT NULL,"
    " node_seq INTEGER NOT NULL REFERENCES nodes (seq),"
    " devices INTEGER NOT NULL,"
    " PRIMARY KEY (workload_seq, idx));"
    "CREATE INDEX pods_node ON pods (node_seq);"
    "CREATE TABLE events ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " workload_seq INTEGER NOT NULL REFERENCES workloads (seq),"
    " created_at INTEGER NOT NULL,"
    " type TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL);"
    "CREATE INDEX events_workload ON events (workload_seq, seq);",
    /* 2: node pool scheduling settings, project defaults, node types, and
     * the per-queue allocation samples behind the metrics time series */
    "ALTER TABLE node_pools ADD COLUMN tbf_enabled INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE node_pools ADD COLUMN tbf_window_ms INTEGER NOT NULL DEFAULT 604800000;"
    "ALTER TABLE node_pools ADD COLUMN tbf_half_life_ms INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE node_pools ADD COLUMN tbf_k_milli INTEGER NOT NULL DEFAULT 1000;"
    "ALTER TABLE node_pools ADD COLUMN updated_by TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE queues ADD COLUMN default_pools TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE queues ADD COLUMN node_types TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE queues ADD COLUMN scheduling_rules TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE nodes ADD COLUMN node_type TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE samples ("
    " queue_seq INTEGER NOT NULL, pool_seq INTEGER NOT NULL, ts INTEGER NOT NULL,"
    " gpu_alloc INTEGER NOT NULL, gpu_quota INTEGER NOT NULL,"
    " cpu_alloc INTEGER NOT NULL, cpu_quota INTEGER NOT NULL,"
    " mem_alloc INTEGER NOT NULL, mem_quota INTEGER NOT NULL,"
    " PRIMARY KEY (queue_seq, pool_seq, ts)) WITHOUT ROWID;"
    "CREATE INDEX samples_ts ON samples (ts);",
    /* 3: the row the writer rewrites to find out whether writes work again
     * after a failure (db.c, health) */
    "CREATE TABLE write_probe ("
    " id INTEGER PRIMARY KEY CHECK (id = 1),"
    " at INTEGER NOT NULL);",
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int db_schema_version(void)
{
    return N_MIGRATIONS;
}

/* The end of a migration's transaction: its commit if rc is DB_OK, else
 * (or if the commit fails) its rollback; the code of the two. */
static int commit_or_rollback(struct db__conn *c, int rc)
{
    if (rc == DB_OK)
        rc = db__exec(c, "COMMIT");
    if (rc != DB_OK)
        db__exec(c, "ROLLBACK");
    return rc;
}

/* The integer the one row of sql (run once) starts with; a parameter
 * (param >= 0) binds to its ?1. */
static int int_once(struct db__conn *c, const char *sql, int param, int *out)
{
    struct db__stmt *st = NULL;
    int rc = DB_EIO;

    if (db__prep_once(c, sql, &st) != DB_OK)
        goto out;
    if (param >= 0)
        db__bind_int(st, 1, param);
    if (db__step(st) != DB__ROW)
        goto out;
    *out = db__col_int(st, 0);
    rc = DB_OK;
out:
    db__finalize(st);
    return rc;
}

static int user_version(struct db__conn *c, int *version)
{
    return int_once(c, "PRAGMA user_version", -1, version);
}

/* Foreign keys are off while migrations run (a table rebuild drops a
 * table others refer to); each migration checks them before its commit. */
static int foreign_keys_hold(struct db__conn *c)
{
    struct db__stmt *st = NULL;
    int rc = DB_EIO, src;

    if (db__prep_once(c, "PRAGMA foreign_key_check", &st) != DB_OK)
        goto out;
    src = db__step(st);
    if (src == DB__ROW)
        fprintf(stderr, "allotd: db: a row of %s names a missing row of %s\n",
                db__col_text(st, 0), db__col_text(st, 2));
    rc = src == DB__DONE ? DB_OK : DB_EINVAL;
out:
    db__finalize(st);
    return rc;
}

static int apply_one(struct db__conn *c, int i)
{
    char bump[64];
    int rc, version = 0;

    rc = db__exec(c, "BEGIN IMMEDIATE");
    if (rc != DB_OK)
        return rc;
    rc = user_version(c, &version); /* invariant 6: another server may have applied it */
    if (rc == DB_OK && version > i) {
        db__exec(c, "ROLLBACK");
        return DB_OK;
    }
    if (rc == DB_OK)
        rc = db__exec(c, migrations[i]);
    if (rc == DB_OK) {
        snprintf(bump, sizeof(bump), "PRAGMA user_version=%d", i + 1);
        rc = db__exec(c, bump);
    }
    if (rc == DB_OK)
        rc = foreign_keys_hold(c);
    return commit_or_rollback(c, rc);
}

/* ---- the second series: migrations 50 and up ---- */

struct numbered {
    int number;
    const char *sql;
    int (*fn)(struct db__conn *c);  /* instead of sql, a migration that builds its own */
};

/* Migration 50 after its trigger, the same on both engines. */
#define MIGRATION_50 \
     "CREATE INDEX pods_by_uid ON pods (uid);" \
     "CREATE TABLE agent_tokens (" \
     " seq INTEGER PRIMARY KEY AUTOINCREMENT," \
     " id TEXT NOT NULL UNIQUE," \
     " name TEXT NOT NULL," \
     " secret_hash TEXT NOT NULL," \
     " node_name TEXT NOT NULL DEFAULT ''," \
     " created_at INTEGER NOT NULL, created_by TEXT NOT NULL DEFAULT ''," \
     " last_used_at INTEGER NOT NULL DEFAULT 0," \
     " revoked_at INTEGER NOT NULL DEFAULT 0);" \
     "CREATE TABLE agent_nodes (" \
     " node_seq INTEGER PRIMARY KEY REFERENCES nodes (seq)," \
     " token_seq INTEGER NOT NULL REFERENCES agent_tokens (seq)," \
     " heartbeat_ms INTEGER NOT NULL CHECK (heartbeat_ms > 0)," \
     " registered_at INTEGER NOT NULL, last_seen INTEGER NOT NULL," \
     " labels TEXT NOT NULL DEFAULT '{}', gpus TEXT NOT NULL DEFAULT '[]'," \
     " version TEXT NOT NULL DEFAULT '', runtime TEXT NOT NULL DEFAULT '');" \
     "CREATE TABLE pod_runs (" \
     " uid TEXT PRIMARY KEY," \
     " workload_seq INTEGER NOT NULL REFERENCES workloads (seq)," \
     " idx INTEGER NOT NULL," \
     " node_seq INTEGER NOT NULL REFERENCES nodes (seq)," \
     " started_at INTEGER NOT NULL," \
     " finished_at INTEGER NOT NULL DEFAULT 0," \
     " exit_code INTEGER NOT NULL DEFAULT 0, signal INTEGER NOT NULL DEFAULT 0," \
     " outcome TEXT NOT NULL DEFAULT '');" \
     "CREATE INDEX pod_runs_workload ON pod_runs (workload_seq, idx, started_at);" \
     "CREATE INDEX pod_runs_open ON pod_runs (node_seq) WHERE finished_at = 0;" \
     "CREATE TABLE gpu_idle (" \
     " node_seq INTEGER NOT NULL REFERENCES nodes (seq)," \
     " idx INTEGER NOT NULL," \
     " idle_since INTEGER NOT NULL DEFAULT 0," \
     " PRIMARY KEY (node_seq, idx)) WITHOUT ROWID;"

/* 380 on SQLite: the change log rebuilt with kind 3 allowed (below) */
#define MIGRATION_380                                                                          \
    "CREATE TABLE new_changes ("                                                                 \
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"                                                    \
    " kind INTEGER NOT NULL CHECK (kind IN (0, 1, 2, 3)),"                                       \
    " workload_seq INTEGER NOT NULL DEFAULT 0,"                                                  \
    " origin INTEGER NOT NULL,"                                                                  \
    " at INTEGER NOT NULL);"                                                                     \
    "INSERT INTO new_changes (seq, kind, workload_seq, origin, at)"                              \
    " SELECT seq, kind, workload_seq, origin, at FROM changes;"                                  \
    "DELETE FROM sqlite_sequence WHERE name = 'new_changes';"                                    \
    "INSERT INTO sqlite_sequence (name, seq)"                                                    \
    " SELECT 'new_changes', seq FROM sqlite_sequence WHERE name = 'changes';"                    \
    "DROP TABLE changes;"                                                                        \
    "ALTER TABLE new_changes RENAME TO changes;"                                                 \
    "CREATE INDEX changes_at ON changes (at);"

static const struct numbered later[] = {
    /* 50: agent tokens, the nodes agents run, a uid per pod binding (the
     * name an agent runs it under, new whenever the binding changes), the
     * runs agents report for those pods, and since when each device of an
     * agent's node has been idle (0: busy) */
    {50,
     "ALTER TABLE pods ADD COLUMN uid TEXT NOT NULL DEFAULT '';"
     "UPDATE pods SET uid = lower(hex(randomblob(16)));"
     "CREATE TRIGGER pods_new_uid AFTER INSERT ON pods WHEN new.uid = '' BEGIN"
     " UPDATE pods SET uid = lower(hex(randomblob(16))) WHERE rowid = new.rowid; END;"
     MIGRATION_50, NULL},
    /* 51: a queue's over-quota priority per node pool (0 None, 1 Low,
     * 2 Normal, 3 High) */
    {51, "ALTER TABLE queue_quotas ADD COLUMN priority INTEGER NOT NULL DEFAULT 2;", NULL},
    /* 70: what placement reads beyond sizes: every node's labels (an agent's,
     * or a simulated node's type and pool label), the memory of its
     * devices, the address its agent is reached at, and whether its pool
     * was named for it (else a pool created by label takes it); per
     * workload its required node affinity, its GPU-memory request and the
     * scheduling rules it was submitted under (its project's then) */
    {70,
     "ALTER TABLE nodes ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';"
     "ALTER TABLE nodes ADD COLUMN gpu_memory_mib INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE nodes ADD COLUMN address TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE nodes ADD COLUMN pool_pinned INTEGER NOT NULL DEFAULT 0;"
     "UPDATE nodes SET labels = coalesce((SELECT a.labels FROM agent_nodes a"
     " WHERE a.node_seq = nodes.seq), labels);"
     "UPDATE nodes SET labels = json_object('node-type', node_type)"
     " WHERE labels = '{}' AND node_type != '';"
     "ALTER TABLE workloads ADD COLUMN affinity TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE workloads ADD COLUMN gpu_memory_mib INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE workloads ADD COLUMN rules TEXT NOT NULL DEFAULT '';"
     "UPDATE workloads SET rules = coalesce((SELECT CASE WHEN q.scheduling_rules != ''"
     " THEN q.scheduling_rules ELSE coalesce(d.scheduling_rules, '') END"
     " FROM queues q LEFT JOIN queues d ON d.seq = q.parent_seq"
     " WHERE q.seq = workloads.project_seq), '') WHERE deleted_at = 0;", NULL},
    /* 72: service accounts can be disabled (PATCH /service-accounts/{id});
     * a system rule remembers whether it was asked for as a rule on the
     * tenant or on the cluster (allotd's one tenant and one cluster are
     * the system) */
    {72,
     "ALTER TABLE users ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;"
     "ALTER TABLE access_rules ADD COLUMN scope_named TEXT NOT NULL DEFAULT '';", NULL},
    /* 73: the metrics time series of the cluster, pools, nodes and
     * workloads (series.c), written when a value changes */
    {73,
     "CREATE TABLE series ("
     " kind INTEGER NOT NULL, entity TEXT NOT NULL, metric TEXT NOT NULL,"
     " label TEXT NOT NULL DEFAULT '', ts INTEGER NOT NULL, value REAL NOT NULL,"
     " PRIMARY KEY (kind, entity, metric, label, ts)) WITHOUT ROWID;"
     "CREATE INDEX series_ts ON series (ts);", NULL},
    /* 90: CHECK constraints on every quantity, flag and state, by
     * rebuilding the tables (checks.c) */
    {90, NULL, db__add_checks},
    /* 95: what agents measure of each pod's GPUs (NVML or nvidia-smi):
     * per run and device, its utilisation and memory, and whether the
     * device is one the pod was given; since when a run's devices are all
     * idle; and the samples of those figures behind the workloads' metrics
     * time series */
    {95,
     "CREATE TABLE pod_gpu ("
     " uid TEXT NOT NULL,"
     " gpu INTEGER NOT NULL CHECK (gpu BETWEEN 0 AND 63),"
     " given INTEGER NOT NULL CHECK (given IN (0, 1)),"
     " utilization INTEGER NOT NULL CHECK (utilization BETWEEN -1 AND 100),"
     " memory_mib INTEGER NOT NULL CHECK (memory_mib BETWEEN -1 AND 1099511627776),"
     " pid INTEGER NOT NULL DEFAULT 0 CHECK (pid >= 0),"
     " updated_at INTEGER NOT NULL CHECK (updated_at >= 0),"
     " PRIMARY KEY (uid, gpu)) WITHOUT ROWID;"
     "ALTER TABLE pod_runs ADD COLUMN gpu_idle_since INTEGER NOT NULL DEFAULT 0"
     " CHECK (gpu_idle_since >= 0);"
     "CREATE TABLE gpu_samples ("
     " workload_seq INTEGER NOT NULL, ts INTEGER NOT NULL CHECK (ts >= 0),"
     " idx INTEGER NOT NULL CHECK (idx >= 0), gpu INTEGER NOT NULL CHECK (gpu BETWEEN 0 AND 63),"
     " given INTEGER NOT NULL CHECK (given IN (0, 1)),"
     " utilization INTEGER NOT NULL CHECK (utilization BETWEEN -1 AND 100),"
     " memory_mib INTEGER NOT NULL CHECK (memory_mib BETWEEN -1 AND 1099511627776),"
     " PRIMARY KEY (workload_seq, ts, idx, gpu)) WITHOUT ROWID;"
     "CREATE INDEX gpu_samples_ts ON gpu_samples (ts);", NULL},
    /* 71: how long a workload ran before it last started: a time limit
     * counts all of its time placed (Running or Initializing), as Run:ai
     * counts all its time Running; kept by a trigger on every way out */
    {71,
     "ALTER TABLE workloads ADD COLUMN run_ms INTEGER NOT NULL DEFAULT 0 CHECK (run_ms >= 0);"
     "CREATE TRIGGER workloads_run_ms AFTER UPDATE OF phase ON workloads"
     " WHEN old.phase IN ('Initializing', 'Running')"
     " AND new.phase NOT IN ('Initializing', 'Running') AND old.started_ms > 0 BEGIN"
     " UPDATE workloads SET run_ms = run_ms + max(0, new.phase_updated_at - old.started_ms)"
     " WHERE seq = new.seq; END;",
     NULL},
    /* 140: events by time, for the evictions of a time window across
     * workloads */
    {140, "CREATE INDEX events_by_time ON events (created_at);", NULL},
    /* 91: an agent node's pool and GPU count as an admin approved them
     * (nodes.pool_seq is the approved pool; nodes.n_gpus the approved
     * count, or fewer if the agent reports fewer), what its last
     * registration asked for, and the figures an admin may set on a token
     * for the node it will register (db/agent.c) */
    {91,
     "ALTER TABLE agent_tokens ADD COLUMN pool_name TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE agent_tokens ADD COLUMN n_gpus INTEGER NOT NULL DEFAULT -1"
     " CHECK (n_gpus BETWEEN -1 AND 64);"
     "ALTER TABLE agent_nodes ADD COLUMN approved_gpus INTEGER NOT NULL DEFAULT -1"
     " CHECK (approved_gpus BETWEEN -1 AND 64);"
     "ALTER TABLE agent_nodes ADD COLUMN requested_pool TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE agent_nodes ADD COLUMN requested_gpus INTEGER NOT NULL DEFAULT -1"
     " CHECK (requested_gpus BETWEEN -1 AND 64);"
     "UPDATE agent_nodes SET"
     " approved_gpus = (SELECT n.n_gpus FROM nodes n WHERE n.seq = agent_nodes.node_seq),"
     " requested_gpus = (SELECT n.n_gpus FROM nodes n WHERE n.seq = agent_nodes.node_seq),"
     " requested_pool = (SELECT p.name FROM nodes n JOIN node_pools p ON p.seq = n.pool_seq"
     " WHERE n.seq = agent_nodes.node_seq);",
     NULL},
    /* 92: the Pending workloads of a project and of a user, counted at
     * every submission against the caps on pending work
     * (db_workload_submit) */
    {92,
     "CREATE INDEX workloads_pending_project ON workloads (project_seq)"
     " WHERE deleted_at = 0 AND phase = 'Pending';"
     "CREATE INDEX workloads_pending_user ON workloads (created_by)"
     " WHERE deleted_at = 0 AND phase = 'Pending';",
     NULL},
    /* 96: the families of refresh tokens, one per sign-in, with the
     * generation that may be exchanged next (refresh.c) */
    {96,
     "CREATE TABLE refresh_families ("
     " id TEXT PRIMARY KEY, user_id INTEGER NOT NULL,"
     " gen INTEGER NOT NULL CHECK (gen >= 1),"
     " expires_at INTEGER NOT NULL CHECK (expires_at >= 0)) WITHOUT ROWID;"
     "CREATE INDEX refresh_families_user ON refresh_families (user_id);"
     "CREATE INDEX refresh_families_expiry ON refresh_families (expires_at);",
     NULL},
    /* 150: the leader lease among replicas (lease.c): who leads, at which
     * epoch, until when (the database's clock); one row */
    {150,
     "CREATE TABLE leader_lease ("
     " id INTEGER PRIMARY KEY CHECK (id = 1),"
     " holder TEXT NOT NULL DEFAULT '',"
     " epoch INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0),"
     " expires_at INTEGER NOT NULL DEFAULT 0,"
     " taken_at INTEGER NOT NULL DEFAULT 0);"
     "INSERT INTO leader_lease (id) VALUES (1);",
     NULL},
    /* 151: the change log between replicas (changes.c): which workloads,
     * the organization or principals changed, by which process */
    {151,
     "CREATE TABLE changes ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " kind INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),"
     " workload_seq INTEGER NOT NULL DEFAULT 0,"
     " origin INTEGER NOT NULL,"
     " at INTEGER NOT NULL);"
     "CREATE INDEX changes_at ON changes (at);",
     NULL},
    /* 152: the leader's fair shares per queue and pool, for the replicas
     * that do not schedule (shares.c) */
    {152,
     "CREATE TABLE fair_shares ("
     " queue_seq INTEGER NOT NULL, pool_seq INTEGER NOT NULL,"
     " kind INTEGER NOT NULL, queue TEXT NOT NULL, pool TEXT NOT NULL,"
     " deserved_gpu INTEGER NOT NULL, deserved_cpu INTEGER NOT NULL,"
     " deserved_mem INTEGER NOT NULL, fair_gpu INTEGER NOT NULL, fair_cpu INTEGER NOT NULL,"
     " fair_mem INTEGER NOT NULL, allocated_gpu INTEGER NOT NULL,"
     " allocated_cpu INTEGER NOT NULL, allocated_mem INTEGER NOT NULL,"
     " requested_gpu INTEGER NOT NULL, requested_cpu INTEGER NOT NULL,"
     " requested_mem INTEGER NOT NULL,"
     " PRIMARY KEY (queue_seq, pool_seq));",
     NULL},
    /* 153: PostgreSQL only (nothing on SQLite): each table's CHECKs as one
     * call of a function of the columns they read (checks.c) */
    {153, NULL, db__fold_checks},
    /* 160: the node ports each distributed workload's pods meet on
     * (rendezvous.c): a block of n_ports from port, while it lives */
    {160,
     "CREATE TABLE rendezvous ("
     " workload_seq INTEGER PRIMARY KEY,"
     " port INTEGER NOT NULL UNIQUE, n_ports INTEGER NOT NULL,"
     " CHECK (port > 0 AND port + n_ports <= 65536 AND n_ports >= 1));",
     NULL},
    /* 161: restarts (restarts.c): how often a workload's pods were
     * restarted, and when a restarted pod may start (its back-off) */
    {161,
     "ALTER TABLE workloads ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE pods ADD COLUMN start_after INTEGER NOT NULL DEFAULT 0;",
     NULL},
    /* 170: named secrets (secrets.c), a name unique in its scope; entries
     * maps each key to its value sealed by the API (secretbox.c) */
    {170,
     "CREATE TABLE secrets ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " name TEXT NOT NULL,"
     " scope TEXT NOT NULL CHECK (scope IN ('project', 'department', 'tenant')),"
     " scope_id TEXT NOT NULL DEFAULT '',"
     " description TEXT NOT NULL DEFAULT '',"
     " created_by TEXT NOT NULL DEFAULT '', updated_by TEXT NOT NULL DEFAULT '',"
     " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
     " update_count INTEGER NOT NULL DEFAULT 1,"
     " entries TEXT NOT NULL DEFAULT '{}',"
     " UNIQUE (scope, scope_id, name));",
     NULL},
    /* 175: the answers kept for idempotency keys (idem.c): a principal's
     * key names one request (its digest) and, once answered, the answer's
     * status and body (status 0 while it is being answered); a day's keys. */
    {175,
     "CREATE TABLE idempotency_keys ("
     " principal TEXT NOT NULL,"
     " idem_key TEXT NOT NULL,"
     " digest TEXT NOT NULL,"
     " status INTEGER NOT NULL DEFAULT 0,"
     " reply TEXT,"
     " created_at INTEGER NOT NULL,"
     " PRIMARY KEY (principal, idem_key));"
     "CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);",
     NULL},
    /* 210: Run:ai's assets but generic secrets (assets.c): environments,
     * compute resources, data sources, credentials, registries and
     * workload templates; a name unique in its family and scope; sealed
     * maps each secret field to its value sealed by the API (secretbox.c) */
    {210,
     "CREATE TABLE assets ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " family TEXT NOT NULL,"
     " kind TEXT NOT NULL,"
     " name TEXT NOT NULL,"
     " scope TEXT NOT NULL CHECK (scope IN ('project', 'department', 'tenant')),"
     " scope_id TEXT NOT NULL DEFAULT '',"
     " description TEXT NOT NULL DEFAULT '',"
     " created_by TEXT NOT NULL DEFAULT '', updated_by TEXT NOT NULL DEFAULT '',"
     " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
     " update_count INTEGER NOT NULL DEFAULT 1,"
     " spec TEXT NOT NULL DEFAULT '{}',"
     " sealed TEXT NOT NULL DEFAULT '{}',"
     " supported TEXT NOT NULL DEFAULT '',"
     " UNIQUE (family, scope, scope_id, name));",
     NULL},
    /* 190: the node pool an eviction took pods from (its seq; 0: none or
     * not known, as for the events written before) */
    {190, "ALTER TABLE events ADD COLUMN pool_seq INTEGER NOT NULL DEFAULT 0;", NULL},
    /* 200: network topologies (ntopo.c): levels a JSON array of label
     * keys, the widest first; a node pool names one by id and keeps a copy
     * of its levels; a workload's topology ({name, requiredPlacement,
     * preferredPlacement} as JSON; "" none) */
    {200,
     "CREATE TABLE network_topologies ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " name TEXT NOT NULL UNIQUE,"
     " cluster_id TEXT NOT NULL DEFAULT '',"
     " levels TEXT NOT NULL,"
     " created_by TEXT NOT NULL DEFAULT '',"
     " created_at INTEGER NOT NULL);"
     "ALTER TABLE node_pools ADD COLUMN topology_id TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE node_pools ADD COLUMN topology_levels TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE workloads ADD COLUMN topology TEXT NOT NULL DEFAULT '';",
     NULL},
    /* 230: workload policies (policies.c): a type's defaults and rules for
     * the tenant, a department or a project, one per type and scope; body
     * is the policy's JSON {defaults, rules} */
    {230,
     "CREATE TABLE policies ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " type TEXT NOT NULL,"
     " scope TEXT NOT NULL,"
     " scope_id TEXT NOT NULL DEFAULT '',"
     " name TEXT NOT NULL DEFAULT '',"
     " created_by TEXT NOT NULL DEFAULT '', updated_by TEXT NOT NULL DEFAULT '',"
     " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
     " body TEXT NOT NULL DEFAULT '{}',"
     " CHECK (type IN ('training', 'workspace', 'distributed', 'inference')"
     " AND scope IN ('tenant', 'department', 'project')),"
     " UNIQUE (type, scope, scope_id));",
     NULL},
    /* 260: the audit log (audit.c): one row per mutating API request,
     * by time; the tenant's settings (settings.c): security and tenant
     * settings and the logo, a value per name */
    {260,
     "CREATE TABLE audit_log ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " at_ms INTEGER NOT NULL,"
     " subject TEXT NOT NULL DEFAULT '',"
     " subject_type TEXT NOT NULL DEFAULT '',"
     " source_ip TEXT NOT NULL DEFAULT '',"
     " action TEXT NOT NULL DEFAULT '',"
     " method TEXT NOT NULL DEFAULT '',"
     " url TEXT NOT NULL DEFAULT '',"
     " entity_type TEXT NOT NULL DEFAULT '',"
     " entity_id TEXT NOT NULL DEFAULT '',"
     " entity_name TEXT NOT NULL DEFAULT '',"
     " status INTEGER NOT NULL DEFAULT 0);"
     "CREATE INDEX audit_log_at ON audit_log (at_ms);"
     "CREATE TABLE settings ("
     " name TEXT PRIMARY KEY,"
     " value TEXT NOT NULL,"
     " updated_at INTEGER NOT NULL);",
     NULL},
    /* 280: the revisions of inference workloads (revisions.c): each spec
     * an inference has had, numbered from 1; ended_at is when the next
     * replaced it (0: in force) */
    {280,
     "CREATE TABLE inference_revisions ("
     " id TEXT PRIMARY KEY,"
     " workload_seq INTEGER NOT NULL,"
     " number INTEGER NOT NULL,"
     " created_at INTEGER NOT NULL,"
     " ended_at INTEGER NOT NULL DEFAULT 0,"
     " created_by TEXT NOT NULL DEFAULT '',"
     " image TEXT NOT NULL DEFAULT '',"
     " spec TEXT NOT NULL DEFAULT '',"
     " n_pods INTEGER NOT NULL DEFAULT 1,"
     " min_pods INTEGER NOT NULL DEFAULT 1,"
     " UNIQUE (workload_seq, number));",
     NULL},
    /* 281: reports (reports.c): a request over a time range, grouped and
     * filtered (group_by "" none; filter_by a JSON array), its status and
     * the CSV file built from it */
    {281,
     "CREATE TABLE reports ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " id TEXT NOT NULL UNIQUE,"
     " name TEXT NOT NULL,"
     " description TEXT NOT NULL DEFAULT '',"
     " start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,"
     " group_by TEXT NOT NULL DEFAULT '',"
     " filter_by TEXT NOT NULL DEFAULT '[]',"
     " created_at INTEGER NOT NULL, created_by TEXT NOT NULL DEFAULT '',"
     " status TEXT NOT NULL,"
     " status_updated_at INTEGER NOT NULL,"
     " status_message TEXT NOT NULL DEFAULT '',"
     " csv TEXT NOT NULL DEFAULT '');",
     NULL},
    /* 240: users' access keys (Run:ai's access keys and user applications,
     * users.c): a client-credentials principal (kind 1) whose owner_id
     * names the user it acts as; 0 for users and service accounts */
    {240,
     "ALTER TABLE users ADD COLUMN owner_id INTEGER NOT NULL DEFAULT 0;"
     "CREATE INDEX users_owner ON users (owner_id);",
     NULL},
    /* 380: the change log carries the tenant's settings too (kind 3,
     * settings.c); SQLite rebuilds the table for its CHECK, the
     * AUTOINCREMENT counter carried over so no seq is given again */
    {380, MIGRATION_380, NULL},
    /* 390: SQLite only (nothing on PostgreSQL): each CHECK's list of three
     * constants or more as comparisons, which SQLite runs without a
     * temporary index at each write (checks.c) */
    {390, NULL, db__flatten_checks},
    /* 400: the Running workloads with their project's time or idle limits
     * (db_agent_limited(), read at every turn of the scheduler thread),
     * found without reading every Running workload; phase and rules both
     * in the index so SQLite's planner takes it over workloads_active */
    {400,
     "CREATE INDEX workloads_ruled ON workloads (phase, rules)"
     " WHERE deleted_at = 0 AND rules > '';",
     NULL},
    /* 410: the agents by when they were last seen, so the late ones
     * (db_agent_expire(), at every turn of the scheduler thread) are
     * found without reading every node */
    {410, "CREATE INDEX agent_nodes_seen ON agent_nodes (last_seen);", NULL},
};

/* The later migrations PostgreSQL runs instead of their SQL (pq.c's
 * rewrite cannot say triggers: PostgreSQL's run a function). */
static const struct {
    int number;
    const char *sql;
} pg_variants[] = {
    {50,
     "ALTER TABLE pods ADD COLUMN uid TEXT NOT NULL DEFAULT '';"
     "UPDATE pods SET uid = replace(gen_random_uuid()::text, '-', '');"
     "CREATE FUNCTION allot_pods_new_uid() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
     " NEW.uid := replace(gen_random_uuid()::text, '-', ''); RETURN NEW; END $$;"
     "CREATE TRIGGER pods_new_uid BEFORE INSERT ON pods FOR EACH ROW WHEN (NEW.uid = '')"
     " EXECUTE FUNCTION allot_pods_new_uid();"
     MIGRATION_50},
    {71,
     "ALTER TABLE workloads ADD COLUMN run_ms INTEGER NOT NULL DEFAULT 0 CHECK (run_ms >= 0);"
     "CREATE FUNCTION allot_workloads_run_ms() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
     " NEW.run_ms := NEW.run_ms + GREATEST(0, NEW.phase_updated_at - OLD.started_ms);"
     " RETURN NEW; END $$;"
     "CREATE TRIGGER workloads_run_ms BEFORE UPDATE OF phase ON workloads FOR EACH ROW"
     " WHEN (OLD.phase IN ('Initializing', 'Running')"
     " AND NEW.phase NOT IN ('Initializing', 'Running') AND OLD.started_ms > 0)"
     " EXECUTE FUNCTION allot_workloads_run_ms();"},
    {380,
     "ALTER TABLE changes DROP CONSTRAINT changes_kind_check,"
     " ADD CONSTRAINT changes_kind_check CHECK (kind IN (0, 1, 2, 3));"},
};

#define N_LATER ((int)(sizeof(later) / sizeof(later[0])))

/* Is migration `number` recorded in schema_migrations? */
static int later_applied(struct db__conn *c, int number, int *applied)
{
    static const char sql[] = "SELECT count(*) FROM schema_migrations WHERE number = ?";
    int rc = int_once(c, sql, number, applied);

    if (rc == DB_OK)
        *applied = *applied > 0;
    return rc;
}

/* Refuses a database that recorded a later migration this build lacks. */
static int later_known(struct db__conn *c)
{
    struct db__stmt *st = NULL;
    int rc = DB_EIO, i, src;

    if (db__prep_once(c, "SELECT number FROM schema_migrations", &st) != DB_OK)
        goto out;
    while ((src = db__step(st)) == DB__ROW) {
        int number = db__col_int(st, 0);
        for (i = 0; i < N_LATER && later[i].number != number; i++)
            ;
        if (i == N_LATER) {
            fprintf(stderr, "allotd: db: migration %d is newer than this build\n", number);
            rc = DB_EINVAL;
            goto out;
        }
    }
    rc = src == DB__DONE ? DB_OK : DB_EIO;
out:
    db__finalize(st);
    return rc;
}

/* The SQL of later[i] for the connection's engine. */
static const char *later_sql(struct db__conn *c, int i)
{
    size_t k;

    for (k = 0; db__is_pq(c) && k < sizeof(pg_variants) / sizeof(pg_variants[0]); k++)
        if (pg_variants[k].number == later[i].number)
            return pg_variants[k].sql;
    return later[i].sql;
}

static int apply_later(struct db__conn *c, int i)
{
    char record[128];
    int rc, applied = 0;

    rc = db__exec(c, "BEGIN IMMEDIATE");
    if (rc != DB_OK)
        return rc;
    rc = later_applied(c, later[i].number, &applied);
    if (rc == DB_OK && !applied) {
        rc = later[i].fn ? later[i].fn(c) : db__exec(c, later_sql(c, i));
        snprintf(record, sizeof(record),
                 "INSERT INTO schema_migrations (number, applied_at) VALUES (%d, %lld)",
                 later[i].number, (long long)db__now_ms());
        if (rc == DB_OK)
            rc = db__exec(c, record);
        if (rc == DB_OK)
            rc = foreign_keys_hold(c);
    }
    return commit_or_rollback(c, rc);
}

static int migrate_later(struct db__conn *c)
{
    int i, rc;

    rc = db__exec(c, "CREATE TABLE IF NOT EXISTS schema_migrations ("
                     " number INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
    if (rc == DB_OK)
        rc = later_known(c);
    for (i = 0; rc == DB_OK && i < N_LATER; i++) {
        int applied = 0;
        rc = later_applied(c, later[i].number, &applied); /* no write lock when nothing to do */
        if (rc != DB_OK || applied)
            continue;
        rc = apply_later(c, i);
        if (rc != DB_OK)
            fprintf(stderr, "allotd: db: migration %d failed\n", later[i].number);
    }
    return rc;
}

int db__has_schema(struct db__conn *c, int *has)
{
    int version = 0, rc = user_version(c, &version);

    *has = version > 0;
    return rc;
}

static int migrate_all(struct db__conn *c)
{
    int version = 0, i, rc;

    rc = user_version(c, &version);
    if (rc != DB_OK)
        return rc;
    if (version > N_MIGRATIONS) {
        fprintf(stderr, "allotd: db: schema version %d is newer than this build (%d)\n",
                version, N_MIGRATIONS);
        return DB_EINVAL;
    }
    for (i = version; i < N_MIGRATIONS; i++) {
        rc = apply_one(c, i);
        if (rc != DB_OK) {
            fprintf(stderr, "allotd: db: migration %d failed\n", i + 1);
            return rc;
        }
    }
    return migrate_later(c);
}

/* Applies every migration the database lacks, with foreign keys off
 * (foreign_keys_hold); called once by db_open() before any other thread
 * touches the database. */
int db__migrate(struct db__conn *c)
{
    int rc = db__exec(c, "PRAGMA foreign_keys=OFF");

    if (rc == DB_OK)
        rc = migrate_all(c);
    if (db__exec(c, "PRAGMA foreign_keys=ON") != DB_OK && rc == DB_OK)
        rc = DB_EIO;
    return rc;
}
