/*
 * world.h: the cluster a scenario runs on, as the simulator changes it:
 * node readiness, quotas, the workloads and their pods, the clock, the
 * usage history, and what the last scheduling pass said.
 *
 * The world is the driver's side of sched.h: it builds the
 * `struct sched_state` the core reads (borrowing its own arrays), applies
 * the core's decisions with sched_apply_decision(), and does by itself
 * what happens between passes (submissions, deletions, node failures, the
 * clock). Workloads live in submission order; a deleted one leaves the
 * arrays, so indices after it move down by one.
 *
 * Invariants (world_check() verifies them after every pass):
 *   1. A placed pod is on a ready node, on devices that node has: as many
 *      as gpu_devices for whole-device pods, exactly one for portion pods,
 *      none for pods that ask no GPU.
 *   2. No device holds more than one GPU (a whole-device pod holds all of
 *      it); no node holds more CPU or memory than it has.
 *   3. A RUNNING workload has at least min_pods pods placed, a PENDING one
 *      fewer; STOPPED, COMPLETED and FAILED workloads hold nothing.
 */
#ifndef ALLOT_WORLD_H
#define ALLOT_WORLD_H

#include <stdint.h>

#include "namemap.h"
#include "scenario.h"
#include "sched.h"

/* What the driver keeps beside each workload. */
struct world_wl {
    int64_t runtime_ms;      /* SCHED_NO_TIME: runs until told otherwise */
    unsigned char evicted;   /* an EVICT decision since the last expect step */
    unsigned char moved;     /* a MOVE decision since the last expect step */
};

/* A pending entry of the last pass, kept by name (indices move). */
struct world_pending {
    const char *name;
    struct sched_pending p;  /* p.workload: the index at that pass */
};

struct world {
    const struct scenario *s;      /* borrowed */
    int64_t now_ms;
    int64_t seq;                   /* the last queued_seq handed out */
    struct sched_node *nodes;      /* [s->n_nodes] */
    struct sched_queue *queues;    /* [s->n_queues]; quota points into quotas */
    struct sched_quota *quotas;    /* [n_queues * n_pools * SCHED_NRES] */
    struct sched_workload *wls;    /* [n_wls]; pods owned */
    struct world_wl *extra;        /* [n_wls] */
    int n_wls, cap_wls;
    struct namemap index;          /* workload name -> index, -1 once deleted */
    struct sched_usage *usage;
    int n_usage, cap_usage;
    struct sched_arena *arena;
    struct sched_mix_window *mix;  /* the last SCHED_MIX_WINDOW pods submitted */
    /* device occupancy, rebuilt when dirty */
    int32_t *dev_used;             /* [n_nodes * SCHED_MAX_NODE_GPUS] milli-GPU */
    int64_t *node_cpu, *node_mem;  /* [n_nodes] requested by placed pods */
    int dev_dirty;
    /* the last scheduling pass */
    int passes;                    /* passes run so far */
    int64_t *fair_gpu;             /* [n_queues * n_pools] */
    struct world_pending *pending;
    int n_pending, cap_pending;
    /* what changed since the last pass, as sched_cycle_next() takes it:
     * submissions without pods, workloads completed or suspended in place
     * (delta.left, in `left`) and nodes gone down (delta.down, in `down`)
     * count, anything else makes it full */
    struct sched_delta delta;
    int *left;                     /* [cap_left] delta.left's storage */
    int cap_left;
    int *down;                     /* [cap_down] delta.down's storage */
    int cap_down;
    struct sched_memo *memo;       /* world_check_incremental(); NULL: off */
    struct sched_arena *memo_arena;
};

/* A runtime problem: `where` extends the step's JSON path ("" or
 * ".submit.runningOn[1]"), `pass` is the scheduling pass after which it
 * was found (0: none), `msg` says what went wrong. */
struct world_err {
    char where[64];
    int pass;
    char msg[512];
};

int world_new(const struct scenario *s, struct world **out);
void world_free(struct world *w);   /* NULL is a no-op */

/* The snapshot the core reads; it borrows the world's arrays (and the
 * mix of recent submissions, until the next submission). */
void world_state(const struct world *w, struct sched_state *st);
/* Index of a workload still there, or -1. */
int world_find(const struct world *w, const char *name);

/* From now on every pass also runs sched_cycle_next() with a memo and the
 * changes since the previous pass, and fails unless it gives the bytes
 * sched_cycle() gave (the world goes on with sched_cycle()'s result). 0 or
 * -1 (out of memory). */
int world_check_incremental(struct world *w);

/* ---- What steps do ---- */
int world_submit(struct world *w, const struct scn_submit *sub, struct world_err *e);
void world_delete(struct world *w, int i);
/* Deletes every COMPLETED or FAILED workload in one pass; the others keep
 * their order (their indices move down). */
void world_sweep(struct world *w);
void world_finish(struct world *w, int i, int phase);   /* COMPLETED or STOPPED */
void world_resume(struct world *w, int i);
void world_node_down(struct world *w, int node);
void world_node_up(struct world *w, int node);
void world_set_quota(struct world *w, const struct scn_set_quota *q);
int world_advance(struct world *w, int64_t ms, struct world_err *e);

/* ---- Scheduling ---- */
/* One pass: sched_cycle() on the current state, every decision applied
 * in order, stale-gang times copied back. *res lives in the world's
 * arena until the next pass. */
int world_pass(struct world *w, const struct sched_config *cfg, struct sched_result *res,
               struct world_err *e);
/* Keeps what expectations read from a pass: fair shares and pending entries. */
int world_keep(struct world *w, const struct sched_result *res, struct world_err *e);
/* Verifies the invariants above. */
int world_check(struct world *w, struct world_err *e);
/* Forgets evictions and moves (an expect step has looked at them). */
void world_clear_marks(struct world *w);

/* ---- What expectations read ---- */
/* milli-GPU held by placed pods of `queue` (a project, or a department:
 * its projects), in `pool`, or in every pool when pool < 0. */
int64_t world_allocated_gpu(const struct world *w, int queue, int pool);
/* The last pass's fair share of GPU, summed like world_allocated_gpu(). */
int64_t world_fair_gpu(const struct world *w, int queue, int pool);
/* The last pass's pending entry of a workload, or NULL. */
const struct world_pending *world_pending_of(const struct world *w, const char *name);
/* The core's message for a kept pending entry (the workload must still be there). */
void world_pending_message(const struct world *w, const struct world_pending *kp, char *buf,
                           size_t len);

/* ---- Devices (world_devices.c) ---- */
int world__rebuild_devices(struct world *w, struct world_err *e);
int world__place_pod(struct world *w, int i, int pod, int node, struct world_err *e);

#endif
