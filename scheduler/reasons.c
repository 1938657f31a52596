/*
 * reasons.c: why a workload is still pending at the end of a cycle, and
 * stale-gang eviction.
 *
 * The reason is diagnosed against the cycle's final state, in the first
 * of the workload's pools that could hold it when empty (else the first
 * with a ready node of its node type):
 *   GangNotSatisfiable     the pool could not hold the gang even empty;
 *                          (detail NEVER_FITS, for a single pod with
 *                          InsufficientResources too: no node it may use
 *                          could hold one pod even empty, so it can never
 *                          run as asked);
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
 * A pending workload is diagnosed about the pods it lacks to reach its
 * minimum; a running one with pods left to place (sched_result.waiting:
 * an autoscaled inference's replicas above its minimum) about those pods,
 * in its own pool, with the same reasons and figures.
 * The entry's request is the workload's own, in the resource its figures
 * are about (a GPU workload short of CPU: its cores).
 * What a diagnosis reads of a pool as a whole (the most a ready node has
 * free, what all have free, who holds it, which project is furthest above
 * its share) is found once per state of the pool (struct pool_figures).
 * Besides the workload itself, a diagnosis in a pool reads only:
 *   1. the pool's ready nodes together (sched__pool_node_figures()) and
 *      their totals;
 *   2. which top queues hold some of the pool, and the two leaf queues
 *      furthest above their share there (sched__pool_over());
 *   3. the allocation (all, and non-preemptible for a non-preemptible
 *      workload: capacity.c's check 2), fair share and quotas there of
 *      the workload's queue and its ancestors, no other queue's;
 *   4. in a pool with a minimum runtime, its running workloads and the
 *      clock.
 * So a diagnosis whose 1, 2 and 3 are as they were (no minimum runtime)
 * says what it said (sched__diagnosis_as_settled()).
 *
 * Stale gangs (kai-scheduling.md 4.5): a workload with some pods placed
 * but fewer than its minimum is stale from the first cycle that sees it
 * so; after the grace period all its pods are evicted.
 */
#include "sched_int.h"

#include <string.h>

static int reason_res(const struct ss_wl *x)
{
    if (x->req[SCHED_GPU] > 0)
        return SCHED_GPU;
    return x->req[SCHED_CPU] > 0 ? SCHED_CPU : SCHED_MEM;
}

/* What the diagnosis reads of a pool, found once per state of the pool
 * (ss->pool_version): thousands of kinds are diagnosed against one final
 * state, each of which would otherwise walk the pool's nodes and queues. */
struct pool_figures {
    uint64_t version;
    int64_t most_free[SCHED_NRES];   /* the most any ready node has free */
    int64_t most_total[SCHED_NRES];  /* ... and has in all */
    int64_t free[SCHED_NRES];        /* free on the ready nodes, together (at most SS_BIG) */
    int tops_holding;                /* top queues holding some of the pool */
    int over[2];                     /* the two leaf queues furthest above their
                                        allocatable GPU share, first index on ties
                                        (-1: none above) */
};

/* Leaf queue `o`'s GPU above its allocatable share in pool, or 0; its
 * allocation the one in held[] when not NULL (the settled cycle's,
 * struct ss_known), else the session's. */
static int64_t gpu_over(const struct sched_session *ss, int o, int pool, const int64_t *held)
{
    const struct ss_qp *a = &ss->qp[(size_t)o * (size_t)ss->n_pools + (size_t)pool];
    int64_t alloc = held ? held[SS_HELD_AT(ss, o, pool) + SCHED_GPU] : a->alloc[SCHED_GPU];

    return alloc - sched__allocatable(a, SCHED_GPU);
}

/* The leaf queue other than `skip` furthest above its share (who_holds_the_rest()'s walk). */
static int furthest_over(const struct sched_session *ss, int pool, int skip, const int64_t *held)
{
    int64_t worst = 0;
    int o, at = -1;

    for (o = 0; o < ss->n_queues; o++) {
        int64_t over = gpu_over(ss, o, pool, held);
        if (o == skip || !ss->queues[o].is_leaf || over <= worst)
            continue;
        worst = over;
        at = o;
    }
    return at;
}

void sched__pool_over(const struct sched_session *ss, int pool, const int64_t *held, int over[2])
{
    over[0] = furthest_over(ss, pool, -1, held);
    over[1] = over[0] >= 0 ? furthest_over(ss, pool, over[0], held) : -1;
}

void sched__pool_node_figures_walk(const struct sched_session *ss, int pool, int64_t *figs)
{
    const struct ss_pool *p = &ss->pools[pool];
    int64_t *most_free = figs, *most_total = figs + SCHED_NRES, *all_free = figs + 2 * SCHED_NRES;
    int i, r;

    for (r = 0; r < SCHED_NRES; r++) {
        most_free[r] = INT64_MIN;
        most_total[r] = p->most_total[r];
        all_free[r] = 0;
    }
    for (i = 0; i < p->n_nodes; i++) {   /* the pool's copy: 25 bytes a node */
        const int64_t *free = &p->node_free[(size_t)i * SCHED_NRES];
        if (!p->node_ready[i])
            continue;
        for (r = 0; r < SCHED_NRES; r++) {
            most_free[r] = ss_max(most_free[r], free[r]);
            all_free[r] = ss_min(all_free[r] + free[r], SS_BIG);  /* SS_BIG: unbounded */
        }
    }
}

/* A diagnosis, a settled check and the memo each ask at the end of a
 * cycle, mostly of a pool in one state: 2,500 nodes walked once. */
void sched__pool_node_figures(const struct sched_session *ss, int pool, int64_t *figs)
{
    struct ss_pool *p = &ss->pools[pool];   /* the cache is not the session's state */

    if (p->figs_at != ss->pool_version[pool] + 1) {
        sched__pool_node_figures_walk(ss, pool, p->figs);
        p->figs_at = ss->pool_version[pool] + 1;
    }
    memcpy(figs, p->figs, sizeof(p->figs));
}

static const struct pool_figures *figures_of(struct sched_session *ss, int pool)
{
    struct pool_figures *f = ss->diag_cache;
    int64_t figs[SS_POOL_FIGS];
    int i, r;

    if (!f) {
        f = sched__calloc(ss->arena, (size_t)ss->n_pools + 1, sizeof(*f));
        if (!f)
            return NULL;
        for (i = 0; i < ss->n_pools; i++)
            f[i].version = UINT64_MAX;
        ss->diag_cache = f;
    }
    f += pool;
    if (f->version == ss->pool_version[pool])
        return f;
    f->version = ss->pool_version[pool];
    sched__pool_node_figures(ss, pool, figs);
    for (r = 0; r < SCHED_NRES; r++) {
        f->most_free[r] = figs[r];
        f->most_total[r] = figs[SCHED_NRES + r];
        f->free[r] = figs[2 * SCHED_NRES + r];
    }
    f->tops_holding = 0;
    for (i = 0; i < ss->n_queues; i++)
        f->tops_holding += ss->queues[i].parent < 0 && sched__queue_holds_pool(ss, i, pool);
    sched__pool_over(ss, pool, NULL, f->over);
    return f;
}

/* The resource that keeps a pod of w off every ready node of the pool:
 * judged on the nodes' totals (ever = 1) or on what is free now. GPU
 * first, then CPU, then memory; the workload's main resource if none
 * stands out (the pods fit one by one but not all together). */
static int binding_res(const struct ss_wl *x, const struct pool_figures *f, int ever)
{
    const int64_t *most = ever ? f->most_total : f->most_free;
    int r;

    for (r = 0; r < SCHED_NRES; r++)
        if (x->req[r] > 0 && most[r] < x->req[r])
            return r;
    return reason_res(x);
}

static int others_hold(struct sched_session *ss, int q, int pool, const struct pool_figures *f)
{
    int root = q, r;

    while (ss->queues[root].parent >= 0)
        root = ss->queues[root].parent;
    if (f->tops_holding > sched__queue_holds_pool(ss, root, pool))
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
static void who_holds_the_rest(int q, const struct pool_figures *f, struct sched_pending *p)
{
    int o = f->over[0] != q ? f->over[0] : f->over[1];

    p->detail = o >= 0 ? SCHED_D_NOT_RECLAIMABLE : SCHED_D_WITHIN_SHARE;
    if (o >= 0)
        p->other_queue = o;
}

/* SCHED_D_NEVER_FITS: no ready node of the pool that w may use (its node
 * types, its required affinity) holds one of its pods even empty. The
 * figures are one pod's request and the most such a node has of the first
 * resource that keeps it off all of them (GPU, CPU, memory); bound -1 when
 * none does alone (a GPU-memory request on nodes of unknown device memory,
 * a portion of more devices than a node has). Reads the nodes' totals and
 * readiness alone, as sched__pool_can_ever_fit() does. */
static void never_fits(const struct sched_session *ss, int w, int pool, struct sched_pending *p)
{
    const struct ss_pool *sp = &ss->pools[pool];
    const struct ss_wl *x = &ss->wl[w];
    int64_t most[SCHED_NRES] = {0, 0, 0};
    int i, r;

    for (i = 0; i < sp->n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[sp->nodes[i]];
        if (!n->ready || sched__node_rank(ss, w, sp->nodes[i]) == 0)
            continue;
        most[SCHED_GPU] = ss_max(most[SCHED_GPU], (int64_t)n->n_gpus * SCHED_MILLI);
        most[SCHED_CPU] = ss_max(most[SCHED_CPU], n->cpu_total);
        most[SCHED_MEM] = ss_max(most[SCHED_MEM], n->mem_total);
    }
    p->detail = SCHED_D_NEVER_FITS;
    for (r = 0; r < SCHED_NRES; r++)
        if (x->req[r] > most[r]) {
            p->res = r;
            p->would_use = x->req[r];
            p->bound = most[r];
            return;
        }
    p->res = reason_res(x);
    p->would_use = x->req[p->res];
    p->bound = -1;
}

static void diagnose_pool(struct sched_session *ss, int w, int pool, int pods,
                          struct sched_pending *p)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    const struct pool_figures *f = figures_of(ss, pool);
    int r;
    struct ss_verdict v;

    if (!f) {
        ss->oom = 1;
        return;
    }
    if (sched__topo_diagnose(ss, w, pool, pods, p, 0))
        return;
    if (!sched__pool_can_ever_fit(ss, w, pool, pods)) {
        r = binding_res(x, f, 1);
        set(p, wl->n_pods > 1 ? SCHED_R_GANG_NOT_SATISFIABLE : SCHED_R_INSUFFICIENT_RESOURCES,
            wl->queue, pool, r, x->req[r] * pods, ss->pools[pool].capacity[r]);
        if (!sched__pool_can_ever_fit(ss, w, pool, 1))
            never_fits(ss, w, pool, p);
        return;
    }
    if (!sched__capacity_check(ss, w, pool, pods, &v)) {
        set(p, v.reason, v.queue, pool, v.res, v.would_use, v.bound);
        return;
    }
    if (!sched__reclaimer_within_share(ss, w, pool, pods, &v) &&
        others_hold(ss, wl->queue, pool, f)) {
        set(p, v.reason, v.queue, pool, v.res, v.would_use, v.bound);
        who_holds_the_rest(wl->queue, f, p);
        return;
    }
    r = binding_res(x, f, 0);
    set(p, SCHED_R_INSUFFICIENT_RESOURCES, wl->queue, pool, r, x->req[r] * pods,
        f->free[r]);
    if (sched__protected_victims(ss, w, pool, &p->other_queue, &p->wait_ms))
        p->detail = SCHED_D_RUNTIME_PROTECTED;
    sched__topo_diagnose(ss, w, pool, pods, p, 1);
}

static void diagnose(struct sched_session *ss, int w, int pods, struct sched_pending *p);
static void diagnose_request(struct sched_session *ss, int w, int pods, struct sched_pending *p);

/* A pending workload: about the pods it still needs to reach its minimum. */
void sched__diagnose(struct sched_session *ss, int w, struct sched_pending *p)
{
    int pods = ss_w(ss, w)->min_pods - ss->wl[w].n_placed;

    diagnose(ss, w, pods, p);
    diagnose_request(ss, w, pods, p);
}

static void diagnose(struct sched_session *ss, int w, int pods, struct sched_pending *p)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    int i;

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

/* The request in the resource the entry's figures are about: a GPU
 * workload short of CPU says how many cores it asks, not its GPUs. */
static void diagnose_request(struct sched_session *ss, int w, int pods, struct sched_pending *p)
{
    p->request = ss->wl[w].req[p->res] * pods;
}

/* A running workload with pods left to place: at least its minimum
 * placed, fewer than all. */
static int waits(const struct sched_session *ss, int w)
{
    const struct ss_wl *x = &ss->wl[w];

    return (x->flags & WL_ACTIVE) && x->n_placed >= ss_w(ss, w)->min_pods &&
           x->n_placed < ss_w(ss, w)->n_pods;
}

/* The entries of ws[0..n) (ascending, a workload maybe more than once), in
 * out->waiting: each diagnosed in the session's state, as pending ones are,
 * about the pods still to place. */
static int diagnose_waiting(struct sched_session *ss, struct sched_arena *arena,
                            const int *ws, int n, struct sched_result *out)
{
    int i, u = 0;

    out->waiting = NULL;
    out->n_waiting = 0;
    if (n == 0)
        return SCHED_OK;
    out->waiting = sched__calloc(arena, (size_t)n, sizeof(struct sched_pending));
    if (!out->waiting)
        return SCHED_ENOMEM;
    for (i = 0; i < n; i++) {
        int w = ws[i], pods = ss_w(ss, w)->n_pods - ss->wl[w].n_placed;
        if (u > 0 && out->waiting[u - 1].workload == w)
            continue;   /* a workload many decisions placed */
        diagnose(ss, w, pods, &out->waiting[u]);
        diagnose_request(ss, w, pods, &out->waiting[u]);
        u++;
    }
    out->n_waiting = u;
    return ss->oom ? SCHED_ENOMEM : SCHED_OK;
}

/* Only a workload that held pods when the cycle began (a pool's running
 * list) or that a decision of the cycle placed can hold some at its end.
 * The entries are diagnosed in the final state, as pending ones are, about
 * the pods still to place. With ss->waiting_known, the workloads that
 * waited before the cycle are known: a workload's pods move only by a
 * decision, so those and the decisions' workloads (any kind: a shrink can
 * leave one waiting) are all that can wait at its end. */
int sched__record_waiting(struct sched_session *ss, struct sched_arena *arena,
                          struct sched_result *out)
{
    int p, i, n = 0, total = ss->n_decisions, *ws;

    out->waiting = NULL;
    out->n_waiting = 0;
    if (ss->waiting_known)
        total += ss->n_waiting_known;
    for (p = 0; !ss->waiting_known && p < ss->n_pools; p++)
        total += ss->pools[p].n_running;
    ws = sched__array_raw(arena, (size_t)total + 1, sizeof(int));
    if (!ws)
        return SCHED_ENOMEM;
    for (i = 0; ss->waiting_known && i < ss->n_waiting_known; i++)
        if (waits(ss, ss->waiting_known[i]))
            ws[n++] = ss->waiting_known[i];
    for (p = 0; !ss->waiting_known && p < ss->n_pools; p++)
        for (i = 0; i < ss->pools[p].n_running; i++)
            if (waits(ss, ss->pools[p].running[i]))
                ws[n++] = ss->pools[p].running[i];
    for (i = 0; i < ss->n_decisions; i++)
        if ((ss->decisions[i].kind == SCHED_BIND || ss->waiting_known) &&
            waits(ss, ss->decisions[i].workload))
            ws[n++] = ss->decisions[i].workload;
    if (n > 1 && sched__sort(arena, ws, n, sched__ascending, NULL) != SCHED_OK)
        return SCHED_ENOMEM;
    return diagnose_waiting(ss, arena, ws, n, out);
}

int sched__record_waiting_of(struct sched_session *ss, struct sched_arena *arena,
                             const int *ws, int n, struct sched_result *out)
{
    return diagnose_waiting(ss, arena, ws, n, out);
}

/* The workloads with fewer pods placed than their minimum, but some, in
 * workload order, at *n. Only a workload that ran when the cycle began
 * (a pool's running list) can be one: a cycle places a gang whole, and
 * takes a victim whole or only pods above its minimum. NULL when out of
 * memory. */
static int *stale_candidates(struct sched_session *ss, int *n)
{
    int p, i, total = 0, *out;

    for (p = 0; p < ss->n_pools; p++)
        total += ss->pools[p].n_running;
    out = sched__array_raw(ss->arena, (size_t)total + 1, sizeof(int));
    *n = 0;
    if (!out)
        return NULL;
    for (p = 0; p < ss->n_pools; p++)
        for (i = 0; i < ss->pools[p].n_running; i++) {
            int w = ss->pools[p].running[i];
            const struct ss_wl *x = &ss->wl[w];
            if ((x->flags & WL_ACTIVE) && x->n_placed > 0 && x->n_placed < ss_w(ss, w)->min_pods)
                out[(*n)++] = w;
        }
    return sched__sort(ss->arena, out, *n, sched__ascending, NULL) == SCHED_OK ? out : NULL;
}

/* Whether some running gang is below its minimum (a stale-gang candidate:
 * without one, every stale time of the result is SCHED_NO_TIME). */
int sched__any_stale_candidate(const struct sched_session *ss)
{
    int p, i;

    if (ss->n_partial == 0)
        return 0;   /* no workload anywhere is below its minimum */
    for (p = 0; p < ss->n_pools; p++)
        for (i = 0; i < ss->pools[p].n_running; i++) {
            int w = ss->pools[p].running[i];
            const struct ss_wl *x = &ss->wl[w];
            if ((x->flags & WL_ACTIVE) && x->n_placed > 0 && x->n_placed < ss_w(ss, w)->min_pods)
                return 1;
        }
    return 0;
}

void sched__stale_gangs(struct sched_session *ss, int64_t *stale_out)
{
    int64_t now = ss->in->now_ms, grace = ss->cfg->stale_grace_ms;
    int w, k, i, n, *stale = stale_candidates(ss, &n);

    for (w = 0; w < ss->n_workloads; w++)
        stale_out[w] = SCHED_NO_TIME;
    ss->n_stale_set = 0;
    if (!stale) {
        ss->oom = 1;
        return;
    }
    for (i = 0; i < n; i++) {
        const struct sched_workload *wl = ss_w(ss, stale[i]);
        int64_t since;

        w = stale[i];
        since = wl->stale_since_ms != SCHED_NO_TIME ? wl->stale_since_ms : now;
        if (grace < 0 || now - since < grace) {
            stale_out[w] = since;
            ss->n_stale_set++;
            continue;
        }
        for (k = 0; k < wl->n_pods; k++)
            if (ss->pods[w][k].node >= 0)
                sched__unplace(ss, w, k);
        ss->wl[w].flags |= WL_EVICTED;
        sched__decide(ss, SCHED_EVICT, SCHED_ACT_STALE_GANG, w, -1, -1, 0, -1);
    }
}
