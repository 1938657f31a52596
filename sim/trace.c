/*
 * trace.c: reading the node, task and quota files of trace.h.
 *
 * Each reader checks every row before keeping it:
 *   nodes: a unique non-empty name, CPU and memory >= 0, 0..64 GPUs, a
 *          model name;
 *   tasks: a unique non-empty name, CPU and memory >= 0, num_gpu 0..64,
 *          gpu_milli 0 with no GPU, 1..1000 with one, 1000 with more;
 *          gpu_spec models the node file has; with times,
 *          creation <= deletion and, when scheduled, creation <=
 *          scheduled <= deletion;
 *   quota: a project name, a known model or *, GPUs >= 0 or -1, limit
 *          >= 0 or -1, weight >= 0.
 */
#include "trace.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "csv.h"
#include "grow.h"
#include "namemap.h"
#include "sched.h"

#define MAX_AMOUNT ((int64_t)1000000000000)   /* millicores or MiB */
#define MAX_SECONDS ((int64_t)1000000000000)

static int grow(void *arrp, int n, int *cap, size_t elem)
{
    return sim_grow(arrp, n, cap, elem, 64);
}

static int model_index(const struct trace *t, const char *name, size_t len)
{
    int i;

    for (i = 0; i < t->n_models; i++)
        if (strlen(t->models[i]) == len && strncmp(t->models[i], name, len) == 0)
            return i;
    return -1;
}

static int oom(struct csv *c)
{
    snprintf(c->err, c->err_len, "%s: out of memory", c->file);
    return -1;
}

/* Appends a copy of name to the *n names at *names (GPU models, projects):
 * its index in *out; oom() if out of memory. */
static int add_name(struct csv *c, char ***names, int *n, const char *name, int *out)
{
    char **grown = realloc(*names, (size_t)(*n + 1) * sizeof(*grown));

    if (!grown)
        return oom(c);
    *names = grown;
    grown[*n] = strdup(name);
    if (!grown[*n])
        return oom(c);
    *out = (*n)++;
    return 0;
}

/* The columns of each file, by their header. */
struct node_cols {
    int name, cpu, mem, gpu, model;
};

struct task_cols {
    int name, cpu, mem, num_gpu, gpu_milli, spec, creation, deletion, scheduled;
};

struct quota_cols {
    int project, pool, gpu, limit, weight;
};

/* One of the trace's CSV files: its header read into cols, each of its
 * rows read into the next element (of elem bytes) of the array at
 * offset arr_at of struct trace, counted at n_at; a file whose rows leave
 * the count at count_at 0 is refused, as having no `what`. With a noun,
 * each row has a name of its own, in the column at name_col_at of cols,
 * which the element keeps (a copy) at name_at. */
struct csv_kind {
    const char *what;
    size_t arr_at, n_at, count_at, elem;
    int (*columns)(struct trace *t, struct csv *c, void *cols);
    int (*row)(struct trace *t, struct csv *c, const void *cols);
    const char *noun;
    size_t name_col_at, name_at;
};

#define TRACE_INT(t, at) ((int *)((char *)(t) + (at)))

/* The row's name: there, and not one an earlier row has. */
static int name_is_new(struct csv *c, const struct csv_kind *kind, int col,
                       struct namemap *names)
{
    char msg[64];
    int dup;

    if (csv_field(c, col)[0] == '\0') {
        snprintf(msg, sizeof(msg), "a %s needs a name", kind->noun);
        return csv_fail(c, col, msg);
    }
    if (namemap_get(names, csv_field(c, col), &dup)) {
        snprintf(msg, sizeof(msg), "this %s name is used twice", kind->noun);
        return csv_fail(c, col, msg);
    }
    return 0;
}

/* The row at `row` of index i read: its name kept and noted, the count
 * moved on. */
static int row_done(struct trace *t, struct csv *c, const struct csv_kind *kind, int col,
                    char *row, struct namemap *names)
{
    int *n = TRACE_INT(t, kind->n_at);
    char **name = (char **)(row + kind->name_at);

    if (kind->noun) {
        *name = strdup(csv_field(c, col));
        if (!*name || namemap_put(names, *name, *n) != 0)
            return oom(c);
    }
    (*n)++;
    return 0;
}

static int load_rows(struct trace *t, const char *file, const struct csv_kind *kind, char *err,
                     size_t len)
{
    union {
        struct node_cols node;
        struct task_cols task;
        struct quota_cols quota;
    } cols;
    const int *col = (const int *)((const char *)&cols + kind->name_col_at);
    void **arr = (void **)((char *)t + kind->arr_at);
    int *n = TRACE_INT(t, kind->n_at);
    struct csv c;
    struct namemap names;
    int rc, cap = 0;

    namemap_init(&names);
    rc = csv_open(&c, file, err, len);
    if (rc == 0)
        rc = kind->columns(t, &c, &cols);
    while (rc == 0 && (rc = csv_next(&c)) == 1) {
        rc = grow(arr, *n, &cap, kind->elem) ? oom(&c) : 0;
        if (rc == 0 && kind->noun)
            rc = name_is_new(&c, kind, *col, &names);
        if (rc == 0)
            rc = kind->row(t, &c, &cols);
        if (rc == 0)
            rc = row_done(t, &c, kind, *col, (char *)*arr + (size_t)*n * kind->elem, &names);
    }
    if (rc == 0 && *TRACE_INT(t, kind->count_at) == 0) {
        snprintf(err, len, "%s: no %s", file, kind->what);
        rc = -1;
    }
    csv_close(&c);
    namemap_free(&names);
    return rc;
}

/* ---- Nodes ---- */

static int node_columns(struct trace *t, struct csv *c, void *cols)
{
    struct node_cols *k = cols;

    (void)t;
    if ((k->name = csv_need(c, "sn")) < 0 || (k->cpu = csv_need(c, "cpu_milli")) < 0 ||
        (k->mem = csv_need(c, "memory_mib")) < 0 || (k->gpu = csv_need(c, "gpu")) < 0 ||
        (k->model = csv_need(c, "model")) < 0)
        return -1;
    return 0;
}

static int add_model(struct trace *t, struct csv *c, const char *name, int *model)
{
    *model = model_index(t, name, strlen(name));
    if (*model >= 0)
        return 0;
    return add_name(c, &t->models, &t->n_models, name, model);
}

static int read_node(struct trace *t, struct csv *c, const void *cols)
{
    const struct node_cols *k = cols;
    struct trace_node *n = &t->nodes[t->n_nodes];
    int64_t gpus;

    memset(n, 0, sizeof(*n));
    if (csv_int(c, k->cpu, 0, MAX_AMOUNT, &n->cpu_milli) != 0 ||
        csv_int(c, k->mem, 0, MAX_AMOUNT, &n->mem_mib) != 0 ||
        csv_int(c, k->gpu, 0, SCHED_MAX_NODE_GPUS, &gpus) != 0)
        return -1;
    if (csv_field(c, k->model)[0] == '\0')
        return csv_fail(c, k->model, "a node needs a GPU model");
    n->gpus = (int)gpus;
    return add_model(t, c, csv_field(c, k->model), &n->model) != 0 ? oom(c) : 0;
}

/* ---- Tasks ---- */

static int task_columns(struct trace *t, struct csv *c, void *cols)
{
    struct task_cols *k = cols;
    int n_times;

    if ((k->name = csv_need(c, "name")) < 0 || (k->cpu = csv_need(c, "cpu_milli")) < 0 ||
        (k->mem = csv_need(c, "memory_mib")) < 0 || (k->num_gpu = csv_need(c, "num_gpu")) < 0 ||
        (k->gpu_milli = csv_need(c, "gpu_milli")) < 0)
        return -1;
    k->spec = csv_col(c, "gpu_spec");
    k->creation = csv_col(c, "creation_time");
    k->deletion = csv_col(c, "deletion_time");
    k->scheduled = csv_col(c, "scheduled_time");
    n_times = (k->creation >= 0) + (k->deletion >= 0) + (k->scheduled >= 0);
    if (n_times != 0 && n_times != 3) {
        snprintf(c->err, c->err_len, "%s:1: creation_time, deletion_time and scheduled_time "
                 "come together or not at all", c->file);
        return -1;
    }
    t->has_times = n_times == 3;
    return 0;
}

static int add_spec(struct trace *t, struct csv *c, int col, struct trace_task *k)
{
    const char *s = csv_field(c, col), *bar;
    size_t len;
    int model;

    k->spec = t->n_specs;
    for (; *s; s = *bar ? bar + 1 : bar) {
        bar = strchr(s, '|');
        bar = bar ? bar : s + strlen(s);
        len = (size_t)(bar - s);
        model = model_index(t, s, len);
        if (model < 0)
            return csv_fail(c, col, "names a GPU model that no node has");
        if (grow((void **)&t->specs, t->n_specs, &t->cap_specs, sizeof(*t->specs)) != 0)
            return oom(c);
        t->specs[t->n_specs++] = model;
        k->n_spec++;
    }
    return 0;
}

static int task_gpus(struct csv *c, const struct task_cols *col, struct trace_task *k)
{
    int64_t num;

    if (csv_int(c, col->num_gpu, 0, SCHED_MAX_NODE_GPUS, &num) != 0 ||
        csv_int(c, col->gpu_milli, 0, SCHED_MILLI, &k->gpu_milli) != 0)
        return -1;
    k->num_gpu = (int)num;
    if (num == 0 && k->gpu_milli != 0)
        return csv_fail(c, col->gpu_milli, "a task with num_gpu 0 asks gpu_milli 0");
    if (num == 1 && k->gpu_milli == 0)
        return csv_fail(c, col->gpu_milli, "a task with one GPU asks 1 to 1000 of it");
    if (num > 1 && k->gpu_milli != SCHED_MILLI)
        return csv_fail(c, col->gpu_milli, "a task with several GPUs asks whole GPUs (1000)");
    return 0;
}

static int task_times(struct csv *c, const struct task_cols *col, struct trace_task *k)
{
    int64_t created, deleted, scheduled;
    char msg[160];

    if (csv_int(c, col->creation, 0, MAX_SECONDS, &created) != 0 ||
        csv_int(c, col->deletion, 0, MAX_SECONDS, &deleted) != 0)
        return -1;
    if (deleted < created) {
        snprintf(msg, sizeof(msg), "%lld is before creation_time %lld", (long long)deleted,
                 (long long)created);
        return csv_fail(c, col->deletion, msg);
    }
    k->creation_ms = created * 1000;
    k->deletion_ms = deleted * 1000;
    k->scheduled_ms = SCHED_NO_TIME;
    if (csv_field(c, col->scheduled)[0] == '\0')
        return 0;
    if (csv_int(c, col->scheduled, 0, MAX_SECONDS, &scheduled) != 0)
        return -1;
    if (scheduled < created || scheduled > deleted) {
        snprintf(msg, sizeof(msg), "%lld is not between creation_time %lld and deletion_time "
                 "%lld", (long long)scheduled, (long long)created, (long long)deleted);
        return csv_fail(c, col->scheduled, msg);
    }
    k->scheduled_ms = scheduled * 1000;
    return 0;
}

static int read_task(struct trace *t, struct csv *c, const void *cols)
{
    const struct task_cols *col = cols;
    struct trace_task *k = &t->tasks[t->n_tasks];

    memset(k, 0, sizeof(*k));
    if (csv_int(c, col->cpu, 0, MAX_AMOUNT, &k->cpu_milli) != 0 ||
        csv_int(c, col->mem, 0, MAX_AMOUNT, &k->mem_mib) != 0 || task_gpus(c, col, k) != 0)
        return -1;
    if (col->spec >= 0 && add_spec(t, c, col->spec, k) != 0)
        return -1;
    if (t->has_times && task_times(c, col, k) != 0)
        return -1;
    return 0;
}

/* ---- Quotas ---- */

static int project_index(struct trace *t, struct csv *c, const char *name, int *out)
{
    int i;

    for (i = 0; i < t->n_projects; i++)
        if (strcmp(t->projects[i], name) == 0) {
            *out = i;
            return 0;
        }
    return add_name(c, &t->projects, &t->n_projects, name, out);
}

static int quota_columns(struct trace *t, struct csv *c, void *cols)
{
    struct quota_cols *k = cols;

    (void)t;
    if ((k->project = csv_need(c, "project")) < 0 || (k->pool = csv_need(c, "pool")) < 0 ||
        (k->gpu = csv_need(c, "gpu")) < 0)
        return -1;
    k->limit = csv_col(c, "limit");
    k->weight = csv_col(c, "weight");
    return 0;
}

static int read_quota(struct trace *t, struct csv *c, const void *cols)
{
    const struct quota_cols *k = cols;
    struct trace_quota *q = &t->quotas[t->n_quotas];
    const char *pool = csv_field(c, k->pool);

    q->limit_milli = -1;
    q->weight_milli = 1000;
    if (csv_field(c, k->project)[0] == '\0')
        return csv_fail(c, k->project, "a project needs a name");
    q->model = strcmp(pool, "*") == 0 ? -1 : model_index(t, pool, strlen(pool));
    if (q->model < 0 && strcmp(pool, "*") != 0)
        return csv_fail(c, k->pool, "expected a GPU model of the node file, or *");
    if (csv_milli(c, k->gpu, 0, MAX_AMOUNT, 1, &q->gpu_milli) != 0 ||
        (k->limit >= 0 && csv_milli(c, k->limit, 0, MAX_AMOUNT, 1, &q->limit_milli) != 0) ||
        (k->weight >= 0 && csv_milli(c, k->weight, 0, MAX_AMOUNT, 0, &q->weight_milli) != 0))
        return -1;
    return project_index(t, c, csv_field(c, k->project), &q->project);
}

/* The trace's files: nodes, tasks, quotas. */
static const struct csv_kind kinds[] = {
    {"nodes", offsetof(struct trace, nodes), offsetof(struct trace, n_nodes),
     offsetof(struct trace, n_nodes), sizeof(struct trace_node), node_columns, read_node, "node",
     offsetof(struct node_cols, name), offsetof(struct trace_node, name)},
    {"tasks", offsetof(struct trace, tasks), offsetof(struct trace, n_tasks),
     offsetof(struct trace, n_tasks), sizeof(struct trace_task), task_columns, read_task, "task",
     offsetof(struct task_cols, name), offsetof(struct trace_task, name)},
    {"projects", offsetof(struct trace, quotas), offsetof(struct trace, n_quotas),
     offsetof(struct trace, n_projects), sizeof(struct trace_quota), quota_columns, read_quota,
     NULL, 0, 0},
};

int trace_load(const char *nodes_file, const char *tasks_file, struct trace **out, char *err,
               size_t len)
{
    struct trace *t = calloc(1, sizeof(*t));
    int rc = -1;

    *out = NULL;
    if (!t)
        snprintf(err, len, "out of memory");
    else if (load_rows(t, nodes_file, &kinds[0], err, len) == 0 &&
             load_rows(t, tasks_file, &kinds[1], err, len) == 0)
        rc = 0;
    if (rc == 0)
        *out = t;
    else
        trace_free(t);
    return rc;
}

int trace_load_quotas(struct trace *t, const char *file, char *err, size_t len)
{
    return load_rows(t, file, &kinds[2], err, len);
}

void trace_free(struct trace *t)
{
    int i;

    if (!t)
        return;
    for (i = 0; i < t->n_models; i++)
        free(t->models[i]);
    for (i = 0; i < t->n_nodes; i++)
        free(t->nodes[i].name);
    for (i = 0; i < t->n_tasks; i++)
        free(t->tasks[i].name);
    for (i = 0; i < t->n_projects; i++)
        free(t->projects[i]);
    {
        void *const owned[] = {t->models, t->nodes, t->tasks, t->specs, t->projects, t->quotas, t};

        FREE_ALL(owned);
    }
}

int64_t trace_task_gpu(const struct trace_task *k)
{
    return k->num_gpu == 1 ? k->gpu_milli : (int64_t)k->num_gpu * SCHED_MILLI;
}
