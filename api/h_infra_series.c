/*
 * h_infra_series.c: the metrics time series of the cluster, its node
 * pools and its nodes, and what a workload asks and holds:
 *   GET /api/v1/clusters/{uuid}/metrics (groupBy=Nodepool, nodepoolName)
 *   GET /api/v1/clusters/{uuid}/nodepools/{name}/metrics
 *   GET /api/v1/nodes/{id}/metrics
 *   and the allocation and request types of /workloads/{id}/metrics
 *   (api_wl_series_add(), called by gpu_usage.c), and a project's or
 *   department's GPU_MEMORY_UTILIZATION, GPU_UTILIZATION and
 *   IDLE_ALLOCATED_GPUS (api_queue_series_add(), called by h_series.c)
 * with metricType, start, end and numberOfSamples read as for every series
 * (h_series.c).
 *
 * The values come from the series the scheduler thread records when they
 * change (series_rec.c, db/series.c): each is a step function, and a
 * sample time takes the value in force then; times before a series' first
 * point, and those whose value in force is -1 (a measured series gone:
 * no figure), are left out. A _PER_GPU metric answers one measurement per
 * device, labelled {"gpu": "<index>"}; GPU utilization and device memory
 * exist only where agents report them (none for simulated nodes).
 * UNALLOCATED_GPU is TOTAL_GPU minus ALLOCATED_GPU at each time;
 * IDLE_ALLOCATED_GPUS (an allot extension, Run:ai's name of the node
 * telemetry) counts the allocated devices agents measure at 0%.
 *
 * Invariant: nodes, pools and the cluster need only a token (every role
 * may see the capacity it competes for); a workload's series need the
 * right to read the workload (gpu_usage.c loads it).
 */
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES 16

/* How a value is written: GPUs with three decimals, whole numbers, or a
 * number with at most two decimals. */
enum format { F_GPU, F_INT, F_NUM };

struct metric {
    const char *name;
    int format;
    int derived;                  /* UNALLOCATED_GPU: TOTAL_GPU - ALLOCATED_GPU */
};

static const struct metric capacity_metrics[] = {
    {"TOTAL_GPU_NODES", F_INT, 0},  {"TOTAL_GPU", F_GPU, 0},
    {"GPU_QUOTA", F_GPU, 0},        {"ALLOCATED_GPU", F_GPU, 0},
    {"UNALLOCATED_GPU", F_GPU, 1},  {"WORKLOADS_COUNT", F_INT, 0},
    {"GPU_UTILIZATION", F_NUM, 0},  {"GPU_MEMORY_UTILIZATION", F_NUM, 0},
    {"AVG_WORKLOAD_WAIT_TIME", F_NUM, 0}, {"IDLE_ALLOCATED_GPUS", F_INT, 0},
};

static const struct metric node_metrics[] = {
    {"GPU_UTILIZATION", F_NUM, 0},
    {"GPU_MEMORY_UTILIZATION", F_NUM, 0},
    {"GPU_MEMORY_USAGE_BYTES", F_INT, 0},
    {"GPU_UTILIZATION_PER_GPU", F_NUM, 0},
    {"GPU_MEMORY_UTILIZATION_PER_GPU", F_NUM, 0},
    {"GPU_MEMORY_USAGE_BYTES_PER_GPU", F_INT, 0},
    {"GPU_ALLOCATION_PER_GPU", F_GPU, 0},
    {"GPU_MEMORY_ALLOCATION_BYTES_PER_GPU", F_INT, 0},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One step of a step function. */
struct step {
    int64_t ts;
    double v;
};

static json_t *value_text(double v, int format)
{
    char buf[48];

    if (format == F_GPU)
        snprintf(buf, sizeof(buf), "%.3f", v);
    else if (format == F_INT || v == floor(v))
        snprintf(buf, sizeof(buf), "%.0f", v);
    else
        snprintf(buf, sizeof(buf), "%.2f", v);
    return json_string(buf);
}

/* The value in force at `at` (steps sorted by time); 0 if none yet. */
static int value_at(const struct step *s, int n, int64_t at, double *v)
{
    int lo = 0, hi = n - 1, k = -1;

    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (s[mid].ts <= at) {
            k = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (k < 0)
        return 0;
    *v = s[k].v;
    return 1;
}

/* {type, labels, values} of steps a, minus steps b when given. Takes
 * ownership of labels (NULL: null). */
static json_t *measurement(const struct api_series_range *q, const char *name, int format,
                           json_t *labels, const struct step *a, int na, const struct step *b,
                           int nb)
{
    json_t *values = json_array();
    int i;

    for (i = 0; values && i < q->n_samples; i++) {
        int64_t at = api_series_at(q, i);
        double va, vb = 0;
        if (!value_at(a, na, at, &va) || (b && !value_at(b, nb, at, &vb)) || va < 0 || vb < 0)
            continue; /* nothing in force yet, or no figure (-1: series_rec.c) */
        json_array_append_new(values, json_pack("{s:o, s:o}", "value",
                                                value_text(va - vb, format), "timestamp",
                                                api_time(at)));
    }
    return json_pack("{s:s, s:o, s:o}", "type", name, "labels", labels ? labels : json_null(),
                     "values", values);
}

/* Appends the measurements of one series (one per label) to a; labels
 * (borrowed) is what an unlabelled series is labelled with. 0 or -1
 * (replied). */
static int series_add(struct api_req *r, const struct api_series_range *q,
                      const struct metric *t, int kind, const char *entity, json_t *labels,
                      json_t *a)
{
    struct db_point *p = NULL, *tp = NULL;
    struct step *s = NULL, *u = NULL;
    int n = 0, nt = 0, i, start, rc;

    rc = db_series_get(r->app->db, kind, entity, t->derived ? "ALLOCATED_GPU" : t->name,
                       q->start, q->end, &p, &n);
    if (rc == DB_OK && t->derived)
        rc = db_series_get(r->app->db, kind, entity, "TOTAL_GPU", q->start, q->end, &tp, &nt);
    s = calloc((size_t)n + 1, sizeof(*s));
    u = calloc((size_t)nt + 1, sizeof(*u));
    if (rc != DB_OK || !s || !u) {
        api_db_error(r, rc != DB_OK ? rc : DB_ENOMEM, "cannot read the series");
        rc = -1;
        goto out;
    }
    for (i = 0; i < nt; i++)
        u[i] = (struct step){tp[i].ts, tp[i].value};
    for (start = 0; start < n; start = i) { /* one measurement per label */
        json_t *l;
        for (i = start; i < n && strcmp(p[i].label, p[start].label) == 0; i++)
            s[i] = (struct step){p[i].ts, p[i].value};
        l = p[start].label[0] ? json_pack("{s:s}", "gpu", p[start].label) : json_incref(labels);
        if (t->derived)
            json_array_append_new(a, measurement(q, t->name, t->format, l, u, nt, s + start,
                                                 i - start));
        else
            json_array_append_new(a, measurement(q, t->name, t->format, l, s + start,
                                                 i - start, NULL, 0));
    }
    if (n == 0) /* no points: the measurement has no values */
        json_array_append_new(a, measurement(q, t->name, t->format, json_incref(labels), s, 0,
                                             NULL, 0));
    rc = 0;
out:
    free(p);
    free(tp);
    free(s);
    free(u);
    return rc;
}

/* metricType (against table) and the range; -1 replied 400. */
static int request_in(struct api_req *r, const struct metric *table, int n_table,
                      struct api_series_range *q, int *types, int *n_types)
{
    const char *names[MAX_TYPES];
    int i;

    for (i = 0; i < n_table && i < MAX_TYPES; i++)
        names[i] = table[i].name;
    return api_series_types(r, names, n_table, types, MAX_TYPES, n_types) != 0 ||
                   api_series_range_in(r, q) != 0
               ? -1
               : 0;
}

/* The measurements of every type asked for one entity; takes ownership
 * of labels. 0 or -1 (replied). */
static int entity_add(struct api_req *r, const struct api_series_range *q,
                      const struct metric *table, const int *types, int n_types, int kind,
                      const char *entity, json_t *labels, json_t *a)
{
    int i, rc = 0;

    for (i = 0; i < n_types && rc == 0; i++)
        rc = series_add(r, q, &table[types[i]], kind, entity, labels, a);
    json_decref(labels);
    return rc;
}

static void reply(struct api_req *r, json_t *a, int rc)
{
    if (rc != 0)
        json_decref(a);
    else
        api_reply(r, 200, json_pack("{s:o}", "measurements", a));
}

/* ---- the cluster and its node pools ---- */

/* GET /clusters/{uuid}/metrics: the cluster, or one pool (nodepoolName),
 * or each pool labelled {nodepool} (groupBy=Nodepool), or each project or
 * department (groupBy=Project|Department, h_series.c). With aggregation
 * (an allot extension), the projects' allocation and quota summed, with
 * the highest and mean value of each slot (h_series.c). */
void api_h_cluster_metrics(struct api_req *r)
{
    struct api_series_range q;
    struct db_pool *pools = NULL, p;
    char pool[DB_NAME_LEN] = "", group[32] = "";
    int types[MAX_TYPES], n_types = 0, n = 0, i, rc = 0;
    json_t *a;

    if (api_query(r, "groupBy", group, sizeof(group)) == 0 &&
        (strcmp(group, "Project") == 0 || strcmp(group, "Department") == 0)) {
        api_cluster_metrics_by_queue(r, group[0] == 'P' ? DB_PROJECT : DB_DEPARTMENT);
        return;
    }
    group[0] = 0;
    if (api_query(r, "aggregation", group, sizeof(group)) == 0) {
        api_cluster_metrics_aggregated(r); /* max and mean per slot (h_series.c) */
        return;
    }
    if (!api_cluster_path_ok(r, 404) ||
        request_in(r, capacity_metrics, COUNT(capacity_metrics), &q, types, &n_types) != 0)
        return;
    if (api_query(r, "groupBy", group, sizeof(group)) == 0 && strcmp(group, "Nodepool") != 0) {
        api_error(r, 400, "Bad request", "groupBy: allotd groups by Nodepool, Project or Department");
        return;
    }
    if (api_query(r, "nodepoolName", pool, sizeof(pool)) == 0 &&
        db_pool_by_name(r->app->db, pool, &p) != DB_OK) {
        api_error(r, 404, "Not found", "nodepoolName names no node pool");
        return;
    }
    a = json_array();
    if (!group[0])
        rc = entity_add(r, &q, capacity_metrics, types, n_types,
                        pool[0] ? DB_SERIES_POOL : DB_SERIES_CLUSTER,
                        pool[0] ? pool : API_CLUSTER_ID, NULL, a);
    else if (db_pool_list(r->app->db, &pools, &n) != DB_OK) {
        api_error(r, 500, "Internal error", "cannot list node pools");
        rc = -1;
    }
    for (i = 0; i < n && rc == 0; i++)
        if (!pool[0] || strcmp(pools[i].name, pool) == 0)
            rc = entity_add(r, &q, capacity_metrics, types, n_types, DB_SERIES_POOL,
                            pools[i].name, json_pack("{s:s}", "nodepool", pools[i].name), a);
    free(pools);
    reply(r, a, rc);
}

void api_h_pool_metrics(struct api_req *r)
{
    struct api_series_range q;
    struct db_pool p;
    int types[MAX_TYPES], n_types = 0;
    json_t *a;

    if (!api_cluster_path_ok(r, 404))
        return;
    if (db_pool_by_name(r->app->db, r->params[1], &p) != DB_OK) {
        api_error(r, 404, "Not found", "no such node pool");
        return;
    }
    if (request_in(r, capacity_metrics, COUNT(capacity_metrics), &q, types, &n_types) != 0)
        return;
    a = json_array();
    reply(r, a, entity_add(r, &q, capacity_metrics, types, n_types, DB_SERIES_POOL, p.name, NULL,
                           a));
}

/* ---- nodes ---- */

void api_h_node_metrics(struct api_req *r)
{
    struct api_series_range q;
    struct db_node *nodes = NULL;
    int types[MAX_TYPES], n_types = 0, n = 0, i;
    json_t *a;

    if (db_node_list(r->app->db, &nodes, &n) != DB_OK) {
        api_error(r, 500, "Internal error", "cannot list nodes");
        return;
    }
    for (i = 0; i < n && strcmp(nodes[i].id, r->params[0]) != 0; i++)
        ;
    if (i == n)
        api_error(r, 404, "Not found", "no such node");
    else if (request_in(r, node_metrics, COUNT(node_metrics), &q, types, &n_types) == 0) {
        a = json_array();
        reply(r, a, entity_add(r, &q, node_metrics, types, n_types, DB_SERIES_NODE, nodes[i].id,
                               NULL, a));
    }
    free(nodes);
}

/* ---- a workload's allocation and requests ---- */

static const struct metric wl_held[] = {
    {"GPU_ALLOCATION", F_GPU, 0},
    {"RUNNING_POD_COUNT", F_INT, 0},
};

static const char *const wl_asked[] = {"POD_COUNT", "CPU_REQUEST_CORES",
                                       "CPU_MEMORY_REQUEST_BYTES", "GPU_MEMORY_REQUEST_BYTES"};

/* A request of the workload, in force from its creation to its end. */
static json_t *asked(const struct api_series_range *q, int which, const struct db_workload *w)
{
    struct step s[2];
    int devices = w->gpu_devices > 0 ? w->gpu_devices : 1, n = 1;
    int64_t end = w->deleted_at ? w->deleted_at : w->completed_at;
    double v = which == 0   ? w->n_pods
               : which == 1 ? (double)w->cpu_milli / 1000.0
               : which == 2 ? (double)w->mem_mib * 1048576.0
                            : (double)w->gpu_memory_mib * devices * 1048576.0;

    s[0] = (struct step){w->created_at, v};
    if (end > 0) /* nothing is asked once it ended */
        s[n++] = (struct step){end, 0};
    return measurement(q, wl_asked[which], which == 1 ? F_NUM : F_INT, NULL, s, n, NULL, 0);
}

int api_wl_series_add(struct api_req *r, const struct db_workload *w, const char *metric,
                      const struct api_series_range *q, json_t *a)
{
    char entity[24];
    int i;

    for (i = 0; i < COUNT(wl_asked); i++)
        if (strcmp(wl_asked[i], metric) == 0) {
            json_array_append_new(a, asked(q, i, w));
            return 0;
        }
    snprintf(entity, sizeof(entity), "%lld", (long long)w->seq);
    for (i = 0; i < COUNT(wl_held); i++)
        if (strcmp(wl_held[i].name, metric) == 0)
            return series_add(r, q, &wl_held[i], DB_SERIES_WORKLOAD, entity, NULL, a);
    api_error(r, 500, "Internal error", "no such workload series");
    return -1;
}

/* ---- what agents measure on a project's or department's devices ---- */

int api_queue_series_add(struct api_req *r, const char *queue_id, int64_t pool_seq,
                         const char *metric, json_t *labels, const struct api_series_range *q,
                         json_t *a)
{
    static const struct metric queue_metrics[] = {
        {"GPU_MEMORY_UTILIZATION", F_NUM, 0},
        {"GPU_UTILIZATION", F_NUM, 0},
        {"IDLE_ALLOCATED_GPUS", F_INT, 0},
    };
    char entity[DB_NAME_LEN];
    int i;

    if (pool_seq > 0)
        snprintf(entity, sizeof(entity), "%s/%lld", queue_id, (long long)pool_seq);
    else
        snprintf(entity, sizeof(entity), "%s", queue_id);
    for (i = 0; i < COUNT(queue_metrics); i++)
        if (strcmp(queue_metrics[i].name, metric) == 0)
            return series_add(r, q, &queue_metrics[i], DB_SERIES_QUEUE, entity, labels, a);
    api_error(r, 500, "Internal error", "no such project series");
    return -1;
}
