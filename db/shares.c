/*
 * shares.c: the fair shares the leader's last cycle computed, per queue
 * and node pool, kept in the database for the replicas that do not
 * schedule (their API replies and /metrics show the leader's figures).
 *
 * db_shares_put() replaces every row in one savepoint (the leader's
 * scheduler thread: fenced like its other writes); db_shares_get() reads
 * them all in one read transaction.
 */
#include "db_int.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>

#define COLS "queue_seq, pool_seq, kind, queue, pool, deserved_gpu, deserved_cpu," \
             " deserved_mem, fair_gpu, fair_cpu, fair_mem, allocated_gpu, allocated_cpu," \
             " allocated_mem, requested_gpu, requested_cpu, requested_mem"

struct put_arg {
    const struct db_share *s;
    int n;
};

/* A share's row: COLS, in order, for its insert and its read. */
static const struct db__col share_cols[] = {
    DB__COLS(struct db_share, queue_seq, pool_seq, kind, queue, pool, deserved[0], deserved[1],
        deserved[2], fair[0], fair[1], fair[2], allocated[0], allocated[1], allocated[2],
        requested[0], requested[1], requested[2]),
};
/* rows read whole, names padded with zeros: rows compare whole */
static const struct db__shape share_shape = DB__SHAPE(struct db_share, share_cols, NULL);

static int put_fn(struct db__conn *c, void *arg)
{
    static const char ins[] = "INSERT INTO fair_shares (" COLS ")"
                              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    struct put_arg *a = arg;
    int rc = db__exec(c, "DELETE FROM fair_shares"), i;
    struct db__stmt *st;

    for (i = 0; rc == DB_OK && i < a->n; i++) {
        st = db__prep(c, ins, &rc);
        if (!st)
            return rc;
        db__cols_bind(st, 1, share_cols, DB__NCOLS(share_cols), &a->s[i]);
        rc = db__done(st, db__step_done(st));
    }
    return rc;
}

int db_shares_put(struct db *db, const struct db_share *s, int n)
{
    struct put_arg a = {s, n};

    return db__write(db, put_fn, &a);
}

struct get_arg {
    struct db_share **out;
    int *n, cap;
};

static int get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " COLS " FROM fair_shares ORDER BY queue_seq, pool_seq";
    struct get_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    while ((src = db__step(st)) == DB__ROW) {
        if (db__grow(a->out, *a->n, &a->cap, sizeof(**a->out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        db__row_read(st, 0, &share_shape, &(*a->out)[(*a->n)++]);
    }
    return db__done(st, src == DB__DONE ? DB_OK : src);
}

int db_shares_get(struct db *db, struct db_share **out, int *n)
{
    struct get_arg a = {out, n, 0};

    return db__read_list(db, get_fn, &a, out, n);
}
