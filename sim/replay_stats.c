/*
 * replay_stats.c: what a run records while it goes, and the numbers the
 * report gives for it.
 *
 * A run is a sequence of samples; sample i holds from s[i].t until
 * s[i+1].t. Rates cover the window from the first arrival to the last
 * (after it the cluster only drains, for as long as the longest task):
 *   allocation rate   = integral of alloc dt / (total x window)
 *   busy time         = time after a cycle that left GPU work pending
 *                       (the policy could not place what was asked)
 *   at saturation     = the allocation rate, and total - alloc in GPUs,
 *                       averaged over busy time only
 *   Jain's index      = (sum x)^2 / (n sum x^2) with x_k = alloc_k / fair_k
 *                       over the n projects with a fair share > 0, averaged
 *                       over busy time (outside it every project holds what
 *                       it asks, and the index is 1)
 *   below fair share  = busy time a project held at least one GPU less than
 *                       its fair share
 *   waits and JCTs    = mean and p95 (nearest rank) over completed tasks
 * Time series: the window cut into RP_BUCKETS equal buckets, each the
 * time-weighted mean of what the samples held in it.
 *
 * The fair share the report measures every policy against is the
 * design's rule applied to the cluster's GPUs as one pool: each project
 * first gets min(deserved, demand), the rest goes in rounds by over-quota
 * weight, never above demand or limit (demand = held + pending GPU). The
 * core's own shares are per pool, where a pending task counts in every
 * pool it may use, so their sum over pools would overstate a project's
 * claim.
 */
#include "grow.h"
#include "replay_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- The report's fair share ---- */

/* Step 2 of the rule: the remainder R in rounds by weight. */
static void share_remainder(const struct replay_model *m, const double *cap, double *fs,
                            double rest)
{
    double sum_w, add, given;
    int k, round, capped;

    for (round = 0; round < m->n_projects && rest > 1e-9; round++) {
        sum_w = 0;
        for (k = 0; k < m->n_projects; k++)
            sum_w += fs[k] < cap[k] ? m->weight[k] : 0;
        if (sum_w <= 0)
            return;
        given = 0;
        capped = 0;
        for (k = 0; k < m->n_projects; k++) {
            if (fs[k] >= cap[k] || m->weight[k] <= 0)
                continue;
            add = rest * m->weight[k] / sum_w;
            capped |= fs[k] + add >= cap[k];
            add = fs[k] + add > cap[k] ? cap[k] - fs[k] : add;
            fs[k] += add;
            given += add;
        }
        rest -= given;
        if (!capped)
            return;
    }
}

void rs_fair_share(const struct replay_model *m, const int64_t *demand, int64_t *fair)
{
    double cap[RP_MAX_PROJECTS], fs[RP_MAX_PROJECTS], rest = (double)m->total_gpu_milli;
    int k;

    for (k = 0; k < m->n_projects; k++) {
        cap[k] = (double)demand[k];
        if (m->limit_milli[k] >= 0 && cap[k] > (double)m->limit_milli[k])
            cap[k] = (double)m->limit_milli[k];
        fs[k] = m->deserved_milli[k] >= 0 && (double)m->deserved_milli[k] < cap[k]
                    ? (double)m->deserved_milli[k] : cap[k];
        rest -= fs[k];
    }
    share_remainder(m, cap, fs, rest);
    for (k = 0; k < m->n_projects; k++)
        fair[k] = (int64_t)(fs[k] + 0.5);
}

/* ---- Samples ---- */

int rs_init(struct replay_stats *st, int n_projects, int64_t total)
{
    memset(st, 0, sizeof(*st));
    st->n_projects = n_projects;
    st->total = total;
    return 0;
}

void rs_free(struct replay_stats *st)
{
    free(st->s);
    free(st->proj);
    free(st->waits);
    free(st->jcts);
    memset(st, 0, sizeof(*st));
}

static int grow_samples(struct replay_stats *st)
{
    size_t per = 2 * (size_t)st->n_projects;
    struct rs_sample *s;
    int64_t *proj;
    int cap;

    if (st->n < st->cap)
        return 0;
    cap = st->cap ? st->cap * 2 : 1024;
    s = realloc(st->s, (size_t)cap * sizeof(*s));
    if (!s)
        return -1;
    st->s = s;
    proj = realloc(st->proj, (size_t)cap * per * sizeof(*proj));
    if (!proj)
        return -1;
    st->proj = proj;
    st->cap = cap;
    return 0;
}

int rs_sample(struct replay_stats *st, const struct rs_sample *s, const int64_t *alloc,
              const int64_t *fair)
{
    size_t n = (size_t)st->n_projects;
    int k;

    if (st->n > 0 && st->s[st->n - 1].t == s->t) {
        k = st->n - 1;
    } else {
        if (grow_samples(st) != 0)
            return -1;
        k = st->n++;
    }
    st->s[k] = *s;
    memcpy(&st->proj[(size_t)k * 2 * n], alloc, n * sizeof(*alloc));
    memcpy(&st->proj[(size_t)k * 2 * n + n], fair, n * sizeof(*fair));
    return 0;
}

int rs_done(struct replay_stats *st, int64_t wait_ms, int64_t jct_ms)
{
    int cap = st->cap_done ? st->cap_done * 2 : 1024;

    if (st->n_done == st->cap_done) {
        if (sim_resize(&st->waits, cap, sizeof(*st->waits)) != 0 ||
            sim_resize(&st->jcts, cap, sizeof(*st->jcts)) != 0)
            return -1;
        st->cap_done = cap;
    }
    st->waits[st->n_done] = wait_ms;
    st->jcts[st->n_done] = jct_ms;
    st->n_done++;
    return 0;
}

/* ---- Summary ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Mean and p95 in seconds of n values (ms); sorts them. */
static void mean_p95(int64_t *v, int n, double *mean, double *p95)
{
    double sum = 0;
    int i;

    *mean = *p95 = 0;
    if (n == 0)
        return;
    qsort(v, (size_t)n, sizeof(*v), cmp_i64);
    for (i = 0; i < n; i++)
        sum += (double)v[i];
    *mean = sum / n / 1000.0;
    *p95 = (double)v[(int)ceil(0.95 * n) - 1] / 1000.0;
}

static int task_stats(const struct replay_stats *st, struct replay_summary *out)
{
    int64_t *v = malloc(((size_t)st->n_done + 1) * sizeof(*v));

    if (!v)
        return -1;
    if (st->n_done)
        memcpy(v, st->waits, (size_t)st->n_done * sizeof(*v));
    mean_p95(v, st->n_done, &out->wait_avg_s, &out->wait_p95_s);
    if (st->n_done)
        memcpy(v, st->jcts, (size_t)st->n_done * sizeof(*v));
    mean_p95(v, st->n_done, &out->jct_avg_s, &out->jct_p95_s);
    free(v);
    return 0;
}

static double jain(const int64_t *alloc, const int64_t *fair, int n)
{
    double sum = 0, sq = 0, x;
    int k, m = 0;

    for (k = 0; k < n; k++) {
        if (fair[k] <= 0)
            continue;
        x = (double)alloc[k] / (double)fair[k];
        sum += x;
        sq += x * x;
        m++;
    }
    return m == 0 || sq == 0 ? 1.0 : sum * sum / (m * sq);
}

/* Length of [a, b) inside the window. */
static double in_window(const struct replay_stats *st, int64_t a, int64_t b)
{
    a = a < st->w0 ? st->w0 : a;
    b = b > st->w1 ? st->w1 : b;
    return b > a ? (double)(b - a) : 0;
}

/* Integrals over the samples (Jain, saturation, per project). */
static void integrate(const struct replay_stats *st, struct replay_summary *out)
{
    const int n = st->n_projects;
    const int64_t *alloc, *fair;
    double dt, busy = 0, alloc_int = 0, sat_alloc = 0, j, jain_int = 0, span;
    int i, k;

    out->jain_min = -1;
    for (i = 0; i + 1 < st->n; i++) {
        dt = in_window(st, st->s[i].t, st->s[i + 1].t);
        alloc = &st->proj[(size_t)i * 2 * (size_t)n];
        fair = alloc + n;
        alloc_int += (double)st->s[i].alloc * dt;
        for (k = 0; k < n; k++)
            out->proj_alloc[k] += (double)alloc[k] * dt;
        if (!st->s[i].busy || dt <= 0)
            continue;
        busy += dt;
        sat_alloc += (double)st->s[i].alloc * dt;
        j = jain(alloc, fair, n);
        jain_int += j * dt;
        out->jain_min = out->jain_min < 0 || j < out->jain_min ? j : out->jain_min;
        for (k = 0; k < n; k++) {
            out->proj_fair[k] += (double)fair[k] * dt;
            if (fair[k] > 0 && alloc[k] + SCHED_MILLI <= fair[k])
                out->proj_below_pct[k] += dt;
        }
    }
    span = st->w1 > st->w0 ? (double)(st->w1 - st->w0) : 0;
    out->span_s = span / 1000.0;
    out->alloc_pct = span > 0 ? 100.0 * alloc_int / span / (double)st->total : 0;
    out->busy_pct = span > 0 ? 100.0 * busy / span : 0;
    out->sat_alloc_pct = busy > 0 ? 100.0 * sat_alloc / busy / (double)st->total : -1;
    out->sat_idle_gpus = busy > 0 ? ((double)st->total - sat_alloc / busy) / 1000.0 : -1;
    out->jain_avg = busy > 0 ? jain_int / busy : -1;
    for (k = 0; k < n; k++) {
        out->proj_alloc[k] = span > 0 ? out->proj_alloc[k] / span / 1000.0 : 0;
        out->proj_fair[k] = busy > 0 ? out->proj_fair[k] / busy / 1000.0 : -1;
        out->proj_below_pct[k] = busy > 0 ? 100.0 * out->proj_below_pct[k] / busy : -1;
    }
}

/* Adds value x over [a, b) into the buckets sums[] (time-weighted). */
static void spread_into(double *sums, double t0, double len, double a, double b, double x)
{
    double lo, hi, f = (a - t0) / len, l = (b - t0) / len;
    int first, last, k;

    first = f < 0 ? 0 : f >= RP_BUCKETS ? RP_BUCKETS - 1 : (int)f;
    last = l < 0 ? 0 : l >= RP_BUCKETS ? RP_BUCKETS - 1 : (int)l;
    for (k = first; k <= last; k++) {
        lo = t0 + k * len;
        hi = lo + len;
        lo = a > lo ? a : lo;
        hi = b < hi ? b : hi;
        if (hi > lo)
            sums[k] += x * (hi - lo);
    }
}

static void series(const struct replay_stats *st, struct replay_summary *out)
{
    const int n = st->n_projects;
    double t0 = (double)st->w0, len = ((double)st->w1 - t0) / RP_BUCKETS, a, b;
    const int64_t *p;
    int i, k, r;

    if (st->w1 <= st->w0)
        return;
    for (i = 0; i + 1 < st->n; i++) {
        a = (double)st->s[i].t;
        b = (double)st->s[i + 1].t;
        if (b <= t0 || a >= (double)st->w1)
            continue;
        p = &st->proj[(size_t)i * 2 * (size_t)n];
        spread_into(out->series_alloc, t0, len, a, b,
                    100.0 * (double)st->s[i].alloc / (double)st->total);
        for (k = 0; k < 2 * n; k++)
            spread_into(&out->series_proj[(size_t)k * RP_BUCKETS], t0, len, a, b,
                        (double)p[k] / 1000.0);
    }
    for (r = 0; r < RP_BUCKETS; r++) {
        out->series_t[r] = (r + 0.5) * len / 86400000.0;
        out->series_alloc[r] /= len;
        for (k = 0; k < 2 * n; k++)
            out->series_proj[(size_t)k * RP_BUCKETS + (size_t)r] /= len;
    }
}

int rs_summarize(const struct replay_stats *st, struct replay_summary *out)
{
    size_t n = (size_t)st->n_projects;

    out->proj_alloc = calloc(n + 1, sizeof(double));
    out->proj_fair = calloc(n + 1, sizeof(double));
    out->proj_below_pct = calloc(n + 1, sizeof(double));
    out->series_proj = calloc(2 * n * RP_BUCKETS + 1, sizeof(double));
    if (!out->proj_alloc || !out->proj_fair || !out->proj_below_pct || !out->series_proj)
        return -1;
    out->arrived = st->arrived;
    out->completed = st->n_done;
    out->withdrawn = st->withdrawn;
    out->rejected = st->rejected;
    out->left_pending = st->left_pending;
    out->preemptions = st->preemptions;
    out->moves = st->moves;
    out->cycles = st->cycles;
    out->core_calls = st->core_calls;
    out->gangs = st->gangs;
    out->lost_gpu_h = (double)st->lost / 1000.0 / 3600000.0;
    integrate(st, out);
    series(st, out);
    return task_stats(st, out);
}

void rs_summary_free(struct replay_summary *s)
{
    if (!s)
        return;
    free(s->proj_alloc);
    free(s->proj_fair);
    free(s->proj_below_pct);
    free(s->series_proj);
    s->proj_alloc = s->proj_fair = s->proj_below_pct = s->series_proj = NULL;
}
