/*
 * whatif.h: what the next scheduling turn would do after a change that has
 * not been made (whatif.c): a submission (POST .../workloads/...?dryRun=
 * true), a quota, a node drained or added, a workload deleted or
 * suspended (POST /api/v1/whatif).
 *
 * A run copies the scheduler thread's model (ctl_sched_model_copy(), a
 * short hold of the cycle lock), makes the changes on the copy, and runs
 * the core on it pass after pass, as the scheduler thread does in one turn,
 * until a pass decides nothing. Nothing is stored; the scheduler thread
 * and the other requests go on meanwhile.
 */
#ifndef ALLOT_WHATIF_H
#define ALLOT_WHATIF_H

#include "sched_model.h"

struct ctl_sched;
struct ctl_share;

/* Runs at once at most; another waits up to WI_WAIT_MS for its turn, then
 * is refused (wi_run() returns WI_BUSY). */
#define WI_MAX_RUNS 2
#define WI_WAIT_MS 5000
#define WI_BUSY (-2)

enum wi_change_kind { WI_QUOTA = 0, WI_DRAIN, WI_ADD_NODE, WI_DELETE, WI_SUSPEND, WI_SUBMIT };

struct wi_change {
    int kind;                          /* enum wi_change_kind */
    const struct db_queue *queue;      /* WI_QUOTA: the queue (by seq) with its quotas as
                                          they would be */
    int64_t node_seq;                  /* WI_DRAIN */
    const struct db_node *node;        /* WI_ADD_NODE: name, pool_seq, GPUs, type, GPU memory;
                                          its seq is given by the run */
    int64_t workload_seq;              /* WI_DELETE, WI_SUSPEND */
    const struct db_sched_wl *submission;  /* WI_SUBMIT: the row it would be; its seq and
                                              queue position are given by the run */
};

/* What happens to a workload: it starts, stops (back to Pending, or gone),
 * or runs on with other pods (moved, or shrunk). */
enum wi_what { WI_START = 0, WI_STOP, WI_MOVE };

/* Why: the core's action (enum sched_action: allocate, consolidate,
 * reclaim, preempt, stale-gang), or the change itself. */
enum wi_reason { WI_R_DELETE = 16, WI_R_SUSPEND, WI_R_DRAIN };

struct wi_pod {
    int index;                         /* the pod's index in its workload */
    int node;                          /* index into the result's model's nodes */
    uint64_t devices;
};

struct wi_effect {
    int64_t seq;                       /* 0: the submission */
    char name[DB_NAME_LEN];
    int queue;                         /* its project: index into the model's queues */
    int what;                          /* enum wi_what */
    int reason;                        /* enum sched_action or enum wi_reason */
    int64_t gpu_milli;                 /* what it holds: before for WI_STOP, after otherwise */
    int by_queue;                      /* the workload it made room for: its project, or -1 */
    char by_name[DB_NAME_LEN];
    struct wi_pod *before, *after;     /* its placed pods before and after */
    int n_before, n_after;
};

/* Per queue and pool, before (the last real cycle) and after. */
struct wi_figures {
    int64_t deserved[3], fair[3], allocated[3];
    int known;                         /* before: the last cycle recorded this queue and pool */
};

struct wi_share {
    int queue, pool;                   /* indices into the model */
    struct wi_figures before, after;
};

struct wi_result {
    struct sched_model m;              /* for the names the indices below point at: the
                                          copy as the run left it, or a run on the kept
                                          state's topology alone (sm_set_names()) */
    struct wi_effect *effects;
    int n_effects;
    struct wi_share *shares;           /* [m.n_queues * m.n_pools], queue-major */
    int n_shares;
    /* the submission (WI_SUBMIT): */
    int placed;                        /* it would run */
    const char *phase;                 /* Running, Initializing (waits for agents) or Pending */
    const char *phase_reason;          /* "" when placed */
    char phase_message[DB_MSG_LEN];
    int pool;                          /* where it would run, or -1 */
    struct wi_pod *pods;               /* its placed pods */
    int n_pods;
    int64_t gpu_milli;
    /* cost */
    int passes, decisions;
    int64_t copy_us;                   /* the cycle lock held to copy the model */
    int64_t run_us;                    /* changes and passes, without the lock */
    int64_t cpu_us;                    /* CPU time: the request's thread, and a kept run's
                                          child up to its answer */
    int kept;                          /* 1: answered on the scheduler's kept state (a
                                          forked image), 0: on a copy of the model */
};

/* One run on the scheduler's live state. before[0..n_before): the last
 * cycle's shares (ctl_sched_shares()). 0; -1 on failure (no memory, or the
 * model could not be read); WI_BUSY when no place came free in time. */
int wi_run(struct ctl_sched *s, const struct wi_change *changes, int n,
           const struct ctl_share *before, int n_before, struct wi_result *out);
/* The same on a model copy the caller made (taken over: it becomes
 * out->m), at now_ms; what the benchmark times. */
int wi_run_model(struct sched_model *copy, int64_t now_ms, const struct wi_change *changes,
                 int n, const struct ctl_share *before, int n_before, struct wi_result *out);
void wi_result_free(struct wi_result *r);
/* "reclaim", "preempt", ..., "delete", "suspend", "drain". */
const char *wi_reason_name(int reason);

#endif /* ALLOT_WHATIF_H */
