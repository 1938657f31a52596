/*
 * cycle.c: sched_cycle(), the core's one call.
 *
 * Step 1  build the session from the snapshot (session.c);
 * Step 2  fair share per pool and resource (fairshare.c), recorded in the
 *         result together with the allocation it saw;
 * Step 3  allocate, consolidate, reclaim, preempt (actions.c), then
 *         stale-gang eviction (reasons.c);
 * Step 4  a reason for every workload left pending, and the stale times
 *         the driver keeps for the next cycle.
 */
#include "sched_int.h"

#include <string.h>

void sched_config_default(struct sched_config *cfg)
{
    cfg->stale_grace_ms = 60000;
    cfg->max_consolidation_moves = 16;
}

const struct sched_share *sched_result_share(const struct sched_result *r, int q, int p)
{
    if (!r || q < 0 || p < 0 || q >= r->n_queues || p >= r->n_pools)
        return NULL;
    return &r->shares[(size_t)q * (size_t)r->n_pools + (size_t)p];
}

static int record_shares(struct sched_session *ss, struct sched_result *out)
{
    int q, p, r;

    out->n_queues = ss->n_queues;
    out->n_pools = ss->n_pools;
    out->shares = sched__calloc(ss->arena, (size_t)ss->n_queues * (size_t)ss->n_pools + 1,
                                sizeof(struct sched_share));
    if (!out->shares)
        return SCHED_ENOMEM;
    for (q = 0; q < ss->n_queues; q++)
        for (p = 0; p < ss->n_pools; p++) {
            const struct ss_qp *a = ss_qp(ss, q, p);
            struct sched_share *s = &out->shares[(size_t)q * (size_t)ss->n_pools + (size_t)p];
            for (r = 0; r < SCHED_NRES; r++) {
                s->fair[r] = ss_min(a->fair[r], SS_BIG);
                s->allocated[r] = a->alloc[r];
                s->requested[r] = ss_min(ss_min(a->request[r], a->limit[r]), SS_BIG);
                s->deserved[r] = a->deserved[r];
            }
        }
    return SCHED_OK;
}

static int is_pending(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);

    if (wl->phase == SCHED_STOPPED)
        return 1;
    return (ss->wl[w].flags & WL_ACTIVE) && ss->wl[w].n_placed < wl->min_pods;
}

static int record_pending(struct sched_session *ss, struct sched_result *out)
{
    int w, n = 0;

    for (w = 0; w < ss->n_workloads; w++)
        n += is_pending(ss, w);
    out->pending = sched__calloc(ss->arena, (size_t)n + 1, sizeof(struct sched_pending));
    if (!out->pending)
        return SCHED_ENOMEM;
    out->n_pending = 0;
    for (w = 0; w < ss->n_workloads; w++)
        if (is_pending(ss, w))
            sched__diagnose(ss, w, &out->pending[out->n_pending++]);
    return SCHED_OK;
}

int sched_cycle(const struct sched_state *in, const struct sched_config *cfg,
                struct sched_arena *arena, struct sched_result *out)
{
    struct sched_session ss;
    struct sched_config defaults;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!cfg) {
        sched_config_default(&defaults);
        cfg = &defaults;
    }
    rc = sched__session_build(&ss, in, cfg, arena);
    if (rc == SCHED_OK)
        rc = sched__fairshare(&ss);
    if (rc == SCHED_OK)
        rc = record_shares(&ss, out);
    if (rc != SCHED_OK)
        return rc;

    sched__act_allocate(&ss);
    sched__act_consolidate(&ss);
    sched__act_reclaim(&ss);
    sched__act_preempt(&ss);

    out->stale_since_ms = sched__calloc(arena, (size_t)in->n_workloads + 1, sizeof(int64_t));
    if (!out->stale_since_ms)
        return SCHED_ENOMEM;
    sched__stale_gangs(&ss, out->stale_since_ms);
    rc = record_pending(&ss, out);
    if (rc == SCHED_OK && ss.oom)
        rc = SCHED_ENOMEM;
    out->decisions = ss.decisions;
    out->n_decisions = ss.n_decisions;
    return rc;
}
