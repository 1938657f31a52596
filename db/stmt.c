/*
 * stmt.c: the statement layer: the statement cache of a connection,
 * binding, stepping, reading columns, and the mapping of SQLite's result
 * codes to DB_E* codes. Every other file of db/ reaches the engine through
 * these calls only (db_int.h). A connection is SQLite's (lite.h, here) or
 * PostgreSQL's (pq.h: pq.c implements the same calls over libpq); each
 * call below dispatches on which, so no table's file knows.
 *
 * Invariants:
 *   1. A cached statement (db__prep) is prepared once per connection and
 *      lives until the connection closes; db__done() resets and unbinds it,
 *      so the next user never sees the last one's bindings or rows.
 *   2. db__step() reports errors as DB_E* codes (negative), never as the
 *      engine's codes, so callers compare against DB__ROW, DB__DONE and
 *      DB_E* only.
 *   3. The engine is chosen once per connection (db_open(), by the --db
 *      value) and a statement belongs to its connection's engine.
 *   4. A statement built at run time (db__prep_text) is cached by its text,
 *      at most DB__TEXT_CACHE per connection, the least recently used
 *      finalized first; on PostgreSQL it is prepared on the session under
 *      a name too, and evicting it deallocates it there (DEALLOCATE, sent
 *      with the next statement), so a session keeps at most
 *      DB__TEXT_CACHE of them. Parsing a list's statement was a third of
 *      a list request's CPU on SQLite; parsing and planning it, run
 *      unnamed, more than running it on PostgreSQL.
 */
#include "lite.h"
#include "pq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db__is_pq(struct db__conn *c)
{
    return c->pq != NULL;
}

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

/* Prepares sql on the connection's engine into *st (empty on failure).
 * named: kept prepared on a PostgreSQL server under a name; persistent:
 * SQLite's hint for a statement used many times. */
static int prep_on(struct db__conn *c, const char *sql, int named, int persistent,
                   struct db__stmt *st)
{
    if (c->pq)
        return db__pq_prep(c->pq, sql, named, &st->pq);
    if (sqlite3_prepare_v3(c->h, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &st->lt,
                           NULL) != SQLITE_OK) {
        fprintf(stderr, "allotd: db: prepare failed: %s\n", sqlite3_errmsg(c->h));
        return DB_EIO;
    }
    return DB_OK;
}

struct db__stmt *db__prep(struct db__conn *c, const char *sql, int *rc)
{
    int i, src;
    struct db__stmt st = {NULL, NULL};

    for (i = 0; i < c->n_stmts; i++)
        if (c->stmts[i].sql == sql)
            return &c->stmts[i].st;
    if (c->n_stmts >= DB__STMT_CACHE) {
        /* the cache is sized for every static statement; a full cache
         * means dynamic SQL, which callers finalize themselves */
        *rc = DB_EIO;
        return NULL;
    }
    if ((src = prep_on(c, sql, 1, 1, &st)) != DB_OK) {
        *rc = src;
        return NULL;
    }
    c->stmts[c->n_stmts].sql = sql;
    c->stmts[c->n_stmts].st = st;
    return &c->stmts[c->n_stmts++].st;
}

/* FNV-1a of the text: the cache's first comparison. */
static uint64_t text_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void stmt_free(struct db__stmt *st)
{
    if (st->pq)
        db__pq_finalize(st->pq);
    else if (st->lt)
        sqlite3_finalize(st->lt);
    st->pq = NULL;
    st->lt = NULL;
}

struct db__stmt *db__prep_text(struct db__conn *c, const char *sql, int *rc)
{
    uint64_t h = text_hash(sql);
    int i, slot = 0, src;
    struct db__stmt st = {NULL, NULL};
    char *copy;

    for (i = 0; i < DB__TEXT_CACHE; i++) {
        if (c->text[i].sql && c->text[i].hash == h && strcmp(c->text[i].sql, sql) == 0) {
            c->text[i].used = ++c->text_clock;
            return &c->text[i].st;
        }
        if (c->text[i].used < c->text[slot].used)
            slot = i;   /* a free slot has used 0: taken first */
    }
    if (!(copy = strdup(sql))) {
        *rc = DB_ENOMEM;
        return NULL;
    }
    if ((src = prep_on(c, sql, 1, 1, &st)) != DB_OK) {
        stmt_free(&st);
        free(copy);
        *rc = src;
        return NULL;
    }
    if (c->text[slot].st.pq)
        db__pq_forget(c->text[slot].st.pq);
    stmt_free(&c->text[slot].st);
    free(c->text[slot].sql);
    c->text[slot].sql = copy;
    c->text[slot].hash = h;
    c->text[slot].used = ++c->text_clock;
    c->text[slot].st = st;
    return &c->text[slot].st;
}

void db__stmts_free(struct db__conn *c)
{
    int i;

    for (i = 0; i < c->n_stmts; i++)
        stmt_free(&c->stmts[i].st);
    c->n_stmts = 0;
    for (i = 0; i < DB__TEXT_CACHE; i++) {
        stmt_free(&c->text[i].st);
        free(c->text[i].sql);
        c->text[i].sql = NULL;
        c->text[i].used = 0;
    }
}

int db__done(struct db__stmt *st, int rc)
{
    if (st && st->pq) {
        db__pq_reset(st->pq);
    } else if (st) {
        sqlite3_reset(LITE(st));
        sqlite3_clear_bindings(LITE(st));
    }
    return rc;
}

int db__step_done(struct db__stmt *st)
{
    int src;

    if (st->pq)
        return db__pq_step_done(st->pq);
    src = db__step(st);

    return src == DB__DONE || src == DB__ROW ? DB_OK : src;
}

int db__flush(struct db__conn *c)
{
    return c->pq ? db__pq_flush(c->pq) : DB_OK;
}

int db__exec(struct db__conn *c, const char *sql)
{
    char *err = NULL;
    int src;

    if (c->pq)
        return db__pq_exec(c->pq, sql);
    src = sqlite3_exec(c->h, sql, NULL, NULL, &err);
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
    if (st->pq) {
        db__pq_bind_text(st->pq, i, s ? s : "", 1);
        return;
    }
    sqlite3_bind_text(LITE(st), i, s ? s : "", -1, SQLITE_TRANSIENT);
}

int db__prep_once(struct db__conn *c, const char *sql, struct db__stmt **out)
{
    struct db__stmt *st = calloc(1, sizeof(*st));
    int rc = DB_OK;

    *out = NULL;
    if (!st)
        return DB_ENOMEM;
    if ((rc = prep_on(c, sql, 0, 0, st)) != DB_OK) {
        db__finalize(st);
        return rc;
    }
    *out = st;
    return DB_OK;
}

void db__finalize(struct db__stmt *st)
{
    if (!st)
        return;
    if (st->pq)
        db__pq_finalize(st->pq);
    else
        sqlite3_finalize(LITE(st));
    free(st);
}

int db__step(struct db__stmt *st)
{
    int src, rc;

    if (st->pq)
        return db__pq_step(st->pq);
    src = sqlite3_step(LITE(st));
    if (src == SQLITE_ROW)
        return DB__ROW;
    if (src == SQLITE_DONE)
        return DB__DONE;
    rc = db__rc(src);
    return rc == DB_OK ? DB_EIO : rc;
}

int64_t db__changes(struct db__conn *c)
{
    if (c->pq)
        return db__pq_changes(c->pq);
    return sqlite3_changes(c->h);
}

int64_t db__last_id(struct db__conn *c)
{
    if (c->pq)
        return db__pq_last_id(c->pq);
    return sqlite3_last_insert_rowid(c->h);
}

void db__bind_int(struct db__stmt *st, int i, int v)
{
    if (st->pq) {
        db__pq_bind_int64(st->pq, i, v);
        return;
    }
    sqlite3_bind_int(LITE(st), i, v);
}

void db__bind_int64(struct db__stmt *st, int i, int64_t v)
{
    if (st->pq) {
        db__pq_bind_int64(st->pq, i, v);
        return;
    }
    sqlite3_bind_int64(LITE(st), i, v);
}

void db__bind_double(struct db__stmt *st, int i, double v)
{
    if (st->pq) {
        db__pq_bind_double(st->pq, i, v);
        return;
    }
    sqlite3_bind_double(LITE(st), i, v);
}

void db__bind_null(struct db__stmt *st, int i)
{
    if (st->pq) {
        db__pq_bind_text(st->pq, i, NULL, 0);
        return;
    }
    sqlite3_bind_null(LITE(st), i);
}

void db__bind_static(struct db__stmt *st, int i, const char *s)
{
    if (st->pq) {
        db__pq_bind_text(st->pq, i, s, 0);
        return;
    }
    sqlite3_bind_text(LITE(st), i, s, -1, SQLITE_STATIC);
}

void db__bind_owned(struct db__stmt *st, int i, char *s)
{
    if (st->pq) {
        db__pq_bind_owned(st->pq, i, s);
        return;
    }
    sqlite3_bind_text(LITE(st), i, s, -1, free);
}

int db__params(struct db__stmt *st)
{
    if (st->pq)
        return db__pq_params(st->pq);
    return sqlite3_bind_parameter_count(LITE(st));
}

int db__col_int(struct db__stmt *st, int col)
{
    if (st->pq)
        return (int)db__pq_col_int64(st->pq, col);
    return sqlite3_column_int(LITE(st), col);
}

int64_t db__col_int64(struct db__stmt *st, int col)
{
    if (st->pq)
        return db__pq_col_int64(st->pq, col);
    return sqlite3_column_int64(LITE(st), col);
}

double db__col_double(struct db__stmt *st, int col)
{
    if (st->pq)
        return db__pq_col_double(st->pq, col);
    return sqlite3_column_double(LITE(st), col);
}

const char *db__col_text(struct db__stmt *st, int col)
{
    if (st->pq)
        return db__pq_col_text(st->pq, col);
    return (const char *)sqlite3_column_text(LITE(st), col);
}

int db__col_null(struct db__stmt *st, int col)
{
    if (st->pq)
        return db__pq_col_text(st->pq, col) == NULL;
    return sqlite3_column_type(LITE(st), col) == SQLITE_NULL;
}

int db__data_version(struct db__conn *c, uint32_t *v)
{
    unsigned int dv = 0;

    if (c->pq || sqlite3_file_control(c->h, "main", SQLITE_FCNTL_DATA_VERSION, &dv) != SQLITE_OK)
        return DB_EINVAL;
    *v = dv;
    return DB_OK;
}

struct db__page_memo **db__page_memo_slot(struct db__conn *c)
{
    return &c->page_memo;
}
