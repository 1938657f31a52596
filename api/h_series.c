/*
 * h_series.c: per-entity metrics time series,
 * GET /api/v1/org-unit/projects/{id}/metrics and .../departments/{id}/metrics
 * (a queue's own samples), and GET /api/v1/clusters/{clusterUuid}/metrics
 * when it asks an aggregation (every project's samples summed: the
 * cluster's allocation and quota over time; without one, h_infra_series.c
 * answers from the cluster's recorded series), with metricType
 * (comma-separated or repeated), start, end (ISO-8601, required),
 * numberOfSamples (default 20, at most 1000), nodepoolName and
 * aggregation.
 *
 * The answer is Run:ai's MetricsResponse: {"measurements": [{"type",
 * "labels", "values": [{"value": "<string>", "timestamp"}]}]}, one value
 * per sample slot. The slots split [start, end] evenly; slot i is the time
 * from slot i-1's time to its own (slot 0: as long, ending at start).
 * Samples form a step function (each value holds until the next sample);
 * aggregation (an allot extension: last, max, mean, or a comma list; last
 * by default) says what a slot shows:
 *   last: the value in force at the slot's time (Run:ai's answer);
 *   max:  the highest value in force at any moment of the slot;
 *   mean: the time-weighted mean over the part of the slot covered.
 * Each aggregation asked is one measurement per type, labelled
 * {"aggregation": "max"} (no labels for last). Slots before the first
 * sample are left out.
 * GPU_MEMORY_UTILIZATION is not an allocation sample: it is the memory
 * agents report in use on the devices the queue's pods hold, in percent
 * of those devices' memory (series_rec.c; h_infra_series.c reads it),
 * answered as the value in force at each slot's time whatever the
 * aggregation.
 *
 * Invariant: reading a queue's series needs the right to read the queue;
 * the cluster's needs only a token (every role sees the pools' capacity
 * and allocation).
 */
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES 1000

/* metricType name, the resource it reads (MEASURED: not an allocation
 * sample but the series of what agents report, h_infra_series.c), and
 * whether it is the quota. */
#define MEASURED (-1)
static const struct {
    const char *name;
    int res;
    int quota;
} metric_types[] = {
    {"GPU_ALLOCATION", 0, 0},
    {"GPU_QUOTA", 0, 1},
    {"CPU_ALLOCATION_MILLICORES", 1, 0},
    {"CPU_QUOTA_MILLICORES", 1, 1},
    {"CPU_MEMORY_ALLOCATION_MB", 2, 0},
    {"CPU_MEMORY_QUOTA_MB", 2, 1},
    {"GPU_MEMORY_UTILIZATION", MEASURED, 0},
};
#define N_TYPES ((int)(sizeof(metric_types) / sizeof(metric_types[0])))

struct series_req {
    int types[N_TYPES];
    int n_types;
    int aggs[3];   /* AGG_* */
    int n_aggs;
    struct api_series_range q;
    int64_t pool_seq;
};

/* ---- what every metrics time series reads (api.h) ---- */

static int type_find(const char *const *names, int n_names, const char *s, size_t n)
{
    int i;

    for (i = 0; i < n_names; i++)
        if (strlen(names[i]) == n && strncmp(names[i], s, n) == 0)
            return i;
    return -1;
}

/* metricType may be repeated (metricType=A&metricType=B) or a comma list. */
static int types_scan(const char *s, const char *const *names, int n_names, int *types, int max,
                      int *n_types)
{
    char buf[512];

    *n_types = 0;
    while (s && *s) {
        const char *amp = strchr(s, '&');
        size_t seg = amp ? (size_t)(amp - s) : strlen(s);
        char one[API_QUERY_VALUE_MAX * 3 + 16];   /* the dispatcher capped it decoded */
        if (seg > 11 && strncmp(s, "metricType=", 11) == 0) {
            const char *p;
            if (seg >= sizeof(one))
                return -1;
            memcpy(one, s, seg);
            one[seg] = 0;
            if (api_form_get(one, "metricType", buf, sizeof(buf)) != 0)
                return -1;
            for (p = buf; *p;) {
                size_t n = strcspn(p, ",");
                int t = type_find(names, n_names, p, n);
                if (t < 0 || *n_types >= max)
                    return -1;
                types[(*n_types)++] = t;
                p += n + (p[n] == ',');
            }
        }
        s = amp ? amp + 1 : NULL;
    }
    return *n_types > 0 ? 0 : -1;
}

int api_series_types(struct api_req *r, const char *const *names, int n_names, int *types,
                     int max, int *n_types)
{
    char details[1024];
    size_t used;
    int i;

    if (types_scan(r->query, names, n_names, types, max, n_types) == 0)
        return 0;
    used = (size_t)snprintf(details, sizeof(details), "metricType: one or more of ");
    for (i = 0; i < n_names && used < sizeof(details); i++)
        used += (size_t)snprintf(details + used, sizeof(details) - used, "%s%s", i ? ", " : "",
                                 names[i]);
    api_error(r, 400, "Bad request", details);
    return -1;
}

int api_series_range_in(struct api_req *r, struct api_series_range *q)
{
    char buf[128];
    int64_t n = 20;

    q->n_samples = 20;
    if (api_query(r, "start", buf, sizeof(buf)) || api_parse_time(buf, &q->start) ||
        api_query(r, "end", buf, sizeof(buf)) || api_parse_time(buf, &q->end) ||
        q->end < q->start) {
        api_error(r, 400, "Bad request", "start and end are required ISO-8601 times, start <= end");
        return -1;
    }
    if (api_query_int(r, "numberOfSamples", 1, MAX_SAMPLES, &n))
        return -1;
    q->n_samples = (int)n;
    return 0;
}

int64_t api_series_at(const struct api_series_range *q, int i)
{
    return q->n_samples > 1 ? q->start + (q->end - q->start) / (q->n_samples - 1) * i : q->end;
}

enum { AGG_LAST, AGG_MAX, AGG_MEAN, N_AGG };
static const char *const agg_names[N_AGG] = {"last", "max", "mean"};

/* aggregation: a comma list of last, max, mean (default last). */
static int aggregation_in(struct api_req *r, int *aggs, int *n_aggs)
{
    char buf[64];
    const char *p;
    int i;

    *n_aggs = 0;
    if (api_query(r, "aggregation", buf, sizeof(buf)) != 0) {
        aggs[(*n_aggs)++] = AGG_LAST;
        return 0;
    }
    for (p = buf; *p;) {
        size_t n = strcspn(p, ",");
        for (i = 0; i < N_AGG && (strlen(agg_names[i]) != n || strncmp(agg_names[i], p, n)); i++)
            ;
        if (i == N_AGG || *n_aggs >= N_AGG) {
            api_error(r, 400, "Bad request", "aggregation: one or more of last, max, mean");
            return -1;
        }
        aggs[(*n_aggs)++] = i;
        p += n + (p[n] == ',');
    }
    return *n_aggs ? 0 : (api_error(r, 400, "Bad request", "aggregation is empty"), -1);
}

/* ---- projects' and departments' series ---- */

/* metricType among names (q->types index names), the range, the
 * aggregation and nodepoolName; -1 replied. */
static int request_in(struct api_req *r, const char *const *names, int n_names,
                      struct series_req *q)
{
    char buf[128];
    struct db_pool p;

    memset(q, 0, sizeof(*q));
    if (api_series_types(r, names, n_names, q->types, N_TYPES, &q->n_types) != 0 ||
        api_series_range_in(r, &q->q) != 0 || aggregation_in(r, q->aggs, &q->n_aggs) != 0)
        return -1;
    if (api_query(r, "nodepoolName", buf, sizeof(buf)) != 1) {
        if (db_pool_by_name(r->app->db, buf, &p) != DB_OK) {
            api_error(r, 404, "Not found", "nodepoolName names no node pool");
            return -1;
        }
        q->pool_seq = p.seq;
    }
    return 0;
}

static int series_in(struct api_req *r, struct series_req *q)
{
    static const char *names[N_TYPES];
    int i;

    for (i = 0; i < N_TYPES; i++)
        names[i] = metric_types[i].name;
    return request_in(r, names, N_TYPES, q);
}

/* A value as Run:ai prints it: GPUs in devices, CPU in millicores,
 * memory in MB; -1 (unlimited) stays -1. res: 0 GPU (milli), 1 CPU, 2 MiB. */
static json_t *value_json(int res, double v)
{
    char buf[48];
    long long m = llround(v);

    if (v < 0)
        snprintf(buf, sizeof(buf), "-1");
    else if (res == 0)
        snprintf(buf, sizeof(buf), "%lld.%03lld", m / 1000, m % 1000);
    else if (res == 2)
        snprintf(buf, sizeof(buf), "%lld", (long long)llround(v * 1048576.0 / 1000000.0));
    else
        snprintf(buf, sizeof(buf), "%lld", m);
    return json_string(buf);
}

static int64_t sample_value(const struct db_sample *s, int t)
{
    return metric_types[t].quota ? s->quota[metric_types[t].res] : s->alloc[metric_types[t].res];
}

/* The aggregate of slot [lo, hi] of the step function s[0..n) (sorted by
 * time); *k is the last sample at or before lo on entry, at or before hi
 * on return. 0 when nothing is in force in the slot. */
static int slot_value(const struct db_sample *s, int n, int t, int agg, int64_t lo, int64_t hi,
                      int *k, double *out)
{
    double sum = 0, covered = 0, peak = 0;
    int cur = *k, any = cur >= 0, unlimited = cur >= 0 && sample_value(&s[cur], t) < 0;
    int64_t at = lo;

    if (cur >= 0)
        peak = (double)sample_value(&s[cur], t);
    while (*k + 1 < n && s[*k + 1].ts <= hi) {
        int64_t v = sample_value(&s[++*k], t);
        if (cur >= 0) {
            sum += (double)sample_value(&s[cur], t) * (double)(s[*k].ts - at);
            covered += (double)(s[*k].ts - at);
        }
        unlimited |= v < 0;
        peak = !any || (double)v > peak ? (double)v : peak;
        any = 1;
        at = s[*k].ts > lo ? s[*k].ts : lo;
        cur = *k;
    }
    if (!any)
        return 0;
    if (cur >= 0 && hi > at) {
        sum += (double)sample_value(&s[cur], t) * (double)(hi - at);
        covered += (double)(hi - at);
    }
    if (agg == AGG_LAST)
        *out = (double)sample_value(&s[cur], t);
    else if (unlimited)
        *out = -1;
    else if (agg == AGG_MAX)
        *out = peak;
    else
        *out = covered > 0 ? sum / covered : (double)sample_value(&s[cur], t);
    return 1;
}

/* The measurement of type t (named name) and aggregation agg over s[0..n),
 * labelled with labels (borrowed; NULL: none) and its aggregation. */
static json_t *measurement(const struct api_series_range *q, const char *name, int t, int agg,
                           json_t *labels, const struct db_sample *s, int n)
{
    json_t *values = json_array(), *l = labels ? json_copy(labels) : NULL;
    int64_t width = q->n_samples > 1 ? (q->end - q->start) / (q->n_samples - 1) : q->end - q->start;
    int i, k = -1;
    double v;

    for (i = 0; values && i < q->n_samples; i++) {
        int64_t at = api_series_at(q, i);
        int64_t lo = agg == AGG_LAST ? at : at - width;
        while (k + 1 < n && s[k + 1].ts <= lo)
            k++;
        if (!slot_value(s, n, t, agg, lo, at, &k, &v))
            continue;
        json_array_append_new(values, json_pack("{s:o, s:o}", "value",
                                                value_json(metric_types[t].res, v), "timestamp",
                                                api_time(at)));
    }
    if (agg != AGG_LAST) {
        l = l ? l : json_object();
        json_object_set_new(l, "aggregation", json_string(agg_names[agg]));
    }
    return json_pack("{s:s, s:o, s:o}", "type", name, "labels", l ? l : json_null(), "values",
                     values);
}

/* The measurements of every type and aggregation asked, from s[0..n). */
static json_t *measurements(const struct series_req *q, const struct db_sample *s, int n)
{
    json_t *a = json_array();
    int i, g;

    for (i = 0; i < q->n_types; i++)
        for (g = 0; g < q->n_aggs; g++)
            json_array_append_new(a, measurement(&q->q, metric_types[q->types[i]].name,
                                                 q->types[i], q->aggs[g], NULL, s, n));
    return json_pack("{s:o}", "measurements", a);
}

/* GET /org-unit/{departments,projects}/{id}/metrics (API_ARG_PROJECT). */
void api_h_queue_metrics(struct api_req *r)
{
    struct series_req q;
    struct db_queue *dq = calloc(1, sizeof(*dq));
    struct db_sample *s = NULL;
    int kind = r->arg & API_ARG_PROJECT ? DB_PROJECT : DB_DEPARTMENT;
    int n = 0, i, g, rc;
    json_t *a;

    if (!dq) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    rc = db_queue_get(r->app->db, r->params[0], dq);
    if (rc == DB_OK && (dq->kind != kind ||
                        (kind == DB_PROJECT ? !api_can(&r->who, API_ORG_READ, dq->id, dq->parent_id)
                                            : !api_can(&r->who, API_ORG_READ, "", dq->id))))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, kind == DB_PROJECT ? "no such project" : "no such department");
        goto out;
    }
    if (series_in(r, &q) != 0)
        goto out;
    /* the sample in force at `start` may be older than start: look a day back */
    rc = db_samples_get(r->app->db, dq->seq, q.pool_seq, q.q.start - 86400000LL, q.q.end, &s,
                        &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the samples");
        goto out;
    }
    a = json_array();
    for (i = 0; i < q.n_types; i++) {
        if (metric_types[q.types[i]].res != MEASURED) {
            for (g = 0; g < q.n_aggs; g++)
                json_array_append_new(a, measurement(&q.q, metric_types[q.types[i]].name,
                                                     q.types[i], q.aggs[g], NULL, s, n));
        } else if (api_queue_series_add(r, dq->id, q.pool_seq, metric_types[q.types[i]].name, NULL,
                                        &q.q, a) != 0) {
            json_decref(a);
            goto out;
        }
    }
    api_reply(r, 200, json_pack("{s:o}", "measurements", a));
out:
    free(s);
    free(dq);
}

/* ---- the cluster's allocation aggregated: every project summed ---- */

void api_cluster_metrics_aggregated(struct api_req *r)
{
    static const char *const cluster_names[] = {"ALLOCATED_GPU", "GPU_QUOTA"};
    static const int type_of[] = {0, 1}; /* GPU_ALLOCATION, GPU_QUOTA in metric_types */
    struct series_req q;
    struct db_sample *s = NULL;
    int n = 0, i, rc;
    json_t *o, *m;

    if (strcmp(r->params[0], API_CLUSTER_ID) != 0) {
        api_error(r, 404, "Not found", "no such cluster");
        return;
    }
    if (request_in(r, cluster_names, 2, &q) != 0)
        return;
    for (i = 0; i < q.n_types; i++)
        q.types[i] = type_of[q.types[i]];
    rc = db_samples_projects(r->app->db, q.pool_seq, q.q.start - 86400000LL, q.q.end, &s, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the samples");
        return;
    }
    o = measurements(&q, s, n);
    /* the cluster's names for the types */
    for (i = 0; i < (int)json_array_size(json_object_get(o, "measurements")); i++) {
        m = json_array_get(json_object_get(o, "measurements"), i);
        json_object_set_new(m, "type", json_string(cluster_names[
            strcmp(json_string_value(json_object_get(m, "type")), "GPU_QUOTA") == 0]));
    }
    api_reply(r, 200, o);
    free(s);
}

/* ---- the cluster's figures per project or department ---- */

/* The types groupBy=Project|Department answers, by their cluster names:
 * the queues' allocation samples (metric_types' index) or what agents
 * measure on their devices (MEASURED, h_infra_series.c). */
static const struct {
    const char *name;
    int type;
} by_queue_types[] = {
    {"ALLOCATED_GPU", 0},
    {"GPU_QUOTA", 1},
    {"GPU_UTILIZATION", MEASURED},
    {"GPU_MEMORY_UTILIZATION", MEASURED},
    {"IDLE_ALLOCATED_GPUS", MEASURED},
};
#define N_BY_QUEUE ((int)(sizeof(by_queue_types) / sizeof(by_queue_types[0])))

/* The measurements of one queue, labelled with labels (borrowed); 0 or -1
 * (replied). */
static int queue_add(struct api_req *r, const struct series_req *q, const struct db_queue *dq,
                     json_t *labels, json_t *a)
{
    struct db_sample *s = NULL;
    int n = 0, i, g, t, rc = DB_OK;

    for (i = 0; i < q->n_types && by_queue_types[q->types[i]].type == MEASURED; i++)
        ;
    if (i < q->n_types) /* a sample type is asked: the one in force at start may be a day older */
        rc = db_samples_get(r->app->db, dq->seq, q->pool_seq, q->q.start - 86400000LL, q->q.end,
                            &s, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the samples");
        return -1;
    }
    for (i = 0; i < q->n_types && rc == 0; i++) {
        t = by_queue_types[q->types[i]].type;
        if (t == MEASURED)
            rc = api_queue_series_add(r, dq->id, q->pool_seq, by_queue_types[q->types[i]].name,
                                      labels, &q->q, a);
        for (g = 0; t != MEASURED && g < q->n_aggs; g++)
            json_array_append_new(a, measurement(&q->q, by_queue_types[q->types[i]].name, t,
                                                 q->aggs[g], labels, s, n));
    }
    free(s);
    return rc;
}

void api_cluster_metrics_by_queue(struct api_req *r, int kind)
{
    const char *names[N_BY_QUEUE];
    const char *key = kind == DB_PROJECT ? "project" : "department";
    const char *id_key = kind == DB_PROJECT ? "projectId" : "departmentId";
    struct series_req q;
    struct db_queue *qs = NULL;
    int n = 0, i, rc = 0;
    json_t *a, *labels;

    for (i = 0; i < N_BY_QUEUE; i++)
        names[i] = by_queue_types[i].name;
    if (!api_cluster_path_ok(r, 404) || request_in(r, names, N_BY_QUEUE, &q) != 0)
        return;
    if (db_queue_list(r->app->db, kind, &qs, &n) != DB_OK) {
        api_error(r, 500, "Internal error", "cannot list the projects and departments");
        return;
    }
    a = json_array();
    for (i = 0; i < n && rc == 0; i++) {
        if (kind == DB_PROJECT ? !api_can(&r->who, API_ORG_READ, qs[i].id, qs[i].parent_id)
                               : !api_can(&r->who, API_ORG_READ, "", qs[i].id))
            continue;
        labels = json_pack("{s:s, s:s}", key, qs[i].name, id_key, qs[i].id);
        rc = queue_add(r, &q, &qs[i], labels, a);
        json_decref(labels);
    }
    free(qs);
    if (rc != 0)
        json_decref(a);
    else
        api_reply(r, 200, json_pack("{s:o}", "measurements", a));
}
