/*
 * vocab.c: the words of the scheduling core: priority classes, workload
 * types, phases, actions and pending reasons, and the human message of a
 * pending reason. Pure table lookups; nothing here depends on a cycle.
 *
 * Priority classes (docs/scheduler.md, "Priorities and preemptibility"):
 * train 50, build-preemptible and interactive-preemptible 75, build 100, inference
 * 125; the newer dictionary very-low 25, low 40, medium-low 65, medium 80,
 * medium-high 90, high 125, very-high 150. A workload is preemptible when
 * its priority is below 100 unless it says otherwise.
 *
 * Over-quota priorities of a queue in a pool: None, Low, Normal, High.
 */
#include "sched_int.h"

#include <stdio.h>
#include <string.h>

struct class_entry {
    const char *name;
    int priority;
};

static const struct class_entry classes[] = {
    {"train", 50},        {"build-preemptible", 75}, {"interactive-preemptible", 75},
    {"build", 100},       {"inference", 125},        {"very-low", 25},
    {"low", 40},          {"medium-low", 65},        {"medium", 80},
    {"medium-high", 90},  {"high", 125},             {"very-high", 150},
};

int sched_priority_class(const char *name, int *priority)
{
    size_t i;
    long v = 0;
    const char *p;

    if (!name || !*name)
        return SCHED_EINVAL;
    for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        if (strcmp(classes[i].name, name) == 0) {
            *priority = classes[i].priority;
            return SCHED_OK;
        }
    }
    p = name;
    if (*p == '-')
        p++;
    if (!*p)
        return SCHED_EINVAL;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > 1000000000L)
            return SCHED_EINVAL;
        v = v * 10 + (*p - '0');
    }
    *priority = name[0] == '-' ? (int)-v : (int)v;
    return SCHED_OK;
}

const char *sched_priority_class_at(int i, int *priority)
{
    if (i < 0 || (size_t)i >= sizeof(classes) / sizeof(classes[0]))
        return NULL;
    *priority = classes[i].priority;
    return classes[i].name;
}

const char *sched_default_priority_class(int type)
{
    switch (type) {
    case SCHED_WORKSPACE: return "build";
    case SCHED_INFERENCE: return "inference";
    default:              return "train";
    }
}

int sched_default_preemptible(int priority)
{
    return priority < 100;
}

static const char *const overquota_names[] = {"None", "Low", "Normal", "High"};
#define N_OVERQUOTA ((int)(sizeof(overquota_names) / sizeof(overquota_names[0])))

int sched_overquota_priority(const char *name, int *level)
{
    int i;

    for (i = 0; name && i < N_OVERQUOTA; i++)
        if (strcmp(name, overquota_names[i]) == 0) {
            *level = i;
            return SCHED_OK;
        }
    return SCHED_EINVAL;
}

const char *sched_overquota_priority_name(int level)
{
    return level >= 0 && level < N_OVERQUOTA ? overquota_names[level] : "";
}

int sched_pool_rank(int rank, int level)
{
    return rank * N_OVERQUOTA + level;
}

static const char *const reason_names[] = {
    [SCHED_R_NONE] = "",
    [SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA] = "NonPreemptibleOverQuota",
    [SCHED_R_OVER_LIMIT] = "OverLimit",
    [SCHED_R_INSUFFICIENT_RESOURCES] = "InsufficientResources",
    [SCHED_R_GANG_NOT_SATISFIABLE] = "GangNotSatisfiable",
    [SCHED_R_NO_MATCHING_NODE_POOL] = "NoMatchingNodePool",
    [SCHED_R_SUSPENDED] = "Suspended",
    [SCHED_R_QUEUE_FAIR_SHARE_REACHED] = "QueueFairShareReached",
};

const char *sched_reason_name(int reason)
{
    if (reason < 0 || reason > SCHED_R_QUEUE_FAIR_SHARE_REACHED)
        return "";
    return reason_names[reason];
}

const char *sched_action_name(int action)
{
    static const char *const names[] = {"allocate", "consolidate", "reclaim", "preempt",
                                        "stale-gang"};
    if (action < 0 || action > SCHED_ACT_STALE_GANG)
        return "";
    return names[action];
}

const char *sched_phase_name(int phase)
{
    static const char *const names[] = {"Pending", "Running", "Stopped", "Completed", "Failed"};
    if (phase < 0 || phase > SCHED_FAILED)
        return "";
    return names[phase];
}

static const char *const type_names[] = {"training", "workspace", "inference", "distributed"};

const char *sched_type_name(int type)
{
    if (type < 0 || type > SCHED_DISTRIBUTED)
        return "";
    return type_names[type];
}

int sched_type_parse(const char *name, int *type)
{
    int i;

    for (i = 0; i <= SCHED_DISTRIBUTED; i++) {
        if (name && strcmp(name, type_names[i]) == 0) {
            *type = i;
            return SCHED_OK;
        }
    }
    return SCHED_EINVAL;
}

int sched_shared_devices(const struct sched_workload *w)
{
    if (w->gpu_portion <= 0 && w->gpu_memory_mib <= 0)
        return 0;
    return w->gpu_devices > 0 ? w->gpu_devices : 1;
}

/* The words of placementStrategy and the strategies they name (sched.h,
 * enum sched_placement): `binpack` (Run:ai's word) the fullest node,
 * `spread` the emptiest, `fragmentation` the node where a pod strands the
 * fewest GPUs for the workload mix (frag.c), then the one that keeps the
 * most CPU per GPU, then the fullest (the GPU placement of a pool that
 * names none: SCHED_DEFAULT_GPU_PLACEMENT). */
static const struct {
    const char *word;
    int placement;
} placement_words[] = {
    {"binpack", SCHED_BINPACK},
    {"spread", SCHED_SPREAD},
    {"fragmentation", SCHED_FRAGMENTATION},
};

int sched_placement_parse(const char *word, int *placement)
{
    size_t i;

    for (i = 0; word && i < sizeof(placement_words) / sizeof(placement_words[0]); i++)
        if (strcmp(word, placement_words[i].word) == 0) {
            *placement = placement_words[i].placement;
            return SCHED_OK;
        }
    return SCHED_EINVAL;
}

const char *sched_placement_word(int placement)
{
    size_t i;

    for (i = 0; i < sizeof(placement_words) / sizeof(placement_words[0]); i++)
        if (placement_words[i].placement == placement)
            return placement_words[i].word;
    return "unknown";
}

int64_t sched_workload_gpu(const struct sched_workload *w, int pods)
{
    int64_t per_pod = w->gpu_portion > 0 ? (int64_t)sched_shared_devices(w) * w->gpu_portion
                                         : (int64_t)w->gpu_devices * SCHED_MILLI;

    if (w->gpu_memory_mib > 0)
        per_pod = (int64_t)sched_shared_devices(w) * SCHED_MILLI;
    return per_pod * pods;
}

/* Does the queue deserve GPUs in pool p? */
int sched__pool_deserved(const struct sched_queue *q, int p)
{
    return q->quota && q->quota[p * SCHED_NRES + SCHED_GPU].deserved > 0;
}

int sched_workload_pools(const struct sched_state *in, const struct sched_workload *w,
                         int *out, int max)
{
    const struct sched_queue *q = &in->queues[w->queue];
    int i, n = 0;

    if (w->pools && w->n_pools > 0) {
        for (i = 0; i < w->n_pools && n < max; i++)
            out[n++] = w->pools[i];
    } else if (q->default_pools && q->n_default_pools > 0) {
        for (i = 0; i < q->n_default_pools && n < max; i++)
            out[n++] = q->default_pools[i];
    } else {
        /* no pool named: first the pools where the project deserves GPUs,
         * so that its quota is used before it runs over quota elsewhere,
         * then the others; creation order within each */
        for (i = 0; i < in->n_pools && n < max; i++)
            if (sched__pool_deserved(q, i))
                out[n++] = i;
        for (i = 0; i < in->n_pools && n < max; i++)
            if (!sched__pool_deserved(q, i))
                out[n++] = i;
    }
    return n;
}

/* Formats an amount of resource `res` in its user unit: GPUs with up to
 * two decimals, CPU in cores, memory in MiB. */
static void format_amount(char *buf, size_t len, int res, int64_t v)
{
    if (v == SCHED_UNLIMITED) {
        snprintf(buf, len, "unlimited");
    } else if (res == SCHED_GPU || res == SCHED_CPU) {
        int64_t whole = v / 1000, frac = (v < 0 ? -v : v) % 1000;
        if (frac == 0)
            snprintf(buf, len, "%lld", (long long)whole);
        else if (frac % 10 == 0)
            snprintf(buf, len, "%s%lld.%02lld", v < 0 && whole == 0 ? "-" : "",
                     (long long)whole, (long long)(frac / 10));
        else
            snprintf(buf, len, "%s%lld.%03lld", v < 0 && whole == 0 ? "-" : "",
                     (long long)whole, (long long)frac);
    } else {
        snprintf(buf, len, "%lld", (long long)v);
    }
}

static const char *unit_name(int res, int64_t v)
{
    if (res == SCHED_GPU)
        return v == 1000 ? "GPU" : "GPUs";
    if (res == SCHED_CPU)
        return v == 1000 ? "CPU core" : "CPU cores";
    return "MiB of memory";
}

/* "no ready node [with node-type a, b or c] [that satisfies its required
 * node affinity] in its node pools" */
static int no_node_message(const struct sched_workload *w, char *buf, size_t len)
{
    char types[160] = "";
    size_t used = 0;
    int i, n = w->n_node_types > 0 ? w->n_node_types : w->node_type ? 1 : 0;

    for (i = 0; i < n && used < sizeof(types); i++) {
        const char *t = w->n_node_types > 0 ? w->node_types[i] : w->node_type;
        used += (size_t)snprintf(types + used, sizeof(types) - used, "%s%s%s",
                                 i == 0 ? " with node-type " : i == n - 1 ? " or " : ", ",
                                 t ? t : "", "");
    }
    return snprintf(buf, len, "no ready node%s%s in its node pools", types,
                    w->n_affinity > 0 ? " that satisfies its required node affinity" : "");
}

/* " of node-type a or b" and " that satisfy its required node affinity":
 * the nodes of a pool the workload may use, when its node types or its
 * affinity narrow them (empty when they do not). */
static void allowed_nodes(const struct sched_workload *w, char *buf, size_t len)
{
    size_t used = 0;
    int i, n = w->n_node_types > 0 ? w->n_node_types : w->node_type ? 1 : 0;

    buf[0] = '\0';
    for (i = 0; i < n && used < len; i++) {
        const char *t = w->n_node_types > 0 ? w->node_types[i] : w->node_type;
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 i == 0 ? " of node-type " : i == n - 1 ? " or " : ", ",
                                 t ? t : "");
    }
    if (w->n_affinity > 0 && used < len)
        snprintf(buf + used, len - used, " that satisfy its required node affinity");
}

/* The node pools after the one an entry names, each with what stops the
 * workload there that the state alone shows (no ready node it may use), or
 * that it was tried there too: "; also tried node pool b (no ready node of
 * node-type x), node pool c". Empty with one pool. */
static void other_pools(const struct sched_state *in, const struct sched_pending *p, char *buf,
                        size_t len)
{
    const struct sched_workload *w = &in->workloads[p->workload];
    int list[64], n = sched_workload_pools(in, w, list, 64), i, k, any, shown = 0;
    size_t used = 0;
    char nodes[200];

    buf[0] = '\0';
    allowed_nodes(w, nodes, sizeof(nodes));
    for (i = 0; i < n && used < len; i++) {
        if (list[i] == p->pool)
            continue;
        for (k = any = 0; k < in->n_nodes && !any; k++)
            any = in->nodes[k].pool == list[i] && in->nodes[k].ready &&
                  sched_node_allowed(w, &in->nodes[k]);
        used += (size_t)snprintf(buf + used, len - used, "%s node pool %s%s%s%s",
                                 shown++ ? "," : "; also tried", in->pools[list[i]].name,
                                 any ? "" : " (no ready node", any ? "" : nodes,
                                 any ? " (not started there either)" : ")");
    }
}

/* A duration, rounded up to the second, as 4m10s, 1h2m, 2d3h5s. */
static void format_duration(char *buf, size_t len, int64_t ms)
{
    static const struct {
        int64_t seconds;
        char unit;
    } parts[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
    int64_t left = (ms + 999) / 1000;
    size_t used = 0;
    size_t i;

    buf[0] = '\0';
    for (i = 0; i < sizeof(parts) / sizeof(parts[0]) && used < len; i++) {
        int64_t n = left / parts[i].seconds;
        left %= parts[i].seconds;
        if (n > 0)
            used += (size_t)snprintf(buf + used, len - used, "%lld%c", (long long)n,
                                     parts[i].unit);
    }
    if (used == 0)
        snprintf(buf, len, "0s");
}

/* The second half of a QueueFairShareReached message: who holds the rest. */
static void rest_of_pool(const struct sched_state *in, const struct sched_pending *p, char *buf,
                         size_t len)
{
    if (p->detail == SCHED_D_WITHIN_SHARE)
        snprintf(buf, len, "the rest is used by projects within their share");
    else if (p->detail == SCHED_D_NOT_RECLAIMABLE && p->other_queue >= 0 &&
             p->other_queue < in->n_queues)
        snprintf(buf, len,
                 "%s holds more than its own share, but only a project within its fair share "
                 "may take GPUs back",
                 in->queues[p->other_queue].name);
    else
        snprintf(buf, len, "other projects hold the rest");
}

/* The second half of an InsufficientResources message: what could be taken. */
static void what_can_be_taken(const struct sched_state *in, const struct sched_pending *p,
                              char *buf, size_t len)
{
    const struct sched_workload *w = &in->workloads[p->workload];
    char left[32];

    if (p->detail != SCHED_D_RUNTIME_PROTECTED || p->other_queue < 0 ||
        p->other_queue >= in->n_queues) {
        snprintf(buf, len, "nothing can be reclaimed or preempted for it");
        return;
    }
    format_duration(left, sizeof(left), p->wait_ms);
    if (p->other_queue == w->queue)
        snprintf(buf, len,
                 "would preempt lower-priority workloads of %s, protected by the node pool's "
                 "minimum runtime for %s more",
                 in->queues[p->other_queue].name, left);
    else
        snprintf(buf, len,
                 "would reclaim from %s, whose workloads are protected by the node pool's "
                 "minimum runtime for %s more",
                 in->queues[p->other_queue].name, left);
}

/* A required topology level is why it waits (SCHED_D_TOPOLOGY). */
static int topology_message(const struct sched_state *in, const struct sched_pending *p,
                            char *buf, size_t len)
{
    const struct sched_workload *w = &in->workloads[p->workload];
    const char *level = w->topology_required ? w->topology_required : "?";
    const char *pool = p->pool >= 0 && p->pool < in->n_pools ? in->pools[p->pool].name : "?";
    char use[32], bound[32];

    format_amount(use, sizeof(use), SCHED_GPU, p->would_use);
    format_amount(bound, sizeof(bound), SCHED_GPU, p->bound);
    if (p->reason == SCHED_R_NO_MATCHING_NODE_POOL)
        return snprintf(buf, len,
                        "requires its pods inside one %s, and node pool %s has no network "
                        "topology with that level",
                        level, pool);
    if (p->reason == SCHED_R_GANG_NOT_SATISFIABLE)
        return snprintf(buf, len,
                        "requires its pods inside one %s: they need %s GPUs together, and the "
                        "largest %s of node pool %s has %s GPUs even empty",
                        level, use, level, pool, bound);
    return snprintf(buf, len,
                    "requires its pods inside one %s: they need %s GPUs together, and the "
                    "largest free room in one %s of node pool %s is %s GPUs",
                    level, use, level, pool, bound);
}

int sched_reason_message(const struct sched_state *in, const struct sched_pending *p,
                         char *buf, size_t len)
{
    const struct sched_workload *w = &in->workloads[p->workload];
    const char *qname = p->queue >= 0 && p->queue < in->n_queues ? in->queues[p->queue].name : "?";
    const char *pool = p->pool >= 0 && p->pool < in->n_pools ? in->pools[p->pool].name : NULL;
    char use[32], bound[32], req[32], where[96] = "", tail[256], nodes[200], others[400];
    const char *unit = unit_name(p->res, p->bound);
    int n;

    format_amount(use, sizeof(use), p->res, p->would_use);
    format_amount(bound, sizeof(bound), p->res, p->bound);
    format_amount(req, sizeof(req), p->res, p->request);
    if (pool && in->n_pools > 1)
        snprintf(where, sizeof(where), " in node pool %s", pool);
    allowed_nodes(w, nodes, sizeof(nodes));
    other_pools(in, p, others, sizeof(others));

    if (p->detail == SCHED_D_TOPOLOGY)
        return topology_message(in, p, buf, len);
    if (p->detail == SCHED_D_NEVER_FITS &&
        (p->reason == SCHED_R_INSUFFICIENT_RESOURCES || p->reason == SCHED_R_GANG_NOT_SATISFIABLE)) {
        if (p->bound < 0)
            n = snprintf(buf, len, "can never run as asked: no ready node%s%s can hold one of its "
                         "pods, even empty", nodes[0] ? nodes : "", where);
        else
            n = snprintf(buf, len, "can never run as asked: each pod needs %s %s on one node, "
                         "and the largest ready node%s%s has %s", use,
                         unit_name(p->res, p->would_use), nodes, where, bound);
        return n + snprintf(buf + ((size_t)n < len ? (size_t)n : len),
                            (size_t)n < len ? len - (size_t)n : 0, "%s", others);
    }
    switch (p->reason) {
    case SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA:
        return snprintf(buf, len,
                        "%s would use %s of its %s deserved %s%s; this %s is non-preemptible "
                        "(priority %d) and must fit the quota",
                        qname, use, bound, unit, where, sched_type_name(w->type), w->priority);
    case SCHED_R_OVER_LIMIT:
        return snprintf(buf, len, "%s would use %s %s%s, above its limit of %s", qname, use,
                        unit_name(p->res, p->would_use), where, bound);
    case SCHED_R_INSUFFICIENT_RESOURCES:
        what_can_be_taken(in, p, tail, sizeof(tail));
        if (nodes[0])   /* the pool's free figure would count nodes it may not use */
            return snprintf(buf, len,
                            "needs %s %s%s on nodes%s; none of them has room for each pod, "
                            "and %s%s",
                            req, unit_name(p->res, p->request), where, nodes, tail, others);
        return snprintf(buf, len,
                        "needs %s %s%s; %s free in the pool, not enough on one node for "
                        "each pod, and %s%s",
                        req, unit_name(p->res, p->request), where, bound, tail, others);
    case SCHED_R_GANG_NOT_SATISFIABLE:
        if (nodes[0])
            return snprintf(buf, len,
                            "gang of %d pods (at least %d together) needs %s %s%s; the ready "
                            "nodes%s cannot hold them together, even empty%s",
                            w->n_pods, w->min_pods, req, unit_name(p->res, p->request), where,
                            nodes, others);
        return snprintf(buf, len,
                        "gang of %d pods (at least %d together) needs %s %s%s; at most %s "
                        "can be placed together%s",
                        w->n_pods, w->min_pods, req, unit_name(p->res, p->request), where,
                        bound, others);
    case SCHED_R_NO_MATCHING_NODE_POOL:
        return no_node_message(w, buf, len);
    case SCHED_R_SUSPENDED:
        return snprintf(buf, len, "suspended; resume it to queue it again");
    case SCHED_R_QUEUE_FAIR_SHARE_REACHED:
        rest_of_pool(in, p, tail, sizeof(tail));
        return snprintf(buf, len, "%s would use %s of its fair share of %s %s%s; %s", qname, use,
                        bound, unit, where, tail);
    default:
        if (len)
            buf[0] = '\0';
        return 0;
    }
}
