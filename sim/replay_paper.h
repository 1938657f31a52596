/*
 * replay_paper.h: `allot replay --protocol paper`, the FGD paper's
 * experiment as its simulator runs it, for the paper's policies
 * (replay_policies.c) and allot's core.
 *
 * The protocol, for one trace, one policy and one seed:
 *   - arrivals: every task of the trace once, shuffled (Fisher-Yates,
 *     splitmix64 seeded with the seed), then tasks drawn from the trace
 *     while their GPUs stay within 1.3 times the cluster's (or tasks
 *     removed at random until within it); nothing ever leaves;
 *   - a random node order, drawn per seed after the arrivals: it breaks
 *     score ties (the node first in it wins);
 *   - pods placed one at a time in arrival order; no moves, no evictions,
 *     no quotas (allot's core runs with one project and consolidation
 *     off); a pod that fits nowhere is dropped and counted;
 *   - the figure: unallocated GPUs at 100%, the cluster's GPUs less the
 *     mean allocation over the arrivals whose arrived GPU demand is in
 *     [99.5%, 100.5%) of the cluster's (within [98.5%, 101.5%) if none).
 * Arrivals and node order depend on the seed alone, so every policy of a
 * seed sees the same ones: results pair by seed.
 */
#ifndef ALLOT_REPLAY_PAPER_H
#define ALLOT_REPLAY_PAPER_H

#include <stdint.h>
#include <stdio.h>

#include "replay_engine.h"
#include "replay_policies.h"

#define RPP_INFLATE 1.3   /* the paper's arrivals reach 1.3 times the cluster's GPUs */

/* What every run of one trace reads. */
struct rpp_ctx {
    const struct trace *t;             /* borrowed */
    const struct replay_model *m;      /* allot's model (one pool, one project); NULL
                                          when allot is not asked */
    struct rpp_shapes shapes;          /* owned */
    int64_t total_milli;               /* GPUs of the cluster */
    const char *label;                 /* the trace's name, e.g. "default" */
};

struct rpp_result {
    int policy;
    uint64_t seed;
    double idle100;                    /* unallocated GPUs at 100%; < 0: not reached */
    int window;                        /* arrivals averaged for it */
    int arrivals, dropped;             /* up to the end of the window */
    int disturbed;                     /* evictions or moves seen (allot): must be 0 */
    int moves, evictions;              /* the same apart (allot-moves: each move restarts
                                          a running pod) */
    double wall_s;
};

/* The trace's label: the pod file's name without openb_pod_list_ and .csv. */
const char *rpp_label(const char *pods_file, char *buf, size_t len);
int rpp_ctx_init(struct rpp_ctx *c, const struct trace *t, const struct replay_model *m,
                 const char *label);
void rpp_ctx_free(struct rpp_ctx *c);

/* One policy, one seed. 0, or -1 with err. */
int rpp_run(const struct rpp_ctx *c, int policy, uint64_t seed, struct rpp_result *out,
            char *err, size_t len);

/* The paper's published mean for (trace label, policy); < 0: none. */
double rpp_published(const char *label, int policy);

/* The per-trace report on f: one line per policy (mean, range, published,
 * difference), then each seed, and allot paired with FGD when both ran.
 * results are [n_policies x n_seeds], policy-major. */
void rpp_report_trace(FILE *f, const struct rpp_ctx *c, const struct rpp_result *results,
                      const int *policies, int n_policies, int n_seeds);
/* The table across traces: every (policy, trace) cell ours / published / diff. */
void rpp_report_summary(FILE *f, const char *const *labels, int n_traces,
                        const struct rpp_result *const *results, const int *policies,
                        int n_policies, int n_seeds);
/* The protocol in one paragraph, said before any figure. */
void rpp_report_protocol(FILE *f);

#endif
