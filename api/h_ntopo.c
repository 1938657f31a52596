/*
 * h_ntopo.c: /api/v1/network-topologies (list, count, create, get,
 * delete), as Run:ai's document has them, and what the rest of the API
 * asks of topologies: whether a text is a node label key, a topology's
 * levels by id or name.
 *
 * A network topology is a name and an ordered list of node label keys,
 * the widest level first (a block, a rack, a host: kubernetes.io/hostname
 * is the node's name). A node pool names one (networkTopologyId, h_pools.c)
 * and the scheduler places the pool's workloads by its domains
 * (docs/scheduler.md, "Topology"). A topology never changes once created
 * (the document has no update); deleting one takes it off the pools that
 * name them, and the scheduler is told.
 *
 * Invariants:
 *   1. Reading topologies needs only a token; creating and deleting one a
 *      system-scope rule (as node pools).
 *   2. levels are 1 to SCHED_MAX_TOPOLOGY distinct label keys, each as
 *      the document's NetworkTopologyLevels pattern says.
 */
#include "api.h"
#include "db_ntopo.h"
#include "sched.h"
#include "secretbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- label keys and names ---- */

/* One DNS label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, n bytes. */
static int dns_label_ok(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* [prefix/]name: prefix DNS labels joined by dots, name
 * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]; 63 bytes at most in all. */
int api_label_key_ok(const char *key)
{
    const char *slash = strchr(key, '/'), *name = slash ? slash + 1 : key, *p, *dot;
    size_t n = strlen(name), i;

    if (strlen(key) == 0 || strlen(key) > 63 || n == 0 || !alnum(name[0]) || !alnum(name[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            return 0;
    for (p = key; slash && p < slash; p = dot + 1) {
        dot = memchr(p, '.', (size_t)(slash - p));
        if (!dot)
            dot = slash;
        if (!dns_label_ok(p, (size_t)(dot - p)))
            return 0;
    }
    return 1;
}

/* ^[a-z]([a-z0-9-]*[a-z0-9])?$, 63 bytes at most. */
static int topology_name_ok(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n <= 63 && s[0] >= 'a' && s[0] <= 'z' && dns_label_ok(s, n);
}

json_t *api_ntopo_levels(struct api_req *r, const char *name)
{
    struct db_ntopo *rows = NULL;
    int n = 0, i;
    json_t *levels = NULL;

    if (db_ntopo_list(r->app->db, &rows, &n) != DB_OK)
        return NULL;
    for (i = 0; i < n && !levels; i++)
        if (strcmp(rows[i].name, name) == 0 || strcmp(rows[i].id, name) == 0)
            levels = json_loads(rows[i].levels, 0, NULL);
    free(rows);
    return levels;
}

/* ---- JSON out ---- */

/* The pools that name topology id, by name. */
static json_t *pools_naming(struct api_req *r, const char *id)
{
    struct db_pool *pools = NULL;
    int n = 0, i;
    json_t *a = json_array();

    if (db_pool_list(r->app->db, &pools, &n) != DB_OK)
        return a;
    for (i = 0; i < n; i++)
        if (strcmp(pools[i].topology_id, id) == 0)
            json_array_append_new(a, json_string(pools[i].name));
    free(pools);
    return a;
}

/* What a row answers, and what filterBy reads of it: the stored row and
 * the pools that name it. */
struct ntopo_row {
    struct db_ntopo t;
    json_t *pools;
};

static json_t *ntopo_json(struct api_req *r, const void *row)
{
    const struct ntopo_row *x = row;
    json_t *levels = json_loads(x->t.levels, 0, NULL);

    (void)r;
    return json_pack("{s:s, s:s, s:s, s:o, s:i, s:o, s:s, s:s, s:s, s:s, s:O}", "id", x->t.id,
                     "name", x->t.name, "clusterId", API_CLUSTER_ID, "levels",
                     levels ? levels : json_array(), "tenantId", 1, "createdAt",
                     api_time(x->t.created_at), "createdBy", x->t.created_by, "phase", "Ready",
                     "status", "Ready", "source", "allot", "nodePools", x->pools);
}

static int ntopo_get_field(const void *row, const char *f, struct api_lv *v)
{
    const struct ntopo_row *x = row;

    if (strcmp(f, "name") == 0)
        v->s = x->t.name;
    else if (strcmp(f, "clusterId") == 0)
        v->s = API_CLUSTER_ID;
    else if (strcmp(f, "source") == 0)
        v->s = "allot";
    else if (strcmp(f, "phase") == 0)
        v->s = "Ready";
    else
        return -1;
    return 0;
}

static void rows_free(struct ntopo_row *rows, int n)
{
    int i;

    for (i = 0; rows && i < n; i++)
        json_decref(rows[i].pools);
    free(rows);
}

/* Every topology, with the pools that name it; *out malloc'd. */
static int ntopo_rows(struct api_req *r, struct ntopo_row **out, int *n)
{
    struct db_ntopo *t = NULL;
    int nt = 0, i, rc = db_ntopo_list(r->app->db, &t, &nt);

    *out = NULL;
    *n = 0;
    if (rc == DB_OK && !(*out = calloc((size_t)nt + 1, sizeof(**out))))
        rc = DB_ENOMEM;
    for (i = 0; rc == DB_OK && i < nt; i++) {
        (*out)[i].t = t[i];
        (*out)[i].pools = pools_naming(r, t[i].id);
    }
    if (rc == DB_OK)
        *n = nt;
    free(t);
    return rc;
}

/* ---- handlers ---- */

void api_h_ntopo_list(struct api_req *r)
{
    struct api_lq q;
    struct ntopo_row *rows = NULL;
    int n = 0, rc;

    if (api_lq_parse(r, &q) != 0)
        return;
    rc = ntopo_rows(r, &rows, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list network topologies");
        return;
    }
    if (!q.limit_given)
        q.limit = INT32_MAX;
    api_lq_reply(r, &q,
                 &(struct api_lq_rows){rows, n, sizeof(*rows), ntopo_get_field, ntopo_json},
                 "networkTopologies", (r->arg & API_ARG_COUNT) != 0);
    rows_free(rows, n);
}

static void reply_one(struct api_req *r, int status, const char *id)
{
    struct ntopo_row x;
    int rc = db_ntopo_get(r->app->db, id, &x.t);

    if (rc != DB_OK) {
        api_db_error(r, rc, "no such network topology");
        return;
    }
    x.pools = pools_naming(r, x.t.id);
    api_reply(r, status, ntopo_json(r, &x));
    json_decref(x.pools);
}

/* levels: 1 to SCHED_MAX_TOPOLOGY distinct label keys, as compact JSON. */
static int levels_in(struct api_req *r, json_t *levels, struct db_ntopo *t)
{
    json_t *v;
    size_t i, k;
    char *text;

    if (!json_is_array(levels) || json_array_size(levels) < 1 ||
        json_array_size(levels) > SCHED_MAX_TOPOLOGY)
        return api_error(r, 400, "Bad request", "levels: 1 to 8 node label keys, the widest "
                         "level first"), -1;
    json_array_foreach(levels, i, v) {
        if (!json_is_string(v) || !api_label_key_ok(json_string_value(v)))
            return api_error(r, 400, "Bad request", "levels: each is a node label key, "
                             "[prefix/]name of 63 characters at most"), -1;
        for (k = 0; k < i; k++)
            if (strcmp(json_string_value(json_array_get(levels, k)), json_string_value(v)) == 0)
                return api_error(r, 400, "Bad request", "levels: a level is listed twice"), -1;
    }
    text = json_dumps(levels, JSON_COMPACT);
    if (!text || strlen(text) >= sizeof(t->levels)) {
        free(text);
        return api_error(r, 400, "Bad request", "levels are too long"), -1;
    }
    memcpy(t->levels, text, strlen(text) + 1);
    free(text);
    return 0;
}

void api_h_ntopo_create(struct api_req *r)
{
    static const char *const fields[] = {"name", "clusterId", "levels", NULL};
    struct db_ntopo t;
    json_t *o = api_body_object(r);
    int rc;

    memset(&t, 0, sizeof(t));
    if (!o)
        return;
    if (api_json_allow(r, o, fields, "network topology") ||
        api_json_str(r, o, "name", t.name, sizeof(t.name), 1) ||
        api_json_str(r, o, "clusterId", t.cluster_id, sizeof(t.cluster_id), 1) ||
        !api_cluster_id_ok(r, t.cluster_id) || levels_in(r, json_object_get(o, "levels"), &t))
        goto out;
    if (!topology_name_ok(t.name)) {
        api_error(r, 400, "Bad request",
                  "name: lower-case letters, digits and '-', starting with a letter, at most 63");
        goto out;
    }
    if (api_secretbox_uuid(t.id) != 0) {
        api_error(r, 500, "Internal error", "no random bytes for an id");
        goto out;
    }
    snprintf(t.created_by, sizeof(t.created_by), "%s", r->who.user.login);
    rc = db_ntopo_insert(r->app->db, &t);
    if (api_created(r, rc, "a network topology of that name exists"))
        reply_one(r, 201, t.id);
out:
    json_decref(o);
}

void api_h_ntopo_get(struct api_req *r)
{
    reply_one(r, 200, r->params[0]);
}

void api_h_ntopo_delete(struct api_req *r)
{
    int rc = db_ntopo_delete(r->app->db, r->params[0]);

    if (rc != DB_OK) {
        api_db_error(r, rc, "no such network topology");
        return;
    }
    ctl_sched_org_changed(r->app->sched);
    api_reply_text(r, 204, "application/json", "", 0);
}
