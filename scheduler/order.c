/*
 * order.c: which workload an action tries next (kai-scheduling.md 2.4, 2.5).
 *
 * The queue tree is walked top-down: at every level the child whose best
 * pending workload wins the queue comparison is chosen; inside a leaf the
 * job order decides. After every attempt the path of the queue that
 * changed is compared again, so queues alternate as their shares move.
 *
 * Queue comparison (first decisive rule wins), each queue judged by its
 * figures in the pool of the workload it offers (where its pods run, else
 * the first of its pools), never by totals over pools:
 *   1. a queue not over its fair share before one that is; a queue is
 *      over only when it holds more than its fair share of GPU, CPU and
 *      memory alike (KAI's rule: with a resource left unconstrained it
 *      never decides);
 *   2. a queue whose allocation plus the workload stays within deserved
 *      (CPU and memory deserved 0 are not managed, as for non-preemptible
 *      work);
 *   3. the higher rank in that pool (rank, then over-quota priority);
 *   4. a queue that would hold a resource whose allocatable share is 0
 *      goes last;
 *   5. the smaller dominant share (allocated + workload) / allocatable,
 *      where allocatable = min(max(deserved, fair share), limit), or the
 *      pool's capacity when that is unbounded;
 *   6. the smaller dominant share without the workload;
 *   7. the older queue (lower index).
 * Job order inside a leaf: higher priority; gangs below their minimum,
 * then at it, then elastic growth; submitted earlier; name.
 *
 * Scheduling signatures: once a workload fails in an action, any later
 * workload of the same queue with the same shape (pools, node type,
 * requests, pods to place, preemptibility, priority) is skipped without
 * an attempt; resources only shrink within allocate, so it would fail too.
 *
 * Cost: the job order of every leaf is sorted once per cycle (where the
 * leaf's entries come in submission order, one counting pass by priority:
 * sort_leaf()); an action walks each leaf's list with a cursor (workloads
 * whose order changed during the cycle, elastic ones that grew, wait in a
 * small heap beside it), so an attempt costs O(1) in the leaf plus the
 * siblings along one path of the tree.
 *
 * Groups: the walk passes most entries by their candidate test, and that
 * test reads, besides the entry's own flags and pods still to place,
 * only what its signature holds and the placement state (ss->version,
 * which rollback restores: allocations, free capacity, lowest running
 * priorities, the pools' victim answers) and the hopeless table, whose
 * entries for one version only grow. So the list's entries are grouped
 * by signature when the order is built (order_cache.item_group, beside
 * the list, so the walk reads both in order), and a group
 * whose test failed in one state is passed in that state without testing
 * its other entries (order_cache.mark: a tag that names the walk and
 * the state it failed in); a
 * group whose signature failed an attempt is passed for the rest of the
 * action. An entry whose signature moved after the build (its pods were
 * placed: sig_refresh()) leaves its group and is tested alone. The walk
 * is the same; a settled cycle's walk costs a load and a compare for
 * most entries instead of their test.
 *
 * Whole tails passed at once: the walk passes every entry of a leaf's list
 * that fails its test, and never tests it again in that action. Where a
 * test fails for every entry from the cursor on, the cursor jumps to the
 * list's end, which is where the walk would have left it: reclaim, when
 * even the leaf's least request per pod would take its queue above its
 * fair share in every pool (least_ask); preempt, at the first entry whose
 * priority is not above the queue's lowest running one (the list is in
 * priority order, and group_ask answers without the entry).
 * Allocate passes a group without its entry too when no pool could take
 * its pods judging by the most any pool has (group_room: what the room
 * test asks of a pool, from the signature); a completion frees one pool,
 * and the groups of the pools still full are passed at the cost of a
 * load each. Preempt asks a group's shape test of its record (group_ask:
 * its priority, its pools and its ask, all the test reads of an entry
 * besides its own state) before its entry, so a group that fails it is
 * passed without reading any of its workloads.
 *
 * What a walk marks per workload and per group (a workload waiting in its
 * leaf's heap, a group's failure) lives in the order cache with the number
 * of the walk that wrote it (order_cache.walk, one per sched__iter_new();
 * a group's failure, with a tag no other walk has: struct ss_iter): a mark
 * of another walk reads as none, so a walk begins without clearing arrays
 * sized by the workloads and groups.
 */
#include "sched_int.h"

#include <string.h>

/* A failed signature: its hash and the workload that showed it (w + 1; 0 = empty). */
struct sig_entry {
    uint64_t hash;
    int w1;
};

/* What every action of a cycle shares: job keys, leaf lists in job order,
 * signature hashes. */
/* Room a built order leaves for n entries or workloads to grow by. */
#define ORDER_SLACK(n) ((size_t)(n) / 16 + 64)

struct order_cache {
    int64_t *key1, *key2;     /* [n_workloads] */
    uint64_t *sig;            /* [n_workloads] signature hashes */
    int *items;               /* candidates grouped by leaf, each leaf in job order */
    int *off, *cnt;           /* [n_queues] */
    int64_t *min_gpu;         /* [n_queues] least milli-GPU per pod over the leaf's list */
    int64_t *least_ask;       /* [2 * n_queues] reclaim's resource per pod, least over the
                                 leaf's list: [2q] GPU of entries asking GPU, [2q + 1] CPU
                                 of those asking none (SS_INF: no such entry) */
    int *min_gpu_n, *least_ask_n; /* beside min_gpu and least_ask: the entries at that least
                                 ask, so an entry that leaves makes it unknown only when it
                                 was the last there (sched__order_drop()) */
    int *item_group;          /* [n items] items[i]'s signature group; -1: none (tested alone) */
    struct group_ask *group_ask; /* [n_groups] what preempt's shape test asks of it */
    int *group_pools;         /* the pools of each group_ask, one run per group */
    struct group_room *group_room; /* [n_groups] what allocate's room test asks of a pool */
    int *pos_of;              /* [n_workloads] w's place in items, or -1 */
    int n_groups;
    int *changed;             /* workloads placed during the cycle */
    int n_changed, cap_changed;
    int cap_wls;              /* key1, key2, sig and pos_of hold this many workloads */
    int cap_items;            /* items and item_group hold this many entries */
    int *added;               /* submissions not yet in their leaf's list (sched__order_add()) */
    int n_added, cap_added;
    uint32_t walk;            /* the last walk begun on it (sched__iter_new()); 0: none */
    uint32_t *extra_walk;     /* [cap_wls] the walk w waits in its leaf's heap in */
    uint64_t *mark;           /* [-1..n_groups) each group's failure, a tag (struct
                                 ss_iter's fail_tag, state_tag); [-1], read for an
                                 entry tested alone (group -1), is 0: never one */
    uint64_t tags;            /* the tags handed out so far */
    int *holes;               /* [n_queues] entries sched__order_drop() left as holes (-1 in
                                 items) in the leaf's list */
    int *hole_from;           /* [n_queues] where the leaf's first hole is (holes[q] > 0) */
    uint8_t *asks_stale;      /* [n_queues] a hole was the last entry at a least ask */
    int n_holes;              /* over every leaf: 0 outside Step 6's drops */
};

/* What the queue comparison reads of queue q offering workload w, in the
 * pool of w, computed in one pass over the resources (figures_of()). */
struct figures {
    int over;               /* rule 1: above its fair share in every resource */
    int within;             /* rule 2: allocation plus w within deserved */
    int rank;               /* rule 3: the queue's rank in that pool */
    int zero_share;         /* rule 4: would hold what it may not hold at all */
    int64_t share_with;     /* rule 5: dominant share with w, then without */
    int64_t share_without;
};

/* What room_somewhere() asks of one of a group's pools for allocate,
 * from its signature: whole devices, `devices` on one node and `gpu` in
 * all (devices); a portion or GPU memory, `gpu` milli-GPU free in all
 * (devices -1); nothing to test (devices 0: CPU only). */
struct group_room {
    int devices;
    int64_t gpu;
};

/* What preempt's shape test (shape_is_candidate()) reads of an entry,
 * from its group's signature: its ask (its priority and what the hopeless
 * table compares; plain 0: a shape the table does not compare) and its
 * pools (the one its pods run in, else its list): group_pools[first_pool
 * .. + n_pools). */
struct group_ask {
    struct ss_ask ask;
    int plain;
    int first_pool, n_pools;
};

/* The most any pool offers to the room tests, in one placement state. */
struct pools_room {
    uint64_t version;         /* ss->version + 1 it was taken in; 0: none */
    int max_empty;
    int64_t total_empty, gpu_free;
};

struct leaf_heap {
    int *items;
    int n, cap;
};

struct ss_iter {
    struct sched_session *ss;
    struct sched_arena *arena; /* what it allocates from: ss->cycle_arena, else ss->arena */
    struct order_cache *oc;
    int action;
    int *cursor;              /* [n_queues] position in the leaf list */
    struct leaf_heap *extra;  /* [n_queues] workloads whose key changed */
    uint32_t walk;            /* its number: oc's marks of this walk are its own */
    /* A group's failure is marked with a tag (order_cache.mark) that no
     * other walk or state uses: fail_tag, its signature failed an attempt
     * in this walk; state_tag, its test failed in this walk in the state
     * ss->version + 1 == tag_version (a state seen again after another
     * gets a new tag: its groups are tested again, and fail again). One
     * number a group, so that passing one reads 8 bytes and compares
     * twice. */
    uint64_t fail_tag, state_tag, tag_version;
    int *head;                /* [n_queues + 1] best workload of the subtree, or -1; [n_queues] = root */
    int *roots;
    int n_roots;
    struct sig_entry *sigs;   /* open addressing, cap_sigs entries, grown at half load */
    int cap_sigs, n_sigs;
    struct pools_room room;   /* the pools' best for the room tests (pools_best()) */
    struct figures *fig;      /* [n_queues] the queue's figures for fig_w in state fig_version */
    int *fig_w;
    uint64_t *fig_version;
};

/* ---- Job order ---- */

static int elastic_state(const struct sched_session *ss, int w)
{
    int placed = ss->wl[w].n_placed, min = ss_w(ss, w)->min_pods;
    return placed < min ? 0 : placed == min ? 1 : 2;
}

/* Job order as an integer pair: priority (higher first) and elastic
 * state, then the submission sequence; the index breaks what is left. */
static void job_key(struct order_cache *oc, const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);

    oc->key1[w] = ((int64_t)(INT32_MAX - (int64_t)wl->priority) << 2) | elastic_state(ss, w);
    oc->key2[w] = wl->queued_seq;
}

static int job_before(const void *ctx, int a, int b)
{
    const struct order_cache *oc = ctx;

    if (oc->key1[a] != oc->key1[b])
        return oc->key1[a] < oc->key1[b];
    if (oc->key2[a] != oc->key2[b])
        return oc->key2[a] < oc->key2[b];
    return a < b;
}

/* At most this many distinct key1 values for sort_leaf()'s counting pass. */
#define LEAF_KEY1S 8

/* Whether a leaf's entries, as listed, already ascend by submission
 * sequence then index (job_before() without key1). */
static int seq_ascends(const struct order_cache *oc, const int *a, int n)
{
    int i;

    for (i = 1; i < n; i++)
        if (oc->key2[a[i - 1]] > oc->key2[a[i]] ||
            (oc->key2[a[i - 1]] == oc->key2[a[i]] && a[i - 1] > a[i]))
            return 0;
    return 1;
}

/* Adds v to the sorted distinct values k[0..*n) where it is new; 0 when
 * it is new and there are LEAF_KEY1S already. */
static int key1_note(int64_t *k, int *n, int64_t v)
{
    int i, j;

    for (i = 0; i < *n && k[i] < v; i++)
        ;
    if (i < *n && k[i] == v)
        return 1;
    if (*n == LEAF_KEY1S)
        return 0;
    for (j = (*n)++; j > i; j--)
        k[j] = k[j - 1];
    k[i] = v;
    return 1;
}

/* Puts a leaf's entries in job order (job_before(), a total order, so
 * any correct sort gives the same list). A leaf lists its entries by
 * index, and where their submission sequences ascend with it (a queue's
 * workloads in the order they were submitted) job order is key1 alone,
 * kept stable: a counting pass over the few key1 values (priority and
 * elastic state) instead of a merge sort's n log n comparisons. */
static int sort_leaf(struct sched_arena *arena, struct order_cache *oc, int *a, int n)
{
    int64_t k[LEAF_KEY1S], last;
    int at[LEAF_KEY1S + 1] = {0}, n_k = 0, i, s, *tmp;
    uint8_t *slot;

    if (n < 2)
        return SCHED_OK;
    if (!seq_ascends(oc, a, n))
        return sched__sort(arena, a, n, job_before, oc);
    last = oc->key1[a[0]];
    key1_note(k, &n_k, last);
    for (i = 1; i < n; i++)
        if (oc->key1[a[i]] != last && !key1_note(k, &n_k, last = oc->key1[a[i]]))
            return sched__sort(arena, a, n, job_before, oc);
    if (n_k == 1)
        return SCHED_OK;
    tmp = sched__array_raw(arena, (size_t)n, sizeof(int));
    slot = sched__array_raw(arena, (size_t)n, 1);
    if (!tmp || !slot)
        return SCHED_ENOMEM;
    for (i = 0; i < n; i++) {
        for (s = 0; k[s] != oc->key1[a[i]]; s++)
            ;
        slot[i] = (uint8_t)s;
        at[s + 1]++;
    }
    for (s = 1; s <= n_k; s++)
        at[s] += at[s - 1];
    for (i = 0; i < n; i++)
        tmp[at[slot[i]]++] = a[i];
    memcpy(a, tmp, sizeof(int) * (size_t)n);
    return SCHED_OK;
}

static int heap_push(struct ss_iter *it, struct leaf_heap *h, int w)
{
    int i;

    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        int *items = sched__calloc(it->arena, (size_t)cap, sizeof(int));
        if (!items)
            return SCHED_ENOMEM;
        if (h->n)
            memcpy(items, h->items, sizeof(int) * (size_t)h->n);
        h->items = items;
        h->cap = cap;
    }
    for (i = h->n++; i > 0; i = (i - 1) / 2) {
        int parent = (i - 1) / 2;
        if (!job_before(it->oc, w, h->items[parent]))
            break;
        h->items[i] = h->items[parent];
    }
    h->items[i] = w;
    return SCHED_OK;
}

static void heap_pop(struct ss_iter *it, struct leaf_heap *h)
{
    int i = 0, x;

    if (h->n == 0)
        return;
    x = h->items[--h->n];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && job_before(it->oc, h->items[c + 1], h->items[c]))
            c++;
        if (!job_before(it->oc, h->items[c], x))
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->n > 0)
        h->items[i] = x;
}

/* ---- Queue order ---- */

/* The pool whose figures order workload w: where its pods run, else the
 * first of its pools. */
static int order_pool(const struct sched_session *ss, int w)
{
    const struct ss_wl *x = &ss->wl[w];

    return x->pool >= 0 ? x->pool : x->n_pools > 0 ? x->pools[0] : 0;
}

static int64_t share_ppm(int64_t v, int64_t allocatable)
{
    if (v <= 0)
        return 0;
    if (allocatable <= 0)
        return SS_INF;
    if (v <= INT64_MAX / 1000000)  /* the usual case, without 128-bit division */
        return v * 1000000 / allocatable;
    return (int64_t)((__int128)v * 1000000 / allocatable);
}

/* What queue q may hold of resource r in pool p before it is over: its
 * allocatable share, the pool's capacity when that is unbounded. */
static int64_t allocatable_in(const struct sched_session *ss, const struct ss_qp *a, int p, int r)
{
    int64_t v = sched__allocatable(a, r);

    return v >= SS_BIG ? ss_max(ss->pools[p].capacity[r], 1) : v;
}


static void figures_of(const struct sched_session *ss, int q, int w, struct figures *f)
{
    int p = order_pool(ss, w), pods = sched__pods_to_place(ss, w), r;
    const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p];

    memset(f, 0, sizeof(*f));
    f->over = 1;
    f->within = 1;
    f->rank = sched__rank(ss, q, p);
    for (r = 0; r < SCHED_NRES; r++) {
        int64_t want = ss->wl[w].req[r] * pods, bound = sched__np_bound(a, r);
        int64_t allocatable = allocatable_in(ss, a, p, r);
        if (a->alloc[r] <= a->fair[r])
            f->over = 0;
        if (want > 0 && bound != SS_INF && a->alloc[r] + want > bound)
            f->within = 0;
        if (a->alloc[r] + want > 0 && sched__allocatable(a, r) == 0)
            f->zero_share = 1;
        f->share_with = ss_max(f->share_with, share_ppm(a->alloc[r] + want, allocatable));
        f->share_without = ss_max(f->share_without, share_ppm(a->alloc[r], allocatable));
    }
}

/* Queue qa, judged by fa, before queue qb, judged by fb (rules 1-7). */
static int figures_before(const struct figures *fa, int qa, const struct figures *fb, int qb)
{
    if (fa->over != fb->over)
        return !fa->over;
    if (fa->within != fb->within)
        return fa->within;
    if (fa->rank != fb->rank)
        return fa->rank > fb->rank;
    if (fa->zero_share != fb->zero_share)
        return fb->zero_share;
    if (fa->share_with != fb->share_with)
        return fa->share_with < fb->share_with;
    if (fa->share_without != fb->share_without)
        return fa->share_without < fb->share_without;
    return qa < qb;
}

/* Queue q's figures for its head w. They depend on the placement state
 * alone (allocations, pods placed; fair shares are fixed for the cycle),
 * which ss->version names, so they are kept until either changes. */
static const struct figures *figures_for(struct ss_iter *it, int q, int w)
{
    if (it->fig_w[q] != w || it->fig_version[q] != it->ss->version) {
        figures_of(it->ss, q, w, &it->fig[q]);
        it->fig_w[q] = w;
        it->fig_version[q] = it->ss->version;
    }
    return &it->fig[q];
}

/* The best of queues qs[0..n) by their heads (-1 when none has one). */
static int best_queue(struct ss_iter *it, const int *qs, int n)
{
    const struct figures *best_f = NULL, *f;
    int i, best = -1;

    for (i = 0; i < n; i++) {
        int c = qs[i];
        if (it->head[c] < 0)
            continue;
        f = figures_for(it, c, it->head[c]);
        if (best < 0 || figures_before(f, c, best_f, best)) {
            best = c;
            best_f = f;
        }
    }
    return best;
}

/* ---- Signatures ---- */

/* A workload's signature hash: what sig_same() compares, field by field
 * (queue, fixed pool, pools, node type, requests, pods to place,
 * preemptibility, priority). */
static uint64_t sig_hash(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    uint64_t h = SS_FNV_BASIS;

    h = ss_fnv(h, wl->queue);
    h = ss_fnv(h, x->pool);
    h = ss_fnv(h, x->n_pools);
    h = ss_fnv(h, wl->gpu_devices);
    h = ss_fnv(h, sched__pods_to_place(ss, w));
    h = ss_fnv(h, wl->preemptible);
    h = ss_fnv(h, wl->priority);
    h = ss_fnv(h, wl->gpu_portion);
    h = ss_fnv(h, wl->cpu_milli);
    h = ss_fnv(h, wl->mem_mib);
    h = ss_fnv(h, wl->gpu_memory_mib);
    h = ss_fnv(h, x->cls);
    return ss_fnv_ints(h, x->pools, x->n_pools);
}

static void sig_refresh(struct sched_session *ss, struct order_cache *oc, int w)
{
    oc->sig[w] = sig_hash(ss, w);
    if (oc->pos_of && oc->pos_of[w] >= 0)
        oc->item_group[oc->pos_of[w]] = -1;  /* it may have moved: tested alone from now on */
}

/* Same signature as workload b? (Field by field, no struct built.) */
static int sig_same(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *wa = ss_w(ss, a), *wb = ss_w(ss, b);
    const struct ss_wl *xa = &ss->wl[a], *xb = &ss->wl[b];

    if (wa->queue != wb->queue || xa->pool != xb->pool || xa->n_pools != xb->n_pools ||
        wa->gpu_devices != wb->gpu_devices || wa->gpu_portion != wb->gpu_portion ||
        wa->cpu_milli != wb->cpu_milli || wa->mem_mib != wb->mem_mib ||
        wa->preemptible != wb->preemptible || wa->priority != wb->priority ||
        sched__pods_to_place(ss, a) != sched__pods_to_place(ss, b) ||
        (a != b && (sched__topo_fixed(ss, a) || sched__topo_fixed(ss, b))))
        return 0;
    if (xa->pools != xb->pools &&
        memcmp(xa->pools, xb->pools, sizeof(int) * (size_t)xa->n_pools) != 0)
        return 0;
    return wa->gpu_memory_mib == wb->gpu_memory_mib && ss->wl[a].cls == ss->wl[b].cls;
}

/* Slot of workload w's signature: where it is, or the empty slot where it would go. */
static int sig_slot(const struct ss_iter *it, int w)
{
    uint64_t h = it->oc->sig[w];
    int mask = it->cap_sigs - 1, i = (int)(h & (uint64_t)mask);

    while (it->sigs[i].w1 && !(it->sigs[i].hash == h && sig_same(it->ss, it->sigs[i].w1 - 1, w)))
        i = (i + 1) & mask;
    return i;
}

int sched__iter_seen_failure(struct ss_iter *it, int w)
{
    if (it->n_sigs == 0)
        return 0;
    return it->sigs[sig_slot(it, w)].w1 != 0;
}

static int sig_grow(struct ss_iter *it)
{
    struct sig_entry *old = it->sigs;
    int old_cap = it->cap_sigs, i;

    it->cap_sigs = old_cap ? old_cap * 2 : 256;
    it->sigs = sched__calloc(it->arena, (size_t)it->cap_sigs, sizeof(*it->sigs));
    if (!it->sigs)
        return SCHED_ENOMEM;
    for (i = 0; i < old_cap; i++) {
        int mask = it->cap_sigs - 1, j;
        if (!old[i].w1)
            continue;
        for (j = (int)(old[i].hash & (uint64_t)mask); it->sigs[j].w1; j = (j + 1) & mask)
            ;
        it->sigs[j] = old[i];
    }
    return SCHED_OK;
}

/* Remembers w's signature as a failure (without room, later tries just happen). */
static void sig_remember(struct ss_iter *it, int w)
{
    int i;

    if (2 * (it->n_sigs + 1) > it->cap_sigs && sig_grow(it) != SCHED_OK) {
        it->ss->oom = 1;
        return;
    }
    i = sig_slot(it, w);
    if (!it->sigs[i].w1) {
        it->sigs[i].hash = it->oc->sig[w];
        it->sigs[i].w1 = w + 1;
        it->n_sigs++;
    }
}

/* ---- Candidates ---- */

/* Reclaim needs the queue below its fair share in one of the workload's
 * pools, and both need a pool where victims may exist at all. */
static int may_evict_somewhere(struct sched_session *ss, int w, int action)
{
    const struct ss_wl *x = &ss->wl[w];
    int q = ss_w(ss, w)->queue, r = x->req[SCHED_GPU] > 0 ? SCHED_GPU : SCHED_CPU, i;

    for (i = 0; i < x->n_pools || (x->pool >= 0 && i == 0); i++) {
        int p = x->pool >= 0 ? x->pool : x->pools[i];
        const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p];
        if ((action != SCHED_ACT_RECLAIM || a->alloc[r] + x->req[r] <= a->fair[r]) &&
            sched__may_evict_for(ss, w, p, action))
            return 1;
        if (x->pool >= 0)
            break;
    }
    return 0;
}

/* Allocate and consolidate need room in one of the workload's pools:
 * enough empty devices (allocate) or enough free GPU in total (consolidate). */
static int room_somewhere(const struct sched_session *ss, int w, int action)
{
    const struct ss_wl *x = &ss->wl[w];
    int pods = sched__pods_to_place(ss, w), i;

    for (i = 0; i < x->n_pools || (x->pool >= 0 && i == 0); i++) {
        int p = x->pool >= 0 ? x->pool : x->pools[i];
        if (action == SCHED_ACT_ALLOCATE ? sched__pool_may_fit(ss, w, p, pods)
                                         : ss->pools[p].gpu_free >= x->req[SCHED_GPU] * pods)
            return 1;
        if (x->pool >= 0)
            break;
    }
    return 0;
}

/* The candidate test's part that reads the workload's own state. */
static int entry_may_run(const struct sched_session *ss, int w)
{
    const struct ss_wl *x = &ss->wl[w];

    return (x->flags & WL_CANDIDATE) && !(x->flags & (WL_EVICTED | WL_SHRUNK)) &&
           sched__pods_to_place(ss, w) > 0;
}

/* The rest: what the signature holds, against the placement state. */
static int shape_is_candidate(struct sched_session *ss, int w, int action)
{
    if (action == SCHED_ACT_CONSOLIDATE)  /* a gang below its minimum, or elastic growth */
        return ss_w(ss, w)->preemptible && room_somewhere(ss, w, action);
    if (action == SCHED_ACT_RECLAIM)
        return may_evict_somewhere(ss, w, action);
    if (action == SCHED_ACT_PREEMPT)
        return ss_w(ss, w)->priority > ss->queues[ss_w(ss, w)->queue].min_running_priority &&
               may_evict_somewhere(ss, w, action);
    return room_somewhere(ss, w, action);
}

int sched__is_candidate(struct sched_session *ss, int w, int action)
{
    return entry_may_run(ss, w) && shape_is_candidate(ss, w, action);
}

/* ---- The per-cycle cache ---- */

/* What allocate's room test (sched__pool_may_fit()) asks of a pool for
 * w's signature: the fields it reads, all part of the signature. */
static void note_group_room(struct group_room *r, const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int64_t pods = sched__pods_to_place(ss, w);

    r->devices = 0;
    r->gpu = 0;
    if (sched__whole(wl)) {
        r->devices = wl->gpu_devices;
        r->gpu = pods * wl->gpu_devices;
    } else if (wl->gpu_portion > 0 || wl->gpu_memory_mib > 0) {
        r->devices = -1;
        r->gpu = ss->wl[w].req[SCHED_GPU] * pods;
    }
}

/* Each group's records, read from its first workload (rep[g]): what
 * allocate's room test and preempt's shape test ask of it, and the pools
 * of the latter in one run per group (group_pools). */
static int describe_groups(struct sched_session *ss, struct order_cache *oc, const int *rep)
{
    int g, k, n_pools = 0;

    for (g = 0; g < oc->n_groups; g++) {
        const struct ss_wl *x = &ss->wl[rep[g]];
        n_pools += x->pool >= 0 ? 1 : x->n_pools;
    }
    oc->group_ask = sched__alloc(ss->arena, sizeof(struct group_ask) * ((size_t)oc->n_groups + 1));
    oc->group_room =
        sched__alloc(ss->arena, sizeof(struct group_room) * ((size_t)oc->n_groups + 1));
    oc->group_pools = sched__alloc(ss->arena, sizeof(int) * ((size_t)n_pools + 1));
    if (!oc->group_ask || !oc->group_room || !oc->group_pools)
        return SCHED_ENOMEM;
    for (g = 0, n_pools = 0; g < oc->n_groups; g++) {
        const struct ss_wl *x = &ss->wl[rep[g]];
        struct group_ask *r = &oc->group_ask[g];
        note_group_room(&oc->group_room[g], ss, rep[g]);
        r->plain = sched__ask_of(ss, rep[g], sched__pods_to_place(ss, rep[g]), &r->ask);
        r->first_pool = n_pools;
        r->n_pools = x->pool >= 0 ? 1 : x->n_pools;
        for (k = 0; k < r->n_pools; k++)
            oc->group_pools[n_pools++] = x->pool >= 0 ? x->pool : x->pools[k];
    }
    return SCHED_OK;
}

/* The signatures of the list's entries, found in workload order as the
 * entries are filed (struct sig_table): each entry's workload is read
 * while the filing has it in cache, where the list's own order, once
 * sorted, reads them at random (sig_same() compares the fields of two
 * workloads). Each signature gets a provisional number (sig_note());
 * group_entries() then numbers the groups by their first entry in the
 * list's order, as the list read in that order would. */
struct sig_table {
    int mask;
    int *first;        /* open addressing by signature hash: a signature's first workload + 1 */
    int *id;           /* its provisional number */
    int *prov;         /* [workloads] each entry's provisional number */
    int n_prov;
};

static int sig_table_init(struct sched_session *ss, const struct order_cache *oc,
                          struct sig_table *t, int n)
{
    int cap = 16;

    while (cap < 2 * n + 2)
        cap *= 2;
    t->mask = cap - 1;
    t->n_prov = 0;
    t->first = sched__calloc(ss->arena, (size_t)cap, sizeof(int));
    t->id = sched__array_raw(ss->arena, (size_t)cap, sizeof(int));
    t->prov = sched__array_raw(ss->arena, (size_t)oc->cap_wls, sizeof(int));
    return t->first && t->id && t->prov ? SCHED_OK : SCHED_ENOMEM;
}

/* Entry w's provisional number: its signature's (sig_same). */
static void sig_note(const struct sched_session *ss, const struct order_cache *oc,
                     struct sig_table *t, int w)
{
    int slot = (int)(oc->sig[w] & (uint64_t)t->mask);

    while (t->first[slot] &&
           !(oc->sig[t->first[slot] - 1] == oc->sig[w] && sig_same(ss, t->first[slot] - 1, w)))
        slot = (slot + 1) & t->mask;
    if (!t->first[slot]) {
        t->first[slot] = w + 1;
        t->id[slot] = t->n_prov++;
    }
    t->prov[w] = t->id[slot];
}

/* Numbers the list's n entries by signature: one group per signature, its
 * number by its first entry in the list's order, beside each entry in
 * item_group; pos_of places each entry. */
static int group_entries(struct sched_session *ss, struct order_cache *oc,
                         const struct sig_table *t, int n)
{
    int *number;       /* [n_prov]: each provisional number's group, -1: none yet */
    int *rep;          /* [n]: each group's first workload */
    int w, i, g;

    number = sched__array_raw(ss->arena, (size_t)t->n_prov + 1, sizeof(int));
    rep = sched__alloc(ss->arena, sizeof(int) * ((size_t)n + 1));
    oc->item_group = sched__array_raw(ss->arena, (size_t)oc->cap_items, sizeof(int));
    oc->pos_of = sched__array_raw(ss->arena, (size_t)oc->cap_wls, sizeof(int));
    if (!number || !rep || !oc->item_group || !oc->pos_of)
        return SCHED_ENOMEM;
    for (g = 0; g < t->n_prov; g++)
        number[g] = -1;
    for (w = 0; w < ss->n_workloads; w++)
        oc->pos_of[w] = -1;
    for (i = 0; i < n; i++) {
        w = oc->items[i];
        oc->pos_of[w] = i;
        g = t->prov[w];
        if (number[g] < 0) {
            number[g] = oc->n_groups;
            rep[oc->n_groups++] = w;
        }
        oc->item_group[i] = number[g];
    }
    return describe_groups(ss, oc, rep);
}

/* A least ask *least, held by *n entries, takes an entry asking v. */
static void note_least(int64_t *least, int *n, int64_t v)
{
    if (v < *least) {
        *least = v;
        *n = 1;
    } else if (v == *least) {
        (*n)++;
    }
}

/* least_ask's index for w in leaf q: the resource reclaim measures w's
 * request per pod by (may_evict_somewhere(): GPU if it asks any, else
 * CPU), and that request in *v. */
static int least_ask_at(const struct sched_session *ss, int w, int q, int64_t *v)
{
    const int64_t *req = ss->wl[w].req;
    int gpu = req[SCHED_GPU] > 0;

    *v = req[gpu ? SCHED_GPU : SCHED_CPU];
    return gpu ? 2 * q : 2 * q + 1;
}

/* Leaf q's least asks (min_gpu, least_ask) take entry w into account. */
static void note_leaf_asks(struct order_cache *oc, const struct sched_session *ss, int w, int q)
{
    int64_t v;
    int k = least_ask_at(ss, w, q, &v);

    note_least(&oc->min_gpu[q], &oc->min_gpu_n[q], ss->wl[w].req[SCHED_GPU]);
    note_least(&oc->least_ask[k], &oc->least_ask_n[k], v);
}

/* Leaf q's least asks without entry w, which they took into account:
 * 1 when w was the last entry at one of them (it must be found again). */
static int leaf_asks_lose(struct order_cache *oc, const struct sched_session *ss, int w, int q)
{
    int64_t v, gpu = ss->wl[w].req[SCHED_GPU];
    int k = least_ask_at(ss, w, q, &v), gone = 0;

    if (gpu <= oc->min_gpu[q])
        gone |= gpu < oc->min_gpu[q] || --oc->min_gpu_n[q] <= 0;
    if (v <= oc->least_ask[k])
        gone |= v < oc->least_ask[k] || --oc->least_ask_n[k] <= 0;
    return gone;
}

static struct order_cache *cache_build(struct sched_session *ss)
{
    struct order_cache *oc = sched__calloc(ss->arena, 1, sizeof(*oc));
    /* room for the submissions of many cycles (sched__order_add()) */
    size_t nw = (size_t)ss->n_workloads + 1 + ORDER_SLACK(ss->n_workloads),
           nq = (size_t)ss->n_queues + 1;
    struct sig_table sigs;
    int w, q, n = 0, at = 0;

    if (!oc)
        return NULL;
    oc->key1 = sched__calloc(ss->arena, nw, sizeof(int64_t));
    oc->key2 = sched__calloc(ss->arena, nw, sizeof(int64_t));
    oc->sig = sched__calloc(ss->arena, nw, sizeof(uint64_t));
    oc->off = sched__calloc(ss->arena, nq, sizeof(int));
    oc->cnt = sched__calloc(ss->arena, nq, sizeof(int));
    oc->min_gpu = sched__calloc(ss->arena, nq, sizeof(int64_t));
    oc->least_ask = sched__calloc(ss->arena, 2 * nq, sizeof(int64_t));
    oc->min_gpu_n = sched__calloc(ss->arena, nq, sizeof(int));
    oc->least_ask_n = sched__calloc(ss->arena, 2 * nq, sizeof(int));
    oc->holes = sched__calloc(ss->arena, nq, sizeof(int));
    oc->hole_from = sched__calloc(ss->arena, nq, sizeof(int));
    oc->asks_stale = sched__calloc(ss->arena, nq, 1);
    if (!oc->key1 || !oc->key2 || !oc->sig || !oc->off || !oc->cnt || !oc->min_gpu ||
        !oc->least_ask || !oc->min_gpu_n || !oc->least_ask_n || !oc->holes || !oc->hole_from ||
        !oc->asks_stale)
        return NULL;
    for (q = 0; q < ss->n_queues; q++)
        oc->min_gpu[q] = oc->least_ask[2 * q] = oc->least_ask[2 * q + 1] = SS_INF;
    for (w = 0; w < ss->n_workloads; w++)
        if ((ss->wl[w].flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0) {
            oc->cnt[ss_w(ss, w)->queue]++;
            n++;
        }
    oc->cap_items = n + 1 + n / 2 + ORDER_SLACK(n);   /* lists merged past the end (merge_added()) */
    oc->items = sched__calloc(ss->arena, (size_t)oc->cap_items, sizeof(int));
    if (!oc->items)
        return NULL;
    oc->cap_wls = (int)nw;
    if (sig_table_init(ss, oc, &sigs, n) != SCHED_OK)
        return NULL;
    for (q = 0; q < ss->n_queues; q++) {
        oc->off[q] = at;
        at += oc->cnt[q];
        oc->cnt[q] = 0;
    }
    for (w = 0; w < ss->n_workloads; w++)
        if ((ss->wl[w].flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0) {
            q = ss_w(ss, w)->queue;
            oc->items[oc->off[q] + oc->cnt[q]++] = w;
            note_leaf_asks(oc, ss, w, q);
            job_key(oc, ss, w);
            sig_refresh(ss, oc, w);
            sig_note(ss, oc, &sigs, w);
        }
    for (q = 0; q < ss->n_queues; q++)
        if (sort_leaf(ss->arena, oc, oc->items + oc->off[q], oc->cnt[q]) != SCHED_OK)
            return NULL;
    if (group_entries(ss, oc, &sigs, n) != SCHED_OK)
        return NULL;
    oc->extra_walk = sched__calloc(ss->arena, nw, sizeof(uint32_t));
    oc->mark = sched__calloc(ss->arena, (size_t)oc->n_groups + 2, sizeof(uint64_t));
    if (!oc->extra_walk || !oc->mark)
        return NULL;
    oc->mark++;   /* mark[-1] stays 0 */
    return oc;
}

/* The job order a kept session carries to the next cycle without workload
 * w (memo.c Step 6: the cycle placed every pod w wanted, and the driver
 * applied it): w leaves its leaf's list as a hole, closed with every other
 * hole of the leaf by sched__order_drops_done(), which also finds the
 * leaf's least asks again where a hole was the last entry at one; the order is then
 * the one cache_build() sorts from the new snapshot (the others' keys and
 * signatures read their own fields and pods, none of which moved; group
 * numbers differ, the groups' members do not). A cycle places many
 * workloads of one leaf (a fill): one pass over the leaf closes them all,
 * where moving the entries after each one and reading the leaf again per
 * entry cost the leaf's length per workload placed. Also ends the cycle's
 * list of changed workloads (every one of them a placed w). 0: the order
 * cannot be kept (w still wants pods, or is not in it). */
int sched__order_drop(struct sched_session *ss, int w)
{
    struct order_cache *oc = ss->order_cache;
    int q;

    if (!oc || !oc->pos_of || w >= ss->n_workloads || oc->pos_of[w] < 0 ||
        ((ss->wl[w].flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0))
        return 0;
    q = ss_w(ss, w)->queue;
    if (oc->holes[q] == 0 || oc->pos_of[w] < oc->hole_from[q])
        oc->hole_from[q] = oc->pos_of[w];
    oc->items[oc->pos_of[w]] = -1;
    oc->pos_of[w] = -1;
    oc->holes[q]++;
    oc->n_holes++;
    oc->asks_stale[q] |= leaf_asks_lose(oc, ss, w, q);
    oc->n_changed = 0;
    return 1;
}

/* Leaf q's list without its holes: the entries after each move up with
 * their groups, in one pass from the first hole. */
static void close_holes(struct order_cache *oc, int q)
{
    int end = oc->off[q] + oc->cnt[q], i, to;

    for (i = to = oc->hole_from[q]; i < end; i++) {
        if (oc->items[i] < 0)
            continue;
        oc->items[to] = oc->items[i];
        oc->item_group[to] = oc->item_group[i];
        oc->pos_of[oc->items[to]] = to;
        to++;
    }
    oc->cnt[q] -= oc->holes[q];
    oc->holes[q] = 0;
}

void sched__order_drops_done(struct sched_session *ss)
{
    struct order_cache *oc = ss->order_cache;
    int q, i, stale = 0;

    if (!oc || oc->n_holes == 0)
        return;
    for (q = 0; q < ss->n_queues; q++) {
        if (oc->holes[q] > 0)
            close_holes(oc, q);
        if (!oc->asks_stale[q])
            continue;
        stale = 1;
        oc->min_gpu[q] = oc->least_ask[2 * q] = oc->least_ask[2 * q + 1] = SS_INF;
        oc->min_gpu_n[q] = oc->least_ask_n[2 * q] = oc->least_ask_n[2 * q + 1] = 0;
        for (i = oc->off[q]; i < oc->off[q] + oc->cnt[q]; i++)
            note_leaf_asks(oc, ss, oc->items[i], q);
    }
    for (i = 0; stale && i < oc->n_added; i++) {
        q = ss_w(ss, oc->added[i])->queue;
        if (oc->asks_stale[q])
            note_leaf_asks(oc, ss, oc->added[i], q);
    }
    memset(oc->asks_stale, 0, (size_t)ss->n_queues);
    oc->n_holes = 0;
}

/* ---- Submissions into a kept order ----
 * A kept session that takes submissions (memo.c Steps 2, 3 and 7) keeps
 * its job order: each new candidate wanting pods gets its key, signature
 * and place in its leaf's least asks at once (sched__order_add()), and
 * waits in `added` until the next walk needs the lists; merge_added() then
 * puts every waiting entry into its leaf's list in one pass over the
 * lists, tested alone (item_group -1: its group is not looked up). The
 * lists are then in the order cache_build() sorts from the same snapshot
 * (each leaf's entries by job_before(), a total order); only the grouping
 * differs, and a group changes the walk's cost, never its course. A
 * workload the kept cycle evicted whole joins the same way (memo.c Step 6,
 * sched__order_join()). */

/* key1, key2, sig and pos_of hold `need` workloads. */
static int grow_workloads(struct sched_session *ss, struct order_cache *oc, int need)
{
    int cap = oc->cap_wls * 2 > need ? oc->cap_wls * 2 : need;
    int64_t *key1, *key2;
    uint64_t *sig;
    int *pos_of;
    uint32_t *extra_walk;

    if (need <= oc->cap_wls)
        return SCHED_OK;
    key1 = sched__calloc(ss->arena, (size_t)cap, sizeof(int64_t));
    key2 = sched__calloc(ss->arena, (size_t)cap, sizeof(int64_t));
    sig = sched__calloc(ss->arena, (size_t)cap, sizeof(uint64_t));
    pos_of = sched__array_raw(ss->arena, (size_t)cap, sizeof(int));
    extra_walk = sched__calloc(ss->arena, (size_t)cap, sizeof(uint32_t));
    if (!key1 || !key2 || !sig || !pos_of || !extra_walk)
        return SCHED_ENOMEM;
    memcpy(key1, oc->key1, sizeof(int64_t) * (size_t)oc->cap_wls);
    memcpy(key2, oc->key2, sizeof(int64_t) * (size_t)oc->cap_wls);
    memcpy(sig, oc->sig, sizeof(uint64_t) * (size_t)oc->cap_wls);
    memcpy(pos_of, oc->pos_of, sizeof(int) * (size_t)oc->cap_wls);
    memcpy(extra_walk, oc->extra_walk, sizeof(uint32_t) * (size_t)oc->cap_wls);
    oc->key1 = key1;
    oc->key2 = key2;
    oc->sig = sig;
    oc->pos_of = pos_of;
    oc->extra_walk = extra_walk;
    oc->cap_wls = cap;
    return SCHED_OK;
}

/* w, a candidate wanting pods that is in no list, waits to be put in. */
static int take_entry(struct sched_session *ss, struct order_cache *oc, int w)
{
    if (sched__ints_room(ss->arena, &oc->added, &oc->cap_added, oc->n_added, oc->n_added + 1,
                         16) != SCHED_OK)
        return SCHED_ENOMEM;
    oc->added[oc->n_added++] = w;
    job_key(oc, ss, w);
    sig_refresh(ss, oc, w);
    note_leaf_asks(oc, ss, w, ss_w(ss, w)->queue);
    return SCHED_OK;
}

int sched__order_add(struct sched_session *ss, int first)
{
    struct order_cache *oc = ss->order_cache;
    int w;

    if (!oc || !oc->pos_of || grow_workloads(ss, oc, ss->n_workloads + 1) != SCHED_OK)
        return 0;
    for (w = first; w < ss->n_workloads; w++) {
        oc->pos_of[w] = -1;
        if ((ss->wl[w].flags & WL_CANDIDATE) && sched__pods_to_place(ss, w) > 0 &&
            take_entry(ss, oc, w) != SCHED_OK)
            return 0;
    }
    return 1;
}

/* memo.c Step 6: w, evicted whole by the kept cycle, wants its pods again
 * (sched__session_rejoin_evicted() built it pending): it waits to be put
 * into its leaf's list as a submission does. 0: the order cannot be kept
 * (w is in a list already, or no room). */
int sched__order_join(struct sched_session *ss, int w)
{
    struct order_cache *oc = ss->order_cache;
    int i;

    if (!oc || !oc->pos_of || w >= oc->cap_wls || oc->pos_of[w] >= 0)
        return 0;
    for (i = 0; i < oc->n_added; i++)
        if (oc->added[i] == w)
            return 0;
    if (!(ss->wl[w].flags & WL_CANDIDATE) || sched__pods_to_place(ss, w) <= 0)
        return 1;
    return take_entry(ss, oc, w) == SCHED_OK;
}

struct added_ctx {
    const struct sched_session *ss;
    const struct order_cache *oc;
};

/* By leaf, then job order. */
static int added_before(const void *ctx, int a, int b)
{
    const struct added_ctx *c = ctx;
    int qa = ss_w(c->ss, a)->queue, qb = ss_w(c->ss, b)->queue;

    return qa != qb ? qa < qb : job_before(c->oc, a, b);
}

/* items and item_group hold `need` entries (the lists keep their places). */
static int grow_items(struct sched_session *ss, struct order_cache *oc, int need)
{
    int cap = oc->cap_items * 2 > need ? oc->cap_items * 2 : need;
    int *items, *group;

    if (need <= oc->cap_items)
        return SCHED_OK;
    items = sched__alloc(ss->arena, sizeof(int) * (size_t)cap);
    group = sched__alloc(ss->arena, sizeof(int) * (size_t)cap);
    if (!items || !group)
        return SCHED_ENOMEM;
    memcpy(items, oc->items, sizeof(int) * (size_t)oc->cap_items);
    memcpy(group, oc->item_group, sizeof(int) * (size_t)oc->cap_items);
    oc->items = items;
    oc->item_group = group;
    oc->cap_items = cap;
    return SCHED_OK;
}

/* Where the lists end in items[] (they lie in any order, with gaps). */
static int lists_end(const struct order_cache *oc, int n_queues)
{
    int q, end = 0;

    for (q = 0; q < n_queues; q++)
        if (oc->off[q] + oc->cnt[q] > end)
            end = oc->off[q] + oc->cnt[q];
    return end;
}

static int off_before(const void *ctx, int a, int b)
{
    const struct order_cache *oc = ctx;

    return oc->off[a] < oc->off[b];
}

/* The lists moved down to the start of items[], in the order they lie,
 * each with its groups (no gap left between them); returns their end. */
static int pack_lists(struct sched_session *ss, struct order_cache *oc, struct sched_arena *a)
{
    int *by_off = sched__alloc(a, sizeof(int) * ((size_t)ss->n_queues + 1));
    int q, k, i, at = 0;

    if (!by_off)
        return -1;
    for (q = 0; q < ss->n_queues; q++)
        by_off[q] = q;
    if (sched__sort(a, by_off, ss->n_queues, off_before, oc) != SCHED_OK)
        return -1;
    for (k = 0; k < ss->n_queues; k++) {
        q = by_off[k];
        if (oc->off[q] != at && oc->cnt[q] > 0) {
            memmove(&oc->items[at], &oc->items[oc->off[q]], sizeof(int) * (size_t)oc->cnt[q]);
            memmove(&oc->item_group[at], &oc->item_group[oc->off[q]],
                    sizeof(int) * (size_t)oc->cnt[q]);
            for (i = at; i < at + oc->cnt[q]; i++)
                oc->pos_of[oc->items[i]] = i;
        }
        oc->off[q] = at;
        at += oc->cnt[q];
    }
    return at;
}

/* Leaf q's list merged with its waiting entries added[first..first+n_q)
 * (both in job order) into items[to..), which lies past every list, so
 * nothing is written before it is read; the list's old place is left as a
 * gap. */
static void merge_leaf(struct order_cache *oc, int q, int first, int n_q, int to)
{
    int i = oc->off[q], end = oc->off[q] + oc->cnt[q], k = first, k_end = first + n_q, at;

    for (at = to; i < end || k < k_end; at++) {
        if (k < k_end && (i >= end || job_before(oc, oc->added[k], oc->items[i]))) {
            oc->items[at] = oc->added[k++];
            oc->item_group[at] = -1;
        } else {
            oc->items[at] = oc->items[i];
            oc->item_group[at] = oc->item_group[i++];
        }
        oc->pos_of[oc->items[at]] = at;
    }
    oc->off[q] = to;
    oc->cnt[q] += n_q;
}

/* Every waiting entry into its leaf's list: the additions sorted by leaf
 * and job order, then each leaf that has some merged with them past the
 * lists' end (the cost of that leaf, not of every list); the lists are
 * packed first when the room past their end is short, and items[] grows
 * only when that is not enough. */
static int merge_added(struct sched_session *ss, struct order_cache *oc, struct sched_arena *a)
{
    struct added_ctx ctx = {ss, oc};
    int q, k, n_q, end, need = 0;

    if (sched__sort(a, oc->added, oc->n_added, added_before, &ctx) != SCHED_OK)
        return SCHED_ENOMEM;
    for (k = 0; k < oc->n_added; k += n_q) {   /* the room the moved lists take */
        q = ss_w(ss, oc->added[k])->queue;
        for (n_q = 0; k + n_q < oc->n_added && ss_w(ss, oc->added[k + n_q])->queue == q; n_q++)
            ;
        need += oc->cnt[q] + n_q;
    }
    end = lists_end(oc, ss->n_queues);
    if (end + need > oc->cap_items && (end = pack_lists(ss, oc, a)) < 0)
        return SCHED_ENOMEM;
    if (grow_items(ss, oc, end + need + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    for (k = 0; k < oc->n_added; k += n_q) {
        q = ss_w(ss, oc->added[k])->queue;
        for (n_q = 0; k + n_q < oc->n_added && ss_w(ss, oc->added[k + n_q])->queue == q; n_q++)
            ;
        merge_leaf(oc, q, k, n_q, end);
        end += oc->cnt[q];
    }
    oc->n_added = 0;
    return SCHED_OK;
}

/* Tests: whether the job order `kept` carries (its waiting entries put in
 * first) differs from the one cache_build() makes for `fresh`, a session
 * built from the same snapshot (NULL: the same, or none kept): each
 * leaf's entries in order, with their keys, and the leaf's least asks.
 * (Signatures hash the workload's class number, which a kept session
 * numbers in its own order: equal classes, other numbers.) */
const char *sched__order_differs(struct sched_session *kept, struct sched_session *fresh)
{
    struct order_cache *a = kept->order_cache, *b;
    int q, i, w;

    if (!a)
        return NULL;
    if (a->n_added > 0 && merge_added(kept, a, fresh->arena) != SCHED_OK)
        return "the kept job order could not take its submissions";
    if (!(b = cache_build(fresh)))
        return "the job order could not be built again";
    for (q = 0; q < kept->n_queues; q++) {
        if (a->cnt[q] != b->cnt[q] || a->min_gpu[q] != b->min_gpu[q] ||
            a->least_ask[2 * q] != b->least_ask[2 * q] ||
            a->least_ask[2 * q + 1] != b->least_ask[2 * q + 1] ||
            a->min_gpu_n[q] != b->min_gpu_n[q] || a->least_ask_n[2 * q] != b->least_ask_n[2 * q] ||
            a->least_ask_n[2 * q + 1] != b->least_ask_n[2 * q + 1])
            return "a leaf's number of entries or least asks in the job order";
        for (i = 0; i < a->cnt[q]; i++) {
            w = a->items[a->off[q] + i];
            if (w != b->items[b->off[q] + i] || a->pos_of[w] != a->off[q] + i ||
                a->key1[w] != b->key1[w] || a->key2[w] != b->key2[w])
                return "a leaf's entries or their keys in the job order";
        }
    }
    return NULL;
}

static int note_changed(struct sched_session *ss, struct order_cache *oc, int w)
{
    if (sched__ints_room(ss->arena, &oc->changed, &oc->cap_changed, oc->n_changed,
                         oc->n_changed + 1, 64) != SCHED_OK)
        return SCHED_ENOMEM;
    oc->changed[oc->n_changed++] = w;
    return SCHED_OK;
}

/* ---- The walk ---- */

/* Whether no workload of leaf q can be a candidate of this action now:
 * allocate and consolidate need free GPU for the leaf's smallest pod;
 * reclaim needs the queue below its fair share in some pool; preempt
 * needs a workload of higher priority than the queue's lowest running
 * one (the list is in priority order, so its next entry decides). */
/* The most any pool offers to the room tests in this state: one pass over
 * the pools per placement state, not one per leaf or group. */
static const struct pools_room *pools_best(struct ss_iter *it)
{
    const struct sched_session *ss = it->ss;
    struct pools_room *best = &it->room;
    int p;

    if (best->version == ss->version + 1)
        return best;
    memset(best, 0, sizeof(*best));
    best->version = ss->version + 1;
    for (p = 0; p < ss->n_pools; p++) {
        if (ss->pools[p].max_empty > best->max_empty)
            best->max_empty = ss->pools[p].max_empty;
        best->total_empty = ss_max(best->total_empty, ss->pools[p].total_empty);
        best->gpu_free = ss_max(best->gpu_free, ss->pools[p].gpu_free);
    }
    return best;
}

static int leaf_done(struct ss_iter *it, int q)
{
    const struct sched_session *ss = it->ss;
    int p, next;

    if (it->action == SCHED_ACT_ALLOCATE || it->action == SCHED_ACT_CONSOLIDATE) {
        /* no pool has as much free GPU as the leaf's smallest pod asks */
        if (it->extra[q].n > 0 || it->oc->min_gpu[q] == 0)
            return 0;
        return pools_best(it)->gpu_free < it->oc->min_gpu[q];
    }
    if (it->action == SCHED_ACT_RECLAIM) {
        for (p = 0; p < ss->n_pools; p++) {
            const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p];
            if (a->alloc[SCHED_GPU] < a->fair[SCHED_GPU] || a->alloc[SCHED_CPU] < a->fair[SCHED_CPU])
                return 0;
        }
        return 1;
    }
    if (it->action == SCHED_ACT_PREEMPT && it->cursor[q] < it->oc->cnt[q]) {
        next = it->oc->items[it->oc->off[q] + it->cursor[q]];
        return ss_w(ss, next)->priority <= ss->queues[q].min_running_priority &&
               it->extra[q].n == 0;
    }
    return 0;
}

/* Reclaim: whether every entry of leaf q's list fails may_evict_somewhere()'s
 * queue test in every pool: even the leaf's least request per pod would
 * take the queue above its fair share there. The list's walk would then
 * pass every entry, and nothing it passes is tested again in this action. */
static int leaf_above_share(const struct ss_iter *it, int q)
{
    const struct sched_session *ss = it->ss;
    int64_t gpu = it->oc->least_ask[2 * q], cpu = it->oc->least_ask[2 * q + 1];
    int p;

    for (p = 0; p < ss->n_pools; p++) {
        const struct ss_qp *a = &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p];
        if ((gpu != SS_INF && a->alloc[SCHED_GPU] + gpu <= a->fair[SCHED_GPU]) ||
            (cpu != SS_INF && a->alloc[SCHED_CPU] + cpu <= a->fair[SCHED_CPU]))
            return 0;
    }
    return 1;
}

/* Preempt: whether a list entry (workload w, group g) and every entry
 * after it fail the priority test of shape_is_candidate(): the list is in
 * priority order, highest first, and a priority never changes. */
static int below_running(const struct ss_iter *it, int q, int g, int w)
{
    int priority = g >= 0 ? it->oc->group_ask[g].ask.priority : ss_w(it->ss, w)->priority;

    return priority <= it->ss->queues[q].min_running_priority;
}

/* Preempt: shape_is_candidate() for the entries of leaf q's group g, from
 * its record: its priority above the queue's lowest running one, and a
 * pool where the hopeless table does not rule victims out. */
static int group_may_preempt(const struct ss_iter *it, int q, int g)
{
    const struct sched_session *ss = it->ss;
    const struct group_ask *r = &it->oc->group_ask[g];
    int i;

    if (r->ask.priority <= ss->queues[q].min_running_priority)
        return 0;
    for (i = 0; i < r->n_pools; i++)
        if (sched__may_preempt(ss, q, it->oc->group_pools[r->first_pool + i],
                               r->plain ? &r->ask : NULL))
            return 1;
    return 0;
}

/* Allocate: whether group g's room test fails in every pool, judged by
 * the most any pool offers in this state (room_somewhere() asks all of
 * one pool's figures at once, so this fails only where it fails). */
static int group_room_fails(struct ss_iter *it, int g)
{
    const struct group_room *r = &it->oc->group_room[g];
    const struct pools_room *best;

    if (r->devices == 0)
        return 0;
    best = pools_best(it);
    if (r->devices < 0)
        return best->gpu_free < r->gpu;
    return best->max_empty < r->devices || best->total_empty < r->gpu;
}

/* ---- The walk's marks (order_cache.walk) ---- */

static int in_extra(const struct ss_iter *it, int w)
{
    return it->oc->extra_walk[w] == it->walk;
}

static void put_in_extra(struct ss_iter *it, int w)
{
    it->oc->extra_walk[w] = it->walk;
}

/* The tag of the walk's present state (struct ss_iter). */
static uint64_t state_tag(struct ss_iter *it)
{
    if (it->tag_version != it->ss->version + 1) {
        it->state_tag = ++it->oc->tags;
        it->tag_version = it->ss->version + 1;
    }
    return it->state_tag;
}

/* Group g failed: its signature an attempt (`attempt`), or its test in
 * the present state. */
static void note_group_failed(struct ss_iter *it, int g, int attempt)
{
    it->oc->mark[g] = attempt ? it->fail_tag : state_tag(it);
}

/* The next walk's number; at the wrap every mark is cleared. */
static uint32_t next_walk(struct order_cache *oc)
{
    if (++oc->walk == 0) {
        memset(oc->extra_walk, 0, sizeof(uint32_t) * (size_t)oc->cap_wls);
        oc->walk = 1;
    }
    return oc->walk;
}

/* The first place from leaf q's cursor on whose entry is not in a group
 * that failed in this state or whose signature failed an attempt: most of
 * a settled cycle's walk, so it keeps the cursor, the marks' pointer and
 * the two tags in locals and writes no mark (leaf_head()'s loop, which
 * writes marks and the cursor through `it`, reads them again at every
 * entry). */
static int pass_failed_groups(struct ss_iter *it, int q)
{
    const int *group = it->oc->item_group + it->oc->off[q];
    const uint64_t *mark = it->oc->mark;
    uint64_t failed = it->fail_tag, in_state = state_tag(it);
    int c = it->cursor[q], n = it->oc->cnt[q];

    for (; c < n; c++) {
        uint64_t m = mark[group[c]];   /* an entry tested alone reads mark[-1]: 0 */
        if (m != failed && m != in_state)
            break;
    }
    return c;
}

/* Head of a leaf: the better of its list's next candidate and its heap's top. */
static int leaf_head(struct ss_iter *it, int q)
{
    struct sched_session *ss = it->ss;
    const struct order_cache *oc = it->oc;
    struct leaf_heap *h = &it->extra[q];
    int a = -1;

    if (leaf_done(it, q))
        return -1;
    if (it->action == SCHED_ACT_RECLAIM && leaf_above_share(it, q))
        it->cursor[q] = oc->cnt[q];   /* the walk below would pass every entry */

    /* A group that failed in this state (or whose signature failed an
     * attempt) is passed first, at the cost of a load; then the entry's
     * own state, the failed signatures' lookup (a hash probe) and the
     * test of its shape (a walk of its pools): all only read, and an entry
     * must pass all, so the order changes nothing but the cost. */
    while (it->cursor[q] < oc->cnt[q]) {
        int i, g, w;
        it->cursor[q] = pass_failed_groups(it, q);
        if (it->cursor[q] >= oc->cnt[q])
            break;
        i = oc->off[q] + it->cursor[q];
        g = oc->item_group[i];
        if (g >= 0 && it->action == SCHED_ACT_ALLOCATE && group_room_fails(it, g)) {
            note_group_failed(it, g, 0);   /* as the first entry's test would */
            it->cursor[q]++;
            continue;
        }
        w = oc->items[i];
        if (it->action == SCHED_ACT_PREEMPT && below_running(it, q, g, w)) {
            it->cursor[q] = oc->cnt[q];   /* the walk would pass every entry from here */
            break;
        }
        if (g >= 0 && it->action == SCHED_ACT_PREEMPT && !group_may_preempt(it, q, g)) {
            note_group_failed(it, g, 0);   /* as each entry's shape test would */
            it->cursor[q]++;
            continue;
        }
        if (!in_extra(it, w) && entry_may_run(ss, w)) {
            if (sched__iter_seen_failure(it, w)) {
                if (g >= 0)
                    note_group_failed(it, g, 1);
            } else if (shape_is_candidate(ss, w, it->action)) {
                a = w;
                break;
            } else if (g >= 0) {
                note_group_failed(it, g, 0);
            }
        }
        it->cursor[q]++;
    }
    while (h->n > 0 && (sched__iter_seen_failure(it, h->items[0]) ||
                        !sched__is_candidate(ss, h->items[0], it->action)))
        heap_pop(it, h);
    if (h->n > 0 && (a < 0 || job_before(oc, h->items[0], a)))
        return h->items[0];
    return a;
}

static void refresh_queue(struct ss_iter *it, int q)
{
    const struct ss_queue *sq = &it->ss->queues[q];
    int best;

    if (sq->is_leaf) {
        it->head[q] = leaf_head(it, q);
        return;
    }
    best = best_queue(it, sq->children, sq->n_children);
    it->head[q] = best >= 0 ? it->head[best] : -1;
}

static void refresh_root(struct ss_iter *it)
{
    int best = best_queue(it, it->roots, it->n_roots);

    it->head[it->ss->n_queues] = best >= 0 ? it->head[best] : -1;
}

static void refresh_path(struct ss_iter *it, int q)
{
    for (; q >= 0; q = it->ss->queues[q].parent)
        refresh_queue(it, q);
    refresh_root(it);
}

static void refresh_all(struct ss_iter *it)
{
    struct sched_session *ss = it->ss;
    int q, depth, max_depth = 0;

    for (q = 0; q < ss->n_queues; q++)
        if (ss->queues[q].depth > max_depth)
            max_depth = ss->queues[q].depth;
    for (depth = max_depth; depth >= 0; depth--)
        for (q = 0; q < ss->n_queues; q++)
            if (ss->queues[q].depth == depth)
                refresh_queue(it, q);
    refresh_root(it);
}

struct ss_iter *sched__iter_new(struct sched_session *ss, int action)
{
    struct sched_arena *a = ss->cycle_arena ? ss->cycle_arena : ss->arena;
    struct ss_iter *it = sched__calloc(a, 1, sizeof(*it));
    struct order_cache *oc;
    int i, q;

    if (!it)
        return NULL;
    it->arena = a;
    if (!ss->order_cache)
        ss->order_cache = cache_build(ss);
    oc = ss->order_cache;
    if (!oc || (oc->n_added > 0 && merge_added(ss, oc, a) != SCHED_OK))
        return NULL;
    it->ss = ss;
    it->oc = oc;
    it->action = action;
    it->cursor = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(int));
    it->extra = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(struct leaf_heap));
    it->head = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(int));
    it->roots = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(int));
    it->fig = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(struct figures));
    it->fig_w = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(int));
    it->fig_version = sched__calloc(a, (size_t)ss->n_queues + 1, sizeof(uint64_t));
    if (!it->cursor || !it->extra || !it->head || !it->roots || !it->fig || !it->fig_w ||
        !it->fig_version || sig_grow(it) != SCHED_OK)
        return NULL;
    it->walk = next_walk(oc);
    it->fail_tag = ++oc->tags;
    for (q = 0; q < ss->n_queues; q++)
        it->fig_w[q] = -1;
    for (q = 0; q < ss->n_queues; q++)
        if (ss->queues[q].parent < 0)
            it->roots[it->n_roots++] = q;
    /* workloads placed earlier in the cycle and still wanting pods: their order moved */
    for (i = 0; i < oc->n_changed; i++) {
        int w = oc->changed[i];
        if (in_extra(it, w) || !sched__is_candidate(ss, w, action))
            continue;
        job_key(oc, ss, w);
        sig_refresh(ss, oc, w);
        put_in_extra(it, w);
        if (heap_push(it, &it->extra[ss_w(ss, w)->queue], w) != SCHED_OK)
            return NULL;
    }
    refresh_all(it);
    return it;
}

int sched__iter_next(struct ss_iter *it)
{
    return it->head[it->ss->n_queues];
}

void sched__iter_done(struct ss_iter *it, int w, int ok)
{
    struct sched_session *ss = it->ss;
    int q = ss_w(ss, w)->queue;
    struct leaf_heap *h = &it->extra[q];
    int g = -1;

    if (h->n > 0 && h->items[0] == w)
        heap_pop(it, h);
    else
        g = it->oc->item_group[it->oc->off[q] + it->cursor[q]++];
    if (!ok) {
        sig_remember(it, w);
        if (g >= 0)   /* its other entries would each find the signature failed */
            note_group_failed(it, g, 1);
    } else {
        if (note_changed(ss, it->oc, w) != SCHED_OK)
            ss->oom = 1;
        job_key(it->oc, ss, w);
        sig_refresh(ss, it->oc, w);
        if (it->action == SCHED_ACT_ALLOCATE && sched__is_candidate(ss, w, it->action)) {
            put_in_extra(it, w);  /* elastic growth competes again */
            if (heap_push(it, h, w) != SCHED_OK)
                ss->oom = 1;
        }
    }
    refresh_path(it, q);
}

void sched__iter_touch(struct ss_iter *it, int q)
{
    refresh_path(it, q);
}
