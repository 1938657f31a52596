/*
 * world.c: the world's lifecycle, the steps that change it between
 * scheduling passes, and what expectations read from it.
 *
 * Transitions made here (the core makes the others, through
 * sched_apply_decision() in world_pass.c):
 *   submit           -> PENDING, or RUNNING when runningOn places at least
 *                       min_pods pods (started now); fewer placed pods make
 *                       a stale gang (PENDING, stale since now)
 *   delete           -> gone; its pods free
 *   sweep            -> every COMPLETED or FAILED workload gone at once
 *   complete/suspend -> COMPLETED / STOPPED, pods free
 *   resume           -> PENDING with a new queue position, pods free
 *   nodeDown         -> the node's pods are gone; a workload left with none
 *                       is PENDING, with min_pods still RUNNING, otherwise
 *                       a stale gang (PENDING, stale since now unless it
 *                       already was)
 *   advance          -> usage samples for the time that passed, then RUNNING
 *                       workloads that ran their runtimeSeconds complete
 */
#include "world.h"
#include "arrays.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Lifecycle ---- */

static int copy_layout(struct world *w, const struct scenario *s)
{
    size_t n_quota = (size_t)s->n_queues * (size_t)s->n_pools * SCHED_NRES;
    size_t n_share = (size_t)s->n_queues * (size_t)s->n_pools;
    int q;

    w->nodes = calloc((size_t)s->n_nodes + 1, sizeof(*w->nodes));
    w->queues = calloc((size_t)s->n_queues + 1, sizeof(*w->queues));
    w->quotas = calloc(n_quota + 1, sizeof(*w->quotas));
    w->fair_gpu = calloc(n_share + 1, sizeof(*w->fair_gpu));
    w->dev_used = calloc((size_t)s->n_nodes * SCHED_MAX_NODE_GPUS + 1, sizeof(*w->dev_used));
    w->node_cpu = calloc((size_t)s->n_nodes + 1, sizeof(*w->node_cpu));
    w->node_mem = calloc((size_t)s->n_nodes + 1, sizeof(*w->node_mem));
    w->arena = sched_arena_new();
    if (!w->nodes || !w->queues || !w->quotas || !w->fair_gpu || !w->dev_used || !w->node_cpu ||
        !w->node_mem || !w->arena)
        return -1;
    memcpy(w->nodes, s->nodes, (size_t)s->n_nodes * sizeof(*w->nodes));
    memcpy(w->queues, s->queues, (size_t)s->n_queues * sizeof(*w->queues));
    memcpy(w->quotas, s->quotas, n_quota * sizeof(*w->quotas));
    for (q = 0; q < s->n_queues; q++)
        w->queues[q].quota = &w->quotas[(size_t)q * (size_t)s->n_pools * SCHED_NRES];
    return 0;
}

int world_new(const struct scenario *s, struct world **out)
{
    struct world *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (!w)
        return -1;
    w->s = s;
    w->delta.full = 1;
    namemap_init(&w->index);
    w->mix = sched_mix_window_new(SCHED_MIX_WINDOW);
    if (!w->mix || copy_layout(w, s) != 0) {
        world_free(w);
        return -1;
    }
    *out = w;
    return 0;
}

/* The arrays the world owns. */
static void free_arrays(struct world *w)
{
    void *const owned[] = {w->wls,      w->extra,   w->usage,  w->dev_used, w->node_cpu,
                           w->node_mem, w->fair_gpu, w->pending, w->quotas,  w->left,
                           w->down,     w->queues,   w->nodes};

    FREE_ALL(owned);
}

void world_free(struct world *w)
{
    int i;

    if (!w)
        return;
    for (i = 0; i < w->n_wls; i++)
        free(w->wls[i].pods);
    namemap_free(&w->index);
    sched_arena_free(w->arena);
    sched_mix_window_free(w->mix);
    free_arrays(w);
    sched_memo_free(w->memo);
    sched_arena_free(w->memo_arena);
    free(w);
}

int world_check_incremental(struct world *w)
{
    w->memo = sched_memo_new();
    w->memo_arena = sched_arena_new();
    w->delta.full = 1;
    return w->memo && w->memo_arena ? 0 : -1;
}

void world_state(const struct world *w, struct sched_state *st)
{
    st->now_ms = w->now_ms;
    st->pools = w->s->pools;
    st->n_pools = w->s->n_pools;
    st->nodes = w->nodes;
    st->n_nodes = w->s->n_nodes;
    st->queues = w->queues;
    st->n_queues = w->s->n_queues;
    st->workloads = w->wls;
    st->n_workloads = w->n_wls;
    st->usage = w->usage;
    st->n_usage = w->n_usage;
    st->n_mix = sched_mix_window_get(w->mix, &st->mix);
}

int world_find(const struct world *w, const char *name)
{
    int i;

    return namemap_get(&w->index, name, &i) ? i : -1;
}

/* ---- Pods ---- */

static int placed_pods(const struct sched_workload *wl)
{
    int j, n = 0;

    for (j = 0; j < wl->n_pods; j++)
        n += wl->pods[j].node >= 0;
    return n;
}

static void unplace_all(struct world *w, struct sched_workload *wl)
{
    int j;

    for (j = 0; j < wl->n_pods; j++) {
        wl->pods[j].node = -1;
        wl->pods[j].devices = 0;
    }
    wl->stale_since_ms = SCHED_NO_TIME;
    w->dev_dirty = 1;
}

/* ---- Steps ---- */

static int grow_workloads(struct world *w)
{
    int cap = w->cap_wls ? w->cap_wls * 2 : 64;

    if (w->n_wls < w->cap_wls)
        return 0;
    if (sim_resize(&w->wls, cap, sizeof(*w->wls)) != 0 ||
        sim_resize(&w->extra, cap, sizeof(*w->extra)) != 0)
        return -1;
    w->cap_wls = cap;
    return 0;
}

/* Places the pods runningOn names; the phase follows the gang rule. */
static int place_running(struct world *w, int i, const int *running_on, struct world_err *e)
{
    struct sched_workload *wl = &w->wls[i];
    int j, placed = 0;

    if (w->dev_dirty && world__rebuild_devices(w, e) != 0)
        return -1;
    for (j = 0; j < wl->n_pods; j++) {
        if (running_on[j] < 0)
            continue;
        if (world__place_pod(w, i, j, running_on[j], e) != 0) {
            snprintf(e->where, sizeof(e->where), ".submit.runningOn[%d]", j);
            return -1;
        }
        placed++;
    }
    if (placed >= wl->min_pods) {
        wl->phase = SCHED_RUNNING;
        wl->started_ms = w->now_ms;
    } else if (placed > 0) {
        wl->stale_since_ms = w->now_ms;
    }
    return 0;
}

int world_submit(struct world *w, const struct scn_submit *sub, struct world_err *e)
{
    struct sched_workload *wl;
    int i = w->n_wls, j;

    if (grow_workloads(w) != 0)
        goto out_nomem;
    wl = &w->wls[i];
    *wl = sub->w;
    if (sched_mix_window_note(w->mix, wl) != 0)
        goto out_nomem;
    wl->pods = malloc((size_t)wl->n_pods * sizeof(*wl->pods));
    if (!wl->pods)
        goto out_nomem;
    for (j = 0; j < wl->n_pods; j++) {
        wl->pods[j].node = -1;
        wl->pods[j].devices = 0;
    }
    wl->phase = SCHED_PENDING;
    wl->queued_seq = ++w->seq;
    wl->started_ms = SCHED_NO_TIME;
    wl->stale_since_ms = SCHED_NO_TIME;
    w->extra[i].runtime_ms = sub->runtime_ms;
    w->extra[i].evicted = 0;
    w->extra[i].moved = 0;
    w->n_wls++;
    if (sub->running_on)
        w->delta.full = 1;   /* placed at once: more than a submission */
    else
        w->delta.n_submitted++;
    if (namemap_put(&w->index, wl->name, i) != 0)
        goto out_nomem;
    return sub->running_on ? place_running(w, i, sub->running_on, e) : 0;
out_nomem:
    snprintf(e->msg, sizeof(e->msg), "out of memory");
    return -1;
}

void world_delete(struct world *w, int i)
{
    int k;

    namemap_put(&w->index, w->wls[i].name, -1);
    free(w->wls[i].pods);
    memmove(&w->wls[i], &w->wls[i + 1], (size_t)(w->n_wls - i - 1) * sizeof(*w->wls));
    memmove(&w->extra[i], &w->extra[i + 1], (size_t)(w->n_wls - i - 1) * sizeof(*w->extra));
    w->n_wls--;
    w->dev_dirty = 1;
    w->delta.full = 1;
    for (k = i; k < w->n_wls; k++)
        namemap_put(&w->index, w->wls[k].name, k);   /* present already: cannot fail */
}

void world_sweep(struct world *w)
{
    struct sched_workload *wl;
    int i, k = 0;

    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        if (wl->phase == SCHED_COMPLETED || wl->phase == SCHED_FAILED) {
            namemap_put(&w->index, wl->name, -1);   /* present already: cannot fail */
            free(wl->pods);
            continue;
        }
        if (k != i) {
            w->wls[k] = *wl;
            w->extra[k] = w->extra[i];
            namemap_put(&w->index, w->wls[k].name, k);   /* present already: cannot fail */
        }
        k++;
    }
    if (k != w->n_wls)
        w->dev_dirty = w->delta.full = 1;
    w->n_wls = k;
}

/* Workload i left in place: the delta lists it (full if out of memory). */
static void note_left(struct world *w, int i)
{
    if (!w->memo)
        return;   /* no incremental check: nobody reads the delta */
    if (sim_grow(&w->left, w->delta.n_left, &w->cap_left, sizeof(*w->left), 16) != 0) {
        w->delta.full = 1;
        return;
    }
    w->left[w->delta.n_left++] = i;
    w->delta.left = w->left;
}

void world_finish(struct world *w, int i, int phase)
{
    unplace_all(w, &w->wls[i]);
    w->wls[i].phase = phase;
    note_left(w, i);
}

void world_resume(struct world *w, int i)
{
    unplace_all(w, &w->wls[i]);
    w->wls[i].phase = SCHED_PENDING;
    w->wls[i].queued_seq = ++w->seq;
    w->delta.full = 1;
}

/* Removes a workload's pods from a failed node; 1 if it had any there. */
static int unplace_from(struct sched_workload *wl, int node)
{
    int j, hit = 0;

    for (j = 0; j < wl->n_pods; j++) {
        if (wl->pods[j].node == node) {
            wl->pods[j].node = -1;
            wl->pods[j].devices = 0;
            hit = 1;
        }
    }
    return hit;
}

/* Node went down: a ready one the delta lists (full if out of memory). */
static void note_down(struct world *w, int node)
{
    if (!w->memo || !w->nodes[node].ready)
        return;   /* nobody reads the delta; or no change to tell */
    if (sim_grow(&w->down, w->delta.n_down, &w->cap_down, sizeof(*w->down), 16) != 0) {
        w->delta.full = 1;
        return;
    }
    w->down[w->delta.n_down++] = node;
    w->delta.down = w->down;
}

void world_node_down(struct world *w, int node)
{
    struct sched_workload *wl;
    int i, placed;

    note_down(w, node);
    w->nodes[node].ready = 0;
    w->dev_dirty = 1;
    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        if (!unplace_from(wl, node))
            continue;
        placed = placed_pods(wl);
        if (placed >= wl->min_pods)
            continue;
        wl->phase = SCHED_PENDING;
        if (placed == 0)
            wl->stale_since_ms = SCHED_NO_TIME;
        else if (wl->stale_since_ms == SCHED_NO_TIME)
            wl->stale_since_ms = w->now_ms;
    }
}

void world_node_up(struct world *w, int node)
{
    w->nodes[node].ready = 1;
    w->delta.full = 1;
}

void world_set_quota(struct world *w, const struct scn_set_quota *q)
{
    struct sched_quota *quota;
    int res;

    w->delta.full = 1;
    for (res = 0; res < SCHED_NRES; res++) {
        quota = &w->quotas[((size_t)q->queue * (size_t)w->s->n_pools + (size_t)q->pool) *
                               SCHED_NRES + (size_t)res];
        if (q->given & (1u << (res * SCN_NFIELDS + SCN_DESERVED)))
            quota->deserved = q->value[res].deserved;
        if (q->given & (1u << (res * SCN_NFIELDS + SCN_LIMIT)))
            quota->limit = q->value[res].limit;
        if (q->given & (1u << (res * SCN_NFIELDS + SCN_WEIGHT)))
            quota->weight = q->value[res].weight;
    }
}

/* ---- The clock ---- */

static int push_sample(struct world *w, const struct sched_usage *u)
{
    if (sim_grow(&w->usage, w->n_usage, &w->cap_usage, sizeof(*w->usage), 64) != 0)
        return -1;
    w->usage[w->n_usage++] = *u;
    return 0;
}

/* One sample per leaf queue and pool holding something over [t0, t1]. */
static int add_usage(struct world *w, int64_t t0, int64_t t1)
{
    size_t n = (size_t)w->s->n_queues * (size_t)w->s->n_pools, k;
    struct sched_usage u;
    const struct sched_workload *wl;
    int64_t *sum = calloc(n * SCHED_NRES + 1, sizeof(*sum)), *a;
    int i, j, rc = 0;

    if (!sum)
        return -1;
    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        for (j = 0; j < wl->n_pods; j++) {
            if (wl->pods[j].node < 0)
                continue;
            a = &sum[((size_t)wl->queue * (size_t)w->s->n_pools +
                      (size_t)w->nodes[wl->pods[j].node].pool) * SCHED_NRES];
            a[SCHED_GPU] += sched_pod_gpu(wl, &w->nodes[wl->pods[j].node]);
            a[SCHED_CPU] += wl->cpu_milli;
            a[SCHED_MEM] += wl->mem_mib;
        }
    }
    for (k = 0; rc == 0 && k < n; k++) {
        a = &sum[k * SCHED_NRES];
        if (!a[SCHED_GPU] && !a[SCHED_CPU] && !a[SCHED_MEM])
            continue;
        u.queue = (int)(k / (size_t)w->s->n_pools);
        u.pool = (int)(k % (size_t)w->s->n_pools);
        u.start_ms = t0;
        u.end_ms = t1;
        memcpy(u.amount, a, sizeof(u.amount));
        rc = push_sample(w, &u);
    }
    free(sum);
    return rc;
}

int world_advance(struct world *w, int64_t ms, struct world_err *e)
{
    struct sched_workload *wl;
    int64_t runtime;
    int i;

    if (ms > 0 && add_usage(w, w->now_ms, w->now_ms + ms) != 0) {
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return -1;
    }
    w->now_ms += ms;
    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        runtime = w->extra[i].runtime_ms;
        if (wl->phase == SCHED_RUNNING && runtime != SCHED_NO_TIME &&
            w->now_ms - wl->started_ms >= runtime)
            world_finish(w, i, SCHED_COMPLETED);
    }
    return 0;
}

/* ---- What expectations read ---- */

void world_clear_marks(struct world *w)
{
    int i;

    for (i = 0; i < w->n_wls; i++) {
        w->extra[i].evicted = 0;
        w->extra[i].moved = 0;
    }
}

/* Whether queue q is `top` or below it. */
static int within(const struct world *w, int q, int top)
{
    for (; q >= 0; q = w->queues[q].parent)
        if (q == top)
            return 1;
    return 0;
}

int64_t world_allocated_gpu(const struct world *w, int queue, int pool)
{
    const struct sched_workload *wl;
    int64_t sum = 0;
    int i, j;

    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        if (!within(w, wl->queue, queue))
            continue;
        for (j = 0; j < wl->n_pods; j++)
            if (wl->pods[j].node >= 0 && (pool < 0 || w->nodes[wl->pods[j].node].pool == pool))
                sum += sched_pod_gpu(wl, &w->nodes[wl->pods[j].node]);
    }
    return sum;
}

int64_t world_fair_gpu(const struct world *w, int queue, int pool)
{
    int64_t sum = 0;
    int p;

    for (p = 0; p < w->s->n_pools; p++)
        if (pool < 0 || p == pool)
            sum += w->fair_gpu[(size_t)queue * (size_t)w->s->n_pools + (size_t)p];
    return sum;
}

const struct world_pending *world_pending_of(const struct world *w, const char *name)
{
    int k;

    for (k = 0; k < w->n_pending; k++)
        if (strcmp(w->pending[k].name, name) == 0)
            return &w->pending[k];
    return NULL;
}

void world_pending_message(const struct world *w, const struct world_pending *kp, char *buf,
                           size_t len)
{
    struct sched_state st;
    struct sched_pending p = kp->p;

    buf[0] = '\0';
    p.workload = world_find(w, kp->name);
    if (p.workload < 0)
        return;
    world_state(w, &st);
    sched_reason_message(&st, &p, buf, len);
}
