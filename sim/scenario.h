/*
 * scenario.h: a scenario file (../shared/scenarios/FORMAT.md) read into a
 * model that the simulator runs without looking at JSON again.
 *
 * scenario_load() validates the whole file before anything runs: JSON
 * syntax, types, required and unknown fields, names (unique, and every
 * reference known), ranges. Every reference is resolved to an index into
 * the model's arrays, except workloads, which steps name (workloads come
 * and go while a scenario runs).
 *
 * The model follows sched.h's units and orders:
 *   - pools: `default` first unless the file lists it, then file order;
 *   - nodes: file order;
 *   - queues: departments (the implicit `default` first unless listed),
 *     then projects; the index order is the queues' age;
 *   - GPU in milli-GPU, CPU in millicores, memory in MiB, time in ms.
 *
 * Ownership: the scenario owns its arrays and the parsed document; every
 * string in it is borrowed from that document (or is a literal).
 */
#ifndef ALLOT_SCENARIO_H
#define ALLOT_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "sched.h"

struct json_t;

enum scn_step_kind {
    SCN_SUBMIT = 0, SCN_DELETE, SCN_COMPLETE, SCN_SUSPEND, SCN_RESUME,
    SCN_NODE_DOWN, SCN_NODE_UP, SCN_SET_QUOTA, SCN_ADVANCE, SCN_SCHEDULE,
    SCN_EXPECT, SCN_NKINDS
};

struct scn_submit {
    struct sched_workload w;   /* everything but phase, pods and times */
    int *pools;                /* owned; w.pools points here (or NULL) */
    int *running_on;           /* owned; [w.n_pods] node index or -1; NULL: not running */
    const char **node_types;   /* owned; w.node_types points here (or NULL) */
    struct sched_term *terms;  /* owned; w.affinity, its matches and their values */
    struct sched_match *matches;
    const char **values;
    int64_t runtime_ms;        /* SCHED_NO_TIME: runs until told otherwise */
};

enum scn_quota_field { SCN_DESERVED = 0, SCN_LIMIT, SCN_WEIGHT, SCN_NFIELDS };

struct scn_set_quota {
    int queue;
    int pool;
    unsigned given;                      /* bit res * SCN_NFIELDS + field */
    struct sched_quota value[SCHED_NRES];
};

enum scn_check_kind {
    SCN_PHASE = 0, SCN_NODES, SCN_EVICTED, SCN_NOT_EVICTED, SCN_MOVED,
    SCN_ALLOCATED, SCN_FAIR_SHARE, SCN_REASON, SCN_DOMAINS
};

/* One check of an `expect` step. */
struct scn_check {
    int kind;          /* enum scn_check_kind */
    const char *name;  /* the workload, or the queue key as written ("team-a/a100") */
    int value;         /* SCN_PHASE: phase; SCN_REASON: reason;
                          SCN_ALLOCATED, SCN_FAIR_SHARE: queue */
    int pool;          /* SCN_ALLOCATED, SCN_FAIR_SHARE: a pool, or -1 for their sum */
    int64_t milli;     /* SCN_ALLOCATED, SCN_FAIR_SHARE: expected milli-GPU */
    int *nodes;        /* SCN_NODES: owned, expected node indices, sorted */
    int n_nodes;
    const char *label; /* SCN_DOMAINS: the label key (a topology level) */
    const char *domain;/* SCN_DOMAINS: every placed pod's node has this value of it, or */
    int n_domains;     /* ... (domain NULL) its placed pods span this many values */
};

struct scn_step {
    int kind;   /* enum scn_step_kind */
    union {
        struct scn_submit submit;
        const char *workload;        /* delete, complete, suspend, resume */
        int node;                    /* nodeDown, nodeUp */
        struct scn_set_quota quota;
        int64_t advance_ms;
        int cycles;                  /* schedule; 0: until a pass decides nothing */
        struct {
            struct scn_check *checks;  /* owned */
            int n_checks;
        } expect;
    } u;
};

struct scenario {
    const char *file;              /* borrowed from the caller */
    const char *name;
    struct json_t *doc;            /* owned */
    struct sched_pool *pools;      int n_pools;
    struct sched_node *nodes;      int n_nodes;
    struct sched_queue *queues;    int n_queues;
    struct sched_quota *quotas;    /* [n_queues * n_pools * SCHED_NRES], pool-major per queue;
                                      queues[q].quota points into it */
    int *default_pools;            /* [n_queues * n_pools]; queues[q].default_pools
                                      points into it */
    int *pool_ranks;               /* [n_queues * n_pools]: rank and over-quota priority per
                                      pool; queues[q].pool_rank points into it */
    struct scn_step *steps;        int n_steps;
};

/* Reads and validates `file` (borrowed; it must outlive the scenario).
 * On error returns -1 and writes one line, "FILE: PATH: problem" or
 * "FILE: OS error", into err. */
int scenario_load(const char *file, struct scenario **out, char *err, size_t len);
void scenario_free(struct scenario *s);   /* NULL is a no-op */

/* The JSON key of a step kind ("submit", "nodeDown", ...). */
const char *scenario_step_key(int kind);

#endif
