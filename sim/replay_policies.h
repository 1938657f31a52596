/*
 * replay_policies.h: the placement policies of the FGD paper (Weng et al.,
 * "Beware of Fragmentation", ATC '23) as baselines of `allot replay
 * --protocol paper`, on a small cluster model of their own: a node is its
 * CPU and memory left, its GPU model and what is left of each of its
 * devices (milli-GPU); a pod is its CPU, memory, whole GPUs or a share of
 * one, and the GPU models it accepts.
 *
 * Every policy scores each node that fits a pod with a whole number from 0
 * to 100 (higher is better), as the paper's simulator does; the placer
 * (replay_paper.c) takes the best, ties going to the node first in the
 * run's random node order. docs/scheduler.md ("Placement in the paper's
 * protocol") says what each score measures; replay_policies.c how.
 *
 * Ownership: shapes are owned by their rpp_shapes (rpp_shapes_free()); a
 * pod's spec array is borrowed from the trace.
 */
#ifndef ALLOT_REPLAY_POLICIES_H
#define ALLOT_REPLAY_POLICIES_H

#include <stdint.h>

#include "trace.h"

#define RPP_MAX_GPUS 8          /* devices per node */
#define RPP_MILLI 1000          /* milli-GPU of one device */
#define RPP_MAX_SPEC_CPU 128000 /* the paper's normalisers: CPU of the largest node */
#define RPP_MAX_SPEC_GPU 8000   /* ... and its GPUs, in milli */
#define RPP_TYPICAL_PCT 95      /* typical shapes cover this share of the pods */

enum rpp_policy {
    RPP_RANDOM = 0, RPP_DOTPROD, RPP_GPUCLUSTERING, RPP_GPUPACKING, RPP_BESTFIT, RPP_FGD,
    RPP_ALLOT,                  /* allot's core (replay_paper.c), not scored here */
    RPP_ALLOT_MOVES,            /* the same with consolidation on: not placement alone */
    RPP_FGD_MOVES,              /* FGD placing, then allot's consolidation (replay_paper.c) */
    RPP_NPOLICIES
};

/* GPU affinity tags of GpuClustering: share, then 1..8 whole GPUs. */
#define RPP_NTAGS (1 + RPP_MAX_GPUS)

struct rpp_pod {
    int64_t cpu, mem;           /* milli-CPU, MiB */
    int num_gpu;                /* 0: CPU only */
    int64_t milli;              /* per GPU: 1..999 shares one device, 1000 whole ones; 0 */
    const int *spec;            /* GPU models it accepts; n_spec 0: any */
    int n_spec;
};

struct rpp_node {
    int64_t cpu_left, mem_left;
    int model;
    int n_gpus;
    int64_t dev_left[RPP_MAX_GPUS];
    int tags[RPP_NTAGS];        /* pods on the node per affinity tag */
    double frag;                /* FGD: the node's fragmentation, kept current */
};

struct rpp_shape {
    struct rpp_pod pod;
    double freq;                /* share of the typical pods, summing to 1 */
};

struct rpp_shapes {
    struct rpp_shape *s;
    int n;
};

/* The typical shapes of a trace: every task (CPU-only ones included)
 * counted by (CPU, milli-GPU, GPUs, spec), most frequent first, taken until
 * they cover RPP_TYPICAL_PCT% of the tasks, renormalised. 0 or -1 (memory). */
int rpp_shapes_of_trace(const struct trace *t, struct rpp_shapes *out);
void rpp_shapes_free(struct rpp_shapes *sh);

/* The pod of a trace task (spec borrowed from t). */
void rpp_pod_of_task(const struct trace *t, int task, struct rpp_pod *p);

/* 1 if p fits n as it is (CPU, memory, GPU model and devices). */
int rpp_fits(const struct rpp_node *n, const struct rpp_pod *p);

/* The node's fragmentation for the shapes (milli-GPU): for each shape, the
 * GPU it cannot use on this node, weighted by the shape's frequency. */
double rpp_frag(const struct rpp_node *n, const struct rpp_shapes *sh);

/* The score (0..100) of placing p on n (it must fit), and the devices it
 * would take (bit mask) in *devices. RPP_RANDOM scores every node 0 and
 * picks devices with *rng. sh is read by RPP_FGD only. */
int rpp_score(int policy, const struct rpp_node *n, const struct rpp_pod *p,
              const struct rpp_shapes *sh, uint64_t *rng, uint64_t *devices);

/* p goes onto n on `devices` (or comes off, sign -1); n->frag is updated
 * when sh is not NULL. */
void rpp_apply(struct rpp_node *n, const struct rpp_pod *p, uint64_t devices, int sign,
               const struct rpp_shapes *sh);

const char *rpp_policy_name(int policy);      /* "fgd", ... */
const char *rpp_policy_paper_name(int policy); /* "FGD", ... */
int rpp_policy_parse(const char *word);       /* -1 if unknown */

uint64_t rpp_splitmix64(uint64_t *state);

#endif
