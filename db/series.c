/*
 * series.c: the metrics time series of the cluster, node pools, nodes and
 * workloads (api/series_rec.c records them every sample period;
 * api/h_infra_series.c answers the /metrics routes from them), and since
 * when pending workloads wait (the source of AVG_WORKLOAD_WAIT_TIME).
 *
 * A point is (kind, entity, metric, label, time, value). Points are
 * written only when a value changes, so a series is a step function: the
 * value at time t is the value of the latest point at or before t.
 *
 * Invariants:
 *   1. Pruning keeps the latest point of every series whatever its age
 *      (it is the value in force), unless that value is 0: a series that
 *      has been 0 for longer than the retention is dropped.
 *   2. db_series_get() returns, per label, the point in force at `start`
 *      (if any) and every point up to `end`, ordered by label then time.
 *   3. db_series_add() stores its points as writing each in turn would:
 *      every value exact, and a key given twice keeps its last value.
 */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct add_arg {
    const struct db_point *p;
    int n;
    int64_t keep_after;
    int64_t held_us;              /* how long the writer ran it */
};

/* SQLite: the points go ADD_ROWS at a time in one INSERT of that many
 * rows (bound, in order: a key given twice keeps its last value, as
 * INSERT OR REPLACE of each point in turn did), the rest one by one. A
 * statement per point paid the statement's own work (bindings copied,
 * reset, halt, a seek from the root) 16,000 times for a sample after a
 * fill. Reading the rows from one JSON array instead (json_each) cost
 * more than that: SQLite parses a row's array again for each column. */
#define ADD_ROW "(?, ?, ?, ?, ?, ?)"
#define ADD_ROWS_2 ADD_ROW ", " ADD_ROW
#define ADD_ROWS_8 ADD_ROWS_2 ", " ADD_ROWS_2 ", " ADD_ROWS_2 ", " ADD_ROWS_2
#define ADD_ROWS_32 ADD_ROWS_8 ", " ADD_ROWS_8 ", " ADD_ROWS_8 ", " ADD_ROWS_8
#define ADD_ROWS_128 ADD_ROWS_32 ", " ADD_ROWS_32 ", " ADD_ROWS_32 ", " ADD_ROWS_32
#define ADD_ROWS 128
#define ADD_INTO "INSERT OR REPLACE INTO series (kind, entity, metric, label, ts, value) VALUES "

static int add_lite(struct db__conn *c, const struct db_point *p, int n)
{
    int rc = DB_OK, i = 0, k, rows;
    struct db__stmt *st;

    while (rc == DB_OK && i < n) {
        rows = n - i >= ADD_ROWS ? ADD_ROWS : 1;
        if (!(st = db__prep(c, rows > 1 ? ADD_INTO ADD_ROWS_128 : ADD_INTO ADD_ROW, &rc)))
            return rc;
        for (k = 0; k < rows; k++, i++) {
            db__bind_int(st, 6 * k + 1, p[i].kind);
            db__bind_static(st, 6 * k + 2, p[i].entity);
            db__bind_static(st, 6 * k + 3, p[i].metric);
            db__bind_static(st, 6 * k + 4, p[i].label);
            db__bind_int64(st, 6 * k + 5, p[i].ts);
            db__bind_double(st, 6 * k + 6, p[i].value);
        }
        rc = db__done(st, db__step_done(st));
    }
    return rc;
}

/* PostgreSQL: one statement over the points as one JSON array of rows
 * [kind, entity, metric, label, ts, value] (each value the text a bound
 * double travels as, %.17g), where a statement per point was one
 * executor start each. ON CONFLICT may not touch a row twice in one
 * statement: each key's last point only (DISTINCT ON, latest first). */
static int add_pq(struct db__conn *c, const struct db_point *p, int n)
{
    static const char sql[] =
        "INSERT INTO series (kind, entity, metric, label, ts, value)"
        " SELECT DISTINCT ON (kind, entity, metric, label, ts) kind, entity, metric, label, ts,"
        " value FROM (SELECT (v ->> 0)::bigint AS kind, v ->> 1 AS entity, v ->> 2 AS metric,"
        " v ->> 3 AS label, (v ->> 4)::bigint AS ts, (v ->> 5)::float8 AS value, k"
        " FROM json_array_elements(?1::json) WITH ORDINALITY AS j (v, k)) AS p"
        " ORDER BY kind, entity, metric, label, ts, k DESC"
        " ON CONFLICT (kind, entity, metric, label, ts) DO UPDATE SET value = excluded.value";
    struct db__text b = {0};
    struct db__stmt *st;
    char v[40];
    int rc = DB_OK, i, k;

    db__text_add(&b, "[", 1);
    for (i = 0; i < n; i++) {
        db__text_add(&b, i ? ",[" : "[", i ? 2 : 1);
        db__json_int(&b, 0, p[i].kind);
        db__json_str(&b, p[i].entity);
        db__json_str(&b, p[i].metric);
        db__json_str(&b, p[i].label);
        db__json_int(&b, 1, p[i].ts);
        k = snprintf(v, sizeof(v), ",\"%.17g\"]", p[i].value);
        db__text_add(&b, v, (size_t)k);
    }
    db__text_add(&b, "]", 1);
    if (b.failed)
        rc = DB_ENOMEM;
    else if ((st = db__prep(c, sql, &rc)) != NULL) {
        db__bind_static(st, 1, b.s);
        rc = db__done(st, db__step_done(st));
    }
    free(b.s);
    return rc;
}

static int add_points(struct db__conn *c, const struct add_arg *a)
{
    static const char prune[] =
        "DELETE FROM series WHERE ts < ?1 AND (value = 0 OR ts < (SELECT max(s.ts) FROM series s"
        " WHERE s.kind = series.kind AND s.entity = series.entity AND s.metric = series.metric"
        " AND s.label = series.label))";
    int rc = DB_OK;
    struct db__stmt *st;

    if (a->n > 0)
        rc = db__is_pq(c) ? add_pq(c, a->p, a->n) : add_lite(c, a->p, a->n);
    if (rc != DB_OK || a->keep_after <= 0)
        return rc;
    st = db__prep(c, prune, &rc);
    if (!st)
        return rc;
    db__bind_int64(st, 1, a->keep_after);
    return db__done(st, db__step_done(st));
}

/* The writer's time on the sample is measured: it is a write of the
 * scheduler thread that the writes queued behind it wait for. */
static int add_fn(struct db__conn *c, void *arg)
{
    struct add_arg *a = arg;
    int64_t t0 = db__mono_us();
    int rc = add_points(c, a);

    a->held_us = db__mono_us() - t0;
    return rc;
}

int db_series_add(struct db *db, const struct db_point *p, int n, int64_t keep_after_ms,
                  int64_t *held_us)
{
    struct add_arg a = {p, n, keep_after_ms, 0};
    int rc;

    *held_us = 0;
    if (n <= 0 && keep_after_ms <= 0)
        return DB_OK;
    rc = db__write(db, add_fn, &a);
    *held_us = a.held_us;
    return rc;
}

struct get_arg {
    int kind;
    const char *entity, *metric;
    int64_t start, end;
    struct db_point **out;
    int *n;
};

static int get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT label, ts, value FROM series WHERE kind = ?1 AND entity = ?2 AND metric = ?3"
        " AND ts BETWEEN ?4 AND ?5"
        " UNION ALL SELECT s.label, s.ts, s.value FROM series s WHERE s.kind = ?1"
        " AND s.entity = ?2 AND s.metric = ?3 AND s.ts = (SELECT max(p.ts) FROM series p"
        " WHERE p.kind = ?1 AND p.entity = ?2 AND p.metric = ?3 AND p.label = s.label"
        " AND p.ts < ?4) ORDER BY 1, 2";
    struct get_arg *a = arg;
    int rc = DB_OK, cap = 0;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int(st, 1, a->kind);
    db__bind_text(st, 2, a->entity);
    db__bind_text(st, 3, a->metric);
    db__bind_int64(st, 4, a->start);
    db__bind_int64(st, 5, a->end);
    while ((rc = db__step(st)) == DB__ROW) {
        struct db_point *x;
        if (db__grow(a->out, *a->n, &cap, sizeof(**a->out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        x = &(*a->out)[(*a->n)++];
        memset(x, 0, sizeof(*x));
        x->kind = a->kind;
        snprintf(x->entity, sizeof(x->entity), "%s", a->entity);
        snprintf(x->metric, sizeof(x->metric), "%s", a->metric);
        db__copy(x->label, sizeof(x->label), st, 0);
        x->ts = db__col_int64(st, 1);
        x->value = db__col_double(st, 2);
    }
    return db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
}

int db_series_get(struct db *db, int kind, const char *entity, const char *metric, int64_t start,
                  int64_t end, struct db_point **out, int *n)
{
    struct get_arg a = {kind, entity, metric, start, end, out, n};

    return db__read_list(db, get_fn, &a, out, n);
}

struct pending_arg {
    struct db_pending **out;
    int *n;
};

static int pending_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT seq, phase_updated_at FROM workloads"
                              " WHERE deleted_at = 0 AND phase = 'Pending' ORDER BY seq";
    struct pending_arg *a = arg;
    int rc = DB_OK, cap = 0;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    while ((rc = db__step(st)) == DB__ROW) {
        if (db__grow(a->out, *a->n, &cap, sizeof(**a->out)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        (*a->out)[*a->n].seq = db__col_int64(st, 0);
        (*a->out)[(*a->n)++].since_ms = db__col_int64(st, 1);
    }
    return db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
}

int db_pending_since(struct db *db, struct db_pending **out, int *n)
{
    struct pending_arg a = {out, n};

    return db__read_list(db, pending_fn, &a, out, n);
}
