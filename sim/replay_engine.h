/*
 * replay_engine.h: the trace replay engine behind `allot replay`.
 *
 *   cli/replay.c      the command line and the order of the runs
 *   replay_model.c    the trace turned into pools, nodes, queues and
 *                     workload templates, shared read-only by every run
 *   replay_run.c      one policy over the trace on the trace's clock
 *   replay_fifo.c     the FIFO + first-fit placer (the baseline)
 *   replay_inflate.c  one policy under workload inflation
 *   replay_stats.c    samples taken while a run goes, and the summary
 *   replay_report.c   the summaries as Markdown, JSON and SVG
 *
 * Pools of the model: one per GPU model (a task's gpu_spec is its pool
 * list), or with --pools single one pool `default` where the GPU model is
 * each node's node type (a task's gpu_spec models its node types).
 *
 * Queues of the model: index 0 is the department `default` (unlimited),
 * indices 1..n_projects the projects; a task goes to project
 * FNV-1a-32(name) mod n_projects.
 */
#ifndef ALLOT_REPLAY_ENGINE_H
#define ALLOT_REPLAY_ENGINE_H

#include <stdint.h>

#include "namemap.h"
#include "scenario.h"
#include "sched.h"
#include "trace.h"
#include "world.h"

/* fifo: FIFO + first fit (replay_fifo.c); the others run the core with
 * every pool placing by one strategy: bestfit SCHED_BINPACK (KAI's
 * default), allot allot's default (SCHED_DEFAULT_GPU_PLACEMENT:
 * fragmentation), allot-spread SCHED_SPREAD. */
enum replay_policy { RP_FIFO = 0, RP_BESTFIT, RP_ALLOT, RP_ALLOT_SPREAD, RP_NPOLICIES };

#define RP_MAX_PROJECTS 100
#define RP_MAX_POOLS 64     /* GPU models */
#define RP_MAX_PASSES 16   /* passes per scheduling cycle, as the server */
#define RP_BUCKETS 200     /* points of the time series */

struct replay_opts {
    const char *nodes_file, *pods_file, *quota_file, *report_dir;
    int n_projects;        /* 0: from the quota file, else 4 */
    unsigned policies;     /* bit (1 << enum replay_policy) */
    double inflate;        /* > 0: inflation runs up to this multiple of the GPUs */
    uint64_t seed, last_seed;   /* inflation runs for every seed of [seed, last_seed] */
    int64_t period_ms;     /* 0: a cycle at every event time */
    double speedup;        /* arrivals this many times faster */
    int gangs;             /* multi-GPU tasks become gangs of one-GPU pods */
    int single_pool;       /* one pool; the GPU model is the node type */
    int check;             /* verify the world's invariants after every cycle */
    int timing;            /* wall times on stderr */
    int jobs;              /* runs at once; 0: the CPUs online */
    int rack_nodes;        /* > 0: a synthetic topology, racks of this many nodes of a pool */
    int block_racks;       /* and blocks of this many racks */
    int topology_blind;    /* the racks and blocks are counted, the pools have no topology */
};

/* ---- The model (replay_model.c) ---- */
struct replay_model {
    const struct replay_opts *opts;    /* borrowed */
    struct trace *t;                   /* borrowed */
    struct scenario layout;            /* pools, nodes, queues, quotas; owned arrays */
    int n_projects;
    struct sched_workload *tmpl;       /* [n_tasks]: all but phase, pods, times */
    const char **spec_models;          /* [t->n_specs]: the model names of t->specs */
    int64_t *gpu;                      /* [n_tasks] milli-GPU of the whole task */
    int64_t *arrival_ms;               /* [n_tasks] after --speedup */
    int64_t *runtime_ms;               /* [n_tasks] */
    int64_t *withdraw_ms;              /* [n_tasks] SCHED_NO_TIME, or when a task the
                                          trace never scheduled is withdrawn */
    unsigned char *unplaceable;        /* [n_tasks] 1: no empty node of its pools fits it */
    int *order;                        /* [n_tasks] by arrival, then file order */
    int *pool_nodes;                   /* nodes grouped by pool, file order inside */
    int *pool_first;                   /* [n_pools + 1] offsets into pool_nodes */
    struct namemap index;              /* task name -> task */
    int64_t total_gpu_milli;
    int64_t *deserved_milli;           /* [n_projects] GPU, summed over pools; -1 unlimited */
    int64_t *limit_milli;              /* [n_projects] GPU, summed over pools; -1 none */
    double *weight;                    /* [n_projects] over-quota weight, mean over pools
                                          weighted by their GPUs */
    char **project_names;              /* [n_projects] owned */
    /* with --racks: each node's rack and block (numbered over the pools,
     * a pool's nodes in file order: racks of rack_nodes, blocks of
     * block_racks racks), its labels (block, rack) and their text */
    int *rack_of, *block_of;           /* [n_nodes] */
    struct sched_label *labels;        /* [2 * n_nodes] */
    char *label_text;                  /* [2 * n_nodes * RP_LABEL_LEN] */
};

#define RP_LABEL_LEN 24
extern const char *const replay_topology[3];   /* the pools' levels: block, rack, host */
/* Where the gangs start, with --racks (struct replay_stats' and struct
 * replay_inflation's counts). */
struct replay_gangs {
    int placed, one_rack, one_block;
};
/* Counts wl when the model has racks and wl is a gang whose pods are placed. */
void replay_count_gang(const struct replay_model *m, const struct sched_workload *wl,
                       struct replay_gangs *g);

int replay_model_new(const struct replay_opts *o, struct trace *t, struct replay_model **out,
                     char *err, size_t len);
void replay_model_free(struct replay_model *m);
/* A per-run copy of the layout whose pools place by `placement`; *pools
 * is owned by the caller (free()). */
int replay_layout(const struct replay_model *m, int placement, struct scenario *s,
                  struct sched_pool **pools);
const char *replay_policy_name(int policy);
/* The pools' enum sched_placement of a policy that runs the core. */
int replay_policy_placement(int policy);
/* What the policy places by: fifo "first-fit", the others their pools'
 * placementStrategy word ("fragmentation", ...). */
const char *replay_policy_placement_word(int policy);
/* FNV-1a over the bytes of s, 32 bits. */
uint32_t replay_fnv1a(const char *s);

/* What a run of one policy over the trace stands on, in a replay
 * (replay_run.c) as in an inflation (replay_inflate.c): the model, the
 * policy, the cluster laid out for its placement (replay_layout()), the
 * simulated world on it and the core's settings. */
struct replay_base {
    const struct replay_model *m;
    int policy;
    struct scenario layout;
    struct sched_pool *pools;
    struct world *w;
    struct sched_config cfg;
};

/* ---- Samples and summaries (replay_stats.c) ---- */

/* One state of a run, held from `t` until the next sample. */
struct rs_sample {
    int64_t t;
    int64_t alloc;      /* milli-GPU held */
    int busy;           /* GPU work was left pending by the last cycle */
};

struct replay_stats {
    int n_projects;
    int64_t total;                     /* milli-GPU of the cluster */
    int64_t w0, w1;                    /* the window the rates cover: first to last arrival */
    struct rs_sample *s;               /* [n] */
    int64_t *proj;                     /* [n * 2 * n_projects]: alloc then fair */
    int n, cap;
    int64_t *waits, *jcts;             /* ms, one per completed task */
    int n_done, cap_done;
    int arrived, withdrawn, rejected, left_pending, preemptions, moves, cycles, core_calls;
    int64_t lost;                      /* milli-GPU x ms of runs cut by evictions */
    struct replay_gangs gangs;         /* with --racks: every start of a gang */
};

struct replay_summary {
    int policy;
    int arrived, completed, withdrawn, rejected, left_pending;
    int preemptions, moves, cycles, core_calls;
    struct replay_gangs gangs;         /* struct replay_stats' */
    double span_s;                     /* the window: first to last arrival */
    double alloc_pct, busy_pct;        /* time-weighted; busy: share of the span */
    double sat_alloc_pct, sat_idle_gpus;   /* over busy time; < 0: never busy */
    double wait_avg_s, wait_p95_s, jct_avg_s, jct_p95_s;
    double jain_avg, jain_min;         /* over busy time; < 0: never busy */
    double lost_gpu_h;
    double *proj_alloc, *proj_fair;    /* [n_projects] GPUs: time-weighted; fair over busy time */
    double *proj_below_pct;            /* [n_projects] busy time below fair share with demand */
    double series_t[RP_BUCKETS];       /* bucket middles, days since the first arrival */
    double series_alloc[RP_BUCKETS];   /* % */
    double *series_proj;               /* [n_projects * 2 * RP_BUCKETS] GPUs: alloc, fair */
    double wall_s;
};

int rs_init(struct replay_stats *st, int n_projects, int64_t total);
void rs_free(struct replay_stats *st);
/* Appends a sample (a sample at the same time as the last replaces it);
 * alloc and fair are [n_projects] milli-GPU. */
int rs_sample(struct replay_stats *st, const struct rs_sample *s, const int64_t *alloc,
              const int64_t *fair);
int rs_done(struct replay_stats *st, int64_t wait_ms, int64_t jct_ms);
/* The report's fair share of GPU per project, from each project's demand
 * (held + pending, milli-GPU): replay_stats.c says how. */
void rs_fair_share(const struct replay_model *m, const int64_t *demand, int64_t *fair);
int rs_summarize(const struct replay_stats *st, struct replay_summary *out);
void rs_summary_free(struct replay_summary *s);

/* ---- One policy on the trace's clock (replay_run.c) ---- */
int replay_run(const struct replay_model *m, int policy, struct replay_summary *out,
               char *err, size_t len);

/* ---- FIFO + first-fit (replay_fifo.c) ---- */
/* Places pending workloads of the world in submission order, each on the
 * first node (pools in preference order, nodes in file order) that fits,
 * until one does not fit; workloads that fit no node even when empty are
 * passed over. The index of every workload it starts goes into started
 * (room for w->n_wls); returns how many, or -1 with e set. */
int replay_fifo_cycle(const struct replay_model *m, struct world *w, int *started,
                      struct world_err *e);
/* Places one workload by first fit (no queue order): 1 placed, 0 not, -1 error. */
int replay_fifo_place(const struct replay_model *m, struct world *w, int i, struct world_err *e);

/* ---- Inflation (replay_inflate.c) ---- */
/* One policy, one seed. Percentages are of the cluster's GPUs. */
struct replay_inflation {
    int policy;
    uint64_t seed;
    int placed_before_failure;         /* tasks placed before the first failure */
    double first_arrived_pct;          /* arrived GPU demand at the first failure */
    double first_alloc_pct;
    double first_idle_gpus;            /* unallocated GPUs at the first failure; < 0: none */
    double at100_idle_gpus;            /* unallocated GPUs once arrivals reach 100%; < 0: never */
    double at100_alloc_pct;
    int arrivals, failures, preemptions;
    struct replay_gangs gangs;         /* with --racks: the arrivals that start as gangs */
    double end_alloc_pct, end_idle_gpus;
    double *curve;                     /* [n_curve]: GPU allocation (%) when the arrived
                                          demand is k% (the mean of the arrivals that round
                                          to k); < 0: no arrival there. Owned. */
    int n_curve;                       /* floor(100 x inflate) + 1 */
    double wall_s;
};
int replay_inflate(const struct replay_model *m, int policy, uint64_t seed,
                   struct replay_inflation *out, char *err, size_t len);
void replay_inflation_free(struct replay_inflation *x);

/* ---- Report (replay_report.c) ---- */
struct replay_results {
    const struct replay_model *m;
    struct replay_summary *runs;       int n_runs;
    struct replay_inflation *inflations; int n_inflations;
};
/* The headline table on stdout; with a report directory, report.md,
 * report.json and the SVG plots there. 0, or -1 with err. */
int replay_report(const struct replay_results *r, char *err, size_t len);

#endif
