/*
 * policies.c: the store of workload policies (db_policies.h).
 *
 * Invariants:
 *   1. A type and scope hold at most one policy (a UNIQUE index); a put
 *      on a scope that has one replaces its name and body, and keeps its
 *      id and creation.
 *   2. body is JSON the API checked (api/policy.c); nothing here parses it.
 *   3. Every write of a policy notes an organization change in the change
 *      log (db__write_noted), so the other replicas on the database drop
 *      the chains they cached (api/polcache.c) at their next turn.
 */
#include "db_int.h"
#include "db_policies.h"
#include "db_ha.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS                                                                       \
    "seq, id, type, scope, scope_id, name, created_by, updated_by, created_at,"   \
    " updated_at, body"

DB__TABLE(policy_cols, policy_shape, struct db_policy, NULL, seq, id, type, scope, scope_id, name,
          created_by, updated_by, created_at, updated_at, body);

void db_policy_clear(struct db_policy *p)
{
    db__row_clear(&policy_shape, p);
}

void db_policies_free(struct db_policy *p, int n)
{
    db__rows_free(&policy_shape, p, n);
}

/* A put: its parameters are policy_cols from the second (id) on. */
static const char put_sql[] =
    "INSERT INTO policies (id, type, scope, scope_id, name, created_by, updated_by,"
    " created_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (type, scope, scope_id) DO UPDATE SET name = excluded.name,"
    " updated_by = excluded.updated_by, updated_at = excluded.updated_at,"
    " body = excluded.body";

static int put_fn(struct db__conn *c, void *arg)
{
    return db__exec_cols(c, put_sql, policy_cols + 1, DB__NCOLS(policy_cols) - 1, arg);
}

int db_policy_put(struct db *db, const struct db_policy *p)
{
    struct db_policy row = *p; /* the caller's, stamped now by its creator */

    row.created_at = row.updated_at = db__now_ms();
    snprintf(row.updated_by, sizeof(row.updated_by), "%s", row.created_by);
    return db__write_noted(db, DB_CHANGE_ORG, put_fn, &row);
}

struct key_arg {
    const char *type, *scope, *scope_id;
    struct db_policy *out;
};

static int get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT " COLS " FROM policies WHERE type = ? AND scope = ? AND scope_id = ?";
    struct key_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->type), DB__S(a->scope), DB__S(a->scope_id)};

    return db__query_row(c, sql, args, DB__NARGS(args), &policy_shape, a->out);
}

int db_policy_get(struct db *db, const char *type, const char *scope, const char *scope_id,
                  struct db_policy *out)
{
    struct key_arg a = {type, scope, scope_id, out};

    memset(out, 0, sizeof(*out));
    return db__read(db, get_fn, &a);
}

static int delete_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "DELETE FROM policies WHERE type = ? AND scope = ? AND scope_id = ?";
    struct key_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->type), DB__S(a->scope), DB__S(a->scope_id)};
    int rc = db__exec_args(c, sql, args, DB__NARGS(args));

    return rc == DB_OK && db__changes(c) == 0 ? DB_ENOTFOUND : rc;
}

int db_policy_delete(struct db *db, const char *type, const char *scope, const char *scope_id)
{
    struct key_arg a = {type, scope, scope_id, NULL};

    return db__write_noted(db, DB_CHANGE_ORG, delete_fn, &a);
}

/* ORDER BY of both lists: the tenant's, the departments', the projects'. */
#define BY_SCOPE " CASE scope WHEN 'tenant' THEN 0 WHEN 'department' THEN 1 ELSE 2 END"

struct list_arg {
    const char *sql;
    const char *type, *dept, *project;   /* ?1 ?2 ?3 */
    struct db_policy *rows;
    int n;
};

static int list_fn(struct db__conn *c, void *arg)
{
    struct list_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->type), DB__S(a->dept), DB__S(a->project)};

    return db__query_rows(c, a->sql, args, DB__NARGS(args), &policy_shape, &a->rows, &a->n);
}

static int read_list(struct db *db, struct list_arg *a, struct db_policy **out, int *n)
{
    int rc = db__read(db, list_fn, a);

    if (rc != DB_OK) {
        db_policies_free(a->rows, a->n);
        a->rows = NULL;
        a->n = 0;
    }
    *out = a->rows;
    *n = a->n;
    return rc;
}

int db_policy_list(struct db *db, const char *type, struct db_policy **out, int *n)
{
    struct list_arg a = {"SELECT " COLS " FROM policies WHERE (?1 = '' OR type = ?1)"
                         " AND ?2 = ?3 ORDER BY type," BY_SCOPE ", scope_id", /* ?2 ?3: "" */
                         type ? type : "", "", "", NULL, 0};

    return read_list(db, &a, out, n);
}

int db_policy_chain(struct db *db, const char *type, const char *dept, const char *project,
                    struct db_policy **out, int *n)
{
    struct list_arg a = {"SELECT " COLS " FROM policies WHERE type = ?1 AND (scope = 'tenant'"
                         " OR (scope = 'department' AND scope_id = ?2)"
                         " OR (scope = 'project' AND scope_id = ?3)) ORDER BY" BY_SCOPE,
                         type, dept ? dept : "", project ? project : "", NULL, 0};

    return read_list(db, &a, out, n);
}
