/*
 * rows.c: the one way db/ moves a struct to and from a statement. A table's
 * file describes its row once, as a column table (struct db__col: for each
 * column the field it goes to, its kind, and where it sits in the struct), and the
 * binder and the readers below walk that table, so no table's file repeats
 * a loop of binds or of column reads. They go through stmt.c's calls only,
 * so they serve SQLite and PostgreSQL alike.
 *
 * Invariants:
 *   1. An integer column's width is its field's (1, 2, 4 or 8 bytes): it is
 *      read as a 64-bit value and stored in that width, and a field is
 *      bound as the 64-bit value it holds (unsigned fields keep their bits).
 *   2. A text column lands in a fixed char array, cut to its size - 1 and
 *      terminated; SQL NULL gives "" (db__copy). A DB__DUP column is a
 *      malloc'd copy the row's owner frees; NULL gives "" (DB__DUP_NULL:
 *      NULL).
 *   3. A row read into a struct starts from zeros (db__row_read): the
 *      fields no column names stay 0, whatever the struct held before.
 *   4. What a row owns is its DB__DUP and DB__DUP_NULL fields, and only
 *      those: db__row_clear() frees them and leaves them NULL.
 */
#include "db_int.h"

#include <stdlib.h>
#include <string.h>

/* The field of `row` that col describes. */
#define FIELD(row, col) ((char *)(row) + (col)->off)

static void int_store(void *field, size_t size, int64_t v)
{
    int8_t i8 = (int8_t)v;
    int16_t i16 = (int16_t)v;
    int32_t i32 = (int32_t)v;

    switch (size) {
    case 1: memcpy(field, &i8, 1); break;
    case 2: memcpy(field, &i16, 2); break;
    case 4: memcpy(field, &i32, 4); break;
    default: memcpy(field, &v, 8); break;
    }
}

static int64_t int_load(const void *field, size_t size)
{
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;

    switch (size) {
    case 1: memcpy(&i8, field, 1); return i8;
    case 2: memcpy(&i16, field, 2); return i16;
    case 4: memcpy(&i32, field, 4); return i32;
    default: memcpy(&i64, field, 8); return i64;
    }
}

int db__cols_read(struct db__stmt *st, int col, const struct db__col *cols, int n, void *row)
{
    int i, rc = DB_OK;

    for (i = 0; i < n; i++) {
        const struct db__col *k = &cols[i];
        const char *s;
        char *dup;
        double d;

        switch (k->type) {
        case DB__INT:
            int_store(FIELD(row, k), k->size, db__col_int64(st, col + i));
            break;
        case DB__DOUBLE:
            d = db__col_double(st, col + i);
            memcpy(FIELD(row, k), &d, sizeof(d));
            break;
        case DB__TEXT:
            db__copy(FIELD(row, k), k->size, st, col + i);
            break;
        case DB__DUP:
        case DB__DUP_NULL:
            s = db__col_text(st, col + i);
            if (!s && k->type == DB__DUP)
                s = "";
            dup = s ? strdup(s) : NULL;
            memcpy(FIELD(row, k), &dup, sizeof(dup));
            if (s && !dup)
                rc = DB_ENOMEM;
            break;
        }
    }
    return rc;
}

void db__cols_bind(struct db__stmt *st, int param, const struct db__col *cols, int n,
                   const void *row)
{
    int i;

    for (i = 0; i < n; i++) {
        const struct db__col *k = &cols[i];
        const char *field = (const char *)row + k->off, *s;
        double d;

        switch (k->type) {
        case DB__INT:
            db__bind_int64(st, param + i, int_load(field, k->size));
            break;
        case DB__DOUBLE:
            memcpy(&d, field, sizeof(d));
            db__bind_double(st, param + i, d);
            break;
        case DB__TEXT:
            db__bind_text(st, param + i, field);
            break;
        case DB__DUP:
        case DB__DUP_NULL:
            memcpy(&s, field, sizeof(s));
            if (!s && k->type == DB__DUP_NULL)
                db__bind_null(st, param + i);
            else
                db__bind_text(st, param + i, s);
            break;
        }
    }
}

void db__row_clear(const struct db__shape *s, void *row)
{
    int i;
    char *dup;

    for (i = 0; row && i < s->n; i++) {
        const struct db__col *k = &s->cols[i];

        if (k->type != DB__DUP && k->type != DB__DUP_NULL)
            continue;
        memcpy(&dup, FIELD(row, k), sizeof(dup));
        free(dup);
        dup = NULL;
        memcpy(FIELD(row, k), &dup, sizeof(dup));
    }
}

void db__rows_free(const struct db__shape *s, void *arr, int n)
{
    int i;

    for (i = 0; arr && i < n; i++)
        db__row_clear(s, (char *)arr + (size_t)i * s->size);
    free(arr);
}

int db__row_read(struct db__stmt *st, int col, const struct db__shape *s, void *row)
{
    int rc;

    memset(row, 0, s->size);
    rc = db__cols_read(st, col, s->cols, s->n, row);
    if (s->fix)
        s->fix(row);
    return rc;
}

int db__row_one(struct db__stmt *st, const struct db__shape *s, void *row)
{
    int rc = db__one_row(db__step(st));

    if (rc == DB_OK)
        rc = db__row_read(st, 0, s, row);
    return db__done(st, rc);
}

int db__row_list(struct db__stmt *st, const struct db__shape *s, void *arrp, int *n)
{
    char **arr = arrp;
    int src, rc = DB_OK, cap = *n; /* what the array holds at least */

    while (rc == DB_OK && (src = db__step(st)) == DB__ROW) {
        if (db__grow(arrp, *n, &cap, s->size) != DB_OK)
            return db__done(st, DB_ENOMEM);
        /* counted before it is read: a row that failed halfway is freed with the rest */
        rc = db__row_read(st, 0, s, *arr + (size_t)(*n)++ * s->size);
    }
    if (rc == DB_OK)
        rc = src == DB__DONE ? DB_OK : src; /* the step's own error: busy, read-only, gone */
    return db__done(st, rc);
}

int db__one_row(int src)
{
    return src == DB__ROW ? DB_OK : src == DB__DONE ? DB_ENOTFOUND : src;
}

/* ---- statements of one key ---- */

int db__rows_of(struct db__conn *c, const char *sql, const struct db__shape *s, void *arrp,
                int *n)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    return st ? db__row_list(st, s, arrp, n) : rc;
}

/* Binds a statement's one parameter, if key is not NULL. */
static void key_bind(struct db__stmt *st, const struct db__key *key)
{
    if (key && key->text)
        db__bind_text(st, 1, key->text);
    else if (key)
        db__bind_int64(st, 1, key->i);
}

/* A read of sql's rows, or of its one row (row set, arrp NULL). */
struct rows_arg {
    const char *sql;
    const struct db__key *key;
    const struct db__shape *s;
    void *row;
    void *arrp;
    int *n;
};

static int rows_fn(struct db__conn *c, void *arg)
{
    struct rows_arg *a = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, a->sql, &rc);

    if (!st)
        return rc;
    key_bind(st, a->key);
    return a->arrp ? db__row_list(st, a->s, a->arrp, a->n) : db__row_one(st, a->s, a->row);
}

int db__read_rows(struct db *db, const char *sql, const struct db__key *key,
                  const struct db__shape *s, void *arrp, int *n)
{
    struct rows_arg a = {sql, key, s, NULL, arrp, n};
    void **arr = arrp;
    int rc;

    *arr = NULL;
    *n = 0;
    rc = db__read(db, rows_fn, &a);
    if (rc != DB_OK) {
        db__rows_free(s, *arr, *n); /* what the rows read so far own, too */
        *arr = NULL;
        *n = 0;
    }
    return rc;
}

int db__read_row(struct db *db, const char *sql, struct db__key key, const struct db__shape *s,
                 void *row)
{
    struct rows_arg a = {sql, &key, s, row, NULL, NULL};

    return db__read(db, rows_fn, &a);
}

static int run(struct db__conn *c, const char *sql, const struct db__key *key)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    key_bind(st, key);
    return db__done(st, db__step_done(st));
}

int db__run_key(struct db__conn *c, const char *sql, int64_t key)
{
    struct db__key k = {.i = key};

    return run(c, sql, &k);
}

int db__run_text_key(struct db__conn *c, const char *sql, const char *key)
{
    struct db__key k = {.text = key};

    return run(c, sql, &k);
}

int db__int_of(struct db__conn *c, const char *sql, int64_t key, int64_t *out)
{
    int src, rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, key);
    src = db__step(st);
    if (src == DB__ROW)
        *out = db__col_int64(st, 0);
    else
        rc = src == DB__DONE ? DB_EIO : src; /* no row: the statement always gives one */
    return db__done(st, rc);
}

struct key_arg {
    const char *sql;
    int64_t key;
};

static int key_fn(struct db__conn *c, void *arg)
{
    const struct key_arg *a = arg;

    return db__run_key(c, a->sql, a->key);
}

int db__write_key(struct db *db, const char *sql, int64_t key)
{
    struct key_arg a = {sql, key};

    return db__write(db, key_fn, &a);
}

/* ---- one-off statements: their SQL and a table of parameters ---- */

void db__args_bind(struct db__stmt *st, const struct db__arg *args, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        const struct db__arg *a = &args[i];

        switch (a->type) {
        case DB__INT: db__bind_int64(st, i + 1, a->i); break;
        case DB__DOUBLE: db__bind_double(st, i + 1, a->d); break;
        case DB__NULL: db__bind_null(st, i + 1); break;
        case DB__DUP_NULL:
            if (!a->s) {
                db__bind_null(st, i + 1);
                break;
            }
            /* fall through */
        default: db__bind_text(st, i + 1, a->s); break;
        }
    }
}

/* A cached statement with its parameters bound; NULL with *rc set. */
static struct db__stmt *prep_args(struct db__conn *c, const char *sql,
                                  const struct db__arg *args, int n, int *rc)
{
    struct db__stmt *st = db__prep(c, sql, rc);

    if (st)
        db__args_bind(st, args, n);
    return st;
}

int db__exec_args(struct db__conn *c, const char *sql, const struct db__arg *args, int n)
{
    int rc = DB_OK;
    struct db__stmt *st = prep_args(c, sql, args, n, &rc);

    return st ? db__done(st, db__step_done(st)) : rc;
}

int db__query_row(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                  const struct db__shape *s, void *row)
{
    int rc = DB_OK;
    struct db__stmt *st = prep_args(c, sql, args, n, &rc);

    return st ? db__row_one(st, s, row) : rc;
}

int db__query_rows(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                   const struct db__shape *s, void *arrp, int *count)
{
    int rc = DB_OK;
    struct db__stmt *st = prep_args(c, sql, args, n, &rc);

    return st ? db__row_list(st, s, arrp, count) : rc;
}

int db__query_one(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                  db__reader fn, void *arg)
{
    int rc = DB_OK;
    struct db__stmt *st = prep_args(c, sql, args, n, &rc);

    if (!st)
        return rc;
    rc = db__one_row(db__step(st));
    if (rc == DB_OK && fn)
        rc = fn(st, arg);
    return db__done(st, rc);
}

int db__query_each(struct db__conn *c, const char *sql, const struct db__arg *args, int n,
                   db__reader fn, void *arg)
{
    int src, rc = DB_OK;
    struct db__stmt *st = prep_args(c, sql, args, n, &rc);

    if (!st)
        return rc;
    while (rc == DB_OK && (src = db__step(st)) == DB__ROW)
        rc = fn(st, arg);
    if (rc == DB_OK && src != DB__DONE)
        rc = src;
    return db__done(st, rc);
}

int db__read_int64(struct db__stmt *st, void *out)
{
    *(int64_t *)out = db__col_int64(st, 0);
    return DB_OK;
}

int db__exec_cols(struct db__conn *c, const char *sql, const struct db__col *cols, int n,
                  const void *row)
{
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__cols_bind(st, 1, cols, n, row);
    return db__done(st, db__step_done(st));
}

int db__insert_cols(struct db__conn *c, const char *sql, const struct db__col *cols, int n,
                    const void *row, int64_t *id)
{
    int rc = db__exec_cols(c, sql, cols, n, row);

    if (rc == DB_OK)
        *id = db__last_id(c);
    return rc;
}

/* ---- a table's insert ---- */

struct insert_arg {
    const struct db__insert *ins;
    void *row;
};

static int insert_fn(struct db__conn *c, void *arg)
{
    const struct insert_arg *a = arg;
    const struct db__shape *s = a->ins->shape;
    int64_t id = 0;
    int rc = db__insert_cols(c, a->ins->sql, s->cols + 1, s->n - 1, a->row, &id);

    if (rc == DB_OK)
        int_store(FIELD(a->row, &s->cols[0]), s->cols[0].size, id);
    return rc;
}

int db__insert_row(struct db *db, const struct db__insert *ins, void *row)
{
    struct insert_arg a = {ins, row};

    return ins->noted ? db__write_noted(db, ins->change, insert_fn, &a)
                      : db__write(db, insert_fn, &a);
}
