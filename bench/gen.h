/*
 * gen.h: the synthetic clusters the cycle benchmark runs on.
 *
 * A generated world is a complete `struct sched_state` that the
 * benchmark owns: node pools, nodes, a two-level queue tree whose
 * deserved quotas add up to each pool's capacity, running workloads
 * already placed (the core sees them as running), and pending workloads.
 * Generation is deterministic: the same options give the same world.
 *
 * Shape (the defaults are bench/README.md's Targets row 1):
 *   - nodes x gpus GPUs, node i in pool i % pools, CPU and memory ample;
 *     every pool places by one strategy (default binpack, allot's
 *     default), with the mix of every workload generated, in order;
 *   - departments x projects queues; per pool and GPU, each department
 *     deserves capacity / departments and each project its department's
 *     share / projects (remainders to the first ones); weights 1, no
 *     limits; project k prefers pool k % pools, then the next ones;
 *   - running workloads fill fill_pct % of the GPUs, node by node, with
 *     pods of 1-8 GPUs, a tenth of them grouped into gangs of 2-16 pods;
 *     non-preemptible ones only within deserved;
 *   - pending workloads of 1-8 GPUs per pod, gang_pct % of them gangs
 *     (distributed) of 2-64 pods, interactive_pct % workspaces of the
 *     interactive-preemptible priority class, the others trainings (80 %),
 *     workspaces and inference servers (10 % each), in uniformly random
 *     projects;
 *   - with ranks > 1, department d has rank d % ranks (a higher rank is
 *     served first for spare capacity), its projects rank 0.
 */
#ifndef ALLOT_BENCH_GEN_H
#define ALLOT_BENCH_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "sched.h"

#define GEN_MAX_POOLS 8

struct gen_opts {
    int nodes, gpus;             /* gpus: 1..8 */
    int pools;                   /* 1..GEN_MAX_POOLS */
    int departments, projects;   /* projects per department */
    int fill_pct;                /* GPUs held by running workloads, percent */
    int pending;                 /* pending workloads */
    int gang_pct;                /* pending workloads that are gangs, percent */
    int interactive_pct;         /* pending workloads that are interactive-preemptible
                                    workspaces, percent (0: none, the default) */
    int ranks;                   /* departments ranked d % ranks (0 or 1: all equal) */
    int pending_gpus;            /* 0: 1-8 GPUs per pod; else exactly that */
    int extra;                   /* room for workloads added later */
    int placement;               /* enum sched_placement of every pool */
    int rack_nodes;              /* 0: no topology; else every pool's topology is block, rack,
                                    host, racks of this many nodes (in name order), blocks of 8
                                    racks, and every other pending gang requires one rack
                                    (the others, distributed, prefer the narrowest level) */
    uint64_t seed;
};

struct gen_world {
    struct sched_pool *pools;        int n_pools;
    struct sched_node *nodes;        int n_nodes;
    struct sched_label *labels;      /* [2 * n_nodes] with rack_nodes: block, rack */
    struct sched_queue *queues;      int n_queues;
    struct sched_quota *quotas;      /* [n_queues * n_pools * SCHED_NRES] */
    int *default_pools;              /* [n_queues * n_pools] */
    struct sched_workload *wls;      int n_wls, cap_wls;
    struct sched_pod *pods;          size_t n_pods, cap_pods;
    char *names;                     /* node and workload names */
    size_t n_names, cap_names;
    int n_projects, projects_per_dept;
    int64_t now_ms, seq;
    uint64_t rng;
    int n_running, n_gangs_running, n_gangs_pending;
    int64_t gpus_running;            /* milli-GPU */
    struct sched_mix_window *mix;    /* the shapes of the workloads generated */
};

/* Builds the world `o` describes; 0 or -1 (out of memory). */
int gen_world_new(const struct gen_opts *o, struct gen_world **out);
void gen_world_free(struct gen_world *w);   /* NULL is a no-op */

/* The snapshot the core reads; borrows the world's arrays. */
void gen_world_state(const struct gen_world *w, struct sched_state *st);

/* Adds a pending workload of `pods` pods of `gpus` GPUs to project
 * `queue`; returns its index, or -1 when the world has no room left. */
int gen_world_submit(struct gen_world *w, int queue, int gpus, int pods);

/* The index of project number k (0 <= k < departments * projects). */
int gen_world_project(const struct gen_world *w, int k);

#endif
