/*
 * h_token.c: POST /api/v1/token (JSON, camelCase) and POST /api/v2/token
 * (form-encoded, OAuth2) with the password, client_credentials (also the
 * legacy app_token) and refresh_token grants; and Run:ai's older
 * /v1/k8s/auth/oauth/apptoken, an application's (a service account's)
 * {id, name, secret} for its tokens.
 *
 * Invariants:
 *   1. A wrong login and a wrong secret take the same path (a hash check
 *      runs either way) and give the same answer; so does the wait a name
 *      earns by failing (loginguard.c), known or not.
 *   2. v1 errors are the {code, message, details} envelope with 400; v2
 *      errors are RFC 6749 bodies (invalid_client is 401).
 *   3. The answer never echoes the secret; the server never logs it.
 *   4. A refresh token is spent by its grant: the answer carries the next
 *      one of its family, and a spent one presented again revokes the
 *      family (db/refresh.c) and its access tokens with it (each names
 *      its family; http.c refuses one whose family is gone), while the
 *      user's other sign-ins keep working. A sign-in starts a family.
 *   5. idToken/id_token is its own token (typ "id", aud "allot-id"), not
 *      the access token: a bearer check refuses it (auth.c).
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct grant {
    char type[32];
    char login[DB_NAME_LEN];
    char secret[256];
    char refresh[API_TOKEN_MAX + 1];
    char family[DB_ID_LEN];       /* a refresh grant's family, rotated; "": a sign-in */
    int64_t gen;
    const char *client;           /* the client's address (loginguard.c keys on it) */
};

/* A refresh token's lifetime, and its family's past its last use: the
 * security setting browserSessionTimeout (h_settings.c; 24 h unless set). */

enum grant_error { G_OK = 0, G_UNSUPPORTED, G_INVALID_REQUEST, G_BAD_USER, G_BAD_CLIENT,
                   G_BAD_REFRESH, G_INTERNAL, G_WAIT, G_BUSY };

static int secret_matches(struct api_app *app, const struct grant *g, int kind, struct db_user *u)
{
    int rc = db_user_by_login(app->db, g->login, u);

    if (rc != DB_OK && rc != DB_ENOTFOUND)
        return G_INTERNAL;
    if (rc == DB_ENOTFOUND || u->kind != kind) {
        /* an unknown name costs a check too, so both failures take as long */
        api_secret_check_none(g->secret, app->cfg.secret_hash_cost);
        return kind == DB_USER ? G_BAD_USER : G_BAD_CLIENT;
    }
    if (!api_secret_check(g->secret, u->secret_hash) || !u->enabled)
        return kind == DB_USER ? G_BAD_USER : G_BAD_CLIENT;
    return G_OK;
}

/* The secret check behind loginguard.c: a name that must wait is refused
 * before any hash runs (G_WAIT), and so is a grant that finds every
 * secret-check slot taken (G_BUSY); *retry_s says when to come back. */
static int check_secret(struct api_app *app, const struct grant *g, int kind, struct db_user *u,
                        int *retry_s)
{
    int rc;

    *retry_s = api_loginguard_wait_s(app->lg, g->login, g->client, api_now_ms());
    if (*retry_s > 0)
        return G_WAIT;
    if (api_loginguard_hash_begin(app->lg) != 0) {
        *retry_s = 1;
        return G_BUSY;
    }
    rc = secret_matches(app, g, kind, u);
    api_loginguard_hash_end(app->lg);
    if (rc == G_OK || rc == G_BAD_USER || rc == G_BAD_CLIENT)
        api_loginguard_result(app->lg, g->login, g->client, rc == G_OK, api_now_ms());
    return rc;
}

/* A refresh token is good once: its family moves to the next generation
 * (db_refresh_rotate), whose token issue() hands out. One presented
 * again revokes its family (refresh.c), so a stolen copy and the
 * original both stop working. */
static int check_refresh(struct api_app *app, struct grant *g, struct db_user *u)
{
    struct api_token_info info;
    int64_t now = api_now_ms();

    if (api_token_check(&app->key, g->refresh, API_TOKEN_REFRESH, now / 1000, &info) != 0)
        return G_BAD_REFRESH;
    if (db_user_get(app->db, info.user_id, u) != DB_OK || u->token_version != info.token_version ||
        !u->enabled)
        return G_BAD_REFRESH;
    switch (db_refresh_rotate(app->db, info.family, info.user_id, info.gen,
                              now + api_session_idle_s(app) * 1000LL, now)) {
    case DB_OK:
        snprintf(g->family, sizeof(g->family), "%s", info.family);
        g->gen = info.gen + 1;
        return G_OK;
    case DB_ECONFLICT: /* reuse: the family's access tokens go with it (invariant 4) */
        api_pcache_invalidate(app->pc);
        return G_BAD_REFRESH;
    case DB_ENOTFOUND:
        return G_BAD_REFRESH;
    default:
        return G_INTERNAL;
    }
}

static int run_grant(struct api_app *app, struct grant *g, struct db_user *u, int *retry_s)
{
    *retry_s = 0;
    if (strcmp(g->type, "password") == 0)
        return g->login[0] ? check_secret(app, g, DB_USER, u, retry_s) : G_INVALID_REQUEST;
    if (strcmp(g->type, "client_credentials") == 0 || strcmp(g->type, "app_token") == 0)
        return g->login[0] ? check_secret(app, g, DB_SERVICE_ACCOUNT, u, retry_s)
                           : G_INVALID_REQUEST;
    if (strcmp(g->type, "refresh_token") == 0)
        return g->refresh[0] ? check_refresh(app, g, u) : G_INVALID_REQUEST;
    return G_UNSUPPORTED;
}

/* Issues the token pair; a sign-in starts a refresh family, a refresh
 * gets its family's next generation. 0 ok. */
static int issue(struct api_app *app, struct grant *g, const struct db_user *u, char **access,
                 char **refresh, char **id)
{
    int64_t now_ms = api_now_ms(), now = now_ms / 1000;
    int idle_s = api_session_idle_s(app);

    *access = *refresh = *id = NULL;
    if (!g->family[0]) {
        if (db_refresh_start(app->db, u->id, now_ms + idle_s * 1000LL, now_ms,
                             g->family) != DB_OK)
            return -1;
        g->gen = 1;
    }
    if (api_token_issue_access(&app->key, u, app->cfg.token_ttl_s, now, g->family, access) ||
        api_token_issue(&app->key, u, API_TOKEN_ID, app->cfg.token_ttl_s, now, id) ||
        api_token_issue_refresh(&app->key, u, idle_s, now, g->family, g->gen, refresh)) {
        free(*access);
        free(*refresh);
        free(*id);
        *access = *refresh = *id = NULL;
        return -1;
    }
    db_user_touch_login(app->db, u->id, api_now_ms());
    return 0;
}

/* Who the audit log says asked: the login the grant names (a refresh
 * grant names none). */
static void audit_subject(struct api_req *r, const struct grant *g)
{
    if (api_valid_text(g->login, API_TEXT_LOGIN))
        snprintf(r->subject, sizeof(r->subject), "%s", g->login);
}

static const char *grant_message(int g)
{
    switch (g) {
    case G_UNSUPPORTED: return "unsupported grant type";
    case G_INVALID_REQUEST: return "the grant lacks a required field";
    case G_BAD_USER: return "invalid username or password";
    case G_BAD_CLIENT: return "invalid client id or secret";
    case G_BAD_REFRESH: return "invalid or expired refresh token";
    case G_WAIT: return "too many failed sign-ins for this name from this client, or on this"
                        " server: retry later";
    case G_BUSY: return "too many sign-ins at once: retry later";
    default: return "internal error";
    }
}

/* ---- v1 ---- */

static const char *const v1_fields[] = {
    "grantType", "appID", "appId", "AppId", "appSecret", "AppSecret", "clientID", "clientId",
    "clientSecret", "username", "password", "refreshToken", "code", "redirectUri",
    "externalToken", NULL,
};

static int v1_parse(struct api_req *r, json_t *o, struct grant *g)
{
    static const char *const ids[] = {"clientID", "clientId", "appID", "appId", "AppId", NULL};
    static const char *const secrets[] = {"clientSecret", "appSecret", "AppSecret", NULL};
    int i;

    if (api_json_allow(r, o, v1_fields, NULL) || api_json_str(r, o, "grantType", g->type,
                                                              sizeof(g->type), 1))
        return -1;
    if (api_json_str(r, o, "username", g->login, sizeof(g->login), 0) ||
        api_json_str(r, o, "password", g->secret, sizeof(g->secret), 0) ||
        api_json_str(r, o, "refreshToken", g->refresh, sizeof(g->refresh), 0))
        return -1;
    for (i = 0; ids[i]; i++)
        if (api_json_str(r, o, ids[i], g->login, sizeof(g->login), 0))
            return -1;
    for (i = 0; secrets[i]; i++)
        if (api_json_str(r, o, secrets[i], g->secret, sizeof(g->secret), 0))
            return -1;
    return 0;
}

/* A JSON grant (v1's, or the apptoken form's, read by parse) run and
 * answered: app_form answers {access_token, id_token}, else v1's fields.
 * Errors are the {code, message, details} envelope. */
typedef int (*json_grant_parse)(struct api_req *r, json_t *o, struct grant *g);

static void json_grant(struct api_req *r, json_grant_parse parse, int app_form)
{
    struct grant *g = calloc(1, sizeof(*g));
    struct db_user u;
    json_t *o = NULL;
    char *access = NULL, *refresh = NULL, *id = NULL;
    int rc, retry_s;

    if (!g) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    g->client = r->remote;
    o = api_body_object(r);
    if (!o || parse(r, o, g) != 0)
        goto out;
    audit_subject(r, g);
    rc = run_grant(r->app, g, &u, &retry_s);
    if (rc == G_WAIT || rc == G_BUSY) {
        api_error_retry(r, rc == G_WAIT ? 429 : 503, rc == G_WAIT ? "Too many requests"
                                                                  : "Service unavailable",
                        grant_message(rc), retry_s);
        goto out;
    }
    if (rc != G_OK) {
        api_error(r, rc == G_INTERNAL ? 500 : 400, "Bad request", grant_message(rc));
        goto out;
    }
    if (issue(r->app, g, &u, &access, &refresh, &id) != 0) {
        api_error(r, 500, "Internal error", "cannot issue a token");
        goto out;
    }
    if (app_form)
        api_reply(r, 200, json_pack("{s:s, s:s}", "access_token", access, "id_token", id));
    else
        api_reply(r, 200, json_pack("{s:s, s:s, s:s, s:i}", "accessToken", access, "idToken", id,
                                    "refreshToken", refresh, "expiresIn",
                                    r->app->cfg.token_ttl_s));
out:
    free(access);
    free(refresh);
    free(id);
    json_decref(o);
    memset(g, 0, sizeof(*g));
    free(g);
}

void api_h_token_v1(struct api_req *r)
{
    json_grant(r, v1_parse, 0);
}

/* ---- v2 ---- */

/* An RFC 6749 error body; retry_s > 0 adds Retry-After. */
static void oauth_error(struct api_req *r, int status, const char *error, const char *desc,
                        int retry_s)
{
    json_t *o = json_pack("{s:s, s:s}", "error", error, "error_description", desc);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    char extra[64];

    snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", retry_s);
    if (s)
        api_reply_with(r, status, "application/json", s, strlen(s), retry_s > 0 ? extra : NULL);
    else
        api_error(r, 500, "Internal error", "out of memory");
    free(s);
    json_decref(o);
}

static int v2_parse(struct api_req *r, struct grant *g)
{
    const char *b = r->body ? r->body : "";
    const char *ct = r->content_type ? r->content_type : "";

    if (strncmp(ct, "application/x-www-form-urlencoded", 33) != 0)
        return -1;
    if (strlen(b) != r->body_len || api_form_get(b, "grant_type", g->type, sizeof(g->type)))
        return -1;
    api_form_get(b, "username", g->login, sizeof(g->login));
    api_form_get(b, "client_id", g->login, sizeof(g->login));
    api_form_get(b, "password", g->secret, sizeof(g->secret));
    api_form_get(b, "client_secret", g->secret, sizeof(g->secret));
    api_form_get(b, "refresh_token", g->refresh, sizeof(g->refresh));
    return 0;
}

void api_h_token_v2(struct api_req *r)
{
    struct grant *g = calloc(1, sizeof(*g));
    struct db_user u;
    char *access = NULL, *refresh = NULL, *id = NULL;
    int rc, retry_s;

    if (!g) {
        oauth_error(r, 500, "server_error", "out of memory", 0);
        return;
    }
    g->client = r->remote;
    if (v2_parse(r, g) != 0) {
        oauth_error(r, 400, "invalid_request", "a form-encoded body with grant_type is required",
                    0);
        goto out;
    }
    audit_subject(r, g);
    rc = run_grant(r->app, g, &u, &retry_s);
    if (rc != G_OK) {
        static const char *const codes[] = {"", "unsupported_grant_type", "invalid_request",
                                            "invalid_grant", "invalid_client", "invalid_grant",
                                            "server_error", "temporarily_unavailable",
                                            "temporarily_unavailable"};
        static const int statuses[] = {200, 400, 400, 400, 401, 400, 500, 429, 503};
        oauth_error(r, statuses[rc], codes[rc], grant_message(rc), retry_s);
        goto out;
    }
    if (issue(r->app, g, &u, &access, &refresh, &id) != 0) {
        oauth_error(r, 500, "server_error", "cannot issue a token", 0);
        goto out;
    }
    api_reply(r, 200, json_pack("{s:s, s:s, s:i, s:s, s:s}", "access_token", access,
                                "token_type", "Bearer", "expires_in", r->app->cfg.token_ttl_s,
                                "refresh_token", refresh, "id_token", id));
out:
    free(access);
    free(refresh);
    free(id);
    memset(g, 0, sizeof(*g));
    free(g);
}

/* ---- /v1/k8s/auth/oauth/apptoken ---- */

/* The grant of {id, name, secret}: the service account of that id and
 * name signs in by its client id; any other pair takes the path of an
 * unknown login (invariant 1: the same answer, the same cost). */
static int app_parse(struct api_req *r, json_t *o, struct grant *g)
{
    static const char *const fields[] = {"id", "name", "secret", NULL};
    char id[24], name[DB_NAME_LEN];
    struct db_user u;
    char *end;
    long long n;

    if (api_json_allow(r, o, fields, NULL) || api_json_str(r, o, "id", id, sizeof(id), 1) ||
        api_json_str(r, o, "name", name, sizeof(name), 1) ||
        api_json_str(r, o, "secret", g->secret, sizeof(g->secret), 1))
        return -1;
    snprintf(g->type, sizeof(g->type), "client_credentials");
    snprintf(g->login, sizeof(g->login), "\001"); /* no login has a control character */
    n = strtoll(id, &end, 10);
    if (!*end && n > 0 && db_user_get(r->app->db, n, &u) == DB_OK &&
        u.kind == DB_SERVICE_ACCOUNT && strcmp(u.name, name) == 0)
        snprintf(g->login, sizeof(g->login), "%s", u.login);
    return 0;
}

void api_h_app_token(struct api_req *r)
{
    json_grant(r, app_parse, 1);
}
