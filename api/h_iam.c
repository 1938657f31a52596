/*
 * h_iam.c: users, service accounts, roles, permissions and access rules,
 * in the shapes of Run:ai's document: users and service accounts are bare
 * arrays, rule and role ids integers, rules listed as {totalRecords,
 * displayRecords, accessRules}. Run:ai's applications (/api/v1/apps) are
 * its earlier name for service accounts: the same principals, in the
 * same store, answered in that document's shapes. A user's access keys
 * (/api/v1/access-keys, and /api/v1/user-applications, their earlier
 * name) are client-credentials principals of the same store that name
 * their owner: a token of one acts as that user (http.c), with the
 * user's access rules.
 *
 * Invariants:
 *   1. A secret (temporary password, client secret) is shown once, in the
 *      answer that created it; only its hash is stored.
 *   2. Creating or deleting a rule needs the IAM right on the rule's
 *      scope (a department rule: on that department; a project rule: on
 *      the project's department; a system rule: on the system), and a
 *      rule may grant only rights its creator holds on that scope (no
 *      one grants more than they have; System administrator only on the
 *      system).
 *   3. Logging a user out, changing a password or deleting a principal
 *      voids every token issued before (token version).
 *   4. A user sees, renews and deletes only their own access keys; the
 *      administration routes, everyone's, with a system-scope IAM rule.
 *      The service-account routes never show an access key.
 */
#include "api.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const subject_types[] = {"user", "service-account", NULL};
static const char *const scope_types[] = {"system", "tenant", "cluster", "department",
                                          "project", NULL};

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

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

static int system_iam(struct api_req *r)
{
    if (api_can(&r->who, API_IAM, "", ""))
        return 1;
    api_error(r, 403, "Forbidden", "this needs a system-scope IAM rule");
    return 0;
}

/* The principal of kind of the path's {id}; replies 404 itself. */
static int principal_load(struct api_req *r, int kind, struct db_user *u)
{
    int64_t id = path_id(r);
    int rc = id > 0 ? db_user_get(r->app->db, id, u) : DB_ENOTFOUND;

    if (rc == DB_OK && (u->kind != kind || u->owner_id > 0))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, kind == DB_USER ? "no such user" : "no such service account");
        return -1;
    }
    memset(u->secret_hash, 0, sizeof(u->secret_hash));
    return 0;
}

/* ---- users ---- */

static int user_get(const void *row, const char *f, struct api_lv *v)
{
    const struct db_user *u = row;

    if (strcmp(f, "username") == 0)
        v->s = u->login;
    else if (strcmp(f, "createdBy") == 0)
        v->s = u->created_by;
    else if (strcmp(f, "isLocal") == 0)
        v->s = "true";
    else if (strcmp(f, "type") == 0)
        v->s = "local";
    else if (strcmp(f, "lastLogin") == 0 || strcmp(f, "creationTime") == 0 ||
             strcmp(f, "lastUpdated") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)(f[1] == 'a' ? u->last_login
                        : f[0] == 'c' ? u->created_at : u->updated_at);
    } else
        return -1;
    return 0;
}

static json_t *user_row_json(struct api_req *r, const void *row)
{
    (void)r;
    return user_json(row);
}

/* GET /users (a bare array; limit defaults to 500) and /users/count. */
void api_h_users_list(struct api_req *r)
{
    struct db_user *us = NULL;
    struct api_lq q;
    int n = 0, n_kept = 0, rc;
    json_t *a;
    int count_only = (r->arg & API_ARG_COUNT) != 0;

    if (!system_iam(r) || api_lq_parse(r, &q) != 0 || api_lq_search(r, &q, "username") != 0)
        return;
    if (!q.limit_given)
        q.limit = API_PAGE_MAX;
    rc = db_user_list(r->app->db, DB_USER, &us, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = api_lq_page(r, &q, &(struct api_lq_rows){us, n, sizeof(*us), user_get, user_row_json},
                    count_only, &n_kept);
    if (a)
        api_reply(r, 200, a);
    free(us);
}

void api_h_user_get(struct api_req *r)
{
    struct db_user u;

    if (system_iam(r) && principal_load(r, DB_USER, &u) == 0)
        api_reply(r, 200, user_json(&u));
}

/* Creates a principal with a fresh random secret (an access key of user
 * owner_id, 0: none); the secret goes to out. */
static int principal_new(struct api_req *r, int kind, const char *login, const char *name,
                         int64_t owner_id, struct db_user *u, char *secret, size_t len)
{
    int rc;

    memset(u, 0, sizeof(*u));
    u->kind = kind;
    u->owner_id = owner_id;
    snprintf(u->login, sizeof(u->login), "%s", login);
    snprintf(u->name, sizeof(u->name), "%s", name);
    snprintf(u->created_by, sizeof(u->created_by), "%s", r->who.user.login);
    if (api_random_text(secret, len, 32) != 0 ||
        api_secret_hash(secret, r->app->cfg.secret_hash_cost, u->secret_hash,
                        sizeof(u->secret_hash)) != 0) {
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
    int reset = 0, notify = 0;
    json_t *o = api_body_object(r);

    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) ||
        api_json_text(r, o, "email", email, sizeof(email), 1, API_TEXT_LOGIN) ||
        api_json_bool(r, o, "resetPassword", &reset) || api_json_bool(r, o, "notify", &notify))
        goto out;
    if (!system_iam(r))
        goto out;
    if (!email[0] || strchr(email, ' ')) {
        api_error(r, 400, "Bad request", "email must be a non-empty name without spaces");
        goto out;
    }
    if (notify || reset) {
        api_error(r, 400, "Bad request",
                  notify ? "notify: allotd sends no email; the temporary password is in the answer"
                         : "resetPassword: allotd does not force a password change at first login");
        goto out;
    }
    if (principal_new(r, DB_USER, email, email, 0, &u, secret, sizeof(secret)) != 0)
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
    int rc;

    if (!system_iam(r) || principal_load(r, kind, &u) != 0)
        return;
    if (u.id == r->who.user.id) {
        api_error(r, 400, "Bad request", "a principal cannot delete itself");
        return;
    }
    rc = db_user_delete(r->app->db, u.id);
    api_pcache_invalidate(r->app->pc);
    api_reply_deleted(r, rc, "no such principal");
}

void api_h_user_delete(struct api_req *r)
{
    principal_delete(r, DB_USER);
}

/* POST /api/v1/users/{id}/logout: a user logs themself out; a system
 * IAM rule logs out anyone. Every refresh-token family of theirs is
 * revoked and the token version goes up, so every token issued before,
 * access or refresh, is void (401) from the next request on. */
void api_h_user_logout(struct api_req *r)
{
    struct db_user u;
    int self = path_id(r) == r->who.user.id && r->who.user.kind == DB_USER;
    int rc;

    if ((!self && !system_iam(r)) || principal_load(r, DB_USER, &u) != 0)
        return;
    rc = db_refresh_revoke_user(r->app->db, u.id);
    if (rc == DB_OK)
        rc = db_user_bump_token_version(r->app->db, u.id);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such user");
        return;
    }
    api_reply(r, 200, json_pack("{s:i, s:s}", "code", 200, "message", "logged out"));
}

/* Gives principal u a new random secret (its tokens are void); the
 * secret goes to out. */
static int secret_renew(struct api_req *r, const struct db_user *u, char *secret, size_t len)
{
    char hash[256];
    int rc;

    if (api_random_text(secret, len, 32) != 0 ||
        api_secret_hash(secret, r->app->cfg.secret_hash_cost, hash, sizeof(hash)) != 0) {
        api_error(r, 500, "Internal error", "cannot make a secret");
        return -1;
    }
    rc = db_user_set_secret(r->app->db, u->id, hash);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the secret");
        return -1;
    }
    return 0;
}

/* A new secret for the principal of that kind named by the path, shown
 * once as key. */
static void secret_reply(struct api_req *r, int kind, const char *key)
{
    struct db_user u;
    char secret[48];

    if (!system_iam(r) || principal_load(r, kind, &u) != 0)
        return;
    if (secret_renew(r, &u, secret, sizeof(secret)) == 0)
        api_reply(r, 200, json_pack("{s:s}", key, secret));
    memset(secret, 0, sizeof(secret));
}

/* POST /users/{id}/password: a new temporary password, shown once. */
void api_h_user_password(struct api_req *r)
{
    secret_reply(r, DB_USER, "tempPassword");
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
    rc = api_secret_hash(next, r->app->cfg.secret_hash_cost, hash, sizeof(hash)) == 0
             ? db_user_set_secret(r->app->db, u.id, hash)
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
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:b}", "id", id, "name", u->name,
                     "clientId", u->login, "createdBy", u->created_by, "createdAt",
                     api_time(u->created_at), "updatedAt", api_time(u->updated_at),
                     "lastLogin", api_time(u->last_login), "enabled", u->enabled);
}

void api_h_service_accounts_list(struct api_req *r)
{
    struct db_user *us = NULL;
    int n = 0, i, rc;
    json_t *a;

    if (!system_iam(r))
        return;
    rc = db_user_list(r->app->db, DB_SERVICE_ACCOUNT, &us, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, sa_json(&us[i]));
    api_reply(r, 200, a);
    free(us);
}

/* Run:ai's application names: a lowercase letter, then lowercase letters,
 * digits, '-' and '_', ending in a letter or digit. */
static int app_name_ok(const char *s)
{
    size_t n = strlen(s);

    return n >= 2 && s[0] >= 'a' && s[0] <= 'z' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
                                                             "0123456789-_") == n &&
           s[n - 1] != '-' && s[n - 1] != '_';
}

/* A client-credentials principal named name (an access key of user
 * owner_id, 0: a service account): its clientId the name and a random
 * suffix, its secret to out. */
static int client_new(struct api_req *r, const char *name, int64_t owner_id, struct db_user *u,
                      char *secret, size_t len)
{
    char client[DB_NAME_LEN], rnd[12];

    if (api_random_text(rnd, sizeof(rnd), 8) != 0) {
        api_error(r, 500, "Internal error", "no randomness");
        return -1;
    }
    snprintf(client, sizeof(client), "%s-%s", name, rnd);
    return principal_new(r, DB_SERVICE_ACCOUNT, client, name, owner_id, u, secret, len);
}

/* The {name} of a body that may hold nothing else; pattern: Run:ai's
 * pattern for application and access-key names applies. 0, or -1 after
 * replying 400. */
static int name_in(struct api_req *r, json_t *o, char *name, size_t len, int pattern)
{
    static const char *const fields[] = {"name", NULL};

    if (api_json_allow(r, o, fields, NULL) ||
        api_json_text(r, o, "name", name, len, 1, API_TEXT_LOGIN))
        return -1;
    if (pattern && !app_name_ok(name)) {
        api_error(r, 400, "Bad request", "name: lowercase letters, digits, '-' and '_', from a "
                                         "letter to a letter or digit");
        return -1;
    }
    return 0;
}

/* Creates a service account from {name}; app: in the form of Run:ai's
 * /apps (the name checked by its pattern, the secret answered as
 * `secret`), else of /service-accounts (`clientSecret`, the whole row). */
static void sa_create(struct api_req *r, int app)
{
    struct db_user u;
    char name[64], secret[48], id[24];
    json_t *o = api_body_object(r), *out;

    if (!o)
        return;
    if (name_in(r, o, name, sizeof(name), app) != 0 || !system_iam(r))
        goto out;
    if (client_new(r, name, 0, &u, secret, sizeof(secret)) != 0)
        goto out;
    snprintf(id, sizeof(id), "%lld", (long long)u.id);
    out = app ? json_pack("{s:s, s:s, s:s}", "id", id, "name", u.name, "clientId", u.login)
              : sa_json(&u);
    json_object_set_new(out, app ? "secret" : "clientSecret", json_string(secret));
    api_reply(r, 201, out);
    memset(secret, 0, sizeof(secret));
out:
    json_decref(o);
}

void api_h_service_accounts_create(struct api_req *r)
{
    sa_create(r, 0);
}

/* POST /apps: Run:ai's earlier name for a service account. */
void api_h_apps_create(struct api_req *r)
{
    sa_create(r, 1);
}

void api_h_service_account_get(struct api_req *r)
{
    struct db_user u;

    if (system_iam(r) && principal_load(r, DB_SERVICE_ACCOUNT, &u) == 0)
        api_reply(r, 200, sa_json(&u));
}

/* PATCH {enabled}: a disabled service account gets no token, and the
 * tokens it holds are void. */
void api_h_service_account_patch(struct api_req *r)
{
    static const char *const fields[] = {"enabled", NULL};
    struct db_user u;
    json_t *o;
    int enabled = 1, rc;

    if (!system_iam(r) || principal_load(r, DB_SERVICE_ACCOUNT, &u) != 0)
        return;
    o = api_body_object(r);
    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) || api_json_bool(r, o, "enabled", &enabled))
        goto out;
    if (!json_is_boolean(json_object_get(o, "enabled"))) {
        api_error(r, 400, "Bad request", "field 'enabled' is required");
        goto out;
    }
    rc = db_user_set_enabled(r->app->db, u.id, enabled);
    api_pcache_invalidate(r->app->pc);
    if (rc == DB_OK)
        rc = db_user_get(r->app->db, u.id, &u);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot update the service account");
        goto out;
    }
    api_reply(r, 200, sa_json(&u));
out:
    json_decref(o);
}

/* POST /service-accounts/{id}/secret: a new client secret, shown once. */
void api_h_service_account_secret(struct api_req *r)
{
    secret_reply(r, DB_SERVICE_ACCOUNT, "clientSecret");
}

/* POST /apps/{id}/secret: the same, answered as `secret`. */
void api_h_app_secret(struct api_req *r)
{
    secret_reply(r, DB_SERVICE_ACCOUNT, "secret");
}

void api_h_service_account_delete(struct api_req *r)
{
    principal_delete(r, DB_SERVICE_ACCOUNT);
}

/* ---- users' access keys (Run:ai's access keys and user applications) ---- */

/* Run:ai's AccessKey1 (or UserApp, the same fields); admin: with
 * createdBy, as the administration lists answer it. */
static json_t *key_json(const struct db_user *u, int admin)
{
    char id[24];
    json_t *o;

    snprintf(id, sizeof(id), "%lld", (long long)u->id);
    o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "id", id, "name", u->name, "clientId", u->login,
                  "createdAt", api_time(u->created_at), "lastLogin", api_time(u->last_login));
    if (o && admin)
        json_object_set_new(o, "createdBy", json_string(u->created_by));
    return o;
}

/* Whose access keys the route is about: the caller's (a user's id: a
 * service account has none, 403), or with API_ARG_ADMIN everyone's (0,
 * with a system-scope IAM rule); -1 after replying. */
static int64_t key_scope(struct api_req *r)
{
    if (r->arg & API_ARG_ADMIN)
        return system_iam(r) ? 0 : -1;
    if (r->who.user.kind == DB_USER)
        return r->who.user.id;
    api_error(r, 403, "Forbidden", "access keys are a user's; a service account has its own "
                                   "client secret");
    return -1;
}

/* The access key of the path's {id}, of user owner (0: anyone's); replies
 * 404 itself (another user's key is not found either). */
static int key_load(struct api_req *r, int64_t owner, struct db_user *u)
{
    int64_t id = path_id(r);
    int rc = id > 0 ? db_user_get(r->app->db, id, u) : DB_ENOTFOUND;

    if (rc == DB_OK && (u->owner_id <= 0 || (owner > 0 && u->owner_id != owner)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such access key");
        return -1;
    }
    memset(u->secret_hash, 0, sizeof(u->secret_hash));
    return 0;
}

/* Does key u pass the administration list's filters (clientId,
 * createdBy: exact values)? */
static int key_matches(struct api_req *r, const struct db_user *u)
{
    char client[DB_NAME_LEN], by[DB_NAME_LEN];

    if (api_query(r, "clientId", client, sizeof(client)) == 0 && strcmp(client, u->login) != 0)
        return 0;
    return api_query(r, "createdBy", by, sizeof(by)) != 0 || strcmp(by, u->created_by) == 0;
}

/* Lists user owner's access keys (0: everyone's, filtered, with
 * createdBy): {accessKeys: [...]}, or with API_ARG_USER_APP a bare array
 * (Run:ai's UserApps). */
static void keys_reply(struct api_req *r, int64_t owner)
{
    struct db_user *us = NULL;
    int n = 0, i, rc = db_key_list(r->app->db, owner, &us, &n);
    json_t *a;

    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        if (owner > 0 || key_matches(r, &us[i]))
            json_array_append_new(a, key_json(&us[i], owner == 0));
    api_reply(r, 200, r->arg & API_ARG_USER_APP ? a : json_pack("{s:o}", "accessKeys", a));
    free(us);
}

/* GET /access-keys, /user-applications: the caller's own; with
 * API_ARG_ADMIN, the administration routes: everyone's. */
void api_h_keys_list(struct api_req *r)
{
    int64_t owner = key_scope(r);

    if (owner >= 0)
        keys_reply(r, owner);
}

/* POST {name}: a new access key of the caller's, its secret shown once
 * (clientSecret; with API_ARG_USER_APP, Run:ai's UserAppPostResponse:
 * secret). */
void api_h_key_create(struct api_req *r)
{
    struct db_user u;
    char name[64], secret[48], id[24];
    json_t *o = api_body_object(r);

    if (!o)
        return;
    if (name_in(r, o, name, sizeof(name), 1) != 0 || key_scope(r) < 0 ||
        client_new(r, name, r->who.user.id, &u, secret, sizeof(secret)) != 0)
        goto out;
    snprintf(id, sizeof(id), "%lld", (long long)u.id);
    api_reply(r, 201, json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", id, "name", u.name,
                                "clientId", u.login, "createdAt", api_time(u.created_at),
                                r->arg & API_ARG_USER_APP ? "secret" : "clientSecret", secret));
    memset(secret, 0, sizeof(secret));
out:
    json_decref(o);
}

void api_h_key_get(struct api_req *r)
{
    struct db_user u;

    if (key_scope(r) > 0 && key_load(r, r->who.user.id, &u) == 0)
        api_reply(r, 200, key_json(&u, 0));
}

/* POST .../secret: a new secret, shown once; the key's tokens are void. */
void api_h_key_secret(struct api_req *r)
{
    struct db_user u;
    char secret[48];

    if (key_scope(r) <= 0 || key_load(r, r->who.user.id, &u) != 0)
        return;
    if (secret_renew(r, &u, secret, sizeof(secret)) == 0)
        api_reply(r, 200, json_pack("{s:s}", "clientSecret", secret));
    memset(secret, 0, sizeof(secret));
}

/* Deletes the path's access key (with API_ARG_ADMIN anyone's); its
 * tokens are void from the next request on. */
void api_h_key_delete(struct api_req *r)
{
    struct db_user u;
    int64_t owner = key_scope(r);
    int rc;

    if (owner < 0 || key_load(r, owner, &u) != 0)
        return;
    rc = db_user_delete(r->app->db, u.id);
    api_pcache_invalidate(r->app->pc);
    api_reply_deleted(r, rc, "no such access key");
}

/* ---- roles and permissions ---- */

/* Does `rights` satisfy `need` (API_AUTH: any principal)? */
static int grants(unsigned rights, unsigned need)
{
    need &= ~(unsigned)API_AUTH;
    return (rights & need) == need;
}

/* The Permission entries of a set of rights (every permission for ~0). */
static json_t *permissions_json(unsigned rights)
{
    json_t *a = json_array();
    int i;

    for (i = 0; a && i < api_n_permissions; i++) {
        const struct api_permission *p = &api_permissions[i];
        json_t *actions = json_array();
        if (p->read && grants(rights, p->read))
            json_array_append_new(actions, json_string("read"));
        if (p->write && grants(rights, p->write)) {
            json_array_append_new(actions, json_string("create"));
            json_array_append_new(actions, json_string("update"));
            json_array_append_new(actions, json_string("delete"));
        }
        if (json_array_size(actions) == 0) {
            json_decref(actions);
            continue;
        }
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o}", "resourceType",
                                           p->resource_type, "displayName", p->display_name,
                                           "groupId", p->group_id, "actions", actions));
    }
    return a;
}

static json_t *role_json(const struct api_role *role)
{
    return json_pack("{s:i, s:s, s:s, s:b, s:b, s:b, s:s, s:o, s:o, s:n, s:o}", "id", role->id,
                     "name", role->name, "description", role->description, "custom", 0,
                     "enabled", 1, "effectiveEnabled", 1, "createdBy", "system", "createdAt",
                     api_time(1), "updatedAt", api_time(1), "deletedAt", "permissions",
                     permissions_json(role->perms));
}

void api_h_roles(struct api_req *r)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < api_n_roles; i++)
        json_array_append_new(a, role_json(&api_roles[i]));
    api_reply(r, 200, a);
}

void api_h_role_get(struct api_req *r)
{
    const struct api_role *role;
    char *end;
    long v = strtol(r->params[0], &end, 10);

    if (*end || end == r->params[0] || v < 0) {
        api_error(r, 400, "Bad request", "roleIdPath is a role's integer id");
        return;
    }
    role = api_role_find((int)v);
    if (!role) {
        api_error(r, 404, "Not found", "no such role");
        return;
    }
    api_reply(r, 200, role_json(role));
}

void api_h_permissions(struct api_req *r)
{
    api_reply(r, 200, permissions_json(~0u));
}

/* ---- access rules ---- */

/* Is the scope allot's whole system (system, its tenant, its cluster)? */
static int scope_is_system(const char *scope_type)
{
    return strcmp(scope_type, "system") == 0 || strcmp(scope_type, "tenant") == 0 ||
           strcmp(scope_type, "cluster") == 0;
}

/* The scope type a rule shows: what it was asked for on. */
static const char *scope_shown(const struct db_rule *x)
{
    return x->scope_named[0] ? x->scope_named : x->scope_type;
}

/* The scope's department id and display name; -1 if the scope is unknown. */
static int scope_info(struct api_req *r, const struct db_rule *x, char *dept, char *name)
{
    struct db_queue *q;
    int ok = -1;

    dept[0] = name[0] = 0;
    if (scope_is_system(x->scope_type)) {
        snprintf(name, DB_NAME_LEN, "%s",
                 strcmp(scope_shown(x), "tenant") == 0 ? "tenant" : API_CLUSTER_NAME);
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
    if (scope_is_system(x->scope_type))
        return api_can(&r->who, API_IAM, "", "");
    return api_can(&r->who, API_IAM, "", dept);
}

/* May the caller grant x's role on x's scope? Only a role whose every
 * right the caller holds there itself: a Department administrator holds
 * no node right, so cannot make anyone System administrator. */
static int may_grant(struct api_req *r, const struct db_rule *x, const char *dept)
{
    const struct api_role *role = api_role_find(x->role_id);
    int project = strcmp(x->scope_type, "project") == 0;

    return role && api_can(&r->who, role->perms, project ? x->scope_id : "", dept);
}

/* A rule as Run:ai's AccessRule (full) or MeAccessRule (the caller's). */
static json_t *rule_json(const struct db_rule *x, const char *scope_name, int full)
{
    const struct api_role *role = api_role_find(x->role_id);
    json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:i}", "id",
                          (json_int_t)x->id, "subjectId", x->subject_id, "subjectType",
                          x->subject_type, "roleId", x->role_id, "roleName",
                          role ? role->name : "", "scopeId", x->scope_id, "scopeType",
                          scope_shown(x), "scopeName", scope_name, "clusterId", API_CLUSTER_ID,
                          "tenantId", 1);

    if (o && full) {
        json_object_set_new(o, "createdAt", api_time(x->created_at));
        json_object_set_new(o, "updatedAt", api_time(x->created_at));
        json_object_set_new(o, "deletedAt", json_null());
        json_object_set_new(o, "createdBy", json_string(x->created_by));
        json_object_set_new(o, "status", json_pack("{s:s}", "phase", "Ready"));
    }
    return o;
}

/* subjectId names the principal by login (an email) or by its id. A
 * caller who may not list principals (no system-scope IAM rule: a
 * department administrator) must not learn which logins exist, so its
 * subjectId is a login taken as given, whether a principal has it or not
 * (an id is not looked up either): the rule answers the same, and applies
 * to whoever has or gets that login. */
static int subject_in(struct api_req *r, struct db_rule *x)
{
    struct db_user u;
    char *end;
    long long id = strtoll(x->subject_id, &end, 10);
    int kind = x->subject_type[0] == 'u' ? DB_USER : DB_SERVICE_ACCOUNT;
    int rc;

    if (!api_can(&r->who, API_IAM, "", "")) {
        if (!api_valid_text(x->subject_id, API_TEXT_LOGIN)) {
            api_error(r, 400, "Bad request", "subjectId: a login");
            return -1;
        }
        return 0;
    }
    rc = db_user_by_login(r->app->db, x->subject_id, &u);

    if (rc == DB_ENOTFOUND && !*end && end != x->subject_id && id > 0)
        rc = db_user_get(r->app->db, id, &u);
    if (rc != DB_OK || u.kind != kind || u.owner_id > 0) {
        api_error(r, 400, "Bad request", "subjectId names no such principal");
        return -1;
    }
    snprintf(x->subject_id, sizeof(x->subject_id), "%s", u.login);
    return 0;
}

/* An access rule's body: the rule, and the cluster it may name. */
struct rule_body {
    struct db_rule rule;
    char cluster[64];
};
#define B struct rule_body
static const struct api_field rule_fields[] = {
    API_FIELD_STR(B, "subjectId", rule.subject_id, API_F_REQUIRED),
    API_FIELD_STR(B, "subjectType", rule.subject_type, API_F_REQUIRED),
    API_FIELD_INT(B, "roleId", rule.role_id, 1, 1000),
    API_FIELD_STR(B, "scopeType", rule.scope_type, API_F_REQUIRED),
    API_FIELD_STR(B, "scopeId", rule.scope_id, API_F_OPTIONAL),
    API_FIELD_STR(B, "clusterId", cluster, API_F_OPTIONAL),
};
#undef B

static int rule_in(struct api_req *r, json_t *o, struct db_rule *x)
{
    struct rule_body b;
    const char *cluster = b.cluster;

    memset(&b, 0, sizeof(b));
    if (api_fields_in(r, o, rule_fields, API_FIELDS_N(rule_fields), &b, NULL, 0))
        return -1;
    *x = b.rule;
    if (!in_list(x->subject_type, subject_types) || !api_role_find(x->role_id)) {
        api_error(r, 400, "Bad request", "subjectType is user or service-account; roleId a role");
        return -1;
    }
    if (!in_list(x->scope_type, scope_types)) {
        api_error(r, 400, "Bad request",
                  "scopeType is system, tenant, cluster, department or project");
        return -1;
    }
    if ((cluster[0] && strcmp(cluster, API_CLUSTER_ID) != 0) ||
        (strcmp(x->scope_type, "cluster") == 0 && x->scope_id[0] &&
         strcmp(x->scope_id, API_CLUSTER_ID) != 0)) {
        api_error(r, 400, "Bad request", "clusterId (or a cluster scopeId) names no cluster");
        return -1;
    }
    if (subject_in(r, x) != 0)
        return -1;
    snprintf(x->created_by, sizeof(x->created_by), "%s", r->who.user.login);
    return 0;
}

/* Reads a rule's body o into x and checks that the caller may create it
 * (the scope exists, the caller manages it and holds the role's rights
 * there); name gets the scope's name. 0, or -1 replied. */
static int rule_checked(struct api_req *r, json_t *o, struct db_rule *x, char *name)
{
    char dept[DB_ID_LEN];

    if (rule_in(r, o, x))
        return -1;
    if (scope_info(r, x, dept, name) != 0) {
        api_error(r, 400, "Bad request", "scopeType/scopeId name no scope");
        return -1;
    }
    if (strcmp(x->scope_type, "system") == 0)
        x->scope_id[0] = 0;
    else if (scope_is_system(x->scope_type)) { /* the tenant or the cluster: the system */
        snprintf(x->scope_named, sizeof(x->scope_named), "%s", x->scope_type);
        snprintf(x->scope_id, sizeof(x->scope_id), "%s",
                 strcmp(x->scope_type, "cluster") == 0 ? API_CLUSTER_ID : "1");
        snprintf(x->scope_type, sizeof(x->scope_type), "system");
    } else if (x->role_id == API_ROLE_SYSTEM_ADMIN) {
        api_error(r, 400, "Bad request", "System administrator is granted on the system only");
        return -1;
    }
    if (!may_manage(r, x, dept)) {
        api_error(r, 403, "Forbidden", "this needs the IAM right on the rule's scope");
        return -1;
    }
    if (!may_grant(r, x, dept)) {
        api_error(r, 403, "Forbidden",
                  "a role can be granted only by a caller who holds all its rights on the rule's "
                  "scope");
        return -1;
    }
    return 0;
}

void api_h_rules_create(struct api_req *r)
{
    struct db_rule x;
    char name[DB_NAME_LEN];
    json_t *o = api_body_object(r);
    int rc;

    if (!o)
        return;
    if (rule_checked(r, o, &x, name) == 0) {
        rc = db_rule_insert(r->app->db, &x);
        api_pcache_invalidate(r->app->pc);
        if (rc != DB_OK)
            api_db_error(r, rc, "cannot create");
        else
            api_reply(r, 201, rule_json(&x, name, 1));
    }
    json_decref(o);
}

/* ---- batches of access rules: all or nothing ---- */

#define BATCH_MAX 1000 /* rules one batch may create or delete */

/* A batch's list field: a non-empty array of objects, each with only the
 * keys of `allowed`; its size, or -1 replied 400. */
static int batch_list(struct api_req *r, json_t *o, const char *key,
                      const char *const *allowed)
{
    json_t *a = json_object_get(o, key), *it;
    char where[48];
    size_t i;

    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > BATCH_MAX) {
        snprintf(where, sizeof(where), "payload.%s: an array of 1 to %d objects", key,
                 BATCH_MAX);
        api_error(r, 400, "Bad request", where);
        return -1;
    }
    snprintf(where, sizeof(where), "payload.%s[]", key);
    json_array_foreach(a, i, it) {
        if (!json_is_object(it)) {
            api_error(r, 400, "Bad request", where);
            return -1;
        }
        if (api_json_allow(r, it, allowed, where) != 0)
            return -1;
    }
    return (int)json_array_size(a);
}

/* The single rule's body for subject i and scope j of a batch's payload. */
static json_t *batch_rule_body(json_t *p, size_t i, size_t j)
{
    json_t *su = json_array_get(json_object_get(p, "subjects"), i);
    json_t *sc = json_array_get(json_object_get(p, "scopes"), j);
    json_t *o = json_object();
    const char *const keys[] = {"subjectId", "subjectType", "scopeId", "scopeType"};
    size_t k;

    for (k = 0; k < 4; k++) {
        json_t *v = json_object_get(k < 2 ? su : sc, keys[k]);
        if (v)
            json_object_set(o, keys[k], v);
    }
    if (json_object_get(p, "roleId"))
        json_object_set(o, "roleId", json_object_get(p, "roleId"));
    if (json_object_get(p, "clusterId"))
        json_object_set(o, "clusterId", json_object_get(p, "clusterId"));
    return o;
}

/* POST /authorization/access-rules/batch-create: a rule for every subject
 * on every scope; one that may not be created (400, 403) fails the batch
 * and none is created. */
void api_h_rules_batch_create(struct api_req *r)
{
    static const char *const top[] = {"payload", NULL};
    static const char *const fields[] = {"roleId", "clusterId", "subjects", "scopes", NULL};
    static const char *const subject[] = {"subjectId", "subjectType", NULL};
    static const char *const scope[] = {"scopeId", "scopeType", NULL};
    json_t *o = api_body_object(r), *p, *ok = NULL;
    struct db_rule *xs = NULL;
    char (*names)[DB_NAME_LEN] = NULL;
    int n_su, n_sc, i, n = 0, rc;

    if (!o || api_json_allow(r, o, top, NULL) != 0)
        goto out;
    p = json_object_get(o, "payload");
    if (!json_is_object(p) || !json_object_get(p, "roleId")) {
        api_error(r, 400, "Bad request", "payload: an object with roleId, subjects and scopes");
        goto out;
    }
    if (api_json_allow(r, p, fields, "payload") != 0 ||
        (n_su = batch_list(r, p, "subjects", subject)) < 0 ||
        (n_sc = batch_list(r, p, "scopes", scope)) < 0)
        goto out;
    if (n_su * n_sc > BATCH_MAX) {
        api_error(r, 400, "Bad request", "a batch creates at most 1000 rules (subjects x scopes)");
        goto out;
    }
    xs = calloc((size_t)(n_su * n_sc), sizeof(*xs));
    names = calloc((size_t)(n_su * n_sc), sizeof(*names));
    if (!xs || !names) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (n = 0; n < n_su * n_sc; n++) {
        json_t *b = batch_rule_body(p, (size_t)(n / n_sc), (size_t)(n % n_sc));
        rc = b ? rule_checked(r, b, &xs[n], names[n]) : -1;
        json_decref(b);
        if (rc != 0) {
            if (!r->status)
                api_error(r, 500, "Internal error", "out of memory");
            goto out;
        }
    }
    rc = db_rules_insert(r->app->db, xs, n);
    api_pcache_invalidate(r->app->pc);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot create the batch's rules");
        goto out;
    }
    ok = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(ok, rule_json(&xs[i], names[i], 1));
    api_reply(r, 200, json_pack("{s:o, s:[]}", "succeeded", ok, "failed"));
out:
    free(xs);
    free(names);
    json_decref(o);
}

/* A rule's id as a batch names it: its number ("12"), or the number as
 * a UUID's last group ("00000000-0000-0000-0000-000000000012", the form
 * the answer gives, as the document's ids are UUIDs); 0 if neither. */
static int64_t batch_rule_id(const char *s)
{
    static const char zeros[] = "00000000-0000-0000-0000-";
    char *end;
    long long id;

    if (strlen(s) == 36 && strncmp(s, zeros, sizeof(zeros) - 1) == 0)
        s += sizeof(zeros) - 1;
    if (!isdigit((unsigned char)s[0]))
        return 0;
    id = strtoll(s, &end, 10);
    return *end || id <= 0 ? 0 : id;
}

/* A rule's id in the UUID form the batch answers with. */
static json_t *batch_uuid(int64_t id)
{
    char s[DB_ID_LEN];

    snprintf(s, sizeof(s), "00000000-0000-0000-0000-%012lld", (long long)id);
    return json_string(s);
}

/* Why batch entry i cannot be deleted (an entry of `failed`, its id in
 * UUID form when it is one), or NULL. */
static json_t *batch_delete_check(struct api_req *r, json_t *ids, size_t i, int64_t *id)
{
    const char *s = json_string_value(json_array_get(ids, i));
    struct db_rule x;
    char dept[DB_ID_LEN], name[DB_NAME_LEN];
    size_t j;
    int rc;

    *id = s ? batch_rule_id(s) : 0;
    if (!*id)
        return json_pack("{s:s, s:i, s:s}", "id", s ? s : "", "code", 400, "message",
                         "not an access rule's id (its number, or the number as a UUID)");
    for (j = 0; j < i; j++)
        if (batch_rule_id(json_string_value(json_array_get(ids, j))) == *id)
            return json_pack("{s:o, s:i, s:s}", "id", batch_uuid(*id), "code", 400, "message",
                             "the batch names this rule twice");
    rc = db_rule_get(r->app->db, *id, &x);
    if (rc == DB_OK && (scope_info(r, &x, dept, name) != 0 || !may_manage(r, &x, dept)))
        rc = DB_ENOTFOUND;
    if (rc == DB_OK)
        return NULL;
    return json_pack("{s:o, s:i, s:s}", "id", batch_uuid(*id), "code", api_db_status(rc),
                     "message",
                     rc == DB_ENOTFOUND ? "no such access rule" : "the store cannot say");
}

/* POST /authorization/access-rules/batch: action delete deletes every
 * rule named, or none (400 naming the ones that cannot be); validate_delete
 * only says which could be. */
void api_h_rules_batch(struct api_req *r)
{
    static const char *const fields[] = {"ids", "action", NULL};
    char action[24] = "", batch[DB_ID_LEN];
    json_t *o = api_body_object(r), *ids, *ok = NULL, *bad = NULL;
    int64_t *nums = NULL;
    size_t i, n;
    int rc;

    if (!o || api_json_allow(r, o, fields, NULL) != 0 ||
        api_json_str(r, o, "action", action, sizeof(action), 1) != 0)
        goto out;
    ids = json_object_get(o, "ids");
    n = json_array_size(ids);
    if (strcmp(action, "delete") != 0 && strcmp(action, "validate_delete") != 0) {
        api_error(r, 400, "Bad request", "action: delete or validate_delete");
        goto out;
    }
    if (!json_is_array(ids) || n == 0 || n > BATCH_MAX) {
        api_error(r, 400, "Bad request", "ids: an array of 1 to 1000 access rule ids");
        goto out;
    }
    nums = calloc(n, sizeof(*nums));
    ok = json_array();
    bad = json_array();
    if (!nums || !ok || !bad) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        json_t *why = batch_delete_check(r, ids, i, &nums[i]);
        json_array_append_new(why ? bad : ok, why ? why : batch_uuid(nums[i]));
    }
    if (strcmp(action, "delete") == 0 && json_array_size(bad) > 0) {
        char *d = json_dumps(bad, JSON_COMPACT);
        api_error(r, 400, "Bad request", d ? d : "some of the rules cannot be deleted");
        free(d);
        goto out;
    }
    if (strcmp(action, "delete") == 0) {
        rc = db_rules_delete(r->app->db, nums, (int)n);
        api_pcache_invalidate(r->app->pc);
        if (rc != DB_OK) {
            api_db_error(r, rc, "cannot delete the batch's rules");
            goto out;
        }
    }
    db_uuid_new(batch);
    api_reply(r, 200, json_pack("{s:s, s:O, s:O}", "id", batch, "succeeded", ok, "failed", bad));
out:
    free(nums);
    json_decref(ok);
    json_decref(bad);
    json_decref(o);
}

/* ---- permitted scopes ---- */

/* Run:ai's PermittedScopes of the caller for `right` (0: nobody holds it;
 * API_AUTH: everyone, on the whole system): the scopes of its rules whose
 * role holds the right. */
static json_t *permitted_scopes(const struct api_principal *p, unsigned right)
{
    json_t *deps = json_array(), *projs = json_array();
    int i, system = right == API_AUTH;

    right &= ~(unsigned)API_AUTH;
    for (i = 0; right && i < p->n_rules; i++) {
        const struct db_rule *x = &p->rules[i];
        const struct api_role *role = api_role_find(x->role_id);
        if (!role || (role->perms & right) != right)
            continue;
        if (strcmp(x->scope_type, "system") == 0)
            system = 1;
        else
            json_array_append_new(strcmp(x->scope_type, "project") == 0 ? projs : deps,
                                  json_string(x->scope_id));
    }
    if (system)
        return json_pack("{s:b, s:[s], s:[s], s:o, s:o}", "system", 1, "tenants", "1",
                         "clusters", API_CLUSTER_ID, "departments", deps, "projects", projs);
    return json_pack("{s:b, s:[], s:[], s:o, s:o}", "system", 0, "tenants", "clusters",
                     "departments", deps, "projects", projs);
}

/* POST /authorization/permitted-scopes: where the caller may do each
 * action (or the one asked) on a resource type; a type allot has no
 * objects of is permitted nowhere. */
void api_h_permitted_scopes(struct api_req *r)
{
    static const char *const fields[] = {"resourceType", "action", NULL};
    static const char *const actions[] = {"create", "read", "update", "delete", NULL};
    const struct api_permission *perm = NULL;
    char type[64] = "", action[16] = "";
    json_t *o = api_body_object(r), *out;
    int i;

    if (!o || api_json_allow(r, o, fields, NULL) != 0 ||
        api_json_str(r, o, "resourceType", type, sizeof(type), 1) != 0 ||
        (!json_is_null(json_object_get(o, "action")) &&
         api_json_str(r, o, "action", action, sizeof(action), 0) != 0))
        goto done;
    if (action[0] && !in_list(action, actions)) {
        api_error(r, 400, "Bad request", "action: create, read, update or delete");
        goto done;
    }
    for (i = 0; i < api_n_permissions && !perm; i++)
        if (strcmp(api_permissions[i].resource_type, type) == 0)
            perm = &api_permissions[i];
    out = json_object();
    for (i = 0; i < 4; i++) {
        unsigned right = !perm ? 0 : i == 1 ? perm->read : perm->write;
        if (action[0] && strcmp(action, actions[i]) != 0)
            right = 0;
        json_object_set_new(out, actions[i], permitted_scopes(&r->who, right));
    }
    api_reply(r, 200, out);
done:
    json_decref(o);
}

/* A rule with what listing it needs. */
struct rrow {
    const struct db_rule *x;
    char scope_name[DB_NAME_LEN];
    char role_id[16];
};

static int rrow_get(const void *row, const char *f, struct api_lv *v)
{
    const struct rrow *w = row;
    const struct api_role *role = api_role_find(w->x->role_id);

    if (strcmp(f, "subjectId") == 0)
        v->s = w->x->subject_id;
    else if (strcmp(f, "subjectType") == 0)
        v->s = w->x->subject_type;
    else if (strcmp(f, "scopeId") == 0)
        v->s = w->x->scope_id;
    else if (strcmp(f, "scopeType") == 0)
        v->s = scope_shown(w->x);
    else if (strcmp(f, "scopeName") == 0)
        v->s = w->scope_name;
    else if (strcmp(f, "roleName") == 0)
        v->s = role ? role->name : "";
    else if (strcmp(f, "createdBy") == 0)
        v->s = w->x->created_by;
    else if (strcmp(f, "phase") == 0)
        v->s = "Ready";
    else if (strcmp(f, "roleId") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = w->x->role_id;
    } else if (strcmp(f, "createdAt") == 0 || strcmp(f, "deletedAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = f[0] == 'c' ? (double)w->x->created_at : 0;
    } else
        return -1;
    return 0;
}

static json_t *rrow_json(struct api_req *r, const void *row)
{
    (void)r;
    return rule_json(((const struct rrow *)row)->x, ((const struct rrow *)row)->scope_name, 1);
}

/* The plain parameters of GET /access-rules as filters: subjectType,
 * subjectIdFilter (contains), subjectIds (one of), scopeType, scopeId,
 * roleId, clusterId. 1 keep, 0 drop. */
static int rule_params_keep(struct api_req *r, const struct db_rule *x)
{
    char v[DB_NAME_LEN * 4];

    if (api_query(r, "subjectType", v, sizeof(v)) == 0 && strcmp(v, x->subject_type) != 0)
        return 0;
    if (api_query(r, "subjectIdFilter", v, sizeof(v)) == 0 && !strstr(x->subject_id, v))
        return 0;
    if (api_query(r, "subjectIds", v, sizeof(v)) == 0) {
        const char *p = v;
        size_t n = strlen(x->subject_id);
        int found = 0;
        while (*p && !found) {
            size_t k = strcspn(p, ",");
            found = k == n && strncmp(p, x->subject_id, n) == 0;
            p += k + (p[k] == ',');
        }
        if (!found)
            return 0;
    }
    if (api_query(r, "scopeType", v, sizeof(v)) == 0 && strcmp(v, scope_shown(x)) != 0)
        return 0;
    if (api_query(r, "scopeId", v, sizeof(v)) == 0 && strcmp(v, x->scope_id) != 0)
        return 0;
    if (api_query(r, "roleId", v, sizeof(v)) == 0 && atoi(v) != x->role_id)
        return 0;
    if (api_query(r, "clusterId", v, sizeof(v)) == 0 && strcmp(v, API_CLUSTER_ID) != 0)
        return 0;
    return 1;
}

/* GET /access-rules (and /count): the rules the caller may manage. */
void api_h_rules_list(struct api_req *r)
{
    struct db_rule *rs = NULL;
    struct rrow *rows = NULL;
    struct api_lq q;
    char dept[DB_ID_LEN], flag[8];
    int n = 0, k = 0, n_kept = 0, i, rc;
    json_t *a;
    int count_only = (r->arg & API_ARG_COUNT) != 0;

    if (api_lq_parse(r, &q) != 0 || api_lq_search(r, &q, "subjectId") != 0)
        return;
    if (api_query(r, "includeDeleted", flag, sizeof(flag)) == 0 && strcmp(flag, "true") &&
        strcmp(flag, "false")) {
        api_error(r, 400, "Bad request", "includeDeleted is true or false");
        return;
    }
    rc = db_rule_list(r->app->db, NULL, &rs, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    rows = calloc((size_t)n + 1, sizeof(*rows));
    if (!rows) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        rows[k].x = &rs[i];
        if (scope_info(r, &rs[i], dept, rows[k].scope_name) == 0 &&
            may_manage(r, &rs[i], dept) && (count_only || rule_params_keep(r, &rs[i])))
            k++;
    }
    a = api_lq_page(r, &q, &(struct api_lq_rows){rows, k, sizeof(*rows), rrow_get, rrow_json},
                    count_only, &n_kept);
    if (a)
        api_reply(r, 200, json_pack("{s:i, s:I, s:o}", "totalRecords", n_kept, "displayRecords",
                                    (json_int_t)json_array_size(a), "accessRules", a));
out:
    free(rows);
    free(rs);
}

/* GET /me/access-rules (and /count): the caller's own rules. */
static void me_rules(struct api_req *r, int count_only)
{
    char dept[DB_ID_LEN], name[DB_NAME_LEN], text[DB_NAME_LEN];
    struct api_lq q;
    json_t *a;
    int i, n = 0, searched;

    if (api_lq_parse(r, &q) != 0)
        return;
    searched = api_query(r, "search", text, sizeof(text)) == 0 && text[0];
    a = json_array();
    for (i = 0; i < r->who.n_rules; i++) {
        const struct db_rule *x = &r->who.rules[i];
        if (scope_info(r, x, dept, name) != 0 || (searched && !strstr(name, text)))
            continue;
        if (!count_only && n >= q.offset && n < q.offset + q.limit)
            json_array_append_new(a, rule_json(x, name, 0));
        n++;
    }
    if (count_only) {
        json_decref(a);
        api_reply(r, 200, json_pack("{s:i}", "count", n));
        return;
    }
    api_reply(r, 200, json_pack("{s:{s:i, s:I, s:o}}", "accessRules", "totalRecords", n,
                                "displayRecords", (json_int_t)json_array_size(a),
                                "accessRules", a));
}

void api_h_me_rules(struct api_req *r)
{
    me_rules(r, 0);
}

void api_h_me_rules_count(struct api_req *r)
{
    me_rules(r, 1);
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
        api_reply(r, 200, rule_json(&x, name, 1));
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
    api_reply_deleted(r, rc, "cannot delete");
}
