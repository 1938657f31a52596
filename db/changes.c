/*
 * changes.c: the change log that carries, between replicas on one
 * database, what an in-process call tells only the local server: which
 * workloads changed through the API (submitted, deleted, suspended,
 * resumed, updated, touched by an agent's heartbeat), that the
 * organization changed (departments, projects, pools, nodes), and that
 * principals changed (users, their tokens, access rules).
 *
 * A row is written inside the change's own savepoint (db__change, or
 * db__write_noted around a whole write), so it commits with the change or
 * not at all; it names the process that wrote it (origin), whose own
 * server was told in-process already. Rows are read by seq (db_changes_since)
 * and purged by age (db_changes_purge).
 *
 * Invariants:
 *   1. A change and its row commit together.
 *   2. seq only grows (AUTOINCREMENT: a purge never lets a seq be given
 *      again); it need not be dense, nor in commit order across writers
 *      (the reader waits for gaps, control/sched_loop.c).
 */
#include "db_int.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static int64_t origin_value;

int64_t db_change_origin(void)
{
    int64_t v = __atomic_load_n(&origin_value, __ATOMIC_ACQUIRE), r = 0;

    if (v != 0)
        return v;
    while (r <= 0) {
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            r = db__now_ms();
        r &= INT64_MAX;
    }
    __atomic_compare_exchange_n(&origin_value, &v, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&origin_value, __ATOMIC_ACQUIRE);
}

int db__change(struct db__conn *c, int kind, int64_t workload_seq)
{
    static const char sql[] =
        "INSERT INTO changes (kind, workload_seq, origin, at) VALUES (?, ?, ?, ?)";
    const struct db__arg args[] = {DB__I(kind), DB__I(workload_seq), DB__I(db_change_origin()),
                                   DB__I(db__now_ms())};

    return db__exec_args(c, sql, args, DB__NARGS(args));
}

struct noted {
    int kind;
    db__fn fn;
    void *arg;
};

static int noted_fn(struct db__conn *c, void *arg)
{
    struct noted *n = arg;
    int rc = n->fn(c, n->arg);

    return rc == DB_OK ? db__change(c, n->kind, 0) : rc;
}

int db__write_noted(struct db *db, int kind, db__fn fn, void *arg)
{
    struct noted n = {kind, fn, arg};

    return db__write(db, noted_fn, &n);
}

struct since_arg {
    int64_t after;
    int limit;
    struct db_change **out;
    int *n, cap;
};

static int since_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT seq, kind, workload_seq, origin FROM changes"
                              " WHERE seq > ? ORDER BY seq LIMIT ?";
    struct since_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->after);
    db__bind_int(st, 2, a->limit);
    while ((src = db__step(st)) == DB__ROW) {
        struct db_change *ch;
        if (db__grow(a->out, *a->n, &a->cap, sizeof(**a->out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        ch = &(*a->out)[(*a->n)++];
        ch->seq = db__col_int64(st, 0);
        ch->kind = db__col_int(st, 1);
        ch->workload_seq = db__col_int64(st, 2);
        ch->own = db__col_int64(st, 3) == db_change_origin();
    }
    return db__done(st, src == DB__DONE ? DB_OK : src);
}

int db_changes_since(struct db *db, int64_t after, int limit, struct db_change **out, int *n)
{
    struct since_arg a = {after, limit, out, n, 0};

    return db__read_list(db, since_fn, &a, out, n);
}

static int last_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT coalesce(max(seq), 0) FROM changes";
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    src = db__step(st);
    if (src == DB__ROW)
        *(int64_t *)arg = db__col_int64(st, 0);
    return db__done(st, src == DB__ROW ? DB_OK : src);
}

int db_changes_last(struct db *db, int64_t *seq)
{
    *seq = 0;
    return db__read(db, last_fn, seq);
}

int db_changes_purge(struct db *db, int64_t before_ms)
{
    static const char sql[] = "DELETE FROM changes WHERE at < ?";

    return db__write_key(db, sql, before_ms);
}
