/*
 * audit.c: the audit_log table (migration 260): one row per mutating API
 * request, written in batches, read by time window.
 *
 * Invariants:
 *   1. A batch is one write, done when all its rows landed. On SQLite it
 *      runs in turns of about TURN_US (db.c's writer commits the writes
 *      queued meanwhile between turns: the submissions behind a batch of
 *      2,048 rows, about 10-20 ms of statements, waited for all of it), so
 *      a failed batch may have landed in part; a row is skipped when its
 *      id is already stored, so the batch written again lands whole, once.
 *      On PostgreSQL it is one statement, all or none, that skips such
 *      rows too.
 *   2. The table is bounded: each batch's write first deletes the rows
 *      older than the retention the API side gives it.
 */
#include "db_int.h"
#include "db_audit.h"

#include <stdlib.h>
#include <string.h>

#define TURN_US 500 /* SQLite: a turn of a batch's rows runs about this long */

#define AUDIT_COLS "seq, id, at_ms, subject, subject_type, source_ip, action, method, url," \
                   " entity_type, entity_id, entity_name, status"

DB__TABLE(audit_cols, audit_shape, struct db_audit, NULL, seq, id, at_ms, subject, subject_type,
          source_ip, action, method, url, entity_type, entity_id, entity_name, status);

struct insert_arg {
    const struct db_audit *rows;
    int n;
    int64_t purge_before;
    int done;                  /* rows written by the turns so far (SQLite) */
};

/* PostgreSQL: a batch's rows in one statement over a jsonb array (a
 * statement per row cost the server a parse, a plan and an executor each:
 * a batch holds every mutating request of the last moments, one per
 * submission under load). SQLite keeps a statement per row (no round trips
 * to save there). */
static const char add_set_sql[] =
    "INSERT INTO audit_log (id, at_ms, subject, subject_type, source_ip, action, method,"
    " url, entity_type, entity_id, entity_name, status)"
    " SELECT v ->> 1, (v ->> 0)::bigint, v ->> 2, v ->> 3, v ->> 4, v ->> 5, v ->> 6, v ->> 7,"
    " v ->> 8, v ->> 9, v ->> 10, (v ->> 11)::bigint"
    " FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (v, k) ORDER BY k"
    " ON CONFLICT (id) DO NOTHING";

static void add_row(struct db__text *b, const struct db_audit *r)
{
    db__text_add(b, b->n > 1 ? ",[" : "[", b->n > 1 ? 2 : 1);
    db__json_int(b, 0, r->at_ms); /* first: a row's first value has no comma */
    db__json_str(b, r->id);
    db__json_str(b, r->subject);
    db__json_str(b, r->subject_type);
    db__json_str(b, r->source_ip);
    db__json_str(b, r->action);
    db__json_str(b, r->method);
    db__json_str(b, r->url);
    db__json_str(b, r->entity_type);
    db__json_str(b, r->entity_id);
    db__json_str(b, r->entity_name);
    db__json_int(b, 1, r->status);
    db__text_add(b, "]", 1);
}

static int add_set(struct db__conn *c, const struct insert_arg *a)
{
    struct db__text b = {0};
    struct db__stmt *st = NULL;
    int i, rc = DB_OK;

    db__text_add(&b, "[", 1);
    for (i = 0; i < a->n; i++)
        add_row(&b, &a->rows[i]);
    db__text_add(&b, "]", 1);
    if (b.failed)
        rc = DB_ENOMEM;
    else if ((st = db__prep(c, add_set_sql, &rc)) != NULL) {
        db__bind_static(st, 1, b.s);
        rc = db__done(st, db__step_done(st));
    }
    free(b.s);
    return rc;
}

/* One turn: the purge first, then rows until TURN_US has passed (at least
 * one); DB__MORE while rows remain (invariant 1). */
static int insert_fn(struct db__conn *c, void *arg)
{
    static const char purge[] = "DELETE FROM audit_log WHERE at_ms < ?";
    static const char add[] =
        "INSERT INTO audit_log (id, at_ms, subject, subject_type, source_ip, action, method,"
        " url, entity_type, entity_id, entity_name, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";
    struct insert_arg *a = arg;
    int64_t t0 = db__mono_us();
    int rc = a->purge_before > 0 && a->done == 0 ? db__run_key(c, purge, a->purge_before) : DB_OK;

    if (rc == DB_OK && db__is_pq(c) && a->n > 0)
        return add_set(c, a);
    while (rc == DB_OK && a->done < a->n) { /* all but seq */
        rc = db__exec_cols(c, add, audit_cols + 1, DB__NCOLS(audit_cols) - 1, &a->rows[a->done]);
        if (rc == DB_OK && ++a->done < a->n && db__mono_us() - t0 >= TURN_US)
            return DB__MORE;
    }
    return rc == DB_OK ? db__flush(c) : rc;
}

int db_audit_insert(struct db *db, const struct db_audit *rows, int n, int64_t purge_before_ms)
{
    struct insert_arg a = {rows, n, purge_before_ms, 0};

    return db__write(db, insert_fn, &a);
}

struct list_arg {
    int64_t start, end;
    int max;
    struct db_audit **rows;
    int *n;
};

static int list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " AUDIT_COLS " FROM audit_log"
                              " WHERE at_ms >= ? AND at_ms <= ? ORDER BY at_ms, seq LIMIT ?";
    struct list_arg *a = arg;
    const struct db__arg args[] = {DB__I(a->start), DB__I(a->end), DB__I(a->max + 1)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &audit_shape, a->rows, a->n);
}

int db_audit_list(struct db *db, int64_t start_ms, int64_t end_ms, int max,
                  struct db_audit **out, int *n, int *truncated)
{
    struct list_arg a = {start_ms, end_ms, max, out, n};
    int rc = db__read_list(db, list_fn, &a, out, n);

    *truncated = rc == DB_OK && *n > max;
    if (*truncated)
        *n = max;
    return rc;
}
