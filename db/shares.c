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

/* The four triples of a share, in COLS order. */
static int64_t *triple(struct db_share *s, int k)
{
    int64_t *t[4] = {s->deserved, s->fair, s->allocated, s->requested};

    return t[k];
}

static int put_fn(struct db__conn *c, void *arg)
{
    static const char ins[] = "INSERT INTO fair_shares (" COLS ")"
                              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    struct put_arg *a = arg;
    int rc = db__exec(c, "DELETE FROM fair_shares"), i, k, r;
    struct db__stmt *st;

    for (i = 0; rc == DB_OK && i < a->n; i++) {
        struct db_share *s = (struct db_share *)&a->s[i];
        st = db__prep(c, ins, &rc);
        if (!st)
            return rc;
        db__bind_int64(st, 1, s->queue_seq);
        db__bind_int64(st, 2, s->pool_seq);
        db__bind_int(st, 3, s->kind);
        db__bind_text(st, 4, s->queue);
        db__bind_text(st, 5, s->pool);
        for (k = 0; k < 4; k++)
            for (r = 0; r < 3; r++)
                db__bind_int64(st, 6 + k * 3 + r, triple(s, k)[r]);
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
    struct db_share *out;
    int n, cap;
};

static int get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " COLS " FROM fair_shares ORDER BY queue_seq, pool_seq";
    struct get_arg *a = arg;
    int rc = DB_OK, src, k, r;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    while ((src = db__step(st)) == DB__ROW) {
        struct db_share *s;
        if (db__grow(&a->out, a->n, &a->cap, sizeof(*a->out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        s = &a->out[a->n++];
        memset(s, 0, sizeof(*s)); /* names padded with zeros: rows compare whole */
        s->queue_seq = db__col_int64(st, 0);
        s->pool_seq = db__col_int64(st, 1);
        s->kind = db__col_int(st, 2);
        db__copy(s->queue, sizeof(s->queue), st, 3);
        db__copy(s->pool, sizeof(s->pool), st, 4);
        for (k = 0; k < 4; k++)
            for (r = 0; r < 3; r++)
                triple(s, k)[r] = db__col_int64(st, 5 + k * 3 + r);
    }
    return db__done(st, src == DB__DONE ? DB_OK : src);
}

int db_shares_get(struct db *db, struct db_share **out, int *n)
{
    struct get_arg a = {NULL, 0, 0};
    int rc = db__read(db, get_fn, &a);

    if (rc != DB_OK) {
        free(a.out);
        a.out = NULL;
        a.n = 0;
    }
    *out = a.out;
    *n = a.n;
    return rc;
}
