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
    int *n;
};

static int since_fn(struct db__conn *c, void *arg)
{
    DB__TABLE(cols, shape, struct db_change, NULL, seq, kind, workload_seq, own);
    static const char sql[] = "SELECT seq, kind, workload_seq,"
                              " CASE WHEN origin = ?3 THEN 1 ELSE 0 END FROM changes"
                              " WHERE seq > ?1 ORDER BY seq LIMIT ?2";
    struct since_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->after), DB__I(a->limit), DB__I(db_change_origin())};

    return db__query_rows(c, sql, args, DB__NARGS(args), &shape, a->out, a->n);
}

int db_changes_since(struct db *db, int64_t after, int limit, struct db_change **out, int *n)
{
    struct since_arg a = {after, limit, out, n};

    return db__read_list(db, since_fn, &a, out, n);
}

static int last_fn(struct db__conn *c, void *arg)
{
    return db__query_one(c, "SELECT coalesce(max(seq), 0) FROM changes", NULL, 0,
                         db__read_int64, arg);
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
