/*
 * cycle.c: sched_cycle(), the core's one call.
 *
 * Step 1  build the session from the snapshot (session.c);
 * Step 2  fair share per pool and resource (fairshare.c), recorded in the
 *         result together with the allocation it saw;
 * Step 3  allocate, consolidate, reclaim, preempt (actions.c), then
 *         stale-gang eviction (reasons.c);
 * Step 4  a reason for every workload left pending, and the stale times
 *         the driver keeps for the next cycle;
 * Step 5  with a memo (sched_cycle_next(), memo.c), what the next cycle
 *         may reuse: the session itself (built in the memo's arena; the
 *         result's arrays, decisions included, are always in the caller's),
 *         the fair shares, the pending entries and the table of diagnosis
 *         kinds.
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

int sched__record_shares(struct sched_session *ss, struct sched_arena *arena,
                         struct sched_result *out)
{
    int q, p, r;

    out->n_queues = ss->n_queues;
    out->n_pools = ss->n_pools;
    out->shares = sched__calloc(arena, (size_t)ss->n_queues * (size_t)ss->n_pools + 1,
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

int sched__is_pending(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);

    if (wl->phase == SCHED_STOPPED)
        return 1;
    return (ss->wl[w].flags & WL_ACTIVE) && ss->wl[w].n_placed < wl->min_pods;
}

/* Two pending workloads that the diagnosis cannot tell apart: same queue,
 * pools, node type, requests, pods still missing and phase. */
int sched__same_diagnosis(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *wa = ss_w(ss, a), *wb = ss_w(ss, b);
    const struct ss_wl *xa = &ss->wl[a], *xb = &ss->wl[b];

    if (wa->queue != wb->queue || wa->phase != wb->phase || xa->pool != xb->pool ||
        xa->n_pools != xb->n_pools || wa->gpu_devices != wb->gpu_devices ||
        wa->gpu_portion != wb->gpu_portion || wa->cpu_milli != wb->cpu_milli ||
        wa->mem_mib != wb->mem_mib || wa->preemptible != wb->preemptible ||
        wa->n_pods != wb->n_pods || wa->min_pods - xa->n_placed != wb->min_pods - xb->n_placed ||
        wa->type != wb->type)
        return 0;
    if (xa->pools != xb->pools && memcmp(xa->pools, xb->pools, sizeof(int) * (size_t)xa->n_pools))
        return 0;
    return wa->gpu_memory_mib == wb->gpu_memory_mib && xa->cls == xb->cls;
}

uint64_t sched__diagnosis_hash(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    int64_t v[11] = {wl->queue, x->pool, wl->gpu_devices, wl->gpu_portion, wl->cpu_milli,
                     wl->mem_mib, wl->min_pods - x->n_placed, wl->phase, x->n_pools,
                     wl->gpu_memory_mib, x->cls};
    uint64_t h = 1469598103934665603ULL;
    int i;

    for (i = 0; i < 11; i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ULL;
    for (i = 0; i < x->n_pools; i++)
        h = (h ^ (uint64_t)x->pools[i]) * 1099511628211ULL;
    return h;
}

/* A reason for every pending workload. Workloads the diagnosis cannot tell
 * apart share one (a table of the first of each kind), so a cycle with tens
 * of thousands of pending workloads diagnoses a few hundred kinds. */
static int record_pending(struct sched_session *ss, struct sched_arena *arena,
                          struct sched_result *out, int **kinds, int *cap_kinds)
{
    int w, n = 0, cap = 16, mask, *first;

    for (w = 0; w < ss->n_workloads; w++)
        n += sched__is_pending(ss, w);
    out->pending = sched__calloc(arena, (size_t)n + 1, sizeof(struct sched_pending));
    while (cap < 2 * n)
        cap *= 2;
    first = sched__calloc(arena, (size_t)cap, sizeof(int)); /* index into pending + 1 */
    if (!out->pending || !first)
        return SCHED_ENOMEM;
    mask = cap - 1;
    out->n_pending = 0;
    for (w = 0; w < ss->n_workloads; w++) {
        struct sched_pending *p;
        int i;
        if (!sched__is_pending(ss, w))
            continue;
        p = &out->pending[out->n_pending];
        for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); first[i]; i = (i + 1) & mask)
            if (sched__same_diagnosis(ss, out->pending[first[i] - 1].workload, w))
                break;
        if (first[i]) {
            *p = out->pending[first[i] - 1];
            p->workload = w;
        } else {
            sched__diagnose(ss, w, p);
            first[i] = out->n_pending + 1;
        }
        out->n_pending++;
    }
    *kinds = first;
    *cap_kinds = cap;
    return SCHED_OK;
}

int sched__cycle_on(struct sched_session *ss, struct sched_arena *arena,
                    struct sched_result *out, int **kinds, int *cap_kinds)
{
    int rc, dummy_cap, *dummy_kinds;

    memset(out, 0, sizeof(*out));
    if (!kinds) {
        kinds = &dummy_kinds;
        cap_kinds = &dummy_cap;
    }
    rc = sched__fairshare(ss);
    if (rc == SCHED_OK)
        rc = sched__record_shares(ss, arena, out);
    if (rc != SCHED_OK)
        return rc;

    sched__act_allocate(ss);
    sched__act_consolidate(ss);
    sched__act_reclaim(ss);
    sched__act_preempt(ss);

    out->stale_since_ms = sched__calloc(arena, (size_t)ss->n_workloads + 1, sizeof(int64_t));
    if (!out->stale_since_ms)
        return SCHED_ENOMEM;
    sched__stale_gangs(ss, out->stale_since_ms);
    rc = record_pending(ss, arena, out, kinds, cap_kinds);
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    out->decisions = ss->decisions;
    out->n_decisions = ss->n_decisions;
    if (rc == SCHED_OK && ss->arena != arena && ss->n_decisions > 0) {
        /* a kept session's memory outlives the result's arena: copy them there */
        out->decisions = sched__calloc(arena, (size_t)ss->n_decisions, sizeof(*ss->decisions));
        if (!out->decisions)
            return SCHED_ENOMEM;
        memcpy(out->decisions, ss->decisions, sizeof(*ss->decisions) * (size_t)ss->n_decisions);
    }
    return rc;
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
        rc = sched__cycle_on(&ss, arena, out, NULL, NULL);
    return rc;
}
