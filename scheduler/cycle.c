/*
 * cycle.c: sched_cycle(), the core's one call.
 *
 * Step 1  build the session from the snapshot (session.c);
 * Step 2  fair share per pool and resource (fairshare.c), recorded in the
 *         result together with the allocation it saw;
 * Step 3  allocate, consolidate, reclaim, preempt (actions.c), then
 *         stale-gang eviction (reasons.c);
 * Step 4  a reason for every workload left pending, and for the pods a
 *         running workload has left to place (reasons.c), and the stale
 *         times the driver keeps for the next cycle;
 * Step 5  with a memo (sched_cycle_next(), memo.c), what the next cycle
 *         may reuse: the session itself (built in the memo's arena; the
 *         result's arrays, decisions included, are always in the caller's),
 *         the fair shares, the pending entries and the table of diagnosis
 *         kinds.
 */
#include "sched_int.h"

#include <string.h>

void sched_config_default(struct sched_config *cfg)
{
    cfg->stale_grace_ms = 60000;
    cfg->max_consolidation_moves = 16;
}

const struct sched_share *sched_result_share(const struct sched_result *r, int q, int p)
{
    if (!r || q < 0 || p < 0 || q >= r->n_queues || p >= r->n_pools)
        return NULL;
    return &r->shares[(size_t)q * (size_t)r->n_pools + (size_t)p];
}

_Static_assert(sizeof(struct sched_share) == 4 * SCHED_NRES * sizeof(int64_t),
               "a share has no padding: sched__record_shares() writes it raw");

int sched__record_shares(struct sched_session *ss, struct sched_arena *arena,
                         struct sched_result *out)
{
    int q, p, r;

    out->n_queues = ss->n_queues;
    out->n_pools = ss->n_pools;
    /* not zeroed: every share of the n_queues x n_pools is written below,
     * and struct sched_share has no padding (arena.c, Invariant 5) */
    out->shares = sched__array_raw(arena, (size_t)ss->n_queues * (size_t)ss->n_pools + 1,
                                   sizeof(struct sched_share));
    if (!out->shares)
        return SCHED_ENOMEM;
    for (q = 0; q < ss->n_queues; q++)
        for (p = 0; p < ss->n_pools; p++) {
            const struct ss_qp *a = ss_qp(ss, q, p);
            struct sched_share *s = &out->shares[(size_t)q * (size_t)ss->n_pools + (size_t)p];
            for (r = 0; r < SCHED_NRES; r++) {
                s->fair[r] = ss_min(a->fair[r], SS_BIG);
                s->allocated[r] = a->alloc[r];
                s->requested[r] = ss_min(ss_min(a->request[r], a->limit[r]), SS_BIG);
                s->deserved[r] = a->deserved[r];
            }
        }
    return SCHED_OK;
}

int sched__is_pending(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);

    if (wl->phase == SCHED_STOPPED)
        return 1;
    return (ss->wl[w].flags & WL_ACTIVE) && ss->wl[w].n_placed < wl->min_pods;
}

/* Two pending workloads that the diagnosis cannot tell apart: same queue,
 * pools, node type, requests, pods still missing, and both suspended or
 * neither (sched__diagnose() reads the phase for that alone: a running
 * workload evicted in the cycle is diagnosed as a pending one is). */
int sched__same_diagnosis(const struct sched_session *ss, int a, int b)
{
    const struct sched_workload *wa = ss_w(ss, a), *wb = ss_w(ss, b);
    const struct ss_wl *xa = &ss->wl[a], *xb = &ss->wl[b];

    if (wa->queue != wb->queue ||
        (wa->phase == SCHED_STOPPED) != (wb->phase == SCHED_STOPPED) || xa->pool != xb->pool ||
        xa->n_pools != xb->n_pools || wa->gpu_devices != wb->gpu_devices ||
        wa->gpu_portion != wb->gpu_portion || wa->cpu_milli != wb->cpu_milli ||
        wa->mem_mib != wb->mem_mib || wa->preemptible != wb->preemptible ||
        wa->n_pods != wb->n_pods || wa->min_pods - xa->n_placed != wb->min_pods - xb->n_placed ||
        wa->type != wb->type || (a != b && (sched__topo_fixed(ss, a) || sched__topo_fixed(ss, b))))
        return 0;
    if (xa->pools != xb->pools && memcmp(xa->pools, xb->pools, sizeof(int) * (size_t)xa->n_pools))
        return 0;
    return wa->gpu_memory_mib == wb->gpu_memory_mib && xa->cls == xb->cls;
}

uint64_t sched__diagnosis_hash(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    const struct ss_wl *x = &ss->wl[w];
    uint64_t h = SS_FNV_BASIS;

    h = ss_fnv(h, wl->queue);
    h = ss_fnv(h, x->pool);
    h = ss_fnv(h, wl->gpu_devices);
    h = ss_fnv(h, wl->gpu_portion);
    h = ss_fnv(h, wl->cpu_milli);
    h = ss_fnv(h, wl->mem_mib);
    h = ss_fnv(h, wl->min_pods - x->n_placed);
    h = ss_fnv(h, wl->phase == SCHED_STOPPED);
    h = ss_fnv(h, x->n_pools);
    h = ss_fnv(h, wl->gpu_memory_mib);
    h = ss_fnv(h, x->cls);
    return ss_fnv_ints(h, x->pools, x->n_pools);
}

/* A reason for every pending workload. Workloads the diagnosis cannot tell
 * apart share one (a table of the first of each kind), so a cycle with tens
 * of thousands of pending workloads diagnoses a few hundred kinds. */
static int record_pending(struct sched_session *ss, struct sched_arena *arena,
                          struct sched_result *out, struct ss_kinds *kinds)
{
    int w, n = 0, cap = 16, mask, *first, *kind_of;

    for (w = 0; w < ss->n_workloads; w++)
        n += sched__is_pending(ss, w);
    out->pending = sched__calloc(arena, (size_t)n + 1, sizeof(struct sched_pending));
    while (cap < 2 * n)
        cap *= 2;
    first = sched__calloc(arena, (size_t)cap, sizeof(int)); /* index into pending + 1 */
    kind_of = sched__alloc(arena, sizeof(int) * ((size_t)n + 1));
    if (!out->pending || !first || !kind_of)
        return SCHED_ENOMEM;
    mask = cap - 1;
    out->n_pending = 0;
    for (w = 0; w < ss->n_workloads; w++) {
        struct sched_pending *p;
        int i;
        if (!sched__is_pending(ss, w))
            continue;
        p = &out->pending[out->n_pending];
        for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); first[i]; i = (i + 1) & mask)
            if (sched__same_diagnosis(ss, out->pending[first[i] - 1].workload, w))
                break;
        if (first[i]) {
            *p = out->pending[first[i] - 1];
            p->workload = w;
        } else {
            sched__diagnose(ss, w, p);
            first[i] = out->n_pending + 1;
        }
        kind_of[out->n_pending++] = first[i] - 1;
    }
    kinds->first = first;
    kinds->cap = cap;
    kinds->kind_of = kind_of;
    return SCHED_OK;
}

/* ---- Step 4 from a settled cycle's list (memo.c Step 5) ----
 * Why it is record_pending()'s result: a workload that neither left, nor
 * was submitted since, nor is named by a decision of this cycle has the
 * phase, flags, placed pods and pools it had in the settled cycle, so it
 * is pending now exactly when it was then, and two such workloads are of
 * one kind now exactly when they were then (the kind reads only those).
 * The others (the touched ones) are looked up among one untouched member
 * of each kind (its representative), else form kinds of their own. Every
 * kind's first entry in workload order is diagnosed in the state of now
 * and the rest copy it, as record_pending() does. A kind is named by its
 * label in the settled list (one label per kind: memo.c does not ask with
 * a list that may carry two), or prev->n_labels + k for the k-th new one.
 * A settled kind's diagnosis is not made again when its settled entry
 * still says what it would say (still_diagnosed()): a diagnosis reads the
 * state of one pool, the one its entry names (the pools before it in the
 * workload's list are passed by what their nodes are, not by what they
 * hold), so an entry of a pool that is as the settled cycle left it
 * (sched__pool_as_settled()) is copied, and so is one of a pool whose
 * state changed only where its diagnosis does not read (a completion and
 * the placement it let in, of one size: the pool's nodes together, who
 * holds it and who is furthest above its share as they were, and no
 * queue holding there what it did not above or below the queue the entry
 * names, sched__diagnosis_as_settled()); Suspended and NoMatchingNodePool read
 * no pool's state at all.
 * The new list is the settled one less the touched entries, plus an
 * entry for each touched workload pending now (a submission that waits, a
 * victim pending again), and it is written over the settled one where it
 * lies (prev->own, the memo's) when the room around it allows: with no
 * entry put in (a completion, and the pending workloads the cycle placed)
 * the entries after the first one taken out move down, or those before
 * the last one move up when they are fewer (the workload placed after a
 * completion is often among the oldest, near the list's start); with
 * some, the runs of entries between those taken out and put in move, the
 * first entry or the last staying, whichever moves fewer (make_room()).
 * Each entry keeps its label; an entry put in takes the label of an
 * untouched entry of its kind (the memo's kinds table, prev->settled_entry)
 * and what that entry says, or, the first of a new kind, a new label and
 * its diagnosis now. Of the others only those of a kind whose first
 * entry reads differently now are written (record_in_place()), and the
 * memo moves its kinds table, label counts and records along (memo.c,
 * keep_in_place()). With the memo's record of each settled kind (its first entry,
 * and the reason, pool and queue that entry names: memo.c Invariant 5),
 * the kinds are checked from their records and the list's labels are
 * read only to write a kind that reads differently (kinds_redo()).
 * The kinds, their order, their first entries and what each says are
 * record_again()'s merge. */

struct again {
    struct sched_session *ss;
    const struct ss_prev_pending *prev;
    uint8_t *touched;   /* [n_workloads] */
    int *tl, n_tl;      /* touched workloads pending now, in workload order */
    int *all, n_all;    /* every touched workload, each once */
    int *tkind;         /* [n_tl] their kinds */
    int *rep;           /* [n_labels + n_tl]: a representative of each kind + 1 */
    int *rep_entry;     /* [n_labels]: the representative's entry in the settled list */
    int *kids, n_kids;  /* kinds with a representative */
};

static void touch(struct again *g, int w)
{
    if (g->touched[w])
        return;
    g->touched[w] = 1;
    g->all[g->n_all++] = w;
    if (sched__is_pending(g->ss, w))
        g->tl[g->n_tl++] = w;
}

/* Marks the touched workloads and lists those pending now. */
static int again_touched(struct again *g, struct sched_arena *arena)
{
    struct sched_session *ss = g->ss;
    const struct ss_prev_pending *prev = g->prev;
    size_t most = (size_t)prev->n_left + (size_t)ss->n_decisions +
                  (size_t)(ss->n_workloads - prev->n_workloads) + 1;
    int w, k;

    g->tl = sched__alloc(arena, sizeof(int) * most);
    g->all = sched__alloc(arena, sizeof(int) * most);
    if (!g->tl || !g->all)
        return SCHED_ENOMEM;
    for (k = 0; k < prev->n_left; k++)
        touch(g, prev->left[k]);
    for (k = 0; k < ss->n_decisions; k++)
        touch(g, ss->decisions[k].workload);
    for (w = prev->n_workloads; w < ss->n_workloads; w++)
        touch(g, w);
    return sched__sort(arena, g->tl, g->n_tl, sched__ascending, NULL);
}

/* The kind of each touched pending workload: the one of an untouched
 * representative it matches, or a new one. */
static int again_kinds(struct again *g, struct sched_arena *arena)
{
    struct sched_session *ss = g->ss;
    int cap = 16, mask, *slot, j, k, i, n_new = 0;

    g->tkind = sched__alloc(arena, sizeof(int) * ((size_t)g->n_tl + 1));
    if (!g->tkind)
        return SCHED_ENOMEM;
    if (g->n_tl == 0)
        return SCHED_OK;
    while (cap < 2 * (g->n_kids + g->n_tl))
        cap *= 2;
    slot = sched__calloc(arena, (size_t)cap, sizeof(int)); /* a kind + 1 */
    if (!slot)
        return SCHED_ENOMEM;
    mask = cap - 1;
    for (k = 0; k < g->n_kids; k++) {
        i = (int)(sched__diagnosis_hash(ss, g->rep[g->kids[k]] - 1) & (uint64_t)mask);
        while (slot[i])
            i = (i + 1) & mask;
        slot[i] = g->kids[k] + 1;
    }
    for (j = 0; j < g->n_tl; j++) {
        int w = g->tl[j];
        for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); slot[i]; i = (i + 1) & mask)
            if (sched__same_diagnosis(ss, g->rep[slot[i] - 1] - 1, w))
                break;
        if (!slot[i]) {
            slot[i] = g->prev->n_labels + n_new + 1;
            g->rep[g->prev->n_labels + n_new++] = w + 1;
        }
        g->tkind[j] = slot[i] - 1;
    }
    return SCHED_OK;
}

/* Whether a settled entry of a reason that reads its pool, naming `pool`
 * and `queue`, says what a diagnosis would say now; `reads_np`: its
 * diagnosis reads non-preemptible allocations (ss_reads_np()). */
static int pair_as_settled(struct sched_session *ss, int pool, int queue, int reads_np)
{
    return sched__pool_as_settled(ss, pool) ||
           sched__diagnosis_as_settled(ss, pool, queue, reads_np);
}

/* The same for any settled entry (its reason, pool and named queue). */
static int stands(struct sched_session *ss, int reason, int pool, int queue, int reads_np)
{
    return !ss_reason_reads_pool(reason) || pair_as_settled(ss, pool, queue, reads_np);
}

/* pair_as_settled(), answered once per (pool, queue, reads_np) in
 * verdict[ss_rep_code(pool * n_queues + queue, reads_np)] (0: not asked
 * yet, 1: stands, 2: not): it reads the pair only, and no record's check
 * moves it. */
static int code_stands(struct sched_session *ss, uint8_t *verdict, int code)
{
    int pair = code >> 1;

    if (!verdict[code])
        verdict[code] =
            pair_as_settled(ss, pair / ss->n_queues, pair % ss->n_queues, code & 1) ? 1 : 2;
    return verdict[code] == 1;
}

/* Whether every record stands, from the memo's counts per code alone
 * (memo.c Invariant 5): each (pool, queue, reads_np) that some record
 * names stands, and none names a pair beyond them. 0 also when the counts
 * are not at hand: the records are read then. */
static int every_rep_stands(struct sched_session *ss, uint8_t *verdict,
                            const struct ss_prev_pending *prev)
{
    int code, n = ss_rep_code(ss->n_pools * ss->n_queues, 0);

    if (!verdict || !prev->code_reps || prev->odd_reps > 0 || prev->pair_pools != ss->n_pools ||
        prev->pair_queues != ss->n_queues)
        return 0;
    for (code = 0; code < n; code++)
        if (prev->code_reps[code] > 0 && !code_stands(ss, verdict, code))
            return 0;
    return 1;
}

static int still_diagnosed(struct sched_session *ss, const struct sched_pending *p)
{
    return stands(ss, p->reason, p->pool, p->queue, ss_reads_np(ss, p->workload));
}

/* The index of w's entry in list[0..n) (entries in workload order), or
 * -1 - the index where it would go. */
int sched__pending_find(const struct sched_pending *list, int n, int w)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (list[mid].workload < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && list[lo].workload == w ? lo : -1 - lo;
}

int sched_result_pending_at(const struct sched_result *r, int w)
{
    int e = sched__pending_find(r->pending, r->n_pending, w);

    return e >= 0 ? e : -1;
}

/* The settled list's entries of the workloads that left or were decided
 * about, ascending and each once, into *gone (*n_gone of them). */
static int again_gone(struct again *g, struct sched_arena *arena, int **gone, int *n_gone)
{
    const struct ss_prev_pending *prev = g->prev;
    const struct sched_session *ss = g->ss;
    int k, e, w, n = 0, most = prev->n_left + ss->n_decisions;

    *gone = sched__alloc(arena, sizeof(int) * ((size_t)most + 1));
    if (!*gone)
        return SCHED_ENOMEM;
    for (k = 0; k < most; k++) {
        w = k < prev->n_left ? prev->left[k] : ss->decisions[k - prev->n_left].workload;
        e = sched__pending_find(prev->pending, prev->n, w);
        if (e >= 0)
            (*gone)[n++] = e;
    }
    if (sched__sort(arena, *gone, n, sched__ascending, NULL) != SCHED_OK)
        return SCHED_ENOMEM;
    *n_gone = n > 0;
    for (k = 1; k < n; k++)   /* a workload may be named twice */
        if ((*gone)[k] != (*gone)[*n_gone - 1])
            (*gone)[(*n_gone)++] = (*gone)[k];
    return SCHED_OK;
}

/* Moves the run of n entries at `from` to `to` (they may overlap). */
static void move_run(struct sched_pending *list, int *kind_of, int to, int from, int n)
{
    if (n <= 0 || to == from)
        return;
    memmove(&list[to], &list[from], sizeof(*list) * (size_t)n);
    memmove(&kind_of[to], &kind_of[from], sizeof(*kind_of) * (size_t)n);
}

int sched__take_out(struct sched_pending *list, int *kind_of, int n, const int *gone,
                    int n_gone, int may_shift)
{
    int r, from, to;

    if (n_gone == 0)
        return 0;
    if (may_shift && gone[n_gone - 1] < n - gone[0]) {
        /* the runs before the last one gone move up, the last run first */
        for (r = n_gone - 1, to = gone[n_gone - 1] + 1; r >= 0; r--) {
            from = r > 0 ? gone[r - 1] + 1 : 0;
            to -= gone[r] - from;
            move_run(list, kind_of, to, from, gone[r] - from);
        }
        return n_gone;
    }
    for (r = 0, to = gone[0]; r < n_gone; r++) {   /* the runs after each one gone move down */
        int end = r + 1 < n_gone ? gone[r + 1] : n;
        from = gone[r] + 1;
        move_run(list, kind_of, to, from, end - from);
        to += end - from;
    }
    return 0;
}

/* The workloads whose entries the list written in place took out, put in
 * or wrote again (the result's `changed`): the touched ones, then those
 * of the kinds written again. */
struct rewritten {
    int *w, n, cap;
};

static void rewritten_add(struct rewritten *rw, int w)
{
    if (rw->n < rw->cap)
        rw->w[rw->n++] = w;
}

/* The touched workloads pending now, put into the settled list where it
 * lies (record_in_place()), ascending: where each goes in the settled list
 * (before entry at[j], or at its end), its kind's label (a settled one, or
 * a new one), its index in the new list and its entry. */
struct ins {
    int *at, *label, *new_at;
    struct sched_pending *entry;
    int n, n_new;       /* entries; new kinds among them (labels n_labels + k) */
};

/* How many of the ascending v[0..n) are below x (strictly), or at most x. */
static int count_below(const int *v, int n, int x, int or_equal)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (v[mid] < x || (or_equal && v[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The entry of the new list (list[0..n): the settled one with gone[0..
 * n_gone) taken out and entries put in) that stands for settled kind k:
 * its own, or, when that one was taken out, the next of its label (a
 * settled one, or one put in: each says what its settled entry said); -1
 * when none is left (an entry is put in with a settled label only while
 * an untouched entry carries it, and k's was its label's first).
 * `shift`: its counts at k's entry. */
static int kind_entry(const struct ss_prev_pending *prev, const struct ss_kind_rep *k,
                      const int *kind_of, int n, const int *gone, const int *gone_label,
                      int n_gone, const struct ss_shift *shift)
{
    int e = k->entry - shift->gone + shift->ins, j, left;

    if (shift->gone >= n_gone || gone[shift->gone] != k->entry)
        return e;
    left = prev->label_count[k->label];
    for (j = 0; j < n_gone; j++)
        left -= gone_label[j] == k->label;
    if (left <= 0)
        return -1;
    while (e < n && kind_of[e] != k->label)
        e++;
    return e < n ? e : -1;
}

#define KINDS_REDONE_MAX 255   /* kinds_redo()'s byte per label */

/* The first record from reps[i] on whose code is not known to stand
 * (verdict[code] != 1), or n: the pass most records end in. */
static int reps_standing(const struct ss_kind_rep *reps, int i, int n, const uint8_t *verdict)
{
    while (i < n && verdict[reps[i].code] == 1)
        i++;
    return i;
}

/* record_in_place()'s pass by kinds (with the settled list's kinds at
 * hand, prev->reps): each kind's entry
 * is checked once from its record, diagnosed where its pool moved, and
 * where it reads differently the entries of its label are written as
 * the pass over the list writes them (the new entry, each with its own
 * workload). Reads a record's code per kind (none when every code the
 * records carry stands, every_rep_stands()), an entry only where its
 * code's verdict moved, and the list's labels only when a kind was
 * written. 0 (nothing written) when more than KINDS_REDONE_MAX
 * kinds read differently: the pass over the list does it. */
static int kinds_redo(struct again *g, struct sched_arena *arena, struct sched_pending *list,
                      const int *kind_of, int n, const int *gone, const int *gone_label,
                      int n_gone, const struct ins *ins, int *n_redone,
                      const uint8_t **redone_out, struct rewritten *rw)
{
    const struct ss_prev_pending *prev = g->prev;
    struct sched_pending redo[KINDS_REDONE_MAX], now;
    uint8_t *redone = NULL;   /* [n_labels]: 1 + the index in redo[] */
    int n_codes = ss_rep_code(g->ss->n_pools * g->ss->n_queues, 0);
    /* code_stands()'s verdicts, at verdict[code] for every code a record
     * may carry: SS_REP_UNCOUNTED's stands (1), SS_REP_ODD's is read from
     * the entry (2), so most records cost one look */
    uint8_t *verdict = sched__calloc(arena, (size_t)n_codes + 3, 1);
    struct ss_shift shift = {0, 0};
    /* the records' pairs are the session's */
    int coded = prev->pair_pools == g->ss->n_pools && prev->pair_queues == g->ss->n_queues;
    int i, e, w, code, n_redo = 0;

    if (!verdict)
        return 0;
    verdict += 2;
    verdict[SS_REP_UNCOUNTED] = 1;
    verdict[SS_REP_ODD] = 2;
    for (i = every_rep_stands(g->ss, verdict, prev) ? prev->n_reps : 0;
         (i = coded ? reps_standing(prev->reps, i, prev->n_reps, verdict) : i) < prev->n_reps;
         i++) {
        const struct ss_kind_rep *k = &prev->reps[i];
        code = k->code >= 0 && !coded ? SS_REP_ODD : k->code;
        if (verdict[code] == 1 || (verdict[code] == 0 && code_stands(g->ss, verdict, code)))
            continue;   /* its reason reads no pool, or its verdict stands (asked once) */
        ss_shift_to(&shift, gone, n_gone, ins->at, ins->n, k->entry);   /* records ascend */
        e = kind_entry(prev, k, kind_of, n, gone, gone_label, n_gone, &shift);
        if (e < 0 || (code == SS_REP_ODD && still_diagnosed(g->ss, &list[e])))
            continue;   /* an entry of its kind says what its record's did */
        memset(&now, 0, sizeof(now));   /* padding too: entries compare byte for byte */
        sched__diagnose(g->ss, list[e].workload, &now);
        if (memcmp(&now, &list[e], sizeof(now)) == 0)
            continue;
        if (!redone)
            redone = sched__calloc(arena, (size_t)prev->n_labels + 1, 1);
        if (!redone || n_redo == KINDS_REDONE_MAX)
            return 0;
        redo[n_redo] = now;
        redone[k->label] = (uint8_t)++n_redo;
    }
    *n_redone = n_redo;
    *redone_out = redone;
    for (e = 0; n_redo > 0 && e < n; e++)
        if (kind_of[e] < prev->n_labels && redone[kind_of[e]]) {
            w = list[e].workload;
            memcpy(&list[e], &redo[redone[kind_of[e]] - 1], sizeof(list[e]));   /* padding too */
            list[e].workload = w;
            rewritten_add(rw, w);
        }
    return 1;
}

/* The entries of the touched workloads pending now (g->tl): each one's
 * kind, the settled label of an untouched entry it matches
 * (prev->settled_entry(), the memo's table of kinds) or a new one, and
 * its entry: that untouched entry's (a settled kind's first entry is
 * checked by kinds_redo() or the pass, as every other), or, the first of
 * a new kind, its diagnosis in the state of now, which the others of that
 * kind copy. Then where each goes. */
static int ins_make(struct again *g, struct sched_arena *arena, struct ins *ins, const int *gone,
                    int n_gone)
{
    const struct ss_prev_pending *prev = g->prev;
    struct sched_session *ss = g->ss;
    int n = g->n_tl, cap = 16, mask, *slot, j, i, e, w;

    ins->n = n;
    ins->n_new = 0;
    while (cap < 2 * n)
        cap *= 2;
    mask = cap - 1;
    ins->at = sched__alloc(arena, sizeof(int) * ((size_t)n + 1));
    ins->label = sched__alloc(arena, sizeof(int) * ((size_t)n + 1));
    ins->new_at = sched__alloc(arena, sizeof(int) * ((size_t)n + 1));
    ins->entry = sched__alloc(arena, sizeof(*ins->entry) * ((size_t)n + 1));
    slot = sched__calloc(arena, (size_t)cap, sizeof(int));   /* a new kind's first j + 1 */
    if (!ins->at || !ins->label || !ins->new_at || !ins->entry || !slot)
        return SCHED_ENOMEM;
    for (j = 0; j < n; j++) {
        struct sched_pending *p = &ins->entry[j];
        w = g->tl[j];
        e = prev->settled_entry(prev->settled_ctx, ss, w, g->touched);
        if (e >= 0) {
            memcpy(p, &prev->pending[e], sizeof(*p));   /* padding too */
            p->workload = w;
            ins->label[j] = prev->kind_of[e];
        } else {
            for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); slot[i];
                 i = (i + 1) & mask)
                if (sched__same_diagnosis(ss, g->tl[slot[i] - 1], w))
                    break;
            if (slot[i]) {
                memcpy(p, &ins->entry[slot[i] - 1], sizeof(*p));
                p->workload = w;
                ins->label[j] = ins->label[slot[i] - 1];
            } else {
                memset(p, 0, sizeof(*p));   /* padding too: entries compare byte for byte */
                sched__diagnose(ss, w, p);
                slot[i] = j + 1;
                ins->label[j] = prev->n_labels + ins->n_new++;
            }
        }
        e = sched__pending_find(prev->pending, prev->n, w);
        ins->at[j] = e >= 0 ? e : -1 - e;
        ins->new_at[j] = ins->at[j] - count_below(gone, n_gone, ins->at[j], 0) + j;
    }
    return SCHED_OK;
}

/* A run of settled entries [from, to) that moves by `by` entries. */
struct run {
    int from, to, by;
};

/* The runs of entries that stay in the list, each with how far it moves
 * when the list's first entry stays (runs[0..*n_runs), ascending). */
static int runs_of(struct sched_arena *arena, int n, const int *gone, int n_gone,
                   const struct ins *ins, struct run **runs, int *n_runs)
{
    int x = 0, i = 0, j = 0, d = 0, end, k = 0;

    *runs = sched__alloc(arena, sizeof(**runs) * ((size_t)n_gone + (size_t)ins->n + 2));
    if (!*runs)
        return SCHED_ENOMEM;
    while (x < n) {
        while (j < ins->n && ins->at[j] <= x) {
            d++;
            j++;
        }
        if (i < n_gone && gone[i] == x) {
            d--;
            i++;
            x++;
            continue;
        }
        end = n;
        if (i < n_gone && gone[i] < end)
            end = gone[i];
        if (j < ins->n && ins->at[j] < end)
            end = ins->at[j];
        (*runs)[k].from = x;
        (*runs)[k].to = end;
        (*runs)[k++].by = d;
        x = end;
    }
    *n_runs = k;
    return SCHED_OK;
}

/* Moves the runs by `by` + `shift` each: those moving down first, in
 * order, then those moving up, from the last (no entry is written over
 * before it has moved: a run lands only on entries taken out or on runs
 * that moved already). */
static void move_runs(struct sched_pending *list, int *kind_of, const struct run *runs,
                      int n_runs, int shift)
{
    int k, by;

    for (k = 0; k < n_runs; k++) {
        by = runs[k].by + shift;
        if (by < 0) {
            memmove(&list[runs[k].from + by], &list[runs[k].from],
                    sizeof(*list) * (size_t)(runs[k].to - runs[k].from));
            memmove(&kind_of[runs[k].from + by], &kind_of[runs[k].from],
                    sizeof(int) * (size_t)(runs[k].to - runs[k].from));
        }
    }
    for (k = n_runs - 1; k >= 0; k--) {
        by = runs[k].by + shift;
        if (by > 0) {
            memmove(&list[runs[k].from + by], &list[runs[k].from],
                    sizeof(*list) * (size_t)(runs[k].to - runs[k].from));
            memmove(&kind_of[runs[k].from + by], &kind_of[runs[k].from],
                    sizeof(int) * (size_t)(runs[k].to - runs[k].from));
        }
    }
}

/* The settled list less gone[] with a place for each entry of `ins`,
 * where it lies: the side that moves fewer entries stays (the first
 * entry, or the last), within the room before and after the list.
 * *off: where the new list begins. 1 (nothing moved) when it does not
 * fit. */
static int make_room(struct sched_arena *arena, const struct ss_prev_pending *prev,
                     const int *gone, int n_gone, const struct ins *ins, int *off)
{
    struct run *runs;
    int n_runs, k, grow = ins->n - n_gone, front = 0, back = 0, rc;

    rc = runs_of(arena, prev->n, gone, n_gone, ins, &runs, &n_runs);
    if (rc != SCHED_OK)
        return rc;
    for (k = 0; k < n_runs; k++) {
        front += runs[k].by != 0 ? runs[k].to - runs[k].from : 0;
        back += runs[k].by != grow ? runs[k].to - runs[k].from : 0;
    }
    if (grow <= prev->own_before && (back < front || grow > prev->own_after)) {
        move_runs(prev->own, prev->own_kind_of, runs, n_runs, -grow);   /* the last stays */
        *off = -grow;
        return SCHED_OK;
    }
    if (grow > prev->own_after)
        return 1;
    move_runs(prev->own, prev->own_kind_of, runs, n_runs, 0);   /* the first stays */
    *off = 0;
    return SCHED_OK;
}

/* With no touched workload pending now: the settled list less the touched
 * entries, over itself (the comment above record_again()); with some, their
 * entries put in at their places too, when the room around the list
 * allows (else 1: nothing written, record_again() merges). The labels
 * move with their entries (memo.c keeps them, keep_in_place()): the
 * entries may move up instead of down (sched__take_out(), make_room()),
 * no kind is written but those that read differently, and with the
 * settled kinds at hand each is checked once (kinds_redo()) instead of
 * passing over every entry. What was taken out and put in, and whether a
 * kind was written, is told in *kinds (in_place). */
static int record_in_place(struct again *g, struct sched_arena *arena, struct sched_result *out,
                           struct ss_kinds *kinds)
{
    const struct ss_prev_pending *prev = g->prev;
    struct sched_session *ss = g->ss;
    struct sched_pending *list = prev->own, now;
    int *kind_of = prev->own_kind_of, *gone, *gone_label, n_gone, e, j, n, off, label, w, rc;
    int n_labels;    /* settled and new */
    int *first;      /* [n_labels] new index + 1 of each label's first entry */
    uint8_t *redone; /* [n_labels] */
    struct ins ins;
    struct rewritten rw;

    memset(&ins, 0, sizeof(ins));
    rc = again_gone(g, arena, &gone, &n_gone);
    if (rc == SCHED_OK && g->n_tl > 0)
        rc = ins_make(g, arena, &ins, gone, n_gone);
    if (rc != SCHED_OK)
        return rc;
    gone_label = sched__alloc(arena, sizeof(int) * ((size_t)n_gone + 1));
    if (!gone_label)
        return SCHED_ENOMEM;
    for (e = 0; e < n_gone; e++)
        gone_label[e] = kind_of[gone[e]];
    if (ins.n == 0) {
        off = sched__take_out(list, kind_of, prev->n, gone, n_gone, 1);
    } else {
        rc = make_room(arena, prev, gone, n_gone, &ins, &off);
        if (rc != SCHED_OK)
            return rc;   /* 1: it does not fit, nothing moved */
    }
    list += off;
    kind_of += off;
    n = prev->n - n_gone + ins.n;
    for (j = 0; j < ins.n; j++) {
        memcpy(&list[ins.new_at[j]], &ins.entry[j], sizeof(*list));
        kind_of[ins.new_at[j]] = ins.label[j];
    }
    out->pending = list;
    out->n_pending = n;
    kinds->kind_of = kind_of;
    kinds->first = NULL;
    kinds->cap = 0;
    kinds->in_place = 1;
    kinds->off = off;
    kinds->gone = gone;
    kinds->gone_label = gone_label;
    kinds->n_gone = n_gone;
    kinds->ins_at = ins.at;
    kinds->ins_new_at = ins.new_at;
    kinds->ins_label = ins.label;
    kinds->n_ins = ins.n;
    kinds->n_new_labels = ins.n_new;
    kinds->n_redone = 0;
    /* every touched workload, and at most every entry written again */
    rw.cap = g->n_all + n;
    rw.n = 0;
    rw.w = sched__array_raw(arena, (size_t)rw.cap + 1, sizeof(int));
    if (!rw.w)
        return SCHED_ENOMEM;
    for (j = 0; j < g->n_all; j++)
        rewritten_add(&rw, g->all[j]);
    out->changed = rw.w;
    if (prev->reps && kinds_redo(g, arena, list, kind_of, n, gone, gone_label, n_gone, &ins,
                                 &kinds->n_redone, &kinds->redone, &rw)) {
        out->n_changed = rw.n;
        return SCHED_OK;
    }
    n_labels = prev->n_labels + ins.n_new;
    first = sched__calloc(arena, (size_t)n_labels + 1, sizeof(int));
    redone = sched__calloc(arena, (size_t)n_labels + 1, 1);
    if (!first || !redone)
        return SCHED_ENOMEM;
    kinds->redone = redone;
    for (e = 0; e < n; e++) {
        struct sched_pending *p = &list[e];
        label = kind_of[e];
        if (!first[label]) {
            first[label] = e + 1;
            if (!still_diagnosed(ss, p)) {
                memset(&now, 0, sizeof(now));   /* padding too: entries compare byte for byte */
                sched__diagnose(ss, p->workload, &now);
                if (memcmp(&now, p, sizeof(now)) != 0) {
                    memcpy(p, &now, sizeof(now));
                    redone[label] = 1;
                    kinds->n_redone++;
                }
            }
        } else if (redone[label]) {
            w = p->workload;
            memcpy(p, &list[first[label] - 1], sizeof(*p));   /* padding too */
            p->workload = w;
        }
        if (redone[label])
            rewritten_add(&rw, p->workload);
    }
    out->n_changed = rw.n;
    return SCHED_OK;
}

/* record_again()'s work, g->touched all 0 on entry. */
static int record_again_marked(struct again *g, struct sched_arena *arena,
                               struct sched_result *out, struct ss_kinds *kinds)
{
    struct sched_session *ss = g->ss;
    const struct ss_prev_pending *prev = g->prev;
    int e, j, kind, w, n_max, n_kinds, *first_of, rc;

    rc = again_touched(g, arena);
    if (rc != SCHED_OK)
        return rc;
    if (prev->own && (g->n_tl == 0 || prev->settled_entry)) {
        rc = record_in_place(g, arena, out, kinds);
        if (rc != 1)
            return rc;
        memset(kinds, 0, sizeof(*kinds));   /* 1: no room, nothing written; merged below */
    }
    n_max = prev->n + g->n_tl;
    n_kinds = prev->n_labels + g->n_tl;
    g->rep = sched__calloc(arena, (size_t)n_kinds + 1, sizeof(int));
    g->kids = sched__alloc(arena, sizeof(int) * ((size_t)prev->n + 1));
    g->rep_entry = sched__alloc(arena, sizeof(int) * ((size_t)prev->n_labels + 1));
    first_of = sched__calloc(arena, (size_t)n_kinds + 1, sizeof(int)); /* kind -> entry + 1 */
    if (n_max < prev->cap_buf) {   /* every entry is written whole below */
        out->pending = prev->buf;
        kinds->kind_of = prev->buf_kind_of;
    } else {
        out->pending = sched__calloc(arena, (size_t)n_max + 1, sizeof(struct sched_pending));
        kinds->kind_of = sched__alloc(arena, sizeof(int) * ((size_t)n_max + 1));
    }
    kinds->first = sched__alloc(arena, sizeof(int) * ((size_t)n_max + 1));
    if (!g->rep || !g->kids || !g->rep_entry || !first_of || !out->pending || !kinds->kind_of ||
        !kinds->first)
        return SCHED_ENOMEM;
    for (e = 0; e < prev->n; e++) {
        w = prev->pending[e].workload;
        kind = prev->kind_of[e];
        if (!g->touched[w] && !g->rep[kind]) {
            g->rep[kind] = w + 1;
            g->rep_entry[kind] = e;
            g->kids[g->n_kids++] = kind;
        }
    }
    rc = again_kinds(g, arena);
    if (rc != SCHED_OK)
        return rc;
    /* both lists in workload order, merged */
    out->n_pending = 0;
    kinds->cap = 0;
    for (e = 0, j = 0; e < prev->n || j < g->n_tl;) {
        struct sched_pending *p = &out->pending[out->n_pending];
        if (e < prev->n && g->touched[prev->pending[e].workload]) {
            e++;
            continue;
        }
        if (j >= g->n_tl || (e < prev->n && prev->pending[e].workload < g->tl[j])) {
            w = prev->pending[e].workload;
            kind = prev->kind_of[e++];
        } else {
            w = g->tl[j];
            kind = g->tkind[j++];
        }
        if (first_of[kind]) {
            memcpy(p, &out->pending[first_of[kind] - 1], sizeof(*p));   /* padding too */
            p->workload = w;
        } else {
            if (kind < prev->n_labels && g->rep[kind] &&
                still_diagnosed(ss, &prev->pending[g->rep_entry[kind]])) {
                memcpy(p, &prev->pending[g->rep_entry[kind]], sizeof(*p));   /* padding too */
                p->workload = w;
            } else {
                memset(p, 0, sizeof(*p));
                sched__diagnose(ss, w, p);
            }
            first_of[kind] = out->n_pending + 1;
            kinds->first[kinds->cap++] = out->n_pending + 1;
        }
        kinds->kind_of[out->n_pending++] = first_of[kind] - 1;
    }
    return SCHED_OK;
}

/* The touched marks in prev->touched when the memo lends a buffer (all 0,
 * and left so: the marks set are cleared one by one), else the arena's. */
static int record_again(struct sched_session *ss, struct sched_arena *arena,
                        struct sched_result *out, const struct ss_prev_pending *prev,
                        struct ss_kinds *kinds)
{
    struct again g;
    int k, rc;

    memset(&g, 0, sizeof(g));
    g.ss = ss;
    g.prev = prev;
    g.touched = prev->touched && prev->cap_touched > ss->n_workloads
                    ? prev->touched
                    : sched__calloc(arena, (size_t)ss->n_workloads + 1, 1);
    if (!g.touched)
        return SCHED_ENOMEM;
    rc = record_again_marked(&g, arena, out, kinds);
    for (k = 0; g.touched == prev->touched && k < g.n_all; k++)
        g.touched[g.all[k]] = 0;
    return rc;
}

static int cycle_on(struct sched_session *ss, struct sched_arena *arena,
                    struct sched_result *out, const struct ss_prev_pending *prev,
                    struct ss_kinds *kinds)
{
    struct ss_kinds unused;
    int rc;

    memset(out, 0, sizeof(*out));
    out->n_changed = -1;   /* any entry may have moved, unless record_in_place() says */
    if (!kinds)
        kinds = &unused;
    memset(kinds, 0, sizeof(*kinds));
    rc = ss->fair_current ? SCHED_OK : sched__fairshare(ss);
    ss->fair_current = 0;
    if (rc == SCHED_OK)
        rc = sched__record_shares(ss, arena, out);
    if (rc != SCHED_OK)
        return rc;
    if (ss->known)
        sched__known_begin(ss);

    sched__act_allocate(ss);
    sched__act_consolidate(ss);
    sched__act_reclaim(ss);
    sched__act_preempt(ss);

    if (ss->no_stale && !sched__any_stale_candidate(ss)) {
        out->stale_since_ms = (int64_t *)ss->no_stale;   /* read-only, as sched.h says */
        ss->n_stale_set = 0;
    } else {
        /* not zeroed: sched__stale_gangs() writes every workload's entry */
        out->stale_since_ms =
            sched__array_raw(arena, (size_t)ss->n_workloads + 1, sizeof(int64_t));
        if (!out->stale_since_ms)
            return SCHED_ENOMEM;
        sched__stale_gangs(ss, out->stale_since_ms);
    }
    rc = prev ? record_again(ss, arena, out, prev, kinds)
              : record_pending(ss, arena, out, kinds);
    if (rc == SCHED_OK)
        rc = sched__record_waiting(ss, arena, out);
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    out->decisions = ss->decisions;
    out->n_decisions = ss->n_decisions;
    if (rc == SCHED_OK && ss->arena != arena && ss->n_decisions > 0) {
        /* a kept session's memory outlives the result's arena: copy them there */
        out->decisions = sched__calloc(arena, (size_t)ss->n_decisions, sizeof(*ss->decisions));
        if (!out->decisions)
            return SCHED_ENOMEM;
        memcpy(out->decisions, ss->decisions, sizeof(*ss->decisions) * (size_t)ss->n_decisions);
    }
    return rc;
}

/* The actions' iterators come from the result's arena (ss->cycle_arena),
 * which the caller resets: a kept session (memo.c) grows only by what
 * stays in it. */
int sched__cycle_on(struct sched_session *ss, struct sched_arena *arena,
                    struct sched_result *out, const struct ss_prev_pending *prev,
                    struct ss_kinds *kinds)
{
    int rc;

    ss->cycle_arena = arena;
    rc = cycle_on(ss, arena, out, prev, kinds);
    ss->cycle_arena = NULL;
    return rc;
}

int sched_cycle(const struct sched_state *in, const struct sched_config *cfg,
                struct sched_arena *arena, struct sched_result *out)
{
    struct sched_session ss;
    struct sched_config defaults;
    int rc;

    memset(out, 0, sizeof(*out));
    out->n_changed = -1;
    if (!cfg) {
        sched_config_default(&defaults);
        cfg = &defaults;
    }
    rc = sched__session_build(&ss, in, cfg, arena);
    if (rc == SCHED_OK)
        rc = sched__cycle_on(&ss, arena, out, NULL, NULL);
    return rc;
}
