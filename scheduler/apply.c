/*
 * apply.c: how a driver turns the core's decisions into its next state.
 *
 * Every driver (allot simulate, the server, the replay, the tests) keeps
 * its own copy of the workloads and applies each decision of a pass in
 * order with sched_apply_decision(). Phases follow the gang rule: a
 * workload is RUNNING while at least min_pods of its pods are placed.
 * A driver that reads a workload it holds again asks
 * sched_workload_same() whether anything the core reads changed: if not,
 * it has no change to tell sched_cycle_next() of.
 */
#include "sched_int.h"

#include <string.h>

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

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_strs(const char *const *a, const char *const *b, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (!same_str(a[i], b[i]))
            return 0;
    return 1;
}

static int same_terms(const struct sched_term *a, const struct sched_term *b, int n)
{
    int i, j;

    for (i = 0; i < n; i++) {
        if (a[i].n_matches != b[i].n_matches)
            return 0;
        for (j = 0; j < a[i].n_matches; j++) {
            const struct sched_match *x = &a[i].matches[j], *y = &b[i].matches[j];
            if (x->op != y->op || x->n_values != y->n_values || !same_str(x->key, y->key) ||
                !same_strs(x->values, y->values, x->n_values))
                return 0;
        }
    }
    return 1;
}

int sched_workload_same(const struct sched_workload *a, const struct sched_workload *b)
{
    int k;

    if (a->queue != b->queue || a->type != b->type || a->priority != b->priority ||
        a->preemptible != b->preemptible || a->phase != b->phase || a->n_pods != b->n_pods ||
        a->min_pods != b->min_pods || a->gpu_devices != b->gpu_devices ||
        a->gpu_portion != b->gpu_portion || a->cpu_milli != b->cpu_milli ||
        a->mem_mib != b->mem_mib || a->gpu_memory_mib != b->gpu_memory_mib ||
        a->queued_seq != b->queued_seq || a->started_ms != b->started_ms ||
        a->stale_since_ms != b->stale_since_ms || a->n_pools != b->n_pools ||
        (a->pools == NULL) != (b->pools == NULL) || a->n_node_types != b->n_node_types ||
        !a->node_types_alike != !b->node_types_alike ||
        a->n_affinity != b->n_affinity || !same_str(a->name, b->name) ||
        !same_str(a->node_type, b->node_type) ||
        !same_str(a->topology_required, b->topology_required) ||
        !same_str(a->topology_preferred, b->topology_preferred))
        return 0;
    if (a->n_pools > 0 && a->pools && memcmp(a->pools, b->pools, sizeof(int) * (size_t)a->n_pools))
        return 0;
    for (k = 0; k < a->n_pods; k++)
        if (a->pods[k].node != b->pods[k].node || a->pods[k].devices != b->pods[k].devices)
            return 0;
    return same_strs(a->node_types, b->node_types, a->n_node_types) &&
           same_terms(a->affinity, b->affinity, a->n_affinity);
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
