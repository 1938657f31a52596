/*
 * sched_int.h: what the core's files share and nobody else sees.
 *
 * A cycle builds one `struct sched_session` from the caller's state: a
 * mutable copy of every pod's placement, per-node device accounting, and
 * per (queue, pool) accounting up the queue tree. Actions change it only
 * through session.c's place/unplace functions, which log every change so
 * that a failed attempt rolls back exactly (KAI's Statement).
 *
 * Invariants (checked by sched__session_check() in tests):
 *   1. node.dev_used[d] is the sum of the milli-GPU of the pods on device d;
 *      a device in node.dev_whole holds exactly one whole-device pod.
 *   2. node.n_empty counts devices with dev_used == 0; pool.empty_hist[k]
 *      counts ready nodes of the pool with k empty devices.
 *   3. qp(q, p).alloc is the sum over placed pods in pool p of workloads
 *      in q's subtree; alloc_np the same for non-preemptible workloads;
 *      qtot(q).alloc is the sum over pools.
 *   4. decisions[0..n_decisions) and the undo log only grow inside an
 *      attempt; sched__rollback() returns both to a checkpoint.
 */
#ifndef ALLOT_SCHED_INT_H
#define ALLOT_SCHED_INT_H

#include "sched.h"

#define SS_INF INT64_MAX           /* an unbounded amount */

/* For a hot function that counts bits (__builtin_popcountll()): on x86-64
 * with glibc (ifunc), gcc or clang build it twice and the loader picks the
 * clone for the CPU, one that uses the popcnt instruction where the CPU has
 * it; the other, and every other target, counts with the compiler's
 * portable code (libgcc's __popcountdi2 on baseline x86-64). The answers are
 * the same. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SS_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#endif
#endif
#ifndef SS_POPCNT_CLONES
#define SS_POPCNT_CLONES
#endif
#define SS_BIG (INT64_MAX / 8)     /* "plenty" capacity that still adds safely */

void *sched__alloc(struct sched_arena *arena, size_t n);
void *sched__calloc(struct sched_arena *arena, size_t count, size_t size);
/* Not zero-filled: only for the callers arena.c's Invariant 5 names. */
void *sched__alloc_raw(struct sched_arena *arena, size_t n);
void *sched__array_raw(struct sched_arena *arena, size_t count, size_t size);
/* *arr with room for `need` ints (*cap of them), its first n kept: when
 * short, a zeroed array of the arena twice as large (at least `least`). */
int sched__ints_room(struct sched_arena *arena, int **arr, int *cap, int n, int need, int least);

/* sort.c: stable sort of indices; before(ctx, a, b) is 1 when a goes first. */
typedef int (*sched__before_fn)(const void *ctx, int a, int b);
int sched__sort(struct sched_arena *arena, int *idx, int n, sched__before_fn before,
                const void *ctx);
void sched__sort_with(int *idx, int *tmp, int n, sched__before_fn before, const void *ctx);
/* The indices' own order (a < b), for sorting plain indices. */
int sched__ascending(const void *ctx, int a, int b);

/* ---- Derived state ---- */
struct ss_node {
    int pool;
    int ready;
    int n_gpus;
    int n_empty;
    int name_rank;            /* position in name order: ties go to the lower */
    int pool_pos;             /* position in its pool's node list */
    uint64_t dev_whole;       /* devices held by a whole-device pod */
    int32_t *dev_used;        /* [n_gpus] milli-GPU in use */
    int64_t *used_prefix;     /* [n_gpus + 1] sums of the k smallest non-zero dev_used,
                               * k = 0..n_used; valid while used_prefix_ok */
    int n_used, used_prefix_ok;
    int64_t gpu_free;         /* milli-GPU free on the node */
    int64_t cpu_total, cpu_free;
    int64_t mem_total, mem_free;
    int64_t gpu_mem;          /* MiB of each device; 0 unknown */
    int *pods;                /* (workload << 8 | pod) would overflow: pairs */
    int n_pods, cap_pods;     /* pods[2*i] = workload, pods[2*i+1] = pod */
    uint64_t serial;          /* names the node's state: a new serial (ss->n_serials) at each
                               * change (node_add()), a rollback's included; 0 as built */
};

/* A pool's nodes in its GPU strategy's order (binpack or spread: node_better()
 * in placement.c), for the best node of a whole-device pod without walking the
 * pool. Built when first asked; node_add() reports each node whose room
 * changed (sched__node_index_touch()) and the next question files those again,
 * so a change rolled back before it is asked costs one comparison. */
struct ss_node_index {
    int *order;               /* [n_nodes] the pool's nodes, the preferred first */
    int *tmp;                 /* [n_nodes] the sort's */
    int64_t *filed;           /* [n_nodes] by pool position: the gpu_free it is filed by */
    uint8_t *short_of;        /* [n_nodes] by pool position: filed with a device over
                               * its capacity (gpu_free < SCHED_MILLI x n_empty) */
    int n_short;              /* nodes with short_of set */
    int *dirty;               /* pool positions of nodes changed since filed */
    uint8_t *is_dirty;        /* [n_nodes] by pool position */
    int n_dirty;
    int spread;               /* the order is SCHED_SPREAD's (else SCHED_BINPACK's) */
};

/* What a diagnosis reads of a pool's ready nodes together (reasons.c):
 * the most one has free, the most one has in all, and what all have free,
 * per resource. */
#define SS_POOL_FIGS (3 * SCHED_NRES)

struct ss_pool {
    int *nodes;               /* node indices of this pool, in name order */
    int n_nodes;
    int *empty_hist;          /* [SCHED_MAX_NODE_GPUS + 1], ready nodes only */
    int64_t total_empty;      /* empty devices over ready nodes */
    int64_t capacity[SCHED_NRES];
    int max_node_gpus;        /* largest ready node */
    int max_empty;            /* most empty devices on one ready node */
    int64_t max_gpu_mem;      /* largest device memory (MiB) on a ready node */
    uint64_t *has_empty;      /* bit i: ready node nodes[i] has an empty device */
    int64_t gpu_free;         /* free milli-GPU over ready nodes */
    /* each node's free GPU, CPU and memory by pool position, node_free[pos *
     * SCHED_NRES + res] (node_add() writes it beside the node's own), and
     * whether it is ready: a walk of the pool's figures (reasons.c) reads
     * 25 bytes a node, not two lines of struct ss_node */
    int64_t *node_free;
    uint8_t *node_ready;
    int64_t most_total[SCHED_NRES]; /* the most a ready node has in all (INT64_MIN: none) */
    int uniform;              /* every ready node of one size (session.c, pool_uniform()) */
    int n_ready;              /* ready nodes */
    int a_ready;              /* the first ready node in name order (-1: none) */
    int *running;             /* workloads with pods here at the start of the cycle */
    int n_running, cap_running;
    int running_pods;         /* the running workloads' pods (n_pods), summed: bounds
                                 the victim search's units without a walk */
    struct ss_node_index *index; /* NULL until first asked (placement.c) */
    /* sched__pool_node_figures()'s answer at the pool's state figs_at - 1
     * (ss->pool_version, which names every change of node_free and
     * node_ready and which rollback restores with them); 0: none yet */
    int64_t figs[SS_POOL_FIGS];
    uint64_t figs_at;
};

/* Accounting of one queue in one pool. */
struct ss_qp {
    int64_t alloc[SCHED_NRES];
    int64_t alloc_np[SCHED_NRES];
    int64_t request[SCHED_NRES];    /* demand, capped by limit (fair share input) */
    int64_t fair[SCHED_NRES];
    int64_t deserved[SCHED_NRES];   /* as configured */
    int64_t limit[SCHED_NRES];
    int64_t weight[SCHED_NRES];
    double usage[SCHED_NRES];       /* time-based fairshare: share of capacity used */
    int rank;                       /* among its siblings in the pool (sched__rank()) */
};

struct ss_queue {
    int parent;
    int depth;
    int *children;
    int n_children;
    int is_leaf;
    int64_t tot_alloc[SCHED_NRES];  /* over every pool */
    int64_t tot_fair[SCHED_NRES];
    int64_t tot_deserved[SCHED_NRES];  /* SS_INF if unlimited anywhere */
    int64_t tot_limit[SCHED_NRES];     /* SS_INF if unlimited anywhere */
    int min_running_priority;          /* lowest priority of its running preemptible work */
};

/* One level of a pool's topology (topology.c): its domains. */
struct ss_topo_level {
    const char *key;
    int *dom;                 /* [pool n_nodes] by pool position: the node's domain, or -1 */
    int n_dom;
    int *first;               /* [n_dom + 1]: domain d's nodes are nodes[first[d]..first[d+1]) */
    int *nodes;               /* node indices by domain, each domain's in name order */
    int *busy;                /* [n_dom] its nodes with a GPU in use */
    int64_t *free, *cap;      /* [n_dom] GPU free and in all over its ready nodes (node_add()
                                 keeps free) */
    int64_t *usable_free;     /* [n_dom] scratch (topology.c, try_level()): free GPU on the
                                 nodes one workload may use */
    int64_t max_cap;          /* the most GPU one domain has in all */
    int64_t max_free;         /* the most GPU free in one domain, in the pool's state */
    uint64_t free_at;         /* (topology.c, level_most_free()) ss->pool_version + 1 then; 0: none */
};
struct ss_topo {
    int n_levels;             /* 0: the pool has no topology */
    struct ss_topo_level *level;
};

/* Flags of a workload within one cycle. */
#define WL_CANDIDATE 0x01   /* has pods to place */
#define WL_EVICTED   0x02   /* lost pods in this cycle: not placed again, not a victim again */
#define WL_TOUCHED   0x04   /* placed or moved in this cycle: not a victim in this cycle */
#define WL_ACTIVE    0x08   /* holds or wants resources (Pending/Running) */
#define WL_SHRUNK    0x10   /* lost elastic pods in this cycle: does not grow again in it */

struct ss_wl {
    int n_placed;
    int pool;                 /* pool of its placed pods, or -1 */
    int flags;
    int cls;                  /* node-constraint class (affinity.c); 0: none */
    const int *pools;         /* resolved candidate pools */
    int n_pools;
    int64_t req[SCHED_NRES];  /* per pod */
};

/* One logged change, undone in reverse order. */
struct ss_undo {
    int workload;
    int pod;
    int node;                 /* node the pod was on before (-1: none) */
    uint64_t devices;         /* its devices before */
    int pool;                 /* the pool the change was in, and its version before */
    uint64_t pool_version;
    uint64_t serial;          /* names the entry: no two entries of a session share one */
};

struct ss_mark {
    int n_undo;
    int n_decisions;
    uint64_t version;
};

/* One shape of the workload mix that asks a GPU, as frag.c reads it. */
struct ss_shape {
    const struct sched_workload *shape;   /* own, below */
    struct sched_workload own; /* the mix entry's requests and node types, copied into the
                                  session's arena: a kept session outlives the mix it was
                                  built with (sched__frag_same_mix()) */
    int devices;              /* per pod */
    int32_t charge;           /* milli-GPU per device; -1: by the node's device memory */
    int64_t cpu, mem, weight;
};

struct ss_frag {
    int built;                /* some pool measures fragmentation and there was a mix */
    int n;                    /* 0: no pool measures fragmentation, or no GPU shape */
    struct ss_shape *shapes;  /* [n] */
    uint64_t *denied;         /* [n_nodes] bit j: shape j may not use the node; NULL: none */
    int64_t *base;            /* [n_nodes] each node's fragmentation, valid where known[] */
    uint8_t *known;           /* [n_nodes] FRAG_BASE | FRAG_ANSWER: what base[] and
                                 answer[] hold; cleared when a pod comes or goes (node_add()) */
    struct frag_answer *answer; /* [n_nodes] the last sched__frag_devices() answer there */
    struct frag_fit *fitting; /* [n_nodes] sched__best_node()'s candidates of the best rank */
    void *memo;               /* [memo_mask + 1] struct frag_memo (frag.c): F of node states */
    uint64_t *memo_id;        /* [memo_mask + 2] the serial of the slot's state (0: none);
                                 [memo_mask + 1]: the last serial given */
    uint64_t *base_id;        /* [n_nodes] the serial of each node's state, with base[] */
    void *rises;              /* [memo_mask + 1] struct frag_rise (frag.c): whole-device
                                 pods' rises per state serial and shape */
    size_t memo_mask;
};
/* A node that fits a pod, and the empty devices the pod opens there. */
struct frag_fit {
    int node, fresh;
};
/* One sched__frag_devices() answer on a node: for pods shaped as w's. */
struct frag_answer {
    int w;
    uint64_t devices;
    int64_t rise;
};
enum { FRAG_BASE = 1, FRAG_ANSWER = 2 };
/* Node states of at most this many devices are remembered (frag.c). */
#define FRAG_MEMO_GPUS 16

/* Attempts known to fail (actions.c; memo.c Step 5 keeps them): the
 * reclaim and preempt attempts that failed in the settled cycle, per
 * workload and pool (bit SS_KNOWN_BIT(mode, pool), and the same bit
 * << 16 when the attempt noted a hopeless shape, victims.c), for pools
 * below SS_KNOWN_POOLS. An attempt there is answered from them while its
 * pool is as it was then: not changed by the delta (`dirty`), with the
 * same fair shares, and its version the one it had when the cycle began
 * (base[p]; UINT64_MAX: changed). */
#define SS_KNOWN_POOLS 8
#define SS_HELD_AT(ss, q, p) (((size_t)(q) * (size_t)(ss)->n_pools + (size_t)(p)) * 2 * SCHED_NRES)
#define SS_KNOWN_BIT(mode, pool) (1u << ((mode) * SS_KNOWN_POOLS + (pool)))
struct ss_known {
    const uint32_t *fail;   /* [n_fail]: the settled cycle's, NULL: none */
    int n_fail;
    uint32_t *record;       /* [n_record]: this cycle's, for the next (all 0 at first) */
    int n_record;
    int *set;               /* [cap_set] the workloads whose record went from 0, n_set of
                               them (past cap_set only counted: any may be set) */
    int n_set, cap_set;
    const int64_t *fair;    /* the settled cycle's fair shares [queue][pool][res] */
    uint64_t dirty;         /* pools the delta changed (bit p; pools >= 64: all) */
    int prior;              /* the session is the settled cycle's, with the delta (Step 5) */
    uint64_t *base;         /* [n_pools] */
    uint32_t fair_same;     /* bit p: every queue's fair share in pool p is the kept one */
    uint64_t quotas;        /* pools where the delta moved a quota or rank (bit p; pools
                               >= 64: all): no diagnosis there stands as settled */
    int64_t answered;       /* attempts answered from fail[] */
    int check;              /* tests: make each answered attempt too, and compare */
    int64_t wrong;          /* check: answers the attempt contradicted */
    const int64_t *held;    /* the settled cycle's alloc then alloc_np [queue][pool][2 * res]
                               (queue q's in pool p from SS_HELD_AT(ss, q, p)) */
    const int64_t *figs;    /* ... and its pools' node figures [pool][SS_POOL_FIGS] */
    uint64_t diag_at[SS_KNOWN_POOLS]; /* pool version + 1 diag_same and moved were found
                                         in (0: not) */
    uint32_t diag_same;     /* bit p: what every diagnosis in pool p reads of the pool as
                               a whole is as settled */
    uint8_t *moved;         /* [pool][queue]: the queue, an ancestor or a descendant
                               holds in pool what it did not in the settled cycle (bit 1:
                               the queue itself, 2: a descendant, 4: an ancestor; the
                               same three times SS_MOVED_ALLOC when the allocation moved,
                               not only the non-preemptible one) */
};
/* struct ss_known's moved bits: the queue's own move, of anything it holds
 * or of its allocation. */
#define SS_MOVED_ANY 1
#define SS_MOVED_ALLOC 8

/* How the last victim search failed (victims.c, evict_attempt()). */
enum { SS_TRACE_QUIET, SS_TRACE_NOTED, SS_TRACE_UNKNOWN };

struct sched_session {
    const struct sched_state *in;
    const struct sched_config *cfg;
    struct sched_arena *arena;
    struct sched_arena *cycle_arena;  /* during sched__cycle_on(): the result's arena, for
                                         what one action allocates and drops (order.c's
                                         iterators), so a kept session does not grow by it */
    int n_pools, n_queues, n_nodes, n_workloads;
    struct ss_node *nodes;
    struct ss_pool *pools;
    struct ss_queue *queues;
    struct ss_qp *qp;                 /* [n_queues * n_pools] */
    struct ss_wl *wl;                 /* [cap_workloads] */
    struct sched_pod **pods;          /* [cap_workloads] -> mutable copy of pods */
    int cap_workloads;
    struct ss_undo *undo; int n_undo, cap_undo;
    struct sched_decision *decisions; int n_decisions, cap_decisions;
    uint64_t version;                 /* names the placement state; restored by rollback */
    uint64_t *pool_version;           /* [n_pools]: names the pool's placement state (the
                                         version of its last change); restored by rollback */
    uint64_t n_versions;              /* versions handed out so far */
    uint64_t n_serials;               /* serials handed out so far (undo entries, log_base,
                                         nodes' states) */
    uint64_t log_base;                /* names the state the undo log starts from: a new
                                         serial whenever the session changes outside the log */
    uint64_t units_base;              /* names the running workloads' placements with an
                                         empty undo log: a new serial when a log is emptied
                                         with changes in it (victims.c, Invariant 2) */
    void *victim_scratch;             /* victims.c's buffers, reused by every attempt */
    void *order_cache;                /* order.c's job order, shared by the actions */
    void *diag_cache;                 /* reasons.c's figures of each pool, per pool state */
    int8_t **class_rank;              /* [n_classes][n_nodes] (affinity.c); [0] unused */
    int *class_first;                 /* a workload of each class */
    int n_classes, cap_classes;
    struct ss_frag frag;              /* frag.c */
    int oom;                          /* an arena allocation failed */
    int n_stale_set;                  /* stale times sched__stale_gangs() set (not evicted) */
    int n_partial;                    /* workloads WL_ACTIVE with some pods placed but fewer
                                         than their minimum (do_place(), do_unplace()); at
                                         least those of the running lists: 0, none is stale */
    const int64_t *no_stale;          /* NULL, or [n_workloads] all SCHED_NO_TIME (memo.c):
                                         the result's stale times when no gang is below
                                         its minimum, written by nobody */
    const int *waiting_known;         /* NULL, or [n_waiting_known] ascending (memo.c,
                                         Invariant 7): every running workload with pods
                                         left to place before the cycle, less none that
                                         left since; sched__record_waiting() reads these
                                         and the decisions' instead of the running lists */
    int n_waiting_known;
    int fair_current;                 /* the fair shares were found on this very state
                                         (memo.c Step 7: before a trial since undone):
                                         the next cycle reads them, not finds them again */
    struct ss_known *known;           /* attempts known to fail, or NULL */
    int attempt_trace;                /* SS_TRACE_*: how the last victim search failed */
    /* topology.c: per pool its levels' domains (NULL: no topology in the
     * state), and the attempt's restriction: workload topo_w may use only
     * the nodes with topo_mask set (topo_try names the domain, 0: none) */
    struct ss_topo *topo;
    int topo_asked;                   /* an active workload requires a level (session.c) */
    uint8_t *topo_mask;
    int topo_w;
    int64_t topo_try;
    const int *topo_nodes;            /* the domain's nodes, topo_n of them */
    int topo_n;
    int *topo_order, *topo_tmp;       /* scratch: domains of one level */
    int64_t *topo_freeable;           /* scratch: [n_nodes] GPU a victim attempt could free */
};

static inline struct ss_qp *ss_qp(struct sched_session *ss, int q, int p)
{
    return &ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p];
}

static inline const struct sched_workload *ss_w(const struct sched_session *ss, int w)
{
    return &ss->in->workloads[w];
}

static inline int64_t ss_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* FNV-1a over 64-bit values, a step per value (the signature and
 * diagnosis hashes: written out, not looped over an array, as they run
 * for every pending workload of a cycle). */
#define SS_FNV_BASIS 1469598103934665603ULL
static inline uint64_t ss_fnv(uint64_t h, int64_t v) { return (h ^ (uint64_t)v) * 1099511628211ULL; }
static inline uint64_t ss_fnv_ints(uint64_t h, const int *v, int n)
{
    int i;

    for (i = 0; i < n; i++)
        h = ss_fnv(h, v[i]);
    return h;
}

/* Rank of queue q among its siblings in pool p. */
static inline int sched__rank(const struct sched_session *ss, int q, int p)
{
    return ss->qp[(size_t)q * (size_t)ss->n_pools + (size_t)p].rank;
}

/* Pods of w an attempt places: every missing gang member, or one more pod
 * of an elastic workload at or above its minimum. */
static inline int sched__pods_to_place(const struct sched_session *ss, int w)
{
    const struct sched_workload *wl = ss_w(ss, w);
    int placed = ss->wl[w].n_placed;

    if (placed >= wl->n_pods)
        return 0;
    return placed < wl->min_pods ? wl->min_pods - placed : 1;
}
static inline int64_t ss_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* session.c */
int sched__session_build(struct sched_session *ss, const struct sched_state *in,
                         const struct sched_config *cfg, struct sched_arena *arena);
int sched__place(struct sched_session *ss, int w, int pod, int node, uint64_t devices);
int sched__unplace(struct sched_session *ss, int w, int pod);
struct ss_mark sched__mark(const struct sched_session *ss);
void sched__rollback(struct sched_session *ss, struct ss_mark m);
int sched__decide(struct sched_session *ss, int kind, int action, int w, int pod, int node,
                  uint64_t devices, int by);
int sched__session_check(const struct sched_session *ss);
/* session.c (tests): NULL when a and b (one kept, one built from the same
 * snapshot) hold the same derived state: per node its device usage, free
 * resources and pod count; per pool its empty devices, free GPU and running
 * list in order; per workload its placement, pool, flags and requests; per
 * queue its allocation, demand and lowest running priority, and per pool
 * its quotas and rank. Else what differs first. Versions, caches and class
 * numbers are not compared. */
const char *sched__session_differs(const struct sched_session *a,
                                   const struct sched_session *b);
/* memo.c (tests): make the memo compare its kept session, once it took a
 * delta, with a session built again (sched__session_differs()); what it
 * found first (NULL: nothing) and how many sessions it compared. */
void sched__memo_check_kept(struct sched_memo *memo);
const char *sched__memo_kept_differs(const struct sched_memo *memo, int64_t *checked);
/* memo.c (tests): make each attempt answered from a settled cycle's
 * failures (struct ss_known) after all, instead of noting what it noted;
 * how many of them did not fail as the answer said. */
void sched__memo_check_known(struct sched_memo *memo);
int64_t sched__memo_known_wrong(const struct sched_memo *memo);
/* Step 4 (session.c): a kept session takes the workloads appended since it
 * was built (none of them placed); the caller's promise says nothing else
 * changed but the clock, the usage history and the mix. */
int sched__session_extend(struct sched_session *ss, const struct sched_state *in,
                          const struct sched_config *cfg);
/* Step 5 (session.c): workload w left (STOPPED, COMPLETED or FAILED, its
 * pods unplaced, in the snapshot the session now reads); pods it held in
 * the session come off. */
void sched__session_leave(struct sched_session *ss, int w);
/* Step 8 (session.c), a delta whose quotas moved: every queue's quotas and
 * ranks read again from the state the session now reads; the pools where
 * any moved (bit p; pools >= 64: all). */
uint64_t sched__session_requota(struct sched_session *ss);
/* vocab.c: does queue q deserve GPUs in pool p (sched_workload_pools()
 * tries those pools first)? */
int sched__pool_deserved(const struct sched_queue *q, int p);
/* Step 8: 1 when in's quotas move the pool list of some workload (a leaf
 * without default pools deserves GPUs in a pool, or ceases to). */
int sched__quota_pools_move(const struct sched_session *ss, const struct sched_state *in);
int sched__session_placed_only(const struct sched_session *ss);
int sched__session_rejoin(struct sched_session *ss, int w);
int sched__session_evicted_from(const struct sched_session *ss, int w);
int sched__session_rejoin_evicted(struct sched_session *ss, int w, int pool, int *keep_order);
void sched__session_settled(struct sched_session *ss, int keep_order);
/* Step 7 (session.c): nodes went down; their workloads built again, then
 * each node made not ready with its pool's figures. */
int sched__session_requeue(struct sched_session *ss, int w, int *keep_order);
int sched__session_node_down(struct sched_session *ss, int node);
/* Whether an allocation (per resource) holds anything. */
int sched__holds(const int64_t *alloc);
int sched__queue_holds_pool(const struct sched_session *ss, int q, int p);
/* victims.c: pool's running list lost w (joined 0) or gained it (Steps 5
 * and 6 of session.c): the victim search's order of the list follows. */
int sched__running_changed(struct sched_session *ss, int pool, int w, int joined);
const char *sched__victims_differ(const struct sched_session *ss);   /* tests */
/* victims.c: a node of pool went down (session.c Step 7): what every
 * ready node of the pool has at least is found again. */
void sched__victims_nodes_changed(struct sched_session *ss, int pool);

/* affinity.c: node constraints (types in order, required affinity). */
int sched__build_classes(struct sched_session *ss);
/* The class of workload w appended to a built session (a new one if none matches). */
int sched__class_extend(struct sched_session *ss, int w);

/* 0: w may not use the node; else its preference, 1 best (node types in
 * order). Inside a topology attempt of w (topology.c), only the nodes of
 * the domain tried. */
static inline int sched__node_rank(const struct sched_session *ss, int w, int node)
{
    int c = ss->wl[w].cls;
    if (!c)
        return 1;
    if (w == ss->topo_w && !ss->topo_mask[node])
        return 0;
    return ss->class_rank[c][node];
}
/* The value of a node's label (node-type and the hostname key answered
 * from the node's fields when it has no such label), or NULL. */
const char *sched__label_of(const struct sched_node *n, const char *key);

/* topology.c */
typedef int (*sched__attempt_fn)(struct sched_session *ss, int w, int pool);
/* Does the state use topologies: a pool has one, or an active workload
 * from `from` on requires a level (the workloads before it known not to)? */
int sched__topo_state(const struct sched_state *in, int from);
int sched__topo_build(struct sched_session *ss);
/* Does wl ask a topology (a session with topologies only)? */
static inline int sched__topo_asks(const struct sched_session *ss, const struct sched_workload *wl)
{
    return ss->topo && (wl->topology_required || wl->topology_preferred ||
                        wl->type == SCHED_DISTRIBUTED);
}
/* Has w a required level in pool (its pods stay inside one domain)? */
int sched__topo_pinned(const struct sched_session *ss, int w, int pool);
/* An action's attempt of w in pool: ready (NULL: none) checks the pool as
 * a whole, once; then fn, domain by domain as w asks. */
int sched__topo_attempt(struct sched_session *ss, int w, int pool, int action,
                        sched__attempt_fn ready, sched__attempt_fn fn);
/* node_add(): the node started (busy 1) or stopped (-1) using a GPU, and
 * its free GPU moved by gpu (milli-GPU). */
void sched__topo_node_changed(struct sched_session *ss, int node, int busy, int64_t gpu);
/* Empty domains (of more than one node) a pod on node would open. */
int sched__topo_breaks(const struct sched_session *ss, int node);
/* The pending entry of w in pool when its required level is why it waits:
 * stage 0 before the other checks (no domain could hold it even empty, or
 * the pool lacks the level), 1 after them (no domain has the room free
 * now, and nothing else was found); 1 when it wrote p. */
int sched__topo_diagnose(struct sched_session *ss, int w, int pool, int pods,
                         struct sched_pending *p, int stage);
/* w has pods placed and a topology: its domain is fixed, it is alike no other. */
static inline int sched__topo_fixed(const struct sched_session *ss, int w)
{
    return ss->topo && ss->wl[w].n_placed > 0 && ss->wl[w].cls &&
           sched__topo_asks(ss, ss_w(ss, w));
}

/* frag.c: fragmentation of a node for the workload mix (SCHED_FRAGMENTATION). */
int sched__frag_build(struct sched_session *ss);
/* sum over the mix of weight x GPUs the shape cannot use on the node. */
int64_t sched__frag_node(const struct sched_session *ss, int node);
/* The serial of the node's state as the measure reads it (struct fstate):
 * nodes of one serial are in one state; 0: not kept (more devices than
 * FRAG_MEMO_GPUS, or no mix). */
uint64_t sched__frag_state(const struct sched_session *ss, int node);
/* How much one pod of w on `devices` of node raises it. */
int64_t sched__frag_rise(const struct sched_session *ss, int w, int node, uint64_t devices);
/* The devices of node for one pod of w that raise it least (0: none fit),
 * and the rise. */
uint64_t sched__frag_devices(const struct sched_session *ss, int w, int node, int64_t *rise);
/* 1 if the session measures with the mix `in` gives (the same GPU shapes,
 * requests, node types and weights, in the same order): its decisions on
 * `in` are those of a session built from it (memo.c keeps it then). */
int sched__frag_same_mix(const struct sched_session *ss, const struct sched_state *in);

/* fairshare.c */
int sched__fairshare(struct sched_session *ss);
/* max(deserved, fair) capped by limit: what a queue may hold without being reclaimed. */
int64_t sched__allocatable(const struct ss_qp *qp, int r);

/* capacity.c: would `pods` pods of w, placed one at a time on the best node
 * that fits (sched__best_node()), all find one with nothing evicted? A
 * whole-device or CPU-only pod takes one pod's room from its node and
 * changes no other, so they all fit iff the nodes' counts add up to pods,
 * whatever nodes are chosen. 1: they fit, 0: they do not, -1: unknown
 * (shared devices: a device's room depends on which devices earlier pods
 * took). One pod: sched__fits_somewhere(). */
int sched__all_fit_as_is(const struct sched_session *ss, int w, int pool, int pods);
/* capacity.c: the checks allocate makes before placing (limit, non-preemptible in deserved). */
struct ss_verdict {
    int reason;               /* SCHED_R_NONE when the checks pass */
    int queue, res;
    int64_t would_use, bound;
};
int sched__capacity_check(struct sched_session *ss, int w, int pool, int pods,
                          struct ss_verdict *v);
/* What non-preemptible work may hold of resource r: deserved, or SS_INF
 * when unlimited (and for CPU/memory quotas of 0, which are not managed). */
int64_t sched__np_bound(const struct ss_qp *a, int r);

/* placement.c */
/* Milli-GPU one pod of w holds on each of its devices on node (0: none). */
int32_t sched__dev_charge(const struct sched_session *ss, int w, int node);
/* The same for a workload (or mix shape) on devices of dev_mem MiB;
 * above SCHED_MILLI when it cannot fit such a device. */
int32_t sched__charge_on(const struct sched_workload *wl, int64_t dev_mem);
/* 1 for requests of whole devices, else 0 (shared or CPU-only). */
static inline int sched__whole(const struct sched_workload *wl)
{
    return wl->gpu_devices > 0 && wl->gpu_portion == 0 && wl->gpu_memory_mib == 0;
}
/* A workload's five requests (devices, portion, device memory, CPU,
 * memory): copied into a shape of the mix (frag.c's own copies, mix.c's
 * slots), and compared with one. */
static inline void sched__copy_requests(struct sched_workload *to,
                                        const struct sched_workload *from)
{
    to->gpu_devices = from->gpu_devices;
    to->gpu_portion = from->gpu_portion;
    to->gpu_memory_mib = from->gpu_memory_mib;
    to->cpu_milli = from->cpu_milli;
    to->mem_mib = from->mem_mib;
}
static inline int sched__same_requests(const struct sched_workload *a,
                                       const struct sched_workload *b)
{
    return a->gpu_devices == b->gpu_devices && a->gpu_portion == b->gpu_portion &&
           a->gpu_memory_mib == b->gpu_memory_mib && a->cpu_milli == b->cpu_milli &&
           a->mem_mib == b->mem_mib;
}
/* 1 if wl asks a GPU (whole devices, a portion or device memory). */
static inline int sched__asks_gpu(const struct sched_workload *wl)
{
    return wl->gpu_devices > 0 || wl->gpu_portion > 0 || wl->gpu_memory_mib > 0;
}
/* Devices of node for one pod of w, were the devices used as used[]
 * (milli-GPU) with whole-device pods on `whole`: 0 if it does not fit, or
 * if it asks no GPU (then check CPU and memory alone). *fresh: empty
 * devices it would open. Shared requests take devices already shared
 * first (fullest first, or emptiest in a spread pool), then empty ones. */
uint64_t sched__pick_devices(const struct sched_session *ss, int w, int node,
                             const int32_t *used, uint64_t whole, int *fresh);
/* Could node hold one pod of w were it empty (ready, allowed, big enough)? */
int sched__node_can_host(const struct sched_session *ss, int w, int node);
int sched__pod_fits_node(const struct sched_session *ss, int w, int node);
/* A GPU-memory request is charged by the device it got: once placed, do
 * w's queue and its ancestors keep their GPU limits and, for
 * non-preemptible work, deserved quota in the pool? (1 for other requests.) */
int sched__charge_within_caps(const struct sched_session *ss, int w, int pool);
/* Would `gpu` milli-GPU more for w keep those same caps on its path? */
int sched__gpu_within_caps(const struct sched_session *ss, int w, int pool, int64_t gpu);
/* A GPU-memory request's charge for one pod on node (its devices'). */
int64_t sched__pod_charge_on(const struct sched_session *ss, int w, int node);
/* ... on the node sched__best_node() picks as things are (*node; 0 with
 * *node -1 when none fits). */
int64_t sched__charge_as_is(const struct sched_session *ss, int w, int pool, int *node);
int sched__best_node(const struct sched_session *ss, int w, int pool, int exclude);
/* The node index of a binpack or spread pool built now rather than at its
 * first whole-device placement (a sort of the pool's nodes): for a session
 * a driver keeps (memo.c), so that a cycle on it files only the nodes it
 * changes. */
void sched__node_index_build(struct sched_session *ss, int pool);
/* node_add(): the node's free room changed (its pool's node index files it
 * again when next asked). */
void sched__node_index_touch(struct sched_session *ss, int node);
/* Would sched__place_pods() place one pod of w? sched__best_node(ss, w,
 * pool, -1) finds a node (stops at the first), and for a GPU-memory
 * request its charge there keeps w's caps (sched__gpu_within_caps()). */
int sched__fits_somewhere(const struct sched_session *ss, int w, int pool);
/* sched__best_node()'s order one node at a time, for searches that ask
 * the same again and again (victims.c's move trials). The order is
 * strict and total, and compares two nodes by their own state alone. */
struct ss_cand {
    int node, rank, fresh;
    int64_t rise;             /* fragmentation pools: what the pod strands there */
};
/* 1 with *c if one pod of w fits node now. */
int sched__candidate(const struct sched_session *ss, int w, int node, struct ss_cand *c);
int sched__candidate_better(const struct sched_session *ss, int w, const struct ss_cand *a,
                            const struct ss_cand *b);
/* The best k nodes of pool for w, best first, leaving out those with
 * skip[node]; *more: other nodes fit too. Returns how many. */
int sched__best_nodes(const struct sched_session *ss, int w, int pool, const uint8_t *skip,
                      struct ss_cand *out, int k, int *more);
/* Do workloads a and b fit and rank every node alike (the same requests
 * and node-constraint class)? */
int sched__same_placement(const struct sched_session *ss, int a, int b);
uint64_t sched__choose_devices(const struct sched_session *ss, int w, int node);
int sched__place_pods(struct sched_session *ss, int w, int pool, int pods, int action);
int sched__pool_may_fit(const struct sched_session *ss, int w, int pool, int pods);
int sched__pool_can_ever_fit(const struct sched_session *ss, int w, int pool, int pods);
/* A ready node of the pool with the workload's node-type (whatever its size). */
int sched__pool_has_node_for(const struct sched_session *ss, int w, int pool);

/* order.c: queue order then job order, as KAI's allocate walks them. */
struct ss_iter;
int sched__order_drop(struct sched_session *ss, int w);  /* memo.c Step 6 */
void sched__order_drops_done(struct sched_session *ss); /* after the drops, before any walk */
/* The kept job order takes the workloads from `first` on (submissions, as
 * sched__session_extend() built them); 0: it cannot (then drop it). */
int sched__order_add(struct sched_session *ss, int first);
/* Step 6: w, evicted whole, joins the kept job order; 0: it cannot. */
int sched__order_join(struct sched_session *ss, int w);
/* Tests: the kept job order against the one built for `fresh`; NULL: same. */
const char *sched__order_differs(struct sched_session *kept, struct sched_session *fresh);
struct ss_iter *sched__iter_new(struct sched_session *ss, int action);
int sched__iter_next(struct ss_iter *it);                 /* a workload, or -1 */
void sched__iter_done(struct ss_iter *it, int w, int ok); /* after an attempt */
int sched__iter_seen_failure(struct ss_iter *it, int w);  /* same signature failed already */
void sched__iter_touch(struct ss_iter *it, int q);        /* q's allocation changed */

/* victims.c: reclaim and preempt. */
int sched__evict_for(struct sched_session *ss, int w, int pool, int action);
/* Quick necessary test for sched__evict_for(): 0 when it cannot succeed now. */
int sched__may_evict_for(struct sched_session *ss, int w, int pool, int action);
/* The most GPU (milli) an eviction attempt of action for w in pool could
 * free on each node: the GPU on the node of every unit it may look at
 * (its queues and its units' own rules; not the checks made as units are
 * taken), added into freeable[node]. */
int sched__freeable_gpu(struct sched_session *ss, int w, int pool, int action, int64_t *freeable);
/* A pending workload's ask as the hopeless table compares it: per pod,
 * the pods to place, its priority. */
struct ss_ask {
    int64_t gpu, cpu, mem;
    int pods, priority;
};
/* 1 when the table compares w's shape (no node type, GPU memory or devices shared). */
int sched__ask_of(const struct sched_session *ss, int w, int pods, struct ss_ask *a);
/* sched__may_evict_for()'s preempt answer for a workload of `queue` that
 * asks `ask` (NULL: a shape the table does not compare: node type, GPU
 * memory, devices shared), read without the workload. */
int sched__may_preempt(const struct sched_session *ss, int queue, int pool,
                       const struct ss_ask *ask);
/* What a failed attempt of w in pool leaves when it is not made again
 * (struct ss_known): the hopeless shape it noted, unless one known covers it. */
void sched__note_known_failure(struct sched_session *ss, int w, int pool, int action);
int sched__reclaimer_within_share(struct sched_session *ss, int w, int pool, int pods,
                                  struct ss_verdict *v);
/* Diagnosis: would reclaim or preemption start w in the pool were the
 * pool's minimum runtime protecting nobody? 1 with the queue of the first
 * protected victim it needs and the time until all of them are free;
 * nothing of the state changes. */
int sched__protected_victims(struct sched_session *ss, int w, int pool, int *queue,
                             int64_t *wait_ms);

/* consolidate, stale gangs, reasons: what consolidation checks of the pool
 * before it tries (moves allowed, a packing pool, free GPU, quotas), then
 * the try itself (which assumes them) */
int sched__consolidate_ready(struct sched_session *ss, int w, int pool);
int sched__try_consolidate(struct sched_session *ss, int w, int pool);
void sched__stale_gangs(struct sched_session *ss, int64_t *stale_out);
int sched__any_stale_candidate(const struct sched_session *ss);
void sched__diagnose(struct sched_session *ss, int w, struct sched_pending *p);
/* Every running workload with pods left to place, in out->waiting
 * (sched_result.waiting): those of the pools' running lists (or of
 * ss->waiting_known) and those the cycle's decisions placed. */
int sched__record_waiting(struct sched_session *ss, struct sched_arena *arena,
                          struct sched_result *out);
/* The same for the workloads ws[0..n) (ascending, unique) known to be all
 * of them: a kept result's, when no running workload changed since (memo.c,
 * Step 4). */
int sched__record_waiting_of(struct sched_session *ss, struct sched_arena *arena,
                             const int *ws, int n, struct sched_result *out);

/* What the reasons step leaves for the memo: the first entry of each kind
 * (index + 1; zeros between them are free slots) and each entry's kind
 * (the index of its kind's first entry), both from the result's arena. */
struct ss_kinds {
    int *first;
    int cap;
    int *kind_of;   /* [result's n_pending] */
    /* in_place: the list is the settled one written over (cycle.c's
     * record_in_place()): the entries gone[0..n_gone) (ascending, of the
     * settled list; gone_label[] their labels) taken out, an entry put in
     * for each of ins_at[0..n_ins) (ascending: before the settled entry
     * ins_at[j], or at the end; ins_new_at[j] its index in the new list,
     * ins_label[j] its label: a settled one, or, for n_new_labels new
     * kinds, n_labels + k in the order of their first entries), the list
     * now `off` entries further into its buffers (negative: into the room
     * before it), every other entry with the label it had, n_redone kinds
     * written again; no `first` */
    int in_place, off, n_gone, n_redone, n_ins, n_new_labels;
    const uint8_t *redone;  /* [settled labels] not 0: the label's kind was written again */
    const int *gone, *gone_label;
    const int *ins_at, *ins_new_at, *ins_label;
};

/* Where settled entries move when gone[0..n_gone) are taken out and
 * entries are put in before ins_at[0..n_ins) (both ascending): for
 * entries e met in ascending order, `gone` counts those taken out below
 * e and `ins` those put in at or before it, so e moves to e - gone + ins
 * (or, taken out itself, to where the next entry moves). */
struct ss_shift {
    int gone, ins;
};

/* Moves shift's counts forward to entry e (no lower than the last one). */
static inline void ss_shift_to(struct ss_shift *shift, const int *gone, int n_gone,
                               const int *ins_at, int n_ins, int e)
{
    while (shift->gone < n_gone && gone[shift->gone] < e)
        shift->gone++;
    while (shift->ins < n_ins && ins_at[shift->ins] <= e)
        shift->ins++;
}

/* A settled cycle's pending list, for a cycle on that cycle's session
 * after a delta (memo.c Step 5): the workloads the delta names, those
 * submitted since and those the new cycle decides about are diagnosed
 * again; every other keeps its pending state and its kind. */
/* A kind of a settled pending list: the entry that stands for it and the
 * code of what still_diagnosed() reads of that entry (cycle.c), so a check
 * of every kind reads these, not the list. */
struct ss_kind_rep {
    int entry;    /* index in the list; entries of kinds ascend */
    int label;    /* the kind's label (kind_of) */
    int code;     /* ss_rep_code(), SS_REP_UNCOUNTED or SS_REP_ODD */
};

/* Whether workload w's diagnosis reads non-preemptible allocations: only
 * a non-preemptible workload's does (capacity.c's check 2, and the victim
 * search of a pool with a minimum runtime, which is never as settled). A
 * kind's workloads are all one or all the other (sched__same_diagnosis()). */
static inline int ss_reads_np(const struct sched_session *ss, int w)
{
    return !ss_w(ss, w)->preemptible;
}

/* A kind's record by what its check reads (struct ss_kind_rep's code,
 * struct ss_prev_pending's code_reps[]): for a reason that reads a pool,
 * its (pool, queue) pair's index and whether it reads non-preemptible
 * allocations, ss_rep_code(pair, reads_np); else SS_REP_UNCOUNTED (it
 * stands through any change), or SS_REP_ODD for a pair beyond those
 * counted (its entry is read). */
#define SS_REP_UNCOUNTED (-1)
#define SS_REP_ODD (-2)
static inline int ss_rep_code(int pair, int reads_np)
{
    return pair * 2 + (reads_np != 0);
}

/* Whether a diagnosis of `reason` reads the state of the pool its entry
 * names: every reason but Suspended and NoMatchingNodePool. Whether such
 * an entry still says what it said is then answered per (pool, queue)
 * (cycle.c, stands()), so the kinds' records are counted per pair. */
static inline int ss_reason_reads_pool(int reason)
{
    return reason != SCHED_R_SUSPENDED && reason != SCHED_R_NO_MATCHING_NODE_POOL;
}

struct ss_prev_pending {
    const struct sched_pending *pending;  /* [n], in workload order */
    const int *kind_of;                   /* [n] each entry's kind: a label below
                                             n_labels, one per kind */
    int n, n_labels;
    int n_workloads;                      /* that cycle's workloads */
    const int *left;                      /* [n_left] workloads that left since, or
                                             were requeued (a node went down) */
    int n_left;
    struct sched_pending *buf;            /* [cap_buf] where the new list may go (not */
    int *buf_kind_of;                     /* zeroed), with its kinds; else the arena */
    int cap_buf;
    struct sched_pending *own;            /* pending and kind_of again, writable: the new */
    int *own_kind_of;                     /* list is written over them when it fits (NULL:
                                             never) */
    int own_before, own_after;            /* entries of room before and after them */
    /* an entry of the settled list of w's kind held by no workload
     * `touched` marks (they are as the settled cycle saw them), or -1 */
    int (*settled_entry)(const void *ctx, const struct sched_session *ss, int w,
                         const uint8_t *touched);
    const void *settled_ctx;
    const struct ss_kind_rep *reps;       /* [n_reps] one per label, or NULL (unknown) */
    int n_reps;
    /* with reps, whose codes are ss_rep_code() of pair index
     * pool * pair_queues + queue for the pairs of pair_pools x pair_queues:
     * the records counted per code in code_reps[], and those naming a pair
     * beyond them (odd_reps); NULL: not counted */
    const int *code_reps;
    int pair_pools, pair_queues, odd_reps;
    const int *label_count;               /* [n_labels] entries carrying each label */
    uint8_t *touched;                     /* [cap_touched] all 0, lent for the marks of the
                                             workloads touched (returned all 0), or NULL */
    int cap_touched;
};

/* cycle.c: Steps 2-4 of a cycle on a built session, the result's arrays
 * from `arena` (prev: the reasons step from a settled cycle's list, or
 * NULL; kinds: what it leaves for the memo, or NULL), and the pieces of a
 * result the incremental path (memo.c) reuses. */
int sched__cycle_on(struct sched_session *ss, struct sched_arena *arena,
                    struct sched_result *out, const struct ss_prev_pending *prev,
                    struct ss_kinds *kinds);
int sched__record_shares(struct sched_session *ss, struct sched_arena *arena,
                         struct sched_result *out);
/* Takes the gone entries (ascending) out of a pending list and its kinds,
 * list[0..n) and kind_of[0..n), where they lie; returns where the shorter
 * list begins: 0, the entries after the first gone one moved down, or,
 * when `may_shift` and fewer entries lie before the last gone one than
 * after the first, n_gone, the entries before the last gone one moved up
 * (their order kept either way). */
int sched__take_out(struct sched_pending *list, int *kind_of, int n, const int *gone,
                    int n_gone, int may_shift);
int sched__is_pending(const struct sched_session *ss, int w);
/* w's entry in a pending list in workload order, or -1 - where it would go. */
int sched__pending_find(const struct sched_pending *list, int n, int w);
/* Two pending workloads the diagnosis cannot tell apart, and the hash of
 * what it compares: the result shares one diagnosis per kind. */
int sched__same_diagnosis(const struct sched_session *ss, int a, int b);
uint64_t sched__diagnosis_hash(const struct sched_session *ss, int w);

/* arena.c: bytes handed out since the last reset. */
size_t sched__arena_used(const struct sched_arena *arena);

/* actions.c: would any action start w, tried alone on the session as it
 * is (allocate, consolidate, reclaim, preempt, each only where w is a
 * candidate, as the actions' walk would try it)? 1 with the session
 * changed; 0 with the session as it was. */
int sched__would_start(struct sched_session *ss, int w);
/* order.c: is w a candidate of the action now? */
int sched__is_candidate(struct sched_session *ss, int w, int action);

/* actions */
void sched__act_allocate(struct sched_session *ss);
void sched__act_consolidate(struct sched_session *ss);
void sched__act_reclaim(struct sched_session *ss);
void sched__act_preempt(struct sched_session *ss);
/* Before the actions: which pools are as the settled cycle left them (ss->known). */
void sched__known_begin(struct sched_session *ss);
/* Whether pool is now as the settled cycle left it: the delta did not
 * change it, its queues' fair shares are the kept ones, and nothing was
 * placed or taken there since the cycle began (ss->known's base). */
int sched__pool_as_settled(const struct sched_session *ss, int pool);
/* Whether a settled entry of `pool` naming `queue` says what a diagnosis
 * would say now: what it reads (reasons.c's header, 1-3) is as it was at
 * the settled cycle's end: every queue's fair share in that pool, the
 * figures of its ready nodes (sched__pool_node_figures()), who holds it
 * and who is furthest above its share (sched__pool_over()), the
 * allocation there of every queue above or below the queue the entry
 * names (its workload's or an ancestor of it: that queue's chain and its
 * workload's), and their non-preemptible allocation too when the entry's
 * diagnosis reads it (`reads_np`: a non-preemptible workload's; a
 * preemptible one's never does), and no minimum runtime (whose victims'
 * time left moves with the clock). Asked once the actions are done. */
int sched__diagnosis_as_settled(struct sched_session *ss, int pool, int queue, int reads_np);
/* reasons.c: pool's node figures, SS_POOL_FIGS of them, into figs: a walk
 * over its nodes once per state of the pool (struct ss_pool's figs), the
 * walk itself in sched__pool_node_figures_walk() (tests compare them). */
void sched__pool_node_figures(const struct sched_session *ss, int pool, int64_t *figs);
void sched__pool_node_figures_walk(const struct sched_session *ss, int pool, int64_t *figs);
/* reasons.c: the two leaf queues furthest above their allocatable GPU
 * share in pool (-1: none; the first index on ties), their allocations
 * read from held[] (SS_HELD_AT()) when not NULL, else the session's. */
void sched__pool_over(const struct sched_session *ss, int pool, const int64_t *held, int over[2]);

#endif
