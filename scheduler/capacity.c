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
 *
 * Whether the pool has room for a gang as things are
 * (sched__all_fit_as_is()) is told without placing it: the victim search
 * (victims.c) ends an attempt whose pods would all fit, evicting nothing,
 * without placing them pod by pod (a walk of the pool's nodes each) and
 * rolling them back.
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

/* How many pods of w node could take one after another as things are:
 * whole-device and CPU-only pods only, whose each placement takes the
 * same from the node alone (whole devices take empty ones). */
static int64_t pods_node_takes(const struct sched_session *ss, const struct sched_workload *wl,
                               int w, int node)
{
    const struct ss_node *n = &ss->nodes[node];
    int64_t k = sched__whole(wl) ? n->n_empty / wl->gpu_devices : SS_BIG;

    if (!n->ready || sched__node_rank(ss, w, node) == 0 || n->cpu_free < wl->cpu_milli ||
        n->mem_free < wl->mem_mib)
        return 0;
    if (wl->cpu_milli > 0)
        k = ss_min(k, n->cpu_free / wl->cpu_milli);
    if (wl->mem_mib > 0)
        k = ss_min(k, n->mem_free / wl->mem_mib);
    return k;
}

int sched__all_fit_as_is(const struct sched_session *ss, int w, int pool, int pods)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_pool *p = &ss->pools[pool];
    int64_t total = 0;
    int i;

    if (pods == 1)
        return sched__fits_somewhere(ss, w, pool);
    if (wl->gpu_portion > 0 || wl->gpu_memory_mib > 0)
        return -1;
    if (!sched__whole(wl)) {
        for (i = 0; i < p->n_nodes && total < pods; i++)
            total += pods_node_takes(ss, wl, w, p->nodes[i]);
        return total >= pods;
    }
    if (p->total_empty < (int64_t)pods * wl->gpu_devices)
        return 0;
    /* only nodes with an empty device can take one */
    for (i = 0; i < p->n_nodes && total < pods; i += 64) {
        uint64_t bits = p->has_empty[i / 64];
        while (bits && total < pods) {
            total += pods_node_takes(ss, wl, w, p->nodes[i + __builtin_ctzll(bits)]);
            bits &= bits - 1;
        }
    }
    return total >= pods;
}
