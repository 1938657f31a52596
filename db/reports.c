/*
 * reports.c: the store of reports (db_reports.h).
 *
 * Invariants:
 *   1. A report is written once, whole: its request, its status and its
 *      file in one row; it is never changed, only deleted.
 *   2. Lists leave the files out (they may be large); a get reads one.
 */
#include "db_int.h"
#include "db_reports.h"

#include <stdlib.h>
#include <string.h>

#define HEAD "seq, id, name, description, start_ms, end_ms, group_by, filter_by, created_at," \
             " created_by, status, status_updated_at, status_message"

static const struct db__col report_cols[] = {
    DB__COLS(struct db_report, seq, id, name, description, start_ms, end_ms, group_by, filter_by,
        created_at, created_by, status, status_updated_at, status_message, csv),
};
#define N_HEAD (DB__NCOLS(report_cols) - 1)
static const struct db__shape head_shape = {report_cols, N_HEAD, sizeof(struct db_report), NULL};
static const struct db__shape full_shape = DB__SHAPE(struct db_report, report_cols, NULL);

static const struct db__insert report_insert = {
    "INSERT INTO reports (id, name, description, start_ms, end_ms, group_by, filter_by,"
    " created_at, created_by, status, status_updated_at, status_message, csv)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    &full_shape, 0, 0};

int db_report_insert(struct db *db, struct db_report *r)
{
    return db__insert_row(db, &report_insert, r);
}

int db_report_list(struct db *db, struct db_report **out, int *n)
{
    *out = NULL;
    *n = 0;
    return db__read_rows(db, "SELECT " HEAD " FROM reports ORDER BY seq", NULL, &head_shape, out,
                         n);
}

int db_report_get(struct db *db, const char *id, struct db_report *out)
{
    struct db__key key = {0, id};

    return db__read_row(db, "SELECT " HEAD ", csv FROM reports WHERE id = ?", key, &full_shape,
                        out);
}

static int delete_fn(struct db__conn *c, void *arg)
{
    int rc = db__run_text_key(c, "DELETE FROM reports WHERE id = ?", arg);

    return rc == DB_OK && db__changes(c) == 0 ? DB_ENOTFOUND : rc;
}

int db_report_delete(struct db *db, const char *id)
{
    return db__write(db, delete_fn, (void *)id);
}

void db_reports_free(struct db_report *r, int n)
{
    db__rows_free(&full_shape, r, n);
}
