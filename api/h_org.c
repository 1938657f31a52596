/*
 * h_org.c: the organization: /api/v1/org-unit/departments and /projects
 * (quotas per node pool in resources[], status with allocation, requests
 * and fair share per pool), /api/v1/node-pools, /api/v1/nodes and
 * /api/v1/clusters (exactly one).
 *
 * Units on the wire follow Run:ai: GPU in devices (numbers, fractions
 * allowed), CPU in millicores, memory in the entry's units (Mib, MB, GB);
 * -1 is unlimited. Stored units are milli-GPU, millicores and MiB.
 *
 * Invariants:
 *   1. A project always has a department (the "default" one unless
 *      parentId names another).
 *   2. Reads show only the queues the caller may read; a queue outside
 *      the caller's scope is a 404.
 *   3. Changing a queue needs the org-write right on its department
 *      (departments: on the system).
 *   4. A limit is never below its quota, and a project's quota never above
 *      its department's where the department sets one (quotas_ok).
 */
#include "api.h"
#include "sched.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double dev(int64_t milli)
{
    return milli < 0 ? (double)milli : (double)milli / 1000.0;
}

int api_valid_name(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

/* ---- JSON out ---- */

static json_t *res3(const int64_t v[3])
{
    return json_pack("{s:f, s:I, s:I}", "gpu", dev(v[0]), "cpu", (json_int_t)v[1], "memory",
                     (json_int_t)v[2]);
}

static json_t *quota_json(const struct db_quota *q)
{
    json_t *o = json_pack("{s:{s:s, s:s}, s:{s:f, s:f, s:f}}", "nodePool", "id", "", "name",
                          q->pool_name, "gpu", "deserved", dev(q->deserved[0]), "limit",
                          dev(q->limit[0]), "overQuotaWeight", (double)q->weight[0] / 1000.0);
    char id[24];

    if (!o)
        return NULL;
    snprintf(id, sizeof(id), "%lld", (long long)q->pool_seq);
    json_object_set_new(json_object_get(o, "nodePool"), "id", json_string(id));
    json_object_set_new(o, "cpu", q->has[1] ? json_pack("{s:I, s:I, s:f}", "deserved",
                                                        (json_int_t)q->deserved[1], "limit",
                                                        (json_int_t)q->limit[1],
                                                        "overQuotaWeight",
                                                        (double)q->weight[1] / 1000.0)
                                            : json_null());
    json_object_set_new(o, "memory",
                        q->has[2] ? json_pack("{s:I, s:I, s:f, s:s}", "deserved",
                                              (json_int_t)q->deserved[2], "limit",
                                              (json_int_t)q->limit[2], "overQuotaWeight",
                                              (double)q->weight[2] / 1000.0, "units", "Mib")
                                  : json_null());
    json_object_set_new(o, "priority", json_string(sched_overquota_priority_name(q->priority)));
    return o;
}

static json_t *resources_json(const struct db_queue *q)
{
    json_t *a = json_array();
    int i;

    for (i = 0; a && i < q->n_quotas; i++)
        json_array_append_new(a, quota_json(&q->quotas[i]));
    return a;
}

static json_t *totals_json(const struct db_queue *q)
{
    int64_t t[3] = {0, 0, 0};
    int i, r;

    for (i = 0; i < q->n_quotas; i++)
        for (r = 0; r < 3; r++)
            if (q->quotas[i].has[r] || r == 0)
                t[r] = t[r] < 0 || q->quotas[i].deserved[r] < 0 ? -1
                                                                : t[r] + q->quotas[i].deserved[r];
    return json_pack("{s:f, s:I, s:I}", "gpuQuota", dev(t[0]), "cpuQuota", (json_int_t)t[1],
                     "memoryQuota", (json_int_t)t[2]);
}

static const char *pool_name_of(const struct db_pool *pools, int n, int64_t seq)
{
    int i;

    for (i = 0; i < n; i++)
        if (pools[i].seq == seq)
            return pools[i].name;
    return "";
}

/* What a project's department deserves of GPUs in a pool, in milli: its
 * own entry's, else 0, except that the `default` department without one
 * follows the cluster (control/sched_model.c topo_queue()), as the last
 * scheduling cycle computed it. -1: unlimited or not known. */
static int64_t dept_deserved(struct api_req *r, const struct db_queue *d, int64_t pool_seq)
{
    struct ctl_share sh;
    int k;

    for (k = 0; k < d->n_quotas; k++)
        if (d->quotas[k].pool_seq == pool_seq && d->quotas[k].has[0])
            return d->quotas[k].deserved[0];
    if (strcmp(d->name, "default") != 0)
        return 0;
    memset(&sh, 0, sizeof(sh));
    return ctl_sched_share(r->app->sched, d->seq, pool_seq, &sh) ? sh.deserved[0] : -1;
}

/* A project's GPU quotas its department cannot back: the pools where the
 * project deserves more GPUs than the department does, as an array of
 * {nodePoolName, nodePoolId, deserved, departmentDeserved}, and a message
 * naming the first in msg; NULL when every quota is backed. */
static json_t *unbacked_json(struct api_req *r, const struct db_queue *q, char *msg,
                             size_t len)
{
    struct db_queue *d;
    json_t *a = NULL;
    int64_t dd;
    int k;
    char id[24];

    if (q->kind != DB_PROJECT || !q->parent_id[0] || !(d = calloc(1, sizeof(*d))))
        return NULL;
    if (db_queue_get(r->app->db, q->parent_id, d) != DB_OK) {
        free(d);
        return NULL;
    }
    for (k = 0; k < q->n_quotas; k++) {
        const struct db_quota *e = &q->quotas[k];
        if (!e->has[0] || e->deserved[0] <= 0)
            continue;
        dd = dept_deserved(r, d, e->pool_seq);
        if (dd < 0 || e->deserved[0] <= dd)
            continue;
        if (!a) {
            a = json_array();
            snprintf(msg, len,
                     "deserved %g GPUs in node pool %s exceed the %g its department %s deserves "
                     "there: non-preemptible workloads beyond %g may not start",
                     dev(e->deserved[0]), e->pool_name, dev(dd), d->name, dev(dd));
        }
        snprintf(id, sizeof(id), "%lld", (long long)e->pool_seq);
        json_array_append_new(a, json_pack("{s:s, s:s, s:f, s:f}", "nodePoolName", e->pool_name,
                                           "nodePoolId", id, "deserved", dev(e->deserved[0]),
                                           "departmentDeserved", dev(dd)));
    }
    free(d);
    return a;
}

/* status: quotaStatus (sum over pools) and nodePoolQuotaStatuses; for a
 * project whose department cannot back its GPU quota in some pool,
 * phaseMessage says so and additionalStatusData.quotaNotBacked lists the
 * pools (allot's extension; Run:ai's ProjectStatus leaves that object
 * open). */
static json_t *status_json(struct api_req *r, const struct db_queue *q)
{
    char msg[DB_NAME_LEN * 2 + 160] = "";
    json_t *unbacked;
    struct db_usage u[DB_MAX_POOLS];
    struct db_pool *pools = NULL;
    int n = 0, np = 0, i, k;
    int64_t sum[3][3];
    json_t *st, *per;
    char id[24], ns[DB_NAME_LEN + 8];

    memset(sum, 0, sizeof(sum));
    if (db_queue_usage(r->app->db, q->seq, u, DB_MAX_POOLS, &n) != DB_OK)
        n = 0;
    if (db_pool_list(r->app->db, &pools, &np) != DB_OK)
        np = 0;
    per = json_array();
    for (i = 0; i < n; i++) {
        struct ctl_share sh;
        json_t *e;
        memset(&sh, 0, sizeof(sh));
        ctl_sched_share(r->app->sched, q->seq, u[i].pool_seq, &sh);
        snprintf(id, sizeof(id), "%lld", (long long)u[i].pool_seq);
        e = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "nodePoolId", id, "nodePoolName",
                      pool_name_of(pools, np, u[i].pool_seq), "allocated",
                      res3(u[i].allocated), "allocatedNonPreemptible", res3(u[i].allocated_np),
                      "requested", res3(u[i].requested), "fairShare", res3(sh.fair));
        json_array_append_new(per, e);
        for (k = 0; k < 3; k++) {
            sum[0][k] += u[i].allocated[k];
            sum[1][k] += u[i].allocated_np[k];
            sum[2][k] += u[i].requested[k];
        }
    }
    free(pools);
    snprintf(ns, sizeof(ns), "runai-%s", q->name);
    st = json_pack("{s:s, s:s, s:s, s:o, s:{s:o, s:o, s:o}, s:o}", "namespace", ns, "phase",
                   "Ready", "phaseMessage", "", "lastUpdatedTime", api_time(q->updated_at),
                   "quotaStatus", "allocated", res3(sum[0]), "allocatedNonPreemptible",
                   res3(sum[1]), "requested", res3(sum[2]), "nodePoolQuotaStatuses", per);
    unbacked = st ? unbacked_json(r, q, msg, sizeof(msg)) : NULL;
    if (unbacked) {
        json_object_set_new(st, "phaseMessage", json_string(msg));
        json_object_set_new(st, "additionalStatusData",
                            json_pack("{s:o}", "quotaNotBacked", unbacked));
    }
    return st;
}

static json_t *names_json(const char *csv)
{
    json_t *a = json_array();

    while (a && csv && *csv) {
        const char *c = strchr(csv, ',');
        size_t n = c ? (size_t)(c - csv) : strlen(csv);
        json_array_append_new(a, json_stringn(csv, n));
        csv = c ? c + 1 : NULL;
    }
    return a;
}

/* A stored JSON text, or `dflt` (json_null() when NULL) if empty. */
static json_t *stored_json(const char *text, json_t *dflt)
{
    json_t *v = text[0] ? json_loads(text, 0, NULL) : NULL;

    if (v) {
        json_decref(dflt);
        return v;
    }
    return dflt ? dflt : json_null();
}

/* effective: the project's own settings, else its department's. */
static json_t *effective_json(struct api_req *r, const struct db_queue *q)
{
    struct db_queue *d = NULL;
    const char *pools = q->default_pools, *types = q->node_types, *rules = q->scheduling_rules;
    json_t *o;

    if (q->kind == DB_PROJECT && (!pools[0] || !types[0] || !rules[0]) &&
        (d = calloc(1, sizeof(*d))) && db_queue_get(r->app->db, q->parent_id, d) == DB_OK) {
        pools = pools[0] ? pools : d->default_pools;
        types = types[0] ? types : d->node_types;
        rules = rules[0] ? rules : d->scheduling_rules;
    }
    o = json_pack("{s:o, s:o, s:o}", "schedulingRules", stored_json(rules, NULL),
                  "defaultNodePools", pools[0] ? names_json(pools) : json_null(), "nodeTypes",
                  stored_json(types, json_object()));
    free(d);
    return o;
}

static json_t *queue_json(struct api_req *r, const struct db_queue *q)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "id",
        q->id, "name", q->name, "description", q->description, "clusterId", API_CLUSTER_ID,
        "createdAt", api_time(q->created_at), "updatedAt", api_time(q->updated_at),
        "createdBy", q->created_by, "updatedBy", q->created_by, "resources", resources_json(q),
        "totalResources", totals_json(q), "status", status_json(r, q), "defaultNodePools",
        q->default_pools[0] ? names_json(q->default_pools) : json_null(), "schedulingRules",
        stored_json(q->scheduling_rules, NULL), "nodeTypes",
        stored_json(q->node_types, json_object()), "rank", q->rank);

    if (!o)
        return NULL;
    json_object_set_new(o, "effective", effective_json(r, q));
    if (q->kind == DB_PROJECT) {
        json_object_set_new(o, "parentId", json_string(q->parent_id));
        json_object_set_new(o, "parent", json_pack("{s:s, s:s}", "id", q->parent_id, "name",
                                                   q->parent_name));
        json_object_set_new(o, "enforceRunaiScheduler", json_true());
    }
    return o;
}

/* ---- resources[] in ---- */

static const char *const res_fields[] = {"nodePool", "gpu", "cpu", "memory", "priority", NULL};
static const char *const triple_fields[] = {"deserved", "limit", "overQuotaWeight", NULL};
static const char *const memory_fields[] = {"deserved", "limit", "overQuotaWeight", "units",
                                            NULL};

/* Reads {deserved, limit, overQuotaWeight[, units]} scaled by `scale`. */
static int triple_in(struct api_req *r, json_t *o, int res, struct db_quota *q)
{
    double d = 0, l = -1, w = 1, scale = res == 0 ? 1000.0 : 1.0;
    char units[8] = "Mib";

    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "a quota must be an object");
        return -1;
    }
    if (api_json_allow(r, o, res == 2 ? memory_fields : triple_fields,
                       res == 0 ? "gpu" : res == 1 ? "cpu" : "memory") ||
        api_json_num(r, o, "deserved", -1, 1e9, &d) || api_json_num(r, o, "limit", -1, 1e9, &l) ||
        api_json_num(r, o, "overQuotaWeight", 0, 1e6, &w) ||
        api_json_str(r, o, "units", units, sizeof(units), 0))
        return -1;
    if (res == 2) {
        if (strcmp(units, "Mib") == 0)
            scale = 1.0;
        else if (strcmp(units, "MB") == 0)
            scale = 1e6 / 1048576.0;
        else if (strcmp(units, "GB") == 0)
            scale = 1e9 / 1048576.0;
        else {
            api_error(r, 400, "Bad request", "memory units must be Mib, MB or GB");
            return -1;
        }
    }
    if ((d < 0 && d != -1) || (l < 0 && l != -1)) {
        api_error(r, 400, "Bad request", "deserved and limit are >= 0, or -1 for unlimited");
        return -1;
    }
    q->has[res] = 1;
    q->deserved[res] = d < 0 ? -1 : (int64_t)llround(d * scale);
    q->limit[res] = l < 0 ? -1 : (int64_t)llround(l * scale);
    q->weight[res] = (int64_t)llround(w * 1000.0);
    return 0;
}

static int pool_ref(struct api_req *r, json_t *np, struct db_quota *q)
{
    static const char *const fields[] = {"id", "name", NULL};
    struct db_pool p;
    char id[32] = "", name[DB_NAME_LEN] = "";
    json_t *idv = json_object_get(np, "id");
    int rc;

    if (!json_is_object(np)) {
        api_error(r, 400, "Bad request", "resources[].nodePool {id, name} is required");
        return -1;
    }
    if (api_json_allow(r, np, fields, "nodePool"))
        return -1;
    if (json_is_integer(idv))
        snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(idv));
    else if (api_json_str(r, np, "id", id, sizeof(id), 0) ||
             api_json_str(r, np, "name", name, sizeof(name), 0))
        return -1;
    if (!name[0])
        api_json_str(r, np, "name", name, sizeof(name), 0);
    rc = id[0] ? db_pool_get(r->app->db, strtoll(id, NULL, 10), &p)
               : db_pool_by_name(r->app->db, name, &p);
    if (rc != DB_OK) {
        api_error(r, 400, "Bad request", "resources[].nodePool names no node pool");
        return -1;
    }
    q->pool_seq = p.seq;
    snprintf(q->pool_name, sizeof(q->pool_name), "%s", p.name);
    return 0;
}

/* resources[].priority: the over-quota priority in the pool (Normal when absent or null). */
static int priority_in(struct api_req *r, json_t *e, struct db_quota *q)
{
    char name[16] = "";

    q->priority = SCHED_OQ_NORMAL;
    if (api_json_str(r, e, "priority", name, sizeof(name), 0))
        return -1;
    if (name[0] && sched_overquota_priority(name, &q->priority) != SCHED_OK) {
        api_error(r, 400, "Bad request", "resources[].priority must be None, Low, Normal or High");
        return -1;
    }
    return 0;
}

static int resource_in(struct api_req *r, json_t *e, struct db_quota *q)
{
    memset(q, 0, sizeof(*q));
    q->limit[0] = q->limit[1] = q->limit[2] = -1;
    q->weight[0] = q->weight[1] = q->weight[2] = 1000;
    q->has[0] = 1;
    if (!json_is_object(e)) {
        api_error(r, 400, "Bad request", "resources[] entries are objects");
        return -1;
    }
    if (api_json_allow(r, e, res_fields, "resources[]") ||
        pool_ref(r, json_object_get(e, "nodePool"), q))
        return -1;
    if (!json_object_get(e, "gpu")) {
        api_error(r, 400, "Bad request", "resources[].gpu is required");
        return -1;
    }
    if (triple_in(r, json_object_get(e, "gpu"), 0, q) ||
        triple_in(r, json_object_get(e, "cpu"), 1, q) ||
        triple_in(r, json_object_get(e, "memory"), 2, q) || priority_in(r, e, q))
        return -1;
    return 0;
}

/* Parses a resources array into q->quotas (one entry per pool). */
static int resources_in(struct api_req *r, json_t *a, struct db_queue *q)
{
    size_t i, j;

    if (!json_is_array(a) || json_array_size(a) > DB_MAX_POOLS) {
        api_error(r, 400, "Bad request", "resources must be an array of at most 32 entries");
        return -1;
    }
    q->n_quotas = 0;
    for (i = 0; i < json_array_size(a); i++) {
        if (resource_in(r, json_array_get(a, i), &q->quotas[i]))
            return -1;
        for (j = 0; j < i; j++)
            if (q->quotas[j].pool_seq == q->quotas[i].pool_seq) {
                api_error(r, 400, "Bad request", "a node pool appears twice in resources");
                return -1;
            }
        q->n_quotas++;
    }
    return 0;
}

/* ---- departments and projects ---- */

/* A department's or project's plain fields; the others are read by the
 * functions below, or by the handler (parentId). */
struct queue_body {
    char cluster_id[64];
    char name[DB_NAME_LEN];
    char description[DB_MSG_LEN];
    int rank;
};
#define B struct queue_body
static const struct api_field queue_fields[] = {
    API_FIELD_STR(B, "clusterId", cluster_id, API_F_OPTIONAL),
    API_FIELD_STR(B, "name", name, API_F_ON_CREATE),
    API_FIELD_TEXT(B, "description", description, DB_MSG_LEN, API_F_OPTIONAL, API_TEXT_FREE),
    API_FIELD_INT(B, "rank", rank, -1000, 1000),
    API_FIELD_OTHER("defaultNodePools"),
    API_FIELD_OTHER("nodeTypes"),
    API_FIELD_OTHER("schedulingRules"),
    API_FIELD_OTHER("resources"),
    /* a project's alone, from here */
    API_FIELD_OTHER("parentId"),
    API_FIELD_OTHER("requestedNamespace"),
    API_FIELD_OTHER("enforceRunaiScheduler"),
};
#undef B
#define N_DEPARTMENT_FIELDS 8

/* The Run:ai project fields allot has one fixed answer for: the namespace
 * is always runai-<name>, and allot is always the scheduler. Any other
 * value is refused rather than dropped. */
static int fixed_fields_in(struct api_req *r, json_t *o, const struct db_queue *q)
{
    json_t *ns = json_object_get(o, "requestedNamespace");
    json_t *enforce = json_object_get(o, "enforceRunaiScheduler");
    char want[DB_NAME_LEN + 8];

    snprintf(want, sizeof(want), "runai-%s", q->name);
    if (ns && !json_is_null(ns) && (!json_is_string(ns) || strcmp(json_string_value(ns), want))) {
        api_error(r, 400, "Bad request",
                  "requestedNamespace is not supported: a project's namespace is always "
                  "runai-<name>");
        return -1;
    }
    if (enforce && !json_is_null(enforce) && !json_is_true(enforce)) {
        api_error(r, 400, "Bad request",
                  "enforceRunaiScheduler must be true: allot schedules every workload");
        return -1;
    }
    return 0;
}

/* defaultNodePools: an ordered array of pool names, stored comma-separated. */
static int default_pools_in(struct api_req *r, json_t *a, struct db_queue *q)
{
    struct db_pool p;
    size_t i, used = 0, n;

    q->default_pools[0] = 0;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > DB_MAX_POOLS) {
        api_error(r, 400, "Bad request", "field 'defaultNodePools' must be an array of names");
        return -1;
    }
    for (i = 0; i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_string(v) || db_pool_by_name(r->app->db, json_string_value(v), &p)) {
            api_error(r, 400, "Bad request", "field 'defaultNodePools' names no node pool");
            return -1;
        }
        n = strlen(p.name);
        if (used + n + 2 > sizeof(q->default_pools)) {
            api_error(r, 400, "Bad request", "field 'defaultNodePools' is too long");
            return -1;
        }
        if (used)
            q->default_pools[used++] = ',';
        memcpy(q->default_pools + used, p.name, n + 1);
        used += n;
    }
    return 0;
}

/* An array of at most 16 short strings. */
static int names_ok(json_t *a)
{
    size_t i;

    if (!json_is_array(a) || json_array_size(a) > 16)
        return 0;
    for (i = 0; i < json_array_size(a); i++)
        if (!json_is_string(json_array_get(a, i)) ||
            json_string_length(json_array_get(a, i)) == 0 ||
            json_string_length(json_array_get(a, i)) >= 64)
            return 0;
    return 1;
}

/* A field kept as JSON text (nodeTypes, schedulingRules): clears out; 1
 * if o is an object of the allowed keys, to be checked and stored, 0 if
 * it is absent or null, -1 with the 400 replied. */
static int kept_object_in(struct api_req *r, json_t *o, const char *field,
                          const char *const *allowed, char *out)
{
    char why[96];

    out[0] = 0;
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        snprintf(why, sizeof(why), "field '%s' must be an object", field);
        api_error(r, 400, "Bad request", why);
        return -1;
    }
    return api_json_allow(r, o, allowed, field) ? -1 : 1;
}

/* Stores o as compact JSON, keys sorted, in out[len]: 0, or -1 with a
 * 400 when it does not fit. */
static int kept_object_store(struct api_req *r, json_t *o, const char *field, char *out,
                             size_t len)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    char why[96];

    if (!text || strlen(text) >= len) {
        free(text);
        snprintf(why, sizeof(why), "field '%s' is too large", field);
        api_error(r, 400, "Bad request", why);
        return -1;
    }
    memcpy(out, text, strlen(text) + 1);
    free(text);
    return 0;
}

/* nodeTypes {training: [ids], workspace: [ids], names: {id: name}}:
 * the node types each kind of workload may run on; names maps an id to the
 * node type's name (an id it does not map is a name itself). */
static int node_types_in(struct api_req *r, json_t *o, struct db_queue *q)
{
    static const char *const fields[] = {"training", "workspace", "names", NULL};
    int rc = kept_object_in(r, o, "nodeTypes", fields, q->node_types);
    json_t *v, *names;
    const char *key;

    if (rc <= 0)
        return rc;
    if ((json_object_get(o, "training") && !names_ok(json_object_get(o, "training"))) ||
        (json_object_get(o, "workspace") && !names_ok(json_object_get(o, "workspace")))) {
        api_error(r, 400, "Bad request", "nodeTypes.training and .workspace are arrays of names");
        return -1;
    }
    names = json_object_get(o, "names");
    if (names && !json_is_object(names)) {
        api_error(r, 400, "Bad request", "nodeTypes.names is an object of names");
        return -1;
    }
    json_object_foreach(names, key, v) {
        if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= 64 ||
            strchr(json_string_value(v), ',')) {
            api_error(r, 400, "Bad request",
                      "nodeTypes.names maps node type ids to names (non-empty, under 64 bytes)");
            return -1;
        }
    }
    return kept_object_store(r, o, "nodeTypes", q->node_types, sizeof(q->node_types));
}

/* schedulingRules: time limits and idle limits in seconds. */
static int rules_in(struct api_req *r, json_t *o, struct db_queue *q)
{
    static const char *const fields[] = {
        "interactiveJobTimeLimitSeconds", "interactiveJobMaxIdleDurationSeconds",
        "interactiveJobPreemptIdleDurationSeconds", "trainingJobMaxIdleDurationSeconds",
        "trainingJobTimeLimitSeconds", NULL};
    int rc = kept_object_in(r, o, "schedulingRules", fields, q->scheduling_rules);
    const char *const *f;
    int64_t v;

    if (rc <= 0)
        return rc;
    for (f = fields; *f; f++)
        if (api_json_int(r, o, *f, 1, 366LL * 86400, &v))
            return -1;
    return kept_object_store(r, o, "schedulingRules", q->scheduling_rules,
                             sizeof(q->scheduling_rules));
}

/* resources in a PATCH: entries replace the ones of the same pool. */
static int resources_merge(struct api_req *r, json_t *a, struct db_queue *q)
{
    struct db_queue *in = calloc(1, sizeof(*in));
    int i, k, rc = -1;

    if (!in) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    if (resources_in(r, a, in) != 0)
        goto out;
    for (i = 0; i < in->n_quotas; i++) {
        for (k = 0; k < q->n_quotas && q->quotas[k].pool_seq != in->quotas[i].pool_seq; k++)
            ;
        if (k == q->n_quotas) {
            if (q->n_quotas == DB_MAX_POOLS) {
                api_error(r, 400, "Bad request", "too many node pools in resources");
                goto out;
            }
            q->n_quotas++;
        }
        q->quotas[k] = in->quotas[i];
    }
    rc = 0;
out:
    free(in);
    return rc;
}

/* Applies the fields present in o onto q. mode: 0 create (name
 * required), 1 replace (PUT), 2 merge (PATCH). */
static int queue_fields_in(struct api_req *r, json_t *o, struct db_queue *q, int mode)
{
    struct queue_body b = {.rank = q->rank};
    json_t *res = json_object_get(o, "resources");

    snprintf(b.description, sizeof(b.description), "%s", q->description);
    if (api_fields_in(r, o, queue_fields,
                      q->kind == DB_PROJECT ? API_FIELDS_N(queue_fields) : N_DEPARTMENT_FIELDS, &b,
                      NULL, mode == 0) ||
        !api_cluster_id_ok(r, b.cluster_id))
        return -1;
    q->rank = b.rank;
    snprintf(q->description, sizeof(q->description), "%s", b.description);
    if (mode == 0)
        snprintf(q->name, sizeof(q->name), "%s", b.name);
    else if (b.name[0] && strcmp(b.name, q->name) != 0) {
        api_error(r, 400, "Bad request", "a department or project cannot be renamed");
        return -1;
    }
    if (!api_valid_name(q->name)) {
        api_error(r, 400, "Bad request",
                  "name: lowercase letters, digits and '-', at most 63 characters");
        return -1;
    }
    if (q->kind == DB_PROJECT && fixed_fields_in(r, o, q))
        return -1;
    if ((mode != 2 || json_object_get(o, "defaultNodePools")) &&
        default_pools_in(r, json_object_get(o, "defaultNodePools"), q))
        return -1;
    if ((mode != 2 || json_object_get(o, "nodeTypes")) &&
        node_types_in(r, json_object_get(o, "nodeTypes"), q))
        return -1;
    if ((mode != 2 || json_object_get(o, "schedulingRules")) &&
        rules_in(r, json_object_get(o, "schedulingRules"), q))
        return -1;
    if (!res)
        return 0;
    return mode == 2 ? resources_merge(r, res, q) : resources_in(r, res, q);
}

/* ---- Run:ai's rules for a queue's numbers in a pool ----
 *
 * 1. A limit is -1 (none) or at least the deserved quota (Run:ai: "if equal
 *    to deserved, no over-quota will be allowed"): a limit below the quota
 *    is refused.
 * 2. A department that sets a quota in a pool caps its projects' quotas
 *    there: a project's deserved (or an unlimited one) above its
 *    department's is refused, and so is a department lowered below one of
 *    its projects. A department with no entry for a pool (the `default`
 *    department has none) caps nothing there. The projects' sum may go
 *    above the department's (the department is oversubscribed, as Run:ai
 *    allows); the dashboard warns about it. */

static const char *const res_word[3] = {"GPU", "CPU", "memory"};

static void quantity_text(int k, int64_t v, char *out, size_t len)
{
    if (v < 0)
        snprintf(out, len, "unlimited");
    else if (k == 0)
        snprintf(out, len, "%g", dev(v));
    else if (k == 1)
        snprintf(out, len, "%lld millicores", (long long)v);
    else
        snprintf(out, len, "%lld MiB", (long long)v);
}

static int limits_ok(struct api_req *r, const struct db_queue *q)
{
    char lim[32], des[32], msg[DB_NAME_LEN * 2 + 200];
    int i, k;

    for (i = 0; i < q->n_quotas; i++)
        for (k = 0; k < 3; k++) {
            const struct db_quota *x = &q->quotas[i];
            if (!x->has[k] || x->limit[k] < 0 || (x->deserved[k] >= 0 &&
                                                  x->limit[k] >= x->deserved[k]))
                continue;
            quantity_text(k, x->limit[k], lim, sizeof(lim));
            quantity_text(k, x->deserved[k], des, sizeof(des));
            snprintf(msg, sizeof(msg),
                     "the %s limit of %s in node pool %s (%s) is below its quota (%s): a limit "
                     "is -1 (none) or at least the quota", res_word[k], q->name, x->pool_name,
                     lim, des);
            api_error(r, 400, "Bad request", msg);
            return 0;
        }
    return 1;
}

/* Does project p keep within department d in every pool d sets a quota
 * for? On the first excess, points *dq and *pq at the two entries, sets
 * *res to the resource and returns 0. */
static int within_department(const struct db_queue *p, const struct db_queue *d,
                             const struct db_quota **dq, const struct db_quota **pq, int *res)
{
    static const struct db_quota none = {0};
    int i, j, k;

    for (i = 0; i < d->n_quotas; i++) {
        const struct db_quota *x = &none;
        for (j = 0; j < p->n_quotas; j++)
            if (p->quotas[j].pool_seq == d->quotas[i].pool_seq)
                x = &p->quotas[j];
        for (k = 0; k < 3; k++) {
            int64_t cap = d->quotas[i].deserved[k], want = x->has[k] ? x->deserved[k] : 0;
            if (!d->quotas[i].has[k] || cap < 0 || (want >= 0 && want <= cap))
                continue;
            *dq = &d->quotas[i];
            *pq = x;
            *res = k;
            return 0;
        }
    }
    return 1;
}

static void excess_error(struct api_req *r, const struct db_queue *p, const struct db_queue *d,
                         const struct db_quota *dq, const struct db_quota *pq, int k,
                         int from_department)
{
    char want[32], cap[32], msg[DB_NAME_LEN * 4 + 200];

    quantity_text(k, pq->has[k] ? pq->deserved[k] : 0, want, sizeof(want));
    quantity_text(k, dq->deserved[k], cap, sizeof(cap));
    if (from_department)
        snprintf(msg, sizeof(msg),
                 "the %s quota of department %s in node pool %s (%s) would be below that of its "
                 "project %s (%s): lower the project's quota first", res_word[k], d->name,
                 dq->pool_name, cap, p->name, want);
    else
        snprintf(msg, sizeof(msg),
                 "the %s quota of project %s in node pool %s (%s) is above that of its "
                 "department %s (%s)", res_word[k], p->name, dq->pool_name, want, d->name, cap);
    api_error(r, 400, "Bad request", msg);
}

/* Rules 1 and 2 for q as it would be saved; replies 400 itself. */
static int quotas_ok(struct api_req *r, const struct db_queue *q)
{
    const struct db_quota *dq, *pq;
    struct db_queue *d = NULL, *ps = NULL;
    int n = 0, i, k, ok = 0, rc;

    if (!limits_ok(r, q))
        return 0;
    if (q->kind == DB_PROJECT) {
        d = calloc(1, sizeof(*d));
        rc = !d ? DB_ENOMEM : db_queue_get(r->app->db, q->parent_id, d);
        if (rc != DB_OK) {
            api_db_error(r, rc, "cannot read the project's department");
            goto out;
        }
        if (!within_department(q, d, &dq, &pq, &k)) {
            excess_error(r, q, d, dq, pq, k, 0);
            goto out;
        }
    } else {
        rc = db_queue_list(r->app->db, DB_PROJECT, &ps, &n);
        if (rc != DB_OK) {
            api_db_error(r, rc, "cannot read the department's projects");
            goto out;
        }
        for (i = 0; i < n; i++)
            if (ps[i].parent_seq == q->seq && q->seq && !within_department(&ps[i], q, &dq, &pq, &k)) {
                excess_error(r, &ps[i], q, dq, pq, k, 1);
                goto out;
            }
    }
    ok = 1;
out:
    free(d);
    free(ps);
    return ok;
}

static int queue_in(struct api_req *r, json_t *o, int kind, struct db_queue *q)
{
    memset(q, 0, sizeof(*q));
    q->kind = kind;
    snprintf(q->created_by, sizeof(q->created_by), "%s", r->who.user.login);
    return queue_fields_in(r, o, q, 0);
}

static int project_parent(struct api_req *r, json_t *o, struct db_queue *q)
{
    struct db_queue d;
    char pid[DB_ID_LEN] = "";
    int rc;

    if (api_json_str(r, o, "parentId", pid, sizeof(pid), 0))
        return -1;
    rc = pid[0] ? db_queue_get(r->app->db, pid, &d)
                : db_queue_by_name(r->app->db, DB_DEPARTMENT, "default", &d);
    if (rc != DB_OK || d.kind != DB_DEPARTMENT) {
        api_error(r, 400, "Bad request", "parentId names no department");
        return -1;
    }
    q->parent_seq = d.seq;
    snprintf(q->parent_id, sizeof(q->parent_id), "%s", d.id);
    snprintf(q->parent_name, sizeof(q->parent_name), "%s", d.name);
    return 0;
}

/* The kind of queue the route is about (API_ARG_PROJECT). */
static int route_kind(const struct api_req *r)
{
    return r->arg & API_ARG_PROJECT ? DB_PROJECT : DB_DEPARTMENT;
}

void api_h_queues_create(struct api_req *r)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    int kind = route_kind(r);
    json_t *o = NULL;
    int rc;

    if (!q) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    o = api_body_object(r);
    if (!o || queue_in(r, o, kind, q) || (kind == DB_PROJECT && project_parent(r, o, q)))
        goto out;
    if (!api_can(&r->who, API_ORG_WRITE, "", kind == DB_PROJECT ? q->parent_id : "")) {
        api_error(r, 403, "Forbidden", "creating here needs the org-write right on the parent");
        goto out;
    }
    if (!quotas_ok(r, q))
        goto out;
    rc = db_queue_insert(r->app->db, q);
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_ECONFLICT ? "the name is taken" : "cannot create");
        goto out;
    }
    ctl_sched_org_changed(r->app->sched);
    api_reply(r, 201, queue_json(r, q));
out:
    json_decref(o);
    free(q);
}

static int can_read_queue(const struct api_req *r, const struct db_queue *q)
{
    if (q->kind == DB_PROJECT)
        return api_can(&r->who, API_ORG_READ, q->id, q->parent_id);
    return api_can(&r->who, API_ORG_READ, "", q->id);
}

struct qrow {
    const struct db_queue *q;
    double gpu_quota, gpu_alloc;
};

static int qrow_get(const void *row, const char *f, struct api_lv *v)
{
    const struct qrow *x = row;
    const struct db_queue *q = x->q;

    if (strcmp(f, "name") == 0)
        v->s = q->name;
    else if (strcmp(f, "clusterId") == 0)
        v->s = API_CLUSTER_ID;
    else if (strcmp(f, "parentId") == 0 || strcmp(f, "departmentId") == 0)
        v->s = q->kind == DB_PROJECT ? q->parent_id : q->id;
    else if (strcmp(f, "parentName") == 0 || strcmp(f, "departmentName") == 0)
        v->s = q->kind == DB_PROJECT ? q->parent_name : q->name;
    else if (strcmp(f, "phase") == 0)
        v->s = "Ready";
    else if (strcmp(f, "description") == 0)
        v->s = q->description;
    else if (strcmp(f, "totalGpuQuota") == 0 || strcmp(f, "gpuAllocated") == 0 ||
             strcmp(f, "rank") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = f[0] == 't' ? x->gpu_quota : f[0] == 'g' ? x->gpu_alloc : q->rank;
    } else if (strcmp(f, "createdAt") == 0 || strcmp(f, "updatedAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)(f[0] == 'c' ? q->created_at : q->updated_at);
    } else
        return -1;
    return 0;
}

static json_t *qrow_json(struct api_req *r, const void *row)
{
    return queue_json(r, ((const struct qrow *)row)->q);
}

static void qrow_fill(struct api_req *r, const struct db_queue *q, struct qrow *x)
{
    struct ctl_share sh;
    int i;

    x->q = q;
    x->gpu_quota = x->gpu_alloc = 0;
    for (i = 0; i < q->n_quotas; i++) {
        if (x->gpu_quota >= 0)
            x->gpu_quota = q->quotas[i].deserved[0] < 0 ? -1
                                                        : x->gpu_quota + dev(q->quotas[i].deserved[0]);
        if (ctl_sched_share(r->app->sched, q->seq, q->quotas[i].pool_seq, &sh))
            x->gpu_alloc += dev(sh.allocated[0]);
    }
}

void api_h_queues_list(struct api_req *r)
{
    struct db_queue *qs = NULL;
    struct qrow *rows = NULL;
    struct api_lq q;
    int kind = route_kind(r), n = 0, i, k = 0, rc;

    if (api_lq_parse(r, &q) != 0)
        return;
    rc = db_queue_list(r->app->db, kind, &qs, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    rows = calloc((size_t)n + 1, sizeof(*rows));
    if (!rows) {
        api_error(r, 500, "Internal error", "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++)
        if (can_read_queue(r, &qs[i]))
            qrow_fill(r, &qs[i], &rows[k++]);
    api_lq_reply(r, &q, &(struct api_lq_rows){rows, k, sizeof(*rows), qrow_get, qrow_json},
                 kind == DB_PROJECT ? "projects" : "departments", (r->arg & API_ARG_COUNT) != 0);
out:
    free(rows);
    free(qs);
}

/* Loads the queue of that id and kind, if the caller may read it. */
static struct db_queue *queue_load_id(struct api_req *r, int kind, const char *id)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    int rc;

    if (!q) {
        api_error(r, 500, "Internal error", "out of memory");
        return NULL;
    }
    rc = db_queue_get(r->app->db, id, q);
    if (rc == DB_OK && (q->kind != kind || !can_read_queue(r, q)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, kind == DB_PROJECT ? "no such project" : "no such department");
        free(q);
        return NULL;
    }
    return q;
}

/* Loads the queue of the path, of the route's kind, that the caller may read. */
static struct db_queue *queue_load(struct api_req *r)
{
    return queue_load_id(r, route_kind(r), r->params[0]);
}

void api_h_queue_get(struct api_req *r)
{
    struct db_queue *q = queue_load(r);

    if (!q)
        return;
    api_reply(r, 200, queue_json(r, q));
    free(q);
}

static int can_write_queue(struct api_req *r, const struct db_queue *q)
{
    if (api_can(&r->who, API_ORG_WRITE, "", q->kind == DB_PROJECT ? q->parent_id : ""))
        return 1;
    api_error(r, 403, "Forbidden", "changing this needs the org-write right on its parent");
    return 0;
}

/* What still holds a queue ("projects a, b" or "workloads x, y (Running)"),
 * into out; "" when nothing does. */
static void holders(struct api_req *r, const struct db_queue *q, char *out, size_t len)
{
    struct db_queue *qs = NULL;
    struct db_workload *ws = NULL;
    struct db_wl_query wq;
    size_t used = 0;
    int n = 0, i;

    out[0] = 0;
    if (q->kind == DB_DEPARTMENT && db_queue_list(r->app->db, DB_PROJECT, &qs, &n) == DB_OK)
        for (i = 0; i < n && used < len; i++)
            if (qs[i].parent_seq == q->seq)
                used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "projects ",
                                         qs[i].name);
    free(qs);
    if (q->kind != DB_PROJECT)
        return;
    memset(&wq, 0, sizeof(wq));
    wq.projects = &q->seq;
    wq.n_projects = 1;
    wq.limit = 10;
    wq.include_deleted = 1; /* those still being deleted hold it too */
    n = 0;
    if (db_workload_list(r->app->db, &wq, &ws, &n) == DB_OK)
        for (i = 0; i < n && used < len; i++)
            if (!ws[i].deleted_at || strcmp(ws[i].phase, "Deleting") == 0)
                used += (size_t)snprintf(out + used, len - used, "%s%s (%s)",
                                         used ? ", " : "workloads ", ws[i].name, ws[i].phase);
    db_workloads_free(ws, n);
}

void api_h_queue_delete(struct api_req *r)
{
    struct db_queue *q = queue_load(r);
    char what[DB_MSG_LEN - 64], msg[DB_MSG_LEN];
    int64_t *purged = NULL;
    int n_purged = 0, rc;

    if (!q || !can_write_queue(r, q))
        goto out;
    rc = db_queue_delete(r->app->db, q->seq, &purged, &n_purged);
    api_logs_drop(r->app->cfg.files_stem, purged, n_purged);
    if (rc == DB_ECONFLICT) { /* Run:ai's deletes list 400, not 409 */
        holders(r, q, what, sizeof(what));
        snprintf(msg, sizeof(msg), "%s %.63s still holds %.380s: delete them first",
                 q->kind == DB_PROJECT ? "project" : "department", q->name,
                 what[0] ? what : "workloads being deleted");
        api_error(r, 400, "Bad request", msg);
        goto out;
    }
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot delete");
        goto out;
    }
    ctl_sched_org_changed(r->app->sched);
    api_reply_text(r, 204, "application/json", "", 0);
out:
    free(purged);
    free(q);
}

/* Stores a changed queue once its quotas pass (quotas_ok) and tells the
 * scheduler: 0, or -1 replied. */
static int queue_store(struct api_req *r, struct db_queue *q)
{
    int rc;

    if (!quotas_ok(r, q))
        return -1;
    rc = db_queue_update(r->app->db, q);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot update");
        return -1;
    }
    ctl_sched_org_changed(r->app->sched);
    return 0;
}

/* PUT (replace) and PATCH (merge) of a department's or project's resources. */
void api_h_queue_resources(struct api_req *r)
{
    struct db_queue *q = queue_load(r);
    int merge = (r->arg & API_ARG_PATCH) != 0;
    json_t *a = NULL;

    if (!q || !can_write_queue(r, q))
        goto out;
    if (!r->body || r->body_len == 0) {
        api_error(r, 400, "Bad request", "the body must be a JSON array of resources");
        goto out;
    }
    a = api_json_parse(r, r->body, r->body_len);
    if (!a)
        goto out;
    if ((merge ? resources_merge(r, a, q) : resources_in(r, a, q)) || queue_store(r, q))
        goto out;
    api_reply(r, 200, resources_json(q));
out:
    json_decref(a);
    free(q);
}

struct db_queue *api_queue_resources_in(struct api_req *r, int kind, const char *id,
                                        json_t *resources, int replace)
{
    struct db_queue *q = queue_load_id(r, kind, id);

    if (q && can_write_queue(r, q) &&
        (replace ? resources_in(r, resources, q) : resources_merge(r, resources, q)) == 0 &&
        quotas_ok(r, q))
        return q;
    free(q);
    return NULL;
}

/* PUT (replace) and PATCH (merge) of a department or project. */
void api_h_queue_change(struct api_req *r)
{
    struct db_queue *q = queue_load(r);
    int mode = r->arg & API_ARG_PATCH ? 2 : 1;
    json_t *o = NULL;
    int rc;

    if (!q || !can_write_queue(r, q))
        goto out;
    o = api_body_object(r);
    if (!o)
        goto out;
    if (json_object_get(o, "parentId") && q->kind == DB_PROJECT) {
        char pid[DB_ID_LEN + 8] = "";
        if (api_json_str(r, o, "parentId", pid, sizeof(pid), 0))
            goto out;
        if (pid[0] && strcmp(pid, q->parent_id) != 0) {
            api_error(r, 400, "Bad request", "a project cannot move to another department");
            goto out;
        }
    }
    if (mode == 1) {
        q->description[0] = 0;
        q->rank = 0;
    }
    if (queue_fields_in(r, o, q, mode) || queue_store(r, q))
        goto out;
    rc = db_queue_get(r->app->db, q->id, q);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read it back");
        goto out;
    }
    api_reply(r, 200, queue_json(r, q));
out:
    json_decref(o);
    free(q);
}

/* GET /org-unit/priorities: the over-quota priorities a queue may have in
 * a pool (resources[].priority), Normal the default. */
void api_h_org_priorities(struct api_req *r)
{
    json_t *a = json_array();
    int level;

    for (level = 0; a && sched_overquota_priority_name(level)[0]; level++)
        json_array_append_new(a, json_pack("{s:s, s:i, s:b}", "name",
                                           sched_overquota_priority_name(level), "value", level,
                                           "isDefault", level == SCHED_OQ_NORMAL));
    api_reply(r, 200, json_pack("{s:o}", "priorities", a));
}
