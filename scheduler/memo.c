/*
 * memo.c: sched_cycle_next(), the incremental path, and the memo it keeps
 * between cycles (sched.h says what the caller promises with a delta).
 *
 * Step 1  A full cycle (no memo yet, a full delta, or any case below that
 *         does not hold) builds its session in the memo's own arena, runs
 *         it (cycle.c; the result's arrays in the caller's arena) and
 *         keeps: whether it settled (decided nothing and changed no stale
 *         time), whether any stale time is set, the session itself, every
 *         queue's fair share per pool and resource, the pending entries,
 *         the stale times and the table of diagnosis kinds.
 * Step 2  A delta of submissions after a settled cycle, with the same
 *         sizes and configuration, no pool placing by fragmentation (its
 *         mix moves with every submission), and, when the clock moved, no
 *         stale time set and no pool's minimum runtime (the only rules that
 *         read the clock besides time-based fairshare): the kept session
 *         takes the submissions (sched__session_extend(): each costs what
 *         building it costs, nothing is rebuilt) and the fair shares are
 *         computed again (per queue and pool, not per workload).
 * Step 3  If every fair share is what the memo kept, each submission is
 *         tried alone (sched__would_start()). Why that is the whole cycle:
 *         the previous cycle tried every older workload on this very state
 *         (placements and fair shares are equal; a pending workload's
 *         demand is read by fair share alone) and none started; a failed
 *         attempt leaves the state as it was, so every attempt of the full
 *         cycle runs on this state, whatever order the new heads give the
 *         queues, and a submission that fails alone fails there too.
 * Step 4  Nothing starts: the result is the kept one plus the submissions'
 *         own entries: shares as computed (their requests moved), the
 *         stale times as the workloads hold them (a submission has none),
 *         the kept pending entries, then each pending submission's entry,
 *         shared with the first pending workload of its kind (the kinds
 *         table) as record_pending() does, or diagnosed. The pending
 *         entries and stale times are the memo's own arrays (valid until
 *         the next call), so the cycle copies nothing per workload. Once
 *         Step 2 has touched the kept session, anything else falls back to
 *         Step 1 (the session is built again).
 *
 * Invariants:
 *   1. memo->settled only after a cycle that decided nothing and whose
 *      stale times equal its input's; then ss is that cycle's session as
 *      it was built (every attempt rolled back), pending[0..n_pending) is
 *      that cycle's list, stale[] its stale times and kinds[] indexes its
 *      first entry of every kind.
 *   2. A reused cycle keeps the memo settled and appends to it exactly what
 *      it appended to the result.
 *   3. Any error, and any fall-back once the kept session changed, forgets
 *      everything (valid = 0).
 *   4. The memo's arena holds the session and what the reused cycles add to
 *      it; when it has grown to twice what the full cycle left (plus a
 *      block), the next cycle is a full one, which resets it.
 */
#include "sched_int.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_SLACK ((size_t)1 << 20)   /* Invariant 4: a block of growth beyond 2x */

struct sched_memo {
    int valid;                  /* the fields below describe the last result */
    int settled;                /* it decided nothing and moved no stale time */
    int any_stale;              /* some workload has a stale time */
    int n_pools, n_queues, n_nodes, n_workloads;
    int64_t now_ms;
    struct sched_config cfg;    /* the kept session's (ss.cfg points here) */
    struct sched_arena *arena;  /* the kept session's memory */
    size_t arena_kept;          /* bytes the full cycle left in it */
    struct sched_session ss;    /* the last cycle's session (Invariant 1) */
    int64_t *fair;              /* [n_queues * n_pools * SCHED_NRES] */
    struct sched_pending *pending;
    int n_pending, cap_pending;
    int64_t *stale;             /* [cap_stale]: the last result's stale times */
    int cap_stale;
    int *kinds;                 /* [cap_kinds]: pending index + 1, or 0 */
    int cap_kinds, n_kinds;
    struct sched_memo_stats stats;
};

struct sched_memo *sched_memo_new(void)
{
    return calloc(1, sizeof(struct sched_memo));
}

void sched_memo_free(struct sched_memo *memo)
{
    if (!memo)
        return;
    sched_arena_free(memo->arena);
    free(memo->fair);
    free(memo->pending);
    free(memo->stale);
    free(memo->kinds);
    free(memo);
}

void sched_memo_stats(const struct sched_memo *memo, struct sched_memo_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (memo)
        *out = memo->stats;
}

/* ---- Step 1: what a full cycle leaves ---- */

/* Grows a malloc'd array of `elem`-byte entries to hold at least `need`. */
static int reserve(void **arr, int *cap, size_t elem, int need)
{
    int ncap = *cap ? *cap : 64;
    void *p;

    if (need <= *cap)
        return SCHED_OK;
    while (ncap < need)
        ncap *= 2;
    p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return SCHED_ENOMEM;
    *arr = p;
    *cap = ncap;
    return SCHED_OK;
}

static int reserve_pending(struct sched_memo *memo, int need)
{
    return reserve((void **)&memo->pending, &memo->cap_pending, sizeof(*memo->pending), need);
}

static int reserve_stale(struct sched_memo *memo, int need)
{
    return reserve((void **)&memo->stale, &memo->cap_stale, sizeof(*memo->stale), need);
}

static int keep_fair(struct sched_memo *memo, const struct sched_session *ss)
{
    size_t n = (size_t)ss->n_queues * (size_t)ss->n_pools, i;
    int64_t *fair = realloc(memo->fair, (n * SCHED_NRES + 1) * sizeof(int64_t));

    if (!fair)
        return SCHED_ENOMEM;
    memo->fair = fair;
    for (i = 0; i < n; i++)
        memcpy(&fair[i * SCHED_NRES], ss->qp[i].fair, sizeof(int64_t) * SCHED_NRES);
    return SCHED_OK;
}

static int keep_kinds(struct sched_memo *memo, const int *kinds, int cap)
{
    int *k = realloc(memo->kinds, (size_t)cap * sizeof(int)), i;

    if (!k)
        return SCHED_ENOMEM;
    memcpy(k, kinds, (size_t)cap * sizeof(int));
    memo->kinds = k;
    memo->cap_kinds = cap;
    memo->n_kinds = 0;
    for (i = 0; i < cap; i++)
        memo->n_kinds += k[i] != 0;
    return SCHED_OK;
}

static int keep(struct sched_memo *memo, const struct sched_session *ss,
                const struct sched_result *out, const int *kinds, int cap_kinds)
{
    const struct sched_state *in = ss->in;
    int w, rc = SCHED_OK;

    memo->valid = 1;
    memo->n_pools = in->n_pools;
    memo->n_queues = in->n_queues;
    memo->n_nodes = in->n_nodes;
    memo->n_workloads = in->n_workloads;
    memo->now_ms = in->now_ms;
    memo->cfg = *ss->cfg;
    memo->settled = out->n_decisions == 0;
    memo->any_stale = 0;
    for (w = 0; w < in->n_workloads; w++) {
        if (out->stale_since_ms[w] != in->workloads[w].stale_since_ms)
            memo->settled = 0;
        if (out->stale_since_ms[w] != SCHED_NO_TIME)
            memo->any_stale = 1;
    }
    memo->stats.full++;
    if (!memo->settled)
        return SCHED_OK;   /* the next cycle cannot reuse anything */
    rc = keep_fair(memo, ss);
    if (rc == SCHED_OK)
        rc = reserve_pending(memo, out->n_pending + 1);
    if (rc == SCHED_OK)
        rc = reserve_stale(memo, in->n_workloads + 1);
    if (rc == SCHED_OK)
        rc = keep_kinds(memo, kinds, cap_kinds);
    if (rc != SCHED_OK)
        return rc;
    memcpy(memo->pending, out->pending, (size_t)out->n_pending * sizeof(*out->pending));
    memo->n_pending = out->n_pending;
    memcpy(memo->stale, out->stale_since_ms, (size_t)in->n_workloads * sizeof(int64_t));
    memo->arena_kept = sched__arena_used(memo->arena);
    return SCHED_OK;
}

/* Step 1: the full cycle, its session in the memo's arena. */
static int full_cycle(struct sched_memo *memo, const struct sched_state *in,
                      const struct sched_config *cfg, struct sched_arena *arena,
                      struct sched_result *out)
{
    int rc, *kinds = NULL, cap_kinds = 0;

    memset(out, 0, sizeof(*out));
    memo->valid = 0;
    memo->cfg = *cfg;
    if (!memo->arena)
        memo->arena = sched_arena_new();
    if (!memo->arena)
        return SCHED_ENOMEM;
    sched_arena_reset(memo->arena);
    rc = sched__session_build(&memo->ss, in, &memo->cfg, memo->arena);
    if (rc == SCHED_OK)
        rc = sched__cycle_on(&memo->ss, arena, out, &kinds, &cap_kinds);
    if (rc == SCHED_OK)
        rc = keep(memo, &memo->ss, out, kinds, cap_kinds);
    return rc;
}

/* ---- Step 2: may the kept result be reused? ---- */

static int same_config(const struct sched_config *a, const struct sched_config *b)
{
    return a->stale_grace_ms == b->stale_grace_ms &&
           a->max_consolidation_moves == b->max_consolidation_moves;
}

static int reusable(const struct sched_memo *memo, const struct sched_state *in,
                    const struct sched_delta *delta, const struct sched_config *cfg)
{
    int p, w, k;

    if (!memo->valid || !memo->settled || !delta || delta->full || delta->n_submitted < 0 ||
        sched__arena_used(memo->arena) > 2 * memo->arena_kept + MEMO_SLACK ||
        in->n_pools != memo->n_pools || in->n_queues != memo->n_queues ||
        in->n_nodes != memo->n_nodes ||
        in->n_workloads != memo->n_workloads + delta->n_submitted || !same_config(cfg, &memo->cfg))
        return 0;
    for (p = 0; p < in->n_pools; p++) {
        const struct sched_pool *pool = &in->pools[p];
        if (pool->gpu_placement == SCHED_FRAGMENTATION ||
            pool->cpu_placement == SCHED_FRAGMENTATION)
            return 0;
        if (in->now_ms != memo->now_ms && pool->min_guaranteed_runtime_ms > 0)
            return 0;
    }
    if (in->now_ms != memo->now_ms && memo->any_stale)
        return 0;
    for (w = memo->n_workloads; w < in->n_workloads; w++) {
        const struct sched_workload *wl = &in->workloads[w];
        if (wl->stale_since_ms != SCHED_NO_TIME || wl->n_pods < 1 || !wl->pods)
            return 0;
        for (k = 0; k < wl->n_pods; k++)
            if (wl->pods[k].node >= 0)
                return 0;
    }
    return 1;
}

static int same_fair(const struct sched_memo *memo, const struct sched_session *ss)
{
    size_t n = (size_t)ss->n_queues * (size_t)ss->n_pools, i;

    for (i = 0; i < n; i++)
        if (memcmp(&memo->fair[i * SCHED_NRES], ss->qp[i].fair, sizeof(int64_t) * SCHED_NRES))
            return 0;
    return 1;
}

/* ---- Step 4: the submissions' entries ---- */

static int kinds_insert(struct sched_memo *memo, const struct sched_session *ss, int entry);

static int kinds_grow(struct sched_memo *memo, const struct sched_session *ss)
{
    int *old = memo->kinds, old_cap = memo->cap_kinds, i, rc = SCHED_OK;

    memo->cap_kinds = old_cap ? 2 * old_cap : 16;
    memo->kinds = calloc((size_t)memo->cap_kinds, sizeof(int));
    memo->n_kinds = 0;
    if (!memo->kinds) {
        memo->kinds = old;
        memo->cap_kinds = old_cap;
        return SCHED_ENOMEM;
    }
    for (i = 0; i < old_cap && rc == SCHED_OK; i++)
        if (old[i])
            rc = kinds_insert(memo, ss, old[i]);
    free(old);
    return rc;
}

/* Adds pending entry `entry` (index + 1) as the first of its kind. */
static int kinds_insert(struct sched_memo *memo, const struct sched_session *ss, int entry)
{
    int mask, i;

    if (2 * (memo->n_kinds + 1) > memo->cap_kinds && kinds_grow(memo, ss) != SCHED_OK)
        return SCHED_ENOMEM;
    mask = memo->cap_kinds - 1;
    i = (int)(sched__diagnosis_hash(ss, memo->pending[entry - 1].workload) & (uint64_t)mask);
    while (memo->kinds[i])
        i = (i + 1) & mask;
    memo->kinds[i] = entry;
    memo->n_kinds++;
    return SCHED_OK;
}

/* The first pending entry of w's kind (index + 1), or 0. */
static int kinds_find(const struct sched_memo *memo, const struct sched_session *ss, int w)
{
    int mask = memo->cap_kinds - 1, i;

    if (memo->cap_kinds == 0)
        return 0;
    for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); memo->kinds[i];
         i = (i + 1) & mask)
        if (sched__same_diagnosis(ss, memo->pending[memo->kinds[i] - 1].workload, w))
            return memo->kinds[i];
    return 0;
}

/* Appends each pending submission's entry to the memo's list. */
static int append_submissions(struct sched_memo *memo, struct sched_session *ss, int first_new)
{
    int w, rc;

    for (w = first_new; w < ss->n_workloads; w++) {
        struct sched_pending *p;
        int kind;
        if (!sched__is_pending(ss, w))
            continue;
        rc = reserve_pending(memo, memo->n_pending + 1);
        if (rc != SCHED_OK)
            return rc;
        p = &memo->pending[memo->n_pending];
        memset(p, 0, sizeof(*p));   /* padding too: results compare byte for byte */
        kind = kinds_find(memo, ss, w);
        if (kind) {
            memcpy(p, &memo->pending[kind - 1], sizeof(*p));
            p->workload = w;
            memo->n_pending++;
            continue;
        }
        sched__diagnose(ss, w, p);
        memo->n_pending++;
        rc = kinds_insert(memo, ss, memo->n_pending);
        if (rc != SCHED_OK)
            return rc;
    }
    return SCHED_OK;
}

static int reuse(struct sched_memo *memo, struct sched_session *ss, struct sched_arena *arena,
                 struct sched_result *out)
{
    const struct sched_state *in = ss->in;
    int w, rc;

    rc = sched__record_shares(ss, arena, out);
    if (rc == SCHED_OK)
        rc = append_submissions(memo, ss, memo->n_workloads);
    if (rc == SCHED_OK)
        rc = reserve_stale(memo, in->n_workloads + 1);
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    if (rc != SCHED_OK)
        return rc;
    for (w = memo->n_workloads; w < in->n_workloads; w++)
        memo->stale[w] = in->workloads[w].stale_since_ms;
    out->stale_since_ms = memo->stale;
    out->pending = memo->pending;
    out->n_pending = memo->n_pending;
    out->decisions = NULL;
    out->n_decisions = 0;
    memo->n_workloads = in->n_workloads;
    memo->now_ms = in->now_ms;
    memo->stats.reused++;
    return SCHED_OK;
}

/* Steps 2 and 3: 1 when the cycle was answered from the memo (rc set). */
static int try_reuse(struct sched_memo *memo, const struct sched_state *in,
                     const struct sched_delta *delta, const struct sched_config *cfg,
                     struct sched_arena *arena, struct sched_result *out, int *rc)
{
    struct sched_session *ss = &memo->ss;
    int w;

    if (!reusable(memo, in, delta, cfg))
        return 0;
    memo->valid = 0;   /* Invariant 3: the kept session changes from here */
    memo->cfg = *cfg;
    if (sched__session_extend(ss, in, &memo->cfg) != SCHED_OK ||
        sched__fairshare(ss) != SCHED_OK || !same_fair(memo, ss))
        goto fall_back;
    for (w = memo->n_workloads; w < in->n_workloads; w++)
        if ((ss->wl[w].flags & WL_CANDIDATE) && sched__would_start(ss, w))
            goto fall_back;
    memset(out, 0, sizeof(*out));
    *rc = reuse(memo, ss, arena, out);
    memo->valid = *rc == SCHED_OK;
    return 1;
fall_back:
    memo->stats.fell_back++;
    return 0;
}

int sched_cycle_next(struct sched_memo *memo, const struct sched_state *in,
                     const struct sched_delta *delta, const struct sched_config *cfg,
                     struct sched_arena *arena, struct sched_result *out)
{
    struct sched_config defaults;
    int rc = SCHED_OK;

    if (!memo)
        return sched_cycle(in, cfg, arena, out);
    if (!cfg) {
        sched_config_default(&defaults);
        cfg = &defaults;
    }
    if (!try_reuse(memo, in, delta, cfg, arena, out, &rc))
        rc = full_cycle(memo, in, cfg, arena, out);
    if (rc != SCHED_OK)
        memo->valid = 0;
    return rc;
}
