/*
 * replay_inflate.c: workload inflation, as in the trace's paper (FGD,
 * ATC '23): tasks drawn from the trace keep arriving on an ever fuller
 * cluster, nothing ever leaves, and what matters is how many GPUs are
 * left unallocated when the cluster cannot take the next task.
 *
 * Step 1: draw a task uniformly from the trace (splitmix64 seeded with
 *         --seed; tasks that fit no node even on an empty cluster are
 *         drawn again) and submit a copy of it under a fresh name, to the
 *         project of the original's name.
 * Step 2: schedule it: the allot policies run passes of the core until
 *         one decides nothing or nothing is pending; FIFO places it by
 *         first fit.
 * Step 3: a failure is anything left pending: the new task, or a task a
 *         reclaim or preemption evicted for it. The first failure records
 *         the unallocated GPUs; then every pending workload is withdrawn
 *         and the arrivals go on.
 * Step 4: stop once the GPUs asked by all arrivals (placed or not) reach
 *         --inflate times the cluster's GPUs.
 * The curve: unallocated GPUs against arrived GPUs in % of the cluster.
 */
#include "replay_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 48
#define CHUNK 4096   /* names per chunk; chunks never move (the world borrows names) */

struct irun {
    const struct replay_model *m;
    int policy;
    struct scenario layout;
    struct sched_pool *pools;
    struct world *w;
    struct sched_config cfg;
    char **chunks;
    int n_chunks;
    int n_names;
    uint64_t rng;
    int64_t alloc, arrived;
    int n_finished;
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

static int draw(struct irun *r)
{
    int k;

    do
        k = (int)(splitmix64(&r->rng) % (uint64_t)r->m->t->n_tasks);
    while (r->m->unplaceable[k]);
    return k;
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
    snprintf(name, NAME_LEN, "%.30s#%d", r->m->t->tasks[task].name, r->n_names);
    r->n_names++;
    return name;
}

static int submit(struct irun *r, int task)
{
    struct scn_submit sub;

    memset(&sub, 0, sizeof(sub));
    sub.w = r->m->tmpl[task];
    sub.w.name = new_name(r, task);
    sub.runtime_ms = SCHED_NO_TIME;
    if (!sub.w.name) {
        snprintf(r->e.msg, sizeof(r->e.msg), "out of memory");
        return -1;
    }
    r->arrived += r->m->gpu[task];
    r->out->arrivals++;
    return world_submit(r->w, &sub, &r->e);
}

/* Step 2 for the allot policies; *left: workloads pending after it. */
static int schedule_allot(struct irun *r, int *left, int *disturbed)
{
    struct sched_result res;
    int pass, k;

    for (pass = 0; pass < RP_MAX_PASSES; pass++) {
        if (world_pass(r->w, &r->cfg, &res, &r->e) != 0)
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

    if (r->policy != RP_FIFO) {
        if (schedule_allot(r, left, &disturbed) != 0)
            return -1;
    } else {
        placed = replay_fifo_place(r->m, r->w, r->w->n_wls - 1, &r->e);
        if (placed < 0)
            return -1;
        *left = !placed;
    }
    if (disturbed || *left)
        r->alloc = world_allocated_gpu(r->w, 0, -1);
    else
        r->alloc += r->m->gpu[task];
    return 0;
}

/* Step 3: every pending workload leaves. */
static void withdraw_pending(struct irun *r)
{
    int i;

    for (i = 0; i < r->w->n_wls; i++) {
        if (r->w->wls[i].phase != SCHED_PENDING)
            continue;
        world_finish(r->w, i, SCHED_COMPLETED);
        r->n_finished++;
    }
    if (r->n_finished > 64 && 2 * r->n_finished > r->w->n_wls) {
        world_sweep(r->w);
        r->n_finished = 0;
    }
    r->alloc = world_allocated_gpu(r->w, 0, -1);
}

static void record_failure(struct irun *r)
{
    struct replay_inflation *o = r->out;
    double total = (double)r->m->total_gpu_milli;

    o->failures++;
    if (o->first_idle_gpus >= 0)
        return;
    o->placed_before_failure = o->arrivals - 1;
    o->first_arrived_pct = 100.0 * (double)r->arrived / total;
    o->first_alloc_pct = 100.0 * (double)r->alloc / total;
    o->first_idle_gpus = (total - (double)r->alloc) / 1000.0;
}

/* The curve point of the bucket the arrived demand falls in (the last
 * arrival of a bucket wins; buckets skipped over get the same point). */
static void record_curve(struct irun *r, double limit)
{
    struct replay_inflation *o = r->out;
    double x = 100.0 * (double)r->arrived / (double)r->m->total_gpu_milli;
    int b = (int)(x / limit * RP_BUCKETS), k;

    b = b >= RP_BUCKETS ? RP_BUCKETS - 1 : b;
    for (k = o->n_curve < b ? o->n_curve : b; k <= b; k++) {
        o->curve_x[k] = x;
        o->curve_y[k] = (double)(r->m->total_gpu_milli - r->alloc) / 1000.0;
    }
    o->n_curve = b + 1 > o->n_curve ? b + 1 : o->n_curve;
}

static int loop(struct irun *r)
{
    double limit = r->m->opts->inflate * 100.0;
    int64_t target = (int64_t)llround(r->m->opts->inflate * (double)r->m->total_gpu_milli);
    int64_t max_arrivals = 100 * (int64_t)r->m->t->n_tasks + 100000;
    int task, left;

    while (r->arrived < target && r->out->arrivals < max_arrivals) {
        task = draw(r);
        if (submit(r, task) != 0 || schedule(r, task, &left) != 0)
            return -1;
        if (left > 0) {
            record_failure(r);
            withdraw_pending(r);
        }
        record_curve(r, limit);
        if (r->m->opts->check && world_check(r->w, &r->e) != 0)
            return -1;
    }
    return 0;
}

static void irun_free(struct irun *r)
{
    int i;

    world_free(r->w);
    free(r->pools);
    for (i = 0; i < r->n_chunks; i++)
        free(r->chunks[i]);
    free(r->chunks);
}

int replay_inflate(const struct replay_model *m, int policy, struct replay_inflation *out,
                   char *err, size_t len)
{
    struct irun r;
    int rc = -1;

    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    out->policy = policy;
    out->first_idle_gpus = -1;
    r.m = m;
    r.policy = policy;
    r.out = out;
    r.rng = m->opts->seed;
    sched_config_default(&r.cfg);
    if (replay_layout(m, policy == RP_ALLOT_SPREAD ? SCHED_SPREAD : SCHED_BINPACK, &r.layout,
                      &r.pools) != 0 ||
        world_new(&r.layout, &r.w) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    if (loop(&r) != 0) {
        snprintf(err, len, "%s: inflation, policy %s, arrival %d: %s", m->opts->pods_file,
                 replay_policy_name(policy), out->arrivals, r.e.msg);
        goto out_free;
    }
    out->end_alloc_pct = 100.0 * (double)r.alloc / (double)m->total_gpu_milli;
    out->end_idle_gpus = (double)(m->total_gpu_milli - r.alloc) / 1000.0;
    rc = 0;
out_free:
    irun_free(&r);
    return rc;
}
