/*
 * replay_model.c: the trace turned into what the scheduling core reads,
 * once, before any run.
 *
 * Step 1: pools, one per GPU model in the order the node file first names
 *         them (or the one pool `default`, the model being the node type);
 *         nodes in file order, all ready.
 * Step 2: queues: the department `default` (unlimited, like the
 *         simulator's implicit one) and the projects under it. GPU quotas
 *         come from the quota file, or split each pool's GPUs evenly in
 *         whole GPUs (the first projects get the remainder). CPU and
 *         memory quotas are 0 ("not managed"); limits none; weights 1.
 * Step 3: a workload template per task: project FNV-1a(name) mod N; type
 *         training (priority class `train`, so preemptible); whole GPUs,
 *         or a portion of one, or none; pools = the task's gpu_spec (empty:
 *         every pool in order), or in one pool its node types = the
 *         models of its gpu_spec (any of them, ranked alike:
 *         node_types_alike). With --gangs a task of k > 1 GPUs is a
 *         distributed workload of k one-GPU pods, all needed (min_pods k),
 *         CPU and memory split evenly (rounded down).
 * Step 1b: with --racks N, a synthetic topology: each pool's nodes in file
 *         order make racks of N nodes and blocks of --blocks racks
 *         (numbered over the pools in order), labelled replay/rack and
 *         replay/block; every pool's topology is block, rack, host (none
 *         with --topology blind: the racks are only counted). A gang then
 *         prefers the narrowest domain that holds it (docs/scheduler.md,
 *         "Topology").
 * Step 4: times. A task arrives at creation_time / speedup. It runs for
 *         deletion_time - scheduled_time; a task the trace never
 *         scheduled runs for deletion_time - creation_time if placed, and
 *         is withdrawn, still pending, deletion_time - creation_time after
 *         it arrived (its owner gave up then).
 */
#include "arrays.h"
#include "replay_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t replay_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static const struct {
    const char *name;
    int placement;   /* enum sched_placement; fifo places by itself */
} policies[RP_NPOLICIES] = {
    [RP_FIFO] = {"fifo", SCHED_BINPACK},
    [RP_BESTFIT] = {"bestfit", SCHED_BINPACK},
    [RP_ALLOT] = {"allot", SCHED_DEFAULT_GPU_PLACEMENT},
    [RP_ALLOT_SPREAD] = {"allot-spread", SCHED_SPREAD},
};

const char *replay_policy_name(int policy)
{
    return policy >= 0 && policy < RP_NPOLICIES ? policies[policy].name : "unknown";
}

int replay_policy_placement(int policy)
{
    return policy >= 0 && policy < RP_NPOLICIES ? policies[policy].placement : SCHED_BINPACK;
}

const char *replay_policy_placement_word(int policy)
{
    return policy == RP_FIFO ? "first-fit" : sched_placement_word(replay_policy_placement(policy));
}

/* ---- Step 1: pools and nodes ---- */

static int build_nodes(struct replay_model *m)
{
    const struct trace *t = m->t;
    struct scenario *s = &m->layout;
    int i, single = m->opts->single_pool;

    s->n_pools = single ? 1 : t->n_models;
    s->n_nodes = t->n_nodes;
    s->pools = calloc((size_t)s->n_pools, sizeof(*s->pools));
    s->nodes = calloc((size_t)s->n_nodes, sizeof(*s->nodes));
    if (!s->pools || !s->nodes)
        return -1;
    for (i = 0; i < s->n_pools; i++)
        s->pools[i].name = single ? "default" : t->models[i];
    for (i = 0; i < s->n_nodes; i++) {
        s->nodes[i].name = t->nodes[i].name;
        s->nodes[i].pool = single ? 0 : t->nodes[i].model;
        s->nodes[i].node_type = single ? t->models[t->nodes[i].model] : NULL;
        s->nodes[i].ready = 1;
        s->nodes[i].n_gpus = t->nodes[i].gpus;
        s->nodes[i].cpu_milli = t->nodes[i].cpu_milli;
        s->nodes[i].mem_mib = t->nodes[i].mem_mib;
        m->total_gpu_milli += (int64_t)t->nodes[i].gpus * SCHED_MILLI;
    }
    return 0;
}

/* Nodes grouped by pool (counting sort, file order kept inside a pool). */
static int group_nodes(struct replay_model *m)
{
    const struct scenario *s = &m->layout;
    int *next, i, rc = -1;

    m->pool_first = calloc((size_t)s->n_pools + 1, sizeof(*m->pool_first));
    m->pool_nodes = calloc((size_t)s->n_nodes, sizeof(*m->pool_nodes));
    next = calloc((size_t)s->n_pools + 1, sizeof(*next));
    if (!m->pool_first || !m->pool_nodes || !next)
        goto out_free;
    for (i = 0; i < s->n_nodes; i++)
        m->pool_first[s->nodes[i].pool + 1]++;
    for (i = 0; i < s->n_pools; i++)
        m->pool_first[i + 1] += m->pool_first[i];
    memcpy(next, m->pool_first, (size_t)s->n_pools * sizeof(*next));
    for (i = 0; i < s->n_nodes; i++)
        m->pool_nodes[next[s->nodes[i].pool]++] = i;
    rc = 0;
out_free:
    free(next);
    return rc;
}

/* ---- Step 1b: a synthetic topology ---- */

const char *const replay_topology[3] = {"replay/block", "replay/rack", SCHED_HOSTNAME_LABEL};

/* Label k (0 block, 1 rack) of node i: "block-B" or "rack-R". */
static void label_node(struct replay_model *m, int i, int k, int id)
{
    char *text = &m->label_text[((size_t)i * 2 + (size_t)k) * RP_LABEL_LEN];

    snprintf(text, RP_LABEL_LEN, "%s-%d", k ? "rack" : "block", id);
    m->labels[2 * i + k].key = replay_topology[k];
    m->labels[2 * i + k].value = text;
}

static int build_topology(struct replay_model *m)
{
    struct scenario *s = &m->layout;
    const struct replay_opts *o = m->opts;
    int p, j, racks = 0, blocks = 0;

    if (o->rack_nodes <= 0)
        return 0;
    m->rack_of = calloc((size_t)s->n_nodes + 1, sizeof(int));
    m->block_of = calloc((size_t)s->n_nodes + 1, sizeof(int));
    m->labels = calloc(2 * (size_t)s->n_nodes + 1, sizeof(*m->labels));
    m->label_text = calloc(2 * (size_t)s->n_nodes * RP_LABEL_LEN + 1, 1);
    if (!m->rack_of || !m->block_of || !m->labels || !m->label_text)
        return -1;
    for (p = 0; p < s->n_pools; p++) {
        int rack0 = racks, block0 = blocks;
        for (j = m->pool_first[p]; j < m->pool_first[p + 1]; j++) {
            int i = m->pool_nodes[j], rack = (j - m->pool_first[p]) / o->rack_nodes;
            m->rack_of[i] = rack0 + rack;
            m->block_of[i] = block0 + rack / o->block_racks;
            racks = m->rack_of[i] + 1;
            blocks = m->block_of[i] + 1;
        }
        if (!o->topology_blind) {
            s->pools[p].topology = replay_topology;
            s->pools[p].n_topology = 3;
        }
    }
    for (j = 0; j < s->n_nodes; j++) {
        label_node(m, j, 0, m->block_of[j]);
        label_node(m, j, 1, m->rack_of[j]);
        s->nodes[j].labels = &m->labels[2 * j];
        s->nodes[j].n_labels = 2;
    }
    return 0;
}

void replay_count_gang(const struct replay_model *m, const struct sched_workload *wl,
                       struct replay_gangs *g)
{
    int k, rack = -1, block = -1, one_rack = 1, one_block = 1;

    if (!m->rack_of || wl->n_pods < 2 || wl->phase != SCHED_RUNNING)
        return;
    for (k = 0; k < wl->n_pods; k++) {
        int node = wl->pods[k].node;
        if (node < 0)
            continue;
        one_rack &= rack < 0 || m->rack_of[node] == rack;
        one_block &= block < 0 || m->block_of[node] == block;
        rack = m->rack_of[node];
        block = m->block_of[node];
    }
    g->placed++;
    g->one_rack += one_rack;
    g->one_block += one_block;
}

/* ---- Step 2: queues and quotas ---- */

static struct sched_quota *quota_of(struct replay_model *m, int q, int pool, int res)
{
    return &m->layout.quotas[((size_t)q * (size_t)m->layout.n_pools + (size_t)pool) *
                                 SCHED_NRES + (size_t)res];
}

static void quota_defaults(struct replay_model *m)
{
    int q, p, r;
    struct sched_quota *a;

    for (q = 0; q < m->layout.n_queues; q++)
        for (p = 0; p < m->layout.n_pools; p++)
            for (r = 0; r < SCHED_NRES; r++) {
                a = quota_of(m, q, p, r);
                a->deserved = q == 0 ? SCHED_UNLIMITED : 0;
                a->limit = SCHED_UNLIMITED;
                a->weight = SCHED_MILLI;
            }
}

static int pool_gpus(const struct replay_model *m, int p)
{
    int i, gpus = 0;

    for (i = m->pool_first[p]; i < m->pool_first[p + 1]; i++)
        gpus += m->layout.nodes[m->pool_nodes[i]].n_gpus;
    return gpus;
}

static void split_pools(struct replay_model *m)
{
    int64_t gpus;
    int p, k, n = m->n_projects;

    for (p = 0; p < m->layout.n_pools; p++) {
        gpus = pool_gpus(m, p);
        for (k = 0; k < n; k++)
            quota_of(m, 1 + k, p, SCHED_GPU)->deserved =
                (gpus / n + (k < gpus % n)) * SCHED_MILLI;
    }
}

static void apply_quota_file(struct replay_model *m)
{
    const struct trace_quota *row;
    struct sched_quota *a;
    int i, p;

    for (i = 0; i < m->t->n_quotas; i++) {
        row = &m->t->quotas[i];
        for (p = 0; p < m->layout.n_pools; p++) {
            if (row->model >= 0 && row->model != p)
                continue;
            a = quota_of(m, 1 + row->project, p, SCHED_GPU);
            a->deserved = row->gpu_milli;
            a->limit = row->limit_milli;
            a->weight = row->weight_milli;
        }
    }
}

static int name_projects(struct replay_model *m)
{
    char buf[32];
    int k;

    m->project_names = calloc((size_t)m->n_projects, sizeof(*m->project_names));
    if (!m->project_names)
        return -1;
    for (k = 0; k < m->n_projects; k++) {
        snprintf(buf, sizeof(buf), "project-%d", k + 1);
        m->project_names[k] = strdup(m->t->n_projects ? m->t->projects[k] : buf);
        if (!m->project_names[k])
            return -1;
    }
    return 0;
}

/* sum + v, where -1 (unlimited) in either stays -1. */
static int64_t add_bound(int64_t sum, int64_t v)
{
    return sum < 0 || v == SCHED_UNLIMITED ? -1 : sum + v;
}

/* Per project: deserved and limit summed over pools, weight averaged
 * over pools by their GPUs (the report's fair share reads them). */
static void sum_quotas(struct replay_model *m)
{
    const struct sched_quota *a;
    int64_t gpus;
    int k, p;

    for (k = 0; k < m->n_projects; k++) {
        m->deserved_milli[k] = 0;
        m->limit_milli[k] = 0;
        m->weight[k] = 0;
        for (p = 0; p < m->layout.n_pools; p++) {
            a = quota_of(m, 1 + k, p, SCHED_GPU);
            gpus = (int64_t)pool_gpus(m, p) * SCHED_MILLI;
            m->deserved_milli[k] = add_bound(m->deserved_milli[k], a->deserved);
            m->limit_milli[k] = add_bound(m->limit_milli[k], a->limit);
            if (m->total_gpu_milli > 0)
                m->weight[k] += (double)a->weight / SCHED_MILLI * (double)gpus /
                                (double)m->total_gpu_milli;
        }
    }
}

static int build_queues(struct replay_model *m)
{
    struct scenario *s = &m->layout;
    size_t n_quota;
    int q;

    s->n_queues = 1 + m->n_projects;
    n_quota = (size_t)s->n_queues * (size_t)s->n_pools * SCHED_NRES;
    s->queues = calloc((size_t)s->n_queues, sizeof(*s->queues));
    s->quotas = calloc(n_quota, sizeof(*s->quotas));
    m->deserved_milli = calloc((size_t)m->n_projects, sizeof(*m->deserved_milli));
    m->limit_milli = calloc((size_t)m->n_projects, sizeof(*m->limit_milli));
    m->weight = calloc((size_t)m->n_projects, sizeof(*m->weight));
    if (!s->queues || !s->quotas || !m->deserved_milli || !m->limit_milli || !m->weight ||
        name_projects(m) != 0)
        return -1;
    quota_defaults(m);
    if (m->t->n_quotas)
        apply_quota_file(m);
    else
        split_pools(m);
    sum_quotas(m);
    for (q = 0; q < s->n_queues; q++) {
        s->queues[q].name = q == 0 ? "default" : m->project_names[q - 1];
        s->queues[q].parent = q == 0 ? -1 : 0;
        s->queues[q].quota = quota_of(m, q, 0, 0);
    }
    return 0;
}

/* ---- Step 3: workload templates ---- */

static void fill_template(struct replay_model *m, int i, int train)
{
    const struct trace_task *k = &m->t->tasks[i];
    struct sched_workload *wl = &m->tmpl[i];
    int gang = m->opts->gangs && k->num_gpu > 1;

    memset(wl, 0, sizeof(*wl));
    wl->name = k->name;
    wl->queue = 1 + (int)(replay_fnv1a(k->name) % (uint32_t)m->n_projects);
    wl->type = gang ? SCHED_DISTRIBUTED : SCHED_TRAINING;
    wl->priority = train;
    wl->preemptible = sched_default_preemptible(train);
    wl->phase = SCHED_PENDING;
    wl->n_pods = gang ? k->num_gpu : 1;
    wl->min_pods = wl->n_pods;
    if (k->num_gpu == 1 && k->gpu_milli < SCHED_MILLI)
        wl->gpu_portion = k->gpu_milli;
    else
        wl->gpu_devices = gang ? 1 : k->num_gpu;
    wl->cpu_milli = k->cpu_milli / wl->n_pods;
    wl->mem_mib = k->mem_mib / wl->n_pods;
    if (!m->opts->single_pool) {
        wl->pools = k->n_spec ? &m->t->specs[k->spec] : NULL;
        wl->n_pools = k->n_spec;
    } else if (k->n_spec > 0) {
        wl->node_types = &m->spec_models[k->spec];
        wl->n_node_types = k->n_spec;
        wl->node_types_alike = 1;   /* a gpu_spec: any of its models, none preferred */
    }
    wl->started_ms = SCHED_NO_TIME;
    wl->stale_since_ms = SCHED_NO_TIME;
    m->gpu[i] = trace_task_gpu(k);
}

/* How many pods of wl an empty node holds. */
static int64_t pods_on_empty(const struct sched_workload *wl, const struct sched_node *n)
{
    int64_t k = INT64_MAX;

    if (!sched_node_allowed(wl, n))
        return 0;
    if (wl->gpu_devices > 0)
        k = n->n_gpus / wl->gpu_devices;
    else if (wl->gpu_portion > 0)
        k = (int64_t)n->n_gpus * (SCHED_MILLI / wl->gpu_portion);
    if (wl->cpu_milli > 0)
        k = k < n->cpu_milli / wl->cpu_milli ? k : n->cpu_milli / wl->cpu_milli;
    if (wl->mem_mib > 0)
        k = k < n->mem_mib / wl->mem_mib ? k : n->mem_mib / wl->mem_mib;
    return k;
}

static int in_pools(const struct sched_workload *wl, int pool)
{
    int j;

    for (j = 0; j < wl->n_pools; j++)
        if (wl->pools[j] == pool)
            return 1;
    return wl->n_pools == 0;
}

/* 1 when no pool of the task holds all its pods even with every node empty. */
static int never_fits(const struct replay_model *m, int i)
{
    const struct sched_workload *wl = &m->tmpl[i];
    int64_t room;
    int p, j;

    for (p = 0; p < m->layout.n_pools; p++) {
        if (!in_pools(wl, p))
            continue;
        room = 0;
        for (j = m->pool_first[p]; j < m->pool_first[p + 1] && room < wl->n_pods; j++)
            room += pods_on_empty(wl, &m->layout.nodes[m->pool_nodes[j]]);
        if (room >= wl->n_pods)
            return 0;
    }
    return 1;
}

/* ---- Step 4: times ---- */

static void fill_times(struct replay_model *m, int i)
{
    const struct trace_task *k = &m->t->tasks[i];

    m->withdraw_ms[i] = SCHED_NO_TIME;
    if (!m->t->has_times) {
        m->arrival_ms[i] = 0;
        m->runtime_ms[i] = SCHED_NO_TIME;
        return;
    }
    m->arrival_ms[i] = (int64_t)llround((double)k->creation_ms / m->opts->speedup);
    if (k->scheduled_ms != SCHED_NO_TIME) {
        m->runtime_ms[i] = k->deletion_ms - k->scheduled_ms;
        return;
    }
    m->runtime_ms[i] = k->deletion_ms - k->creation_ms;
    m->withdraw_ms[i] = m->arrival_ms[i] + m->runtime_ms[i];
}

struct arrival {
    int64_t t;
    int task;
};

static int by_arrival(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->task > y->task) - (x->task < y->task);
}

/* m->order: tasks by arrival time, then file order. */
static int sort_arrivals(struct replay_model *m)
{
    struct arrival *a;
    int i;

    if (m->t->n_tasks < 1)
        return 0;
    a = calloc((size_t)m->t->n_tasks, sizeof(*a));
    if (!a)
        return -1;
    for (i = 0; i < m->t->n_tasks; i++) {
        a[i].t = m->arrival_ms[i];
        a[i].task = i;
    }
    qsort(a, (size_t)m->t->n_tasks, sizeof(*a), by_arrival);
    for (i = 0; i < m->t->n_tasks; i++)
        m->order[i] = a[i].task;
    free(a);
    return 0;
}

static int build_tasks(struct replay_model *m)
{
    size_t n = (size_t)m->t->n_tasks;
    int i, train = 50;

    m->spec_models = calloc((size_t)m->t->n_specs + 1, sizeof(*m->spec_models));
    m->tmpl = calloc(n, sizeof(*m->tmpl));
    m->gpu = calloc(n, sizeof(*m->gpu));
    m->arrival_ms = calloc(n, sizeof(*m->arrival_ms));
    m->runtime_ms = calloc(n, sizeof(*m->runtime_ms));
    m->withdraw_ms = calloc(n, sizeof(*m->withdraw_ms));
    m->unplaceable = calloc(n, sizeof(*m->unplaceable));
    m->order = calloc(n, sizeof(*m->order));
    if (!m->spec_models || !m->tmpl || !m->gpu || !m->arrival_ms || !m->runtime_ms ||
        !m->withdraw_ms || !m->unplaceable || !m->order)
        return -1;
    for (i = 0; i < m->t->n_specs; i++)
        m->spec_models[i] = m->t->models[m->t->specs[i]];
    sched_priority_class("train", &train);
    for (i = 0; i < m->t->n_tasks; i++) {
        fill_template(m, i, train);
        fill_times(m, i);
        m->unplaceable[i] = (unsigned char)never_fits(m, i);
        if (namemap_put(&m->index, m->t->tasks[i].name, i) != 0)
            return -1;
    }
    return sort_arrivals(m);
}

/* ---- Lifecycle ---- */

int replay_model_new(const struct replay_opts *o, struct trace *t, struct replay_model **out,
                     char *err, size_t len)
{
    struct replay_model *m = calloc(1, sizeof(*m));

    *out = NULL;
    if (!m)
        goto out_nomem;
    m->opts = o;
    m->t = t;
    m->n_projects = t->n_projects ? t->n_projects : o->n_projects;
    namemap_init(&m->index);
    m->layout.file = o->pods_file;
    m->layout.name = "replay";
    if (build_nodes(m) != 0 || group_nodes(m) != 0 || build_topology(m) != 0 ||
        build_queues(m) != 0 || build_tasks(m) != 0)
        goto out_nomem;
    *out = m;
    return 0;
out_nomem:
    replay_model_free(m);
    snprintf(err, len, "out of memory");
    return -1;
}

/* The arrays the model owns. */
static void free_arrays(struct replay_model *m)
{
    void *const owned[] = {
        m->project_names, m->weight,      m->limit_milli,   m->deserved_milli, m->pool_first,
        m->pool_nodes,    m->order,       m->unplaceable,   m->withdraw_ms,    m->runtime_ms,
        m->arrival_ms,    m->gpu,         m->tmpl,          m->spec_models,    m->layout.quotas,
        m->layout.queues, m->layout.nodes, m->layout.pools, m->rack_of,
        m->block_of,      m->labels,      m->label_text,
    };

    FREE_ALL(owned);
}

void replay_model_free(struct replay_model *m)
{
    int k;

    if (!m)
        return;
    for (k = 0; m->project_names && k < m->n_projects; k++)
        free(m->project_names[k]);
    namemap_free(&m->index);
    free_arrays(m);
    free(m);
}

int replay_layout(const struct replay_model *m, int placement, struct scenario *s,
                  struct sched_pool **pools)
{
    int p;

    *s = m->layout;
    *pools = calloc((size_t)m->layout.n_pools, sizeof(**pools));
    if (!*pools)
        return -1;
    for (p = 0; p < m->layout.n_pools; p++) {
        (*pools)[p] = m->layout.pools[p];
        (*pools)[p].gpu_placement = (uint8_t)placement;
        (*pools)[p].cpu_placement = (uint8_t)placement;
    }
    s->pools = *pools;
    return 0;
}
