/*
 * series.c: the metrics time series of the cluster, node pools, nodes and
 * workloads (control/series_rec.c records them every sample period;
 * api/h_infra_series.c answers the /metrics routes from them), and since
 * when pending workloads wait (the source of AVG_WORKLOAD_WAIT_TIME).
 *
 * A point is (kind, entity, metric, label, time, value). Points are
 * written only when a value changes, so a series is a step function: the
 * value at time t is the value of the latest point at or before t.
 *
 * Invariants:
 *   1. Pruning keeps the latest point of every series whatever its age
 *      (it is the value in force), unless that value is 0 or below (-1:
 *      no figure): a series that has been so for longer than the
 *      retention is dropped.
 *   2. db_series_get() returns, per label, the point in force at `start`
 *      (if any) and every point up to `end`, ordered by label then time.
 *   3. db_series_add_turn() stores its points as writing each in turn would:
 *      every value exact, and a key given twice keeps its last value.
 *   4. A reader sees a sample whole or not at all. A sample is written
 *      in turns (db_series_add_turn(), each one write of the writer, so
 *      the writes queued behind a sample of thousands of points wait for
 *      one turn, not for all of it), and its last turn adds, with its
 *      last points, the sample's mark: a point of the series
 *      (cluster, "", SAMPLE_WRITTEN) at the sample's time. db_series_get()
 *      reads nothing after the latest mark, so the points of a sample
 *      being written (or of one a crash or a failed turn cut short) are
 *      not read; the first turn of the next sample deletes the latter.
 *      A database without a mark (never written in turns) is read whole.
 */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sample's mark (invariant 4): readers read up to its latest time. */
#define MARK_KEY "kind = 0 AND entity = '' AND metric = 'SAMPLE_WRITTEN' AND label = ''"
#define MARK_TS "(SELECT max(w.ts) FROM series w WHERE w." MARK_KEY ")"

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

/* One statement of the first `n` points (at most ADD_ROWS, or 1);
 * returns how many it wrote in *rows. */
static int add_lite(struct db__conn *c, const struct db_point *p, int n, int *rows)
{
    int rc = DB_OK, k;
    struct db__stmt *st;

    *rows = n >= ADD_ROWS ? ADD_ROWS : 1;
    if (!(st = db__prep(c, *rows > 1 ? ADD_INTO ADD_ROWS_128 : ADD_INTO ADD_ROW, &rc)))
        return rc;
    for (k = 0; k < *rows; k++) {
        db__bind_int(st, 6 * k + 1, p[k].kind);
        db__bind_static(st, 6 * k + 2, p[k].entity);
        db__bind_static(st, 6 * k + 3, p[k].metric);
        db__bind_static(st, 6 * k + 4, p[k].label);
        db__bind_int64(st, 6 * k + 5, p[k].ts);
        db__bind_double(st, 6 * k + 6, p[k].value);
    }
    return db__done(st, db__step_done(st));
}

/* PostgreSQL: one statement over up to PQ_ROWS points as one JSON array
 * of rows [kind, entity, metric, label, ts, value] (each value the text
 * a bound double travels as, %.17g), where a statement per point was
 * one executor start each. ON CONFLICT may not touch a row twice in one
 * statement: each key's last point only (DISTINCT ON, latest first); a
 * later statement's point replaces an earlier one's, as in turn. */
#define PQ_ROWS 1024
static int add_pq(struct db__conn *c, const struct db_point *p, int n, int *rows)
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

    *rows = n < PQ_ROWS ? n : PQ_ROWS;
    db__text_add(&b, "[", 1);
    for (i = 0; i < *rows; i++) {
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

/* One statement of the first points of p[0..n); *rows: how many. */
static int add_some(struct db__conn *c, const struct db_point *p, int n, int *rows)
{
    return db__is_pq(c) ? add_pq(c, p, n, rows) : add_lite(c, p, n, rows);
}

static int run_sql(struct db__conn *c, const char *sql, int64_t arg)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    if (arg > 0)
        db__bind_int64(st, 1, arg);
    return db__done(st, db__step_done(st));
}

/* The first turn of a sample: a database without a mark gets one at its
 * latest point (what it holds was written whole), and the points after
 * the latest mark (a sample cut short) go. */
static int first_turn(struct db__conn *c)
{
    static const char mark[] =
        "INSERT INTO series (kind, entity, metric, label, ts, value)"
        " SELECT 0, '', 'SAMPLE_WRITTEN', '', m.ts, 1 FROM (SELECT coalesce(max(ts), 0) AS ts"
        " FROM series) AS m WHERE NOT EXISTS (SELECT 1 FROM series WHERE " MARK_KEY ")";
    static const char cut[] = "DELETE FROM series WHERE ts > " MARK_TS;
    int rc = run_sql(c, mark, 0);

    return rc == DB_OK ? run_sql(c, cut, 0) : rc;
}

/* The last turn of a sample: its mark, at its latest point's time, then
 * the prune (0: none). */
static int last_turn(struct db__conn *c, const struct db_series_turns *t)
{
    static const char prune[] =
        "DELETE FROM series WHERE ts < ?1 AND (value <= 0 OR ts < (SELECT max(s.ts) FROM series s"
        " WHERE s.kind = series.kind AND s.entity = series.entity AND s.metric = series.metric"
        " AND s.label = series.label))";
    struct db_point m;
    int rc = DB_OK, i, rows;

    memset(&m, 0, sizeof(m));
    m.kind = DB_SERIES_CLUSTER;
    strcpy(m.metric, "SAMPLE_WRITTEN");
    m.value = 1;
    for (i = 0; i < t->n; i++)
        m.ts = t->p[i].ts > m.ts ? t->p[i].ts : m.ts;
    if (t->n > 0)
        rc = add_some(c, &m, 1, &rows);
    if (rc == DB_OK && t->keep_after_ms > 0)
        rc = run_sql(c, prune, t->keep_after_ms);
    return rc;
}

/* One turn: statements of points until the budget has run (at least
 * one), the last turn's mark and prune. The writer's time on it is
 * measured: the writes queued behind it waited that long. */
static int turn_fn(struct db__conn *c, void *arg)
{
    struct db_series_turns *t = arg;
    int64_t t0 = db__mono_us(), cpu0 = db__thread_cpu_us();
    int rc = t->done == 0 && t->n > 0 ? first_turn(c) : DB_OK, i = t->done, rows;

    while (rc == DB_OK && i < t->n && (i == t->done || t->budget_us <= 0 ||
                                      db__mono_us() - t0 < t->budget_us)) {
        rc = add_some(c, t->p + i, t->n - i, &rows);
        i += rows;
    }
    if (rc == DB_OK && i == t->n)
        rc = last_turn(c, t);
    t->held_us = db__mono_us() - t0;
    t->held_cpu_us = db__thread_cpu_us() - cpu0;
    if (rc == DB_OK) {
        t->done = i;
        t->whole = i == t->n;
    }
    return rc;
}

int db_series_add_turn(struct db *db, struct db_series_turns *t)
{
    t->held_us = t->held_cpu_us = 0;
    t->whole = 0;
    return db__write(db, turn_fn, t);
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
        " AND ts BETWEEN ?4 AND ?5 AND ts <= coalesce(" MARK_TS ", ts)"
        " UNION ALL SELECT s.label, s.ts, s.value FROM series s WHERE s.kind = ?1"
        " AND s.entity = ?2 AND s.metric = ?3 AND s.ts = (SELECT max(p.ts) FROM series p"
        " WHERE p.kind = ?1 AND p.entity = ?2 AND p.metric = ?3 AND p.label = s.label"
        " AND p.ts < ?4 AND p.ts <= coalesce(" MARK_TS ", p.ts)) ORDER BY 1, 2";
    DB__TABLE(cols, shape, struct db_point, NULL, label, ts, value);
    struct get_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->kind), DB__S(a->entity), DB__S(a->metric),
                                   DB__I(a->start), DB__I(a->end)};
    int i, rc = db__query_rows(c, sql, args, DB__NARGS(args), &shape, a->out, a->n);

    for (i = 0; i < *a->n; i++) { /* what the statement was asked for */
        struct db_point *x = &(*a->out)[i];

        x->kind = a->kind;
        snprintf(x->entity, sizeof(x->entity), "%s", a->entity);
        snprintf(x->metric, sizeof(x->metric), "%s", a->metric);
    }
    return rc;
}

int db_series_get(struct db *db, int kind, const char *entity, const char *metric, int64_t start,
                  int64_t end, struct db_point **out, int *n)
{
    struct get_arg a = {kind, entity, metric, start, end, out, n};

    return db__read_list(db, get_fn, &a, out, n);
}

/* Every series' point in force at the latest mark (the last sample read
 * whole), the mark itself left out: a window over the primary key's
 * order, one pass. */
int db_series_latest(struct db *db, struct db_point **out, int *n)
{
    static const char sql[] =
        "SELECT kind, entity, metric, label, ts, value FROM (SELECT kind, entity, metric, label,"
        " ts, value, lead(ts) OVER (PARTITION BY kind, entity, metric, label ORDER BY ts) AS nx"
        " FROM series WHERE ts <= coalesce(" MARK_TS ", ts)) AS l"
        " WHERE nx IS NULL AND NOT (" MARK_KEY ")";
    DB__TABLE(cols, shape, struct db_point, NULL, kind, entity, metric, label, ts, value);

    return db__read_rows(db, sql, NULL, &shape, out, n);
}

int db_pending_since(struct db *db, struct db_pending **out, int *n)
{
    DB__TABLE(cols, shape, struct db_pending, NULL, seq, since_ms);
    static const char sql[] = "SELECT seq, phase_updated_at FROM workloads"
                              " WHERE deleted_at = 0 AND phase = 'Pending' ORDER BY seq";

    return db__read_rows(db, sql, NULL, &shape, out, n);
}
