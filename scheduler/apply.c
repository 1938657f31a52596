/*
 * apply.c: how a driver turns the core's decisions into its next state.
 *
 * Every driver (allot simulate, the server, the replay, the tests) keeps
 * its own copy of the workloads and applies each decision of a pass in
 * order with sched_apply_decision(). Phases follow the gang rule: a
 * workload is RUNNING while at least min_pods of its pods are placed.
 */
#include "sched_int.h"

static int placed_pods(const struct sched_workload *w)
{
    int i, n = 0;

    for (i = 0; i < w->n_pods; i++)
        n += w->pods[i].node >= 0;
    return n;
}

static void unplace(struct sched_pod *pod)
{
    pod->node = -1;
    pod->devices = 0;
}

int sched_apply_decision(struct sched_workload *workloads, int n_workloads,
                         const struct sched_decision *d, int64_t now_ms)
{
    struct sched_workload *w;
    int i, placed;

    if (!d || d->workload < 0 || d->workload >= n_workloads)
        return SCHED_EINVAL;
    w = &workloads[d->workload];
    if (d->kind != SCHED_EVICT || d->pod >= 0)
        if (d->pod < 0 || d->pod >= w->n_pods)
            return SCHED_EINVAL;

    switch (d->kind) {
    case SCHED_BIND:
    case SCHED_MOVE:
        if (d->node < 0)
            return SCHED_EINVAL;
        w->pods[d->pod].node = d->node;
        w->pods[d->pod].devices = d->devices;
        break;
    case SCHED_EVICT:
        if (d->pod < 0)
            for (i = 0; i < w->n_pods; i++)
                unplace(&w->pods[i]);
        else
            unplace(&w->pods[d->pod]);
        break;
    default:
        return SCHED_EINVAL;
    }

    placed = placed_pods(w);
    if (placed >= w->min_pods) {
        if (w->phase != SCHED_RUNNING) {
            w->phase = SCHED_RUNNING;
            w->started_ms = now_ms;
        }
        w->stale_since_ms = SCHED_NO_TIME;
    } else if (w->phase == SCHED_RUNNING || placed == 0) {
        w->phase = SCHED_PENDING;
        if (placed == 0)
            w->stale_since_ms = SCHED_NO_TIME;
    }
    return SCHED_OK;
}
