/*
 * world_pass.c: one scheduling pass on the world, and what the simulator
 * keeps of the last one.
 *
 * Step 1: the arena is reset (the previous pass's result dies here).
 * Step 2: sched_cycle() reads the world's snapshot; with
 *         world_check_incremental(), sched_cycle_next() reads it too, with
 *         the changes since the last pass, and must decide the same bytes.
 * Step 3: every decision is applied in order with sched_apply_decision();
 *         an EVICT that leaves its workload below its minimum marks it
 *         evicted (an elastic workload that lost only pods above its
 *         minimum keeps running: it is not evicted), a MOVE marks it moved.
 * Step 4: each workload's stale_since_ms becomes the result's.
 */
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *decision_kind(int kind)
{
    switch (kind) {
    case SCHED_BIND:  return "BIND";
    case SCHED_EVICT: return "EVICT";
    case SCHED_MOVE:  return "MOVE";
    default:          return "unknown";
    }
}

static int apply_all(struct world *w, const struct sched_result *res, struct world_err *e)
{
    const struct sched_decision *d;
    int k;

    for (k = 0; k < res->n_decisions; k++) {
        d = &res->decisions[k];
        if (sched_apply_decision(w->wls, w->n_wls, d, w->now_ms) != SCHED_OK) {
            snprintf(e->msg, sizeof(e->msg), "decision %d (%s of workload %d, pod %d) cannot "
                     "be applied", k, decision_kind(d->kind), d->workload, d->pod);
            return -1;
        }
        if (d->kind == SCHED_EVICT && w->wls[d->workload].phase != SCHED_RUNNING)
            w->extra[d->workload].evicted = 1;
        else if (d->kind == SCHED_MOVE)
            w->extra[d->workload].moved = 1;
    }
    return 0;
}

static int same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* With world_check_incremental(): the same pass through sched_cycle_next()
 * with the changes since the last one, byte for byte res. */
static int check_incremental(struct world *w, const struct sched_state *st,
                             const struct sched_config *cfg, const struct sched_result *res,
                             struct world_err *e)
{
    struct sched_result inc;
    size_t shares = (size_t)st->n_queues * (size_t)st->n_pools;
    int rc;

    sched_arena_reset(w->memo_arena);
    memset(&inc, 0, sizeof(inc));
    rc = sched_cycle_next(w->memo, st, &w->delta, cfg, w->memo_arena, &inc);
    w->delta.full = 0;
    w->delta.n_submitted = 0;
    w->delta.n_left = 0;
    w->delta.n_down = 0;
    if (rc == SCHED_OK && inc.n_decisions == res->n_decisions &&
        inc.n_pending == res->n_pending &&
        same_bytes(inc.decisions, res->decisions,
                   sizeof(*res->decisions) * (size_t)res->n_decisions) &&
        same_bytes(inc.pending, res->pending, sizeof(*res->pending) * (size_t)res->n_pending) &&
        inc.n_waiting == res->n_waiting &&
        same_bytes(inc.waiting, res->waiting, sizeof(*res->waiting) * (size_t)res->n_waiting) &&
        same_bytes(inc.shares, res->shares, sizeof(*res->shares) * shares) &&
        same_bytes(inc.stale_since_ms, res->stale_since_ms,
                   sizeof(*res->stale_since_ms) * (size_t)st->n_workloads))
        return 0;
    snprintf(e->msg, sizeof(e->msg), "pass %d: sched_cycle_next() %s sched_cycle() on the "
             "same state", w->passes + 1, rc != SCHED_OK ? "failed, unlike" : "decided unlike");
    return -1;
}

int world_pass(struct world *w, const struct sched_config *cfg, struct sched_result *res,
               struct world_err *e)
{
    struct sched_state st;
    int rc, i;

    sched_arena_reset(w->arena);
    world_state(w, &st);
    memset(res, 0, sizeof(*res));
    rc = sched_cycle(&st, cfg, w->arena, res);
    if (rc != SCHED_OK) {
        snprintf(e->msg, sizeof(e->msg), "sched_cycle() failed with %s",
                 rc == SCHED_ENOMEM ? "SCHED_ENOMEM" : rc == SCHED_EINVAL ? "SCHED_EINVAL" :
                                                                            "an unknown code");
        return -1;
    }
    if (w->memo && check_incremental(w, &st, cfg, res, e) != 0)
        return -1;
    w->passes++;
    w->dev_dirty = 1;
    if (apply_all(w, res, e) != 0)
        return -1;
    for (i = 0; res->stale_since_ms && i < w->n_wls; i++)
        w->wls[i].stale_since_ms = res->stale_since_ms[i];
    return 0;
}

static int keep_pending(struct world *w, const struct sched_result *res, struct world_err *e)
{
    struct world_pending *grown;
    const struct sched_pending *p;
    int k;

    if (res->n_pending > w->cap_pending) {
        grown = realloc(w->pending, (size_t)res->n_pending * sizeof(*grown));
        if (!grown) {
            snprintf(e->msg, sizeof(e->msg), "out of memory");
            return -1;
        }
        w->pending = grown;
        w->cap_pending = res->n_pending;
    }
    w->n_pending = 0;
    for (k = 0; k < res->n_pending; k++) {
        p = &res->pending[k];
        if (p->workload < 0 || p->workload >= w->n_wls) {
            snprintf(e->msg, sizeof(e->msg), "pending entry %d names workload %d, which does "
                     "not exist", k, p->workload);
            return -1;
        }
        w->pending[w->n_pending].name = w->wls[p->workload].name;
        w->pending[w->n_pending].p = *p;
        w->n_pending++;
    }
    return 0;
}

int world_keep(struct world *w, const struct sched_result *res, struct world_err *e)
{
    const struct sched_share *share;
    int q, p, n_pools = w->s->n_pools;

    for (q = 0; q < w->s->n_queues; q++) {
        for (p = 0; p < n_pools; p++) {
            share = res->shares ? sched_result_share(res, q, p) : NULL;
            w->fair_gpu[(size_t)q * (size_t)n_pools + (size_t)p] = share ? share->fair[SCHED_GPU]
                                                                         : 0;
        }
    }
    return keep_pending(w, res, e);
}
