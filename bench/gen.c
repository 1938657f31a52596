/*
 * gen.c: building the benchmark's synthetic clusters (see gen.h for the
 * shape). Every random choice comes from one splitmix64 stream seeded by
 * the options, in a fixed order, so a world is reproducible.
 *
 * Step 1: pools, nodes, queues and quotas.
 * Step 2: running workloads, node by node, until each node holds its share
 *         of fill_pct % (some nodes one GPU more, so the total is exact).
 * Step 3: pending workloads.
 */
#include "gen.h"
#include "splitmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 16
#define CPU_PER_GPU 4000       /* millicores a pod asks per GPU */
#define MEM_PER_GPU 16384      /* MiB a pod asks per GPU */
#define MAX_RUNNING_GANG 16

/* ---- Randomness ---- */

static int below(struct gen_world *w, int n)
{
    return splitmix_below(&w->rng, n);
}

/* lo..hi */
static int between(struct gen_world *w, int lo, int hi)
{
    return lo + below(w, hi - lo + 1);
}

/* ---- Storage ---- */

static const char *add_name(struct gen_world *w, const char *prefix, int i)
{
    char *at = w->names + w->n_names;
    int n = snprintf(at, NAME_MAX_LEN, "%s%d", prefix, i);

    w->n_names += (size_t)n + 1;
    return at;
}

static int alloc_world(struct gen_world *w, const struct gen_opts *o)
{
    size_t n_q = (size_t)o->departments * (size_t)(o->projects + 1);
    size_t n_running = (size_t)o->nodes * (size_t)o->gpus;   /* at most one per GPU */

    w->cap_wls = (int)(n_running + (size_t)o->pending + (size_t)o->extra);
    w->cap_pods = n_running + (size_t)o->pending * 64 + (size_t)o->extra * 64 +
                  (size_t)MAX_RUNNING_GANG * 8 * (size_t)o->pools;
    w->cap_names = ((size_t)o->nodes * 3 + (size_t)w->cap_wls + n_q) * NAME_MAX_LEN;
    w->labels = calloc(2 * (size_t)o->nodes + 1, sizeof(*w->labels));
    w->pools = calloc((size_t)o->pools, sizeof(*w->pools));
    w->nodes = calloc((size_t)o->nodes, sizeof(*w->nodes));
    w->queues = calloc(n_q, sizeof(*w->queues));
    w->quotas = calloc(n_q * (size_t)o->pools * SCHED_NRES, sizeof(*w->quotas));
    w->default_pools = calloc(n_q * (size_t)o->pools, sizeof(int));
    w->wls = calloc((size_t)w->cap_wls, sizeof(*w->wls));
    w->pods = calloc(w->cap_pods, sizeof(*w->pods));
    w->names = calloc(w->cap_names, 1);
    return w->pools && w->nodes && w->queues && w->quotas && w->default_pools && w->wls &&
                   w->pods && w->names && w->labels
               ? 0
               : -1;
}

void gen_world_free(struct gen_world *w)
{
    if (!w)
        return;
    free(w->pools);
    free(w->nodes);
    free(w->labels);
    free(w->queues);
    free(w->quotas);
    free(w->default_pools);
    free(w->wls);
    free(w->pods);
    free(w->names);
    sched_mix_window_free(w->mix);
    free(w);
}

/* ---- Step 1: pools, nodes, queues ---- */

static const char *const topology[] = {"bench/block", "bench/rack", SCHED_HOSTNAME_LABEL};

static void gen_pools(struct gen_world *w, const struct gen_opts *o)
{
    static const char *const names[GEN_MAX_POOLS] = {"default", "pool-1", "pool-2", "pool-3",
                                                     "pool-4",  "pool-5", "pool-6", "pool-7"};
    int p;

    w->n_pools = o->pools;
    for (p = 0; p < o->pools; p++) {
        w->pools[p].name = names[p];
        w->pools[p].gpu_placement = (uint8_t)o->placement;
        w->pools[p].cpu_placement = (uint8_t)o->placement;
        w->pools[p].tbf_window_ms = 604800000;
        w->pools[p].tbf_k_milli = 1000;
        if (o->rack_nodes > 0) {
            w->pools[p].topology = topology;
            w->pools[p].n_topology = 3;
        }
    }
}

static void gen_nodes(struct gen_world *w, const struct gen_opts *o)
{
    int i;

    w->n_nodes = o->nodes;
    for (i = 0; i < o->nodes; i++) {
        struct sched_node *n = &w->nodes[i];
        n->name = add_name(w, "node-", i);
        n->pool = i % o->pools;
        n->ready = 1;
        n->n_gpus = o->gpus;
        n->cpu_milli = (int64_t)o->gpus * CPU_PER_GPU * 2;
        n->mem_mib = (int64_t)o->gpus * MEM_PER_GPU * 2;
        if (o->rack_nodes > 0) {   /* no draw from the generator: the same world either way */
            struct sched_label *l = &w->labels[2 * i];
            l[0].key = topology[0];
            l[0].value = add_name(w, "block-", i / o->rack_nodes / 8);
            l[1].key = topology[1];
            l[1].value = add_name(w, "rack-", i / o->rack_nodes);
            n->labels = l;
            n->n_labels = 2;
        }
    }
}

static int64_t pool_capacity(const struct gen_world *w, int pool)
{
    int64_t total = 0;
    int i;

    for (i = 0; i < w->n_nodes; i++)
        if (w->nodes[i].pool == pool)
            total += (int64_t)w->nodes[i].n_gpus * SCHED_MILLI;
    return total;
}

/* Part i of `total` split in n: whole GPUs, remainders to the first parts. */
static int64_t part(int64_t total, int n, int i)
{
    int64_t units = total / SCHED_MILLI, base = units / n;

    return (base + (i < units % n)) * SCHED_MILLI;
}

static void set_quota(struct gen_world *w, int q, int pool, int64_t gpu_deserved)
{
    struct sched_quota *qt = &w->quotas[((size_t)q * (size_t)w->n_pools + (size_t)pool) * SCHED_NRES];
    int r;

    for (r = 0; r < SCHED_NRES; r++) {
        qt[r].deserved = r == SCHED_GPU ? gpu_deserved : SCHED_UNLIMITED;
        qt[r].limit = SCHED_UNLIMITED;
        qt[r].weight = 1000;
    }
}

static void gen_queue(struct gen_world *w, int q, int parent, const char *name, int k)
{
    int p;

    w->queues[q].name = name;
    w->queues[q].parent = parent;
    w->queues[q].quota = &w->quotas[(size_t)q * (size_t)w->n_pools * SCHED_NRES];
    if (parent < 0)
        return;
    for (p = 0; p < w->n_pools; p++)
        w->default_pools[(size_t)q * (size_t)w->n_pools + (size_t)p] = (k + p) % w->n_pools;
    w->queues[q].default_pools = &w->default_pools[(size_t)q * (size_t)w->n_pools];
    w->queues[q].n_default_pools = w->n_pools;
}

static void gen_queues(struct gen_world *w, const struct gen_opts *o)
{
    int d, j, p, q;

    w->n_queues = 0;
    for (d = 0; d < o->departments; d++) {
        int dq = w->n_queues++;
        gen_queue(w, dq, -1, add_name(w, "dept-", d), 0);
        w->queues[dq].rank = o->ranks > 1 ? d % o->ranks : 0;
        for (p = 0; p < o->pools; p++)
            set_quota(w, dq, p, part(pool_capacity(w, p), o->departments, d));
        for (j = 0; j < o->projects; j++) {
            q = w->n_queues++;
            gen_queue(w, q, dq, add_name(w, "proj-", d * o->projects + j), d * o->projects + j);
            for (p = 0; p < o->pools; p++)
                set_quota(w, q, p,
                          part(part(pool_capacity(w, p), o->departments, d), o->projects, j));
        }
    }
}

/* Queues are laid out department by department: [dept, its projects...]. */
int gen_world_project(const struct gen_world *w, int k)
{
    int per = w->projects_per_dept;

    return (k / per) * (per + 1) + 1 + k % per;
}

/* ---- Workloads ---- */

static struct sched_workload *new_workload(struct gen_world *w, int queue, int type, int n_pods)
{
    struct sched_workload *wl;
    int k;

    if (w->n_wls >= w->cap_wls || w->n_pods + (size_t)n_pods > w->cap_pods)
        return NULL;
    wl = &w->wls[w->n_wls];
    memset(wl, 0, sizeof(*wl));
    wl->name = add_name(w, "w", w->n_wls);
    w->n_wls++;
    wl->queue = queue;
    wl->type = type;
    sched_priority_class(sched_default_priority_class(type), &wl->priority);
    wl->preemptible = sched_default_preemptible(wl->priority);
    wl->phase = SCHED_PENDING;
    wl->n_pods = n_pods;
    wl->min_pods = n_pods;
    wl->queued_seq = w->seq++;
    wl->started_ms = SCHED_NO_TIME;
    wl->stale_since_ms = SCHED_NO_TIME;
    wl->pods = &w->pods[w->n_pods];
    w->n_pods += (size_t)n_pods;
    for (k = 0; k < n_pods; k++)
        wl->pods[k].node = -1;
    return wl;
}

static void set_gpus(struct sched_workload *wl, int gpus)
{
    wl->gpu_devices = gpus;
    wl->cpu_milli = (int64_t)gpus * CPU_PER_GPU;
    wl->mem_mib = (int64_t)gpus * MEM_PER_GPU;
}

int gen_world_submit(struct gen_world *w, int queue, int gpus, int pods)
{
    struct sched_workload *wl =
        new_workload(w, queue, pods > 1 ? SCHED_DISTRIBUTED : SCHED_TRAINING, pods);

    if (!wl)
        return -1;
    set_gpus(wl, gpus);
    return (int)(wl - w->wls);
}

/* ---- Step 2: running workloads ---- */

struct filler {
    uint64_t *used;          /* [n_nodes] devices in use */
    int64_t *np_used;        /* [n_queues * n_pools] non-preemptible milli-GPU */
    int open[GEN_MAX_POOLS][9];   /* [pool][gpus]: a running gang still taking pods, or -1 */
    int open_target[GEN_MAX_POOLS][9];
};

static uint64_t take_devices(uint64_t *used, int n_gpus, int want)
{
    uint64_t got = 0;
    int d;

    for (d = 0; d < n_gpus && want > 0; d++) {
        if (!(*used >> d & 1)) {
            got |= 1ull << d;
            want--;
        }
    }
    *used |= got;
    return got;
}

/* Whether q and its department stay within deserved with `gpus` more
 * non-preemptible GPUs in `pool`; if so they are counted. */
static int np_within_deserved(struct gen_world *w, struct filler *f, int q, int pool, int gpus)
{
    int64_t want = (int64_t)gpus * SCHED_MILLI, d;
    int a;

    for (a = q; a >= 0; a = w->queues[a].parent) {
        d = w->queues[a].quota[pool * SCHED_NRES + SCHED_GPU].deserved;
        if (d >= 0 && f->np_used[(size_t)a * (size_t)w->n_pools + (size_t)pool] + want > d)
            return 0;
    }
    for (a = q; a >= 0; a = w->queues[a].parent)
        f->np_used[(size_t)a * (size_t)w->n_pools + (size_t)pool] += want;
    return 1;
}

static void start(struct gen_world *w, struct sched_workload *wl)
{
    wl->phase = SCHED_RUNNING;
    wl->started_ms = w->now_ms - (int64_t)below(w, 36000) * 1000;
    w->n_running++;
}

/* The next pod of the open gang g, on node n. */
static void gang_pod(struct gen_world *w, struct filler *f, int g, int n)
{
    struct sched_workload *wl = &w->wls[g];
    int pool = w->nodes[n].pool, gpus = wl->gpu_devices;
    struct sched_pod *pod = &wl->pods[wl->min_pods++];

    pod->node = n;
    pod->devices = take_devices(&f->used[n], w->nodes[n].n_gpus, gpus);
    w->gpus_running += (int64_t)gpus * SCHED_MILLI;
    if (wl->min_pods == f->open_target[pool][gpus])
        f->open[pool][gpus] = -1;
}

static int random_project(struct gen_world *w)
{
    return gen_world_project(w, below(w, w->n_projects));
}

static int place_single(struct gen_world *w, struct filler *f, int n, int gpus)
{
    int q = random_project(w), pool = w->nodes[n].pool, type = SCHED_TRAINING;
    struct sched_workload *wl;

    if (below(w, 100) < 15 && np_within_deserved(w, f, q, pool, gpus))
        type = below(w, 2) ? SCHED_INFERENCE : SCHED_WORKSPACE;
    wl = new_workload(w, q, type, 1);
    if (!wl)
        return -1;
    set_gpus(wl, gpus);
    wl->pods[0].node = n;
    wl->pods[0].devices = take_devices(&f->used[n], w->nodes[n].n_gpus, gpus);
    w->gpus_running += (int64_t)gpus * SCHED_MILLI;
    start(w, wl);
    return 0;
}

static int open_gang(struct gen_world *w, struct filler *f, int n, int gpus)
{
    int pool = w->nodes[n].pool, target = between(w, 2, MAX_RUNNING_GANG);
    struct sched_workload *wl = new_workload(w, random_project(w), SCHED_DISTRIBUTED, target);

    if (!wl)
        return -1;
    set_gpus(wl, gpus);
    wl->min_pods = 0;   /* counts the pods placed so far */
    f->open[pool][gpus] = (int)(wl - w->wls);
    f->open_target[pool][gpus] = target;
    start(w, wl);
    w->n_gangs_running++;
    gang_pod(w, f, f->open[pool][gpus], n);
    return 0;
}

/* A gang that did not reach its target keeps the pods it has. */
static void close_gangs(struct gen_world *w, struct filler *f)
{
    int p, g;

    for (p = 0; p < GEN_MAX_POOLS; p++)
        for (g = 0; g <= 8; g++)
            if (f->open[p][g] >= 0) {
                w->wls[f->open[p][g]].n_pods = w->wls[f->open[p][g]].min_pods;
                f->open[p][g] = -1;
            }
}

static int fill_node(struct gen_world *w, struct filler *f, int n, int target)
{
    int held = 0, gpus, rc = 0;

    while (rc == 0 && held < target) {
        gpus = between(w, 1, 8);
        gpus = gpus > target - held ? target - held : gpus;
        if (f->open[w->nodes[n].pool][gpus] >= 0)
            gang_pod(w, f, f->open[w->nodes[n].pool][gpus], n);
        else if (below(w, 100) < 10)
            rc = open_gang(w, f, n, gpus);
        else
            rc = place_single(w, f, n, gpus);
        held += gpus;
    }
    return rc;
}

static int gen_running(struct gen_world *w, const struct gen_opts *o)
{
    struct filler f;
    int64_t total = (int64_t)o->nodes * o->gpus, want = total * o->fill_pct / 100;
    int64_t base = want / o->nodes, extra = want % o->nodes;
    int n, rc = 0;

    memset(&f, 0, sizeof(f));
    memset(f.open, 0xff, sizeof(f.open));
    f.used = calloc((size_t)o->nodes, sizeof(*f.used));
    f.np_used = calloc((size_t)w->n_queues * (size_t)w->n_pools, sizeof(*f.np_used));
    if (!f.used || !f.np_used)
        rc = -1;
    /* spread the extra GPUs over the nodes, deterministically */
    for (n = 0; rc == 0 && n < o->nodes; n++)
        rc = fill_node(w, &f, n, (int)base + ((int64_t)n * extra / o->nodes !=
                                              (int64_t)(n + 1) * extra / o->nodes));
    close_gangs(w, &f);
    free(f.used);
    free(f.np_used);
    return rc;
}

/* ---- Step 3: pending workloads ---- */

static int gen_pending(struct gen_world *w, const struct gen_opts *o)
{
    static const int types[10] = {SCHED_TRAINING,  SCHED_TRAINING, SCHED_TRAINING,
                                  SCHED_TRAINING,  SCHED_TRAINING, SCHED_TRAINING,
                                  SCHED_TRAINING,  SCHED_TRAINING, SCHED_WORKSPACE,
                                  SCHED_INFERENCE};
    struct sched_workload *wl;
    int i, gang, interactive, pods, type;

    for (i = 0; i < o->pending; i++) {
        gang = below(w, 100) < o->gang_pct;
        /* drawn only when asked for: the default worlds keep their stream */
        interactive = !gang && o->interactive_pct > 0 && below(w, 100) < o->interactive_pct;
        pods = gang ? between(w, 2, 64) : 1;
        type = gang ? SCHED_DISTRIBUTED : interactive ? SCHED_WORKSPACE : types[below(w, 10)];
        wl = new_workload(w, random_project(w), type, pods);
        if (!wl)
            return -1;
        if (interactive) {
            sched_priority_class("interactive-preemptible", &wl->priority);
            wl->preemptible = 1;
        }
        set_gpus(wl, o->pending_gpus > 0 ? o->pending_gpus : between(w, 1, 8));
        if (gang && o->rack_nodes > 0 && w->n_gangs_pending % 2 == 0)
            wl->topology_required = topology[1];
        w->n_gangs_pending += gang;
    }
    return 0;
}

/* The mix a driver would have kept: every workload, as it was generated. */
static int note_mix(struct gen_world *w)
{
    int i;

    w->mix = sched_mix_window_new(SCHED_MIX_WINDOW);
    if (!w->mix)
        return -1;
    for (i = 0; i < w->n_wls; i++)
        if (sched_mix_window_note(w->mix, &w->wls[i]) != SCHED_OK)
            return -1;
    return 0;
}

int gen_world_new(const struct gen_opts *o, struct gen_world **out)
{
    struct gen_world *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (!w || alloc_world(w, o) != 0) {
        gen_world_free(w);
        return -1;
    }
    w->rng = o->seed;
    w->now_ms = 1000000000000LL;
    w->projects_per_dept = o->projects;
    w->n_projects = o->departments * o->projects;
    gen_pools(w, o);
    gen_nodes(w, o);
    gen_queues(w, o);
    if (gen_running(w, o) != 0 || gen_pending(w, o) != 0 || note_mix(w) != 0) {
        gen_world_free(w);
        return -1;
    }
    *out = w;
    return 0;
}

void gen_world_state(const struct gen_world *w, struct sched_state *st)
{
    memset(st, 0, sizeof(*st));
    st->now_ms = w->now_ms;
    st->pools = w->pools;
    st->n_pools = w->n_pools;
    st->nodes = w->nodes;
    st->n_nodes = w->n_nodes;
    st->queues = w->queues;
    st->n_queues = w->n_queues;
    st->workloads = w->wls;
    st->n_workloads = w->n_wls;
    st->n_mix = sched_mix_window_get(w->mix, &st->mix);
}
