/*
 * users.c: principals (users, service accounts and users' access keys)
 * and access rules.
 *
 * Invariants:
 *   1. A principal's login (username or clientId) is unique across kinds,
 *      without regard to case.
 *   2. Only a crypt(3) hash of a secret is stored, never the secret.
 *   3. token_version only grows; tokens carrying an older version are void.
 *   4. Deleting a principal deletes the access rules naming it, and
 *      deleting a user deletes their access keys.
 *   5. An access key's name is unique among its owner's keys.
 */
#include "db_int.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>

#define USER_COLS "id, kind, login, name, secret_hash, token_version, created_at," \
                  " updated_at, created_by, owner_id, last_login, enabled"

/* A user's row: USER_COLS. An insert names kind .. owner_id. */

DB__TABLE(user_cols, user_shape, struct db_user, NULL, id, kind, login, name, secret_hash,
          token_version, created_at, updated_at, created_by, owner_id, last_login, enabled);

struct user_arg {
    int64_t id;
    const char *text;
    int kind;
    struct db_user *u;
    struct db_user **list;
    int *n;
    int64_t *count;
};

static int count_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT count(*) FROM users";
    struct user_arg *a = arg;
    int rc = db__query_one(c, sql, NULL, 0, db__read_int64, a->count);

    return rc == DB_ENOTFOUND ? DB_EIO : rc;
}

int db_user_count(struct db *db, int64_t *count)
{
    struct user_arg a = {.count = count};

    return db__read(db, count_fn, &a);
}

static int insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO users (kind, login, name, secret_hash, token_version, created_at,"
        " updated_at, created_by, owner_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    struct db_user *u = arg;

    /* token_version 1: db_user_insert */
    return db__insert_cols(c, sql, user_cols + 1, 9, u, &u->id);
}

/* Invariants 1 and 5, checked in the insert's transaction: `ADMIN` beside
 * `admin` is DB_ECONFLICT, and so is a second access key of one name for
 * one owner. lower() folds ASCII alike in SQLite and PostgreSQL, and
 * logins are ASCII (api/json_in.c's API_TEXT_LOGIN). */
static int insert_unique_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "SELECT count(*) FROM users WHERE lower(login) = lower(?)"
        " OR (owner_id > 0 AND owner_id = ? AND name = ?)";
    struct db_user *u = arg;
    const struct db__arg args[] = {DB__S(u->login), DB__I(u->owner_id), DB__S(u->name)};
    int64_t taken = 0;
    int rc = db__query_one(c, sql, args, DB__NARGS(args), db__read_int64, &taken);

    if (rc != DB_OK)
        return rc == DB_ENOTFOUND ? DB_EIO : rc;
    return taken > 0 ? DB_ECONFLICT : insert_fn(c, arg);
}

int db_user_insert(struct db *db, struct db_user *u)
{
    u->created_at = u->updated_at = db__now_ms();
    u->token_version = 1;
    return db__write_noted(db, DB_CHANGE_PRINCIPALS, insert_unique_fn, u);
}

static const char user_by_id[] = "SELECT " USER_COLS " FROM users WHERE id = ?";
static const char user_by_login[] = "SELECT " USER_COLS " FROM users WHERE login = ?";

int db_user_get(struct db *db, int64_t id, struct db_user *out)
{
    return db__read_row(db, user_by_id, (struct db__key){.i = id}, &user_shape, out);
}

int db_user_by_login(struct db *db, const char *login, struct db_user *out)
{
    return db__read_row(db, user_by_login, (struct db__key){.text = login}, &user_shape, out);
}

int db_user_list(struct db *db, int kind, struct db_user **out, int *n)
{
    static const char sql[] =
        "SELECT " USER_COLS " FROM users WHERE kind = ? AND owner_id = 0 ORDER BY id";
    struct db__key key = {.i = kind};

    return db__read_rows(db, sql, &key, &user_shape, out, n);
}

int db_key_list(struct db *db, int64_t owner_id, struct db_user **out, int *n)
{
    static const char all[] = "SELECT " USER_COLS " FROM users WHERE owner_id > 0 ORDER BY id";
    static const char one[] = "SELECT " USER_COLS " FROM users WHERE owner_id = ? ORDER BY id";
    struct db__key key = {.i = owner_id};

    return db__read_rows(db, owner_id > 0 ? one : all, owner_id > 0 ? &key : NULL, &user_shape,
                         out, n);
}

static int changed(struct db__conn *c, int rc)
{
    if (rc == DB_OK && db__changes(c) == 0)
        return DB_ENOTFOUND;
    return rc;
}

static int delete_fn(struct db__conn *c, void *arg)
{
    static const char rules[] =
        "DELETE FROM access_rules WHERE subject_id = (SELECT login FROM users WHERE id = ?)";
    static const char keys[] = "DELETE FROM users WHERE owner_id > 0 AND owner_id = ?";
    static const char user[] = "DELETE FROM users WHERE id = ?";
    struct user_arg *a = arg;
    int rc = db__run_key(c, rules, a->id);

    if (rc == DB_OK)
        rc = db__run_key(c, keys, a->id);

    return rc == DB_OK ? changed(c, db__run_key(c, user, a->id)) : rc;
}

int db_user_delete(struct db *db, int64_t id)
{
    struct user_arg a = {.id = id};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, delete_fn, &a);
}

static int update_fn(struct db__conn *c, void *arg)
{
    static const char secret[] =
        "UPDATE users SET secret_hash = ?, token_version = token_version + 1,"
        " updated_at = ? WHERE id = ?";
    static const char bump[] =
        "UPDATE users SET token_version = token_version + 1, updated_at = ? WHERE id = ?";
    static const char touch[] = "UPDATE users SET last_login = ? WHERE id = ?";
    static const char enable[] =
        "UPDATE users SET enabled = ?,"
        " token_version = token_version + CASE WHEN ? = 0 THEN 1 ELSE 0 END,"
        " updated_at = ? WHERE id = ?";
    static const char *const sql[] = {secret, bump, touch, enable};
    struct user_arg *a = arg;
    struct db__arg args[4];
    int n = 0;

    if (a->kind == 0)
        args[n++] = (struct db__arg)DB__S(a->text);
    if (a->kind == 3) {
        args[n++] = (struct db__arg)DB__I(a->text != NULL);
        args[n++] = (struct db__arg)DB__I(a->text != NULL);
    }
    args[n++] = (struct db__arg)DB__I(*a->count);
    args[n++] = (struct db__arg)DB__I(a->id);
    return changed(c, db__exec_args(c, sql[a->kind], args, n));
}

int db_user_set_secret(struct db *db, int64_t id, const char *secret_hash)
{
    int64_t now = db__now_ms();
    struct user_arg a = {.id = id, .text = secret_hash, .kind = 0, .count = &now};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, update_fn, &a);
}

int db_user_bump_token_version(struct db *db, int64_t id)
{
    int64_t now = db__now_ms();
    struct user_arg a = {.id = id, .kind = 1, .count = &now};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, update_fn, &a);
}

int db_user_touch_login(struct db *db, int64_t id, int64_t now_ms)
{
    struct user_arg a = {.id = id, .kind = 2, .count = &now_ms};

    return db__write(db, update_fn, &a);
}

int db_user_set_enabled(struct db *db, int64_t id, int enabled)
{
    int64_t now = db__now_ms();
    struct user_arg a = {.id = id, .kind = 3, .text = enabled ? "" : NULL, .count = &now};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, update_fn, &a);
}

/* ---- access rules ---- */

#define RULE_COLS "id, subject_type, subject_id, role_id, scope_type, scope_id, created_at," \
                  " created_by, scope_named"

DB__TABLE(rule_cols, rule_shape, struct db_rule, NULL, id, subject_type, subject_id, role_id,
          scope_type, scope_id, created_at, created_by, scope_named);

static const struct db__insert rule_insert = {
    "INSERT INTO access_rules (subject_type, subject_id, role_id, scope_type, scope_id,"
    " created_at, created_by, scope_named) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    &rule_shape, 1, DB_CHANGE_PRINCIPALS};

int db_rule_insert(struct db *db, struct db_rule *r)
{
    r->created_at = db__now_ms();
    return db__insert_row(db, &rule_insert, r);
}

struct rules_arg {
    struct db_rule *rules;
    const int64_t *ids;
    int n;
};

static int rules_insert_fn(struct db__conn *c, void *arg)
{
    const struct rules_arg *a = arg;
    int i, rc = DB_OK;

    for (i = 0; rc == DB_OK && i < a->n; i++)
        rc = db__insert_cols(c, rule_insert.sql, rule_cols + 1, DB__NCOLS(rule_cols) - 1,
                             &a->rules[i], &a->rules[i].id);
    return rc;
}

int db_rules_insert(struct db *db, struct db_rule *rules, int n)
{
    struct rules_arg a = {rules, NULL, n};
    int64_t now = db__now_ms();
    int i;

    for (i = 0; i < n; i++)
        rules[i].created_at = now;
    return db__write_noted(db, DB_CHANGE_PRINCIPALS, rules_insert_fn, &a);
}

static int rules_delete_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "DELETE FROM access_rules WHERE id = ?";
    const struct rules_arg *a = arg;
    int i, rc = DB_OK;

    for (i = 0; rc == DB_OK && i < a->n; i++)
        rc = changed(c, db__run_key(c, sql, a->ids[i]));
    return rc;
}

int db_rules_delete(struct db *db, const int64_t *ids, int n)
{
    struct rules_arg a = {NULL, ids, n};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, rules_delete_fn, &a);
}

struct rule_arg {
    int64_t id;
    const char *subject;
    struct db_rule *one;
    struct db_rule **list;
    int *n;
};

int db_rule_get(struct db *db, int64_t id, struct db_rule *out)
{
    static const char sql[] = "SELECT " RULE_COLS " FROM access_rules WHERE id = ?";

    return db__read_row(db, sql, (struct db__key){.i = id}, &rule_shape, out);
}

static int rule_delete_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "DELETE FROM access_rules WHERE id = ?";
    struct rule_arg *a = arg;

    return changed(c, db__run_key(c, sql, a->id));
}

int db_rule_delete(struct db *db, int64_t id)
{
    struct rule_arg a = {.id = id};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, rule_delete_fn, &a);
}

int db_rule_list(struct db *db, const char *subject_id, struct db_rule **out, int *n)
{
    static const char all[] = "SELECT " RULE_COLS " FROM access_rules ORDER BY id";
    static const char one[] =
        "SELECT " RULE_COLS " FROM access_rules WHERE subject_id = ? ORDER BY id";
    struct db__key key = {.text = subject_id};

    return db__read_rows(db, subject_id ? one : all, subject_id ? &key : NULL, &rule_shape, out,
                         n);
}
