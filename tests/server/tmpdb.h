/*
 * tmpdb.h: the database a storage unit test opens and removes: a new
 * SQLite file in a temporary folder, or, where the test allows it and
 * ALLOT_TEST_DB_URI is set (tests/pg/run_pg.sh: pg/test_db,
 * pg/test_lease), a fresh schema in that PostgreSQL database.
 *
 * Beside it, the organisation most storage tests start from (tmpdb_org).
 *
 * Header-only: each test program is one file plus this.
 */
#ifndef ALLOT_TEST_TMPDB_H
#define ALLOT_TEST_TMPDB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"

#define TMPDB_DIR_LEN 64
#define TMPDB_PATH_LEN 256

/* The database of one test, at the head of its fixture: a fixture struct
 * whose first member this is can be freed by tmpdb_teardown. */
struct tmpdb {
    char dir[TMPDB_DIR_LEN];
    char path[TMPDB_PATH_LEN];
    struct db *db;
};

/* Opens t->db: the folder /tmp/allot-test-TAG-XXXXXX is made in t->dir
 * (even on PostgreSQL, for the files a test writes beside the database)
 * and t->path is the file in it, or the URI when any_engine and the
 * variable is set. 0, or -1. */
static int tmpdb_open(const char *tag, int any_engine, struct tmpdb *t)
{
    const char *uri = any_engine ? getenv("ALLOT_TEST_DB_URI") : NULL;

    snprintf(t->dir, TMPDB_DIR_LEN, "/tmp/allot-test-%s-XXXXXX", tag);
    if (!mkdtemp(t->dir))
        return -1;
    if (uri)
        snprintf(t->path, TMPDB_PATH_LEN, "%s", uri);
    else
        snprintf(t->path, TMPDB_PATH_LEN, "%s/t.db", t->dir);
    return db_open(t->path, uri ? DB_OPEN_FRESH : DB_OPEN_CREATE, &t->db) == DB_OK ? 0 : -1;
}

/* Closes t->db and removes the file (with its -wal, -shm and lock) and
 * the folder. */
static void tmpdb_remove(struct tmpdb *t)
{
    static const char *const ext[] = {"-wal", "-shm", ".lock", ""};
    char p[TMPDB_PATH_LEN + 8];
    size_t i;

    db_close(t->db);
    for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", t->path, ext[i]);
        unlink(p);
    }
    rmdir(t->dir);
}

/* A cmocka teardown for a calloc'd fixture that starts with struct tmpdb:
 * removes its database and frees it. */
static inline int tmpdb_teardown(void **state)
{
    struct tmpdb *t = *state;

    tmpdb_remove(t);
    free(t);
    return 0;
}

/* Inserts the organisation most storage tests start from: node pool
 * "default" (label k=v), department "default", and in it project "team-a"
 * with, when gpu_quota >= 0, that quota deserved in the pool (milli-GPUs,
 * no limit, over-quota weight 1000). DB_OK, or the first error. */
static inline int tmpdb_org(struct db *db, int gpu_quota, struct db_pool *pool,
                            struct db_queue *dept, struct db_queue *proj)
{
    int rc;

    strcpy(pool->name, "default");
    strcpy(pool->label_key, "k");
    strcpy(pool->label_value, "v");
    if ((rc = db_pool_insert(db, pool)) != DB_OK)
        return rc;
    dept->kind = DB_DEPARTMENT;
    strcpy(dept->name, "default");
    if ((rc = db_queue_insert(db, dept)) != DB_OK)
        return rc;
    proj->kind = DB_PROJECT;
    strcpy(proj->name, "team-a");
    proj->parent_seq = dept->seq;
    if (gpu_quota >= 0) {
        proj->n_quotas = 1;
        proj->quotas[0].pool_seq = pool->seq;
        proj->quotas[0].deserved[0] = gpu_quota;
        proj->quotas[0].limit[0] = -1;
        proj->quotas[0].weight[0] = 1000;
        proj->quotas[0].has[0] = 1;
    }
    return db_queue_insert(db, proj);
}

#endif /* ALLOT_TEST_TMPDB_H */
