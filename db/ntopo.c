/*
 * ntopo.c: the store of network topologies (db_ntopo.h).
 *
 * Invariants:
 *   1. A topology's name is unique (a UNIQUE index); its levels never
 *      change once stored.
 *   2. A pool's copy of its topology's levels is that topology's: a
 *      deleted topology is taken off the pools that named it, in the same
 *      write.
 */
#include "db_int.h"
#include "db_ntopo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS "t.seq, t.id, t.name, t.cluster_id, t.levels, t.created_by, t.created_at"

DB__TABLE(ntopo_cols, ntopo_shape, struct db_ntopo, NULL, seq, id, name, cluster_id, levels,
          created_by, created_at);

static const struct db__insert ntopo_insert = {
    "INSERT INTO network_topologies (id, name, cluster_id, levels, created_by, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?)",
    &ntopo_shape, 0, 0};

int db_ntopo_insert(struct db *db, struct db_ntopo *t)
{
    t->created_at = db__now_ms();
    return db__insert_row(db, &ntopo_insert, t);
}

int db_ntopo_get(struct db *db, const char *id, struct db_ntopo *out)
{
    struct db__key key = {0, id};

    return db__read_row(db, "SELECT " COLS " FROM network_topologies t WHERE t.id = ?", key,
                        &ntopo_shape, out);
}

int db_ntopo_list(struct db *db, struct db_ntopo **out, int *n)
{
    *out = NULL;
    *n = 0;
    return db__read_rows(db, "SELECT " COLS " FROM network_topologies t ORDER BY t.name, t.id",
                         NULL, &ntopo_shape, out, n);
}

static int delete_fn(struct db__conn *c, void *arg)
{
    int rc = db__run_text_key(c, "DELETE FROM network_topologies WHERE id = ?", arg);

    if (rc == DB_OK && db__changes(c) == 0)
        return DB_ENOTFOUND;
    if (rc == DB_OK)
        rc = db__run_text_key(c,
                              "UPDATE node_pools SET topology_id = '', topology_levels = ''"
                              " WHERE topology_id = ?",
                              arg);
    return rc;
}

int db_ntopo_delete(struct db *db, const char *id)
{
    return db__write(db, delete_fn, (void *)id);
}
