/*
 * db_revisions.h: the revisions of inference workloads (revisions.c):
 * each spec an inference has had, in order. The first is the spec it was
 * submitted with; each PATCH (db_workload_respec) ends the one in force
 * and adds the next in the same write.
 */
#ifndef ALLOT_DB_REVISIONS_H
#define ALLOT_DB_REVISIONS_H

#include "db.h"

struct db_revision {
    char id[DB_ID_LEN];           /* the first revision's is its workload's id */
    int64_t workload_seq;
    int number;                   /* 1, 2, ... */
    int64_t created_at;
    int64_t ended_at;             /* when the next one replaced it; 0: in force */
    char created_by[DB_NAME_LEN];
    char image[256];
    char *spec;                   /* the spec as JSON; malloc'd */
    int n_pods, min_pods;
};

/* The revisions stored for a workload, oldest first; malloc'd (free with
 * db_revisions_free). None until its first PATCH: its submission is then
 * its only revision, not stored. */
int db_revision_list(struct db *db, int64_t workload_seq, struct db_revision **out, int *n);
/* The revision of that id; DB_ENOTFOUND if none is stored. */
int db_revision_get(struct db *db, const char *id, struct db_revision *out);
void db_revisions_free(struct db_revision *r, int n);

#endif
