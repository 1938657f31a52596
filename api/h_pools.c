/*
 * h_pools.c: /api/v1/node-pools (list, count, create, get, put, patch,
 * delete), /api/v1/nodes (list, count, telemetry) and /api/v1/clusters
 * (exactly one: list, get, and its nodes). A node lists its devices with
 * what the pods placed on them hold (gpuDevices, from the pods' device
 * indices).
 *
 * A pool carries its scheduling settings in Run:ai's shape:
 *   placementStrategy {gpu, cpu}: binpack | spread | fragmentation (kept
 *     as given, db_placement_words; sched_placement_parse() says what
 *     each does); left out, gpu is the core's default
 *     (SCHED_DEFAULT_GPU_PLACEMENT: fragmentation) and cpu spread; a gpu
 *     placement that is the default is answered null, which Run:ai's
 *     nullable enum (binpack, spread) reads as the scheduler's own, so a
 *     Run:ai client meets only its words unless a pool opts into
 *     fragmentation for its CPU placement;
 *   schedulingConfiguration {placementStrategy, minGuaranteedRuntime
 *     ("5d8h40m", "90s"; null or "" for none), timeBasedFairshare {enabled,
 *     windowSeconds, halfLifeSeconds, kValue}}.
 *   networkTopologyId: the network topology (h_ntopo.c) whose domains the
 *     scheduler places the pool's workloads by (null: none); the pool
 *     keeps a copy of its levels. status.conditions holds a
 *     TopologyMismatch condition, naming the nodes, while nodes of the
 *     pool lack a level's label.
 * The scheduler thread is told after every change (ctl_sched_org_changed).
 *
 * Invariants:
 *   1. Reading pools and nodes needs only a token: every role may see the
 *      capacity it competes for. Changing pools needs a system-scope rule.
 *   2. The default pool (it collects unlabelled nodes) is never deleted,
 *      nor a pool that still holds nodes (400: Run:ai's delete lists no
 *      409).
 */
#include "api.h"
#include "allot_version.h"
#include "db_ntopo.h"
#include "sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stored word of a placement (an unknown number reads as binpack). */
static const char *placement_word(int stored)
{
    return db_placement_words[stored >= 0 && stored < DB_N_PLACEMENTS ? stored : 0];
}

static double dev(int64_t milli)
{
    return milli < 0 ? (double)milli : (double)milli / 1000.0;
}

/* ---- durations: "5d8h40m" <-> ms ---- */

#define MAX_DURATION_MS (3660LL * 86400000LL)   /* ten years */

static int duration_in(const char *s, int64_t *ms)
{
    int64_t total = 0, v;
    int any = 0;

    while (*s) {
        if (*s < '0' || *s > '9')
            return -1;
        for (v = 0; *s >= '0' && *s <= '9'; s++) {
            v = v * 10 + (*s - '0');
            if (v > 100000000)
                return -1;
        }
        switch (*s++) {
        case 'd': total += v * 86400000LL; break;
        case 'h': total += v * 3600000LL; break;
        case 'm': total += v * 60000LL; break;
        case 's': total += v * 1000LL; break;
        default: return -1;
        }
        if (total > MAX_DURATION_MS)   /* each term adds at most 8.64e15: no overflow */
            return -1;
        any = 1;
    }
    *ms = total;
    return any ? 0 : -1;
}

static json_t *duration_json(int64_t ms)
{
    static const struct { int64_t ms; char unit; } units[] = {
        {86400000LL, 'd'}, {3600000LL, 'h'}, {60000LL, 'm'}, {1000LL, 's'}};
    char buf[64];
    size_t used = 0, i;

    if (ms <= 0)
        return json_null();
    for (i = 0; i < 4; i++)
        if (ms >= units[i].ms) {
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%lld%c",
                                     (long long)(ms / units[i].ms), units[i].unit);
            ms %= units[i].ms;
        }
    return json_string(buf);
}

/* ---- JSON out ---- */

struct pool_row {
    struct db_pool p;
    int n_nodes;
    int64_t gpus, alloc;
};

/* Does the node carry every level of the topology (levels, a JSON array)?
 * kubernetes.io/hostname is its name when it has no such label. */
static int has_levels(const struct db_node *n, const json_t *levels)
{
    json_t *labels = json_loads(n->labels, 0, NULL), *l;
    size_t i;
    int ok = 1;

    json_array_foreach(levels, i, l)
        if (!json_is_string(json_object_get(labels, json_string_value(l))) &&
            strcmp(json_string_value(l), SCHED_HOSTNAME_LABEL) != 0)
            ok = 0;
    json_decref(labels);
    return ok;
}

/* The pool's nodes by name into *names, and those that lack a level of its
 * topology into *lacking (an empty array when it has none). */
static void names_of(struct api_req *r, const struct db_pool *p, json_t **names, json_t **lacking)
{
    struct db_node *nodes = NULL;
    json_t *levels = p->topology_levels[0] ? json_loads(p->topology_levels, 0, NULL) : NULL;
    int n = 0, i;

    *names = json_array();
    *lacking = json_array();
    if (db_node_list(r->app->db, &nodes, &n) != DB_OK)
        n = 0;
    for (i = 0; i < n; i++) {
        if (nodes[i].pool_seq != p->seq)
            continue;
        json_array_append_new(*names, json_string(nodes[i].name));
        if (levels && !has_levels(&nodes[i], levels))
            json_array_append_new(*lacking, json_string(nodes[i].name));
    }
    json_decref(levels);
    free(nodes);
}

/* status.conditions: TopologyMismatch while nodes lack a level's label. */
static json_t *conditions_json(json_t *lacking)
{
    json_t *a = json_array();

    if (json_array_size(lacking) > 0)
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s, s:s, s:O}", "type", "NetworkTopology", "reason",
                         "TopologyMismatch", "message",
                         "Network Topology labels mismatch: these nodes lack the label of a "
                         "level of the pool's network topology, and no workload that requires "
                         "that level runs on them",
                         "status", "True", "nodes", lacking));
    return a;
}

/* networkTopologyId and networkTopologyName: null when it names none. */
static void topology_json(struct api_req *r, const struct db_pool *p, json_t *o)
{
    struct db_ntopo t;

    if (!p->topology_id[0] || db_ntopo_get(r->app->db, p->topology_id, &t) != DB_OK) {
        json_object_set_new(o, "networkTopologyId", json_null());
        json_object_set_new(o, "networkTopologyName", json_null());
        return;
    }
    json_object_set_new(o, "networkTopologyId", json_string(t.id));
    json_object_set_new(o, "networkTopologyName", json_string(t.name));
}

/* A pool's GPU placement as answered: null when it is the default (the
 * file's comment says why), else its word. */
static json_t *gpu_placement_json(const struct db_pool *p)
{
    return p->gpu_placement == api_pool_default_gpu_placement()
               ? json_null()
               : json_string(placement_word(p->gpu_placement));
}

static json_t *sched_config_json(const struct db_pool *p)
{
    return json_pack("{s:{s:o, s:s}, s:o, s:{s:b, s:f, s:f, s:f}}", "placementStrategy", "gpu",
                     gpu_placement_json(p), "cpu", placement_word(p->cpu_placement),
                     "minGuaranteedRuntime", duration_json(p->min_runtime_ms),
                     "timeBasedFairshare", "enabled", p->tbf_enabled, "windowSeconds",
                     (double)p->tbf_window_ms / 1000.0, "halfLifeSeconds",
                     (double)p->tbf_half_life_ms / 1000.0, "kValue",
                     (double)p->tbf_k_milli / 1000.0);
}

static json_t *pool_json(struct api_req *r, const struct pool_row *x)
{
    const struct db_pool *p = &x->p;
    char id[24];
    json_t *o;

    snprintf(id, sizeof(id), "%lld", (long long)p->seq);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:b, s:o, s:o, s:s, s:s,"
                  " s:i, s:{s:o, s:s}, s:o, s:I, s:f, s:I}",
                  "id", id, "name", p->name, "labelKey", p->label_key, "labelValue",
                  p->label_value, "clusterId", API_CLUSTER_ID, "clusterName", API_CLUSTER_NAME,
                  "tenantId", 1, "createdBy", p->created_by, "updatedBy",
                  p->updated_by[0] ? p->updated_by : p->created_by, "isDefault",
                  strcmp(p->name, "default") == 0, "createdAt", api_time(p->created_at),
                  "updatedAt", api_time(p->updated_at), "phase",
                  x->n_nodes ? "Ready" : "Empty", "phaseMessage",
                  x->n_nodes ? "" : "the pool has no nodes", "overProvisioningRatio", 1,
                  "placementStrategy", "gpu", gpu_placement_json(p), "cpu",
                  placement_word(p->cpu_placement), "schedulingConfiguration",
                  sched_config_json(p), "gpus", (json_int_t)x->gpus, "allocatedGpus",
                  dev(x->alloc), "nodeCount", (json_int_t)x->n_nodes);
    if (o) {
        json_t *names, *lacking;
        names_of(r, p, &names, &lacking);
        json_object_set_new(o, "status",
                            json_pack("{s:o, s:o, s:o}", "nodes", names, "conditions",
                                      conditions_json(lacking), "schedulingConfiguration",
                                      sched_config_json(p)));
        json_decref(lacking);
        topology_json(r, p, o);
    }
    return o;
}

static json_t *pool_row_json(struct api_req *r, const void *row)
{
    return pool_json(r, row);
}

static int pool_get(const void *row, const char *f, struct api_lv *v)
{
    const struct pool_row *x = row;

    if (strcmp(f, "name") == 0)
        v->s = x->p.name;
    else if (strcmp(f, "phase") == 0)
        v->s = x->n_nodes ? "Ready" : "Empty";
    else if (strcmp(f, "clusterId") == 0)
        v->s = API_CLUSTER_ID;
    else if (strcmp(f, "labelKey") == 0)
        v->s = x->p.label_key;
    else if (strcmp(f, "labelValue") == 0)
        v->s = x->p.label_value;
    else if (strcmp(f, "createdAt") == 0 || strcmp(f, "updatedAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)(f[0] == 'c' ? x->p.created_at : x->p.updated_at);
    } else if (strcmp(f, "gpus") == 0 || strcmp(f, "allocatedGpus") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = f[0] == 'g' ? (double)x->gpus : dev(x->alloc);
    } else
        return -1;
    return 0;
}

/* Every pool with its node and GPU counts; *out malloc'd. */
static int pool_rows(struct api_req *r, struct pool_row **out, int *n)
{
    struct db_pool *pools = NULL;
    struct db_node *nodes = NULL;
    int np = 0, nn = 0, i, k, rc;

    *out = NULL;
    *n = 0;
    rc = db_pool_list(r->app->db, &pools, &np);
    if (rc == DB_OK)
        rc = db_node_list(r->app->db, &nodes, &nn);
    if (rc == DB_OK && !(*out = calloc((size_t)np + 1, sizeof(**out))))
        rc = DB_ENOMEM;
    for (i = 0; rc == DB_OK && i < np; i++) {
        (*out)[i].p = pools[i];
        for (k = 0; k < nn; k++)
            if (nodes[k].pool_seq == pools[i].seq) {
                (*out)[i].n_nodes++;
                (*out)[i].gpus += nodes[k].n_gpus;
                (*out)[i].alloc += nodes[k].alloc_gpu_milli;
            }
    }
    if (rc == DB_OK)
        *n = np;
    free(pools);
    free(nodes);
    return rc;
}

/* Answers the rows read (rc: how the read went) as a list under key, or
 * their count (API_ARG_COUNT): every row unless a page is asked for. */
static void rows_reply(struct api_req *r, struct api_lq *q, int rc,
                       const struct api_lq_rows *rows, const char *key)
{
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    if (!q->limit_given)
        q->limit = INT32_MAX;
    api_lq_reply(r, q, rows, key, (r->arg & API_ARG_COUNT) != 0);
}

void api_h_pools_list(struct api_req *r)
{
    struct api_lq q;
    struct pool_row *rows = NULL;
    int n = 0, rc;

    if (api_lq_parse(r, &q) != 0)
        return;
    rc = pool_rows(r, &rows, &n);
    rows_reply(r, &q, rc, &(struct api_lq_rows){rows, n, sizeof(*rows), pool_get, pool_row_json},
               "nodepools");
    free(rows);
}

/* ---- JSON in ---- */

/* A pool's plain fields; placementStrategy and schedulingConfiguration are
 * read by their own functions, the rest Run:ai sends is accepted and
 * ignored. */
struct pool_body {
    char name[DB_NAME_LEN], cluster_id[64];
    char label_key[DB_NAME_LEN], label_value[DB_NAME_LEN];
    double ratio;
};
#define B struct pool_body
static const struct api_field pool_fields[] = {
    API_FIELD_STR(B, "name", name, API_F_ON_CREATE),
    API_FIELD_STR(B, "clusterId", cluster_id, API_F_OPTIONAL),
    API_FIELD_TEXT(B, "labelKey", label_key, DB_NAME_LEN, API_F_ON_CREATE, API_TEXT_LOGIN),
    API_FIELD_TEXT(B, "labelValue", label_value, DB_NAME_LEN, API_F_ON_CREATE, API_TEXT_LOGIN),
    API_FIELD_NUM(B, "overProvisioningRatio", ratio, 1, 1),
    API_FIELD_OTHER("placementStrategy"),
    API_FIELD_OTHER("schedulingConfiguration"),
    API_FIELD_OTHER("gpuNetworkAccelerationDetection"),
    API_FIELD_OTHER("gpuNetworkAccelerationLabelKey"),
    API_FIELD_OTHER("gpuResourceOptimization"),
    API_FIELD_OTHER("networkTopologyId"),   /* topology_in() */
};
#undef B

/* The stored index of a placementStrategy word, or -1. */
static int word_index(const char *word)
{
    int i;

    for (i = 0; i < DB_N_PLACEMENTS; i++)
        if (strcmp(word, db_placement_words[i]) == 0)
            return i;
    return -1;
}

int api_pool_default_gpu_placement(void)
{
    return word_index(sched_placement_word(SCHED_DEFAULT_GPU_PLACEMENT));
}

static int placement_in(struct api_req *r, json_t *o, struct db_pool *p)
{
    static const char *const fields[] = {"gpu", "cpu", NULL};
    char g[16], c[16];
    json_t *gv;

    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "placementStrategy is an object");
        return -1;
    }
    /* gpu null: the default, as answered; cpu null or either left out:
     * unchanged */
    gv = json_object_get(o, "gpu");
    snprintf(g, sizeof(g), "%s",
             placement_word(gv && json_is_null(gv) ? api_pool_default_gpu_placement()
                                                   : p->gpu_placement));
    snprintf(c, sizeof(c), "%s", placement_word(p->cpu_placement));
    if (api_json_allow(r, o, fields, "placementStrategy") ||
        api_json_str(r, o, "gpu", g, sizeof(g), 0) || api_json_str(r, o, "cpu", c, sizeof(c), 0))
        return -1;
    p->gpu_placement = word_index(g);
    p->cpu_placement = word_index(c);
    if (p->gpu_placement < 0 || p->cpu_placement < 0) {
        api_error(r, 400, "Bad request",
                  "placementStrategy values are binpack, spread or fragmentation");
        return -1;
    }
    return 0;
}

/* timeBasedFairshare, in seconds on the wire and ms stored. */
struct tbf_body {
    int enabled;
    double window_s, half_life_s, k;
};
#define B struct tbf_body
static const struct api_field tbf_fields[] = {
    API_FIELD_BOOL(B, "enabled", enabled),
    API_FIELD_NUM(B, "windowSeconds", window_s, 1, 366.0 * 86400),
    API_FIELD_NUM(B, "halfLifeSeconds", half_life_s, 0, 366.0 * 86400),
    API_FIELD_NUM(B, "kValue", k, 0, 1000),
};
#undef B

static int tbf_in(struct api_req *r, json_t *o, struct db_pool *p)
{
    struct tbf_body b = {p->tbf_enabled, (double)p->tbf_window_ms / 1000.0,
                         (double)p->tbf_half_life_ms / 1000.0, (double)p->tbf_k_milli / 1000.0};

    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "timeBasedFairshare is an object");
        return -1;
    }
    if (api_fields_in(r, o, tbf_fields, API_FIELDS_N(tbf_fields), &b, "timeBasedFairshare", 0))
        return -1;
    p->tbf_enabled = b.enabled;
    p->tbf_window_ms = llround(b.window_s * 1000.0);
    p->tbf_half_life_ms = llround(b.half_life_s * 1000.0);
    p->tbf_k_milli = llround(b.k * 1000.0);
    return 0;
}

static int sched_config_in(struct api_req *r, json_t *o, struct db_pool *p)
{
    static const char *const fields[] = {"placementStrategy", "minGuaranteedRuntime",
                                         "timeBasedFairshare", NULL};
    json_t *mgr;

    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "schedulingConfiguration is an object");
        return -1;
    }
    if (api_json_allow(r, o, fields, "schedulingConfiguration") ||
        placement_in(r, json_object_get(o, "placementStrategy"), p) ||
        tbf_in(r, json_object_get(o, "timeBasedFairshare"), p))
        return -1;
    mgr = json_object_get(o, "minGuaranteedRuntime");
    if (!mgr)
        return 0;
    if (json_is_null(mgr) || (json_is_string(mgr) && json_string_value(mgr)[0] == 0)) {
        p->min_runtime_ms = 0;
        return 0;
    }
    if (!json_is_string(mgr) || duration_in(json_string_value(mgr), &p->min_runtime_ms)) {
        api_error(r, 400, "Bad request",
                  "field 'minGuaranteedRuntime': a duration such as \"5d8h40m\" or \"90s\"");
        return -1;
    }
    return 0;
}

/* networkTopologyId: a network topology's id (its levels copied), or
 * null for none; left out, unchanged. */
static int topology_in(struct api_req *r, json_t *o, struct db_pool *p)
{
    json_t *v = json_object_get(o, "networkTopologyId");
    struct db_ntopo t;

    if (!v)
        return 0;
    if (json_is_null(v)) {
        p->topology_id[0] = p->topology_levels[0] = '\0';
        return 0;
    }
    if (!json_is_string(v) || db_ntopo_get(r->app->db, json_string_value(v), &t) != DB_OK) {
        api_error(r, 400, "Bad request", "networkTopologyId names no network topology");
        return -1;
    }
    snprintf(p->topology_id, sizeof(p->topology_id), "%s", t.id);
    snprintf(p->topology_levels, sizeof(p->topology_levels), "%s", t.levels);
    return 0;
}

/* Applies the fields present in o onto p; `create` requires the name
 * and labels. */
static int pool_in(struct api_req *r, json_t *o, struct db_pool *p, int create)
{
    struct pool_body b = {.ratio = 1};

    snprintf(b.label_key, sizeof(b.label_key), "%s", p->label_key);
    snprintf(b.label_value, sizeof(b.label_value), "%s", p->label_value);
    if (api_fields_in(r, o, pool_fields, API_FIELDS_N(pool_fields), &b, NULL, create))
        return -1;
    snprintf(p->label_key, sizeof(p->label_key), "%s", b.label_key);
    snprintf(p->label_value, sizeof(p->label_value), "%s", b.label_value);
    if (placement_in(r, json_object_get(o, "placementStrategy"), p) ||
        sched_config_in(r, json_object_get(o, "schedulingConfiguration"), p) ||
        topology_in(r, o, p) || !api_cluster_id_ok(r, b.cluster_id))
        return -1;
    if (create)
        snprintf(p->name, sizeof(p->name), "%s", b.name);
    else if (b.name[0] && strcmp(b.name, p->name) != 0) {
        api_error(r, 400, "Bad request", "a node pool cannot be renamed");
        return -1;
    }
    if (!api_valid_name(p->name) || !p->label_key[0] || !p->label_value[0]) {
        api_error(r, 400, "Bad request", "name must be a valid name; labels are non-empty");
        return -1;
    }
    snprintf(p->updated_by, sizeof(p->updated_by), "%s", r->who.user.login);
    return 0;
}

static int may_change(struct api_req *r)
{
    if (api_can(&r->who, API_NODE_WRITE, "", ""))
        return 1;
    api_error(r, 403, "Forbidden", "node pools need a system-scope rule");
    return 0;
}

static void reply_pool(struct api_req *r, int status, int64_t seq)
{
    struct pool_row *rows = NULL;
    int n = 0, i;

    if (pool_rows(r, &rows, &n) != DB_OK) {
        api_error(r, 500, "Internal error", "cannot read the pool back");
        return;
    }
    for (i = 0; i < n && rows[i].p.seq != seq; i++)
        ;
    if (i < n)
        api_reply(r, status, pool_json(r, &rows[i]));
    else
        api_error(r, 404, "Not found", "no such node pool");
    free(rows);
}

void api_h_pools_create(struct api_req *r)
{
    struct db_pool p;
    json_t *o = api_body_object(r);
    int rc;

    memset(&p, 0, sizeof(p));
    p.gpu_placement = api_pool_default_gpu_placement();
    p.cpu_placement = 1;
    p.tbf_window_ms = 7LL * 86400 * 1000;
    p.tbf_k_milli = 1000;
    if (!o)
        return;
    if (pool_in(r, o, &p, 1) || !may_change(r))
        goto out;
    snprintf(p.created_by, sizeof(p.created_by), "%s", r->who.user.login);
    rc = db_pool_insert(r->app->db, &p);
    if (!api_created(r, rc, "a node pool of that name exists"))
        goto out;
    ctl_sched_org_changed(r->app->sched);
    reply_pool(r, 201, p.seq);
out:
    json_decref(o);
}

int api_created(struct api_req *r, int rc, const char *taken)
{
    if (rc == DB_ECONFLICT) /* Run:ai's creates list no 409 */
        api_error(r, 400, "Bad request", taken);
    else if (rc != DB_OK)
        api_db_error(r, rc, "cannot create");
    return rc == DB_OK;
}

/* The pool of the path; replies 404 itself. */
static int pool_load(struct api_req *r, struct db_pool *p)
{
    char *end;
    long long seq = strtoll(r->params[0], &end, 10);
    int rc = *end || seq <= 0 ? DB_ENOTFOUND : db_pool_get(r->app->db, seq, p);

    if (rc != DB_OK) {
        api_db_error(r, rc, "no such node pool");
        return -1;
    }
    return 0;
}

void api_h_pool_get(struct api_req *r)
{
    struct db_pool p;

    if (pool_load(r, &p) == 0)
        reply_pool(r, 200, p.seq);
}

/* PUT and PATCH (API_ARG_PATCH): the fields present are applied; PUT
 * resets the settings left out to their defaults first. */
void api_h_pool_change(struct api_req *r)
{
    struct db_pool p;
    json_t *o;
    int rc;

    if (pool_load(r, &p) != 0)
        return;
    o = api_body_object(r);
    if (!o)
        return;
    if (!(r->arg & API_ARG_PATCH)) {
        p.gpu_placement = api_pool_default_gpu_placement();
        p.cpu_placement = 1;
        p.min_runtime_ms = 0;
        p.tbf_enabled = 0;
        p.tbf_window_ms = 7LL * 86400 * 1000;
        p.tbf_half_life_ms = 0;
        p.tbf_k_milli = 1000;
        p.topology_id[0] = p.topology_levels[0] = '\0';
    }
    if (pool_in(r, o, &p, 0) || !may_change(r))
        goto out;
    rc = db_pool_update(r->app->db, &p);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot update");
        goto out;
    }
    ctl_sched_org_changed(r->app->sched);
    reply_pool(r, 200, p.seq);
out:
    json_decref(o);
}

void api_h_pool_delete(struct api_req *r)
{
    struct db_pool p;
    int rc;

    if (pool_load(r, &p) != 0 || !may_change(r))
        return;
    if (strcmp(p.name, "default") == 0) {
        api_error(r, 400, "Bad request", "the default node pool cannot be deleted");
        return;
    }
    rc = db_pool_delete(r->app->db, p.seq);
    if (rc == DB_ECONFLICT) {
        api_error(r, 400, "Bad request", "the node pool still holds nodes");
        return;
    }
    if (rc == DB_OK)
        ctl_sched_org_changed(r->app->sched);
    api_reply_deleted(r, rc, "cannot delete");
}

/* ---- nodes ---- */

/* A node with what each of its devices holds (milli-GPU) and how many
 * pods share it, from the pods' device indices. */
struct node_row {
    struct db_node n;
    int64_t dev_milli[64];
    int dev_pods[64];
};

/* gpuDevices: [{index, allocated, pods}] for devices 0..gpuCount-1 (and any
 * higher index a pod holds). */
static json_t *devices_json(const struct node_row *x)
{
    json_t *a = json_array();
    int d, top = x->n.n_gpus < 64 ? x->n.n_gpus : 64;

    for (d = top; d < 64; d++)
        if (x->dev_pods[d])
            top = d + 1;
    for (d = 0; d < top; d++)
        json_array_append_new(a, json_pack("{s:i, s:f, s:i}", "index", d, "allocated",
                                           dev(x->dev_milli[d]), "pods", x->dev_pods[d]));
    return a;
}

static json_t *node_json(struct api_req *r, const void *row)
{
    const struct node_row *x = row;
    const struct db_node *n = &x->n;
    json_t *labels = json_loads(n->labels, 0, NULL), *o;

    (void)r;
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[], s:[], s:{s:s, s:i, s:I}, s:o, s:o, s:f,"
                     " s:f, s:b, s:s, s:o, s:s}",
                     "id", n->id, "name", n->name, "clusterUuid", API_CLUSTER_ID, "nodePool",
                     n->pool_name, "status", n->ready ? "Ready" : "NotReady", "conditions",
                     "taints", "gpuInfo", "gpuType", n->gpu_type, "gpuCount", n->n_gpus,
                     "gpuMemoryMib", (json_int_t)n->gpu_memory_mib,
                     "createdAt", api_time(n->created_at), "updatedAt", api_time(n->updated_at),
                     "allocatedGpus", dev(n->alloc_gpu_milli), "freeGpus",
                     (double)n->n_gpus - dev(n->alloc_gpu_milli), "simulated", n->simulated,
                     "nodeType", n->node_type, "labels", labels ? labels : json_object(),
                     "address", n->address);
    if (o)
        json_object_set_new(o, "gpuDevices", devices_json(x));
    return o;
}

static int node_get(const void *row, const char *f, struct api_lv *v)
{
    const struct db_node *n = &((const struct node_row *)row)->n;

    if (strcmp(f, "name") == 0)
        v->s = n->name;
    else if (strcmp(f, "status") == 0)
        v->s = n->ready ? "Ready" : "NotReady";
    else if (strcmp(f, "nodePool") == 0)
        v->s = n->pool_name;
    else if (strcmp(f, "gpuType") == 0)
        v->s = n->gpu_type;
    else if (strcmp(f, "nodeType") == 0)
        v->s = n->node_type;
    else if (strcmp(f, "clusterUuid") == 0)
        v->s = API_CLUSTER_ID;
    else if (strcmp(f, "gpuCount") == 0 || strcmp(f, "allocatedGpus") == 0 ||
             strcmp(f, "freeGpus") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = f[0] == 'g' ? n->n_gpus : f[0] == 'a' ? dev(n->alloc_gpu_milli)
                                                     : n->n_gpus - dev(n->alloc_gpu_milli);
    } else if (strcmp(f, "createdAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)n->created_at;
    } else
        return -1;
    return 0;
}

/* nodeName=NAME: one more filter, the node's name is NAME. */
static int node_name_in(struct api_req *r, struct api_lq *q)
{
    char name[DB_NAME_LEN];
    struct db_filter *f;

    if (api_query(r, "nodeName", name, sizeof(name)) != 0)
        return 0;
    if (q->n_filters >= DB_MAX_FILTERS) {
        api_error(r, 400, "Bad request", "too many filters");
        return -1;
    }
    f = &q->filters[q->n_filters++];
    snprintf(f->field, sizeof(f->field), "name");
    snprintf(f->op, sizeof(f->op), "==");
    snprintf(f->value, sizeof(f->value), "%s", name);
    return 0;
}

/* Every node, with what its devices hold; *out malloc'd. */
static int node_rows(struct api_req *r, struct node_row **out, int *n)
{
    struct db_node *nodes = NULL;
    struct db_pod_place *pl = NULL;
    int nn = 0, np = 0, i, k, d, rc;

    *out = NULL;
    *n = 0;
    rc = db_node_list(r->app->db, &nodes, &nn);
    if (rc == DB_OK)
        rc = db_pod_places(r->app->db, &pl, &np);
    if (rc == DB_OK && !(*out = calloc((size_t)nn + 1, sizeof(**out))))
        rc = DB_ENOMEM;
    for (i = 0; rc == DB_OK && i < nn; i++)
        (*out)[i].n = nodes[i];
    for (k = 0; rc == DB_OK && k < np; k++) {
        int bits = __builtin_popcountll(pl[k].devices);
        for (i = 0; i < nn && nodes[i].seq != pl[k].node_seq; i++)
            ;
        for (d = 0; i < nn && bits && d < 64; d++)
            if (pl[k].devices & ((uint64_t)1 << d)) {
                (*out)[i].dev_milli[d] += pl[k].gpu_milli / bits;
                (*out)[i].dev_pods[d]++;
            }
    }
    if (rc == DB_OK)
        *n = nn;
    free(nodes);
    free(pl);
    return rc;
}

void api_h_nodes(struct api_req *r)
{
    struct node_row *rows = NULL;
    struct api_lq q;
    int n = 0, rc;

    if (api_lq_parse(r, &q) != 0 || api_lq_search(r, &q, "name") != 0 ||
        node_name_in(r, &q) != 0)
        return;
    rc = node_rows(r, &rows, &n);
    rows_reply(r, &q, rc, &(struct api_lq_rows){rows, n, sizeof(*rows), node_get, node_json},
               "nodes");
    free(rows);
}

/* ---- the cluster ---- */

static json_t *cluster_json(void)
{
    return json_pack("{s:s, s:i, s:s, s:o, s:s, s:s, s:o, s:n, s:o, s:n, s:{s:s, s:[]}}",
                     "uuid", API_CLUSTER_ID, "tenantId", 1, "name", API_CLUSTER_NAME,
                     "createdAt", api_time(1), "domain", "", "version", ALLOT_VERSION,
                     "updatedAt", api_time(1), "deletedAt", "lastLiveness",
                     api_time(api_now_ms()), "deleteRequestedAt", "status", "state",
                     "Connected", "conditions");
}

int api_cluster_id_ok(struct api_req *r, const char *cluster_id)
{
    if (!cluster_id[0] || strcmp(cluster_id, API_CLUSTER_ID) == 0)
        return 1;
    api_error(r, 400, "Bad request", "clusterId names no cluster");
    return 0;
}

int api_cluster_path_ok(struct api_req *r, int status)
{
    if (strcmp(r->params[0], API_CLUSTER_ID) == 0)
        return 1;
    api_error(r, status, status == 404 ? "Not found" : "Bad request",
              "no such cluster: allotd serves one (GET /api/v1/clusters)");
    return 0;
}

/* ---- telemetry: the nodes' current figures ---- */

enum {
    NT_READY_NODES, NT_READY_GPUS, NT_NODES, NT_GPUS, NT_IDLE, NT_FREE, NT_ALLOCATED,
    NT_FULLY_FREE, NT_MEASURED, N_NT
};
static const char *const nt_names[N_NT] = {
    "READY_GPU_NODES", "READY_GPUS", "TOTAL_GPU_NODES", "TOTAL_GPUS", "IDLE_ALLOCATED_GPUS",
    "FREE_GPUS", "ALLOCATED_GPUS", "FULLY_FREE_GPU_NODES", "MEASURED_ALLOCATED_GPUS"};
enum { NG_CLUSTER, NG_POOL, NG_NODE, N_NG };
static const char *const ng_names[N_NG] = {"ClusterId", "Nodepool", "Node"};

/* What node x counts for type t: devices allocated to running pods whose
 * agents measure them (MEASURED_ALLOCATED_GPUS, an allot extension) and
 * of those the ones no pod uses (IDLE_ALLOCATED_GPUS) come from uses. */
static double node_figure(int t, const struct node_row *x, const struct db_dev_use *uses, int nu)
{
    const struct db_node *n = &x->n;
    double alloc = dev(n->alloc_gpu_milli);
    int i, count = 0;

    switch (t) {
    case NT_READY_NODES: return n->ready && n->n_gpus > 0;
    case NT_READY_GPUS: return n->ready ? n->n_gpus : 0;
    case NT_NODES: return n->n_gpus > 0;
    case NT_GPUS: return n->n_gpus;
    case NT_FREE: return n->n_gpus - alloc > 0 ? n->n_gpus - alloc : 0;
    case NT_ALLOCATED: return alloc;
    case NT_FULLY_FREE: return n->n_gpus > 0 && n->alloc_gpu_milli == 0;
    default:
        for (i = 0; i < nu; i++)
            if (uses[i].node_seq == n->seq && x->dev_pods[uses[i].gpu & 63] &&
                (t == NT_MEASURED || uses[i].utilization == 0))
                count++;
        return count;
    }
}

void api_h_nodes_telemetry(struct api_req *r)
{
    struct node_row *rows = NULL;
    struct db_dev_use *uses = NULL;
    struct api_tally *tally = calloc(1, sizeof(*tally));
    struct api_tally_key keys[API_TALLY_KEYS];
    const char *group_keys[API_TALLY_KEYS];
    char pool[DB_NAME_LEN] = "", buf[64];
    int type, groups[2], n_groups = 0, n = 0, nu = 0, i, k, rc;

    if (!tally) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    if ((type = api_telemetry_type_in(r, nt_names, N_NT)) < 0 ||
        api_group_by_in(r, ng_names, N_NG, groups, 2, &n_groups) != 0)
        goto out;
    if (api_query(r, "clusterId", buf, sizeof(buf)) == 0 && strcmp(buf, API_CLUSTER_ID) != 0) {
        api_error(r, 400, "Bad request", "clusterId names no cluster");
        goto out;
    }
    if (api_query(r, "nodepoolName", pool, sizeof(pool)) != 0)
        pool[0] = 0;
    rc = node_rows(r, &rows, &n);
    if (rc == DB_OK && (type == NT_IDLE || type == NT_MEASURED))
        rc = db_device_uses(r->app->db, &uses, &nu);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the nodes");
        goto out;
    }
    for (k = 0; k < n_groups; k++)
        group_keys[k] = ng_names[groups[k]];
    for (i = 0; i < n; i++) {
        if (pool[0] && strcmp(pool, rows[i].n.pool_name))
            continue;
        for (k = 0; k < n_groups; k++) {
            const char *v = groups[k] == NG_CLUSTER ? API_CLUSTER_ID
                            : groups[k] == NG_POOL ? rows[i].n.pool_name : rows[i].n.id;
            const char *nm = groups[k] == NG_CLUSTER ? API_CLUSTER_NAME
                             : groups[k] == NG_POOL ? rows[i].n.pool_name : rows[i].n.name;
            memset(&keys[k], 0, sizeof(keys[k]));
            snprintf(keys[k].value, sizeof(keys[k].value), "%s", v);
            snprintf(keys[k].name, sizeof(keys[k].name), "%s", nm);
        }
        api_tally_add(tally, keys, n_groups, node_figure(type, &rows[i], uses, nu));
    }
    if (n_groups == 0 && tally->n == 0)
        api_tally_add(tally, keys, 0, 0); /* one value, 0, when no node matches */
    api_reply(r, 200, api_tally_json(tally, nt_names[type], group_keys, n_groups,
                                     type != NT_FREE && type != NT_ALLOCATED));
out:
    free(tally);
    free(rows);
    free(uses);
}

void api_h_clusters(struct api_req *r)
{
    api_reply(r, 200, json_pack("[o]", cluster_json()));
}

void api_h_cluster_get(struct api_req *r)
{
    if (api_cluster_path_ok(r, 404))
        api_reply(r, 200, cluster_json());
}

void api_h_cluster_nodes(struct api_req *r)
{
    /* the count lists no 404 */
    if (api_cluster_path_ok(r, r->arg & API_ARG_COUNT ? 400 : 404))
        api_h_nodes(r);
}
