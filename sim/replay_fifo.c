/*
 * replay_fifo.c: the baseline placer, FIFO with first fit and no
 * preemption, outside the core and on purpose much simpler than it.
 *
 * Order: pending workloads in submission order (the world keeps it); the
 * first one that does not fit stops the cycle (head-of-line blocking, as
 * a plain FIFO queue does). No quotas, no fair share, no eviction.
 * Placement: each pod on the first node that fits (ready, its node type
 * if it asks one, CPU, memory, GPUs), trying the workload's
 * pools in preference order and each pool's nodes in node-file order;
 * devices inside the node as the simulator places runningOn pods
 * (world_devices.c: lowest empty devices, or the fullest device with
 * room for a portion). A gang's pods are placed all or none.
 *
 * The world's occupancy (dev_used, node_cpu, node_mem) is what fits
 * reads; world__place_pod() keeps it up to date, and a rollback or a
 * removed workload rebuilds it.
 */
#include "replay_engine.h"

#include <string.h>

static int pod_fits(const struct world *w, const struct sched_workload *wl, int node)
{
    const struct sched_node *n = &w->nodes[node];
    const int32_t *dev = &w->dev_used[(size_t)node * SCHED_MAX_NODE_GPUS];
    int d, empty = 0;

    if (!n->ready || !sched_node_allowed(wl, n))
        return 0;
    if (n->cpu_milli != SCHED_UNLIMITED && n->cpu_milli - w->node_cpu[node] < wl->cpu_milli)
        return 0;
    if (n->mem_mib != SCHED_UNLIMITED && n->mem_mib - w->node_mem[node] < wl->mem_mib)
        return 0;
    if (wl->gpu_devices > 0) {
        for (d = 0; d < n->n_gpus && empty < wl->gpu_devices; d++)
            empty += dev[d] == 0;
        return empty >= wl->gpu_devices;
    }
    if (wl->gpu_portion > 0) {
        for (d = 0; d < n->n_gpus; d++)
            if (dev[d] + wl->gpu_portion <= SCHED_MILLI)
                return 1;
        return 0;
    }
    return 1;
}

/* The first node of the workload's pools where one more pod fits, or -1. */
static int first_fit(const struct replay_model *m, const struct world *w,
                     const struct sched_workload *wl)
{
    struct sched_state st;
    int pools[RP_MAX_POOLS], n_pools, i, j, node;

    world_state(w, &st);
    n_pools = sched_workload_pools(&st, wl, pools, RP_MAX_POOLS);
    for (i = 0; i < n_pools; i++) {
        for (j = m->pool_first[pools[i]]; j < m->pool_first[pools[i] + 1]; j++) {
            node = m->pool_nodes[j];
            if (pod_fits(w, wl, node))
                return node;
        }
    }
    return -1;
}

static int rollback(struct world *w, struct sched_workload *wl, struct world_err *e)
{
    int j;

    for (j = 0; j < wl->n_pods; j++) {
        wl->pods[j].node = -1;
        wl->pods[j].devices = 0;
    }
    w->dev_dirty = 1;
    return world__rebuild_devices(w, e);
}

int replay_fifo_place(const struct replay_model *m, struct world *w, int i, struct world_err *e)
{
    struct sched_workload *wl = &w->wls[i];
    int j, node;

    if (w->dev_dirty && world__rebuild_devices(w, e) != 0)
        return -1;
    for (j = 0; j < wl->n_pods; j++) {
        node = first_fit(m, w, wl);
        if (node < 0)
            return rollback(w, wl, e) == 0 ? 0 : -1;
        if (world__place_pod(w, i, j, node, e) != 0)
            return -1;
    }
    wl->phase = SCHED_RUNNING;
    wl->started_ms = w->now_ms;
    return 1;
}

int replay_fifo_cycle(const struct replay_model *m, struct world *w, int *started,
                      struct world_err *e)
{
    int i, n = 0, rc;

    for (i = 0; i < w->n_wls; i++) {
        if (w->wls[i].phase != SCHED_PENDING)
            continue;
        rc = replay_fifo_place(m, w, i, e);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        started[n++] = i;
    }
    return n;
}
