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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "namemap.h"
#include "sched.h"

#define MAX_AMOUNT ((int64_t)1000000000000)   /* millicores or MiB */
#define MAX_SECONDS ((int64_t)1000000000000)

static int grow(void **arr, int n, int *cap, size_t elem)
{
    void *p;
    int ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 64;
    p = realloc(*arr, (size_t)ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
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

/* ---- Nodes ---- */

struct node_cols {
    int name, cpu, mem, gpu, model;
};

static int node_columns(struct csv *c, struct node_cols *k)
{
    if ((k->name = csv_need(c, "sn")) < 0 || (k->cpu = csv_need(c, "cpu_milli")) < 0 ||
        (k->mem = csv_need(c, "memory_mib")) < 0 || (k->gpu = csv_need(c, "gpu")) < 0 ||
        (k->model = csv_need(c, "model")) < 0)
        return -1;
    return 0;
}

static int add_model(struct trace *t, struct csv *c, const char *name, int *model)
{
    int cap = t->n_models;
    char **grown;

    *model = model_index(t, name, strlen(name));
    if (*model >= 0)
        return 0;
    grown = realloc(t->models, (size_t)(cap + 1) * sizeof(*grown));
    if (!grown)
        return oom(c);
    t->models = grown;
    t->models[t->n_models] = strdup(name);
    if (!t->models[t->n_models])
        return oom(c);
    *model = t->n_models++;
    return 0;
}

static int read_node(struct trace *t, struct csv *c, const struct node_cols *k,
                     struct namemap *names)
{
    struct trace_node *n = &t->nodes[t->n_nodes];
    int64_t gpus;
    int dup;

    memset(n, 0, sizeof(*n));
    if (csv_field(c, k->name)[0] == '\0')
        return csv_fail(c, k->name, "a node needs a name");
    if (namemap_get(names, csv_field(c, k->name), &dup))
        return csv_fail(c, k->name, "this node name is used twice");
    if (csv_int(c, k->cpu, 0, MAX_AMOUNT, &n->cpu_milli) != 0 ||
        csv_int(c, k->mem, 0, MAX_AMOUNT, &n->mem_mib) != 0 ||
        csv_int(c, k->gpu, 0, SCHED_MAX_NODE_GPUS, &gpus) != 0)
        return -1;
    if (csv_field(c, k->model)[0] == '\0')
        return csv_fail(c, k->model, "a node needs a GPU model");
    n->gpus = (int)gpus;
    n->name = strdup(csv_field(c, k->name));
    if (!n->name || add_model(t, c, csv_field(c, k->model), &n->model) != 0)
        return oom(c);
    t->n_nodes++;
    return namemap_put(names, n->name, t->n_nodes - 1) == 0 ? 0 : oom(c);
}

static int load_nodes(struct trace *t, const char *file, char *err, size_t len)
{
    struct csv c;
    struct node_cols k;
    struct namemap names;
    int rc, cap = 0;

    namemap_init(&names);
    rc = csv_open(&c, file, err, len);
    if (rc == 0)
        rc = node_columns(&c, &k);
    while (rc == 0 && (rc = csv_next(&c)) == 1) {
        rc = grow((void **)&t->nodes, t->n_nodes, &cap, sizeof(*t->nodes)) ? oom(&c) : 0;
        if (rc == 0)
            rc = read_node(t, &c, &k, &names);
    }
    if (rc == 0 && t->n_nodes == 0) {
        snprintf(err, len, "%s: no nodes", file);
        rc = -1;
    }
    csv_close(&c);
    namemap_free(&names);
    return rc;
}

/* ---- Tasks ---- */

struct task_cols {
    int name, cpu, mem, num_gpu, gpu_milli, spec, creation, deletion, scheduled;
};

static int task_columns(struct trace *t, struct csv *c, struct task_cols *k)
{
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

static int read_task(struct trace *t, struct csv *c, const struct task_cols *col,
                     struct namemap *names)
{
    struct trace_task *k = &t->tasks[t->n_tasks];
    int dup;

    memset(k, 0, sizeof(*k));
    if (csv_field(c, col->name)[0] == '\0')
        return csv_fail(c, col->name, "a task needs a name");
    if (namemap_get(names, csv_field(c, col->name), &dup))
        return csv_fail(c, col->name, "this task name is used twice");
    if (csv_int(c, col->cpu, 0, MAX_AMOUNT, &k->cpu_milli) != 0 ||
        csv_int(c, col->mem, 0, MAX_AMOUNT, &k->mem_mib) != 0 || task_gpus(c, col, k) != 0)
        return -1;
    if (col->spec >= 0 && add_spec(t, c, col->spec, k) != 0)
        return -1;
    if (t->has_times && task_times(c, col, k) != 0)
        return -1;
    k->name = strdup(csv_field(c, col->name));
    if (!k->name)
        return oom(c);
    t->n_tasks++;
    return namemap_put(names, k->name, t->n_tasks - 1) == 0 ? 0 : oom(c);
}

static int load_tasks(struct trace *t, const char *file, char *err, size_t len)
{
    struct csv c;
    struct task_cols k;
    struct namemap names;
    int rc, cap = 0;

    namemap_init(&names);
    rc = csv_open(&c, file, err, len);
    if (rc == 0)
        rc = task_columns(t, &c, &k);
    while (rc == 0 && (rc = csv_next(&c)) == 1) {
        rc = grow((void **)&t->tasks, t->n_tasks, &cap, sizeof(*t->tasks)) ? oom(&c) : 0;
        if (rc == 0)
            rc = read_task(t, &c, &k, &names);
    }
    if (rc == 0 && t->n_tasks == 0) {
        snprintf(err, len, "%s: no tasks", file);
        rc = -1;
    }
    csv_close(&c);
    namemap_free(&names);
    return rc;
}

int trace_load(const char *nodes_file, const char *tasks_file, struct trace **out, char *err,
               size_t len)
{
    struct trace *t = calloc(1, sizeof(*t));
    int rc = -1;

    *out = NULL;
    if (!t)
        snprintf(err, len, "out of memory");
    else if (load_nodes(t, nodes_file, err, len) == 0 && load_tasks(t, tasks_file, err, len) == 0)
        rc = 0;
    if (rc == 0)
        *out = t;
    else
        trace_free(t);
    return rc;
}

/* ---- Quotas ---- */

struct quota_cols {
    int project, pool, gpu, limit, weight;
};

static int project_index(struct trace *t, struct csv *c, const char *name, int *out)
{
    char **grown;
    int i;

    for (i = 0; i < t->n_projects; i++)
        if (strcmp(t->projects[i], name) == 0) {
            *out = i;
            return 0;
        }
    grown = realloc(t->projects, (size_t)(t->n_projects + 1) * sizeof(*grown));
    if (!grown)
        return oom(c);
    t->projects = grown;
    t->projects[t->n_projects] = strdup(name);
    if (!t->projects[t->n_projects])
        return oom(c);
    *out = t->n_projects++;
    return 0;
}

static int read_quota(struct trace *t, struct csv *c, const struct quota_cols *k)
{
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
    if (project_index(t, c, csv_field(c, k->project), &q->project) != 0)
        return -1;
    t->n_quotas++;
    return 0;
}

int trace_load_quotas(struct trace *t, const char *file, char *err, size_t len)
{
    struct csv c;
    struct quota_cols k;
    int rc, cap = 0;

    rc = csv_open(&c, file, err, len);
    if (rc == 0 && ((k.project = csv_need(&c, "project")) < 0 ||
                    (k.pool = csv_need(&c, "pool")) < 0 || (k.gpu = csv_need(&c, "gpu")) < 0))
        rc = -1;
    if (rc == 0) {
        k.limit = csv_col(&c, "limit");
        k.weight = csv_col(&c, "weight");
    }
    while (rc == 0 && (rc = csv_next(&c)) == 1) {
        rc = grow((void **)&t->quotas, t->n_quotas, &cap, sizeof(*t->quotas)) ? oom(&c) : 0;
        if (rc == 0)
            rc = read_quota(t, &c, &k);
    }
    if (rc == 0 && t->n_projects == 0) {
        snprintf(err, len, "%s: no projects", file);
        rc = -1;
    }
    csv_close(&c);
    return rc;
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
    free(t->models);
    free(t->nodes);
    free(t->tasks);
    free(t->specs);
    free(t->projects);
    free(t->quotas);
    free(t);
}

int64_t trace_task_gpu(const struct trace_task *k)
{
    return k->num_gpu == 1 ? k->gpu_milli : (int64_t)k->num_gpu * SCHED_MILLI;
}
