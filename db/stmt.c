/*
 * stmt.c: the statement layer over SQLite (lite.h): the statement cache of
 * a connection, binding, stepping, reading columns, and the mapping of
 * SQLite's result codes to DB_E* codes. Every other file of db/ reaches
 * the engine through these calls only (db_int.h), so a second engine is
 * a second implementation of this file, not a change to each table's file.
 *
 * Invariants:
 *   1. A cached statement (db__prep) is prepared once per connection and
 *      lives until the connection closes; db__done() resets and unbinds it,
 *      so the next user never sees the last one's bindings or rows.
 *   2. db__step() reports errors as DB_E* codes (negative), never as the
 *      engine's codes, so callers compare against DB__ROW, DB__DONE and
 *      DB_E* only.
 */
#include "lite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db__rc(int src)
{
    if (src == SQLITE_CONSTRAINT_CHECK || src == SQLITE_CONSTRAINT_NOTNULL)
        return DB_EINVAL;
    if (src == SQLITE_READONLY_DBMOVED)
        return DB_EGONE;
    switch (src & 0xff) {
    case SQLITE_OK: case SQLITE_DONE: case SQLITE_ROW: return DB_OK;
    case SQLITE_CONSTRAINT: return DB_ECONFLICT;
    case SQLITE_NOMEM: return DB_ENOMEM;
    case SQLITE_FULL: return DB_EFULL;
    case SQLITE_BUSY: case SQLITE_LOCKED: return DB_EBUSY;
    case SQLITE_READONLY: return DB_EREADONLY;
    default: return DB_EIO;
    }
}

struct db__stmt *db__prep(struct db__conn *c, const char *sql, int *rc)
{
    int i, src;
    sqlite3_stmt *st = NULL;

    for (i = 0; i < c->n_stmts; i++)
        if (c->stmts[i].sql == sql)
            return (struct db__stmt *)c->stmts[i].st;
    src = sqlite3_prepare_v3(c->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (src != SQLITE_OK) {
        fprintf(stderr, "allotd: db: prepare failed: %s\n", sqlite3_errmsg(c->h));
        *rc = DB_EIO;
        return NULL;
    }
    if (c->n_stmts < DB__STMT_CACHE) {
        c->stmts[c->n_stmts].sql = sql;
        c->stmts[c->n_stmts].st = st;
        c->n_stmts++;
    } else {
        /* the cache is sized for every static statement; a full cache
         * means dynamic SQL, which callers finalize themselves */
        sqlite3_finalize(st);
        *rc = DB_EIO;
        return NULL;
    }
    return (struct db__stmt *)st;
}

int db__done(struct db__stmt *st, int rc)
{
    if (st) {
        sqlite3_reset(LITE(st));
        sqlite3_clear_bindings(LITE(st));
    }
    return rc;
}

int db__step_done(struct db__stmt *st)
{
    int src = db__step(st);

    return src == DB__DONE || src == DB__ROW ? DB_OK : src;
}

int db__exec(struct db__conn *c, const char *sql)
{
    char *err = NULL;
    int src = sqlite3_exec(c->h, sql, NULL, NULL, &err);

    if (src != SQLITE_OK) {
        fprintf(stderr, "allotd: db: %s\n", err ? err : sqlite3_errstr(src));
        sqlite3_free(err);
        return db__rc(src) == DB_OK ? DB_EIO : db__rc(src);
    }
    return DB_OK;
}

void db__copy(char *dst, size_t size, struct db__stmt *st, int col)
{
    const char *s = db__col_text(st, col);
    size_t n;

    if (!s) {
        dst[0] = 0;
        return;
    }
    n = strlen(s);
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

void db__bind_text(struct db__stmt *st, int i, const char *s)
{
    sqlite3_bind_text(LITE(st), i, s ? s : "", -1, SQLITE_TRANSIENT);
}

int db__prep_once(struct db__conn *c, const char *sql, struct db__stmt **out)
{
    sqlite3_stmt *st = NULL;

    *out = NULL;
    if (sqlite3_prepare_v2(c->h, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "allotd: db: prepare failed: %s\n", sqlite3_errmsg(c->h));
        sqlite3_finalize(st);
        return DB_EIO;
    }
    *out = (struct db__stmt *)st;
    return DB_OK;
}

void db__finalize(struct db__stmt *st)
{
    sqlite3_finalize(LITE(st));
}

int db__step(struct db__stmt *st)
{
    int src = sqlite3_step(LITE(st)), rc;

    if (src == SQLITE_ROW)
        return DB__ROW;
    if (src == SQLITE_DONE)
        return DB__DONE;
    rc = db__rc(src);
    return rc == DB_OK ? DB_EIO : rc;
}

int64_t db__changes(struct db__conn *c)
{
    return sqlite3_changes(c->h);
}

int64_t db__last_id(struct db__conn *c)
{
    return sqlite3_last_insert_rowid(c->h);
}

void db__bind_int(struct db__stmt *st, int i, int v)
{
    sqlite3_bind_int(LITE(st), i, v);
}

void db__bind_int64(struct db__stmt *st, int i, int64_t v)
{
    sqlite3_bind_int64(LITE(st), i, v);
}

void db__bind_double(struct db__stmt *st, int i, double v)
{
    sqlite3_bind_double(LITE(st), i, v);
}

void db__bind_null(struct db__stmt *st, int i)
{
    sqlite3_bind_null(LITE(st), i);
}

void db__bind_static(struct db__stmt *st, int i, const char *s)
{
    sqlite3_bind_text(LITE(st), i, s, -1, SQLITE_STATIC);
}

void db__bind_owned(struct db__stmt *st, int i, char *s)
{
    sqlite3_bind_text(LITE(st), i, s, -1, free);
}

int db__params(struct db__stmt *st)
{
    return sqlite3_bind_parameter_count(LITE(st));
}

int db__col_int(struct db__stmt *st, int col)
{
    return sqlite3_column_int(LITE(st), col);
}

int64_t db__col_int64(struct db__stmt *st, int col)
{
    return sqlite3_column_int64(LITE(st), col);
}

double db__col_double(struct db__stmt *st, int col)
{
    return sqlite3_column_double(LITE(st), col);
}

const char *db__col_text(struct db__stmt *st, int col)
{
    return (const char *)sqlite3_column_text(LITE(st), col);
}

int db__col_null(struct db__stmt *st, int col)
{
    return sqlite3_column_type(LITE(st), col) == SQLITE_NULL;
}
