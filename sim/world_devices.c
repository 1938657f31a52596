/*
 * world_devices.c: which node devices, CPU and memory the placed pods
 * hold; placing the pods a scenario says are already running; and the
 * check of the world's invariants (world.h) after each pass.
 *
 * A device holds at most SCHED_MILLI milli-GPU: a whole-device pod takes
 * all of it; shared pods add their charge on each of their devices (a
 * portion, or a GPU-memory request's share of the device's memory,
 * sched_pod_gpu()), so no device gives out more memory than it has. A pod
 * runs only on a node its node types and required affinity allow.
 * Placing a runningOn pod chooses its devices as a packing placement
 * would:
 *   - whole-device pods take the lowest-index empty devices;
 *   - shared pods take the fullest devices with room (ties: lowest index).
 */
#include "world.h"

#include <stdio.h>
#include <string.h>

static int count_bits(uint64_t x)
{
    int n = 0;

    for (; x; x &= x - 1)
        n++;
    return n;
}

static int32_t *node_devices(struct world *w, int node)
{
    return &w->dev_used[(size_t)node * SCHED_MAX_NODE_GPUS];
}

static int pod_fail(struct world_err *e, const struct sched_workload *wl, int pod,
                    const char *what, const char *node)
{
    snprintf(e->msg, sizeof(e->msg), "pod %d of %s %s %s", pod, wl->name, what, node);
    return -1;
}

/* Invariant 1 for one placed pod. */
static int check_pod(const struct world *w, const struct sched_workload *wl, int pod,
                     struct world_err *e)
{
    const struct sched_pod *p = &wl->pods[pod];
    const struct sched_node *node;
    uint64_t all;
    int want = sched_shared_devices(wl) > 0 ? sched_shared_devices(wl) : wl->gpu_devices;

    if (p->node >= w->s->n_nodes)
        return pod_fail(e, wl, pod, "is on a node index that does not exist:", "");
    node = &w->nodes[p->node];
    all = node->n_gpus >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << node->n_gpus) - 1;
    if (!node->ready)
        return pod_fail(e, wl, pod, "is on a node that is down:", node->name);
    if (p->devices & ~all)
        return pod_fail(e, wl, pod, "uses a device that does not exist on", node->name);
    if (!sched_node_allowed(wl, node))
        return pod_fail(e, wl, pod, "runs where its node types or affinity forbid:",
                        node->name);
    if (count_bits(p->devices) != want) {
        snprintf(e->msg, sizeof(e->msg), "pod %d of %s holds %d devices on %s, it asks %d",
                 pod, wl->name, count_bits(p->devices), node->name, want);
        return -1;
    }
    return 0;
}

/* Adds one placed pod to the occupancy; invariant 2 as it goes. */
static int hold_pod(struct world *w, const struct sched_workload *wl, int pod,
                    struct world_err *e)
{
    const struct sched_pod *p = &wl->pods[pod];
    const struct sched_node *node = &w->nodes[p->node];
    int32_t *dev = node_devices(w, p->node);
    int n_dev = count_bits(p->devices);
    int32_t per = n_dev > 0 ? (int32_t)(sched_pod_gpu(wl, node) / n_dev) : 0;
    int d;

    for (d = 0; d < node->n_gpus; d++) {
        if (!(p->devices & ((uint64_t)1 << d)))
            continue;
        dev[d] += per;
        if (dev[d] > SCHED_MILLI) {
            snprintf(e->msg, sizeof(e->msg), "device %d of %s is over-committed when pod %d "
                     "of %s is added", d, node->name, pod, wl->name);
            return -1;
        }
    }
    w->node_cpu[p->node] += wl->cpu_milli;
    w->node_mem[p->node] += wl->mem_mib;
    if ((node->cpu_milli != SCHED_UNLIMITED && w->node_cpu[p->node] > node->cpu_milli) ||
        (node->mem_mib != SCHED_UNLIMITED && w->node_mem[p->node] > node->mem_mib))
        return pod_fail(e, wl, pod, "asks more CPU or memory than is left on", node->name);
    return 0;
}

int world__rebuild_devices(struct world *w, struct world_err *e)
{
    const struct sched_workload *wl;
    int i, j;

    memset(w->dev_used, 0, (size_t)w->s->n_nodes * SCHED_MAX_NODE_GPUS * sizeof(*w->dev_used));
    memset(w->node_cpu, 0, (size_t)w->s->n_nodes * sizeof(*w->node_cpu));
    memset(w->node_mem, 0, (size_t)w->s->n_nodes * sizeof(*w->node_mem));
    for (i = 0; i < w->n_wls; i++) {
        wl = &w->wls[i];
        for (j = 0; j < wl->n_pods; j++) {
            if (wl->pods[j].node < 0)
                continue;
            if (check_pod(w, wl, j, e) != 0 || hold_pod(w, wl, j, e) != 0)
                return -1;
        }
    }
    w->dev_dirty = 0;
    return 0;
}

/* Devices for a pod on a node, as the header describes; 0 if none fit. */
static uint64_t choose_devices(struct world *w, const struct sched_workload *wl, int node)
{
    const int32_t *dev = node_devices(w, node);
    int shared = sched_shared_devices(wl), d, best;
    int need = shared > 0 ? shared : wl->gpu_devices;
    int32_t per = shared > 0 ? (int32_t)(sched_pod_gpu(wl, &w->nodes[node]) / shared)
                             : SCHED_MILLI;
    uint64_t set = 0;

    for (; need > 0; need--) {
        best = -1;
        for (d = 0; d < w->nodes[node].n_gpus; d++)
            if (!(set >> d & 1) && dev[d] + per <= SCHED_MILLI &&
                (best < 0 || (shared > 0 && dev[d] > dev[best])))
                best = d;
        if (best < 0)
            return 0;
        set |= (uint64_t)1 << best;
    }
    return set;
}

int world__place_pod(struct world *w, int i, int pod, int node, struct world_err *e)
{
    struct sched_workload *wl = &w->wls[i];
    uint64_t devices = 0;

    if (!w->nodes[node].ready) {
        snprintf(e->msg, sizeof(e->msg), "pod %d of %s cannot run on %s, which is down", pod,
                 wl->name, w->nodes[node].name);
        return -1;
    }
    /* refused here, as the file's error, rather than by the check after
     * the next pass, as though the core had placed it */
    if (!sched_node_allowed(wl, &w->nodes[node]))
        return pod_fail(e, wl, pod, "cannot run where its node types or affinity forbid:",
                        w->nodes[node].name);
    if (wl->gpu_devices > 0 || sched_shared_devices(wl) > 0) {
        devices = choose_devices(w, wl, node);
        if (!devices)
            return pod_fail(e, wl, pod, "does not fit in the free GPUs of", w->nodes[node].name);
    }
    wl->pods[pod].node = node;
    wl->pods[pod].devices = devices;
    return hold_pod(w, wl, pod, e);
}

/* Invariant 3 for one workload. */
static int check_phase(const struct sched_workload *wl, struct world_err *e)
{
    int j, placed = 0, ok;

    for (j = 0; j < wl->n_pods; j++)
        placed += wl->pods[j].node >= 0;
    if (wl->phase == SCHED_RUNNING)
        ok = placed >= wl->min_pods;
    else if (wl->phase == SCHED_PENDING)
        ok = placed < wl->min_pods;
    else
        ok = placed == 0;
    if (ok)
        return 0;
    snprintf(e->msg, sizeof(e->msg), "%s is %s with %d of its %d pods placed (gang minimum %d)",
             wl->name, sched_phase_name(wl->phase), placed, wl->n_pods, wl->min_pods);
    return -1;
}

int world_check(struct world *w, struct world_err *e)
{
    int i;

    for (i = 0; i < w->n_wls; i++)
        if (check_phase(&w->wls[i], e) != 0)
            return -1;
    return world__rebuild_devices(w, e);
}
