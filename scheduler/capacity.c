/*
 * capacity.c: the checks made before a workload is placed, at its queue
 * and every ancestor, in the pool it would use (KAI's
 * IsJobOverQueueCapacity):
 *
 *   1. limit:  allocated + request <= limit, per resource, unless no limit.
 *   2. non-preemptible workloads: non-preemptible allocation + request
 *      <= deserved, per resource, unless deserved is unlimited. CPU and
 *      memory quotas of 0 are "not managed" (the default of a project that
 *      sets none) and do not bind; a GPU quota of 0 does.
 *
 * Fair share is not checked here: a preemptible workload may run over
 * quota whenever resources are idle; reclaim takes them back.
 */
#include "sched_int.h"

static void verdict(struct ss_verdict *v, int reason, int q, int r, int64_t use, int64_t bound)
{
    v->reason = reason;
    v->queue = q;
    v->res = r;
    v->would_use = use;
    v->bound = bound;
}

int64_t sched__np_bound(const struct ss_qp *a, int r)
{
    if (a->deserved[r] == SCHED_UNLIMITED || (r != SCHED_GPU && a->deserved[r] == 0))
        return SS_INF;
    return a->deserved[r];
}

int sched__capacity_check(struct sched_session *ss, int w, int pool, int pods,
                          struct ss_verdict *v)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const int64_t *req = ss->wl[w].req;
    int q, r;

    verdict(v, SCHED_R_NONE, wl->queue, SCHED_GPU, 0, 0);
    for (q = wl->queue; q >= 0; q = ss->queues[q].parent) {
        const struct ss_qp *a = ss_qp(ss, q, pool);
        for (r = 0; r < SCHED_NRES; r++) {
            int64_t want = req[r] * pods;
            if (want == 0)
                continue;
            if (a->limit[r] != SS_INF && a->alloc[r] + want > a->limit[r]) {
                verdict(v, SCHED_R_OVER_LIMIT, q, r, a->alloc[r] + want, a->limit[r]);
                return 0;
            }
            if (!wl->preemptible && sched__np_bound(a, r) != SS_INF &&
                a->alloc_np[r] + want > sched__np_bound(a, r)) {
                verdict(v, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA, q, r, a->alloc_np[r] + want,
                        a->deserved[r]);
                return 0;
            }
        }
    }
    return 1;
}
