/*
 * fuzz_trace.c: the trace files `allot replay` reads (sim/trace.c over
 * sim/csv.c): the node file, the task (pod) file and the optional quota
 * file, through trace_load() and trace_load_quotas() as replay.c calls
 * them.
 *
 * Input: the node file, then a line "%%", the task file, and optionally
 * another "%%" line and the quota file. The target writes each to its
 * own temporary file.
 *
 * Checked: a refused trace leaves one non-empty error line and nothing
 * else; an accepted one holds only what trace.h promises: at least one
 * node and one task, model indices inside the model list, 0..64 GPUs,
 * each task's GPUs in one of the three shapes, its gpu_spec inside the
 * spec array, creation <= scheduled <= deletion when the trace has
 * times, and each quota row's project and model inside their lists.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched.h"
#include "trace.h"

#define N_FILES 3

static char paths[N_FILES][64];

static void cleanup(void)
{
    int i;

    for (i = 0; i < N_FILES; i++)
        unlink(paths[i]);
}

static void setup(void)
{
    static const char *const names[N_FILES] = {"nodes", "tasks", "quota"};
    int i;

    for (i = 0; i < N_FILES; i++)
        snprintf(paths[i], sizeof(paths[i]), "/tmp/allot-fuzz-trace-%ld.%s.csv", (long)getpid(),
                 names[i]);
    atexit(cleanup);
}

/* Writes data[0..size) up to the next "%%" line into path; returns where
 * the next file starts, or NULL at the end of the input. */
static const uint8_t *write_part(const char *path, const uint8_t *data, size_t size,
                                 size_t *part)
{
    const uint8_t *p = data, *end = data + size, *next = NULL;
    FILE *fp;

    while (p + 3 <= end) {
        if ((p == data || p[-1] == '\n') && p[0] == '%' && p[1] == '%' && p[2] == '\n') {
            next = p + 3;
            break;
        }
        p++;
    }
    *part = (size_t)((next ? p : end) - data);
    fp = fopen(path, "wb");
    FUZZ_ASSERT(fp != NULL);
    FUZZ_ASSERT(fwrite(data, 1, *part, fp) == *part);
    FUZZ_ASSERT(fclose(fp) == 0);
    return next;
}

static void trace_check(const struct trace *t)
{
    int i, j;

    FUZZ_ASSERT(t->n_nodes >= 1 && t->n_tasks >= 1 && t->n_models >= 1);
    for (i = 0; i < t->n_nodes; i++) {
        const struct trace_node *n = &t->nodes[i];
        FUZZ_ASSERT(n->name && n->name[0]);
        FUZZ_ASSERT(n->model >= 0 && n->model < t->n_models);
        FUZZ_ASSERT(n->gpus >= 0 && n->gpus <= SCHED_MAX_NODE_GPUS);
        FUZZ_ASSERT(n->cpu_milli >= 0 && n->mem_mib >= 0);
    }
    for (i = 0; i < t->n_tasks; i++) {
        const struct trace_task *k = &t->tasks[i];
        FUZZ_ASSERT(k->name && k->name[0]);
        FUZZ_ASSERT(k->cpu_milli >= 0 && k->mem_mib >= 0);
        FUZZ_ASSERT((k->num_gpu == 0 && k->gpu_milli == 0) ||
                    (k->num_gpu == 1 && k->gpu_milli >= 1 && k->gpu_milli <= SCHED_MILLI) ||
                    (k->num_gpu > 1 && k->num_gpu <= SCHED_MAX_NODE_GPUS &&
                     k->gpu_milli == SCHED_MILLI));
        FUZZ_ASSERT(k->n_spec == 0 ||
                    (k->spec >= 0 && k->n_spec > 0 && k->spec + k->n_spec <= t->n_specs));
        for (j = 0; j < k->n_spec; j++)
            FUZZ_ASSERT(t->specs[k->spec + j] >= 0 && t->specs[k->spec + j] < t->n_models);
        if (!t->has_times)
            continue;
        FUZZ_ASSERT(k->creation_ms >= 0 && k->creation_ms <= k->deletion_ms);
        FUZZ_ASSERT(k->scheduled_ms == SCHED_NO_TIME ||
                    (k->creation_ms <= k->scheduled_ms && k->scheduled_ms <= k->deletion_ms));
    }
    for (i = 0; i < t->n_quotas; i++) {
        const struct trace_quota *q = &t->quotas[i];
        FUZZ_ASSERT(q->project >= 0 && q->project < t->n_projects);
        FUZZ_ASSERT(q->model >= -1 && q->model < t->n_models);
        FUZZ_ASSERT(q->gpu_milli >= -1 && q->limit_milli >= -1 && q->weight_milli >= 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *tasks, *quota = NULL;
    struct trace *t = NULL;
    char err[1024] = "";
    size_t part;
    int rc;

    if (!paths[0][0])
        setup();
    tasks = write_part(paths[0], data, size, &part);
    if (!tasks)
        return 0;
    quota = write_part(paths[1], tasks, size - (size_t)(tasks - data), &part);
    if (quota)
        write_part(paths[2], quota, size - (size_t)(quota - data), &part);
    rc = trace_load(paths[0], paths[1], &t, err, sizeof(err));
    if (rc == 0 && quota)
        rc = trace_load_quotas(t, paths[2], err, sizeof(err));
    if (rc == 0) {
        trace_check(t);
    } else {
        FUZZ_ASSERT(rc == -1);
        FUZZ_ASSERT(err[0] != '\0' && strchr(err, '\n') == NULL);
    }
    trace_free(t);
    return 0;
}
