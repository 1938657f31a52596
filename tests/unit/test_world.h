/*
 * test_world.h: a tiny builder of scheduler states for the unit tests.
 * Fixed-size arrays, one pool unless told, everything else defaults as
 * the scenario format does (binpack, deserved 0, limit -1, weight 1).
 */
#ifndef ALLOT_TEST_WORLD_H
#define ALLOT_TEST_WORLD_H

#include <stdio.h>
#include <string.h>

#include "sched.h"

#define TW_MAX 32
#define TW_PODS 8

struct tw {
    struct sched_pool pools[4];
    struct sched_node nodes[TW_MAX];
    struct sched_queue queues[TW_MAX];
    struct sched_quota quota[TW_MAX][4][SCHED_NRES];
    struct sched_workload wl[TW_MAX];
    struct sched_pod pods[TW_MAX][TW_PODS];
    struct sched_state st;
    struct sched_arena *arena;
    struct sched_result res;
    int64_t seq;
};

static inline void tw_init(struct tw *w, int n_pools)
{
    int p;

    memset(w, 0, sizeof(*w));
    for (p = 0; p < n_pools; p++) {
        w->pools[p].name = p == 0 ? "default" : p == 1 ? "pool-b" : p == 2 ? "pool-c" : "pool-d";
        w->pools[p].tbf_k_milli = 1000;
    }
    w->st.pools = w->pools;
    w->st.n_pools = n_pools;
    w->st.nodes = w->nodes;
    w->st.queues = w->queues;
    w->st.workloads = w->wl;
    w->arena = sched_arena_new();
}

static inline void tw_free(struct tw *w)
{
    sched_arena_free(w->arena);
}

static inline int tw_node(struct tw *w, const char *name, int pool, int gpus)
{
    struct sched_node *n = &w->nodes[w->st.n_nodes];

    n->name = name;
    n->pool = pool;
    n->ready = 1;
    n->n_gpus = gpus;
    n->cpu_milli = n->mem_mib = SCHED_UNLIMITED;
    return w->st.n_nodes++;
}

/* A queue with GPU deserved/limit in whole GPUs (-1 as is) and weight in units. */
static inline int tw_queue(struct tw *w, const char *name, int parent, double deserved,
                           double limit, int weight)
{
    int q = w->st.n_queues++, p, r;

    w->queues[q].name = name;
    w->queues[q].parent = parent;
    w->queues[q].quota = &w->quota[q][0][0];
    for (p = 0; p < 4; p++)
        for (r = 0; r < SCHED_NRES; r++) {
            struct sched_quota *x = &w->quota[q][p][r];
            x->deserved = r == SCHED_GPU && deserved >= 0 ? (int64_t)(deserved * 1000) : r == SCHED_GPU ? -1 : 0;
            x->limit = r == SCHED_GPU && limit >= 0 ? (int64_t)(limit * 1000) : -1;
            x->weight = r == SCHED_GPU ? weight * 1000 : 1000;
        }
    return q;
}

/* A training-like workload: pods x gpus (whole) or a portion in milli. */
static inline int tw_workload(struct tw *w, const char *name, int queue, int pods, int gpus,
                              int64_t portion, int priority)
{
    int i = w->st.n_workloads++, k;
    struct sched_workload *x = &w->wl[i];

    x->name = name;
    x->queue = queue;
    x->type = SCHED_TRAINING;
    x->priority = priority;
    x->preemptible = sched_default_preemptible(priority);
    x->phase = SCHED_PENDING;
    x->n_pods = x->min_pods = pods;
    x->gpu_devices = gpus;
    x->gpu_portion = portion;
    x->queued_seq = ++w->seq;
    x->started_ms = x->stale_since_ms = SCHED_NO_TIME;
    x->pods = w->pods[i];
    for (k = 0; k < TW_PODS; k++)
        w->pods[i][k].node = -1;
    return i;
}

/* Runs one cycle and applies its decisions; returns the decision count. */
static inline int tw_cycle(struct tw *w)
{
    int i;

    sched_arena_reset(w->arena);
    if (sched_cycle(&w->st, NULL, w->arena, &w->res) != SCHED_OK)
        return -1;
    for (i = 0; i < w->res.n_decisions; i++)
        sched_apply_decision(w->wl, w->st.n_workloads, &w->res.decisions[i], w->st.now_ms);
    for (i = 0; i < w->st.n_workloads; i++)
        w->wl[i].stale_since_ms = w->res.stale_since_ms[i];
    return w->res.n_decisions;
}

/* Cycles until nothing changes (at most 20). */
static inline void tw_settle(struct tw *w)
{
    int i;

    for (i = 0; i < 20 && tw_cycle(w) > 0; i++)
        ;
}

static inline int tw_evicted(const struct tw *w, int wl)
{
    int i;

    for (i = 0; i < w->res.n_decisions; i++)
        if (w->res.decisions[i].kind == SCHED_EVICT && w->res.decisions[i].workload == wl)
            return 1;
    return 0;
}

static inline const struct sched_pending *tw_pending(const struct tw *w, int wl)
{
    int i;

    for (i = 0; i < w->res.n_pending; i++)
        if (w->res.pending[i].workload == wl)
            return &w->res.pending[i];
    return NULL;
}

/* Places pod k of wl on node with the given device mask, as already running. */
static inline void tw_running(struct tw *w, int wl, int k, int node, uint64_t devices)
{
    w->pods[wl][k].node = node;
    w->pods[wl][k].devices = devices;
    w->wl[wl].phase = SCHED_RUNNING;
    w->wl[wl].started_ms = w->st.now_ms;
}

#endif
