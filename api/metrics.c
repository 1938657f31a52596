/*
 * metrics.c: Prometheus counters of the server and the handlers of
 * /metrics, /healthz and the placeholder dashboard at /.
 *
 * Invariant: counters only grow and are updated with atomics, so a
 * scrape never blocks a request.
 */
#include "api.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_llong requests[6];     /* by status class: 0 other, 1xx..5xx */
static atomic_llong request_us;
static atomic_llong submitted;

void api_metrics_request(int status, int64_t us)
{
    int c = status / 100;

    atomic_fetch_add(&requests[c >= 1 && c <= 5 ? c : 0], 1);
    atomic_fetch_add(&request_us, us);
}

void api_metrics_submitted(void)
{
    atomic_fetch_add(&submitted, 1);
}

struct text {
    char *s;
    size_t n, cap;
};

static void add(struct text *t, const char *fmt, long long a, long long b)
{
    char line[256];
    int n = snprintf(line, sizeof(line), fmt, a, b);

    if (n <= 0 || !t->s)
        return;
    if (t->n + (size_t)n + 1 > t->cap) {
        char *p = realloc(t->s, t->cap * 2 + (size_t)n);
        if (!p) {
            free(t->s);
            t->s = NULL;
            return;
        }
        t->s = p;
        t->cap = t->cap * 2 + (size_t)n;
    }
    memcpy(t->s + t->n, line, (size_t)n + 1);
    t->n += (size_t)n;
}

static void gpu_gauges(struct api_req *r, struct text *t)
{
    struct db_node *nodes = NULL;
    int n = 0, i;
    long long total = 0, alloc = 0;

    if (db_node_list(r->app->db, &nodes, &n) != DB_OK)
        return;
    for (i = 0; i < n; i++) {
        total += nodes[i].n_gpus;
        alloc += nodes[i].alloc_gpu_milli;
    }
    free(nodes);
    add(t, "# TYPE allot_nodes gauge\nallot_nodes %lld\n", n, 0);
    add(t, "# TYPE allot_gpus gauge\nallot_gpus %lld\n", total, 0);
    add(t, "# TYPE allot_gpus_allocated gauge\nallot_gpus_allocated %lld.%03lld\n",
        alloc / 1000, alloc % 1000);
}

void api_metrics_render(struct api_req *r)
{
    static const char *const cls[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    struct text t = {malloc(4096), 0, 4096};
    struct api_sched_stats st;
    int64_t commits = 0, writes = 0;
    char line[128];
    int i;

    if (!t.s) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    t.s[0] = 0;
    add(&t, "# TYPE allot_http_requests_total counter\n", 0, 0);
    for (i = 0; i < 6; i++) {
        snprintf(line, sizeof(line), "allot_http_requests_total{code=\"%s\"} %%lld\n", cls[i]);
        add(&t, line, atomic_load(&requests[i]), 0);
    }
    add(&t, "# TYPE allot_http_request_seconds_total counter\n"
            "allot_http_request_seconds_total %lld.%06lld\n",
        atomic_load(&request_us) / 1000000, atomic_load(&request_us) % 1000000);
    add(&t, "# TYPE allot_workloads_submitted_total counter\n"
            "allot_workloads_submitted_total %lld\n", atomic_load(&submitted), 0);
    db_writer_stats(r->app->db, &commits, &writes);
    add(&t, "# TYPE allot_db_commits_total counter\nallot_db_commits_total %lld\n"
            "# TYPE allot_db_writes_total counter\n", commits, 0);
    add(&t, "allot_db_writes_total %lld\n", writes, 0);
    api_sched_get_stats(r->app->sched, &st);
    add(&t, "# TYPE allot_sched_cycles_total counter\nallot_sched_cycles_total %lld\n",
        st.cycles, 0);
    add(&t, "# TYPE allot_sched_decisions_total counter\nallot_sched_decisions_total %lld\n",
        st.decisions, 0);
    add(&t, "# TYPE allot_sched_last_cycle_seconds gauge\n"
            "allot_sched_last_cycle_seconds %lld.%06lld\n",
        st.last_cycle_us / 1000000, st.last_cycle_us % 1000000);
    add(&t, "# TYPE allot_sched_pending_workloads gauge\nallot_sched_pending_workloads %lld\n",
        st.pending, 0);
    gpu_gauges(r, &t);
    if (!t.s) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    api_reply_text(r, 200, "text/plain; version=0.0.4", t.s, t.n);
    free(t.s);
}

void api_h_metrics(struct api_req *r)
{
    api_metrics_render(r);
}

void api_h_healthz(struct api_req *r)
{
    int64_t n;
    int ok = db_user_count(r->app->db, &n) == DB_OK;

    api_reply(r, ok ? 200 : 503, json_pack("{s:s}", "status", ok ? "ok" : "storage failure"));
}

void api_h_dashboard(struct api_req *r)
{
    static const char page[] =
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>allot</title></head>"
        "<body><h1>allot</h1><p>The scheduler is running. The API lives under "
        "<code>/api/v1</code>; get a token with <code>POST /api/v1/token</code>.</p>"
        "<p>Health: <a href=\"/healthz\">/healthz</a>, metrics: "
        "<a href=\"/metrics\">/metrics</a>.</p></body></html>";

    api_reply_text(r, 200, "text/html; charset=utf-8", page, sizeof(page) - 1);
}
