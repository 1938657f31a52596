/*
 * fairshare.c: each queue's fair share, per node pool and resource,
 * recomputed at the start of every cycle (KAI's proportion plugin; see
 * reference/kai-scheduling.md section 2).
 *
 * The amount T of a pool (the capacity of its ready nodes; the parent's
 * fair share below the top level) is divided among sibling queues:
 *
 *   1. Deserved pass: fs_i = min(deserved_i, requestable_i), where
 *      requestable_i = min(request_i, limit_i) and deserved -1 means T.
 *      Not capped by T: with oversubscribed quotas the remainder
 *      R = T - sum(fs_i) is negative and there is no over-quota pass.
 *   2. Over-quota pass, by rank (highest first), in rounds: among the
 *      unsatisfied queues (fs < requestable, weight > 0) each gets
 *      f_i = R_round * P'_i with P'_i = P_i / sum(P) and
 *      P_i = max(0, W'_i + k (W'_i - U_i)), W'_i = w_i / sum(w)
 *      (U_i = 0 unless time-based fairshare is on, then P_i = W'_i).
 *      A queue whose remaining request fits in f_i takes exactly it.
 *      Another round runs while some queue was capped in the last one.
 *      The rounds add up exact shares; then each queue not capped keeps
 *      the whole units of its over-quota share and remembers the
 *      fraction (the fraction of the exact share over all rounds: with 5
 *      GPUs, 1.67 and 1.33 give 1 and 1 and a fraction each, not the
 *      fractions of each round).
 *   3. Leftover units go to the largest remembered fractions (tie: the
 *      older queue), one unit at most each. allot hands them out inside
 *      the rank before the next rank's round (KAI does it after all
 *      ranks), so a higher rank is served first to the last GPU.
 *   4. Each queue's share is the T of its children.
 *
 * allot differs from KAI in one place: a parent's request is the sum of
 * its children's requestable amounts (capped by their limits), so a
 * parent never receives a share that its children cannot use.
 *
 * Invariants: the top-level shares of a pool never exceed its capacity
 * unless deserved quotas are oversubscribed; no queue's share exceeds its
 * limit or its request; integer arithmetic throughout except the
 * time-based weights, computed with +, -, *, / only (the same bits on
 * every machine) and rounded to 1e-9 before use.
 */
#include "sched_int.h"

#include <string.h>

static const int64_t unit_of[SCHED_NRES] = {SCHED_MILLI, 1, 1};

/* The working set of one (pool, resource) division. */
struct division {
    struct sched_session *ss;
    int pool, res;
    int64_t *requestable;   /* [n_queues] */
    int64_t *frac;          /* [n_queues] fraction remembered by step 2 */
    double *usage;          /* [n_queues] normalised past usage, or NULL */
    double *usage_buf;      /* storage for usage */
    int64_t k_milli;
    /* [n_queues] steps 2 and 3's scratch for one sibling set: each is
     * written before it is read, and a division is done with them before
     * it divides a share among a queue's children (step 4), so one set
     * serves every level and (pool, resource) */
    int *bucket, *u, *ranks;
    int64_t *num;
};

int64_t sched__allocatable(const struct ss_qp *qp, int r)
{
    int64_t d = qp->deserved[r] == SCHED_UNLIMITED ? SS_INF : qp->deserved[r];
    return ss_min(ss_max(d, qp->fair[r]), qp->limit[r]);
}

/* requestable of q: its own request (leaves) or its children's, capped by its limit. */
static int64_t compute_requestable(struct division *dv, int q)
{
    struct sched_session *ss = dv->ss;
    const struct ss_queue *sq = &ss->queues[q];
    struct ss_qp *a = ss_qp(ss, q, dv->pool);
    int64_t sum = 0;
    int i;

    if (sq->is_leaf) {
        sum = a->request[dv->res];
    } else {
        for (i = 0; i < sq->n_children; i++)
            sum = ss_min(SS_BIG, sum + compute_requestable(dv, sq->children[i]));
        a->request[dv->res] = sum;
    }
    dv->requestable[q] = ss_min(sum, a->limit[dv->res]);
    return dv->requestable[q];
}

static int64_t mul_div(int64_t a, int64_t b, int64_t c)
{
    return c == 0 ? 0 : (int64_t)((__int128)a * b / c);
}

/* Share weights of the unsatisfied queues `u` (n of them), in num[]; returns their sum. */
static int64_t share_weights(struct division *dv, const int *u, int n, int64_t *num)
{
    int64_t wsum = 0, psum = 0;
    int i;

    for (i = 0; i < n; i++)
        wsum += ss_qp(dv->ss, u[i], dv->pool)->weight[dv->res];
    for (i = 0; i < n; i++) {
        int64_t w = ss_qp(dv->ss, u[i], dv->pool)->weight[dv->res];
        if (!dv->usage) {
            num[i] = w;
        } else {
            double wn = (double)w / (double)wsum;
            double p = wn + (double)dv->k_milli / 1000.0 * (wn - dv->usage[u[i]]);
            num[i] = p > 0 ? (int64_t)(p * 1e9 + 0.5) : 0;
        }
        psum += num[i];
    }
    return psum;
}

/* Step 2 for one rank bucket; returns what is left of r. The rounds hand
 * out the exact shares (a queue's over-quota amount in frac[] adds up over
 * the rounds); only then is each share cut to whole units, its fraction
 * remembered for step 3, so the largest remainders are those of the exact
 * shares over all rounds, not of each round's. */
static int64_t over_quota_rounds(struct division *dv, const int *bucket, int n, int64_t r,
                                 int *u, int64_t *num)
{
    int64_t unit = unit_of[dv->res];
    int i, nu, another = 1;

    for (i = 0; i < n; i++)
        dv->frac[bucket[i]] = 0;
    while (another && r > 0) {
        int64_t den, amount = r;
        another = 0;
        for (i = nu = 0; i < n; i++) {
            struct ss_qp *a = ss_qp(dv->ss, bucket[i], dv->pool);
            if (a->fair[dv->res] < dv->requestable[bucket[i]] && a->weight[dv->res] > 0)
                u[nu++] = bucket[i];
        }
        den = nu ? share_weights(dv, u, nu, num) : 0;
        if (den == 0)
            break;
        for (i = 0; i < nu; i++) {
            struct ss_qp *a = ss_qp(dv->ss, u[i], dv->pool);
            int64_t f = mul_div(amount, num[i], den);
            int64_t rem = dv->requestable[u[i]] - a->fair[dv->res];
            if (num[i] == 0)
                continue;
            if (rem <= f) {
                f = rem;
                another = 1;
            }
            a->fair[dv->res] += f;
            dv->frac[u[i]] += f;
            r -= f;
        }
    }
    /* Whole units of each exact share; a queue that reached its request
     * keeps it exactly and has no fraction. */
    for (i = 0; i < n; i++) {
        struct ss_qp *a = ss_qp(dv->ss, bucket[i], dv->pool);
        int64_t part = dv->frac[bucket[i]] % unit;
        if (a->fair[dv->res] >= dv->requestable[bucket[i]]) {
            dv->frac[bucket[i]] = 0;
            continue;
        }
        a->fair[dv->res] -= part;
        r += part;
        dv->frac[bucket[i]] = part;
    }
    return r;
}

/* Step 3 for one rank bucket: one unit each to the largest fractions. */
static int64_t leftover_units(struct division *dv, int *bucket, int n, int64_t r)
{
    int i, j;

    /* insertion sort by fraction desc, then older queue (lower index) */
    for (i = 1; i < n; i++) {
        int q = bucket[i];
        for (j = i; j > 0; j--) {
            int o = bucket[j - 1];
            if (dv->frac[o] > dv->frac[q] || (dv->frac[o] == dv->frac[q] && o < q))
                break;
            bucket[j] = o;
        }
        bucket[j] = q;
    }
    for (i = 0; i < n && r > 0; i++) {
        struct ss_qp *a = ss_qp(dv->ss, bucket[i], dv->pool);
        int64_t give;
        if (dv->frac[bucket[i]] <= 0)
            continue;
        give = ss_min(ss_min(unit_of[dv->res], r), dv->requestable[bucket[i]] - a->fair[dv->res]);
        if (give > 0) {
            a->fair[dv->res] += give;
            r -= give;
        }
    }
    return r;
}

static int rank_of(const struct division *dv, int q)
{
    return sched__rank(dv->ss, q, dv->pool);
}

/* Distinct ranks of sib[0..n), highest first, into out; returns the count. */
static int distinct_ranks_desc(const struct division *dv, const int *sib, int n, int *out)
{
    int i, j, k, nr = 0;

    for (i = 0; i < n; i++) {
        int rk = rank_of(dv, sib[i]);
        for (j = 0; j < nr && out[j] > rk; j++)
            ;
        if (j < nr && out[j] == rk)
            continue;
        for (k = nr; k > j; k--)
            out[k] = out[k - 1];
        out[j] = rk;
        nr++;
    }
    return nr;
}

static int bucket_of_rank(const struct division *dv, const int *sib, int n, int rank, int *out)
{
    int i, nb = 0;

    for (i = 0; i < n; i++)
        if (rank_of(dv, sib[i]) == rank)
            out[nb++] = sib[i];
    return nb;
}

/* Divides t among the sibling queues sib[0..n) (in age order), then recurses. */
static int divide(struct division *dv, const int *sib, int n, int64_t t)
{
    struct sched_session *ss = dv->ss;
    int *bucket = dv->bucket, *u = dv->u, *ranks = dv->ranks;
    int64_t *num = dv->num;
    int64_t r = t;
    int i, nr, nb, rc = SCHED_OK;

    /* Step 1: deserved pass. */
    for (i = 0; i < n; i++) {
        struct ss_qp *a = ss_qp(ss, sib[i], dv->pool);
        int64_t d = a->deserved[dv->res] == SCHED_UNLIMITED ? t : a->deserved[dv->res];
        a->fair[dv->res] = ss_min(d, dv->requestable[sib[i]]);
        dv->frac[sib[i]] = 0;
        r -= a->fair[dv->res];
    }
    /* Steps 2 and 3, rank by rank from the highest. */
    if (r > 0) {
        nr = distinct_ranks_desc(dv, sib, n, ranks);
        for (i = 0; i < nr && r > 0; i++) {
            nb = bucket_of_rank(dv, sib, n, ranks[i], bucket);
            r = over_quota_rounds(dv, bucket, nb, r, u, num);
            r = leftover_units(dv, bucket, nb, r);
        }
    }
    /* Step 4: each share is divided among the queue's children. */
    for (i = 0; i < n && rc == SCHED_OK; i++) {
        const struct ss_queue *sq = &ss->queues[sib[i]];
        if (!sq->is_leaf)
            rc = divide(dv, sq->children, sq->n_children,
                        ss_qp(ss, sib[i], dv->pool)->fair[dv->res]);
    }
    return rc;
}

/* 0.5^x for x >= 0 with +, * and / only (no libm), so that every machine
 * computes the same bits: 0.5^floor(x) by halving, 2^-f for the fraction
 * f in [0, 1) by the series of e^(-f ln 2) to 20 terms (error < 1e-17). */
static double half_power(double x)
{
    double whole = 1.0, term = 1.0, sum = 1.0, y;
    int i, k;

    if (x <= 0)
        return 1.0;
    if (x > 2000)
        return 0.0;
    for (k = 0; k + 1 <= x; k++)
        whole *= 0.5;
    y = -(x - k) * 0.69314718055994530942;
    for (i = 1; i <= 20; i++) {
        term = term * y / i;
        sum += term;
    }
    return whole * sum;
}

/* Integral of the decay weight 0.5^((now - t) / h) over [a, b]. */
static double decayed_span(int64_t a, int64_t b, int64_t now, int64_t h)
{
    if (b <= a)
        return 0;
    if (h <= 0)
        return (double)(b - a);
    return (double)h / 0.69314718055994530942 *
           (half_power((double)(now - b) / (double)h) - half_power((double)(now - a) / (double)h));
}

/* Time-based fairshare: U per queue = its (decayed) resource-time in the
 * window over the pool's capacity-time in the same window. */
static void compute_usage(struct sched_session *ss, int pool, int res, double *usage)
{
    const struct sched_state *in = ss->in;
    const struct sched_pool *p = &in->pools[pool];
    int64_t from = in->now_ms - p->tbf_window_ms;
    double cap = (double)ss->pools[pool].capacity[res] *
                 decayed_span(from, in->now_ms, in->now_ms, p->tbf_half_life_ms);
    int i, q;

    memset(usage, 0, sizeof(double) * (size_t)ss->n_queues);
    if (cap <= 0)
        return;
    for (i = 0; i < in->n_usage; i++) {
        const struct sched_usage *u = &in->usage[i];
        double used;
        if (u->pool != pool || u->queue < 0 || u->queue >= ss->n_queues)
            continue;
        used = (double)u->amount[res] * decayed_span(ss_max(u->start_ms, from),
                                                     ss_min(u->end_ms, in->now_ms),
                                                     in->now_ms, p->tbf_half_life_ms);
        for (q = u->queue; q >= 0; q = ss->queues[q].parent)
            usage[q] += used / cap;
    }
}

static int fairshare_pool_res(struct sched_session *ss, int pool, int res, const int *roots,
                              int n_roots, struct division *dv)
{
    const struct sched_pool *p = &ss->in->pools[pool];
    int i;

    dv->pool = pool;
    dv->res = res;
    dv->usage = NULL;
    if (p->tbf_enabled && p->tbf_window_ms > 0) {
        dv->usage = dv->usage_buf;
        dv->k_milli = p->tbf_k_milli;
        compute_usage(ss, pool, res, dv->usage);
        for (i = 0; i < ss->n_queues; i++)
            ss_qp(ss, i, pool)->usage[res] = dv->usage[i];
    }
    for (i = 0; i < n_roots; i++)
        compute_requestable(dv, roots[i]);
    return divide(dv, roots, n_roots, ss->pools[pool].capacity[res]);
}

static void sum_over_pools(struct sched_session *ss)
{
    int q, p, r;

    for (q = 0; q < ss->n_queues; q++) {
        struct ss_queue *sq = &ss->queues[q];
        for (r = 0; r < SCHED_NRES; r++) {
            sq->tot_fair[r] = 0;
            sq->tot_deserved[r] = 0;
            sq->tot_limit[r] = 0;
            for (p = 0; p < ss->n_pools; p++) {
                const struct ss_qp *a = ss_qp(ss, q, p);
                sq->tot_fair[r] = ss_min(SS_BIG, sq->tot_fair[r] + a->fair[r]);
                sq->tot_deserved[r] = a->deserved[r] == SCHED_UNLIMITED || sq->tot_deserved[r] == SS_INF
                                          ? SS_INF : sq->tot_deserved[r] + a->deserved[r];
                sq->tot_limit[r] = a->limit[r] == SS_INF || sq->tot_limit[r] == SS_INF
                                       ? SS_INF : sq->tot_limit[r] + a->limit[r];
            }
        }
    }
}

int sched__fairshare(struct sched_session *ss)
{
    struct division dv;
    int *roots = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    int q, p, r, n_roots = 0, rc = SCHED_OK;

    memset(&dv, 0, sizeof(dv));
    dv.ss = ss;
    dv.requestable = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int64_t));
    dv.frac = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int64_t));
    dv.usage_buf = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(double));
    dv.bucket = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    dv.u = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    dv.ranks = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int));
    dv.num = sched__calloc(ss->arena, (size_t)ss->n_queues + 1, sizeof(int64_t));
    if (!roots || !dv.requestable || !dv.frac || !dv.usage_buf || !dv.bucket || !dv.u ||
        !dv.ranks || !dv.num)
        return SCHED_ENOMEM;
    for (q = 0; q < ss->n_queues; q++)
        if (ss->queues[q].parent < 0)
            roots[n_roots++] = q;
    for (p = 0; p < ss->n_pools && rc == SCHED_OK; p++)
        for (r = 0; r < SCHED_NRES && rc == SCHED_OK; r++)
            rc = fairshare_pool_res(ss, p, r, roots, n_roots, &dv);
    sum_over_pools(ss);
    return rc;
}
