/*
 * actions.c: the four placement actions of a cycle, in KAI's order
 * (docs/scheduler.md, "The cycle"). Each walks the candidates in queue
 * order then job order (order.c) and tries each pool of a workload in its
 * preference order; the first pool that works wins.
 *
 *   allocate    - place without disturbing anyone: limit and
 *                 non-preemptible-within-deserved checks, then placement.
 *   consolidate - move preemptible workloads so that a pending gang fits,
 *                 only when every moved pod finds a new place.
 *   reclaim     - evict preemptible workloads of queues above their share,
 *                 for a queue that stays within its fair share.
 *   preempt     - evict lower-priority preemptible workloads of the same
 *                 queue.
 *
 * sched__would_start() tries one workload alone through the same four
 * attempts: the incremental path (memo.c) asks it whether a submission
 * changes anything.
 *
 * A workload that asks a topology is attempted in each pool domain by
 * domain (topology.c, sched__topo_attempt()).
 *
 * Attempts known to fail (struct ss_known, memo.c Step 5): a reclaim or
 * preempt attempt that failed in the settled cycle, in a pool that is as
 * it was then, fails again and is not made; the hopeless shape it noted
 * is noted again (sched__note_known_failure()), so the walk that follows
 * is the one a full cycle makes. Every failed attempt is recorded for the
 * next cycle, unless the hopeless table (whose entries a cycle's history
 * decides) ended it.
 */
#include "sched_int.h"

#include <string.h>

typedef int (*attempt_fn)(struct sched_session *ss, int w, int pool);

/* An attempt is two steps: what it checks of the pool as a whole first
 * (quotas, shares: the same in every topology domain, so checked once,
 * sched__topo_attempt()), then what it does; NULL: nothing to check. */
struct attempt {
    int action;
    attempt_fn ready, fn;
};

static int allocate_ready(struct sched_session *ss, int w, int pool)
{
    struct ss_verdict v;

    return sched__capacity_check(ss, w, pool, sched__pods_to_place(ss, w), &v);
}

static int attempt_allocate(struct sched_session *ss, int w, int pool)
{
    return sched__place_pods(ss, w, pool, sched__pods_to_place(ss, w), SCHED_ACT_ALLOCATE);
}

static int reclaim_ready(struct sched_session *ss, int w, int pool)
{
    struct ss_verdict v;

    return sched__reclaimer_within_share(ss, w, pool, sched__pods_to_place(ss, w), &v);
}

static int attempt_reclaim(struct sched_session *ss, int w, int pool)
{
    return sched__evict_for(ss, w, pool, SCHED_ACT_RECLAIM);
}

static int attempt_preempt(struct sched_session *ss, int w, int pool)
{
    return sched__evict_for(ss, w, pool, SCHED_ACT_PREEMPT);
}

static int attempt_consolidate(struct sched_session *ss, int w, int pool)
{
    return sched__try_consolidate(ss, w, pool);
}

/* ---- Attempts known to fail (struct ss_known) ---- */

void sched__known_begin(struct sched_session *ss)
{
    struct ss_known *k = ss->known;
    int p, q, same, clean;

    k->fair_same = 0;
    for (p = 0; p < ss->n_pools; p++) {
        same = k->prior && p < SS_KNOWN_POOLS;
        for (q = 0; q < ss->n_queues && same; q++)
            same = memcmp(&k->fair[((size_t)q * (size_t)ss->n_pools + (size_t)p) * SCHED_NRES],
                          ss_qp(ss, q, p)->fair, sizeof(int64_t) * SCHED_NRES) == 0;
        if (same)
            k->fair_same |= 1u << p;
        clean = same && !(k->dirty >> p & 1);
        k->base[p] = clean ? ss->pool_version[p] : UINT64_MAX;
    }
}

int sched__pool_as_settled(const struct sched_session *ss, int pool)
{
    const struct ss_known *k = ss->known;

    return k && k->prior && pool >= 0 && pool < ss->n_pools && k->base[pool] != UINT64_MAX &&
           ss->pool_version[pool] == k->base[pool];
}

/* What queue q holds in pool that it did not in the settled cycle:
 * SS_MOVED_ANY if its allocation or its non-preemptible allocation
 * moved, with SS_MOVED_ALLOC if its allocation did. */
static uint8_t queue_moves(struct sched_session *ss, int q, int pool)
{
    const int64_t *then = &ss->known->held[SS_HELD_AT(ss, q, pool)];
    const struct ss_qp *a = ss_qp(ss, q, pool);

    if (memcmp(then, a->alloc, sizeof(a->alloc)) != 0)
        return SS_MOVED_ANY | SS_MOVED_ALLOC;
    return memcmp(then + SCHED_NRES, a->alloc_np, sizeof(a->alloc_np)) != 0 ? SS_MOVED_ANY : 0;
}

/* A queue's own move (bit `own` of moved[]) reaches the queues above it
 * (own << 1: an entry may name an ancestor of its workload's queue, and
 * moves below it can cancel out there) and below it (own << 2). */
static void spread_moves(const struct sched_session *ss, uint8_t *moved, uint8_t own)
{
    uint8_t below = (uint8_t)(own << 1), above = (uint8_t)(own << 2);
    int q, a;

    for (q = 0; q < ss->n_queues; q++)
        if (moved[q] & own)
            for (a = ss->queues[q].parent; a >= 0 && !(moved[a] & below); a = ss->queues[a].parent)
                moved[a] |= below;
    for (q = 0; q < ss->n_queues; q++)
        for (a = ss->queues[q].parent; a >= 0 && !(moved[q] & above); a = ss->queues[a].parent)
            if (moved[a] & own)
                moved[q] |= above;
}

/* Once per version of pool: diag_same's bit (reasons.c's header, 1 and 2:
 * its nodes' figures, the top queues holding it and the two furthest
 * above their share, each as settled, with every fair share there the
 * kept one, no quota or rank moved there and no minimum runtime) and
 * moved[pool] (3: per queue, whether it, an ancestor or a descendant holds
 * there what it did not, counting the non-preemptible allocation or not). */
static void find_diagnosis_moves(struct sched_session *ss, int pool)
{
    struct ss_known *k = ss->known;
    uint8_t *moved = &k->moved[(size_t)pool * (size_t)ss->n_queues];
    int64_t figs[SS_POOL_FIGS];
    int q, same, over_then[2], over_now[2];

    k->diag_at[pool] = ss->pool_version[pool] + 1;
    k->diag_same &= ~(1u << pool);
    if (!k->prior || !k->held || !k->figs || !k->moved || !(k->fair_same >> pool & 1) ||
        (k->quotas >> pool & 1) || ss->in->pools[pool].min_guaranteed_runtime_ms > 0)
        return;
    /* the free GPU over the pool's ready nodes (figs' all_free[GPU]) is
     * kept as the pool's gpu_free: a pool whose free GPU moved is told
     * without a walk over its nodes */
    same = k->figs[(size_t)pool * SS_POOL_FIGS + 2 * SCHED_NRES + SCHED_GPU] ==
           ss->pools[pool].gpu_free;
    if (same) {
        sched__pool_node_figures(ss, pool, figs);
        same = memcmp(figs, &k->figs[(size_t)pool * SS_POOL_FIGS], sizeof(figs)) == 0;
    }
    for (q = 0; q < ss->n_queues; q++) {
        moved[q] = queue_moves(ss, q, pool);
        if (moved[q] && ss->queues[q].parent < 0 &&
            sched__holds(&k->held[SS_HELD_AT(ss, q, pool)]) != sched__queue_holds_pool(ss, q, pool))
            same = 0;   /* the top queues holding the pool are others */
    }
    if (same) {
        sched__pool_over(ss, pool, k->held, over_then);
        sched__pool_over(ss, pool, NULL, over_now);
        same = over_then[0] == over_now[0] && over_then[1] == over_now[1];
    }
    spread_moves(ss, moved, SS_MOVED_ANY);
    spread_moves(ss, moved, SS_MOVED_ALLOC);
    if (same)
        k->diag_same |= 1u << pool;
}

int sched__diagnosis_as_settled(struct sched_session *ss, int pool, int queue, int reads_np)
{
    /* the queue's own move, a descendant's and an ancestor's */
    uint8_t mask = reads_np ? SS_MOVED_ANY * 7 : SS_MOVED_ALLOC * 7;

    struct ss_known *k = ss->known;

    if (!k || pool < 0 || pool >= ss->n_pools || pool >= SS_KNOWN_POOLS || queue < 0 ||
        queue >= ss->n_queues)
        return 0;
    if (k->diag_at[pool] != ss->pool_version[pool] + 1)
        find_diagnosis_moves(ss, pool);
    return (k->diag_same >> pool & 1) &&
           !(k->moved[(size_t)pool * (size_t)ss->n_queues + (size_t)queue] & mask);
}

static uint32_t known_bit(int action, int pool)
{
    if (pool >= SS_KNOWN_POOLS)
        return 0;
    return action == SCHED_ACT_RECLAIM ? SS_KNOWN_BIT(0, pool)
           : action == SCHED_ACT_PREEMPT ? SS_KNOWN_BIT(1, pool)
                                         : 0;
}

/* The attempt in pool: its checks, then what it does, domain by domain for
 * a workload that asks a topology. */
static int attempt_in(struct sched_session *ss, int w, int pool, const struct attempt *a)
{
    return sched__topo_attempt(ss, w, pool, a->action, a->ready, a->fn);
}

/* Tests (ss_known.check): the answered attempt is made after all; it must
 * fail, noting a hopeless shape exactly when the settled one did, unless
 * the hopeless table ends it first. */
static void check_answer(struct sched_session *ss, int w, int pool, const struct attempt *a,
                         int noted)
{
    struct ss_mark mark = sched__mark(ss);

    ss->attempt_trace = SS_TRACE_QUIET;
    if (attempt_in(ss, w, pool, a)) {
        ss->known->wrong++;
        sched__rollback(ss, mark);
    } else if (ss->attempt_trace != SS_TRACE_UNKNOWN &&
               (ss->attempt_trace == SS_TRACE_NOTED) != noted) {
        ss->known->wrong++;
    }
}

/* w's record takes `bits`; a record that was 0 is listed (ss_known.set). */
static void record_bits(struct ss_known *k, int w, uint32_t bits)
{
    if (!k->record[w] && bits) {
        if (k->n_set < k->cap_set)
            k->set[k->n_set] = w;
        k->n_set++;
    }
    k->record[w] |= bits;
}

/* 1 when w's attempt in pool fails as it did in the settled cycle: the
 * pool is as it was then (w's pods, if any, are there, so w is too). */
static int known_to_fail(struct sched_session *ss, int w, int pool, const struct attempt *a)
{
    int action = a->action;
    struct ss_known *k = ss->known;
    uint32_t bit = known_bit(action, pool), was;

    if (!k || !bit || w >= k->n_fail || !(k->fail[w] & bit) ||
        ss->pool_version[pool] != k->base[pool])
        return 0;
    was = k->fail[w] & (bit | bit << 16);
    if (k->check)
        check_answer(ss, w, pool, a, (was & bit << 16) != 0);
    else if (was & bit << 16)
        sched__note_known_failure(ss, w, pool, action);
    if (w < k->n_record)
        record_bits(k, w, was);
    k->answered++;
    return 1;
}

/* Records a failed attempt, unless the hopeless table's history decided it. */
static void note_failure(struct sched_session *ss, int w, int pool, int action)
{
    struct ss_known *k = ss->known;
    uint32_t bit = known_bit(action, pool);

    if (!k || !bit || w >= k->n_record || ss->attempt_trace == SS_TRACE_UNKNOWN)
        return;
    record_bits(k, w, ss->attempt_trace == SS_TRACE_NOTED ? bit | bit << 16 : bit);
}

/* Tries each pool of w: its own pool if pods already run, else its list. */
static int attempt_pools(struct sched_session *ss, int w, const struct attempt *a)
{
    const struct ss_wl *x = &ss->wl[w];
    int i, n = x->pool >= 0 ? 1 : x->n_pools;

    for (i = 0; i < n; i++) {
        int p = x->pool >= 0 ? x->pool : x->pools[i];
        if (known_to_fail(ss, w, p, a))
            continue;
        ss->attempt_trace = SS_TRACE_QUIET;
        if (attempt_in(ss, w, p, a))
            return 1;
        note_failure(ss, w, p, a->action);
    }
    return 0;
}

static const struct attempt attempts[] = {
    {SCHED_ACT_ALLOCATE, allocate_ready, attempt_allocate},
    {SCHED_ACT_CONSOLIDATE, sched__consolidate_ready, attempt_consolidate},
    {SCHED_ACT_RECLAIM, reclaim_ready, attempt_reclaim},
    {SCHED_ACT_PREEMPT, NULL, attempt_preempt},
};

static void run_action(struct sched_session *ss, const struct attempt *a)
{
    struct ss_iter *it = sched__iter_new(ss, a->action);
    int action = a->action, w;

    if (!it) {
        ss->oom = 1;
        return;
    }
    while ((w = sched__iter_next(it)) >= 0) {
        int first = ss->n_decisions, ok = attempt_pools(ss, w, a), i;
        if (ok && action == SCHED_ACT_ALLOCATE)
            ss->wl[w].flags |= WL_TOUCHED;
        sched__iter_done(it, w, ok);
        /* queues that lost or moved pods are compared again too */
        for (i = first; i < ss->n_decisions; i++)
            if (ss->decisions[i].workload != w)
                sched__iter_touch(it, ss_w(ss, ss->decisions[i].workload)->queue);
    }
}

void sched__act_allocate(struct sched_session *ss)
{
    run_action(ss, &attempts[0]);
}

void sched__act_consolidate(struct sched_session *ss)
{
    run_action(ss, &attempts[1]);
}

void sched__act_reclaim(struct sched_session *ss)
{
    run_action(ss, &attempts[2]);
}

void sched__act_preempt(struct sched_session *ss)
{
    run_action(ss, &attempts[3]);
}

int sched__would_start(struct sched_session *ss, int w)
{
    uint64_t version = ss->version;
    size_t i;

    for (i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++) {
        if (!sched__is_candidate(ss, w, attempts[i].action))
            continue;
        if (attempt_pools(ss, w, &attempts[i]) || ss->n_decisions > 0 ||
            ss->version != version || ss->oom)
            return 1;
    }
    return 0;
}
