/*
 * h_settings.c: the tenant's settings allotd honours, stored in the
 * settings table (db/settings.c) so that they outlive a restart:
 *
 *   - security settings (GET /api/v1/security/settings, GET and PUT
 *     /api/v1/security/settings/{key}): browserSessionTimeout, whose
 *     idleTimeout (minutes) is how long a sign-in lives past its last use
 *     (its refresh token's lifetime, h_token.c); default 1440 (24 h);
 *   - tenant settings (GET and PUT /v1/k8s/setting, GET
 *     /v1/k8s/setting/{settingKey}): the caps on Pending workloads
 *     (--max-pending-per-project, --max-pending-per-user) and the audit
 *     log's retention (--audit-retention-days); a stored value replaces
 *     the flag's, on this server at once, on the other replicas of a
 *     PostgreSQL database at their scheduler's next turn (the change
 *     feed: settings_changed in main.c) and on every server at its start;
 *   - the logo (GET and POST /api/v1/logo): a PNG or SVG of at most
 *     128 KiB, base64, which the dashboard shows in its header.
 *
 * Keys allotd does not honour are not listed, and a request naming one is
 * a 404.
 */
#include "api.h"
#include "base64.h"
#include "db_audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGO_MAX (128 * 1024)   /* decoded bytes */
#define IDLE_DEFAULT_MIN 1440
#define IDLE_MAX_MIN (30 * 1440)

static const char key_idle[] = "security.browserSessionTimeout";
static const char key_logo[] = "logo";

/* Is the caller an administrator of the whole system (the settings'
 * writers)? Replies 403 when not. */
static int system_admin(struct api_req *r)
{
    if (api_can(&r->who, API_IAM | API_NODE_WRITE, "", ""))
        return 1;
    api_error(r, 403, "Forbidden", "this needs the System administrator role");
    return 0;
}

/* ---- security settings ---- */

int api_session_idle_s(struct api_app *app)
{
    char *v = NULL;
    long long min = IDLE_DEFAULT_MIN;

    if (db_setting_get(app->db, key_idle, &v) == DB_OK)
        min = strtoll(v, NULL, 10);
    free(v);
    return (int)(min >= 1 && min <= IDLE_MAX_MIN ? min : IDLE_DEFAULT_MIN) * 60;
}

static json_t *idle_json(struct api_req *r)
{
    return json_pack("{s:i}", "idleTimeout", api_session_idle_s(r->app) / 60);
}

void api_h_security_settings(struct api_req *r)
{
    api_reply(r, 200, json_pack("{s:o}", "browserSessionTimeout", idle_json(r)));
}

static int security_key_ok(struct api_req *r)
{
    char details[160];

    if (strcmp(r->params[0], "browserSessionTimeout") == 0)
        return 1;
    snprintf(details, sizeof(details), "%.64s is not a security setting allotd honours (it has"
             " browserSessionTimeout)", r->params[0]);
    api_error(r, 404, "Not found", details);
    return 0;
}

void api_h_security_setting_get(struct api_req *r)
{
    if (security_key_ok(r))
        api_reply(r, 200, idle_json(r));
}

/* PUT browserSessionTimeout {idleTimeout}: minutes, 1 to 43200, whole;
 * null restores the default. */
void api_h_security_setting_put(struct api_req *r)
{
    static const char *const fields[] = {"idleTimeout", NULL};
    json_t *o, *v;
    char text[24];
    double min;
    int rc;

    if (!system_admin(r) || !security_key_ok(r) || !(o = api_body_object(r)))
        return;
    v = json_object_get(o, "idleTimeout");
    if (api_json_allow(r, o, fields, NULL) != 0)
        goto out;
    if (!v || (!json_is_null(v) && (!json_is_number(v) || (min = json_number_value(v)) < 1 ||
                                    min > IDLE_MAX_MIN || min != (double)(long long)min))) {
        api_error(r, 400, "Bad request", "idleTimeout: whole minutes, 1 to 43200, or null");
        goto out;
    }
    if (json_is_null(v)) {
        rc = db_setting_delete(r->app->db, key_idle);
    } else {
        snprintf(text, sizeof(text), "%lld", (long long)json_number_value(v));
        rc = db_setting_put(r->app->db, key_idle, text);
    }
    if (rc != DB_OK)
        api_db_error(r, rc, "cannot store the setting");
    else
        api_reply(r, 200, json_object());
out:
    json_decref(o);
}

/* ---- tenant settings ---- */

struct tenant_setting {
    const char *key, *label, *description, *category;
    int64_t lo, hi;
    size_t off;               /* its field in struct api_config */
};
static const struct tenant_setting tenant_settings[] = {
    {"workloads.maxPendingPerProject", "Pending workloads per project",
     "How many Pending workloads a project may hold; a submission beyond is refused (0: no cap;"
     " --max-pending-per-project)", "Workloads", 0, 100000000,
     offsetof(struct api_config, max_pending_project)},
    {"workloads.maxPendingPerUser", "Pending workloads per user",
     "How many Pending workloads one principal may have submitted (0: no cap;"
     " --max-pending-per-user)", "Workloads", 0, 100000000,
     offsetof(struct api_config, max_pending_user)},
    {"audit.retentionDays", "Audit log retention (days)",
     "Audit log rows older than this are deleted (0: kept; --audit-retention-days)", "Security",
     0, 36500, offsetof(struct api_config, audit_retention_days)},
};
#define N_TENANT ((int)(sizeof(tenant_settings) / sizeof(tenant_settings[0])))

static int *tenant_field(struct api_app *app, const struct tenant_setting *t)
{
    return (int *)((char *)&app->cfg + t->off);
}

static const struct tenant_setting *tenant_find(const char *key)
{
    int i;

    for (i = 0; i < N_TENANT; i++)
        if (strcmp(tenant_settings[i].key, key) == 0)
            return &tenant_settings[i];
    return NULL;
}

static void tenant_apply(struct api_app *app, const struct tenant_setting *t, int v)
{
    __atomic_store_n(tenant_field(app, t), v, __ATOMIC_RELAXED);
    if (t->off == offsetof(struct api_config, audit_retention_days))
        api_audit_set_retention(app->audit, v);
}

int api_tenant_settings_load(struct api_app *app)
{
    char name[DB_SETTING_KEY_LEN], *v;
    int i, rc = DB_OK;

    for (i = 0; rc == DB_OK && i < N_TENANT; i++) {
        snprintf(name, sizeof(name), "tenant.%s", tenant_settings[i].key);
        rc = db_setting_get(app->db, name, &v);
        if (rc == DB_OK)
            tenant_apply(app, &tenant_settings[i], (int)strtoll(v, NULL, 10));
        free(v);
        rc = rc == DB_ENOTFOUND ? DB_OK : rc;
    }
    return rc;
}

static json_t *tenant_json(struct api_req *r, const struct tenant_setting *t, int stored)
{
    char v[24];

    snprintf(v, sizeof(v), "%d", __atomic_load_n(tenant_field(r->app, t), __ATOMIC_RELAXED));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s}", "key", t->key, "value", v,
                     "type", "Integer", "label", t->label, "description", t->description,
                     "category", t->category, "source", stored ? "Tenant" : "Default", "active",
                     1, "stage", "GA");
}

void api_h_tenant_settings(struct api_req *r)
{
    char name[DB_SETTING_KEY_LEN], *v;
    json_t *a = json_array();
    int i, rc;

    for (i = 0; i < N_TENANT; i++) {
        snprintf(name, sizeof(name), "tenant.%s", tenant_settings[i].key);
        rc = db_setting_get(r->app->db, name, &v);
        free(v);
        if (rc != DB_OK && rc != DB_ENOTFOUND) {
            json_decref(a);
            api_db_error(r, rc, "cannot read the settings");
            return;
        }
        json_array_append_new(a, tenant_json(r, &tenant_settings[i], rc == DB_OK));
    }
    api_reply(r, 200, a);
}

static const struct tenant_setting *tenant_key(struct api_req *r, const char *key)
{
    const struct tenant_setting *t = tenant_find(key);
    char details[200];

    if (!t) {
        snprintf(details, sizeof(details), "%.64s is not a tenant setting allotd honours"
                 " (GET /v1/k8s/setting lists them)", key);
        api_error(r, 404, "Not found", details);
    }
    return t;
}

/* GET /v1/k8s/setting/{settingKey}: whether it is enabled (not 0). */
void api_h_tenant_setting_get(struct api_req *r)
{
    const struct tenant_setting *t = tenant_key(r, r->params[0]);

    if (t)
        api_reply(r, 200,
                  json_boolean(__atomic_load_n(tenant_field(r->app, t), __ATOMIC_RELAXED) != 0));
}

/* PUT /v1/k8s/setting {key, value}: an integer (or its decimal text) in
 * the setting's range. */
void api_h_tenant_setting_put(struct api_req *r)
{
    static const char *const fields[] = {"key", "value", NULL};
    const struct tenant_setting *t;
    char key[DB_SETTING_KEY_LEN] = "", name[DB_SETTING_KEY_LEN + 8], text[24], *end = NULL;
    long long v = -1;
    json_t *o, *jv;
    int rc;

    if (!system_admin(r) || !(o = api_body_object(r)))
        return;
    if (api_json_allow(r, o, fields, NULL) != 0 ||
        api_json_str(r, o, "key", key, sizeof(key), 1) != 0 || !(t = tenant_key(r, key)))
        goto out;
    jv = json_object_get(o, "value");
    if (json_is_integer(jv))
        v = json_integer_value(jv);
    else if (json_is_string(jv) && json_string_length(jv) > 0)
        v = strtoll(json_string_value(jv), &end, 10);
    if ((!json_is_integer(jv) && (!end || *end)) || v < t->lo || v > t->hi) {
        snprintf(text, sizeof(text), "%lld", (long long)t->hi);
        api_error(r, 400, "Bad request", "value: an integer in the setting's range (see its"
                                         " description)");
        goto out;
    }
    snprintf(name, sizeof(name), "tenant.%s", t->key);
    snprintf(text, sizeof(text), "%lld", v);
    rc = db_setting_put(r->app->db, name, text);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the setting");
        goto out;
    }
    tenant_apply(r->app, t, (int)v);
    api_reply(r, 200, json_pack("{s:s}", "msg", "done"));
out:
    json_decref(o);
}

/* ---- the logo ---- */

/* Decodes standard base64 (padding optional) into out (room for len
 * bytes): the size, or -1 if s is not base64, -2 if it decodes to more
 * than len bytes. */
static long b64_decode(const char *s, unsigned char *out, size_t len)
{
    size_t n = strlen(s);

    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n == 0 || n % 4 == 1 || strlen(s) - n > 2)
        return -1;
    return base64_decode(s, n, BASE64_STD, out, len);
}

/* PNG by its signature, SVG by its root element. */
static int logo_type_ok(const unsigned char *b, long n)
{
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    char head[1025];
    long k = n < 1024 ? n : 1024;

    if (n >= 8 && memcmp(b, png, 8) == 0)
        return 1;
    memcpy(head, b, (size_t)k);
    head[k] = 0;
    return strstr(head, "<svg") != NULL && strlen(head) == (size_t)k;
}

void api_h_logo_get(struct api_req *r)
{
    char *v = NULL;
    int rc = db_setting_get(r->app->db, key_logo, &v);

    if (rc == DB_ENOTFOUND)
        api_reply_text(r, 204, "application/json", "", 0);
    else if (rc != DB_OK)
        api_db_error(r, rc, "cannot read the logo");
    else
        api_reply(r, 200, json_pack("{s:s}", "logo", v));
    free(v);
}

void api_h_logo_post(struct api_req *r)
{
    static const char *const fields[] = {"logo", NULL};
    unsigned char *bytes = NULL;
    json_t *o;
    const char *s;
    long n;
    int rc;

    if (!system_admin(r) || !(o = api_body_object(r)))
        return;
    if (api_json_allow(r, o, fields, NULL) != 0)
        goto out;
    s = json_string_value(json_object_get(o, "logo"));
    bytes = malloc(LOGO_MAX);
    if (!s || !bytes) {
        api_error(r, s ? 500 : 400, s ? "Internal error" : "Bad request",
                  s ? "out of memory" : "logo: the image as base64 text");
        goto out;
    }
    n = b64_decode(s, bytes, LOGO_MAX);
    if (n == -2)
        api_error(r, 413, "Payload too large", "the logo is at most 128 KiB (decoded)");
    else if (n < 0)
        api_error(r, 400, "Bad request", "logo: not base64 (standard alphabet, no data: prefix)");
    else if (!logo_type_ok(bytes, n))
        api_error(r, 415, "Unsupported media type", "the logo is a PNG or an SVG image");
    if (n < 0 || !logo_type_ok(bytes, n))
        goto out;
    rc = db_setting_put(r->app->db, key_logo, s);
    if (rc != DB_OK)
        api_db_error(r, rc, "cannot store the logo");
    else
        api_reply(r, 200, json_object());
out:
    free(bytes);
    json_decref(o);
}
