/*
 * h_templates.c: /api/v1/workload-templates/..., Run:ai's workload
 * templates of the four types: a name in a scope (scopeType tenant,
 * department or project, and scopeId), a spec of the type's fields and the
 * assets it is made of ({environment, compute, datasources, credentials},
 * by id). They are kept with the assets (db_assets.h: family template,
 * kind trainings, workspaces, distributed or inferences, spec {spec,
 * assets}); a submission's templateId takes one (wl_assets.c). The asset
 * form of templates, /api/v1/asset/workload-template, is a kind of asset
 * (h_assets.c) that these routes leave out.
 *
 * Invariants:
 *   1. A template's spec is checked as a workload's spec of its type
 *      (api_wl_spec_part_check()) and its assets exist and are of their
 *      family when it is stored; what the submission adds is checked
 *      again as a whole.
 *   2. Rights as for assets (assets.h): reading on the template's scope
 *      takes API_WL_READ, changing it API_ORG_WRITE; one the caller may
 *      not read answers 404.
 */
#include "assets.h"
#include "scope.h"
#include "secretbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The four types: the path's word (the stored kind), and Run:ai's
 * workloadType. */
static const struct {
    const char *path, *type;
    int wl_type;
} types[] = {
    {"workspaces", "Workspace", DB_WORKSPACE},
    {"trainings", "Training", DB_TRAINING},
    {"distributed", "Distributed", DB_DISTRIBUTED},
    {"inferences", "Inference", DB_INFERENCE},
};
#define N_TYPES ((int)(sizeof(types) / sizeof(types[0])))

/* The type of the path /api/v1/workload-templates/<type>[/...]; -1 none. */
static int type_of_path(const char *path)
{
    static const char prefix[] = "/api/v1/workload-templates/";
    int i;

    if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
        return -1;
    path += sizeof(prefix) - 1;
    for (i = 0; i < N_TYPES; i++) {
        size_t n = strlen(types[i].path);
        if (strncmp(path, types[i].path, n) == 0 && (path[n] == 0 || path[n] == '/'))
            return i;
    }
    return -1;
}

static int type_of_kind(const char *kind)
{
    int i;

    for (i = 0; i < N_TYPES; i++)
        if (strcmp(types[i].path, kind) == 0)
            return i;
    return -1;
}

static int refuse(struct api_req *r, const char *details)
{
    api_error(r, 400, "Bad request", details);
    return -1;
}

/* ---- answers ---- */

static json_t *template_json(struct api_req *r, const struct db_asset *a)
{
    json_t *body = json_loads(a->spec ? a->spec : "{}", 0, NULL), *meta, *scope = json_object();
    int t = type_of_kind(a->kind);
    json_t *out;

    api_scope_meta(r, scope, a->scope, a->scope_id);
    meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o}", "id", a->id, "name",
                     a->name, "workloadType", t >= 0 ? types[t].type : "Training", "scopeType",
                     a->scope, "scopeId", a->scope_id, "createdBy",
                     a->created_by[0] ? a->created_by : "-", "createdAt",
                     api_time(a->created_at), "updatedBy", a->updated_by[0] ? a->updated_by : "-",
                     "updatedAt", api_time(a->updated_at));
    json_object_set_new(meta, "description",
                        a->description[0] ? json_string(a->description) : json_null());
    json_object_set(meta, "clusterId", json_object_get(scope, "clusterId"));
    json_object_set(meta, "departmentId", json_object_get(scope, "departmentId"));
    json_object_set(meta, "projectId", json_object_get(scope, "projectId"));
    json_decref(scope);
    out = json_pack("{s:o, s:O, s:O}", "meta", meta, "spec",
                    json_is_object(json_object_get(body, "spec")) ? json_object_get(body, "spec")
                                                                  : json_object(),
                    "assets",
                    json_is_object(json_object_get(body, "assets"))
                        ? json_object_get(body, "assets")
                        : json_object());
    json_decref(body);
    return out;
}

/* ---- reading one ---- */

/* meta.scopeType and scopeId as api_scope_in() reads a scope. */
static int scope_in(struct api_req *r, json_t *meta, struct db_asset *a)
{
    const char *type = json_string_value(json_object_get(meta, "scopeType"));
    json_t *id = json_object_get(meta, "scopeId"), *as;
    struct api_scope s;
    int rc;

    if (!type)
        return refuse(r, "meta.scopeType is required: tenant, department or project");
    if (id && !json_is_null(id) && !json_is_string(id))
        return refuse(r, "meta.scopeId: the department's or project's id");
    as = json_pack("{s:s}", "scope", type);
    if (strcmp(type, "project") == 0 && json_is_string(id))
        json_object_set(as, "projectId", id);
    else if (strcmp(type, "department") == 0 && json_is_string(id))
        json_object_set(as, "departmentId", id);
    else if (json_is_string(id) && strcmp(type, "tenant") != 0)
        return json_decref(as), refuse(r, "meta.scopeType: tenant, department or project (allot"
                                          " has one cluster: its tenant)");
    rc = api_scope_in(r, as, &s, "template");
    json_decref(as);
    if (rc != 0)
        return -1;
    snprintf(a->scope, sizeof(a->scope), "%s", s.scope);
    snprintf(a->scope_id, sizeof(a->scope_id), "%s", s.scope_id);
    return 0;
}

/* The assets a template is made of: each an id of an asset of its
 * family; the references as given, checked. */
static int assets_in(struct api_req *r, json_t *assets)
{
    static const struct {
        const char *key, *family;
        int listed;
    } refs[] = {{"environment", "environment", 0},
                {"compute", "compute", 0},
                {"datasources", "datasource", 1},
                {"credentials", "credential", 1}};
    static const char *const keys[] = {"environment", "compute", "datasources", "credentials",
                                       NULL};
    struct db_asset a;
    char details[200];
    json_t *v, *e, *id;
    size_t i, k;

    if (!assets || json_is_null(assets))
        return 0;
    if (!json_is_object(assets) || api_json_allow(r, assets, keys, "assets"))
        return json_is_object(assets) ? -1 : refuse(r, "assets: an object of asset ids");
    for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        v = json_object_get(assets, refs[i].key);
        if (!v || json_is_null(v))
            continue;
        if (refs[i].listed && !json_is_array(v))
            return refuse(r, "assets: datasources and credentials are lists");
        for (k = 0; k < (refs[i].listed ? json_array_size(v) : 1); k++) {
            e = refs[i].listed ? json_array_get(v, k) : v;
            id = json_is_object(e) ? json_object_get(e, "id") : e;
            memset(&a, 0, sizeof(a));
            if (!json_is_string(id) ||
                db_asset_get(r->app->db, json_string_value(id), &a) != DB_OK ||
                strcmp(a.family, refs[i].family) != 0) {
                db_asset_clear(&a);
                snprintf(details, sizeof(details), "assets.%s: an id of an asset of the %s"
                         " family", refs[i].key, refs[i].family);
                return refuse(r, details);
            }
            db_asset_clear(&a);
        }
    }
    return 0;
}

int api_template_check(struct api_req *r, json_t *spec, json_t *assets, int wl_type)
{
    if (spec && !json_is_null(spec) && api_wl_spec_part_check(r, spec, wl_type) != 0)
        return -1;
    return assets_in(r, assets);
}

/* The body's spec and assets into a->spec ({spec, assets}), checked for
 * the type. */
static int body_in(struct api_req *r, json_t *spec, json_t *assets, int t, struct db_asset *a)
{
    json_t *body;

    if (api_template_check(r, spec, assets, types[t].wl_type) != 0)
        return -1;
    /* "o" takes the reference each argument holds: the body's own or a new one */
    body = json_pack("{s:o, s:o}", "spec", json_is_object(spec) ? json_incref(spec) : json_object(),
                     "assets", json_is_object(assets) ? json_incref(assets) : json_object());
    free(a->spec);
    a->spec = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(body);
    free(a->sealed);
    a->sealed = strdup("{}");
    if (!a->spec || !a->sealed)
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    return 0;
}

static int meta_in(struct api_req *r, json_t *meta, struct db_asset *a, int creating)
{
    static const char *const create_keys[] = {"name", "description", "scopeType", "scopeId",
                                              NULL};
    static const char *const update_keys[] = {"name", "description", NULL};

    if (!json_is_object(meta))
        return refuse(r, "meta: an object {name, scopeType, scopeId}");
    if (api_json_allow(r, meta, creating ? create_keys : update_keys, "meta") ||
        api_json_str(r, meta, "name", a->name, sizeof(a->name), creating) ||
        api_json_text(r, meta, "description", a->description, sizeof(a->description), 0,
                      API_TEXT_FREE))
        return -1;
    if (!api_valid_name(a->name))
        return refuse(r, "meta.name: lowercase letters, digits and '-', at most 63");
    return creating ? scope_in(r, meta, a) : 0;
}

static void stored(struct api_req *r, struct db_asset *a, int rc, int status)
{
    if (rc == DB_OK) {
        db_asset_clear(a); /* the row read back owns its texts anew */
        rc = db_asset_get(r->app->db, a->id, a);
    }
    if (rc == DB_OK)
        api_reply(r, status, template_json(r, a));
    else if (rc == DB_ECONFLICT)
        api_error(r, status == 202 ? 409 : 400, status == 202 ? "Conflict" : "Bad request",
                  "a template of that name exists in that scope");
    else
        api_db_error(r, rc, "cannot store the template");
}

/* ---- routes ---- */

void api_h_template_create(struct api_req *r)
{
    static const char *const top_keys[] = {"meta", "spec", "assets", NULL};
    int t = type_of_path(r->path);
    struct db_asset a;
    json_t *o = api_body_object(r);

    memset(&a, 0, sizeof(a));
    if (!o)
        return;
    snprintf(a.family, sizeof(a.family), "template");
    snprintf(a.kind, sizeof(a.kind), "%s", t >= 0 ? types[t].path : "");
    if (t >= 0 && api_json_allow(r, o, top_keys, "") == 0 && api_secretbox_uuid(a.id) == 0 &&
        meta_in(r, json_object_get(o, "meta"), &a, 1) == 0 &&
        body_in(r, json_object_get(o, "spec"), json_object_get(o, "assets"), t, &a) == 0) {
        snprintf(a.created_by, sizeof(a.created_by), "%s", r->who.user.name);
        stored(r, &a, db_asset_insert(r->app->db, &a), 202);
    } else if (r->status == 0) {
        api_error(r, 500, "Internal error", "cannot make an id");
    }
    json_decref(o);
    db_asset_clear(&a);
}

/* The template of the path's id (and type, when the path names one). */
static int template_in(struct api_req *r, unsigned perm, struct db_asset *a)
{
    int t = type_of_path(r->path);

    memset(a, 0, sizeof(*a));
    if (api_asset_read(r, perm, a) != 0)
        return -1;
    if (strcmp(a->family, "template") == 0 && type_of_kind(a->kind) >= 0 &&
        (t < 0 || strcmp(a->kind, types[t].path) == 0))
        return 0;
    db_asset_clear(a);
    api_error(r, 404, "Not found", "no such template");
    return -1;
}

void api_h_template_get(struct api_req *r)
{
    struct db_asset a;

    if (template_in(r, API_WL_READ, &a) != 0)
        return;
    api_reply(r, 200, template_json(r, &a));
    db_asset_clear(&a);
}

static int may_change(struct api_req *r, const struct db_asset *a)
{
    if (api_scope_may(r, a->scope, a->scope_id, API_ORG_WRITE))
        return 1;
    api_error(r, 403, "Forbidden", "the caller may not change this template");
    return 0;
}

/* fieldsToClear: "spec.FIELD" or "spec.GROUP.FIELD" paths removed. */
static int clear_in(struct api_req *r, json_t *list, json_t *spec)
{
    json_t *e, *group;
    size_t i;
    char path[128], *dot;

    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return refuse(r, "fieldsToClear: a list of paths such as spec.image");
    json_array_foreach(list, i, e) {
        const char *p = json_string_value(e);
        if (!p || strncmp(p, "spec.", 5) != 0 || strlen(p) >= sizeof(path))
            return refuse(r, "fieldsToClear: paths in spec (spec.image, spec.compute.cpuCoreRequest)");
        snprintf(path, sizeof(path), "%s", p + 5);
        dot = strchr(path, '.');
        if (dot)
            *dot = 0;
        group = dot ? json_object_get(spec, path) : spec;
        json_object_del(group, dot ? dot + 1 : path);
    }
    return 0;
}

/* PUT (replace) and PATCH (merge, API_ARG_PATCH). */
void api_h_template_update(struct api_req *r)
{
    static const char *const put_keys[] = {"meta", "spec", "assets", NULL};
    static const char *const patch_keys[] = {"meta", "spec", "assets", "fieldsToClear", NULL};
    int patch = (r->arg & API_ARG_PATCH) != 0;
    struct db_asset a;
    json_t *o = NULL, *body = NULL, *spec, *assets, *meta;

    if (template_in(r, API_WL_READ, &a) != 0)
        return;
    if (!may_change(r, &a))
        goto out;
    o = api_body_object(r);
    if (!o || api_json_allow(r, o, patch ? patch_keys : put_keys, ""))
        goto out;
    meta = json_object_get(o, "meta");
    if (!patch || (meta && !json_is_null(meta))) {
        if (!patch)
            a.description[0] = 0; /* PUT replaces; PATCH keeps what it does not give */
        if (meta_in(r, meta, &a, 0) != 0)
            goto out;
    }
    body = json_loads(a.spec, 0, NULL);
    spec = json_object_get(o, "spec");
    assets = json_object_get(o, "assets");
    if (patch) {
        if (json_is_object(spec) && json_is_object(json_object_get(body, "spec")))
            json_object_update(json_object_get(body, "spec"), spec);
        if (json_is_object(assets) && json_is_object(json_object_get(body, "assets")))
            json_object_update(json_object_get(body, "assets"), assets);
        spec = json_object_get(body, "spec");
        assets = json_object_get(body, "assets");
        if (clear_in(r, json_object_get(o, "fieldsToClear"), spec) != 0)
            goto out;
    }
    if (body_in(r, spec, assets, type_of_kind(a.kind), &a) != 0)
        goto out;
    snprintf(a.updated_by, sizeof(a.updated_by), "%s", r->who.user.name);
    stored(r, &a, db_asset_update(r->app->db, &a), 200);
out:
    json_decref(body);
    json_decref(o);
    db_asset_clear(&a);
}

void api_h_template_delete(struct api_req *r)
{
    struct db_asset a;
    char users[768], details[1024];
    json_t *by = NULL;
    int busy;

    if (template_in(r, API_WL_READ, &a) != 0)
        return;
    if (!may_change(r, &a)) {
        db_asset_clear(&a);
        return;
    }
    busy = api_asset_usage(r, &a, &by, users, sizeof(users));
    if (busy == 1) {
        snprintf(details, sizeof(details), "template %s is in use by %s; delete them first",
                 a.name, users);
        api_reply(r, 403, json_pack("{s:i, s:s, s:s, s:O}", "code", 403, "message", "Forbidden",
                                    "details", details, "usedBy", by));
    } else if (busy < 0) {
        api_db_error(r, busy, "cannot read what uses the template");
    } else {
        api_reply_deleted(r, db_asset_delete(r->app->db, a.id), "cannot delete the template");
    }
    json_decref(by);
    db_asset_clear(&a);
}

/* ---- lists ---- */

/* The templates (of the path's type, if it names one) the caller may
 * read, whose name contains ?search=, into entries; 0 or -1 answered. */
static int list_into(struct api_req *r, json_t *entries)
{
    char search[DB_NAME_LEN] = "";
    int t = type_of_path(r->path), n = 0, i, rc;
    struct db_asset *rows = NULL;

    if (api_query(r, "search", search, sizeof(search)) < 0)
        return refuse(r, "search is too long");
    rc = db_asset_list(r->app->db, "template", &rows, &n);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot list the templates"), -1;
    for (i = 0; i < n; i++)
        if ((t < 0 ? type_of_kind(rows[i].kind) >= 0 : strcmp(rows[i].kind, types[t].path) == 0) &&
            (!search[0] || strstr(rows[i].name, search)) &&
            api_scope_may(r, rows[i].scope, rows[i].scope_id, API_WL_READ))
            json_array_append_new(entries, template_json(r, &rows[i]));
    db_assets_free(rows, n);
    return 0;
}

void api_h_templates_list(struct api_req *r)
{
    json_t *entries = json_array();

    if (list_into(r, entries) == 0) {
        if (r->arg & API_ARG_COUNT)
            api_reply(r, 200, json_pack("{s:I}", "count", (json_int_t)json_array_size(entries)));
        else
            api_reply(r, 200, json_pack("{s:O}", "entries", entries));
    }
    json_decref(entries);
}

/* ?templateName=&scopeType=&scopeId=: 204 if no template of that name is
 * in that scope, else 409. */
void api_h_template_name_free(struct api_req *r)
{
    char name[DB_NAME_LEN] = "", type[16] = "", id[DB_ID_LEN] = "";
    struct db_asset *rows = NULL;
    int n = 0, i, rc, taken = 0;

    if (api_query(r, "templateName", name, sizeof(name)) != 0 ||
        api_query(r, "scopeType", type, sizeof(type)) != 0 ||
        api_query(r, "scopeId", id, sizeof(id)) < 0) {
        refuse(r, "templateName and scopeType are required");
        return;
    }
    rc = db_asset_list(r->app->db, "template", &rows, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list the templates");
        return;
    }
    for (i = 0; i < n; i++)
        taken |= strcmp(rows[i].name, name) == 0 && strcmp(rows[i].scope, type) == 0 &&
                 strcmp(rows[i].scope_id, id) == 0;
    db_assets_free(rows, n);
    if (taken)
        api_error(r, 409, "Conflict", "a template of that name exists in that scope");
    else
        api_reply_text(r, 204, "application/json", "", 0);
}
