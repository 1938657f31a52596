/*
 * placement.c: where a pod goes (DESIGN.md, Scheduling semantics 6).
 *
 * A pod fits a node when the node is ready, carries the workload's
 * node-type (if it asks one), has the CPU and memory, and has either
 * `gpu_devices` empty devices (whole-device pods never share) or one
 * device, not held by a whole-device pod, with room for `gpu_portion`.
 *
 * Among the nodes that fit, the pool's strategy decides:
 *   binpack: the fullest node (least free milli-GPU; for pods without
 *            GPU, least free CPU), ties by node name;
 *   spread:  the emptiest node (highest free / total), ties by name.
 * Devices inside the node the same way: whole-device pods take the
 * lowest-index empty devices; a portion goes to the fullest device with
 * room (binpack) or the emptiest (spread), ties by the lower index.
 *
 * A gang is placed pod by pod inside one statement: if any pod does not
 * fit, everything placed for it is rolled back (all or nothing).
 */
#include "sched_int.h"

#include <string.h>

static int type_matches(const struct sched_workload *wl, const struct ss_node *n)
{
    return !wl->node_type || (n->node_type && strcmp(wl->node_type, n->node_type) == 0);
}

static int portion_device(const struct ss_node *n, int64_t portion, int spread)
{
    int d, best = -1;

    for (d = 0; d < n->n_gpus; d++) {
        if ((n->dev_whole >> d & 1) || n->dev_used[d] + portion > SCHED_MILLI)
            continue;
        if (best < 0 || (spread ? n->dev_used[d] < n->dev_used[best]
                                : n->dev_used[d] > n->dev_used[best]))
            best = d;
    }
    return best;
}

int sched__pod_fits_node(const struct sched_session *ss, int w, int node)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];

    if (!n->ready || !type_matches(wl, n))
        return 0;
    if (n->cpu_free < wl->cpu_milli || n->mem_free < wl->mem_mib)
        return 0;
    if (wl->gpu_devices > 0)
        return n->n_empty >= wl->gpu_devices;
    if (wl->gpu_portion > 0)
        return portion_device(n, wl->gpu_portion, 0) >= 0;
    return 1;
}

uint64_t sched__choose_devices(const struct sched_session *ss, int w, int node)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *n = &ss->nodes[node];
    uint64_t mask = 0;
    int d, need = wl->gpu_devices;

    if (need > 0) {
        for (d = 0; d < n->n_gpus && need > 0; d++)
            if (n->dev_used[d] == 0) {
                mask |= (uint64_t)1 << d;
                need--;
            }
        return need == 0 ? mask : 0;
    }
    if (wl->gpu_portion > 0) {
        d = portion_device(n, wl->gpu_portion,
                           ss->in->pools[n->pool].gpu_placement == SCHED_SPREAD);
        return d >= 0 ? (uint64_t)1 << d : 0;
    }
    return 0;
}

/* 1 if node a is a better home than node b for a pod of w. */
static int node_better(const struct sched_session *ss, int w, int a, int b)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_node *na = &ss->nodes[a], *nb = &ss->nodes[b];
    const struct sched_pool *pool = &ss->in->pools[na->pool];
    int gpu = wl->gpu_devices > 0 || wl->gpu_portion > 0;
    int spread = (gpu ? pool->gpu_placement : pool->cpu_placement) == SCHED_SPREAD;
    __int128 fa = gpu ? na->gpu_free : na->cpu_free, fb = gpu ? nb->gpu_free : nb->cpu_free;
    __int128 ta = gpu ? (int64_t)na->n_gpus * SCHED_MILLI : na->cpu_total;
    __int128 tb = gpu ? (int64_t)nb->n_gpus * SCHED_MILLI : nb->cpu_total;

    if (spread) {
        /* higher free ratio first: fa/ta > fb/tb */
        __int128 l = fa * (tb > 0 ? tb : 1), r = fb * (ta > 0 ? ta : 1);
        if (l != r)
            return l > r;
    } else if (fa != fb) {
        return fa < fb;
    }
    return na->name_rank < nb->name_rank;
}

/* Could the pool place `pods` more pods of w right now, judging by its
 * empty-device counts alone? A quick necessary test (whole-device pods). */
int sched__pool_may_fit(const struct sched_session *ss, int w, int pool, int pods)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_pool *p = &ss->pools[pool];

    if (wl->gpu_devices > 0)
        return p->max_empty >= wl->gpu_devices &&
               p->total_empty >= (int64_t)pods * wl->gpu_devices;
    if (wl->gpu_portion > 0)
        return p->gpu_free >= wl->gpu_portion * pods;
    return 1;
}

int sched__best_node(const struct sched_session *ss, int w, int pool, int exclude)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_pool *p = &ss->pools[pool];
    int i, best = -1;

    if (wl->gpu_devices > 0) {
        /* whole devices: only nodes with an empty device can take the pod */
        if (p->max_empty < wl->gpu_devices)
            return -1;
        for (i = 0; i < p->n_nodes; i += 64) {
            uint64_t bits = p->has_empty[i / 64];
            while (bits) {
                int n = p->nodes[i + __builtin_ctzll(bits)];
                bits &= bits - 1;
                if (n == exclude || !sched__pod_fits_node(ss, w, n))
                    continue;
                if (best < 0 || node_better(ss, w, n, best))
                    best = n;
            }
        }
        return best;
    }
    for (i = 0; i < p->n_nodes; i++) {
        int n = p->nodes[i];
        if (n == exclude || !sched__pod_fits_node(ss, w, n))
            continue;
        if (best < 0 || node_better(ss, w, n, best))
            best = n;
    }
    return best;
}

int sched__place_pods(struct sched_session *ss, int w, int pool, int pods, int action)
{
    const struct sched_workload *wl = ss_w(ss, w);
    struct ss_mark mark = sched__mark(ss);
    int k, placed = 0;

    if (wl->gpu_devices > 0 && ss->pools[pool].total_empty < (int64_t)pods * wl->gpu_devices)
        return 0;
    for (k = 0; k < wl->n_pods && placed < pods; k++) {
        int node;
        uint64_t dev;
        if (ss->pods[w][k].node >= 0)
            continue;
        node = sched__best_node(ss, w, pool, -1);
        if (node < 0)
            break;
        dev = sched__choose_devices(ss, w, node);
        if (sched__place(ss, w, k, node, dev) != SCHED_OK ||
            sched__decide(ss, SCHED_BIND, action, w, k, node, dev, -1) != SCHED_OK)
            break;
        placed++;
    }
    if (placed < pods) {
        sched__rollback(ss, mark);
        return 0;
    }
    return 1;
}

/* How many pods of w a node could hold if it were empty. */
static int64_t pods_when_empty(const struct sched_session *ss, int w, const struct ss_node *n)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int64_t k = SS_BIG;

    if (!n->ready || !type_matches(wl, n))
        return 0;
    if (wl->gpu_devices > 0)
        k = n->n_gpus / wl->gpu_devices;
    else if (wl->gpu_portion > 0)
        k = (int64_t)n->n_gpus * (SCHED_MILLI / wl->gpu_portion);
    if (wl->cpu_milli > 0)
        k = ss_min(k, n->cpu_total / wl->cpu_milli);
    if (wl->mem_mib > 0)
        k = ss_min(k, n->mem_total / wl->mem_mib);
    return k;
}

int sched__pool_has_node_for(const struct sched_session *ss, int w, int pool)
{
    const struct ss_pool *p = &ss->pools[pool];
    int i;

    for (i = 0; i < p->n_nodes; i++) {
        const struct ss_node *n = &ss->nodes[p->nodes[i]];
        if (n->ready && type_matches(ss_w(ss, w), n))
            return 1;
    }
    return 0;
}

int sched__pool_can_ever_fit(const struct sched_session *ss, int w, int pool, int pods)
{
    const struct ss_pool *p = &ss->pools[pool];
    int64_t total = 0;
    int i;

    for (i = 0; i < p->n_nodes && total < pods; i++)
        total += pods_when_empty(ss, w, &ss->nodes[p->nodes[i]]);
    return total >= pods;
}
