/*
 * capacity.c: the checks made before a workload is placed, at its queue
 * and every ancestor, in the pool it would use (KAI's
 * IsJobOverQueueCapacity):
 *
 *   1. limit:  allocated + request <= limit, per resource, unless no limit.
 *   2. non-preemptible workloads: non-preemptible allocation + request
 *      <= deserved, per resource, unless deserved is unlimited.
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
            if (!wl->preemptible && a->deserved[r] != SCHED_UNLIMITED &&
                a->alloc_np[r] + want > a->deserved[r]) {
                verdict(v, SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA, q, r, a->alloc_np[r] + want,
                        a->deserved[r]);
                return 0;
            }
        }
    }
    return 1;
}
