/*
 * revisions.c: the store of inference revisions (db_revisions.h).
 *
 * Invariants:
 *   1. A workload's revisions are numbered 1, 2, ... without gaps; at
 *      most one is in force (ended_at 0), the highest.
 *   2. Revisions are written only inside db_workload_respec's write
 *      (db__revision_next), before the workload row takes the new spec:
 *      the first PATCH stores the submitted spec as revision 1 (its id
 *      the workload's) and the new one as 2; later ones add one each.
 *   3. A workload's revisions go with it when it is purged (workloads.c).
 */
#include "db_int.h"
#include "db_revisions.h"

#include <stdlib.h>
#include <string.h>

#define COLS "id, workload_seq, number, created_at, ended_at, created_by, image, spec," \
             " n_pods, min_pods"

DB__TABLE(rev_cols, rev_shape, struct db_revision, NULL, id, workload_seq, number, created_at,
          ended_at, created_by, image, spec, n_pods, min_pods);

int db__revision_next(struct db__conn *c, const struct db_wl_respec *u)
{
    static const char first[] =
        "INSERT INTO inference_revisions (" COLS ")"
        " SELECT id, seq, 1, created_at, 0, created_by, image, COALESCE(spec, ''), n_pods,"
        " min_pods FROM workloads WHERE seq = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM inference_revisions WHERE workload_seq = ?1)";
    static const char end[] =
        "UPDATE inference_revisions SET ended_at = ?2 WHERE workload_seq = ?1 AND ended_at = 0";
    static const char next[] =
        "INSERT INTO inference_revisions (" COLS ")"
        " SELECT ?1, ?2, max(number) + 1, ?3, 0, ?4, ?5, ?6, ?7, ?8"
        " FROM inference_revisions WHERE workload_seq = ?2";
    char id[DB_ID_LEN];
    const struct db__arg end_args[] = {DB__I(u->seq), DB__I(u->now_ms)};
    const struct db__arg first_args[] = {DB__I(u->seq)};
    int rc;

    db__uuid(id);
    {
        const struct db__arg next_args[] = {DB__S(id),       DB__I(u->seq),    DB__I(u->now_ms),
                                            DB__S(u->by),    DB__S(u->image),  DB__S(u->spec),
                                            DB__I(u->n_pods), DB__I(u->min_pods)};
        rc = db__exec_args(c, first, first_args, DB__NARGS(first_args));
        if (rc == DB_OK)
            rc = db__exec_args(c, end, end_args, DB__NARGS(end_args));
        if (rc == DB_OK)
            rc = db__exec_args(c, next, next_args, DB__NARGS(next_args));
    }
    return rc;
}

int db_revision_list(struct db *db, int64_t workload_seq, struct db_revision **out, int *n)
{
    struct db__key key = {workload_seq, NULL};

    *out = NULL;
    *n = 0;
    return db__read_rows(db,
                         "SELECT " COLS " FROM inference_revisions WHERE workload_seq = ?"
                         " ORDER BY number",
                         &key, &rev_shape, out, n);
}

int db_revision_get(struct db *db, const char *id, struct db_revision *out)
{
    struct db__key key = {0, id};

    return db__read_row(db, "SELECT " COLS " FROM inference_revisions WHERE id = ?", key,
                        &rev_shape, out);
}

void db_revisions_free(struct db_revision *r, int n)
{
    db__rows_free(&rev_shape, r, n);
}
