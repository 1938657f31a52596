/*
 * gpu_usage.c: the GPU figures agents measure of each pod (agent/usage.c,
 * db/gpu_usage.c), as the API shows them:
 *   - a pod's gpuUsage in GET /api/v1/workloads/{id}/pods (the latest
 *     figures);
 *   - GET /api/v1/workloads/{id}/metrics and
 *     GET /api/v1/workloads/{id}/pods/{podId}/metrics, Run:ai's
 *     MetricsResponse over the samples the scheduler thread records every
 *     sample period (metricType, start, end, numberOfSamples as for the
 *     projects' series, h_series.c); a workload's GPU_ALLOCATION,
 *     RUNNING_POD_COUNT and requests (POD_COUNT, CPU_REQUEST_CORES, ...)
 *     come from h_infra_series.c;
 *   - GET /api/v1/workloads/inferences/{id}/metrics and .../pods/{podId}/metrics,
 *     the same figures of an inference; the request figures Run:ai lists
 *     for inferences (THROUGHPUT, LATENCY) are refused with a 400 that
 *     names them: allot serves no inference traffic to measure.
 *
 * One rule makes every figure of a pod or workload from its devices' rows:
 *   utilisation  the mean over the devices its pods were given (over all of
 *                its devices when it was given none), in percent, of the
 *                figures known; unknown where none is;
 *   memory       the sum over all of its devices, in bytes; unknown where
 *                no device's figure is known.
 * A series' value at sample time t comes from the newest samples at or
 * before t, if they are at most max(step, 2 sample periods) old; a time
 * with none (the workload did not run, or no agent measured it) is left
 * out.
 *
 * Invariant: reading a workload's figures needs the right to read the
 * workload (api_wl_load()).
 */
#include "api.h"
#include "db_agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576LL

/* What one pod or workload adds up to over some devices: the known
 * utilisations, on the devices given and on all, and the known memory. */
struct sum {
    int n;                         /* devices added */
    int64_t util_given, util_all;  /* sums, percent */
    int n_given, n_all;
    int64_t mem_mib;
    int mem_known;
};

static void add(struct sum *s, int given, int util, int64_t mem_mib)
{
    s->n++;
    if (util >= 0) {
        s->util_all += util;
        s->n_all++;
    }
    if (util >= 0 && given) {
        s->util_given += util;
        s->n_given++;
    }
    if (mem_mib >= 0) {
        s->mem_mib += mem_mib;
        s->mem_known = 1;
    }
}

/* Utilisation in hundredths of a percent; -1 unknown. */
static int64_t util_centi(const struct sum *s)
{
    if (s->n_given)
        return s->util_given * 100 / s->n_given;
    return s->n_all ? s->util_all * 100 / s->n_all : -1;
}

/* "37", "38.5", "33.33" */
static void centi_text(int64_t v, char *out, size_t len)
{
    if (v % 100 == 0)
        snprintf(out, len, "%lld", (long long)(v / 100));
    else if (v % 10 == 0)
        snprintf(out, len, "%lld.%lld", (long long)(v / 100), (long long)(v % 100 / 10));
    else
        snprintf(out, len, "%lld.%02lld", (long long)(v / 100), (long long)(v % 100));
}

static json_t *util_json(const struct sum *s)
{
    int64_t v = util_centi(s);

    if (v < 0)
        return json_null();
    return v % 100 == 0 ? json_integer(v / 100) : json_real((double)v / 100.0);
}

static json_t *mem_json(const struct sum *s)
{
    return s->mem_known ? json_integer(s->mem_mib * MIB) : json_null();
}

void api_gpu_sum(const struct db_pod_gpu_row *rows, int n, int64_t *util,
                 int64_t *mem_bytes)
{
    struct sum s;
    int i;

    memset(&s, 0, sizeof(s));
    for (i = 0; i < n; i++)
        add(&s, rows[i].given, rows[i].utilization, rows[i].mem_mib);
    *util = util_centi(&s);
    *mem_bytes = s.mem_known ? s.mem_mib * MIB : -1;
}

/* ---- a pod's latest figures ---- */

json_t *api_pod_gpu_usage(const struct db_pod_gpu_row *rows, int n, int idx)
{
    struct sum total;
    json_t *devices = NULL;
    int64_t at = 0;
    int i;

    memset(&total, 0, sizeof(total));
    for (i = 0; i < n; i++) {
        const struct db_pod_gpu_row *g = &rows[i];
        struct sum one;
        if (g->idx != idx)
            continue;
        if (!devices)
            devices = json_array();
        memset(&one, 0, sizeof(one));
        add(&one, g->given, g->utilization, g->mem_mib);
        add(&total, g->given, g->utilization, g->mem_mib);
        if (g->updated_at > at)
            at = g->updated_at;
        json_array_append_new(devices, json_pack("{s:i, s:b, s:o, s:o}", "index", g->gpu,
                                                 "allocated", g->given, "utilization",
                                                 util_json(&one), "memoryUsedBytes",
                                                 mem_json(&one)));
    }
    if (!devices)
        return json_null();
    return json_pack("{s:o, s:o, s:o, s:o}", "utilization", util_json(&total), "memoryUsedBytes",
                     mem_json(&total), "updatedAt", api_time(at), "devices", devices);
}

/* ---- the series ---- */

/* OTHER: what the workload holds and asks (GPU_ALLOCATION, POD_COUNT,
 * ...), from h_infra_series.c. */
enum figure { UTIL, MEM, OTHER };

struct metric {
    const char *name;
    int figure;                    /* enum figure */
    int per_gpu;                   /* one measurement per device, labelled gpu */
};

static const struct metric wl_metrics[] = {
    {"GPU_UTILIZATION", UTIL, 0},
    {"GPU_MEMORY_USAGE_BYTES", MEM, 0},
    {"GPU_ALLOCATION", OTHER, 0},
    {"RUNNING_POD_COUNT", OTHER, 0},
    {"POD_COUNT", OTHER, 0},
    {"CPU_REQUEST_CORES", OTHER, 0},
    {"CPU_MEMORY_REQUEST_BYTES", OTHER, 0},
    {"GPU_MEMORY_REQUEST_BYTES", OTHER, 0},
};

static const struct metric pod_metrics[] = {
    {"GPU_UTILIZATION", UTIL, 0},
    {"GPU_UTILIZATION_PER_GPU", UTIL, 1},
    {"GPU_MEMORY_USAGE_BYTES", MEM, 0},
    {"GPU_MEMORY_USAGE_BYTES_PER_GPU", MEM, 1},
};

#define MAX_TYPES 16

struct series {
    struct api_series_range q;
    int64_t window;                /* how old the newest samples may be */
    const struct db_gpu_sample *s;
    int n;
};

/* The samples at the newest time <= at within the window: [*lo, *hi).
 * *cursor carries the search from one sample time to the next (they only
 * grow). */
static int samples_at(const struct series *x, int64_t at, int *cursor, int *lo, int *hi)
{
    int k;

    while (*cursor < x->n && x->s[*cursor].ts <= at)
        (*cursor)++;
    k = *cursor - 1;
    if (k < 0 || x->s[k].ts <= at - x->window)
        return -1;
    *hi = k + 1;
    for (*lo = k; *lo > 0 && x->s[*lo - 1].ts == x->s[k].ts; (*lo)--)
        ;
    return 0;
}

/* One measurement; gpu < 0: over every device. */
static json_t *measurement(const struct series *x, const struct metric *m, int gpu)
{
    json_t *values = json_array();
    char text[48], label[16];
    int i, lo, hi, k, cursor = 0;

    for (i = 0; values && i < x->q.n_samples; i++) {
        int64_t at = api_series_at(&x->q, i);
        struct sum s;
        if (samples_at(x, at, &cursor, &lo, &hi) != 0)
            continue;
        memset(&s, 0, sizeof(s));
        for (k = lo; k < hi; k++)
            if (gpu < 0 || x->s[k].gpu == gpu)
                add(&s, x->s[k].given, x->s[k].utilization, x->s[k].mem_mib);
        if (s.n == 0 || (m->figure == UTIL && util_centi(&s) < 0) ||
            (m->figure == MEM && !s.mem_known))
            continue;
        if (m->figure == UTIL)
            centi_text(util_centi(&s), text, sizeof(text));
        else
            snprintf(text, sizeof(text), "%lld", (long long)(s.mem_mib * MIB));
        json_array_append_new(values, json_pack("{s:s, s:o}", "value", text, "timestamp",
                                                api_time(at)));
    }
    if (gpu < 0)
        return json_pack("{s:s, s:n, s:o}", "type", m->name, "labels", "values", values);
    snprintf(label, sizeof(label), "%d", gpu);
    return json_pack("{s:s, s:{s:s}, s:o}", "type", m->name, "labels", "gpu", label, "values",
                     values);
}

/* Per-device measurements: one for every device the samples name. */
static void per_gpu(const struct series *x, const struct metric *m, json_t *out)
{
    uint64_t seen = 0;
    int k, d;

    for (k = 0; k < x->n; k++)
        seen |= (uint64_t)1 << (x->s[k].gpu & 63);
    for (d = 0; d < 64; d++)
        if (seen >> d & 1)
            json_array_append_new(out, measurement(x, m, d));
}

/* The pod index podId names, or -1. */
static int pod_index(const struct db_workload *w, const char *pod_id)
{
    char id[DB_ID_LEN + 16];
    int i;

    for (i = 0; i < w->n_pods; i++) {
        api_pod_id(w, i, id, sizeof(id));
        if (strcmp(id, pod_id) == 0)
            return i;
    }
    return -1;
}

/* Inference request figures Run:ai's document lists for inferences and
 * pods: allot serves no inference traffic (the server a pod runs answers
 * its clients itself), so it cannot measure them. */
static const char *const unmeasured[] = {"THROUGHPUT", "LATENCY"};
#define N_UNMEASURED ((int)(sizeof(unmeasured) / sizeof(unmeasured[0])))

/* 400 naming the unmeasured types asked (types from n_table on); 0 if none. */
static int refuse_unmeasured(struct api_req *r, const int *types, int n_types, int n_table)
{
    char msg[256];
    size_t used = 0;
    int i;

    for (i = 0; i < n_types; i++)
        if (types[i] >= n_table && used < sizeof(msg))
            used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", used ? ", " : "",
                                     unmeasured[types[i] - n_table]);
    if (!used)
        return 0;
    if (used < sizeof(msg))
        snprintf(msg + used, sizeof(msg) - used,
                 ": allot does not measure inference requests (it serves no inference"
                 " traffic); ask for the GPU and pod figures it measures");
    api_error(r, 400, "Bad request", msg);
    return -1;
}

/* infer: the inference paths, which also name the unmeasured types (and
 * are refused them). */
static void reply_series(struct api_req *r, const struct metric *table, int n_table, int pod,
                         int infer)
{
    const char *names[MAX_TYPES];
    struct db_workload w;
    struct db_gpu_sample *s = NULL;
    struct series x;
    int types[MAX_TYPES], n_types = 0, i, n = 0, idx = -1, rc;
    json_t *a;

    memset(&x, 0, sizeof(x));
    memset(&w, 0, sizeof(w));
    if (api_wl_load(r, API_WL_READ, &w) != 0)
        goto out;
    if (pod && (idx = pod_index(&w, r->params[1])) < 0) {
        api_error(r, 404, "Not found", "no such pod of this workload");
        goto out;
    }
    for (i = 0; i < n_table; i++)
        names[i] = table[i].name;
    for (i = 0; infer && i < N_UNMEASURED; i++)
        names[n_table + i] = unmeasured[i];
    if (api_series_types(r, names, n_table + (infer ? N_UNMEASURED : 0), types, MAX_TYPES,
                         &n_types) != 0 ||
        refuse_unmeasured(r, types, n_types, n_table) != 0 || api_series_range_in(r, &x.q) != 0)
        goto out;
    x.window = 2LL * r->app->cfg.sample_period_ms;
    if (x.q.n_samples > 1 && (x.q.end - x.q.start) / (x.q.n_samples - 1) > x.window)
        x.window = (x.q.end - x.q.start) / (x.q.n_samples - 1);
    rc = db_gpu_samples_get(r->app->db, w.seq, idx, x.q.start - x.window, x.q.end, &s, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the samples");
        goto out;
    }
    x.s = s;
    x.n = n;
    a = json_array();
    for (i = 0; i < n_types; i++) {
        if (table[types[i]].figure == OTHER) {
            if (api_wl_series_add(r, &w, table[types[i]].name, &x.q, a) != 0) {
                json_decref(a);
                goto out;
            }
        } else if (table[types[i]].per_gpu) {
            per_gpu(&x, &table[types[i]], a);
        } else {
            json_array_append_new(a, measurement(&x, &table[types[i]], -1));
        }
    }
    api_reply(r, 200, json_pack("{s:o}", "measurements", a));
out:
    free(s);
    db_workload_clear(&w);
}

void api_h_wl_metrics(struct api_req *r)
{
    reply_series(r, wl_metrics, (int)(sizeof(wl_metrics) / sizeof(wl_metrics[0])), 0,
                 strstr(r->path, "/workloads/inferences/") != NULL);
}

void api_h_wl_pod_metrics(struct api_req *r)
{
    reply_series(r, pod_metrics, (int)(sizeof(pod_metrics) / sizeof(pod_metrics[0])), 1,
                 strstr(r->path, "/workloads/inferences/") != NULL);
}
