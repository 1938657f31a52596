/*
 * h_assets.c: /api/v1/asset/..., Run:ai's assets but generic secrets
 * (h_secrets.c): environments, compute resources, data sources,
 * credentials and registries, all through one table of kinds, kinds[]:
 * each row says its path, its family, the fields of its spec (shown,
 * sealed, or refused and why), its statuses, and how it becomes part of a
 * workload's spec. Also what a submission takes from the assets it names
 * (api_assets_expand()). Rights: assets.h.
 *
 * Invariants:
 *   1. A sealed field (a credential's password or key) is sealed
 *      (secretbox.c) before it reaches the store, opened only for an
 *      agent's heartbeat reply (h_agent.c through h_secrets.c), and never
 *      answered: a registry's password is answered masked.
 *   2. Every field of a kind's spec is one allot acts on: it becomes part
 *      of a workload's spec and is checked as that part when the asset is
 *      stored (api_wl_spec_part_check()); a field allot cannot act on is
 *      a 400 saying why; a kind allot cannot run (PVC, S3, NFS, config
 *      maps, secret volumes) is refused at creation, and its list is empty.
 *   3. An asset that a live workload, a template or another asset names
 *      is not deleted: the answer names them, in its details and as
 *      usedBy (asset_info.c).
 *   4. An asset the caller may not read answers 404, as if absent.
 */
#include "assets.h"
#include "scope.h"
#include "secrets.h"
#include "secretbox.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAX 4096
#define MASK "********"

/* ---- the table of kinds ---- */

enum field_type {
    FT_TEXT,   /* a non-empty string, answered */
    FT_SECRET, /* a non-empty string, sealed, never answered */
    FT_BOOL,   /* true or false */
    FT_ANY,    /* any JSON: checked as part of a workload's spec */
};

struct asset_field {
    const char *name;
    unsigned char type;       /* enum field_type */
    unsigned char required;
    const char *refused;      /* a value that is not null, false or empty is refused: why */
};

struct asset_kind;
/* The part of a workload's spec the asset gives (a new object), or NULL
 * after a 400 answered. overrides: the datasource's {containerPath}. */
typedef json_t *(*to_spec_fn)(struct api_req *r, const struct asset_kind *k,
                              const struct db_asset *a, json_t *spec, json_t *overrides);

struct asset_kind {
    const char *path;         /* under /api/v1/asset/ */
    const char *kind;         /* meta.kind */
    const char *family;       /* the store's family */
    const char *list_key;     /* its key in the family's list (datasource, credentials) */
    const char *word;         /* in messages */
    const struct asset_field *fields;
    const char *refused;      /* allot cannot run this kind: why (NULL: it can) */
    to_spec_fn to_spec;       /* NULL: the kind is no part of a spec (a registry) */
    short created, updated, deleted, busy; /* statuses */
    unsigned char meta_only;  /* an update changes meta.description only (credentials) */
};

#define NOT_AS_AGENT "pods run as the agent's user"

static const struct asset_field env_fields[] = {
    {"image", FT_TEXT, 0, NULL},
    {"imagePullPolicy", FT_TEXT, 0, NULL},
    {"command", FT_TEXT, 0, NULL},
    {"args", FT_TEXT, 0, NULL},
    {"workingDir", FT_TEXT, 0, NULL},
    {"environmentVariables", FT_ANY, 0, NULL},
    {"runAsUid", FT_ANY, 0, NOT_AS_AGENT},
    {"runAsGid", FT_ANY, 0, NOT_AS_AGENT},
    {"supplementalGroups", FT_ANY, 0, NOT_AS_AGENT},
    {"allowPrivilegeEscalation", FT_ANY, 0, NOT_AS_AGENT},
    {"capabilities", FT_ANY, 0, NOT_AS_AGENT},
    {"hostIpc", FT_ANY, 0, NOT_AS_AGENT},
    {"hostNetwork", FT_ANY, 0, NOT_AS_AGENT},
    {"readOnlyRootFilesystem", FT_ANY, 0, NOT_AS_AGENT},
    {"runAsNonRoot", FT_ANY, 0, NOT_AS_AGENT},
    {"seccompProfileType", FT_ANY, 0, NOT_AS_AGENT},
    {"uidGidSource", FT_ANY, 0, NOT_AS_AGENT},
    {"createHomeDir", FT_ANY, 0, NOT_AS_AGENT},
    {"overrideUidGidInWorkspace", FT_ANY, 0, NOT_AS_AGENT},
    {"probes", FT_ANY, 0, "allot runs no probes"},
    {"stdin", FT_ANY, 0, "pods are not attached to a terminal"},
    {"tty", FT_ANY, 0, "pods are not attached to a terminal"},
    {"connections", FT_ANY, 0, "give the tools' ports in the workload's spec.ports"},
    {NULL, 0, 0, NULL},
};

static const struct asset_field compute_fields[] = {
    {"gpuDevicesRequest", FT_ANY, 0, NULL},  {"gpuRequestType", FT_ANY, 0, NULL},
    {"gpuPortionRequest", FT_ANY, 0, NULL},  {"gpuPortionLimit", FT_ANY, 0, NULL},
    {"gpuMemoryRequest", FT_ANY, 0, NULL},   {"gpuMemoryLimit", FT_ANY, 0, NULL},
    {"cpuCoreRequest", FT_ANY, 0, NULL},     {"cpuCoreLimit", FT_ANY, 0, NULL},
    {"cpuMemoryRequest", FT_ANY, 0, NULL},   {"cpuMemoryLimit", FT_ANY, 0, NULL},
    {"largeShmRequest", FT_ANY, 0, NULL},    {"extendedResources", FT_ANY, 0, NULL},
    {NULL, 0, 0, NULL},
};

static const struct asset_field host_path_fields[] = {
    {"path", FT_TEXT, 1, NULL},
    {"mountPath", FT_TEXT, 1, NULL},
    {"readOnly", FT_BOOL, 0, NULL},
    {"mountPropagation", FT_TEXT, 0, NULL},
    {NULL, 0, 0, NULL},
};

#define PRIVATE_GIT "credentials for a private repository are not supported; the agent clones " \
                    "public or local repositories"
static const struct asset_field git_fields[] = {
    {"repository", FT_TEXT, 1, NULL},
    {"branch", FT_TEXT, 0, NULL},
    {"revision", FT_TEXT, 0, NULL},
    {"path", FT_TEXT, 1, NULL},
    {"passwordAssetId", FT_ANY, 0, PRIVATE_GIT},
    {"credentialId", FT_ANY, 0, PRIVATE_GIT},
    {NULL, 0, 0, NULL},
};

#define NO_CLUSTER_SECRET "allot has no cluster secrets: give the values"
static const struct asset_field password_fields[] = {
    {"user", FT_TEXT, 1, NULL},
    {"password", FT_SECRET, 1, NULL},
    {"existingSecretName", FT_ANY, 0, NO_CLUSTER_SECRET},
    {NULL, 0, 0, NULL},
};

static const struct asset_field access_key_fields[] = {
    {"accessKeyId", FT_SECRET, 1, NULL},
    {"secretAccessKey", FT_SECRET, 1, NULL},
    {"existingSecretName", FT_ANY, 0, NO_CLUSTER_SECRET},
    {NULL, 0, 0, NULL},
};

static const struct asset_field docker_fields[] = {
    {"url", FT_TEXT, 1, NULL},
    {"user", FT_TEXT, 1, NULL},
    {"password", FT_SECRET, 1, NULL},
    {"existingSecretName", FT_ANY, 0, NO_CLUSTER_SECRET},
    {NULL, 0, 0, NULL},
};

static const struct asset_field ngc_fields[] = {
    {"ngc_api_key", FT_SECRET, 1, NULL},
    {NULL, 0, 0, NULL},
};

static const struct asset_field registry_fields[] = {
    {"url", FT_TEXT, 1, NULL},
    {"credentialKind", FT_TEXT, 1, NULL},
    {"user", FT_TEXT, 1, NULL},
    {"password", FT_SECRET, 1, NULL},
    {NULL, 0, 0, NULL},
};

/* The asset form of a workload template: its assets by id (AssetsIds) and
 * the specific values over them (SpecificRunParams). */
static const struct asset_field template_fields[] = {
    {"assets", FT_ANY, 1, NULL},
    {"specificEnv", FT_ANY, 0, NULL},
    {"workloadVolumes", FT_ANY, 0, "allot has no workload volumes"},
    {NULL, 0, 0, NULL},
};

static const struct asset_field no_fields[] = {{NULL, 0, 0, NULL}};

static json_t *env_to_spec(struct api_req *r, const struct asset_kind *k,
                           const struct db_asset *a, json_t *spec, json_t *overrides);
static json_t *compute_to_spec(struct api_req *r, const struct asset_kind *k,
                               const struct db_asset *a, json_t *spec, json_t *overrides);
static json_t *storage_to_spec(struct api_req *r, const struct asset_kind *k,
                               const struct db_asset *a, json_t *spec, json_t *overrides);
static json_t *credential_to_spec(struct api_req *r, const struct asset_kind *k,
                                  const struct db_asset *a, json_t *spec, json_t *overrides);

static const struct asset_kind kinds[] = {
    {"environment", "environment", "environment", NULL, "environment", env_fields, NULL,
     env_to_spec, 202, 202, 202, 403, 0},
    {"compute", "compute", "compute", NULL, "compute resource", compute_fields, NULL,
     compute_to_spec, 202, 202, 202, 403, 0},
    {"datasource/host-path", "hostPath", "datasource", "hostPath", "host path",
     host_path_fields, NULL, storage_to_spec, 202, 202, 202, 412, 0},
    {"datasource/git", "git", "datasource", "git", "git repository", git_fields, NULL,
     storage_to_spec, 202, 202, 202, 403, 0},
    {"datasource/nfs", "nfs", "datasource", "nfs", "NFS volume", no_fields,
     "the agents do not mount NFS: mount the export on the nodes and make it a host-path data"
     " source", NULL, 202, 202, 202, 403, 0},
    {"datasource/pvc", "pvc", "datasource", "pvc", "PVC", no_fields,
     "allot has no persistent volume claims (no Kubernetes): use a host-path data source", NULL,
     202, 202, 202, 403, 0},
    {"datasource/s3", "s3", "datasource", "s3", "S3 bucket", no_fields,
     "the agents have no S3 client: copy the data to the nodes and use a host-path data source",
     NULL, 202, 202, 202, 403, 0},
    {"datasource/config-map", "config-map", "datasource", "config_map", "config map", no_fields,
     "allot has no config maps: give the values as environment variables", NULL, 202, 202, 202,
     403, 0},
    {"datasource/secrets", "secret-volume", "datasource", "secret", "secret volume", no_fields,
     "allot mounts no secret volumes: give secrets as environment variables", NULL, 202, 202,
     202, 403, 0},
    {"credentials/password", "password", "credential", "password", "password",
     password_fields, NULL, credential_to_spec, 202, 202, 202, 412, 1},
    {"credentials/access-key", "accessKey", "credential", "accessKey", "access key",
     access_key_fields, NULL, credential_to_spec, 202, 202, 202, 412, 1},
    {"credentials/docker-registry", "dockerRegistry", "credential", "dockerRegistry",
     "docker registry credential", docker_fields, NULL, credential_to_spec, 202, 202, 202, 412,
     1},
    {"credentials/ngc-api-key", "ngcApiKey", "credential", "ngcApiKey", "NGC API key",
     ngc_fields, NULL, credential_to_spec, 202, 202, 204, 412, 1},
    {"workload-template", "workload-template", "template", NULL, "workload template",
     template_fields, NULL, NULL, 202, 202, 202, 403, 0},
    {"registries", "registry", "registry", NULL, "registry", registry_fields, NULL, NULL, 201,
     200, 204, 403, 0},
};
#define N_KINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

/* The kind of the request's path (/api/v1/asset/<path>[/...]), or NULL. */
static const struct asset_kind *kind_of_path(const char *path)
{
    static const char prefix[] = "/api/v1/asset/";
    const char *p = path;
    int i;

    if (strncmp(p, prefix, sizeof(prefix) - 1) != 0)
        return NULL;
    p += sizeof(prefix) - 1;
    for (i = 0; i < N_KINDS; i++) {
        size_t n = strlen(kinds[i].path);
        if (strncmp(p, kinds[i].path, n) == 0 && (p[n] == 0 || p[n] == '/'))
            return &kinds[i];
    }
    return NULL;
}

static const struct asset_kind *kind_of_asset(const struct db_asset *a)
{
    int i;

    for (i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i].kind, a->kind) == 0)
            return &kinds[i];
    return NULL;
}

static unsigned read_perm(const struct asset_kind *k)
{
    return strcmp(k->family, "credential") == 0 ? API_WL_WRITE : API_WL_READ;
}

static int may(struct api_req *r, const struct db_asset *a, unsigned perm)
{
    return api_scope_may(r, a->scope, a->scope_id, perm);
}

static int refuse(struct api_req *r, const char *details)
{
    api_error(r, 400, "Bad request", details);
    return -1;
}

/* ---- answers ---- */

/* The stored spec, with what its kind answers besides: a credential's
 * keyId, a registry's password masked. */
/* {id, name} of the asset of that id, with its kind when kind is set. */
static json_t *ref_json(struct api_req *r, json_t *id, int kind)
{
    struct db_asset a;
    json_t *out;

    memset(&a, 0, sizeof(a));
    if (!json_is_string(id) || db_asset_get(r->app->db, json_string_value(id), &a) != DB_OK)
        snprintf(a.name, sizeof(a.name), "-");
    out = json_pack("{s:O, s:s}", "id", id, "name", a.name);
    if (kind && a.kind[0])
        json_object_set_new(out, "kind", json_string(a.kind));
    db_asset_clear(&a);
    return out;
}

/* A template's assets by id, answered as Run:ai's AssetsRef: each with its
 * name (and a data source's kind). */
static void template_refs(struct api_req *r, json_t *spec)
{
    json_t *ids = json_object_get(spec, "assets"), *refs = json_object(), *e;
    size_t i;

    json_object_set_new(refs, "environment", ref_json(r, json_object_get(ids, "environment"), 0));
    if (json_is_string(json_object_get(ids, "compute")))
        json_object_set_new(refs, "compute", ref_json(r, json_object_get(ids, "compute"), 0));
    if (json_is_array(json_object_get(ids, "datasources"))) {
        json_object_set_new(refs, "datasources", json_array());
        json_array_foreach(json_object_get(ids, "datasources"), i, e)
            json_array_append_new(json_object_get(refs, "datasources"),
                                  ref_json(r, json_object_get(e, "id"), 1));
    }
    json_object_set_new(spec, "assets", refs);
}

static json_t *spec_json(struct api_req *r, const struct asset_kind *k, const struct db_asset *a)
{
    json_t *spec = json_loads(a->spec ? a->spec : "{}", 0, NULL);

    if (!json_is_object(spec)) {
        json_decref(spec);
        spec = json_object();
    }
    if (strcmp(k->family, "template") == 0)
        template_refs(r, spec);
    if (strcmp(k->family, "credential") == 0)
        json_object_set_new(spec, "keyId", json_integer(1));
    if (strcmp(k->family, "registry") == 0)
        json_object_set_new(spec, "password", json_string(MASK));
    return spec;
}

static json_t *meta_json(struct api_req *r, const struct db_asset *a)
{
    json_t *meta = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:s, s:I}", "name", a->name,
                             "scope", a->scope, "id", a->id, "kind", a->kind, "createdAt",
                             api_time(a->created_at), "createdBy",
                             a->created_by[0] ? a->created_by : "-", "updatedAt",
                             api_time(a->updated_at), "updatedBy",
                             a->updated_by[0] ? a->updated_by : "-", "updateCount",
                             (json_int_t)a->update_count);

    json_object_set_new(meta, "description",
                        a->description[0] ? json_string(a->description) : json_null());
    if (a->supported[0])
        json_object_set_new(meta, "workloadSupportedTypes", json_loads(a->supported, 0, NULL));
    api_scope_meta(r, meta, a->scope, a->scope_id);
    return meta;
}

static json_t *asset_json(struct api_req *r, const struct asset_kind *k,
                          const struct db_asset *a)
{
    return json_pack("{s:o, s:o}", "meta", meta_json(r, a), "spec", spec_json(r, k, a));
}

/* ---- lists ---- */

/* The entries of family (kind NULL) or of kind k that the caller may read
 * and the filters pass, with what the query asks added (asset_info.c); a
 * family's entries give their spec under its list key. */
static int list_into(struct api_req *r, const char *family, const struct asset_kind *k,
                     json_t *entries)
{
    struct api_scope_filter f;
    struct api_asset_q q;
    struct db_asset *rows = NULL;
    json_t *e;
    int n = 0, i, rc = 0;

    if (api_scope_filter_in(r, &f) != 0 || api_asset_q_in(r, &q, 0) != 0)
        return -1;
    if ((rc = db_asset_list(r->app->db, family, &rows, &n)) != DB_OK) {
        api_asset_q_free(&q);
        return api_db_error(r, rc, "cannot list the assets"), -1;
    }
    for (i = 0; i < n && rc == 0; i++) {
        const struct asset_kind *ak = kind_of_asset(&rows[i]);
        if (!ak || (k && ak != k) ||
            !api_scope_filter_pass(&f, rows[i].name, rows[i].scope, rows[i].scope_id) ||
            !api_asset_q_pass(&q, &rows[i]) || !may(r, &rows[i], read_perm(ak)))
            continue;
        e = k ? asset_json(r, ak, &rows[i])
              : json_pack("{s:o, s:{s:o}}", "meta", meta_json(r, &rows[i]), "spec",
                          ak->list_key, spec_json(r, ak, &rows[i]));
        rc = api_asset_q_add(r, &q, &rows[i], e);
        json_array_append_new(entries, e);
    }
    db_assets_free(rows, n);
    api_asset_q_free(&q);
    return rc;
}

void api_h_assets_list(struct api_req *r)
{
    const struct asset_kind *k = kind_of_path(r->path);
    json_t *entries = json_array();

    if (!k)
        api_error(r, 404, "Not found", "no such kind of asset");
    else if (list_into(r, k->family, k, entries) == 0) {
        api_reply(r, 200, json_pack("{s:O}", "entries", entries));
    }
    json_decref(entries);
}

void api_h_assets_family_list(struct api_req *r)
{
    int credentials = strstr(r->path, "/credentials") != NULL;
    json_t *entries = json_array();

    if (list_into(r, credentials ? "credential" : "datasource", NULL, entries) == 0 &&
        (!credentials || api_secrets_list_into(r, entries) == 0))
        api_reply(r, 200, json_pack("{s:O}", "entries", entries));
    json_decref(entries);
}

/* ---- reading a spec ---- */

/* A value that asks for nothing: null, false, "", [] or {}. */
static int says_nothing(json_t *v)
{
    return !v || json_is_null(v) || json_is_false(v) ||
           (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0) ||
           (json_is_object(v) && json_object_size(v) == 0);
}

static int field_error(struct api_req *r, const char *name, const char *what)
{
    char details[400];

    snprintf(details, sizeof(details), "spec.%s %s", name, what);
    return refuse(r, details);
}

/* One field of in into spec (shown) or sealed (its value sealed under
 * the asset's id). */
static int field_in(struct api_req *r, const struct asset_field *f, json_t *v, const char *id,
                    json_t *spec, json_t *sealed)
{
    char *box;

    if (json_is_null(v) || f->refused)
        return 0;
    if (f->type == FT_BOOL && !json_is_boolean(v))
        return field_error(r, f->name, "must be true or false");
    if ((f->type == FT_TEXT || f->type == FT_SECRET) &&
        (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > VALUE_MAX ||
         strlen(json_string_value(v)) != json_string_length(v)))
        return field_error(r, f->name, "must be a non-empty string of at most 4096 bytes");
    if (f->type != FT_SECRET)
        return json_object_set(spec, f->name, v);
    box = api_secrets_seal(id, f->name, json_string_value(v), json_string_length(v));
    if (!box)
        return api_error(r, 500, "Internal error", "cannot seal the value"), -1;
    json_object_set_new(sealed, f->name, json_string(box));
    free(box);
    return 0;
}

/* A refused field's answer: its name and why. */
static int refused_field(struct api_req *r, const struct asset_field *f)
{
    char details[400];

    snprintf(details, sizeof(details), "spec.%s is not supported: %s", f->name, f->refused);
    return refuse(r, details);
}

/* in (the request's spec) into a->spec and a->sealed, by the kind's
 * fields; then checked as the part of a workload's spec it gives. */
static int spec_in(struct api_req *r, const struct asset_kind *k, json_t *in,
                   struct db_asset *a)
{
    json_t *spec = json_object(), *sealed = json_object(), *part;
    const char *key;
    json_t *v;
    char details[160];
    int i, rc = 0;

    if (in && !json_is_null(in) && !json_is_object(in))
        rc = refuse(r, "spec must be an object");
    json_object_foreach(rc == 0 ? in : NULL, key, v) {
        for (i = 0; k->fields[i].name && strcmp(k->fields[i].name, key) != 0; i++)
            ;
        if (!k->fields[i].name) {
            snprintf(details, sizeof(details), "unknown field 'spec.%.64s' of a %s", key,
                     k->word);
            rc = refuse(r, details);
        } else if (k->fields[i].refused && !says_nothing(v)) {
            rc = refused_field(r, &k->fields[i]);
        } else {
            rc = field_in(r, &k->fields[i], v, a->id, spec, sealed);
        }
        if (rc)
            break;
    }
    for (i = 0; rc == 0 && k->fields[i].name; i++)
        if (k->fields[i].required && !json_object_get(spec, k->fields[i].name) &&
            !json_object_get(sealed, k->fields[i].name))
            rc = field_error(r, k->fields[i].name, "is required");
    if (rc == 0 && strcmp(k->kind, "registry") == 0 &&
        strcmp(json_string_value(json_object_get(spec, "credentialKind")), "password") != 0)
        rc = field_error(r, "credentialKind", "must be password");
    if (rc == 0 && strcmp(k->family, "template") == 0)
        rc = !json_is_string(json_object_get(json_object_get(spec, "assets"), "environment"))
                 ? field_error(r, "assets.environment", "is required: an environment's id")
                 : api_template_check(r, json_object_get(spec, "specificEnv"),
                                      json_object_get(spec, "assets"), DB_TRAINING);
    if (rc == 0 && k->to_spec) {
        part = k->to_spec(r, k, a, spec, NULL);
        rc = part ? api_wl_spec_part_check(r, part, DB_TRAINING) : -1;
        json_decref(part);
    }
    if (rc == 0) {
        a->spec = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
        a->sealed = json_dumps(sealed, JSON_COMPACT | JSON_SORT_KEYS);
        if (!a->spec || !a->sealed)
            rc = (api_error(r, 500, "Internal error", "out of memory"), -1);
    }
    json_decref(spec);
    json_decref(sealed);
    return rc;
}

/* meta.workloadSupportedTypes: which workload types may take the asset. */
static int supported_in(struct api_req *r, json_t *meta, struct db_asset *a)
{
    static const char *const keys[] = {"inference", "workspace", "training", "distributed",
                                       "distFramework", NULL};
    json_t *v = json_object_get(meta, "workloadSupportedTypes"), *e;
    const char *key;
    char *text;

    a->supported[0] = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v) || api_json_allow(r, v, keys, "meta.workloadSupportedTypes"))
        return json_is_object(v) ? -1 : refuse(r, "meta.workloadSupportedTypes: an object");
    json_object_foreach(v, key, e) {
        if (strcmp(key, "distFramework") == 0 ? !json_is_string(e) && !json_is_null(e)
                                              : !json_is_boolean(e) && !json_is_null(e))
            return refuse(r, "meta.workloadSupportedTypes: true or false per type, and"
                             " distFramework MPI, PyTorch, TF or XGBoost");
    }
    text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text || strlen(text) >= sizeof(a->supported)) {
        free(text);
        return refuse(r, "meta.workloadSupportedTypes is too long");
    }
    memcpy(a->supported, text, strlen(text) + 1);
    free(text);
    return 0;
}

static int meta_in(struct api_req *r, json_t *meta, struct db_asset *a, int creating)
{
    static const char *const create_keys[] = {"name", "description", "scope", "clusterId",
                                              "departmentId", "projectId", "autoDelete",
                                              "workloadSupportedTypes", "private", NULL};
    static const char *const update_keys[] = {"name", "description", NULL};
    struct api_scope s;
    char cid[64] = "";

    if (!json_is_object(meta))
        return refuse(r, "meta: an object {name, scope}");
    if (api_json_allow(r, meta, creating ? create_keys : update_keys, "meta") ||
        api_json_str(r, meta, "name", a->name, sizeof(a->name), 1) ||
        api_json_text(r, meta, "description", a->description, sizeof(a->description), 0,
                      API_TEXT_FREE))
        return -1;
    if (!api_valid_name(a->name))
        return refuse(r, "meta.name: lowercase letters, digits and '-', at most 63");
    if (!creating)
        return 0;
    if (api_json_str(r, meta, "clusterId", cid, sizeof(cid), 0) || supported_in(r, meta, a))
        return -1;
    if (!says_nothing(json_object_get(meta, "autoDelete")))
        return refuse(r, "meta.autoDelete is not supported: an asset stays until deleted");
    if (!says_nothing(json_object_get(meta, "private")))
        return refuse(r, "meta.private is not supported: an asset belongs to its scope");
    if (cid[0] && strcmp(cid, API_CLUSTER_ID) != 0)
        return refuse(r, "meta.clusterId names no cluster");
    if (api_scope_in(r, meta, &s, a->family) != 0)
        return -1;
    snprintf(a->scope, sizeof(a->scope), "%s", s.scope);
    snprintf(a->scope_id, sizeof(a->scope_id), "%s", s.scope_id);
    return 0;
}

/* ---- create ---- */

static void stored(struct api_req *r, const struct asset_kind *k, struct db_asset *a, int rc,
                   int status)
{
    char details[200];

    if (rc == DB_OK) {
        api_reply(r, status, asset_json(r, k, a));
        return;
    }
    if (rc == DB_ECONFLICT) {
        snprintf(details, sizeof(details), "an asset of the %s family named %s exists in that"
                 " scope", a->family, a->name);
        api_error(r, 409, "Conflict", details);
    } else if (rc == DB_ENOTFOUND) {
        api_error(r, 404, "Not found", "no such asset");
    } else {
        api_db_error(r, rc, "cannot store the asset");
    }
}

void api_h_asset_create(struct api_req *r)
{
    static const char *const top_keys[] = {"meta", "spec", NULL};
    const struct asset_kind *k = kind_of_path(r->path);
    struct db_asset a;
    char details[300];
    json_t *o = NULL;

    memset(&a, 0, sizeof(a));
    if (!k) {
        api_error(r, 404, "Not found", "no such kind of asset");
        return;
    }
    snprintf(a.family, sizeof(a.family), "%s", k->family);
    snprintf(a.kind, sizeof(a.kind), "%s", k->kind);
    o = api_body_object(r);
    if (!o)
        return;
    if (k->refused) {
        snprintf(details, sizeof(details), "a %s data source is not supported: %s", k->word,
                 k->refused);
        api_error(r, 400, "Bad request", details);
    } else if (strcmp(k->family, "credential") == 0 || strcmp(k->family, "registry") == 0) {
        if (!api_secrets_ready())
            api_error(r, 503, "Service unavailable", "allotd has no secrets key");
    }
    if (r->status == 0 &&
        (api_json_allow(r, o, top_keys, "") || api_secretbox_uuid(a.id) != 0 ||
         meta_in(r, json_object_get(o, "meta"), &a, 1) ||
         spec_in(r, k, json_object_get(o, "spec"), &a)) &&
        r->status == 0)
        api_error(r, 500, "Internal error", "cannot make an id");
    json_decref(o);
    if (r->status == 0) {
        snprintf(a.created_by, sizeof(a.created_by), "%s", r->who.user.name);
        stored(r, k, &a, db_asset_insert(r->app->db, &a), k->created);
    }
    db_asset_clear(&a);
}

/* ---- one ---- */

int api_asset_read(struct api_req *r, unsigned perm, struct db_asset *a)
{
    int rc = db_asset_get(r->app->db, r->params[0], a);

    if (api_scope_found(r, rc, rc == DB_OK && may(r, a, perm), "asset") == 0)
        return 0;
    db_asset_clear(a);
    return -1;
}

/* The asset of the path's id and kind that the caller may read. */
static const struct asset_kind *asset_in(struct api_req *r, struct db_asset *a)
{
    const struct asset_kind *k = kind_of_path(r->path);

    memset(a, 0, sizeof(*a));
    if (!k || api_asset_read(r, read_perm(k), a) != 0) {
        if (!k)
            api_error(r, 404, "Not found", "no such kind of asset");
        return NULL;
    }
    if (kind_of_asset(a) == k)
        return k;
    db_asset_clear(a);
    api_error(r, 404, "Not found", "no such asset");
    return NULL;
}

/* One asset, with what the query asks (usageInfo's default true: an
 * asset's own answer names what uses it). */
void api_h_asset_get(struct api_req *r)
{
    struct api_asset_q q;
    struct db_asset a;
    const struct asset_kind *k = asset_in(r, &a);
    json_t *o;

    if (!k)
        return;
    if (api_asset_q_in(r, &q, 1) == 0) {
        o = asset_json(r, k, &a);
        if (api_asset_q_add(r, &q, &a, o) == 0)
            api_reply(r, 200, o);
        else
            json_decref(o);
    }
    api_asset_q_free(&q);
    db_asset_clear(&a);
}

/* An update's body into a: meta's name and description, and the spec
 * (credentials: the description only, as Run:ai's). */
static int update_in(struct api_req *r, const struct asset_kind *k, json_t *o,
                     struct db_asset *a)
{
    static const char *const top_keys[] = {"meta", "spec", NULL};
    static const char *const meta_only[] = {"meta", NULL};
    static const char *const desc_keys[] = {"description", NULL};
    json_t *meta = json_object_get(o, "meta");

    if (api_json_allow(r, o, k->meta_only ? meta_only : top_keys, ""))
        return -1;
    if (k->meta_only) {
        a->description[0] = 0;
        if (meta && !json_is_null(meta) &&
            (!json_is_object(meta) ? refuse(r, "meta: an object {description}")
                                   : api_json_allow(r, meta, desc_keys, "meta") ||
                                         api_json_text(r, meta, "description", a->description,
                                                       sizeof(a->description), 0,
                                                       API_TEXT_FREE)))
            return -1;
        return 0;
    }
    a->description[0] = 0;
    if (meta_in(r, meta, a, 0))
        return -1;
    if (strcmp(k->family, "registry") == 0 && !json_object_get(o, "spec"))
        return 0; /* a registry's meta alone: its spec stays */
    free(a->spec);
    free(a->sealed);
    a->spec = a->sealed = NULL;
    return spec_in(r, k, json_object_get(o, "spec"), a);
}

void api_h_asset_update(struct api_req *r)
{
    struct db_asset a;
    const struct asset_kind *k = asset_in(r, &a);
    json_t *o;
    int rc;

    if (!k)
        return;
    if (!may(r, &a, API_ORG_WRITE)) {
        db_asset_clear(&a);
        api_error(r, 403, "Forbidden", "the caller may not change this asset");
        return;
    }
    o = api_body_object(r);
    if (o && update_in(r, k, o, &a) == 0) {
        snprintf(a.updated_by, sizeof(a.updated_by), "%s", r->who.user.name);
        rc = db_asset_update(r->app->db, &a);
        db_asset_clear(&a);
        if (rc == DB_OK)
            rc = db_asset_get(r->app->db, r->params[0], &a);
        if (rc == DB_ECONFLICT) /* a name taken: the one refusal every PUT lists */
            api_error(r, 400, "Bad request", "an asset of that family and name exists in its"
                                             " scope");
        else
            stored(r, k, &a, rc, k->updated);
    }
    json_decref(o);
    db_asset_clear(&a);
}

/* ---- delete: an asset in use stays ---- */

static void deleted(struct api_req *r, int status)
{
    if (status == 204)
        api_reply_deleted(r, DB_OK, NULL);
    else
        api_reply(r, status, json_pack("{s:i, s:s}", "code", status, "message",
                                       "Request has been accepted."));
}

/* The refusal of deleting an asset in use: the usual error, with usedBy
 * naming what uses it. */
static void in_use(struct api_req *r, const struct asset_kind *k, const struct db_asset *a,
                   const char *users, json_t *by)
{
    char details[1024];

    snprintf(details, sizeof(details), "%s %s is in use by %s; delete them or stop naming it"
             " first", k->word, a->name, users);
    api_reply(r, k->busy, json_pack("{s:i, s:s, s:s, s:O}", "code", k->busy, "message",
                                    k->busy == 412 ? "Precondition failed" : "Forbidden",
                                    "details", details, "usedBy", by));
}

void api_h_asset_delete(struct api_req *r)
{
    struct db_asset a;
    const struct asset_kind *k = asset_in(r, &a);
    char users[768];
    json_t *by = NULL;
    int busy, rc;

    if (!k)
        return;
    if (!may(r, &a, API_ORG_WRITE)) {
        db_asset_clear(&a);
        api_error(r, 403, "Forbidden", "the caller may not delete this asset");
        return;
    }
    busy = api_asset_usage(r, &a, &by, users, sizeof(users));
    if (busy == 1) {
        in_use(r, k, &a, users, by);
    } else if (busy < 0) {
        api_db_error(r, busy, "cannot read what uses the asset");
    } else if ((rc = db_asset_delete(r->app->db, a.id)) == DB_OK) {
        deleted(r, k->deleted);
    } else if (rc == DB_ENOTFOUND) {
        api_error(r, 404, "Not found", "no such asset");
    } else {
        api_db_error(r, rc, "cannot delete the asset");
    }
    json_decref(by);
    db_asset_clear(&a);
}

/* ---- what an asset gives a workload's spec ---- */

static void copy_fields(json_t *to, json_t *from, const char *const *names)
{
    int i;

    for (i = 0; names[i]; i++)
        if (json_object_get(from, names[i]))
            json_object_set(to, names[i], json_object_get(from, names[i]));
}

/* An environment variable of an environment: {name, value}, a
 * podFieldRef, or {credential: {assetId, key}}, which becomes the
 * workload's {secret: {name, key}} of that credential. */
static int env_entry(struct api_req *r, json_t *e, size_t i, json_t *out)
{
    static const char *const keys[] = {"name", "value", "credential", "configMap",
                                       "podFieldRef", "exclude", "description", NULL};
    static const char *const plain[] = {"name", "value", "podFieldRef", "exclude", NULL};
    json_t *cred = json_object_get(e, "credential"), *o;
    const char *id = json_string_value(json_object_get(cred, "assetId"));
    struct db_asset c;
    char where[64];

    snprintf(where, sizeof(where), "spec.environmentVariables[%zu]", i);
    if (!json_is_object(e) || api_json_allow(r, e, keys, where))
        return json_is_object(e) ? -1 : field_error(r, "environmentVariables", "entries are"
                                                                              " objects");
    if (!says_nothing(json_object_get(e, "configMap")))
        return field_error(r, "environmentVariables", "configMap is not supported: allot has"
                                                      " no config maps");
    o = json_object();
    copy_fields(o, e, plain);
    if (!says_nothing(cred)) {
        memset(&c, 0, sizeof(c));
        if (!id || db_asset_get(r->app->db, id, &c) != DB_OK ||
            strcmp(c.family, "credential") != 0) {
            db_asset_clear(&c);
            json_decref(o);
            return field_error(r, "environmentVariables", "credential.assetId names no"
                                                          " credential");
        }
        json_object_set_new(o, "secret", json_pack("{s:s, s:O}", "name", c.name, "key",
                                                   json_object_get(cred, "key")));
        db_asset_clear(&c);
    }
    json_array_append_new(out, o);
    return 0;
}

static json_t *env_to_spec(struct api_req *r, const struct asset_kind *k,
                           const struct db_asset *a, json_t *spec, json_t *overrides)
{
    static const char *const names[] = {"image", "imagePullPolicy", "command", "args",
                                        "workingDir", NULL};
    json_t *out = json_object(), *env = json_object_get(spec, "environmentVariables"), *e;
    json_t *list = json_array();
    size_t i;

    (void)k, (void)a, (void)overrides;
    copy_fields(out, spec, names);
    if (env && !json_is_null(env) && !json_is_array(env))
        field_error(r, "environmentVariables", "must be an array of {name, value}");
    json_array_foreach(json_is_array(env) ? env : NULL, i, e)
        if (env_entry(r, e, i, list) != 0)
            break;
    if (r->status) {
        json_decref(list);
        json_decref(out);
        return NULL;
    }
    if (json_array_size(list))
        json_object_set(out, "environmentVariables", list);
    json_decref(list);
    return out;
}

static json_t *compute_to_spec(struct api_req *r, const struct asset_kind *k,
                               const struct db_asset *a, json_t *spec, json_t *overrides)
{
    (void)r, (void)k, (void)a, (void)overrides;
    return json_pack("{s:O}", "compute", spec);
}

/* A host path or a git repository: one entry of spec.storage named after
 * the asset; overrides.containerPath moves where it is mounted. */
static json_t *storage_to_spec(struct api_req *r, const struct asset_kind *k,
                               const struct db_asset *a, json_t *spec, json_t *overrides)
{
    static const char *const host_path[] = {"path", "mountPath", "readOnly",
                                            "mountPropagation", NULL};
    static const char *const git[] = {"repository", "branch", "revision", "path", NULL};
    int is_git = strcmp(k->kind, "git") == 0;
    json_t *e = json_pack("{s:s}", "name", a->name[0] ? a->name : "asset");
    json_t *to = json_object_get(overrides, "containerPath");

    copy_fields(e, spec, is_git ? git : host_path);
    if (to && !json_is_null(to)) {
        if (!json_is_string(to)) {
            json_decref(e);
            refuse(r, "assets.datasources[].overrides.containerPath: a path");
            return NULL;
        }
        json_object_set(e, is_git ? "path" : "mountPath", to);
    }
    return json_pack("{s:{s:[o]}}", "storage", is_git ? "git" : "hostPath", e);
}

/* The environment variable of a credential's key: NAME_KEY in capitals,
 * '-' as '_' (db-cred's password: DB_CRED_PASSWORD). */
static void env_name(char *out, size_t len, const char *asset, const char *key)
{
    size_t i;

    snprintf(out, len, "%s_%s", asset, key);
    for (i = 0; out[i]; i++)
        out[i] = out[i] == '-' ? '_' : (char)toupper((unsigned char)out[i]);
}

/* A credential named in a submission: each of its keys as an environment
 * variable taken from it. */
static json_t *credential_to_spec(struct api_req *r, const struct asset_kind *k,
                                  const struct db_asset *a, json_t *spec, json_t *overrides)
{
    json_t *env = json_array();
    char name[2 * DB_NAME_LEN];
    int i;

    (void)r, (void)spec, (void)overrides;
    for (i = 0; k->fields[i].name; i++) {
        if (k->fields[i].refused)
            continue;
        env_name(name, sizeof(name), a->name, k->fields[i].name);
        json_array_append_new(env, json_pack("{s:s, s:{s:s, s:s}}", "name", name, "secret",
                                             "name", a->name, "key", k->fields[i].name));
    }
    return json_pack("{s:o}", "environmentVariables", env);
}

/* ---- credentials' values for pods ---- */

int api_credential_value(struct db *db, const char *project, const char *name, const char *key,
                         char **value)
{
    struct db_asset a;
    json_t *spec, *sealed;
    const char *shown;
    int rc = -1;

    *value = NULL;
    if (db_asset_resolve(db, "credential", project, name, &a) != DB_OK)
        return -1;
    spec = json_loads(a.spec, 0, NULL);
    sealed = json_loads(a.sealed, 0, NULL);
    shown = json_string_value(json_object_get(spec, key));
    if (json_is_string(json_object_get(sealed, key)))
        rc = api_secrets_open(a.id, key, json_string_value(json_object_get(sealed, key)), value);
    else if (shown && (*value = strdup(shown)) != NULL)
        rc = 0;
    else
        rc = shown ? -1 : 1;
    json_decref(spec);
    json_decref(sealed);
    db_asset_clear(&a);
    return rc;
}

json_t *api_asset_part(struct api_req *r, const struct db_asset *a, json_t *overrides)
{
    const struct asset_kind *k = kind_of_asset(a);
    json_t *spec, *part;

    if (!k || !k->to_spec) {
        refuse(r, "assets: a registry or a template is no part of a workload's spec");
        return NULL;
    }
    spec = json_loads(a->spec ? a->spec : "{}", 0, NULL);
    part = spec ? k->to_spec(r, k, a, spec, overrides) : NULL;
    if (!spec)
        api_error(r, 500, "Internal error", "the asset's spec cannot be read");
    json_decref(spec);
    return part;
}
