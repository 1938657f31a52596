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
 */
#include "api.h"

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
    json_object_set_new(o, "priority", json_string("Normal"));
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

/* status: quotaStatus (sum over pools) and nodePoolQuotaStatuses. */
static json_t *status_json(struct api_req *r, const struct db_queue *q)
{
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
        struct api_share sh;
        json_t *e;
        memset(&sh, 0, sizeof(sh));
        api_sched_share(r->app->sched, q->seq, u[i].pool_seq, &sh);
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
    return st;
}

static json_t *queue_json(struct api_req *r, const struct db_queue *q)
{
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "id", q->id,
        "name", q->name, "description", q->description, "clusterId", API_CLUSTER_ID,
        "createdAt", api_time(q->created_at), "updatedAt", api_time(q->updated_at),
        "createdBy", q->created_by, "updatedBy", q->created_by, "resources", resources_json(q),
        "totalResources", totals_json(q), "status", status_json(r, q), "defaultNodePools",
        json_null(), "schedulingRules", json_null(), "nodeTypes", json_object());

    if (!o)
        return NULL;
    json_object_set_new(o, "effective", json_pack("{s:n, s:n, s:{}}", "schedulingRules",
                                                  "defaultNodePools", "nodeTypes"));
    if (q->kind == DB_PROJECT) {
        json_object_set_new(o, "parentId", json_string(q->parent_id));
        json_object_set_new(o, "parent", json_pack("{s:s, s:s}", "id", q->parent_id, "name",
                                                   q->parent_name));
        json_object_set_new(o, "enforceRunaiScheduler", json_true());
        json_object_set_new(o, "rank", json_integer(q->rank));
    }
    return o;
}

/* ---- resources[] in ---- */

static const char *const res_fields[] = {"nodePool", "gpu", "cpu", "memory", "priority", "rank",
                                         NULL};
static const char *const triple_fields[] = {"deserved", "limit", "overQuotaWeight", "units",
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
    if (api_json_allow(r, o, triple_fields, res == 0 ? "gpu" : res == 1 ? "cpu" : "memory") ||
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
        triple_in(r, json_object_get(e, "memory"), 2, q))
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

static const char *const queue_fields[] = {
    "name", "clusterId", "parentId", "description", "requestedNamespace",
    "enforceRunaiScheduler", "defaultNodePools", "nodeTypes", "schedulingRules", "resources",
    NULL,
};

static int cluster_ok(struct api_req *r, json_t *o)
{
    char cid[64] = "";

    if (api_json_str(r, o, "clusterId", cid, sizeof(cid), 0))
        return -1;
    if (cid[0] && strcmp(cid, API_CLUSTER_ID) != 0) {
        api_error(r, 400, "Bad request", "clusterId names no cluster");
        return -1;
    }
    return 0;
}

static int queue_in(struct api_req *r, json_t *o, int kind, struct db_queue *q)
{
    memset(q, 0, sizeof(*q));
    q->kind = kind;
    snprintf(q->created_by, sizeof(q->created_by), "%s", r->who.user.login);
    if (api_json_allow(r, o, queue_fields, NULL) || cluster_ok(r, o) ||
        api_json_str(r, o, "name", q->name, sizeof(q->name), 1) ||
        api_json_str(r, o, "description", q->description, sizeof(q->description), 0))
        return -1;
    if (!api_valid_name(q->name)) {
        api_error(r, 400, "Bad request",
                  "name: lowercase letters, digits and '-', at most 63 characters");
        return -1;
    }
    if (kind == DB_DEPARTMENT && json_object_get(o, "parentId")) {
        api_error(r, 400, "Bad request", "unknown field 'parentId'");
        return -1;
    }
    if (!json_object_get(o, "resources"))
        return 0;
    return resources_in(r, json_object_get(o, "resources"), q);
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

static void queue_create(struct api_req *r, int kind)
{
    struct db_queue *q = calloc(1, sizeof(*q));
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
    rc = db_queue_insert(r->app->db, q);
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_ECONFLICT ? "the name is taken" : "cannot create");
        goto out;
    }
    api_sched_wake(r->app->sched);
    api_reply(r, 201, queue_json(r, q));
out:
    json_decref(o);
    free(q);
}

void api_h_departments_create(struct api_req *r)
{
    queue_create(r, DB_DEPARTMENT);
}

void api_h_projects_create(struct api_req *r)
{
    queue_create(r, DB_PROJECT);
}

static int can_read_queue(const struct api_req *r, const struct db_queue *q)
{
    if (q->kind == DB_PROJECT)
        return api_can(&r->who, API_ORG_READ, q->id, q->parent_id);
    return api_can(&r->who, API_ORG_READ, "", q->id);
}

static int page_params(struct api_req *r, int *offset, int *limit)
{
    char buf[32];
    char *end;

    *offset = 0;
    *limit = API_PAGE_DEFAULT;
    if (api_query(r, "offset", buf, sizeof(buf)) == 0) {
        *offset = (int)strtol(buf, &end, 10);
        if (*end || *offset < 0) {
            api_error(r, 400, "Bad request", "offset must be a non-negative integer");
            return -1;
        }
    }
    if (api_query(r, "limit", buf, sizeof(buf)) == 0) {
        *limit = (int)strtol(buf, &end, 10);
        if (*end || *limit < 1 || *limit > API_PAGE_MAX) {
            api_error(r, 400, "Bad request", "limit must be between 1 and 500");
            return -1;
        }
    }
    return 0;
}

static void queue_list(struct api_req *r, int kind, const char *key)
{
    struct db_queue *qs = NULL;
    int n = 0, i, seen = 0, offset, limit, rc;
    json_t *a, *o;

    if (page_params(r, &offset, &limit))
        return;
    rc = db_queue_list(r->app->db, kind, &qs, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++) {
        if (!can_read_queue(r, &qs[i]))
            continue;
        if (seen++ < offset || (int)json_array_size(a) >= limit)
            continue;
        json_array_append_new(a, queue_json(r, &qs[i]));
    }
    o = json_pack("{s:o}", key, a);
    if (o && seen > offset + limit)
        json_object_set_new(o, "next", json_integer(offset + limit));
    api_reply(r, 200, o);
    free(qs);
}

void api_h_departments_list(struct api_req *r)
{
    queue_list(r, DB_DEPARTMENT, "departments");
}

void api_h_projects_list(struct api_req *r)
{
    queue_list(r, DB_PROJECT, "projects");
}

/* Loads the queue of the path, of the given kind, that the caller may read. */
static struct db_queue *queue_load(struct api_req *r, int kind)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    int rc;

    if (!q) {
        api_error(r, 500, "Internal error", "out of memory");
        return NULL;
    }
    rc = db_queue_get(r->app->db, r->params[0], q);
    if (rc == DB_OK && (q->kind != kind || !can_read_queue(r, q)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, kind == DB_PROJECT ? "no such project" : "no such department");
        free(q);
        return NULL;
    }
    return q;
}

static void queue_get(struct api_req *r, int kind)
{
    struct db_queue *q = queue_load(r, kind);

    if (!q)
        return;
    api_reply(r, 200, queue_json(r, q));
    free(q);
}

void api_h_department_get(struct api_req *r)
{
    queue_get(r, DB_DEPARTMENT);
}

void api_h_project_get(struct api_req *r)
{
    queue_get(r, DB_PROJECT);
}

static int can_write_queue(struct api_req *r, const struct db_queue *q)
{
    if (api_can(&r->who, API_ORG_WRITE, "", q->kind == DB_PROJECT ? q->parent_id : ""))
        return 1;
    api_error(r, 403, "Forbidden", "changing this needs the org-write right on its parent");
    return 0;
}

static void queue_delete(struct api_req *r, int kind)
{
    struct db_queue *q = queue_load(r, kind);
    int rc;

    if (!q || !can_write_queue(r, q))
        goto out;
    rc = db_queue_delete(r->app->db, q->seq);
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_ECONFLICT ? "it still holds projects or workloads"
                                               : "cannot delete");
        goto out;
    }
    api_sched_wake(r->app->sched);
    api_reply_text(r, 204, "application/json", "", 0);
out:
    free(q);
}

void api_h_department_delete(struct api_req *r)
{
    queue_delete(r, DB_DEPARTMENT);
}

void api_h_project_delete(struct api_req *r)
{
    queue_delete(r, DB_PROJECT);
}

static void queue_resources(struct api_req *r, int kind)
{
    struct db_queue *q = queue_load(r, kind);
    json_error_t err;
    json_t *a = NULL;
    int rc;

    if (!q || !can_write_queue(r, q))
        goto out;
    a = r->body ? json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &err) : NULL;
    if (!a) {
        api_error(r, 400, "Bad request", "the body must be a JSON array of resources");
        goto out;
    }
    if (resources_in(r, a, q))
        goto out;
    rc = db_queue_update(r->app->db, q);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot update");
        goto out;
    }
    api_sched_wake(r->app->sched);
    api_reply(r, 200, resources_json(q));
out:
    json_decref(a);
    free(q);
}

void api_h_department_resources(struct api_req *r)
{
    queue_resources(r, DB_DEPARTMENT);
}

void api_h_project_resources(struct api_req *r)
{
    queue_resources(r, DB_PROJECT);
}

/* ---- node pools, nodes, clusters ---- */

static json_t *pool_json(const struct db_pool *p, const struct db_node *nodes, int n_nodes)
{
    static const char *const place[] = {"binpack", "spread"};
    json_t *names = json_array();
    int64_t gpus = 0, alloc = 0;
    char id[24];
    int i;

    for (i = 0; i < n_nodes; i++) {
        if (nodes[i].pool_seq != p->seq)
            continue;
        json_array_append_new(names, json_string(nodes[i].name));
        gpus += nodes[i].n_gpus;
        alloc += nodes[i].alloc_gpu_milli;
    }
    snprintf(id, sizeof(id), "%lld", (long long)p->seq);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:b, s:o, s:o, s:s, s:s, s:i,"
        " s:{s:s, s:s}, s:{s:o}, s:I, s:f}",
        "id", id, "name", p->name, "labelKey", p->label_key, "labelValue", p->label_value,
        "clusterId", API_CLUSTER_ID, "clusterName", API_CLUSTER_NAME, "tenantId", 1,
        "createdBy", p->created_by, "updatedBy", p->created_by, "isDefault",
        strcmp(p->name, "default") == 0, "createdAt", api_time(p->created_at), "updatedAt",
        api_time(p->updated_at), "phase", json_array_size(names) ? "Ready" : "Empty",
        "phaseMessage", "", "overProvisioningRatio", 1, "placementStrategy", "gpu",
        place[p->gpu_placement & 1], "cpu", place[p->cpu_placement & 1], "status", "nodes",
        names, "gpus", (json_int_t)gpus, "allocatedGpus", dev(alloc));
}

void api_h_pools_list(struct api_req *r)
{
    struct db_pool *pools = NULL;
    struct db_node *nodes = NULL;
    int np = 0, nn = 0, i, rc;
    json_t *a;

    rc = db_pool_list(r->app->db, &pools, &np);
    if (rc == DB_OK)
        rc = db_node_list(r->app->db, &nodes, &nn);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        goto out;
    }
    a = json_array();
    for (i = 0; i < np; i++)
        json_array_append_new(a, pool_json(&pools[i], nodes, nn));
    api_reply(r, 200, json_pack("{s:o}", "nodepools", a));
out:
    free(pools);
    free(nodes);
}

static int placement_in(struct api_req *r, json_t *o, struct db_pool *p)
{
    static const char *const fields[] = {"gpu", "cpu", NULL};
    char g[16] = "binpack", c[16] = "spread";

    if (!o)
        return 0;
    if (!json_is_object(o)) {
        api_error(r, 400, "Bad request", "placementStrategy is an object");
        return -1;
    }
    if (api_json_allow(r, o, fields, "placementStrategy") ||
        api_json_str(r, o, "gpu", g, sizeof(g), 0) || api_json_str(r, o, "cpu", c, sizeof(c), 0))
        return -1;
    if ((strcmp(g, "binpack") && strcmp(g, "spread")) ||
        (strcmp(c, "binpack") && strcmp(c, "spread"))) {
        api_error(r, 400, "Bad request", "placementStrategy values are binpack or spread");
        return -1;
    }
    p->gpu_placement = strcmp(g, "spread") == 0;
    p->cpu_placement = strcmp(c, "spread") == 0;
    return 0;
}

void api_h_pools_create(struct api_req *r)
{
    static const char *const fields[] = {"name", "clusterId", "labelKey", "labelValue",
                                         "placementStrategy", "overProvisioningRatio", NULL};
    struct db_pool p;
    json_t *o = api_body_object(r);
    int rc;

    memset(&p, 0, sizeof(p));
    p.cpu_placement = 1;
    if (!o)
        return;
    if (api_json_allow(r, o, fields, NULL) || cluster_ok(r, o) ||
        api_json_str(r, o, "name", p.name, sizeof(p.name), 1) ||
        api_json_str(r, o, "labelKey", p.label_key, sizeof(p.label_key), 1) ||
        api_json_str(r, o, "labelValue", p.label_value, sizeof(p.label_value), 1) ||
        placement_in(r, json_object_get(o, "placementStrategy"), &p))
        goto out;
    if (!api_valid_name(p.name) || !p.label_key[0] || !p.label_value[0]) {
        api_error(r, 400, "Bad request", "name must be a valid name; labels are non-empty");
        goto out;
    }
    if (!api_can(&r->who, API_NODE_WRITE, "", "")) {
        api_error(r, 403, "Forbidden", "node pools need a system-scope rule");
        goto out;
    }
    snprintf(p.created_by, sizeof(p.created_by), "%s", r->who.user.login);
    rc = db_pool_insert(r->app->db, &p);
    if (rc != DB_OK) {
        api_db_error(r, rc, rc == DB_ECONFLICT ? "the name is taken" : "cannot create");
        goto out;
    }
    api_reply(r, 201, pool_json(&p, NULL, 0));
out:
    json_decref(o);
}

static json_t *node_json(const struct db_node *n)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:[], s:[], s:{s:s, s:i}, s:o, s:o, s:f, s:f,"
                     " s:b}",
                     "id", n->id, "name", n->name, "clusterUuid", API_CLUSTER_ID, "nodePool",
                     n->pool_name, "status", n->ready ? "Ready" : "NotReady", "conditions",
                     "taints", "gpuInfo", "gpuType", n->gpu_type, "gpuCount", n->n_gpus,
                     "createdAt", api_time(n->created_at), "updatedAt", api_time(n->updated_at),
                     "allocatedGpus", dev(n->alloc_gpu_milli), "freeGpus",
                     (double)n->n_gpus - dev(n->alloc_gpu_milli), "simulated", n->simulated);
}

void api_h_nodes(struct api_req *r)
{
    struct db_node *nodes = NULL;
    int n = 0, i, rc;
    json_t *a;

    rc = db_node_list(r->app->db, &nodes, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list");
        return;
    }
    a = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(a, node_json(&nodes[i]));
    api_reply(r, 200, json_pack("{s:o}", "nodes", a));
    free(nodes);
}

void api_h_clusters(struct api_req *r)
{
    api_reply(r, 200,
              json_pack("[{s:s, s:i, s:s, s:o, s:s, s:s, s:o, s:n, s:o, s:n,"
                        " s:{s:s, s:[]}}]",
                        "uuid", API_CLUSTER_ID, "tenantId", 1, "name", API_CLUSTER_NAME,
                        "createdAt", api_time(1), "domain", "", "version", "0.1.0", "updatedAt",
                        api_time(1), "deletedAt", "lastLiveness", api_time(api_now_ms()),
                        "deleteRequestedAt", "status", "state", "Connected", "conditions"));
}
