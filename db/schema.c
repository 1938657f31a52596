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
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int db_schema_version(void)
{
    return N_MIGRATIONS;
}

static int user_version(struct db__conn *c, int *version)
{
    sqlite3_stmt *st = NULL;
    int rc = DB_EIO;

    if (sqlite3_prepare_v2(c->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW)
        goto out;
    *version = sqlite3_column_int(st, 0);
    rc = DB_OK;
out:
    sqlite3_finalize(st);
    return rc;
}

static int apply_one(struct db__conn *c, int i)
{
    char bump[64];
    int rc;

    rc = db__exec(c, "BEGIN IMMEDIATE");
    if (rc != DB_OK)
        return rc;
    rc = db__exec(c, migrations[i]);
    if (rc == DB_OK) {
        snprintf(bump, sizeof(bump), "PRAGMA user_version=%d", i + 1);
        rc = db__exec(c, bump);
    }
    if (rc == DB_OK)
        rc = db__exec(c, "COMMIT");
    if (rc != DB_OK)
        db__exec(c, "ROLLBACK");
    return rc;
}

/* Applies every migration the database lacks; called once by db_open()
 * before any other thread touches the database. */
int db__migrate(struct db__conn *c)
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
    return DB_OK;
}
