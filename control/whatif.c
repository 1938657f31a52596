/*
 * whatif.c: what the next scheduling turn would do after a change that has
 * not been made: run the core on a copy of the scheduler thread's model
 * with the change made there, and compare.
 *
 * One run (wi_run):
 *   Step 1: copy the model (ctl_sched_model_copy()): a deep copy under
 *           the scheduler's model lock (which its thread holds only while
 *           it changes the model, never for a whole turn), then the rows
 *           changed since its last cycle read into the copy;
 *   Step 2: note every workload as it is: phase, project, placed pods;
 *   Step 3: make the changes on the copy, as the real ones would leave the
 *           model: quotas, drained nodes (NotReady; the pods bound there
 *           freed and their workloads back to Pending, as when a node is
 *           lost) and added nodes in one new topology; then deletions and
 *           suspensions (the workload leaves the model) and the submission
 *           (a Pending row after every other: the newest seq and queue
 *           position);
 *   Step 4: pass after pass, as the scheduler thread does in one turn:
 *           sched_cycle() on the copy, every decision applied with
 *           sched_apply_decision(), the stale times kept, until a pass
 *           decides nothing (at most SM_MAX_PASSES); per workload, the
 *           action that bound, evicted or moved it is noted;
 *   Step 5: compare each workload with its note: it starts, stops or runs
 *           on elsewhere; the submission's pods, or its pending reason and
 *           message from the last pass (sched_reason_message(), the words
 *           the real cycle writes); each queue's deserved quota, fair share
 *           and allocation before (the last real cycle's) and after (the
 *           last pass's).
 *
 * A run is answered on the scheduler's kept state instead when it can
 * (run_kept()): between two cycles, with every row the scheduler was told
 * of already read, a child forked by ctl_sched_trial() (common/cow.c)
 * sees the scheduler thread's model and the memo of its last cycle
 * copy-on-write; Steps 2 to 5 run there, the changes told as the next
 * cycle would be told them (trial_delta(): the submission appended, the
 * workloads deleted or suspended as departures), each pass through
 * sched_cycle_next() (a submission to a settled cluster costs its own
 * trial, one that starts a cycle on the kept session; a deletion of a
 * pending workload takes its entry out, of a running one runs a cycle on
 * the kept session), and the result comes back through a pipe
 * (result_put(), result_read()); the caller builds the answer's names
 * meanwhile (sm_set_names()). A quota is written over the image's model
 * (sm_quota_rows()) and told as moved quotas (the core reads them again
 * on its kept session, scheduler/memo.c Step 8). The child walks nothing
 * whole: its first touch of each page of the image costs a fault, so it
 * searches (binary) and notes only what the changes and the decisions
 * name. Drains alone run there too (drain_trial()): the nodes made
 * NotReady on the image and the quotas read again, the
 * workloads holding pods there (found from the memo: trial_pods()) noted
 * and their pods freed, and told as nodes gone down with moved quotas (the
 * core builds those workloads again on its kept session, scheduler/memo.c
 * Step 9). A drain with other changes, an added node, or a trial that
 * cannot run now, takes Step 1's copy.
 *
 * Invariants:
 *   1. The live model is read only in Step 1, under the model lock (or,
 *      in a trial, by the forked child, which writes only its own pages); the
 *      core runs on the copy with no lock held, so a run never stalls the
 *      scheduler thread for longer than the copy, nor waits for a turn.
 *   2. Nothing is written: not the database, not the live model.
 *   3. At most WI_MAX_RUNS runs at once (each holds a copy of the model
 *      and an arena); another waits up to WI_WAIT_MS for its turn, then
 *      is refused with WI_BUSY.
 */
#include "control.h"
#include "clock.h"
#include "cow.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched.h"

static pthread_mutex_t runs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t runs_cv = PTHREAD_COND_INITIALIZER;
static int runs;

const char *wi_reason_name(int reason)
{
    switch (reason) {
    case WI_R_DELETE: return "delete";
    case WI_R_SUSPEND: return "suspend";
    case WI_R_DRAIN: return "drain";
    default: return sched_action_name(reason);
    }
}

/* ---- Step 2: the notes ---- */

struct note {
    int64_t seq;
    int index;               /* the workload's, once the changes are made (trial) */
    int queue, phase;
    int64_t gpu_milli;
    int first, n_placed;     /* its placed pods in run.pods */
    /* Step 4's: the action that first bound it, evicted it (and for
     * whom), whether a decision moved it; Step 3's: whether a drain
     * freed its pods. -1, 0: none. */
    int bind_act, evict_act, evict_by;
    unsigned char moved, drained;
};

/* One run's working state. The per-workload arrays are indexed by the
 * copy's workloads once the changes are made (Step 4 keeps the indices). */
struct run {
    struct sched_model *m;
    int64_t now;
    struct note *notes;      /* by seq, like the model */
    int n_notes;
    struct wi_pod *pods;
    int64_t sub_seq;         /* the submission's seq, or 0 */
    struct sched_memo *memo; /* the kept state's (a trial's image), or NULL: full cycles */
    int *note_at;            /* a trial: [m->n] 1 + the note of workload i, 0: none yet;
                                NULL: every workload noted (note_all()) */
    int cap_notes, cap_pods, n_pods;
    struct sched_delta delta;   /* the first pass's, with a memo */
    int *left;                  /* a trial's delta.left */
    struct wi_result *out;
    int cap_effects;
};

static int64_t placed_gpu(const struct sched_model *m, const struct sched_workload *w)
{
    int64_t g = 0;
    int k;

    for (k = 0; k < w->n_pods; k++)
        if (w->pods[k].node >= 0)
            g += sched_pod_gpu(w, &m->nodes[w->pods[k].node]);
    return g;
}

static int note_all(struct run *x)
{
    const struct sched_model *m = x->m;
    int i, k, n_pods = 0, used = 0;

    for (i = 0; i < m->n; i++)
        n_pods += m->wls[i].n_pods;
    x->notes = calloc((size_t)m->n + 1, sizeof(*x->notes));
    x->pods = calloc((size_t)n_pods + 1, sizeof(*x->pods));
    if (!x->notes || !x->pods)
        return -1;
    for (i = 0; i < m->n; i++) {
        const struct sched_workload *w = &m->wls[i];
        struct note *t = &x->notes[i];
        t->seq = m->meta[i].seq;
        t->bind_act = t->evict_act = t->evict_by = -1;
        t->queue = w->queue;
        t->phase = w->phase;
        t->gpu_milli = placed_gpu(m, w);
        t->first = used;
        for (k = 0; k < w->n_pods; k++)
            if (w->pods[k].node >= 0) {
                x->pods[used].index = k;
                x->pods[used].node = w->pods[k].node;
                x->pods[used++].devices = w->pods[k].devices;
            }
        t->n_placed = used - t->first;
    }
    x->n_notes = m->n;
    return 0;
}

/* A trial notes a workload only when a decision first names it, before
 * it is applied (the changes of a trial touch no workload already there):
 * the others end as they began, so only those are compared. */
static int note_one(struct run *x, int i)
{
    const struct sched_workload *w = &x->m->wls[i];
    struct note *t;
    int k;

    if (x->n_notes == x->cap_notes || x->n_pods + w->n_pods > x->cap_pods) {
        int cn = x->cap_notes * 2 + 16, cp = (x->n_pods + w->n_pods) * 2 + 16;
        struct note *nn = realloc(x->notes, sizeof(*nn) * (size_t)cn);
        struct wi_pod *np = nn ? realloc(x->pods, sizeof(*np) * (size_t)cp) : NULL;
        if (nn)
            x->notes = nn;
        if (!np)
            return -1;
        x->pods = np;
        x->cap_notes = cn;
        x->cap_pods = cp;
    }
    t = &x->notes[x->n_notes];
    memset(t, 0, sizeof(*t));
    t->seq = x->m->meta[i].seq;
    t->bind_act = t->evict_act = t->evict_by = -1;
    t->index = i;
    t->queue = w->queue;
    t->phase = w->phase;
    t->gpu_milli = placed_gpu(x->m, w);
    t->first = x->n_pods;
    for (k = 0; k < w->n_pods; k++)
        if (w->pods[k].node >= 0) {
            x->pods[x->n_pods].index = k;
            x->pods[x->n_pods].node = w->pods[k].node;
            x->pods[x->n_pods++].devices = w->pods[k].devices;
        }
    t->n_placed = x->n_pods - t->first;
    x->note_at[i] = ++x->n_notes;
    return 0;
}

/* Binary search, not a walk: a trial's image takes a fault at the first
 * touch of each page, so a walk of the model costs it milliseconds. The
 * index in a[0..n) (sorted by key) of the element whose key is want; -1:
 * none. */
static int sorted_find(const void *a, int n, int64_t (*key)(const void *a, int i), int64_t want)
{
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int64_t k = key(a, mid);
        if (k == want)
            return mid;
        if (k < want)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The keys searched: notes and the model by seq (sched_model.h), a
 * result's pending list by workload (sched.h). */
static int64_t note_seq(const void *a, int i)
{
    return ((const struct note *)a)[i].seq;
}

static int64_t meta_seq(const void *a, int i)
{
    return ((const struct sm_meta *)a)[i].seq;
}

static int64_t pending_workload(const void *a, int i)
{
    return ((const struct sched_pending *)a)[i].workload;
}

static const struct note *note_of(const struct run *x, int64_t seq)
{
    int k = sorted_find(x->notes, x->n_notes, note_seq, seq);

    return k >= 0 ? &x->notes[k] : NULL;
}

/* Workload i's note (a trial's by index: NULL when no decision named it;
 * NULL for the submission in a copy, noted before it was added). */
static struct note *note_for(const struct run *x, int i)
{
    if (x->note_at)
        return x->note_at[i] ? &x->notes[x->note_at[i] - 1] : NULL;
    return (struct note *)note_of(x, x->m->meta[i].seq);
}

/* ---- effects ---- */

static struct wi_effect *add_effect(struct run *x, int64_t seq, const char *name, int queue,
                                    int what, int reason)
{
    struct wi_result *o = x->out;
    struct wi_effect *e;

    if (o->n_effects == x->cap_effects) {
        int cap = x->cap_effects ? x->cap_effects * 2 : 16;
        e = realloc(o->effects, sizeof(*e) * (size_t)cap);
        if (!e)
            return NULL;
        o->effects = e;
        x->cap_effects = cap;
    }
    e = &o->effects[o->n_effects++];
    memset(e, 0, sizeof(*e));
    e->seq = seq;
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->queue = queue;
    e->what = what;
    e->reason = reason;
    e->by_queue = -1;
    return e;
}

static int pods_dup(const struct wi_pod *src, int n, struct wi_pod **dst)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    *dst = malloc(sizeof(**dst) * (size_t)n);
    if (!*dst)
        return -1;
    memcpy(*dst, src, sizeof(**dst) * (size_t)n);
    return 0;
}

/* The placed pods of w, as wi_pods (malloc'd; NULL when none). */
static int pods_of(const struct sched_workload *w, struct wi_pod **out, int *n)
{
    int k;

    *out = NULL;
    *n = 0;
    for (k = 0; k < w->n_pods; k++)
        *n += w->pods[k].node >= 0;
    if (*n == 0)
        return 0;
    *out = malloc(sizeof(**out) * (size_t)*n);
    if (!*out)
        return -1;
    for (*n = 0, k = 0; k < w->n_pods; k++)
        if (w->pods[k].node >= 0) {
            (*out)[*n].index = k;
            (*out)[*n].node = w->pods[k].node;
            (*out)[(*n)++].devices = w->pods[k].devices;
        }
    return 0;
}

/* ---- Step 3: the changes ---- */

static int find_node(const struct db_snapshot *t, int64_t seq)
{
    int i;

    for (i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].seq == seq)
            return i;
    return -1;
}

/* Quotas, drained and added nodes: one new topology for the copy. */
static int change_topology(struct run *x, const struct wi_change *ch, int n)
{
    struct sched_model *m = x->m;
    struct db_snapshot *t = NULL;
    struct db_node *add = calloc((size_t)n + 1, sizeof(*add));
    int64_t next_seq = m->n_nodes ? m->topo->nodes[m->n_nodes - 1].seq : 0;
    int i, q, n_add = 0, rc = -1;

    if (!add)
        return -1;
    for (i = 0; i < n; i++)
        if (ch[i].kind == WI_ADD_NODE) {
            add[n_add] = *ch[i].node;
            add[n_add].seq = ++next_seq;   /* the newest node: after every other */
            add[n_add].ready = 1;
            if (!add[n_add].labels[0])
                snprintf(add[n_add].labels, sizeof(add[n_add].labels), "{}");
            n_add++;
        }
    if (db_snapshot_copy_topology(m->topo, add, n_add, &t) != DB_OK)
        goto out;
    for (i = 0; i < n; i++) {
        if (ch[i].kind == WI_DRAIN && (q = find_node(t, ch[i].node_seq)) >= 0)
            t->nodes[q].ready = 0;
        if (ch[i].kind != WI_QUOTA)
            continue;
        for (q = 0; q < t->n_queues && t->queues[q].seq != ch[i].queue->seq; q++)
            ;
        if (q < t->n_queues) {
            t->queues[q].n_quotas = ch[i].queue->n_quotas;
            memcpy(t->queues[q].quotas, ch[i].queue->quotas, sizeof(t->queues[q].quotas));
        }
    }
    rc = sm_set_topology(m, t) == DB_OK ? 0 : -1;
out:
    free(add);
    return rc;
}

/* A running workload that a change removes stops for that change. */
static int removed(struct run *x, int i, int reason)
{
    const struct sched_model *m = x->m;
    const struct note *t;
    struct wi_effect *e;

    if (x->note_at && !x->note_at[i] && note_one(x, i) != 0)
        return -1;
    t = note_for(x, i);
    if (!t || t->phase != SCHED_RUNNING)
        return 0;
    e = add_effect(x, t->seq, m->wls[i].name, t->queue, WI_STOP, reason);
    if (!e)
        return -1;
    e->gpu_milli = t->gpu_milli;
    e->n_before = t->n_placed;
    return pods_dup(&x->pods[t->first], t->n_placed, &e->before);
}

/* Deletions, suspensions and the submission, in one sm_apply_rows(). */
static int change_workloads(struct run *x, const struct wi_change *ch, int n)
{
    struct sched_model *m = x->m;
    struct db_snapshot rows;
    struct db_sched_wl sub;
    int64_t *seqs = malloc(sizeof(int64_t) * ((size_t)n + 1)), prev;
    int i, k, n_seqs = 0, rc = 0;

    if (!seqs)
        return -1;
    memset(&rows, 0, sizeof(rows));
    for (i = 0; i < n; i++) {
        if (ch[i].kind != WI_DELETE && ch[i].kind != WI_SUSPEND)
            continue;
        k = sorted_find(m->meta, m->n, meta_seq, ch[i].workload_seq);
        if (k >= 0 && removed(x, k, ch[i].kind == WI_DELETE ? WI_R_DELETE : WI_R_SUSPEND))
            rc = -1;
        seqs[n_seqs++] = ch[i].workload_seq;
    }
    for (i = 0; i < n; i++)
        if (ch[i].kind == WI_SUBMIT) {
            sub = *ch[i].submission;
            sub.seq = x->sub_seq = (m->n ? m->meta[m->n - 1].seq : 0) + 1;
            sub.queued_seq = sub.seq;   /* its own seq, as the database's insert gives it */
            rows.workloads = &sub;
            rows.n_workloads = 1;
            seqs[n_seqs++] = sub.seq;
            break;
        }
    /* sorted and unique, as sm_apply_rows() wants (the submission's is last) */
    for (i = 1; i < n_seqs; i++)
        for (k = i; k > 0 && seqs[k - 1] > seqs[k]; k--) {
            prev = seqs[k - 1];
            seqs[k - 1] = seqs[k];
            seqs[k] = prev;
        }
    for (i = 1, k = n_seqs ? 1 : 0; i < n_seqs; i++)
        if (seqs[i] != seqs[k - 1])
            seqs[k++] = seqs[i];
    if (rc == 0 && k > 0 && sm_apply_rows(m, seqs, k, &rows) != DB_OK)
        rc = -1;
    free(seqs);
    return rc;
}

static int drained_node(const struct sched_model *m, const struct wi_change *ch, int n,
                        int node)
{
    int i;

    for (i = 0; i < n; i++)
        if (ch[i].kind == WI_DRAIN && ch[i].node_seq == m->topo->nodes[node].seq)
            return 1;
    return 0;
}

/* Frees workload i's pods bound to drained nodes; it goes back to Pending
 * (db: a lost node's pods). A trial notes it first, as it is before the
 * change. */
static int free_drained(struct run *x, const struct wi_change *ch, int n, int i)
{
    struct sched_workload *w = &x->m->wls[i];
    int k;

    for (k = 0; k < w->n_pods; k++) {
        int node = w->pods[k].node;
        if (node < 0 || !drained_node(x->m, ch, n, node))
            continue;
        if (x->note_at && !x->note_at[i] && note_one(x, i) != 0)
            return -1;
        w->pods[k].node = -1;
        w->pods[k].devices = 0;
        w->phase = SCHED_PENDING;
        note_for(x, i)->drained = 1;   /* there before the changes: noted */
    }
    return 0;
}

/* Every workload's pods on drained nodes freed. */
static int change_pods(struct run *x, const struct wi_change *ch, int n)
{
    int i;

    for (i = 0; i < x->m->n; i++)
        if (free_drained(x, ch, n, i) != 0)
            return -1;
    return 0;
}

#define DRAIN_LISTED 512   /* workloads on the drained nodes found from the memo, at most */

/* A trial's change_pods(): the workloads on the nodes gone down are those
 * the scheduler's memo placed there (sched_memo_node_workloads(); the
 * image holds its last result applied), so only they are read: a walk of
 * every workload costs the child a cache miss or two each (3 ms at
 * 50,000). The walk when the memo cannot tell, or a drained node was not
 * ready (the delta is full then). */
static int trial_pods(struct run *x, const struct wi_change *ch, int n)
{
    int listed[DRAIN_LISTED], n_listed = 0, i, k;

    for (i = 0; i < x->delta.n_down && !x->delta.full; i++) {
        k = sched_memo_node_workloads(x->memo, x->delta.down[i], listed + n_listed,
                                      DRAIN_LISTED - n_listed);
        if (k < 0 || k > DRAIN_LISTED - n_listed)
            return change_pods(x, ch, n);
        n_listed += k;
    }
    if (x->delta.full)
        return change_pods(x, ch, n);
    for (i = 0; i < n_listed; i++)
        if (listed[i] >= 0 && listed[i] < x->m->n && free_drained(x, ch, n, listed[i]) != 0)
            return -1;
    return 0;
}

/* A trial's drains on the image's model, told as the next cycle would be
 * told a lost node: each drained node that was ready goes into delta.down
 * (one not ready already may hold pods the kept state does not expect: a
 * full delta) and is made NotReady, the quotas are read again
 * (delta.quotas: the `default` department's GPUs follow the ready nodes),
 * and the pods bound there are freed. That is the model sm_set_topology()
 * builds from a topology with those nodes NotReady (a node's readiness is
 * read by nothing else, and the workloads resolve as they did), without
 * writing every workload of the image as its re-resolving would. */
static int drain_trial(struct run *x, const struct wi_change *ch, int n)
{
    struct sched_model *m = x->m;
    int *down = malloc(sizeof(int) * ((size_t)n + 1)), i, j, q;

    if (!down)
        return -1;
    for (i = 0; i < n; i++) {
        if (ch[i].kind != WI_DRAIN || (q = find_node(m->topo, ch[i].node_seq)) < 0)
            continue;
        for (j = 0; j < x->delta.n_down && down[j] != q; j++)
            ;
        if (j < x->delta.n_down)
            continue;   /* named twice: told once */
        if (!m->nodes[q].ready) {
            x->delta.full = 1;
            continue;
        }
        down[x->delta.n_down++] = q;
        m->nodes[q].ready = 0;
    }
    x->delta.down = down;
    x->delta.quotas = 1;
    if (sm_quota_rows(m, NULL, 0) != DB_OK)
        return -1;
    return trial_pods(x, ch, n);
}

static int change_all(struct run *x, const struct wi_change *ch, int n)
{
    int i, topo = 0;

    for (i = 0; i < n; i++)
        topo |= ch[i].kind == WI_QUOTA || ch[i].kind == WI_DRAIN || ch[i].kind == WI_ADD_NODE;
    if (topo && change_topology(x, ch, n) != 0)
        return -1;
    if (change_workloads(x, ch, n) != 0)
        return -1;
    return change_pods(x, ch, n);
}

/* ---- Step 4: the passes ---- */

/* On the note of the workload it names (none: the submission in a copy,
 * which Step 5 reports apart). */
static void note_decision(struct run *x, const struct sched_decision *d)
{
    struct note *t = note_for(x, d->workload);

    if (!t)
        return;
    if (d->kind == SCHED_BIND && t->bind_act < 0)
        t->bind_act = d->action;
    else if (d->kind == SCHED_MOVE)
        t->moved = 1;
    else if (d->kind == SCHED_EVICT) {
        t->evict_act = d->action;
        t->evict_by = d->by_workload;
    }
}

/* Runs passes until one decides nothing; *last is the last pass's result
 * (in arena) and st the state it read. With a memo (a trial on the kept
 * state) each pass goes through sched_cycle_next(), the first with the
 * changes' delta, the others with an empty one (the scheduler thread's
 * own passes); without, sched_cycle_next(NULL) is sched_cycle(). */
static int passes(struct run *x, struct sched_arena *arena, struct sched_state *st,
                  struct sched_result *last)
{
    struct sched_model *m = x->m;
    struct sched_config cfg;
    int pass, i;

    sched_config_default(&cfg);
    for (pass = 0; pass < SM_MAX_PASSES; pass++) {
        sched_arena_reset(arena);
        sm_state(m, x->now, st);
        memset(last, 0, sizeof(*last));
        if (sched_cycle_next(x->memo, st, &x->delta, &cfg, arena, last) != SCHED_OK)
            return -1;
        memset(&x->delta, 0, sizeof(x->delta));   /* the next pass: its decisions only */
        x->out->passes++;
        x->out->decisions += last->n_decisions;
        for (i = 0; i < last->n_decisions; i++) {
            const struct sched_decision *d = &last->decisions[i];
            if (d->workload < 0 || d->workload >= m->n)
                continue;
            if (x->note_at && !x->note_at[d->workload] && note_one(x, d->workload) != 0)
                return -1;
            note_decision(x, d);
            sched_apply_decision(m->wls, m->n, d, x->now);
        }
        /* written only where they moved (a trial's image copies the pages it
         * writes), looked at only when one may have (the trial's image takes
         * a fault at the first touch of each page it reads, too) */
        for (i = 0; last->stale_since_ms && !last->stale_kept && i < m->n; i++)
            if (m->wls[i].stale_since_ms != last->stale_since_ms[i])
                m->wls[i].stale_since_ms = last->stale_since_ms[i];
        if (last->n_decisions == 0)
            break;
    }
    return 0;
}

/* ---- Step 5: what changed ---- */

static int same_pods(const struct note *t, const struct wi_pod *before,
                     const struct sched_workload *w)
{
    int k, n = 0;

    for (k = 0; k < w->n_pods; k++)
        n += w->pods[k].node >= 0;
    if (n != t->n_placed)
        return 0;
    for (k = 0; k < t->n_placed; k++) {
        const struct sched_pod *p = &w->pods[before[k].index];
        if (p->node != before[k].node || p->devices != before[k].devices)
            return 0;
    }
    return 1;
}

static void made_room_for(struct run *x, struct wi_effect *e, int by)
{
    if (by < 0 || by >= x->m->n)
        return;
    e->by_queue = x->m->wls[by].queue;
    snprintf(e->by_name, sizeof(e->by_name), "%s", x->m->wls[by].name);
}

/* Compares workload i with its note; the submission is reported apart. */
static int compare_one(struct run *x, int i)
{
    const struct sched_model *m = x->m;
    const struct sched_workload *w = &m->wls[i];
    const struct note *t = note_for(x, i);
    int was = t && t->phase == SCHED_RUNNING, is = w->phase == SCHED_RUNNING, what, reason;
    static const struct note none = {.bind_act = -1, .evict_act = -1, .evict_by = -1};
    const struct note *a = t ? t : &none;
    struct wi_effect *e;

    if (m->meta[i].seq == x->sub_seq || m->meta[i].left || (!was && !is))
        return 0;   /* the submission, reported apart; one that left, by removed() */
    if (was && is && same_pods(t, &x->pods[t->first], w))
        return 0;
    what = !was ? WI_START : !is ? WI_STOP : WI_MOVE;
    reason = a->drained ? WI_R_DRAIN : what == WI_START ? a->bind_act
             : a->moved && a->evict_act < 0 ? SCHED_ACT_CONSOLIDATE : a->evict_act;
    if (reason < 0)
        reason = what == WI_START ? SCHED_ACT_ALLOCATE : SCHED_ACT_CONSOLIDATE;
    e = add_effect(x, m->meta[i].seq, w->name, w->queue, what, reason);
    if (!e)
        return -1;
    e->gpu_milli = what == WI_STOP ? t->gpu_milli : placed_gpu(m, w);
    if (what != WI_START)
        made_room_for(x, e, a->evict_by);
    if (t && pods_dup(&x->pods[t->first], t->n_placed, &e->before) != 0)
        return -1;
    e->n_before = t ? t->n_placed : 0;
    return pods_of(w, &e->after, &e->n_after);
}

/* The phase the real cycle would write for a placed workload. */
static const char *placed_phase(const struct sched_model *m, const struct sched_workload *w)
{
    int k;

    for (k = 0; k < w->n_pods; k++)
        if (w->pods[k].node >= 0 && !m->topo->nodes[w->pods[k].node].simulated)
            return "Initializing";
    return "Running";
}

static int submission(struct run *x, const struct sched_state *st,
                      const struct sched_result *last)
{
    const struct sched_model *m = x->m;
    struct wi_result *o = x->out;
    int i, k;

    o->phase = "Pending";
    o->phase_reason = "";
    o->pool = -1;
    if (x->sub_seq == 0 || (i = sorted_find(m->meta, m->n, meta_seq, x->sub_seq)) < 0)
        return 0;
    if (m->wls[i].phase == SCHED_RUNNING) {
        o->placed = 1;
        o->phase = placed_phase(m, &m->wls[i]);
        o->gpu_milli = placed_gpu(m, &m->wls[i]);
        if (pods_of(&m->wls[i], &o->pods, &o->n_pods) != 0)
            return -1;
        if (o->n_pods > 0)
            o->pool = m->nodes[o->pods[0].node].pool;
        return 0;
    }
    if ((k = sorted_find(last->pending, last->n_pending, pending_workload, i)) >= 0) {
        o->phase_reason = sched_reason_name(last->pending[k].reason);
        sched_reason_message(st, &last->pending[k], o->phase_message, sizeof(o->phase_message));
    }
    return 0;
}

static void figures_before(struct wi_figures *f, const struct ctl_share *b)
{
    int r;

    for (r = 0; r < 3; r++) {
        f->deserved[r] = b->deserved[r];
        f->fair[r] = b->fair[r];
        f->allocated[r] = b->allocated[r];
    }
    f->known = 1;
}

static int shares(struct run *x, const struct sched_result *last, const struct ctl_share *before,
                  int n_before)
{
    const struct sched_model *m = x->m;
    struct wi_result *o = x->out;
    int q, p, r, b;

    o->shares = calloc((size_t)m->n_queues * (size_t)m->n_pools + 1, sizeof(*o->shares));
    if (!o->shares)
        return -1;
    for (q = 0; q < m->n_queues; q++)
        for (p = 0; p < m->n_pools; p++) {
            struct wi_share *s = &o->shares[o->n_shares++];
            const struct sched_share *a = sched_result_share(last, q, p);
            s->queue = q;
            s->pool = p;
            for (b = 0; b < n_before; b++)
                if (before[b].queue_seq == m->topo->queues[q].seq &&
                    before[b].pool_seq == m->topo->pools[p].seq)
                    figures_before(&s->before, &before[b]);
            for (r = 0; r < 3; r++) {
                s->after.deserved[r] = m->quotas[((size_t)q * (size_t)m->n_pools + (size_t)p) *
                                                     SCHED_NRES + (size_t)r].deserved;
                s->after.fair[r] = a ? a->fair[r] : 0;
                s->after.allocated[r] = a ? a->allocated[r] : 0;
            }
            s->after.known = a != NULL;
        }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

static int compare_all(struct run *x, const struct sched_state *st,
                       const struct sched_result *last, const struct ctl_share *before,
                       int n_before)
{
    int i, k, *noted = NULL;

    if (x->note_at) {   /* a trial: the noted ones, in workload order as below */
        if (!(noted = malloc(sizeof(int) * ((size_t)x->n_notes + 1))))
            return -1;
        for (k = 0; k < x->n_notes; k++)
            noted[k] = x->notes[k].index;
        qsort(noted, (size_t)x->n_notes, sizeof(int), cmp_int);
        for (k = 0; k < x->n_notes; k++)
            if (compare_one(x, noted[k]) != 0)
                break;
        free(noted);
        if (k < x->n_notes)
            return -1;
    }
    for (i = 0; !x->note_at && i < x->m->n; i++)
        if (compare_one(x, i) != 0)
            return -1;
    return submission(x, st, last) || shares(x, last, before, n_before) ? -1 : 0;
}

/* ---- the run ---- */

static void run_free(struct run *x)
{
    free(x->left);
    free(x->notes);
    free(x->pods);
    free(x->note_at);
}

int wi_run_model(struct sched_model *copy, int64_t now_ms, const struct wi_change *changes,
                 int n, const struct ctl_share *before, int n_before, struct wi_result *out)
{
    struct sched_arena *arena = NULL;
    struct sched_result last;
    struct sched_state st;
    struct run x;
    int64_t t0 = clock_mono_us();
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&x, 0, sizeof(x));
    out->m = *copy;
    memset(copy, 0, sizeof(*copy));
    out->pool = -1;
    out->phase = "Pending";
    out->phase_reason = "";
    x.m = &out->m;
    x.now = now_ms;
    x.out = out;
    arena = sched_arena_new();
    if (!arena || note_all(&x) != 0 || change_all(&x, changes, n) != 0 ||
        passes(&x, arena, &st, &last) != 0 || compare_all(&x, &st, &last, before, n_before) != 0)
        goto out;
    rc = 0;
out:
    out->run_us = clock_mono_us() - t0;
    sched_arena_free(arena);
    run_free(&x);
    return rc;
}

/* ---- the kept state: a trial in a forked image ---- */

static int64_t cpu_us(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int drains_only(const struct wi_change *changes, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (changes[i].kind != WI_DRAIN)
            return 0;
    return n > 0;
}

struct trial {
    const struct wi_change *changes;
    int n;
    const struct ctl_share *before;
    int n_before;
};

/* Submissions, deletions, suspensions and quotas: what the incremental
 * path is told as a delta of submissions, departures and moved quotas.
 * Drains alone: a delta of nodes gone down (drain_trial()); a drain with
 * other changes takes the copy (the quotas the drain reads again would
 * undo a quota's change). An added node takes the copy (its name is not in
 * the topology the parent names the answer from). */
static int kept_answers(const struct wi_change *changes, int n)
{
    int i;

    if (drains_only(changes, n))
        return 1;
    for (i = 0; i < n; i++)
        if (changes[i].kind != WI_SUBMIT && changes[i].kind != WI_DELETE &&
            changes[i].kind != WI_SUSPEND && changes[i].kind != WI_QUOTA)
            return 0;
    return n > 0;
}

/* A trial's quotas: written over the image's model (the child's own), as
 * the topology would give them once changed. */
static int change_quotas(struct run *x, const struct wi_change *ch, int n)
{
    const struct db_queue **rows = malloc(sizeof(*rows) * ((size_t)n + 1));
    int i, n_rows = 0, rc;

    if (!rows)
        return -1;
    for (i = 0; i < n; i++)
        if (ch[i].kind == WI_QUOTA)
            rows[n_rows++] = ch[i].queue;
    rc = n_rows == 0 || sm_quota_rows(x->m, rows, n_rows) == DB_OK ? 0 : -1;
    free(rows);
    return rc;
}

/* What the next cycle would be told after the changes (made on the image,
 * which held n_before workloads), as the scheduler thread tells it
 * (sched_loop.c, note_changes()): its own delta so far, the submission
 * appended, the workloads deleted or suspended left in place (keep_left)
 * added to the departures, the quotas moved; anything else makes it
 * full. */
static int trial_delta(struct run *x, const struct sched_delta *told, const struct wi_change *ch,
                       int n, int n_before)
{
    const struct sched_model *m = x->m;
    int i, k, *left = malloc(sizeof(int) * ((size_t)told->n_left + (size_t)n + 1));

    if (!left)
        return -1;
    x->delta = *told;
    for (i = 0; i < n; i++)
        x->delta.quotas |= ch[i].kind == WI_QUOTA;
    if (told->n_left > 0)
        memcpy(left, told->left, sizeof(int) * (size_t)told->n_left);
    x->delta.left = x->left = left;
    if (x->sub_seq && m->n == n_before + 1 && m->meta[n_before].seq == x->sub_seq)
        x->delta.n_submitted++;   /* appended, as a cycle's Step 1 appends it */
    else if (x->sub_seq || m->n != n_before)
        x->delta.full = 1;
    for (i = 0; i < n; i++) {
        if (ch[i].kind != WI_DELETE && ch[i].kind != WI_SUSPEND)
            continue;
        k = sorted_find(m->meta, m->n, meta_seq, ch[i].workload_seq);
        if (k >= 0 && m->meta[k].left)
            left[x->delta.n_left++] = k;
        else if (k >= 0)
            x->delta.full = 1;
    }
    return 0;
}

/* The result's arrays after its fields (result_read() reads them back). */
static int result_put(struct cow_out *o, const struct wi_result *r)
{
    int i, rc = cow_put(o, r, sizeof(*r));

    if (rc == 0 && r->n_effects > 0)
        rc = cow_put(o, r->effects, sizeof(*r->effects) * (size_t)r->n_effects);
    for (i = 0; rc == 0 && i < r->n_effects; i++) {
        if (r->effects[i].n_before > 0)
            rc = cow_put(o, r->effects[i].before,
                         sizeof(struct wi_pod) * (size_t)r->effects[i].n_before);
        if (rc == 0 && r->effects[i].n_after > 0)
            rc = cow_put(o, r->effects[i].after,
                         sizeof(struct wi_pod) * (size_t)r->effects[i].n_after);
    }
    if (rc == 0 && r->n_shares > 0)
        rc = cow_put(o, r->shares, sizeof(*r->shares) * (size_t)r->n_shares);
    if (rc == 0 && r->n_pods > 0)
        rc = cow_put(o, r->pods, sizeof(*r->pods) * (size_t)r->n_pods);
    return rc;
}

/* n elements of `size` from the answer into a new array (NULL when n is 0). */
static int array_get(const char *buf, size_t len, size_t *at, int n, size_t size, void **dst)
{
    *dst = NULL;
    if (n <= 0)
        return n < 0 ? -1 : 0;
    *dst = malloc(size * (size_t)n);
    return *dst ? cow_get(buf, len, at, *dst, size * (size_t)n) : -1;
}

/* The child's result into out, whose model (the topology) is the
 * caller's; the strings it points at (phases, reason names) are the
 * program's own, at the same addresses in both. */
static int result_read(const char *buf, size_t len, struct wi_result *out)
{
    struct wi_result h;
    size_t at = 0;
    int i, rc;

    if (cow_get(buf, len, &at, &h, sizeof(h)) != 0)
        return -1;
    out->placed = h.placed;
    out->phase = h.phase;
    out->phase_reason = h.phase_reason;
    memcpy(out->phase_message, h.phase_message, sizeof(out->phase_message));
    out->pool = h.pool;
    out->gpu_milli = h.gpu_milli;
    out->passes = h.passes;
    out->decisions = h.decisions;
    out->cpu_us = h.cpu_us;
    rc = array_get(buf, len, &at, h.n_effects, sizeof(*out->effects), (void **)&out->effects);
    out->n_effects = rc == 0 ? h.n_effects : 0;
    for (i = 0; i < out->n_effects; i++)
        out->effects[i].before = out->effects[i].after = NULL;
    for (i = 0; rc == 0 && i < out->n_effects; i++) {
        struct wi_effect *e = &out->effects[i];
        rc = array_get(buf, len, &at, e->n_before, sizeof(struct wi_pod), (void **)&e->before);
        if (rc == 0)
            rc = array_get(buf, len, &at, e->n_after, sizeof(struct wi_pod), (void **)&e->after);
    }
    if (rc == 0 && array_get(buf, len, &at, h.n_shares, sizeof(*out->shares),
                             (void **)&out->shares) == 0)
        out->n_shares = h.n_shares;
    else
        rc = -1;
    if (rc == 0 && array_get(buf, len, &at, h.n_pods, sizeof(*out->pods), (void **)&out->pods) == 0)
        out->n_pods = h.n_pods;
    else
        rc = -1;
    return rc == 0 && at == len ? 0 : -1;
}

/* In the child: Steps 2 to 5 on the scheduler's model and memo (the
 * image's), the changes told as the next cycle would be told them
 * (trial_delta()), the result sent back. Drains: Steps 2 to 5 as on a
 * copy, on the image. */
static int trial_child(void *arg, struct cow_out *o)
{
    struct ctl_trial *t = arg;
    const struct trial *tr = t->arg;
    struct sched_arena *arena = sched_arena_new();
    struct sched_result last;
    struct sched_state st;
    struct wi_result r;
    struct run x;
    int n_before = t->m->n, rc = -1;

    memset(&r, 0, sizeof(r));
    memset(&x, 0, sizeof(x));
    r.pool = -1;
    r.phase = "Pending";
    r.phase_reason = "";
    x.m = t->m;
    x.now = t->now_ms;
    x.out = &r;
    if (!arena)
        return -1;
    x.memo = t->memo;
    /* room for the submission, the one workload a change appends */
    if (!(x.note_at = calloc((size_t)n_before + 2, sizeof(int))))
        return -1;
    if (drains_only(tr->changes, tr->n)) {
        if (trial_delta(&x, &t->delta, tr->changes, tr->n, n_before) != 0 ||
            drain_trial(&x, tr->changes, tr->n) != 0)
            return -1;
    } else if (change_quotas(&x, tr->changes, tr->n) != 0 ||
               change_workloads(&x, tr->changes, tr->n) != 0 ||
               trial_delta(&x, &t->delta, tr->changes, tr->n, n_before) != 0) {
        return -1;
    }
    if (passes(&x, arena, &st, &last) == 0 &&
        compare_all(&x, &st, &last, tr->before, tr->n_before) == 0) {
        r.cpu_us = cpu_us(CLOCK_PROCESS_CPUTIME_ID);   /* a new process: since the fork */
        rc = result_put(o, &r);
    }
    return rc;   /* the child exits: nothing to free */
}

/* ALLOT_WHATIF_COPY=1: every run on a copy (benchmarks compare the two). */
static int copy_forced(void)
{
    const char *v = getenv("ALLOT_WHATIF_COPY");

    return v && strcmp(v, "1") == 0;
}

/* The run on the scheduler's kept state; -1 when it cannot answer now (the
 * caller copies the model, out emptied). */
static int run_kept(struct ctl_sched *s, const struct wi_change *changes, int n,
                    const struct ctl_share *before, int n_before, struct wi_result *out)
{
    struct trial tr = {changes, n, before, n_before};
    struct ctl_trial t;
    struct cow_child c;
    char *buf = NULL;
    size_t len = 0;
    int64_t t0 = clock_mono_us();
    int rc;

    memset(&t, 0, sizeof(t));
    t.arg = &tr;
    if (!kept_answers(changes, n) || ctl_sched_trial(s, trial_child, &t, &c) != 0)
        return -1;
    out->copy_us = clock_mono_us() - t0;
    /* while the child runs: the names the answer gives (the child's indices
     * are the model's, whose topology this is) */
    rc = sm_set_names(&out->m, t.topo) == DB_OK ? 0 : -1;
    if (cow_finish(&c, &buf, &len) != 0 || (rc == 0 && result_read(buf, len, out) != 0))
        rc = -1;
    free(buf);
    out->run_us = clock_mono_us() - t0 - out->copy_us;
    out->kept = rc == 0;
    if (rc != 0)
        wi_result_free(out);
    return rc;
}

/* Waits up to WI_WAIT_MS for one of the WI_MAX_RUNS places; 0 taken. */
static int slot_take(void)
{
    struct timespec until;
    int rc = 0;

    clock_deadline(&until, CLOCK_REALTIME, WI_WAIT_MS);
    pthread_mutex_lock(&runs_mu);
    while (runs >= WI_MAX_RUNS && rc == 0)
        rc = pthread_cond_timedwait(&runs_cv, &runs_mu, &until);
    if (runs < WI_MAX_RUNS) {
        runs++;
        rc = 0;
    }
    pthread_mutex_unlock(&runs_mu);
    return rc == 0 ? 0 : -1;
}

int wi_run(struct ctl_sched *s, const struct wi_change *changes, int n,
           const struct ctl_share *before, int n_before, struct wi_result *out)
{
    struct sched_model copy;
    int64_t copy_us = 0, cpu0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (slot_take() != 0)
        return WI_BUSY;
    cpu0 = cpu_us(CLOCK_THREAD_CPUTIME_ID);
    if (!copy_forced() && run_kept(s, changes, n, before, n_before, out) == 0)
        rc = 0;
    else if (ctl_sched_model_copy(s, &copy, &copy_us) == 0) {
        rc = wi_run_model(&copy, clock_now_ms(), changes, n, before, n_before, out);
        out->copy_us = copy_us;
    }
    out->cpu_us += cpu_us(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    pthread_mutex_lock(&runs_mu);
    runs--;
    pthread_cond_signal(&runs_cv);
    pthread_mutex_unlock(&runs_mu);
    return rc;
}

void wi_result_free(struct wi_result *r)
{
    int i;

    for (i = 0; i < r->n_effects; i++) {
        free(r->effects[i].before);
        free(r->effects[i].after);
    }
    free(r->effects);
    free(r->shares);
    free(r->pods);
    sm_free(&r->m);
    memset(r, 0, sizeof(*r));
}
