/*
 * assets.c: the store of Run:ai's assets (db_assets.h). A credential's
 * values are sealed by the API (secretbox.c) before they come here;
 * nothing in this file can open them.
 *
 * Invariants:
 *   1. A scope holds at most one asset of a family and name (a UNIQUE
 *      index), so a name resolves to one asset per scope.
 *   2. sealed is a JSON object of sealed texts, never a value in clear.
 */
#include "db_int.h"
#include "db_assets.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS                                                                              \
    "a.seq, a.id, a.family, a.kind, a.name, a.scope, a.scope_id, a.description,"          \
    " a.created_by, a.updated_by, a.created_at, a.updated_at, a.update_count, a.spec,"    \
    " a.sealed, a.supported"

DB__TABLE(asset_cols, asset_shape, struct db_asset, NULL, seq, id, family, kind, name, scope,
          scope_id, description, created_by, updated_by, created_at, updated_at, update_count,
          spec, sealed, supported);

void db_asset_clear(struct db_asset *a)
{
    db__row_clear(&asset_shape, a);
}

void db_assets_free(struct db_asset *a, int n)
{
    db__rows_free(&asset_shape, a, n);
}

static const struct db__insert asset_insert = {
    "INSERT INTO assets (id, family, kind, name, scope, scope_id, description, created_by,"
    " updated_by, created_at, updated_at, update_count, spec, sealed, supported)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    &asset_shape, 0, 0};

int db_asset_insert(struct db *db, struct db_asset *a)
{
    a->created_at = a->updated_at = db__now_ms();
    a->update_count = 1;
    snprintf(a->updated_by, sizeof(a->updated_by), "%s", a->created_by);
    return db__insert_row(db, &asset_insert, a);
}

int db_asset_get(struct db *db, const char *id, struct db_asset *out)
{
    static const char sql[] = "SELECT " COLS " FROM assets a WHERE a.id = ?";

    return db__read_row(db, sql, (struct db__key){.text = id}, &asset_shape, out);
}

struct list_arg {
    const char *family;
    struct db_asset **rows;
    int *n;
};

static int list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " COLS " FROM assets a WHERE ? = '' OR a.family = ?"
                              " ORDER BY a.name, a.id";
    struct list_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->family), DB__S(a->family)};

    return db__query_rows(c, sql, args, DB__NARGS(args), &asset_shape, a->rows, a->n);
}

int db_asset_list(struct db *db, const char *family, struct db_asset **out, int *n)
{
    struct list_arg a = {family ? family : "", out, n};

    return db__read_list(db, list_fn, &a, out, n);
}

/* One row of assets changed, or DB_ENOTFOUND. */
static int one_changed(struct db__conn *c, int rc)
{
    return rc == DB_OK && db__changes(c) == 0 ? DB_ENOTFOUND : rc;
}

static int update_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "UPDATE assets SET name = ?, description = ?, spec = ?, sealed = ?, supported = ?,"
        " updated_by = ?, updated_at = ?, update_count = update_count + 1 WHERE id = ?";
    struct db_asset *a = arg;
    const struct db__arg args[] = {DB__S(a->name), DB__S(a->description), DB__S(a->spec),
                                   DB__S(a->sealed), DB__S(a->supported), DB__S(a->updated_by),
                                   DB__I(a->updated_at), DB__S(a->id)};

    return one_changed(c, db__exec_args(c, sql, args, DB__NARGS(args)));
}

int db_asset_update(struct db *db, struct db_asset *a)
{
    a->updated_at = db__now_ms();
    return db__write(db, update_fn, a);
}

static int delete_fn(struct db__conn *c, void *arg)
{
    return one_changed(c, db__run_text_key(c, "DELETE FROM assets WHERE id = ?", arg));
}

int db_asset_delete(struct db *db, const char *id)
{
    return db__write(db, delete_fn, (void *)id);
}

struct resolve_arg {
    const char *family, *project, *name;
    struct db_asset *out;
};

static int resolve_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT " COLS " FROM assets a, queues p LEFT JOIN queues d ON d.seq = p.parent_seq"
        " WHERE p.kind = ? AND p.name = ? AND a.family = ? AND a.name = ?"
        " AND ((a.scope = 'project' AND a.scope_id = p.id)"
        " OR (a.scope = 'department' AND a.scope_id = d.id) OR a.scope = 'tenant')"
        " ORDER BY CASE a.scope WHEN 'project' THEN 0 WHEN 'department' THEN 1 ELSE 2 END"
        " LIMIT 1";
    struct resolve_arg *a = arg;
    const struct db__arg args[] = {DB__I(DB_PROJECT), DB__S(a->project), DB__S(a->family),
                                   DB__S(a->name)};

    return db__query_row(c, sql, args, DB__NARGS(args), &asset_shape, a->out);
}

int db_asset_resolve(struct db *db, const char *family, const char *project, const char *name,
                     struct db_asset *out)
{
    struct resolve_arg a = {family, project, name, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, resolve_fn, &a);
}
