/*
 * sched_model.h: the scheduler thread's in-memory copy of the cluster
 * (sched_model.c), used by sched_loop.c and, on copies, by whatif.c.
 *
 * The database stays the source of truth: the model is loaded from it
 * once at start, re-reads the topology (pools, nodes, queues) when told it
 * changed, and re-reads only the workloads whose rows changed. Between
 * cycles it holds exactly what the last cycle decided.
 */
#ifndef ALLOT_SCHED_MODEL_H
#define ALLOT_SCHED_MODEL_H

#include "db.h"
#include "sched.h"

/* What the model keeps beside each workload the core sees. */
struct sm_meta {
    int64_t seq, version, project_seq;
    int reason;                  /* enum sched_reason last written; SCHED_R_NONE */
    uint64_t msg_hash;           /* hash of the phaseMessage last written */
    struct sched_pending said;   /* the numbers it was made from (reason -1: unknown) */
    int initializing;            /* phase Initializing: placed, an agent has yet to start a pod */
    int left;                    /* left in place (keep_left): no longer live, kept as
                                    SCHED_COMPLETED until sm_drop_left() */
    int reread_changed;          /* read again and then not the same to the core
                                    (sched_workload_same()), not yet told (Invariant 7) */
    char *strs;                  /* name, pools, node types: one malloc'd block */
    /* node types and required affinity in the core's types; the strings
     * live in strs and affinity_doc */
    const char **node_types;
    struct json_t *affinity_doc;
    struct json_t *topology_doc; /* its topology (requiredPlacement, preferredPlacement) */
    struct sched_term *terms;
    struct sched_match *matches;
    const char **values;
};

struct sched_model {
    struct db_snapshot *topo;    /* the rows behind pools, nodes, queues */
    struct sched_pool *pools;
    struct sched_node *nodes;
    struct sched_label *labels;  /* every node's labels, one block; strings in label_docs */
    struct json_t **label_docs;  /* [n_nodes] */
    struct json_t **pool_topo_docs; /* [n_pools] each pool's topology levels (JSON array) */
    const char **pool_levels;    /* [n_pools * SCHED_MAX_TOPOLOGY]: their strings, per pool */
    struct sched_queue *queues;
    struct sched_quota *quotas;  /* [n_queues * n_pools * SCHED_NRES] */
    int *queue_pools;            /* [n_queues * n_pools]: default pools */
    int *queue_ranks;            /* [n_queues * n_pools]: rank and over-quota priority per pool */
    int n_pools, n_nodes, n_queues;
    struct sched_workload *wls;  /* live Pending or Running, ordered by seq */
    struct sm_meta *meta;        /* [n], beside wls */
    int n, cap;
    /* 1: a workload that stops being live (pending or holding pods) is
     * kept in place as left (phase SCHED_COMPLETED, pods off their nodes,
     * no stale time) instead of dropped, so the core sees a departure,
     * not a renumbering; n_left of wls[] are such. A load or sm_free()
     * sets it back to 0. */
    int keep_left, n_left;
    struct sched_usage *usage;   /* time-based fairshare history; malloc'd */
    int n_usage;
    struct sched_mix_window *mix;  /* the shapes of the last SCHED_MIX_WINDOW pods the
                                      model saw arrive (fragmentation placement) */
};

/* A driver repeats cycles while one decides something, at most this many
 * times per turn (sched_loop.c, and whatif.c to foresee a turn). */
#define SM_MAX_PASSES 16

/* Loads everything from the database (topology and every workload). */
int sm_load(struct sched_model *m, struct db *db);
/* Builds the model from rows read by db_snapshot_load() (borrowed: the
 * model copies what it keeps). */
int sm_build(struct sched_model *m, const struct db_snapshot *rows);
/* Re-reads pools, nodes and queues; workloads keep their places. */
int sm_load_topology(struct sched_model *m, struct db *db);
/* Replaces the topology with topo (taken over: freed with the model, or
 * at once on failure); workloads are re-resolved against it by seq. */
int sm_set_topology(struct sched_model *m, struct db_snapshot *topo);
/* The quotas and over-quota priorities of the queues rows[0..n) name (by
 * seq; others are passed over) as those rows give them, written over the
 * model's (and the `default` department's GPUs, which follow the other
 * departments' quotas); the topology's own rows stay as they are (shared,
 * read-only), so the model no longer matches them: for a model that goes
 * with its run, a what-if's (whatif.c), not the scheduler's. */
int sm_quota_rows(struct sched_model *m, const struct db_queue *const *rows, int n);
/* The topology alone, for naming what a result's indices point at: topo
 * (taken over: freed with the model, or at once on failure) with the
 * pools, the nodes (each with its pool) and the count of queues, read as
 * sm_set_topology() reads them; no labels, quotas or levels are read (the
 * core cannot run on it). m is empty. */
int sm_set_names(struct sched_model *m, struct db_snapshot *topo);
/* Re-reads the workloads seqs[0..n) (sorted here): a live Pending or
 * Running row is added or replaced, any other is dropped. */
int sm_refresh(struct sched_model *m, struct db *db, int64_t *seqs, int n);
/* The same from rows already read: rows->workloads holds, in the order
 * of the sorted, unique seqs[0..n), the rows of those that are live; a
 * seq without a row is dropped. */
int sm_apply_rows(struct sched_model *m, const int64_t *seqs, int n,
                  const struct db_snapshot *rows);
/* sm_apply_rows() in two halves, so that the costly one needs no lock:
 * sm_rows_build() only reads the model (where each seq is) and builds the
 * entries of the workloads it does not hold yet; sm_rows_take() changes
 * the model. Nothing may change the model between the two (its topology
 * least of all: drop b with sm_built_free() then). rows must outlive the
 * take; b is emptied by the take, or by sm_built_free(). */
struct sm_built {
    const struct db_snapshot *rows;
    struct sched_workload *aw;
    struct sm_meta *am;
    int *where, *row_of;         /* [n]: model index or -1; row index or -1 */
    int n, n_add;
    /* When the new entries outgrow the model's arrays: larger ones with
     * the model's entries copied in, made aside so that the copy does not
     * run under the model lock; after sm_rows_take, the arrays it
     * replaced, freed by sm_built_free() once the lock is given back. */
    struct sched_workload *wls;
    struct sm_meta *meta;
    int cap;
    const struct sched_workload *copied;   /* the model's arrays copied, and their length */
    int n_copied;
    /* The new entries whose seqs follow the model's last, moved before
     * the lock into the arrays the model will have (the aside ones, or
     * the model's own past its length, which no reader looks at), after
     * room for the n_add earlier ones that merge_in() places under the
     * lock: only the count is taken under it. staged_wls/staged_meta are
     * those arrays, the entries at [stage_at, stage_at + n_staged); NULL:
     * nothing staged. */
    struct sched_workload *staged_wls;
    struct sm_meta *staged_meta;
    int stage_at, n_staged;
    /* The model's mix window copied before the lock, with the new entries
     * noted in it (the n_add, then the staged ones, as sm_rows_take()
     * would note them); taken in its place if the model's is still
     * mix_of, else NULL and they are noted under the lock. After the
     * take, the window it replaced, freed by sm_built_free(). */
    struct sched_mix_window *mix;
    const struct sched_mix_window *mix_of;
};
int sm_rows_build(const struct sched_model *m, const int64_t *seqs, int n,
                  const struct db_snapshot *rows, struct sm_built *b);
int sm_rows_take(struct sched_model *m, struct sm_built *b);
void sm_built_free(struct sm_built *b);
/* Drops the workloads left in place (keep_left), renumbering the others. */
void sm_drop_left(struct sched_model *m);
/* Index of a workload by seq (left ones too); -1. */
int sm_workload_index(const struct sched_model *m, int64_t seq);
/* A deep copy of src into the empty dst (its workload mix too, not the
 * workloads left in place), sharing no memory with src. */
int sm_clone(const struct sched_model *src, struct sched_model *dst);
/* Points a core state at the model (borrowed until the model changes),
 * with the mix of the workloads it saw arrive, loaded ones first. */
void sm_state(const struct sched_model *m, int64_t now_ms, struct sched_state *out);
/* Frees everything; the model is empty afterwards. */
void sm_free(struct sched_model *m);
/* Index of a pool or queue by seq in the model's topology; -1. */
int sm_pool_index(const struct sched_model *m, int64_t seq);
int sm_queue_index(const struct sched_model *m, int64_t seq);
/* enum sched_reason of a reason name ("" or unknown: SCHED_R_NONE). */
int sm_reason_code(const char *name);
/* The hash kept in sm_meta.msg_hash (FNV-1a, 64 bits). */
uint64_t sm_hash(const char *s);

/* The scheduler thread's model, brought up to date as its next cycle
 * would (Step 1 of sched_loop.c), copied into dst under the cycle lock;
 * *copy_us is how long the lock was held. 0, or -1 (dst empty). */
struct ctl_sched;
int ctl_sched_model_copy(struct ctl_sched *s, struct sched_model *dst, int64_t *copy_us);

/* A trial on the scheduler thread's own state, not a copy of it: between
 * two cycles, when the model holds every row (nothing touched since its
 * last Step 1, the organization unchanged), fn(t, out) runs in a child
 * forked with cow_start() (common/cow.h), on a copy-on-write image of the
 * model and the memo of the last cycle, with the delta the next cycle
 * would be told so far; the scheduler thread waits for the fork only (a
 * turn in progress is waited for up to 100 ms, TRIAL_WAIT_MS).
 * t->topo is the model's topology, shared (db_snapshot_share(): read
 * only), for the caller to let go of or give to sm_set_topology(). 0 with
 * c to finish (cow_finish()); -1:
 * not now (the caller copies the model instead). */
struct cow_out;
struct cow_child;
struct ctl_trial {
    void *arg;                  /* the caller's */
    struct sched_model *m;      /* in the child: the model, the memo and the */
    struct sched_memo *memo;    /* delta, to change and run at will */
    struct sched_delta delta;
    int64_t now_ms;
    struct db_snapshot *topo;   /* the caller's hold of the model's topology */
};
int ctl_sched_trial(struct ctl_sched *s, int (*fn)(void *t, struct cow_out *out),
                    struct ctl_trial *t, struct cow_child *c);

#endif /* ALLOT_SCHED_MODEL_H */
