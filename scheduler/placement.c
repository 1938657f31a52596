/*
 * placement.c: where a pod goes (docs/scheduler.md, "Gangs, fractions, placement").
 *
 * A pod fits a node when the node is ready, is allowed to the workload
 * (its node types and required affinity, affinity.c), has the CPU and
 * memory, and has devices for it:
 *   whole devices: `gpu_devices` empty devices (whole-device pods never
 *            share);
 *   shared devices: sched_shared_devices() distinct devices, none held by
 *            a whole-device pod, each with room for the pod's charge: its
 *            `gpu_portion`, or for a GPU-memory request the fraction of
 *            the device's memory it asks (rounded up to a milli-GPU), so a
 *            device never gives out more memory than it has.
 *
 * Among the nodes that fit, in this order:
 *   1. the workload's preferred node type (the first of its list);
 *   2. shared requests: the node where the pod opens the fewest empty
 *      devices, so a fraction goes to a device already shared before it
 *      opens a fresh one, on whatever node that device is (KAI's
 *      gpusharingorder outweighs bin-packing);
 *   3. the pool's strategy: binpack, the fullest node (least free
 *      milli-GPU; for pods without GPU, least free CPU); spread, the
 *      emptiest (highest free / total); ties by node name.
 * A fragmentation pool puts the rise of the node's fragmentation (frag.c)
 * between 1 and 2, and breaks ties before the name by the CPU the node
 * keeps per GPU; it measures only the nodes of the best rank, none when
 * one node alone fits.
 * Devices inside the node: whole-device pods take the lowest-index empty
 * devices; shared pods take shared devices first (the fullest with room,
 * or the emptiest in a spread pool), then empty ones, ties by index.
 *
 * A gang is placed pod by pod inside one statement: if any pod does not
 * fit, everything placed for it is rolled back (all or nothing). A
 * GPU-memory request's charge is known only on its node, so once placed
 * it is checked against limits and deserved quota again.
 */
#include "sched_int.h"

#include <string.h>

/* The charge of one pod of wl on each device of a node whose devices hold
 * dev_mem MiB; above SCHED_MILLI when it cannot fit there at all. */
int32_t sched__charge_on(const struct sched_workload *wl, int64_t dev_mem)
{
    if (sched__whole(wl))
        return SCHED_MILLI;
    if (wl->gpu_portion > 0)
        return (int32_t)wl->gpu_portion;
    if (wl->gpu_memory_mib > 0) {
        if (dev_mem <= 0 || wl->gpu_memory_mib > dev_mem)
            return SCHED_MILLI + 1;
        return (int32_t)((wl->gpu_memory_mib * SCHED_MILLI + dev_mem - 1) / dev_mem);
    }
    return 0;
}

int32_t sched__dev_charge(const struct sched_session *ss, int w, int node)
{
    return sched__charge_on(ss_w(ss, w), ss->nodes[node].gpu_mem);
}

int64_t sched_pod_gpu(const struct sched_workload *w, const struct sched_node *n)
{
    int32_t c = sched__charge_on(w, n->gpu_memory_mib);
    int devices = sched__whole(w) ? w->gpu_devices : sched_shared_devices(w);

    return (int64_t)devices * (c > SCHED_MILLI ? SCHED_MILLI : c);
}

/* Is shared device d a better choice than b (both have room)? */
static int device_better(const int32_t *used, int d, int b, int spread)
{
    if ((used[d] > 0) != (used[b] > 0))
        return used[d] > 0;
    if (used[d] == 0 || used[d] == used[b])
        return 0; /* the lower index, met first */
    return spread ? used[d] < used[b] : used[d] > used[b];
}

uint64_t sched__pick_devices(const struct sched_session *ss, int w, int node,
                             const int32_t *used, uint64_t whole, int *fresh)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];
    int spread = ss->in->pools[n->pool].gpu_placement == SCHED_SPREAD;
    int need, d, best;
    int32_t charge;
    uint64_t taken = 0;

    *fresh = 0;
    if (sched__whole(wl)) {
        need = wl->gpu_devices;
        for (d = 0; d < n->n_gpus && need > 0; d++)
            if (used[d] == 0) {
                taken |= (uint64_t)1 << d;
                need--;
            }
        *fresh = wl->gpu_devices;
        return need == 0 ? taken : 0;
    }
    need = sched_shared_devices(wl);
    charge = sched__charge_on(wl, n->gpu_mem);
    if (need == 0 || need > n->n_gpus || charge > SCHED_MILLI)
        return 0;
    for (; need > 0; need--) {
        best = -1;
        for (d = 0; d < n->n_gpus; d++) {
            if (((taken | whole) >> d & 1) || used[d] + charge > SCHED_MILLI)
                continue;
            if (best < 0 || device_better(used, d, best, spread))
                best = d;
        }
        if (best < 0)
            return 0;
        taken |= (uint64_t)1 << best;
        *fresh += used[best] == 0;
    }
    return taken;
}

/* Has the node the devices for a shared pod of wl, and how many empty
 * ones does it open? sched__pick_devices() takes devices already shared
 * before empty ones, so it opens what the shared ones with room leave. */
static int shared_fits(const struct sched_workload *wl, const struct ss_node *n, int *fresh)
{
    int need = sched_shared_devices(wl), room = 0, shared = 0, d;
    int32_t charge = sched__charge_on(wl, n->gpu_mem);

    if (need == 0 || need > n->n_gpus || charge > SCHED_MILLI)
        return 0;
    for (d = 0; d < n->n_gpus; d++)
        if (!(n->dev_whole >> d & 1) && n->dev_used[d] + charge <= SCHED_MILLI) {
            room++;
            shared += n->dev_used[d] > 0;
        }
    *fresh = need > shared ? need - shared : 0;
    return room >= need;
}

static int gpu_fits(const struct sched_session *ss, int w, int node, int *fresh)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];

    *fresh = 0;
    if (sched__whole(wl)) {
        *fresh = wl->gpu_devices;
        return n->n_empty >= wl->gpu_devices;
    }
    if (wl->gpu_portion > 0 || wl->gpu_memory_mib > 0)
        return shared_fits(wl, n, fresh);
    return 1;
}

/* Fits, and if so the node's preference and the empty devices it opens. */
static inline int fits_with(const struct sched_session *ss, int w, int node, int *rank,
                            int *fresh)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];

    *rank = sched__node_rank(ss, w, node);
    if (!n->ready || *rank == 0 || n->cpu_free < wl->cpu_milli || n->mem_free < wl->mem_mib)
        return 0;
    return gpu_fits(ss, w, node, fresh);
}

int sched__pod_fits_node(const struct sched_session *ss, int w, int node)
{
    int rank, fresh;

    return fits_with(ss, w, node, &rank, &fresh);
}

/* The pool's strategy for pods of w: its GPU one, or for pods that ask no
 * GPU its CPU one. */
static int strategy_for(const struct sched_session *ss, int w, int pool)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct sched_pool *p = &ss->in->pools[pool];
    int gpu = sched__asks_gpu(wl);

    return gpu ? p->gpu_placement : p->cpu_placement;
}

/* Does the pool measure fragmentation for pods of w (it places them by
 * fragmentation and there is a mix to measure against)? */
static int by_fragmentation(const struct sched_session *ss, int w, int pool)
{
    return ss->frag.n > 0 && strategy_for(ss, w, pool) == SCHED_FRAGMENTATION;
}

uint64_t sched__choose_devices(const struct sched_session *ss, int w, int node)
{
    const struct ss_node *n = &ss->nodes[node];
    int64_t rise;
    int fresh;

    if (by_fragmentation(ss, w, n->pool))
        return sched__frag_devices(ss, w, node, &rise);
    return sched__pick_devices(ss, w, node, n->dev_used, n->dev_whole, &fresh);
}

/* The strategies' order of two nodes with free room fa of ta and fb of tb
 * (milli-GPU or CPU) and names ranked ra, rb: binpack, the fullest first;
 * spread, the highest free ratio first; ties by name. 1 if a goes first. */
static int free_before(int spread, __int128 fa, __int128 ta, int ra, __int128 fb, __int128 tb,
                       int rb)
{
    if (spread) {
        /* higher free ratio first: fa/ta > fb/tb */
        __int128 l = fa * (tb > 0 ? tb : 1), r = fb * (ta > 0 ? ta : 1);
        if (l != r)
            return l > r;
    } else if (fa != fb) {
        return fa < fb;
    }
    return ra < rb;
}

/* 1 if node a is a better home than node b for a pod of w by the pool's
 * strategy alone. */
static int node_better(const struct sched_session *ss, int w, int a, int b)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *na = &ss->nodes[a], *nb = &ss->nodes[b];
    const struct sched_pool *pool = &ss->in->pools[na->pool];
    int gpu = sched__asks_gpu(wl);
    int spread = (gpu ? pool->gpu_placement : pool->cpu_placement) == SCHED_SPREAD;

    if (gpu)
        return free_before(spread, na->gpu_free, (int64_t)na->n_gpus * SCHED_MILLI,
                           na->name_rank, nb->gpu_free, (int64_t)nb->n_gpus * SCHED_MILLI,
                           nb->name_rank);
    return free_before(spread, na->cpu_free, na->cpu_total, na->name_rank, nb->cpu_free,
                       nb->cpu_total, nb->name_rank);
}

/* A node that fits, with what orders it before the strategy. */
struct candidate {
    int node, rank, fresh;
    int breaks;               /* pools with a topology: empty domains it opens (topology.c) */
    int64_t rise;             /* fragmentation pools: what the pod strands there */
    int left;                 /* cpu, gpu below hold left_after() (computed when first asked) */
    int64_t cpu, gpu;
};

/* The CPU a node keeps per GPU it keeps once one pod of w is there, as
 * a fraction cpu / gpu: *gpu 0 when the pod takes its last GPU. */
static void left_after(const struct sched_session *ss, int w, int node, int64_t *cpu,
                       int64_t *gpu)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];

    *cpu = n->cpu_free - wl->cpu_milli;
    *gpu = n->gpu_free - sched_pod_gpu(wl, &ss->in->nodes[node]);
}

/* Fragmentation pools' tie-break: the node that keeps more CPU per GPU
 * (a node the pod fills first), so that what comes next finds CPU beside
 * the GPUs; 0 if equal. */
static int cpu_per_gpu_cmp(const struct sched_session *ss, int w, struct candidate *a,
                           struct candidate *b)
{
    struct candidate *c[2] = {a, b};
    int64_t ca, ga, cb, gb;
    __int128 l, r;
    int i;

    for (i = 0; i < 2; i++)
        if (!c[i]->left) {
            left_after(ss, w, c[i]->node, &c[i]->cpu, &c[i]->gpu);
            c[i]->left = 1;
        }
    ca = a->cpu;
    ga = a->gpu;
    cb = b->cpu;
    gb = b->gpu;
    if ((ga <= 0) != (gb <= 0))
        return ga <= 0 ? 1 : -1;
    if (ga <= 0)
        return 0;
    l = (__int128)ca * gb;
    r = (__int128)cb * ga;
    return (l > r) - (l < r);
}

/* candidate_better() short of node_better(): 1 if a goes first, -1 if b
 * does, 0 if only the pool's strategy tells them apart. frag: the pool
 * places w's pods by SCHED_FRAGMENTATION. */
static int candidate_cmp(const struct sched_session *ss, int w, int frag, struct candidate *a,
                         struct candidate *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank ? 1 : -1;
    if (a->breaks != b->breaks)
        return a->breaks < b->breaks ? 1 : -1;
    if (a->rise != b->rise)
        return a->rise < b->rise ? 1 : -1;
    if (a->fresh != b->fresh)
        return a->fresh < b->fresh ? 1 : -1;
    return frag ? cpu_per_gpu_cmp(ss, w, a, b) : 0;
}

static int candidate_better(const struct sched_session *ss, int w, int frag, struct candidate *a,
                            struct candidate *b)
{
    int cmp = candidate_cmp(ss, w, frag, a, b);

    return cmp ? cmp > 0 : node_better(ss, w, a->node, b->node);
}

/* Could the pool place `pods` more pods of w right now, judging by its
 * free-device counts alone? A quick necessary test. */
int sched__pool_may_fit(const struct sched_session *ss, int w, int pool, int pods)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_pool *p = &ss->pools[pool];

    if (sched__whole(wl))
        return p->max_empty >= wl->gpu_devices &&
               p->total_empty >= (int64_t)pods * wl->gpu_devices;
    if (wl->gpu_portion > 0 || wl->gpu_memory_mib > 0)
        return p->gpu_free >= ss->wl[w].req[SCHED_GPU] * pods;
    return 1;
}

/* Does the pool order nodes for w's pods by the empty domains they open
 * (a topology, and pods that ask GPUs)? */
static int topo_breaks(const struct sched_session *ss, int w, int pool)
{
    return ss->topo && ss->topo[pool].n_levels > 0 && sched__asks_gpu(ss_w(ss, w));
}

/* How a pool orders the nodes for one pod, and the best so far. */
struct scan {
    int frag;      /* SCHED_FRAGMENTATION: the tie-break by CPU per GPU */
    int measure;   /* and a mix: the rise of fragmentation first */
    struct candidate best;
    int n_fitting; /* measure: nodes of the best rank so far, in ss->frag.fitting */
    int first;     /* stop at the first node that fits (best.node) */
    int by_state;  /* measure, a whole-device pod: nodes in one state compare alike */
    uint64_t best_state; /* by_state: best's state serial (sched__frag_state(), 0: none) */
    uint64_t lose_state; /* by_state: a state that goes after best's before the name */
    int topo;      /* the pool has a topology, and w's pods ask GPUs: candidates' breaks */
};

/* c fits: is it the best so far? By state: a whole-device pod's rise,
 * fresh devices and CPU per GPU left are functions of the node's state
 * (frag.c's struct fstate, its gpu_free included), so among nodes of one
 * state and rank the lowest name goes first, and a node whose state lost
 * to best's before the name loses too; neither is measured again. */
static void consider_fitting(const struct sched_session *ss, int w, struct candidate *c,
                             struct scan *s)
{
    uint64_t state = 0;
    int cmp;

    c->rise = 0;
    c->left = 0;
    c->breaks = s->topo ? sched__topo_breaks(ss, c->node) : 0;
    if (s->measure && s->best.node >= 0 && c->rank > s->best.rank)
        return;   /* cannot win: spare the measure */
    if (s->by_state && (state = sched__frag_state(ss, c->node)) != 0 && s->best.node >= 0 &&
        c->rank == s->best.rank) {
        if (state == s->lose_state)
            return;
        if (state == s->best_state) {
            if (ss->nodes[c->node].name_rank < ss->nodes[s->best.node].name_rank)
                s->best.node = c->node;
            return;
        }
    }
    if (s->measure)
        sched__frag_devices(ss, w, c->node, &c->rise);
    cmp = s->best.node < 0 ? 1 : candidate_cmp(ss, w, s->frag, c, &s->best);
    if (cmp > 0 || (cmp == 0 && node_better(ss, w, c->node, s->best.node))) {
        s->best = *c;
        s->best_state = state;
        s->lose_state = 0;
    } else if (cmp < 0) {
        s->lose_state = state;
    }
}

static void consider(const struct sched_session *ss, int w, int node, struct scan *s)
{
    struct candidate c;

    c.node = node;
    if (fits_with(ss, w, node, &c.rank, &c.fresh))
        consider_fitting(ss, w, &c, s);
}

/* Measuring pools, first pass: the nodes that fit with the best rank, and
 * the empty devices each opens. */
static void collect(const struct sched_session *ss, int w, int node, struct scan *s)
{
    int rank, fresh;

    if (!fits_with(ss, w, node, &rank, &fresh))
        return;
    if (s->n_fitting > 0 && rank > s->best.rank)
        return;
    if (s->n_fitting == 0 || rank < s->best.rank) {
        s->n_fitting = 0;
        s->best.rank = rank;
        s->best.node = node;
    }
    ss->frag.fitting[s->n_fitting].node = node;
    ss->frag.fitting[s->n_fitting++].fresh = fresh;
}

/* Calls visit for every node of the pool that may take a pod of w. */
static void each_node(const struct sched_session *ss, int w, int pool, int exclude,
                      void (*visit)(const struct sched_session *, int, int, struct scan *),
                      struct scan *s)
{
    const struct ss_pool *p = &ss->pools[pool];
    int i;

    if (w == ss->topo_w) {   /* a topology attempt: the domain's nodes, in name order */
        for (i = 0; i < ss->topo_n && !(s->first && s->best.node >= 0); i++)
            if (ss->topo_nodes[i] != exclude && ss->nodes[ss->topo_nodes[i]].pool == pool)
                visit(ss, w, ss->topo_nodes[i], s);
        return;
    }
    if (!sched__whole(ss_w(ss, w))) {
        for (i = 0; i < p->n_nodes && !(s->first && s->best.node >= 0); i++)
            if (p->nodes[i] != exclude)
                visit(ss, w, p->nodes[i], s);
        return;
    }
    /* whole devices: only nodes with an empty device can take the pod */
    for (i = 0; i < p->n_nodes; i += 64) {
        uint64_t bits = p->has_empty[i / 64];
        while (bits && !(s->first && s->best.node >= 0)) {
            int n = p->nodes[i + __builtin_ctzll(bits)];
            bits &= bits - 1;
            if (n != exclude)
                visit(ss, w, n, s);
        }
    }
}

static void first_fit(const struct sched_session *ss, int w, int node, struct scan *s)
{
    if (sched__pod_fits_node(ss, w, node))
        s->best.node = node;
}

int64_t sched__pod_charge_on(const struct sched_session *ss, int w, int node)
{
    return (int64_t)sched_shared_devices(ss_w(ss, w)) * sched__dev_charge(ss, w, node);
}

int64_t sched__charge_as_is(const struct sched_session *ss, int w, int pool, int *node)
{
    *node = sched__best_node(ss, w, pool, -1);
    return *node < 0 ? 0 : sched__pod_charge_on(ss, w, *node);
}

int sched__fits_somewhere(const struct sched_session *ss, int w, int pool)
{
    struct scan s = {0, 0, {-1, 0, 0, 0, 0, 0, 0, 0}, 0, 1, 0, 0, 0, 0};
    int64_t charge;

    if (sched__whole(ss_w(ss, w)) && ss->pools[pool].max_empty < ss_w(ss, w)->gpu_devices)
        return 0;
    if (ss_w(ss, w)->gpu_memory_mib > 0) {
        /* as sched__place_pods() does: the best node, then its charge */
        charge = sched__charge_as_is(ss, w, pool, &s.best.node);
        return s.best.node >= 0 && sched__gpu_within_caps(ss, w, pool, charge);
    }
    each_node(ss, w, pool, -1, first_fit, &s);
    return s.best.node >= 0;
}

/* ---- The same order, one node at a time (victims.c's move trials) ---- */

int sched__candidate(const struct sched_session *ss, int w, int node, struct ss_cand *c)
{
    c->node = node;
    c->rise = 0;
    if (!fits_with(ss, w, node, &c->rank, &c->fresh))
        return 0;
    if (by_fragmentation(ss, w, ss->nodes[node].pool))
        sched__frag_devices(ss, w, node, &c->rise);
    return 1;
}

int sched__candidate_better(const struct sched_session *ss, int w, const struct ss_cand *a,
                            const struct ss_cand *b)
{
    struct candidate x = {a->node, a->rank, a->fresh, 0, a->rise, 0, 0, 0};
    struct candidate y = {b->node, b->rank, b->fresh, 0, b->rise, 0, 0, 0};

    return candidate_better(ss, w, strategy_for(ss, w, ss->nodes[a->node].pool) ==
                                       SCHED_FRAGMENTATION, &x, &y);
}

int sched__best_nodes(const struct sched_session *ss, int w, int pool, const uint8_t *skip,
                      struct ss_cand *out, int k, int *more)
{
    const struct ss_pool *p = &ss->pools[pool];
    struct ss_cand c;
    int i, j, n = 0;

    *more = 0;
    for (i = 0; i < p->n_nodes; i++) {
        int node = p->nodes[i];
        int rank, fresh;
        if (skip[node] || !fits_with(ss, w, node, &rank, &fresh))
            continue;
        if (n == k && rank > out[k - 1].rank) {   /* cannot enter: spare the measure */
            *more = 1;
            continue;
        }
        sched__candidate(ss, w, node, &c);
        for (j = n; j > 0 && sched__candidate_better(ss, w, &c, &out[j - 1]); j--)
            ;
        if (j == k) {
            *more = 1;
            continue;
        }
        if (n == k)
            *more = 1;
        else
            n++;
        memmove(&out[j + 1], &out[j], (size_t)(n - 1 - j) * sizeof(*out));
        out[j] = c;
    }
    return n;
}

int sched__same_placement(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *x = ss_w(ss, a), *y = ss_w(ss, b);

    return ss->wl[a].cls == ss->wl[b].cls && sched__same_requests(x, y) &&
           sched_shared_devices(x) == sched_shared_devices(y) &&
           sched__whole(x) == sched__whole(y);
}

/* ---- The pool's node index (struct ss_node_index) ----
 *
 * For a whole-device pod in a binpack or spread pool candidate_better()
 * comes down to the rank, then (a pool with a topology) the empty domains
 * the node opens, then node_better(): every such pod opens gpu_devices
 * empty devices and nothing is measured. The index keeps the pool's nodes
 * in node_better()'s order for pods that ask GPUs, so the best node is the
 * first that fits among those of the best rank (and fewest breaks), and one
 * of rank 1 (opening no domain) ends the walk. A pod of k whole devices needs k empty devices, each
 * SCHED_MILLI free: in binpack order the nodes with less free than that
 * come first, and a binary search passes them over (unless some node has a
 * device charged over its capacity: n_short). Nodes are filed again, by
 * their gpu_free, when next asked after node_add() touched them. */

struct index_ctx {
    const struct sched_session *ss;
    const struct ss_node_index *x;
};

/* Is node a, filed by fa, before node b filed by fb? */
static int filed_before(const struct sched_session *ss, const struct ss_node_index *x,
                        int64_t fa, int a, int64_t fb, int b)
{
    const struct ss_node *na = &ss->nodes[a], *nb = &ss->nodes[b];

    return free_before(x->spread, fa, (int64_t)na->n_gpus * SCHED_MILLI, na->name_rank, fb,
                       (int64_t)nb->n_gpus * SCHED_MILLI, nb->name_rank);
}

static int index_before(const void *ctx, int a, int b)
{
    const struct index_ctx *c = ctx;
    const struct ss_node *na = &c->ss->nodes[a], *nb = &c->ss->nodes[b];

    return filed_before(c->ss, c->x, c->x->filed[na->pool_pos], a, c->x->filed[nb->pool_pos], b);
}

/* The first of order[0..n) that does not go before node filed by f. */
static int index_seek(const struct sched_session *ss, const struct ss_node_index *x, int64_t f,
                      int node, int n)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, m = x->order[mid];
        if (filed_before(ss, x, x->filed[ss->nodes[m].pool_pos], m, f, node))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Files the node at pool position pos by its gpu_free now. */
static void index_file(const struct sched_session *ss, const struct ss_pool *p,
                       struct ss_node_index *x, int pos)
{
    int node = p->nodes[pos], n = p->n_nodes, at;
    const struct ss_node *nd = &ss->nodes[node];
    int short_of = nd->gpu_free < (int64_t)SCHED_MILLI * nd->n_empty;

    x->is_dirty[pos] = 0;
    x->n_short += short_of - x->short_of[pos];
    x->short_of[pos] = (uint8_t)short_of;
    if (x->filed[pos] == nd->gpu_free)
        return;
    at = index_seek(ss, x, x->filed[pos], node, n);
    while (x->order[at] != node)
        at++;
    memmove(&x->order[at], &x->order[at + 1], (size_t)(n - 1 - at) * sizeof(int));
    x->filed[pos] = nd->gpu_free;
    at = index_seek(ss, x, nd->gpu_free, node, n - 1);
    memmove(&x->order[at + 1], &x->order[at], (size_t)(n - 1 - at) * sizeof(int));
    x->order[at] = node;
}

/* Files every node and sorts the order again. */
static void index_sort(const struct sched_session *ss, const struct ss_pool *p,
                       struct ss_node_index *x)
{
    struct index_ctx c = {ss, x};
    int i;

    x->n_short = 0;
    for (i = 0; i < p->n_nodes; i++) {
        const struct ss_node *nd = &ss->nodes[p->nodes[i]];
        x->filed[i] = nd->gpu_free;
        x->short_of[i] = nd->gpu_free < (int64_t)SCHED_MILLI * nd->n_empty;
        x->n_short += x->short_of[i];
        x->is_dirty[i] = 0;
    }
    x->n_dirty = 0;
    sched__sort_with(x->order, x->tmp, p->n_nodes, index_before, &c);
}

static struct ss_node_index *index_new(const struct sched_session *ss, struct ss_pool *p)
{
    struct ss_node_index *x = sched__calloc(ss->arena, 1, sizeof(*x));
    size_t n = (size_t)p->n_nodes + 1;

    if (!x)
        return NULL;
    x->order = sched__calloc(ss->arena, n, sizeof(int));
    x->tmp = sched__calloc(ss->arena, n, sizeof(int));
    x->dirty = sched__calloc(ss->arena, n, sizeof(int));
    x->filed = sched__calloc(ss->arena, n, sizeof(int64_t));
    x->short_of = sched__calloc(ss->arena, n, 1);
    x->is_dirty = sched__calloc(ss->arena, n, 1);
    if (!x->order || !x->tmp || !x->dirty || !x->filed || !x->short_of || !x->is_dirty)
        return NULL;
    memcpy(x->order, p->nodes, (size_t)p->n_nodes * sizeof(int));
    x->spread = -1;
    p->index = x;
    return x;
}

void sched__node_index_touch(struct sched_session *ss, int node)
{
    const struct ss_node *n = &ss->nodes[node];
    struct ss_node_index *x = ss->pools[n->pool].index;

    if (!x->is_dirty[n->pool_pos]) {
        x->is_dirty[n->pool_pos] = 1;
        x->dirty[x->n_dirty++] = n->pool_pos;
    }
}

/* The pool's index, filed as the nodes are now (NULL: no memory). */
static struct ss_node_index *index_of(const struct sched_session *ss, int pool)
{
    struct ss_pool *p = &ss->pools[pool];
    struct ss_node_index *x = p->index ? p->index : index_new(ss, p);
    int spread = ss->in->pools[pool].gpu_placement == SCHED_SPREAD, i;

    if (!x)
        return NULL;
    if (x->spread != spread || x->n_dirty > p->n_nodes / 8) {
        x->spread = spread;
        index_sort(ss, p, x);
    }
    for (i = 0; i < x->n_dirty; i++)
        index_file(ss, p, x, x->dirty[i]);
    x->n_dirty = 0;
    return x;
}

void sched__node_index_build(struct sched_session *ss, int pool)
{
    int placement = ss->in->pools[pool].gpu_placement;

    if (ss->pools[pool].n_nodes > 0 && (placement == SCHED_BINPACK || placement == SCHED_SPREAD))
        (void)index_of(ss, pool);   /* out of memory: built when first asked, as before */
}

/* sched__best_node() for a whole-device pod in a binpack or spread pool
 * (-2: no index). topo: the pool has a topology (struct scan's), and a
 * node's breaks go after its rank and before the index's order: the walk
 * ends at a node of rank 1 that opens no empty domain. */
static int indexed_best(const struct sched_session *ss, int w, int pool, int exclude, int topo)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_pool *p = &ss->pools[pool];
    const struct ss_node_index *x = index_of(ss, pool);
    int64_t need = (int64_t)wl->gpu_devices * SCHED_MILLI;
    int lo = 0, hi, best = -1, best_rank = 0, best_breaks = 0, rank, fresh, breaks;

    if (!x)
        return -2;
    if (!x->spread && x->n_short == 0)
        for (hi = p->n_nodes; lo < hi;) {   /* the first filed with `need` free */
            int mid = lo + (hi - lo) / 2;
            if (x->filed[ss->nodes[x->order[mid]].pool_pos] < need)
                lo = mid + 1;
            else
                hi = mid;
        }
    for (; lo < p->n_nodes; lo++) {
        int node = x->order[lo];
        if (node == exclude || !fits_with(ss, w, node, &rank, &fresh))
            continue;
        breaks = topo ? sched__topo_breaks(ss, node) : 0;
        if (best < 0 || rank < best_rank || (rank == best_rank && breaks < best_breaks)) {
            best = node;
            best_rank = rank;
            best_breaks = breaks;
            if (rank == 1 && breaks == 0)
                break;
        }
    }
    return best;
}

int sched__best_node(const struct sched_session *ss, int w, int pool, int exclude)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int strategy = strategy_for(ss, w, pool);
    struct scan s = {strategy == SCHED_FRAGMENTATION,
                     by_fragmentation(ss, w, pool), {-1, 0, 0, 0, 0, 0, 0, 0}, 0, 0, 0, 0, 0,
                     topo_breaks(ss, w, pool)};
    int i, n;

    if (sched__whole(wl) && ss->pools[pool].max_empty < wl->gpu_devices)
        return -1;
    if (sched__whole(wl) && (strategy == SCHED_BINPACK || strategy == SCHED_SPREAD) &&
        w != ss->topo_w) {
        int node = indexed_best(ss, w, pool, exclude, s.topo);
        if (node != -2)
            return node;
    }
    if (!s.measure) {
        each_node(ss, w, pool, exclude, consider, &s);
        return s.best.node;
    }
    /* the measure orders only the nodes of the best rank, and a node that
     * alone fits needs none */
    each_node(ss, w, pool, exclude, collect, &s);
    if (s.n_fitting <= 1)
        return s.n_fitting ? s.best.node : -1;
    n = s.n_fitting;
    s.best.node = -1;
    s.by_state = sched__whole(wl) && !s.topo;   /* breaks read the domain, not the node */
    for (i = 0; i < n; i++) {
        struct candidate c;
        c.node = ss->frag.fitting[i].node;
        c.rank = s.best.rank;
        c.fresh = ss->frag.fitting[i].fresh;
        consider_fitting(ss, w, &c, &s);
    }
    return s.best.node;
}

/* A GPU-memory request is charged by the device it gets: with `gpu` more,
 * do the queue and its ancestors still keep their limits and, for
 * non-preemptible work, their deserved quota? */
int sched__gpu_within_caps(const struct sched_session *ss, int w, int pool, int64_t gpu)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int q;

    for (q = wl->queue; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)pool];
        if (a->alloc[SCHED_GPU] + gpu > a->limit[SCHED_GPU] ||
            (!wl->preemptible && a->alloc_np[SCHED_GPU] + gpu > sched__np_bound(a, SCHED_GPU)))
            return 0;
    }
    return 1;
}

int sched__charge_within_caps(const struct sched_session *ss, int w, int pool)
{
    return ss_w(ss, w)->gpu_memory_mib <= 0 || sched__gpu_within_caps(ss, w, pool, 0);
}

int sched__place_pods(struct sched_session *ss, int w, int pool, int pods, int action)
{
    const struct sched_workload *wl = ss_w(ss, w);
    struct ss_mark mark = sched__mark(ss);
    int k, placed = 0;

    if (sched__whole(wl) && ss->pools[pool].total_empty < (int64_t)pods * wl->gpu_devices)
        return 0;
    for (k = 0; k < wl->n_pods && placed < pods; k++) {
        int node;
        uint64_t dev;
        if (ss->pods[w][k].node >= 0)
            continue;
        node = sched__best_node(ss, w, pool, -1);
        if (node < 0)
            break;
        dev = sched__choose_devices(ss, w, node);
        if (sched__place(ss, w, k, node, dev) != SCHED_OK ||
            sched__decide(ss, SCHED_BIND, action, w, k, node, dev, -1) != SCHED_OK)
            break;
        placed++;
    }
    if (placed < pods || !sched__charge_within_caps(ss, w, pool)) {
        sched__rollback(ss, mark);
        return 0;
    }
    return 1;
}

/* How many pods of wl a node could hold if it were empty; rank: wl's
 * class table (NULL: every node allowed). */
static int64_t pods_when_empty(const struct sched_session *ss, const struct sched_workload *wl,
                               const int8_t *rank, int node)
{
    const struct ss_node *n = &ss->nodes[node];
    int64_t k = SS_BIG;

    if (!n->ready || (rank && rank[node] == 0))
        return 0;
    if (sched__whole(wl)) {
        k = n->n_gpus / wl->gpu_devices;
    } else if (wl->gpu_portion > 0 || wl->gpu_memory_mib > 0) {
        int shared = sched_shared_devices(wl);
        int32_t charge = sched__charge_on(wl, n->gpu_mem);
        if (charge > SCHED_MILLI || shared > n->n_gpus)
            return 0;
        k = (int64_t)n->n_gpus * (SCHED_MILLI / charge) / shared;
    }
    if (wl->cpu_milli > 0)
        k = ss_min(k, n->cpu_total / wl->cpu_milli);
    if (wl->mem_mib > 0)
        k = ss_min(k, n->mem_total / wl->mem_mib);
    return k;
}

int sched__node_can_host(const struct sched_session *ss, int w, int node)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];
    int shared = wl->gpu_portion > 0 || wl->gpu_memory_mib > 0;

    if (!n->ready || sched__node_rank(ss, w, node) == 0 || n->cpu_total < wl->cpu_milli ||
        n->mem_total < wl->mem_mib)
        return 0;
    if (!shared)
        return n->n_gpus >= wl->gpu_devices;
    return n->n_gpus >= sched_shared_devices(wl) && sched__charge_on(wl, n->gpu_mem) <= SCHED_MILLI;
}

int sched__pool_has_node_for(const struct sched_session *ss, int w, int pool)
{
    const struct ss_pool *p = &ss->pools[pool];
    int i;

    for (i = 0; i < p->n_nodes; i++)
        if (ss->nodes[p->nodes[i]].ready && sched__node_rank(ss, w, p->nodes[i]) > 0)
            return 1;
    return 0;
}

int sched__pool_can_ever_fit(const struct sched_session *ss, int w, int pool, int pods)
{
    const struct ss_pool *p = &ss->pools[pool];
    const struct sched_workload *wl = ss_w(ss, w);
    int c = ss->wl[w].cls;
    /* a class that excludes no node counts as none (the uniform pool's sum) */
    const int8_t *rank = c && !ss->class_rank[c][ss->n_nodes] ? ss->class_rank[c] : NULL;
    int64_t total = 0;
    int i;

    if (!rank && p->uniform) {
        /* every ready node holds as many, the others none: the same sum,
         * without the walk */
        int64_t k = p->n_ready > 0 ? pods_when_empty(ss, wl, rank, p->a_ready) : 0;
        return p->n_ready > 0 ? k >= ((int64_t)pods + p->n_ready - 1) / p->n_ready : pods <= 0;
    }
    for (i = 0; i < p->n_nodes && total < pods; i++)
        total += pods_when_empty(ss, wl, rank, p->nodes[i]);
    return total >= pods;
}
