/*
 * h_series.c: per-entity metrics time series,
 * GET /api/v1/org-unit/projects/{id}/metrics and .../departments/{id}/metrics
 * with metricType (comma-separated or repeated), start, end (ISO-8601,
 * required), numberOfSamples (default 20, at most 1000) and nodepoolName.
 *
 * The answer is Run:ai's MetricsResponse: {"measurements": [{"type",
 * "labels", "values": [{"value": "<string>", "timestamp"}]}]}, one value
 * per sample slot. The slots split [start, end] evenly; each takes the
 * latest sample the scheduler recorded at or before its time (a step
 * function), and slots before the first sample are left out.
 * GPU_MEMORY_UTILIZATION is not an allocation sample: it is the memory
 * agents report in use on the devices the queue's pods hold, in percent
 * of those devices' memory (series_rec.c; h_infra_series.c reads it).
 *
 * Invariant: reading a queue's series needs the right to read the queue.
 */
#include "api.h"

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

/* ---- projects' and departments' series ---- */

static int series_in(struct api_req *r, struct series_req *q)
{
    static const char *names[N_TYPES];
    char buf[128];
    struct db_pool p;
    int i;

    memset(q, 0, sizeof(*q));
    for (i = 0; i < N_TYPES; i++)
        names[i] = metric_types[i].name;
    if (api_series_types(r, names, N_TYPES, q->types, N_TYPES, &q->n_types) != 0 ||
        api_series_range_in(r, &q->q) != 0)
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

/* A sample's value as Run:ai prints it: GPUs in devices, CPU in
 * millicores, memory in MB; -1 (unlimited) stays -1. */
static json_t *value_json(const struct db_sample *s, int t)
{
    int64_t v = metric_types[t].quota ? s->quota[metric_types[t].res]
                                      : s->alloc[metric_types[t].res];
    char buf[48];

    if (v < 0)
        snprintf(buf, sizeof(buf), "-1");
    else if (metric_types[t].res == 0)
        snprintf(buf, sizeof(buf), "%lld.%03lld", (long long)(v / 1000), (long long)(v % 1000));
    else if (metric_types[t].res == 2)
        snprintf(buf, sizeof(buf), "%lld", (long long)((v * 1048576LL + 500000) / 1000000));
    else
        snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return json_string(buf);
}

static json_t *measurement(const struct api_series_range *q, int t, const struct db_sample *s,
                           int n)
{
    json_t *values = json_array();
    int i, k = -1;

    for (i = 0; values && i < q->n_samples; i++) {
        int64_t at = api_series_at(q, i);
        while (k + 1 < n && s[k + 1].ts <= at)
            k++;
        if (k < 0)
            continue;
        json_array_append_new(values, json_pack("{s:o, s:o}", "value", value_json(&s[k], t),
                                                "timestamp", api_time(at)));
    }
    return json_pack("{s:s, s:n, s:o}", "type", metric_types[t].name, "labels", "values", values);
}

static void series(struct api_req *r, int kind)
{
    struct series_req q;
    struct db_queue *dq = calloc(1, sizeof(*dq));
    struct db_sample *s = NULL;
    int n = 0, i, rc;
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
        if (metric_types[q.types[i]].res != MEASURED)
            json_array_append_new(a, measurement(&q.q, q.types[i], s, n));
        else if (api_queue_series_add(r, dq->id, q.pool_seq, &q.q, a) != 0) {
            json_decref(a);
            goto out;
        }
    }
    api_reply(r, 200, json_pack("{s:o}", "measurements", a));
out:
    free(s);
    free(dq);
}

void api_h_project_metrics(struct api_req *r)
{
    series(r, DB_PROJECT);
}

void api_h_department_metrics(struct api_req *r)
{
    series(r, DB_DEPARTMENT);
}
