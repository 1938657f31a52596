/*
 * sched_loop.c: the scheduler thread: refresh the in-memory state, run a
 * cycle, persist its decisions, publish shares and counters, and record
 * allocation samples.
 *
 * One cycle (run_cycle):
 *   Step 1: bring the model (sched_model.c) up to date: everything on the
 *           first cycle or after a failed write (read into a model of its
 *           own before the model lock, which is held to put it in place);
 *           the topology when told it changed (read before the lock too,
 *           unless the organization changed again since); the workloads
 *           named by ctl_sched_touch() (their rows read, the new entries
 *           staged past the model's length and noted in a copy of the
 *           workload mix before the model lock is taken, so that under it
 *           the rows replaced are set, the new ones counted in and the mix
 *           swapped; those touched meanwhile wait for the next turn,
 *           which they wake; no left workload, no compaction); the
 *           agents' nodes where the touched workloads held pods are
 *           marked in o.watch once they are read (a deletion or a
 *           suspension reaches the agent at once: held_nodes());
 *   Step 2: sched_cycle_next() decides on the model's state, with the
 *           changes since the last cycle: the workloads that are new
 *           since then (every touched workload unknown to the model and
 *           younger than all it holds) and the ones that left (a
 *           workload that stopped being live, pending or holding pods,
 *           stays in the model in place, SCHED_COMPLETED with its pods off
 *           their nodes, as sched_model.c's keep_left says; the core runs
 *           the cycle after one that held pods on its kept session), or a
 *           full delta (the first cycle, a reload, a topology
 *           change, any other known workload re-read and changed for
 *           the core: one the same, sched_workload_same(), as after the
 *           heartbeat that started its pods, is no change; more than
 *           LEFT_MAX_FRACTION of the model left); a full delta drops the
 *           left workloads first; the changes of refreshes without a
 *           cycle between (a what-if's) add up until a cycle consumes
 *           them;
 *   Step 3: apply every decision in order with sched_apply_decision() to
 *           the model's workloads, then the stale-gang times;
 *   Step 4: turn every workload that changed (pods, phase, pending reason
 *           or message, stale time) into a db_wl_update (a running
 *           workload with pods left to place, result.waiting, has no
 *           reason and a message saying why they wait; looking, after a
 *           cycle that named what moved since the last one, only at the
 *           workloads it names, the decisions', those whose stale times it
 *           looked at, those read again since and those with a waiting
 *           entry now or at the last write: focus(); every other row
 *           holds what the last write gave it, Invariant 5), plus
 *           events (an
 *           elastic workload that lost pods above its minimum and still
 *           runs gets one Shrunk event naming the pods and GPUs taken, not
 *           an eviction); write the decisions (the updates of workloads
 *           whose pods, phase or stale time changed) with their events
 *           with db_cycle_apply_turns(): first those that free or move
 *           pods (or change only a phase or time), then those that only
 *           place pods, in turns of about TURN_US, so that the
 *           submissions queued behind a fill of thousands of placements
 *           wait for one turn and a commit, not for the whole fill; mark
 *           the agents' nodes those decisions gave or took pods in
 *           o.watch, so that their waiting heartbeats answer (their
 *           agents start and stop the pods at once); then
 *           the reasons and messages of the others with db_reasons_apply()
 *           in pieces of REASONS_PIECE_US, so that they wait for one piece
 *           at most, not for a message per pending workload;
 *   Step 5: publish fair shares and counters for the API, and store the
 *           shares (when they changed, at most every second) for the
 *           replicas that do not schedule, which show those;
 *   Step 6: every sample period, record per queue and pool what is
 *           allocated and deserved, the GPU figures agents measured of
 *           each live pod (db_gpu_samples_record()), and the metrics time
 *           series of the cluster, pools, nodes and workloads
 *           (series_rec.c: taken here, written on the recorder's own
 *           thread in turns of about TURN_US, as Step 4's placements,
 *           while this thread goes on); reload the usage history of time-based
 *           fairshare; once a minute, purge the workloads deleted more
 *           than --retention-days ago.
 * The thread runs a cycle every period, or when woken (a submission,
 * deletion, suspension, resumption or org change), and repeats while a
 * cycle decides something (at most SM_MAX_PASSES times). A submission
 * wakes it from the writer's thread as its commit returns
 * (db_on_submitted()), not from its HTTP worker after. Woken turns take at
 * most a quarter of a core from the HTTP workers and the writer over time
 * (pace(): each turn is paid for by three times its length idle, with
 * WAKE_BURST_US of turns allowed ahead): an idle scheduler starts a woken
 * turn at once, a flood of submissions is taken in turns a gap apart, each
 * taking every workload touched meanwhile; the gap is never longer than
 * the period (a turn of 16 passes over a flood once kept the next one 12 s
 * away, which then wrote the reasons of 30,000 workloads that had waited
 * for it).
 *
 * A pod bound to a simulated node runs at once, so a workload whose pods
 * are all bound there is Running in the same cycle. A workload with pods
 * bound to agents' nodes is Initializing until their agents report them
 * started (api/h_agent.c, db_agent.h). Before each turn, nodes whose agents
 * stopped heartbeating are marked lost and workloads past their project's
 * time or idle limits suspended; the model is then read again.
 *
 * A what-if run (whatif.c) copies the model under the model lock, which
 * this thread holds only while it changes the model (Step 1's merge of
 * rows already read, applying decisions and stale times in Step 3, and
 * what was written after the write, in pieces of WRITTEN_PIECE
 * workloads), never across a database read or
 * write, sched_cycle() or the rendering of messages (this thread alone
 * changes the model, so its own reads need no lock); the run reads the
 * rows touched since Step 1 into its copy and schedules it on its own
 * thread (ctl_sched_model_copy()). A dry run may instead fork between two
 * cycles (ctl_sched_trial(): under run_mu, held for the fork alone) and
 * run on the child's copy-on-write image of the model and the memo.
 *
 * Invariants:
 *   1. Only this thread (or ctl_sched_run_once, under the same lock)
 *      places or evicts pods; the API only frees them.
 *   2. The model equals the database after every successful cycle; after
 *      a failed write (of the decisions or of any piece of reasons) it is
 *      reloaded whole before the next cycle.
 *   3. A stop request lets the current cycle finish and persist.
 *   4. A workload's decision (its pods, phase and events) lands whole;
 *      the cycle's decisions land in turns whose every prefix the cluster
 *      can hold (db/snapshot.c: what frees or moves first, then
 *      placements on what is free). A failed turn, or a crash between
 *      turns, leaves the workloads of the turns that did not land as
 *      the database had them before the cycle (Pending, no pods): the
 *      model is reloaded (invariant 2) and the next cycle decides them
 *      again. A crash between the decisions and the last piece of reasons
 *      leaves some rows with an earlier cycle's reason and message, each
 *      pair written together.
 *   5. After a successful write, every workload's row holds the phase,
 *      pods, stale time and pending reason and message of the result it
 *      was written from, and the model notes which (meta reason, message
 *      hash, the numbers said); so the next write looks only at what
 *      moved. A failed write reloads the model, and the next cycle is a
 *      full one, looked at whole. ALLOT_SCHED_CHECK=1 (the test suite)
 *      makes each focused write be compared with a full one (the same
 *      updates, events and numbers), and allotd stop at a difference.
 */
#include "control.h"
#include "clock.h"
#include "cow.h"
#include "arrays.h"
#include "thread_role.h"
#include "db_agent.h"
#include "db_ha.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched.h"

#define RETENTION_MS (8LL * 24 * 3600 * 1000)
#define PURGE_PERIOD_MS 60000
#define REASONS_PIECE_US 500    /* one write of reasons and messages runs this long at most */
#define TURN_US 500            /* one turn of a cycle's placements runs about this long */
#define TRIAL_WAIT_MS 100       /* a trial waits this long for a turn in progress */
#define WRITTEN_PIECE 2048     /* workloads noted as written per hold of the model lock */
#define SHARES_PERIOD_MS 1000  /* the leader stores its shares at most this often */
#define LOG_KEEP_MS (10LL * 60 * 1000) /* the change log: far past any reader's gap wait */
#define LEFT_MAX_FRACTION 16   /* left workloads beyond 256 + n / this: a full cycle drops them */
#define WAKE_BURST_US 10000    /* turn time woken turns may run ahead of their quarter of a core */

const double ctl_hist_bounds[CTL_HIST_BUCKETS - 1] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025, 0.05, 0.1, 0.25, 0.5, 1.0};
const char *const ctl_eviction_reasons[3] = {"Reclaimed", "Preempted", "StaleGang"};
const double ctl_hold_bounds[CTL_HOLD_BUCKETS - 1] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                      0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
const char *const ctl_lock_names[CTL_LOCKS] = {"state", "model", "write"};

struct shrink;

/* What persist_cycle() marks per model workload (struct persist's [n]
 * arrays), kept from cycle to cycle so that a cycle pays for the
 * workloads it marks, not for the model: each mark is cleared once its
 * cycle is done (marks_clear()). Unmarked: pend -1, the rest 0. */
struct marks {
    int *pend;                  /* index into result.pending, or waiting_code()'s -2 - k
                                   for result.waiting[k] */
    unsigned char *touched;     /* a decision names it */
    unsigned char *freed;       /* a pod of it was evicted or moved */
    unsigned char *restaled;    /* its stale-gang time changed */
    char *orig;                 /* a touched workload's phase before the cycle */
    struct shrink *shrunk;      /* pods an elastic workload lost one by one */
    unsigned char *running;     /* counted in n_running (not cleared: count_running()) */
    int cap;
};

struct ctl_sched {
    struct db *db;
    struct ctl_sched_opts o;
    pthread_t th;
    int started;
    pthread_mutex_t mu;     /* wake, stop, dirty, stats, shares */
    pthread_cond_t cv;
    int wake, stop;
    int64_t *dirty;         /* workload seqs touched since the last cycle */
    int n_dirty, cap_dirty;
    int org_dirty;
    uint64_t org_generation;   /* advances on every ctl_sched_org_changed() */
    struct ctl_sched_stats stats;
    struct ctl_share *shares;
    int n_shares;
    pthread_mutex_t run_mu; /* one cycle at a time; guards everything below */
    pthread_mutex_t model_mu; /* m and loaded while this thread changes them (Steps 1
                               * and 3), and a what-if run's copy; never held
                               * across sched_cycle() or a database write */
    struct sched_arena *arena;
    struct sched_memo *memo;    /* what the last cycle lets the next reuse */
    struct sched_delta delta;   /* the model's changes since the last cycle */
    int *left;                  /* delta.left's storage: model indices */
    int n_left, cap_left;
    int *waited;                /* the workloads of the last written cycle's waiting
                                   entries (model indices): a message to clear or redo */
    int n_waited;
    struct sched_model m;
    struct ctl_series_rec *series;
    int loaded;
    int64_t next_sample_ms;
    int64_t next_purge_ms;  /* deleted workloads past the retention are purged then */
    int64_t started_ms;     /* agents' heartbeats count from here at the earliest */
    int64_t epoch;          /* the leadership the model was loaded under: 0 following,
                             * -1 leading alone (no leader given) */
    int followed;           /* a turn as a follower was done */
    struct ctl_feed *feed;  /* the change log: what other replicas changed */
    struct ctl_share *written;  /* the shares last stored for the other replicas */
    int n_written;
    int64_t next_shares_ms;
    int64_t next_log_purge_ms;
    int turn_rows;          /* placements per turn of the write, learnt (db_turns) */
    struct marks marks;
    int n_running;          /* the model's running workloads, as count_running() left it */
    int *reread;            /* known workloads read again since the last cycle (model */
    int n_reread, cap_reread; /* indices; none taken while the delta is full) */
    int check_focus;        /* ALLOT_SCHED_CHECK: each focused write checked against a
                               full one */
};

/* ---- lock holds: how long this thread keeps requests waiting ---- */

/* This thread's CPU time: a hold's wall time less what it spent waiting
 * for a core is what the holder ran. A system call, so never read while
 * a lock is held: returning from one is where the kernel preempts a
 * thread whose turn is over, and a thread preempted holding the state
 * mutex kept every submission waiting (tens of ms under load). */
static int64_t thread_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Counts one hold of `lock` that lasted `us`, `cpu_us` of it on the
 * holder's CPU (-1: not measured); the caller holds sc->mu. */
static void count_hold(struct ctl_sched_stats *st, enum ctl_lock lock, int64_t us,
                       int64_t cpu_us)
{
    int b = 0;

    while (b < CTL_HOLD_BUCKETS - 1 && (double)us > ctl_hold_bounds[b] * 1e6)
        b++;
    st->holds[lock]++;
    st->hold_us_total[lock] += us;
    st->hold_hist[lock][b]++;
    if (us > st->hold_max_us[lock])
        st->hold_max_us[lock] = us;
    if (cpu_us > st->hold_cpu_max_us[lock])
        st->hold_cpu_max_us[lock] = cpu_us;
}

/* When a hold began: the wall clock once the lock was taken, and this
 * thread's CPU clock before it was asked for (-1: not read). */
struct held_since {
    int64_t us, cpu_us;
};

/* The scheduler thread takes its state lock with state_lock() and gives
 * it back with state_unlock(), which counts the hold (its CPU time is not
 * read: that would be a system call under the mutex every submission
 * takes, and nothing but counters runs under it). */
static struct held_since state_lock(struct ctl_sched *sc)
{
    struct held_since h = {0, -1};

    pthread_mutex_lock(&sc->mu);
    h.us = clock_mono_us();
    return h;
}

static void state_unlock(struct ctl_sched *sc, struct held_since since)
{
    count_hold(&sc->stats, CTL_LOCK_STATE, clock_mono_us() - since.us, -1);
    pthread_mutex_unlock(&sc->mu);
}

/* Counts a hold of the model lock or the writer, once it is over. */
static void note_hold(struct ctl_sched *sc, enum ctl_lock lock, int64_t us, int64_t cpu_us)
{
    pthread_mutex_lock(&sc->mu);
    count_hold(&sc->stats, lock, us, cpu_us);
    pthread_mutex_unlock(&sc->mu);
}

/* A turn of the sample's series write (series_rec.c) held the writer. */
static void note_write_hold(void *sc, int64_t us, int64_t cpu_us)
{
    note_hold(sc, CTL_LOCK_WRITE, us, cpu_us);
}

/* This thread changes the model between model_lock() and model_unlock(),
 * which counts the hold; its CPU clock is read before the lock is taken
 * and after it is given back, so the CPU time counted includes taking
 * and giving it back. */
static struct held_since model_lock(struct ctl_sched *sc)
{
    struct held_since h = {0, thread_cpu_us()};

    pthread_mutex_lock(&sc->model_mu);
    h.us = clock_mono_us();
    return h;
}

static void model_unlock(struct ctl_sched *sc, struct held_since since)
{
    int64_t us = clock_mono_us() - since.us;

    pthread_mutex_unlock(&sc->model_mu);
    note_hold(sc, CTL_LOCK_MODEL, us, thread_cpu_us() - since.cpu_us);
}

/* ---- Step 1 ---- */

/* Takes the touched workloads: all of them (upto < 0), or the first
 * upto, those Step 1 read before the lock; the ones touched since stay
 * for the next turn, which they wake, so that no database read runs under
 * the model lock. */
static int take_dirty(struct ctl_sched *sc, int upto, int64_t **seqs, int *n, int *org)
{
    struct held_since locked = state_lock(sc);
    int rest = upto >= 0 && upto < sc->n_dirty ? sc->n_dirty - upto : 0;
    int64_t *kept = rest > 0 ? malloc(sizeof(*kept) * (size_t)rest) : NULL;

    if (kept) {
        memcpy(kept, sc->dirty + upto, sizeof(*kept) * (size_t)rest);
        sc->n_dirty = upto;
    }
    *seqs = sc->dirty;
    *n = sc->n_dirty;
    *org = sc->org_dirty;
    sc->dirty = kept;
    sc->n_dirty = sc->cap_dirty = kept ? rest : 0;
    sc->org_dirty = 0;
    sc->wake |= kept != NULL;
    state_unlock(sc, locked);
    return 0;
}

/* A known workload, model entry `at` (-1: gone from the model), was read
 * again and is not the same to the core: one that left goes into the
 * delta's list of departures; anything else makes the delta full. */
static void note_known(struct ctl_sched *sc, int at)
{
    int cap;
    int *nl;

    if (at < 0 || !sc->m.meta[at].left) {
        sc->delta.full = 1;
        return;
    }
    if (sc->n_left == sc->cap_left) {
        cap = sc->cap_left ? sc->cap_left * 2 : 64;
        nl = realloc(sc->left, sizeof(*nl) * (size_t)cap);
        if (!nl) {
            sc->delta.full = 1;
            return;
        }
        sc->left = nl;
        sc->cap_left = cap;
    }
    sc->left[sc->n_left++] = at;
}

/* Known workload `at` was read again: its row may need writing even
 * when the core sees no change (a focused write visits it). */
static void note_reread(struct ctl_sched *sc, int at)
{
    int cap, *nr;

    if (sc->n_reread == sc->cap_reread) {
        cap = sc->cap_reread ? sc->cap_reread * 2 : 64;
        nr = realloc(sc->reread, sizeof(*nr) * (size_t)cap);
        if (!nr) {
            sc->delta.full = 1;   /* a full cycle: a full write */
            return;
        }
        sc->reread = nr;
        sc->cap_reread = cap;
    }
    sc->reread[sc->n_reread++] = at;
}

/* What a refresh of seqs[0..n) did to the model, which held n_before
 * workloads, the youngest of seq last_seq: new workloads alone (appended
 * in seq order after every known one), known ones that left, known ones
 * read again and the same to the core (nothing to tell: a heartbeat that
 * started a workload's pods), or anything else (a full delta). */
static void note_changes(struct ctl_sched *sc, const int64_t *seqs, int n, int n_before,
                         int64_t last_seq)
{
    int i, at;

    /* one lookup per known workload (a new one, younger than all the model
     * held, is counted below and was never read again), under the model
     * lock: a flood of submissions costs no lookup each */
    for (i = 0; i < n; i++) {
        if (seqs[i] > last_seq)
            continue;
        at = sm_workload_index(&sc->m, seqs[i]);
        if (!sc->delta.full && (at < 0 || sc->m.meta[at].left || sc->m.meta[at].reread_changed))
            note_known(sc, at);
        if (at >= 0)   /* told: the delta is full, or nothing read again changed */
            sc->m.meta[at].reread_changed = 0;
        if (at >= 0 && !sc->delta.full)
            note_reread(sc, at);
    }
    if (sc->m.n < n_before || sc->m.n_left > 256 + sc->m.n / LEFT_MAX_FRACTION)
        sc->delta.full = 1;
    else
        sc->delta.n_submitted += sc->m.n - n_before;
}

/* A full delta starts from a model without left workloads. */
static void drop_left(struct ctl_sched *sc)
{
    sm_drop_left(&sc->m);
    sc->n_left = 0;
    sc->delta.full = 1;
}

/* Step 1's reading, done before the model lock: the rows of the
 * workloads touched so far. The list of touched workloads only grows
 * until this thread takes it (under run_mu, as this runs), so its first
 * n_peeked entries are what was read here; the ones touched later stay
 * touched for the next turn (take_dirty), whose rows then win. */
struct prefetch {
    int64_t *seqs;              /* sorted, unique */
    int n_peeked, n;
    struct db_snapshot *rows;
    struct sm_built built;      /* the new workloads' entries, built from rows */
    struct db_snapshot *topo;   /* the topology, read when the organization changed */
    uint64_t org_generation;    /* ... as of this ctl_sched_org_generation() */
};

static int peek_dirty(struct ctl_sched *s, int64_t **seqs, int *n, int *org);

static int cmp_seq(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void prefetch(struct ctl_sched *sc, struct prefetch *pf)
{
    int org, i, u = 0;

    memset(pf, 0, sizeof(*pf));
    if (!sc->loaded || peek_dirty(sc, &pf->seqs, &pf->n_peeked, &org) != 0)
        return;
    if (org) {   /* read first, then the topology: a later change moves it */
        pf->org_generation = ctl_sched_org_generation(sc);
        if (db_topology_load(sc->db, &pf->topo) != DB_OK)
            pf->topo = NULL;
    }
    qsort(pf->seqs, (size_t)pf->n_peeked, sizeof(*pf->seqs), cmp_seq);
    for (i = 0; i < pf->n_peeked; i++)
        if (u == 0 || pf->seqs[u - 1] != pf->seqs[i])
            pf->seqs[u++] = pf->seqs[i];
    pf->n = u;
    if (u > 0 && db_workloads_load(sc->db, pf->seqs, u, &pf->rows) != DB_OK)
        pf->rows = NULL;
    /* reading the model needs no lock: only this thread changes it */
    if (pf->rows && sm_rows_build(&sc->m, pf->seqs, pf->n, pf->rows, &pf->built) != DB_OK) {
        db_snapshot_free(pf->rows);
        pf->rows = NULL;
    }
}

static void prefetch_free(struct prefetch *pf)
{
    db_snapshot_free(pf->topo);
    sm_built_free(&pf->built);
    free(pf->seqs);
    db_snapshot_free(pf->rows);
}

/* Step 1 of a turn that must load the model whole, before the lock: the
 * touched workloads are taken first (one touched after this read is read
 * again next turn), then everything is read into a model of its own. */
static int load_aside(struct ctl_sched *sc, struct sched_model *fresh)
{
    int64_t *seqs;
    int n, org;

    memset(fresh, 0, sizeof(*fresh));
    take_dirty(sc, -1, &seqs, &n, &org);
    free(seqs);
    return sm_load(fresh, sc->db) == DB_OK ? 0 : -1;
}

/* Agents' nodes (seqs) to mark in o.watch once what changed them is
 * written or read (assign_watch.c). */
struct watch_nodes {
    int64_t *seq;
    int n, cap;
};

/* Notes node (a model index, -1: none) when an agent runs it (a simulated
 * node has none); without memory its agent learns at the end of its wait,
 * as without a watch. */
static void watch_note(const struct ctl_sched *sc, struct watch_nodes *l, int node)
{
    int64_t *grown;
    int cap;

    if (!sc->o.watch || node < 0 || sc->m.topo->nodes[node].simulated)
        return;
    if (l->n == l->cap) {
        cap = l->cap ? l->cap * 2 : 16;
        grown = realloc(l->seq, sizeof(*grown) * (size_t)cap);
        if (!grown)
            return;
        l->seq = grown;
        l->cap = cap;
    }
    l->seq[l->n++] = sc->m.topo->nodes[node].seq;
}

/* The agents' nodes the touched workloads seqs[0..n) hold pods on in the
 * model, before it reads them again: a workload deleted, suspended or
 * ended there has had its pods freed by the time it is touched, and its
 * agent is told at once once the read is done. */
static void held_nodes(const struct ctl_sched *sc, const int64_t *seqs, int n,
                       struct watch_nodes *l)
{
    const struct sched_model *m = &sc->m;
    int i, k, w;

    for (i = 0; sc->o.watch && sc->loaded && i < n; i++) {
        w = sm_workload_index(m, seqs[i]);
        for (k = 0; w >= 0 && k < m->wls[w].n_pods; k++)
            watch_note(sc, l, m->wls[w].pods[k].node);
    }
}

/* Under the model lock. fresh: a model load_aside() read, put in place
 * of the one to load (which it then holds, to be freed after the lock). */
static int refresh(struct ctl_sched *sc, struct prefetch *pf, struct sched_model *fresh)
{
    struct watch_nodes held = {NULL, 0, 0};
    int64_t *seqs, last_seq;
    int n, org, n_before, skip = 0, rc = DB_OK;

    if (!sc->loaded && fresh) {
        struct sched_model old = sc->m;
        sc->m = *fresh;
        *fresh = old;
        sc->loaded = 1;
        sc->m.keep_left = 1;
        drop_left(sc);
        return 0;
    }
    take_dirty(sc, pf && pf->rows ? pf->n_peeked : -1, &seqs, &n, &org);
    held_nodes(sc, seqs, n, &held);
    if (!sc->loaded) {
        rc = sm_load(&sc->m, sc->db);
        sc->loaded = rc == DB_OK;
        sc->m.keep_left = 1;
        drop_left(sc);
    } else {
        n_before = sc->m.n;
        last_seq = n_before > 0 ? sc->m.meta[n_before - 1].seq : 0;
        if (org && pf && pf->topo && ctl_sched_org_generation(sc) == pf->org_generation) {
            rc = sm_set_topology(&sc->m, pf->topo);   /* read before the lock */
            pf->topo = NULL;
            sc->delta.full = 1;
        } else if (org) {
            rc = sm_load_topology(&sc->m, sc->db);   /* it changed since: read it here */
            sc->delta.full = 1;
        }
        if (rc == DB_OK && pf && pf->rows) {
            /* entries built against the topology just replaced are not used */
            if (org)
                sm_built_free(&pf->built);
            rc = org ? sm_apply_rows(&sc->m, pf->seqs, pf->n, pf->rows)
                     : sm_rows_take(&sc->m, &pf->built);
            skip = pf->n_peeked;
        }
        if (rc == DB_OK) /* seqs is NULL when nothing is dirty: no arithmetic on NULL */
            rc = sm_refresh(&sc->m, sc->db, seqs ? seqs + skip : NULL, n - skip);
        if (rc == DB_OK)
            note_changes(sc, seqs, n, n_before, last_seq);
        else
            sc->loaded = 0; /* start over from the database next time */
        if (rc == DB_OK && sc->delta.full)
            drop_left(sc);
    }
    ctl_watch_mark(sc->o.watch, held.seq, held.n);
    free(held.seq);
    free(seqs);
    return rc == DB_OK ? 0 : -1;
}

/* ---- Step 3 and 4: from decisions to rows ---- */

/* Messages of one cycle, appended to one buffer; offsets until the end. */
struct strpool {
    char *buf;
    size_t n, cap;
};

static size_t pool_add(struct strpool *p, const char *s)
{
    size_t len = strlen(s) + 1, at = p->n;

    if (p->n + len > p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 65536;
        char *nb;
        while (cap < p->n + len)
            cap *= 2;
        nb = realloc(p->buf, cap);
        if (!nb)
            return (size_t)-1;
        p->buf = nb;
        p->cap = cap;
    }
    memcpy(p->buf + at, s, len);
    p->n += len;
    return at;
}

/* What one cycle took from a workload pod by pod (elastic pods above its
 * minimum): told once, after every decision is applied. */
struct shrink {
    int pods;
    int whole;                           /* evicted whole too: that event tells it */
    int64_t gpu_milli;
    const struct sched_decision *last;   /* the action and for whom */
    int64_t pool_seq;                    /* the node pool of the last pod taken */
};

struct persist {
    struct db_wl_update *ups;
    struct db_wl_event *evs;
    struct db_sched_pod *pods;
    size_t *up_msg, *ev_msg;    /* offsets into msgs until resolved */
    int *up_wl;                 /* the model index of each update */
    unsigned char *up_decided;  /* the update belongs to the cycle's decisions */
    uint64_t *up_hash;          /* its message's hash, for written() */
    /* [n] each, the thread's struct marks (not owned) */
    int *pend;
    unsigned char *touched, *freed, *restaled;
    char *orig;
    struct shrink *shrunk;
    int *stale_at;              /* workloads whose stale-gang time may change */
    int n_stale_at;
    int *decided;               /* the workloads decisions name, ascending, each once */
    int n_dec;
    int *visit;                 /* the workloads Step 4 looks at, ascending (NULL: all) */
    int n_visit;
    int *said_wl, *said_pe;     /* numbers a message was made from, to remember */
    struct strpool msgs;
    int64_t evictions[3];
    int n_ups, n_evs, cap_evs, n_said, n_decided;
    int n_evs_applied;          /* events apply_decisions() added, before collect()'s */
    int n_placing;              /* the last of the decided: they only place pods */
    struct watch_nodes watched; /* agents' nodes the decisions give or take pods */
    int failed;
};

static void persist_free(struct persist *p)
{
    free(p->watched.seq);
    free(p->ups);
    free(p->evs);
    free(p->pods);
    free(p->up_msg);
    free(p->ev_msg);
    free(p->up_wl);
    free(p->up_decided);
    free(p->up_hash);
    free(p->said_wl);
    free(p->said_pe);
    free(p->msgs.buf);
}

/* arr grown from `from` to `cap` entries of `elem` bytes, the new ones 0;
 * NULL (arr unchanged) when there is no memory. */
static void *grown_zeroed(void *arr, size_t elem, int from, int cap)
{
    char *p = realloc(arr, elem * (size_t)cap);

    if (p)
        memset(p + elem * (size_t)from, 0, elem * (size_t)(cap - from));
    return p;
}

/* The marks hold `n` workloads; the ones added unmarked. On failure the
 * arrays grown so far keep their marks and cap stays. */
static int marks_reserve(struct marks *mk, int n)
{
    int cap = mk->cap, i;
    void *p;

    if (n <= mk->cap)
        return 0;
    while (cap < n)
        cap = cap ? 2 * cap : 1024;
#define MARKS_GROW(field)                                                              \
    do {                                                                               \
        if (!(p = grown_zeroed(mk->field, sizeof(*mk->field), mk->cap, cap)))          \
            return -1;                                                                 \
        mk->field = p;                                                                 \
    } while (0)
    MARKS_GROW(pend);
    MARKS_GROW(touched);
    MARKS_GROW(freed);
    MARKS_GROW(restaled);
    MARKS_GROW(orig);
    MARKS_GROW(shrunk);
    MARKS_GROW(running);
#undef MARKS_GROW
    for (i = mk->cap; i < cap; i++)
        mk->pend[i] = -1;
    mk->cap = cap;
    return 0;
}

/* p's [n] arrays are the thread's marks. */
static void use_marks(struct persist *p, const struct marks *mk)
{
    p->pend = mk->pend;
    p->touched = mk->touched;
    p->freed = mk->freed;
    p->restaled = mk->restaled;
    p->orig = mk->orig;
    p->shrunk = mk->shrunk;
}

static void marks_free(struct marks *mk)
{
    free(mk->pend);
    free(mk->touched);
    free(mk->freed);
    free(mk->restaled);
    free(mk->orig);
    free(mk->shrunk);
    free(mk->running);
}

/* Every mark a cycle set, cleared: those of the workloads its decisions
 * name and whose stale times it looked at, and the pending indices it
 * noted (of the workloads it visited, or of every pending entry). */
static void marks_clear(struct persist *p, const struct sched_result *res, int pend_all)
{
    int i;

    for (i = 0; i < p->n_dec; i++) {
        p->touched[p->decided[i]] = p->freed[p->decided[i]] = 0;
        memset(&p->shrunk[p->decided[i]], 0, sizeof(*p->shrunk));
    }
    for (i = 0; i < p->n_stale_at; i++)
        p->restaled[p->stale_at[i]] = 0;
    if (pend_all) {
        for (i = 0; i < res->n_pending; i++)
            if (res->pending[i].workload >= 0)
                p->pend[res->pending[i].workload] = -1;
        for (i = 0; i < res->n_waiting; i++)
            if (res->waiting[i].workload >= 0)
                p->pend[res->waiting[i].workload] = -1;
    } else {
        for (i = 0; i < p->n_visit; i++)
            p->pend[p->visit[i]] = -1;
    }
}

static int eviction_index(int action)
{
    switch (action) {
    case SCHED_ACT_RECLAIM: return 0;
    case SCHED_ACT_PREEMPT: return 1;
    case SCHED_ACT_STALE_GANG: return 2;
    default: return 0;
    }
}

/* An event of workload seq; pool_seq: the node pool an eviction took
 * its pods from (0: none). */
static void add_event(struct persist *p, int64_t seq, const char *type, const char *reason,
                      const char *msg, int64_t pool_seq)
{
    size_t at;

    if (p->n_evs == p->cap_evs) {
        int cap = p->cap_evs ? p->cap_evs * 2 : 64;
        struct db_wl_event *e = realloc(p->evs, sizeof(*e) * (size_t)cap);
        size_t *o = e ? realloc(p->ev_msg, sizeof(*o) * (size_t)cap) : NULL;
        if (e)
            p->evs = e;
        if (o)
            p->ev_msg = o;
        if (!e || !o) {
            p->failed = 1;
            return;
        }
        p->cap_evs = cap;
    }
    at = pool_add(&p->msgs, msg);
    if (at == (size_t)-1) {
        p->failed = 1;
        return;
    }
    p->evs[p->n_evs].workload_seq = seq;
    p->evs[p->n_evs].type = type;
    p->evs[p->n_evs].reason = reason;
    p->evs[p->n_evs].pool_seq = pool_seq;
    p->ev_msg[p->n_evs++] = at;
}

/* " to make room for B of PROJECT", or "" */
static void for_whom(const struct sched_model *m, const struct sched_decision *d, char *buf,
                     size_t len)
{
    buf[0] = 0;
    if (d->by_workload >= 0)
        snprintf(buf, len, " to make room for %s of %s", m->wls[d->by_workload].name,
                 m->queues[m->wls[d->by_workload].queue].name);
}

/* The node pool (its seq) of the pods decision d evicts, read before it
 * applies: its pod's, or for a whole workload its first placed pod's; 0
 * if none is placed. */
static int64_t evicted_pool(const struct sched_model *m, const struct sched_decision *d)
{
    const struct sched_workload *w;
    int k = d->pod, node = -1;

    if (d->kind != SCHED_EVICT || d->workload < 0 || d->workload >= m->n)
        return 0;
    w = &m->wls[d->workload];
    if (k >= 0 && k < w->n_pods)
        node = w->pods[k].node;
    for (k = 0; d->pod < 0 && k < w->n_pods && node < 0; k++)
        node = w->pods[k].node;
    if (node < 0 || node >= m->n_nodes || m->nodes[node].pool < 0 ||
        m->nodes[node].pool >= m->n_pools)
        return 0;
    return m->topo->pools[m->nodes[node].pool].seq;
}

static void eviction_event(struct ctl_sched *sc, struct persist *p,
                           const struct sched_decision *d, int64_t pool_seq)
{
    const struct sched_model *m = &sc->m;
    char msg[DB_MSG_LEN], whom[DB_NAME_LEN * 2 + 32];
    int e = eviction_index(d->action);

    for_whom(m, d, whom, sizeof(whom));
    snprintf(msg, sizeof(msg), "%s was evicted by %s%s; it goes back to Pending",
             m->wls[d->workload].name, sched_action_name(d->action), whom);
    p->evictions[e]++;
    add_event(p, m->meta[d->workload].seq, "Warning", ctl_eviction_reasons[e], msg, pool_seq);
}

/* An elastic workload that lost pods above its minimum and still runs. */
static void shrink_event(struct ctl_sched *sc, struct persist *p, int wi)
{
    const struct sched_model *m = &sc->m;
    const struct sched_workload *w = &m->wls[wi];
    const struct shrink *s = &p->shrunk[wi];
    char msg[DB_MSG_LEN], whom[DB_NAME_LEN * 2 + 32], gpus[32];
    int k, running = 0, e = eviction_index(s->last->action);

    for (k = 0; k < w->n_pods; k++)
        running += w->pods[k].node >= 0;
    for_whom(m, s->last, whom, sizeof(whom));
    snprintf(gpus, sizeof(gpus), "%.2f", (double)s->gpu_milli / 1000.0);
    snprintf(msg, sizeof(msg), "%s was shrunk by %s%s: %d pod%s and %s GPU%s taken; it keeps "
             "running with %d of its %d pods", w->name, sched_action_name(s->last->action),
             whom, s->pods, s->pods == 1 ? "" : "s", gpus, s->gpu_milli == 1000 ? "" : "s",
             running, w->n_pods);
    p->evictions[e]++;
    add_event(p, m->meta[wi].seq, "Warning", "Shrunk", msg, s->pool_seq);
}

static void decision_event(struct ctl_sched *sc, struct persist *p, const struct sched_decision *d,
                           int64_t pool_seq)
{
    const struct sched_model *m = &sc->m;
    const struct sched_workload *w = &m->wls[d->workload];
    char msg[DB_MSG_LEN];

    if (d->kind == SCHED_BIND)
        return;
    if (d->kind == SCHED_EVICT) {
        if (d->pod < 0)
            eviction_event(sc, p, d, pool_seq);
        return;
    }
    snprintf(msg, sizeof(msg), "pod %d of %s moved to %s by %s", d->pod, w->name,
             m->nodes[d->node].name, sched_action_name(d->action));
    add_event(p, m->meta[d->workload].seq, "Normal", "Moved", msg, 0);
}

/* The phase a workload shows: Pending, or when placed, Initializing while
 * it waits for an agent (it was, or its pods changed and some are on an
 * agent's node), else Running. */
static const char *placed_phase(const struct ctl_sched *sc, const struct persist *p, int wi)
{
    const struct sched_workload *w = &sc->m.wls[wi];
    int k;

    if (w->phase != SCHED_RUNNING)
        return "Pending";
    if (sc->m.meta[wi].initializing)
        return "Initializing";
    for (k = 0; p->touched[wi] && k < w->n_pods; k++)
        if (w->pods[k].node >= 0 && !sc->m.topo->nodes[w->pods[k].node].simulated)
            return "Initializing";
    return "Running";
}

static void running_event(struct ctl_sched *sc, struct persist *p, int wi)
{
    const struct sched_workload *w = &sc->m.wls[wi];
    int waits = strcmp(placed_phase(sc, p, wi), "Initializing") == 0;
    char msg[DB_MSG_LEN];
    size_t used;
    int k;

    used = (size_t)snprintf(msg, sizeof(msg), "%s %s: %d pod%s placed on", w->name,
                            waits ? "is scheduled" : "is running", w->n_pods,
                            w->n_pods == 1 ? "" : "s");
    for (k = 0; k < w->n_pods && used < sizeof(msg) - 1; k++)
        if (w->pods[k].node >= 0)
            used += (size_t)snprintf(msg + used, sizeof(msg) - used, " %s",
                                     sc->m.nodes[w->pods[k].node].name);
    if (waits && used < sizeof(msg) - 1)
        snprintf(msg + used, sizeof(msg) - used, "; waiting for the agents to start it");
    add_event(p, sc->m.meta[wi].seq, "Normal", waits ? "Scheduled" : "Running", msg, 0);
}

/* A mark of struct marks' pend: pending entry k is k, waiting entry k
 * (a running workload's pods left to place) -2 - k, none -1. */
static int waiting_code(int k)
{
    return -2 - k;
}

static const struct sched_pending *entry_of(const struct sched_result *res, int code)
{
    if (code >= 0)
        return &res->pending[code];
    return code <= -2 ? &res->waiting[-2 - code] : NULL;
}

/* A running workload's message for its pods left to place: how many run,
 * then why the others wait, in a pending workload's words ("2 of 3
 * replicas placed; the other 1 waits: needs 1 GPU; ..."). */
static void waiting_message(const struct sched_state *st, const struct sched_workload *w,
                            const struct sched_pending *pe, char *msg, size_t len)
{
    const char *what = w->type == SCHED_INFERENCE ? "replicas" : "pods";
    int k, placed = 0, n;

    for (k = 0; k < w->n_pods; k++)
        placed += w->pods[k].node >= 0;
    n = snprintf(msg, len, "%d of %d %s placed; the other %d wait%s: ", placed, w->n_pods,
                 what, w->n_pods - placed, w->n_pods - placed == 1 ? "s" : "");
    if (n > 0 && (size_t)n < len)
        sched_reason_message(st, pe, msg + n, len - (size_t)n);
}

static int same_numbers(const struct sched_pending *a, const struct sched_pending *b)
{
    return a->reason == b->reason && a->queue == b->queue && a->pool == b->pool &&
           a->res == b->res && a->would_use == b->would_use && a->bound == b->bound &&
           a->request == b->request && a->detail == b->detail &&
           a->other_queue == b->other_queue && a->wait_ms / 1000 == b->wait_ms / 1000;
}

/* The model learns the numbers behind wi's message in written(), under
 * the model lock. */
static void remember_said(struct persist *p, int wi)
{
    p->said_wl[p->n_said] = wi;
    p->said_pe[p->n_said++] = p->pend[wi];
}

/* Does workload wi need a row update? Fills *msg with its new message
 * when it has a pending reason whose message may have changed. */
static int needs_update(struct ctl_sched *sc, struct persist *p, const struct sched_state *st,
                        const struct sched_result *res, int wi, int orig_phase, char *msg)
{
    struct sm_meta *mt = &sc->m.meta[wi];
    const struct sched_pending *pe = entry_of(res, p->pend[wi]);
    int reason = p->pend[wi] >= 0 ? pe->reason : SCHED_R_NONE;   /* running: no reason */
    int need = p->touched[wi] || sc->m.wls[wi].phase != orig_phase || reason != mt->reason;

    msg[0] = 0;
    if (!pe)
        return need || mt->msg_hash != sm_hash("");
    if (!need && mt->said.reason < 0 && mt->msg_hash != sm_hash("")) {
        /* just read from disk with the same reason: its message was written
         * from the numbers of the last cycle before, which are these unless
         * the state changed meanwhile (and a change touches the workload) */
        remember_said(p, wi);
        return 0;
    }
    if (!need && same_numbers(pe, &mt->said))
        return 0;
    if (p->pend[wi] >= 0)
        sched_reason_message(st, pe, msg, DB_MSG_LEN);
    else
        waiting_message(st, &sc->m.wls[wi], pe, msg, DB_MSG_LEN);
    remember_said(p, wi);
    return need || sm_hash(msg) != mt->msg_hash;
}

/* The arrays of one write: updates and the numbers said for n_visit
 * workloads at most, their n_pods pods. */
static int persist_alloc(struct persist *p, int n_visit, int n_pods)
{
    p->ups = calloc((size_t)n_visit + 1, sizeof(*p->ups));
    p->up_msg = calloc((size_t)n_visit + 1, sizeof(*p->up_msg));
    p->up_wl = calloc((size_t)n_visit + 1, sizeof(*p->up_wl));
    p->pods = calloc((size_t)n_pods + 1, sizeof(*p->pods));
    p->up_decided = calloc((size_t)n_visit + 1, 1);
    p->up_hash = calloc((size_t)n_visit + 1, sizeof(*p->up_hash));
    p->said_wl = malloc(sizeof(*p->said_wl) * ((size_t)n_visit + 1));
    p->said_pe = malloc(sizeof(*p->said_pe) * ((size_t)n_visit + 1));
    return p->ups && p->up_msg && p->up_wl && p->up_decided && p->up_hash && p->pods &&
                   p->said_wl && p->said_pe
               ? 0 : -1;
}

static void add_update(struct ctl_sched *sc, struct persist *p, int wi, int decided,
                       const char *reason, const char *msg, struct db_sched_pod *pods)
{
    const struct sched_workload *w = &sc->m.wls[wi];
    struct db_wl_update *u = &p->ups[p->n_ups];
    int k;

    p->up_msg[p->n_ups] = pool_add(&p->msgs, msg);
    if (p->up_msg[p->n_ups] == (size_t)-1) {
        p->failed = 1;
        return;
    }
    p->up_decided[p->n_ups] = (unsigned char)decided;
    p->n_decided += decided;
    p->up_wl[p->n_ups++] = wi;
    u->seq = sc->m.meta[wi].seq;
    u->version = sc->m.meta[wi].version;
    u->phase = placed_phase(sc, p, wi);
    u->phase_reason = reason;
    u->started_ms = w->started_ms == SCHED_NO_TIME ? 0 : w->started_ms;
    u->stale_since_ms = w->stale_since_ms == SCHED_NO_TIME ? 0 : w->stale_since_ms;
    u->pods_changed = p->touched[wi];
    u->pods_added_only = p->touched[wi] && !p->freed[wi];
    u->pods = pods;
    u->n_pods = w->n_pods;
    for (k = 0; k < w->n_pods; k++) {
        pods[k].node_seq = w->pods[k].node >= 0 ? sc->m.topo->nodes[w->pods[k].node].seq : 0;
        pods[k].devices = w->pods[k].devices;
    }
}

/* The workloads whose stale-gang time may change: the cycle's differs, or
 * a decision names them (which may reset it). Read before the model lock
 * (this thread alone changes the model), so that the lock is held for
 * those and not for a pass over every workload. */
static void stale_candidates(struct ctl_sched *sc, struct persist *p,
                             const struct sched_result *res)
{
    const struct sched_model *m = &sc->m;
    int i, wi;

    /* every stale time the model's (the core says so): the decisions' alone */
    for (i = res->stale_kept ? m->n : 0; i < m->n + res->n_decisions; i++) {
        wi = i < m->n ? i : res->decisions[i - m->n].workload;
        if (wi < 0 || wi >= m->n || p->restaled[wi] ||
            (i < m->n && (!res->stale_since_ms ||
                          res->stale_since_ms[i] == m->wls[i].stale_since_ms)))
            continue;
        p->restaled[wi] = 1; /* a mark until apply_decisions() says */
        p->stale_at[p->n_stale_at++] = wi;
    }
}

/* Step 3: the decisions and stale-gang times applied to the model (the
 * caller holds the model lock: this is all of Steps 3 and 4 that changes
 * the model before the write). */
/* The nodes decision d gives or takes pods, before it is applied: a bind's
 * and a move's target, an evicted or moved pod's node (every pod's, for a
 * whole workload evicted). */
static void watch_decision(struct ctl_sched *sc, struct persist *p,
                           const struct sched_decision *d)
{
    const struct sched_workload *w;
    int k;

    if (!sc->o.watch || d->workload < 0 || d->workload >= sc->m.n)
        return;
    w = &sc->m.wls[d->workload];
    if (d->kind == SCHED_BIND || d->kind == SCHED_MOVE)
        watch_note(sc, &p->watched, d->node);
    if (d->kind == SCHED_EVICT && d->pod < 0)
        for (k = 0; k < w->n_pods; k++)
            watch_note(sc, &p->watched, w->pods[k].node);
    else if (d->kind != SCHED_BIND && d->pod >= 0 && d->pod < w->n_pods)
        watch_note(sc, &p->watched, w->pods[d->pod].node);
}

static void apply_decisions(struct ctl_sched *sc, struct persist *p,
                            const struct sched_result *res, int64_t now_ms)
{
    struct sched_model *m = &sc->m;
    int i;

    for (i = 0; i < res->n_decisions; i++) {
        const struct sched_decision *d = &res->decisions[i];
        int node = d->kind == SCHED_EVICT && d->pod >= 0 && d->workload < m->n &&
                           d->pod < m->wls[d->workload].n_pods
                       ? m->wls[d->workload].pods[d->pod].node : -1;
        char before = d->workload >= 0 && d->workload < m->n ? (char)m->wls[d->workload].phase : 0;
        int64_t pool_seq = evicted_pool(m, d);
        watch_decision(sc, p, d);
        if (sched_apply_decision(m->wls, m->n, d, now_ms) != SCHED_OK)
            continue;
        if (!p->touched[d->workload])
            p->orig[d->workload] = before;
        p->touched[d->workload] = 1;
        p->freed[d->workload] |= d->kind != SCHED_BIND;
        decision_event(sc, p, d, pool_seq);
        if (d->kind == SCHED_EVICT && d->pod < 0)
            p->shrunk[d->workload].whole = 1;
        if (node >= 0) {
            struct shrink *s = &p->shrunk[d->workload];
            s->pods++;
            s->gpu_milli += sched_pod_gpu(&m->wls[d->workload], &m->nodes[node]);
            s->last = d;
            s->pool_seq = pool_seq;
        }
    }
    for (i = 0; i < p->n_stale_at; i++) {
        struct sched_workload *w = &m->wls[p->stale_at[i]];
        int64_t stale = res->stale_since_ms ? res->stale_since_ms[p->stale_at[i]]
                                            : w->stale_since_ms;
        p->restaled[p->stale_at[i]] = stale != w->stale_since_ms;
        w->stale_since_ms = stale;
    }
}

/* Workload wi's phase before the cycle: only a decision changes it. */
static int orig_phase(const struct ctl_sched *sc, const struct persist *p, int wi)
{
    return p->touched[wi] ? p->orig[wi] : sc->m.wls[wi].phase;
}

/* Step 4 for the workloads: those p->visit names (NULL: every one), with
 * the events of the decided. Reads the model only (this thread alone
 * changes it, so no lock is needed). */
static void collect(struct ctl_sched *sc, struct persist *p, const struct sched_state *st,
                    const struct sched_result *res)
{
    struct sched_model *m = &sc->m;
    struct db_sched_pod *pods = p->pods;
    char msg[DB_MSG_LEN];
    int i, k, n = p->visit ? p->n_visit : m->n;

    /* pods taken one by one: a workload left below its minimum went back
     * to Pending (an eviction); one still running was shrunk */
    for (k = 0; k < p->n_dec; k++) {
        i = p->decided[k];
        if (p->shrunk[i].pods > 0 && !p->shrunk[i].whole) {
            if (m->wls[i].phase == SCHED_RUNNING)
                shrink_event(sc, p, i);
            else
                eviction_event(sc, p, p->shrunk[i].last, p->shrunk[i].pool_seq);
        }
    }
    if (p->visit) {
        for (k = 0; k < n; k++) {
            p->pend[p->visit[k]] = sched_result_pending_at(res, p->visit[k]);
        }
    } else {
        for (k = 0; k < res->n_pending; k++)
            if (res->pending[k].workload >= 0 && res->pending[k].workload < m->n)
                p->pend[res->pending[k].workload] = k;
    }
    for (k = 0; k < res->n_waiting; k++)   /* each one visited (focus()) */
        if (res->waiting[k].workload >= 0 && res->waiting[k].workload < m->n)
            p->pend[res->waiting[k].workload] = waiting_code(k);
    for (k = 0; k < n; k++) {
        const struct sched_workload *w;
        int decided, before;
        i = p->visit ? p->visit[k] : k;
        w = &m->wls[i];
        /* a decision, or a phase or time that changed, lands with the
         * cycle's decisions; a reason or message alone is written apart */
        if (m->meta[i].left)
            continue;   /* no longer live: its row is the API's */
        before = orig_phase(sc, p, i);
        decided = p->touched[i] || w->phase != before || p->restaled[i];
        if (w->phase == SCHED_RUNNING && before != SCHED_RUNNING)
            running_event(sc, p, i);
        if (needs_update(sc, p, st, res, i, before, msg) || p->restaled[i]) {
            const char *reason = p->pend[i] >= 0
                ? sched_reason_name(res->pending[p->pend[i]].reason) : "";
            add_update(sc, p, i, decided, reason, msg, pods);
            pods += w->n_pods;
        }
    }
}

/* Does update i only place pods (bound, none evicted or moved)? */
static int placing(const struct persist *p, int i)
{
    return p->up_decided[i] && p->touched[p->up_wl[i]] && !p->freed[p->up_wl[i]];
}

/* Points the updates and events at their messages, and puts the
 * decisions' updates first (in model order each way): those that free or
 * move pods or change only a phase or time, then those that only place
 * pods (p->n_placing), then the reasons, with their messages' hashes
 * beside them. */
static int resolve(struct persist *p)
{
    struct db_wl_update *ups = malloc(sizeof(*ups) * ((size_t)p->n_ups + 1));
    int *wl = malloc(sizeof(*wl) * ((size_t)p->n_ups + 1));
    int i, d = 0, r = p->n_decided, pl;

    if (!ups || !wl) {
        free(ups);
        free(wl);
        return -1;
    }
    for (i = p->n_placing = 0; i < p->n_ups; i++)
        p->n_placing += placing(p, i);
    pl = p->n_decided - p->n_placing;
    for (i = 0; i < p->n_ups; i++) {
        int at = placing(p, i) ? pl++ : p->up_decided[i] ? d++ : r++;
        ups[at] = p->ups[i];
        ups[at].phase_message = p->msgs.buf + p->up_msg[i];
        wl[at] = p->up_wl[i];
        p->up_hash[at] = sm_hash(ups[at].phase_message);
    }
    free(p->ups);
    free(p->up_wl);
    p->ups = ups;
    p->up_wl = wl;
    for (i = 0; i < p->n_evs; i++)
        p->evs[i].message = p->msgs.buf + p->ev_msg[i];
    return 0;
}

/* Remembers what was written, once it was: entries [from, from +
 * WRITTEN_PIECE) of the updates and of the reasons said; under the model
 * lock. What it notes (the reason and message each workload's row holds)
 * is read by this thread alone, so a copy made between two pieces holds
 * every workload whole. */
static void written(struct ctl_sched *sc, struct persist *p, const struct sched_result *res,
                    int from)
{
    int i;

    for (i = from; i < p->n_ups && i < from + WRITTEN_PIECE; i++) {
        struct sm_meta *mt = &sc->m.meta[p->up_wl[i]];
        int pe = p->pend[p->up_wl[i]];
        mt->reason = pe >= 0 ? res->pending[pe].reason : SCHED_R_NONE;
        mt->msg_hash = p->up_hash[i];
        mt->initializing = strcmp(p->ups[i].phase, "Initializing") == 0;
    }
    for (i = from; i < p->n_said && i < from + WRITTEN_PIECE; i++)
        sc->m.meta[p->said_wl[i]].said = *entry_of(res, p->said_pe[i]);
}

/* The reasons and messages of workloads the cycle left as they were,
 * ups[from..n_ups), in pieces of REASONS_PIECE_US each, so that the
 * submissions queued behind one wait that long at most. */
static int write_reasons(struct ctl_sched *sc, struct persist *p, int from, int64_t now_ms)
{
    struct db_cycle cy;
    int done, applied = 0, rc = DB_OK;
    int64_t held_us, held_cpu_us;

    memset(&cy, 0, sizeof(cy));
    cy.now_ms = now_ms;
    while (rc == DB_OK && from < p->n_ups) {
        cy.updates = p->ups + from;
        cy.n_updates = p->n_ups - from;
        rc = db_reasons_apply(sc->db, &cy, REASONS_PIECE_US, &done, &applied, &held_us,
                              &held_cpu_us);
        if (held_us > 0)
            note_hold(sc, CTL_LOCK_WRITE, held_us, held_cpu_us);
        from += done;
    }
    return rc == DB_OK ? 0 : -1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* v[0..*n) sorted, each value in [0, limit) kept once. */
static void sort_unique(int *v, int *n, int limit)
{
    int i, u = 0;

    qsort(v, (size_t)*n, sizeof(*v), cmp_int);
    for (i = 0; i < *n; i++)
        if (v[i] >= 0 && v[i] < limit && (u == 0 || v[u - 1] != v[i]))
            v[u++] = v[i];
    *n = u;
}

/* The workloads a decision names, ascending, each once. */
static int decided_of(struct persist *p, const struct sched_result *res, int n_model)
{
    int i;

    p->decided = malloc(sizeof(*p->decided) * ((size_t)res->n_decisions + 1));
    if (!p->decided)
        return -1;
    for (i = 0; i < res->n_decisions; i++)
        p->decided[i] = res->decisions[i].workload;
    p->n_dec = res->n_decisions;
    sort_unique(p->decided, &p->n_dec, n_model);
    return 0;
}

/* Step 4's focus after a cycle that named what moved since the last one
 * (sched_result.changed; the model's indices held since then: the delta
 * was not full): the workloads whose rows may need writing are those it
 * names, the decisions', those whose stale times were looked at, those
 * read again since the last cycle, and those with a waiting entry in this
 * cycle or the last written one (a running workload's message about its
 * pods left to place); every other workload's entry, phase,
 * pods and stale time are what the last write wrote (or found right).
 * 0 with p->visit NULL: every workload is looked at. */
static int focus(struct ctl_sched *sc, struct persist *p, const struct sched_result *res,
                 int full)
{
    int n = 0, i;

    p->visit = NULL;
    if (full || res->n_changed < 0)
        return 0;
    p->visit = malloc(sizeof(*p->visit) * ((size_t)res->n_changed + (size_t)p->n_dec +
                                           (size_t)p->n_stale_at + (size_t)sc->n_reread +
                                           (size_t)res->n_waiting + (size_t)sc->n_waited + 1));
    if (!p->visit)
        return -1;
    for (i = 0; i < res->n_waiting; i++)   /* not in `changed`: looked at each cycle */
        p->visit[n++] = res->waiting[i].workload;
    for (i = 0; i < sc->n_waited; i++)     /* a message to clear, or to redo */
        p->visit[n++] = sc->waited[i];
    for (i = 0; i < res->n_changed; i++)
        p->visit[n++] = res->changed[i];
    for (i = 0; i < p->n_dec; i++)
        p->visit[n++] = p->decided[i];
    for (i = 0; i < p->n_stale_at; i++)
        p->visit[n++] = p->stale_at[i];
    for (i = 0; i < sc->n_reread; i++)
        p->visit[n++] = sc->reread[i];
    sort_unique(p->visit, &n, sc->m.n);
    p->n_visit = n;
    return 0;
}

/* Whether two collect()s of one cycle say the same: updates (rows,
 * phases, reasons, messages, pods), events and the numbers remembered
 * (the events apply_decisions() added before each are not compared). */
static int same_write(const struct persist *a, const struct persist *b)
{
    int i, ea = a->n_evs_applied, eb = b->n_evs_applied;

    if (a->n_ups != b->n_ups || a->n_evs - ea != b->n_evs - eb || a->n_said != b->n_said ||
        a->n_decided != b->n_decided)
        return 0;
    for (i = 0; i < a->n_ups; i++) {
        const struct db_wl_update *x = &a->ups[i], *y = &b->ups[i];
        if (a->up_wl[i] != b->up_wl[i] || a->up_decided[i] != b->up_decided[i] ||
            x->seq != y->seq || x->version != y->version || strcmp(x->phase, y->phase) ||
            strcmp(x->phase_reason, y->phase_reason) ||
            strcmp(a->msgs.buf + a->up_msg[i], b->msgs.buf + b->up_msg[i]) ||
            x->started_ms != y->started_ms || x->stale_since_ms != y->stale_since_ms ||
            x->pods_changed != y->pods_changed || x->pods_added_only != y->pods_added_only ||
            x->n_pods != y->n_pods ||
            memcmp(x->pods, y->pods, sizeof(*x->pods) * (size_t)x->n_pods))
            return 0;
    }
    for (i = 0; i < a->n_evs - ea; i++)
        if (a->evs[ea + i].workload_seq != b->evs[eb + i].workload_seq ||
            strcmp(a->evs[ea + i].type, b->evs[eb + i].type) ||
            strcmp(a->evs[ea + i].reason, b->evs[eb + i].reason) ||
            strcmp(a->msgs.buf + a->ev_msg[ea + i], b->msgs.buf + b->ev_msg[eb + i]))
            return 0;
    for (i = 0; i < a->n_said; i++)
        if (a->said_wl[i] != b->said_wl[i] || a->said_pe[i] != b->said_pe[i])
            return 0;
    return 1;
}

/* ALLOT_SCHED_CHECK: the focused write p against the full one, made
 * aside with the same marks; a difference stops allotd (tests run with
 * it, so a workload the focus missed fails them). */
static void check_focus(struct ctl_sched *sc, const struct persist *p,
                        const struct sched_state *st, const struct sched_result *res)
{
    struct persist full;
    int i, n_pods = 0;

    memset(&full, 0, sizeof(full));
    use_marks(&full, &sc->marks);
    full.decided = p->decided;
    full.n_dec = p->n_dec;
    for (i = 0; i < sc->m.n; i++)
        n_pods += sc->m.wls[i].n_pods;
    if (persist_alloc(&full, sc->m.n, n_pods) == 0) {
        collect(sc, &full, st, res);
        if (!full.failed && !p->failed && !same_write(p, &full)) {
            fprintf(stderr, "allotd: scheduler: the focused write of a cycle (%d updates, %d "
                    "events) differs from the full one (%d updates, %d events)\n", p->n_ups,
                    p->n_evs, full.n_ups, full.n_evs);
            abort();
        }
    }
    full.decided = NULL;   /* p's */
    persist_free(&full);
}

/* sc->n_running after the decisions: counted whole after a full look
 * (every workload's mark set, and those past the model's end cleared: a
 * model that shrank and grew again puts new workloads there), else moved
 * by the workloads looked at (a phase changes only by a decision, or a
 * row read again, or a workload that left or came: the focus holds them
 * all). */
static void count_running(struct ctl_sched *sc, const struct persist *p)
{
    const struct sched_model *m = &sc->m;
    unsigned char *was = sc->marks.running;
    int i, k, now;

    if (!p->visit) {
        sc->n_running = 0;
        if (sc->marks.cap > m->n)
            memset(was + m->n, 0, (size_t)(sc->marks.cap - m->n));
    }
    for (k = 0; k < (p->visit ? p->n_visit : m->n); k++) {
        i = p->visit ? p->visit[k] : k;
        now = m->wls[i].phase == SCHED_RUNNING;
        sc->n_running += p->visit ? now - was[i] : now;
        was[i] = (unsigned char)now;
    }
    if (sc->check_focus) {
        for (i = 0, k = 0; i < m->n; i++)
            k += m->wls[i].phase == SCHED_RUNNING;
        if (k != sc->n_running) {
            fprintf(stderr, "allotd: scheduler: %d running workloads counted, %d in the model\n",
                    sc->n_running, k);
            abort();
        }
    }
}

/* The workloads whose rows now hold a waiting entry's message: the next
 * focused write looks at them (one that no longer waits has its message
 * cleared). -1 when there is no memory (the model is then reloaded, and
 * the next write looks at every workload). */
static int remember_waited(struct ctl_sched *sc, const struct sched_result *res)
{
    int *v = NULL, i;

    if (res->n_waiting > 0) {
        v = malloc(sizeof(*v) * (size_t)res->n_waiting);
        if (!v)
            return -1;
        for (i = 0; i < res->n_waiting; i++)
            v[i] = res->waiting[i].workload;
    }
    free(sc->waited);
    sc->waited = v;
    sc->n_waited = res->n_waiting;
    return 0;
}

static int persist_cycle(struct ctl_sched *sc, const struct sched_state *st,
                         const struct sched_result *res, int full, int64_t now_ms)
{
    struct persist p;
    struct db_cycle cy;
    struct db_turns t;
    int i, n_pods = 0, applied, rc = -1, pend_all = 1;
    struct held_since locked;

    memset(&p, 0, sizeof(p));
    if (marks_reserve(&sc->marks, sc->m.n) != 0)
        return -1;
    use_marks(&p, &sc->marks);
    p.stale_at = malloc(sizeof(*p.stale_at) *
                        ((size_t)(res->stale_kept ? 0 : sc->m.n) + (size_t)res->n_decisions + 1));
    if (!p.stale_at || decided_of(&p, res, sc->m.n) != 0)
        goto out;
    stale_candidates(sc, &p, res);
    locked = model_lock(sc);
    apply_decisions(sc, &p, res, now_ms);
    model_unlock(sc, locked);
    p.n_evs_applied = p.n_evs;
    if (focus(sc, &p, res, full) != 0)
        goto out;
    pend_all = !p.visit || sc->check_focus;
    for (i = 0; i < (p.visit ? p.n_visit : sc->m.n); i++)
        n_pods += sc->m.wls[p.visit ? p.visit[i] : i].n_pods;
    if (persist_alloc(&p, p.visit ? p.n_visit : sc->m.n, n_pods) != 0)
        goto out;
    collect(sc, &p, st, res);
    count_running(sc, &p);
    if (sc->check_focus && p.visit)
        check_focus(sc, &p, st, res);
    if (p.failed || resolve(&p) != 0)
        goto out;
    cy.now_ms = now_ms;
    cy.updates = p.ups;
    cy.n_updates = p.n_decided;
    cy.events = p.evs;
    cy.n_events = p.n_evs;
    t.n_after = p.n_placing;
    t.turn_us = TURN_US;
    t.rows = sc->turn_rows;
    t.n_turns = 0;
    t.held_us = malloc(sizeof(*t.held_us) * ((size_t)p.n_placing + 2));
    t.held_cpu_us = malloc(sizeof(*t.held_cpu_us) * ((size_t)p.n_placing + 2));
    rc = t.held_us && t.held_cpu_us && db_cycle_apply_turns(sc->db, &cy, &t, &applied) == DB_OK
             ? 0 : -1;
    sc->turn_rows = t.rows;
    for (i = 0; i < t.n_turns; i++)
        note_hold(sc, CTL_LOCK_WRITE, t.held_us[i], t.held_cpu_us[i]);
    free(t.held_us);
    free(t.held_cpu_us);
    if (rc != 0)
        goto out;
    ctl_watch_mark(sc->o.watch, p.watched.seq, p.watched.n);   /* once written: Invariant 1 there */
    rc = -1;
    if (write_reasons(sc, &p, p.n_decided, now_ms) != 0)
        goto out;
    for (i = 0; i < p.n_ups || i < p.n_said; i += WRITTEN_PIECE) {
        locked = model_lock(sc);
        written(sc, &p, res, i);
        model_unlock(sc, locked);
    }
    locked = state_lock(sc);
    for (i = 0; i < 3; i++)
        sc->stats.evictions[i] += p.evictions[i];
    state_unlock(sc, locked);
    rc = remember_waited(sc, res);
out:
    marks_clear(&p, res, pend_all);
    free(p.stale_at);
    free(p.decided);
    free(p.visit);
    persist_free(&p);
    return rc;
}

/* ---- Step 5 ---- */

static void share_of(const struct sched_model *m, const struct sched_result *res, int q, int pl,
                     struct ctl_share *y)
{
    const struct sched_share *x = sched_result_share(res, q, pl);
    const struct db_queue *dq = &m->topo->queues[q];
    int r;

    y->queue_seq = dq->seq;
    y->pool_seq = m->topo->pools[pl].seq;
    y->kind = dq->kind;
    snprintf(y->queue, sizeof(y->queue), "%s", dq->name);
    snprintf(y->pool, sizeof(y->pool), "%s", m->topo->pools[pl].name);
    for (r = 0; r < 3; r++) {
        y->deserved[r] = m->quotas[((size_t)q * (size_t)m->n_pools + (size_t)pl) * SCHED_NRES +
                                   (size_t)r].deserved;
        if (!x)
            continue;
        y->fair[r] = x->fair[r];
        y->allocated[r] = x->allocated[r];
        y->requested[r] = x->requested[r];
    }
}

static int hist_bucket(int64_t us)
{
    int i;

    for (i = 0; i < CTL_HIST_BUCKETS - 1; i++)
        if ((double)us <= ctl_hist_bounds[i] * 1e6)
            return i;
    return CTL_HIST_BUCKETS - 1;
}

static void publish(struct ctl_sched *sc, const struct sched_result *res, int64_t us)
{
    const struct sched_model *m = &sc->m;
    int nq = m->n_queues, np = m->n_pools, q, pl, running;
    struct sched_memo_stats ms;
    struct ctl_share *sh = calloc((size_t)nq * (size_t)np + 1, sizeof(*sh));
    struct ctl_share *old = NULL;
    struct held_since locked;

    for (q = 0; sh && q < nq; q++)
        for (pl = 0; pl < np; pl++)
            share_of(m, res, q, pl, &sh[q * np + pl]);
    running = sc->n_running;   /* count_running() */
    locked = state_lock(sc);
    if (sh) {
        old = sc->shares; /* freed after the lock */
        sc->shares = sh;
        sc->n_shares = nq * np;
    }
    sc->stats.cycles++;
    sc->stats.decisions += res->n_decisions;
    sc->stats.last_cycle_us = us;
    sc->stats.cycle_us_total += us;
    sc->stats.hist[hist_bucket(us)]++;
    if (us > sc->stats.max_cycle_us)
        sc->stats.max_cycle_us = us;
    sc->stats.pending = m->n - m->n_left - running;
    sc->stats.running = running;
    sched_memo_stats(sc->memo, &ms);
    sc->stats.cycles_full = ms.full;
    sc->stats.cycles_reused = ms.reused;
    sc->stats.cycles_kept = ms.finished;
    state_unlock(sc, locked);
    free(old);
}

/* The same field of a share in the API's and the database's shape. */
#define SHARE_COPY(dst, src)                                                   \
    do {                                                                       \
        (dst)->queue_seq = (src)->queue_seq;                                   \
        (dst)->pool_seq = (src)->pool_seq;                                     \
        (dst)->kind = (src)->kind;                                             \
        memcpy((dst)->queue, (src)->queue, sizeof((dst)->queue));              \
        memcpy((dst)->pool, (src)->pool, sizeof((dst)->pool));                 \
        memcpy((dst)->deserved, (src)->deserved, sizeof((dst)->deserved));     \
        memcpy((dst)->fair, (src)->fair, sizeof((dst)->fair));                 \
        memcpy((dst)->allocated, (src)->allocated, sizeof((dst)->allocated));  \
        memcpy((dst)->requested, (src)->requested, sizeof((dst)->requested));  \
    } while (0)

/* Step 5, on the leader: the shares, once they changed and at most every
 * SHARES_PERIOD_MS, stored for the replicas that do not schedule. */
static void store_shares(struct ctl_sched *sc, int64_t now)
{
    struct ctl_share *cur = NULL;
    struct db_share *rows = NULL;
    int n = 0, i;

    if (now < sc->next_shares_ms || ctl_sched_shares(sc, &cur, &n) != 0)
        return;
    sc->next_shares_ms = now + SHARES_PERIOD_MS;
    if (n == sc->n_written &&
        (n == 0 || memcmp(cur, sc->written, sizeof(*cur) * (size_t)n) == 0)) {
        free(cur);
        return;
    }
    rows = calloc((size_t)n + 1, sizeof(*rows));
    for (i = 0; rows && i < n; i++)
        SHARE_COPY(&rows[i], &cur[i]);
    if (rows && db_shares_put(sc->db, rows, n) == DB_OK) {
        free(sc->written);
        sc->written = cur;
        sc->n_written = n;
        cur = NULL;
    }
    free(rows);
    free(cur);
}

/* A follower's turn: the leader's shares, as stored. */
static void load_shares(struct ctl_sched *sc)
{
    struct db_share *rows = NULL;
    struct ctl_share *sh, *old;
    int n = 0, i;
    struct held_since locked;

    if (db_shares_get(sc->db, &rows, &n) != DB_OK)
        return;
    sh = calloc((size_t)n + 1, sizeof(*sh));
    for (i = 0; sh && i < n; i++)
        SHARE_COPY(&sh[i], &rows[i]);
    free(rows);
    if (!sh)
        return;
    locked = state_lock(sc);
    old = sc->shares;
    sc->shares = sh;
    sc->n_shares = n;
    state_unlock(sc, locked);
    free(old);
}

/* ---- Step 6 ---- */

/* What each (queue, pool) holds now, from the model's placed pods; every
 * queue's amounts include its subtree. */
static void allocation(const struct sched_model *m, int64_t *alloc)
{
    int i, k, q, r;

    for (i = 0; i < m->n; i++) {
        const struct sched_workload *w = &m->wls[i];
        int64_t per[3] = {0, w->cpu_milli, w->mem_mib};
        for (k = 0; k < w->n_pods; k++) {
            int node = w->pods[k].node;
            if (node < 0)
                continue;
            per[0] = sched_pod_gpu(w, &m->nodes[node]);
            for (q = w->queue; q >= 0; q = m->queues[q].parent)
                for (r = 0; r < 3; r++)
                    alloc[((size_t)q * (size_t)m->n_pools + (size_t)m->nodes[node].pool) * 3 +
                          (size_t)r] += per[r];
        }
    }
}

/* Removes the workloads deleted more than the retention ago, and their
 * logs. */
static void purge_deleted(struct ctl_sched *sc, int64_t now_ms)
{
    int64_t *seqs = NULL;
    int n = 0;

    if (db_workloads_purge(sc->db, now_ms - sc->o.retention_ms, &seqs, &n) == DB_OK && n > 0 &&
        sc->o.purged)
        sc->o.purged(sc->o.hook_arg, seqs, n);
    free(seqs);
}

static void record_samples(struct ctl_sched *sc, int64_t now_ms)
{
    const struct sched_model *m = &sc->m;
    size_t cells = (size_t)m->n_queues * (size_t)m->n_pools;
    int64_t *alloc = calloc(cells * 3 + 1, sizeof(int64_t));
    struct db_sample *s = calloc(cells + 1, sizeof(*s));
    size_t c;
    int r;

    if (alloc && s) {
        allocation(m, alloc);
        for (c = 0; c < cells; c++) {
            s[c].queue_seq = m->topo->queues[c / (size_t)m->n_pools].seq;
            s[c].pool_seq = m->topo->pools[c % (size_t)m->n_pools].seq;
            s[c].ts = now_ms;
            for (r = 0; r < 3; r++) {
                s[c].alloc[r] = alloc[c * 3 + (size_t)r];
                s[c].quota[r] = m->quotas[c * SCHED_NRES + (size_t)r].deserved;
            }
        }
        db_samples_add(sc->db, s, (int)cells, now_ms - RETENTION_MS);
    }
    free(alloc);
    free(s);
}

/* The usage history of time-based fairshare, as read before the model
 * lock (read_usage) for use_usage under it. */
struct usage_read {
    int due;                    /* a sample period passed: replace the model's */
    struct db_sample *b;        /* per bucket; NULL: none (no such pool, or unread) */
    int n;
    int64_t bucket;
};

static void read_usage(struct ctl_sched *sc, int64_t now_ms, struct usage_read *ur)
{
    const struct sched_model *m = &sc->m;
    int64_t window = 0;
    int i;

    memset(ur, 0, sizeof(*ur));
    ur->due = now_ms >= sc->next_sample_ms && m->n_pools > 0;
    for (i = 0; ur->due && i < m->n_pools; i++)
        if (m->pools[i].tbf_enabled && m->pools[i].tbf_window_ms > window)
            window = m->pools[i].tbf_window_ms;
    if (window == 0)
        return;
    ur->bucket = window / 256 > sc->o.sample_period_ms ? window / 256 : sc->o.sample_period_ms;
    if (db_samples_buckets(sc->db, now_ms - window, ur->bucket, &ur->b, &ur->n) != DB_OK)
        ur->b = NULL;
}

/* The usage history of the leaf queues in pools with time-based
 * fairshare, averaged per bucket, for the next cycles, from what
 * read_usage read (taken); under the model lock. */
static void use_usage(struct ctl_sched *sc, struct usage_read *ur, int64_t now_ms)
{
    struct sched_model *m = &sc->m;
    struct db_sample *b = ur->b;
    struct sched_usage *u;
    int64_t bucket = ur->bucket;
    int i, n = ur->n, k = 0, r;

    if (!ur->due || m->n_pools == 0)
        return;
    free(m->usage);
    m->usage = NULL;
    m->n_usage = 0;
    ur->b = NULL;
    if (!b)
        return;
    u = calloc((size_t)n + 1, sizeof(*u));
    for (i = 0; u && i < n; i++) {
        int q = sm_queue_index(m, b[i].queue_seq), p = sm_pool_index(m, b[i].pool_seq);
        if (q < 0 || p < 0 || m->topo->queues[q].kind != DB_PROJECT || !m->pools[p].tbf_enabled)
            continue;
        u[k].queue = q;
        u[k].pool = p;
        u[k].start_ms = b[i].ts;
        u[k].end_ms = b[i].ts + bucket < now_ms ? b[i].ts + bucket : now_ms;
        for (r = 0; r < 3; r++)
            u[k].amount[r] = b[i].alloc[r];
        k++;
    }
    free(b);
    m->usage = u;
    m->n_usage = u ? k : 0;
}

/* ---- the cycle ---- */

static int run_cycle(struct ctl_sched *sc, int *n_decisions)
{
    struct sched_state st;
    struct sched_result res;
    struct sched_config cfg;
    struct prefetch pf;
    struct usage_read ur;
    struct sched_model fresh;
    int64_t t0 = clock_mono_us(), now = clock_now_ms();
    struct held_since locked;
    int rc = -1, rc_core, fresh_ok, full;

    *n_decisions = 0;
    pthread_mutex_lock(&sc->run_mu);
    /* Step 1 */
    prefetch(sc, &pf);
    read_usage(sc, now, &ur);
    memset(&fresh, 0, sizeof(fresh));
    fresh_ok = !sc->loaded && load_aside(sc, &fresh) == 0;
    locked = model_lock(sc);
    rc = refresh(sc, &pf, fresh_ok ? &fresh : NULL);
    if (rc == 0 && !ur.due && now >= sc->next_sample_ms && sc->m.n_pools > 0)
        read_usage(sc, now, &ur); /* the model was loaded just now, under the lock too */
    if (rc == 0)
        use_usage(sc, &ur, now);
    model_unlock(sc, locked);
    sm_free(&fresh);   /* the model it replaced, if loaded aside */
    free(ur.b);
    if (rc != 0)
        goto out;
    rc = -1;
    sm_state(&sc->m, now, &st);
    /* Step 2 */
    sched_config_default(&cfg);
    sched_arena_reset(sc->arena);
    memset(&res, 0, sizeof(res));
    sc->delta.left = sc->left;
    sc->delta.n_left = sc->n_left;
    full = sc->delta.full;
    rc_core = sched_cycle_next(sc->memo, &st, &sc->delta, &cfg, sc->arena, &res);
    sc->delta.full = 0;
    sc->delta.n_submitted = 0;
    sc->delta.n_left = sc->n_left = 0;
    if (rc_core != SCHED_OK)
        goto out;
    /* Steps 3 and 4 */
    rc = persist_cycle(sc, &st, &res, full, now);
    sc->n_reread = 0;   /* written, or the model is loaded again */
    if (rc != 0) {
        struct held_since st_locked = model_lock(sc);

        sc->loaded = 0;
        model_unlock(sc, st_locked);
        st_locked = state_lock(sc);
        sc->stats.failures++;
        state_unlock(sc, st_locked);
        rc = -1;
        goto out;
    }
    *n_decisions = res.n_decisions;
    /* Step 5 */
    publish(sc, &res, clock_mono_us() - t0);
    store_shares(sc, now);
    if (sc->stats.cycles == 1) {
        printf("allotd: scheduler: %d workloads on %d nodes loaded; first cycle done %lld ms"
               " after start\n", sc->m.n, sc->m.n_nodes,
               (long long)(clock_now_ms() - sc->started_ms));
        fflush(stdout);
    }
    /* Step 6 */
    if (now >= sc->next_sample_ms) {
        record_samples(sc, now);
        db_gpu_samples_record(sc->db, now, now - RETENTION_MS);
        ctl_series_record(sc->series, sc->db, &sc->m, now, now - RETENTION_MS, TURN_US,
                          note_write_hold, sc);
        sc->next_sample_ms = now + sc->o.sample_period_ms;
    }
    if (sc->o.retention_ms > 0 && now >= sc->next_purge_ms) {
        purge_deleted(sc, now);
        sc->next_purge_ms = now + PURGE_PERIOD_MS;
    }
    rc = 0;
out:
    prefetch_free(&pf);
    pthread_mutex_unlock(&sc->run_mu);
    return rc;
}

int ctl_sched_run_once(struct ctl_sched *s, int *n_decisions)
{
    return run_cycle(s, n_decisions);
}

/* The touched workloads and org flag not yet read into the model
 * (copies; the scheduler thread keeps its own). */
static int peek_dirty(struct ctl_sched *s, int64_t **seqs, int *n, int *org)
{
    int rc = 0;

    pthread_mutex_lock(&s->mu);
    *n = s->n_dirty;
    *org = s->org_dirty;
    *seqs = malloc(sizeof(int64_t) * ((size_t)s->n_dirty + 1));
    if (*seqs && s->n_dirty > 0)
        memcpy(*seqs, s->dirty, sizeof(int64_t) * (size_t)s->n_dirty);
    else if (!*seqs)
        rc = -1;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Nothing waits to be read into the model (the state mutex). */
static int trial_ready(struct ctl_sched *s)
{
    int ready;

    pthread_mutex_lock(&s->mu);
    ready = s->n_dirty == 0 && !s->org_dirty;
    pthread_mutex_unlock(&s->mu);
    return ready;
}

/* run_mu, waiting at most ms for the turn in progress; 0 taken. */
static int run_lock_within(struct ctl_sched *s, int ms)
{
    struct timespec until;

    clock_deadline(&until, CLOCK_REALTIME, ms);
    return pthread_mutex_timedlock(&s->run_mu, &until) == 0 ? 0 : -1;
}

int ctl_sched_trial(struct ctl_sched *s, int (*fn)(void *t, struct cow_out *out),
                    struct ctl_trial *t, struct cow_child *c)
{
    int rc = -1, ready;

    t->topo = NULL;
    if (!s || !trial_ready(s) || run_lock_within(s, TRIAL_WAIT_MS) != 0)
        return -1;
    /* between cycles: the memo is the last one's */
    ready = s->loaded && trial_ready(s) && s->memo;
    if (ready && (t->topo = db_snapshot_share(s->m.topo)) != NULL) {
        t->m = &s->m;
        t->memo = s->memo;
        t->delta = s->delta;
        t->delta.left = s->left;
        t->delta.n_left = s->n_left;
        t->now_ms = clock_now_ms();
        rc = cow_start(fn, t, c);
    }
    pthread_mutex_unlock(&s->run_mu);
    if (rc != 0) {
        db_snapshot_free(t->topo);
        t->topo = NULL;
    }
    return rc;
}

/* A what-if run's copy of the model, up to date: copied under the model
 * lock only (the scheduler thread may be in sched_cycle() or writing: it
 * only reads the model then), and the rows touched since its last Step 1
 * read into the copy afterwards, with no lock held. Before the model is
 * loaded (at start, or after a failed write) the copy waits for the turn
 * in progress and brings the model itself up to date, as a cycle does. */
int ctl_sched_model_copy(struct ctl_sched *s, struct sched_model *dst, int64_t *copy_us)
{
    int64_t t0, *seqs = NULL;
    int rc = -1, n = 0, org = 0, loaded;

    memset(dst, 0, sizeof(*dst));
    *copy_us = 0;
    if (!s)
        return -1;
    t0 = clock_mono_us();
    pthread_mutex_lock(&s->model_mu);
    loaded = s->loaded;
    if (loaded && peek_dirty(s, &seqs, &n, &org) == 0 && sm_clone(&s->m, dst) == DB_OK)
        rc = 0;
    pthread_mutex_unlock(&s->model_mu);
    if (rc == 0 && org)
        rc = sm_load_topology(dst, s->db) == DB_OK ? 0 : -1;
    if (rc == 0)
        rc = sm_refresh(dst, s->db, seqs, n) == DB_OK ? 0 : -1;
    free(seqs);
    if (!loaded) {
        pthread_mutex_lock(&s->run_mu);
        pthread_mutex_lock(&s->model_mu);
        if (refresh(s, NULL, NULL) == 0 && sm_clone(&s->m, dst) == DB_OK)
            rc = 0;
        pthread_mutex_unlock(&s->model_mu);
        pthread_mutex_unlock(&s->run_mu);
    }
    if (rc != 0)
        sm_free(dst);
    *copy_us = clock_mono_us() - t0;
    return rc;
}

/* Waits for a wake, the period, or stop; a wake counts only once `gap_us`
 * has passed. Returns 0 to go on, -1 to stop. */
static int wait_turn(struct ctl_sched *sc, int64_t gap_us)
{
    struct timespec until, min_until;
    struct held_since locked;
    int rc = 0;

    clock_deadline(&until, CLOCK_REALTIME, sc->o.period_ms);
    clock_deadline(&min_until, CLOCK_REALTIME, gap_us / 1000);
    pthread_mutex_lock(&sc->mu);
    while (!sc->stop)
        if (pthread_cond_timedwait(&sc->cv, &sc->mu, &min_until) != 0)
            break; /* the gap has passed */
    while (!sc->wake && !sc->stop)
        if (pthread_cond_timedwait(&sc->cv, &sc->mu, &until) != 0)
            break;
    locked.us = clock_mono_us(); /* the waits above give the lock back */
    locked.cpu_us = -1;
    sc->wake = 0;
    rc = sc->stop ? -1 : 0;
    state_unlock(sc, locked);
    return rc;
}

/* Nodes whose agents stopped heartbeating are lost, and workloads past
 * their project's limits suspended (enforce.c): pods were freed in the
 * database, so the model is read again whole. */
static void agents_turn(struct ctl_sched *sc)
{
    struct held_since locked;

    if (ctl_agents_enforce(sc->db, clock_now_ms(), sc->started_ms, sc->o.agent_lost_after_ms) <= 0)
        return;
    pthread_mutex_lock(&sc->run_mu);
    locked = model_lock(sc);
    sc->loaded = 0;
    model_unlock(sc, locked);
    pthread_mutex_unlock(&sc->run_mu);
}

/* Whether this replica leads this turn. A leadership that starts (or
 * ends) drops the model: a new leader loads the state whole. Every write
 * of this thread is fenced by the epoch while it leads. */
static int leading(struct ctl_sched *sc)
{
    int64_t e = sc->o.leader ? ctl_leader_epoch(sc->o.leader) : -1;
    struct held_since locked;

    if (e != sc->epoch) {
        pthread_mutex_lock(&sc->run_mu);
        locked = model_lock(sc);
        sc->loaded = 0;
        sc->delta.full = 1;
        model_unlock(sc, locked);
        pthread_mutex_unlock(&sc->run_mu);
        sc->epoch = e;
        sc->n_written = -1; /* what is stored is another leader's: store ours at once */
        sc->next_shares_ms = 0;
        ctl_series_rec_reseed(sc->series); /* and so are its series */
    }
    db_fence_set(e > 0 ? e : 0);
    return e != 0;
}

/* One change another replica made: the leader re-reads the workload or
 * the organization as if its own handlers had touched them; every replica
 * drops what it caches of the organization and of principals, and reads
 * the tenant's settings again. */
static void foreign_change(void *arg, const struct db_change *ch)
{
    struct ctl_sched *sc = arg;
    struct held_since locked;

    if (ch->kind == DB_CHANGE_PRINCIPALS || ch->kind == DB_CHANGE_SETTINGS) {
        void (*hook)(void *) = ch->kind == DB_CHANGE_PRINCIPALS ? sc->o.principals_changed
                                                                : sc->o.settings_changed;
        if (hook)
            hook(sc->o.hook_arg);
        return;
    }
    if (ch->kind == DB_CHANGE_WORKLOAD && sc->epoch != 0) {
        ctl_sched_touch(sc, ch->workload_seq);
        return;
    }
    if (ch->kind != DB_CHANGE_ORG)
        return;
    locked = state_lock(sc);
    sc->org_dirty |= sc->epoch != 0;
    sc->org_generation++;
    state_unlock(sc, locked);
}

/* Step 0 of every turn, leader or not: the change log since the last
 * turn; the leader keeps it bounded. */
static void read_changes(struct ctl_sched *sc)
{
    int64_t now = clock_now_ms();

    ctl_feed_poll(sc->feed, sc->db, now, foreign_change, sc);
    if (sc->epoch != 0 && now >= sc->next_log_purge_ms) {
        db_changes_purge(sc->db, now - LOG_KEEP_MS);
        sc->next_log_purge_ms = now + PURGE_PERIOD_MS;
    }
}

/* A write of this turn was refused by the fence: another replica leads. */
static void fenced(struct ctl_sched *sc)
{
    struct held_since locked;

    if (!db_fence_refused())
        return;
    ctl_leader_lost(sc->o.leader, sc->epoch);
    locked = state_lock(sc);
    sc->stats.fenced++;
    state_unlock(sc, locked);
}

/* A turn of a replica that does not lead: what others changed, the
 * leader's shares; what local handlers touched is dropped (a replica that
 * comes to lead loads everything anyway). */
static void follower_turn(struct ctl_sched *sc)
{
    int64_t *seqs = NULL;
    struct held_since locked;
    int n, org;

    read_changes(sc);
    load_shares(sc);
    take_dirty(sc, -1, &seqs, &n, &org);
    free(seqs);
    locked = state_lock(sc);
    sc->followed = 1;
    state_unlock(sc, locked);
}

/* Woken turns take at most a quarter of a core: each microsecond of a
 * turn is paid for by three idle ones. `credit` (us of turn time) is
 * earned at a third of the idle time, up to WAKE_BURST_US, and spent by
 * each turn; what a turn overspends is the gap before the next woken one
 * (three times the debt), never longer than the period. So a wake finds
 * an idle scheduler with credit left and its turn starts at once (a
 * submission is decided as soon as it commits), while a flood spends the
 * credit and its wakes are then taken together, one turn a gap. With no
 * burst this is the gap of three times the last turn. Returns the gap in
 * us. */
static int64_t pace(const struct ctl_sched *sc, int64_t *credit, int64_t idle_us, int64_t turn_us)
{
    int64_t period_us = (int64_t)sc->o.period_ms * 1000;

    *credit += idle_us / 3;
    if (*credit > WAKE_BURST_US)
        *credit = WAKE_BURST_US;
    *credit -= turn_us;
    if (*credit < -period_us / 3)
        *credit = -period_us / 3; /* one period's gap pays any turn */
    return *credit < 0 ? -3 * *credit : 0;
}

static void *sched_main(void *arg)
{
    struct ctl_sched *sc = arg;
    int64_t gap = 0, credit = WAKE_BURST_US, t0, t1 = clock_mono_us();
    int n, pass;

    thread_role_name("allot-sched");
    while (wait_turn(sc, gap) == 0) {
        t0 = clock_mono_us();
        if (!leading(sc)) {
            follower_turn(sc);
            gap = pace(sc, &credit, t0 - t1, 0);
            t1 = clock_mono_us();
            continue;
        }
        read_changes(sc);
        agents_turn(sc);
        for (pass = 0; pass < SM_MAX_PASSES; pass++)
            if (run_cycle(sc, &n) != 0 || n == 0)
                break;
        fenced(sc);
        gap = pace(sc, &credit, t0 - t1, clock_mono_us() - t0);
        t1 = clock_mono_us();
    }
    db_fence_set(0);
    return NULL;
}

static void leader_changed(void *arg)
{
    ctl_sched_wake(arg);
}

/* The writer's hook: a submission's workload is on disk. */
static void submitted(void *arg, int64_t workload_seq)
{
    ctl_sched_touch(arg, workload_seq);
}

int ctl_sched_start(struct db *db, const struct ctl_sched_opts *o, struct ctl_sched **out)
{
    struct ctl_sched *sc = calloc(1, sizeof(*sc));

    *out = NULL;
    if (!sc)
        return -1;
    sc->db = db;
    sc->o = *o;
    sc->started_ms = clock_now_ms();
    if (sc->o.period_ms <= 0)
        sc->o.period_ms = 1000;
    if (sc->o.sample_period_ms <= 0)
        sc->o.sample_period_ms = 15000;
    if (sc->o.agent_lost_after_ms <= 0)
        sc->o.agent_lost_after_ms = 15000;
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
    pthread_mutex_init(&sc->run_mu, NULL);
    pthread_mutex_init(&sc->model_mu, NULL);
    sc->wake = 1; /* the first cycle runs at once */
    sc->check_focus = getenv("ALLOT_SCHED_CHECK") && strcmp(getenv("ALLOT_SCHED_CHECK"), "1") == 0;
    sc->arena = sched_arena_new();
    sc->memo = sched_memo_new();
    sc->delta.full = 1;
    sc->series = ctl_series_rec_new();
    sc->feed = ctl_feed_new();
    if (sc->feed)
        ctl_feed_poll(sc->feed, db, 0, foreign_change, sc); /* starts at the log's end */
    if (!sc->arena || !sc->memo || !sc->series || !sc->feed ||
        pthread_create(&sc->th, NULL, sched_main, sc) != 0) {
        sc->started = 0;
        ctl_sched_stop(sc);
        return -1;
    }
    sc->started = 1;
    ctl_leader_hook(sc->o.leader, leader_changed, sc);
    db_on_submitted(db, submitted, sc);
    *out = sc;
    return 0;
}

/* Under s->mu: the thread has a turn to take. Only the first wake since
 * it last looked signals it: the ones after find the flag already up, and
 * a thread in its gap is not woken again for each submission of a flood
 * (the writer touches one for each). */
static void wake_locked(struct ctl_sched *s)
{
    if (!s->wake)
        pthread_cond_signal(&s->cv);
    s->wake = 1;
}

void ctl_sched_wake(struct ctl_sched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    wake_locked(s);
    pthread_mutex_unlock(&s->mu);
}

void ctl_sched_touch(struct ctl_sched *s, int64_t workload_seq)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    if (s->n_dirty == s->cap_dirty) {
        int cap = s->cap_dirty ? s->cap_dirty * 2 : 256;
        int64_t *d = realloc(s->dirty, sizeof(*d) * (size_t)cap);
        if (d) {
            s->dirty = d;
            s->cap_dirty = cap;
        } else {
            s->org_dirty = 1; /* cannot remember it: re-read everything */
        }
    }
    if (s->n_dirty < s->cap_dirty)
        s->dirty[s->n_dirty++] = workload_seq;
    wake_locked(s);
    pthread_mutex_unlock(&s->mu);
}

void ctl_sched_org_changed(struct ctl_sched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->org_dirty = 1;
    s->org_generation++;
    wake_locked(s);
    pthread_mutex_unlock(&s->mu);
}

uint64_t ctl_sched_org_generation(struct ctl_sched *s)
{
    uint64_t g;

    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    g = s->org_generation;
    pthread_mutex_unlock(&s->mu);
    return g;
}

/* The arrays the thread's state owns. */
static void free_arrays(struct ctl_sched *s)
{
    void *const owned[] = {s->reread, s->left, s->waited, s->shares, s->written, s->dirty};

    FREE_ALL(owned);
}

void ctl_sched_stop(struct ctl_sched *s)
{
    if (!s)
        return;
    ctl_leader_hook(s->o.leader, NULL, NULL);
    if (s->started)
        db_on_submitted(s->db, NULL, NULL);
    if (s->started)
        thread_role_stop(s->th, &s->mu, &s->cv, &s->stop);
    sm_free(&s->m);
    ctl_series_rec_free(s->series);
    ctl_feed_free(s->feed);
    sched_arena_free(s->arena);
    sched_memo_free(s->memo);
    marks_free(&s->marks);
    free_arrays(s);
    pthread_mutex_destroy(&s->run_mu);
    pthread_mutex_destroy(&s->model_mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int ctl_sched_share(struct ctl_sched *s, int64_t queue_seq, int64_t pool_seq,
                    struct ctl_share *out)
{
    int i, found = 0;

    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    for (i = 0; i < s->n_shares; i++)
        if (s->shares[i].queue_seq == queue_seq && s->shares[i].pool_seq == pool_seq) {
            *out = s->shares[i];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    return found;
}

int ctl_sched_shares(struct ctl_sched *s, struct ctl_share **out, int *n)
{
    int rc = 0;

    *out = NULL;
    *n = 0;
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    if (s->n_shares > 0) {
        *out = malloc(sizeof(**out) * (size_t)s->n_shares);
        if (*out) {
            memcpy(*out, s->shares, sizeof(**out) * (size_t)s->n_shares);
            *n = s->n_shares;
        } else {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void ctl_sched_get_stats(struct ctl_sched *s, struct ctl_sched_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

int ctl_sched_ready(struct ctl_sched *s)
{
    int ready;

    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    ready = (s->stats.cycles > 0 || s->followed) && !s->stop;
    pthread_mutex_unlock(&s->mu);
    return ready;
}
