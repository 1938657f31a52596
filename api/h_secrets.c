/*
 * h_secrets.c: /api/v1/asset/credentials/generic-secret, Run:ai's
 * generic-secret credential assets: named sets of key-value pairs in a
 * scope (a project, a department, the tenant), whose values pods receive
 * as environment variables ({"secret": {"name", "key"}} in a workload's
 * environmentVariables, or {"userCredential": {"name", "key"}} for one the
 * submitter created). Rights: secrets.h.
 *
 * Invariants:
 *   1. A value is sealed (secretbox.c) before it reaches the store and is
 *      opened only for an agent's heartbeat reply (h_agent.c); no answer
 *      here carries one: a secret is answered with its keys only.
 *   2. A secret the caller may not read answers 404, as if absent.
 *   3. Nothing here logs a request body.
 */
#include "secrets.h"
#include "assets.h"
#include "scope.h"
#include "secretbox.h"
#include "db_secrets.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 100
#define KEY_MAX 253

static struct api_secretbox box;

int api_secrets_start(struct db *db, const char *path, int create)
{
    int64_t n = 0;
    int rc = api_secretbox_load(path, &box);

    if (rc <= 0)
        return rc;
    if (!create) {
        if (db_secret_count(db, &n) != DB_OK) {
            fprintf(stderr, "allotd: cannot count the stored secrets\n");
            return -1;
        }
        if (n > 0) {
            fprintf(stderr,
                    "allotd: the database holds %lld secret%s but the secrets key %s is"
                    " missing; restore it (or name it with --secrets-key-file)\n",
                    (long long)n, n == 1 ? "" : "s", path);
            return -1;
        }
    }
    if (api_secretbox_create(path) != 0)
        return -1;
    if (!create)
        fprintf(stderr, "allotd: created the secrets key %s\n", path);
    return api_secretbox_load(path, &box) == 0 ? 0 : -1;
}

int api_secrets_ready(void)
{
    return box.loaded;
}

char *api_secrets_seal(const char *id, const char *key, const char *value, size_t len)
{
    return box.loaded ? api_secretbox_seal(&box, id, key, value, len) : NULL;
}

int api_secrets_open(const char *id, const char *key, const char *sealed, char **value)
{
    *value = NULL;
    return box.loaded && sealed ? api_secretbox_open(&box, id, key, sealed, value) : -1;
}

/* ---- scopes and rights ---- */

static int may(struct api_req *r, const struct db_secret *s, unsigned perm)
{
    return api_scope_may(r, s->scope, s->scope_id, perm);
}

/* ---- answers ---- */

static json_t *secret_json(struct api_req *r, const struct db_secret *s)
{
    json_t *entries = json_loads(s->entries, 0, NULL), *pairs = json_array(), *meta;
    const char *k;
    json_t *v;

    json_object_foreach(entries, k, v)
        json_array_append_new(pairs, json_pack("{s:s}", "key", k));
    json_decref(entries);
    meta = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:I}", "name", s->name, "scope",
                     s->scope, "id", s->id, "kind", "genericSecret", "createdAt",
                     api_time(s->created_at), "createdBy", s->created_by[0] ? s->created_by : "-",
                     "updatedAt", api_time(s->updated_at), "updateCount",
                     (json_int_t)s->update_count);
    json_object_set_new(meta, "updatedBy",
                        json_string(s->updated_by[0] ? s->updated_by : "-"));
    json_object_set_new(meta, "description",
                        s->description[0] ? json_string(s->description) : json_null());
    api_scope_meta(r, meta, s->scope, s->scope_id);
    return json_pack("{s:o, s:{s:o, s:i}}", "meta", meta, "spec", "keyValuePairs", pairs,
                     "keyId", 1);
}

/* ---- list ---- */

static int info_in(struct api_req *r, int usage_default, int *usage, int *status);
static int info_add(struct api_req *r, const struct db_secret *s, int usage, int status,
                    json_t *e);

/* The secrets the caller may read that the query's filters pass, appended
 * to entries (wrapped: each entry's spec under genericSecret). */
static int list_into(struct api_req *r, json_t *entries, int wrapped)
{
    struct api_scope_filter f;
    struct db_secret *rows = NULL;
    json_t *e;
    int n = 0, i, rc, usage, status;

    if (api_scope_filter_in(r, &f) != 0 || info_in(r, 0, &usage, &status) != 0)
        return -1;
    rc = db_secret_list(r->app->db, &rows, &n);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot list the secrets"), -1;
    for (i = 0, rc = 0; i < n && rc == 0; i++) {
        if (!api_scope_filter_pass(&f, rows[i].name, rows[i].scope, rows[i].scope_id) ||
            !may(r, &rows[i], API_WL_WRITE))
            continue;
        e = secret_json(r, &rows[i]);
        rc = info_add(r, &rows[i], usage, status, e);
        if (wrapped)
            json_object_set_new(e, "spec", json_pack("{s:O}", "genericSecret",
                                                     json_object_get(e, "spec")));
        json_array_append_new(entries, e);
    }
    db_secrets_free(rows, n);
    return rc;
}

int api_secrets_list_into(struct api_req *r, json_t *entries)
{
    return list_into(r, entries, 1);
}

void api_h_secrets_list(struct api_req *r)
{
    json_t *entries = json_array();

    if (list_into(r, entries, 0) == 0)
        api_reply(r, 200, json_pack("{s:O}", "entries", entries));
    json_decref(entries);
}

/* ---- create ---- */

static int valid_key(const char *k)
{
    size_t i, n = strlen(k);

    if (n == 0 || n > KEY_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)k[i]) && !strchr("-._", k[i]))
            return 0;
    return 1;
}

static int refuse(struct api_req *r, const char *details)
{
    api_error(r, 400, "Bad request", details);
    return -1;
}

/* A field that must be absent, null or false: allot does not act on it. */
static int unsupported(struct api_req *r, json_t *o, const char *key, const char *details)
{
    json_t *v = json_object_get(o, key);

    return v && !json_is_null(v) && !json_is_false(v) ? refuse(r, details) : 0;
}

/* spec.keyValuePairs into s->entries, each value sealed. */
static int pairs_in(struct api_req *r, json_t *spec, struct db_secret *s)
{
    static const char *const spec_keys[] = {"keyValuePairs", "existingSecretName", NULL};
    static const char *const pair_keys[] = {"key", "value", NULL};
    json_t *pairs, *e, *out;
    char where[64];
    size_t i;

    if (!json_is_object(spec))
        return refuse(r, "spec: an object {keyValuePairs}");
    if (api_json_allow(r, spec, spec_keys, "spec") ||
        unsupported(r, spec, "existingSecretName",
                    "spec.existingSecretName is not supported: give keyValuePairs"))
        return -1;
    pairs = json_object_get(spec, "keyValuePairs");
    if (!json_is_array(pairs) || json_array_size(pairs) == 0 ||
        json_array_size(pairs) > MAX_PAIRS)
        return refuse(r, "spec.keyValuePairs: an array of 1 to 100 {key, value}");
    out = json_object();
    json_array_foreach(pairs, i, e) {
        json_t *k = json_object_get(e, "key"), *v = json_object_get(e, "value");
        char *sealed;
        snprintf(where, sizeof(where), "spec.keyValuePairs[%zu]", i);
        if (!json_is_object(e) || api_json_allow(r, e, pair_keys, where)) {
            if (!json_is_object(e))
                refuse(r, "spec.keyValuePairs: each entry an object {key, value}");
            json_decref(out);
            return -1;
        }
        if (!json_is_string(k) || !valid_key(json_string_value(k)) ||
            json_object_get(out, json_string_value(k))) {
            json_decref(out);
            snprintf(where, sizeof(where), "spec.keyValuePairs[%zu].key", i);
            api_error(r, 400, "Bad request", where);
            return -1;
        }
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
            json_string_length(v) > API_SECRET_VALUE_MAX) {
            json_decref(out);
            snprintf(where, sizeof(where), "spec.keyValuePairs[%zu].value", i);
            api_error(r, 400, "Bad request", where);
            return -1;
        }
        sealed = api_secretbox_seal(&box, s->id, json_string_value(k), json_string_value(v),
                                    json_string_length(v));
        if (!sealed) {
            json_decref(out);
            api_error(r, 500, "Internal error", "cannot seal the values");
            return -1;
        }
        json_object_set_new(out, json_string_value(k), json_string(sealed));
        free(sealed);
    }
    s->entries = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(out);
    if (!s->entries)
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    return 0;
}

/* meta's scope into s, with the right to manage it checked. */
static int scope_in(struct api_req *r, json_t *meta, struct db_secret *s)
{
    struct api_scope sc;

    if (api_scope_in(r, meta, &sc, "secret") != 0)
        return -1;
    snprintf(s->scope, sizeof(s->scope), "%s", sc.scope);
    snprintf(s->scope_id, sizeof(s->scope_id), "%s", sc.scope_id);
    return 0;
}

static int meta_in(struct api_req *r, json_t *meta, struct db_secret *s)
{
    static const char *const meta_keys[] = {"name", "description", "scope", "clusterId",
                                            "departmentId", "projectId", "autoDelete",
                                            "workloadSupportedTypes", "private", NULL};
    char cid[64] = "";

    if (!json_is_object(meta))
        return refuse(r, "meta: an object {name, scope}");
    if (api_json_allow(r, meta, meta_keys, "meta") ||
        api_json_str(r, meta, "name", s->name, sizeof(s->name), 1) ||
        api_json_text(r, meta, "description", s->description, sizeof(s->description), 0,
                      API_TEXT_FREE) ||
        api_json_str(r, meta, "clusterId", cid, sizeof(cid), 0) ||
        unsupported(r, meta, "autoDelete", "meta.autoDelete is not supported") ||
        unsupported(r, meta, "private", "meta.private is not supported: a secret belongs to its"
                                        " scope") ||
        unsupported(r, meta, "workloadSupportedTypes",
                    "meta.workloadSupportedTypes is not supported: a secret serves every"
                    " workload type"))
        return -1;
    if (!api_valid_name(s->name))
        return refuse(r, "meta.name: lowercase letters, digits and '-', at most 63");
    if (cid[0] && strcmp(cid, API_CLUSTER_ID) != 0)
        return refuse(r, "meta.clusterId names no cluster");
    return scope_in(r, meta, s);
}

void api_h_secrets_create(struct api_req *r)
{
    static const char *const top_keys[] = {"meta", "spec", NULL};
    struct db_secret s;
    json_t *o = api_body_object(r);
    int rc;

    memset(&s, 0, sizeof(s));
    if (!o)
        return;
    if (!box.loaded) {
        json_decref(o);
        api_error(r, 503, "Service unavailable", "allotd has no secrets key");
        return;
    }
    if (api_json_allow(r, o, top_keys, "") || api_secretbox_uuid(s.id) != 0 ||
        meta_in(r, json_object_get(o, "meta"), &s) ||
        pairs_in(r, json_object_get(o, "spec"), &s)) {
        if (r->status == 0)
            api_error(r, 500, "Internal error", "cannot make an id");
        json_decref(o);
        db_secret_clear(&s);
        return;
    }
    json_decref(o);
    snprintf(s.created_by, sizeof(s.created_by), "%s", r->who.user.name);
    rc = db_secret_insert(r->app->db, &s);
    if (rc == DB_OK)
        api_reply(r, 202, secret_json(r, &s));
    else if (rc == DB_ECONFLICT)
        api_error(r, 409, "Conflict", "a secret of that name exists in that scope");
    else
        api_db_error(r, rc, "cannot store the secret");
    db_secret_clear(&s);
}

/* ---- one ---- */

/* The secret of the path's id that the caller may read; 0, or -1
 * answered (404 for one it may not read). */
static int secret_in(struct api_req *r, struct db_secret *s)
{
    int rc = db_secret_get(r->app->db, r->params[0], s);

    if (api_scope_found(r, rc, rc == DB_OK && may(r, s, API_WL_WRITE), "secret") == 0)
        return 0;
    db_secret_clear(s);
    return -1;
}

/* One secret, with what the query asks (usageInfo's default true, as an
 * asset's GET). */
void api_h_secret_get(struct api_req *r)
{
    struct db_secret s;
    int usage, status;
    json_t *o;

    if (secret_in(r, &s) != 0)
        return;
    if (info_in(r, 1, &usage, &status) == 0) {
        o = secret_json(r, &s);
        if (info_add(r, &s, usage, status, o) == 0)
            api_reply(r, 200, o);
        else
            json_decref(o);
    }
    db_secret_clear(&s);
}

void api_h_secret_update(struct api_req *r)
{
    static const char *const top_keys[] = {"meta", NULL};
    static const char *const meta_keys[] = {"description", NULL};
    char desc[DB_SECRET_DESC_LEN] = "";
    struct db_secret s;
    json_t *o, *meta;
    int rc;

    if (secret_in(r, &s) != 0)
        return;
    if (!may(r, &s, API_ORG_WRITE)) {
        db_secret_clear(&s);
        api_error(r, 403, "Forbidden", "the caller may not change this secret");
        return;
    }
    o = api_body_object(r);
    meta = json_object_get(o, "meta");
    if (!o || api_json_allow(r, o, top_keys, "") ||
        (meta && !json_is_null(meta) &&
         (!json_is_object(meta) ? refuse(r, "meta: an object {description}")
                                : api_json_allow(r, meta, meta_keys, "meta") ||
                                      api_json_text(r, meta, "description", desc, sizeof(desc),
                                                    0, API_TEXT_FREE)))) {
        json_decref(o);
        db_secret_clear(&s);
        return;
    }
    json_decref(o);
    rc = db_secret_update(r->app->db, s.id, desc, r->who.user.name);
    db_secret_clear(&s);
    if (rc == DB_OK)
        rc = db_secret_get(r->app->db, r->params[0], &s);
    if (rc == DB_OK)
        api_reply(r, 202, secret_json(r, &s));
    else if (rc == DB_ENOTFOUND)
        api_error(r, 404, "Not found", "no such secret");
    else
        api_db_error(r, rc, "cannot change the secret");
    db_secret_clear(&s);
}

/* Does a workload of project take an environment variable from the
 * secret named name whose id is id (the one its project resolves that
 * name to)? */
static int wl_uses(struct db *db, const struct db_workload *w, const char *id, const char *name)
{
    json_t *spec = w->spec ? json_loads(w->spec, 0, NULL) : NULL, *e;
    struct db_secret s;
    size_t i;
    int uses = 0;

    json_array_foreach(json_object_get(spec, "environmentVariables"), i, e) {
        json_t *n = json_object_get(json_object_get(e, "secret"), "name");
        if (!n)
            n = json_object_get(json_object_get(e, "userCredential"), "name");
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0) {
            memset(&s, 0, sizeof(s));
            if (db_secret_resolve(db, w->project_name, name, &s) == DB_OK)
                uses = strcmp(s.id, id) == 0;
            db_secret_clear(&s);
            break;
        }
    }
    json_decref(spec);
    return uses;
}

/* ---- what an answer adds on request ---- */

/* usageInfo (default usage_default) and statusInfo: 0, or -1 answered. */
static int info_in(struct api_req *r, int usage_default, int *usage, int *status)
{
    *usage = usage_default;
    *status = 0;
    return api_query_bool(r, "usageInfo", usage) || api_query_bool(r, "statusInfo", status)
               ? -1 : 0;
}

/* What info_add() gathers. */
struct usage {
    const struct db_secret *s;
    json_t *by;
};

static void note_usage(struct api_req *r, const struct db_workload *w, void *arg)
{
    struct usage *u = arg;

    if (wl_uses(r->app->db, w, u->s->id, u->s->name))
        api_usage_add(u->by, w->id, w->name, w->phase, w->type);
}

/* Adds to e what is asked: usedBy (the workloads not deleted that take a
 * value from the secret) and status (its values open). 0, or -1 answered. */
static int info_add(struct api_req *r, const struct db_secret *s, int usage, int status,
                    json_t *e)
{
    struct usage u = {s, NULL};
    int rc;

    if (usage) {
        u.by = api_usage_new();
        if ((rc = api_workloads_visit(r, 0, note_usage, &u)) != DB_OK) {
            json_decref(u.by);
            return api_db_error(r, rc, "cannot read the workloads"), -1;
        }
        json_object_set_new(e, "usedBy", u.by);
    }
    if (status)
        json_object_set_new(e, "status", api_sealed_status(s->id, s->entries, NULL));
    return 0;
}

/* What secret_users() gathers. */
struct users {
    const struct db_secret *s;
    char *out;
    size_t len, used;
    json_t *by;                   /* usedBy */
};

static void note_user(struct api_req *r, const struct db_workload *w, void *arg)
{
    struct users *u = arg;

    if (!wl_uses(r->app->db, w, u->s->id, u->s->name))
        return;
    api_usage_add(u->by, w->id, w->name, w->phase, w->type);
    if (u->used + 1 < u->len)
        u->used += (size_t)snprintf(u->out + u->used, u->len - u->used, "%s%s (project %s)",
                                    u->used ? ", " : "", w->name, w->project_name);
    else
        u->used = u->len;
}

/* The live workloads whose environmentVariables take a value from secret
 * s, as "name (project), ..." in out and as usedBy in by (a new object);
 * 0 if none, 1 if some, the database's error (below 0) if the list cannot
 * be read. */
static int secret_users(struct api_req *r, const struct db_secret *s, char *out, size_t len,
                        json_t *by)
{
    struct users u = {s, out, len, 0, by};
    int rc;

    out[0] = 0;
    if ((rc = api_live_workloads(r, note_user, &u)) != DB_OK)
        return rc;
    if (u.used >= len && len > 4)
        memcpy(out + len - 4, "...", 4);
    return u.used > 0;
}

void api_h_secret_delete(struct api_req *r)
{
    struct db_secret s;
    char users[768], details[1024];
    json_t *by;
    int rc, busy = 0;

    if (secret_in(r, &s) != 0)
        return;
    rc = may(r, &s, API_ORG_WRITE) ? DB_OK : -1;
    by = api_usage_new();
    if (rc == DB_OK && (busy = secret_users(r, &s, users, sizeof(users), by)) == 1) {
        snprintf(details, sizeof(details),
                 "secret %s is used by the environment variables of live workloads: %s; delete"
                 " them or change their environmentVariables first", s.name, users);
        db_secret_clear(&s);
        api_reply(r, 412, json_pack("{s:i, s:s, s:s, s:o}", "code", 412, "message",
                                    "Precondition failed", "details", details, "usedBy", by));
        return;
    }
    json_decref(by);
    if (busy < 0) {
        db_secret_clear(&s);
        api_db_error(r, busy, "cannot read the workloads");
        return;
    }
    if (rc == DB_OK)
        rc = db_secret_delete(r->app->db, s.id);
    db_secret_clear(&s);
    if (rc == -1)
        api_error(r, 403, "Forbidden", "the caller may not delete this secret");
    else if (rc == DB_OK)
        api_reply_text(r, 204, "application/json", "", 0);
    else if (rc == DB_ENOTFOUND)
        api_error(r, 404, "Not found", "no such secret");
    else
        api_db_error(r, rc, "cannot delete the secret");
}

/* ---- what submissions and agents ask ---- */

int api_secret_check_ref(struct api_req *r, const struct api_project *project, const char *field,
                         const char *name, const char *key, const char *where)
{
    char details[640];
    struct db_secret s;
    json_t *entries;
    int rc = db_secret_resolve(r->app->db, project->name, name, &s), has, mine;
    int user = strcmp(field, "userCredential") == 0;
    char *value = NULL;

    if (rc == DB_ENOTFOUND) {
        /* a credential asset of that name (h_assets.c), for a secret entry */
        has = user ? -1 : api_credential_value(r->app->db, project->name, name, key, &value);
        api_secretbox_free(value);
        if (has == 0)
            return 0;
        if (has == 1) {
            snprintf(details, sizeof(details), "%s.secret.key: credential %s has no key %s",
                     where, name, key);
            return refuse(r, details);
        }
        snprintf(details, sizeof(details),
                 "%s.%s.name: project %s has no secret named %s (its own, its department's"
                 " or the tenant's generic-secret credentials)", where, field, project->name,
                 name);
        return refuse(r, details);
    }
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the secrets"), -1;
    entries = json_loads(s.entries, 0, NULL);
    has = json_object_get(entries, key) != NULL;
    mine = strcmp(s.created_by, r->who.user.name) == 0;
    json_decref(entries);
    if (user && !mine)
        snprintf(details, sizeof(details),
                 "%s.userCredential.name: the credential %s that project %s sees was created by"
                 " %s, not by %s: a user credential is one its user created (use it as a"
                 " secret entry instead)", where, name, project->name,
                 s.created_by[0] ? s.created_by : "someone else", r->who.user.name);
    else if (!has)
        snprintf(details, sizeof(details), "%s.%s.key: secret %s has no key %s", where, field,
                 name, key);
    db_secret_clear(&s);
    return (!user || mine) && has ? 0 : refuse(r, details);
}

int api_secret_value(struct db *db, const char *project, const char *name, const char *key,
                     char **value)
{
    struct db_secret s;
    json_t *entries;
    int rc;

    *value = NULL;
    if (db_secret_resolve(db, project, name, &s) != DB_OK)
        return api_credential_value(db, project, name, key, value) == 0 ? 0 : -1;
    entries = json_loads(s.entries, 0, NULL);
    rc = api_secretbox_open(&box, s.id, key, json_string_value(json_object_get(entries, key)),
                            value);
    json_decref(entries);
    db_secret_clear(&s);
    return rc;
}
