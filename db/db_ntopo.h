/*
 * db_ntopo.h: network topologies (Run:ai's /api/v1/network-topologies),
 * ntopo.c.
 *
 * A topology is a name unique in the tenant and an ordered list of node
 * label keys, the widest level first, kept as a JSON array of strings
 * (the API checks it). A node pool names one by id (struct db_pool's
 * topology_id) and keeps a copy of its levels (topology_levels): a
 * topology is never changed once created; deleting one takes it off the
 * pools that name it.
 */
#ifndef ALLOT_DB_NTOPO_H
#define ALLOT_DB_NTOPO_H

#include "db.h"

struct db_ntopo {
    int64_t seq;
    char id[DB_ID_LEN];
    char name[DB_NAME_LEN];
    char cluster_id[DB_ID_LEN];
    char levels[DB_TOPOLOGY_LEVELS_LEN];   /* JSON array of label keys */
    char created_by[DB_NAME_LEN];
    int64_t created_at;
};

/* Inserts t (id, name, cluster_id, levels, created_by set by the caller);
 * fills seq and created_at. DB_ECONFLICT if the name is taken. */
int db_ntopo_insert(struct db *db, struct db_ntopo *t);
/* The topology of that id; DB_ENOTFOUND if none. */
int db_ntopo_get(struct db *db, const char *id, struct db_ntopo *out);
/* Every topology, by name (malloc'd: free()). */
int db_ntopo_list(struct db *db, struct db_ntopo **out, int *n);
/* Deletes it and takes it off the pools that name it; DB_ENOTFOUND if none. */
int db_ntopo_delete(struct db *db, const char *id);

#endif
