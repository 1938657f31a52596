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
 * Step 2  A delta of submissions and of workloads that left holding no
 *         pod (a pending one suspended, cancelled or failed) after a
 *         settled cycle, with the same sizes and configuration, the mix
 *         the kept session measures with if a pool places by fragmentation
 *         (the mix moves only at the window's steps, mix.c: then Step 1),
 *         and, when the clock moved, no stale time set and no pool's
 *         minimum runtime (the only rules that read the clock besides
 *         time-based fairshare): the entries of the workloads that left
 *         are taken out, the kept session takes the submissions
 *         (sched__session_extend(): each costs what building it costs,
 *         nothing is rebuilt) and the departures (sched__session_leave():
 *         their demand goes), and the fair shares are computed again (per
 *         queue and pool, not per workload). A workload that left holding
 *         pods frees room: Step 5.
 * Step 3  If every fair share is what the memo kept, each submission is
 *         tried alone (sched__would_start()). Why that is the whole cycle:
 *         the previous cycle tried every older workload on this very state
 *         (placements and fair shares are equal; a pending workload's
 *         demand is read by fair share alone) and none started; a failed
 *         attempt leaves the state as it was, so every attempt of the full
 *         cycle runs on this state, whatever order the new heads give the
 *         queues, and a submission that fails alone fails there too. A
 *         workload that left held nothing, so the state is the same and
 *         nobody it leaves behind starts either. A submission that starts
 *         alone: Step 7.
 * Step 4  Nothing starts: the result is the kept one less the entries of
 *         the workloads that left, plus the entry of each that is still
 *         pending (a suspended one: SUSPENDED) at its place in workload
 *         order, and the submissions' own entries: shares as computed
 *         (requests moved), the stale times as the workloads hold them (a
 *         submission has none, one that left none either), the kept
 *         pending entries, then each pending submission's entry, shared
 *         with the first pending workload of its kind (the kinds table) as
 *         record_pending() does, or diagnosed. Taking an entry out moves
 *         the entries on its shorter side (a memmove of at most half the
 *         list; when those before it move up, the buffers begin
 *         pending_off entries before the list). The pending
 *         entries and stale times are the memo's own arrays (valid until
 *         the next call), so the cycle copies nothing per workload. The
 *         waiting entries (running workloads with pods left to place) are
 *         diagnosed again on the kept session, which holds what a build
 *         holds (sched__record_waiting(): the running lists' few). Once
 *         Step 2 has touched the kept session, anything else falls back to
 *         Step 1 (the session is built again).
 * Step 5  Some workload of the delta held pods (the same conditions as
 *         Step 2, and the kept session exactly as built: no decision, an
 *         empty undo log): the kept session takes the submissions and the
 *         departures (sched__session_leave() also takes the pods off their
 *         nodes, queues and pool's running list), and the cycle's steps
 *         run on it (sched__cycle_on(), as on a session built from the new
 *         snapshot; the fair shares are computed there, so they may move).
 *         Why that is the full cycle: after the departures the kept
 *         session holds what Step 1 builds from the new snapshot (the same
 *         placements per node and device, queue accounting, demand, pool
 *         running lists in workload order, flags; every cache keyed by a
 *         version starts over, the victim search's sorted running list of
 *         the pool is dropped), and the cycle reads nothing else. Only the
 *         build is saved; what it leaves is kept as Step 1 keeps it.
 *         The job order (order.c: every leaf's candidates wanting pods,
 *         sorted, with their keys and signatures) is kept too when no
 *         workload that left was such a candidate
 *         (sched__session_leave()), the submissions put in at their
 *         places (sched__order_add(): each leaf's new entries merged into
 *         its list when the walk first needs it): the settled cycle
 *         decided nothing, so the order it built is what a build sorts
 *         from the new snapshot (each key and signature reads the
 *         workload's own fields and placed pods, none of which moved);
 *         that saves the sort of every pending workload (a quarter of the
 *         cycle). Tests compare it with the order built again
 *         (sched__order_differs()) wherever they compare the session.
 *         The reasons are recorded from the settled list (cycle.c,
 *         record_again()): each kept entry carries its kind's label, and
 *         only the workloads the delta names, the submissions and those
 *         the new cycle decides about are looked up again; every kind's
 *         first entry is diagnosed in the new state, the rest copy it,
 *         unless what the diagnosis reads of its pool is as the settled
 *         cycle left it (its figures kept beside the fair shares,
 *         keep_figures()).
 *         The new list is written into a buffer of the memo's (next[]),
 *         not the result's arena (which zeroes it first), or over the
 *         kept list itself when the room around it allows: the entries
 *         of the workloads it names taken out, those of the ones pending
 *         now (a submission still pending, a victim pending again) put in
 *         at their places, each with the label of an untouched entry of
 *         its kind (settled_entry(): the kinds table) or a new one, and
 *         only what moved or reads differently written; the result
 *         points there until the next call.
 *         The reclaim and preempt attempts that failed in the settled
         cycle are known to fail again (struct ss_known, actions.c) in
         every pool the delta did not change: no departure held pods
         there, every queue's fair share there is the one kept, and
         nothing was placed or taken there since the cycle began (the
         pool's version). Why: such an attempt reads only its workload
         (unchanged: its pods, if any, are in that pool) and that pool
         (its nodes, running workloads and their flags, its queues'
         figures there), all as in the settled cycle, where every attempt
         ran on the state as built; and what it leaves (a hopeless shape
         noted, victims.c) is noted again. An attempt that the hopeless
         table stopped there is not known (the table's history differs).
         A cycle records its own failures; they are kept only if it
         settles (known_end()).
         Step 4 keeps the labels with the list (an entry taken out takes
 *         its label along; a new entry takes its kind's, or a new one), and
 *         so does a Step 5 cycle that writes its list over the kept one:
 *         the kinds table, the label counts and the kinds' records follow
 *         the entries taken out (kinds_taken_out(), reps_taken_out()), and
 *         a kind whose indexed entry was taken out indexes the next entry
 *         of its label, so no kind is forgotten while entries carry it.
 *         Tests hold both paths to that claim: a memo told so
 *         (sched__memo_check_kept()) builds the snapshot again once the
 *         kept session took the delta, before Steps 3 and 5 read it, and
 *         keeps the first difference sched__session_differs() finds.
 * Step 6  The previous cycle placed pending workloads, and evicted whole
 *         running workloads or decided nothing else (each decision binds
 *         a pod of a workload that held none when the session was built,
 *         and that workload is not pending any more, or evicts a workload
 *         that held every pod it has and is pending now:
 *         sched__session_placed_only()), and moved no stale time: the memo
 *         keeps its session with those decisions in it (Invariant 6). The
 *         next delta, under Step 2's conditions and with every decision in
 *         the snapshot as decided (checked pod by pod) and no workload it
 *         names among those that left, runs Step 5 on that session once it
 *         is the one Step 1 builds: the kept session takes the
 *         submissions, each placed workload is built again from the
 *         snapshot (sched__session_rejoin(): unlogged pods, the demand of a
 *         running workload, its place in its pool's running list), each
 *         evicted one too (sched__session_rejoin_evicted(): out of its
 *         pool's running list, the demand of a pending workload), and the
 *         log, the flags of the cycle on every workload it names (a victim
 *         search may take a pod off and put it back) and the decisions are
 *         emptied. The job order is kept without the placed workloads
 *         (sched__order_drop(), each a hole its leaf closes once they are
 *         all out: sched__order_drops_done()) and with the evicted ones
 *         (sched__order_join(), as submissions join it). The list the
 *         previous cycle recorded is the settled list record_again()
 *         starts from (the placed workloads are pending neither then nor
 *         now; the evicted ones are pending then and now, of the kind of
 *         the pending workloads they match: a diagnosis reads the phase
 *         only to tell a suspended one), and the pools decided in count as
 *         changed by the delta: their failed attempts are not known (some
 *         ran before a decision, on another state) and their entries are
 *         diagnosed unless their figures are as that cycle left them
 *         (keep_figures() ran after its decisions). Attempts in any other
 *         pool ran on that pool as it is now. Why this saves a full cycle:
 *         a completion's kept cycle places the workload the room lets in,
 *         a submission's (Step 7) may preempt for it, and the cycle after
 *         it (its decisions applied, nothing else changed) was a full one;
 *         it now costs what a completion's kept cycle costs.
 * Step 7  Step 3's trial started a submission (placed it, or evicted or
 *         moved something for it): the trial is undone (its log rolled
 *         back, the per-cycle flags of every workload the log names
 *         cleared, the caches keyed by a version started over; the job
 *         order, which no attempt reads or changes, is kept), and Step 5
 *         runs on the kept session with no pool counted as changed,
 *         reading the fair shares Step 3 found on this very state
 *         (ss->fair_current) instead of finding them again. Why
 *         that is the full cycle: after the undo the kept session is the
 *         one Step 1 builds from the new snapshot (tests compare it, as in
 *         Step 5); the failed reclaim and preempt attempts of the settled
 *         cycle may still be known to fail in every pool nothing was
 *         placed in or taken from since: such an attempt reads its own
 *         workload and its pool's nodes, running workloads and queue
 *         figures (allocation and fair share: the fair shares are the
 *         kept ones, Step 3 checked), never another pending workload's
 *         demand, so a submission that waits changes none of it, and one
 *         placed moves its pool's version. Why it saves a cycle: a
 *         submission that starts in a settled cluster (a workspace
 *         preempting its project's own training, a job fitting the room a
 *         completion left) cost a full cycle; it now costs its trial and
 *         a kept cycle.
 * Step 8  A delta whose quotas may have moved (delta.quotas), under Step
 *         2's conditions and with the session as Step 5 or 6 needs it:
 *         once the kept session took the submissions, the departures and
 *         (Step 6) the decisions, every queue's quotas, limits, weights and
 *         ranks per pool are read again from the state
 *         (sched__session_requota(), what a build reads; nothing else of
 *         the session is built from them: the fair shares, the queue
 *         order's figures and the totals over the pools are found by each
 *         cycle). When any moved, Step 5 runs with the pools where they
 *         moved counted as changed by the delta: no failed attempt is
 *         known there, and no entry of theirs stands as settled
 *         (ss_known.quotas: a diagnosis names the queue's deserved quota
 *         and limit). When none moved, the delta goes on as Step 2. A
 *         leaf without default pools that came to deserve GPUs in a pool,
 *         or ceased to, moves the pool list of its workloads that name
 *         none (sched_workload_pools(): a build reads it): Step 1. Why it
 *         saves a full cycle: a what-if of a quota (control/whatif.c) ran
 *         full cycles on a copy of the model; it now costs a kept cycle in
 *         the pools it touches.
 * Step 9  A delta with nodes gone down (delta.down: not ready now, every
 *         pod on them taken off, their workloads pending or running with
 *         fewer pods, none of them stale), under Step 2's conditions and
 *         with the session as Step 5 or 6 needs it: once the kept session
 *         took the submissions, the decisions, the quotas and the
 *         departures, each workload that held a pod on such a node is
 *         built again from the snapshot (sched__session_requeue(): its
 *         demand, pods, running list and class as Step 1 gives them; it
 *         joins the job order as a submission when it wanted no pods
 *         before, else the order is built again), then each node is made
 *         not ready and its pool's figures over ready nodes found again
 *         (sched__session_node_down(): capacity, empty devices, the
 *         largest node, the victim search's floor). The session is then
 *         the one Step 1 builds from the snapshot (tests compare it), and
 *         Step 5 runs with those pools counted as a quota's are: no failed
 *         attempt known there, no entry standing unread, and the requeued
 *         workloads named with the departures (memo->named: their entries
 *         are looked up again). The kept waiting workloads are not kept
 *         (Invariant 7: a requeued running workload may wait now). Why it
 *         saves a full cycle: a node drained (control/whatif.c) or lost
 *         ran full cycles; it now costs a kept cycle.
 *
 * Invariants:
 *   1. memo->settled only after a cycle that decided nothing and whose
 *      stale times equal its input's; then ss is that cycle's session as
 *      it was built (every attempt rolled back), pending[0..n_pending) is
 *      that cycle's list, stale[] its stale times and kinds[] indexes an
 *      entry of every kind that has entries (a kind is forgotten once
 *      none is left); kind_of[e] < n_labels is entry e's kind label, two
 *      entries of one kind share a label and two of different kinds never
 *      do; label_count[l] is how many entries carry label l. Tests check
 *      the labels pairwise and every kind against the table
 *      (check_labels()).
 *   2. A reused cycle keeps the memo settled and changes in it exactly
 *      what it changed in the result.
 *   3. Any error, and any fall-back once the kept session changed, forgets
 *      everything (valid = 0).
 *   4. The memo's arena holds the session and what the reused cycles (and
 *      those of Step 5) add to it; when it has grown to twice what the
 *      full cycle left (plus a block), the next cycle is a full one, which
 *      resets it.
 *   5. While reps_valid, reps[] holds one record per label, in the order
 *      of the entries: the label's first entry and the code of what its
 *      check reads (rep_code_now(): for a reason that reads a pool
 *      (ss_reason_reads_pool()), its pool and named queue of pair_pools
 *      x pair_queues and whether its kind's workloads, all alike there,
 *      are non-preemptible). keep() writes it from the kinds' first
 *      entries; a submission's new label adds its entry (at the list's
 *      end); taking entries out moves the records (reps_taken_out()),
 *      and so does a Step 5 list written over the kept one with entries
 *      put in (reps_moved(): an entry put in before its label's first
 *      one is recorded instead, a new label at its first entry); Step 4
 *      putting one in the middle ends it.
 *      A Step 5 cycle that decides something checks its kinds from it
 *      (cycle.c, kinds_redo()): a pass over the records (12 bytes each:
 *      every kept cycle moves them) reads their codes, and an entry only
 *      where its code's verdict moved.
 *      code_reps[] counts the records per code, odd_reps those naming a
 *      pair beyond: every change of a record moves them (rep_count()), so
 *      that kinds_redo() passes the records by when every code counted
 *      stands.
 *   6. memo->decided only after a cycle that placed pending workloads and
 *      evicted whole ones or decided nothing else (Step 6) and whose stale
 *      times equal its input's; then ss is that cycle's session with its
 *      decisions (its log and decisions) in it, decided_pools the pools
 *      it placed in or evicted from,
 *      the figures, the pending list, its labels, the kinds table and
 *      label_count[] as Invariant 1 says, reps[] as Invariant 5 says;
 *      stale[] is not valid (Step 6 runs no Step 4).
 *   7. While memo->settled or memo->decided, waiting_w[0..n_waiting_w)
 *      (unless -1) are the workloads of that cycle's waiting entries:
 *      every running workload of the session with pods left to place, in
 *      the state the cycle left (its decisions in it). A cycle answered
 *      from the memo (Step 4, after a settled one only) changes no running
 *      workload (a departure there held no pods, a submission holds none),
 *      so they stay all of them, and Step 4 diagnoses them again instead
 *      of walking every pool's running list (sched__record_waiting_of()).
 *      A cycle on the kept session (Steps 5 and 7 after a settled one, 6
 *      after a decided one, whose session is rebuilt to that very state:
 *      its departures leave it, its submissions hold no pods, none joins
 *      running) reads them as ss->waiting_known, with its decisions'
 *      workloads, each kept only where it waits now. Step 9 (a requeued
 *      running workload may wait) drops them.
 */
#include "sched_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* p - off and p + off for a buffer pointer that may be NULL (a list with
 * no buffer yet, off 0): pointer arithmetic on NULL is undefined
 * behaviour even by 0, and clang's UBSan stops on it. */
#define BUF_SUB(p, off) ((p) ? (p) - (off) : (p))
#define BUF_ADD(p, off) ((p) ? (p) + (off) : (p))

#define MEMO_SLACK ((size_t)1 << 20)   /* Invariant 4: a block of growth beyond 2x */
/* entries of room left before a list the memo keeps whole: an entry put in
 * near its start (a victim pending again, most often an old workload)
 * moves the entries before it, not the whole list (cycle.c, make_room()) */
#define FRONT_ROOM(n) ((n) / 64 + 64)
#define KIND_GONE (-1)                 /* a kind forgotten: its slot stays, probes go on */

struct sched_memo {
    int valid;                  /* the fields below describe the last result */
    int settled;                /* it decided nothing and moved no stale time */
    int decided;                /* it placed pending workloads, evicted whole ones or
                                   decided nothing else, and moved no stale time (Step 6,
                                   Invariant 6) */
    uint64_t decided_pools;     /* the pools it decided in (all: one beyond 64) */
    int any_stale;              /* some workload has a stale time */
    int n_pools, n_queues, n_nodes, n_workloads;
    int64_t now_ms;
    struct sched_config cfg;    /* the kept session's (ss.cfg points here) */
    struct sched_arena *arena;  /* the kept session's memory */
    size_t arena_kept;          /* bytes the full cycle left in it */
    struct sched_session ss;    /* the last cycle's session (Invariant 1) */
    int64_t *fair;              /* [n_queues * n_pools * SCHED_NRES] */
    int64_t *held;              /* [n_queues * n_pools * 2 * SCHED_NRES]: alloc, alloc_np */
    int64_t *figs;              /* [n_pools * SS_POOL_FIGS]: the pools' node figures */
    struct sched_pending *pending;
    int n_pending, cap_pending;
    int pending_off;            /* entries of the pending and kind_of buffers before
                                   the list (Step 4 moved the entries before one
                                   taken out up): the buffers begin that far back */
    int64_t *stale;             /* [cap_stale]: the last result's stale times, while */
    int cap_stale;              /* any_stale (else they are all SCHED_NO_TIME) */
    uint8_t *touched;           /* [cap_touched] all 0: lent to each Step 5 cycle */
    int cap_touched;
    int *waiting_w;             /* [n_waiting_w] the kept result's waiting workloads,
                                   ascending, when it decided nothing; -1: not kept */
    int n_waiting_w, cap_waiting_w;
    int64_t *no_stale;          /* [cap_no_stale] all SCHED_NO_TIME: a result's stale */
    int cap_no_stale;           /* times when none is set (ss.no_stale) */
    int *kinds;                 /* [cap_kinds] hash slots: 0 (free) or 1 + the kind's
                                   index in kind_entry[] */
    int *kind_entry;            /* [cap_kinds / 2 + 1] per kind in the order it came:
                                   its pending index + 1, or KIND_GONE; a pass over
                                   every kind reads these, not the slots */
    int cap_kinds, n_kind_entry; /* n_kind_entry == n_kinds + n_gone */
    int n_kinds, n_gone;
    int *kind_of;               /* [cap_kind_of]: each pending entry's kind, a label
                                   below n_labels, while kind_of_valid */
    int cap_kind_of, kind_of_valid, n_labels;
    int *label_count;           /* [cap_label_count]: entries carrying each label */
    int cap_label_count;
    struct ss_kind_rep *reps;   /* [n_reps] each label's first entry, ascending, while */
    int n_reps, cap_reps;       /* reps_valid (Invariant 5) */
    int reps_valid;
    int *code_reps;             /* [2 * pair_pools * pair_queues] records per code, and */
    int cap_code_reps;          /* odd_reps beyond, while reps_valid (Invariant 5) */
    int pair_pools, pair_queues, odd_reps;
    struct sched_pending *next; /* [cap_next]: the list a Step 5 cycle records (the */
    int *next_kind_of;          /* result points here), and its kinds, from next_off on */
    int cap_next, cap_next_kind_of, next_off;
    uint32_t *known_buf[2];     /* attempts known to fail (struct ss_known): the last */
    int cap_known[2];           /* settled cycle's in known_buf[known_cur] (n_known */
    int known_cur, n_known;     /* workloads, 0: none), the next cycle's in the other */
    int *known_set[2];          /* [cap_known_set] the entries of known_buf[r] that may not */
    int cap_known_set[2];       /* be 0, n_known_set[r] of them (more than the cap, or -1: */
    int n_known_set[2];         /* any may not be; known_clear() clears it whole) */
    int known_rec;              /* the buffer the cycle records in, -1: none */
    uint64_t *known_base;
    int cap_known_base;
    uint8_t *known_moved;       /* [SS_KNOWN_POOLS][queue]: struct ss_known's moved */
    int cap_known_moved;
    struct ss_known known;
    struct sched_memo_stats stats;
    int *named;                 /* [cap_named] the workloads a Step 9 delta named: those
                                   that left, then those requeued (the nodes gone down) */
    int n_named, cap_named;
    int check_kept;             /* tests: compare each kept session with a build */
    struct sched_arena *check_arena;   /* tests: that build's memory, reset for each */
    int check_known;            /* tests: make each attempt answered from known_buf too */
    int64_t known_wrong;        /* answers those attempts contradicted */
    int64_t kept_checked;       /* kept sessions compared so far */
    const char *kept_differs;   /* the first difference found, or NULL */
};

struct sched_memo *sched_memo_new(void)
{
    return calloc(1, sizeof(struct sched_memo));
}

void sched_memo_free(struct sched_memo *memo)
{
    size_t i;

    if (!memo)
        return;
    sched_arena_free(memo->arena);
    sched_arena_free(memo->check_arena);
    {
        /* the arrays the memo owns, freed as one table */
        void *owned[] = {
            memo->fair, memo->held, memo->figs, BUF_SUB(memo->pending, memo->pending_off),
            memo->stale, memo->no_stale, memo->touched, memo->kinds, memo->kind_entry,
            BUF_SUB(memo->kind_of, memo->pending_off), memo->label_count, memo->reps,
            memo->code_reps, memo->next, memo->next_kind_of, memo->known_buf[0],
            memo->known_buf[1], memo->known_set[0], memo->known_set[1], memo->known_base,
            memo->known_moved, memo->waiting_w, memo->named, memo,
        };

        for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
            free(owned[i]);
    }
}

void sched_memo_stats(const struct sched_memo *memo, struct sched_memo_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (memo)
        *out = memo->stats;
}

/* The kept session's pods on node (Invariants 1 and 6: the last cycle's
 * session, with its decisions when it kept them), each workload once. */
int sched_memo_node_workloads(const struct sched_memo *memo, int node, int *out, int cap)
{
    const struct ss_node *n;
    int i, j, k = 0;

    if (!memo || !memo->valid || !(memo->settled || memo->decided) || node < 0 ||
        node >= memo->ss.n_nodes)
        return -1;
    n = &memo->ss.nodes[node];
    for (i = 0; i < n->n_pods; i++) {
        int w = n->pods[2 * i];
        for (j = 0; j < k && j < cap && out[j] != w; j++)
            ;
        if (j < k && j < cap)
            continue;   /* listed already (when k > cap, a repeat may count twice) */
        if (k < cap)
            out[k] = w;
        k++;
    }
    return k;
}

/* Tests: from now on, each kept session that took a delta (Steps 2 and 5)
 * is compared with a session built from the same snapshot before anything
 * reads it (sched__session_differs()). Off in every memo the server keeps. */
void sched__memo_check_kept(struct sched_memo *memo)
{
    memo->check_kept = 1;
}

const char *sched__memo_kept_differs(const struct sched_memo *memo, int64_t *checked)
{
    *checked = memo->kept_checked;
    return memo->kept_differs;
}

void sched__memo_check_known(struct sched_memo *memo)
{
    memo->check_known = 1;
}

int64_t sched__memo_known_wrong(const struct sched_memo *memo)
{
    return memo->known_wrong;
}

static void check_kept(struct sched_memo *memo)
{
    struct sched_arena *arena;
    struct sched_session fresh;
    const char *why = "the snapshot could not be built again";

    if (!memo->check_arena)
        memo->check_arena = sched_arena_new();
    arena = memo->check_arena;
    if (arena)
        sched_arena_reset(arena);
    if (arena && sched__session_build(&fresh, memo->ss.in, &memo->cfg, arena) == SCHED_OK)
        why = sched__session_differs(&memo->ss, &fresh);
    if (arena && !why)
        why = sched__order_differs(&memo->ss, &fresh);
    if (!why)
        why = sched__victims_differ(&memo->ss);
    if (why && !memo->kept_differs)
        memo->kept_differs = why;
    memo->kept_checked++;
}

/* Invariant 5: the code of a record of entry e as it reads now, its kind
 * non-preemptible or not (`reads_np`). */
static int rep_code_now(const struct sched_memo *memo, int e, int reads_np)
{
    const struct sched_pending *p = &memo->pending[e];

    if (!ss_reason_reads_pool(p->reason))
        return SS_REP_UNCOUNTED;
    if (p->pool < 0 || p->pool >= memo->pair_pools || p->queue < 0 ||
        p->queue >= memo->pair_queues)
        return SS_REP_ODD;
    return ss_rep_code(p->pool * memo->pair_queues + p->queue, reads_np);
}

/* Tests: Invariant 5's counts per code against the records. */
static void check_code_reps(struct sched_memo *memo)
{
    int i, at, odd = 0, n = ss_rep_code(memo->pair_pools * memo->pair_queues, 0);
    int *count = calloc((size_t)n + 1, sizeof(int));

    if (!count) {
        memo->kept_differs = "the kinds' records: no memory to count them";
        return;
    }
    for (i = 0; i < memo->n_reps; i++) {
        at = memo->reps[i].code;
        if (at == SS_REP_ODD)
            odd++;
        else if (at >= 0 && at < n)
            count[at]++;
    }
    if (odd != memo->odd_reps)
        memo->kept_differs = "the kinds' records: the count of those beyond the pairs";
    for (at = 0; at < n; at++)
        if (count[at] != memo->code_reps[at])
            memo->kept_differs = "the kinds' records: a count per code";
    free(count);
}

/* Tests: Invariant 5, each record against the list: one per label that
 * entries carry, in the order of the entries, naming its label's first
 * entry and what that entry says. */
static void check_reps(struct sched_memo *memo)
{
    int i, e, labels = 0;

    if (!memo->reps_valid)
        return;
    for (i = 0; i < memo->n_labels; i++)
        labels += memo->label_count[i] > 0;
    if (memo->n_reps != labels)
        memo->kept_differs = "the kinds' records: one per label";
    for (i = 0; i < memo->n_reps; i++) {
        const struct ss_kind_rep *r = &memo->reps[i];
        if (r->entry < 0 || r->entry >= memo->n_pending || (i > 0 && r->entry <= r[-1].entry) ||
            memo->kind_of[r->entry] != r->label ||
            r->code != rep_code_now(memo, r->entry,
                                    ss_reads_np(&memo->ss, memo->pending[r->entry].workload))) {
            memo->kept_differs = "the kinds' records: an entry";
            return;
        }
        for (e = 0; e < r->entry; e++)
            if (memo->kind_of[e] == r->label)
                memo->kept_differs = "the kinds' records: not the label's first entry";
    }
    check_code_reps(memo);
}

/* Tests: each pending entry's kind label against the diagnosis's own test
 * (two entries share a label exactly when they are of one kind, unless a
 * label was split), every pair compared, and each label's count. */
static int kinds_find(const struct sched_memo *memo, const struct sched_session *ss, int w);

/* Tests: ss->n_partial counts every active workload below its minimum. */
static void check_partial(struct sched_memo *memo, const struct sched_session *ss)
{
    int w, n = 0;

    if (!memo->check_kept || memo->kept_differs)
        return;
    for (w = 0; w < ss->n_workloads; w++) {
        const struct ss_wl *x = &ss->wl[w];
        n += (x->flags & WL_ACTIVE) && x->n_placed > 0 && x->n_placed < ss_w(ss, w)->min_pods;
    }
    if (n != ss->n_partial)
        memo->kept_differs = "the count of workloads below their minimum";
}

static void check_labels(struct sched_memo *memo, const struct sched_session *ss)
{
    int a, b;

    if (!memo->check_kept || !memo->kind_of_valid || memo->kept_differs)
        return;
    for (a = 0; a < memo->n_pending; a++)
        for (b = a + 1; b < memo->n_pending; b++) {
            int same = sched__same_diagnosis(ss, memo->pending[a].workload,
                                             memo->pending[b].workload);
            if ((memo->kind_of[a] == memo->kind_of[b]) != same)
                memo->kept_differs = "the pending entries' kind labels";
        }
    for (a = 0; a < memo->n_labels; a++) {
        int n = 0;
        for (b = 0; b < memo->n_pending; b++)
            n += memo->kind_of[b] == a;
        if (n != memo->label_count[a])
            memo->kept_differs = "the count of a kind label";
    }
    for (a = 0; a < memo->n_pending; a++) {   /* Invariant 1 */
        int e = kinds_find(memo, ss, memo->pending[a].workload);
        if (e <= 0 || memo->kind_of[e - 1] != memo->kind_of[a])
            memo->kept_differs = "the kinds table: a kind with entries not in it";
    }
    check_reps(memo);
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

/* The list back at the start of its buffers, its first `n` entries (and
 * their kinds) carried along. */
static void pending_rebase(struct sched_memo *memo, int n)
{
    struct sched_pending *base;
    int *kind_base;

    /* before any arithmetic: with no offset the list may have no buffer
     * yet (NULL), and NULL - 0 is undefined behaviour */
    if (memo->pending_off == 0)
        return;
    base = memo->pending - memo->pending_off;
    kind_base = memo->kind_of - memo->pending_off;
    memmove(base, memo->pending, (size_t)n * sizeof(*memo->pending));
    memmove(kind_base, memo->kind_of, (size_t)n * sizeof(int));
    memo->pending = base;
    memo->kind_of = kind_base;
    memo->pending_off = 0;
}

/* Room for `need` entries from the list's start; the list (n_pending
 * entries) is kept. */
static int reserve_pending(struct sched_memo *memo, int need)
{
    int rc;

    if (need <= memo->cap_pending - memo->pending_off &&
        need <= memo->cap_kind_of - memo->pending_off)
        return SCHED_OK;
    pending_rebase(memo, memo->n_pending);
    rc = reserve((void **)&memo->pending, &memo->cap_pending, sizeof(*memo->pending), need);
    if (rc == SCHED_OK)
        rc = reserve((void **)&memo->kind_of, &memo->cap_kind_of, sizeof(int), need);
    return rc;
}

static int reserve_stale(struct sched_memo *memo, int need)
{
    return reserve((void **)&memo->stale, &memo->cap_stale, sizeof(*memo->stale), need);
}

/* memo->touched with at least `need` entries, every one 0 (the new
 * ones zeroed; a cycle leaves the others 0). */
static int reserve_touched(struct sched_memo *memo, int need)
{
    int from = memo->cap_touched;

    if (reserve((void **)&memo->touched, &memo->cap_touched, 1, need) != SCHED_OK)
        return SCHED_ENOMEM;
    if (memo->cap_touched > from)
        memset(memo->touched + from, 0, (size_t)(memo->cap_touched - from));
    return SCHED_OK;
}

/* memo->no_stale with at least `need` entries, every one SCHED_NO_TIME
 * (the entries added are written once); NULL when out of memory. */
static const int64_t *no_stale_times(struct sched_memo *memo, int need)
{
    int from = memo->cap_no_stale, i;

    if (reserve((void **)&memo->no_stale, &memo->cap_no_stale, sizeof(int64_t), need) !=
        SCHED_OK)
        return NULL;
    for (i = from; i < memo->cap_no_stale; i++)
        memo->no_stale[i] = SCHED_NO_TIME;
    return memo->no_stale;
}

/* What the settled cycle's pending entries were diagnosed against, for
 * the next Step 5 (sched__diagnosis_as_settled()): every queue's fair
 * share, allocation and non-preemptible allocation per pool, and every
 * pool's node figures. */
static int keep_figures(struct sched_memo *memo, const struct sched_session *ss)
{
    size_t n = (size_t)ss->n_queues * (size_t)ss->n_pools, i;
    int64_t *fair = realloc(memo->fair, (n * SCHED_NRES + 1) * sizeof(int64_t));
    int64_t *held, *figs;
    int p;

    if (!fair)
        return SCHED_ENOMEM;
    memo->fair = fair;
    held = realloc(memo->held, (n * 2 * SCHED_NRES + 1) * sizeof(int64_t));
    if (!held)
        return SCHED_ENOMEM;
    memo->held = held;
    figs = realloc(memo->figs, ((size_t)ss->n_pools * SS_POOL_FIGS + 1) * sizeof(int64_t));
    if (!figs)
        return SCHED_ENOMEM;
    memo->figs = figs;
    for (i = 0; i < n; i++) {
        memcpy(&fair[i * SCHED_NRES], ss->qp[i].fair, sizeof(int64_t) * SCHED_NRES);
        memcpy(&held[i * 2 * SCHED_NRES], ss->qp[i].alloc, sizeof(int64_t) * SCHED_NRES);
        memcpy(&held[i * 2 * SCHED_NRES + SCHED_NRES], ss->qp[i].alloc_np,
               sizeof(int64_t) * SCHED_NRES);
    }
    for (p = 0; p < ss->n_pools; p++) {
        int64_t *kept = &figs[(size_t)p * SS_POOL_FIGS], now[SS_POOL_FIGS];
        if (!sched__pool_as_settled(ss, p)) {
            sched__pool_node_figures(ss, p, kept);
            if (memo->check_kept && !memo->kept_differs) {   /* tests: the cache holds */
                sched__pool_node_figures_walk(ss, p, now);
                if (memcmp(now, kept, sizeof(now)) != 0)
                    memo->kept_differs = "a pool's node figures, cached for its state";
            }
            continue;
        }
        if (memo->check_kept && !memo->kept_differs) {   /* tests: its nodes are as kept */
            sched__pool_node_figures_walk(ss, p, now);
            if (memcmp(now, kept, sizeof(now)) != 0)
                memo->kept_differs = "a pool's node figures, kept as settled";
        }
    }
    return SCHED_OK;
}

static int kinds_insert(struct sched_memo *memo, const struct sched_session *ss, int entry);

/* An empty table of kinds in the memo with `cap` slots (a power of two),
 * and room for a kind per two slots (kinds_insert() grows the table
 * before); the caller owns the arrays it held. On error the memo is as
 * it was. */
static int kinds_alloc(struct sched_memo *memo, int cap)
{
    int *slots = calloc((size_t)cap, sizeof(int));
    int *entry = malloc(sizeof(int) * ((size_t)cap / 2 + 1));

    if (!slots || !entry) {
        free(slots);
        free(entry);
        return SCHED_ENOMEM;
    }
    memo->kinds = slots;
    memo->kind_entry = entry;
    memo->cap_kinds = cap;
    memo->n_kind_entry = memo->n_kinds = memo->n_gone = 0;
    return SCHED_OK;
}

/* What slot i holds: a pending index + 1, 0 (free) or KIND_GONE. */
static int slot_entry(const struct sched_memo *memo, int i)
{
    return memo->kinds[i] ? memo->kind_entry[memo->kinds[i] - 1] : 0;
}

/* The cycle's table of kinds (sized by its pending workloads), kept in a
 * table sized by the kinds: a workload that leaves walks it (Step 4). */
static int keep_kinds(struct sched_memo *memo, const struct sched_session *ss, const int *kinds,
                      int cap)
{
    int n = 0, slots = 16, i, rc = SCHED_OK;

    for (i = 0; i < cap; i++)
        n += kinds[i] != 0;
    while (slots < 4 * n)
        slots *= 2;
    free(memo->kinds);
    free(memo->kind_entry);
    if (kinds_alloc(memo, slots) != SCHED_OK) {   /* no table at all */
        memo->kinds = memo->kind_entry = NULL;
        memo->cap_kinds = memo->n_kind_entry = memo->n_kinds = memo->n_gone = 0;
        return SCHED_ENOMEM;
    }
    for (i = 0; i < cap && rc == SCHED_OK; i++)
        if (kinds[i])
            rc = kinds_insert(memo, ss, kinds[i]);
    return rc;
}

/* Invariant 5: record r, counted (by = 1) or no longer (by = -1). */
static void rep_count(struct sched_memo *memo, const struct ss_kind_rep *r, int by)
{
    if (r->code == SS_REP_ODD)
        memo->odd_reps += by;
    else if (r->code >= 0)
        memo->code_reps[r->code] += by;
}

/* Invariant 5: record r reads its entry again (a kind written again, or
 * the entry that now stands for its label), and is counted as it reads
 * now (`counted`: it was, as it read before; 0: a new label's). Whether
 * its kind is non-preemptible is read from a workload only where its code
 * does not say it already. */
static void rep_reads(struct sched_memo *memo, struct ss_kind_rep *r, int counted)
{
    int reads_np = counted && r->code >= 0
                       ? r->code & 1
                       : ss_reads_np(&memo->ss, memo->pending[r->entry].workload);

    if (counted)
        rep_count(memo, r, -1);
    r->code = rep_code_now(memo, r->entry, reads_np);
    rep_count(memo, r, 1);
}

/* Invariant 5: entry e, the first of its label, ends the records. */
static int push_rep(struct sched_memo *memo, int e)
{
    struct ss_kind_rep *r;

    if (!memo->reps_valid)
        return SCHED_OK;
    if (reserve((void **)&memo->reps, &memo->cap_reps, sizeof(*memo->reps), memo->n_reps + 1) !=
        SCHED_OK) {
        memo->reps_valid = 0;
        return SCHED_ENOMEM;
    }
    r = &memo->reps[memo->n_reps++];
    r->entry = e;
    r->label = memo->kind_of[e];
    rep_reads(memo, r, 0);
    return SCHED_OK;
}

/* Invariant 5 as keep() leaves the labels: a kind's label is its first
 * entry's index. */
static int keep_reps(struct sched_memo *memo)
{
    int e, rc, codes = ss_rep_code(memo->n_pools * memo->n_queues, 0);

    memo->n_reps = 0;
    memo->reps_valid = 0;
    rc = reserve((void **)&memo->code_reps, &memo->cap_code_reps, sizeof(int), codes + 1);
    if (rc != SCHED_OK)
        return rc;
    memset(memo->code_reps, 0, (size_t)codes * sizeof(int));
    memo->pair_pools = memo->n_pools;
    memo->pair_queues = memo->n_queues;
    memo->odd_reps = 0;
    memo->reps_valid = 1;
    for (e = 0; e < memo->n_pending && rc == SCHED_OK; e++)
        if (memo->kind_of[e] == e)
            rc = push_rep(memo, e);
    return rc;
}

/* The list a Step 5 cycle wrote into next[] (and its kinds) becomes the
 * kept one by trading buffers with it, not by a copy; the result points
 * there, valid until the next call, as it would point at a copy. */
static void keep_next(struct sched_memo *memo)
{
    struct sched_pending *p = BUF_SUB(memo->pending, memo->pending_off);
    int *k = BUF_SUB(memo->kind_of, memo->pending_off), cap = memo->cap_pending,
        cap_k = memo->cap_kind_of;

    memo->pending = BUF_ADD(memo->next, memo->next_off);
    memo->cap_pending = memo->cap_next;
    memo->kind_of = BUF_ADD(memo->next_kind_of, memo->next_off);
    memo->cap_kind_of = memo->cap_next_kind_of;
    memo->pending_off = memo->next_off;
    memo->next = p;
    memo->cap_next = cap;
    memo->next_kind_of = k;
    memo->cap_next_kind_of = cap_k;
    memo->next_off = 0;
}

/* How many of gone[0..n) (ascending) are below e. */
static int gone_below(const int *gone, int n, int e)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (gone[mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first entry at or after `from` that carries `label`, or -1 (none
 * left: label_count says so at once). */
static int label_next(const struct sched_memo *memo, int from, int label)
{
    int e;

    if (memo->label_count[label] <= 0)
        return -1;
    for (e = from; e < memo->n_pending; e++)
        if (memo->kind_of[e] == label)
            return e;
    return -1;
}

/* Kind k (kind_entry[k]) lost its indexed entry: it indexes the next
 * entry of `label` from `from` on (or, when an entry put in before it is
 * the label's only one left, the one before), or is forgotten. */
static void kind_moves_on(struct sched_memo *memo, int k, int from, int label)
{
    int next = label_next(memo, from, label);

    for (; next < 0 && memo->label_count[label] > 0 && from > 0; from--)
        if (memo->kind_of[from - 1] == label)
            next = from - 1;

    if (next >= 0) {
        memo->kind_entry[k] = next + 1;
    } else {
        memo->kind_entry[k] = KIND_GONE;
        memo->n_kinds--;
        memo->n_gone++;
    }
}

/* Invariant 1 after the entries gone[0..n_gone) of the list (ascending,
 * their labels gone_label[]) were taken out and the label counts
 * lowered: each kind indexes its entry where it is now, or, where that
 * entry was taken out, the next entry of its label (the kind is forgotten
 * only when no entry carries its label any more). */
static void kinds_taken_out(struct sched_memo *memo, const int *gone, const int *gone_label,
                            int n_gone)
{
    int *kind_entry = memo->kind_entry, n = memo->n_kind_entry, i, e, g;

    if (n_gone == 1) {   /* one entry (Step 4, most completions): a pass that vectorizes */
        for (g = 0; g < n && kind_entry[g] != gone[0] + 1; g++)
            ;
        for (i = 0; i < n; i++)
            kind_entry[i] -= kind_entry[i] > gone[0] + 1;
        if (g < n)
            kind_moves_on(memo, g, gone[0], gone_label[0]);
        return;
    }
    for (i = 0; i < n && n_gone > 0; i++) {
        if (kind_entry[i] <= 0)
            continue;   /* a kind forgotten */
        e = kind_entry[i] - 1;
        g = gone_below(gone, n_gone, e);
        if (g < n_gone && gone[g] == e)
            kind_moves_on(memo, i, e - g, gone_label[g]);
        else
            kind_entry[i] = e - g + 1;
    }
}

/* The records of the entries from `from` on (ascending) whose entry is
 * below e, counted: the first at or after e. */
static int reps_below_from(const struct sched_memo *memo, int from, int e)
{
    int lo = from, hi = memo->n_reps;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (memo->reps[mid].entry < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many records name an entry below e (they are in the order of
 * their entries). */
static int reps_below(const struct sched_memo *memo, int e)
{
    return reps_below_from(memo, 0, e);
}

/* reps_taken_out() for one entry e (Step 4, most completions): every
 * record after it one entry down, in a pass that vectorizes; the record
 * of e's label, if e was its first entry, moves on to the label's next
 * entry, which lies after e, past the records between. */
static void rep_taken_out_one(struct sched_memo *memo, int e)
{
    struct ss_kind_rep *reps = memo->reps, r;
    int n = memo->n_reps, lo = reps_below(memo, e), hit = lo < n && reps[lo].entry == e, i, at;

    for (i = lo + hit; i < n; i++)
        reps[i].entry--;
    if (!hit)
        return;
    r = reps[lo];
    r.entry = label_next(memo, e, r.label);
    at = r.entry < 0 ? n : reps_below_from(memo, lo + 1, r.entry);
    memmove(&reps[lo], &reps[lo + 1], sizeof(*reps) * (size_t)(at - lo - 1));
    if (r.entry < 0) {
        rep_count(memo, &r, -1);   /* no entry carries its label any more */
        memo->n_reps--;
        return;
    }
    reps[at - 1] = r;
}

/* Invariant 5 after the same: each record's entry where it is now; a
 * label whose first entry was taken out is recorded at its next one (put
 * back in the order of the entries), or not at all when none is left.
 * With none taken out (a kept cycle that only placed, Step 6's next) no
 * record moves. */
static int reps_taken_out(struct sched_memo *memo, const int *gone, int n_gone)
{
    struct ss_kind_rep *moved, r;
    int i, j, k, g, lo, n = 0, n_moved = 0;

    if (n_gone <= 1) {
        if (n_gone == 1)
            rep_taken_out_one(memo, gone[0]);
        return SCHED_OK;
    }
    if (!(moved = malloc(sizeof(*moved) * (size_t)n_gone))) {
        memo->reps_valid = 0;
        return SCHED_ENOMEM;
    }
    lo = reps_below(memo, gone[0]);   /* the records before gone[0] stay */
    for (i = n = lo; i < memo->n_reps; i++) {
        r = memo->reps[i];
        g = gone_below(gone, n_gone, r.entry);
        if (g < n_gone && gone[g] == r.entry) {
            r.entry = label_next(memo, r.entry - g, r.label);
            if (r.entry < 0) {
                rep_count(memo, &r, -1);
                continue;   /* no entry carries its label any more */
            }
            for (j = n_moved; j > 0 && moved[j - 1].entry > r.entry; j--)
                moved[j] = moved[j - 1];
            moved[j] = r;
            n_moved++;
            continue;
        }
        r.entry -= g;
        memo->reps[n++] = r;
    }
    for (i = n - 1, j = n_moved - 1, k = n + n_moved - 1; j >= 0; k--)
        memo->reps[k] = i >= 0 && memo->reps[i].entry > moved[j].entry ? memo->reps[i--]
                                                                       : moved[j--];
    memo->n_reps = n + n_moved;
    free(moved);
    return SCHED_OK;
}

/* The index in the list written over the kept one of kept entry e: the
 * kept entries before it that were taken out (gone[]) and the entries
 * put in before it (ins_at[] <= e) counted. */
static int moved_to(const struct ss_kinds *kinds, int e)
{
    return e - gone_below(kinds->gone, kinds->n_gone, e) +
           gone_below(kinds->ins_at, kinds->n_ins, e + 1);
}

/* Invariant 1 after entries were put in too (kinds_taken_out()'s general
 * case): each kind indexes its entry where it is now, or the next of its
 * label; then every entry put in whose kind is not in the table (a new
 * kind, or one whose settled entries were all taken out) is. */
static int kinds_moved(struct sched_memo *memo, const struct sched_session *ss,
                       const struct ss_kinds *kinds)
{
    int *kind_entry = memo->kind_entry, n = memo->n_kind_entry, i, j, e, g, rc = SCHED_OK;

    if (kinds->n_ins == 1 && kinds->n_gone == 0) {   /* one put in: a pass that vectorizes */
        for (i = 0; i < n; i++)
            kind_entry[i] += kind_entry[i] > kinds->ins_at[0];
    } else {
        for (i = 0; i < n; i++) {
            if (kind_entry[i] <= 0)
                continue;   /* a kind forgotten */
            e = kind_entry[i] - 1;
            g = gone_below(kinds->gone, kinds->n_gone, e);
            if (g < kinds->n_gone && kinds->gone[g] == e)
                kind_moves_on(memo, i, moved_to(kinds, e), kinds->gone_label[g]);
            else
                kind_entry[i] = moved_to(kinds, e) + 1;
        }
    }
    for (j = 0; j < kinds->n_ins && rc == SCHED_OK; j++)
        if (!kinds_find(memo, ss, memo->pending[kinds->ins_new_at[j]].workload))
            rc = kinds_insert(memo, ss, kinds->ins_new_at[j] + 1);
    return rc;
}

static int cmp_rep_entry(const void *a, const void *b)
{
    const struct ss_kind_rep *x = a, *y = b;

    return (x->entry > y->entry) - (x->entry < y->entry);
}

/* A label that entries were put in with, and the first of them. */
struct label_in {
    int label, entry;
};

static int cmp_label_in(const void *a, const void *b)
{
    const struct label_in *x = a, *y = b;

    return x->label != y->label ? (x->label > y->label) - (x->label < y->label)
                                : (x->entry > y->entry) - (x->entry < y->entry);
}

/* The first entry put in with `label` (in[0..n) by label, one each), not
 * yet taken: its index in in[], or -1. */
static int label_in_find(const struct label_in *in, int n, int label)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (in[mid].label < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && in[lo].label == label && in[lo].entry >= 0 ? lo : -1;
}

/* Invariant 5 after kinds were written again (kinds->redone): their
 * records read their entries again; every other record's entry reads as
 * it did (an entry put in with a settled label says what its kind's
 * entries say, and a record moved to another entry has read it). */
static void reps_read_redone(struct sched_memo *memo, const struct ss_kinds *kinds)
{
    int settled = memo->n_labels - kinds->n_new_labels, i;

    for (i = 0; kinds->n_redone > 0 && i < memo->n_reps; i++)
        if (memo->reps[i].label < settled && kinds->redone[memo->reps[i].label])
            rep_reads(memo, &memo->reps[i], 1);
}

/* reps_moved() for one entry put in and none taken out (a victim pending
 * again): the records from its place on one entry up, in one pass that
 * also finds its label's record; that record moves to the new entry when
 * the new one comes first, and a new label gets a record there. */
static int rep_put_in_one(struct sched_memo *memo, const struct ss_kinds *kinds)
{
    struct ss_kind_rep *reps = memo->reps, r;
    int e = kinds->ins_at[0], at = kinds->ins_new_at[0], label = kinds->ins_label[0];
    int n = memo->n_reps, i, found = -1, to;

    for (i = reps_below(memo, e); i < n; i++)   /* they ascend: those from e on */
        reps[i].entry++;   /* moved_to() */
    for (i = 0; i < n && found < 0; i++)   /* a label has one record */
        if (reps[i].label == label)
            found = i;
    if (found >= 0 && reps[found].entry <= at)
        return SCHED_OK;   /* its first entry comes before the one put in */
    if (found < 0 && label < memo->n_labels - kinds->n_new_labels)
        return SCHED_OK;   /* as reps_moved(): only a new label gets a record */
    if (found < 0 && reserve((void **)&memo->reps, &memo->cap_reps, sizeof(*memo->reps),
                             n + 2) != SCHED_OK)
        return SCHED_ENOMEM;
    reps = memo->reps;
    r.label = label;
    r.code = found >= 0 ? reps[found].code : 0;
    r.entry = at;
    rep_reads(memo, &r, found >= 0);
    to = reps_below(memo, at);   /* the records before it stay */
    if (found < 0)
        found = memo->n_reps++;   /* a place at the end, to move down */
    memmove(&reps[to + 1], &reps[to], sizeof(*reps) * (size_t)(found - to));
    reps[to] = r;
    return SCHED_OK;
}

/* Invariant 5 after entries were put in too (reps_taken_out()'s general
 * case): each record's entry where it is now, or the next of its label
 * where that one was taken out, or an entry put in with its label when
 * that comes first; a record for each new label; the records that moved
 * that way put back in the order of the entries, each reading its entry. */
static int reps_moved(struct sched_memo *memo, const struct ss_kinds *kinds)
{
    struct ss_kind_rep *moved = NULL, r;
    struct label_in *in;   /* each label put in with, its first entry (-1: taken) */
    struct ss_shift shift = {0, 0};
    int i, j, k, g, at, lo, n = 0, n_in = 0, n_moved = 0, n_old, first_event, rc = SCHED_OK;

    if (kinds->n_ins == 1 && kinds->n_gone == 0) {
        rc = rep_put_in_one(memo, kinds);
        if (rc == SCHED_OK)
            reps_read_redone(memo, kinds);
        if (rc != SCHED_OK)
            memo->reps_valid = 0;
        return rc;
    }
    in = malloc(sizeof(*in) * (size_t)kinds->n_ins);
    moved = malloc(sizeof(*moved) * ((size_t)memo->n_reps + (size_t)kinds->n_ins + 1));
    if (!in || !moved) {
        rc = SCHED_ENOMEM;
        goto out;
    }
    for (j = 0; j < kinds->n_ins; j++) {
        in[j].label = kinds->ins_label[j];
        in[j].entry = kinds->ins_new_at[j];
    }
    qsort(in, (size_t)kinds->n_ins, sizeof(*in), cmp_label_in);
    for (j = 0; j < kinds->n_ins; j++)   /* one per label: its first entry */
        if (n_in == 0 || in[n_in - 1].label != in[j].label)
            in[n_in++] = in[j];
    first_event = kinds->ins_at[0];
    if (kinds->n_gone > 0 && kinds->gone[0] < first_event)
        first_event = kinds->gone[0];
    lo = reps_below(memo, first_event);   /* the records before the first event stay */
    for (i = n = lo; i < memo->n_reps; i++) {
        r = memo->reps[i];
        j = label_in_find(in, n_in, r.label);
        ss_shift_to(&shift, kinds->gone, kinds->n_gone, kinds->ins_at, kinds->n_ins,
                    r.entry);   /* the records ascend by entry */
        g = shift.gone;
        at = r.entry - g + shift.ins;   /* moved_to() */
        if (g < kinds->n_gone && kinds->gone[g] == r.entry) {
            r.entry = label_next(memo, at, r.label);
            if (j >= 0 && (r.entry < 0 || in[j].entry < r.entry))
                r.entry = in[j].entry;
            if (j >= 0)
                in[j].entry = -1;
            if (r.entry >= 0)
                moved[n_moved++] = r;
            else
                rep_count(memo, &r, -1);   /* no entry carries its label any more */
            continue;
        }
        r.entry = at;
        if (j >= 0 && in[j].entry < r.entry) {
            r.entry = in[j].entry;
            in[j].entry = -1;
            moved[n_moved++] = r;
            continue;
        }
        if (j >= 0)
            in[j].entry = -1;
        memo->reps[n++] = r;
    }
    for (j = 0, n_old = n_moved; j < n_in; j++)   /* the new labels: no record yet */
        if (in[j].label >= memo->n_labels - kinds->n_new_labels && in[j].entry >= 0) {
            moved[n_moved].entry = in[j].entry;
            moved[n_moved++].label = in[j].label;
        }
    for (j = 0; j < n_moved; j++)
        rep_reads(memo, &moved[j], j < n_old);
    qsort(moved, (size_t)n_moved, sizeof(*moved), cmp_rep_entry);
    if (reserve((void **)&memo->reps, &memo->cap_reps, sizeof(*memo->reps), n + n_moved + 1) !=
        SCHED_OK) {
        rc = SCHED_ENOMEM;
        goto out;
    }
    for (i = n - 1, j = n_moved - 1, k = n + n_moved - 1; j >= 0; k--)
        memo->reps[k] = i >= 0 && memo->reps[i].entry > moved[j].entry ? memo->reps[i--]
                                                                       : moved[j--];
    memo->n_reps = n + n_moved;
    reps_read_redone(memo, kinds);
out:
    if (rc != SCHED_OK)
        memo->reps_valid = 0;
    free(moved);
    free(in);
    return rc;
}

/* A list written over the kept one (cycle.c's record_in_place(): entries
 * taken out and put in, kinds written again, every other entry with its
 * label): the labels stay, and the counts, the kinds table and the
 * records follow what was taken out and put in, instead of being written
 * again from the whole list as keep_list() writes them. */
static int keep_in_place(struct sched_memo *memo, const struct sched_session *ss,
                         const struct sched_result *out, const struct ss_kinds *kinds,
                         int had_reps)
{
    int j, rc;

    memo->pending = BUF_ADD(memo->pending, kinds->off);
    memo->kind_of = BUF_ADD(memo->kind_of, kinds->off);
    memo->pending_off += kinds->off;
    memo->n_pending = out->n_pending;
    rc = reserve((void **)&memo->label_count, &memo->cap_label_count, sizeof(int),
                 memo->n_labels + kinds->n_new_labels + 1);
    if (rc != SCHED_OK)
        return rc;
    for (j = 0; j < kinds->n_new_labels; j++)
        memo->label_count[memo->n_labels + j] = 0;
    memo->n_labels += kinds->n_new_labels;
    for (j = 0; j < kinds->n_gone; j++)
        memo->label_count[kinds->gone_label[j]]--;
    for (j = 0; j < kinds->n_ins; j++)
        memo->label_count[kinds->ins_label[j]]++;
    memo->kind_of_valid = 1;
    memo->reps_valid = had_reps;
    if (kinds->n_ins == 0) {
        kinds_taken_out(memo, kinds->gone, kinds->gone_label, kinds->n_gone);
        rc = had_reps ? reps_taken_out(memo, kinds->gone, kinds->n_gone) : SCHED_OK;
        if (rc == SCHED_OK && had_reps)
            reps_read_redone(memo, kinds);
        return rc;
    }
    rc = kinds_moved(memo, ss, kinds);
    if (rc == SCHED_OK && had_reps)
        rc = reps_moved(memo, kinds);
    return rc;
}

/* Any other list (a full cycle's, or one a Step 5 cycle merged into the
 * memo's other buffers): kept whole, its kinds labelled by their first
 * entries, the kinds table, counts and records written from it. */
static int keep_list(struct sched_memo *memo, const struct sched_session *ss,
                     const struct sched_result *out, const struct ss_kinds *kinds)
{
    int e, rc;

    if (memo->next && out->pending == memo->next + memo->next_off &&
        kinds->kind_of == BUF_ADD(memo->next_kind_of, memo->next_off)) {
        keep_next(memo);   /* a Step 5 cycle's list is in the memo's other buffers already */
    } else {
        int front = FRONT_ROOM(out->n_pending);
        pending_rebase(memo, 0);   /* what it holds is replaced */
        rc = reserve_pending(memo, front + out->n_pending + 1);
        if (rc != SCHED_OK)
            return rc;
        memo->pending += front;
        memo->kind_of += front;
        memo->pending_off = front;
        memcpy(memo->pending, out->pending, (size_t)out->n_pending * sizeof(*out->pending));
        memcpy(memo->kind_of, kinds->kind_of, (size_t)out->n_pending * sizeof(int));
    }
    memo->n_pending = out->n_pending;
    rc = keep_kinds(memo, ss, kinds->first, kinds->cap);
    if (rc != SCHED_OK)
        return rc;
    memo->n_labels = out->n_pending;   /* a kind's label: its first entry's index */
    rc = reserve((void **)&memo->label_count, &memo->cap_label_count, sizeof(int),
                 memo->n_labels + 1);
    if (rc != SCHED_OK)
        return rc;
    memset(memo->label_count, 0, (size_t)memo->n_labels * sizeof(int));
    for (e = 0; e < out->n_pending; e++)
        memo->label_count[memo->kind_of[e]]++;
    memo->kind_of_valid = 1;
    return keep_reps(memo);
}

/* `input_unstale`: no workload of the input has a stale time (the last
 * kept result set none, and the delta's workloads have none), so its
 * stale times equal the result's exactly when the cycle set none. */
/* The settled result's waiting workloads (Step 4 diagnoses them again, not
 * the whole running lists: a result answered from the memo moves no running
 * workload). Out of memory, not kept: Step 4 walks the lists. */
static void keep_waiting(struct sched_memo *memo, const struct sched_result *out)
{
    int k;

    if (reserve((void **)&memo->waiting_w, &memo->cap_waiting_w, sizeof(int),
                out->n_waiting + 1) != SCHED_OK)
        return;
    for (k = 0; k < out->n_waiting; k++)
        memo->waiting_w[k] = out->waiting[k].workload;
    memo->n_waiting_w = out->n_waiting;
}

static int keep(struct sched_memo *memo, const struct sched_session *ss,
                const struct sched_result *out, const struct ss_kinds *kinds, int input_unstale)
{
    const struct sched_state *in = ss->in;
    int w, rc = SCHED_OK, had_labels = memo->kind_of_valid, had_reps = memo->reps_valid;

    memo->valid = 1;
    memo->n_waiting_w = -1;
    memo->n_pools = in->n_pools;
    memo->n_queues = in->n_queues;
    memo->n_nodes = in->n_nodes;
    memo->n_workloads = in->n_workloads;
    memo->now_ms = in->now_ms;
    memo->cfg = *ss->cfg;
    memo->settled = out->n_decisions == 0;
    memo->decided = !memo->settled && sched__session_placed_only(ss);
    memo->decided_pools = 0;
    memo->any_stale = 0;
    memo->kind_of_valid = 0;
    memo->reps_valid = 0;
    if (input_unstale && ss->n_stale_set > 0)
        memo->settled = memo->decided = 0;
    for (w = 0; !input_unstale && (memo->settled || memo->decided) && w < in->n_workloads; w++) {
        /* any_stale: read if kept */
        if (out->stale_since_ms[w] != in->workloads[w].stale_since_ms)
            memo->settled = memo->decided = 0;
        if (out->stale_since_ms[w] != SCHED_NO_TIME)
            memo->any_stale = 1;
    }
    for (w = 0; memo->decided && w < ss->n_decisions; w++) {
        const struct sched_decision *d = &ss->decisions[w];
        int pool = d->node >= 0 ? ss->nodes[d->node].pool
                                : sched__session_evicted_from(ss, d->workload);
        memo->decided_pools |= pool >= 0 && pool < 64 ? 1ull << pool : ~0ull;
    }
    if (!memo->settled && !memo->decided)
        return SCHED_OK;   /* the next cycle cannot reuse anything */
    keep_waiting(memo, out);   /* Invariant 7 */
    if (kinds->in_place && !had_labels) {
        memo->valid = 0;   /* not written over a labelled list: cannot be */
        return SCHED_OK;
    }
    rc = keep_figures(memo, ss);
    if (rc == SCHED_OK && memo->settled && memo->any_stale)   /* Invariant 6: not while decided */
        rc = reserve_stale(memo, in->n_workloads + 1);
    if (rc == SCHED_OK)
        rc = kinds->in_place ? keep_in_place(memo, ss, out, kinds, had_reps)
                             : keep_list(memo, ss, out, kinds);
    if (rc != SCHED_OK)
        return rc;
    check_labels(memo, ss);
    check_partial(memo, ss);
    if (memo->settled && memo->any_stale)
        memcpy(memo->stale, out->stale_since_ms, (size_t)in->n_workloads * sizeof(int64_t));
    memo->arena_kept = sched__arena_used(memo->arena);
    return SCHED_OK;
}

/* Step 1's session, kept: the node index of every binpack and spread pool
 * built now (placement.c), which a cycle on the kept session would build at
 * its first whole-device placement in the pool, sorting the pool's nodes;
 * what the full cycle leaves in the arena counts it (Invariant 4). */
static void index_pools(struct sched_memo *memo)
{
    int p;

    for (p = 0; p < memo->ss.n_pools; p++)
        sched__node_index_build(&memo->ss, p);
    memo->arena_kept = sched__arena_used(memo->arena);
}

/* Step 1: the full cycle, its session in the memo's arena. */
/* Before a cycle on the memo's session: its failed attempts are recorded
 * in the buffer that does not hold the settled cycle's, and those are
 * known to it when `use` (Step 5; `dirty`: the pools the delta changed). */
/* known_buf[r] holds n + 1 entries, all 0: those listed cleared one by
 * one (a cycle records failures for a few hundred workloads), or all. */
static int known_clear(struct sched_memo *memo, int r, int n)
{
    int cap = memo->cap_known[r], i;
    uint32_t *buf;

    if (reserve((void **)&memo->known_buf[r], &memo->cap_known[r], sizeof(uint32_t), n + 1) !=
        SCHED_OK)
        return SCHED_ENOMEM;
    buf = memo->known_buf[r];
    if (memo->cap_known[r] != cap || memo->n_known_set[r] < 0 ||
        memo->n_known_set[r] > memo->cap_known_set[r]) {
        memset(buf, 0, sizeof(uint32_t) * (size_t)memo->cap_known[r]);
    } else {
        for (i = 0; i < memo->n_known_set[r]; i++)
            buf[memo->known_set[r][i]] = 0;
    }
    memo->n_known_set[r] = -1;   /* until known_end() keeps the cycle's list */
    return reserve((void **)&memo->known_set[r], &memo->cap_known_set[r], sizeof(int),
                   256 + n / 32);
}

/* A full cycle sizes, for its n workloads, the buffers the next cycle on
 * the kept session would otherwise grow and clear whole (fresh memory: a
 * page fault a page): the known-failures buffer it does not record in,
 * cleared as known_clear() leaves it with no cycle's list pending (a full
 * cycle does not read the settled record), and the touched marks. The
 * incremental cycle after it then clears only what its record set. */
static int ready_for_next(struct sched_memo *memo, int n)
{
    int r = memo->known_cur, rc = known_clear(memo, r, n);

    if (rc == SCHED_OK)
        memo->n_known_set[r] = 0;
    if (rc == SCHED_OK)
        rc = reserve_touched(memo, n + 1);
    return rc;
}

static int known_begin(struct sched_memo *memo, int use, uint64_t dirty, uint64_t quotas)
{
    struct ss_known *k = &memo->known;
    int r = memo->known_cur ^ 1, n = memo->ss.n_workloads;

    memo->known_rec = -1;
    if (known_clear(memo, r, n) != SCHED_OK ||
        reserve((void **)&memo->known_base, &memo->cap_known_base, sizeof(uint64_t),
                memo->ss.n_pools + 1) != SCHED_OK ||
        reserve((void **)&memo->known_moved, &memo->cap_known_moved, 1,
                SS_KNOWN_POOLS * memo->ss.n_queues + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    memset(k, 0, sizeof(*k));
    if (use && memo->n_known > 0) {
        k->fail = memo->known_buf[memo->known_cur];
        k->n_fail = memo->n_known;
    }
    k->record = memo->known_buf[r];
    k->n_record = n;
    k->set = memo->known_set[r];
    k->cap_set = memo->cap_known_set[r];
    memo->known_rec = r;
    k->fair = memo->fair;
    k->held = memo->held;
    k->figs = memo->figs;
    k->dirty = dirty | quotas;
    k->quotas = quotas;
    k->prior = use;
    k->base = memo->known_base;
    k->moved = memo->known_moved;
    k->check = memo->check_known;
    memo->ss.known = k;
    return SCHED_OK;
}

/* After it: a settled cycle's record is what the next Step 5 knows. */
static void known_end(struct sched_memo *memo, int rc)
{
    memo->ss.known = NULL;
    if (memo->known_rec >= 0)
        memo->n_known_set[memo->known_rec] = memo->known.n_set;
    memo->known_rec = -1;
    memo->stats.attempts_known += memo->known.answered;
    memo->known_wrong += memo->known.wrong;
    memo->n_known = 0;
    if (rc == SCHED_OK && memo->valid && (memo->settled || memo->decided)) {
        memo->known_cur ^= 1;
        memo->n_known = memo->known.n_record;
    }
}

static int full_cycle(struct sched_memo *memo, const struct sched_state *in,
                      const struct sched_config *cfg, struct sched_arena *arena,
                      struct sched_result *out)
{
    struct ss_kinds kinds;
    int rc;

    memset(out, 0, sizeof(*out));
    memo->valid = 0;
    memo->cfg = *cfg;
    if (!memo->arena)
        memo->arena = sched_arena_new();
    if (!memo->arena)
        return SCHED_ENOMEM;
    sched_arena_reset(memo->arena);
    memo->stats.full++;
    memo->n_known = 0;
    rc = sched__session_build(&memo->ss, in, &memo->cfg, memo->arena);
    if (rc == SCHED_OK)
        rc = ready_for_next(memo, memo->ss.n_workloads);
    if (rc == SCHED_OK)
        rc = known_begin(memo, 0, 0, 0);
    memo->ss.no_stale = no_stale_times(memo, in->n_workloads + 1);
    if (rc == SCHED_OK)
        rc = sched__cycle_on(&memo->ss, arena, out, NULL, &kinds);
    if (rc == SCHED_OK)
        rc = keep(memo, &memo->ss, out, &kinds, 0);
    if (rc == SCHED_OK && memo->valid && (memo->settled || memo->decided))
        index_pools(memo);
    known_end(memo, rc);
    return rc;
}

/* ---- Step 2: may the kept result be reused? ---- */

static int same_config(const struct sched_config *a, const struct sched_config *b)
{
    return a->stale_grace_ms == b->stale_grace_ms &&
           a->max_consolidation_moves == b->max_consolidation_moves;
}

/* Step 2: no pod of wl is placed in the snapshot and it has no stale
 * time (a departure's or a submission's state). */
static int unplaced_not_stale(const struct sched_workload *wl)
{
    int k;

    if (wl->stale_since_ms != SCHED_NO_TIME)
        return 0;
    for (k = 0; k < wl->n_pods; k++)
        if (wl->pods[k].node >= 0)
            return 0;
    return 1;
}

/* Step 2: workload w left as the delta promises (pods it held in the kept
 * session, if any, are unplaced in the snapshot). */
static int left_as_promised(const struct sched_memo *memo, const struct sched_state *in, int w)
{
    const struct sched_workload *wl;

    if (w < 0 || w >= memo->n_workloads)
        return 0;
    wl = &in->workloads[w];
    return (wl->phase == SCHED_STOPPED || wl->phase == SCHED_COMPLETED ||
            wl->phase == SCHED_FAILED) && unplaced_not_stale(wl);
}

/* Step 5: some workload of the delta held pods in the kept session. */
static int frees_room(const struct sched_memo *memo, const struct sched_delta *delta)
{
    int k;

    for (k = 0; k < delta->n_left; k++)
        if (memo->ss.wl[delta->left[k]].n_placed > 0)
            return 1;
    return 0;
}

static int named_down(const struct sched_delta *delta, int node)
{
    int k;

    for (k = 0; k < delta->n_down; k++)
        if (delta->down[k] == node)
            return 1;
    return 0;
}

/* Step 9: whether the pool of node keeps its largest device memory once
 * the nodes the delta names are down (a request by device memory asks a
 * GPU share that reads it: session.c, memory_estimate()). */
static int keeps_gpu_mem(const struct sched_session *ss, const struct sched_delta *delta,
                         int node)
{
    const struct ss_pool *p = &ss->pools[ss->nodes[node].pool];
    int i;

    if (ss->nodes[node].n_gpus == 0 || ss->nodes[node].gpu_mem < p->max_gpu_mem)
        return 1;
    for (i = 0; i < p->n_nodes; i++) {
        const struct ss_node *o = &ss->nodes[p->nodes[i]];
        if (o->ready && o->n_gpus > 0 && o->gpu_mem == p->max_gpu_mem &&
            !named_down(delta, p->nodes[i]))
            return 1;
    }
    return 0;
}

/* Step 9: node went down as the delta promises: ready in the kept
 * session, not in the snapshot, named once, its pool's largest device
 * memory kept, and every workload that held a pod there holds none there
 * now, is pending or running, and has no stale time (a gang left short of
 * its minimum and marked stale moves the result's stale times: Step 1). */
static int down_as_promised(const struct sched_memo *memo, const struct sched_state *in,
                            const struct sched_delta *delta, int k)
{
    int node = delta->down[k], i, j;
    const struct ss_node *n;

    if (node < 0 || node >= memo->n_nodes)
        return 0;
    for (j = 0; j < k; j++)
        if (delta->down[j] == node)
            return 0;
    n = &memo->ss.nodes[node];
    if (!n->ready || in->nodes[node].ready || !keeps_gpu_mem(&memo->ss, delta, node))
        return 0;
    for (i = 0; i < n->n_pods; i++) {
        const struct sched_workload *wl = &in->workloads[n->pods[2 * i]];
        if ((wl->phase != SCHED_PENDING && wl->phase != SCHED_RUNNING) ||
            wl->stale_since_ms != SCHED_NO_TIME)
            return 0;
        for (j = 0; j < wl->n_pods; j++)
            if (wl->pods[j].node == node)
                return 0;
    }
    return 1;
}

static int reusable(const struct sched_memo *memo, const struct sched_state *in,
                    const struct sched_delta *delta, const struct sched_config *cfg)
{
    int p, w, k;

    if (!memo->valid || !(memo->settled || memo->decided) || !delta || delta->full ||
        delta->n_submitted < 0 ||
        sched__arena_used(memo->arena) > 2 * memo->arena_kept + MEMO_SLACK ||
        in->n_pools != memo->n_pools || in->n_queues != memo->n_queues ||
        in->n_nodes != memo->n_nodes ||
        in->n_workloads != memo->n_workloads + delta->n_submitted || !same_config(cfg, &memo->cfg))
        return 0;
    for (p = 0; p < in->n_pools; p++) {
        const struct sched_pool *pool = &in->pools[p];
        if ((pool->gpu_placement == SCHED_FRAGMENTATION ||
             pool->cpu_placement == SCHED_FRAGMENTATION) &&
            !sched__frag_same_mix(&memo->ss, in))
            return 0;
        if (in->now_ms != memo->now_ms && pool->min_guaranteed_runtime_ms > 0)
            return 0;
    }
    if (in->now_ms != memo->now_ms && memo->any_stale)
        return 0;
    if (delta->n_left < 0 || (delta->n_left > 0 && !delta->left))
        return 0;
    for (k = 0; k < delta->n_left; k++)
        if (!left_as_promised(memo, in, delta->left[k]))
            return 0;
    if (delta->n_down < 0 || (delta->n_down > 0 && !delta->down))
        return 0;
    for (k = 0; k < delta->n_down; k++)
        if (!down_as_promised(memo, in, delta, k))
            return 0;
    for (w = memo->n_workloads; w < in->n_workloads; w++) {
        const struct sched_workload *wl = &in->workloads[w];
        if (wl->n_pods < 1 || !wl->pods || !unplaced_not_stale(wl))
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

/* The table again with `cap` slots (a power of two): the kinds it holds,
 * each where its hash puts it, and no kind forgotten. */
static int kinds_rehash(struct sched_memo *memo, const struct sched_session *ss, int cap)
{
    int *old = memo->kinds, *old_entry = memo->kind_entry, n_old = memo->n_kind_entry, i;
    int rc = SCHED_OK;

    if (kinds_alloc(memo, cap) != SCHED_OK)
        return SCHED_ENOMEM;
    for (i = 0; i < n_old && rc == SCHED_OK; i++)
        if (old_entry[i] > 0)
            rc = kinds_insert(memo, ss, old_entry[i]);
    free(old);
    free(old_entry);
    return rc;
}

/* Adds pending entry `entry` (index + 1) as the first of its kind. */
static int kinds_insert(struct sched_memo *memo, const struct sched_session *ss, int entry)
{
    int mask, i;

    if (2 * (memo->n_kinds + memo->n_gone + 1) > memo->cap_kinds &&
        kinds_rehash(memo, ss, memo->cap_kinds ? 2 * memo->cap_kinds : 16) != SCHED_OK)
        return SCHED_ENOMEM;
    mask = memo->cap_kinds - 1;
    i = (int)(sched__diagnosis_hash(ss, memo->pending[entry - 1].workload) & (uint64_t)mask);
    while (slot_entry(memo, i) > 0)
        i = (i + 1) & mask;
    if (memo->kinds[i]) {   /* a forgotten kind's slot: its place in kind_entry[] too */
        memo->n_gone--;
    } else {
        memo->kinds[i] = ++memo->n_kind_entry;
    }
    memo->kind_entry[memo->kinds[i] - 1] = entry;
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
         i = (i + 1) & mask) {
        int entry = slot_entry(memo, i);
        if (entry > 0 && sched__same_diagnosis(ss, memo->pending[entry - 1].workload, w))
            return entry;
    }
    return 0;
}

/* ---- Step 4: the entries of the workloads that left ---- */


/* The kinds table's entries (index + 1) above `above` move by `by` (an
 * entry put in the list's middle). */
static void kinds_shift(struct sched_memo *memo, int above, int by)
{
    int i;

    for (i = 0; i < memo->n_kind_entry; i++)
        if (memo->kind_entry[i] > above)
            memo->kind_entry[i] += by;
}

/* Removes the entry of every workload that left. The table of kinds is
 * not hashed here (the session has not taken the departures yet, but
 * the snapshot already says the new phases). */
static void drop_left_entries(struct sched_memo *memo, const struct sched_delta *delta)
{
    int k, e, off, label;

    for (k = 0; k < delta->n_left; k++) {
        e = sched__pending_find(memo->pending, memo->n_pending, delta->left[k]);
        if (e < 0)
            continue;
        label = memo->kind_of[e];
        off = sched__take_out(memo->pending, memo->kind_of, memo->n_pending, &e, 1, 1);
        memo->pending += off;   /* the entries before it moved up */
        memo->kind_of += off;
        memo->pending_off += off;
        memo->n_pending--;
        memo->label_count[label]--;
        kinds_taken_out(memo, &e, &label, 1);
        if (memo->reps_valid)
            reps_taken_out(memo, &e, 1);   /* Invariant 5; on ENOMEM not valid */
    }
}

/* Writes w's entry into p: the first of its kind's, or its diagnosis (then
 * w's entry, at index e, becomes the first of its kind). */
static int entry_of(struct sched_memo *memo, struct sched_session *ss, int w, int e)
{
    struct sched_pending *p = &memo->pending[e];
    int kind = kinds_find(memo, ss, w);

    memset(p, 0, sizeof(*p));   /* padding too: results compare byte for byte */
    if (kind) {
        memcpy(p, &memo->pending[kind - 1], sizeof(*p));
        p->workload = w;
        memo->kind_of[e] = memo->kind_of[kind - 1];
        memo->label_count[memo->kind_of[e]]++;
        return SCHED_OK;
    }
    sched__diagnose(ss, w, p);
    if (reserve((void **)&memo->label_count, &memo->cap_label_count, sizeof(int),
                memo->n_labels + 1) != SCHED_OK)
        return SCHED_ENOMEM;
    memo->kind_of[e] = memo->n_labels;
    memo->label_count[memo->n_labels++] = 1;
    if (push_rep(memo, e) != SCHED_OK)
        return SCHED_ENOMEM;
    return kinds_insert(memo, ss, e + 1);
}

/* After the session took the departures: the entry of each workload that
 * left and is still pending (suspended), at its place in workload order. */
static int insert_left_entries(struct sched_memo *memo, struct sched_session *ss,
                               const struct sched_delta *delta)
{
    int k, e, w, rc = SCHED_OK;

    for (k = 0; k < delta->n_left && rc == SCHED_OK; k++) {
        w = delta->left[k];
        e = sched__pending_find(memo->pending, memo->n_pending, w);
        if (e >= 0 || !sched__is_pending(ss, w))
            continue;
        e = -1 - e;
        rc = reserve_pending(memo, memo->n_pending + 1);
        if (rc != SCHED_OK)
            break;
        memmove(&memo->pending[e + 1], &memo->pending[e],
                (size_t)(memo->n_pending - e) * sizeof(*memo->pending));
        memmove(&memo->kind_of[e + 1], &memo->kind_of[e], (size_t)(memo->n_pending - e) * sizeof(int));
        memo->n_pending++;
        memo->reps_valid = 0;   /* Invariant 5 */
        kinds_shift(memo, e, 1);
        rc = entry_of(memo, ss, w, e);
    }
    return rc;
}

/* Appends each pending submission's entry to the memo's list. */
static int append_submissions(struct sched_memo *memo, struct sched_session *ss, int first_new)
{
    int w, rc;

    for (w = first_new; w < ss->n_workloads; w++) {
        if (!sched__is_pending(ss, w))
            continue;
        rc = reserve_pending(memo, memo->n_pending + 1);
        if (rc != SCHED_OK)
            return rc;
        memo->n_pending++;
        rc = entry_of(memo, ss, w, memo->n_pending - 1);
        if (rc != SCHED_OK)
            return rc;
    }
    return SCHED_OK;
}

static int reuse(struct sched_memo *memo, struct sched_session *ss,
                 const struct sched_delta *delta, struct sched_arena *arena,
                 struct sched_result *out)
{
    const struct sched_state *in = ss->in;
    int w, k, rc, *changed;

    rc = sched__record_shares(ss, arena, out);
    if (rc == SCHED_OK)
        rc = memo->n_waiting_w >= 0   /* Invariant 7 */
                 ? sched__record_waiting_of(ss, arena, memo->waiting_w, memo->n_waiting_w, out)
                 : sched__record_waiting(ss, arena, out);   /* ss->decisions: none */
    if (rc == SCHED_OK)
        rc = insert_left_entries(memo, ss, delta);
    if (rc == SCHED_OK)
        rc = append_submissions(memo, ss, memo->n_workloads);
    if (rc == SCHED_OK && memo->any_stale)
        rc = reserve_stale(memo, in->n_workloads + 1);
    else if (rc == SCHED_OK && !no_stale_times(memo, in->n_workloads + 1))
        rc = SCHED_ENOMEM;
    if (rc == SCHED_OK && ss->oom)
        rc = SCHED_ENOMEM;
    if (rc != SCHED_OK)
        return rc;
    for (w = memo->n_workloads; w < in->n_workloads && memo->any_stale; w++)
        memo->stale[w] = in->workloads[w].stale_since_ms;   /* SCHED_NO_TIME (Step 2) */
    out->stale_since_ms = memo->any_stale ? memo->stale : memo->no_stale;
    out->stale_kept = 1;   /* as the workloads hold them */
    out->pending = memo->pending;
    out->n_pending = memo->n_pending;
    out->decisions = NULL;
    out->n_decisions = 0;
    /* what moved: the entries of the workloads that left, and the
     * submissions' (every other entry is the kept one) */
    changed = sched__array_raw(arena, (size_t)delta->n_left + (size_t)in->n_workloads -
                                          (size_t)memo->n_workloads + 1, sizeof(int));
    if (!changed)
        return SCHED_ENOMEM;
    for (k = 0; k < delta->n_left; k++)
        changed[out->n_changed++] = delta->left[k];
    for (w = memo->n_workloads; w < in->n_workloads; w++)
        changed[out->n_changed++] = w;
    out->changed = changed;
    memo->n_workloads = in->n_workloads;
    memo->now_ms = in->now_ms;
    memo->stats.reused++;
    check_labels(memo, ss);
    return SCHED_OK;
}

/* An entry of `label` in the kept list that no touched workload holds:
 * e, or the nearest after it, or before it; -1 when there is none. */
static int untouched_of_label(const struct sched_memo *memo, int e, int label,
                              const uint8_t *touched)
{
    int x, seen = 0;

    for (x = e; x < memo->n_pending && seen < memo->label_count[label]; x++)
        if (memo->kind_of[x] == label) {
            if (!touched[memo->pending[x].workload])
                return x;
            seen++;
        }
    for (x = e - 1; x >= 0 && seen < memo->label_count[label]; x--)
        if (memo->kind_of[x] == label) {
            if (!touched[memo->pending[x].workload])
                return x;
            seen++;
        }
    return -1;
}

/* cycle.c's lookup (struct ss_prev_pending's settled_entry): an entry of
 * the kept list of w's kind that no touched workload holds. The kinds
 * table indexes an entry of each kind; where a touched workload holds it,
 * another entry of its label stands for the kind (the entries of a label
 * are of one kind in the settled state, and an untouched one still is). */
static int settled_entry(const void *ctx, const struct sched_session *ss, int w,
                         const uint8_t *touched)
{
    const struct sched_memo *memo = ctx;
    int mask = memo->cap_kinds - 1, i, e;

    if (memo->cap_kinds == 0)
        return -1;
    for (i = (int)(sched__diagnosis_hash(ss, w) & (uint64_t)mask); memo->kinds[i];
         i = (i + 1) & mask) {
        int entry = slot_entry(memo, i);
        if (entry <= 0)
            continue;
        e = untouched_of_label(memo, entry - 1, memo->kind_of[entry - 1], touched);
        if (e >= 0 && sched__same_diagnosis(ss, memo->pending[e].workload, w))
            return e;
    }
    return -1;
}

/* Step 5: the kept session took a delta in which some workload left
 * holding pods; the cycle's steps run on it as on a session built again
 * (cycle.c), and what it leaves is kept as a full cycle's is. Out of
 * line, so that a profile names it (bench/NOTES.md). */
__attribute__((noinline)) static int run_on_kept(struct sched_memo *memo,
                                                 const struct sched_delta *delta, uint64_t dirty,
                                                 uint64_t quotas, struct sched_arena *arena,
                                                 struct sched_result *out)
{
    size_t kept = memo->arena_kept;
    int input_unstale = !memo->any_stale;   /* Step 2: what the delta added has none */
    /* the workloads the delta names: those that left, and (Step 9) those requeued */
    const int *named = delta->n_down > 0 ? memo->named : delta->left;
    int n_named = delta->n_down > 0 ? memo->n_named : delta->n_left;
    struct ss_prev_pending prev = {
        .pending = memo->pending, .kind_of = memo->kind_of, .n = memo->n_pending,
        .n_labels = memo->n_labels, .n_workloads = memo->n_workloads, .left = named,
        .n_left = n_named, .reps = memo->reps_valid ? memo->reps : NULL,
        .n_reps = memo->n_reps, .code_reps = memo->reps_valid ? memo->code_reps : NULL,
        .pair_pools = memo->pair_pools, .pair_queues = memo->pair_queues,
        .odd_reps = memo->odd_reps, .label_count = memo->label_count};
    /* room for the list, the workloads touched and a few decisions (else
     * record_again() takes the arena) */
    int from_list = memo->kind_of_valid,
        room = memo->n_pending + n_named + delta->n_submitted + 64 + memo->n_pending / 16,
        front = FRONT_ROOM(memo->n_pending);

    if (from_list &&
        reserve((void **)&memo->next, &memo->cap_next, sizeof(*memo->next), front + room) ==
            SCHED_OK &&
        reserve((void **)&memo->next_kind_of, &memo->cap_next_kind_of, sizeof(int),
                front + room) == SCHED_OK) {
        memo->next_off = front;
        prev.buf = BUF_ADD(memo->next, front);
        prev.buf_kind_of = BUF_ADD(memo->next_kind_of, front);
        prev.cap_buf = room;
        prev.own = memo->pending;   /* Invariant 3: the memo is not valid from here */
        prev.own_kind_of = memo->kind_of;
        prev.own_before = memo->pending_off;
        prev.own_after = (memo->cap_pending < memo->cap_kind_of ? memo->cap_pending
                                                                : memo->cap_kind_of) -
                         memo->pending_off - memo->n_pending;
        prev.settled_entry = settled_entry;
        prev.settled_ctx = memo;
    }
    if (reserve_touched(memo, memo->ss.n_workloads + 1) == SCHED_OK) {
        prev.touched = memo->touched;
        prev.cap_touched = memo->cap_touched;
    }
    struct ss_kinds kinds;
    int rc;

    memo->stats.finished++;
    memo->stats.order_kept += memo->ss.order_cache != NULL;
    memo->stats.pending_kept += from_list;
    rc = known_begin(memo, 1, dirty, quotas);
    memo->ss.no_stale = no_stale_times(memo, memo->ss.n_workloads + 1);
    if (memo->n_waiting_w >= 0) {   /* Invariant 7: Steps 5, 6 and 7 */
        memo->ss.waiting_known = memo->waiting_w;
        memo->ss.n_waiting_known = memo->n_waiting_w;
    }
    if (rc == SCHED_OK)
        rc = sched__cycle_on(&memo->ss, arena, out, from_list ? &prev : NULL, &kinds);
    memo->ss.waiting_known = NULL;   /* keep() writes waiting_w again */
    memo->ss.fair_current = 0;       /* read by this cycle only, even one not run */
    out->stale_kept = rc == SCHED_OK && input_unstale && memo->ss.n_stale_set == 0;
    memo->stats.pending_put_in += rc == SCHED_OK && kinds.in_place && kinds.n_ins > 0;
    if (rc == SCHED_OK)
        rc = keep(memo, &memo->ss, out, &kinds, input_unstale);
    known_end(memo, rc);
    memo->arena_kept = kept;   /* Invariant 4: growth counts from the build */
    return rc;
}

/* Step 6: the kept cycle's decisions are in the snapshot as decided (the
 * delta's promise, checked pod by pod), and no workload it placed left. */
static int decisions_applied(const struct sched_memo *memo, const struct sched_state *in,
                             const struct sched_delta *delta)
{
    const struct sched_session *ss = &memo->ss;
    int k, j;

    for (k = 0; k < ss->n_decisions; k++) {
        const struct sched_decision *d = &ss->decisions[k];
        const struct sched_workload *wl = &in->workloads[d->workload];
        if (d->kind == SCHED_EVICT) {   /* whole (placed_only): every pod off */
            for (j = 0; j < wl->n_pods; j++)
                if (wl->pods[j].node >= 0)
                    return 0;
        } else if (d->pod < 0 || d->pod >= wl->n_pods || wl->pods[d->pod].node != d->node ||
                   wl->pods[d->pod].devices != d->devices) {
            return 0;
        }
        for (j = 0; j < delta->n_left; j++)
            if (delta->left[j] == d->workload)
                return 0;
    }
    return 1;
}

/* Step 6: each workload the kept cycle placed is built again as placed
 * (sched__session_rejoin()), leaving the job order with it when it can;
 * then the session holds no attempt. */
static int rejoin_decided(struct sched_memo *memo)
{
    struct sched_session *ss = &memo->ss;
    int k, w, rc = SCHED_OK, keep_order = ss->order_cache != NULL, evicted = 0;

    for (k = 0; k < ss->n_decisions && rc == SCHED_OK; k++) {
        w = ss->decisions[k].workload;
        if (k > 0 && ss->decisions[k - 1].workload == w)
            continue;   /* one run of decisions per workload (placed_only) */
        if (ss->decisions[k].kind == SCHED_EVICT) {
            rc = sched__session_rejoin_evicted(ss, w, sched__session_evicted_from(ss, w),
                                               &keep_order);
            if (rc == SCHED_OK && !sched__is_pending(ss, w))
                rc = SCHED_EINVAL;   /* the snapshot has it otherwise */
            evicted = 1;
            continue;
        }
        rc = sched__session_rejoin(ss, w);
        if (rc == SCHED_OK && keep_order)
            keep_order = sched__order_drop(ss, w);
        if (rc == SCHED_OK && sched__is_pending(ss, w))
            rc = SCHED_EINVAL;   /* not as the cycle left it: the snapshot says otherwise */
    }
    if (keep_order)
        sched__order_drops_done(ss);
    sched__session_settled(ss, keep_order);
    memo->stats.after_evictions += evicted;
    return rc;
}

/* Step 7: the trial of Step 3 placed (or evicted) something: every change
 * it logged is undone, the per-cycle flags of the workloads it named are
 * cleared, and the caches start over. */
static int trial_undone(struct sched_memo *memo)
{
    struct sched_session *ss = &memo->ss;
    struct ss_mark start = {0, 0, ss->version};
    int k;

    if (ss->oom)
        return SCHED_ENOMEM;
    for (k = 0; k < ss->n_undo; k++)
        ss->wl[ss->undo[k].workload].flags &= ~(WL_EVICTED | WL_TOUCHED | WL_SHRUNK);
    sched__rollback(ss, start);
    sched__session_settled(ss, 1);   /* no attempt reads or changes the job order */
    return SCHED_OK;
}

/* Step 9: each workload on the nodes gone down built again from the
 * snapshot (sched__session_requeue()), named after the departures in
 * memo->named, then each node made not ready; *pools: the pools they are
 * in (bit p; pools >= 64: all). */
static int take_nodes_down(struct sched_memo *memo, const struct sched_delta *delta,
                           uint64_t *pools)
{
    struct sched_session *ss = &memo->ss;
    int keep_order = ss->order_cache != NULL, k, w, rc = SCHED_OK;

    *pools = 0;
    memo->n_named = 0;
    rc = reserve((void **)&memo->named, &memo->cap_named, sizeof(int), delta->n_left + 1);
    for (k = 0; k < delta->n_left && rc == SCHED_OK; k++)
        memo->named[memo->n_named++] = delta->left[k];
    for (k = 0; k < delta->n_down && rc == SCHED_OK; k++) {
        const struct ss_node *n = &ss->nodes[delta->down[k]];
        while (n->n_pods > 0 && rc == SCHED_OK) {   /* a requeue takes all w's pods off */
            w = n->pods[0];
            rc = reserve((void **)&memo->named, &memo->cap_named, sizeof(int),
                         memo->n_named + 1);
            if (rc == SCHED_OK) {
                memo->named[memo->n_named++] = w;
                rc = sched__session_requeue(ss, w, &keep_order);
            }
        }
        if (rc == SCHED_OK)
            rc = sched__session_node_down(ss, delta->down[k]);
        *pools |= n->pool < 64 ? 1ull << n->pool : ~0ull;
    }
    return rc;
}

/* Steps 2, 3, 5, 6, 7 and 9: 1 when the cycle was answered from the memo
 * or on its kept session (rc set). */
static int try_reuse(struct sched_memo *memo, const struct sched_state *in,
                     const struct sched_delta *delta, const struct sched_config *cfg,
                     struct sched_arena *arena, struct sched_result *out, int *rc)
{
    struct sched_session *ss = &memo->ss;
    int w, k, frees;
    uint64_t dirty = 0, quotas = 0, down = 0;

    if (!reusable(memo, in, delta, cfg) || (memo->decided && !decisions_applied(memo, in, delta)))
        return 0;
    if (!memo->decided && (frees_room(memo, delta) || delta->quotas || delta->n_down > 0) &&
        (ss->n_undo != 0 || ss->n_decisions != 0))
        return 0;   /* Step 5 needs the session exactly as built */
    if (delta->quotas && sched__quota_pools_move(ss, in))
        return 0;   /* Step 8: pool lists move */
    memo->valid = 0;   /* Invariant 3: the kept session changes from here */
    memo->cfg = *cfg;
    if (sched__session_extend(ss, in, &memo->cfg) != SCHED_OK)
        goto fall_back;
    if (memo->decided) {   /* Step 6: the session as Step 1 builds it, then Step 5 */
        if (rejoin_decided(memo) != SCHED_OK)
            goto fall_back;
        dirty = memo->decided_pools;
        memo->stats.after_placements++;
    }
    if (delta->quotas)   /* Step 8 */
        quotas = sched__session_requota(ss);
    frees = memo->decided || frees_room(memo, delta) || quotas || delta->n_down > 0;
    for (k = 0; k < delta->n_left; k++)   /* the pools the departures free room in */
        if (ss->wl[delta->left[k]].n_placed > 0)
            dirty |= ss->wl[delta->left[k]].pool < 64 ? 1ull << ss->wl[delta->left[k]].pool
                                                       : ~0ull;
    for (k = 0; k < delta->n_left; k++)
        if (ss->wl[delta->left[k]].flags & WL_ACTIVE)
            sched__session_leave(ss, delta->left[k]);
    if (delta->n_down > 0) {   /* Step 9 */
        if (take_nodes_down(memo, delta, &down) != SCHED_OK)
            goto fall_back;
        memo->n_waiting_w = -1;   /* Invariant 7: a requeued running workload may wait */
        memo->stats.nodes_down++;
    }
    if (memo->check_kept)
        check_kept(memo);
    if (frees) {
        /* where a node went down, as where a quota moved: no failed attempt
         * is known, no settled entry stands unread */
        *rc = run_on_kept(memo, delta, dirty, quotas | down, arena, out);
        return 1;
    }
    if (sched__fairshare(ss) != SCHED_OK || !same_fair(memo, ss))
        goto fall_back;
    for (w = memo->n_workloads; w < in->n_workloads; w++)
        if ((ss->wl[w].flags & WL_CANDIDATE) && sched__would_start(ss, w)) {
            if (trial_undone(memo) != SCHED_OK)   /* Step 7 */
                goto fall_back;
            if (memo->check_kept)
                check_kept(memo);
            memo->stats.after_submission++;
            ss->fair_current = 1;   /* found above, on the state the undo restored */
            *rc = run_on_kept(memo, delta, 0, 0, arena, out);
            return 1;
        }
    drop_left_entries(memo, delta);
    memset(out, 0, sizeof(*out));
    *rc = reuse(memo, ss, delta, arena, out);
    memo->valid = *rc == SCHED_OK;
    return 1;
fall_back:
    memo->stats.fell_back++;
    return 0;
}

/* Does the state use topologies? When the kept session's did not, only the
 * pools and the submissions can bring one in: a delta's other workloads
 * are the kept ones (reusable() sends anything else to a full cycle). */
static int uses_topology(const struct sched_memo *memo, const struct sched_state *in,
                         const struct sched_delta *delta)
{
    int kept = memo->valid && delta && !delta->full && !memo->ss.topo &&
               in->n_workloads >= memo->n_workloads;

    return sched__topo_state(in, kept ? memo->n_workloads : 0);
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
    /* a state with topologies runs in full (topology.c's attempts keep
     * nothing the reuse steps could check) */
    if (uses_topology(memo, in, delta) || !try_reuse(memo, in, delta, cfg, arena, out, &rc))
        rc = full_cycle(memo, in, cfg, arena, out);
    if (rc != SCHED_OK)
        memo->valid = 0;
    return rc;
}
