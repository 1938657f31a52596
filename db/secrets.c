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

DB__TABLE(secret_cols, secret_shape, struct db_secret, NULL, seq, id, name, scope, scope_id,
          description, created_by, updated_by, created_at, updated_at, update_count, entries);

void db_secret_clear(struct db_secret *s)
{
    db__row_clear(&secret_shape, s);
}

void db_secrets_free(struct db_secret *s, int n)
{
    db__rows_free(&secret_shape, s, n);
}

static const struct db__insert secret_insert = {
    "INSERT INTO secrets (id, name, scope, scope_id, description, created_by, updated_by,"
    " created_at, updated_at, update_count, entries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    &secret_shape, 0, 0};

int db_secret_insert(struct db *db, struct db_secret *s)
{
    s->created_at = s->updated_at = db__now_ms();
    s->update_count = 1;
    snprintf(s->updated_by, sizeof(s->updated_by), "%s", s->created_by);
    return db__insert_row(db, &secret_insert, s);
}

int db_secret_get(struct db *db, const char *id, struct db_secret *out)
{
    static const char sql[] = "SELECT " COLS " FROM secrets s WHERE s.id = ?";

    memset(out, 0, sizeof(*out));
    return db__read_row(db, sql, (struct db__key){.text = id}, &secret_shape, out);
}

struct resolve_arg {
    const char *project, *name;
    struct db_secret *out;
};

static int resolve_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT " COLS " FROM secrets s, queues p LEFT JOIN queues d ON d.seq = p.parent_seq"
        " WHERE p.kind = ? AND p.name = ? AND s.name = ?"
        " AND ((s.scope = 'project' AND s.scope_id = p.id)"
        " OR (s.scope = 'department' AND s.scope_id = d.id) OR s.scope = 'tenant')"
        " ORDER BY CASE s.scope WHEN 'project' THEN 0 WHEN 'department' THEN 1 ELSE 2 END"
        " LIMIT 1";
    struct resolve_arg *a = arg;
    const struct db__arg args[] = {DB__I(DB_PROJECT), DB__S(a->project), DB__S(a->name)};

    return db__query_row(c, sql, args, DB__NARGS(args), &secret_shape, a->out);
}

int db_secret_resolve(struct db *db, const char *project, const char *name,
                      struct db_secret *out)
{
    struct resolve_arg a = {project, name, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, resolve_fn, &a);
}

int db_secret_list(struct db *db, struct db_secret **out, int *n)
{
    static const char sql[] = "SELECT " COLS " FROM secrets s ORDER BY s.name, s.id";

    return db__read_rows(db, sql, NULL, &secret_shape, out, n);
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
