/*
 * wl_assets.c: what a submission takes from the template and the assets
 * it names (assets.h): top.templateId, and top.assets, allot's extension
 * of the shape of Run:ai's AssetsIds ({environment, compute,
 * datasources[{id, kind, overrides}], credentials[]}), each an asset's id
 * or its name as the project sees it.
 *
 * Step 1  the template, if named: one of the workload's type that the
 *         project sees; its spec and its assets;
 * Step 2  the assets: the submission's own, else the template's (key by
 *         key); each resolved (an id, or a name: the project's own, its
 *         department's, the tenant's), checked against its
 *         meta.workloadSupportedTypes, and turned into the part of a
 *         spec it gives (h_assets.c);
 * Step 3  the spec: the assets' parts in order (environment, compute,
 *         data sources, credentials), then the template's spec, then the
 *         submission's, each over the last field by field: an object is
 *         merged key by key, a list of named entries (environment
 *         variables, storage) entry by entry by name, any other value
 *         replaced; a null says nothing.
 * The workload keeps where its spec came from as spec.assets.
 */
#include "assets.h"
#include "scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- merging ---- */

static int named_list(json_t *a)
{
    json_t *e;
    size_t i;

    json_array_foreach(a, i, e)
        if (!json_is_string(json_object_get(e, "name")))
            return 0;
    return json_is_array(a);
}

static void merge(json_t *base, json_t *over);

/* Each entry of over replaces base's entry of its name, else is added. */
static void merge_named(json_t *base, json_t *over)
{
    json_t *e, *b;
    size_t i, k;

    json_array_foreach(over, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        json_array_foreach(base, k, b)
            if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0)
                break;
        if (k < json_array_size(base))
            json_array_set_new(base, k, json_deep_copy(e));
        else
            json_array_append_new(base, json_deep_copy(e));
    }
}

static void merge(json_t *base, json_t *over)
{
    const char *key;
    json_t *v, *b;

    json_object_foreach(over, key, v) {
        b = json_object_get(base, key);
        if (json_is_null(v))
            continue;
        if (json_is_object(b) && json_is_object(v))
            merge(b, v);
        else if (named_list(b) && named_list(v))
            merge_named(b, v);
        else
            json_object_set_new(base, key, json_deep_copy(v));
    }
}

/* ---- finding an asset ---- */

static const char *const type_keys[] = {"training", "workspace", "inference", "distributed"};
static const char *const type_words[] = {"trainings", "workspaces", "inferences",
                                         "distributed workloads"};

static int refuse(struct api_req *r, const char *details)
{
    api_error(r, 400, "Bad request", details);
    return -1;
}

/* The asset of the family that ref (an id, or a name) names for the
 * project, into a: 0, or -1 answered 400 naming `where`. */
static int find(struct api_req *r, const char *family, json_t *ref,
                const struct api_project *project, const char *where, struct db_asset *a)
{
    const char *text = json_string_value(ref);
    char details[512];
    int rc = DB_ENOTFOUND;

    memset(a, 0, sizeof(*a));
    if (text && text[0]) {
        rc = db_asset_get(r->app->db, text, a);
        if (rc == DB_OK && (strcmp(a->family, family) != 0 || !api_scope_seen(a->scope, a->scope_id, project))) {
            db_asset_clear(a);
            rc = DB_ENOTFOUND;
        }
        if (rc == DB_ENOTFOUND)
            rc = db_asset_resolve(r->app->db, family, project->name, text, a);
    }
    if (rc == DB_OK)
        return 0;
    db_asset_clear(a);
    if (rc != DB_ENOTFOUND)
        return api_db_error(r, rc, "cannot read the assets"), -1;
    snprintf(details, sizeof(details), "%s: project %s sees no %s %s%.128s%s (by id or by name:"
             " its own, its department's or the tenant's)", where, project->name,
             strcmp(family, "template") == 0 ? "workload template" : family,
             text ? "'" : "", text ? text : "of that form", text ? "'" : "");
    return refuse(r, details);
}

/* An asset whose meta.workloadSupportedTypes says false for the type. */
static int serves(struct api_req *r, const struct db_asset *a, int type)
{
    json_t *s = a->supported[0] ? json_loads(a->supported, 0, NULL) : NULL;
    int no = json_is_false(json_object_get(s, type_keys[type]));
    char details[300];

    json_decref(s);
    if (!no)
        return 0;
    snprintf(details, sizeof(details), "%s %s does not serve %s (its"
             " meta.workloadSupportedTypes)", a->family, a->name, type_words[type]);
    return refuse(r, details);
}

/* Adds the asset's part to spec and its reference to refs (under key,
 * or appended to the list key). */
static int take(struct api_req *r, const struct db_asset *a, json_t *overrides, int type,
                json_t *spec, json_t *refs, const char *key, int listed)
{
    json_t *part, *ref;

    if (serves(r, a, type) != 0 || !(part = api_asset_part(r, a, overrides)))
        return -1;
    merge(spec, part);
    json_decref(part);
    ref = json_pack("{s:s, s:s, s:s}", "id", a->id, "name", a->name, "kind", a->kind);
    if (!listed) {
        json_object_set_new(refs, key, ref);
        return 0;
    }
    if (!json_is_array(json_object_get(refs, key)))
        json_object_set_new(refs, key, json_array());
    json_array_append_new(json_object_get(refs, key), ref);
    return 0;
}

/* One asset named by a single reference (environment, compute). */
static int take_one(struct api_req *r, json_t *ref, const char *family, int type,
                    const struct api_project *p, json_t *spec, json_t *refs)
{
    char where[64];
    struct db_asset a;
    int rc;

    if (!ref || json_is_null(ref))
        return 0;
    snprintf(where, sizeof(where), "assets.%s", family);
    if (find(r, family, ref, p, where, &a) != 0)
        return -1;
    rc = take(r, &a, NULL, type, spec, refs, family, 0);
    db_asset_clear(&a);
    return rc;
}

/* A list of references: datasources [{id or name, kind, overrides}],
 * credentials [id or name, or {id or name}]. */
static int take_list(struct api_req *r, json_t *list, const char *key, const char *family,
                     int type, const struct api_project *p, json_t *spec, json_t *refs)
{
    static const char *const entry_keys[] = {"id", "name", "kind", "overrides", NULL};
    char where[64];
    struct db_asset a;
    json_t *e, *ref;
    size_t i;
    int rc = 0;

    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list) || json_array_size(list) > 16) {
        snprintf(where, sizeof(where), "assets.%s: a list of at most 16", key);
        return refuse(r, where);
    }
    json_array_foreach(list, i, e) {
        snprintf(where, sizeof(where), "assets.%s[%zu]", key, i);
        if (json_is_object(e) && api_json_allow(r, e, entry_keys, where))
            return -1;
        ref = json_is_object(e) ? json_object_get(e, "id") : e;
        if (json_is_object(e) && !ref)
            ref = json_object_get(e, "name");
        if (find(r, family, ref, p, where, &a) != 0)
            return -1;
        if (json_is_string(json_object_get(e, "kind")) &&
            strcmp(json_string_value(json_object_get(e, "kind")), a.kind) != 0)
            rc = refuse(r, "assets: an entry's kind is not its asset's");
        if (rc == 0)
            rc = take(r, &a, json_object_get(e, "overrides"), type, spec, refs, key, 1);
        db_asset_clear(&a);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- the template ---- */

/* Template named by ref for the type: its stored {spec, assets} in *body,
 * its reference in refs. */
static int template_in(struct api_req *r, json_t *ref, int type, const struct api_project *p,
                       json_t **body, json_t *refs)
{
    static const char *const kinds[] = {"trainings", "workspaces", "inferences", "distributed"};
    struct db_asset a;
    char details[200];
    int rc = 0;

    *body = NULL;
    if (!ref || json_is_null(ref))
        return 0;
    if (find(r, "template", ref, p, "templateId", &a) != 0)
        return -1;
    if (strcmp(a.kind, "workload-template") == 0) {
        /* the asset form: {assets, specificEnv}, for the types it serves */
        rc = serves(r, &a, type);
    } else if (strcmp(a.kind, kinds[type]) != 0) {
        snprintf(details, sizeof(details), "templateId: template %s is for %s, not %s", a.name,
                 a.kind, type_words[type]);
        rc = refuse(r, details);
    }
    if (rc == 0 && !(*body = json_loads(a.spec, 0, NULL)))
        rc = (api_error(r, 500, "Internal error", "the template cannot be read"), -1);
    if (rc == 0 && json_object_get(*body, "specificEnv"))
        json_object_set(*body, "spec", json_object_get(*body, "specificEnv"));
    if (rc == 0)
        json_object_set_new(refs, "template", json_pack("{s:s, s:s}", "id", a.id, "name",
                                                        a.name));
    db_asset_clear(&a);
    return rc;
}

/* ---- the whole ---- */

static int assets_in(struct api_req *r, json_t *assets, int type, const struct api_project *p,
                     json_t *spec, json_t *refs)
{
    static const char *const keys[] = {"environment", "compute", "datasources", "credentials",
                                       NULL};

    if (!assets || json_is_null(assets))
        return 0;
    if (!json_is_object(assets))
        return refuse(r, "assets: an object {environment, compute, datasources, credentials}");
    if (api_json_allow(r, assets, keys, "assets") ||
        take_one(r, json_object_get(assets, "environment"), "environment", type, p, spec,
                 refs) ||
        take_one(r, json_object_get(assets, "compute"), "compute", type, p, spec, refs) ||
        take_list(r, json_object_get(assets, "datasources"), "datasources", "datasource", type,
                  p, spec, refs) ||
        take_list(r, json_object_get(assets, "credentials"), "credentials", "credential", type,
                  p, spec, refs))
        return -1;
    return 0;
}

int api_assets_expand(struct api_req *r, json_t *top, const struct api_project *project,
                      int type, json_t **refs)
{
    json_t *tid = json_object_get(top, "templateId"), *given = json_object_get(top, "assets");
    json_t *body = NULL, *assets = NULL, *spec = NULL, *in = json_object_get(top, "spec");
    int rc;

    *refs = NULL;
    if ((!tid || json_is_null(tid)) && (!given || json_is_null(given))) {
        json_object_del(top, "templateId");
        json_object_del(top, "assets");
        return 0;
    }
    if (in && !json_is_null(in) && !json_is_object(in))
        return refuse(r, "field 'spec' must be an object");
    *refs = json_object();
    spec = json_object();
    rc = template_in(r, tid, type, project, &body, *refs);
    if (rc == 0) {
        json_t *from = json_object_get(body, "assets");

        assets = json_is_object(from) ? json_deep_copy(from) : json_object();
        if (json_is_object(given))
            json_object_update(assets, given);
        else if (given && !json_is_null(given))
            rc = refuse(r, "assets: an object {environment, compute, datasources, credentials}");
    }
    if (rc == 0)
        rc = assets_in(r, assets, type, project, spec, *refs);
    if (rc == 0) {
        if (json_is_object(json_object_get(body, "spec")))
            merge(spec, json_object_get(body, "spec"));
        if (json_is_object(in))
            merge(spec, in);
        json_object_set(top, "spec", spec);
        json_object_del(top, "templateId");
        json_object_del(top, "assets");
    } else {
        json_decref(*refs);
        *refs = NULL;
    }
    json_decref(assets);
    json_decref(body);
    json_decref(spec);
    return rc;
}

int api_assets_note(struct api_req *r, struct db_workload *w, json_t *refs)
{
    json_t *spec;
    char *text;

    if (!refs || !w->spec)
        return 0;
    spec = json_loads(w->spec, 0, NULL);
    if (!json_is_object(spec)) {
        json_decref(spec);
        return 0;
    }
    json_object_set(spec, "assets", refs);
    text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(spec);
    if (!text)
        return api_error(r, 500, "Internal error", "out of memory"), -1;
    free(w->spec);
    w->spec = text;
    return 0;
}
