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
 *   3. half of it capped by what the memory left feeds at m's ratio of
 *      memory to GPU: usable = (u + min(u, mem free x pod's milli-GPU /
 *      m's memory)) / 2, u the devices' room of step 2. FGD asks only
 *      whether one pod fits; a node whose memory is nearly gone strands a
 *      part of its GPUs for the shapes that need memory. The CPU left caps
 *      nothing past step 1: a full cap by CPU and by memory, and a full
 *      cap by memory alone, both left more GPUs unallocated than this
 *      half cap on the multi-GPU traces of the FGD paper, and no cap at
 *      all lost the traces of tasks tied to GPU models (bench/NOTES.md,
 *      "The measure's caps, measured again").
 * The node's fragmentation is the mix's weighted sum, sum_m w_m F(n, m)
 * (integers: weights x milli-GPU), and a placement's cost is its rise,
 * F(after) - F(before): a pod goes where it strands the fewest GPUs for
 * what is likely to come next (FGD's gradient step). A pod that asks no
 * GPU has a rise too (a pool may place CPU-only pods by fragmentation):
 * what its memory takes from the shapes (step 3), and its CPU and memory
 * when the shapes' pods no longer fit (step 1).
 *
 * Cost: F depends on the node's state alone, read as struct fstate (free
 * milli-GPU, CPU, memory, device memory, the shapes it is denied to, the
 * devices' use as a sorted multiset): a state's F (O(shapes x devices))
 * is remembered for the session in a direct-mapped table
 * (frag.memo, exact keys, states of up to FRAG_MEMO_GPUS devices), so
 * nodes in the same state (the empty nodes of a kind, say), a state a
 * rollback brings back, and the same trial met again cost a lookup. A
 * node's F is also kept (base[], known[]) until a pod comes or goes
 * there, and so is its last answer for a pod shape (answer[]: the
 * devices and the rise; a move trial asks a node, then places there).
 * The devices a one-device shared pod may take are measured from one
 * sorted state, one device's use raised per candidate. A whole-device pod
 * takes empty devices, so the state it leaves depends on the node's state
 * and the pod's shape alone: the memo names each state it keeps with a
 * serial (memo_id[]), a node keeps its state's serial with its F
 * (base_id[]), and the rise is remembered per (serial, devices, CPU,
 * memory) (rises[]), exact keys again.
 * sched__best_node() measures only the nodes of the best rank, and none
 * when one node alone fits.
 *
 * The session measures with its own copy of the mix's GPU shapes
 * (ss_shape.own, in its arena): a session memo.c keeps outlives the
 * snapshot it was built from, and sched__frag_same_mix() tells memo.c
 * whether the next snapshot's mix is the one it measures with (a
 * departure leaves the mix as it was; submissions move it only at the
 * window's steps, mix.c).
 *
 * Everything is an integer; nothing depends on the order of the nodes.
 */
#include "sched_int.h"

#include <string.h>

/* denied[] and struct fstate keep one bit per shape of the mix */
_Static_assert(SCHED_MIX_MAX <= 64, "a shape's bit of a node's denied set");

/* A node's state as the measure reads it: what F depends on, and only
 * that (the devices' use as a multiset: sorted). */
struct fstate {
    int64_t free, cpu, mem, gpu_mem;
    uint64_t denied;
    int n_gpus;
    int32_t used[SCHED_MAX_NODE_GPUS];   /* ascending */
};

/* One remembered state of the session (frag.memo): states up to
 * FRAG_MEMO_GPUS devices, the node's F. Its serial (frag.memo_id[]) names
 * the state for the session: a slot written again gets a new one. */
struct frag_memo {
    int64_t free, cpu, mem, gpu_mem;
    uint64_t denied;
    int n_gpus;
    int16_t used[FRAG_MEMO_GPUS];
    int64_t frag;
};

/* One remembered rise of a whole-device or CPU-only pod (frag.rises): on
 * the state of serial `state`, a pod of `devices` empty devices (0: none),
 * cpu and mem. */
struct frag_rise {
    uint64_t state;           /* 0: empty slot */
    int32_t devices;
    int64_t cpu, mem, rise;
};

/* Per shape: devices with room for one device's charge of the shape, and
 * their free milli-GPU. */
struct room {
    int cnt;
    int64_t sum;
};

/* The state's view per shape: its charge on the devices (above
 * SCHED_MILLI: the shape cannot use them) and the room it finds. */
struct node_view {
    const struct fstate *st;
    int32_t charge[SCHED_MIX_MAX];
    struct room room[SCHED_MIX_MAX];
};

/* A string copied into the arena; NULL for NULL (and out of memory: *oom). */
static const char *arena_str(struct sched_arena *arena, const char *str, int *oom)
{
    char *copy;
    size_t len;

    if (!str)
        return NULL;
    len = strlen(str) + 1;
    copy = sched__alloc(arena, len);
    if (!copy) {
        *oom = 1;
        return NULL;
    }
    return memcpy(copy, str, len);
}

/* *own: the requests and node types of s, its strings copied into the
 * arena; SCHED_ENOMEM. Its affinity is read only while the session is
 * built (denied[]; the mix window keeps none), and a shape with affinity
 * is never the same as another (same_shape()). */
static int own_shape(struct sched_arena *arena, const struct sched_workload *s,
                     struct sched_workload *own)
{
    const char **types = NULL;
    int i, oom = 0;

    memset(own, 0, sizeof(*own));
    sched__copy_requests(own, s);
    own->affinity = s->affinity;
    own->n_affinity = s->n_affinity;
    own->node_type = arena_str(arena, s->node_type, &oom);
    if (s->n_node_types > 0 && !(types = sched__alloc(arena, (size_t)s->n_node_types *
                                                                 sizeof(*types))))
        oom = 1;
    for (i = 0; types && i < s->n_node_types; i++)
        types[i] = arena_str(arena, s->node_types[i], &oom);
    own->node_types = types;
    own->n_node_types = types ? s->n_node_types : 0;
    return oom ? SCHED_ENOMEM : SCHED_OK;
}

/* Does the copied shape a measure as the mix's shape b does? */
static int same_shape(const struct sched_workload *a, const struct sched_workload *b)
{
    int i;

    if (!sched__same_requests(a, b) || a->n_affinity || b->n_affinity ||
        a->n_node_types != b->n_node_types ||
        !a->node_type != !b->node_type || (a->node_type && strcmp(a->node_type, b->node_type)))
        return 0;
    for (i = 0; i < a->n_node_types; i++)
        if (strcmp(a->node_types[i], b->node_types[i]) != 0)
            return 0;
    return 1;
}

static int asks_no_gpu(const struct sched_workload *s)
{
    return s->gpu_devices == 0 && s->gpu_portion == 0 && s->gpu_memory_mib == 0;
}

int sched__frag_same_mix(const struct sched_session *ss, const struct sched_state *in)
{
    const struct ss_frag *f = &ss->frag;
    int i, j = 0;

    if (!f->built)
        return 0;
    for (i = 0; i < in->n_mix; i++) {
        const struct sched_mix_entry *e = &in->mix[i];
        if (asks_no_gpu(&e->shape))
            continue;
        if (j == f->n || f->shapes[j].weight != e->weight ||
            !same_shape(&f->shapes[j].own, &e->shape))
            return 0;
        j++;
    }
    return j == f->n;
}

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
    f->built = 1;
    f->shapes = sched__calloc(ss->arena, (size_t)ss->in->n_mix, sizeof(*f->shapes));
    if (!f->shapes)
        return SCHED_ENOMEM;
    for (i = 0; i < ss->in->n_mix; i++) {
        const struct sched_workload *s = &ss->in->mix[i].shape;
        struct ss_shape *x = &f->shapes[f->n];
        if (asks_no_gpu(s))
            continue;   /* asks no GPU: strands none */
        if (own_shape(ss->arena, s, &x->own) != SCHED_OK)
            return SCHED_ENOMEM;
        x->shape = &x->own;
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
    f->answer = sched__alloc(ss->arena, ((size_t)ss->n_nodes + 1) * sizeof(*f->answer));
    if (!f->base || !f->known || !f->fitting || !f->answer)
        return SCHED_ENOMEM;
    for (f->memo_mask = 63; f->memo_mask < 4 * (size_t)ss->n_nodes && f->memo_mask < 65535;)
        f->memo_mask = 2 * f->memo_mask + 1;
    if (f->n > 0) {   /* taken from the arena uninitialised: memo_id says what is set */
        f->memo = sched__alloc(ss->arena, (f->memo_mask + 1) * sizeof(struct frag_memo));
        f->memo_id = sched__calloc(ss->arena, f->memo_mask + 2, sizeof(*f->memo_id));
        f->rises = sched__calloc(ss->arena, f->memo_mask + 1, sizeof(struct frag_rise));
        f->base_id = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(*f->base_id));
        if (!f->memo || !f->memo_id || !f->rises || !f->base_id)
            return SCHED_ENOMEM;
    }
    if (!constrained)
        return SCHED_OK;
    f->denied = sched__calloc(ss->arena, (size_t)ss->n_nodes + 1, sizeof(uint64_t));
    if (!f->denied)
        return SCHED_ENOMEM;
    for (node = 0; node < ss->n_nodes; node++)
        for (i = 0; i < f->n; i++)
            if (!sched_node_allowed(f->shapes[i].shape, &ss->in->nodes[node]))
                f->denied[node] |= (uint64_t)1 << i;
    return SCHED_OK;
}

/* The state of node once one pod of w (none: w < 0) takes `devices` (its
 * charge on each) and its CPU and memory. */
static void state_of(const struct sched_session *ss, int node, int w, uint64_t devices,
                     struct fstate *st)
{
    const struct ss_node *n = &ss->nodes[node];
    int32_t charge = w >= 0 ? sched__dev_charge(ss, w, node) : 0, u;
    int d, e;

    st->free = n->gpu_free;
    st->cpu = n->cpu_free - (w >= 0 ? ss_w(ss, w)->cpu_milli : 0);
    st->mem = n->mem_free - (w >= 0 ? ss_w(ss, w)->mem_mib : 0);
    st->gpu_mem = n->gpu_mem;
    st->denied = ss->frag.denied ? ss->frag.denied[node] : 0;
    st->n_gpus = n->n_gpus;
    for (d = 0; d < n->n_gpus; d++) {   /* insertion sort: a node has few devices */
        u = n->dev_used[d];
        if (devices >> d & 1) {
            u += charge;
            st->free -= charge;
        }
        for (e = d; e > 0 && st->used[e - 1] > u; e--)
            st->used[e] = st->used[e - 1];
        st->used[e] = u;
    }
}

static void view_state(const struct sched_session *ss, const struct fstate *st,
                       struct node_view *v)
{
    const struct ss_frag *f = &ss->frag;
    int j, d;

    v->st = st;
    for (j = 0; j < f->n; j++) {
        int32_t charge = f->shapes[j].charge;
        struct room *r = &v->room[j];
        if (charge < 0)
            charge = sched__charge_on(f->shapes[j].shape, st->gpu_mem);
        v->charge[j] = charge;
        r->cnt = 0;
        r->sum = 0;
        if (charge > SCHED_MILLI)
            continue;   /* no device fits: cnt stays 0 */
        /* used[] ascends: the devices with room are a prefix */
        for (d = 0; d < st->n_gpus && SCHED_MILLI - st->used[d] >= charge; d++) {
            r->cnt++;
            r->sum += SCHED_MILLI - st->used[d];
        }
        if (charge == SCHED_MILLI)   /* whole devices: only the empty ones */
            r->sum = (int64_t)r->cnt * SCHED_MILLI;
    }
}

/* usable, capped by the milli-GPU that `left` of a resource feeds when a
 * pod asks `need` of it per pod_gpu milli-GPU: left x pod_gpu / need, in
 * proportion (what is left beyond whole pods feeds the smaller shapes of
 * the mix), computed only when it can bind, so "plenty" never overflows.
 * pods: usable / pod_gpu, the whole pods usable holds; it binds when
 * left / need <= pods, that is left < need x (pods + 1). Step 3 counts
 * half of it (shape_frag()). */
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
    const struct fstate *st = v->st;
    const struct room *r = &v->room[j];
    int64_t usable, pod_gpu, pods;

    if ((st->denied >> j & 1) || v->charge[j] > SCHED_MILLI || r->cnt < x->devices ||
        st->cpu < x->cpu || st->mem < x->mem)
        return st->free;
    pod_gpu = (int64_t)x->devices * v->charge[j];
    if (v->charge[j] == SCHED_MILLI) {
        pods = r->cnt / x->devices;
        usable = pods * pod_gpu;
    } else {
        usable = r->sum;
        pods = usable / pod_gpu;
    }
    usable = (usable + cap_by(usable, pods, st->mem, x->mem, pod_gpu)) / 2;   /* step 3 */
    return st->free - usable;
}

static int64_t measure(const struct sched_session *ss, const struct fstate *st)
{
    struct node_view v;
    int64_t sum = 0;
    int j;

    view_state(ss, st, &v);
    for (j = 0; j < ss->frag.n; j++)
        sum += ss->frag.shapes[j].weight * shape_frag(ss, j, &v);
    return sum;
}

static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ULL;
}

/* The state's F, from the session's memo when it holds the state; *id:
 * the state's serial there (0: states of more devices are not kept). */
static int64_t state_frag(const struct sched_session *ss, const struct fstate *st, uint64_t *id)
{
    const struct ss_frag *f = &ss->frag;
    struct frag_memo *m;
    uint64_t h;
    size_t slot;
    int d;

    *id = 0;
    if (st->n_gpus > FRAG_MEMO_GPUS)
        return measure(ss, st);
    h = mix64(mix64(mix64(mix64(mix64((uint64_t)st->free, (uint64_t)st->cpu), (uint64_t)st->mem),
                          (uint64_t)st->gpu_mem), st->denied), (uint64_t)st->n_gpus);
    for (d = 0; d < st->n_gpus; d++)
        h = mix64(h, (uint64_t)st->used[d]);
    slot = (size_t)(h >> 17) & f->memo_mask;
    m = &((struct frag_memo *)f->memo)[slot];
    if (f->memo_id[slot] && m->free == st->free && m->cpu == st->cpu && m->mem == st->mem &&
        m->gpu_mem == st->gpu_mem && m->denied == st->denied && m->n_gpus == st->n_gpus) {
        for (d = 0; d < st->n_gpus && m->used[d] == st->used[d]; d++)
            ;
        if (d == st->n_gpus) {
            *id = f->memo_id[slot];
            return m->frag;
        }
    }
    m->free = st->free;
    m->cpu = st->cpu;
    m->mem = st->mem;
    m->gpu_mem = st->gpu_mem;
    m->denied = st->denied;
    m->n_gpus = st->n_gpus;
    for (d = 0; d < st->n_gpus; d++)
        m->used[d] = (int16_t)st->used[d];
    m->frag = measure(ss, st);
    f->memo_id[slot] = *id = ++f->memo_id[f->memo_mask + 1];
    return m->frag;
}

/* The node's fragmentation now, kept until a pod comes or goes there
 * (node_add() clears known[]). */
static int64_t base_frag(const struct sched_session *ss, int node)
{
    const struct ss_frag *f = &ss->frag;
    struct fstate st;

    if (!(f->known[node] & FRAG_BASE)) {
        state_of(ss, node, -1, 0, &st);
        f->base[node] = state_frag(ss, &st, &f->base_id[node]);
        f->known[node] |= FRAG_BASE;
    }
    return f->base[node];
}

int64_t sched__frag_node(const struct sched_session *ss, int node)
{
    if (ss->frag.n == 0)
        return 0;
    return base_frag(ss, node);
}

uint64_t sched__frag_state(const struct sched_session *ss, int node)
{
    if (ss->frag.n == 0)
        return 0;
    base_frag(ss, node);
    return ss->frag.base_id[node];
}

/* How much one pod of w on `devices` of node raises its fragmentation. */
static int64_t rise_of(const struct sched_session *ss, int w, int node, uint64_t devices)
{
    struct fstate st;
    uint64_t id;

    state_of(ss, node, w, devices, &st);
    return state_frag(ss, &st, &id) - base_frag(ss, node);
}

/* The same for a whole-device pod (it takes empty devices) or one that
 * asks no GPU (devices 0): the state it leaves is a function of the
 * node's state and the pod's shape alone, whichever devices it gets;
 * remembered per (state serial, shape). */
static int64_t whole_rise(const struct sched_session *ss, int w, int node, uint64_t devices)
{
    const struct ss_frag *f = &ss->frag;
    const struct sched_workload *wl = ss_w(ss, w);
    struct frag_rise *r;
    uint64_t id;

    base_frag(ss, node);
    id = f->base_id[node];
    if (id == 0)
        return rise_of(ss, w, node, devices);
    r = &((struct frag_rise *)f->rises)[(size_t)(mix64(mix64(mix64(id, (uint64_t)wl->gpu_devices),
                                                             (uint64_t)wl->cpu_milli),
                                                       (uint64_t)wl->mem_mib) >>
                                                 17) &
                                         f->memo_mask];
    if (r->state != id || r->devices != wl->gpu_devices || r->cpu != wl->cpu_milli ||
        r->mem != wl->mem_mib) {
        int64_t rise = rise_of(ss, w, node, devices);
        r->state = id;
        r->devices = wl->gpu_devices;
        r->cpu = wl->cpu_milli;
        r->mem = wl->mem_mib;
        r->rise = rise;
    }
    return r->rise;
}

int64_t sched__frag_rise(const struct sched_session *ss, int w, int node, uint64_t devices)
{
    if (ss->frag.n == 0)
        return 0;
    return rise_of(ss, w, node, devices);
}

/* Do pods of a and b take the same devices of a node, and raise its
 * fragmentation alike? What frag_devices() reads of a pod: its devices,
 * its charge on them, its CPU and memory. */
static int same_answer(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *x = ss_w(ss, a), *y = ss_w(ss, b);

    return a == b ||
           (x->cpu_milli == y->cpu_milli && x->mem_mib == y->mem_mib &&
            x->gpu_devices == y->gpu_devices && x->gpu_portion == y->gpu_portion &&
            x->gpu_memory_mib == y->gpu_memory_mib && sched__whole(x) == sched__whole(y) &&
            sched_shared_devices(x) == sched_shared_devices(y));
}

/* *out: st with one device used `from` raised by charge (used[] sorted). */
static void raise_one(const struct fstate *st, int32_t from, int32_t charge, struct fstate *out)
{
    int i;

    *out = *st;
    for (i = 0; out->used[i] != from; i++)
        ;
    for (; i + 1 < out->n_gpus && out->used[i + 1] < from + charge; i++)
        out->used[i] = out->used[i + 1];
    out->used[i] = from + charge;
    out->free -= charge;
}

static uint64_t frag_devices(const struct sched_session *ss, int w, int node, int64_t *rise)
{
    const struct ss_node *n = &ss->nodes[node];
    struct fstate st, one_st;
    uint64_t best = 0, picked;
    int64_t r, best_rise = 0;
    int32_t charge = sched__dev_charge(ss, w, node);
    uint64_t id;
    int d, fresh;

    picked = sched__pick_devices(ss, w, node, n->dev_used, n->dev_whole, &fresh);
    *rise = 0;
    if (ss->frag.n == 0)
        return picked;
    if (!sched__asks_gpu(ss_w(ss, w))) {   /* its CPU and memory may strand GPUs */
        *rise = whole_rise(ss, w, node, 0);
        return 0;
    }
    if (!picked)
        return 0;
    if (sched__whole(ss_w(ss, w))) {
        *rise = whole_rise(ss, w, node, picked);
        return picked;
    }
    if (sched_shared_devices(ss_w(ss, w)) != 1) {
        *rise = rise_of(ss, w, node, picked);
        return picked;
    }
    /* one shared device: the one whose charge strands least; ties go to
     * the device sched__pick_devices() chose, then the lower index.
     * Devices used alike strand alike: each use is measured once. The
     * node with the pod's CPU and memory taken is sorted once. */
    state_of(ss, node, w, 0, &st);
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
        raise_one(&st, n->dev_used[d], charge, &one_st);
        r = state_frag(ss, &one_st, &id) - base_frag(ss, node);
        if (!best || r < best_rise || (r == best_rise && one == picked)) {
            best = one;
            best_rise = r;
        }
    }
    *rise = best_rise;
    return best;
}

/* The node's last answer is kept until a pod comes or goes there: a move
 * trial asks a node for a pod, then places the pod there (victims.c). */
uint64_t sched__frag_devices(const struct sched_session *ss, int w, int node, int64_t *rise)
{
    const struct ss_frag *f = &ss->frag;
    struct frag_answer *a;

    if (f->n == 0)
        return frag_devices(ss, w, node, rise);
    a = &f->answer[node];
    if (!(f->known[node] & FRAG_ANSWER) || !same_answer(ss, w, a->w)) {
        a->w = w;
        a->devices = frag_devices(ss, w, node, &a->rise);
        f->known[node] |= FRAG_ANSWER;
    }
    *rise = a->rise;
    return a->devices;
}
