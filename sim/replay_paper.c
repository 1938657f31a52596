/*
 * replay_paper.c: the paper's protocol (replay_paper.h) for one trace,
 * policy and seed, and its report.
 *
 * Step 1: arrivals and node order from the seed (make_arrivals()).
 * Step 2: place each arrival: the paper's policies on the cluster model of
 *         replay_policies.c (every fitting node scored, the best taken,
 *         ties to the node first in the seed's order); allot through its
 *         core: the arrival submitted to the simulated world, passes of
 *         sched_cycle() until it is placed or a pass decides nothing
 *         (consolidation off; allot-moves, with it on, places the arrival
 *         in the pass after its moves), the world's nodes named
 *         "RANK-name" so that the core's last tie-break (by name) follows
 *         the seed's order. A pod left pending is withdrawn (dropped).
 * Step 3: after each arrival, the arrived demand and the allocation are
 *         sampled; the run stops once the demand passes 101.5%.
 */
#include "replay_paper.h"
#include "grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME_LEN 48
#define WINDOW_LO 99.5
#define WINDOW_HI 100.5
#define WIDE_LO 98.5      /* the paper's analysis widens to the next integers */
#define WIDE_HI 101.5

/* ---- The paper's published means (../shared/traces/alibaba-gpu-v2023) ---- */

static const struct {
    const char *label;
    double v[6];          /* Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD */
} published[] = {
    {"cpu050", {682, 433, 402, 406, 400, 311}},
    {"cpu100", {781, 514, 471, 466, 419, 298}},
    {"cpu200", {1054, 779, 642, 623, 488, 322}},
    {"default", {851, 583, 519, 511, 443, 296}},
    {"gpushare100", {1311, 1119, 1104, 1110, 956, 830}},
    {"gpushare60", {1068, 819, 814, 798, 680, 543}},
    {"gpuspec10", {854, 610, 500, 482, 429, 332}},
    {"gpuspec20", {876, 727, 676, 666, 717, 332}},
    {"gpuspec25", {906, 905, 844, 822, 890, 378}},
    {"multigpu20", {813, 506, 414, 404, 389, 278}},
    {"multigpu40", {909, 370, 289, 274, 304, 192}},
    {"multigpu50", {1163, 327, 268, 245, 272, 181}},
};

double rpp_published(const char *label, int policy)
{
    size_t i;

    if (policy < 0 || policy > RPP_FGD)
        return -1;
    for (i = 0; i < sizeof(published) / sizeof(published[0]); i++)
        if (strcmp(published[i].label, label) == 0)
            return published[i].v[policy];
    return -1;
}

const char *rpp_label(const char *pods_file, char *buf, size_t len)
{
    const char *base = strrchr(pods_file, '/'), *pre = "openb_pod_list_";
    size_t n;

    base = base ? base + 1 : pods_file;
    if (strncmp(base, pre, strlen(pre)) == 0)
        base += strlen(pre);
    n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".csv") == 0)
        n -= 4;
    snprintf(buf, len, "%.*s", (int)n, base);
    return buf;
}

int rpp_ctx_init(struct rpp_ctx *c, const struct trace *t, const struct replay_model *m,
                 const char *label)
{
    int i;

    memset(c, 0, sizeof(*c));
    c->t = t;
    c->m = m;
    c->label = label;
    for (i = 0; i < t->n_nodes; i++)
        c->total_milli += (int64_t)t->nodes[i].gpus * RPP_MILLI;
    return rpp_shapes_of_trace(t, &c->shapes);
}

void rpp_ctx_free(struct rpp_ctx *c)
{
    rpp_shapes_free(&c->shapes);
}

/* ---- Step 1 ---- */

struct prun {
    const struct rpp_ctx *c;
    int policy;
    int place;                  /* the policy that places: fgd for fgd-moves */
    uint64_t rng, policy_rng;
    int *arrivals, n_arrivals;
    int *order;                 /* node indices in the seed's order */
    int64_t arrived, alloc;
    double sum, wide_sum;
    int n, wide_n;
    struct rpp_result *out;
};

static int below(uint64_t *rng, int n)
{
    return (int)(rpp_splitmix64(rng) % (uint64_t)n);
}

static int64_t task_gpu(const struct trace *t, int i)
{
    return trace_task_gpu(&t->tasks[i]);
}

static int make_arrivals(struct prun *r)
{
    const struct trace *t = r->c->t;
    int n = t->n_tasks, cap = 2 * n + 16, i, j, k;
    int64_t target = (int64_t)llround(RPP_INFLATE * (double)r->c->total_milli), total = 0;

    r->arrivals = malloc((size_t)cap * sizeof(int));
    r->order = malloc((size_t)t->n_nodes * sizeof(int));
    if (!r->arrivals || !r->order)
        return -1;
    for (i = 0; i < n; i++) {
        r->arrivals[i] = i;
        total += task_gpu(t, i);
    }
    for (i = n - 1; i > 0; i--) {
        j = below(&r->rng, i + 1);
        k = r->arrivals[i];
        r->arrivals[i] = r->arrivals[j];
        r->arrivals[j] = k;
    }
    while (total > target && n > 0) {
        i = below(&r->rng, n);
        total -= task_gpu(t, r->arrivals[i]);
        memmove(&r->arrivals[i], &r->arrivals[i + 1], (size_t)(n - i - 1) * sizeof(int));
        n--;
    }
    while (n < 100 * t->n_tasks + 100000) {
        k = below(&r->rng, t->n_tasks);
        if (total + task_gpu(t, k) > target)
            break;
        if (sim_grow(&r->arrivals, n, &cap, sizeof(*r->arrivals), cap) != 0)
            return -1;
        r->arrivals[n++] = k;
        total += task_gpu(t, k);
    }
    r->n_arrivals = n;
    for (i = 0; i < t->n_nodes; i++)
        r->order[i] = i;
    for (i = t->n_nodes - 1; i > 0; i--) {
        j = below(&r->rng, i + 1);
        k = r->order[i];
        r->order[i] = r->order[j];
        r->order[j] = k;
    }
    return 0;
}

/* ---- Step 3 ---- */

/* 1 once the run has what it needs. */
static int sample(struct prun *r)
{
    double x = 100.0 * (double)r->arrived / (double)r->c->total_milli;
    double idle = (double)(r->c->total_milli - r->alloc) / RPP_MILLI;

    r->out->arrivals++;
    if (x >= WINDOW_LO && x < WINDOW_HI) {
        r->sum += idle;
        r->n++;
    }
    if (x >= WIDE_LO && x < WIDE_HI) {
        r->wide_sum += idle;
        r->wide_n++;
    }
    return x >= WIDE_HI;
}

static void finish(struct prun *r)
{
    r->out->window = r->n ? r->n : r->wide_n;
    r->out->idle100 = r->n ? r->sum / r->n : r->wide_n ? r->wide_sum / r->wide_n : -1;
}

/* ---- Step 2, the paper's policies ---- */

/* The node p went onto (and its devices in *devs), or -1: it fits nowhere. */
static int place_baseline(struct prun *r, struct rpp_node *nodes, const struct rpp_pod *p,
                          int *cand, uint64_t *devs)
{
    const struct rpp_shapes *sh = r->place == RPP_FGD ? &r->c->shapes : NULL;
    uint64_t dev, best_dev = 0;
    int i, s, best = -1, best_s = -1, n_cand = 0;

    for (i = 0; i < r->c->t->n_nodes; i++) {
        struct rpp_node *n = &nodes[r->order[i]];

        if (!rpp_fits(n, p))
            continue;
        if (r->place == RPP_RANDOM) {
            cand[n_cand++] = r->order[i];
            continue;
        }
        s = rpp_score(r->place, n, p, sh, &r->policy_rng, &dev);
        if (s > best_s) {
            best_s = s;
            best = r->order[i];
            best_dev = dev;
        }
    }
    if (r->place == RPP_RANDOM && n_cand > 0) {
        best = cand[below(&r->policy_rng, n_cand)];
        rpp_score(RPP_RANDOM, &nodes[best], p, NULL, &r->policy_rng, &best_dev);
    }
    if (best < 0)
        return -1;
    rpp_apply(&nodes[best], p, best_dev, 1, sh);
    *devs = best_dev;
    return best;
}

/* Every node empty (FGD: its fragmentation too). 0, or -1 with err. */
static int empty_nodes(const struct prun *r, struct rpp_node *nodes, char *err, size_t len)
{
    const struct trace *t = r->c->t;
    int i, d;

    memset(nodes, 0, (size_t)t->n_nodes * sizeof(*nodes));
    for (i = 0; i < t->n_nodes; i++) {
        nodes[i].cpu_left = t->nodes[i].cpu_milli;
        nodes[i].mem_left = t->nodes[i].mem_mib;
        nodes[i].model = t->nodes[i].model;
        nodes[i].n_gpus = t->nodes[i].gpus;
        if (nodes[i].n_gpus > RPP_MAX_GPUS) {
            snprintf(err, len, "node %s: %d GPUs, at most %d are supported", t->nodes[i].name,
                     nodes[i].n_gpus, RPP_MAX_GPUS);
            return -1;
        }
        for (d = 0; d < nodes[i].n_gpus; d++)
            nodes[i].dev_left[d] = RPP_MILLI;
        if (r->place == RPP_FGD)
            nodes[i].frag = rpp_frag(&nodes[i], &r->c->shapes);
    }
    return 0;
}

/* The policies' cluster model, empty, and the placer's scratch. */
struct bnodes {
    struct rpp_node *nodes;
    int *cand;
};

static void bnodes_free(struct bnodes *b)
{
    free(b->nodes);
    free(b->cand);
}

static int bnodes_new(const struct prun *r, struct bnodes *b, char *err, size_t len)
{
    int n = r->c->t->n_nodes;

    b->nodes = calloc((size_t)n, sizeof(*b->nodes));
    b->cand = malloc((size_t)n * sizeof(int));
    if (!b->nodes || !b->cand) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    return empty_nodes(r, b->nodes, err, len);
}

static int run_baseline(struct prun *r, char *err, size_t len)
{
    const struct trace *t = r->c->t;
    struct bnodes b = {NULL, NULL};
    struct rpp_pod p;
    uint64_t devs;
    int i, rc = -1;

    if (bnodes_new(r, &b, err, len) != 0)
        goto out_free;
    for (i = 0; i < r->n_arrivals; i++) {
        rpp_pod_of_task(t, r->arrivals[i], &p);
        r->arrived += task_gpu(t, r->arrivals[i]);
        if (place_baseline(r, b.nodes, &p, b.cand, &devs) >= 0)
            r->alloc += (int64_t)p.num_gpu * p.milli;
        else
            r->out->dropped++;
        if (sample(r))
            break;
    }
    rc = 0;
out_free:
    bnodes_free(&b);
    return rc;
}

/* ---- Step 2, allot's core ---- */

struct arun {
    struct scenario layout;
    struct sched_pool *pools;
    struct sched_node *nodes;
    char *node_names, *names;
    struct world *w;
    struct world_err e;
    int n_finished;
};

static void arun_free(struct arun *a)
{
    world_free(a->w);
    free(a->pools);
    free(a->nodes);
    free(a->node_names);
    free(a->names);
}

static int allot_world(struct prun *r, struct arun *a)
{
    const struct replay_model *m = r->c->m;
    int i, n = m->layout.n_nodes;

    if (replay_layout(m, replay_policy_placement(RP_ALLOT), &a->layout, &a->pools) != 0)
        return -1;
    a->nodes = malloc((size_t)n * sizeof(*a->nodes));
    a->node_names = malloc((size_t)n * NAME_LEN);
    a->names = malloc((size_t)r->n_arrivals * NAME_LEN);
    if (!a->nodes || !a->node_names || !a->names)
        return -1;
    for (i = 0; i < n; i++) {   /* rank in the seed's order, then the name */
        int node = r->order[i];
        char *name = &a->node_names[(size_t)node * NAME_LEN];

        a->nodes[node] = m->layout.nodes[node];
        snprintf(name, NAME_LEN, "%05d-%.36s", i, m->layout.nodes[node].name);
        a->nodes[node].name = name;
    }
    a->layout.nodes = a->nodes;
    return world_new(&a->layout, &a->w);
}

/* Arrival k, pending in the world. */
static int allot_submit(struct prun *r, struct arun *a, int k)
{
    struct scn_submit sub;
    int task = r->arrivals[k];

    memset(&sub, 0, sizeof(sub));
    sub.w = r->c->m->tmpl[task];
    sub.w.name = &a->names[(size_t)k * NAME_LEN];
    snprintf(&a->names[(size_t)k * NAME_LEN], NAME_LEN, "%.30s#%d", r->c->t->tasks[task].name,
             k);
    sub.runtime_ms = SCHED_NO_TIME;
    return world_submit(a->w, &sub, &a->e);
}

/* One pass of the core; its moves and evictions counted. */
static int allot_pass(struct prun *r, struct arun *a, const struct sched_config *cfg,
                      struct sched_result *res)
{
    int d;

    if (world_pass(a->w, cfg, res, &a->e) != 0)
        return -1;
    for (d = 0; d < res->n_decisions; d++) {
        r->out->disturbed += res->decisions[d].kind != SCHED_BIND;
        r->out->moves += res->decisions[d].kind == SCHED_MOVE;
        r->out->evictions += res->decisions[d].kind == SCHED_EVICT;
    }
    return 0;
}

/* What is pending leaves the world (dropped). */
static void withdraw_pending(struct arun *a)
{
    int i;

    for (i = 0; i < a->w->n_wls; i++)
        if (a->w->wls[i].phase == SCHED_PENDING) {
            world_finish(a->w, i, SCHED_COMPLETED);
            a->n_finished++;
        }
    if (a->n_finished > 64 && 2 * a->n_finished > a->w->n_wls) {
        world_sweep(a->w);
        a->n_finished = 0;
    }
}

/* Withdraws what is pending; *disturbed counts evictions and moves. */
static int allot_place(struct prun *r, struct arun *a, int k, const struct sched_config *cfg)
{
    struct sched_result res;
    int pass;

    if (allot_submit(r, a, k) != 0)
        return -1;
    /* passes as the server runs a cycle: a pass that moves pods for the
     * arrival places it in the next one */
    for (pass = 0; pass < RP_MAX_PASSES; pass++) {
        if (allot_pass(r, a, cfg, &res) != 0)
            return -1;
        if (res.n_decisions == 0 || res.n_pending == 0)
            break;
    }
    if (res.n_pending == 0)
        return 1;
    withdraw_pending(a);
    return 0;
}

static int run_allot(struct prun *r, char *err, size_t len)
{
    struct sched_config cfg;
    struct arun a;
    int i, placed, rc = -1;

    memset(&a, 0, sizeof(a));
    sched_config_default(&cfg);
    if (r->policy == RPP_ALLOT)   /* placement alone; allot-moves keeps the default */
        cfg.max_consolidation_moves = 0;
    if (!r->c->m) {
        snprintf(err, len, "allot's model was not built");
        return -1;
    }
    if (allot_world(r, &a) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    for (i = 0; i < r->n_arrivals; i++) {
        r->arrived += task_gpu(r->c->t, r->arrivals[i]);
        placed = allot_place(r, &a, i, &cfg);
        if (placed < 0) {
            snprintf(err, len, "arrival %d: %s", i, a.e.msg);
            goto out_free;
        }
        r->out->dropped += !placed;
        r->alloc = r->out->disturbed || !placed ? world_allocated_gpu(a.w, 0, -1)
                                                : r->alloc + task_gpu(r->c->t, r->arrivals[i]);
        if (sample(r))
            break;
    }
    rc = 0;
out_free:
    arun_free(&a);
    return rc;
}

/* ---- Step 2, FGD with allot's consolidation ---- */

/* The FGD model rebuilt from the world: every placed pod where the world
 * has it, moved ones included. The world's nodes are the trace's, in order. */
static int sync_nodes(struct prun *r, const struct arun *a, struct rpp_node *nodes, char *err,
                      size_t len)
{
    const struct trace *t = r->c->t;
    struct rpp_pod p;
    int i, j, k;

    if (empty_nodes(r, nodes, err, len) != 0)
        return -1;
    for (i = 0; i < a->w->n_wls; i++) {
        const struct sched_workload *wl = &a->w->wls[i];

        k = (int)((wl->name - a->names) / NAME_LEN);   /* the arrival it is */
        rpp_pod_of_task(t, r->arrivals[k], &p);
        for (j = 0; j < wl->n_pods; j++)
            if (wl->pods[j].node >= 0)
                rpp_apply(&nodes[wl->pods[j].node], &p, wl->pods[j].devices, 1, NULL);
    }
    for (i = 0; i < t->n_nodes; i++)
        nodes[i].frag = rpp_frag(&nodes[i], &r->c->shapes);
    return 0;
}

/* The world's workload i runs where FGD put it. */
static void bind_at(struct arun *a, int i, int node, uint64_t devs)
{
    struct sched_workload *wl = &a->w->wls[i];

    wl->pods[0].node = node;
    wl->pods[0].devices = devs;
    wl->phase = SCHED_RUNNING;
    wl->started_ms = a->w->now_ms;
    a->w->dev_dirty = 1;
    a->w->delta.full = 1;
}

/* FGD found no node for arrival k (pending in the world): passes of the
 * core with consolidation on, as allot-moves runs them; after a pass that
 * decides something, FGD places the arrival on the state the moves leave.
 * 1 placed, 0 dropped (withdrawn), -1 error. */
static int fgd_consolidate(struct prun *r, struct arun *a, struct bnodes *b,
                           const struct rpp_pod *p, const struct sched_config *cfg, char *err,
                           size_t len)
{
    struct sched_result res;
    int i = a->w->n_wls - 1, node = -1, pass;
    uint64_t devs = 0;

    for (pass = 0; pass < RP_MAX_PASSES && node < 0; pass++) {
        if (allot_pass(r, a, cfg, &res) != 0) {
            snprintf(err, len, "%s", a->e.msg);
            return -1;
        }
        if (res.n_decisions == 0)
            break;
        if (sync_nodes(r, a, b->nodes, err, len) != 0)
            return -1;
        if (res.n_pending == 0)   /* the core bound it itself */
            return 1;
        node = place_baseline(r, b->nodes, p, b->cand, &devs);
    }
    if (node >= 0) {
        bind_at(a, i, node, devs);
        return 1;
    }
    withdraw_pending(a);
    return 0;
}

static int same_nodes(const struct prun *r, const struct arun *a)
{
    int i;

    if (a->layout.n_nodes != r->c->t->n_nodes)
        return 0;
    for (i = 0; i < a->layout.n_nodes; i++)
        if (strncmp(a->layout.nodes[i].name + 6, r->c->t->nodes[i].name, 36) != 0)
            return 0;
    return 1;
}

/* fgd-moves: each arrival placed by FGD exactly as fgd places it; when
 * FGD finds no node, allot's consolidation (the default budget, as
 * allot-moves) moves running pods and FGD tries again. */
static int run_fgd_moves(struct prun *r, char *err, size_t len)
{
    const struct trace *t = r->c->t;
    struct bnodes b = {NULL, NULL};
    struct sched_config cfg;
    struct rpp_pod p;
    struct arun a;
    uint64_t devs = 0;
    int i, node, placed, rc = -1;

    memset(&a, 0, sizeof(a));
    sched_config_default(&cfg);
    if (!r->c->m) {
        snprintf(err, len, "allot's model was not built");
        goto out_free;
    }
    if (bnodes_new(r, &b, err, len) != 0)
        goto out_free;
    if (allot_world(r, &a) != 0) {
        snprintf(err, len, "out of memory");
        goto out_free;
    }
    if (!same_nodes(r, &a)) {
        snprintf(err, len, "allot's model does not have the trace's nodes in order");
        goto out_free;
    }
    for (i = 0; i < r->n_arrivals; i++) {
        rpp_pod_of_task(t, r->arrivals[i], &p);
        r->arrived += task_gpu(t, r->arrivals[i]);
        node = place_baseline(r, b.nodes, &p, b.cand, &devs);
        if (allot_submit(r, &a, i) != 0) {
            snprintf(err, len, "arrival %d: %s", i, a.e.msg);
            goto out_free;
        }
        if (node >= 0)
            bind_at(&a, a.w->n_wls - 1, node, devs);
        placed = node >= 0 ? 1 : fgd_consolidate(r, &a, &b, &p, &cfg, err, len);
        if (placed < 0)
            goto out_free;
        r->out->dropped += !placed;
        r->alloc += placed ? task_gpu(t, r->arrivals[i]) : 0;
        if (sample(r))
            break;
    }
    rc = 0;
out_free:
    arun_free(&a);
    bnodes_free(&b);
    return rc;
}

int rpp_run(const struct rpp_ctx *c, int policy, uint64_t seed, struct rpp_result *out,
            char *err, size_t len)
{
    struct prun r;
    struct timespec t0, t1;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    out->policy = policy;
    out->seed = seed;
    out->idle100 = -1;
    r.c = c;
    r.policy = policy;
    r.place = policy == RPP_FGD_MOVES ? RPP_FGD : policy;
    r.out = out;
    r.rng = seed;
    r.policy_rng = seed ^ 0x5DEECE66DULL;
    if (make_arrivals(&r) != 0) {
        snprintf(err, len, "out of memory");
        rc = -1;
    } else {
        rc = policy == RPP_ALLOT || policy == RPP_ALLOT_MOVES ? run_allot(&r, err, len)
             : policy == RPP_FGD_MOVES                        ? run_fgd_moves(&r, err, len)
                                                              : run_baseline(&r, err, len);
    }
    if (rc == 0)
        finish(&r);
    free(r.arrivals);
    free(r.order);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out->wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}

/* ---- Report ---- */

void rpp_report_protocol(FILE *f)
{
    fprintf(f, "Protocol paper: the FGD paper's (ATC '23) experiment. Pods placed one at a time "
               "in arrival order (the trace shuffled per seed, then drawn to 1.3x the cluster's "
               "GPUs); no moves, no evictions, one project, no quotas; a pod that fits nowhere "
               "is dropped; score ties go to the node first in a random order drawn per seed; "
               "unallocated GPUs at 100%% = the cluster's GPUs less the mean allocation over "
               "the arrivals with arrived GPU demand in [99.5%%, 100.5%%).\n");
}

struct stat3 {
    double mean, lo, hi;
    int n;
};

static struct stat3 stats(const struct rpp_result *r, int n)
{
    struct stat3 s = {0, 0, 0, 0};
    int i;

    for (i = 0; i < n; i++) {
        if (r[i].idle100 < 0)
            continue;
        if (s.n == 0 || r[i].idle100 < s.lo)
            s.lo = r[i].idle100;
        if (s.n == 0 || r[i].idle100 > s.hi)
            s.hi = r[i].idle100;
        s.mean += r[i].idle100;
        s.n++;
    }
    if (s.n)
        s.mean /= s.n;
    return s;
}

/* a - b per seed: mean, range and the seeds where a leaves fewer. */
struct paired {
    double mean, lo, hi;
    int wins;
};

static struct paired pair_by_seed(const struct rpp_result *a, const struct rpp_result *b, int n)
{
    struct paired p = {0, 0, 0, 0};
    double d;
    int i;

    for (i = 0; i < n; i++) {
        d = a[i].idle100 - b[i].idle100;
        p.mean += d;
        p.lo = i == 0 || d < p.lo ? d : p.lo;
        p.hi = i == 0 || d > p.hi ? d : p.hi;
        p.wins += d < 0;
    }
    if (n)
        p.mean /= n;
    return p;
}

/* Moves per run: mean, fewest, most. */
static struct stat3 moves_of(const struct rpp_result *r, int n)
{
    struct stat3 s = {0, 0, 0, 0};
    int i;

    for (i = 0; i < n; i++) {
        s.lo = i == 0 || r[i].moves < s.lo ? r[i].moves : s.lo;
        s.hi = i == 0 || r[i].moves > s.hi ? r[i].moves : s.hi;
        s.mean += r[i].moves;
        s.n++;
    }
    if (s.n)
        s.mean /= s.n;
    return s;
}

static int with_moves(int policy)
{
    return policy == RPP_ALLOT_MOVES || policy == RPP_FGD_MOVES;
}

static const char *protocol_of(int policy)
{
    return with_moves(policy) ? "paper+moves" : "paper";
}

static void seeds_text(const struct rpp_result *r, int n, char *buf, size_t len)
{
    if (n == 1)
        snprintf(buf, len, "%llu", (unsigned long long)r[0].seed);
    else
        snprintf(buf, len, "%llu-%llu", (unsigned long long)r[0].seed,
                 (unsigned long long)r[n - 1].seed);
}

static int index_of(const int *policies, int n, int policy)
{
    int k;

    for (k = 0; k < n; k++)
        if (policies[k] == policy)
            return k;
    return -1;
}

/* Consolidation's figure, apart from placement's: a policy with moves
 * (mk) against each policy whose index is >= 0 in `against`. */
static void report_moves(FILE *f, const struct rpp_result *results, const int *policies,
                         int n_seeds, int mk, const int *against, int n_against,
                         const char *seeds)
{
    const struct rpp_result *m = &results[mk * n_seeds];
    struct stat3 s = stats(m, n_seeds), mv = moves_of(m, n_seeds);
    int i, ev = 0;

    for (i = 0; i < n_seeds; i++)
        ev += m[i].evictions;
    fprintf(f, "\nConsolidation, apart from placement (protocol paper+moves, seeds %s): "
               "%s leaves %.1f GPUs unallocated (%.1f-%.1f) at the cost of %.1f moves "
               "a run (%.0f-%.0f), each a restart of a running pod, and %d evictions in all",
            seeds, rpp_policy_name(policies[mk]), s.mean, s.lo, s.hi, mv.mean, mv.lo, mv.hi, ev);
    for (i = 0; i < n_against; i++) {
        struct paired p;

        if (against[i] < 0)
            continue;
        p = pair_by_seed(m, &results[against[i] * n_seeds], n_seeds);
        fprintf(f, "; against %s%s %+.1f (%+.1f to %+.1f)", rpp_policy_name(policies[against[i]]),
                with_moves(policies[against[i]]) ? "" : " placing alone", p.mean, p.lo, p.hi);
    }
    fprintf(f, "\n");
}

void rpp_report_trace(FILE *f, const struct rpp_ctx *c, const struct rpp_result *results,
                      const int *policies, int n_policies, int n_seeds)
{
    char seeds[64];
    int k, i, fk, ak, mk, gk;
    double pub;

    seeds_text(results, n_seeds, seeds, sizeof(seeds));
    fprintf(f, "\n### %s (protocol paper, seeds %s, %d typical shapes)\n\n", c->label, seeds,
            c->shapes.n);
    fprintf(f, "| policy | protocol | unallocated GPUs at 100%%, mean | range | published "
               "| diff | dropped by the run's end (101.5%%), mean | moves or evictions |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|\n");
    for (k = 0; k < n_policies; k++) {
        const struct rpp_result *r = &results[k * n_seeds];
        struct stat3 s = stats(r, n_seeds);
        double dropped = 0;
        int disturbed = 0;

        for (i = 0; i < n_seeds; i++) {
            dropped += r[i].dropped;
            disturbed += r[i].disturbed;
        }
        pub = rpp_published(c->label, policies[k]);
        fprintf(f, "| %s | %s | %.1f | %.1f-%.1f | ", rpp_policy_name(policies[k]),
                protocol_of(policies[k]), s.mean, s.lo, s.hi);
        if (pub > 0)
            fprintf(f, "%.0f | %+.1f%% |", pub, 100.0 * (s.mean - pub) / pub);
        else
            fprintf(f, "- | - |");
        fprintf(f, " %.1f | %d |\n", dropped / n_seeds, disturbed);
    }
    fprintf(f, "\nPer seed (unallocated GPUs at 100%%; each policy under its protocol above):"
               "\n\n| policy |");
    for (i = 0; i < n_seeds; i++)
        fprintf(f, " %llu |", (unsigned long long)results[i].seed);
    fprintf(f, "\n|---|");
    for (i = 0; i < n_seeds; i++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (k = 0; k < n_policies; k++) {
        fprintf(f, "| %s |", rpp_policy_name(policies[k]));
        for (i = 0; i < n_seeds; i++)
            fprintf(f, " %.1f |", results[k * n_seeds + i].idle100);
        fprintf(f, "\n");
    }
    fk = index_of(policies, n_policies, RPP_FGD);
    ak = index_of(policies, n_policies, RPP_ALLOT);
    mk = index_of(policies, n_policies, RPP_ALLOT_MOVES);
    gk = index_of(policies, n_policies, RPP_FGD_MOVES);
    if (fk >= 0 && ak >= 0) {
        struct paired p = pair_by_seed(&results[ak * n_seeds], &results[fk * n_seeds], n_seeds);

        fprintf(f, "\nallot paired with fgd (protocol paper, same seeds, same arrivals and node "
                   "order): allot - fgd = %+.1f GPUs on average (%+.1f to %+.1f), allot fewer "
                   "unallocated on %d of %d seeds (%s)\n",
                p.mean, p.lo, p.hi, p.wins, n_seeds, seeds);
    }
    if (mk >= 0) {
        int against[] = {ak, fk, gk};

        report_moves(f, results, policies, n_seeds, mk, against, 3, seeds);
    }
    if (gk >= 0) {
        int against[] = {fk, mk};

        report_moves(f, results, policies, n_seeds, gk, against, 2, seeds);
    }
}

static void summary_paired(FILE *f, const char *const *labels, int n_traces,
                           const struct rpp_result *const *results, int n_seeds, int fk, int ak)
{
    int j;

    fprintf(f, "\n### allot against fgd, paired by seed (protocol paper)\n\n");
    fprintf(f, "| trace | allot mean (range) | fgd mean (range) | allot - fgd, mean (range) "
               "| seeds allot better | FGD published |\n|---|---|---|---|---|---|\n");
    for (j = 0; j < n_traces; j++) {
        const struct rpp_result *a = &results[j][ak * n_seeds], *g = &results[j][fk * n_seeds];
        struct stat3 sa = stats(a, n_seeds), sg = stats(g, n_seeds);
        struct paired p = pair_by_seed(a, g, n_seeds);

        fprintf(f, "| %s | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %+.1f (%+.1f to %+.1f) | "
                   "%d of %d | %.0f |\n",
                labels[j], sa.mean, sa.lo, sa.hi, sg.mean, sg.lo, sg.hi, p.mean, p.lo, p.hi,
                p.wins, n_seeds, rpp_published(labels[j], RPP_FGD));
    }
}

/* One mean cell of the consolidation table ("-" where k did not run);
 * with moves also its moves a run. */
static void moves_cell(FILE *f, const struct rpp_result *r, int k, int n_seeds, int moves)
{
    struct stat3 s, mv;

    if (k < 0) {
        fprintf(f, moves ? " - | - |" : " - |");
        return;
    }
    s = stats(&r[k * n_seeds], n_seeds);
    fprintf(f, " %.1f (%.1f-%.1f) |", s.mean, s.lo, s.hi);
    if (moves) {
        mv = moves_of(&r[k * n_seeds], n_seeds);
        fprintf(f, " %.1f (%.0f-%.0f) |", mv.mean, mv.lo, mv.hi);
    }
}

/* Consolidation's table: each placement alone beside it with moves. */
static void summary_moves(FILE *f, const char *const *labels, int n_traces,
                          const struct rpp_result *const *results, int n_seeds, const int *k4)
{
    int j, i, k, ev;

    fprintf(f, "\n### Consolidation, apart from placement (allot and fgd place alone under "
               "protocol paper; allot-moves and fgd-moves, the same placement with allot's "
               "consolidation, under paper+moves)\n\n");
    fprintf(f, "| trace | allot placing alone | allot-moves | its moves a run | fgd placing alone "
               "| fgd-moves | its moves a run | evictions |\n|---|---|---|---|---|---|---|---|\n");
    for (j = 0; j < n_traces; j++) {
        fprintf(f, "| %s |", labels[j]);
        for (i = 0; i < 4; i++)
            moves_cell(f, results[j], k4[i], n_seeds, i % 2);
        for (ev = 0, i = 1; i < 4; i += 2)
            for (k = 0; k4[i] >= 0 && k < n_seeds; k++)
                ev += results[j][k4[i] * n_seeds + k].evictions;
        fprintf(f, " %d |\n", ev);
    }
}

void rpp_report_summary(FILE *f, const char *const *labels, int n_traces,
                        const struct rpp_result *const *results, const int *policies,
                        int n_policies, int n_seeds)
{
    int k, j, fk = index_of(policies, n_policies, RPP_FGD);
    int ak = index_of(policies, n_policies, RPP_ALLOT);
    int mk = index_of(policies, n_policies, RPP_ALLOT_MOVES);
    int gk = index_of(policies, n_policies, RPP_FGD_MOVES);
    int k4[4] = {ak, mk, fk, gk};
    double pub;

    fprintf(f, "\n### Every trace (protocol paper, %d seeds): ours / published / diff\n\n",
            n_seeds);
    fprintf(f, "| trace |");
    for (k = 0; k < n_policies; k++)
        fprintf(f, " %s |", rpp_policy_paper_name(policies[k]));
    fprintf(f, "\n|---|");
    for (k = 0; k < n_policies; k++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (j = 0; j < n_traces; j++) {
        fprintf(f, "| %s |", labels[j]);
        for (k = 0; k < n_policies; k++) {
            struct stat3 s = stats(&results[j][k * n_seeds], n_seeds);

            pub = rpp_published(labels[j], policies[k]);
            if (pub > 0)
                fprintf(f, " %.1f / %.0f / %+.1f%% |", s.mean, pub, 100.0 * (s.mean - pub) / pub);
            else
                fprintf(f, " %.1f |", s.mean);
        }
        fprintf(f, "\n");
    }
    if (fk >= 0 && ak >= 0)
        summary_paired(f, labels, n_traces, results, n_seeds, fk, ak);
    if (mk >= 0 || gk >= 0)
        summary_moves(f, labels, n_traces, results, n_seeds, k4);
}
