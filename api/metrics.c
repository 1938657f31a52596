/*
 * metrics.c: Prometheus counters of the server and the handlers of
 * /metrics, /healthz and /readyz.
 *
 * /metrics holds, besides the HTTP and storage counters: per queue and
 * node pool the deserved, fair-share, allocated and requested GPUs of the
 * last cycle (kai_queue_*, labels queue_name and nodepool; -1 is
 * unlimited), live workloads by phase, the cycle duration histogram,
 * how long the scheduler thread held each lock a request can wait on
 * (allot_sched_lock_hold_seconds, by lock: state, model, write) and
 * evictions by reason; and what agents measure of the GPUs: per workload
 * its utilisation and memory (runai_job_gpu_utilization,
 * runai_job_used_gpu_memory_bytes), per pod and device the same
 * (allot_pod_gpu_*), and per device of an agent's node its latest
 * utilisation and memory (allot_node_gpu_*); and whether this replica
 * leads (allot_leader 1 or 0, allot_leader_epoch, and
 * allot_sched_fenced_total: turns whose writes the fence refused); and,
 * on PostgreSQL, the workload reads answered from memory and those that
 * went to the database (allot_read_cache_hits_total, _misses_total).
 *
 * Invariant: counters only grow and are updated with atomics, so a
 * scrape never blocks a request.
 */
#include "api.h"
#include "db_agent.h"

#include <stdarg.h>
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

/* This replica's leadership; without a leader thread (tests that start
 * none) it leads alone. */
static void leader_info(struct api_app *app, struct ctl_leader_info *li)
{
    ctl_leader_get(app->leader, li);
    if (!app->leader)
        li->leading = 1;
}

static void put(struct text *t, const char *line, size_t n)
{
    if (n == 0 || !t->s)
        return;
    if (t->n + n + 1 > t->cap) {
        char *p = realloc(t->s, t->cap * 2 + n);
        if (!p) {
            free(t->s);
            t->s = NULL;
            return;
        }
        t->s = p;
        t->cap = t->cap * 2 + n;
    }
    memcpy(t->s + t->n, line, n + 1);
    t->n += n;
}

static void add(struct text *t, const char *fmt, long long a, long long b)
{
    char line[256];
    int n = snprintf(line, sizeof(line), fmt, a, b);

    if (n > 0 && (size_t)n < sizeof(line))
        put(t, line, (size_t)n);
}

static void addf(struct text *t, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof(line))
        put(t, line, (size_t)n);
}

/* One sample with no labels, after its TYPE line. */
static void metric(struct text *t, const char *name, const char *type, long long value)
{
    addf(t, "# TYPE %s %s\n%s %lld\n", name, type, name, value);
}

/* A label value with \, " and newlines escaped. */
static void label(char *out, size_t len, const char *s)
{
    size_t o = 0;

    for (; *s && o + 3 < len; s++) {
        if (*s == '\\' || *s == '"' || *s == '\n') {
            out[o++] = '\\';
            out[o++] = *s == '\n' ? 'n' : *s;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = 0;
}

static void gpus(char *out, size_t len, int64_t milli)
{
    if (milli < 0)
        snprintf(out, len, "-1");
    else
        snprintf(out, len, "%lld.%03lld", (long long)(milli / 1000), (long long)(milli % 1000));
}

static void queue_gauges(struct api_req *r, struct text *t)
{
    static const char *const names[] = {"kai_queue_deserved_gpus", "kai_queue_fair_share_gpu",
                                        "kai_queue_allocated_gpus", "allot_queue_requested_gpus"};
    struct ctl_share *sh = NULL;
    char q[2 * DB_NAME_LEN], p[2 * DB_NAME_LEN], v[48];
    int n = 0, i, k;

    if (ctl_sched_shares(r->app->sched, &sh, &n) != 0)
        return;
    for (k = 0; k < 4; k++) {
        addf(t, "# TYPE %s gauge\n", names[k]);
        for (i = 0; i < n; i++) {
            const int64_t *x = k == 0 ? sh[i].deserved : k == 1 ? sh[i].fair
                             : k == 2 ? sh[i].allocated : sh[i].requested;
            label(q, sizeof(q), sh[i].queue);
            label(p, sizeof(p), sh[i].pool);
            gpus(v, sizeof(v), x[0]);
            addf(t, "%s{queue_name=\"%s\",nodepool=\"%s\",kind=\"%s\"} %s\n", names[k], q, p,
                 sh[i].kind == DB_PROJECT ? "project" : "department", v);
        }
    }
    free(sh);
}

static void phase_gauges(struct api_req *r, struct text *t)
{
    static const char *const phases[] = {"Pending", "Running", "Stopped", "Completed", "Failed"};
    struct db_wl_query q;
    int64_t n;
    size_t i;

    addf(t, "# TYPE allot_workloads gauge\n");
    for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
        memset(&q, 0, sizeof(q));
        q.n_filters = 1;
        snprintf(q.filters[0].field, sizeof(q.filters[0].field), "phase");
        snprintf(q.filters[0].op, sizeof(q.filters[0].op), "==");
        snprintf(q.filters[0].value, sizeof(q.filters[0].value), "%s", phases[i]);
        if (db_workload_count(r->app->db, &q, &n) == DB_OK)
            addf(t, "allot_workloads{phase=\"%s\"} %lld\n", phases[i], (long long)n);
    }
}

static void cycle_gauges(const struct ctl_sched_stats *st, struct text *t)
{
    int64_t cum = 0;
    int i;

    addf(t, "# TYPE allot_sched_cycle_duration_seconds histogram\n");
    for (i = 0; i < CTL_HIST_BUCKETS - 1; i++) {
        cum += st->hist[i];
        addf(t, "allot_sched_cycle_duration_seconds_bucket{le=\"%g\"} %lld\n",
             ctl_hist_bounds[i], (long long)cum);
    }
    cum += st->hist[CTL_HIST_BUCKETS - 1];
    addf(t, "allot_sched_cycle_duration_seconds_bucket{le=\"+Inf\"} %lld\n", (long long)cum);
    addf(t, "allot_sched_cycle_duration_seconds_sum %lld.%06lld\n",
         (long long)(st->cycle_us_total / 1000000), (long long)(st->cycle_us_total % 1000000));
    addf(t, "allot_sched_cycle_duration_seconds_count %lld\n", (long long)st->cycles);
    addf(t, "# TYPE allot_evictions_total counter\n");
    for (i = 0; i < 3; i++)
        addf(t, "allot_evictions_total{reason=\"%s\"} %lld\n", ctl_eviction_reasons[i],
             (long long)st->evictions[i]);
    addf(t, "# TYPE allot_sched_store_failures_total counter\n"
            "allot_sched_store_failures_total %lld\n", (long long)st->failures);
}

/* How long the scheduler thread held each lock a request can wait on. */
static void leader_gauges(struct api_req *r, const struct ctl_sched_stats *st, struct text *t)
{
    struct ctl_leader_info li;

    leader_info(r->app, &li);
    addf(t, "# TYPE allot_leader gauge\nallot_leader %d\n", li.leading);
    addf(t, "# TYPE allot_leader_epoch gauge\nallot_leader_epoch %lld\n",
         (long long)li.leader_epoch);
    addf(t, "# TYPE allot_sched_fenced_total counter\nallot_sched_fenced_total %lld\n",
         (long long)st->fenced);
}

static void hold_gauges(const struct ctl_sched_stats *st, struct text *t)
{
    int l, i;

    addf(t, "# TYPE allot_sched_lock_hold_seconds histogram\n");
    for (l = 0; l < CTL_LOCKS; l++) {
        int64_t cum = 0;
        for (i = 0; i < CTL_HOLD_BUCKETS - 1; i++) {
            cum += st->hold_hist[l][i];
            addf(t, "allot_sched_lock_hold_seconds_bucket{lock=\"%s\",le=\"%g\"} %lld\n",
                 ctl_lock_names[l], ctl_hold_bounds[i], (long long)cum);
        }
        cum += st->hold_hist[l][CTL_HOLD_BUCKETS - 1];
        addf(t, "allot_sched_lock_hold_seconds_bucket{lock=\"%s\",le=\"+Inf\"} %lld\n",
             ctl_lock_names[l], (long long)cum);
        addf(t, "allot_sched_lock_hold_seconds_sum{lock=\"%s\"} %lld.%06lld\n", ctl_lock_names[l],
             (long long)(st->hold_us_total[l] / 1000000),
             (long long)(st->hold_us_total[l] % 1000000));
        addf(t, "allot_sched_lock_hold_seconds_count{lock=\"%s\"} %lld\n", ctl_lock_names[l],
             (long long)st->holds[l]);
    }
    addf(t, "# TYPE allot_sched_lock_hold_max_seconds gauge\n");
    for (l = 0; l < CTL_LOCKS; l++)
        addf(t, "allot_sched_lock_hold_max_seconds{lock=\"%s\"} %lld.%06lld\n", ctl_lock_names[l],
             (long long)(st->hold_max_us[l] / 1000000), (long long)(st->hold_max_us[l] % 1000000));
    addf(t, "# TYPE allot_sched_lock_hold_cpu_max_seconds gauge\n");
    for (l = 0; l < CTL_LOCKS; l++)   /* not read under the state mutex (sched_loop.c) */
        if (l != CTL_LOCK_STATE)
            addf(t, "allot_sched_lock_hold_cpu_max_seconds{lock=\"%s\"} %lld.%06lld\n",
                 ctl_lock_names[l], (long long)(st->hold_cpu_max_us[l] / 1000000),
                 (long long)(st->hold_cpu_max_us[l] % 1000000));
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

/* "37" or "38.50" from hundredths. */
static void centi(char *out, size_t len, int64_t v)
{
    snprintf(out, len, "%lld.%02lld", (long long)(v / 100), (long long)(v % 100));
}

/* Per workload, then per pod and device: what agents measure of the live
 * pods' GPUs (gpu_usage.c's rule for the totals). */
static void pod_gpu_gauges(struct api_req *r, struct text *t)
{
    struct db_pod_gpu_row *g = NULL;
    char wl[2 * DB_NAME_LEN], proj[2 * DB_NAME_LEN], node[2 * DB_NAME_LEN], v[48];
    int64_t util, mem;
    int n = 0, i, k;

    if (db_pod_gpu_list(r->app->db, 0, &g, &n) != DB_OK)
        return;
    addf(t, "# TYPE runai_job_gpu_utilization gauge\n");
    addf(t, "# TYPE runai_job_used_gpu_memory_bytes gauge\n");
    for (i = 0; i < n; i = k) {
        for (k = i; k < n && g[k].workload_seq == g[i].workload_seq; k++)
            ;
        api_gpu_sum(&g[i], k - i, &util, &mem);
        label(wl, sizeof(wl), g[i].workload_name);
        label(proj, sizeof(proj), g[i].project_name);
        centi(v, sizeof(v), util);
        if (util >= 0)
            addf(t, "runai_job_gpu_utilization{job_name=\"%s\",job_uuid=\"%s\","
                    "project=\"%s\"} %s\n", wl, g[i].workload_id, proj, v);
        if (mem >= 0)
            addf(t, "runai_job_used_gpu_memory_bytes{job_name=\"%s\",job_uuid=\"%s\","
                    "project=\"%s\"} %lld\n", wl, g[i].workload_id, proj, (long long)mem);
    }
    addf(t, "# TYPE allot_pod_gpu_utilization gauge\n");
    addf(t, "# TYPE allot_pod_gpu_memory_used_bytes gauge\n");
    for (i = 0; i < n; i++) {
        label(wl, sizeof(wl), g[i].workload_name);
        label(proj, sizeof(proj), g[i].project_name);
        label(node, sizeof(node), g[i].node_name);
        if (g[i].utilization >= 0)
            addf(t, "allot_pod_gpu_utilization{job_name=\"%s\",project=\"%s\",pod=\"%d\","
                    "node=\"%s\",gpu=\"%d\",allocated=\"%s\"} %d\n", wl, proj, g[i].idx,
                 node, g[i].gpu, g[i].given ? "true" : "false", g[i].utilization);
        if (g[i].mem_mib >= 0)
            addf(t, "allot_pod_gpu_memory_used_bytes{job_name=\"%s\",project=\"%s\","
                    "pod=\"%d\",node=\"%s\",gpu=\"%d\",allocated=\"%s\"} %lld\n", wl, proj,
                 g[i].idx, node, g[i].gpu, g[i].given ? "true" : "false",
                 (long long)(g[i].mem_mib * 1048576LL));
    }
    free(g);
}

/* Per device of the agents' nodes: the latest figures of its heartbeat. */
static void node_gpu_gauges(struct api_req *r, struct text *t)
{
    static const char *const names[] = {"allot_node_gpu_utilization",
                                        "allot_node_gpu_memory_used_bytes",
                                        "allot_node_gpu_memory_total_bytes"};
    static const char *const keys[] = {"utilization", "memoryUsedMiB", "memoryTotalMiB"};
    struct db_agent_node *ns = NULL;
    char node[2 * DB_NAME_LEN], model[160];
    int n = 0, i, k;

    if (db_agent_node_list(r->app->db, &ns, &n) != DB_OK)
        return;
    for (k = 0; k < 3; k++) {
        addf(t, "# TYPE %s gauge\n", names[k]);
        for (i = 0; i < n; i++) {
            json_t *gpus = json_loads(ns[i].gpus, 0, NULL), *d;
            size_t j;
            label(node, sizeof(node), ns[i].name);
            json_array_foreach(gpus, j, d) {
                json_t *x = json_object_get(d, keys[k]);
                const char *m = json_string_value(json_object_get(d, "model"));
                if (!json_is_integer(x))
                    continue;
                label(model, sizeof(model), m ? m : "");
                addf(t, "%s{node=\"%s\",gpu=\"%d\",model=\"%s\"} %lld\n", names[k], node,
                     (int)json_integer_value(json_object_get(d, "index")), model,
                     (long long)(json_integer_value(x) * (k ? 1048576LL : 1)));
            }
            json_decref(gpus);
        }
    }
    db_agent_nodes_free(ns, n);
}

void api_metrics_render(struct api_req *r)
{
    static const char *const cls[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    struct text t = {malloc(4096), 0, 4096};
    struct ctl_sched_stats st;
    struct api_conns_stats cs;
    int64_t commits = 0, writes = 0, hits = 0, misses = 0;
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
    api_conns_stats(&cs);
    metric(&t, "allot_http_connections_open", "gauge", cs.open);
    metric(&t, "allot_http_connections_accepted_total", "counter", cs.accepted);
    metric(&t, "allot_http_connections_closed_idle_total", "counter", cs.evicted);
    metric(&t, "allot_workloads_submitted_total", "counter", atomic_load(&submitted));
    db_writer_stats(r->app->db, &commits, &writes);
    metric(&t, "allot_db_commits_total", "counter", commits);
    metric(&t, "allot_db_writes_total", "counter", writes);
    api_readcache_stats(r->app->rcache, &hits, &misses);
    metric(&t, "allot_read_cache_hits_total", "counter", hits);
    metric(&t, "allot_read_cache_misses_total", "counter", misses);
    ctl_sched_get_stats(r->app->sched, &st);
    metric(&t, "allot_sched_cycles_total", "counter", st.cycles);
    metric(&t, "allot_sched_decisions_total", "counter", st.decisions);
    metric(&t, "allot_sched_cycles_full_total", "counter", st.cycles_full);
    metric(&t, "allot_sched_cycles_reused_total", "counter", st.cycles_reused);
    metric(&t, "allot_sched_cycles_kept_session_total", "counter", st.cycles_kept);
    add(&t, "# TYPE allot_sched_last_cycle_seconds gauge\n"
            "allot_sched_last_cycle_seconds %lld.%06lld\n",
        st.last_cycle_us / 1000000, st.last_cycle_us % 1000000);
    metric(&t, "allot_sched_pending_workloads", "gauge", st.pending);
    metric(&t, "allot_sched_running_workloads", "gauge", st.running);
    cycle_gauges(&st, &t);
    leader_gauges(r, &st, &t);
    hold_gauges(&st, &t);
    queue_gauges(r, &t);
    phase_gauges(r, &t);
    gpu_gauges(r, &t);
    pod_gpu_gauges(r, &t);
    node_gpu_gauges(r, &t);
    if (!t.s) {
        api_error(r, 500, "Internal error", "out of memory");
        return;
    }
    api_reply_text(r, 200, "text/plain; version=0.0.4", t.s, t.n);
    free(t.s);
}

/* /metrics on the API's listener: it names every queue with its quota, so
 * it takes a token with a system-wide role (--metrics-listen serves it
 * without one elsewhere). */
void api_h_metrics(struct api_req *r)
{
    if (!api_can(&r->who, API_ORG_READ, "", "")) {
        api_error(r, 403, "Forbidden", "/metrics needs a system-wide role (or --metrics-listen)");
        return;
    }
    api_metrics_render(r);
}

/* Ready: the database answers reads, takes writes (db_health), and the
 * scheduler has completed a cycle on the state it loaded. A store that
 * cannot take writes says why in "message". */
void api_h_readyz(struct api_req *r)
{
    char why[256];
    int64_t n;
    int read_ok = db_user_count(r->app->db, &n) == DB_OK;
    int write_ok = db_health(r->app->db, why, sizeof(why)) == DB_OK;
    int sched_ok = ctl_sched_ready(r->app->sched);
    int ok = read_ok && write_ok && sched_ok;
    json_t *o = json_pack("{s:s, s:b, s:b, s:b}", "status", ok ? "ready" : "not ready",
                          "database", read_ok && write_ok, "writable", write_ok, "scheduler",
                          sched_ok);

    if (o && !write_ok)
        json_object_set_new(o, "message", json_string(why));
    else if (o && !read_ok)
        json_object_set_new(o, "message", json_string("the database does not answer reads"));
    api_reply(r, ok ? 200 : 503, o);
}

/* Live: the database answers reads. Says whether this replica leads (a
 * replica alone on its database always does), at which epoch, and which
 * replica holds the lease as this one last read it. */
void api_h_healthz(struct api_req *r)
{
    struct ctl_leader_info li;
    int64_t n;
    int ok = db_user_count(r->app->db, &n) == DB_OK;

    leader_info(r->app, &li);
    api_reply(r, ok ? 200 : 503,
              json_pack("{s:s, s:b, s:I, s:s, s:s, s:I}", "status", ok ? "ok" : "storage failure",
                        "leader", li.leading, "epoch", (json_int_t)li.epoch, "replica",
                        li.holder, "leaderReplica", li.leader, "leaderEpoch",
                        (json_int_t)li.leader_epoch));
}
