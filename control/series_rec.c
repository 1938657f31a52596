/*
 * series_rec.c: what the scheduler thread records every sample period
 * beside the queues' allocation samples: the metrics time series of the
 * cluster, each node pool, each node and each of its devices, each placed
 * workload, and the device memory of each project and department
 * (db/series.c stores them; h_infra_series.c answers the /metrics routes
 * from them; what agents measure of each pod is gpu_usage.c's).
 *
 * One sample (ctl_series_record):
 *   Step 1: what each device holds, from the pods placed in the model,
 *           and, on agents' nodes, what the agent reported last
 *           (utilization in percent, memory used and total); since when
 *           each pending workload waits;
 *   Step 2: the value of every series now (the table below);
 *   Step 3: on the recorder's own thread (sample_main), so that the
 *           scheduler thread goes on with its cycles meanwhile: a point
 *           for each value that changed since the last sample written,
 *           and a 0 for each series that is gone (a workload that ended,
 *           a node removed), so that every series is a step function (a
 *           new series starts at its first value other than 0, but for
 *           the utilisation and idle devices agents measure of the
 *           cluster, a pool, a project or a department, zero_written(),
 *           whose 0 is a figure: those start at their first value, and
 *           once gone are -1, which readers take for no value);
 *           written in turns of about turn_us, each one write of the
 *           writer, so that the submissions queued behind a sample of
 *           thousands of points (two per workload placed since the last
 *           one, after a fill) wait for one turn, not for the whole
 *           sample; readers see the sample once its last turn is written
 *           (db/series.c, invariant 4). A sample handed over while the
 *           thread still writes the one before replaces any other that
 *           waits: the newest wins, and the one skipped only loses its
 *           time stamp (the series are step functions from the last
 *           sample written). ctl_series_rec_free() writes what waits,
 *           then stops the thread.
 *
 * Series (names are Run:ai's metricType; * only where agents report):
 *   cluster, pool   TOTAL_GPU_NODES, TOTAL_GPU, ALLOCATED_GPU, GPU_QUOTA,
 *                   WORKLOADS_COUNT, GPU_UTILIZATION*, GPU_MEMORY_UTILIZATION*,
 *                   IDLE_ALLOCATED_GPUS* (allocated devices measured at 0%),
 *                   AVG_WORKLOAD_WAIT_TIME (seconds the Pending workloads
 *                   have waited since they became Pending, on average; in
 *                   a pool, those that may run there)
 *   node            GPU_UTILIZATION*, GPU_MEMORY_UTILIZATION*,
 *                   GPU_MEMORY_USAGE_BYTES*
 *   node, per GPU   GPU_ALLOCATION_PER_GPU, GPU_MEMORY_ALLOCATION_BYTES_PER_GPU
 *                   (the share allocated of the device's memory, where the
 *                   node's device memory is known), GPU_UTILIZATION_PER_GPU*,
 *                   GPU_MEMORY_UTILIZATION_PER_GPU*,
 *                   GPU_MEMORY_USAGE_BYTES_PER_GPU*    (label: the index)
 *   workload        GPU_ALLOCATION, RUNNING_POD_COUNT
 *   project, department (every pool, and each pool: "<id>/<pool seq>")
 *                   GPU_MEMORY_UTILIZATION*: memory in use on the devices
 *                   its pods hold (each device once, shared or not), of
 *                   those devices' memory; GPU_UTILIZATION* (the mean over
 *                   those devices) and IDLE_ALLOCATED_GPUS* (those of them
 *                   measured at 0%); their allocation and quota are the
 *                   queues' allocation samples (db/samples.c)
 * GPUs are in devices, utilizations in percent, memory in bytes.
 *
 * The first sample a recorder writes, and the first after
 * ctl_series_rec_reseed() (a leadership that starts: another replica
 * wrote meanwhile), compares with what is stored (seed()): the point in
 * force of every series after the last sample written whole. A restart
 * so writes only what changed while allotd was down, where comparing
 * with nothing wrote every series again (about 32,000 points at 1,000
 * nodes and 50,000 workloads, the file 4.6 MB larger at each restart),
 * and a workload that ended meanwhile gets its 0.
 *
 * Invariants:
 *   1. `last` holds the series in force as stored after the previous
 *      sample written (or, after a seed, as read), with their values; a
 *      series not in it is at 0, or has no figure (-1); only the
 *      recorder's thread reads or changes it.
 *   2. The recorder's thread writes one sample at a time, in the order
 *      they were taken.
 */
#include "control.h"
#include "thread_role.h"
#include "db_agent.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* A sample taken by the scheduler thread for the recorder's to write. */
struct sample {
    struct db_point *p;           /* every series' value now, unsorted */
    int n;
    struct db *db;
    int64_t now_ms, keep_after_ms, turn_us;
    void (*held)(void *arg, int64_t us, int64_t cpu_us);
    void *arg;
};

struct ctl_series_rec {
    struct db_point *last;        /* sorted by key (point_cmp); the thread's */
    int n_last;
    pthread_mutex_t mu;           /* next, has_next, stop */
    pthread_cond_t cv;
    pthread_t th;
    int started, stop, has_next;
    int seed;                     /* compare the next sample with what is stored */
    struct sample next;           /* the newest sample not yet written */
};

/* What one device holds and what its agent said. */
struct device {
    int64_t alloc_milli;
    int util;                     /* percent; -1 unknown */
    int64_t used_mib, total_mib;  /* total 0: unknown */
};

/* Reported usage summed over some devices. */
struct usage {
    int64_t util_sum, n_util;
    int64_t used_mib, total_mib;
    int64_t n_idle;               /* allocated devices measured at 0% */
};

struct points {
    struct db_point *p;
    int n, cap;
    int64_t now;
};

/* Seconds waited by pending workloads, summed, and how many. */
struct waits {
    double sum_s;
    int n;
};

/* Devices of one node that a queue's pods hold. */
struct held {
    int queue, node;
    uint64_t devices;
};

struct ctl_series_rec *ctl_series_rec_new(void)
{
    struct ctl_series_rec *rec = calloc(1, sizeof(*rec));

    if (rec) {
        pthread_mutex_init(&rec->mu, NULL);
        pthread_cond_init(&rec->cv, NULL);
        rec->seed = 1;
    }
    return rec;
}

void ctl_series_rec_reseed(struct ctl_series_rec *rec)
{
    if (!rec)
        return;
    pthread_mutex_lock(&rec->mu);
    rec->seed = 1;
    pthread_mutex_unlock(&rec->mu);
}

static void *sample_main(void *arg);

void ctl_series_rec_free(struct ctl_series_rec *rec)
{
    if (!rec)
        return;
    if (rec->started)
        thread_role_stop(rec->th, &rec->mu, &rec->cv, &rec->stop);
    free(rec->next.p);
    free(rec->last);
    pthread_mutex_destroy(&rec->mu);
    pthread_cond_destroy(&rec->cv);
    free(rec);
}

static void put(struct points *ps, int kind, const char *entity, const char *metric,
                const char *label, double value)
{
    struct db_point *x;

    if (ps->n == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 256;
        struct db_point *np = realloc(ps->p, sizeof(*np) * (size_t)cap);
        if (!np)
            return;
        ps->p = np;
        ps->cap = cap;
    }
    x = &ps->p[ps->n++];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    snprintf(x->entity, sizeof(x->entity), "%s", entity);
    snprintf(x->metric, sizeof(x->metric), "%s", metric);
    snprintf(x->label, sizeof(x->label), "%s", label ? label : "");
    x->ts = ps->now;
    x->value = value;
}

/* GPU_UTILIZATION and GPU_MEMORY_UTILIZATION of reported devices, and
 * with idle, IDLE_ALLOCATED_GPUS. */
static void put_usage(struct points *ps, int kind, const char *entity, const struct usage *u,
                      int idle)
{
    if (u->n_util > 0)
        put(ps, kind, entity, "GPU_UTILIZATION", NULL, (double)u->util_sum / (double)u->n_util);
    if (u->total_mib > 0)
        put(ps, kind, entity, "GPU_MEMORY_UTILIZATION", NULL,
            100.0 * (double)u->used_mib / (double)u->total_mib);
    if (idle && u->n_util > 0)
        put(ps, kind, entity, "IDLE_ALLOCATED_GPUS", NULL, (double)u->n_idle);
}

static void add_usage(struct usage *u, const struct device *d)
{
    if (d->util >= 0) {
        u->util_sum += d->util;
        u->n_util++;
        u->n_idle += d->util == 0 && d->alloc_milli > 0;
    }
    if (d->total_mib > 0) {
        u->used_mib += d->used_mib;
        u->total_mib += d->total_mib;
    }
}

/* Step 1: devs[node * 64 + index]. */
static void devices_fill(struct db *db, const struct sched_model *m, struct device *devs)
{
    struct db_agent_node *an = NULL;
    int n_an = 0, i, k, d;

    for (i = 0; i < m->n_nodes * 64; i++)
        devs[i].util = -1;
    for (i = 0; i < m->n; i++) {
        const struct sched_workload *w = &m->wls[i];
        for (k = 0; k < w->n_pods; k++) {
            const struct sched_pod *p = &w->pods[k];
            int64_t milli, count = 0;
            if (p->node < 0 || p->node >= m->n_nodes)
                continue;
            milli = sched_pod_gpu(w, &m->nodes[p->node]);
            for (d = 0; d < 64; d++)
                count += (p->devices >> d) & 1;
            for (d = 0; d < 64 && count > 0; d++)
                if ((p->devices >> d) & 1)
                    devs[p->node * 64 + d].alloc_milli += milli / count;
        }
    }
    if (db_agent_node_list(db, &an, &n_an) != DB_OK)
        return;
    for (i = 0; i < n_an; i++) {
        json_t *gpus = json_loads(an[i].gpus ? an[i].gpus : "[]", 0, NULL), *g;
        size_t j;
        for (k = 0; k < m->n_nodes && m->topo->nodes[k].seq != an[i].node_seq; k++)
            ;
        json_array_foreach(gpus, j, g) {
            json_int_t idx = json_integer_value(json_object_get(g, "index"));
            struct device *x;
            if (k == m->n_nodes || idx < 0 || idx >= 64 || !json_is_integer(json_object_get(g, "index")))
                continue;
            x = &devs[k * 64 + idx];
            if (json_is_integer(json_object_get(g, "utilization")))
                x->util = (int)json_integer_value(json_object_get(g, "utilization"));
            x->used_mib = json_integer_value(json_object_get(g, "memoryUsedMiB"));
            x->total_mib = json_integer_value(json_object_get(g, "memoryTotalMiB"));
        }
        json_decref(gpus);
    }
    db_agent_nodes_free(an, n_an);
}

/* Step 1, the pending workloads' waits: all of them into *all, each into
 * every pool it may run in (its pools, or its queue's, or every pool). */
static void waits_fill(struct db *db, const struct sched_model *m, int64_t now_ms,
                       struct waits *pool_waits, struct waits *all)
{
    struct db_pending *pd = NULL;
    struct sched_state st;
    int *pools = calloc((size_t)m->n_pools + 1, sizeof(*pools));
    int n = 0, i, k, np;

    if (!pools || db_pending_since(db, &pd, &n) != DB_OK)
        goto out;
    sm_state(m, now_ms, &st);
    for (i = 0; i < n; i++) {
        int lo = 0, hi = m->n - 1, at = -1;
        double s = pd[i].since_ms < now_ms ? (double)(now_ms - pd[i].since_ms) / 1000.0 : 0;
        while (lo <= hi && at < 0) { /* the model's workloads are ordered by seq */
            int mid = (lo + hi) / 2;
            if (m->meta[mid].seq == pd[i].seq)
                at = mid;
            else if (m->meta[mid].seq < pd[i].seq)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        if (at < 0 || m->meta[at].left) /* not in the model yet: the next sample counts it */
            continue;
        all->sum_s += s;
        all->n++;
        np = sched_workload_pools(&st, &m->wls[at], pools, m->n_pools);
        for (k = 0; k < np; k++) {
            pool_waits[pools[k]].sum_s += s;
            pool_waits[pools[k]].n++;
        }
    }
out:
    free(pd);
    free(pools);
}

/* Step 2, nodes and their devices; sums per pool into pool_usage. */
static void nodes_put(struct points *ps, const struct sched_model *m, const struct device *devs,
                      struct usage *pool_usage)
{
    char label[8];
    int i, d;

    for (i = 0; i < m->n_nodes; i++) {
        const char *id = m->topo->nodes[i].id;
        struct usage u = {0, 0, 0, 0, 0};
        for (d = 0; d < m->nodes[i].n_gpus && d < 64; d++) {
            const struct device *x = &devs[i * 64 + d];
            snprintf(label, sizeof(label), "%d", d);
            put(ps, DB_SERIES_NODE, id, "GPU_ALLOCATION_PER_GPU", label,
                (double)x->alloc_milli / 1000.0);
            if (m->nodes[i].gpu_memory_mib > 0)
                put(ps, DB_SERIES_NODE, id, "GPU_MEMORY_ALLOCATION_BYTES_PER_GPU", label,
                    (double)x->alloc_milli / 1000.0 * (double)m->nodes[i].gpu_memory_mib * MIB);
            if (x->util >= 0)
                put(ps, DB_SERIES_NODE, id, "GPU_UTILIZATION_PER_GPU", label, x->util);
            if (x->total_mib > 0) {
                put(ps, DB_SERIES_NODE, id, "GPU_MEMORY_USAGE_BYTES_PER_GPU", label,
                    (double)x->used_mib * MIB);
                put(ps, DB_SERIES_NODE, id, "GPU_MEMORY_UTILIZATION_PER_GPU", label,
                    100.0 * (double)x->used_mib / (double)x->total_mib);
            }
            add_usage(&u, x);
            add_usage(&pool_usage[m->nodes[i].pool], x);
        }
        put_usage(ps, DB_SERIES_NODE, id, &u, 0);
        if (u.total_mib > 0)
            put(ps, DB_SERIES_NODE, id, "GPU_MEMORY_USAGE_BYTES", NULL, (double)u.used_mib * MIB);
    }
}

/* Step 2, placed workloads; counts the workloads per pool. */
static void workloads_put(struct points *ps, const struct sched_model *m, int *pool_wls)
{
    char entity[24];
    int i, k;

    for (i = 0; i < m->n; i++) {
        const struct sched_workload *w = &m->wls[i];
        int64_t milli = 0, placed = 0;
        uint64_t seen_pools = 0;
        for (k = 0; k < w->n_pods; k++) {
            const struct sched_pod *p = &w->pods[k];
            if (p->node < 0 || p->node >= m->n_nodes)
                continue;
            placed++;
            milli += sched_pod_gpu(w, &m->nodes[p->node]);
            seen_pools |= 1ULL << (m->nodes[p->node].pool & 63);
        }
        if (!placed)
            continue;
        for (k = 0; k < m->n_pools && k < 64; k++)
            pool_wls[k] += (int)((seen_pools >> k) & 1);
        snprintf(entity, sizeof(entity), "%lld", (long long)m->meta[i].seq);
        put(ps, DB_SERIES_WORKLOAD, entity, "GPU_ALLOCATION", NULL, (double)milli / 1000.0);
        put(ps, DB_SERIES_WORKLOAD, entity, "RUNNING_POD_COUNT", NULL, (double)placed);
    }
}

static int held_cmp(const void *a, const void *b)
{
    const struct held *x = a, *y = b;

    if (x->queue != y->queue)
        return x->queue < y->queue ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Step 2, projects and departments: the devices each holds (its pods'
 * and, for a department, its projects'), each counted once; the memory
 * agents report on them, over every pool and per pool. */
static void queues_put(struct points *ps, const struct sched_model *m, const struct device *devs)
{
    struct held *h;
    struct usage *per_pool = calloc((size_t)m->n_pools + 1, sizeof(*per_pool));
    char entity[DB_NAME_LEN];
    int n = 0, cap = 0, i, k, d, q, start;

    for (i = 0; i < m->n; i++)
        cap += m->wls[i].n_pods * 2;
    h = calloc((size_t)cap + 1, sizeof(*h));
    if (!h || !per_pool)
        goto out;
    for (i = 0; i < m->n; i++)
        for (k = 0; k < m->wls[i].n_pods; k++) {
            const struct sched_pod *p = &m->wls[i].pods[k];
            if (p->node < 0 || p->node >= m->n_nodes || !p->devices)
                continue;
            for (q = m->wls[i].queue; q >= 0 && n < cap; q = m->queues[q].parent)
                h[n++] = (struct held){q, p->node, p->devices};
        }
    qsort(h, (size_t)n, sizeof(*h), held_cmp);
    for (start = 0; start < n; start = i) { /* one queue */
        const char *id = m->topo->queues[h[start].queue].id;
        struct usage all = {0, 0, 0, 0, 0};
        memset(per_pool, 0, sizeof(*per_pool) * (size_t)m->n_pools);
        for (i = start; i < n && h[i].queue == h[start].queue; i = k) {
            uint64_t devices = 0; /* the node's devices, each once */
            for (k = i; k < n && h[k].queue == h[i].queue && h[k].node == h[i].node; k++)
                devices |= h[k].devices;
            for (d = 0; d < 64 && d < m->nodes[h[i].node].n_gpus; d++)
                if ((devices >> d) & 1) {
                    int pool = m->nodes[h[i].node].pool;
                    add_usage(&all, &devs[h[i].node * 64 + d]);
                    if (pool >= 0 && pool < m->n_pools)
                        add_usage(&per_pool[pool], &devs[h[i].node * 64 + d]);
                }
        }
        put_usage(ps, DB_SERIES_QUEUE, id, &all, 1);
        for (k = 0; k < m->n_pools; k++)
            if (per_pool[k].n_util > 0 || per_pool[k].total_mib > 0) { /* measured there */
                snprintf(entity, sizeof(entity), "%s/%lld", id, (long long)m->topo->pools[k].seq);
                put_usage(ps, DB_SERIES_QUEUE, entity, &per_pool[k], 1);
            }
    }
out:
    free(h);
    free(per_pool);
}

/* Step 2, one pool (p >= 0) or the cluster (p < 0). */
static void capacity_put(struct points *ps, const struct sched_model *m, const struct device *devs,
                         int p, int workloads, const struct usage *u, const struct waits *w)
{
    int kind = p < 0 ? DB_SERIES_CLUSTER : DB_SERIES_POOL;
    const char *entity = p < 0 ? CTL_CLUSTER_ID : m->pools[p].name;
    int64_t gpus = 0, nodes = 0, alloc = 0, quota = 0;
    int i, d, q;

    for (i = 0; i < m->n_nodes; i++) {
        if (p >= 0 && m->nodes[i].pool != p)
            continue;
        for (d = 0; d < m->nodes[i].n_gpus && d < 64; d++)
            alloc += devs[i * 64 + d].alloc_milli;
        if (!m->nodes[i].ready || m->nodes[i].n_gpus == 0)
            continue;
        nodes++;
        gpus += m->nodes[i].n_gpus;
    }
    for (q = 0; q < m->n_queues; q++)
        for (i = p < 0 ? 0 : p; m->queues[q].parent < 0 && i < (p < 0 ? m->n_pools : p + 1); i++) {
            int64_t dsv = m->quotas[((size_t)q * (size_t)m->n_pools + (size_t)i) * SCHED_NRES]
                              .deserved;
            quota += dsv > 0 ? dsv : 0;
        }
    put(ps, kind, entity, "TOTAL_GPU_NODES", NULL, (double)nodes);
    put(ps, kind, entity, "TOTAL_GPU", NULL, (double)gpus);
    put(ps, kind, entity, "ALLOCATED_GPU", NULL, (double)alloc / 1000.0);
    put(ps, kind, entity, "GPU_QUOTA", NULL, (double)quota / 1000.0);
    put(ps, kind, entity, "WORKLOADS_COUNT", NULL, (double)workloads);
    put(ps, kind, entity, "AVG_WORKLOAD_WAIT_TIME", NULL, w->n ? w->sum_s / w->n : 0);
    put_usage(ps, kind, entity, u, 1);
}

static int point_cmp(const void *a, const void *b)
{
    const struct db_point *x = a, *y = b;
    int c = x->kind - y->kind;

    if (!c)
        c = strcmp(x->entity, y->entity);
    if (!c)
        c = strcmp(x->metric, y->metric);
    if (!c)
        c = strcmp(x->label, y->label);
    return c;
}

/* Is a first value of 0 written? For what agents measure of a device,
 * 0 is a figure (a device measured idle), not the absence of one: a new
 * series of these starts with its 0. Others (an allocation of 0) start
 * with their first other value, so that thousands of idle devices cost
 * no points. */
static int zero_written(const struct db_point *p)
{
    return p->kind != DB_SERIES_NODE && p->kind != DB_SERIES_WORKLOAD &&
           (strcmp(p->metric, "GPU_UTILIZATION") == 0 ||
            strcmp(p->metric, "IDLE_ALLOCATED_GPUS") == 0);
}

/* `last` as stored: every series' point in force, but for a 0 that
 * is no figure's and a -1 (what a series not in `last` stands for). If
 * the read fails, `last` is empty: the sample writes every series. */
static void seed(struct ctl_series_rec *rec, struct db *db)
{
    struct db_point *p = NULL;
    int n = 0, i, kept = 0;

    free(rec->last);
    rec->last = NULL;
    rec->n_last = 0;
    if (db_series_latest(db, &p, &n) != DB_OK) {
        free(p);
        return;
    }
    for (i = 0; i < n; i++)
        if (p[i].value > 0 || (p[i].value == 0 && zero_written(&p[i])))
            p[kept++] = p[i];
    if (kept > 1) /* the store's collation may differ; p is NULL when none */
        qsort(p, (size_t)kept, sizeof(*p), point_cmp);
    rec->last = p;
    rec->n_last = kept;
}

/* Step 3: the points to write (changed, new, or gone: 0), into out. */
static void changes(struct ctl_series_rec *rec, struct points *now, struct points *out)
{
    int i = 0, k = 0;

    qsort(now->p, (size_t)now->n, sizeof(*now->p), point_cmp);
    while (i < now->n || k < rec->n_last) {
        int c = i == now->n ? 1 : k == rec->n_last ? -1 : point_cmp(&now->p[i], &rec->last[k]);
        if (c < 0 || (c == 0 && now->p[i].value != rec->last[k].value)) {
            if (now->p[i].value != 0 || c == 0 || zero_written(&now->p[i]))
                put(out, now->p[i].kind, now->p[i].entity, now->p[i].metric, now->p[i].label,
                    now->p[i].value);
        } else if (c > 0) { /* gone: 0, or -1 (no figure) where 0 is one */
            put(out, rec->last[k].kind, rec->last[k].entity, rec->last[k].metric,
                rec->last[k].label, zero_written(&rec->last[k]) ? -1 : 0);
        }
        i += c <= 0;
        k += c >= 0;
    }
}

/* Step 3 for one sample (the recorder's thread): its changes since the
 * last sample written, in turns; `last` becomes the sample once all of
 * it is written. */
static void sample_write(struct ctl_series_rec *rec, struct sample *smp, int seeding)
{
    struct points now = {smp->p, smp->n, smp->n, smp->now_ms};
    struct points out = {NULL, 0, 0, smp->now_ms};
    struct db_series_turns t;
    int wrc = DB_OK;

    if (seeding)
        seed(rec, smp->db);
    changes(rec, &now, &out);
    t = (struct db_series_turns){out.p, out.n, smp->keep_after_ms, smp->turn_us, 0, 0, 0, 0};
    while (wrc == DB_OK && !t.whole && (out.n > 0 || smp->keep_after_ms > 0)) {
        wrc = db_series_add_turn(smp->db, &t);
        if (t.held_us > 0)
            smp->held(smp->arg, t.held_us, t.held_cpu_us);
    }
    if (wrc == DB_OK) {
        free(rec->last);
        rec->last = now.p;
        rec->n_last = now.n;
        now.p = NULL;
    }
    free(now.p);
    free(out.p);
}

static void *sample_main(void *arg)
{
    struct ctl_series_rec *rec = arg;
    struct sample smp;
    int seeding;

    thread_role_name("allot-series");
    for (;;) {
        pthread_mutex_lock(&rec->mu);
        while (!rec->has_next && !rec->stop)
            pthread_cond_wait(&rec->cv, &rec->mu);
        if (!rec->has_next) {
            pthread_mutex_unlock(&rec->mu);
            break; /* stopping, nothing left to write */
        }
        smp = rec->next;
        rec->next.p = NULL;
        rec->has_next = 0;
        seeding = rec->seed;
        rec->seed = 0;
        pthread_mutex_unlock(&rec->mu);
        sample_write(rec, &smp, seeding);
    }
    return NULL;
}

/* Hands the sample to the recorder's thread (started on the first),
 * replacing one that still waits. */
static int sample_hand(struct ctl_series_rec *rec, const struct sample *smp)
{
    int rc = 0;

    pthread_mutex_lock(&rec->mu);
    if (!rec->started) {
        rec->started = pthread_create(&rec->th, NULL, sample_main, rec) == 0;
        rc = rec->started ? 0 : -1;
    }
    if (rc == 0) {
        free(rec->next.p);
        rec->next = *smp;
        rec->has_next = 1;
        pthread_cond_signal(&rec->cv);
    }
    pthread_mutex_unlock(&rec->mu);
    return rc;
}

int ctl_series_record(struct ctl_series_rec *rec, struct db *db, const struct sched_model *m,
                      int64_t now_ms, int64_t keep_after_ms, int64_t turn_us,
                      void (*held)(void *arg, int64_t us, int64_t cpu_us), void *arg)
{
    struct points now = {NULL, 0, 0, now_ms};
    struct device *devs = calloc((size_t)m->n_nodes * 64 + 1, sizeof(*devs));
    struct usage *pool_usage = calloc((size_t)m->n_pools + 1, sizeof(*pool_usage));
    int *pool_wls = calloc((size_t)m->n_pools + 1, sizeof(*pool_wls));
    struct waits *pool_waits = calloc((size_t)m->n_pools + 1, sizeof(*pool_waits));
    struct usage all = {0, 0, 0, 0, 0};
    struct waits all_waits = {0, 0};
    struct sample smp;
    int i, rc = -1;

    if (!rec || !devs || !pool_usage || !pool_wls || !pool_waits)
        goto out;
    /* Step 1 */
    devices_fill(db, m, devs);
    waits_fill(db, m, now_ms, pool_waits, &all_waits);
    /* Step 2 */
    nodes_put(&now, m, devs, pool_usage);
    workloads_put(&now, m, pool_wls);
    queues_put(&now, m, devs);
    for (i = 0; i < m->n_pools; i++) {
        capacity_put(&now, m, devs, i, pool_wls[i], &pool_usage[i], &pool_waits[i]);
        all.util_sum += pool_usage[i].util_sum;
        all.n_util += pool_usage[i].n_util;
        all.used_mib += pool_usage[i].used_mib;
        all.total_mib += pool_usage[i].total_mib;
        all.n_idle += pool_usage[i].n_idle;
    }
    capacity_put(&now, m, devs, -1, m->n - m->n_left, &all, &all_waits);
    /* Step 3, on the recorder's thread */
    smp = (struct sample){now.p, now.n, db, now_ms, keep_after_ms, turn_us, held, arg};
    rc = sample_hand(rec, &smp);
    if (rc == 0)
        now.p = NULL;
out:
    free(now.p);
    free(devs);
    free(pool_usage);
    free(pool_wls);
    free(pool_waits);
    return rc;
}
