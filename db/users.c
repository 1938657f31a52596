/*
 * users.c: principals (users and service accounts) and access rules.
 *
 * Invariants:
 *   1. A principal's login (username or clientId) is unique across kinds.
 *   2. Only a crypt(3) hash of a secret is stored, never the secret.
 *   3. token_version only grows; tokens carrying an older version are void.
 *   4. Deleting a principal deletes the access rules naming it.
 */
#include "db_int.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>

#define USER_COLS "id, kind, login, name, secret_hash, token_version, created_at," \
                  " updated_at, last_login, created_by, enabled"

static void user_row(struct db__stmt *st, struct db_user *u)
{
    memset(u, 0, sizeof(*u));
    u->id = db__col_int64(st, 0);
    u->kind = db__col_int(st, 1);
    db__copy(u->login, sizeof(u->login), st, 2);
    db__copy(u->name, sizeof(u->name), st, 3);
    db__copy(u->secret_hash, sizeof(u->secret_hash), st, 4);
    u->token_version = db__col_int64(st, 5);
    u->created_at = db__col_int64(st, 6);
    u->updated_at = db__col_int64(st, 7);
    u->last_login = db__col_int64(st, 8);
    db__copy(u->created_by, sizeof(u->created_by), st, 9);
    u->enabled = db__col_int(st, 10);
}

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
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    if (db__step(st) != DB__ROW)
        return db__done(st, DB_EIO);
    *a->count = db__col_int64(st, 0);
    return db__done(st, DB_OK);
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
        " updated_at, created_by) VALUES (?, ?, ?, ?, 1, ?, ?, ?)";
    struct db_user *u = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int(st, 1, u->kind);
    db__bind_text(st, 2, u->login);
    db__bind_text(st, 3, u->name);
    db__bind_text(st, 4, u->secret_hash);
    db__bind_int64(st, 5, u->created_at);
    db__bind_int64(st, 6, u->updated_at);
    db__bind_text(st, 7, u->created_by);
    rc = db__step_done(st);
    if (rc == DB_OK)
        u->id = db__last_id(c);
    return db__done(st, rc);
}

int db_user_insert(struct db *db, struct db_user *u)
{
    u->created_at = u->updated_at = db__now_ms();
    u->token_version = 1;
    return db__write_noted(db, DB_CHANGE_PRINCIPALS, insert_fn, u);
}

static int get_fn(struct db__conn *c, void *arg)
{
    static const char by_id[] = "SELECT " USER_COLS " FROM users WHERE id = ?";
    static const char by_login[] = "SELECT " USER_COLS " FROM users WHERE login = ?";
    struct user_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, a->text ? by_login : by_id, &rc);

    if (!st)
        return rc;
    if (a->text)
        db__bind_text(st, 1, a->text);
    else
        db__bind_int64(st, 1, a->id);
    src = db__step(st);
    if (src == DB__ROW)
        user_row(st, a->u);
    return db__done(st, src == DB__ROW ? DB_OK : src == DB__DONE ? DB_ENOTFOUND : DB_EIO);
}

int db_user_get(struct db *db, int64_t id, struct db_user *out)
{
    struct user_arg a = {.id = id, .u = out};

    return db__read(db, get_fn, &a);
}

int db_user_by_login(struct db *db, const char *login, struct db_user *out)
{
    struct user_arg a = {.text = login, .u = out};

    return db__read(db, get_fn, &a);
}

static int list_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " USER_COLS " FROM users WHERE kind = ? ORDER BY id";
    struct user_arg *a = arg;
    int rc = DB_OK, cap = 0;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int(st, 1, a->kind);
    while ((rc = db__step(st)) == DB__ROW) {
        if (db__grow(a->list, *a->n, &cap, sizeof(**a->list)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        user_row(st, &(*a->list)[(*a->n)++]);
    }
    return db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
}

int db_user_list(struct db *db, int kind, struct db_user **out, int *n)
{
    struct user_arg a = {.kind = kind, .list = out, .n = n};

    return db__read_list(db, list_fn, &a, out, n);
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
    static const char user[] = "DELETE FROM users WHERE id = ?";
    struct user_arg *a = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, rules, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->id);
    rc = db__done(st, db__step_done(st));
    if (rc != DB_OK)
        return rc;
    st = db__prep(c, user, &rc);
    if (!st)
        return rc;
    db__bind_int64(st, 1, a->id);
    rc = db__step_done(st);
    return db__done(st, changed(c, rc));
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
    int rc = DB_OK, i = 1;
    struct db__stmt *st = db__prep(c, sql[a->kind], &rc);

    if (!st)
        return rc;
    if (a->kind == 0)
        db__bind_text(st, i++, a->text);
    if (a->kind == 3) {
        db__bind_int(st, i++, a->text != NULL);
        db__bind_int(st, i++, a->text != NULL);
    }
    db__bind_int64(st, i++, *a->count);
    db__bind_int64(st, i, a->id);
    rc = db__step_done(st);
    return db__done(st, changed(c, rc));
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

static void rule_row(struct db__stmt *st, struct db_rule *r)
{
    memset(r, 0, sizeof(*r));
    r->id = db__col_int64(st, 0);
    db__copy(r->subject_type, sizeof(r->subject_type), st, 1);
    db__copy(r->subject_id, sizeof(r->subject_id), st, 2);
    r->role_id = db__col_int(st, 3);
    db__copy(r->scope_type, sizeof(r->scope_type), st, 4);
    db__copy(r->scope_id, sizeof(r->scope_id), st, 5);
    r->created_at = db__col_int64(st, 6);
    db__copy(r->created_by, sizeof(r->created_by), st, 7);
    db__copy(r->scope_named, sizeof(r->scope_named), st, 8);
}

static int rule_insert_fn(struct db__conn *c, void *arg)
{
    static const char sql[] =
        "INSERT INTO access_rules (subject_type, subject_id, role_id, scope_type, scope_id,"
        " created_at, created_by, scope_named) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    struct db_rule *r = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_text(st, 1, r->subject_type);
    db__bind_text(st, 2, r->subject_id);
    db__bind_int(st, 3, r->role_id);
    db__bind_text(st, 4, r->scope_type);
    db__bind_text(st, 5, r->scope_id);
    db__bind_int64(st, 6, r->created_at);
    db__bind_text(st, 7, r->created_by);
    db__bind_text(st, 8, r->scope_named);
    rc = db__step_done(st);
    if (rc == DB_OK)
        r->id = db__last_id(c);
    return db__done(st, rc);
}

int db_rule_insert(struct db *db, struct db_rule *r)
{
    r->created_at = db__now_ms();
    return db__write_noted(db, DB_CHANGE_PRINCIPALS, rule_insert_fn, r);
}

struct rule_arg {
    int64_t id;
    const char *subject;
    struct db_rule *one;
    struct db_rule **list;
    int *n;
};

static int rule_get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT " RULE_COLS " FROM access_rules WHERE id = ?";
    struct rule_arg *a = arg;
    int rc = DB_OK, src;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->id);
    src = db__step(st);
    if (src == DB__ROW)
        rule_row(st, a->one);
    return db__done(st, src == DB__ROW ? DB_OK : src == DB__DONE ? DB_ENOTFOUND : DB_EIO);
}

int db_rule_get(struct db *db, int64_t id, struct db_rule *out)
{
    struct rule_arg a = {.id = id, .one = out};

    return db__read(db, rule_get_fn, &a);
}

static int rule_delete_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "DELETE FROM access_rules WHERE id = ?";
    struct rule_arg *a = arg;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->id);
    rc = db__step_done(st);
    return db__done(st, changed(c, rc));
}

int db_rule_delete(struct db *db, int64_t id)
{
    struct rule_arg a = {.id = id};

    return db__write_noted(db, DB_CHANGE_PRINCIPALS, rule_delete_fn, &a);
}

static int rule_list_fn(struct db__conn *c, void *arg)
{
    static const char all[] = "SELECT " RULE_COLS " FROM access_rules ORDER BY id";
    static const char one[] =
        "SELECT " RULE_COLS " FROM access_rules WHERE subject_id = ? ORDER BY id";
    struct rule_arg *a = arg;
    int rc = DB_OK, cap = 0;
    struct db__stmt *st = db__prep(c, a->subject ? one : all, &rc);

    if (!st)
        return rc;
    if (a->subject)
        db__bind_text(st, 1, a->subject);
    while ((rc = db__step(st)) == DB__ROW) {
        if (db__grow(a->list, *a->n, &cap, sizeof(**a->list)) != DB_OK)
            return db__done(st, DB_ENOMEM);
        rule_row(st, &(*a->list)[(*a->n)++]);
    }
    return db__done(st, rc == DB__DONE ? DB_OK : DB_EIO);
}

int db_rule_list(struct db *db, const char *subject_id, struct db_rule **out, int *n)
{
    struct rule_arg a = {.subject = subject_id, .list = out, .n = n};

    return db__read_list(db, rule_list_fn, &a, out, n);
}
