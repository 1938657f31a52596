/*
 * frag.c: how many GPUs a node strands for the workload mix, and how much
 * a placement adds (the SCHED_FRAGMENTATION strategy, placement.c).
 *
 * The measure starts from FGD's (Weng et al., "Beware of Fragmentation",
 * USENIX ATC '23) and goes past it. For a node n and one shape m of the
 * mix (struct sched_mix_entry), the GPUs m cannot use on n are
 *
 *   F(n, m) = free(n) - usable(n, m)                 (milli-GPU)
 *
 * where free(n) is the node's free milli-GPU and usable(n, m) is what
 * pods of shape m could still take there:
 *   1. 0 if no pod of m fits now: the node is not allowed to m (node
 *      types, required affinity), or lacks the CPU, the memory, or the
 *      devices (whole: k empty devices; shared: k devices with room for
 *      m's charge on this node);
 *   2. else the free milli-GPU of the devices with room for m's charge
 *      (FGD: a device with less room than m asks is a fragment for m);
 *   3. capped by what the CPU and the memory left let m's pods take:
 *      floor(cpu free / m's cpu) pods x the milli-GPU of one pod, the same
 *      for memory. FGD asks only whether one pod fits; a node whose CPU
 *      is nearly gone strands its GPUs for every shape that needs CPU.
 * The node's fragmentation is the mix's weighted sum, sum_m w_m F(n, m)
 * (integers: weights x milli-GPU), and a placement's cost is its rise,
 * F(after) - F(before): a pod goes where it strands the fewest GPUs for
 * what is likely to come next (FGD's gradient step).
 *
 * Cost: per shape, a node keeps two numbers (devices with room for the
 * shape, and their free milli-GPU): whole-device shapes read them from
 * the node's empty-device count, shared ones walk the node's devices
 * once. A placement changes them in O(1) per shape, so a candidate costs
 * O(shapes) (O(shapes x devices) for shared shapes), with no allocation.
 * A shape's F takes one division (the whole pods its devices hold); the
 * caps compare by multiplying. A node's F is kept (base[], known[]) until
 * a pod comes or goes there, so the victim and consolidation searches,
 * which ask about the same nodes again and again, pay only for the rise.
 * sched__best_node() measures only the nodes of the best rank, and none
 * when one node alone fits.
 *
 * Everything is an integer; nothing depends on the order of the nodes.
 */
#include "sched_int.h"

#include <string.h>

/* Per shape, on one node: devices with room for one device's charge of
 * the shape, and their free milli-GPU. */
struct room {
    int cnt;
    int64_t sum;
};

/* A node's state as the measure reads it, and each shape's charge on its
 * devices (above SCHED_MILLI: the shape cannot use them). */
struct node_view {
    const struct ss_node *n;
    int node;
    int64_t free, cpu, mem;
    int32_t charge[SCHED_MIX_MAX];
    struct room room[SCHED_MIX_MAX];
};

int sched__frag_build(struct sched_session *ss)
{
    struct ss_frag *f = &ss->frag;
    int i, node, uses = 0, constrained = 0;

    memset(f, 0, sizeof(*f));
    for (i = 0; i < ss->in->n_pools; i++)
        uses |= ss->in->pools[i].gpu_placement == SCHED_FRAGMENTATION ||
                ss->in->pools[i].cpu_placement == SCHED_FRAGMENTATION;
    if (!uses || ss->in->n_mix <= 0)
        return SCHED_OK;
    f->shapes = sched__calloc(ss->arena, (size_t)ss->in->n_mix, sizeof(*f->shapes));
    if (!f->shapes)
        return SCHED_ENOMEM;
    for (i = 0; i < ss->in->n_mix; i++) {
        const struct sched_workload *s = &ss->in->mix[i].shape;
        struct ss_shape *x = &f->shapes[f->n];
        if (s->gpu_devices == 0 && s->gpu_portion == 0 && s->gpu_memory_mib == 0)
            continue;   /* asks no GPU: strands none */
        x->shape = s;
        x->devices = sched__whole(s) ? s->gpu_devices : sched_shared_devices(s);
        x->charge = s->gpu_memory_mib > 0 ? -1 : sched__charge_on(s, 0);
        x->cpu = s->cpu_milli;
        x->mem = s->mem_mib;
        x->weight = ss->in->mix[i].weight;
        f->n++;
        constrained |= s->node_type || s->n_node_types > 0 || s->n_affinity > 0;
    }
    f->base = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(*f->base));
    f->known = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(*f->known));
    f->fitting = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(*f->fitting));
    if (!f->base || !f->known || !f->fitting)
        return SCHED_ENOMEM;
    if (!constrained)
        return SCHED_OK;
    f->denied = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(uint32_t));
    if (!f->denied)
        return SCHED_ENOMEM;
    for (node = 0; node < ss->n_nodes; node++)
        for (i = 0; i < f->n; i++)
            if (!sched_node_allowed(f->shapes[i].shape, &ss->in->nodes[node]))
                f->denied[node] |= (uint32_t)1 << i;
    return SCHED_OK;
}

/* The node as it is now. */
static void view_node(const struct sched_session *ss, int node, struct node_view *v)
{
    const struct ss_node *n = &ss->nodes[node];
    const struct ss_frag *f = &ss->frag;
    int j, d;

    v->n = n;
    v->node = node;
    v->free = n->gpu_free;
    v->cpu = n->cpu_free;
    v->mem = n->mem_free;
    for (j = 0; j < f->n; j++) {
        int32_t charge = f->shapes[j].charge;
        struct room *r = &v->room[j];
        if (charge < 0)
            charge = sched__charge_on(f->shapes[j].shape, n->gpu_mem);
        v->charge[j] = charge;
        r->cnt = 0;
        r->sum = 0;
        if (charge >= SCHED_MILLI) {   /* whole devices (or none fits: cnt stays 0) */
            if (charge == SCHED_MILLI) {
                r->cnt = n->n_empty;
                r->sum = (int64_t)n->n_empty * SCHED_MILLI;
            }
            continue;
        }
        for (d = 0; d < n->n_gpus; d++)
            if (SCHED_MILLI - n->dev_used[d] >= charge) {
                r->cnt++;
                r->sum += SCHED_MILLI - n->dev_used[d];
            }
    }
}

/* usable, capped by the milli-GPU that `left` of a resource feeds when a
 * pod asks `need` of it per pod_gpu milli-GPU: left x pod_gpu / need, in
 * proportion (what is left beyond whole pods feeds the smaller shapes of
 * the mix), computed only when it can bind, so "plenty" never overflows.
 * pods: usable / pod_gpu, the whole pods usable holds; it binds when
 * left / need <= pods, that is left < need x (pods + 1). */
static int64_t cap_by(int64_t usable, int64_t pods, int64_t left, int64_t need, int64_t pod_gpu)
{
    if (need <= 0 || (__int128)left >= (__int128)need * (pods + 1))
        return usable;
    return (int64_t)((__int128)left * pod_gpu / need);
}

/* F(n, m) of shape j. */
static int64_t shape_frag(const struct sched_session *ss, int j, const struct node_view *v)
{
    const struct ss_shape *x = &ss->frag.shapes[j];
    const struct room *r = &v->room[j];
    int64_t usable, pod_gpu, pods, capped;

    if ((ss->frag.denied && (ss->frag.denied[v->node] >> j & 1)) || v->charge[j] > SCHED_MILLI ||
        r->cnt < x->devices || v->cpu < x->cpu || v->mem < x->mem)
        return v->free;
    pod_gpu = (int64_t)x->devices * v->charge[j];
    if (v->charge[j] == SCHED_MILLI) {
        pods = r->cnt / x->devices;
        usable = pods * pod_gpu;
    } else {
        usable = r->sum;
        pods = usable / pod_gpu;
    }
    capped = cap_by(usable, pods, v->cpu, x->cpu, pod_gpu);
    if (capped != usable) {   /* bound by CPU: it holds left / need whole pods */
        usable = capped;
        pods = v->cpu / x->cpu;
    }
    usable = cap_by(usable, pods, v->mem, x->mem, pod_gpu);
    return v->free - usable;
}

static int64_t view_frag(const struct sched_session *ss, const struct node_view *v)
{
    int64_t sum = 0;
    int j;

    for (j = 0; j < ss->frag.n; j++)
        sum += ss->frag.shapes[j].weight * shape_frag(ss, j, v);
    return sum;
}

/* The node's fragmentation from its view, kept until a pod comes or goes
 * there (node_add() clears known[]). */
static int64_t base_frag(const struct sched_session *ss, const struct node_view *v)
{
    const struct ss_frag *f = &ss->frag;

    if (!f->known[v->node]) {
        f->base[v->node] = view_frag(ss, v);
        f->known[v->node] = 1;
    }
    return f->base[v->node];
}

int64_t sched__frag_node(const struct sched_session *ss, int node)
{
    struct node_view v;

    if (ss->frag.n == 0)
        return 0;
    view_node(ss, node, &v);
    return base_frag(ss, &v);
}

/* The view after one pod of w takes `devices` (its charge on each) and
 * its CPU and memory. */
static void view_take(const struct sched_session *ss, const struct node_view *before, int w,
                      uint64_t devices, struct node_view *after)
{
    const struct ss_node *n = before->n;
    const struct sched_workload *wl = ss_w(ss, w);
    int32_t charge = sched__dev_charge(ss, w, before->node);
    int j, d;

    *after = *before;
    after->cpu -= wl->cpu_milli;
    after->mem -= wl->mem_mib;
    for (d = 0; d < n->n_gpus; d++) {
        int32_t was, now;
        if (!(devices >> d & 1))
            continue;
        was = SCHED_MILLI - n->dev_used[d];
        now = was - charge;
        after->free -= charge;
        for (j = 0; j < ss->frag.n; j++) {
            int32_t need = before->charge[j];
            struct room *r = &after->room[j];
            if (was >= need) {
                r->cnt--;
                r->sum -= was;
            }
            if (now >= need) {
                r->cnt++;
                r->sum += now;
            }
        }
    }
}
int64_t sched__frag_rise(const struct sched_session *ss, int w, int node, uint64_t devices)
{
    struct node_view before, after;

    if (ss->frag.n == 0)
        return 0;
    view_node(ss, node, &before);
    view_take(ss, &before, w, devices, &after);
    return view_frag(ss, &after) - base_frag(ss, &before);
}

uint64_t sched__frag_devices(const struct sched_session *ss, int w, int node, int64_t *rise)
{
    const struct ss_node *n = &ss->nodes[node];
    struct node_view before, after;
    uint64_t best = 0, picked;
    int64_t base, r, best_rise = 0;
    int32_t charge = sched__dev_charge(ss, w, node);
    int d, fresh;

    picked = sched__pick_devices(ss, w, node, n->dev_used, n->dev_whole, &fresh);
    *rise = 0;
    if (ss->frag.n == 0 || !picked)
        return picked;
    view_node(ss, node, &before);
    base = base_frag(ss, &before);
    if (sched__whole(ss_w(ss, w)) || sched_shared_devices(ss_w(ss, w)) != 1) {
        view_take(ss, &before, w, picked, &after);
        *rise = view_frag(ss, &after) - base;
        return picked;
    }
    /* one shared device: the one whose charge strands least; ties go to
     * the device sched__pick_devices() chose, then the lower index.
     * Devices used alike strand alike: each use is measured once. */
    for (d = 0; d < n->n_gpus; d++) {
        uint64_t one = (uint64_t)1 << d;
        int e;
        if ((n->dev_whole & one) || n->dev_used[d] + charge > SCHED_MILLI)
            continue;
        for (e = 0; e < d && !(n->dev_used[e] == n->dev_used[d] && !(n->dev_whole >> e & 1));
             e++)
            ;
        if (e < d && one != picked)
            continue;   /* a device used alike came first */
        view_take(ss, &before, w, one, &after);
        r = view_frag(ss, &after) - base;
        if (!best || r < best_rise || (r == best_rise && one == picked)) {
            best = one;
            best_rise = r;
        }
    }
    *rise = best_rise;
    return best;
}
