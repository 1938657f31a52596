/*
 * asset_info.c: what an asset's answer adds when the query asks (assets.h)
 * and the list filters beyond the scope's (scope.c):
 *
 *   usageInfo=true       usedBy: the workloads (not deleted) and the
 *                        templates and other assets that name it, as
 *                        Run:ai's AssetUsageInfo
 *   complyToProject +    compliance: may a workload of that type in that
 *   complyToWorkloadType project take it (the project sees its scope, its
 *                        meta.workloadSupportedTypes serves the type, its
 *                        values keep the project's policies); and
 *                        usageTimes.lastUsedByWorkload: the newest such
 *                        workload that names it
 *   statusInfo=true      status: whether what it names and what it seals
 *                        can still be had
 *   isTraining, ...,     only the assets a submission of that type (and
 *   distributedFramework framework) may take
 *   assetIds             only those assets
 *
 * The workloads and assets that usedBy looks through are read once per
 * request (struct usage_cache), whatever the number of assets answered.
 *
 * Invariants:
 *   1. A workload uses an asset that its spec.assets names (the record of
 *      what a submission took), or a credential whose name one of its
 *      environment variables takes its value from (as delete checks it).
 *   2. The filters keep exactly what a submission would accept
 *      (wl_assets.c's serves()): a type the asset does not say false for.
 */
#include "assets.h"
#include "scope.h"
#include "secrets.h"
#include "secretbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* By enum db_wl_type: the key of meta.workloadSupportedTypes, of
 * AssetUsageInfo, and the word of complyToWorkloadType and of is<Type>. */
static const char *const type_keys[] = {"training", "workspace", "inference", "distributed"};
static const char *const usage_keys[] = {"trainings", "workspaces", "inferences", "distributed"};
static const char *const type_words[] = {"Training", "Workspace", "Inference", "Distributed"};
#define N_TYPES 4

/* ---- the workloads and assets, read once ---- */

struct wl_ref {
    char id[DB_ID_LEN], name[DB_NAME_LEN], phase[16], project[DB_NAME_LEN];
    int type, live;
    int64_t project_seq, created_at;
    char *spec;
};

struct usage_cache {
    struct wl_ref *w;
    int n, cap, failed;
    struct db_asset *assets;
    int n_assets;
};

static void keep_workload(struct api_req *r, const struct db_workload *w, void *arg)
{
    struct usage_cache *c = arg;
    struct wl_ref *x;

    (void)r;
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        struct wl_ref *p = realloc(c->w, sizeof(*p) * (size_t)cap);
        if (!p) {
            c->failed = 1;
            return;
        }
        c->w = p;
        c->cap = cap;
    }
    x = &c->w[c->n];
    memset(x, 0, sizeof(*x));
    snprintf(x->id, sizeof(x->id), "%s", w->id);
    snprintf(x->name, sizeof(x->name), "%s", w->name);
    snprintf(x->phase, sizeof(x->phase), "%s", w->phase);
    snprintf(x->project, sizeof(x->project), "%s", w->project_name);
    x->type = w->type >= 0 && w->type < N_TYPES ? w->type : DB_TRAINING;
    x->live = strcmp(w->phase, "Completed") != 0 && strcmp(w->phase, "Failed") != 0;
    x->project_seq = w->project_seq;
    x->created_at = w->created_at;
    x->spec = strdup(w->spec ? w->spec : "{}");
    if (!x->spec)
        c->failed = 1;
    else
        c->n++;
}

static void cache_free(struct usage_cache *c)
{
    int i;

    if (!c)
        return;
    for (i = 0; i < c->n; i++)
        free(c->w[i].spec);
    free(c->w);
    db_assets_free(c->assets, c->n_assets);
    free(c);
}

/* The request's cache, read on first use: DB_OK or the store's error. */
static int cache_read(struct api_req *r, struct usage_cache **out)
{
    struct usage_cache *c = *out;
    int rc;

    if (c)
        return DB_OK;
    if (!(c = calloc(1, sizeof(*c))))
        return DB_ENOMEM;
    rc = api_workloads_visit(r, 0, keep_workload, c);
    if (rc == DB_OK && c->failed)
        rc = DB_ENOMEM;
    if (rc == DB_OK)
        rc = db_asset_list(r->app->db, NULL, &c->assets, &c->n_assets);
    if (rc != DB_OK) {
        cache_free(c);
        return rc < 0 ? rc : -1;
    }
    *out = c;
    return DB_OK;
}

/* cache_read(), or -1 answered. */
static int cache_in(struct api_req *r, struct usage_cache **out)
{
    int rc = cache_read(r, out);

    if (rc != DB_OK)
        api_db_error(r, rc, "cannot read what uses the assets");
    return rc == DB_OK ? 0 : -1;
}

/* ---- who uses an asset ---- */

/* Does the JSON text name the id as a value? */
static int names_id(const char *text, const char *id)
{
    char quoted[DB_ID_LEN + 3];

    snprintf(quoted, sizeof(quoted), "\"%s\"", id);
    return text && strstr(text, quoted) != NULL;
}

/* Does an environment variable of the workload take a value from
 * credential a by its name ({secret: {name}} resolving to it)? */
static int takes_credential(struct api_req *r, const struct wl_ref *w, const struct db_asset *a)
{
    json_t *spec, *e;
    struct db_asset found;
    size_t i;
    int takes = 0;

    if (!strstr(w->spec, a->name)) /* the cheap test first */
        return 0;
    spec = json_loads(w->spec, 0, NULL);
    json_array_foreach(json_object_get(spec, "environmentVariables"), i, e) {
        const char *name = json_string_value(json_object_get(json_object_get(e, "secret"),
                                                             "name"));
        if (!name || strcmp(name, a->name) != 0)
            continue;
        if (db_asset_resolve(r->app->db, "credential", w->project, name, &found) == DB_OK)
            takes = strcmp(found.id, a->id) == 0;
        db_asset_clear(&found);
        break;
    }
    json_decref(spec);
    return takes;
}

static int uses(struct api_req *r, const struct wl_ref *w, const struct db_asset *a)
{
    return names_id(w->spec, a->id) ||
           (strcmp(a->family, "credential") == 0 && takes_credential(r, w, a));
}

/* Appends "what (where)" to the text. */
static void add_text(char *out, size_t len, size_t *used, const char *what, const char *where)
{
    if (len && *used + 1 < len)
        *used += (size_t)snprintf(out + *used, len - *used, "%s%s (%s)", *used ? ", " : "",
                                  what, where);
}

static void push(json_t *o, const char *key, json_t *v)
{
    if (!json_is_array(json_object_get(o, key)))
        json_object_set_new(o, key, json_array());
    json_array_append_new(json_object_get(o, key), v);
}

/* The other assets that name a: templates, and environments (a
 * credential's). */
static void asset_users(const struct usage_cache *c, const struct db_asset *a, json_t *by,
                        char *text, size_t len, size_t *used)
{
    json_t *assets = json_object_get(by, "assets");
    int i;

    for (i = 0; i < c->n_assets; i++) {
        const struct db_asset *o = &c->assets[i];
        if (strcmp(o->id, a->id) == 0 || !names_id(o->spec, a->id))
            continue;
        if (strcmp(o->family, "template") == 0)
            push(by, "templates", json_pack("{s:s, s:s}", "id", o->id, "name", o->name));
        else if (strcmp(o->family, "datasource") == 0)
            push(assets, "datasources", json_pack("{s:s, s:s, s:s}", "id", o->id, "name",
                                                  o->name, "kind", o->kind));
        else
            push(assets, strcmp(o->family, "compute") == 0 ? "computes" : "environments",
                 json_pack("{s:s, s:s}", "id", o->id, "name", o->name));
        add_text(text, len, used, o->name, o->kind);
    }
}

json_t *api_usage_new(void)
{
    return json_pack("{s:[], s:[], s:[], s:[], s:[], s:{}}", "workspaces", "trainings",
                     "distributed", "inferences", "templates", "assets");
}

void api_usage_add(json_t *by, const char *id, const char *name, const char *phase, int type)
{
    push(by, usage_keys[type >= 0 && type < N_TYPES ? type : DB_TRAINING],
         json_pack("{s:s, s:s, s:s}", "id", id, "name", name, "status", phase));
}

/* usedBy of a from the cache (live_only: the workloads that may run
 * again), its text in text ("name (where), ...") and the newest use by a
 * workload of type in project seq (-1: none asked) in *last. */
static json_t *used_by(struct api_req *r, const struct usage_cache *c, const struct db_asset *a,
                       int live_only, int type, int64_t project_seq, int64_t *last,
                       char *text, size_t len)
{
    json_t *by = api_usage_new();
    char where[DB_NAME_LEN + 32];
    size_t used = 0;
    int i;

    *last = 0;
    if (len)
        text[0] = 0;
    for (i = 0; i < c->n; i++) {
        const struct wl_ref *w = &c->w[i];
        if ((live_only && !w->live) || !uses(r, w, a))
            continue;
        api_usage_add(by, w->id, w->name, w->phase, w->type);
        snprintf(where, sizeof(where), "workload of project %s", w->project);
        add_text(text, len, &used, w->name, where);
        if (w->type == type && w->project_seq == project_seq && w->created_at > *last)
            *last = w->created_at;
    }
    asset_users(c, a, by, text, len, &used);
    if (len > 4 && used >= len)
        memcpy(text + len - 4, "...", 4);
    return by;
}

/* How many entries usedBy holds. */
static size_t count_users(json_t *by)
{
    const char *key;
    json_t *v;
    size_t n = 0;

    json_object_foreach(by, key, v)
        n += json_is_array(v) ? json_array_size(v) : count_users(v);
    return n;
}

int api_asset_usage(struct api_req *r, const struct db_asset *a, json_t **by, char *text,
                    size_t len)
{
    struct usage_cache *c = NULL;
    int64_t last;
    json_t *u;
    int rc;

    if (by)
        *by = NULL;
    if ((rc = cache_read(r, &c)) != DB_OK)
        return rc;
    u = used_by(r, c, a, 1, -1, -1, &last, text, len);
    cache_free(c);
    rc = count_users(u) > 0;
    if (by)
        *by = u;
    else
        json_decref(u);
    return rc;
}

/* ---- the query ---- */

/* An enum's index of the query parameter's value in words (n of them),
 * -1 when absent; -2 answered 400. */
static int query_enum(struct api_req *r, const char *name, const char *const *words, int n)
{
    char buf[32], details[160];
    int i, rc = api_query(r, name, buf, sizeof(buf));

    if (rc == 1)
        return -1;
    for (i = 0; rc == 0 && i < n; i++)
        if (strcmp(buf, words[i]) == 0)
            return i;
    snprintf(details, sizeof(details), "%s: one of %s%s%s%s%s%s%s", name, words[0],
             n > 1 ? ", " : "", n > 1 ? words[1] : "", n > 2 ? ", " : "", n > 2 ? words[2] : "",
             n > 3 ? ", " : "", n > 3 ? words[3] : "");
    api_error(r, 400, "Bad request", details);
    return -2;
}

/* complyToProject, complyToWorkloadType, complyToReplicaType. */
static int comply_in(struct api_req *r, struct api_asset_q *q)
{
    static const char *const replicas[] = {"Worker", "Master"};
    int64_t seq = -1;
    json_t *ref;
    int rc;

    if (api_query_int(r, "complyToProject", 0, INT32_MAX, &seq) != 0 ||
        (q->comply_type = query_enum(r, "complyToWorkloadType", type_words, N_TYPES)) == -2 ||
        query_enum(r, "complyToReplicaType", replicas, 2) == -2)
        return -1;
    if ((seq < 0) != (q->comply_type < 0))
        return api_error(r, 400, "Bad request", "complyToProject and complyToWorkloadType go"
                                                " together (Run:ai's document)"), -1;
    if (seq < 0)
        return 0;
    ref = json_integer(seq);
    rc = api_project_by_ref(r, ref, &q->comply_project);
    json_decref(ref);
    if (rc == DB_ENOTFOUND || rc == DB_EINVAL)
        return api_error(r, 400, "Bad request", "complyToProject names no project"), -1;
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the project"), -1;
    q->comply = 1;
    return 0;
}

/* isTraining, isWorkspace, isInference, isDistributed, distributedFramework. */
static int types_in(struct api_req *r, struct api_asset_q *q)
{
    static const char *const flags[] = {"isTraining", "isWorkspace", "isInference",
                                        "isDistributed"};
    int i, on;

    for (i = 0; i < N_TYPES; i++) {
        on = 0;
        if (api_query_bool(r, flags[i], &on) != 0)
            return -1;
        if (on)
            q->types |= 1u << i;
    }
    if (api_query(r, "distributedFramework", q->framework, sizeof(q->framework)) < 0)
        return api_error(r, 400, "Bad request", "distributedFramework: MPI, PyTorch, TF,"
                                                " XGBoost or JAX"), -1;
    if (q->framework[0])
        q->types |= 1u << DB_DISTRIBUTED;
    return 0;
}

/* assetIds: comma-separated ids. */
static int ids_in(struct api_req *r, struct api_asset_q *q)
{
    char id[DB_ID_LEN];
    const char *p;
    size_t n;

    if (api_query(r, "assetIds", q->ids, sizeof(q->ids)) != 0) {
        q->ids[0] = 0;
        return 0;
    }
    for (p = q->ids; *p; p += n + (p[n] == ',')) {
        n = strcspn(p, ",");
        if (n == 0 || n >= sizeof(id))
            break;
        memcpy(id, p, n);
        id[n] = 0;
        if (!api_is_uuid(id))
            break;
    }
    if (*p || !q->ids[0])
        return api_error(r, 400, "Bad request", "assetIds: asset ids (UUIDs), comma-separated"),
               -1;
    q->by_ids = 1;
    return 0;
}

int api_asset_q_in(struct api_req *r, struct api_asset_q *q, int usage_default)
{
    memset(q, 0, sizeof(*q));
    q->usage = usage_default;
    q->comply_type = -1;
    if (api_query_bool(r, "usageInfo", &q->usage) != 0 ||
        api_query_bool(r, "statusInfo", &q->status) != 0 || comply_in(r, q) != 0 ||
        types_in(r, q) != 0 || ids_in(r, q) != 0)
        return -1;
    return 0;
}

void api_asset_q_free(struct api_asset_q *q)
{
    cache_free(q->cache);
    q->cache = NULL;
}

/* ---- the filters ---- */

static int serves(json_t *supported, int type)
{
    return !json_is_false(json_object_get(supported, type_keys[type]));
}

/* A framework the asset serves: its distFramework, when it names one. */
static int serves_framework(json_t *supported, const char *framework)
{
    const char *fw = json_string_value(json_object_get(supported, "distFramework"));

    return !framework[0] || !fw || !fw[0] || strcasecmp(fw, framework) == 0;
}

static int listed_id(const char *ids, const char *id)
{
    size_t n = strlen(id);
    const char *p;

    for (p = ids; (p = strstr(p, id)) != NULL; p += n)
        if ((p == ids || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

int api_asset_q_pass(const struct api_asset_q *q, const struct db_asset *a)
{
    json_t *s = a->supported[0] ? json_loads(a->supported, 0, NULL) : NULL;
    int i, ok = !q->by_ids || listed_id(q->ids, a->id);

    for (i = 0; ok && i < N_TYPES; i++)
        if (q->types & (1u << i))
            ok = serves(s, i);
    if (ok)
        ok = serves_framework(s, q->framework);
    json_decref(s);
    return ok;
}

/* ---- compliance ---- */

/* A reason of ComplianceInfo from a policy's breach ("spec.FIELD ...
 * breaks the rule RULE ..."): its details, field and rule. */
static json_t *policy_reason(const char *msg)
{
    static const char *const rules[] = {"min", "max", "step", "options", "required", "canEdit"};
    json_t *o = json_pack("{s:s}", "details", msg);
    const char *rule = strstr(msg, "breaks the rule ");
    char field[128];
    size_t n, i;

    if (strncmp(msg, "spec.", 5) == 0 && (n = strcspn(msg + 5, " ")) < sizeof(field)) {
        memcpy(field, msg + 5, n);
        field[n] = 0;
        json_object_set_new(o, "field", json_string(field));
    }
    for (i = 0; rule && i < sizeof(rules) / sizeof(rules[0]); i++) {
        n = strlen(rules[i]);
        if (strncmp(rule + 16, rules[i], n) == 0 && (rule[16 + n] == ' ' || !rule[16 + n]))
            json_object_set_new(o, "rule", json_string(rules[i]));
    }
    return o;
}

/* What of the asset a policy governs (image, ..., compute.*): a new
 * object, or NULL for a family no policy field is in. */
static json_t *governed(const struct db_asset *a)
{
    json_t *spec;

    if (strcmp(a->family, "environment") != 0 && strcmp(a->family, "compute") != 0)
        return NULL;
    spec = json_loads(a->spec ? a->spec : "{}", 0, NULL);
    if (!json_is_object(spec)) {
        json_decref(spec);
        return NULL;
    }
    return strcmp(a->family, "compute") == 0 ? json_pack("{s:o}", "compute", spec) : spec;
}

/* ComplianceInfo of a against the query's project and type, or NULL
 * answered. */
static json_t *compliance(struct api_req *r, const struct api_asset_q *q,
                          const struct db_asset *a)
{
    const struct api_project *p = &q->comply_project;
    json_t *reasons = json_array(), *s, *part;
    char msg[512];
    int rc = 0;

    if (!api_scope_seen(a->scope, a->scope_id, p)) {
        snprintf(msg, sizeof(msg), "project %s does not see this asset: it belongs to another"
                 " %s", p->name, a->scope);
        json_array_append_new(reasons, json_pack("{s:s}", "details", msg));
    }
    s = a->supported[0] ? json_loads(a->supported, 0, NULL) : NULL;
    if (!serves(s, q->comply_type)) {
        snprintf(msg, sizeof(msg), "its meta.workloadSupportedTypes does not serve %s workloads",
                 type_keys[q->comply_type]);
        json_array_append_new(reasons, json_pack("{s:s, s:s}", "details", msg, "field",
                                                 "meta.workloadSupportedTypes"));
    }
    json_decref(s);
    if ((part = governed(a)) != NULL) {
        rc = api_policy_comply(r, part, q->comply_type, p, msg, sizeof(msg));
        if (rc == 1)
            json_array_append_new(reasons, policy_reason(msg));
        json_decref(part);
    }
    if (rc < 0) {
        json_decref(reasons);
        return NULL;
    }
    return json_pack("{s:b, s:b, s:o}", "imposed", 0, "compliance",
                     json_array_size(reasons) == 0, "reason", reasons);
}

/* ---- status ---- */

/* The first id (a uuid under assetId, environment, compute or id) the
 * JSON names that is no asset, into missing; 1 if one is. */
static int names_missing(struct api_req *r, json_t *v, char *missing, size_t len)
{
    static const char *const keys[] = {"assetId", "environment", "compute", "id"};
    struct db_asset a;
    const char *key;
    json_t *e;
    size_t i;
    int gone;

    if (json_is_array(v)) {
        json_array_foreach(v, i, e)
            if (names_missing(r, e, missing, len))
                return 1;
        return 0;
    }
    json_object_foreach(v, key, e) {
        for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && strcmp(key, keys[i]) != 0; i++)
            ;
        if (i < sizeof(keys) / sizeof(keys[0]) && json_is_string(e) &&
            api_is_uuid(json_string_value(e))) {
            memset(&a, 0, sizeof(a));
            gone = db_asset_get(r->app->db, json_string_value(e), &a) == DB_ENOTFOUND;
            db_asset_clear(&a);
            if (gone) {
                snprintf(missing, len, "%s", json_string_value(e));
                return 1;
            }
        } else if (names_missing(r, e, missing, len)) {
            return 1;
        }
    }
    return 0;
}

/* Whether each sealed value (sealed: {key: sealed text}) opens with
 * allotd's secrets key. */
static int sealed_open(const char *id, const char *sealed_text)
{
    json_t *sealed = json_loads(sealed_text ? sealed_text : "{}", 0, NULL), *v;
    const char *key;
    char *value;
    int ok = 1;

    json_object_foreach(sealed, key, v) {
        value = NULL;
        if (!json_is_string(v) || api_secrets_open(id, key, json_string_value(v), &value))
            ok = 0;
        api_secretbox_free(value);
        if (!ok)
            break;
    }
    json_decref(sealed);
    return ok;
}

json_t *api_sealed_status(const char *id, const char *sealed, const char *missing)
{
    const char *status = "No issues found";
    char message[160];

    snprintf(message, sizeof(message), "ready for workloads");
    if (sealed && strcmp(sealed, "{}") != 0 && !api_secrets_ready()) {
        status = "Issues found";
        snprintf(message, sizeof(message), "allotd has no secrets key: pods cannot take its"
                 " values");
    } else if (!sealed_open(id, sealed)) {
        status = "Failed";
        snprintf(message, sizeof(message), "its sealed values do not open with allotd's secrets"
                 " key");
    } else if (missing && missing[0]) {
        status = "Issues found";
        snprintf(message, sizeof(message), "it names asset %s, which no longer exists", missing);
    }
    return json_pack("{s:s, s:[], s:s}", "status", status, "issues", "message", message);
}

/* AssetClusterStatusInfo: allot keeps assets in its store, not in a
 * cluster, so what can go wrong is what it names being gone or its
 * sealed values not opening. */
static json_t *status_of(struct api_req *r, const struct db_asset *a)
{
    json_t *spec = json_loads(a->spec ? a->spec : "{}", 0, NULL);
    char missing[DB_ID_LEN] = "";

    names_missing(r, spec, missing, sizeof(missing));
    json_decref(spec);
    return api_sealed_status(a->id, a->sealed, missing);
}

/* ---- the answer ---- */

int api_asset_q_add(struct api_req *r, struct api_asset_q *q, const struct db_asset *a,
                    json_t *entry)
{
    int64_t last = 0;
    json_t *by, *c;

    if ((q->usage || q->comply) && cache_in(r, &q->cache) != 0)
        return -1;
    if (q->usage || q->comply) {
        by = used_by(r, q->cache, a, 0, q->comply_type,
                     q->comply ? q->comply_project.seq : -1, &last, NULL, 0);
        if (q->usage)
            json_object_set(entry, "usedBy", by);
        json_decref(by);
    }
    if (q->comply) {
        json_object_set_new(entry, "usageTimes", json_pack("{s:o}", "lastUsedByWorkload",
                                                           last ? api_time(last) : json_null()));
        if (!(c = compliance(r, q, a)))
            return -1;
        json_object_set_new(entry, "compliance", c);
    }
    if (q->status)
        json_object_set_new(entry, "status", status_of(r, a));
    return 0;
}
