/*
 * reasons.c: why a workload is still pending at the end of a cycle, and
 * stale-gang eviction.
 *
 * The reason is diagnosed against the cycle's final state, in the first
 * of the workload's pools that could hold it when empty (else the first
 * with a ready node of its node type):
 *   GangNotSatisfiable     the pool could not hold the gang even empty;
 *   OverLimit              a limit at the queue or an ancestor;
 *   NonPreemptibleOverQuota non-preemptible work beyond deserved;
 *   QueueFairShareReached  the queue would exceed its fair share, and
 *                          other queues hold the rest of the pool (detail:
 *                          whether they are within their own shares, or
 *                          which one is furthest above its own);
 *   InsufficientResources  otherwise: no room now, nothing to take back
 *                          (detail: unless the pool's minimum runtime
 *                          still protects the workloads it would take,
 *                          whose queue and time left it names).
 * With no such pool at all: NoMatchingNodePool. Stopped: Suspended.
 *
 * Stale gangs (kai-scheduling.md 4.5): a workload with some pods placed
 * but fewer than its minimum is stale from the first cycle that sees it
 * so; after the grace period all its pods are evicted.
 */
#include "sched_int.h"

static int reason_res(const struct ss_wl *x)
{
    if (x->req[SCHED_GPU] > 0)
        return SCHED_GPU;
    return x->req[SCHED_CPU] > 0 ? SCHED_CPU : SCHED_MEM;
}

/* The resource that keeps a pod of w off every ready node of the pool:
 * judged on the nodes' totals (ever = 1) or on what is free now. GPU
 * first, then CPU, then memory; the workload's main resource if none
 * stands out (the pods fit one by one but not all together). */
static int binding_res(const struct sched_session *ss, int w, int pool, int ever)
{
    const struct ss_pool *p = &ss->pools[pool];
    const struct ss_wl *x = &ss->wl[w];
    int i, gpu_ok = 0, cpu_ok = 0, mem_ok = 0;

    for (i = 0; i < p->n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[p->nodes[i]];
        if (!n->ready)
            continue;
        gpu_ok |= (ever ? (int64_t)n->n_gpus * SCHED_MILLI : n->gpu_free) >= x->req[SCHED_GPU];
        cpu_ok |= (ever ? n->cpu_total : n->cpu_free) >= x->req[SCHED_CPU];
        mem_ok |= (ever ? n->mem_total : n->mem_free) >= x->req[SCHED_MEM];
        if (gpu_ok && cpu_ok && mem_ok)
            break;
    }
    if (!gpu_ok && x->req[SCHED_GPU] > 0)
        return SCHED_GPU;
    if (!cpu_ok && x->req[SCHED_CPU] > 0)
        return SCHED_CPU;
    if (!mem_ok && x->req[SCHED_MEM] > 0)
        return SCHED_MEM;
    return reason_res(x);
}

static int64_t pool_free(const struct sched_session *ss, int pool, int r)
{
    const struct ss_pool *p = &ss->pools[pool];
    int64_t total = 0;
    int i;

    for (i = 0; i < p->n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[p->nodes[i]];
        if (n->ready)
            total += r == SCHED_GPU ? n->gpu_free : r == SCHED_CPU ? n->cpu_free : n->mem_free;
    }
    return ss_min(total, SS_BIG);
}

static int others_hold(struct sched_session *ss, int q, int pool)
{
    int root = q, r;

    while (ss->queues[root].parent >= 0)
        root = ss->queues[root].parent;
    for (r = 0; r < ss->n_queues; r++)
        if (ss->queues[r].parent < 0 && r != root && sched__queue_holds_pool(ss, r, pool))
            return 1;
    /* siblings inside the same tree */
    for (r = 0; r < SCHED_NRES; r++)
        if (ss_qp(ss, root, pool)->alloc[r] > ss_qp(ss, q, pool)->alloc[r])
            return 1;
    return 0;
}

static void set(struct sched_pending *p, int reason, int queue, int pool, int res, int64_t use,
                int64_t bound)
{
    p->reason = reason;
    p->detail = SCHED_D_NONE;
    p->other_queue = -1;
    p->wait_ms = 0;
    p->queue = queue;
    p->pool = pool;
    p->res = res;
    p->would_use = use;
    p->bound = bound;
}

/* QueueFairShareReached: are the other projects holding the pool within
 * their share (allocatable share, GPU)? If not, the one furthest above. */
static void who_holds_the_rest(const struct sched_session *ss, int q, int pool,
                               struct sched_pending *p)
{
    int64_t worst = 0;
    int o;

    p->detail = SCHED_D_WITHIN_SHARE;
    for (o = 0; o < ss->n_queues; o++) {
        const struct ss_qp *a = &ss->qp[(size_t)o * (size_t)ss->n_pools + (size_t)pool];
        int64_t over = a->alloc[SCHED_GPU] - sched__allocatable(a, SCHED_GPU);
        if (o == q || !ss->queues[o].is_leaf || over <= worst)
            continue;
        worst = over;
        p->detail = SCHED_D_NOT_RECLAIMABLE;
        p->other_queue = o;
    }
}

static void diagnose_pool(struct sched_session *ss, int w, int pool, int pods,
                          struct sched_pending *p)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    int r;
    struct ss_verdict v;

    if (!sched__pool_can_ever_fit(ss, w, pool, pods)) {
        r = binding_res(ss, w, pool, 1);
        set(p, wl->n_pods > 1 ? SCHED_R_GANG_NOT_SATISFIABLE : SCHED_R_INSUFFICIENT_RESOURCES,
            wl->queue, pool, r, x->req[r] * pods, ss->pools[pool].capacity[r]);
        return;
    }
    if (!sched__capacity_check(ss, w, pool, pods, &v)) {
        set(p, v.reason, v.queue, pool, v.res, v.would_use, v.bound);
        return;
    }
    if (!sched__reclaimer_within_share(ss, w, pool, pods, &v) && others_hold(ss, wl->queue, pool)) {
        set(p, v.reason, v.queue, pool, v.res, v.would_use, v.bound);
        who_holds_the_rest(ss, wl->queue, pool, p);
        return;
    }
    r = binding_res(ss, w, pool, 0);
    set(p, SCHED_R_INSUFFICIENT_RESOURCES, wl->queue, pool, r, x->req[r] * pods,
        pool_free(ss, pool, r));
    if (sched__protected_victims(ss, w, pool, &p->other_queue, &p->wait_ms))
        p->detail = SCHED_D_RUNTIME_PROTECTED;
}

void sched__diagnose(struct sched_session *ss, int w, struct sched_pending *p)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    int pods = wl->min_pods - x->n_placed, i;

    p->workload = w;
    p->request = x->req[reason_res(x)] * pods;
    if (wl->phase == SCHED_STOPPED) {
        set(p, SCHED_R_SUSPENDED, wl->queue, -1, SCHED_GPU, 0, 0);
        return;
    }
    if (x->pool >= 0) {
        diagnose_pool(ss, w, x->pool, pods, p);
        return;
    }
    /* the first pool that could hold it when empty, else the first with a
     * node of its type, says why it waits */
    for (i = 0; i < x->n_pools; i++)
        if (sched__pool_has_node_for(ss, w, x->pools[i]) &&
            sched__pool_can_ever_fit(ss, w, x->pools[i], pods)) {
            diagnose_pool(ss, w, x->pools[i], pods, p);
            return;
        }
    for (i = 0; i < x->n_pools; i++)
        if (sched__pool_has_node_for(ss, w, x->pools[i])) {
            diagnose_pool(ss, w, x->pools[i], pods, p);
            return;
        }
    set(p, SCHED_R_NO_MATCHING_NODE_POOL, wl->queue, x->n_pools > 0 ? x->pools[0] : -1,
        reason_res(x), p->request, 0);
}

void sched__stale_gangs(struct sched_session *ss, int64_t *stale_out)
{
    int64_t now = ss->in->now_ms, grace = ss->cfg->stale_grace_ms;
    int w, k;

    for (w = 0; w < ss->n_workloads; w++) {
        const struct sched_workload *wl = ss_w(ss, w);
        const struct ss_wl *x = &ss->wl[w];
        int64_t since;

        stale_out[w] = SCHED_NO_TIME;
        if (!(x->flags & WL_ACTIVE) || x->n_placed == 0 || x->n_placed >= wl->min_pods)
            continue;
        since = wl->stale_since_ms != SCHED_NO_TIME ? wl->stale_since_ms : now;
        if (grace < 0 || now - since < grace) {
            stale_out[w] = since;
            continue;
        }
        for (k = 0; k < wl->n_pods; k++)
            if (ss->pods[w][k].node >= 0)
                sched__unplace(ss, w, k);
        ss->wl[w].flags |= WL_EVICTED;
        sched__decide(ss, SCHED_EVICT, SCHED_ACT_STALE_GANG, w, -1, -1, 0, -1);
    }
}
