/*
 * replay_inflate.c: workload inflation, the experiment of the trace's paper
 * (Weng et al., "Beware of Fragmentation", ATC '23, and its simulator):
 * the trace's tasks arrive in a random order on a cluster where nothing
 * leaves, and what matters is how much of the cluster is allocated as the
 * demand that arrived grows past its capacity.
 *
 * Step 1: the arrivals, as the paper's simulator makes them: every task of
 *         the trace once, shuffled (Fisher-Yates, splitmix64 seeded with
 *         the seed); if their GPUs are below --inflate times the cluster's,
 *         tasks drawn uniformly from the trace are appended while the next
 *         one keeps the total within it; if above, tasks are removed at
 *         random until it is within. Each arrival is a copy of its task
 *         under a fresh name, in the project of the original's name.
 * Step 2: schedule it: the allot policies run passes of the core until one
 *         decides nothing or nothing is pending; FIFO places it by first
 *         fit.
 * Step 3: a failure is anything left pending: the new task, or a task a
 *         reclaim or preemption evicted for it. Failed tasks are withdrawn
 *         (the paper's simulator drops a task it cannot place) and the
 *         arrivals go on. The first failure is recorded.
 *         With --racks, an arrival that starts as a gang is counted, with
 *         whether its pods are inside one rack and one block.
 * Step 4: after every arrival, the arrived demand (the GPUs of every task
 *         so far, placed or not) and the allocation are sampled. The
 *         curve at k% is the mean allocation over the arrivals whose
 *         demand rounds to k% of the cluster (the paper's analysis); the
 *         headline is the unallocated GPUs at 100%: the mean over arrivals
 *         between 99.5% and 100.5%, or else the first arrival past 100%.
 */
#include "grow.h"
#include "replay_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 48
#define CHUNK 4096   /* names per chunk; chunks never move (the world borrows names) */

struct irun {
    struct replay_base b;
    char **chunks;
    int n_chunks;
    int n_names;
    uint64_t rng;
    int *arrivals;             /* the tasks in the order they arrive */
    int n_arrivals;
    int64_t alloc, arrived;
    int n_finished;
    double *curve_sum;         /* [n_curve] allocation (%) summed per arrived percent */
    int *curve_n;
    double at100_sum;
    int at100_n;
    struct replay_inflation *out;
    struct world_err e;
};

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static int below(struct irun *r, int n)
{
    return (int)(splitmix64(&r->rng) % (uint64_t)n);
}

/* Step 1: r->arrivals. */
static int make_arrivals(struct irun *r)
{
    const struct replay_model *m = r->b.m;
    int n = m->t->n_tasks, i, j, t, cap = n;
    int64_t target = (int64_t)llround(m->opts->inflate * (double)m->total_gpu_milli), total = 0;

    r->arrivals = malloc((size_t)cap * sizeof(int));
    if (!r->arrivals)
        return -1;
    for (i = 0; i < n; i++) {
        r->arrivals[i] = i;
        total += m->gpu[i];
    }
    for (i = n - 1; i > 0; i--) {   /* shuffle */
        j = below(r, i + 1);
        t = r->arrivals[i];
        r->arrivals[i] = r->arrivals[j];
        r->arrivals[j] = t;
    }
    while (total > target && n > 0) {   /* too much: remove at random */
        i = below(r, n);
        total -= m->gpu[r->arrivals[i]];
        memmove(&r->arrivals[i], &r->arrivals[i + 1], (size_t)(n - i - 1) * sizeof(int));
        n--;
    }
    /* too little: draw more while the total stays within (a bounded number,
     * should the trace ask next to no GPU) */
    while (n < 100 * m->t->n_tasks + 100000) {
        t = below(r, m->t->n_tasks);
        if (total + m->gpu[t] > target)
            break;
        if (sim_grow(&r->arrivals, n, &cap, sizeof(*r->arrivals), cap) != 0)
            return -1;
        r->arrivals[n++] = t;
        total += m->gpu[t];
    }
    r->n_arrivals = n;
    return 0;
}

/* A fresh name "ORIGINAL#N" that lives as long as the run. */
static char *new_name(struct irun *r, int task)
{
    char **grown, *name;

    if (r->n_names == r->n_chunks * CHUNK) {
        grown = realloc(r->chunks, (size_t)(r->n_chunks + 1) * sizeof(*grown));
        if (!grown)
            return NULL;
        r->chunks = grown;
        r->chunks[r->n_chunks] = malloc((size_t)CHUNK * NAME_LEN);
        if (!r->chunks[r->n_chunks])
            return NULL;
        r->n_chunks++;
    }
    name = &r->chunks[r->n_names / CHUNK][(size_t)(r->n_names % CHUNK) * NAME_LEN];
    snprintf(name, NAME_LEN, "%.30s#%d", r->b.m->t->tasks[task].name, r->n_names);
    r->n_names++;
    return name;
}

static int submit(struct irun *r, int task)
{
    struct scn_submit sub;

    memset(&sub, 0, sizeof(sub));
    sub.w = r->b.m->tmpl[task];
    sub.w.name = new_name(r, task);
    sub.runtime_ms = SCHED_NO_TIME;
    if (!sub.w.name) {
        snprintf(r->e.msg, sizeof(r->e.msg), "out of memory");
        return -1;
    }
    r->arrived += r->b.m->gpu[task];
    r->out->arrivals++;
    return world_submit(r->b.w, &sub, &r->e);
}

/* Step 2 for the allot policies; *left: workloads pending after it. */
static int schedule_allot(struct irun *r, int *left, int *disturbed)
{
    struct sched_result res;
    int pass, k;

    for (pass = 0; pass < RP_MAX_PASSES; pass++) {
        if (world_pass(r->b.w, &r->b.cfg, &res, &r->e) != 0)
            return -1;
        for (k = 0; k < res.n_decisions; k++) {
            r->out->preemptions += res.decisions[k].kind == SCHED_EVICT;
            *disturbed |= res.decisions[k].kind != SCHED_BIND;
        }
        *left = res.n_pending;
        if (res.n_decisions == 0 || res.n_pending == 0)
            break;
    }
    return 0;
}

static int schedule(struct irun *r, int task, int *left)
{
    int placed, disturbed = 0;

    if (r->b.policy != RP_FIFO) {
        if (schedule_allot(r, left, &disturbed) != 0)
            return -1;
    } else {
        placed = replay_fifo_place(r->b.m, r->b.w, r->b.w->n_wls - 1, &r->e);
        if (placed < 0)
            return -1;
        *left = !placed;
    }
    if (disturbed || *left)
        r->alloc = world_allocated_gpu(r->b.w, 0, -1);
    else
        r->alloc += r->b.m->gpu[task];
    return 0;
}

/* Step 3: every pending workload leaves. */
static void withdraw_pending(struct irun *r)
{
    int i;

    for (i = 0; i < r->b.w->n_wls; i++) {
        if (r->b.w->wls[i].phase != SCHED_PENDING)
            continue;
        world_finish(r->b.w, i, SCHED_COMPLETED);
        r->n_finished++;
    }
    if (r->n_finished > 64 && 2 * r->n_finished > r->b.w->n_wls) {
        world_sweep(r->b.w);
        r->n_finished = 0;
    }
    r->alloc = world_allocated_gpu(r->b.w, 0, -1);
}


/* Step 4: the sample after an arrival. */
static void record_sample(struct irun *r)
{
    double total = (double)r->b.m->total_gpu_milli;
    double x = 100.0 * (double)r->arrived / total, alloc = 100.0 * (double)r->alloc / total;
    long k = lround(x);

    if (k >= 0 && k < r->out->n_curve) {
        r->curve_sum[k] += alloc;
        r->curve_n[k]++;
    }
    if (x >= 99.5 && x < 100.5) {
        r->at100_sum += alloc;
        r->at100_n++;
    } else if (x >= 100.5 && r->at100_n == 0) {   /* jumped past 100% */
        r->at100_sum = alloc;
        r->at100_n = 1;
    }
}


static void record_failure(struct irun *r)
{
    struct replay_inflation *o = r->out;
    double total = (double)r->b.m->total_gpu_milli;

    o->failures++;
    if (o->first_idle_gpus >= 0)
        return;
    o->placed_before_failure = o->arrivals - 1;
    o->first_arrived_pct = 100.0 * (double)r->arrived / total;
    o->first_alloc_pct = 100.0 * (double)r->alloc / total;
    o->first_idle_gpus = (total - (double)r->alloc) / 1000.0;
}

static int loop(struct irun *r)
{
    int i, task, left;

    for (i = 0; i < r->n_arrivals; i++) {
        task = r->arrivals[i];
        if (submit(r, task) != 0 || schedule(r, task, &left) != 0)
            return -1;
        replay_count_gang(r->b.m, &r->b.w->wls[r->b.w->n_wls - 1], &r->out->gangs);
        if (left > 0) {
            record_failure(r);
            withdraw_pending(r);
        }
        record_sample(r);
        if (r->b.m->opts->check && world_check(r->b.w, &r->e) != 0)
            return -1;
    }
    return 0;
}

static void summarize(struct irun *r)
{
    struct replay_inflation *o = r->out;
    double total = (double)r->b.m->total_gpu_milli;
    int k;

    for (k = 0; k < o->n_curve; k++)
        o->curve[k] = r->curve_n[k] ? r->curve_sum[k] / r->curve_n[k] : -1;
    if (r->at100_n) {
        o->at100_alloc_pct = r->at100_sum / r->at100_n;
        o->at100_idle_gpus = total / 1000.0 * (1.0 - o->at100_alloc_pct / 100.0);
    }
    o->end_alloc_pct = 100.0 * (double)r->alloc / total;
    o->end_idle_gpus = (total - (double)r->alloc) / 1000.0;
}

static void irun_free(struct irun *r)
{
    int i;

    world_free(r->b.w);
    free(r->b.pools);
    free(r->arrivals);
    free(r->curve_sum);
    free(r->curve_n);
    for (i = 0; i < r->n_chunks; i++)
        free(r->chunks[i]);
    free(r->chunks);
}

int replay_inflate(const struct replay_model *m, int policy, uint64_t seed,
                   struct replay_inflation *out, char *err, size_t len)
{
    struct irun r;
    int rc = -1;

    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    out->policy = policy;
    out->seed = seed;
    out->first_idle_gpus = -1;
    out->at100_idle_gpus = -1;
    out->at100_alloc_pct = -1;
    out->n_curve = (int)floor(m->opts->inflate * 100.0 + 1e-9) + 1;
    r.b.m = m;
    r.b.policy = policy;
    r.out = out;
    r.rng = seed;
    sched_config_default(&r.b.cfg);
    out->curve = calloc((size_t)out->n_curve, sizeof(*out->curve));
    r.curve_sum = calloc((size_t)out->n_curve, sizeof(*r.curve_sum));
    r.curve_n = calloc((size_t)out->n_curve, sizeof(*r.curve_n));
    if (!out->curve || !r.curve_sum || !r.curve_n || make_arrivals(&r) != 0 ||
        replay_layout(m, replay_policy_placement(policy), &r.b.layout, &r.b.pools) != 0 ||
        world_new(&r.b.layout, &r.b.w) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    if (loop(&r) != 0) {
        snprintf(err, len, "%s: inflation, policy %s, seed %llu, arrival %d: %s",
                 m->opts->pods_file, replay_policy_name(policy), (unsigned long long)seed,
                 out->arrivals, r.e.msg);
        goto out_free;
    }
    summarize(&r);
    rc = 0;
out_free:
    irun_free(&r);
    return rc;
}

void replay_inflation_free(struct replay_inflation *x)
{
    if (x) {
        free(x->curve);
        x->curve = NULL;
    }
}
