/*
 * session.c: one cycle's working state, built from the caller's snapshot,
 * and the only code that changes it.
 *
 * Step 1  sched__session_build() validates the snapshot, copies every
 *         pod's placement, and accounts placed pods on their node devices
 *         and on their queue and its ancestors in the node's pool.
 * Step 2  actions call sched__place() / sched__unplace(); each logs the
 *         pod's previous placement in the undo log.
 * Step 3  an attempt that fails calls sched__rollback(mark): the log is
 *         replayed backwards and the decision list cut back, so the state
 *         is exactly what it was at sched__mark().
 * Step 4  sched__session_extend(): a session kept after a cycle that
 *         decided nothing (memo.c) takes the workloads appended to the
 *         snapshot since, none of them placed: each is built and its
 *         demand added as Step 1 does, its node-constraint class found or
 *         added (classes are numbered in workload order either way), so the
 *         session is the one Step 1 builds from the new snapshot.
 * Step 5  sched__session_leave(): a workload of a kept session left
 *         (suspended, completed, failed): its demand is taken back, the
 *         pods it held come off their nodes, queues and its pool's
 *         running list (unlogged), and it becomes what Step 1 builds for
 *         it. Classes keep their numbers (a class whose first workload
 *         left keeps it as the example of its constraints, which are
 *         still in the snapshot): numbers name classes, no result depends
 *         on them.
 * Step 6  sched__session_rejoin(): the session of a cycle that placed
 *         pending workloads (and decided nothing else) is kept; once the
 *         driver applied those placements, each placed workload is built
 *         again from the snapshot (its pods unlogged, its demand a running
 *         workload's, its place in its pool's running list), and
 *         sched__session_settled() empties the log and the decisions:
 *         the session is then the one Step 1 builds from that snapshot.
 *
 * Step 7  sched__session_requeue() and sched__session_node_down(): nodes
 *         of a kept session went down (not ready in the snapshot, every
 *         pod on them taken off there): each workload that held a pod on
 *         them is built again from the snapshot (its pods elsewhere kept,
 *         its phase what the driver made it), then each node is what Step
 *         1 builds for a node that is not ready, and its pool's figures
 *         over ready nodes are found again from its nodes.
 *
 * Invariants: see sched_int.h; sched__session_check() recomputes them,
 * and sched__session_differs() (tests) compares a session kept through
 * Steps 4 and 5 with one Step 1 builds from the same snapshot.
 */
#include "sched_int.h"

#include <string.h>

/* ---- Small helpers ---- */

static int64_t cap_or_big(int64_t v)
{
    return v == SCHED_UNLIMITED ? SS_BIG : v;
}

static int grow(struct sched_session *ss, void **arr, int *cap, size_t elem, int need)
{
    int ncap;
    void *p;

    if (need <= *cap)
        return SCHED_OK;
    ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    p = sched__calloc(ss->arena, (size_t)ncap, elem);
    if (!p) {
        ss->oom = 1;
        return SCHED_ENOMEM;
    }
    if (*cap)
        memcpy(p, *arr, (size_t)*cap * elem);
    *arr = p;
    *cap = ncap;
    return SCHED_OK;
}

int sched__holds(const int64_t *alloc)
{
    return alloc[SCHED_GPU] > 0 || alloc[SCHED_CPU] > 0 || alloc[SCHED_MEM] > 0;
}

int sched__queue_holds_pool(const struct sched_session *ss, int q, int p)
{
    return sched__holds(ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p].alloc);
}

/* ---- Node and queue accounting (no logging) ---- */

static void pool_empty_change(struct sched_session *ss, struct ss_node *n, int before)
{
    struct ss_pool *p = &ss->pools[n->pool];

    if (!n->ready || before == n->n_empty)
        return;
    if (n->n_empty > 0)
        p->has_empty[n->pool_pos / 64] |= (uint64_t)1 << (n->pool_pos % 64);
    else
        p->has_empty[n->pool_pos / 64] &= ~((uint64_t)1 << (n->pool_pos % 64));
    p->empty_hist[before]--;
    p->empty_hist[n->n_empty]++;
    p->total_empty += n->n_empty - before;
    if (n->n_empty > p->max_empty)
        p->max_empty = n->n_empty;
    while (p->max_empty > 0 && p->empty_hist[p->max_empty] == 0)
        p->max_empty--;
}

/* The pool's copy of node n's free resources (struct ss_pool's node_free). */
static void node_mirror(struct ss_pool *p, const struct ss_node *n)
{
    int64_t *free = &p->node_free[(size_t)n->pool_pos * SCHED_NRES];

    free[SCHED_GPU] = n->gpu_free;
    free[SCHED_CPU] = n->cpu_free;
    free[SCHED_MEM] = n->mem_free;
}

static void node_add(struct sched_session *ss, int w, int node, uint64_t devices, int sign)
{
    const struct sched_workload *wl = ss_w(ss, w);
    struct ss_node *n = &ss->nodes[node];
    int before = n->n_empty, d, whole = sched__whole(wl);
    int32_t per_dev = sched__dev_charge(ss, w, node);
    int was_busy = n->gpu_free < (int64_t)n->n_gpus * SCHED_MILLI, busy;
    int64_t was_free = n->gpu_free;

    for (d = 0; d < n->n_gpus; d++) {
        if (!(devices >> d & 1))
            continue;
        if (n->dev_used[d] == 0)
            n->n_empty--;
        n->dev_used[d] += sign * per_dev;
        if (n->dev_used[d] == 0)
            n->n_empty++;
        if (whole) {
            if (sign > 0)
                n->dev_whole |= (uint64_t)1 << d;
            else
                n->dev_whole &= ~((uint64_t)1 << d);
        }
        n->gpu_free -= sign * per_dev;
        if (n->ready)
            ss->pools[n->pool].gpu_free -= sign * per_dev;
    }
    n->cpu_free -= sign * wl->cpu_milli;
    n->mem_free -= sign * wl->mem_mib;
    node_mirror(&ss->pools[n->pool], n);
    n->used_prefix_ok = 0;
    n->serial = ++ss->n_serials;
    if (ss->frag.known)
        ss->frag.known[node] = 0;
    if (ss->pools[n->pool].index)
        sched__node_index_touch(ss, node);
    pool_empty_change(ss, n, before);
    busy = n->gpu_free < (int64_t)n->n_gpus * SCHED_MILLI;
    if (ss->topo && (busy != was_busy || n->gpu_free != was_free))
        sched__topo_node_changed(ss, node, busy - was_busy, n->gpu_free - was_free);
}

/* What one pod of w holds on node: its GPU charge there, CPU, memory. */
static void pod_amounts(const struct sched_session *ss, int w, int node, int64_t *amt)
{
    const struct sched_workload *wl = ss_w(ss, w);

    amt[SCHED_GPU] = wl->gpu_memory_mib > 0
                         ? (int64_t)sched_shared_devices(wl) * sched__dev_charge(ss, w, node)
                         : ss->wl[w].req[SCHED_GPU];
    amt[SCHED_CPU] = wl->cpu_milli;
    amt[SCHED_MEM] = wl->mem_mib;
}

static void queue_add(struct sched_session *ss, int w, int node, int sign)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int pool = ss->nodes[node].pool;
    int64_t req[SCHED_NRES];
    int q, r;

    pod_amounts(ss, w, node, req);
    for (q = wl->queue; q >= 0; q = ss->queues[q].parent) {
        struct ss_qp *a = ss_qp(ss, q, pool);
        for (r = 0; r < SCHED_NRES; r++) {
            a->alloc[r] += sign * req[r];
            if (!wl->preemptible)
                a->alloc_np[r] += sign * req[r];
            ss->queues[q].tot_alloc[r] += sign * req[r];
        }
    }
}

static int node_list_add(struct sched_session *ss, int node, int w, int pod)
{
    struct ss_node *n = &ss->nodes[node];
    int cap = n->cap_pods;

    if (grow(ss, (void **)&n->pods, &cap, 2 * sizeof(int), n->n_pods + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    n->cap_pods = cap;
    n->pods[2 * n->n_pods] = w;
    n->pods[2 * n->n_pods + 1] = pod;
    n->n_pods++;
    return SCHED_OK;
}

static void node_list_remove(struct sched_session *ss, int node, int w, int pod)
{
    struct ss_node *n = &ss->nodes[node];
    int i;

    for (i = 0; i < n->n_pods; i++) {
        if (n->pods[2 * i] == w && n->pods[2 * i + 1] == pod) {
            n->n_pods--;
            n->pods[2 * i] = n->pods[2 * n->n_pods];
            n->pods[2 * i + 1] = n->pods[2 * n->n_pods + 1];
            return;
        }
    }
}

/* Whether w is active with some pods placed but fewer than its minimum. */
static int partial(const struct sched_session *ss, int w)
{
    const struct ss_wl *x = &ss->wl[w];

    return (x->flags & WL_ACTIVE) && x->n_placed > 0 && x->n_placed < ss_w(ss, w)->min_pods;
}

static int do_place(struct sched_session *ss, int w, int pod, int node, uint64_t devices)
{
    struct ss_wl *x = &ss->wl[w];
    int was_partial = partial(ss, w);

    if (node_list_add(ss, node, w, pod) != SCHED_OK)
        return SCHED_ENOMEM;
    ss->version = ++ss->n_versions;
    ss->pool_version[ss->nodes[node].pool] = ss->version;
    node_add(ss, w, node, devices, +1);
    ss->pods[w][pod].node = node;
    ss->pods[w][pod].devices = devices;
    if (x->n_placed++ == 0)
        x->pool = ss->nodes[node].pool;
    queue_add(ss, w, node, +1);
    ss->n_partial += partial(ss, w) - was_partial;
    return SCHED_OK;
}

static void do_unplace(struct sched_session *ss, int w, int pod)
{
    struct ss_wl *x = &ss->wl[w];
    int node = ss->pods[w][pod].node;
    int was_partial = partial(ss, w);

    node_list_remove(ss, node, w, pod);
    ss->version = ++ss->n_versions;
    ss->pool_version[ss->nodes[node].pool] = ss->version;
    node_add(ss, w, node, ss->pods[w][pod].devices, -1);
    queue_add(ss, w, node, -1);
    ss->pods[w][pod].node = -1;
    ss->pods[w][pod].devices = 0;
    if (--x->n_placed == 0)
        x->pool = -1;
    ss->n_partial += partial(ss, w) - was_partial;
}

/* ---- Logged changes, checkpoints, decisions ---- */

/* Logs w's pod as it is, before a change in pool `pool`. */
static int log_undo(struct sched_session *ss, int w, int pod, int pool)
{
    struct ss_undo *u;

    if (grow(ss, (void **)&ss->undo, &ss->cap_undo, sizeof(*u), ss->n_undo + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    u = &ss->undo[ss->n_undo++];
    u->workload = w;
    u->pod = pod;
    u->node = ss->pods[w][pod].node;
    u->devices = ss->pods[w][pod].devices;
    u->pool = pool;
    u->pool_version = ss->pool_version[pool];
    u->serial = ++ss->n_serials;
    return SCHED_OK;
}

int sched__place(struct sched_session *ss, int w, int pod, int node, uint64_t devices)
{
    if (ss->pods[w][pod].node >= 0)
        return SCHED_EINVAL;
    if (log_undo(ss, w, pod, ss->nodes[node].pool) != SCHED_OK)
        return SCHED_ENOMEM;
    if (do_place(ss, w, pod, node, devices) != SCHED_OK) {
        ss->n_undo--;
        return SCHED_ENOMEM;
    }
    return SCHED_OK;
}

int sched__unplace(struct sched_session *ss, int w, int pod)
{
    if (ss->pods[w][pod].node < 0)
        return SCHED_EINVAL;
    if (log_undo(ss, w, pod, ss->nodes[ss->pods[w][pod].node].pool) != SCHED_OK)
        return SCHED_ENOMEM;
    do_unplace(ss, w, pod);
    return SCHED_OK;
}

struct ss_mark sched__mark(const struct sched_session *ss)
{
    struct ss_mark m = {ss->n_undo, ss->n_decisions, ss->version};
    return m;
}

void sched__rollback(struct sched_session *ss, struct ss_mark m)
{
    while (ss->n_undo > m.n_undo) {
        const struct ss_undo *u = &ss->undo[--ss->n_undo];
        if (ss->pods[u->workload][u->pod].node >= 0)
            do_unplace(ss, u->workload, u->pod);
        if (u->node >= 0)
            do_place(ss, u->workload, u->pod, u->node, u->devices);
        ss->pool_version[u->pool] = u->pool_version;
    }
    ss->n_decisions = m.n_decisions;
    ss->version = m.version;  /* the very state of the mark */
}

int sched__decide(struct sched_session *ss, int kind, int action, int w, int pod, int node,
                  uint64_t devices, int by)
{
    struct sched_decision *d;

    if (grow(ss, (void **)&ss->decisions, &ss->cap_decisions, sizeof(*d),
             ss->n_decisions + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    d = &ss->decisions[ss->n_decisions++];
    /* field by field on zeroed bytes: results compare byte for byte, and a
     * compound literal's padding is unspecified (clang -O0 leaves the
     * stack's bytes there) */
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->action = action;
    d->workload = w;
    d->pod = pod;
    d->node = node;
    d->devices = devices;
    d->by_workload = by;
    return SCHED_OK;
}

/* ---- Building the session ---- */

/* The requests of a workload, or of a shape of the mix. */
static int valid_requests(const struct sched_workload *w)
{
    return w->gpu_devices >= 0 && w->gpu_portion >= 0 && w->gpu_portion < SCHED_MILLI &&
           w->gpu_memory_mib >= 0 && !(w->gpu_portion > 0 && w->gpu_memory_mib > 0) &&
           w->gpu_devices <= SCHED_MAX_NODE_GPUS && w->cpu_milli >= 0 && w->mem_mib >= 0 &&
           w->n_node_types >= 0 && w->n_affinity >= 0 &&
           !(w->n_node_types > 0 && !w->node_types) && !(w->n_affinity > 0 && !w->affinity);
}

static int valid_mix(const struct sched_state *in)
{
    int i;

    if (in->n_mix < 0 || in->n_mix > SCHED_MIX_MAX || (in->n_mix > 0 && !in->mix))
        return 0;
    for (i = 0; i < in->n_mix; i++)
        if (in->mix[i].weight < 1 || in->mix[i].weight > SCHED_MIX_MAX_WEIGHT ||
            !valid_requests(&in->mix[i].shape))
            return 0;
    return 1;
}

static int valid_workload(const struct sched_state *in, int i)
{
    const struct sched_workload *w = &in->workloads[i];
    int k;

    if (w->queue < 0 || w->queue >= in->n_queues || w->n_pods < 1 || w->min_pods < 1 ||
        w->min_pods > w->n_pods || !valid_requests(w) || !w->pods || !w->name)
        return 0;
    for (k = 0; k < w->n_pools; k++)
        if (!w->pools || w->pools[k] < 0 || w->pools[k] >= in->n_pools)
            return 0;
    for (k = 0; k < w->n_pods; k++) {
        int node = w->pods[k].node;
        if (node >= in->n_nodes || (node >= 0 && in->nodes[node].n_gpus < 64 &&
                                    (w->pods[k].devices >> in->nodes[node].n_gpus)))
            return 0;
    }
    return 1;
}

static int validate(const struct sched_state *in)
{
    int i;

    if (in->n_pools < 1 || in->n_nodes < 0 || in->n_queues < 0 || in->n_workloads < 0 ||
        !valid_mix(in))
        return SCHED_EINVAL;
    for (i = 0; i < in->n_pools; i++)
        if (in->pools[i].gpu_placement > SCHED_FRAGMENTATION ||
            in->pools[i].cpu_placement > SCHED_FRAGMENTATION)
            return SCHED_EINVAL;
    for (i = 0; i < in->n_nodes; i++) {
        const struct sched_node *n = &in->nodes[i];
        if (n->pool < 0 || n->pool >= in->n_pools || n->n_gpus < 0 ||
            n->n_gpus > SCHED_MAX_NODE_GPUS || !n->name)
            return SCHED_EINVAL;
    }
    for (i = 0; i < in->n_queues; i++) {
        int p = in->queues[i].parent, steps = 0;
        while (p >= 0) {
            if (p >= in->n_queues || ++steps > in->n_queues)
                return SCHED_EINVAL;
            p = in->queues[p].parent;
        }
    }
    for (i = 0; i < in->n_workloads; i++)
        if (!valid_workload(in, i))
            return SCHED_EINVAL;
    return SCHED_OK;
}

/* The node before the other by name (ctx: the struct sched_state), for
 * sched__sort_with (stable, no qsort context). */
static int name_before(const void *ctx, int a, int b)
{
    const struct sched_state *in = ctx;

    return strcmp(in->nodes[a].name, in->nodes[b].name) < 0;
}

/* Whether every ready node of the pool is of one size (devices, device
 * memory, CPU, memory): what a node could hold when empty is then the same
 * on each, and the pool holds n_ready times that (struct ss_pool's
 * uniform, n_ready and a_ready). */
static void pool_uniform(const struct sched_session *ss, struct ss_pool *pool)
{
    const struct ss_node *a = NULL;
    int i;

    pool->uniform = 1;
    pool->n_ready = 0;
    pool->a_ready = -1;
    for (i = 0; i < pool->n_nodes; i++) {
        const struct ss_node *b = &ss->nodes[pool->nodes[i]];
        if (!b->ready)
            continue;
        pool->n_ready++;
        if (!a) {
            a = b;
            pool->a_ready = pool->nodes[i];
        } else if (b->n_gpus != a->n_gpus || b->gpu_mem != a->gpu_mem ||
                   b->cpu_total != a->cpu_total || b->mem_total != a->mem_total) {
            pool->uniform = 0;
        }
    }
}

/* Pool p's copy of its nodes' free resources and readiness (struct
 * ss_pool), once its nodes are listed. */
static int build_node_mirror(struct sched_session *ss, struct ss_pool *p)
{
    int i;

    p->node_free = sched__calloc(ss->arena, (size_t)p->n_nodes * SCHED_NRES + 1, sizeof(int64_t));
    p->node_ready = sched__calloc(ss->arena, (size_t)p->n_nodes + 1, 1);
    if (!p->node_free || !p->node_ready)
        return SCHED_ENOMEM;
    for (i = 0; i < p->n_nodes; i++) {
        node_mirror(p, &ss->nodes[p->nodes[i]]);
        p->node_ready[i] = (uint8_t)ss->nodes[p->nodes[i]].ready;
    }
    return SCHED_OK;
}

/* Ready node n's part of its pool's figures over ready nodes, as it is
 * (a node just built is empty). */
static void pool_count_ready(struct ss_pool *pool, const struct ss_node *n)
{
    if (n->n_empty > 0)
        pool->has_empty[n->pool_pos / 64] |= (uint64_t)1 << (n->pool_pos % 64);
    pool->empty_hist[n->n_empty]++;
    pool->total_empty += n->n_empty;
    pool->gpu_free += n->gpu_free;
    if (n->n_empty > pool->max_empty)
        pool->max_empty = n->n_empty;
    pool->capacity[SCHED_GPU] += (int64_t)n->n_gpus * SCHED_MILLI;
    pool->capacity[SCHED_CPU] = ss_min(SS_BIG, pool->capacity[SCHED_CPU] + n->cpu_total);
    pool->capacity[SCHED_MEM] = ss_min(SS_BIG, pool->capacity[SCHED_MEM] + n->mem_total);
    pool->most_total[SCHED_GPU] =
        ss_max(pool->most_total[SCHED_GPU], (int64_t)n->n_gpus * SCHED_MILLI);
    pool->most_total[SCHED_CPU] = ss_max(pool->most_total[SCHED_CPU], n->cpu_total);
    pool->most_total[SCHED_MEM] = ss_max(pool->most_total[SCHED_MEM], n->mem_total);
    if (n->n_gpus > pool->max_node_gpus)
        pool->max_node_gpus = n->n_gpus;
    if (n->n_gpus > 0 && n->gpu_mem > pool->max_gpu_mem)
        pool->max_gpu_mem = n->gpu_mem;
}

static int build_nodes(struct sched_session *ss)
{
    const struct sched_state *in = ss->in;
    int *order = sched__calloc(ss->arena, (size_t)in->n_nodes + 1, sizeof(int));
    int *tmp = sched__calloc(ss->arena, (size_t)in->n_nodes + 1, sizeof(int));
    int i, p, r;

    if (!order || !tmp)
        return SCHED_ENOMEM;
    for (i = 0; i < in->n_nodes; i++)
        order[i] = i;
    sched__sort_with(order, tmp, in->n_nodes, name_before, in);
    for (p = 0; p < ss->n_pools; p++) {
        ss->pools[p].empty_hist = sched__calloc(ss->arena, SCHED_MAX_NODE_GPUS + 1, sizeof(int));
        ss->pools[p].nodes = sched__calloc(ss->arena, (size_t)in->n_nodes + 1, sizeof(int));
        ss->pools[p].has_empty = sched__calloc(ss->arena, (size_t)in->n_nodes / 64 + 1,
                                               sizeof(uint64_t));
        if (!ss->pools[p].empty_hist || !ss->pools[p].nodes || !ss->pools[p].has_empty)
            return SCHED_ENOMEM;
        for (r = 0; r < SCHED_NRES; r++)
            ss->pools[p].most_total[r] = INT64_MIN;
    }
    for (i = 0; i < in->n_nodes; i++) {
        int ni = order[i];
        const struct sched_node *src = &in->nodes[ni];
        struct ss_node *n = &ss->nodes[ni];
        struct ss_pool *pool = &ss->pools[src->pool];

        n->pool = src->pool;
        n->ready = src->ready != 0;
        n->n_gpus = src->n_gpus;
        n->n_empty = src->n_gpus;
        n->name_rank = i;
        n->dev_used = sched__calloc(ss->arena, (size_t)src->n_gpus + 1, sizeof(int32_t));
        n->used_prefix = sched__calloc(ss->arena, (size_t)src->n_gpus + 1, sizeof(int64_t));
        if (!n->dev_used || !n->used_prefix)
            return SCHED_ENOMEM;
        n->gpu_free = (int64_t)src->n_gpus * SCHED_MILLI;
        n->cpu_total = n->cpu_free = cap_or_big(src->cpu_milli);
        n->mem_total = n->mem_free = cap_or_big(src->mem_mib);
        n->gpu_mem = src->gpu_memory_mib > 0 ? src->gpu_memory_mib : 0;
        n->pool_pos = pool->n_nodes;
        pool->nodes[pool->n_nodes++] = ni;
        if (n->ready)
            pool_count_ready(pool, n);
    }
    for (p = 0; p < ss->n_pools; p++) {
        pool_uniform(ss, &ss->pools[p]);
        if (build_node_mirror(ss, &ss->pools[p]) != SCHED_OK)
            return SCHED_ENOMEM;
    }
    return SCHED_OK;
}

/* Queue q's quota and rank in pool p, as the state gives them (a NULL
 * quota: deserved 0, no limit, weight 1). */
static void read_quota(const struct sched_session *ss, int q, int p, struct ss_qp *a)
{
    const struct sched_queue *sq = &ss->in->queues[q];
    int r;

    for (r = 0; r < SCHED_NRES; r++) {
        const struct sched_quota *qq = sq->quota ? &sq->quota[p * SCHED_NRES + r] : NULL;
        a->deserved[r] = qq ? qq->deserved : 0;
        a->limit[r] = qq && qq->limit != SCHED_UNLIMITED ? qq->limit : SS_INF;
        a->weight[r] = qq ? (qq->weight < 0 ? 0 : qq->weight) : SCHED_MILLI;
        if (a->deserved[r] < SCHED_UNLIMITED)
            a->deserved[r] = 0;
        if (a->limit[r] < 0)
            a->limit[r] = 0;
    }
    a->rank = sq->pool_rank ? sq->pool_rank[p] : sq->rank;
}

static int build_queues(struct sched_session *ss)
{
    const struct sched_state *in = ss->in;
    int q, p;

    for (q = 0; q < in->n_queues; q++) {
        int parent = in->queues[q].parent, depth = 0;
        ss->queues[q].parent = parent;
        for (; parent >= 0; parent = in->queues[parent].parent)
            depth++;
        ss->queues[q].depth = depth;
        if (in->queues[q].parent >= 0)
            ss->queues[in->queues[q].parent].n_children++;
    }
    for (q = 0; q < in->n_queues; q++) {
        struct ss_queue *sq = &ss->queues[q];
        sq->is_leaf = sq->n_children == 0;
        sq->children = sched__calloc(ss->arena, (size_t)sq->n_children + 1, sizeof(int));
        if (!sq->children)
            return SCHED_ENOMEM;
        sq->n_children = 0;
    }
    for (q = 0; q < in->n_queues; q++)
        if (in->queues[q].parent >= 0) {
            struct ss_queue *parent = &ss->queues[in->queues[q].parent];
            parent->children[parent->n_children++] = q;
        }
    for (q = 0; q < in->n_queues; q++)
        for (p = 0; p < ss->n_pools; p++)
            read_quota(ss, q, p, ss_qp(ss, q, p));
    return SCHED_OK;
}

/* memo.c Step 8: every queue's quotas and ranks read again, as
 * build_queues() reads them. Returns the pools where any of them moved
 * (bit p; pools >= 64: every one). */
uint64_t sched__session_requota(struct sched_session *ss)
{
    uint64_t moved = 0;
    int q, p;

    for (q = 0; q < ss->n_queues; q++)
        for (p = 0; p < ss->n_pools; p++) {
            struct ss_qp *a = ss_qp(ss, q, p), was = *a;
            read_quota(ss, q, p, a);
            if (memcmp(was.deserved, a->deserved, sizeof(a->deserved)) != 0 ||
                memcmp(was.limit, a->limit, sizeof(a->limit)) != 0 ||
                memcmp(was.weight, a->weight, sizeof(a->weight)) != 0 || was.rank != a->rank)
                moved |= p < 64 ? 1ull << p : ~0ull;
        }
    return moved;
}

/* memo.c Step 8: whether, in state `in`, a leaf without default pools
 * deserves GPUs in a pool where the session has it deserve none, or the
 * other way round: the pool list of its workloads that name none moves
 * (sched_workload_pools()), which only a build reads. */
int sched__quota_pools_move(const struct sched_session *ss, const struct sched_state *in)
{
    int q, p;

    for (q = 0; q < ss->n_queues; q++) {
        const struct sched_queue *sq = &in->queues[q];
        if (!ss->queues[q].is_leaf || (sq->default_pools && sq->n_default_pools > 0))
            continue;
        for (p = 0; p < ss->n_pools; p++)
            if (sched__pool_deserved(sq, p) !=
                (ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p].deserved[SCHED_GPU] > 0))
                return 1;
    }
    return 0;
}

/* Per pod, what a GPU-memory request will be charged at least: on the
 * ready device with the most memory in its pools (whole devices if none
 * holds it). Placement charges the device it gets. */
static int64_t memory_estimate(const struct sched_session *ss, const struct sched_workload *w,
                               const int *pools, int n_pools)
{
    int64_t best = 0;
    int i;

    for (i = 0; i < n_pools; i++)
        best = ss_max(best, ss->pools[pools[i]].max_gpu_mem);
    if (best < w->gpu_memory_mib)
        return (int64_t)sched_shared_devices(w) * SCHED_MILLI;
    return (int64_t)sched_shared_devices(w) * ((w->gpu_memory_mib * SCHED_MILLI + best - 1) / best);
}

/* Workload i's entry, its pools' list in `pools` (room for every pool: its
 * first n_pools entries are written, the rest never read) and its pods in
 * `pods` (room for its n_pods, every one written here), both written
 * before they are read, so they need not come zeroed (arena.c, Inv. 5). */
static int build_workload(struct sched_session *ss, int i, int *pools, int n_pools,
                          struct sched_pod *pods)
{
    const struct sched_state *in = ss->in;
    const struct sched_workload *w = &in->workloads[i];
    struct ss_wl *x = &ss->wl[i];
    int k, max_pools = ss->n_pools;

    if (!ss->queues[w->queue].is_leaf)
        return SCHED_EINVAL;
    *x = (struct ss_wl){.pool = -1};   /* every field: ss->wl comes unzeroed */
    x->req[SCHED_GPU] = sched_workload_gpu(w, 1);
    x->req[SCHED_CPU] = w->cpu_milli;
    x->req[SCHED_MEM] = w->mem_mib;
    ss->pods[i] = pods;
    x->n_pools = n_pools >= 0 ? n_pools : sched_workload_pools(in, w, pools, max_pools);
    x->pools = pools;
    if (w->gpu_memory_mib > 0)
        x->req[SCHED_GPU] = memory_estimate(ss, w, pools, x->n_pools);
    for (k = 0; k < w->n_pods; k++) {
        ss->pods[i][k].node = -1;
        ss->pods[i][k].devices = 0;
    }
    if (w->phase == SCHED_PENDING || w->phase == SCHED_RUNNING)
        x->flags |= WL_ACTIVE;
    if (!(x->flags & WL_ACTIVE))
        return SCHED_OK;
    if (w->topology_required)
        ss->topo_asked = 1;   /* topology.c, Invariant 1 */
    for (k = 0; k < w->n_pods; k++)
        if (w->pods[k].node >= 0 &&
            do_place(ss, i, k, w->pods[k].node, w->pods[k].devices) != SCHED_OK)
            return SCHED_ENOMEM;
    if (x->n_placed < w->n_pods)
        x->flags |= WL_CANDIDATE;
    return SCHED_OK;
}

/* One workload built in a kept session: its lists allocated alone. */
static int build_one_workload(struct sched_session *ss, int i)
{
    int *pools = sched__calloc(ss->arena, (size_t)ss->n_pools, sizeof(int));
    struct sched_pod *pods =
        sched__calloc(ss->arena, (size_t)ss->in->workloads[i].n_pods, sizeof(struct sched_pod));

    return pools && pods ? build_workload(ss, i, pools, -1, pods) : SCHED_ENOMEM;
}

/* Every workload, their pools' lists and their pods each carved from one
 * allocation, not zeroed: build_workload() writes all that is read. The
 * workloads that name no pools take their queue's list
 * (sched_workload_pools() reads the queue alone then): those of one queue
 * share the first one's, so the signature and diagnosis comparisons find
 * them equal by address. A rebuilt workload (sched__session_rejoin())
 * writes its list again in place: the same list, as a kept session's
 * queues and the workload's constraints are those it was built with. */
static int build_workloads(struct sched_session *ss)
{
    size_t n_pods = 0, n_pools = (size_t)ss->n_workloads * (size_t)ss->n_pools;
    struct sched_pod *pods;
    int *pools, *q_first, i, rc = SCHED_OK;   /* q_first: w + 1 of the queue's list, 0: none */

    for (i = 0; i < ss->n_workloads; i++)
        n_pods += (size_t)ss->in->workloads[i].n_pods;
    pools = sched__array_raw(ss->arena, n_pools, sizeof(int));
    pods = sched__array_raw(ss->arena, n_pods, sizeof(struct sched_pod));
    q_first = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    if (!pools || !pods || !q_first)
        return SCHED_ENOMEM;
    for (i = 0; i < ss->n_workloads && rc == SCHED_OK; i++) {
        const struct sched_workload *w = &ss->in->workloads[i];
        int own = w->pools && w->n_pools > 0, f = q_first[w->queue] - 1;
        if (!own && f >= 0) {
            rc = build_workload(ss, i, (int *)ss->wl[f].pools, ss->wl[f].n_pools, pods);
        } else {
            rc = build_workload(ss, i, pools, -1, pods);
            pools += ss->n_pools;
            if (!own && rc == SCHED_OK)
                q_first[w->queue] = i + 1;
        }
        pods += w->n_pods;
    }
    return rc;
}

/* The workloads running in each pool when the cycle starts: the only
 * possible victims (a workload placed during the cycle is never one). */
static int build_running(struct sched_session *ss)
{
    int w, p;

    for (w = 0; w < ss->n_queues; w++)
        ss->queues[w].min_running_priority = INT32_MAX;
    for (w = 0; w < ss->n_workloads; w++)
        if (ss->wl[w].n_placed > 0) {
            const struct sched_workload *wl = ss_w(ss, w);
            struct ss_queue *q = &ss->queues[wl->queue];
            ss->pools[ss->wl[w].pool].n_running++;
            if (wl->preemptible && wl->priority < q->min_running_priority)
                q->min_running_priority = wl->priority;
        }
    for (p = 0; p < ss->n_pools; p++) {
        ss->pools[p].cap_running = ss->pools[p].n_running + 1;
        ss->pools[p].running = sched__calloc(ss->arena, (size_t)ss->pools[p].cap_running,
                                             sizeof(int));
        if (!ss->pools[p].running)
            return SCHED_ENOMEM;
        ss->pools[p].n_running = 0;
        ss->pools[p].running_pods = 0;
    }
    for (w = 0; w < ss->n_workloads; w++)
        if (ss->wl[w].n_placed > 0) {
            struct ss_pool *pool = &ss->pools[ss->wl[w].pool];
            pool->running[pool->n_running++] = w;
            pool->running_pods += ss_w(ss, w)->n_pods;
        }
    return SCHED_OK;
}

/* Demand per (queue, pool): placed pods where they run, and the pods a
 * workload still wants in every pool it may use (sign -1: taken back). */
static void add_demand(struct sched_session *ss, int i, int sign)
{
    const struct sched_workload *w = ss_w(ss, i);
    const struct ss_wl *x = &ss->wl[i];
    int k, r;

    if (!(x->flags & WL_ACTIVE))
        return;
    for (k = 0; k < x->n_pools || (x->pool >= 0 && k == 0); k++) {
        int p = x->pool >= 0 ? x->pool : x->pools[k];
        struct ss_qp *a = ss_qp(ss, w->queue, p);
        for (r = 0; r < SCHED_NRES; r++)
            a->request[r] += sign * (int64_t)w->n_pods * x->req[r];
        if (x->pool >= 0)
            break;
    }
}

static void build_demand(struct sched_session *ss)
{
    int i;

    for (i = 0; i < ss->n_workloads; i++)
        add_demand(ss, i, 1);
}

int sched__session_build(struct sched_session *ss, const struct sched_state *in,
                         const struct sched_config *cfg, struct sched_arena *arena)
{
    int rc;

    memset(ss, 0, sizeof(*ss));
    rc = validate(in);
    if (rc != SCHED_OK)
        return rc;
    ss->in = in;
    ss->cfg = cfg;
    ss->arena = arena;
    ss->n_pools = in->n_pools;
    ss->n_queues = in->n_queues;
    ss->n_nodes = in->n_nodes;
    ss->n_workloads = in->n_workloads;
    ss->nodes = sched__calloc(arena, (size_t)in->n_nodes + 1, sizeof(struct ss_node));
    ss->pools = sched__calloc(arena, (size_t)in->n_pools, sizeof(struct ss_pool));
    ss->queues = sched__calloc(arena, (size_t)in->n_queues + 1, sizeof(struct ss_queue));
    ss->qp = sched__calloc(arena, (size_t)in->n_queues * (size_t)in->n_pools + 1,
                           sizeof(struct ss_qp));
    ss->pool_version = sched__calloc(arena, (size_t)in->n_pools + 1, sizeof(uint64_t));
    /* room for the submissions a kept session takes (Step 4) without a copy */
    ss->cap_workloads = in->n_workloads + in->n_workloads / 4 + 64;
    /* not zeroed (arena.c, Invariant 5): build_workload() writes workload
     * i's entries before anything reads them, for the snapshot's workloads
     * here and for those a kept session takes later */
    ss->wl = sched__array_raw(arena, (size_t)ss->cap_workloads, sizeof(struct ss_wl));
    ss->pods = sched__array_raw(arena, (size_t)ss->cap_workloads, sizeof(struct sched_pod *));
    if (!ss->nodes || !ss->pools || !ss->queues || !ss->qp || !ss->wl || !ss->pods ||
        !ss->pool_version)
        return SCHED_ENOMEM;
    rc = build_nodes(ss);
    if (rc == SCHED_OK)
        rc = build_queues(ss);
    if (rc == SCHED_OK)
        rc = build_workloads(ss);
    if (rc == SCHED_OK)
        rc = sched__topo_build(ss);
    if (rc == SCHED_OK)
        rc = sched__build_classes(ss);
    if (rc == SCHED_OK)
        rc = sched__frag_build(ss);
    if (rc == SCHED_OK)
        rc = build_running(ss);
    if (rc == SCHED_OK)
        build_demand(ss);
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    return rc;
}

/* ---- Step 4: a kept session takes new workloads ---- */

/* Caches keyed by the state (the version, the pools' versions, the undo
 * log's base: victims.c's units in key order) or sized by the workloads start over: the kept session reads another snapshot. The job
 * order (order.c's cache: the candidates wanting pods, per leaf in job
 * order, their keys and signatures) is kept when `keep_order` says the
 * candidates and what their keys read did not change (Steps 4 and 5). */
static void forget_state(struct sched_session *ss, int keep_order)
{
    int p;

    if (!keep_order)
        ss->order_cache = NULL;
    ss->version = ++ss->n_versions;
    for (p = 0; p < ss->n_pools; p++)
        ss->pool_version[p] = ++ss->n_versions;
    ss->log_base = ++ss->n_serials;
}

static int reserve_workloads(struct sched_session *ss, int need)
{
    struct ss_wl *wl;
    struct sched_pod **pods;
    int cap = ss->cap_workloads;

    if (need <= cap)
        return SCHED_OK;
    while (cap < need)
        cap *= 2;
    wl = sched__calloc(ss->arena, (size_t)cap, sizeof(*wl));
    pods = sched__calloc(ss->arena, (size_t)cap, sizeof(*pods));
    if (!wl || !pods)
        return SCHED_ENOMEM;
    memcpy(wl, ss->wl, sizeof(*wl) * (size_t)ss->n_workloads);
    memcpy(pods, ss->pods, sizeof(*pods) * (size_t)ss->n_workloads);
    ss->wl = wl;
    ss->pods = pods;
    ss->cap_workloads = cap;
    return SCHED_OK;
}

int sched__session_extend(struct sched_session *ss, const struct sched_state *in,
                          const struct sched_config *cfg)
{
    int w, first = ss->n_workloads, rc;

    for (w = first; w < in->n_workloads; w++)
        if (!valid_workload(in, w))
            return SCHED_EINVAL;
    rc = reserve_workloads(ss, in->n_workloads + 1);
    if (rc != SCHED_OK)
        return rc;
    ss->in = in;
    ss->cfg = cfg;
    ss->n_workloads = in->n_workloads;
    for (w = first; w < in->n_workloads && rc == SCHED_OK; w++) {
        rc = build_one_workload(ss, w);
        if (rc == SCHED_OK)
            rc = sched__class_extend(ss, w);
        if (rc == SCHED_OK)
            add_demand(ss, w, 1);
    }
    /* caches sized by the workloads, or read in another state, start over;
     * the job order takes the submissions (order.c) */
    forget_state(ss, rc == SCHED_OK && (first == in->n_workloads || sched__order_add(ss, first)));
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    return rc;
}

/* Step 5: w leaves its pool's list of running workloads (the order of
 * the others kept, as Step 1 builds it) and its queue's lowest running
 * priority is found again over every pool's list. */
static void drop_running(struct sched_session *ss, int w)
{
    struct ss_pool *pool = &ss->pools[ss->wl[w].pool];
    int q = ss_w(ss, w)->queue, p, i;

    for (i = 0; i < pool->n_running && pool->running[i] != w; i++)
        ;
    if (i < pool->n_running) {
        memmove(&pool->running[i], &pool->running[i + 1],
                sizeof(int) * (size_t)(pool->n_running - i - 1));
        pool->n_running--;
        pool->running_pods -= ss_w(ss, w)->n_pods;
        sched__running_changed(ss, ss->wl[w].pool, w, 0);
    }
    if (!ss_w(ss, w)->preemptible || ss_w(ss, w)->priority > ss->queues[q].min_running_priority)
        return;   /* not the queue's lowest: the others' lowest is the same */
    ss->queues[q].min_running_priority = INT32_MAX;
    for (p = 0; p < ss->n_pools; p++)
        for (i = 0; i < ss->pools[p].n_running; i++) {
            const struct sched_workload *o = ss_w(ss, ss->pools[p].running[i]);
            if (o->queue == q && o->preemptible &&
                o->priority < ss->queues[q].min_running_priority)
                ss->queues[q].min_running_priority = o->priority;
        }
}

/* Steps 5-7: every pod w holds comes off (unlogged, as Step 1 never
 * placed it). */
static void pods_off(struct sched_session *ss, int w)
{
    int k;

    for (k = 0; k < ss_w(ss, w)->n_pods && ss->wl[w].n_placed > 0; k++)
        if (ss->pods[w][k].node >= 0)
            do_unplace(ss, w, k);
}

/* Step 5: workload w of a kept session left (its phase is now STOPPED,
 * COMPLETED or FAILED, its pods unplaced in the snapshot): its demand is
 * taken back, the pods it held are taken off their nodes and queues
 * (unlogged, as Step 1 never placed them), it leaves its pool's running
 * list, and it is what Step 1 builds for a workload in that phase (no
 * flags, no class; its requests and pools are built whatever the phase). */
void sched__session_leave(struct sched_session *ss, int w)
{
    struct ss_wl *x = &ss->wl[w];
    int candidate = (x->flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0;

    add_demand(ss, w, -1);
    if (x->n_placed > 0)
        drop_running(ss, w);
    pods_off(ss, w);
    x->flags = 0;
    x->cls = 0;
    /* the job order holds w only if it was a candidate wanting pods; the
     * others' keys and signatures read their own fields and pods alone */
    forget_state(ss, !candidate);
}

/* Step 6: w joins its pool's list of running workloads at its place in
 * workload order (as Step 1 builds it), and its queue's lowest running
 * priority takes it into account. */
static int join_running(struct sched_session *ss, int w)
{
    struct ss_pool *pool = &ss->pools[ss->wl[w].pool];
    const struct sched_workload *wl = ss_w(ss, w);
    struct ss_queue *q = &ss->queues[wl->queue];
    int i;

    if (sched__ints_room(ss->arena, &pool->running, &pool->cap_running, pool->n_running,
                         pool->n_running + 1, 16) != SCHED_OK)
        return SCHED_ENOMEM;
    for (i = pool->n_running; i > 0 && pool->running[i - 1] > w; i--)
        pool->running[i] = pool->running[i - 1];
    pool->running[i] = w;
    pool->n_running++;
    pool->running_pods += wl->n_pods;
    if (sched__running_changed(ss, ss->wl[w].pool, w, 1) != SCHED_OK)
        return SCHED_ENOMEM;
    if (wl->preemptible && wl->priority < q->min_running_priority)
        q->min_running_priority = wl->priority;
    return SCHED_OK;
}

/* Steps 6 and 7: w, holding no pod and no demand in the session, built
 * again from the snapshot (its pods placed unlogged, as Step 1 places
 * them; its class kept: its constraints did not change), its demand
 * added, and in its pool's running list if it holds pods. */
static int built_again(struct sched_session *ss, int w)
{
    struct ss_wl *x = &ss->wl[w];
    int cls = x->cls, rc;

    rc = build_workload(ss, w, (int *)x->pools, -1, ss->pods[w]);
    if (rc != SCHED_OK)
        return rc;
    x->cls = cls;
    add_demand(ss, w, 1);
    if (x->n_placed > 0)
        rc = join_running(ss, w);
    return rc == SCHED_OK && ss->oom ? SCHED_ENOMEM : rc;
}

/* Step 6: workload w of a kept session was pending and unplaced when the
 * session was built, and the cycle run on it placed its pods (logged);
 * the driver applied those decisions, so the snapshot holds the pods
 * where the cycle put them and the phase sched_apply_decision() gives.
 * The pods come off (the demand is then the one Step 1 added for a
 * pending workload, in every pool it may use, and is taken back), w is
 * built again from the snapshot (its pods placed unlogged, as Step 1
 * places them; its class kept: its constraints did not change), its
 * demand added as a running workload's, and it joins its pool's running
 * list. The caller empties the log and the decisions and forgets the
 * caches (sched__session_settled()). */
int sched__session_rejoin(struct sched_session *ss, int w)
{
    pods_off(ss, w);
    add_demand(ss, w, -1);
    return built_again(ss, w);
}

/* Step 6: the pool whose pods the cycle took from w (its first logged
 * change; -1: none). */
int sched__session_evicted_from(const struct sched_session *ss, int w)
{
    int k;

    for (k = 0; k < ss->n_undo; k++)
        if (ss->undo[k].workload == w)
            return ss->undo[k].pool;
    return -1;
}

/* Step 6: how many pods of w the cycle's log took off a node. */
static int pods_taken(const struct sched_session *ss, int w)
{
    int k, n = 0;

    for (k = 0; k < ss->n_undo; k++)
        n += ss->undo[k].workload == w && ss->undo[k].node >= 0;
    return n;
}

/* Step 6: whether every decision of the cycle run on ss is one that
 * sched__session_rejoin() takes: binds of a workload that held no pod
 * when the session was built (its decisions are one run, as many as the
 * pods it holds now) and that is not pending any more, or the eviction of
 * a whole workload that held every pod it has (one decision, every pod
 * taken, none placed again) and is pending now. */
int sched__session_placed_only(const struct sched_session *ss)
{
    int k = 0, run, w;

    while (k < ss->n_decisions) {
        const struct sched_decision *d = &ss->decisions[k];
        w = d->workload;
        if (d->kind == SCHED_EVICT) {
            if (d->pod >= 0 || ss->wl[w].n_placed != 0 || !sched__is_pending(ss, w) ||
                pods_taken(ss, w) != ss_w(ss, w)->n_pods ||
                (k + 1 < ss->n_decisions && ss->decisions[k + 1].workload == w))
                return 0;
            k++;
            continue;
        }
        for (run = k; run < ss->n_decisions && ss->decisions[run].workload == w; run++)
            if (ss->decisions[run].kind != SCHED_BIND)
                return 0;
        if (run - k != ss->wl[w].n_placed || sched__is_pending(ss, w))
            return 0;
        k = run;
    }
    return ss->n_decisions > 0;
}

/* Step 6: workload w of a kept session ran in `pool` when the session was
 * built, every pod it had, and the cycle run on it evicted it whole
 * (logged); the driver applied that, so the snapshot holds it pending
 * with no pod. Its demand as a running workload's in that pool is taken
 * back, it leaves the pool's running list, it is built again from the
 * snapshot (its class kept) with a pending workload's demand in every
 * pool it may use, and it joins the job order (sched__order_join(); 0
 * there: *keep_order 0). */
int sched__session_rejoin_evicted(struct sched_session *ss, int w, int pool, int *keep_order)
{
    struct ss_wl *x = &ss->wl[w];
    int rc;

    if (pool < 0 || pool >= ss->n_pools || x->n_placed != 0)
        return SCHED_EINVAL;
    x->pool = pool;   /* as built: the demand and the running list read it */
    add_demand(ss, w, -1);
    drop_running(ss, w);
    rc = built_again(ss, w);
    if (rc == SCHED_OK && *keep_order)
        *keep_order = sched__order_join(ss, w);
    return rc;
}

/* Step 7: workload w of a kept session lost the pods it held on nodes that
 * went down; the snapshot holds its other pods where they were and the
 * phase the driver gave it (pending, or running with fewer pods). Its
 * demand and pods come off (unlogged, as Step 1 never placed them), it
 * leaves its pool's running list, and it is built again from the
 * snapshot (its class kept: its constraints did not change) with its
 * demand and its place in the running list as Step 1 gives them. The job
 * order takes it as a submission when it was no candidate wanting pods
 * before (sched__order_join()); else its key and signature may read
 * other pods: *keep_order 0. */
int sched__session_requeue(struct sched_session *ss, int w, int *keep_order)
{
    struct ss_wl *x = &ss->wl[w];
    int wanted = (x->flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0, rc;

    add_demand(ss, w, -1);
    if (x->n_placed > 0)
        drop_running(ss, w);
    pods_off(ss, w);
    rc = built_again(ss, w);
    if (rc != SCHED_OK)
        return rc;
    if (*keep_order)
        *keep_order = !wanted && sched__order_join(ss, w);
    forget_state(ss, *keep_order);
    return SCHED_OK;
}

/* Step 7: pool p's figures over its ready nodes, found from its nodes as
 * they are now (build_nodes() and the placements node_add() made). */
static void pool_figures_again(struct sched_session *ss, int p)
{
    struct ss_pool *pool = &ss->pools[p];
    int i, r;

    memset(pool->empty_hist, 0, sizeof(int) * (SCHED_MAX_NODE_GPUS + 1));
    memset(pool->has_empty, 0, sizeof(uint64_t) * ((size_t)ss->n_nodes / 64 + 1));
    pool->total_empty = pool->gpu_free = 0;
    pool->max_empty = pool->max_node_gpus = 0;
    pool->max_gpu_mem = 0;
    for (r = 0; r < SCHED_NRES; r++) {
        pool->capacity[r] = 0;
        pool->most_total[r] = INT64_MIN;
    }
    for (i = 0; i < pool->n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[pool->nodes[i]];
        pool->node_ready[i] = (uint8_t)n->ready;
        if (n->ready)
            pool_count_ready(pool, n);
    }
    pool_uniform(ss, pool);
}

/* Step 7: node went down and holds no pod any more (its workloads were
 * requeued): it is not ready, its pool's figures follow, and so do the
 * victim search's and the caches keyed by the pool's version. SCHED_EINVAL
 * when the pool's largest device memory moved: the GPU share of every
 * request by device memory that may go there reads it (memory_estimate()),
 * so the session is built again. */
int sched__session_node_down(struct sched_session *ss, int node)
{
    struct ss_node *n = &ss->nodes[node];
    int64_t gpu_mem = ss->pools[n->pool].max_gpu_mem;

    if (n->n_pods != 0 || !n->ready)
        return SCHED_EINVAL;
    n->ready = 0;
    pool_figures_again(ss, n->pool);
    if (ss->pools[n->pool].max_gpu_mem != gpu_mem)
        return SCHED_EINVAL;
    sched__victims_nodes_changed(ss, n->pool);
    ss->version = ++ss->n_versions;
    ss->pool_version[n->pool] = ss->version;
    return SCHED_OK;
}

/* Step 6, after every rejoin: the session holds no attempt any more (an
 * empty log, no decision, no workload the log names with a flag of the
 * cycle), and the caches start over (the job order when `keep_order`
 * says order.c took the placed workloads out of it and the evicted ones
 * in). */
void sched__session_settled(struct sched_session *ss, int keep_order)
{
    int k;

    /* a victim search may take a pod off and put it back: no decision, a
     * flag of the cycle's all the same */
    for (k = 0; k < ss->n_undo; k++)
        ss->wl[ss->undo[k].workload].flags &= ~(WL_EVICTED | WL_TOUCHED | WL_SHRUNK);
    if (ss->n_undo > 0)
        ss->units_base = ++ss->n_serials;   /* the changes stay, the log forgets them */
    ss->n_undo = 0;
    ss->n_decisions = 0;
    forget_state(ss, keep_order);
}

/* ---- Invariant check (tests) ---- */

int sched__session_check(const struct sched_session *ss)
{
    int n, d, i, k;

    for (n = 0; n < ss->n_nodes; n++) {
        const struct ss_node *node = &ss->nodes[n];
        int32_t used[SCHED_MAX_NODE_GPUS] = {0};
        int empty = 0;
        for (i = 0; i < node->n_pods; i++) {
            int w = node->pods[2 * i], pod = node->pods[2 * i + 1];
            if (ss->pods[w][pod].node != n)
                return SCHED_EINVAL;
            for (d = 0; d < node->n_gpus; d++)
                if (ss->pods[w][pod].devices >> d & 1)
                    used[d] += sched__dev_charge(ss, w, n);
        }
        for (d = 0; d < node->n_gpus; d++) {
            if (used[d] != node->dev_used[d])
                return SCHED_EINVAL;
            empty += used[d] == 0;
        }
        if (empty != node->n_empty)
            return SCHED_EINVAL;
    }
    for (i = 0; i < ss->n_workloads; i++) {
        int placed = 0;
        for (k = 0; k < ss_w(ss, i)->n_pods; k++)
            placed += ss->pods[i][k].node >= 0;
        if (placed != ss->wl[i].n_placed)
            return SCHED_EINVAL;
    }
    return SCHED_OK;
}

/* ---- Equality with a session built again (tests) ---- */

#define SAME(a, b, n) (memcmp((a), (b), sizeof(*(a)) * (size_t)(n)) == 0)

static const char *node_differs(const struct ss_node *a, const struct ss_node *b)
{
    if (a->n_gpus != b->n_gpus || a->n_empty != b->n_empty || a->dev_whole != b->dev_whole ||
        !SAME(a->dev_used, b->dev_used, a->n_gpus))
        return "a node's device usage";
    if (a->gpu_free != b->gpu_free || a->cpu_free != b->cpu_free || a->mem_free != b->mem_free)
        return "a node's free resources";
    if (a->n_pods != b->n_pods)
        return "a node's number of pods";
    if (a->ready != b->ready)
        return "a node's readiness";
    return NULL;
}

static const char *pool_differs(const struct ss_pool *a, const struct ss_pool *b, int n_nodes)
{
    if (a->total_empty != b->total_empty || a->gpu_free != b->gpu_free ||
        a->max_empty != b->max_empty || !SAME(a->empty_hist, b->empty_hist,
                                              SCHED_MAX_NODE_GPUS + 1) ||
        !SAME(a->has_empty, b->has_empty, n_nodes / 64 + 1))
        return "a pool's empty devices or free GPU";
    if (a->n_nodes != b->n_nodes || !SAME(a->node_free, b->node_free, a->n_nodes * SCHED_NRES) ||
        !SAME(a->node_ready, b->node_ready, a->n_nodes) ||
        !SAME(a->most_total, b->most_total, SCHED_NRES))
        return "a pool's copy of its nodes' free resources";
    if (!SAME(a->capacity, b->capacity, SCHED_NRES) || a->max_node_gpus != b->max_node_gpus ||
        a->max_gpu_mem != b->max_gpu_mem || a->uniform != b->uniform ||
        a->n_ready != b->n_ready || a->a_ready != b->a_ready)
        return "a pool's capacity over its ready nodes";
    if (a->n_running != b->n_running || !SAME(a->running, b->running, a->n_running) ||
        a->running_pods != b->running_pods)
        return "a pool's running list";
    return NULL;
}

static const char *workload_differs(const struct sched_session *a,
                                    const struct sched_session *b, int w)
{
    const struct ss_wl *x = &a->wl[w], *y = &b->wl[w];
    int k;

    if (x->n_placed != y->n_placed || x->pool != y->pool || x->flags != y->flags ||
        x->n_pools != y->n_pools || !SAME(x->req, y->req, SCHED_NRES) ||
        !SAME(x->pools, y->pools, x->n_pools))
        return "a workload's placement count, pool, flags or requests";
    for (k = 0; k < ss_w(a, w)->n_pods; k++)
        if (a->pods[w][k].node != b->pods[w][k].node ||
            a->pods[w][k].devices != b->pods[w][k].devices)
            return "a pod's placement";
    return NULL;
}

const char *sched__session_differs(const struct sched_session *a,
                                   const struct sched_session *b)
{
    const char *why = NULL;
    int i;

    if (a->n_nodes != b->n_nodes || a->n_pools != b->n_pools ||
        a->n_queues != b->n_queues || a->n_workloads != b->n_workloads)
        return "the sizes";
    for (i = 0; i < a->n_nodes && !why; i++)
        why = node_differs(&a->nodes[i], &b->nodes[i]);
    for (i = 0; i < a->n_pools && !why; i++)
        why = pool_differs(&a->pools[i], &b->pools[i], a->n_nodes);
    for (i = 0; i < a->n_workloads && !why; i++)
        why = workload_differs(a, b, i);
    for (i = 0; i < a->n_queues && !why; i++)
        if (a->queues[i].min_running_priority != b->queues[i].min_running_priority ||
            !SAME(a->queues[i].tot_alloc, b->queues[i].tot_alloc, SCHED_NRES))
            why = "a queue's lowest running priority or allocation";
    /* a parent's demand is its children's, summed by each fair share */
    for (i = 0; i < a->n_queues * a->n_pools && !why; i++)
        if (!SAME(a->qp[i].alloc, b->qp[i].alloc, SCHED_NRES) ||
            !SAME(a->qp[i].alloc_np, b->qp[i].alloc_np, SCHED_NRES) ||
            (a->queues[i / a->n_pools].is_leaf &&
             !SAME(a->qp[i].request, b->qp[i].request, SCHED_NRES)))
            why = "a queue's allocation or demand in a pool";
    for (i = 0; i < a->n_queues * a->n_pools && !why; i++)
        if (!SAME(a->qp[i].deserved, b->qp[i].deserved, SCHED_NRES) ||
            !SAME(a->qp[i].limit, b->qp[i].limit, SCHED_NRES) ||
            !SAME(a->qp[i].weight, b->qp[i].weight, SCHED_NRES) || a->qp[i].rank != b->qp[i].rank)
            why = "a queue's quota or rank in a pool";
    return why;
}
