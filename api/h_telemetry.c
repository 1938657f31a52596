/*
 * h_telemetry.c: current figures of the cluster in Run:ai's
 * TelemetryResponse shape, {type, timestamp, values: [{value: "<string>",
 * groups: [{key, value, name}]}]}, for the Overview:
 *
 *   GET /api/v1/workloads/telemetry?telemetryType=WORKLOADS_COUNT |
 *       GPU_ALLOCATION | PENDING_TIME_DISTRIBUTION [&groupBy=A[,B]]
 *       [&nodepoolName=P] [&departmentId=D] [&filterByPhases=X,Y] [&clusterId=C]
 *     groupBy: ClusterId, DepartmentId, ProjectId, Type, CurrentNodepools,
 *     Phase, Category (at most two). A workload's CurrentNodepools is the
 *     pool of its first placed pod, else the first pool it asks for.
 *     PENDING_TIME_DISTRIBUTION counts the Pending workloads by how long
 *     they have been Pending, grouped first by PendingTime (value: the
 *     bucket's lower bound in seconds, name: "under 1 minute" ...), then by
 *     at most one groupBy.
 *   GET /api/v1/nodes/telemetry (h_pools.c) uses telemetry_reply() too.
 *   GET /api/v1/org-unit/projects/telemetry?telemetryType=T [&groupBy=A[,B]]
 *       [&clusterId=C] [&nodepoolId=N] [&departmentId=D]
 *   GET /api/v1/org-unit/departments/telemetry?telemetryType=T
 *       [&groupBy=CLUSTER_ID] [&clusterId=C] [&nodepoolName=P] [&departmentId=D]
 *     T: GPU_, CPU_ or MEMORY_ QUOTA (the deserved quotas, summed over the
 *     queues and pools kept), _ALLOCATION (what their bound pods hold now),
 *     _ALLOCATION_NON_PREEMPTIBLE (the part non-preemptible workloads
 *     hold); GPUs in devices, CPU in millicores, memory in MB, as the
 *     org-unit series (h_series.c); an unlimited quota (-1) makes its
 *     value -1. A department's allocation counts its projects'. groupBy:
 *     ClusterId, NodepoolId, ParentId for projects, CLUSTER_ID for
 *     departments. Only the queues the caller may read count.
 *
 * Invariants:
 *   1. Workloads count only in projects the caller may read workloads of,
 *      as GET /api/v1/workloads does.
 *   2. Every group asked is in each value's groups, in the order asked;
 *      values come sorted by their groups' values.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the answer, shared with the nodes' telemetry ---- */

void api_tally_add(struct api_tally *t, const struct api_tally_key *keys, int n_keys, double v)
{
    int i, k;

    for (i = 0; i < t->n; i++) {
        for (k = 0; k < n_keys && strcmp(t->rows[i].keys[k].value, keys[k].value) == 0; k++)
            ;
        if (k == n_keys)
            break;
    }
    if (i == t->n) {
        if (t->n == API_TALLY_MAX)
            return;
        memset(&t->rows[i], 0, sizeof(t->rows[i]));
        for (k = 0; k < n_keys; k++)
            t->rows[i].keys[k] = keys[k];
        t->n++;
    }
    if (v < 0)
        t->rows[i].unlimited = 1;
    else
        t->rows[i].value += v;
}

static int row_cmp(const void *a, const void *b)
{
    const struct api_tally_row *x = a, *y = b;
    int k, c;

    for (k = 0; k < API_TALLY_KEYS; k++) {
        if (x->keys[k].order != y->keys[k].order)
            return x->keys[k].order < y->keys[k].order ? -1 : 1;
        c = strcmp(x->keys[k].value, y->keys[k].value);
        if (c)
            return c;
    }
    return 0;
}

json_t *api_tally_json(struct api_tally *t, const char *type, const char *const *group_keys,
                       int n_keys, int integer)
{
    json_t *values = json_array(), *groups;
    char buf[48];
    int i, k;

    qsort(t->rows, (size_t)t->n, sizeof(t->rows[0]), row_cmp);
    for (i = 0; i < t->n; i++) {
        if (t->rows[i].unlimited)
            snprintf(buf, sizeof(buf), "-1");
        else if (integer)
            snprintf(buf, sizeof(buf), "%lld", (long long)(t->rows[i].value + 0.5));
        else
            snprintf(buf, sizeof(buf), "%.3f", t->rows[i].value);
        groups = json_array();
        for (k = 0; k < n_keys; k++)
            json_array_append_new(groups, json_pack("{s:s, s:s, s:s}", "key", group_keys[k],
                                                    "value", t->rows[i].keys[k].value, "name",
                                                    t->rows[i].keys[k].name));
        json_array_append_new(values, n_keys ? json_pack("{s:s, s:o}", "value", buf, "groups",
                                                         groups)
                                             : (json_decref(groups),
                                                json_pack("{s:s}", "value", buf)));
    }
    return json_pack("{s:s, s:o, s:o}", "type", type, "timestamp", api_time(api_now_ms()),
                     "values", values);
}

int api_group_by_in(struct api_req *r, const char *const *names, int n_names, int *groups,
                    int max, int *n_groups)
{
    char buf[256], msg[512];
    const char *p;
    size_t used;
    int i;

    *n_groups = 0;
    if (api_query(r, "groupBy", buf, sizeof(buf)) != 0)
        return 0;
    for (p = buf; *p;) {
        size_t n = strcspn(p, ",");
        for (i = 0; i < n_names && (strlen(names[i]) != n || strncmp(names[i], p, n)); i++)
            ;
        if (i == n_names || *n_groups >= max) {
            used = (size_t)snprintf(msg, sizeof(msg), "groupBy: at most %d of ", max);
            for (i = 0; i < n_names && used < sizeof(msg); i++)
                used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", i ? ", " : "",
                                         names[i]);
            api_error(r, 400, "Bad request", msg);
            return -1;
        }
        groups[(*n_groups)++] = i;
        p += n + (p[n] == ',');
    }
    return 0;
}

int api_telemetry_type_in(struct api_req *r, const char *const *names, int n_names)
{
    char buf[64], msg[512];
    size_t used;
    int i;

    if (api_query(r, "telemetryType", buf, sizeof(buf)) == 0)
        for (i = 0; i < n_names; i++)
            if (strcmp(buf, names[i]) == 0)
                return i;
    used = (size_t)snprintf(msg, sizeof(msg), "telemetryType: one of ");
    for (i = 0; i < n_names && used < sizeof(msg); i++)
        used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", i ? ", " : "", names[i]);
    api_error(r, 400, "Bad request", msg);
    return -1;
}

/* ---- workloads ---- */

enum { WT_COUNT, WT_GPU, WT_PENDING, N_WT };
static const char *const wt_names[N_WT] = {"WORKLOADS_COUNT", "GPU_ALLOCATION",
                                           "PENDING_TIME_DISTRIBUTION"};
enum { G_CLUSTER, G_DEPARTMENT, G_PROJECT, G_TYPE, G_POOLS, G_PHASE, G_CATEGORY, N_G };
static const char *const g_names[N_G] = {"ClusterId", "DepartmentId", "ProjectId", "Type",
                                         "CurrentNodepools", "Phase", "Category"};

/* Pending-time buckets: lower bounds in seconds and their names. */
static const int64_t pending_edges[] = {60, 300, 1800, 3600, 4 * 3600, 86400};
#define N_EDGES ((int)(sizeof(pending_edges) / sizeof(pending_edges[0])))
static const char *const bucket_names[N_EDGES + 1] = {
    "under 1 minute", "1 to 5 minutes", "5 to 30 minutes", "30 minutes to 1 hour",
    "1 to 4 hours", "4 to 24 hours", "over a day"};

struct wl_filter {
    char pool[DB_NAME_LEN];
    char department[DB_ID_LEN];
    char phases[512];             /* ",A,B," or "" */
};

static int wl_filter_in(struct api_req *r, struct wl_filter *f)
{
    char buf[sizeof(f->phases) - 2];

    memset(f, 0, sizeof(*f));
    if (api_query(r, "clusterId", buf, sizeof(buf)) == 0 && strcmp(buf, API_CLUSTER_ID) != 0)
        return api_error(r, 400, "Bad request", "clusterId names no cluster"), -1;
    if (api_query(r, "nodepoolName", f->pool, sizeof(f->pool)) != 0)
        f->pool[0] = 0;
    if (api_query(r, "departmentId", f->department, sizeof(f->department)) != 0)
        f->department[0] = 0;
    if (api_query(r, "filterByPhases", buf, sizeof(buf)) == 0)
        snprintf(f->phases, sizeof(f->phases), ",%s,", buf);
    return 0;
}

/* The key of row t for group g. */
static void wl_key(int g, const struct db_wl_tally *t, const struct db_queue *p,
                   struct api_tally_key *k)
{
    static const char *const category[] = {"Train", "Build", "Deploy", "Train"};

    memset(k, 0, sizeof(*k));
    switch (g) {
    case G_CLUSTER:
        snprintf(k->value, sizeof(k->value), "%s", API_CLUSTER_ID);
        snprintf(k->name, sizeof(k->name), "%s", API_CLUSTER_NAME);
        break;
    case G_DEPARTMENT:
        snprintf(k->value, sizeof(k->value), "%s", p ? p->parent_id : "");
        snprintf(k->name, sizeof(k->name), "%s", p ? p->parent_name : "");
        break;
    case G_PROJECT:
        snprintf(k->value, sizeof(k->value), "%s", p ? p->id : "");
        snprintf(k->name, sizeof(k->name), "%s", p ? p->name : "");
        break;
    case G_TYPE:
        snprintf(k->value, sizeof(k->value), "%s", db_type_name(t->type));
        break;
    case G_POOLS:
        snprintf(k->value, sizeof(k->value), "%s", t->pool);
        break;
    case G_PHASE:
        snprintf(k->value, sizeof(k->value), "%s", t->phase);
        break;
    default:
        snprintf(k->value, sizeof(k->value), "%s", category[t->type & 3]);
        break;
    }
    if (!k->name[0])
        snprintf(k->name, sizeof(k->name), "%s", k->value);
}

/* The projects the caller may read workloads of, as a JSON array of seqs
 * (NULL with *all set when it may read every one). */
static int wl_scope(struct api_req *r, const struct db_queue *ps, int n, char **json, int *all)
{
    json_t *a;
    int i;

    *json = NULL;
    *all = api_can(&r->who, API_WL_READ, "", "");
    if (*all)
        return 0;
    a = json_array();
    for (i = 0; i < n; i++)
        if (api_can(&r->who, API_WL_READ, ps[i].id, ps[i].parent_id))
            json_array_append_new(a, json_integer(ps[i].seq));
    *json = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return *json ? 0 : -1;
}

void api_h_wl_telemetry(struct api_req *r)
{
    struct db_queue *ps = NULL;
    struct db_wl_tally *rows = NULL;
    struct api_tally *tally = calloc(1, sizeof(*tally));
    struct api_tally_key keys[API_TALLY_KEYS];
    const char *group_keys[API_TALLY_KEYS];
    struct wl_filter f;
    char *scope = NULL, phase[32];
    int type, groups[2], n_groups = 0, np = 0, n = 0, i, k, all, rc;

    if (!tally) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    /* at most two groups in all (Run:ai's TelemetryResponse): PendingTime is one */
    if ((type = api_telemetry_type_in(r, wt_names, N_WT)) < 0 ||
        api_group_by_in(r, g_names, N_G, groups, type == WT_PENDING ? 1 : 2, &n_groups) != 0 ||
        wl_filter_in(r, &f) != 0)
        goto out;
    rc = db_queue_list(r->app->db, DB_PROJECT, &ps, &np);
    if (rc == DB_OK && wl_scope(r, ps, np, &scope, &all) != 0)
        rc = DB_ENOMEM;
    if (rc == DB_OK)
        rc = db_workload_tally(r->app->db, scope, api_now_ms(), pending_edges, N_EDGES, &rows, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot count the workloads");
        goto out;
    }
    for (i = 0; i < n; i++) {
        const struct db_queue *p = NULL;
        int kk = 0;
        for (k = 0; k < np && ps[k].seq != rows[i].project_seq; k++)
            ;
        p = k < np ? &ps[k] : NULL;
        snprintf(phase, sizeof(phase), ",%s,", rows[i].phase);
        if ((f.pool[0] && strcmp(f.pool, rows[i].pool)) ||
            (f.department[0] && (!p || strcmp(f.department, p->parent_id))) ||
            (f.phases[0] && !strstr(f.phases, phase)) ||
            (type == WT_PENDING && rows[i].bucket < 0))
            continue;
        if (type == WT_PENDING) {
            memset(&keys[0], 0, sizeof(keys[0]));
            keys[0].order = rows[i].bucket;
            snprintf(keys[0].value, sizeof(keys[0].value), "%lld",
                     (long long)(rows[i].bucket ? pending_edges[rows[i].bucket - 1] : 0));
            snprintf(keys[0].name, sizeof(keys[0].name), "%s", bucket_names[rows[i].bucket]);
            group_keys[kk++] = "PendingTime";
        }
        for (k = 0; k < n_groups; k++) {
            wl_key(groups[k], &rows[i], p, &keys[kk]);
            group_keys[kk++] = g_names[groups[k]];
        }
        api_tally_add(tally, keys, kk,
                      type == WT_GPU ? (double)rows[i].gpu_milli / 1000.0 : (double)rows[i].count);
    }
    if (type == WT_PENDING)
        group_keys[0] = "PendingTime";
    for (k = 0; k < n_groups; k++)
        group_keys[k + (type == WT_PENDING)] = g_names[groups[k]];
    if (n_groups == 0 && type != WT_PENDING && tally->n == 0)
        api_tally_add(tally, keys, 0, 0); /* one value, 0, when nothing matches */
    api_reply(r, 200, api_tally_json(tally, wt_names[type], group_keys,
                                     n_groups + (type == WT_PENDING), type != WT_GPU));
out:
    free(tally);
    free(rows);
    free(ps);
    free(scope);
}

/* ---- projects and departments ---- */

enum { OT_QUOTA, OT_ALLOC, OT_ALLOC_NP };
static const char *const ot_names[] = {
    "GPU_QUOTA",      "CPU_QUOTA",      "MEMORY_QUOTA",      "GPU_ALLOCATION",
    "CPU_ALLOCATION", "MEMORY_ALLOCATION", "GPU_ALLOCATION_NON_PREEMPTIBLE",
    "CPU_ALLOCATION_NON_PREEMPTIBLE", "MEMORY_ALLOCATION_NON_PREEMPTIBLE"};
#define N_OT ((int)(sizeof(ot_names) / sizeof(ot_names[0])))
enum { OG_CLUSTER, OG_POOL, OG_PARENT };
static const char *const og_project[] = {"ClusterId", "NodepoolId", "ParentId"};
static const char *const og_department[] = {"CLUSTER_ID"};

struct org_filter {
    int kind;                     /* DB_PROJECT or DB_DEPARTMENT */
    int64_t pool_seq;             /* 0: every pool */
    char department[DB_ID_LEN];   /* "" every one */
};

/* clusterId, nodepoolId (projects) or nodepoolName (departments) and
 * departmentId; -1 replied. */
static int org_filter_in(struct api_req *r, struct org_filter *f)
{
    char buf[DB_NAME_LEN];
    struct db_pool p;
    int64_t seq = 0;

    memset(f, 0, sizeof(*f));
    f->kind = r->arg & API_ARG_PROJECT ? DB_PROJECT : DB_DEPARTMENT;
    if (api_query(r, "clusterId", buf, sizeof(buf)) == 0 && strcmp(buf, API_CLUSTER_ID) != 0)
        return api_error(r, 400, "Bad request", "clusterId names no cluster"), -1;
    if (f->kind == DB_PROJECT && api_query_int(r, "nodepoolId", 1, INT64_MAX, &seq) != 0)
        return -1;
    if (f->kind == DB_PROJECT && seq && db_pool_get(r->app->db, seq, &p) != DB_OK)
        return api_error(r, 400, "Bad request", "nodepoolId names no node pool"), -1;
    if (f->kind == DB_DEPARTMENT && api_query(r, "nodepoolName", buf, sizeof(buf)) == 0) {
        if (db_pool_by_name(r->app->db, buf, &p) != DB_OK)
            return api_error(r, 400, "Bad request", "nodepoolName names no node pool"), -1;
        seq = p.seq;
    }
    f->pool_seq = seq;
    if (api_query(r, "departmentId", f->department, sizeof(f->department)) != 0)
        f->department[0] = 0;
    return 0;
}

/* Does the caller see q, and does the filter keep it? */
static int org_kept(struct api_req *r, const struct org_filter *f, const struct db_queue *q)
{
    const char *dept = f->kind == DB_PROJECT ? q->parent_id : q->id;

    if (f->department[0] && strcmp(f->department, dept) != 0)
        return 0;
    return f->kind == DB_PROJECT ? api_can(&r->who, API_ORG_READ, q->id, q->parent_id)
                                 : api_can(&r->who, API_ORG_READ, "", q->id);
}

/* The name of the pool of that seq among ps. */
static const char *pool_name(const struct db_pool *ps, int n, int64_t seq)
{
    int i;

    for (i = 0; i < n && ps[i].seq != seq; i++)
        ;
    return i < n ? ps[i].name : "";
}

/* One queue's figure in one pool, under the groups asked. */
static void org_add(struct api_tally *t, const int *groups, int n_groups,
                    const struct db_queue *q, int64_t pool_seq, const char *pool, double v)
{
    struct api_tally_key keys[API_TALLY_KEYS];
    int k;

    memset(keys, 0, sizeof(keys));
    for (k = 0; k < n_groups; k++) {
        if (groups[k] == OG_CLUSTER) {
            snprintf(keys[k].value, sizeof(keys[k].value), "%s", API_CLUSTER_ID);
            snprintf(keys[k].name, sizeof(keys[k].name), "%s", API_CLUSTER_NAME);
        } else if (groups[k] == OG_POOL) {
            snprintf(keys[k].value, sizeof(keys[k].value), "%lld", (long long)pool_seq);
            snprintf(keys[k].name, sizeof(keys[k].name), "%s", pool);
        } else {
            snprintf(keys[k].value, sizeof(keys[k].value), "%s", q->parent_id);
            snprintf(keys[k].name, sizeof(keys[k].name), "%s", q->parent_name);
        }
    }
    api_tally_add(t, keys, n_groups, v);
}

/* A figure as the telemetry answers it: GPU devices, CPU millicores,
 * memory MB (from MiB); -1 stays -1. */
static double org_value(int res, int64_t v)
{
    if (v < 0)
        return -1;
    return res == 0 ? (double)v / 1000.0 : res == 2 ? (double)v * 1048576.0 / 1000000.0
                                                    : (double)v;
}

/* Adds queue q's figures of type `type` (a row of ot_names) per pool. */
static int org_queue_add(struct api_req *r, struct api_tally *t, int type, const int *groups,
                         int n_groups, const struct org_filter *f, const struct db_queue *q,
                         const struct db_pool *ps, int np)
{
    struct db_usage u[DB_MAX_POOLS];
    int res = type % 3, what = type / 3, n = 0, i, rc;

    if (what == OT_QUOTA) {
        for (i = 0; i < q->n_quotas; i++)
            if (q->quotas[i].has[res] && (!f->pool_seq || q->quotas[i].pool_seq == f->pool_seq))
                org_add(t, groups, n_groups, q, q->quotas[i].pool_seq, q->quotas[i].pool_name,
                        org_value(res, q->quotas[i].deserved[res]));
        return 0;
    }
    rc = db_queue_usage(r->app->db, q->seq, u, DB_MAX_POOLS, &n);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the allocation"), -1;
    for (i = 0; i < n; i++)
        if (!f->pool_seq || u[i].pool_seq == f->pool_seq)
            org_add(t, groups, n_groups, q, u[i].pool_seq, pool_name(ps, np, u[i].pool_seq),
                    org_value(res, what == OT_ALLOC ? u[i].allocated[res]
                                                    : u[i].allocated_np[res]));
    return 0;
}

void api_h_org_telemetry(struct api_req *r)
{
    struct api_tally *tally = calloc(1, sizeof(*tally));
    struct db_queue *qs = NULL;
    struct db_pool *ps = NULL;
    struct org_filter f;
    const char *group_keys[API_TALLY_KEYS];
    int project = (r->arg & API_ARG_PROJECT) != 0;
    const char *const *gnames = project ? og_project : og_department;
    int type, groups[2], n_groups = 0, nq = 0, np = 0, i, rc;

    if (!tally) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    if ((type = api_telemetry_type_in(r, ot_names, N_OT)) < 0 ||
        api_group_by_in(r, gnames, project ? 3 : 1, groups, project ? 2 : 1, &n_groups) != 0 ||
        org_filter_in(r, &f) != 0)
        goto out;
    rc = db_queue_list(r->app->db, f.kind, &qs, &nq);
    if (rc == DB_OK)
        rc = db_pool_list(r->app->db, &ps, &np);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot list the projects and departments");
        goto out;
    }
    for (i = 0; i < nq; i++)
        if (org_kept(r, &f, &qs[i]) &&
            org_queue_add(r, tally, type, groups, n_groups, &f, &qs[i], ps, np) != 0)
            goto out;
    for (i = 0; i < n_groups; i++)
        group_keys[i] = gnames[groups[i]];
    if (n_groups == 0 && tally->n == 0)
        api_tally_add(tally, NULL, 0, 0); /* one value, 0, when nothing matches */
    api_reply(r, 200, api_tally_json(tally, ot_names[type], group_keys, n_groups, type % 3 != 0));
out:
    free(tally);
    free(qs);
    free(ps);
}
