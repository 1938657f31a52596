/*
 * replay_policies.c: the FGD paper's six placement scores (Random, DotProd,
 * GpuClustering, GpuPacking, BestFit, FGD), its typical pod shapes and its
 * node fragmentation, written for allot's replay from the paper's
 * definitions (its simulator, hkust-adsl/kubernetes-scheduler-simulator,
 * was read for the exact arithmetic: whole-number scores, the normalisers
 * 128 CPUs and 8 GPUs, which device a pod gets).
 *
 * Fit (every policy): CPU and memory left, a GPU model the pod accepts,
 * and num_gpu devices with at least `milli` left each (a whole-GPU pod
 * needs empty devices).
 *
 * Devices: a whole-GPU pod takes the empty devices of lowest index; a
 * shared pod takes, under Random, a device drawn among those with room,
 * under FGD the device whose state scores best (lowest index on a tie),
 * under the others the device with the least room that fits (best fit).
 *
 * Fragmentation (FGD): for a typical shape k and a node, the GPU (milli)
 * the shape cannot use there: all the node's free GPU if the shape asks no
 * GPU, if the node's model is not one the shape accepts, if the node lacks
 * the CPU for it, or if fewer than its num_gpu devices have its milli
 * free; otherwise the free GPU of the devices with less than its milli.
 * F(node) = sum over k of freq_k x frag_k. FGD's score of a node for a pod
 * is 100 x sigmoid((F before - F after) / 1000), truncated.
 */
#include "replay_policies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t rpp_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---- Policies by name ---- */

static const char *const names[RPP_NPOLICIES] = {
    "random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd", "allot", "allot-moves",
    "fgd-moves"};
static const char *const paper_names[RPP_NPOLICIES] = {
    "Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "allot",
    "allot with moves", "FGD with moves"};

const char *rpp_policy_name(int policy)
{
    return policy >= 0 && policy < RPP_NPOLICIES ? names[policy] : "?";
}

const char *rpp_policy_paper_name(int policy)
{
    return policy >= 0 && policy < RPP_NPOLICIES ? paper_names[policy] : "?";
}

int rpp_policy_parse(const char *word)
{
    int p;

    for (p = 0; p < RPP_NPOLICIES; p++)
        if (strcmp(word, names[p]) == 0)
            return p;
    return -1;
}

/* ---- Pods and fit ---- */

void rpp_pod_of_task(const struct trace *t, int task, struct rpp_pod *p)
{
    const struct trace_task *k = &t->tasks[task];

    memset(p, 0, sizeof(*p));
    p->cpu = k->cpu_milli;
    p->mem = k->mem_mib;
    p->num_gpu = k->gpu_milli > 0 ? k->num_gpu : 0;
    p->milli = p->num_gpu ? (k->num_gpu == 1 ? k->gpu_milli : RPP_MILLI) : 0;
    if (p->milli > RPP_MILLI)
        p->milli = RPP_MILLI;
    if (p->num_gpu && k->n_spec) {
        p->spec = &t->specs[k->spec];
        p->n_spec = k->n_spec;
    }
}

static int accepts(const struct rpp_pod *p, int model)
{
    int i;

    if (p->n_spec == 0)
        return 1;
    for (i = 0; i < p->n_spec; i++)
        if (p->spec[i] == model)
            return 1;
    return 0;
}

static int64_t gpu_left(const struct rpp_node *n)
{
    int64_t s = 0;
    int d;

    for (d = 0; d < n->n_gpus; d++)
        s += n->dev_left[d];
    return s;
}

/* Devices with at least `milli` free. */
static int devices_with(const struct rpp_node *n, int64_t milli)
{
    int d, c = 0;

    for (d = 0; d < n->n_gpus; d++)
        c += n->dev_left[d] >= milli;
    return c;
}

int rpp_fits(const struct rpp_node *n, const struct rpp_pod *p)
{
    if (n->cpu_left < p->cpu || n->mem_left < p->mem)
        return 0;
    if (p->num_gpu == 0)
        return 1;
    return accepts(p, n->model) && devices_with(n, p->milli) >= p->num_gpu;
}

static int is_shared(const struct rpp_pod *p)
{
    return p->num_gpu == 1 && p->milli < RPP_MILLI;
}

/* The empty devices of lowest index, num_gpu of them. */
static uint64_t first_empty(const struct rpp_node *n, int num_gpu)
{
    uint64_t mask = 0;
    int d;

    for (d = 0; d < n->n_gpus && num_gpu > 0; d++)
        if (n->dev_left[d] == RPP_MILLI) {
            mask |= 1ULL << d;
            num_gpu--;
        }
    return mask;
}

/* A shared pod's device by best fit: the least room that fits, lowest index. */
static uint64_t best_fit_device(const struct rpp_node *n, const struct rpp_pod *p)
{
    int d, best = -1;

    for (d = 0; d < n->n_gpus; d++)
        if (n->dev_left[d] >= p->milli && (best < 0 || n->dev_left[d] < n->dev_left[best]))
            best = d;
    return best < 0 ? 0 : 1ULL << best;
}

static uint64_t default_devices(const struct rpp_node *n, const struct rpp_pod *p)
{
    if (p->num_gpu == 0)
        return 0;
    return is_shared(p) ? best_fit_device(n, p) : first_empty(n, p->num_gpu);
}

static int tag_of(const struct rpp_pod *p)
{
    if (p->num_gpu == 0)
        return -1;
    return is_shared(p) ? 0 : p->num_gpu <= RPP_MAX_GPUS ? p->num_gpu : -1;
}

void rpp_apply(struct rpp_node *n, const struct rpp_pod *p, uint64_t devices, int sign,
               const struct rpp_shapes *sh)
{
    int d, tag = tag_of(p);

    n->cpu_left -= sign * p->cpu;
    n->mem_left -= sign * p->mem;
    for (d = 0; d < n->n_gpus; d++)
        if (devices & (1ULL << d))
            n->dev_left[d] -= sign * p->milli;
    if (tag >= 0)
        n->tags[tag] += sign;
    if (sh)
        n->frag = rpp_frag(n, sh);
}

/* ---- Fragmentation ---- */

double rpp_frag(const struct rpp_node *n, const struct rpp_shapes *sh)
{
    int64_t left = gpu_left(n), under;
    double f = 0;
    int k, d;

    if (left == 0)
        return 0;
    for (k = 0; k < sh->n; k++) {
        const struct rpp_pod *s = &sh->s[k].pod;

        if (s->milli == 0 || !accepts(s, n->model) || n->cpu_left < s->cpu ||
            devices_with(n, s->milli) < s->num_gpu) {
            f += sh->s[k].freq * (double)left;
            continue;
        }
        for (under = 0, d = 0; d < n->n_gpus; d++)
            if (n->dev_left[d] < s->milli)
                under += n->dev_left[d];
        f += sh->s[k].freq * (double)under;
    }
    return f;
}

static int fgd_of(double before, double after)
{
    return (int)(100.0 / (1.0 + exp(-(before - after) / 1000.0)));
}

/* FGD: a shared pod tries each device with room; the others their
 * default devices. */
static int score_fgd(const struct rpp_node *n, const struct rpp_pod *p,
                     const struct rpp_shapes *sh, uint64_t *devices)
{
    struct rpp_node after;
    int d, s, best = -1;

    if (!is_shared(p)) {
        after = *n;
        *devices = default_devices(n, p);
        rpp_apply(&after, p, *devices, 1, NULL);
        return fgd_of(n->frag, rpp_frag(&after, sh));
    }
    for (d = 0; d < n->n_gpus; d++) {
        if (n->dev_left[d] < p->milli)
            continue;
        after = *n;
        rpp_apply(&after, p, 1ULL << d, 1, NULL);
        s = fgd_of(n->frag, rpp_frag(&after, sh));
        if (s > best) {
            best = s;
            *devices = 1ULL << d;
        }
    }
    return best < 0 ? 0 : best;
}

/* ---- The other scores ---- */

/* DotProd (Tetris): free (CPU, GPU) against asked (CPU, GPU), each over
 * the paper's normaliser; the smaller the product, the higher the score. */
static int score_dotprod(const struct rpp_node *n, const struct rpp_pod *p)
{
    double dot = (double)n->cpu_left / RPP_MAX_SPEC_CPU * (double)p->cpu / RPP_MAX_SPEC_CPU +
                 (double)gpu_left(n) / RPP_MAX_SPEC_GPU *
                     (double)(p->milli * p->num_gpu) / RPP_MAX_SPEC_GPU;

    return (int)(100.0 * (1.0 - dot / 2.0));
}

/* GpuClustering: a GPU pod prefers nodes holding only pods of its kind
 * (75-100), then nodes holding its kind among others (50-75), empty nodes
 * (25-50), nodes of other kinds (0-25); within a band, the less GPU left
 * the better. A CPU-only pod scores 0 everywhere. */
static int score_clustering(const struct rpp_node *n, const struct rpp_pod *p)
{
    int tag = tag_of(p), kinds = 0, k, base;
    int64_t fill = (int64_t)25 * (RPP_MAX_SPEC_GPU - gpu_left(n)) / RPP_MAX_SPEC_GPU;

    if (tag < 0)
        return 0;
    for (k = 0; k < RPP_NTAGS; k++)
        kinds += n->tags[k] > 0;
    if (n->tags[tag] > 0)
        base = kinds == 1 ? 75 : 50;
    else
        base = kinds == 0 ? 25 : 0;
    return (int)fill + base;
}

/* GpuPacking: a pod that fits on partly used devices alone scores 50-100
 * (the less room they keep the better), one that must open empty devices
 * on a used node 33-50 (the fewer the better), a node with every device
 * empty 0-33 (the fewer devices the better). CPU-only pods: 0. */
static int score_packing(const struct rpp_node *n, const struct rpp_pod *p)
{
    int order[RPP_MAX_GPUS], free_n = 0, d, i, j, t, want = p->num_gpu, opened = 0;
    int64_t ratio = 0;
    int s;

    if (p->num_gpu == 0)
        return 0;
    for (d = 0; d < n->n_gpus; d++)
        free_n += n->dev_left[d] == RPP_MILLI;
    if (free_n == n->n_gpus) {
        s = 100 / 3 - free_n;
        return s > free_n ? s : free_n;
    }
    for (d = 0; d < n->n_gpus; d++)   /* least room first, stable */
        order[d] = d;
    for (i = 1; i < n->n_gpus; i++)
        for (j = i; j > 0 && n->dev_left[order[j - 1]] > n->dev_left[order[j]]; j--) {
            t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (i = 0; i < n->n_gpus && want > 0; i++) {
        d = order[i];
        if (n->dev_left[d] < p->milli)
            continue;
        want--;
        opened += n->dev_left[d] == RPP_MILLI;
        ratio += n->dev_left[d] * 100 / RPP_MILLI;
    }
    if (opened > 0) {
        s = 100 / 2 - opened;
        return s > 100 / 3 ? s : 100 / 3;
    }
    s = (int)(100 - ratio / 10);
    return s > 100 / 2 ? s : 100 / 2;
}

/* BestFit: what the node keeps once the pod is on, CPU and GPU each over
 * the paper's normaliser, half and half; the less kept the better. */
static int score_bestfit(const struct rpp_node *n, const struct rpp_pod *p)
{
    double kept = (double)(n->cpu_left - p->cpu) / RPP_MAX_SPEC_CPU * 0.5 +
                  (double)(gpu_left(n) - p->milli * p->num_gpu) / RPP_MAX_SPEC_GPU * 0.5;

    return (int)((1.0 - kept) * 100.0);
}

/* Random: a device drawn among those with room (reservoir, one draw per
 * candidate, as the paper's simulator). */
static uint64_t random_device(const struct rpp_node *n, const struct rpp_pod *p, uint64_t *rng)
{
    uint64_t mask = 0;
    int d, c = 0;

    if (!is_shared(p))
        return default_devices(n, p);
    for (d = 0; d < n->n_gpus; d++)
        if (n->dev_left[d] >= p->milli && rpp_splitmix64(rng) % (uint64_t)++c == 0)
            mask = 1ULL << d;
    return mask;
}

int rpp_score(int policy, const struct rpp_node *n, const struct rpp_pod *p,
              const struct rpp_shapes *sh, uint64_t *rng, uint64_t *devices)
{
    switch (policy) {
    case RPP_RANDOM:
        *devices = random_device(n, p, rng);
        return 0;
    case RPP_FGD:
        *devices = 0;
        return score_fgd(n, p, sh, devices);
    default:
        break;
    }
    *devices = default_devices(n, p);
    switch (policy) {
    case RPP_DOTPROD:
        return score_dotprod(n, p);
    case RPP_GPUCLUSTERING:
        return score_clustering(n, p);
    case RPP_GPUPACKING:
        return score_packing(n, p);
    case RPP_BESTFIT:
        return score_bestfit(n, p);
    default:
        return 0;
    }
}

/* ---- Typical shapes ---- */

struct counted {
    struct rpp_pod pod;
    const char *spec_text;      /* the spec as the trace's model names, for ties */
    char *owned;
    double count;
};

static int same_pod(const struct rpp_pod *a, const struct rpp_pod *b)
{
    return a->cpu == b->cpu && a->milli == b->milli && a->num_gpu == b->num_gpu &&
           a->n_spec == b->n_spec &&
           (a->n_spec == 0 || memcmp(a->spec, b->spec, (size_t)a->n_spec * sizeof(int)) == 0);
}

/* Most frequent first; equal counts: larger CPU, milli, GPUs, spec first
 * (the paper's order). */
static int by_count(const void *x, const void *y)
{
    const struct counted *a = x, *b = y;

    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->pod.cpu != b->pod.cpu)
        return a->pod.cpu > b->pod.cpu ? -1 : 1;
    if (a->pod.milli != b->pod.milli)
        return a->pod.milli > b->pod.milli ? -1 : 1;
    if (a->pod.num_gpu != b->pod.num_gpu)
        return a->pod.num_gpu > b->pod.num_gpu ? -1 : 1;
    return -strcmp(a->spec_text, b->spec_text);
}

static char *spec_text(const struct trace *t, const struct rpp_pod *p)
{
    size_t len = 1;
    char *s;
    int i;

    for (i = 0; i < p->n_spec; i++)
        len += strlen(t->models[p->spec[i]]) + 1;
    s = malloc(len);
    if (!s)
        return NULL;
    s[0] = 0;
    for (i = 0; i < p->n_spec; i++) {
        if (i)
            strcat(s, "|");
        strcat(s, t->models[p->spec[i]]);
    }
    return s;
}

int rpp_shapes_of_trace(const struct trace *t, struct rpp_shapes *out)
{
    struct counted *c = calloc((size_t)t->n_tasks + 1, sizeof(*c));
    struct rpp_pod p;
    double cum = 0, want;
    int n = 0, i, k, rc = -1;

    memset(out, 0, sizeof(*out));
    if (!c)
        return -1;
    for (i = 0; i < t->n_tasks; i++) {   /* counts; a few hundred shapes at most */
        rpp_pod_of_task(t, i, &p);
        p.mem = 0;
        for (k = 0; k < n && !same_pod(&c[k].pod, &p); k++)
            ;
        if (k == n) {
            c[n].pod = p;
            c[n].owned = spec_text(t, &p);
            if (!c[n].owned)
                goto out_free;
            c[n].spec_text = c[n].owned;
            n++;
        }
        c[k].count += 1;
    }
    qsort(c, (size_t)n, sizeof(*c), by_count);
    want = RPP_TYPICAL_PCT * (double)t->n_tasks / 100.0;
    for (k = 0; k < n && cum < want; k++)
        cum += c[k].count;
    out->s = calloc((size_t)k + 1, sizeof(*out->s));
    if (!out->s)
        goto out_free;
    out->n = k;
    for (i = 0; i < k; i++) {
        out->s[i].pod = c[i].pod;
        out->s[i].freq = c[i].count / cum;
    }
    rc = 0;
out_free:
    for (i = 0; i < n; i++)
        free(c[i].owned);
    free(c);
    return rc;
}

void rpp_shapes_free(struct rpp_shapes *sh)
{
    if (sh) {
        free(sh->s);
        sh->s = NULL;
        sh->n = 0;
    }
}
