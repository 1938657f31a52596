/*
 * sched_loop.c: the scheduler thread: snapshot, cycle, apply, persist.
 *
 * One cycle (run_cycle):
 *   Step 1: db_snapshot_load(): pools, nodes, queues and the live Pending
 *           and Running workloads, from one read transaction;
 *   Step 2: translate it into a struct sched_state (indices instead of
 *           seqs; times 0 become SCHED_NO_TIME);
 *   Step 3: sched_cycle() decides;
 *   Step 4: apply every decision in order with sched_apply_decision() to
 *           our copy of the workloads, then the stale-gang times;
 *   Step 5: turn every workload that changed (pods, phase, pending reason,
 *           stale time) into a db_wl_update, plus events, and write them
 *           all with db_cycle_apply() in one savepoint;
 *   Step 6: publish fair shares and counters for the API.
 * The thread runs a cycle every period, or at once when woken (a
 * submission, deletion, suspension, resumption or quota change), and
 * repeats while a cycle decides something (at most MAX_PASSES times).
 *
 * Nodes are simulated: a bound pod runs at once, so a workload whose
 * pods are all bound is Running in the same cycle.
 *
 * Invariants:
 *   1. Only this thread (or api_sched_run_once, under the same lock)
 *      places or evicts pods; the API only frees them.
 *   2. A stop request lets the current cycle finish and persist.
 */
#include "api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched.h"

#define MAX_PASSES 16

struct api_sched {
    struct db *db;
    int period_ms;
    pthread_t th;
    int started;
    pthread_mutex_t mu;     /* wake, stop, stats, shares */
    pthread_cond_t cv;
    int wake, stop;
    struct api_sched_stats stats;
    struct api_share *shares;
    int n_shares;
    pthread_mutex_t run_mu; /* one cycle at a time */
    struct sched_arena *arena;
};

/* The state of one cycle, built from a snapshot; malloc'd arrays. */
struct build {
    struct db_snapshot *snap;
    struct sched_state st;
    struct sched_pool *pools;
    struct sched_node *nodes;
    struct sched_queue *queues;
    struct sched_quota *quotas;
    struct sched_workload *wls;
    struct sched_pod *pods;
    int *wl_pools;
    int *snap_of;           /* state workload index -> snapshot index */
    char *orig_phase;       /* the phase each workload had in the snapshot */
};

static void build_free(struct build *b)
{
    db_snapshot_free(b->snap);
    free(b->pools);
    free(b->nodes);
    free(b->queues);
    free(b->quotas);
    free(b->wls);
    free(b->pods);
    free(b->wl_pools);
    free(b->snap_of);
    free(b->orig_phase);
    memset(b, 0, sizeof(*b));
}

/* Index of seq in an array ordered by seq (stride bytes apart); -1. */
static int find_seq(const void *base, int n, size_t stride, int64_t seq)
{
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int64_t s = *(const int64_t *)((const char *)base + (size_t)mid * stride);
        if (s == seq)
            return mid;
        if (s < seq)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int64_t to_time(int64_t ms)
{
    return ms ? ms : SCHED_NO_TIME;
}

static int64_t from_time(int64_t ms)
{
    return ms == SCHED_NO_TIME ? 0 : ms;
}

static void build_topology(struct build *b)
{
    struct db_snapshot *s = b->snap;
    int i;

    for (i = 0; i < s->n_pools; i++) {
        b->pools[i].name = s->pools[i].name;
        b->pools[i].gpu_placement = (uint8_t)s->pools[i].gpu_placement;
        b->pools[i].cpu_placement = (uint8_t)s->pools[i].cpu_placement;
        b->pools[i].min_guaranteed_runtime_ms = s->pools[i].min_runtime_ms;
        b->pools[i].tbf_window_ms = 7LL * 24 * 3600 * 1000;
        b->pools[i].tbf_k_milli = 1000;
    }
    for (i = 0; i < s->n_nodes; i++) {
        const struct db_node *n = &s->nodes[i];
        b->nodes[i].name = n->name;
        b->nodes[i].pool = find_seq(s->pools, s->n_pools, sizeof(s->pools[0]), n->pool_seq);
        b->nodes[i].ready = n->ready;
        b->nodes[i].n_gpus = n->n_gpus;
        b->nodes[i].cpu_milli = n->cpu_milli;
        b->nodes[i].mem_mib = n->mem_mib;
        b->nodes[i].node_type = NULL;
    }
}

/* A queue's quota triples, pool-major; a pool it names no quota for gets
 * deserved 0 (projects) or unlimited (departments); CPU and memory left
 * out are unlimited. */
static void build_queue(struct build *b, int qi)
{
    struct db_snapshot *s = b->snap;
    const struct db_queue *q = &s->queues[qi];
    struct sched_quota *qt = &b->quotas[(size_t)qi * (size_t)s->n_pools * SCHED_NRES];
    int p, r, k;

    for (p = 0; p < s->n_pools; p++)
        for (r = 0; r < SCHED_NRES; r++) {
            struct sched_quota *x = &qt[p * SCHED_NRES + r];
            x->deserved = q->kind == DB_PROJECT && r == SCHED_GPU ? 0 : SCHED_UNLIMITED;
            x->limit = SCHED_UNLIMITED;
            x->weight = 1000;
        }
    for (k = 0; k < q->n_quotas; k++) {
        p = find_seq(s->pools, s->n_pools, sizeof(s->pools[0]), q->quotas[k].pool_seq);
        for (r = 0; p >= 0 && r < SCHED_NRES; r++) {
            struct sched_quota *x = &qt[p * SCHED_NRES + r];
            if (!q->quotas[k].has[r])
                continue;
            x->deserved = q->quotas[k].deserved[r];
            x->limit = q->quotas[k].limit[r];
            x->weight = q->quotas[k].weight[r];
        }
    }
    b->queues[qi].name = q->name;
    b->queues[qi].parent = q->parent_seq
        ? find_seq(s->queues, s->n_queues, sizeof(s->queues[0]), q->parent_seq) : -1;
    b->queues[qi].rank = q->rank;
    b->queues[qi].quota = s->n_pools ? qt : NULL;
}

/* Parses a workload's comma-separated pools into indices at out. */
static int parse_pools(const struct db_snapshot *s, const char *names, int *out)
{
    int n = 0, i;

    while (names && *names && n < s->n_pools) {
        const char *c = strchr(names, ',');
        size_t len = c ? (size_t)(c - names) : strlen(names);
        for (i = 0; i < s->n_pools; i++)
            if (strlen(s->pools[i].name) == len && strncmp(s->pools[i].name, names, len) == 0)
                out[n++] = i;
        names = c ? c + 1 : NULL;
    }
    return n;
}

static void build_workload(struct build *b, int si, int wi, struct sched_pod *pods, int *pools)
{
    const struct db_snapshot *s = b->snap;
    const struct db_sched_wl *w = &s->workloads[si];
    struct sched_workload *x = &b->wls[wi];
    int k;

    x->name = w->name;
    x->queue = find_seq(s->queues, s->n_queues, sizeof(s->queues[0]), w->project_seq);
    x->type = w->type;
    x->priority = w->priority;
    x->preemptible = w->preemptible;
    x->phase = strcmp(w->phase, "Running") == 0 ? SCHED_RUNNING : SCHED_PENDING;
    x->n_pods = w->n_pods;
    x->min_pods = w->min_pods;
    x->gpu_devices = w->gpu_devices;
    x->gpu_portion = w->gpu_portion;
    x->cpu_milli = w->cpu_milli;
    x->mem_mib = w->mem_mib;
    x->n_pools = parse_pools(s, w->pools, pools);
    x->pools = x->n_pools ? pools : NULL;
    x->node_type = w->node_type[0] ? w->node_type : NULL;
    x->queued_seq = w->queued_seq;
    x->started_ms = to_time(w->started_ms);
    x->stale_since_ms = to_time(w->stale_since_ms);
    x->pods = pods;
    for (k = 0; k < w->n_pods; k++) {
        pods[k].node = w->pods[k].node_seq
            ? find_seq(s->nodes, s->n_nodes, sizeof(s->nodes[0]), w->pods[k].node_seq) : -1;
        pods[k].devices = pods[k].node >= 0 ? w->pods[k].devices : 0;
    }
    b->snap_of[wi] = si;
    b->orig_phase[wi] = (char)x->phase;
}

static int build_alloc(struct build *b)
{
    struct db_snapshot *s = b->snap;
    size_t n_pods = 0;
    int i;

    for (i = 0; i < s->n_workloads; i++)
        n_pods += (size_t)s->workloads[i].n_pods;
    b->pools = calloc((size_t)s->n_pools + 1, sizeof(*b->pools));
    b->nodes = calloc((size_t)s->n_nodes + 1, sizeof(*b->nodes));
    b->queues = calloc((size_t)s->n_queues + 1, sizeof(*b->queues));
    b->quotas = calloc((size_t)s->n_queues * (size_t)s->n_pools * SCHED_NRES + 1,
                       sizeof(*b->quotas));
    b->wls = calloc((size_t)s->n_workloads + 1, sizeof(*b->wls));
    b->pods = calloc(n_pods + 1, sizeof(*b->pods));
    b->wl_pools = calloc((size_t)s->n_workloads * (size_t)s->n_pools + 1, sizeof(int));
    b->snap_of = calloc((size_t)s->n_workloads + 1, sizeof(int));
    b->orig_phase = calloc((size_t)s->n_workloads + 1, 1);
    return b->pools && b->nodes && b->queues && b->quotas && b->wls && b->pods &&
           b->wl_pools && b->snap_of && b->orig_phase ? 0 : -1;
}

/* Step 1 and 2 */
static int build_state(struct api_sched *sc, struct build *b, int64_t now_ms)
{
    struct db_snapshot *s;
    struct sched_pod *pods;
    int i, n = 0;

    memset(b, 0, sizeof(*b));
    if (db_snapshot_load(sc->db, &b->snap) != DB_OK)
        return -1;
    s = b->snap;
    if (build_alloc(b) != 0)
        return -1;
    build_topology(b);
    for (i = 0; i < s->n_queues; i++)
        build_queue(b, i);
    pods = b->pods;
    for (i = 0; i < s->n_workloads; i++) {
        if (find_seq(s->queues, s->n_queues, sizeof(s->queues[0]),
                     s->workloads[i].project_seq) < 0)
            continue;
        build_workload(b, i, n, pods, &b->wl_pools[(size_t)i * (size_t)s->n_pools]);
        pods += s->workloads[i].n_pods;
        n++;
    }
    b->st.now_ms = now_ms;
    b->st.pools = b->pools;
    b->st.n_pools = s->n_pools;
    b->st.nodes = b->nodes;
    b->st.n_nodes = s->n_nodes;
    b->st.queues = b->queues;
    b->st.n_queues = s->n_queues;
    b->st.workloads = b->wls;
    b->st.n_workloads = n;
    return 0;
}

/* ---- Step 4 and 5: from decisions to rows ---- */

struct persist {
    struct db_wl_update *ups;
    struct db_wl_event *evs;
    struct db_sched_pod *pods;
    char (*msgs)[DB_MSG_LEN];   /* one message per event and per pending workload */
    unsigned char *touched;
    int n_ups, n_evs, n_msgs;
};

static void persist_free(struct persist *p)
{
    free(p->ups);
    free(p->evs);
    free(p->pods);
    free(p->msgs);
    free(p->touched);
}

static const char *evict_reason(int action)
{
    switch (action) {
    case SCHED_ACT_RECLAIM: return "Reclaimed";
    case SCHED_ACT_PREEMPT: return "Preempted";
    case SCHED_ACT_STALE_GANG: return "StaleGang";
    default: return "Evicted";
    }
}

static void decision_event(struct build *b, struct persist *p, const struct sched_decision *d)
{
    const struct sched_workload *w = &b->wls[d->workload];
    struct db_wl_event *e = &p->evs[p->n_evs];
    char *m = p->msgs[p->n_msgs];
    const char *by = d->by_workload >= 0 ? b->wls[d->by_workload].name : NULL;
    const char *by_q = d->by_workload >= 0 ? b->queues[b->wls[d->by_workload].queue].name : "";

    if (d->kind == SCHED_BIND)
        return;
    if (d->kind == SCHED_EVICT)
        snprintf(m, DB_MSG_LEN, "%s was evicted by %s%s%s%s%s; it goes back to Pending",
                 w->name, sched_action_name(d->action), by ? " to make room for " : "",
                 by ? by : "", by ? " of " : "", by ? by_q : "");
    else
        snprintf(m, DB_MSG_LEN, "pod %d of %s moved to %s by %s", d->pod, w->name,
                 b->nodes[d->node].name, sched_action_name(d->action));
    e->workload_seq = b->snap->workloads[b->snap_of[d->workload]].seq;
    e->type = d->kind == SCHED_EVICT ? "Warning" : "Normal";
    e->reason = d->kind == SCHED_EVICT ? evict_reason(d->action) : "Moved";
    e->message = m;
    p->n_evs++;
    p->n_msgs++;
}

static void running_event(struct build *b, struct persist *p, int wi)
{
    const struct sched_workload *w = &b->wls[wi];
    struct db_wl_event *e = &p->evs[p->n_evs];
    char *m = p->msgs[p->n_msgs];
    size_t used;
    int k;

    used = (size_t)snprintf(m, DB_MSG_LEN, "%s is running: %d pod%s placed on", w->name,
                            w->n_pods, w->n_pods == 1 ? "" : "s");
    for (k = 0; k < w->n_pods && used < DB_MSG_LEN - 1; k++)
        if (w->pods[k].node >= 0)
            used += (size_t)snprintf(m + used, DB_MSG_LEN - used, " %s",
                                     b->nodes[w->pods[k].node].name);
    e->workload_seq = b->snap->workloads[b->snap_of[wi]].seq;
    e->type = "Normal";
    e->reason = "Running";
    e->message = m;
    p->n_evs++;
    p->n_msgs++;
}

static int persist_alloc(struct build *b, const struct sched_result *res, struct persist *p)
{
    int n = b->st.n_workloads, nd = res->n_decisions;
    size_t n_pods = 0;
    int i;

    for (i = 0; i < n; i++)
        n_pods += (size_t)b->wls[i].n_pods;
    memset(p, 0, sizeof(*p));
    p->ups = calloc((size_t)n + 1, sizeof(*p->ups));
    p->evs = calloc((size_t)nd + (size_t)n + 1, sizeof(*p->evs));
    p->pods = calloc(n_pods + 1, sizeof(*p->pods));
    p->msgs = calloc((size_t)nd + 2 * (size_t)n + 1, sizeof(*p->msgs));
    p->touched = calloc((size_t)n + 1, 1);
    return p->ups && p->evs && p->pods && p->msgs && p->touched ? 0 : -1;
}

/* Fills the update of workload wi if anything about it changed. */
static void workload_update(struct build *b, struct persist *p, int wi, const char *reason,
                            const char *message, struct db_sched_pod *pods)
{
    const struct sched_workload *w = &b->wls[wi];
    const struct db_sched_wl *o = &b->snap->workloads[b->snap_of[wi]];
    struct db_wl_update *u;
    int k;

    if (!p->touched[wi] && w->phase == b->orig_phase[wi] && strcmp(reason, o->phase_reason) == 0 &&
        from_time(w->stale_since_ms) == o->stale_since_ms)
        return;
    u = &p->ups[p->n_ups++];
    u->seq = o->seq;
    u->version = o->version;
    u->phase = w->phase == SCHED_RUNNING ? "Running" : "Pending";
    u->phase_reason = reason;
    u->phase_message = message;
    u->started_ms = from_time(w->started_ms);
    u->stale_since_ms = from_time(w->stale_since_ms);
    u->pods_changed = p->touched[wi];
    u->pods = pods;
    u->n_pods = w->n_pods;
    for (k = 0; k < w->n_pods; k++) {
        pods[k].node_seq = w->pods[k].node >= 0 ? b->snap->nodes[w->pods[k].node].seq : 0;
        pods[k].devices = w->pods[k].devices;
    }
}

static int persist_cycle(struct api_sched *sc, struct build *b, const struct sched_result *res,
                         int64_t now_ms)
{
    struct persist p;
    const char **reasons = NULL, **messages = NULL;
    struct db_sched_pod *pods;
    struct db_cycle cy;
    int i, applied, rc = -1;

    if (persist_alloc(b, res, &p) != 0)
        goto out;
    reasons = calloc((size_t)b->st.n_workloads + 1, sizeof(*reasons));
    messages = calloc((size_t)b->st.n_workloads + 1, sizeof(*messages));
    if (!reasons || !messages)
        goto out;
    /* Step 4 */
    for (i = 0; i < res->n_decisions; i++) {
        const struct sched_decision *d = &res->decisions[i];
        if (sched_apply_decision(b->wls, b->st.n_workloads, d, now_ms) != SCHED_OK)
            continue;
        p.touched[d->workload] = 1;
        decision_event(b, &p, d);
    }
    for (i = 0; i < b->st.n_workloads; i++) {
        b->wls[i].stale_since_ms = res->stale_since_ms ? res->stale_since_ms[i]
                                                       : b->wls[i].stale_since_ms;
        reasons[i] = messages[i] = "";
        if (b->wls[i].phase == SCHED_RUNNING && b->orig_phase[i] != SCHED_RUNNING)
            running_event(b, &p, i);
    }
    for (i = 0; i < res->n_pending; i++) {
        const struct sched_pending *pe = &res->pending[i];
        if (pe->workload < 0 || pe->workload >= b->st.n_workloads)
            continue;
        reasons[pe->workload] = sched_reason_name(pe->reason);
        sched_reason_message(&b->st, pe, p.msgs[p.n_msgs], DB_MSG_LEN);
        messages[pe->workload] = p.msgs[p.n_msgs++];
    }
    /* Step 5 */
    pods = p.pods;
    for (i = 0; i < b->st.n_workloads; i++) {
        workload_update(b, &p, i, reasons[i], messages[i], pods);
        pods += b->wls[i].n_pods;
    }
    cy.now_ms = now_ms;
    cy.updates = p.ups;
    cy.n_updates = p.n_ups;
    cy.events = p.evs;
    cy.n_events = p.n_evs;
    rc = db_cycle_apply(sc->db, &cy, &applied) == DB_OK ? 0 : -1;
out:
    free(reasons);
    free(messages);
    persist_free(&p);
    return rc;
}

/* Step 6 */
static void publish(struct api_sched *sc, struct build *b, const struct sched_result *res,
                    int64_t us)
{
    int nq = b->st.n_queues, np = b->st.n_pools, q, pl, r;
    struct api_share *sh = calloc((size_t)nq * (size_t)np + 1, sizeof(*sh));

    for (q = 0; sh && q < nq; q++)
        for (pl = 0; pl < np; pl++) {
            const struct sched_share *x = sched_result_share(res, q, pl);
            struct api_share *y = &sh[q * np + pl];
            y->queue_seq = b->snap->queues[q].seq;
            y->pool_seq = b->snap->pools[pl].seq;
            for (r = 0; x && r < 3; r++) {
                y->fair[r] = x->fair[r];
                y->allocated[r] = x->allocated[r];
                y->requested[r] = x->requested[r];
            }
        }
    pthread_mutex_lock(&sc->mu);
    if (sh) {
        free(sc->shares);
        sc->shares = sh;
        sc->n_shares = nq * np;
    }
    sc->stats.cycles++;
    sc->stats.decisions += res->n_decisions;
    sc->stats.last_cycle_us = us;
    if (us > sc->stats.max_cycle_us)
        sc->stats.max_cycle_us = us;
    sc->stats.pending = res->n_pending;
    pthread_mutex_unlock(&sc->mu);
}

static int64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int run_cycle(struct api_sched *sc, int *n_decisions)
{
    struct build b;
    struct sched_result res;
    struct sched_config cfg;
    int64_t t0 = mono_us(), now = api_now_ms();
    int rc = -1;

    *n_decisions = 0;
    pthread_mutex_lock(&sc->run_mu);
    if (build_state(sc, &b, now) != 0)
        goto out;
    sched_config_default(&cfg);
    sched_arena_reset(sc->arena);
    memset(&res, 0, sizeof(res));
    if (sched_cycle(&b.st, &cfg, sc->arena, &res) != SCHED_OK)
        goto out;
    if (persist_cycle(sc, &b, &res, now) != 0)
        goto out;
    *n_decisions = res.n_decisions;
    publish(sc, &b, &res, mono_us() - t0);
    rc = 0;
out:
    build_free(&b);
    pthread_mutex_unlock(&sc->run_mu);
    return rc;
}

int api_sched_run_once(struct api_sched *s, int *n_decisions)
{
    return run_cycle(s, n_decisions);
}

static void *sched_main(void *arg)
{
    struct api_sched *sc = arg;
    struct timespec until;
    int n, pass;

    for (;;) {
        pthread_mutex_lock(&sc->mu);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += sc->period_ms / 1000;
        until.tv_nsec += (long)(sc->period_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!sc->wake && !sc->stop)
            if (pthread_cond_timedwait(&sc->cv, &sc->mu, &until) != 0)
                break;
        sc->wake = 0;
        if (sc->stop) {
            pthread_mutex_unlock(&sc->mu);
            break;
        }
        pthread_mutex_unlock(&sc->mu);
        for (pass = 0; pass < MAX_PASSES; pass++)
            if (run_cycle(sc, &n) != 0 || n == 0)
                break;
    }
    return NULL;
}

int api_sched_start(struct db *db, int period_ms, struct api_sched **out)
{
    struct api_sched *sc = calloc(1, sizeof(*sc));

    *out = NULL;
    if (!sc)
        return -1;
    sc->db = db;
    sc->period_ms = period_ms > 0 ? period_ms : 1000;
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
    pthread_mutex_init(&sc->run_mu, NULL);
    sc->arena = sched_arena_new();
    if (!sc->arena || pthread_create(&sc->th, NULL, sched_main, sc) != 0) {
        sc->started = 0;
        api_sched_stop(sc);
        return -1;
    }
    sc->started = 1;
    *out = sc;
    return 0;
}

void api_sched_wake(struct api_sched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->wake = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void api_sched_stop(struct api_sched *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
    }
    sched_arena_free(s->arena);
    free(s->shares);
    pthread_mutex_destroy(&s->run_mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int api_sched_share(struct api_sched *s, int64_t queue_seq, int64_t pool_seq,
                    struct api_share *out)
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

void api_sched_get_stats(struct api_sched *s, struct api_sched_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}
