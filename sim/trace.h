/*
 * trace.h: a GPU cluster trace in the Alibaba GPU 2023 ("openb") shape,
 * read into memory: the node list, the task (pod) list, and an optional
 * quota file.
 *
 * Files (../shared/traces/alibaba-gpu-v2023/README.md):
 *   nodes: sn, cpu_milli, memory_mib, gpu, model
 *   tasks: name, cpu_milli, memory_mib, num_gpu, gpu_milli, and optionally
 *          gpu_spec, and creation_time, deletion_time, scheduled_time
 *          (all three or none); other columns (qos, pod_phase) are ignored
 *   quota: project, pool, gpu, and optionally limit, weight: GPUs (may be
 *          fractional, -1 unlimited) of `project` in pool `pool` (a GPU
 *          model, or * for every model), and its over-quota weight
 *
 * Model:
 *   - GPU models in order of first appearance in the node file; a model is
 *     a node pool of the replay;
 *   - a task asks num_gpu whole GPUs, or (num_gpu 1) gpu_milli thousandths
 *     of one shared GPU, or no GPU; gpu_spec (models separated by "|")
 *     becomes a list of model indices, empty = any model;
 *   - times in milliseconds; scheduled_ms is SCHED_NO_TIME for a task the
 *     trace never scheduled.
 * Every problem is reported as "FILE:LINE: problem" and nothing is kept.
 *
 * Ownership: the trace owns every string and array in it.
 */
#ifndef ALLOT_TRACE_H
#define ALLOT_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct trace_node {
    char *name;
    int64_t cpu_milli, mem_mib;
    int gpus;
    int model;            /* index into models */
};

struct trace_task {
    char *name;
    int64_t cpu_milli, mem_mib;
    int num_gpu;          /* whole GPUs, or 1 with gpu_milli < 1000, or 0 */
    int64_t gpu_milli;    /* of one GPU when num_gpu is 1; 1000 for whole GPUs; 0 */
    int spec;             /* offset into trace.specs */
    int n_spec;           /* 0: any model */
    int64_t creation_ms, deletion_ms, scheduled_ms;   /* when trace.has_times */
};

/* One row of a quota file, resolved. */
struct trace_quota {
    int project;          /* index into projects */
    int model;            /* index into models, or -1 for every model */
    int64_t gpu_milli;    /* deserved; -1 unlimited */
    int64_t limit_milli;  /* -1 none */
    int64_t weight_milli; /* over-quota weight x 1000 */
};

struct trace {
    char **models;              int n_models;
    struct trace_node *nodes;   int n_nodes;
    struct trace_task *tasks;   int n_tasks;
    int *specs;                 int n_specs, cap_specs;
    int has_times;
    char **projects;            int n_projects;   /* from a quota file */
    struct trace_quota *quotas; int n_quotas;
};

/* Reads the node file, then the task file. 0, or -1 with one line in err. */
int trace_load(const char *nodes_file, const char *tasks_file, struct trace **out, char *err,
               size_t len);
/* Reads a quota file into t (models must be loaded). 0, or -1 with err. */
int trace_load_quotas(struct trace *t, const char *file, char *err, size_t len);
void trace_free(struct trace *t);   /* NULL is a no-op */

/* Whole-trace GPU of a task in milli-GPU (num_gpu x 1000, or gpu_milli). */
int64_t trace_task_gpu(const struct trace_task *k);

#endif
