/*
 * topology.c: topology-aware placement (docs/scheduler.md, "Topology").
 *
 * A pool's topology is a list of node label keys, the widest level first
 * (struct sched_pool.topology); a level's domains are the values of its
 * key among the pool's nodes. A workload asks a required level (every pod
 * inside one domain of it, or none placed) and a preferred one (the
 * narrowest domain it can, from that level up to the required one, else
 * the whole pool); a distributed workload that asks neither prefers the
 * pool's narrowest level.
 *
 * Step 1  sched__topo_build(): per pool and level, each node's domain
 *         (numbered by first appearance in the pool's name order), the
 *         nodes of each domain, and per domain how many of its nodes use
 *         a GPU and their free and total GPU (kept by node_add() through
 *         sched__topo_node_changed()).
 * Step 2  sched__topo_attempt(): an action's attempt of such a workload in
 *         a pool is made domain by domain: a mask of the domain's nodes
 *         (ss->topo_mask, read by sched__node_rank() for ss->topo_w alone)
 *         restricts every placement and victim search of the attempt; the
 *         first domain that works wins. Domains that cannot hold the pods
 *         (their GPUs in all; for allocate, their free GPUs) are not
 *         tried. Allocate tries the fullest domain first (bin-packing
 *         domains, as KAI does); consolidate, reclaim and preempt the one
 *         with the most free GPU (the fewest moves or victims). Reclaim
 *         and preempt try only the required level (a preference alone
 *         does not multiply victim searches), and there only the domains
 *         whose nodes that w may use (its node types, its affinity) could
 *         take its pods: on their GPU in all, and on their free GPU with
 *         all that the attempt's units could free on them
 *         (sched__freeable_gpu(), victim_domain_holds()); most domains of
 *         a full cluster fail that test at the cost of a walk of their
 *         nodes, so every one that passes can be searched (a workload
 *         whose GPU gives no bound, CPU alone or GPU memory, passes in
 *         every domain: at most TOPO_UNBOUND_TRIES are). One pod to
 *         place, none placed, is inside one domain wherever it goes: its
 *         victim search takes every domain of the level at once
 *         (try_every_domain()).
 *         A workload with pods placed keeps to the domains they are in.
 * Step 3  placement.c orders nodes that fit by sched__topo_breaks() after
 *         the node-type rank: a pod goes where it opens no empty domain
 *         (of more than one node) before one where it would.
 * Step 4  sched__topo_diagnose(): the pending reason of a workload whose
 *         required level no domain can hold names the level and the
 *         largest domain (free, or in all).
 *
 * Invariants:
 *   1. ss->topo is NULL unless some pool has a topology or some active
 *      workload requires a level (ss->topo_asked, noted as the session
 *      builds its workloads: no walk of its own): every other state takes
 *      none of these paths, and its decisions are those of a core without
 *      topologies.
 *   2. Outside an attempt, ss->topo_w is -1 and ss->topo_mask is all 0.
 *   3. A workload that asks a topology in a session with one has a node
 *      class (affinity.c): its class names its topology fields, so
 *      signatures and kinds that compare classes compare them too.
 */
#include "sched_int.h"

#include <string.h>

#define TOPO_PICKS 4          /* tries picked one at a time before the rest are sorted */
#define TOPO_UNBOUND_TRIES 4  /* a victim attempt's tries when its GPU gives no bound */
#define TOPO_LACKS (-2)

/* ---- Step 1: domains ---- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Numbers the domains of one level of pool p: lv->dom by pool position. */
static int level_domains(struct sched_session *ss, int p, const char *key, struct ss_topo_level *lv)
{
    const struct ss_pool *sp = &ss->pools[p];
    int n = sp->n_nodes, cap = 16, mask, i, d;
    int *slot;
    const char **value;

    while (cap < 2 * n + 2)
        cap *= 2;
    mask = cap - 1;
    slot = sched__calloc(ss->arena, (size_t)cap, sizeof(int));          /* domain + 1 */
    value = sched__calloc(ss->arena, (size_t)n + 1, sizeof(char *));    /* by domain */
    lv->dom = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int));
    lv->first = sched__calloc(ss->arena, (size_t)n + 2, sizeof(int));
    lv->nodes = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int));
    lv->busy = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int));
    lv->free = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int64_t));
    lv->cap = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int64_t));
    lv->usable_free = sched__calloc(ss->arena, (size_t)n + 1, sizeof(int64_t));
    if (!slot || !value || !lv->dom || !lv->first || !lv->nodes || !lv->busy || !lv->free ||
        !lv->cap || !lv->usable_free)
        return SCHED_ENOMEM;
    lv->n_dom = 0;
    for (i = 0; i < n; i++) {
        const char *v = sched__label_of(&ss->in->nodes[sp->nodes[i]], key);
        int at;
        if (!v) {
            lv->dom[i] = -1;
            continue;
        }
        at = (int)(str_hash(v) & (uint64_t)mask);
        while (slot[at] && strcmp(value[slot[at] - 1], v) != 0)
            at = (at + 1) & mask;
        if (!slot[at]) {
            value[lv->n_dom] = v;
            slot[at] = ++lv->n_dom;
        }
        lv->dom[i] = slot[at] - 1;
    }
    for (i = 0; i < n; i++)
        if (lv->dom[i] >= 0)
            lv->first[lv->dom[i] + 1]++;
    for (d = 0; d < lv->n_dom; d++)
        lv->first[d + 1] += lv->first[d];
    for (i = 0; i < n; i++)
        if (lv->dom[i] >= 0)   /* busy[] counts the domain's nodes filed so far */
            lv->nodes[lv->first[lv->dom[i]] + lv->busy[lv->dom[i]]++] = sp->nodes[i];
    for (d = 0; d < lv->n_dom; d++)
        lv->busy[d] = 0;
    lv->max_cap = 0;
    for (i = 0; i < n; i++) {
        const struct ss_node *nd = &ss->nodes[sp->nodes[i]];
        d = lv->dom[i];
        if (d < 0)
            continue;
        if (nd->gpu_free < (int64_t)nd->n_gpus * SCHED_MILLI)
            lv->busy[d]++;
        if (nd->ready) {
            lv->free[d] += nd->gpu_free;
            lv->cap[d] += (int64_t)nd->n_gpus * SCHED_MILLI;
            lv->max_cap = ss_max(lv->max_cap, lv->cap[d]);
        }
    }
    return SCHED_OK;
}

static int pools_have_topology(const struct sched_state *in)
{
    int i;

    for (i = 0; i < in->n_pools; i++)
        if (in->pools[i].n_topology > 0)
            return 1;
    return 0;
}

int sched__topo_state(const struct sched_state *in, int from)
{
    int i;

    if (pools_have_topology(in))
        return 1;
    for (i = from; i < in->n_workloads; i++) {
        const struct sched_workload *w = &in->workloads[i];
        if (w->topology_required && (w->phase == SCHED_PENDING || w->phase == SCHED_RUNNING))
            return 1;
    }
    return 0;
}

int sched__topo_build(struct sched_session *ss)
{
    int p, l, scratch = 1;

    ss->topo_w = -1;
    ss->topo = NULL;
    if (!ss->topo_asked && !pools_have_topology(ss->in))
        return SCHED_OK;
    ss->topo = sched__calloc(ss->arena, (size_t)ss->n_pools + 1, sizeof(struct ss_topo));
    ss->topo_mask = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, 1);
    if (!ss->topo || !ss->topo_mask)
        return SCHED_ENOMEM;
    for (p = 0; p < ss->n_pools; p++) {
        const struct sched_pool *cp = &ss->in->pools[p];
        struct ss_topo *t = &ss->topo[p];
        t->n_levels = cp->n_topology > SCHED_MAX_TOPOLOGY ? SCHED_MAX_TOPOLOGY : cp->n_topology;
        if (t->n_levels <= 0) {
            t->n_levels = 0;
            continue;
        }
        t->level = sched__calloc(ss->arena, (size_t)t->n_levels, sizeof(struct ss_topo_level));
        if (!t->level)
            return SCHED_ENOMEM;
        for (l = 0; l < t->n_levels; l++) {
            int rc;
            t->level[l].key = cp->topology[l] ? cp->topology[l] : "";
            rc = level_domains(ss, p, t->level[l].key, &t->level[l]);
            if (rc != SCHED_OK)
                return rc;
            if (t->level[l].n_dom + 1 > scratch)
                scratch = t->level[l].n_dom + 1;
        }
    }
    ss->topo_order = sched__calloc(ss->arena, (size_t)scratch, sizeof(int));
    ss->topo_tmp = sched__calloc(ss->arena, (size_t)scratch, sizeof(int));
    ss->topo_freeable = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(int64_t));
    if (!ss->topo_order || !ss->topo_tmp || !ss->topo_freeable)
        return SCHED_ENOMEM;
    return SCHED_OK;
}

void sched__topo_node_changed(struct sched_session *ss, int node, int busy, int64_t gpu)
{
    const struct ss_node *n = &ss->nodes[node];
    const struct ss_topo *t = &ss->topo[n->pool];
    int l;

    for (l = 0; l < t->n_levels; l++) {
        int d = t->level[l].dom[n->pool_pos];
        if (d < 0)
            continue;
        t->level[l].busy[d] += busy;
        if (n->ready)
            t->level[l].free[d] += gpu;
    }
}

int sched__topo_breaks(const struct sched_session *ss, int node)
{
    const struct ss_node *n = &ss->nodes[node];
    const struct ss_topo *t = &ss->topo[n->pool];
    int l, k = 0;

    for (l = 0; l < t->n_levels; l++) {
        const struct ss_topo_level *lv = &t->level[l];
        int d = lv->dom[n->pool_pos];
        k += d >= 0 && lv->busy[d] == 0 && lv->first[d + 1] - lv->first[d] > 1;
    }
    return k;
}

/* ---- What a workload asks in a pool ---- */

static int level_of(const struct ss_topo *t, const char *key)
{
    int l;

    for (l = 0; key && l < t->n_levels; l++)
        if (strcmp(t->level[l].key, key) == 0)
            return l;
    return -1;
}

/* w's levels in pool: required (-1 none, TOPO_LACKS: the pool lacks it)
 * and preferred (-1 none); 0 when it asks nothing there. */
static int levels_in(const struct sched_session *ss, int w, int pool, int *req, int *pref)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_topo *t;

    *req = *pref = -1;
    if (!ss->topo || !ss->wl[w].cls || !sched__topo_asks(ss, wl))
        return 0;
    t = &ss->topo[pool];
    if (wl->topology_required) {
        *req = level_of(t, wl->topology_required);
        if (*req < 0)
            *req = TOPO_LACKS;
    }
    if (wl->topology_preferred)
        *pref = level_of(t, wl->topology_preferred);
    else if (wl->type == SCHED_DISTRIBUTED)
        *pref = t->n_levels - 1;
    if (*pref >= 0 && *req >= 0 && *pref < *req)
        *pref = -1;   /* wider than required: the requirement says more */
    return *req != -1 || *pref >= 0;
}

int sched__topo_pinned(const struct sched_session *ss, int w, int pool)
{
    int req, pref;

    return levels_in(ss, w, pool, &req, &pref) && req != -1;
}

/* ---- Step 2: attempts domain by domain ---- */

/* The GPU `pods` pods of w take at least (a GPU-memory request's charge
 * depends on the device it gets: 0, no bound). */
static int64_t gpu_need(const struct sched_session *ss, int w, int pods)
{
    return ss_w(ss, w)->gpu_memory_mib > 0 ? 0 : ss->wl[w].req[SCHED_GPU] * pods;
}

/* The domain at level l that every placed pod of w is in, or -1. */
static int placed_domain(const struct sched_session *ss, int w, const struct ss_topo_level *lv)
{
    int k, d = -1;

    for (k = 0; k < ss_w(ss, w)->n_pods; k++) {
        int node = ss->pods[w][k].node, dk;
        if (node < 0)
            continue;
        dk = lv->dom[ss->nodes[node].pool_pos];
        if (dk < 0 || (d >= 0 && dk != d))
            return -1;
        d = dk;
    }
    return d;
}

/* Is every node of domain d of level lv inside one domain of level rq
 * (NULL: no requirement)? */
static int within_one(const struct sched_session *ss, const struct ss_topo_level *lv, int d,
                      const struct ss_topo_level *rq)
{
    int i, r = -2;

    for (i = lv->first[d]; rq && i < lv->first[d + 1]; i++) {
        int rd = rq->dom[ss->nodes[lv->nodes[i]].pool_pos];
        if (rd < 0 || (r != -2 && rd != r))
            return 0;
        r = rd;
    }
    return 1;
}

/* One try: the attempt with w restricted to domains [d, e) of level l of
 * pool (their nodes lie together in lv->nodes). */
static int try_domains(struct sched_session *ss, int w, int pool, int l, int d, int e,
                       sched__attempt_fn fn)
{
    const struct ss_topo_level *lv = &ss->topo[pool].level[l];
    int i, ok;

    for (i = lv->first[d]; i < lv->first[e]; i++)
        ss->topo_mask[lv->nodes[i]] = 1;
    ss->topo_w = w;
    ss->topo_try = 1 + (((int64_t)pool * SCHED_MAX_TOPOLOGY + l) << 24 | d);
    ss->topo_nodes = &lv->nodes[lv->first[d]];
    ss->topo_n = lv->first[e] - lv->first[d];
    ok = fn(ss, w, pool);
    ss->topo_w = -1;
    ss->topo_try = 0;
    ss->topo_nodes = NULL;
    ss->topo_n = 0;
    for (i = lv->first[d]; i < lv->first[e]; i++)
        ss->topo_mask[lv->nodes[i]] = 0;
    return ok;
}

static int try_domain(struct sched_session *ss, int w, int pool, int l, int d, sched__attempt_fn fn)
{
    return try_domains(ss, w, pool, l, d, d + 1, fn);
}

/* A victim attempt of one pod, none placed: wherever the pod goes it is
 * inside one domain of level l, so one search over every node that has a
 * domain there finds the cheapest set of them all, as for a workload
 * without a topology, and in one search where domain by domain it would
 * take as many. When every node of the pool has one, the attempt is the
 * pool's own. */
static int try_every_domain(struct sched_session *ss, int w, int pool, int l, sched__attempt_fn fn)
{
    const struct ss_topo_level *lv = &ss->topo[pool].level[l];

    if (lv->first[lv->n_dom] == ss->pools[pool].n_nodes)
        return fn(ss, w, pool);
    return lv->n_dom > 0 && try_domains(ss, w, pool, l, 0, lv->n_dom, fn);
}

struct order_ctx {
    const int64_t *free;
    int most_free;
};

static int domain_before(const void *ctx, int a, int b)
{
    const struct order_ctx *c = ctx;

    if (c->free[a] != c->free[b])
        return c->most_free ? c->free[a] > c->free[b] : c->free[a] < c->free[b];
    return a < b;
}

/* Moves the k first of order[0..n) in domain_before()'s order (strict and
 * total: the order a sort gives) to its front, the others after them. */
static void select_first(int *order, int n, int k, const struct order_ctx *c)
{
    int i, j, best, t;

    for (i = 0; i < k && i < n; i++) {
        for (best = i, j = i + 1; j < n; j++)
            if (domain_before(c, order[j], order[best]))
                best = j;
        t = order[i];
        order[i] = order[best];
        order[best] = t;
    }
}

/* The most GPU free in one domain of level lv of pool, found once per
 * state of the pool (its pool_version names the nodes' free GPU). */
static int64_t level_most_free(const struct sched_session *ss, int pool,
                               struct ss_topo_level *lv)
{
    int d;

    if (lv->free_at != ss->pool_version[pool] + 1) {
        lv->max_free = 0;
        for (d = 0; d < lv->n_dom; d++)
            lv->max_free = ss_max(lv->max_free, lv->free[d]);
        lv->free_at = ss->pool_version[pool] + 1;
    }
    return lv->max_free;
}

/* Domain d of level lv for a victim attempt of w, on its ready nodes that
 * w may use (lv->usable_free[d]: their free GPU): could its pods fit
 * there, on those nodes' GPU in all, and on their free GPU with all that
 * the attempt's units could free on them (ss->topo_freeable, read only
 * when need bounds anything)? */
static int victim_domain_holds(struct sched_session *ss, int w, struct ss_topo_level *lv, int d,
                               int64_t need)
{
    int64_t cap = 0, free = 0, freeable = 0;
    int i;

    for (i = lv->first[d]; i < lv->first[d + 1]; i++) {
        int node = lv->nodes[i];
        const struct ss_node *n = &ss->nodes[node];
        if (n->ready && sched__node_rank(ss, w, node) > 0) {
            cap += (int64_t)n->n_gpus * SCHED_MILLI;
            free += n->gpu_free;
            freeable += ss->topo_freeable[node];
        }
    }
    lv->usable_free[d] = free;
    return cap >= need && (need == 0 || free + freeable >= need);
}

/* The most GPU a victim attempt of w in pool could free, per node, into
 * ss->topo_freeable (the pool's nodes cleared first). */
static int victim_freeable(struct sched_session *ss, int w, int pool, int action)
{
    const struct ss_pool *p = &ss->pools[pool];
    int i;

    for (i = 0; i < p->n_nodes; i++)
        ss->topo_freeable[p->nodes[i]] = 0;
    return sched__freeable_gpu(ss, w, pool, action, ss->topo_freeable);
}

/* The tries at level l: the placed pods' domain, or every domain that may
 * hold the pods, in the action's order. A victim attempt's tries are few:
 * only domains whose nodes that w may use could take its pods, on their
 * GPU in all and on their free GPU with what the attempt's units could
 * free there (victim_domain_holds()), the most free of those nodes first. */
static int try_level(struct sched_session *ss, int w, int pool, int action, int l, int req,
                     sched__attempt_fn fn)
{
    const struct ss_topo *t = &ss->topo[pool];
    struct ss_topo_level *lv = &t->level[l];
    const struct ss_topo_level *rq = req >= 0 && req != l ? &t->level[req] : NULL;
    int64_t need = gpu_need(ss, w, sched__pods_to_place(ss, w));
    int victims = action == SCHED_ACT_RECLAIM || action == SCHED_ACT_PREEMPT;
    struct order_ctx c = {lv->free, action != SCHED_ACT_ALLOCATE};
    int d, n = 0, i;

    if (ss->wl[w].n_placed > 0) {
        d = placed_domain(ss, w, lv);
        return d >= 0 && try_domain(ss, w, pool, l, d, fn);
    }
    if (lv->max_cap < need ||
        (action == SCHED_ACT_ALLOCATE && level_most_free(ss, pool, lv) < need))
        return 0;   /* no domain of the level holds it even empty (allocate: as it is) */
    if (victims && sched__pods_to_place(ss, w) == 1)
        return try_every_domain(ss, w, pool, l, fn);
    if (victims && need > 0 && victim_freeable(ss, w, pool, action) != SCHED_OK) {
        ss->oom = 1;
        return 0;
    }
    if (victims)
        c.free = lv->usable_free;
    for (d = 0; d < lv->n_dom; d++)
        if (lv->cap[d] >= need && (action != SCHED_ACT_ALLOCATE || lv->free[d] >= need) &&
            within_one(ss, lv, d, rq) && (!victims || victim_domain_holds(ss, w, lv, d, need)))
            ss->topo_order[n++] = d;
    if (victims && need == 0 && n > TOPO_UNBOUND_TRIES) {
        /* CPU alone, or GPU memory: every domain passes the test */
        select_first(ss->topo_order, n, TOPO_UNBOUND_TRIES, &c);
        n = TOPO_UNBOUND_TRIES;
    }
    for (i = 0; i < n; i++) {
        /* the first tries most often place it: picked one by one, the rest
         * sorted only if it comes to them */
        if (i < TOPO_PICKS)
            select_first(ss->topo_order + i, n - i, 1, &c);
        else if (i == TOPO_PICKS)
            sched__sort_with(ss->topo_order + i, ss->topo_tmp, n - i, domain_before, &c);
        if (try_domain(ss, w, pool, l, ss->topo_order[i], fn))
            return 1;
    }
    return 0;
}

int sched__topo_attempt(struct sched_session *ss, int w, int pool, int action,
                        sched__attempt_fn ready, sched__attempt_fn fn)
{
    int req, pref, l, top;
    int victims = action == SCHED_ACT_RECLAIM || action == SCHED_ACT_PREEMPT;

    if (ready && !ready(ss, w, pool))
        return 0;
    if (!levels_in(ss, w, pool, &req, &pref))
        return fn(ss, w, pool);
    if (req == TOPO_LACKS)
        return 0;
    top = victims || pref < 0 ? req : pref;
    for (l = top; l >= 0 && l >= req; l--)
        if (try_level(ss, w, pool, action, l, req, fn))
            return 1;
    return req < 0 ? fn(ss, w, pool) : 0;
}

/* ---- Step 4: why a required placement waits ---- */

int sched__topo_diagnose(struct sched_session *ss, int w, int pool, int pods,
                         struct sched_pending *p, int stage)
{
    const struct sched_workload *wl = ss_w(ss, w);
    struct ss_topo_level *lv;
    int req, pref, placed;
    int64_t need = gpu_need(ss, w, pods), free = 0, cap = 0;

    if (!levels_in(ss, w, pool, &req, &pref) || req == -1)
        return 0;
    if (req == TOPO_LACKS) {
        if (stage != 0)
            return 0;
        p->reason = SCHED_R_NO_MATCHING_NODE_POOL;
        p->detail = SCHED_D_TOPOLOGY;
        p->queue = wl->queue;
        p->pool = pool;
        p->res = SCHED_GPU;
        p->would_use = need;
        p->bound = 0;
        return 1;
    }
    lv = &ss->topo[pool].level[req];
    /* the room of the placed pods' domain (none: they are in several), or
     * of the largest domain */
    placed = ss->wl[w].n_placed > 0 ? placed_domain(ss, w, lv) : -2;
    if (placed >= 0) {
        free = lv->free[placed];
        cap = lv->cap[placed];
    } else if (placed == -2) {
        free = stage == 0 ? 0 : level_most_free(ss, pool, lv);
        cap = lv->max_cap;
    }
    if (stage == 0 ? cap >= need || wl->n_pods == 1 : free >= need)
        return 0;   /* one pod that no domain holds: no node does (the usual never-fits) */
    if (stage != 0 && (p->reason != SCHED_R_INSUFFICIENT_RESOURCES || p->detail != SCHED_D_NONE))
        return 0;
    p->reason = stage == 0 ? SCHED_R_GANG_NOT_SATISFIABLE : SCHED_R_INSUFFICIENT_RESOURCES;
    p->detail = SCHED_D_TOPOLOGY;
    p->queue = wl->queue;
    p->pool = pool;
    p->res = SCHED_GPU;
    p->would_use = need;
    p->bound = stage == 0 ? cap : free;
    return 1;
}
