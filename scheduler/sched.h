/*
 * sched.h: the public contract of allot's scheduling core.
 *
 * The core is one pure function, sched_cycle(): a snapshot of the cluster
 * (node pools, nodes, queues, workloads with their pods, `now`, usage
 * history) goes in, decisions come out (bind pods to node devices, evict
 * or move workloads), together with per-queue fair share and allocation
 * and a machine-readable reason for every workload left pending.
 *
 * Rules the caller can rely on:
 *   1. No I/O, no clock, no threads, no global state: everything the cycle
 *      needs is in `struct sched_state`, everything it decides is in
 *      `struct sched_result`.
 *   2. Deterministic: the same state gives the same result, byte for byte.
 *      Units are integers: GPU in thousandths of a device (milli-GPU), CPU
 *      in millicores, memory in MiB, time in milliseconds.
 *   3. Ownership: the state is borrowed (never modified, never kept).
 *      Everything in the result lives in the arena passed to sched_cycle()
 *      and dies with sched_arena_free().
 *   4. Objects refer to each other by index into the state's arrays
 *      (node->pool, queue->parent, workload->queue, pod->node).
 *
 * One call is one scheduling pass: allocate, consolidate, reclaim,
 * preempt, stale-gang eviction. A driver applies the decisions and calls
 * again until a pass decides nothing (see sim/world_pass.c, control/sched_loop.c).
 */
#ifndef ALLOT_SCHED_H
#define ALLOT_SCHED_H

#include <stddef.h>
#include <stdint.h>

/* ---- Error codes (0 is success) ---- */
#define SCHED_OK 0
#define SCHED_EINVAL (-1) /* the state breaks a documented rule */
#define SCHED_ENOMEM (-2) /* the arena could not grow */

/* ---- Resources ---- */
enum sched_res { SCHED_GPU = 0, SCHED_CPU = 1, SCHED_MEM = 2, SCHED_NRES = 3 };

#define SCHED_MILLI 1000        /* milli-GPU per device */
#define SCHED_UNLIMITED (-1)    /* deserved or limit: no bound */
#define SCHED_MAX_NODE_GPUS 64  /* devices per node (a bitmask of them) */
#define SCHED_NO_TIME INT64_MIN /* "never" for the *_ms timestamps */

/* Where a pool puts a pod among the nodes that fit (placement.c):
 *   BINPACK        the fullest node;
 *   SPREAD         the emptiest node;
 *   FRAGMENTATION  the node whose GPUs the placement strands least for the
 *                  workload mix (struct sched_mix_entry, frag.c), then the
 *                  fullest. */
enum sched_placement { SCHED_BINPACK = 0, SCHED_SPREAD = 1, SCHED_FRAGMENTATION = 2 };
/* The GPU placement of a pool that names none (drivers give it to such
 * pools: allotd, the simulator): fragmentation, which leaves fewer GPUs
 * unallocated than bin-packing and than FGD on the openb traces
 * (bench/README.md, "Against FGD"). A pool that names binpack gets pure
 * bin-packing. */
#define SCHED_DEFAULT_GPU_PLACEMENT SCHED_FRAGMENTATION

/* ---- Node pools ---- */
struct sched_pool {
    const char *name;
    uint8_t gpu_placement;               /* enum sched_placement */
    uint8_t cpu_placement;               /* for pods that ask no GPU */
    int64_t min_guaranteed_runtime_ms;   /* 0: none */
    int tbf_enabled;                     /* time-based fairshare */
    int64_t tbf_window_ms;               /* default 7 days */
    int64_t tbf_half_life_ms;            /* 0: no decay */
    int64_t tbf_k_milli;                 /* kValue x 1000, default 1000 */
    /* Its network topology (topology.c): node label keys, the widest level
     * first (a block, a rack, a host). A level's domains are the values of
     * its key among the pool's nodes; a node without the key is in no
     * domain of that level. n_topology 0: none, domains play no part. */
    const char *const *topology;
    int n_topology;                      /* 0..SCHED_MAX_TOPOLOGY */
};
#define SCHED_MAX_TOPOLOGY 8             /* levels of a topology */

/* ---- Nodes ---- */
struct sched_label {
    const char *key;
    const char *value;
};

struct sched_node {
    const char *name;          /* unique; ties between nodes break by name */
    int pool;                  /* index into state.pools */
    int ready;                 /* 0: down; its capacity does not count */
    int n_gpus;                /* 0..SCHED_MAX_NODE_GPUS */
    int64_t cpu_milli;         /* SCHED_UNLIMITED: plenty */
    int64_t mem_mib;           /* SCHED_UNLIMITED: plenty */
    const char *node_type;     /* value of the label node-type, or NULL */
    const struct sched_label *labels;  /* every label of the node (node-type too) */
    int n_labels;
    int64_t gpu_memory_mib;    /* memory of each device (the smallest, if they differ);
                                  0: unknown, no GPU-memory request fits here */
};

/* ---- Required node affinity (Kubernetes' nodeSelectorTerms) ----
 * A workload with terms runs only on nodes that satisfy at least one term;
 * a term holds when every one of its matches holds (a term without matches
 * holds nowhere). The key SCHED_HOSTNAME_LABEL matches the node's name
 * when the node has no label of that key. */
#define SCHED_HOSTNAME_LABEL "kubernetes.io/hostname"

enum sched_match_op {
    SCHED_OP_IN = 0,          /* the label's value is one of values */
    SCHED_OP_NOT_IN,          /* the node lacks the label, or its value is none of values */
    SCHED_OP_EXISTS,          /* the node has the label */
    SCHED_OP_DOES_NOT_EXIST,
    SCHED_OP_GT,              /* the value, an integer, is above values[0] */
    SCHED_OP_LT               /* ... below values[0] */
};

struct sched_match {
    const char *key;
    int op;                          /* enum sched_match_op */
    const char *const *values;
    int n_values;
};

struct sched_term {
    const struct sched_match *matches;  /* all must hold */
    int n_matches;
};

/* ---- Queues: departments and projects ----
 * A tree: parent < 0 is a top-level queue (a department). Only leaves
 * (projects) hold workloads. Each queue has, per node pool and resource,
 * a quota triple. The order of queues in the state is their age: a lower
 * index is an older queue (the final tie-break everywhere). */
struct sched_quota {
    int64_t deserved;   /* guaranteed; SCHED_UNLIMITED = the whole amount */
    int64_t limit;      /* hard cap; SCHED_UNLIMITED = none */
    int64_t weight;     /* overQuotaWeight in thousandths (1 -> 1000), >= 0 */
};

struct sched_queue {
    const char *name;
    int parent;                       /* index, or -1 */
    int rank;                         /* higher is served first for spare capacity */
    const struct sched_quota *quota;  /* [n_pools * SCHED_NRES], pool-major;
                                         NULL: deserved 0, limit -1, weight 1 */
    const int *default_pools;         /* ordered pool indices, for workloads without their own */
    int n_default_pools;              /* 0: every pool, in state order */
    const int *pool_rank;             /* [n_pools]: its rank in each pool (its over-quota
                                         priority there); NULL: `rank` in every pool */
};

/* ---- Workloads and their pods ---- */
enum sched_wl_type {
    SCHED_TRAINING = 0, SCHED_WORKSPACE, SCHED_INFERENCE, SCHED_DISTRIBUTED
};

enum sched_phase {
    SCHED_PENDING = 0,  /* queued; pods may be partly running (a stale or elastic gang) */
    SCHED_RUNNING,      /* at least min_pods pods run */
    SCHED_STOPPED,      /* suspended: holds nothing, not scheduled */
    SCHED_COMPLETED,
    SCHED_FAILED
};

struct sched_pod {
    int node;              /* index into state.nodes, or -1: not running */
    uint64_t devices;      /* bit i: device i of the node */
};

struct sched_workload {
    const char *name;      /* unique; the final tie-break between workloads */
    int queue;             /* a leaf queue */
    int type;              /* enum sched_wl_type */
    int priority;          /* resolved number (sched_priority_class()) */
    int preemptible;       /* resolved 0/1 (sched_default_preemptible()) */
    int phase;             /* enum sched_phase */
    int n_pods;            /* >= 1 */
    int min_pods;          /* gang minimum, 1..n_pods */
    int gpu_devices;       /* devices per pod: whole ones, unless gpu_portion or
                              gpu_memory_mib makes them shared (then 0 means 1) */
    int64_t gpu_portion;   /* milli-GPU of each shared device per pod (1..999), or 0 */
    int64_t cpu_milli;     /* per pod */
    int64_t mem_mib;       /* per pod */
    const int *pools;      /* ordered preference; NULL: the queue's defaults */
    int n_pools;
    const char *node_type; /* only nodes with this node-type; NULL: any */
    int64_t queued_seq;    /* queue position: lower = submitted earlier */
    int64_t started_ms;    /* when it last started running; SCHED_NO_TIME if never */
    int64_t stale_since_ms;/* when it fell below min_pods with pods running; SCHED_NO_TIME */
    struct sched_pod *pods;/* [n_pods] */
    int64_t gpu_memory_mib;/* MiB of each shared device per pod, or 0; it is charged
                              as the fraction of the device's memory (sched_pod_gpu()) */
    const char *const *node_types;   /* any of these node-types, the first preferred;
                                        n_node_types 0: node_type alone (if set) */
    int n_node_types;
    const struct sched_term *affinity;  /* required node affinity: any term; 0: any node */
    int n_affinity;
    /* Topology-aware placement (topology.c), levels named by their label
     * key, read in a pool whose topology lists them:
     *   required   every pod in one domain of that level, or none placed
     *              (a pool whose topology lacks the level cannot hold it);
     *   preferred  in one domain of that level if it can, else of the next
     *              wider level, up to the required one (or the whole pool).
     * NULL: none; a distributed workload without either prefers its pool's
     * narrowest level. */
    const char *topology_required;
    const char *topology_preferred;
    /* 1: node_types are any of them, none preferred (every listed type
     * ranks alike: a trace's gpu_spec, which lists the models a task may
     * use); 0: the first preferred, then the second... (the API's
     * nodeType). The mix reads only which nodes a shape may use, so this
     * does not key it. */
    int node_types_alike;
};

/* ---- Usage history, for time-based fairshare ----
 * One sample: queue `queue` (a leaf) held `amount` of each resource in
 * pool `pool` from start_ms to end_ms. Samples may overlap; they add up. */
struct sched_usage {
    int queue;
    int pool;
    int64_t start_ms, end_ms;
    int64_t amount[SCHED_NRES];
};

/* ---- The workload mix, for fragmentation placement ----
 * The shapes of the pods the driver saw requested recently, and how many
 * of each: what is likely to come next. A pool placing by
 * SCHED_FRAGMENTATION measures a node's fragmentation against it (frag.c).
 * Of `shape` only the requests are read (gpu_devices, gpu_portion,
 * gpu_memory_mib, cpu_milli, mem_mib) and the node constraints (node_type,
 * node_types, affinity); shapes that ask no GPU are ignored. A window of
 * recent requests (sched_mix_window_*() below) keeps such a list. */
#define SCHED_MIX_MAX 64                 /* entries of a mix (at most 64: frag.c's bit sets) */
#define SCHED_MIX_MAX_WEIGHT (1 << 20)

struct sched_mix_entry {
    struct sched_workload shape;
    int64_t weight;                      /* pods of this shape, 1..SCHED_MIX_MAX_WEIGHT */
};

/* ---- The snapshot ---- */
struct sched_state {
    int64_t now_ms;
    const struct sched_pool *pools;         int n_pools;
    const struct sched_node *nodes;         int n_nodes;
    const struct sched_queue *queues;       int n_queues;
    const struct sched_workload *workloads; int n_workloads;
    const struct sched_usage *usage;        int n_usage;
    const struct sched_mix_entry *mix;      int n_mix;   /* 0..SCHED_MIX_MAX; none: fragmentation
                                                            pools bin-pack */
};

struct sched_config {
    int64_t stale_grace_ms;        /* stale-gang grace period; default 60 s; < 0: never */
    int max_consolidation_moves;   /* workloads moved for one pending workload; default 16; 0: off */
};

/* ---- Decisions ---- */
enum sched_action {
    SCHED_ACT_ALLOCATE = 0, SCHED_ACT_CONSOLIDATE, SCHED_ACT_RECLAIM,
    SCHED_ACT_PREEMPT, SCHED_ACT_STALE_GANG
};

enum sched_decision_kind {
    SCHED_BIND = 0,   /* pod `pod` of `workload` starts on node/devices */
    SCHED_EVICT,      /* pod `pod` (or every running pod if pod < 0) stops; back to Pending */
    SCHED_MOVE        /* running pod `pod` is moved to node/devices (consolidation) */
};

struct sched_decision {
    int kind;          /* enum sched_decision_kind */
    int action;        /* enum sched_action that decided it */
    int workload;
    int pod;
    int node;          /* BIND, MOVE: the target */
    uint64_t devices;  /* BIND, MOVE */
    int by_workload;   /* EVICT, MOVE: the workload it made room for, or -1 */
};

/* ---- Reasons a workload is pending ---- */
enum sched_reason {
    SCHED_R_NONE = 0,
    SCHED_R_NON_PREEMPTIBLE_OVER_QUOTA,
    SCHED_R_OVER_LIMIT,
    SCHED_R_INSUFFICIENT_RESOURCES,
    SCHED_R_GANG_NOT_SATISFIABLE,
    SCHED_R_NO_MATCHING_NODE_POOL,
    SCHED_R_SUSPENDED,
    SCHED_R_QUEUE_FAIR_SHARE_REACHED
};

/* What a pending entry says beyond its reason (sched_pending.detail). */
enum sched_reason_detail {
    SCHED_D_NONE = 0,
    SCHED_D_RUNTIME_PROTECTED,   /* the only workloads it could take back from other_queue
                                    run under the pool's minimum runtime for wait_ms more */
    SCHED_D_WITHIN_SHARE,        /* QueueFairShareReached: the queues holding the rest of the
                                    pool are within their fair share */
    SCHED_D_NOT_RECLAIMABLE,     /* QueueFairShareReached: other_queue holds more than its
                                    share, but only a queue within its own fair share may take
                                    GPUs back */
    SCHED_D_NEVER_FITS,          /* InsufficientResources or GangNotSatisfiable: no ready node
                                    of the pool that it may use could hold one of its pods even
                                    empty; it can never run as asked. would_use is one pod's
                                    request of res, bound the most any such node has of it (-1:
                                    no one resource stands out) */
    SCHED_D_TOPOLOGY             /* its required topology level: no domain of that level has
                                    room for the gang (InsufficientResources: bound is the most
                                    GPU one domain has free; GangNotSatisfiable: the most one
                                    has in all; NoMatchingNodePool: the pool's topology lacks
                                    the level, bound 0) */
};

struct sched_pending {
    int workload;
    int reason;        /* enum sched_reason */
    int detail;        /* enum sched_reason_detail */
    int other_queue;   /* the queue the detail is about, or -1 */
    int64_t wait_ms;   /* SCHED_D_RUNTIME_PROTECTED: time until a victim may be taken */
    int queue;         /* the queue the numbers are about (may be an ancestor) */
    int pool;          /* the pool the numbers are about, or -1 */
    int res;           /* the resource the numbers are about */
    int64_t would_use; /* what the queue would hold with this workload */
    int64_t bound;     /* the deserved / limit / fair share / free amount it exceeds */
    int64_t request;   /* what the workload asks of res (all pods still to place) */
};

/* Per queue and pool, what the fair share computation saw and gave. */
struct sched_share {
    int64_t fair[SCHED_NRES];
    int64_t allocated[SCHED_NRES];   /* at the start of the pass */
    int64_t requested[SCHED_NRES];   /* allocated + pending demand, capped by limit */
    int64_t deserved[SCHED_NRES];    /* as configured (SCHED_UNLIMITED kept) */
};

struct sched_result {
    struct sched_decision *decisions; int n_decisions;
    struct sched_pending *pending;    int n_pending;   /* every pending workload left pending,
                                                          in workload order */
    /* Every running workload left with pods to place (min_pods <= placed <
     * n_pods: an autoscaled inference's or an elastic workload's extra
     * pods), in workload order: why those pods wait, diagnosed as a pending
     * workload is, its figures about the n_pods - placed pods still to
     * place. Not counted in `changed`: a driver looks at each entry. */
    struct sched_pending *waiting;    int n_waiting;
    struct sched_share *shares;       /* [n_queues * n_pools], queue-major */
    int n_queues, n_pools;
    int64_t *stale_since_ms;          /* [n_workloads]: the value to keep for the next pass */
    /* What moved since the previous result of the same memo
     * (sched_cycle_next(); sched_cycle() says -1 and 0): every workload
     * whose pending entry may differ from its entry there (added, taken
     * out or written again) is among changed[0..n_changed), in no order,
     * maybe twice; n_changed -1: any may. stale_kept: every stale time is
     * the input's. A driver that wrote the previous result writes only
     * these (and the decisions' workloads) again. */
    const int *changed;
    int n_changed;
    int stale_kept;
};

/* ---- Arena: every allocation of a cycle ---- */
struct sched_arena;
struct sched_arena *sched_arena_new(void);
void sched_arena_reset(struct sched_arena *arena);   /* keeps the memory for reuse */
void sched_arena_free(struct sched_arena *arena);    /* NULL is a no-op */
size_t sched_arena_peak(const struct sched_arena *arena);

/* ---- The one call ---- */
void sched_config_default(struct sched_config *cfg);
int sched_cycle(const struct sched_state *in, const struct sched_config *cfg,
                struct sched_arena *arena, struct sched_result *out);

/* ---- The incremental path: a cycle after a few changes ----
 * A driver that runs cycle after cycle keeps a memo (what one cycle learnt
 * that the next may reuse) and passes it with the new snapshot and the
 * changes since the previous call. The result is, byte for byte, what
 * sched_cycle() gives on the same snapshot (tests/unit/test_property.c
 * checks it after every event of random event sequences); the memo only
 * saves work.
 *
 * The delta's promise: since the previous sched_cycle_next() with this
 * memo, the caller applied that result (every decision with
 * sched_apply_decision(), then the stale times) and changed nothing but
 *   - n_submitted workloads appended at the end of the workloads array
 *     (no pod of theirs placed);
 *   - left[0..n_left): workloads, at the index they had (and keep), whose
 *     phase became STOPPED, COMPLETED or FAILED (suspended, finished,
 *     cancelled), every pod of theirs removed (node -1) and their stale
 *     time SCHED_NO_TIME; an index may repeat (suspended, then deleted);
 *   - now_ms, the usage history and the workload mix;
 *   - with quotas = 1, queues' quotas and over-quota priorities
 *     (sched_queue.quota and .pool_rank, or what they point at; not the
 *     queues, their parents or default pools);
 *   - down[0..n_down): nodes, ready before, whose ready became 0, with
 *     every pod placed on them taken off (node -1, devices 0); a workload
 *     that held one may have changed phase (to pending, or running with
 *     fewer pods) but nothing else, its other pods where they were.
 * Anything else (a workload deleted from the array, resumed or edited, a
 * node changed, a queue added or moved, a restart, an unknown change) is
 * full = 1; so is a NULL delta. A full delta runs sched_cycle() and
 * remembers what the next call may reuse.
 *
 * What is reused (memo.c): after a cycle that decided nothing and changed
 * no stale time, submissions that no action can start (each is tried
 * alone, on the same state the full cycle would try it on) and that leave
 * every fair share as it was change nothing but their own pending
 * entries: the previous pending entries are kept and only the new
 * workloads are diagnosed. A workload that left without holding anything
 * (a pending one suspended, cancelled or failed) changes no placement:
 * when the fair shares stay, only its own entry goes (or, suspended,
 * becomes SUSPENDED). One that left holding pods frees room, so the
 * actions run: the kept session gives the pods back (as a build from the
 * new snapshot would have them) and the cycle's steps run on it, without
 * building the session again; so do moved quotas, on the kept session
 * with every quota read again, and nodes gone down (their workloads built
 * again, the pools' figures over ready nodes found again). After a cycle whose only decisions placed
 * pending workloads, the next call (those placements applied, as the
 * promise says, and any delta above) runs the cycle's steps on that
 * cycle's session too, once the placed workloads are in it as a build
 * would have them. Every other case runs the full cycle.
 *
 * The memo keeps the session of a cycle that decided nothing, or only
 * placed pending workloads (its working
 * state: placements per node and device, queue accounting, classes) in
 * memory of its own, and a submission delta adds the new workloads to it
 * instead of building it again from the snapshot. A result of
 * sched_cycle_next() may point into the memo (its pending entries and
 * stale times): it is valid until the arena is reset or the next call
 * with the same memo, whichever comes first, and is read-only. */
struct sched_memo;
struct sched_memo *sched_memo_new(void);             /* NULL: out of memory */
void sched_memo_free(struct sched_memo *memo);       /* NULL is a no-op */

struct sched_delta {
    int full;          /* 1: anything may have changed */
    int n_submitted;   /* workloads appended since the previous call */
    const int *left;   /* [n_left] workloads that left (suspended, finished) */
    int n_left;
    int quotas;        /* 1: quotas or over-quota priorities may have moved */
    const int *down;   /* [n_down] nodes that went down (not ready, their pods off) */
    int n_down;
};

/* How the memo's calls went: full cycles run (the session built), cycles
 * answered from the memo, submission deltas whose kept session took the
 * submissions but whose cycle then had to run in full (a fair share
 * moved), and deltas whose cycle ran on the kept session (finished: a
 * workload left holding pods, the previous cycle's placements were
 * applied, or a submission could start). */
struct sched_memo_stats {
    int64_t full, reused, fell_back, finished;
    int64_t order_kept;   /* of `finished`: the job order of the kept session reused */
    int64_t pending_kept; /* of `finished`: reasons recorded from the settled list */
    int64_t attempts_known; /* reclaim and preempt attempts answered from the settled
                               cycle's failures (Step 5) */
    int64_t after_placements; /* of `finished`: the cycle after one whose placements the
                                 driver applied, run on that cycle's session (Step 6) */
    int64_t after_evictions;  /* of `after_placements`: that cycle also evicted whole
                                 workloads, built again as pending (Step 6) */
    int64_t after_submission; /* of `finished`: a submission that could start, run on the
                                 kept session once its trial was undone (Step 7) */
    int64_t pending_put_in;   /* of `pending_kept`: the new list written over the kept one
                                 with the entries of workloads pending again or still put in */
    int64_t nodes_down;       /* of `finished`: deltas with nodes gone down, their workloads
                                 built again on the kept session (Step 9) */
};
void sched_memo_stats(const struct sched_memo *memo, struct sched_memo_stats *out);

/* The workloads that held pods on node in the last result of the memo,
 * once the driver applied it (each once, into out[0..cap)): how many
 * (more than cap: out holds cap of them), or -1 when the memo does not
 * keep that cycle's placements. A driver finds the workloads a node
 * going down touches without a walk of every workload. */
int sched_memo_node_workloads(const struct sched_memo *memo, int node, int *out, int cap);

/* sched_cycle() with a memo (NULL: exactly sched_cycle()). On an error
 * the memo forgets everything (the next call is a full cycle). */
int sched_cycle_next(struct sched_memo *memo, const struct sched_state *in,
                     const struct sched_delta *delta, const struct sched_config *cfg,
                     struct sched_arena *arena, struct sched_result *out);

/* Fair share and allocation of queue q in pool p (NULL if out of range). */
const struct sched_share *sched_result_share(const struct sched_result *r, int q, int p);

/* The index of workload w's entry in r->pending (in workload order), or -1. */
int sched_result_pending_at(const struct sched_result *r, int w);

/* ---- Vocabulary helpers (pure) ---- */
/* Priority of a class name ("train", "build", "very-high", ...) or of a
 * decimal number; SCHED_EINVAL if neither. */
int sched_priority_class(const char *name, int *priority);
/* The i-th named priority class and its number; NULL past the last. */
const char *sched_priority_class_at(int i, int *priority);
const char *sched_default_priority_class(int type);   /* by enum sched_wl_type */
int sched_default_preemptible(int priority);          /* priority < 100 */
const char *sched_reason_name(int reason);            /* "OverLimit", ... */
const char *sched_action_name(int action);            /* "reclaim", ... */
const char *sched_phase_name(int phase);              /* "Pending", ... */
const char *sched_type_name(int type);                /* "training", ... */
/* The strategy a pool's placementStrategy word names: "binpack",
 * "spread" or "fragmentation" (see vocab.c for what binpack means);
 * SCHED_EINVAL for any other word. */
int sched_placement_parse(const char *word, int *placement);
const char *sched_placement_word(int placement);      /* "fragmentation", ... */
int sched_type_parse(const char *name, int *type);
/* A human message for a pending entry, naming the numbers, e.g. "team-a
 * would use 3 of its 2 deserved GPUs; this workspace is non-preemptible
 * (priority 100) and must fit the quota". Writes at most len bytes (always terminated);
 * returns the length it needed. */
int sched_reason_message(const struct sched_state *in, const struct sched_pending *p,
                         char *buf, size_t len);

/* Over-quota priority of a queue in a node pool (Run:ai's
 * resources[].priority): "None", "Low", "Normal" or "High", levels 0..3;
 * SCHED_EINVAL for any other name. A queue's rank in a pool is its rank
 * first, then its over-quota priority there (sched_pool_rank()), so with
 * equal ranks the priority orders siblings for spare capacity. */
#define SCHED_OQ_NORMAL 2
int sched_overquota_priority(const char *name, int *level);
const char *sched_overquota_priority_name(int level);   /* "" if out of range */
int sched_pool_rank(int rank, int level);

/* Resolved pool list of a workload: its own, else its queue's defaults,
 * else every pool, those where its queue deserves GPUs first (creation
 * order within each). Writes up to `max` indices; returns the count. */
int sched_workload_pools(const struct sched_state *in, const struct sched_workload *w,
                         int *out, int max);

/* Applies one decision to the caller's workloads (pure: no I/O).
 *   BIND:  the pod is placed; a workload that now has min_pods pods
 *          placed becomes RUNNING with started_ms = now_ms.
 *   EVICT: the pod (or every pod if d->pod < 0) is removed; a workload
 *          left with no pod, or below min_pods, becomes PENDING.
 *   MOVE:  the running pod is placed on its new node and devices.
 * Drivers apply a result's decisions in order, then copy
 * result.stale_since_ms[i] into workloads[i].stale_since_ms. */
int sched_apply_decision(struct sched_workload *workloads, int n_workloads,
                         const struct sched_decision *d, int64_t now_ms);

/* 1 when a and b say the same to the core: every field of struct
 * sched_workload, the lists (pools, pods, node types, affinity terms) by
 * their contents and the strings by their text. A driver that reads a
 * workload it holds again and finds it the same has changed nothing a
 * delta must tell (sched_cycle_next()). */
int sched_workload_same(const struct sched_workload *a, const struct sched_workload *b);

/* Total GPU of a workload in milli-GPU, for `pods` pods; a GPU-memory
 * request counts as whole devices here (its charge depends on the node:
 * sched_pod_gpu()). */
int64_t sched_workload_gpu(const struct sched_workload *w, int pods);
/* Milli-GPU one pod of w holds on node n: whole devices 1000 each, a
 * portion its milli-GPU on each device, a GPU-memory request
 * ceil(1000 x request / device memory) on each device (at most 1000). */
int64_t sched_pod_gpu(const struct sched_workload *w, const struct sched_node *n);
/* Shared devices per pod: 0 for whole-device or CPU-only requests. */
int sched_shared_devices(const struct sched_workload *w);
/* Does node n satisfy w's node types and required affinity? */
int sched_node_allowed(const struct sched_workload *w, const struct sched_node *n);

/* ---- A window of recent requests: the mix a driver passes (mix.c) ----
 * Remembers the shapes of the last `pods` GPU pods noted (CPU-only
 * workloads are not noted) and gives the most frequent SCHED_MIX_MAX of
 * them. The mix moves in steps: it is computed again once the pods noted
 * since reach 1/SCHED_MIX_STEP of the pods in the window, and until then
 * the same mix is given (so the incremental path keeps its session across
 * submissions). Shapes keep the requests and node types of the workload
 * they came from (copied), not its affinity. Pure and deterministic: the
 * same notes and gets give the same mix. */
#define SCHED_MIX_WINDOW 10000  /* pods allotd, the simulator and replay remember: a long
                                   history, so that a rare shape of many GPUs a pod keeps
                                   its count (bench/NOTES.md, "The mix's window") */
#define SCHED_MIX_STEP 20       /* the mix is computed again every 1/20 of the window */
struct sched_mix_window;
struct sched_mix_window *sched_mix_window_new(int pods);   /* NULL: out of memory */
void sched_mix_window_free(struct sched_mix_window *win);  /* NULL is a no-op */
/* A copy that shares no memory with win (the same notes give the same
 * mixes); NULL: out of memory. */
struct sched_mix_window *sched_mix_window_copy(const struct sched_mix_window *win);
/* Notes every pod of a workload just submitted; SCHED_ENOMEM. */
int sched_mix_window_note(struct sched_mix_window *win, const struct sched_workload *w);
/* The mix: *out points into the window until the next get (or free);
 * returns the count. By weight, ties by the shape noted first. */
int sched_mix_window_get(struct sched_mix_window *win, const struct sched_mix_entry **out);

#endif /* ALLOT_SCHED_H */
