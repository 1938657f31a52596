/*
 * secrets.c: the store of named secrets (db_secrets.h). The values in a
 * row's entries are sealed by the API (secretbox.c) before they come
 * here; nothing in this file can open them.
 *
 * Invariants:
 *   1. A scope holds at most one secret of a name (a UNIQUE index).
 *   2. entries is a JSON object of sealed texts, never a value in clear.
 */
#include "db_int.h"
#include "db_secrets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS                                                                      \
    "s.seq, s.id, s.name, s.scope, s.scope_id, s.description, s.created_by,"      \
    " s.updated_by, s.created_at, s.updated_at, s.update_count, s.entries"

void db_secret_clear(struct db_secret *s)
{
    if (!s)
        return;
    free(s->entries);
    s->entries = NULL;
}

void db_secrets_free(struct db_secret *s, int n)
{
    int i;

    for (i = 0; s && i < n; i++)
        db_secret_clear(&s[i]);
    free(s);
}

static int row_read(struct db__stmt *st, struct db_secret *s)
{
    const char *e;

    memset(s, 0, sizeof(*s));
    s->seq = db__col_int64(st, 0);
    db__copy(s->id, sizeof(s->id), st, 1);
    db__copy(s->name, sizeof(s->name), st, 2);
    db__copy(s->scope, sizeof(s->scope), st, 3);
    db__copy(s->scope_id, sizeof(s->scope_id), st, 4);
    db__copy(s->description, sizeof(s->description), st, 5);
    db__copy(s->created_by, sizeof(s->created_by), st, 6);
    db__copy(s->updated_by, sizeof(s->updated_by), st, 7);
    s->created_at = db__col_int64(st, 8);
    s->updated_at = db__col_int64(st, 9);
    s->update_count = db__col_int64(st, 10);
    e = db__col_text(st, 11);
    s->entries = strdup(e ? e : "{}");
    return s->entries ? DB_OK : DB_ENOMEM;
}

static int insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO secrets (id, name, scope, scope_id, description, created_by, updated_by,"
        " created_at, updated_at, update_count, entries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)";
    struct db_secret *s = arg;
    const struct db__arg args[] = {DB__S(s->id), DB__S(s->name), DB__S(s->scope),
                                   DB__S(s->scope_id), DB__S(s->description),
                                   DB__S(s->created_by), DB__S(s->created_by),
                                   DB__I(s->created_at), DB__I(s->created_at),
                                   DB__S(s->entries)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    if (rc == DB_OK)
        s->seq = db__last_id(c);
    return rc;
}

int db_secret_insert(struct db *db, struct db_secret *s)
{
    s->created_at = s->updated_at = db__now_ms();
    s->update_count = 1;
    snprintf(s->updated_by, sizeof(s->updated_by), "%s", s->created_by);
    return db__write(db, insert_fn, s);
}

struct get_arg {
    const char *id, *project, *name;
    struct db_secret *out;
};

static int one_fn(struct db__conn *c, const char *sql, struct get_arg *a)
{
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    if (a->id) {
        db__bind_text(st, 1, a->id);
    } else {
        db__bind_int(st, 1, DB_PROJECT);
        db__bind_text(st, 2, a->project);
        db__bind_text(st, 3, a->name);
    }
    src = db__step(st);
    if (src == DB__ROW)
        rc = row_read(st, a->out);
    else
        rc = src == DB__DONE ? DB_ENOTFOUND : src;
    return db__done(st, rc);
}

static int get_fn(struct db__conn *c, void *arg)
{
    return one_fn(c, "SELECT " COLS " FROM secrets s WHERE s.id = ?", arg);
}

int db_secret_get(struct db *db, const char *id, struct db_secret *out)
{
    struct get_arg a = {id, NULL, NULL, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, get_fn, &a);
}

static int resolve_fn(struct db__conn *c, void *arg)
{
    return one_fn(c,
                  "SELECT " COLS " FROM secrets s, queues p LEFT JOIN queues d"
                  " ON d.seq = p.parent_seq"
                  " WHERE p.kind = ? AND p.name = ? AND s.name = ?"
                  " AND ((s.scope = 'project' AND s.scope_id = p.id)"
                  " OR (s.scope = 'department' AND s.scope_id = d.id)"
                  " OR s.scope = 'tenant')"
                  " ORDER BY CASE s.scope WHEN 'project' THEN 0 WHEN 'department' THEN 1"
                  " ELSE 2 END LIMIT 1",
                  arg);
}

int db_secret_resolve(struct db *db, const char *project, const char *name,
                      struct db_secret *out)
{
    struct get_arg a = {NULL, project, name, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, resolve_fn, &a);
}

struct list_arg {
    struct db_secret *rows;
    int n, cap;
};

static int list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " COLS " FROM secrets s ORDER BY s.name, s.id";
    struct list_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    while ((src = db__step(st)) == DB__ROW) {
        if (db__grow(&a->rows, a->n, &a->cap, sizeof(*a->rows)) != 0) {
            src = DB_ENOMEM;
            break;
        }
        if ((rc = row_read(st, &a->rows[a->n])) != DB_OK) {
            src = rc;
            break;
        }
        a->n++;
    }
    return db__done(st, src == DB__DONE ? DB_OK : src);
}

int db_secret_list(struct db *db, struct db_secret **out, int *n)
{
    struct list_arg a = {NULL, 0, 0};
    int rc = db__read(db, list_fn, &a);

    if (rc != DB_OK) {
        db_secrets_free(a.rows, a.n);
        *out = NULL;
        *n = 0;
        return rc;
    }
    *out = a.rows;
    *n = a.n;
    return DB_OK;
}

struct update_arg {
    const char *id, *description, *by;
    int64_t now;
};

/* One row of secrets changed, or DB_ENOTFOUND. */
static int one_changed(struct db__conn *c, int rc)
{
    return rc == DB_OK && db__changes(c) == 0 ? DB_ENOTFOUND : rc;
}

static int update_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE secrets SET description = ?, updated_by = ?, updated_at = ?,"
        " update_count = update_count + 1 WHERE id = ?";
    struct update_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->description ? a->description : ""), DB__S(a->by),
                                   DB__I(a->now), DB__S(a->id)};

    return one_changed(c, db__exec_args(c, sql, args, DB__NARGS(args)));
}

int db_secret_update(struct db *db, const char *id, const char *description,
                     const char *updated_by)
{
    struct update_arg a = {id, description, updated_by, db__now_ms()};

    return db__write(db, update_fn, &a);
}

static int delete_fn(struct db__conn *c, void *arg)
{
    return one_changed(c, db__run_text_key(c, "DELETE FROM secrets WHERE id = ?", arg));
}

int db_secret_delete(struct db *db, const char *id)
{
    return db__write(db, delete_fn, (void *)id);
}

static int count_fn(struct db__conn *c, void *arg)
{
    return db__int_of(c, "SELECT count(*) FROM secrets WHERE seq > ?", 0, arg);
}

int db_secret_count(struct db *db, int64_t *n)
{
    *n = 0;
    return db__read(db, count_fn, n);
}
