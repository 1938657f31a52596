/*
 * h_iam.c: users, service accounts, roles and access rules.
 *
 * Invariants:
 *   1. A secret (temporary password, client secret) is shown once, in the
 *      answer that created it; only its hash is stored.
 *   2. Creating or deleting a rule needs the IAM right on the rule's
 *      scope (a department rule: on that department; a project rule: on
 *      the project's department; a system rule: on the system).
 *   3. Logging a user out, changing a password or deleting a principal
 *      voids every token issued before (token version).
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const subject_types[] = {"user", "service-account", NULL};

static json_t *user_json(const struct db_user *u)
{
    char id[24];

    snprintf(id, sizeof(id), "%lld", (long long)u->id);
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:b, s:[]}", "id", id, "username",
                     u->login, "createdBy", u->created_by, "createdAt", api_time(u->created_at),
                     "updatedAt", api_time(u->updated_at), "lastLogin",
                     api_time(u->last_login), "isLocal", 1, "groups");
}

static int64_t path_id(struct api_req *r)
{
    char *end;
    long long v = strtoll(r->params[0], &end, 10);

    return *end || v <= 0 ? -1 : v;
}

/* ---- users ---- */

void api_h_users_list(struct api_req *r)
{
    struct db_user *us = NULL;
    int n = 0, i, rc;
    json_t *a;

    if (!api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "listing users needs a system-scope IAM rule");
        return;
    }
    rc = db_user_list(r->app->db, DB_USER, &us, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, user_json(&us[i]));
    api_reply(r, 200, a);
    free(us);
}

/* Creates a principal with a fresh random secret; the secret goes to out. */
static int principal_new(struct api_req *r, int kind, const char *login, const char *name,
                         struct db_user *u, char *secret, size_t len)
{
    int rc;

    memset(u, 0, sizeof(*u));
    u->kind = kind;
    snprintf(u->login, sizeof(u->login), "%s", login);
    snprintf(u->name, sizeof(u->name), "%s", name);
    snprintf(u->created_by, sizeof(u->created_by), "%s", r->who.user.login);
    if (api_random_text(secret, len, 32) != 0 ||
        api_secret_hash(secret, u->secret_hash, sizeof(u->secret_hash)) != 0) {
        api_error(r, 500, "Internal error", "cannot make a secret");
        return -1;
    }
    rc = db_user_insert(r->app->db, u);
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_ECONFLICT ? "the name is taken" : "cannot create");
        return -1;
    }
    return 0;
}

void api_h_users_create(struct api_req *r)
{
    static const char *const fields[] = {"email", "resetPassword", "notify", NULL};
    struct db_user u;
    char email[DB_NAME_LEN], secret[48], id[24];
    int flag = 0;
    json_t *o = api_body_object(r);

    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) ||
        api_json_str(r, o, "email", email, sizeof(email), 1) ||
        api_json_bool(r, o, "resetPassword", &flag) || api_json_bool(r, o, "notify", &flag))
        goto out;
    if (!api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "creating users needs a system-scope IAM rule");
        goto out;
    }
    if (!email[0] || strchr(email, ' ')) {
        api_error(r, 400, "Bad request", "email must be a non-empty name without spaces");
        goto out;
    }
    if (principal_new(r, DB_USER, email, email, &u, secret, sizeof(secret)) != 0)
        goto out;
    snprintf(id, sizeof(id), "%lld", (long long)u.id);
    api_reply(r, 201, json_pack("{s:s, s:s, s:s}", "id", id, "username", u.login,
                                "tempPassword", secret));
    memset(secret, 0, sizeof(secret));
out:
    json_decref(o);
}

static void principal_delete(struct api_req *r, int kind)
{
    struct db_user u;
    int64_t id = path_id(r);
    int rc = id > 0 ? db_user_get(r->app->db, id, &u) : DB_ENOTFOUND;

    if (rc == DB_OK && u.kind != kind)
        rc = DB_ENOTFOUND;
    if (rc == DB_OK && !api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "this needs a system-scope IAM rule");
        return;
    }
    if (rc == DB_OK && u.id == r->who.user.id) {
        api_error(r, 409, "Conflict", "a principal cannot delete itself");
        return;
    }
    if (rc == DB_OK)
        rc = db_user_delete(r->app->db, id);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such principal");
        return;
    }
    api_reply_text(r, 204, "application/json", "", 0);
}

void api_h_user_delete(struct api_req *r)
{
    principal_delete(r, DB_USER);
}

void api_h_user_logout(struct api_req *r)
{
    int64_t id = path_id(r);
    int rc;

    if (!api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "this needs a system-scope IAM rule");
        return;
    }
    rc = id > 0 ? db_user_bump_token_version(r->app->db, id) : DB_ENOTFOUND;
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such user");
        return;
    }
    api_reply(r, 200, json_pack("{s:i, s:s}", "code", 200, "message", "logged out"));
}

void api_h_me_password(struct api_req *r)
{
    static const char *const fields[] = {"currentPassword", "newPassword", NULL};
    char cur[256] = "", next[256] = "", hash[256];
    struct db_user u;
    json_t *o = api_body_object(r);
    int rc;

    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) ||
        api_json_str(r, o, "currentPassword", cur, sizeof(cur), 1) ||
        api_json_str(r, o, "newPassword", next, sizeof(next), 1))
        goto out;
    if (strlen(next) < 8) {
        api_error(r, 400, "Bad request", "the new password needs at least 8 characters");
        goto out;
    }
    rc = db_user_get(r->app->db, r->who.user.id, &u);
    if (rc != DB_OK || u.kind != DB_USER || !api_secret_check(cur, u.secret_hash)) {
        api_error(r, 400, "Bad request", "the current password is wrong");
        goto out;
    }
    rc = api_secret_hash(next, hash, sizeof(hash)) == 0 ? db_user_set_secret(r->app->db, u.id, hash)
                                                         : DB_EIO;
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_error(r, 500, "Internal error", "cannot change the password");
        goto out;
    }
    api_reply(r, 200, json_pack("{s:i, s:s}", "code", 200, "message", "password changed"));
out:
    memset(cur, 0, sizeof(cur));
    memset(next, 0, sizeof(next));
    json_decref(o);
}

/* ---- service accounts ---- */

static json_t *sa_json(const struct db_user *u)
{
    char id[24];

    snprintf(id, sizeof(id), "%lld", (long long)u->id);
    return json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", id, "name", u->name, "clientId",
                     u->login, "createdBy", u->created_by, "createdAt",
                     api_time(u->created_at));
}

void api_h_service_accounts_list(struct api_req *r)
{
    struct db_user *us = NULL;
    int n = 0, i, rc;
    json_t *a;

    if (!api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "this needs a system-scope IAM rule");
        return;
    }
    rc = db_user_list(r->app->db, DB_SERVICE_ACCOUNT, &us, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, sa_json(&us[i]));
    api_reply(r, 200, json_pack("{s:o}", "serviceAccounts", a));
    free(us);
}

void api_h_service_accounts_create(struct api_req *r)
{
    static const char *const fields[] = {"name", NULL};
    struct db_user u;
    char name[64], client[DB_NAME_LEN], secret[48], rnd[12];
    json_t *o = api_body_object(r), *out;

    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) || api_json_str(r, o, "name", name, sizeof(name), 1))
        goto out;
    if (!api_can(&r->who, API_IAM, "", "")) {
        api_error(r, 403, "Forbidden", "this needs a system-scope IAM rule");
        goto out;
    }
    if (api_random_text(rnd, sizeof(rnd), 8) != 0) {
        api_error(r, 500, "Internal error", "no randomness");
        goto out;
    }
    snprintf(client, sizeof(client), "%s-%s", name, rnd);
    if (principal_new(r, DB_SERVICE_ACCOUNT, client, name, &u, secret, sizeof(secret)) != 0)
        goto out;
    out = sa_json(&u);
    json_object_set_new(out, "clientSecret", json_string(secret));
    api_reply(r, 201, out);
    memset(secret, 0, sizeof(secret));
out:
    json_decref(o);
}

void api_h_service_account_delete(struct api_req *r)
{
    principal_delete(r, DB_SERVICE_ACCOUNT);
}

/* ---- roles ---- */

void api_h_roles(struct api_req *r)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < api_n_roles; i++)
        json_array_append_new(
            a, json_pack("{s:i, s:s, s:s, s:b, s:b, s:b, s:s, s:o}", "id", api_roles[i].id,
                         "name", api_roles[i].name, "description", api_roles[i].description,
                         "custom", 0, "enabled", 1, "effectiveEnabled", 1, "createdBy",
                         "system", "createdAt", api_time(1)));
    api_reply(r, 200, a);
}

/* ---- access rules ---- */

/* The scope's department id and display name; -1 if the scope is unknown. */
static int scope_info(struct api_req *r, const struct db_rule *x, char *dept, char *name)
{
    struct db_queue *q;
    int ok = -1;

    dept[0] = name[0] = 0;
    if (strcmp(x->scope_type, "system") == 0) {
        snprintf(name, DB_NAME_LEN, "%s", API_CLUSTER_NAME);
        return 0;
    }
    q = calloc(1, sizeof(*q));
    if (q && db_queue_get(r->app->db, x->scope_id, q) == DB_OK &&
        q->kind == (strcmp(x->scope_type, "project") == 0 ? DB_PROJECT : DB_DEPARTMENT)) {
        snprintf(dept, DB_ID_LEN, "%s", q->kind == DB_PROJECT ? q->parent_id : q->id);
        snprintf(name, DB_NAME_LEN, "%s", q->name);
        ok = 0;
    }
    free(q);
    return ok;
}

static int may_manage(struct api_req *r, const struct db_rule *x, const char *dept)
{
    if (strcmp(x->scope_type, "system") == 0)
        return api_can(&r->who, API_IAM, "", "");
    return api_can(&r->who, API_IAM, "", dept);
}

static json_t *rule_json(const struct db_rule *x, const char *scope_name)
{
    const struct api_role *role = api_role_find(x->role_id);
    char id[24];

    snprintf(id, sizeof(id), "%lld", (long long)x->id);
    return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:n, s:i, s:s,"
                     " s:{s:s}}",
                     "id", id, "subjectId", x->subject_id, "subjectType", x->subject_type,
                     "roleId", x->role_id, "roleName", role ? role->name : "", "scopeId",
                     x->scope_id, "scopeType", x->scope_type, "scopeName", scope_name,
                     "clusterId", API_CLUSTER_ID, "createdAt", api_time(x->created_at),
                     "updatedAt", api_time(x->created_at), "deletedAt", "tenantId", 1,
                     "createdBy", x->created_by, "status", "phase", "Ready");
}

static int rule_in(struct api_req *r, json_t *o, struct db_rule *x)
{
    static const char *const fields[] = {"subjectId", "subjectType", "roleId", "scopeId",
                                         "scopeType", "clusterId", NULL};
    const char *const *t;
    struct db_user u;
    int64_t role = 0;

    memset(x, 0, sizeof(*x));
    if (api_json_allow(r, o, fields, NULL) ||
        api_json_str(r, o, "subjectId", x->subject_id, sizeof(x->subject_id), 1) ||
        api_json_str(r, o, "subjectType", x->subject_type, sizeof(x->subject_type), 1) ||
        api_json_int(r, o, "roleId", 1, 1000, &role) ||
        api_json_str(r, o, "scopeType", x->scope_type, sizeof(x->scope_type), 1) ||
        api_json_str(r, o, "scopeId", x->scope_id, sizeof(x->scope_id), 0))
        return -1;
    for (t = subject_types; *t && strcmp(*t, x->subject_type); t++)
        ;
    if (!*t || !api_role_find((int)role)) {
        api_error(r, 400, "Bad request", "subjectType is user or service-account; roleId a role");
        return -1;
    }
    if (db_user_by_login(r->app->db, x->subject_id, &u) != DB_OK ||
        u.kind != (x->subject_type[0] == 'u' ? DB_USER : DB_SERVICE_ACCOUNT)) {
        api_error(r, 400, "Bad request", "subjectId names no such principal");
        return -1;
    }
    x->role_id = (int)role;
    snprintf(x->created_by, sizeof(x->created_by), "%s", r->who.user.login);
    return 0;
}

void api_h_rules_create(struct api_req *r)
{
    struct db_rule x;
    char dept[DB_ID_LEN], name[DB_NAME_LEN];
    json_t *o = api_body_object(r);
    int rc;

    if (!o)
        return;
    if (rule_in(r, o, &x))
        goto out;
    if (scope_info(r, &x, dept, name) != 0) {
        api_error(r, 400, "Bad request", "scopeType/scopeId name no scope");
        goto out;
    }
    if (strcmp(x.scope_type, "system") == 0)
        x.scope_id[0] = 0;
    if (!may_manage(r, &x, dept)) {
        api_error(r, 403, "Forbidden", "this needs the IAM right on the rule's scope");
        goto out;
    }
    rc = db_rule_insert(r->app->db, &x);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot create");
        goto out;
    }
    api_reply(r, 201, rule_json(&x, name));
out:
    json_decref(o);
}

static void rules_reply(struct api_req *r, const struct db_rule *rs, int n, int check)
{
    char dept[DB_ID_LEN], name[DB_NAME_LEN];
    json_t *a = json_array();
    int i;

    for (i = 0; i < n; i++) {
        int known = scope_info(r, &rs[i], dept, name) == 0;
        if (check && (!known || !may_manage(r, &rs[i], dept)))
            continue;
        json_array_append_new(a, rule_json(&rs[i], name));
    }
    api_reply(r, 200, json_pack("{s:I, s:I, s:o}", "totalRecords", (json_int_t)json_array_size(a),
                                "displayRecords", (json_int_t)json_array_size(a),
                                "accessRules", a));
}

void api_h_rules_list(struct api_req *r)
{
    struct db_rule *rs = NULL;
    int n = 0, rc;

    rc = db_rule_list(r->app->db, NULL, &rs, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    rules_reply(r, rs, n, 1);
    free(rs);
}

void api_h_me_rules(struct api_req *r)
{
    rules_reply(r, r->who.rules, r->who.n_rules, 0);
}

/* Loads the path's rule if the caller may manage it (404 otherwise). */
static int rule_load(struct api_req *r, struct db_rule *x, char *name)
{
    char dept[DB_ID_LEN];
    int64_t id = path_id(r);
    int rc = id > 0 ? db_rule_get(r->app->db, id, x) : DB_ENOTFOUND;

    if (rc == DB_OK && (scope_info(r, x, dept, name) != 0 || !may_manage(r, x, dept)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such access rule");
        return -1;
    }
    return 0;
}

void api_h_rule_get(struct api_req *r)
{
    struct db_rule x;
    char name[DB_NAME_LEN];

    if (rule_load(r, &x, name) == 0)
        api_reply(r, 200, rule_json(&x, name));
}

void api_h_rule_delete(struct api_req *r)
{
    struct db_rule x;
    char name[DB_NAME_LEN];
    int rc;

    if (rule_load(r, &x, name) != 0)
        return;
    rc = db_rule_delete(r->app->db, x.id);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot delete");
        return;
    }
    api_reply_text(r, 204, "application/json", "", 0);
}
