/*
 * order.c: which workload an action tries next (kai-scheduling.md 2.4, 2.5).
 *
 * The queue tree is walked top-down: at every level the child whose best
 * pending workload wins the queue comparison is chosen; inside a leaf the
 * job order decides. After every attempt the path of the queue that
 * changed is compared again, so queues alternate as their shares move.
 *
 * Queue comparison (first decisive rule wins):
 *   1. a queue at or below its fair share before one above it;
 *   2. a queue whose allocation plus the workload stays within deserved;
 *   3. the higher rank;
 *   4. the smaller dominant share (allocated + workload) / allocatable,
 *      where allocatable = min(max(deserved, fair share), limit);
 *   5. the smaller dominant share without the workload;
 *   6. the older queue (lower index).
 * Job order inside a leaf: higher priority; gangs below their minimum,
 * then at it, then elastic growth; submitted earlier; name.
 *
 * Scheduling signatures: once a workload fails in an action, any later
 * workload of the same queue with the same shape (pools, node type,
 * requests, pods to place, preemptibility, priority) is skipped without
 * an attempt; resources only shrink within allocate, so it would fail too.
 *
 * Cost: building is O(n log n) over candidates; each attempt costs one
 * heap operation and the siblings along one path of the tree.
 */
#include "sched_int.h"

#include <string.h>

struct sig {
    int queue, fixed_pool, n_pools, gpu_devices, pods, preemptible, priority;
    int64_t portion, cpu, mem;
    const int *pools;
    const char *node_type;
};

struct leaf_heap {
    int *items;
    int n;
};

struct ss_iter {
    struct sched_session *ss;
    int action;
    struct leaf_heap *heaps;  /* [n_queues], leaves only */
    int *head;                /* [n_queues + 1] best workload of the subtree, or -1; [n_queues] = root */
    int *roots;
    int n_roots;
    struct sig *sigs;         /* open addressing, cap entries */
    uint8_t *used;
    int cap_sigs, n_sigs;
};

/* ---- Job order ---- */

static int elastic_state(const struct sched_session *ss, int w)
{
    int placed = ss->wl[w].n_placed, min = ss_w(ss, w)->min_pods;
    return placed < min ? 0 : placed == min ? 1 : 2;
}

static int job_before(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *wa = ss_w(ss, a), *wb = ss_w(ss, b);
    int ea, eb, c;

    if (wa->priority != wb->priority)
        return wa->priority > wb->priority;
    ea = elastic_state(ss, a);
    eb = elastic_state(ss, b);
    if (ea != eb)
        return ea < eb;
    if (wa->queued_seq != wb->queued_seq)
        return wa->queued_seq < wb->queued_seq;
    c = strcmp(wa->name, wb->name);
    return c != 0 ? c < 0 : a < b;
}

static void heap_push(const struct sched_session *ss, struct leaf_heap *h, int w)
{
    int i = h->n++;

    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!job_before(ss, w, h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = w;
}

static void heap_pop(const struct sched_session *ss, struct leaf_heap *h)
{
    int last, i = 0;

    if (h->n == 0)
        return;
    last = h->items[--h->n];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && job_before(ss, h->items[c + 1], h->items[c]))
            c++;
        if (!job_before(ss, h->items[c], last))
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->n > 0)
        h->items[i] = last;
}

/* ---- Queue order ---- */

static int job_res(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    return wl->gpu_devices > 0 || wl->gpu_portion > 0 ? SCHED_GPU : SCHED_CPU;
}

static int64_t share_ppm(int64_t v, int64_t allocatable)
{
    if (v <= 0)
        return 0;
    if (allocatable <= 0)
        return SS_INF;
    if (allocatable >= SS_BIG)
        return 0;
    return (int64_t)((__int128)v * 1000000 / allocatable);
}

static int64_t dominant_share(const struct sched_session *ss, int q, int w, int with_job)
{
    const struct ss_queue *sq = &ss->queues[q];
    int pods = sched__pods_to_place(ss, w), r;
    int64_t best = 0;

    for (r = 0; r < SCHED_NRES; r++) {
        int64_t d = sq->tot_deserved[r];
        int64_t alloc = ss_min(ss_max(d, sq->tot_fair[r]), sq->tot_limit[r]);
        int64_t v = sq->tot_alloc[r] + (with_job ? ss->wl[w].req[r] * pods : 0);
        int64_t s = share_ppm(v, alloc);
        if (s > best)
            best = s;
    }
    return best;
}

static int within_deserved(const struct sched_session *ss, int q, int w)
{
    const struct ss_queue *sq = &ss->queues[q];
    int pods = sched__pods_to_place(ss, w), r;

    for (r = 0; r < SCHED_NRES; r++) {
        int64_t want = ss->wl[w].req[r] * pods;
        if (want > 0 && sq->tot_deserved[r] != SS_INF &&
            sq->tot_alloc[r] + want > sq->tot_deserved[r])
            return 0;
    }
    return 1;
}

static int queue_before(const struct sched_session *ss, int qa, int ja, int qb, int jb)
{
    const struct ss_queue *a = &ss->queues[qa], *b = &ss->queues[qb];
    int ra = job_res(ss, ja), rb = job_res(ss, jb);
    int over_a = a->tot_alloc[ra] > a->tot_fair[ra], over_b = b->tot_alloc[rb] > b->tot_fair[rb];
    int in_a, in_b, rank_a, rank_b;
    int64_t sa, sb;

    if (over_a != over_b)
        return !over_a;
    in_a = within_deserved(ss, qa, ja);
    in_b = within_deserved(ss, qb, jb);
    if (in_a != in_b)
        return in_a;
    rank_a = ss->in->queues[qa].rank;
    rank_b = ss->in->queues[qb].rank;
    if (rank_a != rank_b)
        return rank_a > rank_b;
    sa = dominant_share(ss, qa, ja, 1);
    sb = dominant_share(ss, qb, jb, 1);
    if (sa != sb)
        return sa < sb;
    sa = dominant_share(ss, qa, ja, 0);
    sb = dominant_share(ss, qb, jb, 0);
    if (sa != sb)
        return sa < sb;
    return qa < qb;
}

/* ---- Signatures ---- */

static void sig_of(const struct ss_iter *it, int w, struct sig *s)
{
    const struct sched_session *ss = it->ss;
    const struct sched_workload *wl = ss_w(ss, w);

    memset(s, 0, sizeof(*s));
    s->queue = wl->queue;
    s->fixed_pool = ss->wl[w].pool;
    s->n_pools = ss->wl[w].n_pools;
    s->pools = ss->wl[w].pools;
    s->gpu_devices = wl->gpu_devices;
    s->pods = sched__pods_to_place(ss, w);
    s->preemptible = wl->preemptible;
    s->priority = it->action == SCHED_ACT_PREEMPT ? wl->priority : 0;
    s->portion = wl->gpu_portion;
    s->cpu = wl->cpu_milli;
    s->mem = wl->mem_mib;
    s->node_type = wl->node_type;
}

static uint64_t sig_hash(const struct sig *s)
{
    uint64_t h = 1469598103934665603ULL;
    int64_t v[10] = {s->queue, s->fixed_pool, s->n_pools, s->gpu_devices, s->pods,
                     s->preemptible, s->priority, s->portion, s->cpu, s->mem};
    int i;

    for (i = 0; i < 10; i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ULL;
    for (i = 0; i < s->n_pools; i++)
        h = (h ^ (uint64_t)s->pools[i]) * 1099511628211ULL;
    for (const char *c = s->node_type; c && *c; c++)
        h = (h ^ (uint64_t)(unsigned char)*c) * 1099511628211ULL;
    return h;
}

static int sig_equal(const struct sig *a, const struct sig *b)
{
    if (a->queue != b->queue || a->fixed_pool != b->fixed_pool || a->n_pools != b->n_pools ||
        a->gpu_devices != b->gpu_devices || a->pods != b->pods ||
        a->preemptible != b->preemptible || a->priority != b->priority ||
        a->portion != b->portion || a->cpu != b->cpu || a->mem != b->mem)
        return 0;
    if (a->pools != b->pools && memcmp(a->pools, b->pools, sizeof(int) * (size_t)a->n_pools))
        return 0;
    if (!a->node_type || !b->node_type)
        return a->node_type == b->node_type;
    return strcmp(a->node_type, b->node_type) == 0;
}

/* Slot of s in the table: where it is, or the empty slot where it would go. */
static int sig_slot(const struct ss_iter *it, const struct sig *s)
{
    int mask = it->cap_sigs - 1, i = (int)(sig_hash(s) & (uint64_t)mask);

    while (it->used[i] && !sig_equal(&it->sigs[i], s))
        i = (i + 1) & mask;
    return i;
}

int sched__iter_seen_failure(struct ss_iter *it, int w)
{
    struct sig s;

    sig_of(it, w, &s);
    return it->used[sig_slot(it, &s)];
}

static void sig_remember(struct ss_iter *it, int w)
{
    struct sig s;
    int i;

    if (it->n_sigs * 2 >= it->cap_sigs)
        return;  /* table sized for every candidate; cannot happen */
    sig_of(it, w, &s);
    i = sig_slot(it, &s);
    if (!it->used[i]) {
        it->used[i] = 1;
        it->sigs[i] = s;
        it->n_sigs++;
    }
}

/* ---- The walk ---- */

static void refresh_queue(struct ss_iter *it, int q)
{
    struct sched_session *ss = it->ss;
    const struct ss_queue *sq = &ss->queues[q];
    int i, best = -1;

    if (sq->is_leaf) {
        struct leaf_heap *h = &it->heaps[q];
        while (h->n > 0 && sched__iter_seen_failure(it, h->items[0]))
            heap_pop(ss, h);
        it->head[q] = h->n > 0 ? h->items[0] : -1;
        return;
    }
    for (i = 0; i < sq->n_children; i++) {
        int c = sq->children[i];
        if (it->head[c] < 0)
            continue;
        if (best < 0 || queue_before(ss, c, it->head[c], best, it->head[best]))
            best = c;
    }
    it->head[q] = best >= 0 ? it->head[best] : -1;
}

static void refresh_root(struct ss_iter *it)
{
    int i, best = -1;

    for (i = 0; i < it->n_roots; i++) {
        int c = it->roots[i];
        if (it->head[c] < 0)
            continue;
        if (best < 0 || queue_before(it->ss, c, it->head[c], best, it->head[best]))
            best = c;
    }
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

static int is_candidate(const struct sched_session *ss, int w, int action)
{
    const struct ss_wl *x = &ss->wl[w];

    if (!(x->flags & WL_CANDIDATE) || (x->flags & WL_EVICTED) || sched__pods_to_place(ss, w) == 0)
        return 0;
    if (action == SCHED_ACT_CONSOLIDATE)
        return x->n_placed < ss_w(ss, w)->min_pods && ss_w(ss, w)->preemptible;
    return 1;
}

struct ss_iter *sched__iter_new(struct sched_session *ss, int action)
{
    struct ss_iter *it = sched__calloc(ss->arena, 1, sizeof(*it));
    int *count, w, q, n = 0;

    if (!it)
        return NULL;
    it->ss = ss;
    it->action = action;
    it->heaps = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(struct leaf_heap));
    it->head = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    it->roots = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    count = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    if (!it->heaps || !it->head || !it->roots || !count)
        return NULL;
    for (w = 0; w < ss->n_workloads; w++)
        if (is_candidate(ss, w, action)) {
            count[ss_w(ss, w)->queue]++;
            n++;
        }
    it->cap_sigs = 16;
    while (it->cap_sigs < 2 * n + 2)
        it->cap_sigs *= 2;
    it->sigs = sched__calloc(ss->arena, (size_t)it->cap_sigs, sizeof(struct sig));
    it->used = sched__calloc(ss->arena, (size_t)it->cap_sigs, 1);
    if (!it->sigs || !it->used)
        return NULL;
    for (q = 0; q < ss->n_queues; q++) {
        it->heaps[q].items = sched__calloc(ss->arena, (size_t)count[q] + 1, sizeof(int));
        if (!it->heaps[q].items)
            return NULL;
        if (ss->queues[q].parent < 0)
            it->roots[it->n_roots++] = q;
    }
    for (w = 0; w < ss->n_workloads; w++)
        if (is_candidate(ss, w, action))
            heap_push(ss, &it->heaps[ss_w(ss, w)->queue], w);
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
    struct leaf_heap *h = &it->heaps[q];

    if (h->n > 0 && h->items[0] == w)
        heap_pop(ss, h);
    if (!ok)
        sig_remember(it, w);
    else if (it->action == SCHED_ACT_ALLOCATE && is_candidate(ss, w, it->action))
        heap_push(ss, h, w);  /* elastic growth competes again */
    if (it->action == SCHED_ACT_ALLOCATE)
        refresh_path(it, q);
    else
        refresh_all(it);  /* victims' queues changed too */
}
