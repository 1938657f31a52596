/*
 * h_reports.c: Run:ai's reports, /api/v1/org-unit/reports: list (filterBy
 * name, createdAt, createdBy, status; sortBy, sortOrder, offset, limit,
 * search), count, availability, create, get, delete, and the file.
 *
 * A report request names a time range (start < end), a grouping (groupBy:
 * Project, Department, Nodepool, Cluster, or null: one row per project and
 * node pool) and filters (filterBy: projectName==X, departmentName==X,
 * clusterId==X, all of which a row must meet). POST builds the report
 * there and then from the allocation samples the scheduler thread records
 * (db/samples.c, the series of GET /org-unit/projects/{id}/metrics): it is
 * stored Ready with its file, or Failed with the reason, and answered 202.
 * The file (text/csv) has one row per group with samples in force in the
 * range: the group's columns, then start and end, then
 *   gpuAllocationHours       GPU-hours held (the time integral),
 *   averageGpuAllocation     that over the time covered by samples (the
 *                            metrics' aggregation=mean over [start, end]),
 *   peakGpuAllocation        the most held at any moment (aggregation=max),
 *   averageGpuQuota          the deserved GPUs, likewise (-1: unlimited),
 *   cpuAllocationCoreHours, memoryAllocationGbHours.
 * A project row reads the project's samples, a department row the
 * department's, a node pool row or the cluster's every project's summed.
 * A filter the grouping cannot apply (projectName for Department,
 * Nodepool or Cluster; departmentName for Nodepool or Cluster) is a 400.
 *
 * Invariant: reports cover the whole organization, so every operation
 * needs the right to read the organization system-wide (creating and
 * deleting, to change it).
 */
#include "api.h"
#include "db_reports.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_MS 86400000LL
#define MAX_FILTERS 16

enum { G_NONE, G_PROJECT, G_DEPARTMENT, G_POOL, G_CLUSTER, N_GROUPS };
static const char *const group_names[N_GROUPS] = {"", "Project", "Department", "Nodepool",
                                                  "Cluster"};

/* ---- a row's keys and the columns each grouping shows ---- */

struct keys {
    const char *cluster, *project_id, *project, *department_id, *department, *pool;
};

static const struct {
    const char *name;
    size_t off;
} key_cols[] = {
    {"clusterId", offsetof(struct keys, cluster)},
    {"projectId", offsetof(struct keys, project_id)},
    {"projectName", offsetof(struct keys, project)},
    {"departmentId", offsetof(struct keys, department_id)},
    {"departmentName", offsetof(struct keys, department)},
    {"nodepoolName", offsetof(struct keys, pool)},
};
#define N_KEY_COLS ((int)(sizeof(key_cols) / sizeof(key_cols[0])))
#define K(i) (1u << (i))
static const unsigned group_cols[N_GROUPS] = {
    K(0) | K(1) | K(2) | K(4) | K(5), /* none: a project in a pool */
    K(0) | K(1) | K(2) | K(4),        /* Project */
    K(0) | K(3) | K(4),               /* Department */
    K(0) | K(5),                      /* Nodepool */
    K(0),                             /* Cluster */
};

static const char *key_of(const struct keys *k, int col)
{
    return *(const char *const *)((const char *)k + key_cols[col].off);
}

/* ---- filters ---- */

enum { F_PROJECT, F_DEPARTMENT, F_CLUSTER, N_FIELDS };
static const char *const field_names[N_FIELDS] = {"projectName", "departmentName", "clusterId"};
/* The groupings each filter field applies to. */
static const unsigned field_groups[N_FIELDS] = {
    K(G_NONE) | K(G_PROJECT),
    K(G_NONE) | K(G_PROJECT) | K(G_DEPARTMENT),
    K(G_NONE) | K(G_PROJECT) | K(G_DEPARTMENT) | K(G_POOL) | K(G_CLUSTER),
};

struct filter {
    int field;
    char value[DB_NAME_LEN];
};

struct request {
    struct db_report rep;
    int group;
    struct filter f[MAX_FILTERS];
    int n_f;
};

/* Does a row of these keys meet every filter? */
static int kept(const struct request *q, const struct keys *k)
{
    const char *v[N_FIELDS] = {k->project, k->department, k->cluster};
    int i;

    for (i = 0; i < q->n_f; i++)
        if (!v[q->f[i].field] || strcmp(v[q->f[i].field], q->f[i].value) != 0)
            return 0;
    return 1;
}

/* One filterBy term, "field==value"; -1 replied 400. */
static int filter_in(struct api_req *r, struct request *q, const char *s)
{
    char msg[256];
    const char *eq = s ? strstr(s, "==") : NULL;
    int i;

    for (i = 0; eq && i < N_FIELDS; i++)
        if ((size_t)(eq - s) == strlen(field_names[i]) && strncmp(s, field_names[i], eq - s) == 0)
            break;
    if (!eq || i == N_FIELDS || !eq[2] || strlen(eq + 2) >= sizeof(q->f[0].value)) {
        api_error(r, 400, "Bad request",
                  "filterBy: terms projectName==X, departmentName==X or clusterId==X");
        return -1;
    }
    if (!(field_groups[i] & K(q->group))) {
        snprintf(msg, sizeof(msg), "filterBy: %s cannot narrow a report grouped by %s", field_names[i],
                 q->group == G_NONE ? "nothing" : group_names[q->group]);
        api_error(r, 400, "Bad request", msg);
        return -1;
    }
    q->f[q->n_f].field = i;
    snprintf(q->f[q->n_f++].value, sizeof(q->f[0].value), "%s", eq + 2);
    return 0;
}

/* groupBy: null, absent or one of the groupings; -1 replied 400. */
static int group_in(struct api_req *r, json_t *o, struct request *q)
{
    json_t *g = json_object_get(o, "groupBy");
    int i;

    q->group = G_NONE;
    if (!g || json_is_null(g))
        return 0;
    for (i = 1; json_is_string(g) && i < N_GROUPS; i++)
        if (strcmp(json_string_value(g), group_names[i]) == 0) {
            q->group = i;
            snprintf(q->rep.group_by, sizeof(q->rep.group_by), "%s", group_names[i]);
            return 0;
        }
    api_error(r, 400, "Bad request", "groupBy: null, Nodepool, Project, Department or Cluster");
    return -1;
}

/* filterBy: an array of terms; kept in the report as JSON. -1 replied. */
static int filters_in(struct api_req *r, json_t *o, struct request *q)
{
    json_t *a = json_object_get(o, "filterBy"), *e;
    char *text;
    size_t i;

    if (!a || json_is_null(a))
        a = json_array();
    else if (!json_is_array(a) || json_array_size(a) > MAX_FILTERS) {
        api_error(r, 400, "Bad request", "filterBy: an array of at most 16 terms");
        return -1;
    } else
        json_incref(a);
    json_array_foreach(a, i, e) {
        if (filter_in(r, q, json_string_value(e)) != 0) {
            json_decref(a);
            return -1;
        }
    }
    text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!text || strlen(text) >= sizeof(q->rep.filter_by)) {
        free(text);
        api_error(r, 400, "Bad request", "filterBy is too long");
        return -1;
    }
    snprintf(q->rep.filter_by, sizeof(q->rep.filter_by), "%s", text);
    free(text);
    return 0;
}

/* A date-time field; -1 replied 400. */
static int time_in(struct api_req *r, json_t *o, const char *key, int64_t *ms)
{
    const char *s = json_string_value(json_object_get(o, key));
    char msg[96];

    if (s && api_parse_time(s, ms) == 0)
        return 0;
    snprintf(msg, sizeof(msg), "field '%s' is required: an ISO-8601 date-time", key);
    api_error(r, 400, "Bad request", msg);
    return -1;
}

static int request_in(struct api_req *r, json_t *o, struct request *q)
{
    static const char *const allowed[] = {"name", "description", "start", "end", "groupBy",
                                          "filterBy", NULL};

    memset(q, 0, sizeof(*q));
    if (api_json_allow(r, o, allowed, NULL) != 0 ||
        api_json_text(r, o, "name", q->rep.name, sizeof(q->rep.name), 1, API_TEXT_FREE) != 0 ||
        api_json_text(r, o, "description", q->rep.description, sizeof(q->rep.description), 0,
                      API_TEXT_FREE) != 0 ||
        time_in(r, o, "start", &q->rep.start_ms) != 0 || time_in(r, o, "end", &q->rep.end_ms) != 0 ||
        group_in(r, o, q) != 0 || filters_in(r, o, q) != 0)
        return -1;
    if (!q->rep.name[0] || q->rep.start_ms >= q->rep.end_ms) {
        api_error(r, 400, "Bad request", q->rep.name[0] ? "start must be before end"
                                                        : "field 'name' must not be empty");
        return -1;
    }
    return 0;
}

/* ---- the figures of one row: a step function over [start, end] ---- */

/* What a sample says of a figure: allocation of resource res, or the GPU
 * quota (res < 0). */
static int64_t figure(const struct db_sample *s, int res)
{
    return res < 0 ? s->quota[0] : s->alloc[res];
}

struct summary {
    double integral;              /* value x ms over the time covered */
    double covered;               /* ms covered by a sample in force */
    double peak;
    int unlimited;                /* a -1 was in force */
};

/* The figure over [lo, hi] of samples s[0..n) sorted by time, each value
 * holding until the next: as h_series.c's aggregations read it. */
static struct summary summarize(const struct db_sample *s, int n, int res, int64_t lo, int64_t hi)
{
    struct summary m = {0, 0, 0, 0};
    int k = -1, any = 0;
    int64_t at = lo;

    while (k + 1 < n && s[k + 1].ts <= lo)
        k++;
    for (;;) {
        int64_t until = k + 1 < n && s[k + 1].ts <= hi ? s[k + 1].ts : hi;
        if (k >= 0) {
            double v = (double)figure(&s[k], res);
            m.unlimited |= v < 0;
            m.peak = !any || v > m.peak ? v : m.peak;
            any = 1;
            m.integral += v * (double)(until - at);
            m.covered += (double)(until - at);
        }
        if (!(k + 1 < n && s[k + 1].ts <= hi))
            break;
        at = until;
        k++;
    }
    return m;
}

/* ---- the file ---- */

static const char *const figure_cols[] = {"start", "end", "gpuAllocationHours",
                                          "averageGpuAllocation", "peakGpuAllocation",
                                          "averageGpuQuota", "cpuAllocationCoreHours",
                                          "memoryAllocationGbHours"};
#define N_FIGURE_COLS ((int)(sizeof(figure_cols) / sizeof(figure_cols[0])))

static void csv_header(struct jw *c, int group)
{
    int i, first = 1;

    for (i = 0; i < N_KEY_COLS; i++)
        if (group_cols[group] & K(i)) {
            jw_csv(c, first ? 0 : ',', key_cols[i].name, 0);
            first = 0;
        }
    for (i = 0; i < N_FIGURE_COLS; i++)
        jw_csv(c, ',', figure_cols[i], 0);
    jw_raw(c, "\r\n", 2);
}

/* GPUs in milli as devices with three decimals (the metrics' form). */
static void milli_text(double milli, char *out, size_t len)
{
    long long m = llround(milli);

    snprintf(out, len, "%lld.%03lld", m / 1000, m % 1000);
}

/* One row, if samples cover some of the range; 1 written, 0 not. */
static int csv_row(struct jw *c, const struct request *q, const struct keys *k,
                   const struct db_sample *s, int n)
{
    int64_t lo = q->rep.start_ms, hi = q->rep.end_ms;
    struct summary gpu = summarize(s, n, 0, lo, hi), quota = summarize(s, n, -1, lo, hi);
    struct summary cpu = summarize(s, n, 1, lo, hi), mem = summarize(s, n, 2, lo, hi);
    char v[N_FIGURE_COLS][48];
    json_t *t;
    int i, first = 1;

    if (gpu.covered <= 0 || !kept(q, k))
        return 0;
    for (i = 0; i < 2; i++) {
        t = api_time(i ? hi : lo);
        snprintf(v[i], sizeof(v[i]), "%s", json_string_value(t));
        json_decref(t);
    }
    snprintf(v[2], sizeof(v[2]), "%.6f", gpu.integral / 1000.0 / 3600000.0);
    milli_text(gpu.integral / gpu.covered, v[3], sizeof(v[3]));
    milli_text(gpu.peak, v[4], sizeof(v[4]));
    if (quota.unlimited)
        snprintf(v[5], sizeof(v[5]), "-1");
    else
        milli_text(quota.integral / quota.covered, v[5], sizeof(v[5]));
    snprintf(v[6], sizeof(v[6]), "%.6f", cpu.integral / 1000.0 / 3600000.0);
    snprintf(v[7], sizeof(v[7]), "%.6f", mem.integral * 1048576.0 / 1e9 / 3600000.0);
    for (i = 0; i < N_KEY_COLS; i++)
        if (group_cols[q->group] & K(i)) {
            jw_csv(c, first ? 0 : ',', key_of(k, i) ? key_of(k, i) : "", JW_CSV_TEXT);
            first = 0;
        }
    for (i = 0; i < N_FIGURE_COLS; i++)
        jw_csv(c, ',', v[i], 0);
    jw_raw(c, "\r\n", 2);
    return 1;
}

/* ---- building ---- */

struct build {
    struct api_req *r;
    const struct request *q;
    struct jw csv;
    struct db_queue *qs;          /* departments and projects */
    int nq;
    struct db_pool *ps;
    int np;
};

/* The row of one queue's (or every project's: queue NULL) samples in one
 * pool (0: all). */
static int build_row(struct build *b, const struct db_queue *queue, int64_t pool_seq,
                     const struct keys *k)
{
    struct db_sample *s = NULL;
    int64_t from = b->q->rep.start_ms - DAY_MS; /* the sample in force at start may be older */
    int n = 0, rc;

    rc = queue ? db_samples_get(b->r->app->db, queue->seq, pool_seq, from, b->q->rep.end_ms, &s,
                                &n)
               : db_samples_projects(b->r->app->db, pool_seq, from, b->q->rep.end_ms, &s, &n);
    if (rc == DB_OK)
        csv_row(&b->csv, b->q, k, s, n);
    free(s);
    return rc;
}

static int build_queues(struct build *b)
{
    int i, j, rc = DB_OK;

    for (i = 0; i < b->nq && rc == DB_OK; i++) {
        const struct db_queue *x = &b->qs[i];
        int project = x->kind == DB_PROJECT;
        struct keys k = {API_CLUSTER_ID, project ? x->id : NULL, project ? x->name : NULL,
                         project ? x->parent_id : x->id, project ? x->parent_name : x->name,
                         NULL};
        if (project != (b->q->group != G_DEPARTMENT))
            continue;
        if (b->q->group != G_NONE) {
            rc = build_row(b, x, 0, &k);
            continue;
        }
        for (j = 0; j < b->np && rc == DB_OK; j++) {
            k.pool = b->ps[j].name;
            rc = build_row(b, x, b->ps[j].seq, &k);
        }
    }
    return rc;
}

static int build_pools(struct build *b)
{
    struct keys k = {API_CLUSTER_ID, NULL, NULL, NULL, NULL, NULL};
    int j, rc = DB_OK;

    if (b->q->group == G_CLUSTER)
        return build_row(b, NULL, 0, &k);
    for (j = 0; j < b->np && rc == DB_OK; j++) {
        k.pool = b->ps[j].name;
        rc = build_row(b, NULL, b->ps[j].seq, &k);
    }
    return rc;
}

/* The report's file into q->rep (status Ready), or its status Failed
 * with the reason. */
static void build(struct api_req *r, struct request *q)
{
    struct build b = {r, q, {0}, NULL, 0, NULL, 0};
    char *text;
    size_t len;
    int rc;

    rc = db_queue_list(r->app->db, -1, &b.qs, &b.nq);
    if (rc == DB_OK)
        rc = db_pool_list(r->app->db, &b.ps, &b.np);
    csv_header(&b.csv, q->group);
    if (rc == DB_OK)
        rc = q->group == G_POOL || q->group == G_CLUSTER ? build_pools(&b) : build_queues(&b);
    text = jw_take(&b.csv, &len);
    if (rc == DB_OK && !text)
        rc = DB_ENOMEM;
    snprintf(q->rep.status, sizeof(q->rep.status), "%s", rc == DB_OK ? "Ready" : "Failed");
    snprintf(q->rep.status_message, sizeof(q->rep.status_message), "%s",
             rc == DB_OK ? "" : "the samples could not be read");
    q->rep.csv = rc == DB_OK ? text : NULL;
    if (rc != DB_OK)
        free(text);
    free(b.qs);
    free(b.ps);
}

/* ---- the API ---- */

static json_t *report_json(const struct db_report *x)
{
    json_t *filters = json_loads(x->filter_by, 0, NULL), *o;

    o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:i, s:o, s:s, s:s, s:o, s:o}", "id",
                     x->id, "name", x->name, "start",
                     api_time(x->start_ms), "end", api_time(x->end_ms), "groupBy",
                     x->group_by[0] ? json_string(x->group_by) : json_null(), "createdBy",
                     x->created_by, "tenantId", 1, "createdAt", api_time(x->created_at),
                     "status", x->status, "statusMessage", x->status_message, "statusUpdatedAt",
                     api_time(x->status_updated_at), "filterBy",
                     json_is_array(filters) ? filters : (json_decref(filters), json_array()));
    if (o && x->description[0])
        json_object_set_new(o, "description", json_string(x->description));
    return o;
}

/* The system-wide right reports need; 0 held, -1 replied 403. */
static int allowed(struct api_req *r, unsigned perm)
{
    if (api_can(&r->who, perm, "", ""))
        return 0;
    api_error(r, 403, "Forbidden", "reports cover the whole organization: they need a"
              " system-wide role");
    return -1;
}

void api_h_report_create(struct api_req *r)
{
    struct request *q = calloc(1, sizeof(*q));
    json_t *o = NULL;
    int rc;

    if (!q) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    if (allowed(r, API_ORG_WRITE) != 0 || !(o = api_body_object(r)) || request_in(r, o, q) != 0)
        goto out;
    db_uuid_new(q->rep.id);
    q->rep.created_at = q->rep.status_updated_at = api_now_ms();
    snprintf(q->rep.created_by, sizeof(q->rep.created_by), "%s", r->who.user.login);
    build(r, q);
    rc = db_report_insert(r->app->db, &q->rep);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot store the report");
        goto out;
    }
    api_reply(r, 202, report_json(&q->rep));
out:
    free(q->rep.csv);
    json_decref(o);
    free(q);
}

static int report_get(const void *row, const char *f, struct api_lv *v)
{
    const struct db_report *x = row;

    if (strcmp(f, "name") == 0)
        v->s = x->name;
    else if (strcmp(f, "createdBy") == 0)
        v->s = x->created_by;
    else if (strcmp(f, "status") == 0)
        v->s = x->status;
    else if (strcmp(f, "createdAt") == 0) {
        v->kind = API_LV_DATE;
        v->d = (double)x->created_at;
    } else
        return -1;
    return 0;
}

static json_t *report_row_json(struct api_req *r, const void *row)
{
    (void)r;
    return report_json(row);
}

/* GET /org-unit/reports, and /count (API_ARG_COUNT). */
void api_h_reports(struct api_req *r)
{
    struct db_report *xs = NULL;
    struct api_lq q;
    int n = 0, rc;

    if (allowed(r, API_ORG_READ) != 0 || api_lq_parse(r, &q) != 0 ||
        api_lq_search(r, &q, "name") != 0)
        return;
    rc = db_report_list(r->app->db, &xs, &n);
    if (rc != DB_OK)
        api_db_error(r, rc, "cannot list the reports");
    else
        api_lq_reply(r, &q,
                     &(struct api_lq_rows){xs, n, sizeof(*xs), report_get, report_row_json},
                     "reports", (r->arg & API_ARG_COUNT) != 0);
    db_reports_free(xs, n);
}

/* Reports are built from samples allotd always records: available. */
void api_h_reports_availability(struct api_req *r)
{
    api_reply(r, 200, json_pack("{s:b}", "isAvailable", 1));
}

/* The path's report; -1 replied. */
static int load(struct api_req *r, struct db_report *x)
{
    int rc;

    memset(x, 0, sizeof(*x));
    if (allowed(r, API_ORG_READ) != 0)
        return -1;
    rc = db_report_get(r->app->db, r->params[0], x);
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such report");
        return -1;
    }
    return 0;
}

void api_h_report_get(struct api_req *r)
{
    struct db_report x;

    if (load(r, &x) == 0)
        api_reply(r, 200, report_json(&x));
    free(x.csv);
}

void api_h_report_file(struct api_req *r)
{
    struct db_report x;

    if (load(r, &x) == 0) {
        if (strcmp(x.status, "Ready") != 0)
            api_error(r, 404, "Not found", "the report has no file: it failed");
        else
            api_reply_text(r, 200, "text/csv; charset=utf-8", x.csv, strlen(x.csv));
    }
    free(x.csv);
}

void api_h_report_delete(struct api_req *r)
{
    int rc;

    if (allowed(r, API_ORG_WRITE) != 0)
        return;
    rc = db_report_delete(r->app->db, r->params[0]);
    if (rc != DB_OK)
        api_db_error(r, rc, "no such report");
    else
        api_reply_text(r, 204, "application/json", "", 0);
}
