/*
 * actions.c: the four placement actions of a cycle, in KAI's order
 * (DESIGN.md, Scheduling semantics 4). Each walks the candidates in queue
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
 */
#include "sched_int.h"

typedef int (*attempt_fn)(struct sched_session *ss, int w, int pool);

static int attempt_allocate(struct sched_session *ss, int w, int pool)
{
    struct ss_verdict v;
    int pods = sched__pods_to_place(ss, w);

    if (!sched__capacity_check(ss, w, pool, pods, &v))
        return 0;
    return sched__place_pods(ss, w, pool, pods, SCHED_ACT_ALLOCATE);
}

static int attempt_reclaim(struct sched_session *ss, int w, int pool)
{
    struct ss_verdict v;

    if (!sched__reclaimer_within_share(ss, w, pool, sched__pods_to_place(ss, w), &v))
        return 0;
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

/* Tries each pool of w: its own pool if pods already run, else its list. */
static int attempt_pools(struct sched_session *ss, int w, attempt_fn fn)
{
    const struct ss_wl *x = &ss->wl[w];
    int i;

    if (x->pool >= 0)
        return fn(ss, w, x->pool);
    for (i = 0; i < x->n_pools; i++)
        if (fn(ss, w, x->pools[i]))
            return 1;
    return 0;
}

static void run_action(struct sched_session *ss, int action, attempt_fn fn)
{
    struct ss_iter *it = sched__iter_new(ss, action);
    int w;

    if (!it) {
        ss->oom = 1;
        return;
    }
    while ((w = sched__iter_next(it)) >= 0) {
        int first = ss->n_decisions, ok = attempt_pools(ss, w, fn), i;
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
    run_action(ss, SCHED_ACT_ALLOCATE, attempt_allocate);
}

void sched__act_consolidate(struct sched_session *ss)
{
    run_action(ss, SCHED_ACT_CONSOLIDATE, attempt_consolidate);
}

void sched__act_reclaim(struct sched_session *ss)
{
    run_action(ss, SCHED_ACT_RECLAIM, attempt_reclaim);
}

void sched__act_preempt(struct sched_session *ss)
{
    run_action(ss, SCHED_ACT_PREEMPT, attempt_preempt);
}

int sched__would_start(struct sched_session *ss, int w)
{
    static const struct {
        int action;
        attempt_fn fn;
    } attempts[] = {
        {SCHED_ACT_ALLOCATE, attempt_allocate},
        {SCHED_ACT_CONSOLIDATE, attempt_consolidate},
        {SCHED_ACT_RECLAIM, attempt_reclaim},
        {SCHED_ACT_PREEMPT, attempt_preempt},
    };
    uint64_t version = ss->version;
    size_t i;

    for (i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++) {
        if (!sched__is_candidate(ss, w, attempts[i].action))
            continue;
        if (attempt_pools(ss, w, attempts[i].fn) || ss->n_decisions > 0 ||
            ss->version != version || ss->oom)
            return 1;
    }
    return 0;
}
